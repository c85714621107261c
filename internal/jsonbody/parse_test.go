package jsonbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse_Accepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"object", `{"a":1,"b":"x"}`, map[string]any{"a": json.Number("1"), "b": "x"}},
		{"array", `[true,false,null]`, []any{true, false, nil}},
		{"nested", `{"a":{"b":[{"c":[]}]}}`, map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": []any{}}}}}},
		{"big integer keeps every digit", `123456789012345678901234567890`, json.Number("123456789012345678901234567890")},
		{"float keeps its text", `1.10`, json.Number("1.10")},
		{"exponent", `1e400`, json.Number("1e400")},
		{"largest exponent", `[1e1000,-2E-1000,3e+0001000]`, []any{json.Number("1e1000"), json.Number("-2E-1000"), json.Number("3e+0001000")}},
		{"escaped name is unescaped", `{"r\u006fle":"admin"}`, map[string]any{"role": "admin"}},
		{"NUL escape inside a string", `"a\u0000b"`, "a\x00b"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"whitespace around", " \t\r\n{} \n", map[string]any{}},
		{"same letters in different objects", `{"a":{"k":1},"b":{"K":1}}`, map[string]any{"a": map[string]any{"k": json.Number("1")}, "b": map[string]any{"K": json.Number("1")}}},
		{"number of 1000 digits", strings.Repeat("9", 1000), json.Number(strings.Repeat("9", 1000))},
		{"many distinct names", manyNames(100), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.in), 64)
			require.NoError(t, err)
			if tt.want != nil {
				assert.Equal(t, tt.want, doc.Any())
			}
		})
	}
}

func manyNames(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`":1`)
	}
	b.WriteByte('}')
	return b.String()
}

func TestParse_Rejects(t *testing.T) {
	tests := []struct {
		name, in, path, msg string
	}{
		{"duplicate key", `{"a":1,"a":2}`, "/a", `duplicate key "a"`},
		{"duplicate after unescaping", `{"role":"user","r\u006fle":"admin"}`, "/role", `duplicate key "role"`},
		{"case collision", `{"total":5,"TOTAL":1}`, "/TOTAL", `key "TOTAL" differs from key "total" only in letter case`},
		{"long s folds to s", `{"sku":1,"ſku":2}`, "/ſku", "only in letter case"},
		{"Kelvin sign folds to k", `{"kind":1,"\u212aind":2}`, "/\u212aind", "only in letter case"},
		{"case collision in a big object", manyNames(20)[:len(manyNames(20))-1] + `,"KXXXX":2}`, "/KXXXX", "only in letter case"},
		{"nested duplicate", `{"a":[{"b":1,"b":2}]}`, "/a/0/b", "duplicate key"},
		{"trailing data", `{} x`, "", "invalid JSON"},
		{"second value", `{} {}`, "", "unexpected data after the JSON value"},
		{"invalid UTF-8", "\"\xff\"", "", "invalid UTF-8"},
		{"lone high surrogate", `"\ud800"`, "", "surrogate"},
		{"lone low surrogate", `{"a":"\udc00"}`, "/a", "surrogate"},
		{"BOM", "\xef\xbb\xbf{}", "", "invalid character"},
		{"NUL byte", "{\"a\":1}\x00", "", "invalid"},
		{"truncated", `{"a":[1,2`, "/a/1", "unexpected end"},
		{"leading zero", `{"a":01}`, "/a", "invalid"},
		{"single quotes", `{'a':1}`, "", "invalid character"},
		{"comment", `{"a":1 /* x */}`, "/a", "invalid"},
		{"only whitespace", "  ", "", "unexpected end"},
		{"number of 1001 digits", strings.Repeat("9", 1001), "", "number literal longer than 1000 characters"},
		{"huge exponent", `[1e1001]`, "/0", "number exponent beyond ±1000"},
		{"huge negative exponent", `{"a":1.5E-000001001}`, "/a", "number exponent beyond ±1000"},
		{"long number in array", `[1,` + strings.Repeat("1", 1001) + `]`, "/1", "number literal longer"},
		{"too deep arrays", strings.Repeat("[", 65) + strings.Repeat("]", 65), "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", "nesting deeper than 64 levels"},
		{"too deep objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), strings.Repeat("/a", 64), "nesting deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), 64)
			require.Error(t, err)
			var pe *Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.path, pe.Path)
			assert.Contains(t, pe.Message, tt.msg)
			assert.LessOrEqual(t, len(pe.Message), 120, "messages stay short")
		})
	}
}

func TestParse_DepthLimitIsInclusive(t *testing.T) {
	in := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	_, err := Parse([]byte(in), 64)
	require.NoError(t, err)
	_, err = Parse([]byte("[[1]]"), 1)
	require.Error(t, err)
	_, err = Parse([]byte("[1]"), 1)
	require.NoError(t, err)
}

func TestParse_ErrorNeverEchoesMuch(t *testing.T) {
	long := strings.Repeat("x", 500)
	_, err := Parse([]byte(`{"`+long+`":1,"`+long+`":2}`), 64)
	require.Error(t, err)
	assert.Less(t, len(err.(*Error).Message), 200)
}

// FuzzBody checks that the strict reader never panics and never accepts a
// body that encoding/json would read differently: whatever Parse accepts,
// encoding/json (with UseNumber) must accept and decode to the same value.
func FuzzBody(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":1.5e3}}`, `{"a":1,"A":2}`, `{"a":1,"a":2}`,
		`"\ud800"`, `[[[[[]]]]]`, `{"r\u006fle":"x"}`, `123456789012345678901234567890`,
		"\xef\xbb\xbf{}", `{} {}`, `{"ſ":1,"s":2}`, `""`, `-0.0e-0`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data, 16)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", data, err)
		}
		if dec.More() {
			t.Fatalf("accepted %q with trailing data", data)
		}
		if got := doc.Any(); !equalJSON(got, want) {
			t.Fatalf("%q: got %#v, encoding/json reads %#v", data, got, want)
		}
		checkRaw(t, doc)
	})
}

func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bl[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func BenchmarkParse_Order(b *testing.B) {
	body := []byte(`{"orderId":"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f","customer":{"email":"ada@example.com","name":"Ada Lovelace","address":{"street":"12 Analytical Row","city":"London","country":"GB"}},"items":[{"sku":"BK-001","quantity":2,"unitPrice":19.99},{"sku":"BK-002","quantity":1,"unitPrice":45.5},{"sku":"PN-010","quantity":10,"unitPrice":1.25}],"currency":"EUR","total":97.98,"placedAt":"2026-11-21T10:15:00Z","channel":"web","notes":"leave at the door"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Parse(body, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExponentInRange_NoAllocation: reading a number's exponent allocates
// nothing (it runs for every number with one).
func TestExponentInRange_NoAllocation(t *testing.T) {
	num := []byte("1.5e-0300")
	ok := true
	if n := testing.AllocsPerRun(100, func() { ok = exponentInRange(num) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	require.True(t, ok)
}

// TestPooledTapeKeepsEarlierDocs: a Doc stays intact while the parser
// that built it reads other bodies, whether finish copied the tape or,
// past maxPooledTape, handed the parser's own buffers over. One parser is
// used throughout, as the pool would hand it back (the pool may not).
func TestPooledTapeKeepsEarlierDocs(t *testing.T) {
	for _, n := range []int{3, 100, 40000} { // 40,000 items: past maxPooledTape
		var a, b strings.Builder
		a.WriteString("[")
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				a.WriteString(",")
				b.WriteString(",")
			}
			fmt.Fprintf(&a, `{"k\u0041":"v%d"}`, i)
			fmt.Fprintf(&b, `{"zz":"w\n%d","q":[1,2]}`, i)
		}
		a.WriteString("]")
		b.WriteString("]")
		p := new(parser)
		first, err := p.parse([]byte(a.String()), 64)
		require.NoError(t, err)
		want := fmt.Sprint(first.Root().Any())
		for range 3 {
			_, err := p.parse([]byte(b.String()), 64)
			require.NoError(t, err)
		}
		require.Equal(t, want, fmt.Sprint(first.Root().Any()), "n=%d", n)
	}
}

// TestParseInto: a small body's Doc is put where the caller says, at no
// allocation, and reads as Parse's; a larger one is Parse's own.
func TestParseInto(t *testing.T) {
	var small Small
	body := []byte(`{"sku":"A1","quantity":3,"unitPrice":9.5,"currency":"EUR","email":"ada@example.com"}`)
	d, err := ParseInto(body, 64, &small)
	require.NoError(t, err)
	assert.Same(t, &small.sd.Doc, d)
	want, err := Parse(body, 64)
	require.NoError(t, err)
	assert.Equal(t, want.Any(), d.Any())
	if !raceDetector { // the parser comes from a sync.Pool, which the race detector empties at random
		assert.Zero(t, testing.AllocsPerRun(100, func() { ParseInto(body, 64, &small) }))
	}

	big := []byte(`[` + strings.Repeat(`1,`, 40) + `1]`)
	d, err = ParseInto(big, 64, &small)
	require.NoError(t, err)
	assert.NotSame(t, &small.sd.Doc, d)
	assert.Len(t, d.Any(), 41)
}

// TestSmall_HoldsAndCopy: Holds tells the Doc ParseInto put in a Small
// from any other; a Copy reads as that Doc did after the Small has been
// parsed into again (its unescaped strings included).
func TestSmall_HoldsAndCopy(t *testing.T) {
	var small Small
	body := []byte(`{"a":"x\u0041\n","b":[1,true]}`)
	d, err := ParseInto(body, 64, &small)
	require.NoError(t, err)
	assert.True(t, small.Holds(d))
	assert.False(t, small.Holds(nil))
	c := small.Copy()
	assert.False(t, small.Holds(c))
	want := d.Any()

	other, err := ParseInto([]byte(`{"z":"\u0042"}`), 64, &small)
	require.NoError(t, err)
	assert.True(t, small.Holds(other))
	assert.Equal(t, want, c.Any())
	a, ok := c.Root().Get("a")
	require.True(t, ok)
	assert.Equal(t, "xA\n", a.Str())
	big, err := Parse([]byte(`[`+strings.Repeat(`1,`, 40)+`1]`), 64)
	require.NoError(t, err)
	assert.False(t, small.Holds(big))
}

// TestParse_PooledParserKeepsNothing: once a body is read, the parser that
// goes back to the pool holds nothing of it: not the bytes, not its
// unescaped strings, not the names of its large objects (which point into
// the body), so a body is not kept alive, or readable, past its request.
func TestParse_PooledParserKeepsNothing(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"secret":"pass\u0077ord",`)
	for i := range 2 * smallNames {
		fmt.Fprintf(&b, `"name%d":%d,`, i, i)
	}
	b.WriteString(`"last":[{"k":"v\n"}]}`)
	for _, body := range []string{b.String(), b.String() + " x"} { // the fast path, then the reference's
		p := new(parser)
		_, err := p.parse([]byte(body), 16)
		require.Equal(t, body == b.String(), err == nil, "%v", err)
		assert.Nil(t, p.doc.raw)
		assert.Equal(t, make([]byte, len(p.doc.text)), p.doc.text, "unescaped text kept")
		require.NotEmpty(t, p.folds, "a large object borrows a map")
		for depth, m := range p.folds {
			assert.Empty(t, m, "names kept at depth %d", depth)
		}
	}
}

// checkRaw holds Raw to the body: every value's text is itself a JSON
// text, without whitespace around it, that reads as the value.
func checkRaw(t *testing.T, doc *Doc) {
	t.Helper()
	for i := range doc.Nodes() {
		v := doc.Node(i)
		raw := v.Raw()
		if len(raw) == 0 || len(bytes.TrimSpace(raw)) != len(raw) {
			t.Fatalf("%q: value %d has the text %q", doc.raw, i, raw)
		}
		again, err := Parse(raw, 16)
		if err != nil {
			t.Fatalf("%q: value %d has the text %q: %v", doc.raw, i, raw, err)
		}
		if want := v.Any(); !equalJSON(again.Any(), want) {
			t.Fatalf("%q: value %d has the text %q, which reads %#v, not %#v", doc.raw, i, raw, again.Any(), want)
		}
	}
}

// TestRaw_EveryValue: Raw is each value's text as the body has it, member
// names included, whitespace inside kept.
func TestRaw_EveryValue(t *testing.T) {
	body := " {\"a\" : [ 1 ,\"x\\\"y\", {\"\\u0062\":null} , [] ,-0.5e+3,true ] ,\"c\":{ } }\n"
	doc, err := Parse([]byte(body), 16)
	require.NoError(t, err)
	var got []string
	for i := range doc.Nodes() {
		got = append(got, string(doc.Node(i).Raw()))
	}
	assert.Equal(t, []string{
		"{\"a\" : [ 1 ,\"x\\\"y\", {\"\\u0062\":null} , [] ,-0.5e+3,true ] ,\"c\":{ } }",
		`"a"`, "[ 1 ,\"x\\\"y\", {\"\\u0062\":null} , [] ,-0.5e+3,true ]", `1`, `"x\"y"`, `{"\u0062":null}`,
		`"\u0062"`, `null`, `[]`, `-0.5e+3`, `true`, `"c"`, `{ }`,
	}, got)
	checkRaw(t, doc)
	assert.Equal(t, "null", string(NullDoc().Root().Raw()))
	for _, scalar := range []string{`1`, ` "s" `, `null`, `-1.5E-7`} {
		doc, err := Parse([]byte(scalar), 16)
		require.NoError(t, err)
		assert.Equal(t, strings.TrimSpace(scalar), string(doc.Root().Raw()))
	}
}

// TestParse_BodyOver4GiB: the tape's offsets are 32 bits; a body longer
// than that (a guard with MaxBodyBytes above 4 GiB) was read with its
// offsets wrapped: in {"a":"x…x","b":"admin"} with 4 GiB of x, the name
// "b" read as the byte 4 GiB before it, an "x", and its value as x's. It
// is refused. It needs 4 GiB of memory and about 10 s, so it runs only
// with CONTRACTGUARD_HUGE=1.
func TestParse_BodyOver4GiB(t *testing.T) {
	if os.Getenv("CONTRACTGUARD_HUGE") != "1" {
		t.Skip("needs 4 GiB of memory: set CONTRACTGUARD_HUGE=1 to run it")
	}
	want := uint64(MaxLen) + 64
	if want > math.MaxInt {
		t.Skip("a 32-bit platform: no slice is that long")
	}
	n := int(want)
	b := make([]byte, 0, n+64)
	b = append(b, `{"a":"`...)
	b = append(b, bytes.Repeat([]byte("x"), n-len(b))...)
	b = append(b, `","b":"admin"}`...)
	_, err := Parse(b, 64)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "a body of more than 4294967295 bytes cannot be parsed", pe.Message)
}
