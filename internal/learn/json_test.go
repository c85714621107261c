package learn

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnmarshal_Rejects(t *testing.T) {
	valid := `{"format":"contractguard.learn/v1","limits":{},"samples":3,"routes":[{"method":"POST","template":"/a/{id}","samples":3,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z","body":{"seen":3,"str":3,"formats":[],"enum":{"values":{"x":3}}}}]}`
	var o Observations
	require.NoError(t, json.Unmarshal([]byte(valid), &o))
	tests := map[string]string{
		"another format":           strings.Replace(valid, "learn/v1", "learn/v9", 1),
		"a value seen too little":  strings.Replace(valid, `{"x":3}`, `{"x":2}`, 1),
		"a long value":             strings.Replace(valid, `{"x":3}`, `{"`+strings.Repeat("x", 65)+`":3}`, 1),
		"counts that do not add":   strings.Replace(valid, `"seen":3,"str":3`, `"seen":4,"str":3`, 1),
		"negative counts":          strings.Replace(valid, `"seen":3,"str":3`, `"seen":-3,"str":-3`, 1),
		"a bad template":           strings.Replace(valid, `/a/{id}`, `a/{id`, 1),
		"an escaped dot segment":   strings.Replace(valid, `/a/{id}`, `/a/%2e/{id}`, 1),
		"two escaped dots":         strings.Replace(valid, `/a/{id}`, `/a/%2E%2e`, 1),
		"a lower-case method":      strings.Replace(valid, `"POST"`, `"post"`, 1),
		"more route samples":       strings.Replace(valid, `"samples":3,"routes"`, `"samples":2,"routes"`, 1),
		"last before first":        strings.Replace(valid, `"last":"2026-01-01T00:00:01Z"`, `"last":"2025-01-01T00:00:00Z"`, 1),
		"a bad cut":                strings.Replace(valid, `"samples":3,"first"`, `"samples":3,"cut":"/x","first"`, 1),
		"an unknown format":        strings.Replace(valid, `"formats":[]`, `"formats":["zip"]`, 1),
		"an over enum with values": strings.Replace(valid, `"enum":{"values"`, `"enum":{"over":true,"values"`, 1),
		"a bad share":              strings.Replace(valid, `"enum":{"values":{"x":3}}`, `"enum":{"pending":[{"fingerprint":"00","n":1,"shares":[]}]}`, 1),
		"not JSON":                 `{"format":`,
		// encoding/json reads the last of two keys: a route's body, a
		// member or the routes themselves silently taken from the second.
		"a member twice":     strings.Replace(valid, `"body":{"seen":3,"str":3,"formats":[],"enum":{"values":{"x":3}}}`, `"body":{"seen":3,"obj":3,"members":{"a":{"seen":3,"str":3},"a":{"seen":3,"int":3}}}`, 1),
		"routes twice":       strings.Replace(valid, `"routes":[`, `"routes":[],"routes":[`, 1),
		"format twice":       strings.Replace(valid, `"format":"contractguard.learn/v1"`, `"format":"other","format":"contractguard.learn/v1"`, 1),
		"a value twice":      strings.Replace(valid, `{"x":3}`, `{"x":3,"x":4}`, 1),
		"a nested key twice": strings.Replace(valid, `"body":{"seen":3,`, `"body":{"seen":3,"seen":3,`, 1),
		// encoding/json reads a field's key in any letter case: "Body" is
		// body, decoded into it.
		"a field twice in two cases": strings.Replace(valid, `"body":{`, `"Body":{"enum":{"values":{"y":3}}},"body":{`, 1),
		// Two routes of 2^62 samples add up to a negative total, under the
		// document's 2^62: sums of them wrapped.
		"samples that wrap": `{"format":"contractguard.learn/v1","limits":{},"samples":4611686018427387904,"routes":[` +
			`{"method":"POST","template":"/a","samples":4611686018427387904,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"},` +
			`{"method":"POST","template":"/b","samples":4611686018427387904,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"}]}`,
		"samples out of range": strings.Replace(strings.Replace(valid, `"samples":3,"routes"`, `"samples":9007199254740993,"routes"`, 1),
			`"samples":3,"first"`, `"samples":9007199254740993,"first"`, 1),
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			var o Observations
			assert.Error(t, json.Unmarshal([]byte(doc), &o))
		})
	}
}

// TestUnmarshal_EveryMethodRouteDropped: a route of method * or ANY (which
// a learner before them learned from a client that sent one) is dropped
// from an export read: the contract written of it would not load, and
// learn merge failed. Its samples count as dropped.
func TestUnmarshal_EveryMethodRouteDropped(t *testing.T) {
	doc := `{"format":"contractguard.learn/v1","limits":{},"samples":5,"routes":[` +
		`{"method":"POST","template":"/a","samples":3,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"},` +
		`{"method":"METHOD","template":"/a","samples":2,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"}]}`
	for _, m := range []string{"*", "ANY"} {
		var o Observations
		require.NoError(t, json.Unmarshal([]byte(strings.Replace(doc, "METHOD", m, 1)), &o), m)
		assert.Equal(t, 1, o.Routes(), m)
		assert.Equal(t, int64(2), o.Dropped(), m)
		for _, l := range o.Contracts() {
			assert.Equal(t, "POST", l.Method, m)
		}
	}
}

// TestUnmarshal_OldTemplatesEscaped: learners before de75ea6 wrote a
// request to /files/%2A as the template /files/*, and %3F, %23 raw;
// endpoints now refuse those as a wildcard, a query and a fragment. Such
// an export is read with them escaped, as a learner writes them now, not
// refused whole.
func TestUnmarshal_OldTemplatesEscaped(t *testing.T) {
	for old, now := range map[string]string{"/files/*": "/files/%2A", "/a?b/{id}": "/a%3Fb/{id}", "/x#y/*z*": "/x%23y/%2Az*"} {
		doc := `{"format":"contractguard.learn/v1","limits":{},"samples":1,"routes":[{"method":"GET","template":"` + old + `","samples":1,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"}]}`
		var o Observations
		require.NoError(t, json.Unmarshal([]byte(doc), &o), old)
		b, err := json.Marshal(&o)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"template":"`+now+`"`, old)
	}
}

// TestUnmarshal_OldTemplateEscapedOverLimit: an older learner's template
// that is over maxTemplate once escaped (a request to /%3F%3F…, written
// /??…) was read, and written out as an export that no read accepts
// ("template over 256 bytes"): learn merge made a file it cannot merge
// again. It is refused as it is read, as a learner now keeps no such route.
func TestUnmarshal_OldTemplateEscapedOverLimit(t *testing.T) {
	old := "/" + strings.Repeat("?", 200)
	doc := `{"format":"contractguard.learn/v1","limits":{},"samples":1,"routes":[{"method":"GET","template":"` + old + `","samples":1,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z"}]}`
	var o Observations
	err := json.Unmarshal([]byte(doc), &o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "template over 256 bytes")
	short := "/" + strings.Repeat("?", 85) // 256 bytes escaped
	doc = strings.Replace(doc, old, short, 1)
	require.NoError(t, json.Unmarshal([]byte(doc), &o))
	b, err := json.Marshal(&o)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &o), "an export read is one that is read again")
}

// TestUnmarshal_AppliesLimits: a document that holds more than its limits
// allow is cut down to them as it is read, as a learner would have.
func TestUnmarshal_AppliesLimits(t *testing.T) {
	o := learn(t, Limits{}, traffic(rand.New(rand.NewPCG(8, 9)), 400)...)
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	doc["limits"].(map[string]any)["routes"] = 2
	b, err = json.Marshal(doc)
	require.NoError(t, err)
	var small Observations
	require.NoError(t, json.Unmarshal(b, &small))
	assert.Equal(t, 2, small.Routes())
	assert.Equal(t, learn(t, Limits{Routes: 2}, traffic(rand.New(rand.NewPCG(8, 9)), 400)...).Contracts(), small.Contracts(),
		"the same as a learner with those limits")
}

// FuzzObservationsJSON: the exchange format is read from files and from
// services: any input is refused or read into observations that write back
// to the same bytes, infer and merge without panicking.
func FuzzObservationsJSON(f *testing.F) {
	seed, _ := json.Marshal(learn(f, Limits{}, traffic(rand.New(rand.NewPCG(1, 2)), 40)...))
	f.Add(seed)
	f.Add([]byte(`{"format":"contractguard.learn/v1","limits":{"routes":1},"samples":1,"routeCut":"GET /","routes":[{"method":"GET","template":"/","samples":1,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:00Z","cut":"/mx","body":{"seen":1,"obj":1,"members":{"x":{"seen":1,"null":1}}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o Observations
		if err := json.Unmarshal(data, &o); err != nil {
			return
		}
		b, err := json.Marshal(&o)
		if err != nil {
			t.Fatal(err)
		}
		var again Observations
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("what was written does not read back: %v", err)
		}
		b2, _ := json.Marshal(&again)
		if string(b) != string(b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		o.Contracts()
		Merge(&o, &again).Contracts()
	})
}

// TestUnmarshal_DuplicateKeyAt: a key twice in one object is refused, at
// the second key; keys alike in different objects, or a string value
// equal to a key, are no duplicates; a field's name in another letter
// case, or one no learner writes, is refused too (encoding/json read
// "Body" as body, the second into the first).
func TestUnmarshal_DuplicateKeyAt(t *testing.T) {
	doc := `{"format":"contractguard.learn/v1","limits":{},"samples":3,"routes":[{"method":"POST","template":"/a","samples":3,"first":"2026-01-01T00:00:00Z","last":"2026-01-01T00:00:01Z","body":{"seen":3,"obj":3,"members":{"seen":{"seen":3,"str":3,"formats":[]},"Seen":{"seen":3,"str":3,"formats":[]},"a":{"seen":3,"obj":3,"members":{"a":{"seen":3,"arr":3,"items":{"seen":1,"str":1,"formats":["uuid"]}}}}}}}]}`
	var o Observations
	require.NoError(t, json.Unmarshal([]byte(doc), &o), "members that differ in case are two")
	dup := strings.Replace(doc, `"members":{"a":`, `"members":{"a":{"seen":3,"arr":3},"a":`, 1)
	err := json.Unmarshal([]byte(dup), &o)
	var se *jsontext.SyntacticError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, jsontext.ErrDuplicateName)
	assert.Equal(t, strings.LastIndex(dup, `"a":{"seen":3,"arr":3,"items"`), int(se.ByteOffset), "at the second key")

	for _, bad := range []string{
		strings.Replace(doc, `"body":{`, `"Body":{"seen":1},"body":{`, 1),
		strings.Replace(doc, `"samples":3,"routes"`, `"samples":3,"ſamples":2,"routes"`, 1),
		strings.Replace(doc, `"body":{`, `"bodyy":{`, 1),
		strings.Replace(doc, `"seen":1,"str":1`, `"seen":1,"SEEN":1,"str":1`, 1),
	} {
		assert.Error(t, json.Unmarshal([]byte(bad), &o), bad)
	}
}
