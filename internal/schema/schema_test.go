package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

type detail struct{ Path, Message string }

func decode(t *testing.T, src string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(src))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

func compile(t *testing.T, files fstest.MapFS, src string) *Schema {
	t.Helper()
	doc := decode(t, src)
	c := NewCompiler(files, nil)
	if files == nil {
		c = NewCompiler(nil, nil) // a nil MapFS is not a nil fs.FS
	}
	s, err := c.Compile("test.yaml", doc)
	require.NoError(t, err)
	return s
}

func validate(t *testing.T, s *Schema, instance string) []detail {
	t.Helper()
	v, err := jsonbody.Parse([]byte(instance), 64)
	require.NoError(t, err)
	var got []detail
	ok := s.Validate(v, failure.ReportFunc(func(p, m string) { got = append(got, detail{p, m}) }))
	assert.Equal(t, len(got) == 0, ok)
	return got
}

func TestValidate_SeedKeywords(t *testing.T) {
	s := compile(t, nil, `{
		"type": "object",
		"required": ["email", "age", "items"],
		"additionalProperties": false,
		"properties": {
			"email": {"type": "string", "format": "email"},
			"age": {"type": "integer", "minimum": 18, "maximum": 130},
			"role": {"enum": ["user", "admin"]},
			"price": {"type": "number", "minimum": 0.01},
			"items": {"type": "array", "minItems": 1, "items": {"type": "string"}},
			"a/b": {"type": "string"},
			"m~n": {"type": "string"}
		}
	}`)
	assert.Empty(t, validate(t, s, `{"email":"ada@example.com","age":36,"role":"admin","price":0.01,"items":["x"]}`))

	tests := []struct {
		name, body string
		want       []detail
	}{
		{"required", `{"age":20,"items":["x"]}`, []detail{{"/email", "is required"}}},
		{"additionalProperties", `{"email":"a@b.co","age":20,"items":["x"],"extra":1}`, []detail{{"/extra", "is not allowed"}}},
		{"type", `{"email":"a@b.co","age":"20","items":["x"]}`, []detail{{"/age", "must be an integer, not a string"}}},
		{"type integer for 1.5", `{"email":"a@b.co","age":20.5,"items":["x"]}`, []detail{{"/age", "must be an integer, not a number"}}},
		{"minimum", `{"email":"a@b.co","age":17,"items":["x"]}`, []detail{{"/age", "must be >= 18"}}},
		{"maximum", `{"email":"a@b.co","age":131,"items":["x"]}`, []detail{{"/age", "must be <= 130"}}},
		{"decimal minimum", `{"email":"a@b.co","age":20,"items":["x"],"price":0.001}`, []detail{{"/price", "must be >= 0.01"}}},
		{"enum", `{"email":"a@b.co","age":20,"items":["x"],"role":"root"}`, []detail{{"/role", `must be one of "user", "admin"`}}},
		{"format", `{"email":"not-an-email","age":20,"items":["x"]}`, []detail{{"/email", "must be a valid email address"}}},
		{"minItems", `{"email":"a@b.co","age":20,"items":[]}`, []detail{{"/items", "must have at least 1 item"}}},
		{"items", `{"email":"a@b.co","age":20,"items":["x",2]}`, []detail{{"/items/1", "must be a string, not a number"}}},
		{"pointer escaping", `{"email":"a@b.co","age":20,"items":["x"],"a/b":1,"m~n":2}`, []detail{{"/a~1b", "must be a string, not a number"}, {"/m~0n", "must be a string, not a number"}}},
		{"all failures", `{"age":1,"items":[],"x":1,"y":2}`, []detail{{"/age", "must be >= 18"}, {"/email", "is required"}, {"/items", "must have at least 1 item"}, {"/x", "is not allowed"}, {"/y", "is not allowed"}}},
		{"root type", `[]`, []detail{{"", "must be an object, not an array"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validate(t, s, tt.body)
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestValidate_Formats(t *testing.T) {
	tests := []struct{ format, good, bad, msg string }{
		{"email", "ada@example.com", "ada.example.com", "must be a valid email address"},
		{"uri", "https://example.com/a?b=c", "not a uri", "must be a valid URI"},
		{"uuid", "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "6f1c2a9e-8d3b-4c5a-9e7f", "must be a valid UUID"},
		{"date", "2026-11-21", "2026-02-30", "must be a valid date (YYYY-MM-DD)"},
		{"date-time", "2026-11-21T10:15:00Z", "2026-11-21 10:15", "must be a valid date-time (RFC 3339)"},
		{"ipv4", "192.168.0.1", "192.168.0.256", "must be a valid IPv4 address"},
		{"ipv6", "2001:db8::1", "2001:db8:::1", "must be a valid IPv6 address"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			s := compile(t, nil, `{"type":"string","format":"`+tt.format+`"}`)
			assert.Empty(t, validate(t, s, `"`+tt.good+`"`))
			assert.Equal(t, []detail{{"", tt.msg}}, validate(t, s, `"`+tt.bad+`"`))
		})
	}
}

func TestValidate_BigNumbersKeepPrecision(t *testing.T) {
	s := compile(t, nil, `{"type":"integer","maximum":9007199254740993}`)
	assert.Empty(t, validate(t, s, `9007199254740993`))
	assert.Equal(t, []detail{{"", "must be <= 9007199254740993"}}, validate(t, s, `9007199254740994`), "float64 would round both to the same value")
}

func TestCompile_Refs(t *testing.T) {
	files := fstest.MapFS{
		"schemas/address.json": {Data: []byte(`{"type":"object","required":["city"],"properties":{"city":{"type":"string"},"geo":{"$ref":"geo.json"}}}`)},
		"schemas/geo.json":     {Data: []byte(`{"type":"object","properties":{"lat":{"type":"number","maximum":90}}}`)},
	}
	s := compile(t, files, `{
		"definitions": {"qty": {"type":"integer","minimum":1}},
		"type":"object",
		"properties": {"q": {"$ref":"#/definitions/qty"}, "address": {"$ref":"schemas/address.json"}}
	}`)
	assert.Empty(t, validate(t, s, `{"q":1,"address":{"city":"Paris","geo":{"lat":48.8}}}`))
	assert.ElementsMatch(t, []detail{{"/q", "must be >= 1"}, {"/address/city", "is required"}, {"/address/geo/lat", "must be <= 90"}},
		validate(t, s, `{"q":0,"address":{"geo":{"lat":91}}}`))
}

func TestCompile_Errors(t *testing.T) {
	files := fstest.MapFS{"schemas/a.json": {Data: []byte(`{"type":"string"}`)}}
	tests := []struct {
		name, src, msg string
		pointer        []string
	}{
		{"bad type name", `{"properties":{"age":{"type":"intger"}}}`, "invalid schema", []string{"properties", "age", "type"}},
		{"bad minimum", `{"minimum":"1"}`, "invalid schema", []string{"minimum"}},
		{"network ref", `{"$ref":"https://example.com/s.json"}`, "never fetched over the network", nil},
		{"escaping ref", `{"$ref":"../secret.json"}`, "leaves the contracts folder", nil},
		{"missing file", `{"$ref":"schemas/nope.json"}`, "schemas/nope.json", nil},
		{"bad pointer", `{"$ref":"#/definitions/nope"}`, "nope", nil},
		{"bad regex", `{"pattern":"("}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			require.NoError(t, json.Unmarshal([]byte(tt.src), &doc))
			_, err := NewCompiler(files, nil).Compile("c.yaml", doc)
			require.Error(t, err)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Contains(t, se.Message, tt.msg)
			if tt.pointer != nil {
				assert.Equal(t, tt.pointer, se.Pointer)
			}
		})
	}
}

func TestCompile_RelativeRefWithoutFolder(t *testing.T) {
	_, err := NewCompiler(nil, nil).Compile("inline-0", map[string]any{"$ref": "schemas/a.json"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "need Options.ContractsDir")
}

func TestScanSkip(t *testing.T) {
	s := compile(t, nil, `{"type":"object","properties":{
		"html":{"type":"string","x-contractguard-scan":false},
		"note":{"type":"string","x-contractguard-scan":true},
		"plain":{"type":"string"},
		"posts":{"type":"array","items":{"$ref":"#/definitions/post"}},
		"meta":{"type":"object","additionalProperties":{"x-contractguard-scan":false}},
		"both":{"allOf":[{"properties":{"a":{"x-contractguard-scan":false}}},{"properties":{"b":{"x-contractguard-scan":false}}}]}},
		"definitions":{"post":{"type":"object","properties":{"body":{"x-contractguard-scan":false},"title":{"type":"string"}}}}}`)
	assert.True(t, s.Native(), "allOf runs on the fast path too")
	assert.True(t, compile(t, nil, `{"type":"object","properties":{"html":{"type":"string","x-contractguard-scan":false}}}`).Native(),
		"the annotation keeps a schema on the fast path")
	sk := s.Skip()
	require.NotNil(t, sk)
	assert.False(t, sk.Off)
	assert.True(t, sk.Props["html"].Off)
	assert.NotContains(t, sk.Props, "note")
	assert.NotContains(t, sk.Props, "plain")
	assert.True(t, sk.Props["posts"].Items.Props["body"].Off)
	assert.NotContains(t, sk.Props["posts"].Items.Props, "title")
	assert.True(t, sk.Props["meta"].Additional.Off)
	assert.True(t, sk.Props["both"].Props["a"].Off)
	assert.True(t, sk.Props["both"].Props["b"].Off)

	assert.Nil(t, compile(t, nil, `{"type":"object","properties":{"a":{"type":"string"}}}`).Skip())
	assert.True(t, compile(t, nil, `{"type":"object","x-contractguard-scan":false}`).Skip().Off)
	recursive := compile(t, nil, `{"$ref":"#/definitions/n","definitions":{"n":{"type":"object","properties":{"next":{"$ref":"#/definitions/n"},"raw":{"x-contractguard-scan":false}}}}}`)
	assert.True(t, recursive.Skip().Props["raw"].Off)

	// A declared property is not additional: an opt-out of
	// additionalProperties leaves it scanned. With patternProperties, a
	// name may be neither: the opt-out is not followed.
	extra := compile(t, nil, `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":{"x-contractguard-scan":false}}`).Skip()
	require.Contains(t, extra.Props, "text")
	assert.Nil(t, extra.Props["text"])
	assert.True(t, extra.Additional.Off)
	assert.Nil(t, compile(t, nil, `{"type":"object","patternProperties":{"^x":{}},"additionalProperties":{"x-contractguard-scan":false}}`).Skip())

	// In allOf, a name one schema lists and the other does not is
	// additional to the other, and its opt-out counts.
	mixed := compile(t, nil, `{"allOf":[
		{"properties":{"text":{}},"additionalProperties":{"x-contractguard-scan":false}},
		{"properties":{"html":{"properties":{"x":{"x-contractguard-scan":false}}}}}]}`).Skip()
	require.NotNil(t, mixed)
	assert.True(t, mixed.Props["html"].Off, "additional to the first")
	assert.Nil(t, mixed.Props["text"], "declared by the first, nothing in the second")
	assert.True(t, mixed.Additional.Off)
}

func TestScanKeyword_MustBeBoolean(t *testing.T) {
	_, err := NewCompiler(nil, nil).Compile("bad.json", decode(t, `{"properties":{"a":{"x-contractguard-scan":"no"}}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x-contractguard-scan must be true or false")
}

// TestScanKeyword_ValueAsWritten: the value refused is named as JSON: the
// string "false" read "not false", as if the boolean were refused, and
// null "not <nil>".
func TestScanKeyword_ValueAsWritten(t *testing.T) {
	for doc, want := range map[string]string{
		`{"x-contractguard-scan":"false"}`: `x-contractguard-scan must be true or false, not "false"`,
		`{"x-contractguard-scan":null}`:    `x-contractguard-scan must be true or false, not null`,
		`{"x-contractguard-scan":0}`:       `x-contractguard-scan must be true or false, not 0`,
	} {
		_, err := NewCompiler(nil, nil).Compile("bad.json", decode(t, doc))
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
	}
}

// TestSkip_ManyMutuallyRecursiveDefinitions: skipOf followed every path
// of a recursive schema that does not come back to a schema on it, which
// in a schema of many definitions that refer to one another are
// exponentially many: 18 such definitions (a typed contract of 18
// mutually recursive Go types) took seconds to compile, 22 over a minute,
// 40 never finished, at start-up. Paths that reach no opt-out are not
// followed; one that all paths reach is refused, saying why, once too
// many have been read.
func TestSkip_ManyMutuallyRecursiveDefinitions(t *testing.T) {
	schemaOf := func(n int, optOut bool) string {
		defs := make([]string, n)
		for i := range n {
			props := make([]string, 0, 5)
			for j := range 4 {
				props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/definitions/d%d"}`, j, (i*7+j*13+1)%n))
			}
			if optOut {
				props = append(props, `"raw":{"x-contractguard-scan":false}`)
			}
			defs[i] = fmt.Sprintf(`"d%d":{"type":"object","properties":{%s}}`, i, strings.Join(props, ","))
		}
		return `{"$ref":"#/definitions/d0","definitions":{` + strings.Join(defs, ",") + `}}`
	}
	type result struct {
		s   *Schema
		err error
	}
	for _, optOut := range []bool{false, true} {
		done := make(chan result, 1)
		go func() {
			s, err := NewCompiler(nil, nil).Compile("test.json", decode(t, schemaOf(40, optOut)))
			done <- result{s, err}
		}()
		select {
		case r := <-done:
			if !optOut {
				require.NoError(t, r.err)
				assert.Nil(t, r.s.Skip())
				continue
			}
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), "x-contractguard-scan: false: its definitions refer to one another in too many ways")
		case <-time.After(10 * time.Second):
			t.Fatalf("optOut=%v: compiling 40 mutually recursive definitions took over 10s", optOut)
		}
	}
	s := compile(t, nil, schemaOf(6, true)) // a few: read
	assert.True(t, s.Skip().Props["raw"].Off)
	assert.True(t, s.Skip().Props["p0"].Props["p1"].Props["raw"].Off)
}

// TestCompile_ErrorsTheSameEveryLoad: a schema with several problems was
// reported by the first the library found, which it finds in map order:
// a file two $refs away with three bad properties gave one of three
// messages, a different one from load to load (and from one lint to the
// next). The first by place is reported, every time.
func TestCompile_ErrorsTheSameEveryLoad(t *testing.T) {
	const bad = `{"properties":{"f":{"type":1},"b":{"type":2},"h":{"minimum":"x"},"d":{"type":3},"a":{"type":4},"g":{"type":5},"c":{"maxLength":-1},"e":{"type":6}}}`
	files := fstest.MapFS{"schemas/a.json": {Data: []byte(bad)}}
	for src, want := range map[string]string{
		bad:                         "/properties/a/type: invalid schema: must be one of",
		`{"$ref":"schemas/a.json"}`: "schemas/a.json: properties/a/type: invalid schema: must be one of",
		`{"minimum":"x","maxLength":-1,"type":"object","pattern":"(?=a)"}`: "/maxLength: invalid schema: must be >= 0",
	} {
		for range 50 {
			_, err := NewCompiler(files, nil).Compile("c.yaml", decode(t, src))
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), want), "%s: %v", src, err)
		}
	}
}

// TestScanSkip_NotBesidePrefixItems: in 2020-12, items beside prefixItems
// describes only the elements after theirs, but skipOf took an opt-out of
// items for every element: ["<script>…"] passed the scan unread at /0,
// which only prefixItems' {"type":"string"} describes (an opt-out counts
// in a draft-07 resource of a 2020-12 schema). Such items are not a
// schema of every element: not followed, scanned; nor do they say how
// the elements' numbers read.
func TestScanSkip_NotBesidePrefixItems(t *testing.T) {
	const optOut = `"$defs":{"d":{"$id":"d.json","$schema":"http://json-schema.org/draft-07/schema#","x-contractguard-scan":false,"type":"integer"}}`
	s := compile(t, nil, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array",
		"prefixItems":[{"type":"string"}],"items":{"$ref":"d.json"},`+optOut+`}`)
	assert.Nil(t, s.Skip(), "element 0 is no opt-out's")
	prefixed := compile(t, nil, `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"number"}],"items":{"type":"integer"}}`)
	assert.Equal(t, shape.NumAuto, prefixed.Numbers().Elements().Kind(), "element 0 is no integer")
	assert.Equal(t, []detail{{"/1", "must be an integer, not a string"}}, validate(t, s, `["<script>alert(1)</script>","x"]`))

	all := compile(t, nil, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","items":{"$ref":"d.json"},`+optOut+`}`)
	require.NotNil(t, all.Skip(), "without prefixItems, items is every element's")
	assert.True(t, all.Skip().Items.Off)
	numbers := compile(t, nil, `{"$schema":"https://json-schema.org/draft/2020-12/schema","items":{"type":"integer"}}`)
	assert.Equal(t, shape.NumInt, numbers.Numbers().Elements().Kind())
}

// TestFormatURI_BracketsOnlyAroundTheHost: the rule registered with the
// library's uri check allows [ and ] only around an IP literal host, but
// it took for the authority whatever followed the first "://" anywhere
// ("foo:bar://[x]", whose brackets are in its path; a "://" in a query),
// and a "]" anywhere in it ("http://a]/"): all passed as URIs.
func TestFormatURI_BracketsOnlyAroundTheHost(t *testing.T) {
	uri := FormatCheck("uri")
	for _, s := range []string{"foo:bar://[x]", "mailto:a@b?x=http://[x]", "a:b/c://[::1]/", "http://a]/", "http://[::1]]/", "urn:[x]"} {
		assert.False(t, uri(s), s)
	}
	for _, s := range []string{"http://[::1]/", "http://[::1]:80/p", "http://u@[::1]/", "https://example.com/a?b=c#d", "urn:isbn:0451450523"} {
		assert.True(t, uri(s), s)
	}
}

// TestCompilerLoop_SharedFileWalkedOnce: the schemas of a contract set
// that refer to one schema file walk it once, not once each (300
// contracts with a $ref into a file of 5,000 definitions loaded in 19 s,
// 8 s without the walk); a loop is still found in each schema that has
// one, in the shared file too.
func TestCompilerLoop_SharedFileWalkedOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"definitions":{`)
	const n = 2000
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"d%d":{"type":"object","properties":{"a":{"$ref":"#/definitions/d%d"},"b":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, i, (i+1)%n)
	}
	b.WriteString(`}}`)
	looping := strings.Replace(b.String(), `"d0":`, `"loop":{"properties":{"z":{"$ref":"#/definitions/d0"}},"allOf":[{"$ref":"#/definitions/loop"}]},"d0":`, 1)
	c := NewCompiler(fstest.MapFS{"shared.json": {Data: []byte(b.String())}, "looping.json": {Data: []byte(looping)}}, nil)
	schemas := make([]*Schema, 3)
	for i := range schemas {
		s, err := c.Compile(fmt.Sprintf("c%d.yaml", i), decode(t, fmt.Sprintf(`{"maxProperties":%d,"properties":{"x":{"$ref":"shared.json#/definitions/d0"}}}`, i+1)))
		require.NoError(t, err)
		schemas[i] = s
	}
	require.NoError(t, c.Loop(schemas[0], "c0.yaml"))
	allocs := testing.AllocsPerRun(5, func() {
		if err := c.Loop(schemas[1], "c1.yaml"); err != nil {
			t.Fatal(err)
		}
	})
	assert.Less(t, allocs, 50.0, "the shared file is walked again")

	// A schema of its own that loops beside the shared file, and two that
	// reach a loop in a file: each is refused.
	s, err := c.Compile("own.yaml", decode(t, `{"properties":{"x":{"$ref":"shared.json#/definitions/d0"}},"not":{"$ref":"#"}}`))
	require.NoError(t, err)
	assert.EqualError(t, c.Loop(s, "own.yaml"), "$ref loop: the schema applies itself to the value it checks, and never ends")
	for i := range 2 {
		s, err := c.Compile(fmt.Sprintf("l%d.yaml", i), decode(t, fmt.Sprintf(`{"maxProperties":%d,"properties":{"y":{"$ref":"looping.json#/definitions/loop"}}}`, i+1)))
		require.NoError(t, err)
		assert.EqualError(t, c.Loop(s, fmt.Sprintf("l%d.yaml", i)), "looping.json: definitions/loop: $ref loop: the schema applies itself to the value it checks, and never ends")
	}
}

// TestLoop_RefSiblingsIgnored: before draft 2019-09 the keywords beside a
// $ref are ignored, and the library, which still compiles if, then and
// else there, never runs them. A loop through them was taken for a loop
// of the schema: a load error for a schema that validates as its $ref
// (and the library instead of the fast path). It loads, on the fast path,
// with the library's verdicts; a draft 2019-09 schema, whose $ref's
// siblings apply, is still refused.
func TestLoop_RefSiblingsIgnored(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, src := range []string{
		`{"$ref":"#/definitions/a","if":{"$ref":"#"},"definitions":{"a":{"type":"integer"}}}`,
		`{"$ref":"#/definitions/a","if":true,"then":{"not":{"$ref":"#"}},"definitions":{"a":{"type":"integer"}}}`,
		`{"properties":{"p":{"$ref":"#/definitions/a","else":{"$ref":"#/properties/p"},"if":false}},"definitions":{"a":{"maximum":3}}}`,
	} {
		name := fmt.Sprintf("siblings-%d.json", i)
		s, err := c.Compile(name, decode(t, src))
		require.NoError(t, err)
		assert.NoError(t, s.Loop(name), src)
		require.True(t, s.Native(), src)
		matchesReference(t, s, src, []string{`1`, `1.5`, `"a"`, `{"p":2}`, `{"p":4}`, `{"p":"x"}`, `null`})
	}
	s, err := c.Compile("siblings-2019.json", decode(t, `{"$schema":"https://json-schema.org/draft/2019-09/schema","$ref":"#/$defs/a","if":{"$ref":"#"},"$defs":{"a":{"type":"integer"}}}`))
	require.NoError(t, err)
	assert.Error(t, s.Loop("siblings-2019.json"))
}

// TestLoop_RefSiblingsChildrenIgnored: beside a draft-07 $ref the library
// also compiles contains and propertyNames, and never runs them; a loop
// inside them (or inside an ignored if) was still a load error, and kept
// the schema off the fast path, though it validates as its $ref.
func TestLoop_RefSiblingsChildrenIgnored(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, src := range []string{
		`{"$ref":"#/definitions/a","contains":{"$ref":"#/contains"},"definitions":{"a":{"type":"array"}}}`,
		`{"$ref":"#/definitions/a","propertyNames":{"$ref":"#/propertyNames"},"definitions":{"a":{"type":"object"}}}`,
		`{"$ref":"#/definitions/a","if":{"$ref":"#/if"},"definitions":{"a":{"type":"integer"}}}`,
	} {
		name := fmt.Sprintf("sibling-children-%d.json", i)
		s, err := c.Compile(name, decode(t, src))
		require.NoError(t, err)
		assert.NoError(t, s.Loop(name), src)
		assert.True(t, s.Native(), src)
		matchesReference(t, s, src, []string{`1`, `"a"`, `[1]`, `[]`, `{"xx":1}`, `null`})
	}
}

// TestCompile_Draft2019MetaschemaStillChecksDefinitions: the letter-case
// check's AssertVocabs made the library check a 2019-09 or 2020-12 schema
// against its vocabularies' metaschemas alone, which do not read
// definitions and dependencies as schemas: {"maximum": "100"} in a
// definition a property refers to loaded, and its maximum was dropped
// (any value passed). They are load errors again, as before; valid such
// schemas still load and check.
func TestCompile_Draft2019MetaschemaStillChecksDefinitions(t *testing.T) {
	c := NewCompiler(nil, nil)
	for i, tc := range []struct{ src, want string }{
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/definitions/d"}},"definitions":{"d":{"type":"integer","maximum":"100"}}}`, "/definitions/d/maximum: invalid schema: must be a number, not a string"},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$ref":"#/definitions/d"}},"definitions":{"d":{"type":5}}}`, `/definitions/d/type: invalid schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"$ref":"#/definitions/d"}},"definitions":{"d":5}}`, "/definitions/d: invalid schema: must be a boolean or an object, not a number"},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","definitions":{"d":{"required":"x"}}}`, "/definitions/d/required: invalid schema: must be an array, not a string"},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","dependencies":{"a":5}}`, "/dependencies/a: invalid schema: must be a boolean or an object, not a number"},
		{`{"properties":{"a":{"$ref":"#/definitions/d"}},"definitions":{"d":{"$schema":"https://json-schema.org/draft/2019-09/schema","definitions":{"e":{"enum":5}}}}}`, "/definitions/d/definitions/e/enum: invalid schema: must be an array, not a number"},
	} {
		var doc any
		require.NoError(t, json.Unmarshal([]byte(tc.src), &doc))
		_, err := c.Compile(fmt.Sprintf("meta-%d.json", i), doc)
		if assert.Error(t, err, tc.src) {
			assert.Equal(t, tc.want, err.Error(), tc.src)
		}
	}
	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/definitions/d"}},"definitions":{"d":{"type":"integer","maximum":100}}}`), &doc))
	s, err := c.Compile("meta-ok.json", doc)
	require.NoError(t, err)
	assert.True(t, s.Reference(map[string]any{"a": json.Number("100")}, failure.Discard))
	assert.False(t, s.Reference(map[string]any{"a": json.Number("101")}, failure.Discard))
}
