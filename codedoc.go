package contractguard

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A contract in code is read as the JSON it marshals to, so that any Go
// value that marshals to a schema is accepted and the contract is checked
// exactly as a file's: json.Marshal, then the strict reader (jsonbody),
// then the generic value. codeDoc builds that same value directly for
// contracts made of plain JSON values, the way almost every contract in
// code is written (map[string]any, []any, []string, strings, numbers,
// booleans), without the text in between; it declines (ok false) whatever
// it cannot build exactly as the round trip would, and the loader then
// takes the round trip, which stays the reference: TestCodeDoc_AsRoundTrip
// holds the two to deep equality, and to declining whatever the round trip
// refuses or changes.

// maxCodeDocDepth is the nesting codeDoc builds; a deeper contract takes
// the round trip (far below jsonbody.MaxDepthLimit, which the round trip
// enforces).
const maxCodeDocDepth = 64

// maxCodeDocFold is the most members of one object codeDoc builds,
// checking its names pair by pair for two alike under case folding (which
// the strict reader refuses); a larger object takes the round trip.
const maxCodeDocFold = 32

// codeDoc is the generic value of c as json.Marshal and the strict reader
// would make it: ok false when it cannot say.
func codeDoc(c *Contract) (doc map[string]any, ok bool) {
	doc = make(map[string]any, 5)
	for _, f := range [...]struct{ name, value string }{{"endpoint", c.Endpoint}, {"method", c.Method}, {"mode", c.Mode}} {
		if f.value == "" { // omitempty
			continue
		}
		if !utf8.ValidString(f.value) {
			return nil, false
		}
		doc[f.name] = f.value
	}
	if len(c.Schema) > 0 { // omitempty: nil and empty alike
		s, ok := codeValue(c.Schema, 2)
		if !ok {
			return nil, false
		}
		doc["schema"] = s
	}
	if len(c.Invariants) > 0 {
		invs := make([]any, len(c.Invariants))
		for i, inv := range c.Invariants {
			m := make(map[string]any, 2)
			for _, f := range [...]struct{ name, value string }{{"expr", inv.Expr}, {"message", inv.Message}} {
				if f.value == "" {
					continue
				}
				if !utf8.ValidString(f.value) {
					return nil, false
				}
				m[f.name] = f.value
			}
			invs[i] = m
		}
		doc["invariants"] = invs
	}
	return doc, true
}

// codeValue is v as json.Marshal and the strict reader would make it, at
// nesting depth: ok false when it cannot say.
func codeValue(v any, depth int) (any, bool) {
	if depth > maxCodeDocDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return nil, true
	case bool:
		return v, true
	case string:
		return v, utf8.ValidString(v) // invalid UTF-8 is replaced by Marshal
	case int:
		return json.Number(strconv.FormatInt(int64(v), 10)), true
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), true
	case int32:
		return json.Number(strconv.FormatInt(int64(v), 10)), true
	case uint:
		return json.Number(strconv.FormatUint(uint64(v), 10)), true
	case uint64:
		return json.Number(strconv.FormatUint(v, 10)), true
	case float64:
		b, err := json.Marshal(v) // its own float format; NaN and infinities fail
		return json.Number(b), err == nil
	case map[string]any:
		if v == nil {
			return nil, true // null
		}
		if len(v) > maxCodeDocFold {
			return nil, false
		}
		var buf [maxCodeDocFold]string
		names := buf[:0]
		m := make(map[string]any, len(v))
		for k, e := range v {
			if !utf8.ValidString(k) || alikeFolded(names, k) {
				return nil, false
			}
			names = append(names, k)
			x, ok := codeValue(e, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = x
		}
		return m, true
	case []any:
		if v == nil {
			return nil, true
		}
		a := make([]any, len(v))
		for i, e := range v {
			x, ok := codeValue(e, depth+1)
			if !ok {
				return nil, false
			}
			a[i] = x
		}
		return a, true
	case []string:
		if v == nil {
			return nil, true
		}
		if depth+1 > maxCodeDocDepth {
			return nil, false
		}
		a := make([]any, len(v))
		for i, s := range v {
			if !utf8.ValidString(s) {
				return nil, false
			}
			a[i] = s
		}
		return a, true
	}
	return nil, false // any other Go value: as it marshals
}

// alikeFolded reports a name among names alike to k under case folding
// (strings.EqualFold), which the strict reader refuses in one object.
func alikeFolded(names []string, k string) bool {
	for _, prev := range names {
		if strings.EqualFold(prev, k) {
			return true
		}
	}
	return false
}
