package contractguard

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// typedPart is what a contract built from a Go type adds: the type the
// body is decoded into and the rules of its cg tags.
type typedPart struct {
	t     reflect.Type
	rules *ruleWalker // nil when the type has no rules
}

// typedContract returns the contract of request type t, built once per
// guard and type.
func (g *Guard) typedContract(t reflect.Type) (*compiled, error) {
	if c, ok := g.typed.cache.Load(t); ok {
		return c.(*compiled), nil
	}
	g.typed.mu.Lock()
	defer g.typed.mu.Unlock()
	if c, ok := g.typed.cache.Load(t); ok {
		return c.(*compiled), nil
	}
	c, err := g.buildTyped(t)
	if err != nil {
		return nil, fmt.Errorf("contractguard: %w", err)
	}
	g.typed.cache.Store(t, c)
	return c, nil
}

func (g *Guard) buildTyped(t reflect.Type) (*compiled, error) {
	name := t.String()
	if err := bind.Check(t); err != nil {
		return nil, err
	}
	file, err := schemaTag(t)
	if err != nil {
		return nil, err
	}
	var s *schema.Schema
	if file != "" {
		s, err = g.schemaFromFile(t, file)
	} else {
		s, err = g.reflectSchema(t)
	}
	if err != nil {
		return nil, err
	}
	te, err := g.env.ForType(t, s.Compiled())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := ruleBuilder{env: te, root: t, done: map[reflect.Type]*ruleWalker{}}
	rules, err := b.walker(t)
	if err != nil {
		return nil, err
	}
	return &compiled{
		endpoint: name,
		source:   "type " + name,
		schema:   s,
		shape:    expr.ShapeOf(s.Compiled()),
		typed:    &typedPart{t: t, rules: rules},
		scanSkip: s.ScanSkip(),
	}, nil
}

// schemaTag finds cg:"schema=…" on a blank field of t.
func schemaTag(t reflect.Type) (string, error) {
	if t.Kind() != reflect.Struct {
		return "", nil
	}
	file := ""
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("cg")
		if !ok {
			continue
		}
		p, err := parseTag(tag)
		if err != nil {
			return "", fieldError(t, f, "cg tag: %v", err)
		}
		if p.schema == "" {
			continue
		}
		if f.Name != "_" {
			return "", fieldError(t, f, "cg tag: schema= belongs on a blank field (_ struct{})")
		}
		if file != "" {
			return "", fieldError(t, f, "cg tag: a second schema=")
		}
		file = p.schema
	}
	return file, nil
}

func fieldError(t reflect.Type, f reflect.StructField, format string, args ...any) error {
	where := t.String()
	if f.Name != "_" {
		where += "." + f.Name
	}
	return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
}

// reflectSchema is t's JSON Schema from invopop/jsonschema: json names,
// jsonschema tags, fields without omitempty required, no additional
// properties; compiled as draft-07 like every contract schema.
func (g *Guard) reflectSchema(t reflect.Type) (*schema.Schema, error) {
	r := &jsonschema.Reflector{ExpandedStruct: true, Mapper: func(t reflect.Type) *jsonschema.Schema {
		if t == reflect.TypeFor[json.Number]() {
			return &jsonschema.Schema{Type: "number"} // a string kind holding a JSON number, not a string
		}
		return nil
	}}
	b, err := r.ReflectFromType(t).MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	parsed, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit)
	if err != nil {
		return nil, fmt.Errorf("%s: reflected schema: %w", t, err)
	}
	doc := parsed.Any()
	scanAnnotations(doc)
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$schema") // 2020-12; compiled as draft-07, as contracts are
		delete(m, "$id")     // a URL derived from the package path: not a base for $refs
		if typ, ok := m["type"].(string); ok && t.Kind() == reflect.Pointer {
			m["type"] = []any{typ, "null"} // a pointer request type: the body may be empty
		}
	}
	g.typed.n++
	s, err := schema.NewCompiler(nil, nil).Compile("types/"+strconv.Itoa(g.typed.n)+".json", doc)
	if err != nil {
		return nil, fmt.Errorf("%s: reflected schema: %w", t, err)
	}
	return s, nil
}

// scanAnnotations turns the x-contractguard-scan values invopop writes
// from a jsonschema_extras tag, which are strings, into the booleans the
// annotation takes.
func scanAnnotations(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == schema.ScanKeyword && (s == "false" || s == "true") {
				v[k] = s == "true"
				continue
			}
			scanAnnotations(e)
		}
	case []any:
		for _, e := range v {
			scanAnnotations(e)
		}
	}
}

// schemaFromFile compiles the schema file a cg:"schema=…" tag names, read
// from Options.SchemaFS with its relative $refs.
func (g *Guard) schemaFromFile(t reflect.Type, file string) (*schema.Schema, error) {
	if g.opts.SchemaFS == nil {
		return nil, fmt.Errorf("%s: cg:\"schema=%s\" needs Options.SchemaFS", t, file)
	}
	name := strings.TrimPrefix(file, "./")
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("%s: schema=%s: not a path inside Options.SchemaFS", t, file)
	}
	data, err := fs.ReadFile(g.opts.SchemaFS, name)
	if err != nil {
		return nil, fmt.Errorf("%s: schema=%s: %w", t, file, err)
	}
	doc, err := decodeSchemaFile(name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: schema=%s: %w", t, file, err)
	}
	s, err := schema.NewCompiler(g.opts.SchemaFS, decodeSchemaFile).Compile(name, doc)
	if err != nil {
		return nil, fmt.Errorf("%s: schema=%s: %w", t, file, err)
	}
	return s, nil
}

// rule is one cg rule, compiled.
type rule struct {
	prg *expr.Program
	msg string
}

// ruleWalker applies the rules of one type to a value of it, and walks
// into the values of its fields, elements and map values that have rules
// of their own.
type ruleWalker struct {
	kind   reflect.Kind
	elem   *ruleWalker // pointer, slice, array, map
	own    []rule      // struct: rules of its blank fields (data is the struct)
	fields []fieldWalker
}

type fieldWalker struct {
	index    int
	name     string // json name: the path token
	inline   bool   // an embedded struct whose fields are promoted: no path token
	rules    []rule // self is the field
	nested   *ruleWalker
	typeName string // for messages
}

type ruleBuilder struct {
	env  *expr.TypeEnv
	root reflect.Type
	done map[reflect.Type]*ruleWalker
}

// walker returns the walker for t, or nil when nothing in t has rules.
func (b *ruleBuilder) walker(t reflect.Type) (*ruleWalker, error) {
	if w, ok := b.done[t]; ok {
		return w, nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		w := &ruleWalker{kind: t.Kind()}
		b.done[t] = w
		elem, err := b.walker(t.Elem())
		if err != nil || elem == nil {
			b.done[t] = nil
			return nil, err
		}
		w.elem = elem
		return w, nil
	case reflect.Struct:
		return b.structWalker(t)
	}
	return nil, nil
}

func (b *ruleBuilder) structWalker(t reflect.Type) (*ruleWalker, error) {
	w := &ruleWalker{kind: reflect.Struct}
	b.done[t] = w // a recursive type meets itself here
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		p, err := parseTag(f.Tag.Get("cg"))
		hasTag := f.Tag.Get("cg") != ""
		if hasTag && err != nil {
			return nil, fieldError(t, f, "cg tag: %v", err)
		}
		if f.Name == "_" {
			if p.schema != "" && t != b.root {
				return nil, fieldError(t, f, "cg tag: schema= belongs on the request type, not on %s", t)
			}
			for j, r := range p.rules {
				prg, err := b.env.Rule(t, "", r.expr)
				if err != nil {
					return nil, fieldError(t, f, "rule %d (%s): %v", j+1, failure.Clip(r.expr), err)
				}
				w.own = append(w.own, rule{prg, r.msg})
			}
			continue
		}
		if !f.IsExported() && !f.Anonymous {
			if hasTag {
				return nil, fieldError(t, f, "cg tag on an unexported field")
			}
			continue
		}
		name, skip, inline := bind.FieldName(f)
		if skip {
			if hasTag {
				return nil, fieldError(t, f, "cg tag on a field tagged json:\"-\"")
			}
			continue
		}
		fw := fieldWalker{index: i, name: name, inline: inline, typeName: t.String() + "." + f.Name}
		for j, r := range p.rules {
			prg, err := b.env.Rule(t, name, r.expr)
			if err != nil {
				return nil, fieldError(t, f, "rule %d (%s): %v", j+1, failure.Clip(r.expr), err)
			}
			fw.rules = append(fw.rules, rule{prg, r.msg})
		}
		if fw.nested, err = b.walker(f.Type); err != nil {
			return nil, err
		}
		if len(fw.rules) > 0 || fw.nested != nil {
			w.fields = append(w.fields, fw)
		}
	}
	if len(w.own) == 0 && len(w.fields) == 0 {
		b.done[t] = nil
		return nil, nil
	}
	return w, nil
}

// ruleRun applies the rules of one typed contract to one request.
type ruleRun struct {
	act     *expr.Activation
	path    failure.Path
	details []Detail
	guard   *Guard // logs rules that fail to evaluate; nil: not logged
}

func (r *ruleRun) check(rs []rule, data, self any, where string) {
	for _, ru := range rs {
		r.act.Data, r.act.Self = data, self
		ok, err := ru.prg.Eval(r.act)
		if ok {
			continue
		}
		if err != nil && r.guard != nil {
			r.guard.evalFailed(where, err)
		}
		r.details = append(r.details, Detail{Path: r.path.Pointer(), Message: ru.msg})
	}
}

func (w *ruleWalker) walk(r *ruleRun, v reflect.Value) {
	switch w.kind {
	case reflect.Pointer:
		if !v.IsNil() {
			w.elem.walk(r, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			r.path.Index(i)
			w.elem.walk(r, v.Index(i))
			r.path.Pop()
		}
	case reflect.Map:
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = mapKey(k)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
		for _, i := range order {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(keys[i])) // addressable, for data
			r.path.Member(names[i])
			w.elem.walk(r, e)
			r.path.Pop()
		}
	case reflect.Struct: // addressable: the walk starts at a pointer's element and copies map values
		data := v.Addr().Interface()
		r.check(w.own, data, nil, v.Type().String())
		for _, f := range w.fields {
			fv := v.Field(f.index)
			if !f.inline {
				r.path.Member(f.name)
			}
			if len(f.rules) > 0 {
				r.check(f.rules, data, fv.Interface(), f.typeName)
			}
			if f.nested != nil {
				f.nested.walk(r, fv)
			}
			if !f.inline {
				r.path.Pop()
			}
		}
	}
}

// mapKey is a map key as its JSON object member name.
func mapKey(k reflect.Value) string {
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			return string(b)
		}
	}
	switch k.Kind() {
	case reflect.String:
		return k.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return fmt.Sprint(k.Interface())
}
