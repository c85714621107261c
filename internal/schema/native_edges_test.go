package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast path held to the library on hand-picked edge cases the
// fuzzers draw rarely: every format on its boundary values, numbers at
// float64's edges and beyond, and keywords in combinations (a $ref's
// ignored siblings, escaped definition names, $id, boolean schemas in
// every place, other drafts, objects past the 64 required bits and the
// name index's probe limit). Each schema runs every body on the fast path
// (with memo and without) and on the library: same verdicts, same
// failures (matchesReference).

func edgesMatchReference(t *testing.T, schemas []string, bodies []string) {
	t.Helper()
	c := NewCompiler(nil, nil)
	for i, src := range schemas {
		s := compileSuiteSchema(t, c, fmt.Sprintf("edges-%d.json", i), json.RawMessage(src))
		require.True(t, s.Native(), src)
		matchesReference(t, s, src, bodies)
	}
}

func quoted(ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		b, _ := json.Marshal(s)
		out[i] = string(b)
	}
	return out
}

func TestNative_EdgesMatchReference_Formats(t *testing.T) {
	label := strings.Repeat("a", 63)
	bodies := quoted(
		// date-time, date, time
		"2026-12-31T23:59:60Z", "2026-12-31T23:59:60+00:00", "2026-12-31t23:59:60z", "2026-06-30T23:59:60Z",
		"2026-12-31T23:59:60.999Z", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00-24:00",
		"2026-01-01T00:00:00.123456789012345678901234567890Z", "0000-01-01T00:00:00Z",
		"2023-02-29", "1900-02-29", "2000-02-29", "2024-02-29", "0000-02-29",
		"23:59:60Z", "12:00:00", "12:00:00.5z", "00:00:60+00:00", "23:59:60-00:00",
		// email, hostname
		`"a b"@x.co`, `"a"@x.co`, `""@x.co`, `"@x.co`, "a@[1.2.3.4]", "a@[IPv6:::1]", "a@[IPv6:1.2.3.4]", "a@[01.2.3.4]",
		"a@[]", "a@[", "a@]", "a.b@c", "a..b@c", strings.Repeat("a", 64)+"@b.co", strings.Repeat("a", 65)+"@b.co",
		"a@"+label+"."+label+"."+label+"."+strings.Repeat("e", 58), "a@"+label+"."+label+"."+label+"."+strings.Repeat("e", 59),
		"é@x.co", "a@é.co", "a@b_c.co", "a@xn--bcher-kva.ch", "a@123", "a@[IPv6:fe80::1%eth0]",
		"example.com.", label+".com", label+"a.com", "xn--bcher-kva.ch", "a_b.com", "123.456", "-a.com", "a-.com", ".", "", "a..b",
		// ipv4, ipv6
		"1.2.3.4", "01.2.3.4", "1.2.3", "1.2.3.4.", "0.0.0.0", "255.255.255.256", "١.2.3.4", "1.2.3.04",
		"::", "::1", "1::", "::ffff:1.2.3.4", "fe80::1%eth0", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:1.2.3.4",
		"1::2::3", ":::", "1:2:3:4:5:6:7::", "::1.2.3.4", "0:0:0:0:0:0:0:0%", "1::2%", "::ffff:01.2.3.4", "[::1]",
		// uri and its kin, json-pointer, regex, uri-template, uuid, the library's others
		"http://a b.com", "http://a.com/%zz", "http://a.com/%4", "http://a.com/[x]", "http://[::1]/", "http://[::1", ":foo", "//a.com",
		"a:b", "http://a.com/%41", "http://user@[::1]:80/x", "http://[v1.x]/", "HTTP://A.COM", "http://a.com/\\", "http://a.com#[",
		`"><script>`, "a b", "//[::1]/x", "http://a.com/é", "é",
		"/a/b", "/a~2", "/a~", "/a~0~1", "0#", "1/a", "01/a", "0", "-1", "/", "~0",
		"\\d+", "(?=a)", "\\p{L}", "(?i)a", "[", "a{2,1}", "\\cA", "(?<name>a)", "\\k<x>",
		"{a}", "http://x/{a}", "http://x/{a", "http://x/{{a}}", "http://x/}a{",
		"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "6f1c2a9e8d3b4c5a9e7f1a2b3c4d5e6f", "{6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f}",
		"P1D", "PT", "P1W", "1.0.0", "1.0.0-01")
	bodies = append(bodies, `1`, `null`, `{}`, `[]`, `true`, `1e400`, `"a\u0000b"`) // a format passes what is not a string
	var schemas []string
	for _, f := range []string{"date-time", "date", "time", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
		"uri", "uri-reference", "iri", "iri-reference", "uri-template", "json-pointer", "relative-json-pointer", "regex", "uuid",
		"duration", "period", "semver", "no-such-format"} {
		schemas = append(schemas, `{"format":"`+f+`"}`)
	}
	edgesMatchReference(t, schemas, bodies)
}

func TestNative_EdgesMatchReference_Numbers(t *testing.T) {
	bodies := []string{`0`, `-0`, `0.0`, `-0.0`, `0e5`, `1`, `1.0`, `1e2`, `1E+2`, `100e-2`, `1.5`, `-1`, `1e400`, `-1e400`, `1e-400`, `-1e-400`,
		`0.1`, `0.3`, `0.30000000000000004`, `1e-10`, `2e-10`, `1.5e-10`, `1e308`, `2e308`, `1.7976931348623157e308`, `1.7976931348623159e308`,
		`9007199254740993`, `9007199254740992`, `9007199254740992.5`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`,
		`12345678901234567890`, `123456789012345678.5`, `1234567890123456789.5`, `0.0000000000000000000000001`, `5e-324`, `4e-324`,
		`2.4703282292062327e-324`, `10.00000000000000000001`, `9.99999999999999999999`, `1e1000`, `-1e1000`, `1e-1000`, `0.1e1`, `10e-1`,
		`"1"`, `null`, `[1]`}
	var schemas []string
	for _, kw := range []string{
		`"type":"integer"`, `"multipleOf":0.1`, `"multipleOf":1e-10`, `"multipleOf":1e308`, `"multipleOf":3`, `"multipleOf":0.5`,
		`"multipleOf":1e-400`, `"multipleOf":1e400`, `"multipleOf":4294967296`, `"multipleOf":4294967297`,
		`"multipleOf":18446744073709551617`, `"multipleOf":1.5e300`,
		`"minimum":0`, `"minimum":-0`, `"exclusiveMinimum":0`, `"exclusiveMaximum":0`, `"maximum":1e308`,
		`"exclusiveMaximum":1.7976931348623157e308`, `"exclusiveMaximum":9007199254740993`, `"minimum":9007199254740993`,
		`"maximum":9223372036854775807`, `"exclusiveMinimum":9223372036854775807`, `"maximum":1e400`, `"minimum":-1e400`,
		`"exclusiveMinimum":1e-400`, `"exclusiveMaximum":-1e-400`, `"maximum":1e-330`, `"minimum":5e-324`, `"exclusiveMinimum":4e-324`,
		`"maximum":0.30000000000000004`, `"exclusiveMaximum":0.3`, `"minimum":0.1`, `"minimum":1e1000`, `"maximum":-1e1000`,
		`"exclusiveMaximum":1e-1000`, `"minimum":10.00000000000000000001`, `"maximum":123456789012345678.5`,
		`"const":1`, `"const":1.0`, `"const":-0`, `"const":1e400`, `"const":0.30000000000000004`, `"const":9007199254740993`,
		`"enum":[1.0,"1",[1],{"a":1}]`, `"enum":[9223372036854775808, 1e-400]`,
	} {
		schemas = append(schemas, "{"+kw+"}")
	}
	edgesMatchReference(t, schemas, bodies)
	edgesMatchReference(t, []string{`{"const":{"a":1,"b":[1.0,{"c":2}]}}`},
		[]string{`{"b":[1,{"c":2.0}],"a":1e0}`, `{"b":[1,{"c":2.0}],"a":1,"x":1}`, `{"b":[{"c":2},1],"a":1}`, `{"a":1}`})
	twenty := "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
	edgesMatchReference(t, []string{`{"uniqueItems":true}`}, []string{`[1,1.0]`, `[{"a":1,"b":2},{"b":2,"a":1}]`, `[0,-0]`,
		`[1e400,10e399]`, `[1e-400,0]`, `[1e-400,1e-400]`, `["a","a"]`, `[[1],[1.0]]`, `[1,-1]`, `[0.5,-0.5]`, `[1,"1"]`, `[true,1]`,
		`[null,false]`, `[{"a":[1]},{"a":[1.00]}]`, `[{},[]]`, "[" + twenty + "21,-21]", "[" + twenty + "21,2.1e1]",
		"[" + twenty + `{"a":1,"b":2},{"b":2,"a":1.0}]`, "[" + twenty + "21,0,-0]", "[" + twenty + "21,1e-400,-1e-400]"})
}

func TestNative_EdgesMatchReference_Keywords(t *testing.T) {
	bodies := []string{`{}`, `{"a":1}`, `{"a":"x"}`, `{"a":1,"b":2}`, `{"b":2}`, `{"a/b":1}`, `{"a~b":1}`, `{"a b":1}`, `{"é":1}`,
		`{"ab":[1,2,3]}`, `{"a":{"a":{"a":1}}}`, `{"":1}`, `{"x":null,"y":[],"z":{}}`, `null`, `1`, `"a"`, `[]`, `[1,2]`, `[1,"a",null]`,
		`[[1],[2,3]]`, `true`, `{"ﬀ":1}`, `{"\u0000":1}`, `{"a\nb":1}`, `{"A":1}`, `{"1":1}`, `{"foo":1,"bar":"x"}`, `{"a":1,"c":3}`,
		`[1,1]`, `[1,2,3,4]`, `"ab"`, `"\ud83d\ude00\ud83d\ude00"`, `"é"`}
	edgesMatchReference(t, []string{
		`{"$ref":"#/definitions/a","type":"string","minimum":5,"const":{"a":1},"definitions":{"a":{"type":"object"}}}`,
		`{"$ref":"#/definitions/a","enum":[1,{"a":1}],"definitions":{"a":{"type":"object"}}}`,
		`{"$ref":"#/definitions/a","format":"ipv4","properties":{"a":{"type":"string"}},"definitions":{"a":true}}`,
		`{"$ref":"#/definitions/a","contains":false,"propertyNames":false,"if":true,"then":false,"definitions":{"a":true}}`,
		`{"$ref":"#/definitions/a~1b","definitions":{"a/b":{"required":["a"]}}}`,
		`{"$ref":"#/definitions/a~0b","definitions":{"a~b":{"required":["b"]}}}`,
		`{"$ref":"#/definitions/a%20b","definitions":{"a b":{"maxProperties":0}}}`,
		`{"$ref":"#/definitions/%C3%A9","definitions":{"é":{"type":"array"}}}`,
		`{"$id":"http://example.com/root.json","properties":{"a":{"$ref":"item.json"}},"definitions":{"i":{"$id":"item.json","type":"integer"}}}`,
		`{"$id":"http://example.com/root.json","properties":{"a":{"$ref":"#foo"}},"definitions":{"i":{"$id":"#foo","type":"integer"}}}`,
		`{"properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"$id":"x.json","properties":{"a":{"$ref":"#"}},"type":"object"}}}`,
		`{"if":{"required":["a"]}}`, `{"if":{"required":["a"]},"then":{"required":["b"]}}`, `{"if":{"required":["a"]},"else":{"required":["b"]}}`,
		`{"then":false}`, `{"else":false}`, `{"if":true,"else":false}`, `{"if":false,"then":false}`, `{"if":false,"else":false}`,
		`{"dependencies":{"a":["b","c"],"b":{"required":["z"]},"c":false,"x":true}}`, `{"dependencies":{"a":[]}}`,
		`{"propertyNames":{"$ref":"#/definitions/n"},"definitions":{"n":{"maxLength":1}}}`,
		`{"propertyNames":{"$ref":"#"},"maxLength":1}`,
		`{"propertyNames":{"format":"ipv4"}}`, `{"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"propertyNames":false}`, `{"propertyNames":true}`,
		`{"propertyNames":{"const":"a"}}`, `{"propertyNames":{"type":"number"}}`, `{"propertyNames":{"not":{"enum":["a"]}}}`,
		`{"contains":{"type":"integer"},"maxItems":2}`, `{"contains":false}`, `{"contains":true}`,
		`{"contains":{"const":2},"minItems":3,"uniqueItems":true}`,
		`{"items":{"type":"integer"},"additionalItems":false}`, `{"items":[{"type":"integer"}],"additionalItems":false}`,
		`{"items":[true],"additionalItems":{"type":"string"}}`, `{"additionalItems":false}`, `{"items":[false,false]}`, `{"items":false}`,
		`{"patternProperties":{"^é$":{"type":"string"},"^\\p{L}+$":{"type":"integer"},"a$":false,"^$":false}}`,
		`{"patternProperties":{"^a":{"type":"integer"}},"additionalProperties":false}`,
		`{"patternProperties":{"^a":{"type":"integer"}},"properties":{"ab":{"type":"array"}},"additionalProperties":false}`,
		`{"patternProperties":{"\\d":true},"additionalProperties":{"type":"string"}}`,
		`{"patternProperties":{"(?i)^A$":false}}`, `{"patternProperties":{"^[a-z]$":false,"^.$":false}}`,
		`{"not":{"not":{"type":"integer"}}}`, `{"not":true}`, `{"not":false}`, `{"not":{"not":{"not":{"required":["a"]}}}}`,
		`{"allOf":[true,false]}`, `{"anyOf":[false,false]}`, `{"oneOf":[true,true]}`, `{"oneOf":[true,false]}`,
		`{"oneOf":[{"type":"integer"},{"minimum":1}]}`,
		`{"properties":{"a":false,"b":true},"additionalProperties":false}`, `{"additionalProperties":false}`,
		`{"additionalProperties":true,"minProperties":1}`, `{"maxLength":1}`, `{"minLength":2}`, `{"maxLength":0}`,
		`{"required":["a/b","a~b",""]}`, `{"type":["integer","string"],"minimum":2,"maxLength":1}`, `{"type":["null","object"]}`,
		`{"definitions":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/a"}},"allOf":[{"$ref":"#/definitions/a"}]}`,
		`{"properties":{"a":{"$ref":"#"}},"required":["b"]}`, `{"items":{"$ref":"#"},"maxItems":1}`,
		`{"definitions":{"d":{"$schema":"http://json-schema.org/draft-04/schema#","propertyNames":false}},"properties":{"a":{"$ref":"#/definitions/d"}}}`,
	}, bodies)
}

// TestNative_EdgesMatchReference_WideObjects: more required names than
// the 64 bits of a walk, objects past jsonbody's name index (16 members),
// dependencies looked up in them, and declared names that collide in
// names.Index's hash (beyond its probe limit: its map).
func TestNative_EdgesMatchReference_WideObjects(t *testing.T) {
	var req, props, all, most []string
	for i := range 80 {
		req = append(req, fmt.Sprintf(`"k%d"`, i))
		if i%3 == 0 {
			props = append(props, fmt.Sprintf(`"k%d":{"type":"integer"}`, i))
		}
		all = append(all, fmt.Sprintf(`"k%d":%d`, i, i))
		if i%7 != 3 {
			most = append(most, fmt.Sprintf(`"k%d":%d`, i, i))
		}
	}
	var collide, collideBody []string
	for c := 'a'; c <= 'z'; c++ {
		collide = append(collide, fmt.Sprintf(`"a1%cb":{"type":"integer"}`, c))
		collideBody = append(collideBody, fmt.Sprintf(`"a1%cb":"s"`, c))
	}
	edgesMatchReference(t, []string{
		`{"required":[` + strings.Join(req, ",") + `],"properties":{` + strings.Join(props, ",") + `}}`,
		`{"dependencies":{"k5":["k74","k79","zz"],"k77":{"required":["k78","q"]}},"additionalProperties":{"type":"integer"}}`,
		`{"properties":{` + strings.Join(props, ",") + `},"additionalProperties":false}`,
		`{"properties":{` + strings.Join(collide, ",") + `},"required":["a1qb","a1zb","a1Ab"],"additionalProperties":false}`,
	}, []string{"{" + strings.Join(most, ",") + "}", "{" + strings.Join(all, ",") + "}", "{" + strings.Join(all[:70], ",") + `,"k70":"s"}`,
		`{}`, `{"k0":1}`, "{" + strings.Join(collideBody, ",") + "}", `{"a1Ab":1}`, `{"a1qb":1,"a1zb":2,"a1Ab":3,"a1_b":4}`})
}
