package schema

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// FuzzRandomSchemaNativeVsReference builds a schema from the fuzz input
// (every keyword the fast path covers, booleans in every place, $refs,
// another draft's $schema at the root or in a definition, and a few
// keywords it leaves to the library), then validates bodies also drawn
// from the input, and some fixed ones, with both engines: the same
// verdicts and the same failures, or a schema the fast path leaves to the
// library.
func FuzzRandomSchemaNativeVsReference(f *testing.F) {
	for _, seed := range []string{
		"", "\x00", "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a",
		"abcdefghijklmnopqrstuvwxyz0123456789",
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0",
		strings.Repeat("\x13\x37\x42\x99\x07", 20),
	} {
		f.Add([]byte(seed))
	}
	fixed := []string{`null`, `true`, `0`, `1`, `2.5`, `-1`, `"a"`, `""`, `[]`, `[1,1.0]`, `{}`, `{"a":1}`,
		`{"a":"ab","b":[1,2],"":null,"~":{}}`, `[{"a":1},{"a":1e0},"a/b"]`}
	var fixedDocs []*jsonbody.Doc
	for _, b := range fixed {
		v, err := jsonbody.Parse([]byte(b), 64)
		if err != nil {
			f.Fatal(err)
		}
		fixedDocs = append(fixedDocs, v)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 600 {
			return // schemas of a few dozen keywords at most: a run stays fast
		}
		g := &schemaGen{data: data}
		doc := g.root()
		src, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		c := NewCompiler(nil, nil)
		s, err := c.Compile("random.json", doc)
		if err != nil {
			return
		}
		panics := nativePanics.Load()
		if !s.Native() {
			if nativePanics.Load() != panics {
				t.Fatalf("%s: the native compile panicked", src)
			}
			return
		}
		bodies := slices.Clone(fixedDocs)
		for range 6 {
			text := g.body()
			if v, err := jsonbody.Parse([]byte(text), 64); err == nil {
				bodies = append(bodies, v)
			}
		}
		for _, v := range bodies {
			fastOK, fastDetails, refOK, refDetails := run(s, v)
			if fastOK != refOK || !slices.Equal(fastDetails, refDetails) &&
				!slices.Equal(namesUnplaced(fastDetails), namesUnplaced(refDetails)) {
				body, _ := json.Marshal(v.Any())
				t.Fatalf("%s on %s:\nfast %v %v\nref  %v %v", src, body, fastOK, fastDetails, refOK, refDetails)
			}
		}
	})
}

// namesUnplaced is ds with the pointers of its propertyNames failures
// left out: the library stores the object's location on them without
// copying it, and a sibling validated later can overwrite it (its failure
// at /a may read /é: santhosh-tekuri/jsonschema#269, open), where the
// fast path gives the object's pointer.
func namesUnplaced(ds []detail) []detail {
	out := slices.Clone(ds)
	for i := range out {
		if strings.HasPrefix(out[i].Message, "has an invalid property name ") {
			out[i].Path = "?"
		}
	}
	slices.SortFunc(out, func(a, b detail) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return out
}

// schemaGen draws a schema and bodies from fuzz input, a byte at a time;
// past its end every draw is 0.
type schemaGen struct {
	data []byte
	defs int // the definitions of the root ($refs point at them)
}

func (g *schemaGen) n(k int) int {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return int(b) % k
}

func pick[T any](g *schemaGen, xs []T) T { return xs[g.n(len(xs))] }

var (
	genNames    = []string{"a", "b", "c", "", "~", "/", "a/b", "~0", "é", "ab", "A", "É", "aB", "\u212a", "k"}
	genStrings  = []string{"", "a", "ab", "abc", "b", "~", "/", "a/b", "1", "é", "2020-01-01", "a@b.co", "1.2.3.4", "x", "aé", "::1", "23:59:60Z", "/a~0", "١٢", "a_1"}
	genNumbers  = []string{"0", "-0", "1", "1.0", "1e0", "10e-1", "2", "2.5", "-1", "3", "0.1", "0.3", "1e2", "100", "1E+2", "-0.0", "1.5", "6", "0.001", "4.5e-1", "123456789012345678901", "9007199254740993", "1e400", "-1e400", "1e-400", "7", "5e-324", "1e308", "0.30000000000000004", "-9007199254740993", "1.7976931348623157e308"}
	genMultiple = []string{"1", "2", "0.5", "0.1", "3", "1e-3", "1.5", "7", "1e2", "0.3", "1e-400", "123456789012345678901"}
	genPatterns = []string{"^a", "b$", "~", "/", "^$", "[0-9]", ".", "^(a|b)$", "é", `\d`, `^\w+$`, `\bé`, `\p{L}`}
	genFormats  = []string{"email", "date", "ipv4", "uuid", "hostname", "date-time", "unknown", "uri", "regex", "ipv6", "time", "uri-reference", "json-pointer"}
	genTypes    = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
	genDrafts   = []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	}
)

const genDepth = 4

// root is a schema with definitions (which $refs point at), maybe under
// another draft.
func (g *schemaGen) root() any {
	g.defs = g.n(4)
	s := g.schema(0)
	m, ok := s.(map[string]any)
	if !ok {
		if g.defs == 0 {
			return s
		}
		m = map[string]any{}
	}
	if g.defs > 0 {
		defs := map[string]any{}
		for i := range g.defs {
			d := g.schema(1)
			if dm, ok := d.(map[string]any); ok && g.n(8) == 7 {
				dm["$id"] = "d" + strconv.Itoa(i) + ".json"
				dm["$schema"] = pick(g, genDrafts)
			}
			defs["d"+strconv.Itoa(i)] = d
		}
		m["definitions"] = defs
	}
	if g.n(6) == 5 {
		m["$schema"] = pick(g, genDrafts)
	}
	return m
}

func (g *schemaGen) schema(depth int) any {
	switch g.n(16) { // past the input's end: {}
	case 14:
		return true
	case 15:
		return false
	}
	m := map[string]any{}
	for range g.n(5) {
		g.keyword(m, depth)
	}
	return m
}

func (g *schemaGen) schemas(depth int) []any {
	out := []any{}
	for range 1 + g.n(3) {
		out = append(out, g.schema(depth+1))
	}
	return out
}

func (g *schemaGen) number(from []string) json.Number { return json.Number(pick(g, from)) }

func (g *schemaGen) keyword(m map[string]any, depth int) {
	leaf := depth >= genDepth
	k := g.n(48)
	if leaf {
		k %= 22
	}
	switch k {
	case 0, 1:
		if g.n(3) == 0 {
			var ts []any
			for range 1 + g.n(3) {
				if t := pick(g, genTypes); !slices.Contains(ts, any(t)) {
					ts = append(ts, t)
				}
			}
			m["type"] = ts
		} else {
			m["type"] = pick(g, genTypes)
		}
	case 2:
		m["const"] = g.value(0)
	case 3:
		var e []any
		for range 1 + g.n(4) {
			e = append(e, g.value(1))
		}
		m["enum"] = e
	case 4:
		m["format"] = pick(g, genFormats)
	case 5:
		m["minLength"] = json.Number(strconv.Itoa(g.n(4)))
	case 6:
		m["maxLength"] = json.Number(strconv.Itoa(g.n(4)))
	case 7:
		m["pattern"] = pick(g, genPatterns)
	case 8:
		m["minimum"] = g.number(genNumbers)
	case 9:
		m["maximum"] = g.number(genNumbers)
	case 10:
		if g.n(4) == 0 {
			m["exclusiveMinimum"] = g.n(2) == 0 // draft-04's form
		} else {
			m["exclusiveMinimum"] = g.number(genNumbers)
		}
	case 11:
		if g.n(4) == 0 {
			m["exclusiveMaximum"] = g.n(2) == 0
		} else {
			m["exclusiveMaximum"] = g.number(genNumbers)
		}
	case 12:
		m["multipleOf"] = g.number(genMultiple)
	case 13:
		m["minItems"] = json.Number(strconv.Itoa(g.n(4)))
	case 14:
		m["maxItems"] = json.Number(strconv.Itoa(g.n(4)))
	case 15:
		m["uniqueItems"] = g.n(3) != 0
	case 16:
		m["minProperties"] = json.Number(strconv.Itoa(g.n(4)))
	case 17:
		m["maxProperties"] = json.Number(strconv.Itoa(g.n(4)))
	case 18:
		var r []any
		for range 1 + g.n(3) {
			if name := pick(g, genNames); !slices.Contains(r, any(name)) {
				r = append(r, name)
			}
		}
		m["required"] = r
	case 19:
		targets := []string{"#"}
		for i := range g.defs {
			targets = append(targets, "#/definitions/d"+strconv.Itoa(i), "d"+strconv.Itoa(i)+".json")
		}
		m["$ref"] = pick(g, targets)
	case 20:
		deps := map[string]any{}
		for range 1 + g.n(2) {
			var r []any
			for range g.n(3) {
				if name := pick(g, genNames); !slices.Contains(r, any(name)) {
					r = append(r, name)
				}
			}
			if r == nil {
				r = []any{}
			}
			deps[pick(g, genNames)] = r
		}
		m["dependencies"] = deps
	case 21:
		// Keywords the fast path leaves to the library, or that do
		// nothing in draft-07.
		switch g.n(10) {
		case 0:
			m["minContains"] = json.Number("1")
		case 1:
			m["dependentRequired"] = map[string]any{"a": []any{"b"}}
		case 2:
			m["title"] = "t"
		case 3:
			m["x-contractguard-scan"] = false
		case 4:
			m["contentEncoding"] = "base64"
		case 5:
			m["unevaluatedProperties"] = false
		case 6:
			m["prefixItems"] = []any{map[string]any{"type": "string"}}
		case 7:
			m["unknownKeyword"] = map[string]any{"$ref": "#/nowhere"}
		case 8:
			m["default"] = g.value(0)
		case 9:
			m["then"] = map[string]any{"type": "string"} // no if: nothing
		}
	case 22, 23:
		props := map[string]any{}
		for range 1 + g.n(3) {
			props[pick(g, genNames)] = g.schema(depth + 1)
		}
		m["properties"] = props
	case 24:
		if g.n(2) == 0 {
			m["additionalProperties"] = g.n(2) == 0
		} else {
			m["additionalProperties"] = g.schema(depth + 1)
		}
	case 25, 26:
		if g.n(2) == 0 {
			m["items"] = g.schema(depth + 1)
		} else {
			items := []any{}
			for range 1 + g.n(3) {
				items = append(items, g.schema(depth+1))
			}
			m["items"] = items
		}
	case 27:
		if g.n(2) == 0 {
			m["additionalItems"] = g.n(2) == 0
		} else {
			m["additionalItems"] = g.schema(depth + 1)
		}
	case 28:
		m["contains"] = g.schema(depth + 1)
	case 29:
		pp := map[string]any{}
		for range 1 + g.n(2) {
			pp[pick(g, genPatterns)] = g.schema(depth + 1)
		}
		m["patternProperties"] = pp
	case 30:
		deps := map[string]any{}
		for range 1 + g.n(2) {
			deps[pick(g, genNames)] = g.schema(depth + 1)
		}
		m["dependencies"] = deps
	case 31:
		m["propertyNames"] = g.schema(depth + 1)
	case 32, 33:
		m["not"] = g.schema(depth + 1)
	case 34, 35:
		m["allOf"] = g.schemas(depth)
	case 36, 37:
		m["anyOf"] = g.schemas(depth)
	case 38, 39:
		m["oneOf"] = g.schemas(depth)
	case 40, 41, 42:
		m["if"] = g.schema(depth + 1)
		if g.n(4) != 0 {
			m["then"] = g.schema(depth + 1)
		}
		if g.n(4) != 0 {
			m["else"] = g.schema(depth + 1)
		}
	case 43:
		m["items"] = []any{g.schema(depth + 1)}
		m["additionalItems"] = g.schema(depth + 1)
	default: // more of the common keywords, with a subschema near
		g.keyword(m, genDepth)
	}
}

// value is a JSON value for const, enum and default.
func (g *schemaGen) value(depth int) any {
	k := g.n(8)
	if depth >= 2 {
		k %= 5
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.n(2) == 0
	case 2:
		return g.number(genNumbers)
	case 3, 4:
		return pick(g, genStrings)
	case 5:
		var a []any
		for range g.n(3) {
			a = append(a, g.value(depth+1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	default:
		o := map[string]any{}
		for range g.n(3) {
			o[pick(g, genNames)] = g.value(depth + 1)
		}
		return o
	}
}

// body is the text of a JSON value, its members in the order drawn
// (a name drawn twice makes a body the strict reader refuses).
func (g *schemaGen) body() string {
	var b strings.Builder
	g.writeValue(&b, 0)
	return b.String()
}

func (g *schemaGen) writeValue(b *strings.Builder, depth int) {
	k := g.n(9)
	if depth >= 3 {
		k %= 5
	}
	switch k {
	case 0:
		b.WriteString("null")
	case 1:
		b.WriteString(pick(g, []string{"true", "false"}))
	case 2:
		b.WriteString(pick(g, genNumbers))
	case 3, 4:
		q, _ := json.Marshal(pick(g, genStrings))
		b.Write(q)
	case 5, 6:
		b.WriteByte('[')
		count := g.n(5)
		if depth < 2 && g.n(8) == 7 {
			count = 19 + g.n(8) // past 20 items, the library hashes for uniqueItems
		}
		for i := range count {
			if i > 0 {
				b.WriteByte(',')
			}
			if count > 4 && g.n(2) == 0 {
				b.WriteString(pick(g, genNumbers))
				continue
			}
			g.writeValue(b, depth+1)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		var seen []string
		for range g.n(5) {
			name := pick(g, genNames)
			if slices.Contains(seen, name) {
				continue
			}
			if len(seen) > 0 {
				b.WriteByte(',')
			}
			seen = append(seen, name)
			q, _ := json.Marshal(name)
			b.Write(q)
			b.WriteByte(':')
			g.writeValue(b, depth+1)
		}
		b.WriteByte('}')
	}
}
