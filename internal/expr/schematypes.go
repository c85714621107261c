package expr

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// MaxHeaderBytes bounds the sizes of request.params, .query and .headers
// for cost estimates: net/http's default limit on the request line and
// headers together.
const MaxHeaderBytes = 1 << 20

// ContractEnv compiles the invariants of one file or in-code contract:
// request.body is typed from the contract's schema, and every expression's
// cost is estimated from the schema's sizes.
type ContractEnv struct {
	e     *Env     // its base environment, where expressions are parsed, estimated and planned, and its limits
	env   *cel.Env // where they are type-checked: the checking environment with request
	sizes *sizer
	body  *schema.Schema
	from  *cel.Env // what env extends
	// estimates, when set, remembers cost estimates by shape (the
	// contracts of one load share one: see Estimates).
	estimates *Estimates
}

// ForSchema returns the environment of a contract whose body schema is
// body (nil: the body is dyn).
func (e *Env) ForSchema(body *schema.Schema) (*ContractEnv, error) {
	return e.forSchema(e.checking, body)
}

// forSchema is ForSchema extending from (the checking environment; the
// full one, which has the macros, in a test that holds the two alike).
func (e *Env) forSchema(from *cel.Env, body *schema.Schema) (*ContractEnv, error) {
	s := compiledOf(body)
	p := &schemaTypes{Provider: e.env.CELTypeProvider(),
		structs: map[string]map[string]*types.Type{}, named: map[*jsonschema.Schema]*types.Type{}}
	bodyType := types.DynType
	if s != nil {
		bodyType = p.typeOf(s, "request.body")
	}
	request := objectType + "request"
	p.structs[request] = map[string]*types.Type{
		"body":    bodyType,
		"params":  types.NewMapType(types.StringType, types.StringType),
		"query":   types.NewMapType(types.StringType, types.StringType),
		"headers": types.NewMapType(types.StringType, types.StringType),
		"method":  types.StringType,
		"path":    types.StringType,
	}
	env, err := from.Extend(cel.CustomTypeProvider(p), cel.Variable("request", types.NewObjectType(request)))
	if err != nil {
		return nil, err
	}
	return &ContractEnv{e: e, env: env, sizes: &sizer{body: s, maxBody: uint64(e.maxBody)}, body: body, from: from}, nil
}

// ShareEstimates makes ce remember its expressions' cost estimates in m,
// and find there those of expressions of the same shape.
func (ce *ContractEnv) ShareEstimates(m *Estimates) { ce.estimates = m }

// compiledOf is the library's schema behind s, nil for none.
func compiledOf(s *schema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return s.Compiled()
}

// Compile parses, type-checks and cost-checks src. The program is
// planned in the base environment: the schema's types have no field
// accessors (the interpreter reads fields like map entries either way),
// so the contract's environment is needed to check, not to run. (A
// struct literal of the schema's types would plan differently, but no
// expression can name them: see schemaTypes.)
//
// A program the native path covers is planned on its first fallback
// (compile), from src checked again in an environment made anew: the
// contract keeps its schema and src, not this environment or the checked
// AST (0.7 KiB a contract).
func (ce *ContractEnv) Compile(src string) (*Program, error) {
	e, from, body := ce.e, ce.from, ce.body
	envFrom := func(from *cel.Env) (*cel.Env, error) {
		c, err := e.forSchema(from, body)
		if err != nil {
			return nil, err
		}
		return c.env, nil
	}
	var again func() (*cel.Env, error) // the same declarations with the macros (recheck)
	if from == e.checking {
		again = func() (*cel.Env, error) { return envFrom(e.explain) }
	}
	later := func() (*cel.Ast, error) {
		env, err := envFrom(from)
		if err != nil {
			return nil, err
		}
		return checked(e, env, src, nil)
	}
	return compile(e, ce.env, e.env, src, ce.sizes, compileOpts{again: again, later: later, estimates: ce.estimates})
}

// schemaTypes declares the object types of one contract's body, built from
// its compiled schema. Fields have no accessors: at run time the
// interpreter reads them from the lazily converted body like map entries.
//
// An object type is named by where it is, "object request.body.customer":
// a type error names what a person wrote ("found no matching overload
// for '_<_' applied to '(object request.body.customer, int)'"), the same
// on every load. The space keeps the name out of reach of CEL's syntax:
// no expression can name the type, so a field selection such as
// request.body.customer is never read as a type name, and no struct
// literal of it compiles.
type schemaTypes struct {
	types.Provider
	structs map[string]map[string]*types.Type
	// patterns are the patternProperties of an object type, in order: a
	// field its properties do not declare has the type of the patterns it
	// matches (dyn where they disagree); none: no such field.
	patterns map[string][]patternType
	named    map[*jsonschema.Schema]*types.Type // the type of each schema met, by the first path it is met at
	// building are the schemas of lists and maps whose types are being
	// built: met again inside itself, a list or map of itself has no CEL
	// type (list(list(…)) never ends), and is dyn there.
	building map[*jsonschema.Schema]bool
}

type patternType struct {
	re jsonschema.Regexp
	t  *types.Type
}

const objectType = "object "

func (p *schemaTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.structs[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *schemaTypes) FindStructFieldNames(name string) ([]string, bool) {
	fields, ok := p.structs[name]
	if !ok {
		return p.Provider.FindStructFieldNames(name)
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	return names, true
}

func (p *schemaTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	fields, ok := p.structs[name]
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	t, ok := fields[field]
	if !ok {
		var matched []*types.Type
		for _, pt := range p.patterns[name] {
			if pt.re.MatchString(field) {
				matched = append(matched, pt.t)
			}
		}
		if t = agreed(matched); t == nil {
			return nil, false
		}
	}
	return &types.FieldType{Type: t}, true
}

// agreed is the one type of ts, dyn where they differ, nil for none.
func agreed(ts []*types.Type) *types.Type {
	if len(ts) == 0 {
		return nil
	}
	for _, t := range ts[1:] {
		if !t.IsExactType(ts[0]) {
			return types.DynType
		}
	}
	return ts[0]
}

// patternTypes are the types of the members the patternProperties of s
// and of its allOf branches describe, at path.
func (p *schemaTypes) patternTypes(s *jsonschema.Schema, path string) []patternType {
	var out []patternType
	for _, from := range append([]*jsonschema.Schema{s}, s.AllOf...) {
		from = schema.Deref(from)
		for _, re := range schema.SortedPatterns(from.PatternProperties) {
			out = append(out, patternType{re, p.typeOf(from.PatternProperties[re], path+"[/"+re.String()+"/]")})
		}
	}
	return out
}

// typeOf is the CEL type of the values s describes at path (as an
// expression reads it: request.body.lines[*].sku): objects with
// properties are object types with those fields, arrays lists, maps the
// objects described only by additionalProperties; string, integer, number
// and boolean their CEL types, an enum of strings a string; anything else
// dyn.
//
// Each schema's type is worked out once (named): a schema whose members
// lead to one schema several times (a map of eight patterns, each a map
// of eight patterns, …) was typed once per path, 8^depth times.
func (p *schemaTypes) typeOf(s *jsonschema.Schema, path string) *types.Type {
	s = schema.Deref(s)
	if t, ok := p.named[s]; ok {
		return t
	}
	if p.building[s] {
		return types.DynType
	}
	t := p.typeOfNew(s, path)
	p.named[s] = t
	return t
}

// typeOfNew is typeOf of a schema not met before.
func (p *schemaTypes) typeOfNew(s *jsonschema.Schema, path string) *types.Type {
	if s.Bool != nil || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil || s.If != nil {
		return types.DynType
	}
	var kinds []string
	if s.Types != nil {
		kinds = s.Types.ToStrings()
	}
	kind := ""
	switch {
	case len(kinds) == 1:
		kind = kinds[0]
	case len(kinds) > 1:
		return types.DynType
	case props(s) != nil:
		kind = "object"
	case s.Items != nil || s.Items2020 != nil:
		kind = "array"
	case s.Enum != nil && allStrings(s.Enum.Values):
		return types.StringType
	}
	switch kind {
	case "string":
		return types.StringType
	case "integer":
		return types.IntType
	case "number":
		return types.DoubleType
	case "boolean":
		return types.BoolType
	case "null":
		return types.NullType
	case "array":
		p.enter(s)
		defer delete(p.building, s)
		// Beside prefixItems, items describes only the elements after
		// theirs: the list is of any value, as its numbers read
		// (schema.ItemsOf).
		if it := schema.ItemsOf(s); it != nil {
			return types.NewListType(p.typeOf(it, path+"[*]"))
		}
		return types.NewListType(types.DynType)
	case "object":
		ps := props(s)
		if len(ps) == 0 {
			// A map: its values those of its patterns and of
			// additionalProperties (any value where that is absent).
			p.enter(s)
			defer delete(p.building, s)
			var values []*types.Type
			for _, pt := range p.patternTypes(s, path) {
				values = append(values, pt.t)
			}
			switch a := s.AdditionalProperties.(type) {
			case *jsonschema.Schema:
				values = append(values, p.typeOf(a, path+"[*]"))
			case bool:
				if a {
					values = append(values, types.DynType)
				}
			default:
				values = append(values, types.DynType)
			}
			return types.NewMapType(types.StringType, cmp.Or(agreed(values), types.DynType))
		}
		name := objectType + path // each path is met once; a schema met again is p.named's
		t := types.NewObjectType(name)
		p.named[s] = t // a recursive schema refers to the type being built
		fields := make(map[string]*types.Type, len(ps))
		p.structs[name] = fields
		if pts := p.patternTypes(s, path); len(pts) > 0 {
			if p.patterns == nil {
				p.patterns = map[string][]patternType{}
			}
			p.patterns[name] = pts
		}
		// An object type between ends a loop (its name stands for it):
		// the lists and maps around it are no longer met inside
		// themselves, and a list of these objects below is typed.
		outer := p.building
		p.building = nil
		for _, f := range slices.Sorted(maps.Keys(ps)) { // in order: a schema met at two paths is named by the first
			fields[f] = p.typeOf(ps[f], path+member(f))
		}
		p.building = outer
		return t
	}
	return types.DynType
}

// enter notes that the type of the list or map s describes is being
// built.
func (p *schemaTypes) enter(s *jsonschema.Schema) {
	if p.building == nil {
		p.building = map[*jsonschema.Schema]bool{}
	}
	p.building[s] = true
}

// props merges the properties of s and of its allOf branches.
func props(s *jsonschema.Schema) map[string]*jsonschema.Schema {
	if len(s.AllOf) == 0 {
		return s.Properties
	}
	out := map[string]*jsonschema.Schema{}
	for _, from := range append([]*jsonschema.Schema{s}, s.AllOf...) {
		for name, p := range schema.Deref(from).Properties {
			if _, dup := out[name]; !dup {
				out[name] = p
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func allStrings(vals []any) bool {
	for _, v := range vals {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return len(vals) > 0
}

// sizer bounds the sizes of lists, strings and maps for cost estimates:
// from the schema (maxItems, maxLength, maxProperties) where it says, else
// from what fits in a body of maxBody bytes, given the smallest encoding
// of an element; request.params, .query and .headers by MaxHeaderBytes.
type sizer struct {
	body       *jsonschema.Schema // request.body
	data, self *jsonschema.Schema // the variables of struct-tag rules on the request type
	maxBody    uint64
}

func (z *sizer) EstimateCallCost(function, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	return nil
}

func (z *sizer) EstimateSize(node cost.AstNode) *cost.SizeEstimate {
	path := node.Path()
	kind := node.Type().Kind()
	switch kind {
	case types.ListKind, types.StringKind, types.BytesKind, types.MapKind, types.StructKind:
	case types.DynKind, types.AnyKind:
		// A dyn value may be a string, a list or a map: bound it by bytes.
	default:
		return nil
	}
	limit := z.maxBody
	var s *jsonschema.Schema
	switch {
	case len(path) >= 2 && path[0] == "request" && path[1] == "body":
		s = z.body
		for _, tok := range path[2:] {
			s = child(s, tok)
		}
	case len(path) >= 1 && (path[0] == "data" && z.data != nil || path[0] == "self" && z.self != nil):
		s = z.data
		if path[0] == "self" {
			s = z.self
		}
		for _, tok := range path[1:] {
			s = child(s, tok)
		}
	case len(path) >= 1 && (path[0] == "request" || path[0] == "context"):
		// The request line and headers, and claims, which arrive in them.
		limit = MaxHeaderBytes
	}
	switch kind {
	case types.DynKind, types.AnyKind:
		return sized(limit)
	case types.StructKind: // compared as a whole: its largest encoding
		return sized(min(limit, maxSize(s, 0)))
	}
	n := limit
	switch kind {
	case types.ListKind:
		min := uint64(1)
		if s != nil {
			s = schema.Deref(s)
			if s.MaxItems != nil {
				return sized(uint64(*s.MaxItems))
			}
			if it := child(s, "@items"); it != nil {
				min = minSize(it, 0)
			}
		}
		n = limit / (min + 1) // an element and its comma
	case types.MapKind:
		if s != nil && schema.Deref(s).MaxProperties != nil {
			return sized(uint64(*schema.Deref(s).MaxProperties))
		}
		n = limit / 4 // "":0,
	default:
		if s != nil && schema.Deref(s).MaxLength != nil {
			return sized(uint64(*schema.Deref(s).MaxLength))
		}
	}
	return sized(n)
}

func sized(n uint64) *cost.SizeEstimate {
	e := cost.RangedSizeEstimate(0, n)
	return &e
}

// child is the schema of a path token below s: a property, "@items" for
// array elements, "@values" for map values. A member that a pattern of
// patternProperties matches is that pattern's, not additionalProperties'.
func child(s *jsonschema.Schema, tok string) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	s = schema.Deref(s)
	switch tok {
	case "@items":
		return schema.ItemsOf(s) // none beside prefixItems: not every element's
	case "@values":
		if len(s.PatternProperties) > 0 {
			return nil // the members a pattern matches are not additional
		}
		a, _ := s.AdditionalProperties.(*jsonschema.Schema)
		return a
	case "@keys":
		return nil
	}
	if p, ok := props(s)[tok]; ok {
		return p
	}
	// The first pattern in order that matches: tok's value meets its
	// schema, and additionalProperties does not apply to tok.
	for _, re := range schema.SortedPatterns(s.PatternProperties) {
		if re.MatchString(tok) {
			return s.PatternProperties[re]
		}
	}
	a, _ := s.AdditionalProperties.(*jsonschema.Schema)
	return a
}

// sizeKey is a schema at a depth of minSize's or maxSize's walk: what
// either finds there depends on nothing else, and is worked out once. A
// schema whose members lead to one schema several times (a closed tree,
// {properties: {a: {$ref: '#'}, b: {$ref: '#'}, c: {$ref: '#'}}}) was
// walked once per path, 3^17 times down to the depth limit: a load of
// minutes.
type sizeKey struct {
	s     *jsonschema.Schema
	depth int
}

// minSize is the length of the shortest JSON text a schema accepts, or a
// lower bound of it.
func minSize(s *jsonschema.Schema, depth int) uint64 {
	return minSizeIn(s, depth, map[sizeKey]uint64{})
}

func minSizeIn(s *jsonschema.Schema, depth int, memo map[sizeKey]uint64) uint64 {
	return sizeIn(s, depth, memo, 1, minSizeOf)
}

// sizeIn is of's bound for s at depth, remembered in memo (one map per
// bound); beyond for no schema, or past the depth the bounds look to.
func sizeIn(s *jsonschema.Schema, depth int, memo map[sizeKey]uint64, beyond uint64, of func(*jsonschema.Schema, int, map[sizeKey]uint64) uint64) uint64 {
	if s == nil || depth > 16 {
		return beyond
	}
	s = schema.Deref(s)
	k := sizeKey{s, depth}
	if n, ok := memo[k]; ok {
		return n
	}
	n := of(s, depth, memo)
	memo[k] = n
	return n
}

func minSizeOf(s *jsonschema.Schema, depth int, memo map[sizeKey]uint64) uint64 {
	if s.Bool != nil || s.Types == nil || len(s.Types.ToStrings()) != 1 {
		if s.Enum != nil {
			return minEnumSize(s.Enum.Values)
		}
		return 1
	}
	switch s.Types.ToStrings()[0] {
	case "object":
		// {"a":…,"b":…}: each name written as it is (no escape is
		// shorter), a colon, the value, a comma between two members.
		n := uint64(2)
		ps := props(s)
		for _, r := range s.Required {
			n += 2 + uint64(len(r)) + 1 + minSizeIn(ps[r], depth+1, memo)
		}
		return n + commas(uint64(len(s.Required)))
	case "array":
		n := uint64(2)
		if s.MinItems != nil {
			k := uint64(*s.MinItems)
			n += k*minSizeIn(child(s, "@items"), depth+1, memo) + commas(k)
		}
		return n
	case "string":
		if s.MinLength != nil {
			return 2 + uint64(*s.MinLength)
		}
		return 2
	case "boolean":
		return 4
	case "null":
		return 4
	}
	return 1
}

// maxSize bounds the length of the JSON text a schema accepts: finite for
// closed objects (additionalProperties: false, no patternProperties) of
// bounded fields, strings with maxLength (six bytes a character,
// escaped), arrays with maxItems, numbers (1,000 characters at most),
// booleans, null and enums.
func maxSize(s *jsonschema.Schema, depth int) uint64 {
	return maxSizeIn(s, depth, map[sizeKey]uint64{})
}

func maxSizeIn(s *jsonschema.Schema, depth int, memo map[sizeKey]uint64) uint64 {
	return sizeIn(s, depth, memo, math.MaxUint64, maxSizeOf)
}

func maxSizeOf(s *jsonschema.Schema, depth int, memo map[sizeKey]uint64) uint64 {
	const unbounded = math.MaxUint64
	if s.Enum != nil {
		n := uint64(0)
		for _, v := range s.Enum.Values {
			if b, err := json.Marshal(v); err == nil {
				n = max(n, uint64(len(b)))
			}
		}
		return n
	}
	if s.Types == nil || len(s.Types.ToStrings()) != 1 {
		return unbounded
	}
	add := func(a, b uint64) uint64 {
		if a > unbounded-b {
			return unbounded
		}
		return a + b
	}
	switch s.Types.ToStrings()[0] {
	case "object":
		if open, isBool := s.AdditionalProperties.(bool); !isBool || open || len(s.PatternProperties) > 0 {
			return unbounded // other members, of any size, may come
		}
		n := uint64(2)
		for name, p := range props(s) {
			n = add(n, add(uint64(len(strconv.Quote(name)))+2, maxSizeIn(p, depth+1, memo)))
		}
		return n
	case "array":
		if s.MaxItems == nil {
			return unbounded
		}
		each := add(maxSizeIn(child(s, "@items"), depth+1, memo), 1)
		if each != unbounded && uint64(*s.MaxItems) > unbounded/each {
			return unbounded
		}
		return add(2, uint64(*s.MaxItems)*each)
	case "string":
		if s.MaxLength == nil {
			return unbounded
		}
		return 2 + 6*uint64(*s.MaxLength)
	case "integer", "number":
		return jsonbody.MaxNumberLen
	case "boolean":
		return 5
	case "null":
		return 4
	}
	return unbounded
}

func minEnumSize(vals []any) uint64 {
	best := uint64(math.MaxUint64)
	for _, v := range vals {
		best = min(best, minJSONSize(v))
	}
	if best == math.MaxUint64 {
		return 1
	}
	return best
}

// minJSONSize is a lower bound of the length of a JSON text that means v
// (an enum's value): a string written as it is (json.Marshal escapes <,
// > and & as six bytes each), a number in one byte (an enum's 100000
// matches 1e5, and 1.0 for 1), objects and arrays without spaces.
func minJSONSize(v any) uint64 {
	switch v := v.(type) {
	case string:
		return 2 + uint64(len(v))
	case bool:
		if v {
			return 4
		}
		return 5
	case nil:
		return 4
	case []any:
		n := uint64(2) + commas(uint64(len(v)))
		for _, e := range v {
			n += minJSONSize(e)
		}
		return n
	case map[string]any:
		n := uint64(2) + commas(uint64(len(v)))
		for k, e := range v {
			n += 2 + uint64(len(k)) + 1 + minJSONSize(e)
		}
		return n
	}
	return 1 // a number
}

// commas is the number of commas between n members or elements.
func commas(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	return n - 1
}

// member is how an expression selects the property f: .f, or ["f"] when f
// is not an identifier.
func member(f string) string {
	if f == "" || '0' <= f[0] && f[0] <= '9' {
		return "[" + strconv.Quote(f) + "]"
	}
	for i := 0; i < len(f); i++ {
		if !isWordByte(f[i]) {
			return "[" + strconv.Quote(f) + "]"
		}
	}
	return "." + f
}
