package contractguard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// typedRegistry holds a guard's typed contracts, one per Go type.
type typedRegistry struct {
	mu       sync.Mutex
	cache    sync.Map     // reflect.Type -> *contract
	list     []*contract  // in the order built, under mu
	count    atomic.Int64 // len(list), read without the lock by Metrics
	n        int          // reflected schemas compiled, for unique names
	handlers atomic.Int64 // typed handlers built: a new one may be mounted, so chi indexes made before it are stale
	chi      sync.Map     // chi.Routes -> *chiIndex
	// chiMounts: chiMount -> chiMount{routes: the router mounted there, or nil}
	chiMounts sync.Map
}

// typedContract returns the contract of request type t, built once per
// guard and type.
func (g *Guard) typedContract(t reflect.Type) (*contract, error) {
	if c, ok := g.typed.cache.Load(t); ok {
		return c.(*contract), nil
	}
	g.typed.mu.Lock()
	defer g.typed.mu.Unlock()
	if c, ok := g.typed.cache.Load(t); ok {
		return c.(*contract), nil
	}
	c, err := g.buildTyped(t)
	if err != nil {
		return nil, fmt.Errorf("contractguard: %w", err)
	}
	g.typed.cache.Store(t, c)
	g.typed.list = append(g.typed.list, c)
	g.typed.count.Add(1)
	return c, nil
}

// typedContracts lists the typed contracts built so far.
func (g *Guard) typedContracts() []*contract {
	g.typed.mu.Lock()
	defer g.typed.mu.Unlock()
	return slices.Clone(g.typed.list)
}

func (g *Guard) buildTyped(t reflect.Type) (*contract, error) {
	name := t.String()
	if err := bind.Check(t); err != nil {
		return nil, err
	}
	file, mode, err := typeTags(t)
	if err != nil {
		return nil, err
	}
	learn := mode == ModeLearn || g.opts.LearningMode
	if mode == ModeLearn && g.learning != nil {
		return nil, fmt.Errorf("%s: cg:\"mode=learn\": %w", name, g.learning)
	}
	var s *schema.Schema
	if file != "" {
		if err := fileSchemaTags(elem(t), file); err != nil {
			return nil, err
		}
		s, err = g.schemaFromFile(t, file)
	} else {
		s, err = g.reflectSchema(t)
	}
	if err != nil {
		return nil, err
	}
	floats, err := floatChecks(t, s.Compiled())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := ruleBuilder{root: t, done: map[reflect.Type]*ruleWalker{}, newEnv: func() (*expr.TypeEnv, error) {
		te, err := g.env.ForType(t, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return te, nil
	}}
	rules, err := b.walker(t)
	if err != nil {
		return nil, err
	}
	rules = rules.pruned()
	return newContract(contractSpec{endpoint: name, source: "type " + name, schema: s, body: t, rules: rules, learn: learn, floats: floats}), nil
}

// typeTags finds what blank fields of t (a pointer request type's
// struct) say of the whole contract: cg:"schema=…" (its schema file) and
// cg:"mode=…".
func typeTags(t reflect.Type) (file, mode string, err error) {
	if t = elem(t); t.Kind() != reflect.Struct {
		return "", "", nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("cg")
		if !ok {
			continue
		}
		if err := cgTagProblem(f.Tag); err != nil {
			return "", "", fieldError(t, f, "%v", err)
		}
		p, err := parseTag(tag)
		if err != nil {
			return "", "", fieldError(t, f, "cg tag: %v", err)
		}
		for _, kv := range []struct{ key, value string }{{"schema", p.schema}, {"mode", p.mode}} {
			switch {
			case kv.value == "":
				continue
			case f.Name != "_":
				return "", "", fieldError(t, f, "cg tag: %s= belongs on a blank field (_ struct{})", kv.key)
			case kv.key == "schema" && file != "", kv.key == "mode" && mode != "":
				return "", "", fieldError(t, f, "cg tag: a second %s=", kv.key)
			}
		}
		file, mode = cmp.Or(p.schema, file), cmp.Or(p.mode, mode)
	}
	return file, mode, nil
}

// fileSchemaTags reports a jsonschema or jsonschema_extras tag on a
// field declared in t, a request type whose schema is the file a
// cg:"schema=" tag names: t is not reflected, so the tag checks nothing
// (maximum=5 on such a field let 100 through). jsonschema:"-" asks for
// nothing to be checked. (The fields of the structs t embeds or holds may
// be another request type's, reflected, and are left alone.)
func fileSchemaTags(t reflect.Type, file string) error {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			continue
		}
		for _, key := range []string{"jsonschema", "jsonschema_extras"} {
			if tag := f.Tag.Get(key); tag != "" && (tag != "-" || key != "jsonschema") {
				return fieldError(t, f, "%s tag on a field of %s, whose schema is the file %s (cg:\"schema=%s\"): none of its fields' tags is read: put the keyword in the file, or check it by a cg rule",
					key, t, file, file)
			}
		}
	}
	return nil
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
	r := &jsonschema.Reflector{ExpandedStruct: true, Namer: defNamer(), Mapper: selfDecoding}
	if heldType(t) == urlType {
		return nil, fmt.Errorf("%s: %s", t, urlMismatch)
	}
	if err := schemaTakesWinners(t, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	if err := checkSchemaTags(t, map[reflect.Type]bool{}, false); err != nil {
		return nil, err
	}
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
		restoreRootDef(m, b, r.Namer(elem(t)))
		if typ, ok := m["type"].(string); ok && t.Kind() == reflect.Pointer {
			m["type"] = []any{typ, "null"} // a pointer request type: the body may be empty
		}
	}
	g.typed.n++
	name := "types/" + strconv.Itoa(g.typed.n) + ".json"
	s, err := schema.NewCompiler(nil, nil).Compile(name, doc)
	if err == nil {
		// A type's own JSONSchema or JSONSchemaExtend may say anything: a
		// schema that applies itself to the value it checks is refused, as
		// in a contracts file or a schema= file.
		err = s.Loop(name)
	}
	if err != nil {
		// A tag value the compiler refuses (multipleOf=0, pattern=(()
		// is named by its field, not by a pointer into the schema.
		if ferr := checkSchemaTags(t, map[reflect.Type]bool{}, true); ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("%s: reflected schema: %w", t, err)
	}
	return s, nil
}

var (
	schemaMethods = []reflect.Type{
		reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }](),
		reflect.TypeFor[interface{ JSONSchemaExtend(*jsonschema.Schema) }](),
	}
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// selfDecoding is the schema of a type that T decodes otherwise than by
// its Go structure, for invopop's Mapper: json.Number is a number; a
// uintptr an integer (invopop panics on one: "unsupported type"); a
// json.Unmarshaler (or json v2 UnmarshalerFrom) takes any JSON value (it
// says which, when T decodes it); an encoding.TextUnmarshaler takes a
// string. invopop would describe
// netip.Addr as an object and a [16]byte UUID as an array, refusing every
// value T decodes. A type that gives invopop its schema itself (by a
// method on T: invopop calls none on *T) keeps it,
// and time.Time is invopop's date-time string.
func selfDecoding(t reflect.Type) *jsonschema.Schema {
	switch {
	case t == reflect.TypeFor[json.Number]():
		return &jsonschema.Schema{Type: "number"} // a string kind holding a JSON number, not a string
	case t.Kind() == reflect.Uintptr && !bind.Opaque(t):
		return &jsonschema.Schema{Type: "integer"} // an unsigned integer to T; invopop panics on the kind
	case t == reflect.TypeFor[time.Time](), !bind.Opaque(t):
		return nil
	}
	for _, m := range schemaMethods {
		if t.Implements(m) { // invopop looks on T, not on *T
			return nil
		}
	}
	if bind.TakesJSON(t) {
		return &jsonschema.Schema{}
	}
	return &jsonschema.Schema{Type: "string"}
}

// restoreRootDef puts back in the $defs of the schema root (b as
// marshalled) the entry of the request type, named name: invopop
// describes the type in place (ExpandedStruct) and drops the entry, to
// which the fields of a recursive type still refer. The entry is a copy
// of the root, made before a pointer request type's root accepts null.
func restoreRootDef(root map[string]any, b []byte, name string) {
	if name == "" || !bytes.Contains(b, []byte(`"$ref":"#/$defs/`+name+`"`)) {
		return
	}
	defs, _ := root["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
		root["$defs"] = defs
	}
	if _, ok := defs[name]; !ok {
		self := maps.Clone(root)
		delete(self, "$defs")
		defs[name] = self
	}
}

// heldType is the type a value of t holds its members in: t through
// pointers, slices, arrays and map values, stopping at a type that decodes
// itself (bind.Opaque), or at one met before: a type that holds itself
// (type L []L, type M map[string]M) holds no members.
func heldType(t reflect.Type) reflect.Type { return heldTypeUntil(t, nil) }

// heldTypeUntil is heldType that also stops at a type stop takes (nil:
// none).
func heldTypeUntil(t reflect.Type, stop func(reflect.Type) bool) reflect.Type {
	var seen []reflect.Type
	for !bind.Opaque(t) && !slices.Contains(seen, t) {
		if stop != nil && stop(t) {
			return t
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			seen = append(seen, t)
			t = t.Elem()
		default:
			return t
		}
	}
	return t
}

// elem is t through pointers, stopping at one met before (type P *P).
func elem(t reflect.Type) reflect.Type {
	var seen []reflect.Type
	for t.Kind() == reflect.Pointer && !slices.Contains(seen, t) {
		seen = append(seen, t)
		t = t.Elem()
	}
	return t
}

// defNamer names the $defs of one reflected schema, a name per Go type.
// invopop's own name is the type's bare name, so two types of one name
// (billing.Address and shipping.Address, or a type declared in a
// function) would share the first one's schema; and an instance of a
// generic type is named with its argument's package path, whose slashes
// break the "#/$defs/<name>" pointer invopop refers to it by.
func defNamer() func(reflect.Type) string {
	names := map[reflect.Type]string{}
	taken := map[string]bool{}
	return func(t reflect.Type) string {
		if n, ok := names[t]; ok || t.Name() == "" {
			return n
		}
		base := strings.Map(func(r rune) rune {
			if r < 0x80 && (r == '_' || r == '-' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				return r
			}
			return '_'
		}, t.Name())
		n := base
		for i := 2; taken[n]; i++ {
			n = base + "-" + strconv.Itoa(i)
		}
		names[t], taken[n] = n, true
		return n
	}
}

// schemaTakesWinners reports an error where the schema invopop reflects
// for a struct type reachable from t would constrain a member by another
// field than the one encoding/json (and so T) decodes it into. invopop
// walks fields in order, into embedded structs, and the last field of a
// name sets its property; encoding/json's shallowest field wins. So a
// field shadowing a promoted one declared after it would lose its
// constraints to it (Role string `jsonschema:"enum=user"` before an
// embedded Base with its own Role): refused, with what to do, rather than
// checked by the wrong field's rules. A member invopop makes of a field
// encoding/json never decodes (a name two embedded structs hold at one
// depth, an unexported embedded non-struct, the fields of an unexported
// embedded pointer) would be required and checked, and T get a zero
// value: refused too.
func schemaTakesWinners(t reflect.Type, seen map[reflect.Type]bool) error {
	if t = heldType(t); bind.Opaque(t) {
		return nil // it decodes itself: none of its fields is a member
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	winners, err := bind.Fields(t)
	if err != nil {
		return err
	}
	last := map[string][]int{} // invopop's pick: the last field of each name, in its walk
	var walk func(st reflect.Type, at []int, in []reflect.Type) error
	walk = func(st reflect.Type, at []int, in []reflect.Type) error {
		st = elem(st)
		if slices.Contains(in, st) { // invopop would recurse for ever
			return fmt.Errorf("%s.%s: %s embeds itself, which invopop/jsonschema cannot reflect: give the field a json name", t, fieldPath(t, at), st)
		}
		in = append(in, st)
		for i := range st.NumField() {
			f := st.Field(i)
			index := append(slices.Clone(at), i)
			name, skip, inline := bind.FieldName(f)
			switch {
			case skip, !f.IsExported() && !f.Anonymous, strings.Split(f.Tag.Get("jsonschema"), ",")[0] == "-":
				// not in the schema
			case inline:
				if err := walk(f.Type, index, in); err != nil {
					return err
				}
			default:
				last[name] = index
			}
		}
		return nil
	}
	if err := walk(t, nil, nil); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(last)) {
		if _, ok := winners[name]; !ok {
			return fmt.Errorf("%s.%s: invopop/jsonschema makes it the member %q, which encoding/json decodes into no field of %s: give it another json name, or json:\"-\"",
				t, fieldPath(t, last[name]), name, t)
		}
	}
	for name, index := range winners {
		if got := last[name]; got != nil && !slices.Equal(got, index) && !sameProperty(t.FieldByIndex(got), t.FieldByIndex(index)) {
			return fmt.Errorf("%s.%s: its member %q would be checked by the rules of %s.%s, which it shadows: declare the embedded struct before %s, or give one of them another json name",
				t, fieldPath(t, index), name, t, fieldPath(t, got), fieldPath(t, index))
		}
	}
	for _, index := range winners {
		if err := schemaTakesWinners(t.FieldByIndex(index).Type, seen); err != nil {
			return err
		}
	}
	return nil
}

// sameProperty reports whether invopop reflects a and b alike: the same
// type, with the same schema tags (a shadowed field that is a copy of
// the one that shadows it changes nothing).
func sameProperty(a, b reflect.StructField) bool {
	return a.Type == b.Type && a.Tag.Get("jsonschema") == b.Tag.Get("jsonschema") &&
		a.Tag.Get("jsonschema_extras") == b.Tag.Get("jsonschema_extras")
}

// fieldPath names the field at index in t: Base.Role.
func fieldPath(t reflect.Type, index []int) string {
	names := make([]string, len(index))
	for i := range index {
		names[i] = t.FieldByIndex(index[:i+1]).Name
	}
	return strings.Join(names, ".")
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
	if err == nil {
		err = s.Loop(name) // as the loader refuses it: it would fail, or under not pass, every body
	}
	if err != nil {
		return nil, fmt.Errorf("%s: schema=%s: %w", t, file, err)
	}
	return s, nil
}

type ruleBuilder struct {
	env  *expr.TypeEnv // made by newEnv for the first rule: a T without rules needs none
	root reflect.Type
	done map[reflect.Type]*ruleWalker
	// newEnv makes the rules' environment, which declares the struct types
	// of T to CEL: it refuses some that encoding/json reads (a promoted
	// field whose json name a shallower field of another Go name takes).
	newEnv func() (*expr.TypeEnv, error)
}

// rule compiles a rule declared on struct type s (field: the json name of
// the field of a field rule, "" for a struct rule).
func (b *ruleBuilder) rule(s reflect.Type, field, src string) (*expr.Program, error) {
	if b.env == nil {
		env, err := b.newEnv()
		if err != nil {
			return nil, err
		}
		b.env = env
	}
	return b.env.Rule(s, field, src)
}

// walker returns the walker for t, or nil when nothing in t has rules.
func (b *ruleBuilder) walker(t reflect.Type) (*ruleWalker, error) {
	if w, ok := b.done[t]; ok {
		return w, nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t == b.root {
			if err := ruledKeys(t, t.String(), "in the handler"); err != nil {
				return nil, err
			}
		}
		w := &ruleWalker{kind: t.Kind(), opaque: bind.Opaque(t)} // a slice type may decode itself from a string
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
	w := &ruleWalker{kind: reflect.Struct, opaque: bind.Opaque(t)}
	b.done[t] = w // a recursive type meets itself here
	if err := shadowedRules(t); err != nil {
		return nil, err
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if err := cgTagProblem(f.Tag); err != nil {
			return nil, fieldError(t, f, "%v", err)
		}
		p, err := parseTag(f.Tag.Get("cg"))
		hasTag := f.Tag.Get("cg") != ""
		if hasTag && err != nil {
			return nil, fieldError(t, f, "cg tag: %v", err)
		}
		if f.Name == "_" {
			if p.schema != "" && t != elem(b.root) {
				return nil, fieldError(t, f, "cg tag: schema= belongs on the request type, not on %s", t)
			}
			if p.mode != "" && t != elem(b.root) {
				return nil, fieldError(t, f, "cg tag: mode= belongs on the request type, not on %s", t)
			}
			for j, r := range p.rules {
				prg, err := b.rule(t, "", r.expr)
				if err != nil {
					return nil, fieldError(t, f, "rule %d (%s): %v", j+1, failure.Printable(failure.Clip(r.expr)), err)
				}
				w.own = append(w.own, rule{prg, r.msg, t.String()})
			}
			continue
		}
		if !f.IsExported() && !f.Anonymous {
			if hasTag {
				return nil, fieldError(t, f, "cg tag on an unexported field")
			}
			continue
		}
		if p.schema != "" || p.mode != "" {
			return nil, fieldError(t, f, "cg tag: schema= and mode= belong on a blank field (_ struct{}) of the request type")
		}
		if !f.IsExported() && len(p.rules) > 0 { // embedded: the one unexported field walked
			also := ""
			if et := elem(f.Type); et.Kind() == reflect.Struct {
				also = " or of " + et.String()
			}
			return nil, fieldError(t, f, "cg tag on an unexported embedded field, which rules cannot read as self: put its rules on a blank field of %s%s", t, also)
		}
		name, skip, inline := bind.FieldName(f)
		if skip {
			if hasTag {
				return nil, fieldError(t, f, "cg tag on a field tagged json:\"-\"")
			}
			continue
		}
		if err := ruledKeys(f.Type, t.String()+"."+f.Name, "by a rule of "+t.String()); err != nil {
			return nil, err
		}
		fw := fieldWalker{index: i, name: name, inline: inline}
		for j, r := range p.rules {
			prg, err := b.rule(t, name, r.expr)
			if err != nil {
				return nil, fieldError(t, f, "rule %d (%s): %v", j+1, failure.Printable(failure.Clip(r.expr)), err)
			}
			fw.rules = append(fw.rules, rule{prg, r.msg, t.String() + "." + f.Name})
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
	if err := shadowedData(t, w); err != nil {
		return nil, err
	}
	return w, nil
}

// shadowedData reports a rule of a struct embedded in t (its fields
// promoted into t, at any depth), of a blank field or of a field, that
// reads a member of its data which encoding/json decodes into another
// field of t (one that shadows it) or into none: the rule reads a field
// that is always zero.
// (Base{_ `cg:"cel=data.role != 'admin'"`; Role} embedded beside a Role
// of t's own passed {"role":"admin"}.) w is t's walker.
func shadowedData(t reflect.Type, w *ruleWalker) error {
	winners, err := bind.Fields(t)
	if err != nil {
		return nil // a type the binder refuses, which bind.Check reports first
	}
	var walk func(w *ruleWalker, at []int, in []*ruleWalker) error
	walk = func(w *ruleWalker, at []int, in []*ruleWalker) error {
		for w != nil && w.kind == reflect.Pointer {
			w = w.elem
		}
		if w == nil || w.kind != reflect.Struct || slices.Contains(in, w) {
			return nil
		}
		in = append(in, w)
		rules := slices.Clone(w.own) // the rules whose data is this struct: its blank fields', and its fields'
		for _, f := range w.fields {
			rules = append(rules, f.rules...)
		}
		if len(at) > 0 && len(rules) > 0 {
			st := elem(t.FieldByIndex(at).Type)
			members, err := bind.Fields(st)
			if err != nil {
				return nil
			}
			for _, ru := range rules {
				names, whole := ru.prg.DataFields()
				if whole {
					names = slices.Sorted(maps.Keys(members))
				}
				for _, name := range names {
					index, ok := members[name]
					if !ok {
						continue
					}
					full := append(slices.Clone(at), index...)
					into := "no field of " + t.String()
					if got, ok := winners[name]; ok {
						if slices.Equal(got, full) {
							continue
						}
						into = t.String() + "." + fieldPath(t, got)
					}
					return fmt.Errorf("%s.%s: the rule of %s %q reads the member %q of its data, which encoding/json decodes into %s: it would only see the zero value of %s.%s: check it on %s, or give the fields different json names",
						t, fieldPath(t, at), st, ru.msg, name, into, t, fieldPath(t, full), t)
				}
			}
		}
		for _, f := range w.fields {
			if f.inline {
				if err := walk(f.nested, append(slices.Clone(at), f.index), in); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(w, nil, nil)
}

// shadowedRules reports a field with rules, promoted into struct type t
// from an embedded struct, whose member encoding/json decodes into
// another field of t (one that shadows it) or into none (two of one name
// at one depth): its rules would only ever see its zero value.
func shadowedRules(t reflect.Type) error {
	winners, err := bind.Fields(t)
	if err != nil {
		return nil // a type the binder refuses, which bind.Check reports first
	}
	var walk func(st reflect.Type, at []int, in []reflect.Type) error
	walk = func(st reflect.Type, at []int, in []reflect.Type) error {
		st = elem(st)
		if slices.Contains(in, st) {
			return nil
		}
		in = append(in, st)
		for i := range st.NumField() {
			f := st.Field(i)
			index := append(slices.Clone(at), i)
			name, skip, inline := bind.FieldName(f)
			switch {
			case skip || f.Name == "_":
			case inline:
				if err := walk(f.Type, index, in); err != nil {
					return err
				}
			case len(at) > 0 && f.Tag.Get("cg") != "":
				w, ok := winners[name]
				switch {
				case !ok:
					return fmt.Errorf("%s.%s: its rules never see the member %q, which encoding/json decodes into no field of %s: put them on a field that gets it", t, fieldPath(t, index), name, t)
				case !slices.Equal(w, index):
					return fmt.Errorf("%s.%s: its rules never see the member %q, which encoding/json decodes into %s.%s: put them on that field", t, fieldPath(t, index), name, t, fieldPath(t, w))
				}
			case len(at) > 0 && holdsRules(f.Type, map[reflect.Type]bool{}):
				if w, ok := winners[name]; !ok || !slices.Equal(w, index) {
					into := "no field of " + t.String()
					if ok {
						into = t.String() + "." + fieldPath(t, w)
					}
					return fmt.Errorf("%s.%s: the rules of %s never see the member %q, which encoding/json decodes into %s: tag the shadowed field json:\"-\"", t, fieldPath(t, index), elemType(f.Type), name, into)
				}
			}
		}
		return nil
	}
	return walk(t, nil, nil)
}

// ruledKeys reports a map, in a value of type t (through pointers,
// slices, arrays and map values), whose key type holds rules: the walker
// goes into map values only, so they would never run (a map[Code]int,
// Code's rule "no admin key", passed {"admin":1}). where names the value,
// check says where its keys can be checked instead.
func ruledKeys(t reflect.Type, where, check string) error {
	var seen []reflect.Type
	for !slices.Contains(seen, t) {
		seen = append(seen, t)
		switch t.Kind() {
		case reflect.Map:
			if holdsRules(t.Key(), map[reflect.Type]bool{}) {
				return fmt.Errorf("%s: the rules of %s never run on a map key: check the keys %s, or use another key type", where, elemType(t.Key()), check)
			}
			t = t.Elem()
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
		default:
			return nil
		}
	}
	return nil
}

// holdsRules reports whether a value of type t holds a struct with a cg
// tag: whether the rule walker would run rules inside it.
func holdsRules(t reflect.Type, seen map[reflect.Type]bool) bool {
	for k := t.Kind(); k == reflect.Pointer || k == reflect.Slice || k == reflect.Array || k == reflect.Map; k = t.Kind() {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		// A cg tag reflect does not read all of holds rules too: the
		// walker gets to it, and refuses it (cgTagProblem).
		if f := t.Field(i); f.Tag.Get("cg") != "" || cgTagProblem(f.Tag) != nil || holdsRules(f.Type, seen) {
			return true
		}
	}
	return false
}

// typedLoaded is the number of typed contracts in force: one per request
// type of the guard's typed handlers (a disabled guard has none).
func (g *Guard) typedLoaded() int64 {
	if g.opts.Disabled {
		return 0
	}
	return g.typed.count.Load()
}
