package contractguard

import (
	"math/big"
	"reflect"
	"strconv"

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
// value T got (floatNode.check), where its schema puts them on a float:
// on the property itself, through $ref and allOf (anyOf and oneOf name no
// one branch that must hold, and are left to the schema), wherever the
// body holds a number for it (fields, pointers, slices, arrays, and maps
// with string keys).

// floatNode is what to check at one place of T: the exclusive bounds of a
// float, rounded to its size; a struct's fields, a slice's, array's or
// map's elements, with something to check below them. nil: nothing.
type floatNode struct {
	kind     reflect.Kind // of the value, pointers followed
	lo, hi   *big.Rat     // a float's exclusive bounds, as the schema says them (nil: none)
	loF, hiF float64      // and rounded to the float's size
	fields   []floatField
	elem     *floatNode
}

type floatField struct {
	index []int
	name  string
	node  *floatNode
}

// maxFloatDepth bounds the walk of a recursive type at build time.
const maxFloatDepth = 32

// floatChecks is the check of T's floats against s, nil when s puts no
// exclusive bound on any of them. (A type the binder refuses, which
// bind.Check reports first, has none.)
func floatChecks(t reflect.Type, s *jsonschema.Schema) *floatNode {
	return floatsAt(t, subschemas(s), 0)
}

func floatsAt(t reflect.Type, ss []*jsonschema.Schema, depth int) *floatNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(ss) == 0 || depth > maxFloatDepth {
		return nil
	}
	n := &floatNode{kind: t.Kind()}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		for _, s := range ss {
			n.lo, n.loF = tighter(n.lo, s.ExclusiveMinimum, bits, 1)
			n.hi, n.hiF = tighter(n.hi, s.ExclusiveMaximum, bits, -1)
		}
		if n.lo == nil && n.hi == nil {
			return nil
		}
	case reflect.Struct:
		names, err := bind.Fields(t)
		if err != nil {
			return nil
		}
		for name, index := range names {
			var props []*jsonschema.Schema
			for _, s := range ss {
				if p := s.Properties[name]; p != nil {
					props = append(props, subschemas(p)...)
				}
			}
			if sub := floatsAt(t.FieldByIndex(index).Type, props, depth+1); sub != nil {
				n.fields = append(n.fields, floatField{index, name, sub})
			}
		}
		if len(n.fields) == 0 {
			return nil
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		var elems []*jsonschema.Schema
		for _, s := range ss {
			var e any = s.Items
			if t.Kind() == reflect.Map {
				e = s.AdditionalProperties
			}
			if s.Items2020 != nil {
				e = s.Items2020
			}
			if e, ok := e.(*jsonschema.Schema); ok && e != nil {
				elems = append(elems, subschemas(e)...)
			}
		}
		if n.elem = floatsAt(t.Elem(), elems, depth+1); n.elem == nil {
			return nil
		}
	default:
		return nil
	}
	return n
}

// subschemas are s and every schema that applies wherever s does: its
// $ref and its allOf, and theirs.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	var add func(s *jsonschema.Schema, depth int)
	add = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > maxFloatDepth {
			return
		}
		out = append(out, s)
		add(s.Ref, depth+1)
		for _, a := range s.AllOf {
			add(a, depth+1)
		}
	}
	add(s, 0)
	return out
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
			rep.Add(path.Pointer(), schema.ExclusiveMessage(true, n.lo)+is)
		case n.hi != nil && !(f < n.hiF):
			ok = false
			rep.Add(path.Pointer(), schema.ExclusiveMessage(false, n.hi)+is)
		}
	case n.kind == reflect.Struct && d.Kind() == jsonbody.Object:
		for _, fd := range n.fields {
			m, present := d.Get(fd.name) // the binder's names are exact, as json v2's
			fv, err := v.FieldByIndexErr(fd.index)
			if !present || err != nil {
				continue
			}
			path.Member(fd.name)
			ok = fd.node.check(fv, m, path, rep) && ok
			path.Pop()
		}
	case (n.kind == reflect.Slice || n.kind == reflect.Array) && d.Kind() == jsonbody.Array:
		path.Index(0)
		for i := range min(v.Len(), d.Len()) {
			path.SetIndex(i)
			ok = n.elem.check(v.Index(i), d.Index(i), path, rep) && ok
		}
		path.Pop()
	case n.kind == reflect.Map && d.Kind() == jsonbody.Object && v.Type().Key().Kind() == reflect.String:
		for i := range d.Len() {
			k, e := d.Member(i)
			mv := v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key()))
			if !mv.IsValid() {
				continue
			}
			path.Member(k)
			ok = n.elem.check(mv, e, path, rep) && ok
			path.Pop()
		}
	}
	return ok
}
