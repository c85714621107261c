package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// TestFoldCase_BothEngines: a member that equals a declared property but
// for letter case fails at its own pointer, on the fast path and in the
// library alike (a 2019-09 schema, which only the library runs, too);
// additionalProperties: false keeps its one failure; names that only look
// alike pass.
func TestFoldCase_BothEngines(t *testing.T) {
	msg := func(prop string) string { return msgFoldCase(prop) }
	cases := []foldCase{
		{`{"type":"object","properties":{"role":{"enum":["user"]}}}`, `{"Role":"admin"}`, true, []detail{{"/Role", msg("role")}}},
		{`{"properties":{"role":{}}}`, `{"ROLE":1,"roles":2,"Rolf":3}`, true, []detail{{"/ROLE", msg("role")}}},
		{`{"properties":{"u":{"properties":{"key":{}}}}}`, `{"u":{"\u212aey":1}}`, true, []detail{{"/u/\u212aey", msg("key")}}},
		{`{"allOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}]}`, `{"A":1,"B":2}`, true, []detail{{"/A", msg("a")}, {"/B", msg("b")}}},
		{`{"definitions":{"r":{"properties":{"a~/":{}}}},"items":{"$ref":"#/definitions/r"}}`, `[{"A~/":1}]`, true, []detail{{"/0/A~0~1", msg("a~/")}}},
		{`{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"A":1}`, true, []detail{{"/A", msg("a")}, {"/A", "must be a string, not a number"}}},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"A":1}`, true, []detail{{"/A", msgNotAllowed}}},
		{`{"properties":{"a":{}},"patternProperties":{"^A":{}},"additionalProperties":false}`, `{"A":1}`, true, []detail{{"/A", msg("a")}}},
		{`{"properties":{"a":{}},"required":["A"]}`, `{"A":1}`, true, []detail{{"/A", msg("a")}}},
		{`{"$ref":"#/definitions/r","properties":{"a":{}},"definitions":{"r":{}}}`, `{"A":1}`, true, nil}, // draft-07: $ref's siblings are ignored
		{`{"properties":{"role":{}}}`, `{"role":1,"other":2}`, true, nil},
		// Names declared where a failure may let the value pass (not, if, oneOf) fail where that is applied.
		{`{"not":{"properties":{"role":{"const":"admin"}}}}`, `{"Role":"admin"}`, true, []detail{{"", msgNot}, {"/Role", msg("role")}}}, // the not's schema checks no case itself: it matches, as draft-07 reads it
		{`{"if":{"properties":{"role":{"const":"admin"}},"required":["role"]},"then":{"required":["token"]}}`, `{"Role":"admin"}`, true, []detail{{"/Role", msg("role")}}},
		{`{"oneOf":[{"properties":{"role":{"const":"admin"}}},{"required":["x"]}]}`, `{"Role":"admin","x":1}`, true, []detail{{"", msgOneOfSeveral}, {"/Role", msg("role")}}},
		{`{"anyOf":[{"properties":{"role":{"enum":["user"]}}},{"required":["x"]}]}`, `{"Role":"admin"}`, true, []detail{{"", msgAnyOf}}},
		{`{"anyOf":[{"properties":{"role":{"enum":["user"]}}},{"required":["x"]}]}`, `{"Role":"admin","x":1}`, true, nil}, // as {"role":"admin","x":1}: the second branch leaves role free
		{`{"oneOf":[{"properties":{"a":{"allOf":[{"$ref":"#/definitions/k"}]}}},{"required":["b"]}],"definitions":{"k":{"not":{"properties":{"key":{}}}}}}`, `{"a":{"KEY":1}}`, true, []detail{{"", msgOneOf}}},
		{`{"dependencies":{"x":{"properties":{"role":{}}}}}`, `{"x":1,"ROLE":2}`, true, []detail{{"/ROLE", msg("role")}}},
		{`{"not":{"properties":{"role":{"const":"admin"}}},"properties":{"Role":{}}}`, `{"Role":"admin"}`, true, []detail{{"", msgNot}}}, // declared exactly too; the not's schema matches, as draft-07 reads it (it passed when the not's own case check failed)
		// A schema written inside a not, an if or a oneOf checks no case itself: its failure would make
		// the not pass, the if take its else branch (found by review: these passed, refused before).
		{`{"properties":{"user":{"type":"object"}},"not":{"properties":{"user":{"properties":{"role":{"const":"admin"}}}}}}`, `{"user":{"Role":"admin"}}`, true, []detail{{"", msgNot}}},
		{`{"type":"array","not":{"contains":{"properties":{"role":{"const":"admin"}}}}}`, `[{"Role":"admin"}]`, true, []detail{{"", msgNot}}},
		{`{"properties":{"Kind":{}},"if":{"properties":{"kind":{"const":"x"}}},"then":{"required":["token"]}}`, `{"Kind":"y"}`, true, []detail{{"/token", "is required"}}},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"role":{}},"unevaluatedProperties":true}`, `{"Role":1}`, false, []detail{{"/Role", msg("role")}}},
	}
	foldCasesAgree(t, "fold", cases)
}

// TestFoldCase_ValidBodyAllocatesNothingMore: the fast path looks a member
// not declared up by its fold key in a buffer the pooled run keeps, so a
// valid body with members of other names allocates what one without does.
func TestFoldCase_ValidBodyAllocatesNothingMore(t *testing.T) {
	if raceDetector {
		t.Skip("sync.Pool drops runs at random under the race detector")
	}
	c := NewCompiler(nil, nil)
	s, err := c.Compile("alloc.json", map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"type": "integer"}}})
	require.NoError(t, err)
	require.True(t, s.Native())
	allocs := func(body string) float64 {
		doc, err := jsonbody.Parse([]byte(body), 64)
		require.NoError(t, err)
		require.True(t, s.Validate(doc, failure.Discard))
		return testing.AllocsPerRun(100, func() { s.Validate(doc, failure.Discard) })
	}
	assert.Equal(t, allocs(`{"role":1}`), allocs(`{"role":1,"other":2,"Ωmega":3,"roles":4,"`+strings.Repeat("x", 300)+`":5}`))
}

// TestFoldCase_TrueAndEmptyProperties: a property whose schema is true or
// {} is declared all the same: its exact name never fails as a fold of
// itself.
func TestFoldCase_TrueAndEmptyProperties(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, src := range []string{`{"properties":{"role":true,"k":{}}}`, `{"properties":{"role":true},"additionalProperties":false}`} {
		s := compileSuiteSchema(t, c, fmt.Sprintf("true-%d.json", i), json.RawMessage(src))
		v, err := jsonbody.Parse([]byte(`{"role":1,"k":2}`), 64)
		require.NoError(t, err)
		fastOK, fast, refOK, ref := run(s, v)
		assert.Equal(t, i == 0, fastOK, src)
		assert.Equal(t, refOK, fastOK, src)
		assert.Equal(t, ref, fast, src)
	}
}

// TestFoldCase_LongNameIsNotFolded: a member name of more runes than any
// declared name equals none of them under folding, so neither engine folds
// it: a 680 KB name outside ASCII took 8 ms at one schema that declares
// names (160 ms under an allOf of 20), where looking it up takes 20 µs.
// Folding it would allocate (the fast path's buffer is not kept past 4
// KiB; the library's key is a new string), so the allocations tell.
func TestFoldCase_LongNameIsNotFolded(t *testing.T) {
	if raceDetector {
		t.Skip("sync.Pool drops runs at random under the race detector")
	}
	c := NewCompiler(nil, nil)
	s, err := c.Compile("long.json", map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"type": "integer"}}})
	require.NoError(t, err)
	require.True(t, s.Native())
	allocs := func(body string) (fast, ref float64) {
		doc, err := jsonbody.Parse([]byte(body), 64)
		require.NoError(t, err)
		require.True(t, s.Validate(doc, failure.Discard))
		v := doc.Any()
		require.True(t, s.Reference(v, failure.Discard))
		return testing.AllocsPerRun(20, func() { s.Validate(doc, failure.Discard) }),
			testing.AllocsPerRun(20, func() { s.Reference(v, failure.Discard) })
	}
	fastShort, refShort := allocs(`{"role":1,"other":2}`)
	for _, long := range []string{strings.Repeat("Ω", 10000), strings.Repeat("x", 20000), "ROLE" + strings.Repeat("\u212a", 5000)} {
		fast, ref := allocs(`{"role":1,"` + long + `":2}`)
		assert.Equal(t, fastShort, fast, "fast path, %d bytes", len(long))
		assert.Equal(t, refShort, ref, "library, %d bytes", len(long))
	}
	// A name of as many runes as a declared one is still folded.
	doc, err := jsonbody.Parse([]byte(`{"\u212a\u212a\u212a\u212a\u212a":1}`), 64)
	require.NoError(t, err)
	s2, err := c.Compile("long2.json", map[string]any{"properties": map[string]any{"kkkkk": map[string]any{}}})
	require.NoError(t, err)
	fastOK, fast, refOK, ref := run(s2, doc)
	assert.False(t, fastOK)
	assert.False(t, refOK)
	assert.Equal(t, []detail{{"/\u212a\u212a\u212a\u212a\u212a", msgFoldCase("kkkkk")}}, fast)
	assert.Equal(t, fast, ref)
}

// TestFoldCase_DependenciesAndConditionalRequired: a dependency's name is
// declared too (a member of it brings more checks, which "Role" skipped
// while encoding/json filled role from it), and so are the names required
// under not, if and oneOf, where a name missing can let the body pass: an
// if: {required: [role]} took its else branch for "Role", a oneOf passed
// on one branch, a not passed.
func TestFoldCase_DependenciesAndConditionalRequired(t *testing.T) {
	msg := msgFoldCase("role")
	cases := []foldCase{
		{`{"dependencies":{"role":{"required":["token"]}}}`, `{"Role":"admin"}`, true, []detail{{"/Role", msg}}},
		{`{"dependencies":{"role":["token"]}}`, `{"ROLE":"admin"}`, true, []detail{{"/ROLE", msg}}},
		{`{"properties":{"a":{}},"dependencies":{"role":["token"]}}`, `{"a":1,"Role":"admin"}`, true, []detail{{"/Role", msg}}},
		{`{"if":{"required":["role"]},"then":{"required":["token"]}}`, `{"Role":"admin"}`, true, []detail{{"/Role", msg}}},
		{`{"not":{"required":["role"]}}`, `{"Role":"admin"}`, true, []detail{{"/Role", msg}}},
		{`{"oneOf":[{"required":["role"]},{"required":["x"]}]}`, `{"Role":"admin","x":1}`, true, []detail{{"/Role", msg}}},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","dependentRequired":{"role":["token"]}}`, `{"Role":"admin"}`, false, []detail{{"/Role", msg}}},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","dependentSchemas":{"role":{"required":["token"]}}}`, `{"Role":"admin"}`, false, []detail{{"/Role", msg}}},
		// Exact names, and names required outside not, if and oneOf, pass as before.
		{`{"dependencies":{"role":["token"]}}`, `{"role":"admin","token":1,"Other":2}`, true, nil},
		{`{"if":{"required":["role"]},"then":{"required":["token"]}}`, `{"role":"admin","token":"t"}`, true, nil},
		{`{"required":["role"],"properties":{"a":{}}}`, `{"role":1,"ROLE2":2,"A2":3}`, true, nil},
	}
	foldCasesAgree(t, "dep", cases)
}

// foldCase is a schema, a body, whether the schema takes the fast path,
// and the failures both engines must give.
type foldCase struct {
	schema, body string
	native       bool
	want         []detail
}

// foldCasesAgree compiles each case's schema (named prefix-i.json) and
// holds both engines to its verdict and failures.
func foldCasesAgree(t *testing.T, prefix string, cases []foldCase) {
	t.Helper()
	c := NewCompiler(nil, nil)
	for i, tc := range cases {
		var doc any
		require.NoError(t, json.Unmarshal([]byte(tc.schema), &doc))
		s, err := c.Compile(fmt.Sprintf("%s-%d.json", prefix, i), doc)
		require.NoError(t, err, tc.schema)
		assert.Equal(t, tc.native, s.Native(), tc.schema)
		v, err := jsonbody.Parse([]byte(tc.body), 64)
		require.NoError(t, err)
		fastOK, fast, refOK, ref := run(s, v)
		assert.Equal(t, len(tc.want) == 0, fastOK, "%s on %s", tc.schema, tc.body)
		assert.Equal(t, refOK, fastOK, "%s on %s", tc.schema, tc.body)
		assert.Equal(t, tc.want, fast, "%s on %s", tc.schema, tc.body)
		assert.Equal(t, tc.want, ref, "%s on %s", tc.schema, tc.body)
	}
}
