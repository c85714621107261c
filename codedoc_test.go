package contractguard

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// roundTrip is the reference codeDoc answers for: the contract marshalled
// and read back by the strict reader, as the loader reads it otherwise.
func roundTrip(c *Contract) (any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	d, err := jsonbody.Parse(b, jsonbody.MaxDepthLimit)
	if err != nil {
		return nil, err
	}
	return d.Any(), nil
}

// requireAsRoundTrip fails when codeDoc builds c (ok) and the round trip
// refuses it or makes anything else of it; it reports whether codeDoc
// built it.
func requireAsRoundTrip(t *testing.T, c *Contract, where string) bool {
	t.Helper()
	doc, ok := codeDoc(c)
	if !ok {
		return false
	}
	want, err := roundTrip(c)
	require.NoError(t, err, "%s: codeDoc built a contract the round trip refuses", where)
	require.Equal(t, want, any(doc), where)
	return true
}

// TestCodeDoc_AsRoundTrip holds codeDoc to the round trip over contracts
// made of every kind of value, plain and not, a few levels deep: whatever
// codeDoc builds is deeply equal to what the round trip makes, and
// whatever the round trip refuses or rewrites (invalid UTF-8, NaN, names
// alike under case folding, Go values of other types) codeDoc declines.
// (Nesting: TestCodeDoc_Declines and TestCodeDoc_DepthLimit.)
func TestCodeDoc_AsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	built, declined := 0, 0
	for i := range 20000 {
		c := randomContract(rng)
		if requireAsRoundTrip(t, &c, fmt.Sprintf("contract %d: %#v", i, c)) {
			built++
		} else {
			declined++
		}
	}
	t.Logf("%d built, %d declined", built, declined)
	assert.Greater(t, built, 5000)
	assert.Greater(t, declined, 5000)
}

// TestCodeDoc_Declines lists what codeDoc must leave to the round trip.
func TestCodeDoc_Declines(t *testing.T) {
	deep := map[string]any{"type": "object"}
	for range maxCodeDocDepth {
		deep = map[string]any{"not": deep}
	}
	wide := map[string]any{}
	for i := range maxCodeDocFold + 1 {
		wide[fmt.Sprint("p", i)] = true
	}
	for name, c := range map[string]Contract{
		"invalid UTF-8 in a value":    {Schema: map[string]any{"pattern": "\xff"}},
		"invalid UTF-8 in a name":     {Schema: map[string]any{"\xfe": true}},
		"invalid UTF-8 in a method":   {Method: "P\xffST"},
		"invalid UTF-8 in a message":  {Invariants: []Invariant{{Expr: "true", Message: "\xff"}}},
		"NaN":                         {Schema: map[string]any{"minimum": math.NaN()}},
		"names alike under folding":   {Schema: map[string]any{"properties": map[string]any{"Kind": true, "kind": true}}},
		"the Kelvin sign folds to k":  {Schema: map[string]any{"properties": map[string]any{"\u212a": true, "k": true}}},
		"nested too deep":             {Schema: deep},
		"too wide to compare by pair": {Schema: wide},
		"a struct":                    {Schema: map[string]any{"items": struct{ Type string }{"string"}}},
		"a json.Number":               {Schema: map[string]any{"minimum": json.Number("1")}},
		"a float32":                   {Schema: map[string]any{"minimum": float32(0.1)}},
		"a []int":                     {Schema: map[string]any{"enum": []int{1, 2}}},
	} {
		_, ok := codeDoc(&c)
		assert.False(t, ok, name)
	}
}

// TestCodeDoc_DepthLimit: codeDoc builds a schema whose deepest value is
// at maxCodeDocDepth, as the round trip does, and declines one level more.
func TestCodeDoc_DepthLimit(t *testing.T) {
	nested := func(levels int) map[string]any {
		m := map[string]any{"type": "object"}
		for range levels {
			m = map[string]any{"not": m}
		}
		return m
	}
	// The schema is at depth 2 (the contract is 1); its innermost "type"
	// value at 2 + levels + 1.
	at := func(levels int) *Contract { return &Contract{Schema: nested(levels)} }
	require.True(t, requireAsRoundTrip(t, at(maxCodeDocDepth-3), "at the limit"), "declined at the limit")
	_, ok := codeDoc(at(maxCodeDocDepth - 2))
	assert.False(t, ok, "one level past the limit")
}

// TestCodeDoc_EveryField fills every field of Contract and Invariant, so
// that a field added to either and not to codeDoc fails here.
func TestCodeDoc_EveryField(t *testing.T) {
	var c Contract
	fill(t, reflect.ValueOf(&c).Elem())
	require.True(t, requireAsRoundTrip(t, &c, "every field"), "codeDoc declined %#v", c)
	assert.Equal(t, "/p", c.Endpoint, "fill reached the fields")
}

func fill(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i))
		}
	case reflect.String:
		v.SetString("/p")
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0))
	case reflect.Map:
		v.Set(reflect.ValueOf(map[string]any{"type": "object", "maxProperties": 3}))
	default:
		t.Fatalf("fill: a field of kind %s: teach fill and codeDoc", v.Kind())
	}
}

// TestCodeDoc_Taken: the repository's contracts in code, and the
// benchmark's, are built by codeDoc, not the round trip.
func TestCodeDoc_Taken(t *testing.T) {
	for i, c := range []Contract{
		{Endpoint: "/svc1/orders/:id/lines/7", Method: "POST",
			Schema: map[string]any{"type": "object", "required": []string{"sku7", "quantity7"},
				"properties": map[string]any{
					"sku7":      map[string]any{"type": "string", "maxLength": 23},
					"quantity7": map[string]any{"type": "integer", "minimum": 1},
				}},
			Invariants: []Invariant{{Expr: "request.body.quantity7 <= 107", Message: "too many"}}},
		{Endpoint: "/users", Method: "POST", Schema: map[string]any{"type": "object",
			"properties": map[string]any{"price": map[string]any{"type": "number", "minimum": 0.01, "maximum": 1e21}},
			"enum":       []any{nil, true, "x", 1.5, int64(-1 << 62), uint64(math.MaxUint64)}}},
		{Endpoint: "/empty"},
	} {
		require.True(t, requireAsRoundTrip(t, &c, fmt.Sprint("contract ", i)), "contract %d declined", i)
	}
}

func randomContract(rng *rand.Rand) Contract {
	strs := []string{"", "/orders", "POST", "learn", "a~b/c", "é", "\u2028", "<&>", "\x00", "\xff", "K", "\u212a", "k", "kind", "Kind"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	c := Contract{Endpoint: pick(), Method: pick(), Mode: pick()}
	if rng.IntN(4) > 0 {
		m, _ := randomValue(rng, 0, pick).(map[string]any)
		if m == nil {
			m = map[string]any{"type": randomValue(rng, 1, pick)}
		}
		c.Schema = m
	}
	for range rng.IntN(3) {
		c.Invariants = append(c.Invariants, Invariant{Expr: pick(), Message: pick()})
	}
	return c
}

func randomValue(rng *rand.Rand, depth int, pick func() string) any {
	if depth > 70 {
		return nil
	}
	floats := []float64{0, math.Copysign(0, -1), 0.1, 1e-7, 1e-6, 1e20, 1e21, 123456789.125, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)}
	switch k := rng.IntN(14); {
	case k == 0:
		return nil
	case k == 1:
		return rng.IntN(2) == 0
	case k == 2:
		return pick()
	case k == 3:
		return []int{rng.IntN(5), int(rng.Int64())}[rng.IntN(2)] - 2
	case k == 4:
		return []any{int64(math.MinInt64), int32(-7), uint(7), uint64(math.MaxUint64), json.Number("12"), float32(0.1)}[rng.IntN(6)]
	case k == 5:
		return floats[rng.IntN(len(floats))]
	case k == 6:
		s := make([]string, rng.IntN(4))
		for i := range s {
			s[i] = pick()
		}
		if rng.IntN(8) == 0 {
			return []string(nil)
		}
		return s
	case k == 7:
		return []int{1}
	case k <= 10 && depth < 70:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomValue(rng, depth+1+rng.IntN(30), pick)
		}
		return a
	default:
		if rng.IntN(10) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		n := rng.IntN(5)
		if rng.IntN(20) == 0 {
			n = maxCodeDocFold + rng.IntN(3) - 1
		}
		for range n {
			name := pick()
			if rng.IntN(2) == 0 {
				name = strings.Repeat("p", 1+rng.IntN(40)) + name
			}
			m[name] = randomValue(rng, depth+1+rng.IntN(30), pick)
		}
		return m
	}
}

// FuzzCodeDocVsRoundTrip: whatever codeDoc builds, the round trip
// (json.Marshal, the strict reader) makes equal, over schemas decoded from
// the fuzzer's JSON (objects, arrays, float64s, strings) with its raw
// strings (any bytes: invalid UTF-8, names alike under folding) and
// integers put in as names, values and []string.
func FuzzCodeDocVsRoundTrip(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"minimum":0.1}}}`, "Kind", "kind", int64(-7), 1e21)
	f.Add(`{"enum":[null,true,"x",[1,2.5e-7]]}`, "\xff", "\u212a", int64(1<<62), math.Copysign(0, -1))
	f.Add(`[1]`, "k", "K", int64(0), 0.5)
	f.Fuzz(func(t *testing.T, schemaJSON, a, b string, n int64, x float64) {
		var s map[string]any
		if json.Unmarshal([]byte(schemaJSON), &s) != nil || s == nil {
			s = map[string]any{}
		}
		s[a] = n
		s["x"] = x
		s["names"] = []string{a, b}
		if props, ok := s["properties"].(map[string]any); ok {
			props[b] = map[string]any{"const": a}
		}
		c := Contract{Endpoint: a, Method: b, Schema: s, Invariants: []Invariant{{Expr: b, Message: a}}}
		requireAsRoundTrip(t, &c, fmt.Sprintf("%#v", c))
	})
}
