package schema

import (
	"encoding/json"
	"math/big"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// JSON equality as the library defines it: for const and enum, a body
// value against a schema value (equal); for uniqueItems, two body values
// (equalValues).

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

// equalValues reports whether a and b are equal as the library compares
// JSON values.
func equalValues(a, b jsonbody.Value) bool {
	k := a.Kind()
	if k != b.Kind() {
		return false
	}
	switch k {
	case jsonbody.String:
		return a.Str() == b.Str()
	case jsonbody.Number:
		return decimalOf(a.Number()).equal(decimalOf(b.Number()))
	case jsonbody.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case jsonbody.Object:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			name, e := a.Member(i)
			f, ok := b.Get(name)
			if !ok || !equalValues(e, f) {
				return false
			}
		}
		return true
	}
	return true // null, false, true: the kind is the value
}
