package schema

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/yamljson"
)

const suiteDir = "../../testdata/json-schema-test-suite/draft7"

type suiteGroup struct {
	File        string
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

func loadSuite(t testing.TB) []suiteGroup {
	t.Helper()
	var groups []suiteGroup
	err := filepath.WalkDir(suiteDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var gs []suiteGroup
		if err := json.Unmarshal(b, &gs); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for i := range gs {
			gs[i].File = strings.TrimPrefix(path, suiteDir+"/")
		}
		groups = append(groups, gs...)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, groups)
	return groups
}

// compileSuiteSchema compiles a suite schema as a contract schema: its
// $schema (2019-09 in the uuid file) is dropped, so it runs as draft-07.
func compileSuiteSchema(t testing.TB, c *Compiler, name string, raw json.RawMessage) *Schema {
	t.Helper()
	parsed, err := jsonbody.Parse(raw, 64)
	require.NoError(t, err)
	doc := parsed.Root().Any()
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$schema")
	}
	s, err := c.Compile(name, doc)
	require.NoError(t, err)
	return s
}

// run validates a body with the fast path (or the library, when the schema
// is not native) and with the library alone.
// The fast path runs three times: as Validate runs it, and with memo on
// from the first check, its verdicts in rows and in spill; should they
// differ, fast gets a last detail that says so, which no reference lists.
func run(s *Schema, body *jsonbody.Doc) (fastOK bool, fast []detail, refOK bool, ref []detail) {
	fastOK, fast = collect(func(add func(string, string)) bool { return s.Validate(body, failure.ReportFunc(add)) })
	refOK, ref = collect(func(add func(string, string)) bool { return s.Reference(body.Any(), failure.ReportFunc(add)) })
	if n := s.native(); n != nil {
		memoOK, memo := collect(func(add func(string, string)) bool {
			r := new(nativeRun)
			r.start(failure.ReportFunc(add), body)
			r.budget = 0
			r.validate(n, body.Root())
			return r.valid
		})
		if memoOK != fastOK || !slices.Equal(memo, fast) {
			fast = append(fast, detail{"(memo on)", fmt.Sprint(memoOK, memo)})
		}
		spillOK, spill := collect(func(add func(string, string)) bool {
			r := new(nativeRun)
			r.start(failure.ReportFunc(add), body)
			r.budget, r.rowsCap = 0, 0 // every verdict in spill
			r.validate(n, body.Root())
			return r.valid
		})
		if spillOK != fastOK || !slices.Equal(spill, fast) {
			fast = append(fast, detail{"(memo on, spill)", fmt.Sprint(spillOK, spill)})
		}
	}
	return
}

func collect(validate func(func(string, string)) bool) (bool, []detail) {
	var ds []detail
	ok := validate(func(p, m string) { ds = append(ds, detail{p, m}) })
	slices.SortFunc(ds, func(a, b detail) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return ok, ds
}

// TestNativeMatchesReference runs every case of the JSON-Schema-Test-Suite
// through the fast path and through the library: same verdict, same
// details, and the verdict the suite expects.
func TestNativeMatchesReference(t *testing.T) {
	c := NewCompiler(nil, nil)
	native, total, groups := 0, 0, 0
	for gi, g := range loadSuite(t) {
		groups++
		s := compileSuiteSchema(t, c, fmt.Sprintf("suite-%d.json", gi), g.Schema)
		if s.Native() {
			native++
		}
		for _, tc := range g.Tests {
			total++
			v, err := jsonbody.Parse(tc.Data, 64)
			require.NoError(t, err, "%s: %s", g.File, tc.Description)
			fastOK, fastDetails, refOK, refDetails := run(s, v)
			where := fmt.Sprintf("%s / %s / %s", g.File, g.Description, tc.Description)
			assert.Equal(t, refOK, fastOK, where)
			assert.Equal(t, refDetails, fastDetails, where)
			assert.Equal(t, tc.Valid, fastOK, where)
			assert.Equal(t, fastOK, len(fastDetails) == 0, where)
		}
	}
	t.Logf("%d cases; %d of %d schemas run on the fast path", total, native, groups)
	assert.Equal(t, groups, native, "every schema of the suite's files here runs natively")
}

func TestNative_Coverage(t *testing.T) {
	c := NewCompiler(nil, nil)
	for src, want := range map[string]bool{
		`{"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"enum":[1]}}}`: true,
		`{"properties":{"a":{"type":"string","format":"email","minLength":1,"pattern":"^a"}}}`:             true,
		`true`:                                       true,
		`{"properties":{"n":{"$ref":"#"}}}`:          true, // recursion through a value is fine
		`{"$ref":"#"}`:                               false,
		`{"allOf":[{}]}`:                             true,
		`{"properties":{"a":{"anyOf":[{}]}}}`:        true,
		`{"not":{"oneOf":[true,{"type":"string"}]}}`: true,
		`{"allOf":[{"$ref":"#"}]}`:                   false, // the value checked again by s: the library reports the cycle
		`{"not":{"anyOf":[{"$ref":"#"}]}}`:           false,
		`{"properties":{"a":{"if":{}}}}`:             true,
		`{"if":{"$ref":"#"}}`:                        false,
		`{"items":[{}]}`:                             true,
		`{"multipleOf":2}`:                           true,
		`{"patternProperties":{"a":{}}}`:             true,
		`{"dependencies":{"a":{"$ref":"#"}}}`:        false,
		`{"propertyNames":{"maxLength":3}}`:          true,
		`{"propertyNames":{"$ref":"#"}}`:             true, // into the name: no cycle
		`{"uniqueItems":true}`:                       true,
		`{"format":"regex"}`:                         true, // the library's own check, as for uri
		`{"contentEncoding":"base64","contentMediaType":"application/json"}`: true, // draft-07: annotations
	} {
		s := compileSuiteSchema(t, c, fmt.Sprintf("cov-%x.json", src), json.RawMessage(src))
		assert.Equal(t, want, s.Native(), src)
	}
}

// combinatorSchemas use not, allOf, anyOf and oneOf (which the copied
// part of the suite hardly does) in the places they take: at the root,
// on members and items, beside $ref, with booleans, around recursion.
var combinatorSchemas = []string{
	`{"not":{"type":"string"}}`,
	`{"allOf":[{"type":"object","required":["a"]},{"properties":{"a":{"type":"integer","minimum":1}}},{"required":["b"]}]}`,
	`{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":10},{"type":"object","required":["x"]}]}`,
	`{"oneOf":[{"type":"integer"},{"type":"number","minimum":2},{"const":"a"}]}`,
	`{"type":"object","properties":{"items":{"type":"array","items":{"oneOf":[{"type":"string","format":"email"},{"type":"integer","maximum":5}]}}},"not":{"required":["forbidden"]}}`,
	`{"allOf":[true,{"not":false}],"anyOf":[false,{}],"oneOf":[{},false]}`,
	`{"allOf":[{"not":true}]}`,
	`{"definitions":{"pos":{"type":"number","exclusiveMinimum":0}},"properties":{"a":{"allOf":[{"$ref":"#/definitions/pos"},{"not":{"const":3}}]},"b":{"anyOf":[{"$ref":"#/definitions/pos"},{"type":"null"}]}}}`,
	`{"oneOf":[{"required":["a"]},{"required":["b"]}],"additionalProperties":{"type":"integer"}}`,
	`{"items":{"allOf":[{"type":"string"},{"minLength":2},{"pattern":"^a"}]}}`,
	`{"properties":{"n":{"$ref":"#"}},"anyOf":[{"required":["n"]},{"required":["leaf"]}]}`,
	`{"$ref":"#/definitions/a","allOf":[{"type":"string"}],"definitions":{"a":{"type":"integer"}}}`,
	`{"type":"array","minItems":2,"allOf":[{"items":{"type":"integer"}},{"maxItems":3}],"not":{"items":{"enum":[0]}}}`,
	`{"anyOf":[{"properties":{"k":{"type":"string"}},"additionalProperties":false},{"allOf":[{"required":["k"]},{"oneOf":[{"maxProperties":1},{"minProperties":3}]}]}]}`,
	`{"if":{"required":["a"]},"then":{"properties":{"a":{"type":"integer","multipleOf":3}}},"else":{"required":["b"]}}`,
	`{"if":{"type":"number"},"then":{"multipleOf":0.1}}`,
	`{"then":{"const":1},"else":{"const":2}}`,
	`{"items":{"if":{"type":"string"},"else":{"multipleOf":1.5,"maximum":4}}}`,
	`{"multipleOf":7,"oneOf":[{"multipleOf":2},{"multipleOf":3}]}`,
	`{"properties":{"n":{"multipleOf":1e-3}},"not":{"if":{"required":["n"]},"then":{"required":["m"]},"else":false}}`,
	`{"properties":{"a":{"type":"integer"}},"patternProperties":{"^a":{"minimum":5},"b$":{"type":"string"},"^x/y~":{}},"additionalProperties":false}`,
	`{"patternProperties":{"[0-9]":{"multipleOf":2}},"additionalProperties":{"type":"null"}}`,
	`{"dependencies":{"a":["b","c/d"],"b":{"required":["k"],"properties":{"k":{"const":1}}},"x~":["y"]}}`,
	`{"type":"array","contains":{"type":"integer","minimum":5},"items":{"not":{"const":"x"}}}`,
	`{"properties":{"l":{"contains":{"anyOf":[{"const":"a"},{"multipleOf":3}]}}},"dependencies":{"l":{"not":{"required":["m"]}}}}`,
	`{"uniqueItems":true}`,
	`{"items":{"uniqueItems":true,"items":{"type":["number","object","null"]}}}`,
	`{"items":[{"type":"integer"},{"type":"string","minLength":2}],"additionalItems":false}`,
	`{"items":[{"const":1}],"additionalItems":{"type":"string"}}`,
	`{"additionalItems":false}`,
	`{"additionalItems":{"multipleOf":2}}`,
	`{"items":{"type":"integer"},"additionalItems":false}`,
	`{"propertyNames":{"maxLength":2,"pattern":"^[a-z/~]+$","not":{"const":"ab"}}}`,
	`{"properties":{"p":{"propertyNames":{"enum":["a","b"]},"additionalProperties":{"type":"integer"}}}}`,
	`{"properties":{"role":{"const":"user"},"k":{}},"patternProperties":{"^R":{"type":"string"}},"additionalProperties":false}`,
	`{"properties":{"role":{"const":"user"}},"additionalProperties":{"type":"integer"}}`,
	`{"properties":{"a":{"properties":{"key":{"const":1}}}},"required":["A"],"allOf":[{"properties":{"b":{}}}]}`,
	`{"not":{"properties":{"role":{"const":"admin"}}},"oneOf":[{"properties":{"a":{"if":{"properties":{"k":{}}}}}},{"required":["b"]}]}`,
}

// TestNative_CombinatorsMatchReference: the combinators on the fast path
// give the library's verdicts and failures, on bodies that pass and fail
// each branch.
func TestNative_CombinatorsMatchReference(t *testing.T) {
	c := NewCompiler(nil, nil)
	bodies := []string{`1`, `0`, `12`, `2.5`, `-1`, `3`, `"a"`, `"ab"`, `"abcd"`, `"ba"`, `null`, `true`, `[]`, `[0,1]`,
		`[1,2]`, `[1,2,3,4]`, `["ab","b","a"]`, `{}`, `{"a":1}`, `{"b":1}`, `{"a":1,"b":2}`, `{"a":0,"b":1}`, `{"a":"x"}`,
		`{"x":1}`, `{"forbidden":1}`, `{"items":["a@b.co",3,7,"x"]}`, `{"items":[]}`, `{"n":{"n":{"leaf":1}}}`, `{"n":{}}`,
		`{"k":"v"}`, `{"k":1}`, `{"k":1,"a":2,"b":3}`, `{"k":1,"a":2}`, `{"a":3}`, `{"a":5,"b":null}`, `{"a":-1,"b":"x"}`,
		`0.3`, `0.30000000000000004`, `1e2`, `-6`, `7.5`, `42`, `14`, `21`, `1e400`, `9223372036854775807`, `-9223372036854775808`,
		`[3, "x", 4.5, 6]`, `{"a":6}`, `{"a":6.0}`, `{"n":0.001}`, `{"n":0.0015,"m":1}`, `{"n":1,"m":1}`, `{"a":"x","b":1}`,
		`{"a":7,"ab":"x","b":4}`, `{"ab":3,"cb":"s","x/y~z":1,"q":null}`, `{"1":4,"2":3,"z":null,"w":1}`, `{"a":1,"b":2,"c/d":3}`,
		`{"a":1}`, `{"b":1,"k":2}`, `{"b":1,"k":1}`, `{"x~":1}`, `[1,2,6]`, `["x",7]`, `[]`, `{"l":["b",9],"m":1}`, `{"l":["a"]}`, `{"l":[]}`,
		`[1,1.0]`, `[1,1e0,10e-1]`, `[0,-0,0.0]`, `[-0.5,-5e-1]`, `[100,1e2,1E+2]`, `[0.1,0.10,1e-1]`, `[12,1.2e1,120e-1,12.000]`,
		`[1,2,"1"]`, `[null,false,true,null]`, `[{"a":1,"b":2},{"b":2,"a":1}]`, `[{"a":1},{"a":1,"b":2}]`, `[[1,2],[1,2.0]]`,
		`[[1,2],[2,1]]`, `["a","b","a"]`, `[[],{}]`, `[[],[]]`, `[{},{}]`, `[1e400,1e400]`, `[123456789012345678901234567890,1.2345678901234567890123456789e29]`,
		`[[[1,2],[3]],[[1,2e0],[3]]]`,
		`[1,"ab","x"]`, `[1,"a"]`, `[2,"ab"]`, `[1]`, `[1,"b","cd"]`, `[2,4,6,7]`, `{"ab":1,"c":2}`, `{"a~/":1,"zz":2,"Q":3}`,
		`{"p":{"a":1,"b":2}}`, `{"p":{"a":1,"c":"x"}}`, `{"":1}`, `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,29.0]`,
		`[{"k":0,"v":[0]},{"k":1,"v":[1]},{"k":2,"v":[2]},{"k":3,"v":[3]},{"k":4,"v":[4]},{"k":5,"v":[5]},{"k":6,"v":[6]},{"k":7,"v":[7]},{"k":8,"v":[8]},{"k":9,"v":[9]},{"k":10,"v":[10]},{"k":11,"v":[11]},{"k":12,"v":[12]},{"k":13,"v":[13]},{"k":14,"v":[14]},{"k":15,"v":[15]},{"k":16,"v":[16]},{"k":17,"v":[17]},{"k":18,"v":[18]},{"k":19,"v":[19]},{"k":20,"v":[20]},{"k":21,"v":[21]},{"k":22,"v":[22]},{"k":23,"v":[23]},{"k":24,"v":[24]},{"v":[7],"k":7e0}]`,
		`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]`,
		`{"Role":"admin"}`, `{"ROLE":1}`, `{"role":"user","Rx":1}`, `{"A":{"KEY":1}}`, `{"a":{"\u212aey":2}}`, `{"K":1,"B":2}`, `{"rOLE":"x","Ka":3}`}
	for i, src := range combinatorSchemas {
		s := compileSuiteSchema(t, c, fmt.Sprintf("comb-%d.json", i), json.RawMessage(src))
		require.True(t, s.Native(), src)
		matchesReference(t, s, src, bodies)
	}
}

// matchesReference asserts that s, compiled from src, gives each body the
// library's verdict and failures on the fast path (with memo and
// without: run).
func matchesReference(t *testing.T, s *Schema, src string, bodies []string) {
	t.Helper()
	for _, b := range bodies {
		v, err := jsonbody.Parse([]byte(b), 64)
		require.NoError(t, err)
		fastOK, fastDetails, refOK, refDetails := run(s, v)
		assert.Equal(t, refOK, fastOK, "%s on %s", src, b)
		assert.Equal(t, refDetails, fastDetails, "%s on %s", src, b)
	}
}

// FuzzNativeVsReference feeds random bodies to every schema in testdata
// (the suite's and the contracts') through both engines.
func FuzzNativeVsReference(f *testing.F) {
	c := NewCompiler(os.DirFS("../../testdata/contracts"), func(name string, data []byte) (any, error) {
		docs, err := yamljson.Parse(data)
		if err != nil {
			return nil, err
		}
		return yamljson.Value(docs[0].Body)
	})
	var schemas []*Schema
	for gi, g := range loadSuite(f) {
		schemas = append(schemas, compileSuiteSchema(f, c, fmt.Sprintf("suite-%d.json", gi), g.Schema))
		for _, tc := range g.Tests {
			f.Add([]byte(tc.Data))
		}
	}
	files, _ := filepath.Glob("../../testdata/contracts/*.*")
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		docs, err := yamljson.Parse(b)
		require.NoError(f, err)
		for di, d := range docs {
			v, err := yamljson.Value(d.Body)
			require.NoError(f, err)
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for ci, cv := range list {
				if sch, ok := cv.(map[string]any)["schema"]; ok {
					name := fmt.Sprintf("%s?d=%d&c=%d", filepath.Base(file), di, ci)
					s, err := c.Compile(name, sch)
					require.NoError(f, err, name)
					require.True(f, s.Native(), "%s: the contracts' schemas use the seed's keywords", name)
					schemas = append(schemas, s)
				}
			}
		}
	}
	bodies, _ := filepath.Glob("../../testdata/bodies/*.json")
	for _, file := range bodies {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	for i, src := range combinatorSchemas {
		schemas = append(schemas, compileSuiteSchema(f, c, fmt.Sprintf("comb-%d.json", i), json.RawMessage(src)))
	}
	for _, b := range []string{`{"a":1,"b":2}`, `{"items":["a@b.co",3,7,"x"]}`, `{"n":{"n":{"leaf":1}}}`, `[1,2,3]`, `{"k":1,"a":2,"b":3}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonbody.Parse(data, 64)
		if err != nil {
			return
		}
		for _, s := range schemas {
			fastOK, fastDetails, refOK, refDetails := run(s, v)
			if fastOK != refOK || !slices.Equal(fastDetails, refDetails) {
				t.Fatalf("%s on %s:\nfast %v %v\nref  %v %v", s.s.Location, data, fastOK, fastDetails, refOK, refDetails)
			}
		}
	})
}

// TestNative_PointerSegments: the fast path steps into declared members by
// their pointer segments, computed at compile time; its pointers are the
// library's, for names that need escaping, at the root and below, under
// arrays, for failures in a member and for missing required ones.
func TestNative_PointerSegments(t *testing.T) {
	c := NewCompiler(nil, nil)
	s := compileSuiteSchema(t, c, "segments.json", json.RawMessage(`{
		"type": "object", "required": ["a/b", "m~n", "~/"],
		"properties": {
			"a/b": {"type": "integer"},
			"m~n": {"type": "array", "items": {"type": "object", "required": ["x/y", "q"],
				"properties": {"x/y": {"type": "string"}, "~0": {"type": "object", "required": ["/"]}}}},
			"plain": {"type": "object", "additionalProperties": {"type": "string"}}
		}
	}`))
	require.True(t, s.Native())
	for _, body := range []string{
		`{}`,
		`{"a/b": "1", "m~n": [{}, {"x/y": 1, "q": 0, "~0": {}}], "~/": 0}`,
		`{"a/b": 1, "m~n": [{"x/y": "s", "q": 0, "~0": {"/": 1}}], "~/": 0, "plain": {"k/~": 1}}`,
		`{"m~n": 1, "plain": 2}`,
	} {
		v, err := jsonbody.Parse([]byte(body), 64)
		require.NoError(t, err)
		fastOK, fast, refOK, ref := run(s, v)
		assert.Equal(t, refOK, fastOK, body)
		assert.Equal(t, ref, fast, body)
	}
	v, _ := jsonbody.Parse([]byte(`{"a/b": "1", "m~n": [{"x/y": 1}]}`), 64)
	_, fast, _, _ := run(s, v)
	assert.Equal(t, []detail{
		{"/a~1b", "must be an integer, not a string"},
		{"/m~0n/0/q", "is required"},
		{"/m~0n/0/x~1y", "must be a string, not a number"},
		{"/~0~1", "is required"},
	}, fast)
}

// TestNative_CompiledOnFirstValidate: a schema's native fast path is not
// compiled with the schema but by the first validation, once, whatever the
// number of requests that reach it together, and they all get the verdict
// and the failures the library gives.
func TestNative_CompiledOnFirstValidate(t *testing.T) {
	s := compile(t, nil, `{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "maximum": 9}}}`)
	require.Nil(t, s.fast, "compiled with the schema")
	bodies := []string{`{"n": 3}`, `{"n": 30}`, `{}`, `{"n": "x"}`}
	want := make([][]detail, len(bodies))
	for i, b := range bodies {
		v, err := jsonbody.Parse([]byte(b), 64)
		require.NoError(t, err)
		_, want[i] = collect(func(add func(string, string)) bool { return s.Reference(v.Any(), failure.ReportFunc(add)) })
	}
	require.Nil(t, s.fast, "compiled by the library's validation")
	var wg sync.WaitGroup
	got := make([][]detail, 8*len(bodies))
	for i := range got {
		wg.Go(func() {
			v, err := jsonbody.Parse([]byte(bodies[i%len(bodies)]), 64)
			if err != nil {
				panic(err)
			}
			_, got[i] = collect(func(add func(string, string)) bool { return s.Validate(v, failure.ReportFunc(add)) })
		})
	}
	wg.Wait()
	require.NotNil(t, s.fast, "not compiled by the first validation")
	first := s.fast
	for i := range got {
		assert.Equal(t, want[i%len(bodies)], got[i], bodies[i%len(bodies)])
	}
	assert.True(t, s.Native())
	assert.Same(t, first, s.fast, "compiled twice")
}

// TestNative_PanickingCompileLeavesTheLibrary: a native compile that
// panics (here: of no schema at all) leaves the fast path off, so that the
// library validates, instead of failing the request that triggered it.
func TestNative_PanickingCompileLeavesTheLibrary(t *testing.T) {
	assert.Panics(t, func() { compileNative(nil) }, "the case no longer panics: find another")
	before := nativePanics.Load()
	s := &Schema{}
	assert.NotPanics(t, func() { assert.Nil(t, s.native()) })
	assert.False(t, s.Native())
	assert.Equal(t, before+1, nativePanics.Load(), "counted once")
	nativePanics.Add(-1) // the tests' own; TestMain holds the rest at zero
}

// TestMain fails the package's tests if any native compile panicked
// outside the test that makes one: such a schema would be validated by
// the library, so no verdict shows it.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := nativePanics.Load(); n != 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "%d native compiles panicked (the library validated instead)\n", n)
		code = 1
	}
	os.Exit(code)
}

// TestNative_MatchStopsAtFirstFailure: where only whether a value
// matches counts (not, if, a branch of oneOf after one matched), the
// library stops at the value's first failure; the fast path must too. A schema that applies itself twice to a member
// (allOf of two $refs, or properties and patternProperties) and fails
// only at the bottom would otherwise take time exponential in the body's
// depth: 2^40 checks for a body of 40 nested objects, where the library
// takes microseconds.
func TestNative_MatchStopsAtFirstFailure(t *testing.T) {
	c := NewCompiler(nil, nil)
	twice := []string{
		`{"required":["z"],"properties":{"a":{"allOf":[{"$ref":"#/definitions/t"},{"$ref":"#/definitions/t"}]}}}`,
		`{"required":["z"],"properties":{"a":{"$ref":"#/definitions/t"}},"patternProperties":{"^a$":{"$ref":"#/definitions/t"}}}`,
		`{"properties":{"a":{"$ref":"#/definitions/t"}},"additionalProperties":false,"patternProperties":{"a":{"$ref":"#/definitions/t"}},"minProperties":2}`,
		`{"required":["z"],"not":{"properties":{"a":{"$ref":"#/definitions/t"}}},"anyOf":[{"properties":{"a":{"$ref":"#/definitions/t"}}}]}`,
	}
	uses := []string{
		`{"not":{"$ref":"#/definitions/t"}}`,
		`{"if":{"$ref":"#/definitions/t"},"then":false}`,
		`{"oneOf":[true,{"$ref":"#/definitions/t"}]}`,
	}
	body := strings.Repeat(`{"a":`, 40) + `{}` + strings.Repeat(`}`, 40)
	v, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	for i, tw := range twice {
		for j, use := range uses {
			src := use[:len(use)-1] + `,"definitions":{"t":` + tw + `}}`
			s := compileSuiteSchema(t, c, fmt.Sprintf("twice-%d-%d.json", i, j), json.RawMessage(src))
			require.True(t, s.Native(), src)
			done := make(chan struct{})
			var fastOK, refOK bool
			var fast, ref []detail
			go func() {
				fastOK, fast, refOK, ref = run(s, v)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: still validating after 5 s", src)
			}
			assert.Equal(t, refOK, fastOK, src)
			assert.Equal(t, ref, fast, src)
		}
	}
}

// firstOnly is a reporter that takes one failure.
type firstOnly struct{ got []string }

func (f *firstOnly) Wants() bool              { return len(f.got) == 0 }
func (f *firstOnly) Add(path, message string) { f.got = append(f.got, path+" "+message) }

// TestNative_PatternsInOneOrder: the fast path tried the patterns of
// patternProperties in map order, drawn anew at each compile, so a
// member several patterns fail made a list of capped length (a
// violation's 100 details) take a different failure from load to load,
// where the errors doc promises the list depends on the request only.
// The patterns are tried in the order of their sources.
func TestNative_PatternsInOneOrder(t *testing.T) {
	const src = `{"patternProperties":{"^a":{"type":"string"},"a$":{"type":"boolean"},"^aa":{"minimum":5},"aa$":{"multipleOf":2},"^a.":{"maximum":0},"^.a":{"type":"null"}}}`
	body, err := jsonbody.Parse([]byte(`{"aa":1}`), 64)
	require.NoError(t, err)
	seen := map[string]bool{}
	for range 40 {
		s, err := NewCompiler(nil, nil).Compile("p.json", decode(t, src))
		require.NoError(t, err)
		require.True(t, s.Native())
		var rep firstOnly
		require.False(t, s.Validate(body, &rep))
		require.Len(t, rep.got, 1)
		seen[rep.got[0]] = true
	}
	assert.Len(t, seen, 1, "%v", seen)
}

// sharedTwiceSchemas lead two keywords to one schema that recurses into
// a member: each level of the body checks the member twice (properties
// and patternProperties; a base type reached by allOf and the type's own
// properties, the usual way inheritance is written; anyOf, oneOf and not,
// whose schemas are only asked for a verdict), 2^depth checks without
// memo.
var sharedTwiceSchemas = []string{
	`{"type":"object","properties":{"c":{"$ref":"#"}},"patternProperties":{"^c":{"$ref":"#"}}}`,
	`{"definitions":{"base":{"type":"object","properties":{"c":{"$ref":"#"},"n":{"type":"integer"}}}},"allOf":[{"$ref":"#/definitions/base"}],"properties":{"c":{"$ref":"#"},"k":{"maxLength":2}}}`,
	`{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"$ref":"#"},{"type":"integer"}]}}}`,
	`{"type":"object","properties":{"c":{"oneOf":[{"$ref":"#"},{"allOf":[{"$ref":"#"}],"required":["z"]}]}}}`,
	`{"type":"object","properties":{"c":{"not":{"not":{"$ref":"#"}}, "if":{"$ref":"#"},"then":{"$ref":"#"}}}}`,
}

// nested is a body of depth objects each holding the next under "c"; the
// innermost holds leaf under "c", and extra beside it at every level.
func nested(depth int, leaf, extra string) string {
	return strings.Repeat(`{`+extra+`"c":`, depth) + leaf + strings.Repeat(`}`, depth)
}

// TestNative_SchemaMetTwiceMatchesReference: with memo on (past the
// budget of such small bodies), the fast path still gives the library's
// verdicts and every failure the library lists, repeats included.
func TestNative_SchemaMetTwiceMatchesReference(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, src := range sharedTwiceSchemas {
		s := compileSuiteSchema(t, c, fmt.Sprintf("twice-%d.json", i), json.RawMessage(src))
		require.True(t, s.Native(), src)
		for _, depth := range []int{1, 2, 5, 9, 11} {
			matchesReference(t, s, src, []string{nested(depth, `{}`, ``), nested(depth, `1`, ``), nested(depth, `"x"`, ``),
				nested(depth, `{"z":1}`, `"n":1,`), nested(depth, `{}`, `"n":"x",`), nested(depth, `{}`, `"k":"long",`),
				nested(depth, `{"n":1.5}`, `"k":"ab",`), nested(depth, `1`, `"z":1,`)})
		}
	}
}

// TestNative_SchemaMetTwiceBoundedWork: on bodies 60 levels deep (the
// default depth limit is 64), valid and failing, a run's checks stay
// within a few times its memo budget, with a reporter that lists at most
// 100 failures as the guard's does; without memo these are 2^60.
func TestNative_SchemaMetTwiceBoundedWork(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, src := range sharedTwiceSchemas {
		s := compileSuiteSchema(t, c, fmt.Sprintf("twice-%d.json", i), json.RawMessage(src))
		for _, b := range []string{nested(60, `{}`, `"n":1,`), nested(60, `1`, ``), nested(60, `{"z":1}`, `"n":"x","k":"long",`)} {
			r, rep, doc := checked(t, s, b)
			assert.LessOrEqual(t, r.calls, 4*memoBudget(doc.Nodes(), doc.Size()), "%s on %s", src, b)
			assert.LessOrEqual(t, rep.n, 100)
			t.Logf("%s: %d checks, valid %v, %d failures", src, r.calls, r.valid, rep.n)
		}
	}
}

// checked runs the fast path of s over body with a reporter that takes
// 100 failures, as the guard's does, and returns the run (its checks in
// calls) and the reporter.
func checked(t *testing.T, s *Schema, body string) (*nativeRun, *listOf100, *jsonbody.Doc) {
	t.Helper()
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	r, rep := new(nativeRun), &listOf100{}
	r.start(rep, doc)
	r.validate(s.native(), doc.Root())
	return r, rep, doc
}

// listOf100 takes 100 failures, as a violation lists at most.
type listOf100 struct{ n int }

func (l *listOf100) Wants() bool        { return l.n < 100 }
func (l *listOf100) Add(string, string) { l.n++ }

// TestNative_SchemaMetTwiceBoundedWork_WideValues: a value checked again
// and again before memo is on costs the budget its work, not one check: a
// wide object and one member of a long name (its member names matched
// against patternProperties), a long string (its pattern) and the items
// uniqueItems compares, 30 levels down a shared schema, in a body whose
// other values make the budget large. Counted in the bytes the schema's patterns read and uniqueItems
// hashes, at most a few budgets' worth; counted in checks, they read 4e10
// (8 minutes for the wide object, 5 s for the string, 11 s for
// uniqueItems). The hashes were not counted, so the uniqueItems case held
// whatever uniqueItems cost the budget.
func TestNative_SchemaMetTwiceBoundedWork_WideValues(t *testing.T) {
	c := NewCompiler(nil, nil)
	s := compileSuiteSchema(t, c, "twice-time.json", json.RawMessage(`{"type":"object",
		"properties":{"c":{"$ref":"#"},"s":{"pattern":"^[a-z]*$"},"u":{"uniqueItems":true}},
		"patternProperties":{"^c":{"$ref":"#"}}}`))
	read := 0 // units of 16 bytes the patterns read or uniqueItems hashes, and one a match or item
	eachNative(s.native(), func(n *native) {
		if n.pattern != nil {
			n.pattern = countingRegexp{n.pattern, &read}
		}
		for i := range n.patterns {
			n.patterns[i].re = countingRegexp{n.patterns[i].re, &read}
		}
	})
	hash := hashOf // and one for each item uniqueItems hashes, and each 16 bytes of it
	t.Cleanup(func() { hashOf = hash })
	hashOf = func(v jsonbody.Value) uint64 {
		read += weight(v, math.MaxInt)
		return hash(v)
	}
	var wide strings.Builder
	wide.WriteString(`{`)
	for i := range 10000 {
		fmt.Fprintf(&wide, `"x%d":0,`, i)
	}
	wide.WriteString(`"s":"a"}`)
	items := make([]string, 21)
	for i := range items {
		items[i] = fmt.Sprintf(`{"a":"%d%s"}`, i, strings.Repeat("x", 20000))
	}
	for name, leaf := range map[string]string{
		"wide object": wide.String(),
		"long string": `{"s":"` + strings.Repeat("a", 1<<20-100) + `"}`,
		"uniqueItems": `{"u":[` + strings.Join(items, ",") + `]}`,
		"long name":   `{"` + strings.Repeat("x", 1<<20-100) + `":0}`,
	} {
		body := `{"pad":[` + strings.Repeat("0,", max(0, (1<<20-len(leaf))/2-200)) + `0],` + nested(30, leaf, ``)[1:]
		doc, err := jsonbody.Parse([]byte(body), 64)
		require.NoError(t, err, name)
		read = 0
		assert.True(t, s.Validate(doc, &listOf100{}), name)
		assert.LessOrEqual(t, read, 4*memoBudget(doc.Nodes(), doc.Size()), name)
		t.Logf("%s: %d bytes, %d units read by the patterns and hashes", name, len(body), read)
	}
}

// countingRegexp counts the work of the matches of a pattern in *n: a
// unit a match and one for each 16 bytes it reads.
type countingRegexp struct {
	jsonschema.Regexp
	n *int
}

func (c countingRegexp) MatchString(s string) bool {
	*c.n += 1 + len(s)>>4
	return c.Regexp.MatchString(s)
}

// TestNative_SharedSchemasThatDoNotRecurseKeepNoMemo: items checked by
// fifty definitions, each named twice by allOf, repeat each check once
// per item whatever the body: memo is not for them (a body of 100,000
// items made 4.8 million entries of a map memo, 426 MB and 16 times the
// time of the walk without it). The run allocates nothing.
func TestNative_SharedSchemasThatDoNotRecurseKeepNoMemo(t *testing.T) {
	var refs, defs []string
	for k := range 50 {
		refs = append(refs, fmt.Sprintf(`{"$ref":"#/definitions/d%d"}`, k), fmt.Sprintf(`{"$ref":"#/definitions/d%d"}`, k))
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"integer","minimum":-%d}`, k, k))
	}
	s := compileSuiteSchema(t, NewCompiler(nil, nil), "not-recursive.json", json.RawMessage(
		`{"type":"array","items":{"allOf":[`+strings.Join(refs, ",")+`]},"definitions":{`+strings.Join(defs, ",")+`}}`))
	doc, err := jsonbody.Parse([]byte("["+strings.Repeat("0,", 100_000)+"0]"), 64)
	require.NoError(t, err)
	rep := &listOf100{}
	require.True(t, s.Validate(doc, rep))
	assert.Zero(t, testing.AllocsPerRun(3, func() { s.Validate(doc, rep) }))
	memos := 0
	eachNative(s.native(), func(n *native) {
		if n.memo >= 0 {
			memos++
		}
	})
	assert.Zero(t, memos, "no schema here recurses")
}

// TestNative_MemoRowsBounded: a row of memo is a quarter byte per value
// of the body, for each schema memo's verdicts are kept for. A schema of
// 500 definitions that recurse and that two keywords lead to, a 1 MiB
// body whose padding (checked ten times an item) turns memo on, and an
// object that names each definition once: 500 rows of 128 KiB, 64 MB for
// one request. The rows now hold at most about the body's size; the
// verdicts past them go to a map, an entry for each check.
func TestNative_MemoRowsBounded(t *testing.T) {
	const defs = 500
	var props, ds, allOf []string
	for k := range defs {
		props = append(props, fmt.Sprintf(`"k%d":{"$ref":"#/definitions/d%d"}`, k, k))
		ds = append(ds, fmt.Sprintf(`"d%d":{"properties":{"x":{"$ref":"#/definitions/d%d"}}}`, k, k))
	}
	for range 10 {
		allOf = append(allOf, `{"type":"integer"}`)
	}
	s := compileSuiteSchema(t, NewCompiler(nil, nil), "rows.json", json.RawMessage(
		`{"properties":{"pad":{"items":{"allOf":[`+strings.Join(allOf, ",")+`]}},"z":{"properties":{`+
			strings.Join(props, ",")+`}}},"definitions":{`+strings.Join(ds, ",")+`}}`))
	require.True(t, s.Native())
	var z []string
	for k := range defs {
		z = append(z, fmt.Sprintf(`"k%d":{"x":{"x":0}}`, k))
	}
	zs := `{` + strings.Join(z, ",") + `}`
	body := `{"pad":[` + strings.Repeat("0,", (1<<20-len(zs))/2-20) + `0],"z":` + zs + `}`
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.True(t, s.Validate(doc, &listOf100{}))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4*len(body)), "bytes allocated for a body of %d", len(body))
}

// TestNative_MemoSpillBounded: past the rows, a schema applying many
// recursive definitions to every value would make one map entry per
// (definition, value): the map is a cache, kept to rowsCap/16 entries.
func TestNative_MemoSpillBounded(t *testing.T) {
	const defs = 200
	var refs, ds []string
	for k := range defs {
		refs = append(refs, fmt.Sprintf(`{"$ref":"#/definitions/d%d"}`, k))
		ds = append(ds, fmt.Sprintf(`"d%d":{"properties":{"x":{"$ref":"#/definitions/d%d"}}}`, k, k))
	}
	s := compileSuiteSchema(t, NewCompiler(nil, nil), "spill.json", json.RawMessage(
		`{"items":{"allOf":[`+strings.Join(refs, ",")+`]},"definitions":{`+strings.Join(ds, ",")+`}}`))
	require.True(t, s.Native())
	body := `[` + strings.Repeat(`{"x":{"x":0}},`, 20_000) + `0]`
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	r := new(nativeRun)
	r.start(&listOf100{}, doc)
	r.budget = 0
	r.validate(s.native(), doc.Root())
	require.True(t, r.valid)
	assert.LessOrEqual(t, r.rowBytes, r.rowsCap)
	assert.LessOrEqual(t, len(r.spill), r.rowsCap/16)
}

// TestNative_ChainOfSharedSchemasBoundedWork: a chain of definitions that
// do not recurse, each naming the next twice for its member c (properties
// and patternProperties), or twice in allOf for the value itself, checks
// the last one 2^length times: memo was only for schemas that recurse, so
// a body 20 levels deep took 5 million checks (24 levels: 84 million, 1.2
// s; 30: over a minute). A shared schema that 32 or more ways from the
// root lead to keeps its verdicts too.
func TestNative_ChainOfSharedSchemasBoundedWork(t *testing.T) {
	const length = 20
	chain := func(link string, length int) (*Schema, string) {
		var ds []string
		for k := range length {
			ds = append(ds, fmt.Sprintf(`"d%d":{`+link+`}`, k, k+1, k+1))
		}
		ds = append(ds, fmt.Sprintf(`"d%d":{"type":"object","required":["n"]}`, length))
		src := `{"$ref":"#/definitions/d0","definitions":{` + strings.Join(ds, ",") + `}}`
		s := compileSuiteSchema(t, NewCompiler(nil, nil), "chain.json", json.RawMessage(src))
		require.True(t, s.Native())
		return s, src
	}
	for _, link := range []string{
		`"type":"object","properties":{"c":{"$ref":"#/definitions/d%d"}},"patternProperties":{"^c":{"$ref":"#/definitions/d%d"}}`,
		`"allOf":[{"$ref":"#/definitions/d%d"},{"$ref":"#/definitions/d%d"}]`,
	} {
		s, _ := chain(link, length)
		for _, b := range []string{nested(length, `{"n":1}`, ``), nested(length, `{}`, ``), `{"n":1}`, `{}`} {
			r, _, doc := checked(t, s, b)
			assert.LessOrEqual(t, r.calls, 4*memoBudget(doc.Nodes(), doc.Size()), "%s on %s", link, b)
		}
		short, src := chain(link, 7) // past manyPaths, short enough for the library
		matchesReference(t, short, src, []string{nested(7, `{"n":1}`, ``), nested(7, `{}`, ``), nested(3, `{}`, ``), `{"n":1}`, `{}`, `1`})
	}
}

// TestNative_MemoSpillKeepsCostlyVerdicts: spill was emptied whole at its
// cap, so a verdict that took a walk of a large value was dropped between
// its two uses by the many cheap verdicts of a sibling: a schema checking
// member c twice (allOf of two schemas naming it), each level's big array
// checked by 200 definitions (whose rows fill the cap, leaving the
// recursion to spill), and c before big in the body, so that 10 levels
// of a 9 KB body took 159 million checks (2^depth walks, as without
// memo). The cheaper half is dropped now: 20 levels take 16 million (880
// checks a value, 4.4 for each definition).
func TestNative_MemoSpillKeepsCostlyVerdicts(t *testing.T) {
	const defs, items = 200, 300
	var refs, ds []string
	for k := range defs {
		refs = append(refs, fmt.Sprintf(`{"$ref":"#/definitions/d%d"}`, k))
		ds = append(ds, fmt.Sprintf(`"d%d":{"properties":{"x":{"$ref":"#/definitions/d%d"}}}`, k, k))
	}
	src := `{"$ref":"#/definitions/R","definitions":{"R":{"allOf":[` +
		`{"properties":{"c":{"$ref":"#/definitions/R"},"big":{"items":{"allOf":[` + strings.Join(refs, ",") + `]}}}},` +
		`{"properties":{"c":{"$ref":"#/definitions/R"}},"required":["big"]}]},` + strings.Join(ds, ",") + `}}`
	s := compileSuiteSchema(t, NewCompiler(nil, nil), "costly.json", json.RawMessage(src))
	require.True(t, s.Native())
	arr := `[` + strings.Repeat(`{"x":{}},`, items) + `{"x":0}]`
	for _, leaf := range []string{`{"big":[]}`, `{}`} {
		for _, depth := range []int{6, 10} {
			if leaf == `{}` && depth > 6 {
				continue
			}
			body := strings.Repeat(`{"c":`, depth) + leaf + strings.Repeat(`,"big":`+arr+`}`, depth)
			r, _, doc := checked(t, s, body)
			assert.Positive(t, len(r.spill), "the recursion's verdicts are in spill")
			assert.LessOrEqual(t, len(r.spill), r.rowsCap/16)
			if leaf != `{}` { // a failing value is walked again while its failures are listed
				assert.LessOrEqual(t, r.calls, 8*defs*doc.Nodes(), "depth %d", depth)
			}
			if depth == 6 { // the same details as a run without memo
				ok, got := collect(func(add func(string, string)) bool { return s.Validate(doc, failure.ReportFunc(add)) })
				wantOK, want := collect(func(add func(string, string)) bool {
					r := new(nativeRun)
					r.start(failure.ReportFunc(add), doc)
					r.budget = 1 << 62
					r.validate(s.native(), doc.Root())
					return r.valid
				})
				assert.Equal(t, wantOK, ok)
				assert.Equal(t, want, got)
			}
		}
	}
}

// TestNative_SchemaMetTwiceBoundedWork_RegexFormat: format regex compiles
// the string, at hundreds of nanoseconds a byte (thousands for Unicode
// classes: `[\pL\pN]`), not the few a pattern's match reads; it was
// charged as a match (a unit a 16 bytes), so a long regex-formatted
// string 30 levels down a schema met twice per level was compiled again
// and again until memo came on: 860 times for 80 KB in a 1 MiB body
// (minutes). Counted in the bytes the format compiles, it is now about
// one walk's worth: the body's size.
func TestNative_SchemaMetTwiceBoundedWork_RegexFormat(t *testing.T) {
	c := NewCompiler(nil, nil)
	s := compileSuiteSchema(t, c, "twice-regex.json", json.RawMessage(`{"type":"object",
		"properties":{"c":{"$ref":"#"},"s":{"type":"string","format":"regex"}},
		"patternProperties":{"^c":{"$ref":"#"}}}`))
	compiled := 0
	eachNative(s.native(), func(n *native) {
		if check := n.formatOK; check != nil {
			n.formatOK = func(s string) bool { compiled += len(s); return check(s) }
		}
	})
	leaf := `{"s":"` + strings.Repeat("a", 80<<10) + `"}`
	body := `{"pad":[` + strings.Repeat("0,", (1<<20-len(leaf))/2-200) + `0],` + nested(30, leaf, ``)[1:]
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	assert.True(t, s.Validate(doc, &listOf100{}))
	assert.LessOrEqual(t, compiled, len(body), "bytes compiled by format regex")
	t.Logf("%d bytes, %d compiled by format regex", len(body), compiled)
}

// eachNative calls f once on every node of the fast path's tree from n.
func eachNative(n *native, f func(*native)) {
	seen := map[*native]bool{}
	var visit func(n *native)
	visit = func(n *native) {
		if seen[n] {
			return
		}
		seen[n] = true
		f(n)
		n.each(visit)
	}
	visit(n)
}
