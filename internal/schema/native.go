package schema

import (
	"encoding/json"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/names"
)

// native is the fast path of a compiled schema: a tree of checks for the
// keywords bodies are usually described with (type, const, enum, format,
// $ref, properties, required, additionalProperties, min/maxProperties,
// items, min/maxItems, min/maxLength, pattern, minimum, maximum and their
// exclusive forms). It is built from santhosh-tekuri/jsonschema's compiled
// schema, so that library still parses, checks and resolves every schema;
// a schema that uses any other keyword anywhere is validated by the library
// instead. Both give the same verdicts, paths and messages: a differential
// test holds them to it.
//
// It walks the tape jsonbody produces, follows
// the library's order of checks (type, const, enum and format each end the
// checks of a value that fails them), and avoids the library's exact
// arithmetic unless float64 cannot decide a comparison.
type native struct {
	boolean int8 // 1: the schema true; -1: the schema false; 0: an object schema

	types     jsonTypes
	typeNames []string // for messages, as the library lists them
	hasConst  bool
	constCmp  any    // the const value, its numbers as bounds (comparable)
	constMsg  string // its failure message, written once
	enumCmp   []any  // the enum values, their numbers as bounds; nil: no enum
	enumMsg   string
	formatMsg string
	formatOK  func(string) bool // the format's check (nativeformats.go); nil: no format
	ref       *native
	refOnly   bool // draft-07 and before: $ref's siblings are ignored

	minProps, maxProps int // -1: none
	required           []string
	memberNames        *names.Index // properties and required names; nil: none
	members            []member     // by position in memberNames
	additional         int8         // 1: any allowed; -1: none allowed; 0: see additionalSchema
	additionalSchema   *native

	minItems, maxItems int
	items              *native

	minLength, maxLength int
	pattern              jsonschema.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *bound
}

// member is what a schema says about one member name: its property
// schema (nil if it is not a property) and its bit among the required
// names (-1 if it is not required; only the first 64 get a bit).
type member struct {
	schema   *native
	required int
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

// bound is a numeric limit of a schema, exact and as float64.
type bound struct {
	rat   *big.Rat
	f     float64
	isInt bool // rat is an integer that fits int64
	i     int64
}

func newBound(r *big.Rat) *bound {
	if r == nil {
		return nil
	}
	b := &bound{rat: r}
	b.f, _ = r.Float64()
	if r.IsInt() && r.Num().IsInt64() {
		b.isInt, b.i = true, r.Num().Int64()
	}
	return b
}

// compileNative returns the fast path of s, or nil when s uses a keyword
// the fast path does not implement, anywhere.
func compileNative(s *jsonschema.Schema) *native {
	c := nativeCompiler{done: map[*jsonschema.Schema]*native{}, ok: true}
	n := c.node(s)
	if !c.ok {
		return nil
	}
	return n
}

type nativeCompiler struct {
	done map[*jsonschema.Schema]*native
	ok   bool // false once any node needs the library
}

func (c *nativeCompiler) node(s *jsonschema.Schema) *native {
	if n, ok := c.done[s]; ok {
		return n
	}
	n := &native{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
	c.done[s] = n
	if !supported(s) || refCycle(s) {
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
	}
	n.minProps, n.maxProps = intOr(s.MinProperties), intOr(s.MaxProperties)
	n.minItems, n.maxItems = intOr(s.MinItems), intOr(s.MaxItems)
	n.minLength, n.maxLength = intOr(s.MinLength), intOr(s.MaxLength)
	n.pattern = s.Pattern
	n.required = s.Required
	n.minimum, n.maximum = newBound(s.Minimum), newBound(s.Maximum)
	n.exclusiveMinimum, n.exclusiveMaximum = newBound(s.ExclusiveMinimum), newBound(s.ExclusiveMaximum)

	sub := func(s *jsonschema.Schema) *native {
		if !c.ok {
			return nil
		}
		return c.node(s)
	}
	if s.Ref != nil {
		n.ref = sub(s.Ref)
		n.refOnly = s.DraftVersion < 2019
	}
	if len(s.Properties) > 0 || len(s.Required) > 0 {
		members := make(map[string]member, len(s.Properties)+len(s.Required))
		for name, p := range s.Properties {
			members[name] = member{schema: sub(p), required: -1}
		}
		for i, name := range s.Required {
			m, ok := members[name]
			if !ok {
				m.required = -1
			}
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
	}
	if s.Items2020 != nil {
		n.items = sub(s.Items2020)
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
		s.Not != nil, len(s.AllOf) > 0, len(s.AnyOf) > 0, len(s.OneOf) > 0,
		s.If != nil, s.Then != nil, s.Else != nil,
		s.PropertyNames != nil, len(s.PatternProperties) > 0,
		len(s.Dependencies) > 0, len(s.DependentRequired) > 0, len(s.DependentSchemas) > 0,
		s.UnevaluatedProperties != nil, s.UnevaluatedItems != nil,
		s.UniqueItems, s.Contains != nil, s.MinContains != nil, s.MaxContains != nil,
		s.AdditionalItems != nil, len(s.PrefixItems) > 0,
		s.ContentEncoding != nil, s.ContentMediaType != nil, s.ContentSchema != nil,
		s.MultipleOf != nil:
		return false
	}
	for _, e := range s.Extensions {
		if _, ok := e.(scanAnnotation); !ok {
			return false
		}
	}
	if _, tuple := s.Items.([]*jsonschema.Schema); tuple {
		return false
	}
	if s.Format != nil && s.Format.Name == "regex" {
		return false // the library may route it to a custom regexp engine
	}
	return true
}

// refCycle reports a chain of $refs that comes back to s without moving
// into the value ({"$ref": "#"}): the library reports it as an error, the
// fast path would loop.
func refCycle(s *jsonschema.Schema) bool {
	seen := map[*jsonschema.Schema]bool{}
	for r := s; r != nil; r = r.Ref {
		if seen[r] {
			return true
		}
		seen[r] = true
	}
	return false
}

// nativeRun is one validation by the fast path.
type nativeRun struct {
	path  failure.Path
	rep   failure.Reporter
	valid bool
}

func (r *nativeRun) fail(message string) {
	r.valid = false
	r.rep.Add(r.path.Pointer(), message)
}

// failAt reports a failure at the member name of the current object.
func (r *nativeRun) failAt(name, message string) {
	r.valid = false
	r.rep.Add(r.path.Pointer(name), message)
}

func (r *nativeRun) validate(n *native, v jsonbody.Value) {
	switch n.boolean {
	case 1:
		return
	case -1:
		r.fail(msgNotAllowed)
		return
	}
	t := typeBit[v.Kind()]
	if n.types != 0 && n.types&t == 0 && !(n.types&tInteger != 0 && t == tNumber && isInteger(v.Number())) {
		r.fail(msgType(n.typeNames, typeName(t)))
		return
	}
	if n.hasConst && !equal(v, n.constCmp) {
		r.fail(n.constMsg)
		return
	}
	if n.enumCmp != nil && !inEnum(v, n.enumCmp) {
		r.fail(n.enumMsg)
		return
	}
	if n.formatOK != nil && t == tString && !n.formatOK(v.Str()) {
		r.fail(n.formatMsg)
		return
	}
	if n.ref != nil {
		r.validate(n.ref, v)
		if n.refOnly {
			return
		}
	}
	switch t {
	case tObject:
		r.object(n, v)
	case tArray:
		r.array(n, v)
	case tString:
		r.str(n, v.Str())
	case tNumber:
		r.number(n, v.Number())
	}
}

func (r *nativeRun) object(n *native, obj jsonbody.Value) {
	count := obj.Len()
	if n.minProps >= 0 && count < n.minProps {
		r.fail(msgMinProperties(n.minProps))
	}
	if n.maxProps >= 0 && count > n.maxProps {
		r.fail(msgMaxProperties(n.maxProps))
	}
	var seen uint64 // the required names present, by bit
	for i := range count {
		name, v := obj.Member(i)
		m := member{required: -1}
		if j := n.memberNames.Find(name); j >= 0 {
			m = n.members[j]
		}
		if m.required >= 0 {
			seen |= 1 << m.required
		}
		child := m.schema
		if child == nil {
			switch {
			case n.additionalSchema != nil:
				child = n.additionalSchema
			case n.additional == -1:
				r.failAt(name, msgNotAllowed)
				continue
			default:
				continue
			}
		}
		r.path.Member(name)
		r.validate(child, v)
		r.path.Pop()
	}
	for i, name := range n.required {
		if i < 64 {
			if seen&(1<<i) != 0 {
				continue
			}
		} else if _, ok := obj.Get(name); ok {
			continue
		}
		r.failAt(name, msgRequired)
	}
}

func (r *nativeRun) array(n *native, arr jsonbody.Value) {
	count := arr.Len()
	if n.minItems >= 0 && count < n.minItems {
		r.fail(msgMinItems(n.minItems))
	}
	if n.maxItems >= 0 && count > n.maxItems {
		r.fail(msgMaxItems(n.maxItems))
	}
	if n.items == nil {
		return
	}
	r.path.Index(0)
	for i := range count {
		r.path.SetIndex(i)
		r.validate(n.items, arr.Index(i))
	}
	r.path.Pop()
}

func (r *nativeRun) str(n *native, s string) {
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && l < n.minLength {
			r.fail(msgMinLength(n.minLength))
		}
		if n.maxLength >= 0 && l > n.maxLength {
			r.fail(msgMaxLength(n.maxLength))
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		r.fail(msgPattern(n.pattern.String()))
	}
}

func (r *nativeRun) number(n *native, x string) {
	if n.minimum != nil && compare(x, n.minimum) < 0 {
		r.fail(msgMinimum(n.minimum.rat))
	}
	if n.maximum != nil && compare(x, n.maximum) > 0 {
		r.fail(msgMaximum(n.maximum.rat))
	}
	if n.exclusiveMinimum != nil && compare(x, n.exclusiveMinimum) <= 0 {
		r.fail(msgExclusiveMinimum(n.exclusiveMinimum.rat))
	}
	if n.exclusiveMaximum != nil && compare(x, n.exclusiveMaximum) >= 0 {
		r.fail(msgExclusiveMaximum(n.exclusiveMaximum.rat))
	}
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

// isInteger reports whether a number literal has an integral value: any
// literal without fraction or exponent, else by exact arithmetic (1.0, 1e2).
func isInteger(s string) bool {
	if !strings.ContainsAny(s, ".eE") {
		return true
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

// compare orders a number literal against a bound, exactly. Integers that
// fit int64 compare as such; otherwise float64 decides when the two values
// are further apart than its rounding could move them; otherwise big.Rat.
func compare(s string, b *bound) int {
	if b.isInt && isSmallInt(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return cmpInt(i, b.i)
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f != b.f {
		m := math.Max(math.Abs(f), math.Abs(b.f))
		if math.Abs(f-b.f) > 4*(math.Nextafter(m, math.Inf(1))-m) {
			if f < b.f {
				return -1
			}
			return 1
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0 // not a number literal: jsonbody never produces one
	}
	return r.Cmp(b.rat)
}

func isSmallInt(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) == 0 || len(digits) > 18 {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func inEnum(v jsonbody.Value, enum []any) bool {
	for _, e := range enum {
		if equal(v, e) {
			return true
		}
	}
	return false
}

// comparableValue is a const or enum value of a schema as equal takes it: its
// numbers (json.Number) made bounds once, so that a request compares them
// without parsing the schema's side again.
func comparableValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			return newBound(r)
		}
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = comparableValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = comparableValue(e)
		}
		return out
	}
	return v
}

// equal is JSON equality as the library defines it, between a body value
// and a schema value made comparable: numbers by value, arrays in order,
// objects by keys.
func equal(a jsonbody.Value, b any) bool {
	switch a.Kind() {
	case jsonbody.Null:
		return b == nil
	case jsonbody.False, jsonbody.True:
		bb, ok := b.(bool)
		return ok && bb == (a.Kind() == jsonbody.True)
	case jsonbody.String:
		bs, ok := b.(string)
		return ok && a.Str() == bs
	case jsonbody.Number:
		bn, ok := b.(*bound)
		return ok && compare(a.Number(), bn) == 0
	case jsonbody.Array:
		bl, ok := b.([]any)
		if !ok || a.Len() != len(bl) {
			return false
		}
		for i := range bl {
			if !equal(a.Index(i), bl[i]) {
				return false
			}
		}
		return true
	default:
		bm, ok := b.(map[string]any)
		if !ok || a.Len() != len(bm) {
			return false
		}
		for i := range a.Len() {
			name, v := a.Member(i)
			w, ok := bm[name]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
}
