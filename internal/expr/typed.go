package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/schema"
)

// TypeEnv compiles the struct-tag rules of one request type: the file
// contracts' variables plus data (the struct a rule is declared on, fields
// by json name) and, for field rules, self (the field's value), both typed
// from the Go types, so that a misspelt field or a wrong comparison is an
// error at registration.
type TypeEnv struct {
	e       *Env // what env extends, and its limits
	env     *cel.Env
	root    reflect.Type
	body    *jsonschema.Schema
	structs map[string]reflect.Type // the struct types by CEL name, the first of a name (as cel-go keeps it)
	shared  map[string]string       // CEL names of two struct types or more -> why rules cannot use them
}

// ForType extends e with the struct types reachable from root. body is
// root's compiled JSON Schema: it bounds the sizes of data (for rules
// declared on root) in cost estimates.
func (e *Env) ForType(root reflect.Type, body *schema.Schema) (*TypeEnv, error) {
	structs := structTypes(root)
	for _, t := range structs {
		if err := holdsItself(t); err != nil {
			return nil, err
		}
	}
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
	byName, shared := map[string]reflect.Type{}, map[string]string{}
	for _, t := range structs {
		if t.Name() == "" {
			continue
		}
		first, ok := byName[typeName(t)]
		if !ok {
			byName[typeName(t)] = t
			continue
		}
		if _, ok := shared[typeName(t)]; !ok {
			shared[typeName(t)] = fmt.Sprintf("%s is the name in CEL of two types %s holds (%s and %s, of packages %q and %q, or declared in functions), which rules cannot tell apart: rename one of them",
				typeName(t), root, first, t, first.PkgPath(), t.PkgPath())
		}
	}
	return &TypeEnv{e: e, env: env, root: root, body: compiledOf(body), structs: byName, shared: shared}, nil
}

// structTypes lists the named struct types reachable from t through
// fields, pointers, slices, arrays and maps (time.Time excepted).
func structTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] { // a struct met again, or a slice of itself (type Tree []Tree)
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			if t == reflect.TypeFor[time.Time]() {
				return
			}
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

// holdsItself refuses a struct type with a field whose type comes back
// to itself through pointers, slices, arrays and maps before it reaches a
// struct (type Tree []Tree; map[string]Tree): such a type has no CEL type
// (list(list(…)) never ends), and cel-go's native types recurse on it
// until the stack runs out, a fatal error.
func holdsItself(s reflect.Type) error {
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		var loops func(t reflect.Type, on []reflect.Type) reflect.Type
		loops = func(t reflect.Type, on []reflect.Type) reflect.Type {
			if slices.Contains(on, t) {
				return t
			}
			on = append(on, t)
			switch t.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Array:
				return loops(t.Elem(), on)
			case reflect.Map:
				if l := loops(t.Key(), on); l != nil {
					return l
				}
				return loops(t.Elem(), on)
			}
			return nil
		}
		if l := loops(f.Type, nil); l != nil {
			return fmt.Errorf("%s.%s: %s holds itself with no struct between, which CEL has no type for: make its elements a struct", s, f.Name, l)
		}
	}
	return nil
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
	if why, ok := te.shared[name]; ok {
		return nil, errors.New(why)
	}
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
	vars := &typedVars{provider: env.CELTypeProvider(), data: s, dataName: name, self: field, structs: te.structs, shared: te.shared}
	return compile(te.e, env, env, src, sizes, compileOpts{vars: vars})
}

var (
	numberType = reflect.TypeFor[json.Number]()
	rawType    = reflect.TypeFor[json.RawMessage]()
)

// misreads reports a value of a struct type whose CEL name another
// type shares, which a, a checked rule, reads (cel-go knows the first
// type of a name only, and reads the fields of the other by its fields'
// indexes: data.b.n read b's m); or a value a reads whose elements
// cel-go adapts by their contents, not as the types it checks them with:
// a json.Number in a list or map (a key, or a value) is a number to it,
// not a string; a json.RawMessage there the JSON value it holds, not its
// bytes. So data.ns.all(n, n != '0') held for [0], and a size() of a
// json.RawMessage counted an object's members. Read by a field of a
// struct (data.n) or as self, they are the string and bytes. A list or
// map that only size() reads is not refused: its size is not adapted.
func (v *typedVars) misreads(a *cel.Ast) error {
	native := a.NativeRep()
	// The operands of size(): their number of elements or members is
	// what it reads, which adapting them does not change (size(self) <=
	// 100 on a []json.RawMessage).
	sized := callIDs(native, func(e celast.Expr) (int64, bool) {
		switch call := e.AsCall(); {
		case call.FunctionName() != overloads.Size:
		case call.IsMemberFunction():
			return call.Target().ID(), true
		case len(call.Args()) == 1:
			return call.Args()[0].ID(), true
		}
		return 0, false
	})
	var err error
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if err != nil {
			return
		}
		if t := native.GetType(e.ID()); t != nil && t.Kind() == types.StructKind {
			if why, ok := v.shared[t.TypeName()]; ok {
				err = errors.New(why)
				return
			}
		}
		var st reflect.Type
		var name string
		test := false
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() != "self" || v.self == "" {
				return
			}
			st, name = v.data, v.self
		case celast.SelectKind:
			sel := e.AsSelect()
			test = sel.IsTestOnly()
			st, name = v.structs[native.GetType(sel.Operand().ID()).TypeName()], sel.FieldName()
		case celast.CallKind:
			call := e.AsCall()
			if call.FunctionName() != operators.OptSelect || len(call.Args()) != 2 || call.Args()[1].Kind() != celast.LiteralKind {
				return
			}
			f, ok := call.Args()[1].AsLiteral().(types.String)
			if !ok {
				return
			}
			st, name = v.structs[native.GetType(call.Args()[0].ID()).TypeName()], string(f)
		default:
			return
		}
		if st == nil {
			return
		}
		if err = readsMember(st, name); err != nil || test || sized[e.ID()] {
			return
		}
		if ft := celFieldType(st, name); ft != nil && adapted(ft, false) {
			err = fmt.Errorf("%s.%s (%s) holds json.Number or json.RawMessage values in a list or map, which rules read as the number or JSON value they hold, not as the string or bytes they are checked as: give it another element type (float64, string, any)",
				st, name, ft)
		}
	}))
	return err
}

// readsMember reports a field name of struct type st that cel-go reads
// from another Go field than the one encoding/json (and so the binder)
// decodes the member name into. cel-go finds a field by Go's selector
// rules, which hide a promoted field behind a shallower one of the same
// Go name whatever their json names; encoding/json by json names. So
// with T{Name `json:"h"`; Inner{Name `json:"x"`}; Mid{Lower{X `json:"x"`}}}
// the member "x" is decoded into T.Inner.Name, and data.x read
// T.Mid.Lower.X, always 0: data.x <= 100 held for {"x":1000}.
func readsMember(st reflect.Type, name string) error {
	cf, ok := celField(st, name)
	if !ok {
		return nil
	}
	winners, err := bind.Fields(st)
	if err != nil {
		return nil // a type the binder refuses, which bind.Check reports first
	}
	if index, ok := winners[name]; ok && !slices.Equal(index, cf.Index) {
		return fmt.Errorf("%q of %s is the field %s to rules (by Go's selector rules), but encoding/json decodes the member into %s: give one of them another json name, or tag %s json:\"-\"",
			name, st, fieldPath(st, cf.Index), fieldPath(st, index), fieldPath(st, cf.Index))
	}
	return nil
}

// celField is the field of struct type st that CEL names name, as
// ext.NativeTypes finds it with ParseStructTag("json"): among the
// exported fields Go's selector rules leave visible, by json name (quotes
// trimmed) else Go name, none of them (or of the embedded structs it is
// promoted through) named "-".
func celField(st reflect.Type, name string) (reflect.StructField, bool) {
	celName := func(sf reflect.StructField) string {
		tag, ok := sf.Tag.Lookup("json")
		if !ok {
			return sf.Name
		}
		n, _, _ := strings.Cut(tag, ",")
		if n == "-" {
			return "-"
		}
		if n = strings.Trim(n, "'"); n == "" {
			n = sf.Name
		}
		return n
	}
	for _, sf := range reflect.VisibleFields(st) {
		if !sf.IsExported() || celName(sf) != name {
			continue
		}
		skipped := false
		for i := 1; i < len(sf.Index); i++ {
			if celName(st.FieldByIndex(sf.Index[:i])) == "-" {
				skipped = true
			}
		}
		if !skipped {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// fieldPath names the field at index in t: Base.Role.
func fieldPath(t reflect.Type, index []int) string {
	names := make([]string, len(index))
	for i := range index {
		names[i] = t.FieldByIndex(index[:i+1]).Name
	}
	return strings.Join(names, ".")
}

// celFieldType is the Go type of the field of struct type st that CEL
// names name (its json name, else its Go name, as ext.NativeTypes reads
// them with ParseStructTag("json")); nil if none.
func celFieldType(st reflect.Type, name string) reflect.Type {
	for _, sf := range reflect.VisibleFields(st) {
		if !sf.IsExported() {
			continue
		}
		n, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if n == "-" {
			continue
		}
		if n = strings.Trim(n, "'"); n == "" {
			n = sf.Name
		}
		if n == name {
			return sf.Type
		}
	}
	return nil
}

// adapted reports whether a value of type t, in a list or map when in is
// set, holds a json.Number or json.RawMessage that cel-go adapts as an
// element of a list or map (see misreads). A struct's fields are read
// as its type says.
func adapted(t reflect.Type, in bool) bool {
	switch {
	case t == numberType || t == rawType:
		return in
	case t.Kind() == reflect.Pointer:
		if e := t.Elem(); e == numberType || e == rawType {
			return false // adapted as the string or bytes it points to
		}
		return adapted(t.Elem(), in)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && adapted(t.Elem(), true)
	case t.Kind() == reflect.Map:
		return adapted(t.Key(), true) || adapted(t.Elem(), true)
	}
	return false
}
