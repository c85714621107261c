package schema

import (
	"maps"
	"math/big"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/names"
)

// The native fast path: its tree of checks, and how it is built from the
// library's compiled schema (nativerun.go runs it).

// native is the fast path of a compiled schema: a tree of checks for the
// keywords bodies are usually described with (type, const, enum, format,
// $ref, properties, required, additionalProperties, min/maxProperties,
// items, min/maxItems, min/maxLength, pattern, minimum, maximum and their
// exclusive forms, multipleOf, patternProperties, dependencies,
// propertyNames, contains, uniqueItems, items as a tuple and
// additionalItems, not, allOf, anyOf, oneOf and if, then and else). It
// is built from santhosh-tekuri/jsonschema's compiled schema, so that
// library still parses, checks and resolves every schema; a schema that
// uses any other keyword anywhere is validated by the library
// instead. Both give the same verdicts, paths and messages: a differential
// test holds them to it.
//
// It walks the tape jsonbody produces, follows
// the library's order of checks (type, const, enum and format each end the
// checks of a value that fails them), and avoids the library's exact
// arithmetic unless float64 cannot decide a comparison.
type native struct {
	boolean int8 // 1: the schema true; -1: the schema false; 0: an object schema
	// memo: its place among the schemas that are shared (more than one
	// keyword leads to them, so a value may meet them more than once) and
	// recursive, or shared and reached manyPaths ways from the root, whose
	// verdicts nativeRun keeps once a run repeats itself (-1: not one).
	// Other repeats are bounded by the schema, not the body, and by fewer
	// than manyPaths checks of a schema per value.
	memo int32

	types     jsonTypes
	typeNames []string // for messages, as the library lists them
	hasConst  bool
	constCmp  any    // the const value, its numbers as bounds (comparable)
	constMsg  string // its failure message, written once
	enumCmp   []any  // the enum values, their numbers as bounds; nil: no enum
	enumMsg   string
	formatMsg string
	formatOK  func(string) bool // the format's check (nativeformats.go); nil: no format
	formatRE  bool              // format regex: the check compiles the string (formatOK charges it so)
	ref       *native
	refOnly   bool // draft-07 and before: $ref's siblings are ignored

	minProps, maxProps int // -1: none
	required           []string
	requiredSegs       []string     // required's names as pointer segments (failure.Segment)
	memberNames        *names.Index // properties and required names; nil: none
	members            []member     // by position in memberNames
	folds              *foldSet     // the names letter case is checked against (foldNames); nil: none
	additional         int8         // 1: any allowed; -1: none allowed; 0: see additionalSchema
	additionalSchema   *native
	patterns           []patternProp // patternProperties
	deps               []dependency  // dependencies
	propertyNames      *native

	minItems, maxItems    int
	items                 *native
	tuple                 []*native // items as a list: the first items, one schema each
	additionalItems       int8      // -1: no items past those items checks; 0: see additionalItemsSchema
	additionalItemsSchema *native
	contains              *native
	uniqueItems           bool

	minLength, maxLength int
	pattern              jsonschema.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *bound
	multipleOf                                           *big.Rat // nil: none

	comb *combinators // nil: none

	msgs *limitMsgs // nil: none of the keywords it has messages for
}

// combinators are a schema's not, allOf, anyOf, oneOf and if, then and
// else, checked after all its other keywords, as the library does: not,
// anyOf, oneOf and if only for whether their schemas match (a failure of
// theirs is one message at the value; if has none), allOf, then and else
// into the request's failures.
type combinators struct {
	not                 *native
	allOf, anyOf, oneOf []*native
	ifs, then, els      *native // then or else by whether if matches; nil: none
}

// patternProp is one of patternProperties: the members whose names match
// re are checked by schema (too).
type patternProp struct {
	re     jsonschema.Regexp
	schema *native
}

// dependency is one of dependencies (draft-07): when the member name is
// present, the members of required must be, each failing with msg at its
// segment, and the object must match schema (nil: none).
type dependency struct {
	name         string
	required     []string
	requiredSegs []string
	msg          string
	schema       *native
}

// limitMsgs are the failure messages of a schema's count, pattern and
// number keywords, written once when it compiles, so that a rejection
// does not format them again.
type limitMsgs struct {
	minProps, maxProps, minItems, maxItems, minLength, maxLength, pattern string
	minimum, maximum, exclusiveMinimum, exclusiveMaximum                  string
	multipleOf                                                            string
}

// limitMessages writes the messages of n's count, pattern and number
// keywords; nil when it has none.
func limitMessages(n *native) *limitMsgs {
	var m limitMsgs
	count := func(limit int, msg func(int) string) string {
		if limit < 0 {
			return ""
		}
		return msg(limit)
	}
	limit := func(b *bound, msg func(*big.Rat) string) string {
		if b == nil {
			return ""
		}
		return msg(b.rat)
	}
	m.minProps, m.maxProps = count(n.minProps, msgMinProperties), count(n.maxProps, msgMaxProperties)
	m.minItems, m.maxItems = count(n.minItems, msgMinItems), count(n.maxItems, msgMaxItems)
	m.minLength, m.maxLength = count(n.minLength, msgMinLength), count(n.maxLength, msgMaxLength)
	if n.pattern != nil {
		m.pattern = msgPattern(n.pattern.String())
	}
	m.minimum, m.maximum = limit(n.minimum, msgMinimum), limit(n.maximum, msgMaximum)
	m.exclusiveMinimum = limit(n.exclusiveMinimum, msgExclusiveMinimum)
	m.exclusiveMaximum = limit(n.exclusiveMaximum, msgExclusiveMaximum)
	if n.multipleOf != nil {
		m.multipleOf = msgMultipleOf(n.multipleOf)
	}
	if m == (limitMsgs{}) {
		return nil
	}
	return &m
}

// member is what a schema says about one member name: its property
// schema (nil if it is not a property) and its bit among the required
// names (-1 if it is not required; only the first 64 get a bit).
type member struct {
	schema   *native
	required int
	seg      string // the name as a pointer segment (failure.Segment)
}

type jsonTypes uint8

const (
	tNull jsonTypes = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]jsonTypes{
	"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

var typeBit = [...]jsonTypes{
	jsonbody.Null: tNull, jsonbody.False: tBoolean, jsonbody.True: tBoolean,
	jsonbody.Number: tNumber, jsonbody.String: tString, jsonbody.Array: tArray, jsonbody.Object: tObject,
}

func typeName(t jsonTypes) string {
	for name, bit := range typeBits {
		if bit == t {
			return name
		}
	}
	return "value"
}

// compileNative returns the fast path of s, or nil when s uses a keyword
// the fast path does not implement, anywhere.
func compileNative(s *jsonschema.Schema) *native {
	c := nativeCompiler{done: map[*jsonschema.Schema]*native{}, again: map[*native]int{}, ok: true}
	n := c.node(s)
	if !c.ok {
		return nil
	}
	// The root is made for the run, not by a keyword: it is shared when
	// two keywords lead to it, another schema when one more than the
	// keyword that made it does.
	numberMemos(n, func(w *native) bool { k := c.again[w]; return k > 1 || k == 1 && w != n })
	return n
}

// numberMemos gives each schema under root that is shared and recursive
// (in a cycle of the schemas that lead to one another: Tarjan's strongly
// connected components) its place among them, native.memo; and each
// shared schema that does not recurse but that manyPaths or more ways
// from the root lead to (a chain of definitions, each naming the next
// twice, checks the last 2^length times a value). shared reports whether
// more than one keyword leads to a schema.
func numberMemos(root *native, shared func(*native) bool) {
	type mark struct{ index, low, scc int32 }
	marks := map[*native]*mark{}
	var stack []*native
	onStack := map[*native]bool{}
	var sccs [][]*native // in the order Tarjan finds them: each after those it leads to
	var recursive []bool
	next, memos := int32(0), int32(0)
	var visit func(n *native)
	visit = func(n *native) {
		m := &mark{next, next, -1}
		marks[n], next = m, next+1
		stack, onStack[n] = append(stack, n), true
		selfLoop := false
		n.each(func(w *native) {
			if w == n {
				selfLoop = true
			}
			if wm, seen := marks[w]; !seen {
				visit(w)
				m.low = min(m.low, marks[w].low)
			} else if onStack[w] {
				m.low = min(m.low, wm.index)
			}
		})
		if m.low != m.index {
			return
		}
		var scc []*native
		for {
			w := stack[len(stack)-1]
			stack, onStack[w] = stack[:len(stack)-1], false
			scc = append(scc, w)
			marks[w].scc = int32(len(sccs))
			if w == n {
				break
			}
		}
		sccs, recursive = append(sccs, scc), append(recursive, len(scc) > 1 || selfLoop)
		for _, w := range scc {
			if recursive[len(recursive)-1] && shared(w) {
				w.memo, memos = memos, memos+1
			}
		}
	}
	visit(root)
	// The ways from the root to each component, counted up to manyPaths,
	// in the order of the paths: the root's component is found last.
	paths := make([]int, len(sccs))
	paths[len(sccs)-1] = 1
	for i := len(sccs) - 1; i >= 0; i-- {
		for _, w := range sccs[i] {
			if !recursive[i] && w.memo < 0 && paths[i] >= manyPaths && shared(w) {
				w.memo, memos = memos, memos+1
			}
			w.each(func(u *native) {
				if j := marks[u].scc; int(j) != i {
					paths[j] = min(paths[j]+paths[i], manyPaths)
				}
			})
		}
	}
}

// manyPaths is how many ways from the root make memo worth keeping for a
// shared schema that does not recurse.
const manyPaths = 32

// each calls f with every schema n leads to, once for each keyword.
func (n *native) each(f func(*native)) {
	some := func(w *native) {
		if w != nil {
			f(w)
		}
	}
	some(n.ref)
	for _, m := range n.members {
		some(m.schema)
	}
	some(n.additionalSchema)
	for _, p := range n.patterns {
		some(p.schema)
	}
	for _, d := range n.deps {
		some(d.schema)
	}
	some(n.propertyNames)
	some(n.items)
	for _, t := range n.tuple {
		some(t)
	}
	some(n.additionalItemsSchema)
	some(n.contains)
	if c := n.comb; c != nil {
		some(c.not)
		for _, l := range [][]*native{c.allOf, c.anyOf, c.oneOf} {
			for _, w := range l {
				some(w)
			}
		}
		some(c.ifs)
		some(c.then)
		some(c.els)
	}
}

type nativeCompiler struct {
	done  map[*jsonschema.Schema]*native
	again map[*native]int // keywords that lead to a schema made already
	ok    bool            // false once any node needs the library
}

func (c *nativeCompiler) node(s *jsonschema.Schema) *native {
	if n, ok := c.done[s]; ok {
		if n != nil {
			c.again[n]++
		}
		return n
	}
	n := &native{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1, memo: -1}
	c.done[s] = n
	if !supported(s) || inPlaceCycle(s) {
		c.ok = false
		return nil
	}
	if s.Bool != nil {
		n.boolean = -1
		if *s.Bool {
			n.boolean = 1
		}
		return n
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		n.typeNames = s.Types.ToStrings()
		for _, t := range n.typeNames {
			n.types |= typeBits[t]
		}
	}
	if s.Const != nil {
		n.hasConst, n.constCmp, n.constMsg = true, comparableValue(*s.Const), msgConst(*s.Const)
	}
	if s.Enum != nil {
		n.enumCmp = make([]any, len(s.Enum.Values))
		for i, e := range s.Enum.Values {
			n.enumCmp[i] = comparableValue(e)
		}
		n.enumMsg = msgEnum(s.Enum.Values)
	}
	if f := s.Format; f != nil {
		n.formatOK, n.formatMsg = formatCheck(f), formatMessage(f.Name)
		n.formatRE = f.Name == "regex"
	}
	n.minProps, n.maxProps = intOr(s.MinProperties), intOr(s.MaxProperties)
	n.minItems, n.maxItems = intOr(s.MinItems), intOr(s.MaxItems)
	n.minLength, n.maxLength = intOr(s.MinLength), intOr(s.MaxLength)
	n.pattern = s.Pattern
	n.required = s.Required
	n.minimum, n.maximum = newBound(s.Minimum), newBound(s.Maximum)
	n.exclusiveMinimum, n.exclusiveMaximum = newBound(s.ExclusiveMinimum), newBound(s.ExclusiveMaximum)
	n.multipleOf = s.MultipleOf
	n.msgs = limitMessages(n)

	sub := func(s *jsonschema.Schema) *native {
		if !c.ok {
			return nil
		}
		return c.node(s)
	}
	subs := func(ss []*jsonschema.Schema) []*native {
		var out []*native
		for _, s := range ss {
			out = append(out, sub(s))
		}
		return out
	}
	if s.Ref != nil {
		n.ref = sub(s.Ref)
		n.refOnly = s.DraftVersion < 2019
		if n.refOnly {
			return n // its other applicators never run: no nodes, and no loop through them
		}
	}
	if len(s.Properties) > 0 || len(s.Required) > 0 {
		members := make(map[string]member, len(s.Properties)+len(s.Required))
		for name, p := range s.Properties {
			members[name] = member{schema: sub(p), required: -1, seg: failure.Segment(name)}
		}
		for i, name := range s.Required {
			m, ok := members[name]
			if !ok {
				m.required, m.seg = -1, failure.Segment(name)
			}
			n.requiredSegs = append(n.requiredSegs, m.seg)
			if i < 64 && m.required < 0 {
				m.required = i
			}
			members[name] = m
		}
		list := slices.Sorted(maps.Keys(members))
		n.memberNames = names.New(list)
		for _, name := range list {
			n.members = append(n.members, members[name])
		}
	}
	n.folds = newFoldSet(foldNames(s))
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.additional = -1
		if a {
			n.additional = 1
		}
	case *jsonschema.Schema:
		n.additionalSchema = sub(a)
	}
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		n.items = sub(it)
	case []*jsonschema.Schema: // never empty: the meta-schema wants an item
		n.tuple = subs(it)
	}
	switch a := s.AdditionalItems.(type) {
	case bool:
		if !a {
			n.additionalItems = -1
		}
	case *jsonschema.Schema:
		n.additionalItemsSchema = sub(a)
	}
	if s.PropertyNames != nil && s.DraftVersion != 4 { // draft-04 has none: the library passes it by
		n.propertyNames = sub(s.PropertyNames)
	}
	if s.Contains != nil {
		n.contains = sub(s.Contains)
	}
	n.uniqueItems = s.UniqueItems
	for _, re := range SortedPatterns(s.PatternProperties) { // one order on every load: which failures a capped list takes
		n.patterns = append(n.patterns, patternProp{re: re, schema: sub(s.PatternProperties[re])})
	}
	for _, name := range slices.Sorted(maps.Keys(s.Dependencies)) {
		d := dependency{name: name, msg: msgDependency(name)}
		switch dep := s.Dependencies[name].(type) {
		case []string:
			d.required = dep
			for _, r := range dep {
				d.requiredSegs = append(d.requiredSegs, failure.Segment(r))
			}
		case *jsonschema.Schema:
			d.schema = sub(dep)
		default:
			c.ok = false // not a form of draft-07's
		}
		n.deps = append(n.deps, d)
	}
	if s.Items2020 != nil {
		n.items = sub(s.Items2020)
	}
	if s.Not != nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.If != nil {
		n.comb = &combinators{allOf: subs(s.AllOf), anyOf: subs(s.AnyOf), oneOf: subs(s.OneOf)}
		if s.Not != nil {
			n.comb.not = sub(s.Not)
		}
		if s.If != nil { // then and else without if do nothing
			n.comb.ifs = sub(s.If)
			if s.Then != nil {
				n.comb.then = sub(s.Then)
			}
			if s.Else != nil {
				n.comb.els = sub(s.Else)
			}
		}
	}
	return n
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// supported reports whether every keyword s uses is one the fast path
// implements. Annotations (title, description, default, examples…) are
// ignored by validation and do not count.
func supported(s *jsonschema.Schema) bool {
	switch {
	case s.RecursiveRef != nil, s.DynamicRef != nil,
		len(s.DependentRequired) > 0, len(s.DependentSchemas) > 0,
		s.UnevaluatedProperties != nil, s.UnevaluatedItems != nil,
		s.MinContains != nil, s.MaxContains != nil,
		len(s.PrefixItems) > 0,
		s.ContentEncoding != nil, s.ContentMediaType != nil, s.ContentSchema != nil:
		return false
	}
	for _, e := range s.Extensions {
		switch e.(type) {
		case scanAnnotation, *foldCheck: // the fast path checks letter case itself (object)
		default:
			return false
		}
	}
	return true
}

// inPlaceCycle reports a chain of $refs and combinators (not, allOf,
// anyOf, oneOf: each checks the same value) that comes back to s without
// moving into the value ({"$ref": "#"}, {"allOf": [{"$ref": "#"}]}): the
// library reports it as an error, the fast path would loop.
func inPlaceCycle(s *jsonschema.Schema) bool {
	seen := map[*jsonschema.Schema]bool{}
	var from func(r *jsonschema.Schema) bool
	from = func(r *jsonschema.Schema) bool {
		for _, next := range inPlace(r) {
			if next == s {
				return true
			}
			if !seen[next] {
				seen[next] = true
				if from(next) {
					return true
				}
			}
		}
		return false
	}
	return from(s)
}

// inPlace are the schemas s applies to the value it checks itself.
func inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	if refOnly(s) {
		return []*jsonschema.Schema{s.Ref}
	}
	var out []*jsonschema.Schema
	for _, t := range []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else} {
		if t != nil {
			out = append(out, t)
		}
	}
	for _, dep := range s.Dependencies {
		if t, ok := dep.(*jsonschema.Schema); ok {
			out = append(out, t)
		}
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	return append(out, s.OneOf...)
}
