package contractguard

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// Exclusive bounds on the floats of a typed contract's T. The schema
// checks a number as the exact decimal it is written as; T holds it
// rounded to a float64 or float32. Rounding keeps order, so a value the
// schema finds ≥ a bound is ≥ that bound rounded alike, as a handler
// compares it — but a value it finds > a bound may round onto it:
// 1e-400 is > 0 and is 0 as a float64, 0.99999999 is < 1 and is 1 as a
// float32. So exclusiveMinimum and exclusiveMaximum are held again on the
// value T got (floatNode.check), wherever the body holds a number for a
// float of T (fields, pointers, slices, arrays, map values) and its
// schema puts such a bound on it: on the place itself, through $ref and
// allOf, for a member, through properties, patternProperties and
// additionalProperties, and, for an element, through items (one schema of
// every element, or draft-07's array of one per position, the rest under
// additionalItems) and 2020-12's prefixItems and items, as JSON Schema
// applies them. (anyOf and oneOf name
// no one branch that must hold, and are left to the schema.) Types that
// decode themselves (json.Unmarshaler and the like) are not looked into.

// floatNode is what to check at one place of T, a node of a graph that
// follows T's type and its schema (a recursive type and schema make a
// cycle): a float's exclusive bounds, rounded to its size; a struct's
// fields; the elements of a slice or array; a map's values, by the
// schemas that apply to each key.
type floatNode struct {
	kind     reflect.Kind // of the value, pointers followed
	lo, hi   *big.Rat     // a float's exclusive bounds, as the schema says them (nil: none)
	loF, hiF float64      // and rounded to the float's size
	fields   []floatField
	prefix   []*floatNode // a slice's or array's first elements, by position
	elem     *floatNode   // and the elements after them
	members  []floatObj   // a map's values: what each schema of the map says of a key
	keyOf    reflect.Type // a map's type, for its keys
	useful   bool         // there is a bound here or below
}

type floatField struct {
	index []int
	name  string
	node  *floatNode
}

// floatObj is what one object schema says of a map's values: by name
// (properties), by pattern, and of the rest (additionalProperties).
type floatObj struct {
	props map[string]*floatNode
	pats  []floatPattern
	rest  *floatNode
}

type floatPattern struct {
	re   jsonschema.Regexp
	node *floatNode
}

// maxFloatNodes bounds the graph of one type and schema.
const maxFloatNodes = 10_000

// floatBuilder builds a graph, a node per type and set of schemas.
type floatBuilder struct {
	nodes map[string]*floatNode
	all   []*floatNode
}

// floatChecks is the check of T's floats against s, nil when s puts no
// exclusive bound on any of them.
func floatChecks(t reflect.Type, s *jsonschema.Schema) (*floatNode, error) {
	b := floatBuilder{nodes: map[string]*floatNode{}}
	root, err := b.node(t, subschemas(nil, s))
	if err != nil {
		return nil, err
	}
	// A node is useful when it has a bound or a useful node below it:
	// settled over the whole graph, cycles included.
	for changed := true; changed; {
		changed = false
		for _, n := range b.all {
			if !n.useful && n.below() {
				n.useful, changed = true, true
			}
		}
	}
	if !root.useful {
		return nil, nil
	}
	return root, nil
}

// below reports whether n has a bound, or a useful node under it.
func (n *floatNode) below() bool {
	if n.lo != nil || n.hi != nil || n.elem.isUseful() || slices.ContainsFunc(n.prefix, (*floatNode).isUseful) {
		return true
	}
	for _, f := range n.fields {
		if f.node.isUseful() {
			return true
		}
	}
	for _, o := range n.members {
		if o.rest.isUseful() || slices.ContainsFunc(o.pats, func(p floatPattern) bool { return p.node.isUseful() }) {
			return true
		}
		for _, p := range o.props {
			if p.isUseful() {
				return true
			}
		}
	}
	return false
}

func (n *floatNode) isUseful() bool { return n != nil && n.useful }

var errFloatGraph = errors.New("its schema is too large to check its floats' exclusive bounds against (over 10,000 places)")

// node is the node of t under the schemas ss, made once per type and set.
func (b *floatBuilder) node(t reflect.Type, ss []*jsonschema.Schema) (*floatNode, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	key := floatKey(t, ss)
	if n, ok := b.nodes[key]; ok {
		return n, nil
	}
	if len(b.all) >= maxFloatNodes {
		return nil, errFloatGraph
	}
	n := &floatNode{kind: t.Kind()}
	b.nodes[key] = n
	b.all = append(b.all, n)
	if len(ss) == 0 || bind.Opaque(t) {
		return n, nil
	}
	var err error
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		for _, s := range ss {
			n.lo, n.loF = tighter(n.lo, s.ExclusiveMinimum, t.Bits(), 1)
			n.hi, n.hiF = tighter(n.hi, s.ExclusiveMaximum, t.Bits(), -1)
		}
	case reflect.Struct:
		names, ferr := bind.Fields(t)
		if ferr != nil {
			return n, nil // a type the binder refuses, which bind.Check reports first
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			var sub []*jsonschema.Schema
			for _, s := range ss {
				sub = memberSchemas(sub, s, name)
			}
			f := floatField{index: names[name], name: name}
			if f.node, err = b.node(t.FieldByIndex(f.index).Type, sub); err != nil {
				return nil, err
			}
			n.fields = append(n.fields, f)
		}
	case reflect.Slice, reflect.Array:
		positions := 0
		for _, s := range ss {
			prefix, _ := elemSchemas(s)
			positions = max(positions, len(prefix))
		}
		for i := range positions + 1 { // the positions of the longest prefix, then the rest
			var sub []*jsonschema.Schema
			for _, s := range ss {
				prefix, rest := elemSchemas(s)
				if i < len(prefix) {
					sub = subschemas(sub, prefix[i])
				} else {
					sub = subschemas(sub, rest)
				}
			}
			e, err := b.node(t.Elem(), sub)
			if err != nil {
				return nil, err
			}
			if i < positions {
				n.prefix = append(n.prefix, e)
			} else {
				n.elem = e
			}
		}
	case reflect.Map:
		n.keyOf = t
		for _, s := range ss {
			o := floatObj{props: map[string]*floatNode{}}
			for name, p := range s.Properties {
				if o.props[name], err = b.node(t.Elem(), subschemas(nil, p)); err != nil {
					return nil, err
				}
			}
			for re, p := range s.PatternProperties {
				pn, err := b.node(t.Elem(), subschemas(nil, p))
				if err != nil {
					return nil, err
				}
				o.pats = append(o.pats, floatPattern{re, pn})
			}
			if rest, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
				if o.rest, err = b.node(t.Elem(), subschemas(nil, rest)); err != nil {
					return nil, err
				}
			}
			n.members = append(n.members, o)
		}
	}
	return n, err
}

// floatKey names a type and a set of schemas.
func floatKey(t reflect.Type, ss []*jsonschema.Schema) string {
	ptrs := make([]string, len(ss))
	for i, s := range ss {
		ptrs[i] = fmt.Sprintf("%p", s)
	}
	slices.Sort(ptrs)
	return t.String() + fmt.Sprintf("%p", t) + " " + strings.Join(slices.Compact(ptrs), " ")
}

// elemSchemas are the schemas s applies to the elements of an array: one
// for each of its first len(prefix) elements (draft-07's items array,
// 2020-12's prefixItems) and rest for each after them (additionalItems
// beside an items array, items otherwise); rest nil for none.
func elemSchemas(s *jsonschema.Schema) (prefix []*jsonschema.Schema, rest *jsonschema.Schema) {
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		return nil, items
	case []*jsonschema.Schema:
		rest, _ = s.AdditionalItems.(*jsonschema.Schema)
		return items, rest
	}
	return s.PrefixItems, s.Items2020
}

// memberSchemas appends to dst the schemas that s applies to its member
// name: properties[name], every patternProperties that matches, or else
// additionalProperties; and theirs.
func memberSchemas(dst []*jsonschema.Schema, s *jsonschema.Schema, name string) []*jsonschema.Schema {
	matched := false
	if p := s.Properties[name]; p != nil {
		dst, matched = subschemas(dst, p), true
	}
	for re, p := range s.PatternProperties {
		if re.MatchString(name) {
			dst, matched = subschemas(dst, p), true
		}
	}
	if rest, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
		dst = subschemas(dst, rest)
	}
	return dst
}

// subschemas appends s to dst with every schema that applies wherever s
// does: its $ref and its allOf, and theirs; each once.
func subschemas(dst []*jsonschema.Schema, s *jsonschema.Schema) []*jsonschema.Schema {
	if s == nil || slices.Contains(dst, s) {
		return dst
	}
	dst = append(dst, s)
	dst = subschemas(dst, s.Ref)
	for _, a := range s.AllOf {
		dst = subschemas(dst, a)
	}
	return dst
}

// tighter is the tighter of the bound held (cur) and b, with its value
// rounded to a float of bits; sign 1 for a lower bound, -1 for an upper.
func tighter(cur, b *big.Rat, bits, sign int) (*big.Rat, float64) {
	if b == nil || cur != nil && b.Cmp(cur)*sign <= 0 {
		b = cur
	}
	if b == nil {
		return nil, 0
	}
	f, _ := b.Float64()
	if bits == 32 {
		f32, _ := b.Float32()
		f = float64(f32)
	}
	return b, f
}

// check holds v, the value at n's place, decoded from d, to n's bounds,
// reporting each value past one at its path; false if any was. Only what
// the body holds is checked: a member it leaves out leaves its field at
// its zero value, which no schema saw.
func (n *floatNode) check(v reflect.Value, d jsonbody.Value, path *failure.Path, rep failure.Reporter) bool {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	ok := true
	switch {
	case n.kind == reflect.Float32 || n.kind == reflect.Float64:
		if d.Kind() != jsonbody.Number {
			return true
		}
		f, size := v.Float(), v.Type().Kind().String()
		is := ": as a " + size + " it is " + strconv.FormatFloat(f, 'g', -1, v.Type().Bits())
		switch {
		case n.lo != nil && !(f > n.loF):
			ok = false
			if rep.Wants() {
				rep.Add(path.Pointer(), schema.ExclusiveMessage(true, n.lo)+is)
			}
		case n.hi != nil && !(f < n.hiF):
			ok = false
			if rep.Wants() {
				rep.Add(path.Pointer(), schema.ExclusiveMessage(false, n.hi)+is)
			}
		}
	case n.kind == reflect.Struct && d.Kind() == jsonbody.Object:
		for _, fd := range n.fields {
			m, present := d.Get(fd.name) // the binder's names are exact, as json v2's
			fv, err := v.FieldByIndexErr(fd.index)
			if !present || err != nil || !fd.node.isUseful() {
				continue
			}
			path.Member(fd.name)
			ok = fd.node.check(fv, m, path, rep) && ok
			path.Pop()
		}
	case (n.kind == reflect.Slice || n.kind == reflect.Array) && d.Kind() == jsonbody.Array:
		path.Index(0)
		for i := range min(v.Len(), d.Len()) {
			e := n.elem
			if i < len(n.prefix) {
				e = n.prefix[i]
			}
			if e.isUseful() {
				path.SetIndex(i)
				ok = e.check(v.Index(i), d.Index(i), path, rep) && ok
			}
		}
		path.Pop()
	case n.kind == reflect.Map && d.Kind() == jsonbody.Object:
		for i := range d.Len() {
			k, e := d.Member(i)
			kv, err := bind.MapKey(n.keyOf, k)
			if err != nil {
				continue // the binder refused the key
			}
			mv := v.MapIndex(kv)
			if !mv.IsValid() {
				continue
			}
			path.Member(k)
			for _, o := range n.members {
				ok = o.check(k, mv, e, path, rep) && ok
			}
			path.Pop()
		}
	}
	return ok
}

// check holds a map's value mv, decoded from e at key k, to what o says
// of that key.
func (o *floatObj) check(k string, mv reflect.Value, e jsonbody.Value, path *failure.Path, rep failure.Reporter) bool {
	ok, matched := true, false
	if p, has := o.props[k]; has {
		matched = true
		if p.isUseful() {
			ok = p.check(mv, e, path, rep) && ok
		}
	}
	for _, p := range o.pats {
		if p.re.MatchString(k) {
			matched = true
			if p.node.isUseful() {
				ok = p.node.check(mv, e, path, rep) && ok
			}
		}
	}
	if !matched && o.rest.isUseful() {
		ok = o.rest.check(mv, e, path, rep) && ok
	}
	return ok
}
