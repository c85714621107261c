package expr

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/schema"
)

// TypeEnv compiles the struct-tag rules of one request type: the file
// contracts' variables plus data (the struct a rule is declared on, fields
// by json name) and, for field rules, self (the field's value), both typed
// from the Go types, so that a misspelt field or a wrong comparison is an
// error at registration.
type TypeEnv struct {
	e    *Env // what env extends, and its limits
	env  *cel.Env
	root reflect.Type
	body *jsonschema.Schema
}

// ForType extends e with the struct types reachable from root. body is
// root's compiled JSON Schema: it bounds the sizes of data (for rules
// declared on root) in cost estimates.
func (e *Env) ForType(root reflect.Type, body *schema.Schema) (*TypeEnv, error) {
	structs := structTypes(root)
	env, err := e.env.Extend(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(structs, func(t reflect.Type) bool { return t.Name() != "" }) {
		args := make([]any, 0, len(structs)+1)
		for _, t := range structs {
			if t.Name() != "" { // CEL cannot name the others; Rule refuses rules on them
				args = append(args, t)
			}
		}
		args = append(args, ext.ParseStructTag("json"))
		if env, err = env.Extend(ext.NativeTypes(args...)); err != nil {
			return nil, err
		}
	}
	return &TypeEnv{e: e, env: env, root: root, body: compiledOf(body)}, nil
}

// structTypes lists the named struct types reachable from t through
// fields, pointers, slices, arrays and maps (time.Time excepted).
func structTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			if seen[t] || t == reflect.TypeFor[time.Time]() {
				return
			}
			seen[t] = true
			out = append(out, t)
			for i := 0; i < t.NumField(); i++ {
				if f := t.Field(i); f.IsExported() || f.Anonymous {
					walk(f.Type)
				}
			}
		}
	}
	walk(t)
	return out
}

// typeName is the name a struct type has in CEL: the last element of its
// package path and its name, as ext.NativeTypes names it.
func typeName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	return pkg + "." + t.Name()
}

// Rule compiles a rule declared on struct type s. field is the CEL (json)
// name of the field for a field rule, "" for a struct rule.
func (te *TypeEnv) Rule(s reflect.Type, field, src string) (*Program, error) {
	if s.Name() == "" {
		return nil, fmt.Errorf("rules need a named struct type, not %s", s)
	}
	name := typeName(s)
	opts := []cel.EnvOption{cel.Variable("data", cel.ObjectType(name))}
	if field != "" {
		ft, ok := te.env.CELTypeProvider().FindStructFieldType(name, field)
		if !ok {
			return nil, fmt.Errorf("field %q is not visible to rules (is it tagged json:\"-\"?)", field)
		}
		opts = append(opts, cel.Variable("self", ft.Type))
	}
	env, err := te.env.Extend(opts...)
	if err != nil {
		return nil, err
	}
	sizes := &sizer{maxBody: uint64(te.e.maxBody)}
	if te.body != nil && (s == te.root || te.root.Kind() == reflect.Pointer && s == te.root.Elem()) {
		// data is the request body: its schema bounds its lists and strings.
		sizes.data = te.body
		if field != "" {
			sizes.self = child(te.body, field)
		}
	}
	vars := &typedVars{provider: env.CELTypeProvider(), data: s, dataName: name, self: field}
	return compile(te.e, env, env, src, sizes, compileOpts{vars: vars})
}
