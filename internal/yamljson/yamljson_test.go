package yamljson

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func one(t *testing.T, src string) any {
	t.Helper()
	docs, err := Parse([]byte(src))
	require.NoError(t, err)
	require.Len(t, docs, 1)
	v, err := Value(docs[0].Body)
	require.NoError(t, err)
	return v
}

func TestValue_Numbers(t *testing.T) {
	v := one(t, "a: 1e3\nb: 12345678901234567890123\nc: 1.50\nd: 0x10\ne: -3\nf: '12'\ng: \"1e3\"\nh: .5\n")
	assert.Equal(t, map[string]any{
		"a": json.Number("1e3"),
		"b": json.Number("12345678901234567890123"),
		"c": json.Number("1.50"),
		"d": json.Number("16"),
		"e": json.Number("-3"),
		"f": "12",
		"g": "1e3",
		"h": json.Number("0.5"),
	}, v)
}

func TestValue_JSONSource(t *testing.T) {
	v := one(t, `{"schema": {"minimum": 1e3, "enum": ["a\u0041", null, true]}}`)
	assert.Equal(t, map[string]any{"schema": map[string]any{
		"minimum": json.Number("1e3"),
		"enum":    []any{"aA", nil, true},
	}}, v)
}

func TestValue_Aliases(t *testing.T) {
	v := one(t, "a: &x {type: string}\nb: *x\n")
	assert.Equal(t, map[string]any{"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}, v)
}

// TestAliases: each alias stands for the last anchor of its name before
// it, as Value reads it; one with none before it is left out.
func TestAliases(t *testing.T) {
	src := "a: &x 1\nb: *x\nc: &x 2\nd: *x\ne: *y\n"
	docs, err := Parse([]byte(src))
	require.NoError(t, err)
	got := map[int]any{}
	for alias, n := range Aliases(docs[0].Body) {
		v, err := Value(n)
		require.NoError(t, err)
		got[Line(alias)] = v
	}
	assert.Equal(t, map[int]any{2: json.Number("1"), 4: json.Number("2")}, got)
	_, err = Value(docs[0].Body)
	assert.ErrorContains(t, err, "*y refers to no anchor before it")
}

func TestValue_BillionLaughsIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	docs, err := Parse([]byte(b.String()))
	require.NoError(t, err)
	_, err = Value(docs[0].Body)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expands to more than")
}

// TestValue_AliasesOfLongTextAreBounded: five levels of ten aliases of a
// 1 KB string are few values (111,111) but 100 MB of text, which the
// loader wrote out as JSON; a 10 KB string made it 1 GB from a 10 KB file.
func TestValue_AliasesOfLongTextAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("s: &s " + strings.Repeat("x", 1000) + "\n")
	prev := "s"
	for i := 1; i <= 5; i++ {
		name := "l" + string(rune('0'+i))
		b.WriteString(name + ": &" + name + " [*" + prev + strings.Repeat(", *"+prev, 9) + "]\n")
		prev = name
	}
	docs, err := Parse([]byte(b.String()))
	require.NoError(t, err)
	_, err = Value(docs[0].Body)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "6:35: document expands to more than 64 MiB of text")

	// Long keys count too.
	b.Reset()
	b.WriteString("s: &s {" + strings.Repeat("k", 1000) + ": 1}\n")
	prev = "s"
	for i := 1; i <= 5; i++ {
		name := "l" + string(rune('0'+i))
		b.WriteString(name + ": &" + name + " [*" + prev + strings.Repeat(", *"+prev, 9) + "]\n")
		prev = name
	}
	docs, err = Parse([]byte(b.String()))
	require.NoError(t, err)
	_, err = Value(docs[0].Body)
	assert.ErrorContains(t, err, "MiB of text")
}

func TestValue_Rejects(t *testing.T) {
	for src, msg := range map[string]string{
		"a: .inf\n":              "not a JSON number",
		"a: {<<: {b: 1}}\n":      "merge keys",
		"a: !custom x\n":         "tag !custom",
		"? [a, b]\n: 1\n":        "invalid key",
		"a: 1\nb:\n  c: *nope\n": "alias",
	} {
		docs, err := Parse([]byte(src))
		if err != nil {
			assert.Contains(t, err.Error(), msg, src)
			continue
		}
		_, err = Value(docs[0].Body)
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), msg, src)
	}
}

func TestParse_SyntaxErrorHasPosition(t *testing.T) {
	_, err := Parse([]byte("a: [1, 2\nb: 3"))
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 2, e.Line)
	assert.NotContains(t, e.Message, "\n")

	_, err = Parse([]byte("a: 1\na: 2\n"))
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 2, e.Line)
	assert.Contains(t, e.Message, `"a" already defined`)
}

func TestParse_Documents(t *testing.T) {
	for src, lines := range map[string][]int{
		"# c\na: 1\n---\n# only a comment\n---\nb: 2\n": {2, 6},
		"a: 1\n---\n---\nb: 2\n":                        {1, 4}, // goccy alone loses b
		"---\na: 1\n---\nb: 2\n---\n":                   {2, 4},
		"--- {a: 1}\n--- # c\n\nb: |\n  ---x\n  y\n":    {1, 4},
		"":            nil,
		"# nothing\n": nil,
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		var got []int
		for _, d := range docs {
			got = append(got, d.Line)
			_, err := Value(d.Body)
			require.NoError(t, err)
		}
		assert.Equal(t, lines, got, src)
	}
}

// Directives: each part was parsed on its own, so "%YAML 1.2" was cut
// from the "---" it belongs to and every file declaring it failed with
// goccy's "unexpected directive value. document not started". The
// version read here may be declared; anything else is named.
func TestParse_Directives(t *testing.T) {
	for src, lines := range map[string][]int{
		"%YAML 1.2\n---\na: 1\n":                             {3},
		"# c\n%YAML 1.2\n\n# d\n---\na: 1\n":                 {6},
		"a: 0\n...\n%YAML 1.2\n---\nb: 1\n":                  {1, 5},
		"a: 0\n... # end\n# c\n%YAML 1.2\n\n---\nb: 1\n":     {1, 7},
		"a: |\n  %YAML 1.2 is text\n---\nb: 1\n":             {1, 4},
		"%YAML 1.2\n--- {a: 1}\n...\n%YAML 1.2\n---\nb: 2\n": {2, 6},
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		var got []int
		for _, d := range docs {
			got = append(got, d.Line)
		}
		assert.Equal(t, lines, got, src)
	}
	for src, want := range map[string]string{
		"%YAML 1.1\n---\na: 1\n":                           "1:1: %YAML 1.1: this file is read as YAML 1.2 (in which yes is a string, not true); declare %YAML 1.2, or no version",
		"a: 0\n...\n%YAML 1.3\n---\nb: 1\n":                "3:1: %YAML 1.3: this file is read as YAML 1.2",
		"%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n": "1:1: %TAG directives are not supported",
		"%FOO bar\n---\na: 1\n":                            "1:1: %FOO: unknown directive (only %YAML 1.2 may be declared)",
		"%YAML 1.2\na: 1\n":                                "1:1: a directive is given once and followed by a --- line",
		"a: 1\n%YAML 1.2\n---\nb: 1\n":                     "a directive is given once and followed by a --- line (and comes first, or after a ... line)",
	} {
		_, err := Parse([]byte(src))
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), want, src)
	}
}

func TestFind(t *testing.T) {
	docs, err := Parse([]byte("schema:\n  properties:\n    age:\n      type: intger\nlist:\n  - a\n  - b\n"))
	require.NoError(t, err)
	assert.Equal(t, 4, Line(Find(docs[0].Body, []string{"schema", "properties", "age", "type"})))
	assert.Equal(t, 7, Line(Find(docs[0].Body, []string{"list", "1"})))
	assert.Equal(t, 4, Line(Find(docs[0].Body, []string{"schema", "properties", "age", "nothing"})), "deepest node on the way")
}

// TestParse_ManyDocumentsInLinearTime: each document of a file is parsed
// on its own with the positions of the whole file, without the lines
// before it padded in front of it, which made a 150 KB file of short
// documents take seconds and allocate its size times its lines.
func TestParse_ManyDocumentsInLinearTime(t *testing.T) {
	src := []byte(strings.Repeat("---\na: 1\n", 16000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	docs, err := Parse(src)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, docs, 16000)
	assert.Equal(t, 2, docs[0].Line)
	assert.Equal(t, 2*16000, docs[15999].Line)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1000*len(src)), "bytes allocated: goccy/go-yaml takes about 330 times the source; the padded parts took 17,000 times")

	// Positions in a later document are those of the whole file, errors' too.
	_, err = Parse([]byte("a: 1\n---\nb: 1\n---\n\nc: 1\nc: 2\n"))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 7, e.Line)
	assert.Contains(t, e.Message, `"c" already defined at [6:1]`)
	_, err = Parse([]byte("a: 1\n---\nb: [1\n"))
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 3, e.Line)
}

// TestKey_AnchorsAliasesTags: an anchored or tagged key is its text; it
// was the anchor's "&" or the tag ("!!str"), so that a schema's
// properties: {&n name: {maxLength: 3}} described a property "&" and left
// name unchecked. An alias as a key is refused.
func TestKey_AnchorsAliasesTags(t *testing.T) {
	v := one(t, "properties:\n  &n name: {maxLength: 3}\n  !!str 017: {}\n")
	assert.Equal(t, map[string]any{"properties": map[string]any{
		"name": map[string]any{"maxLength": json.Number("3")},
		"017":  map[string]any{},
	}}, v)

	docs, err := Parse([]byte("a: &k b\n*k : 2\n"))
	require.NoError(t, err)
	_, err = Value(docs[0].Body)
	assert.EqualError(t, err, "2:1: an alias (*k) cannot be a key")

	_, err = Parse([]byte("&k a: 1\na: 2\n"))
	assert.ErrorContains(t, err, `"a" already defined`)
}

// TestValue_StrTag: !!str keeps the scalar's text as written; it was the
// text of the value goccy/go-yaml read (!!str 017 was "15", !!str null
// "<nil>").
func TestValue_StrTag(t *testing.T) {
	v := one(t, "a: !!str 017\nb: !!str 0x10\nc: !!str 1.50\nd: !!str ~\ne: !!str true\nf: !!str 1e3\n"+
		"g: !!str null\nh: !!str 1.0e+3\ni: !!str .inf\nj: !!str 'x y'\nk: !!str |\n  l\n")
	assert.Equal(t, map[string]any{"a": "017", "b": "0x10", "c": "1.50", "d": "~", "e": "true", "f": "1e3",
		"g": "null", "h": "1.0e+3", "i": ".inf", "j": "x y", "k": "l\n"}, v)
}

// TestValue_StrTagOnNothing: !!str with no text after it is the empty
// string, as YAML reads it; it was "null", the text goccy/go-yaml gives
// the null it makes up there.
func TestValue_StrTagOnNothing(t *testing.T) {
	v := one(t, "a: 1\nb: !!str\n")
	assert.Equal(t, map[string]any{"a": json.Number("1"), "b": ""}, v)
}

// TestValue_TypeTags: a value under !!int, !!float, !!bool, !!null, !!map
// or !!seq must be of that type; the tag was dropped, so !!int '12' was
// the string "12" (an integer in YAML) and !!null x the string "x".
func TestValue_TypeTags(t *testing.T) {
	v := one(t, "a: !!int 12\nb: !!float 1.5\nc: !!float 2\nd: !!bool true\ne: !!null ~\nf: !!map {x: 1}\ng: !!seq [1]\n")
	assert.Equal(t, map[string]any{"a": json.Number("12"), "b": json.Number("1.5"), "c": json.Number("2"), "d": true, "e": nil,
		"f": map[string]any{"x": json.Number("1")}, "g": []any{json.Number("1")}}, v)
	for src, msg := range map[string]string{
		"a: !!int '12'\n":   "1:4: YAML tag !!int on a value of another type (12)",
		"a: !!int 1.5\n":    "1:4: YAML tag !!int on a value of another type (1.5)",
		"a: !!float abc\n":  "1:4: YAML tag !!float on a value of another type (abc)",
		"a: !!bool 'yes'\n": "1:4: YAML tag !!bool on a value of another type (yes)",
		"a: !!null x\n":     "1:4: YAML tag !!null on a value of another type (x)",
		"a: !!int 1e3\n":    "1:4: YAML tag !!int on a value of another type (1e3)",
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		_, err = Value(docs[0].Body)
		assert.EqualError(t, err, msg, src)
	}
}

// TestValue_LeadingZeros: an integer written with leading zeros is octal
// to goccy/go-yaml and YAML 1.1 but decimal to YAML 1.2 (and to the YAML
// language server that checks contracts in editors); where the readings
// differ it is refused. maximum: 017 was 15.
func TestValue_LeadingZeros(t *testing.T) {
	v := one(t, "a: 0o17\nb: 07\nc: 00\nd: '017'\ne: 0x17\n")
	assert.Equal(t, map[string]any{"a": json.Number("15"), "b": json.Number("7"), "c": json.Number("0"), "d": "017", "e": json.Number("23")}, v)
	for src, msg := range map[string]string{
		"a: 017\n":  "1:4: 017 is 15 in YAML 1.1 (octal) but 17 in YAML 1.2: write 0o17 or 17",
		"a: -010\n": "1:4: -010 is -8 in YAML 1.1 (octal) but -10 in YAML 1.2: write -8 or -10",
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		_, err = Value(docs[0].Body)
		assert.EqualError(t, err, msg, src)
	}
}

// TestValue_NumbersAsYAML12: a plain scalar YAML 1.2 reads as a number is
// that number, exactly. goccy/go-yaml leaves a sign or digits past 64 bits
// as text, and reads .5 or +1.5 as a float64: minimum:
// .30000000000000000001 was 0.3, which 0.3 passes, and maximum:
// +12345678901234567890123 or const: 0x10000000000000000 the string.
func TestValue_NumbersAsYAML12(t *testing.T) {
	v := one(t, "a: +12345678901234567890123\nb: 0x10000000000000000\nc: 0o1777777777777777777777\n"+
		"d: .30000000000000000001\ne: +0.30000000000000000001\nf: +1e400\ng: .5e400\nh: 1.\ni: -.5\nj: +1.50\nk: '+1'\n")
	assert.Equal(t, map[string]any{
		"a": json.Number("12345678901234567890123"),
		"b": json.Number("18446744073709551616"),
		"c": json.Number("18446744073709551615"),
		"d": json.Number("0.30000000000000000001"),
		"e": json.Number("0.30000000000000000001"),
		"f": json.Number("1e400"),
		"g": json.Number("0.5e400"),
		"h": json.Number("1"),
		"i": json.Number("-0.5"),
		"j": json.Number("1.50"),
		"k": "+1",
	}, v)
	for src, msg := range map[string]string{
		// Text to YAML 1.1 (and goccy/go-yaml), 8 and 1000 to YAML 1.2.
		"a: 08\n":   "1:4: 08 is octal or text in YAML 1.1 but 8 in YAML 1.2: write 8, or quote it for the text",
		"a: 01e3\n": "1:4: 01e3 is octal or text in YAML 1.1 but 1e3 in YAML 1.2: write 1e3, or quote it for the text",
		"a: 0x" + strings.Repeat("f", 1001) + "\n": "1:4: 0xffffffff…: a hexadecimal or octal number of more than 1000 digits",
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		_, err = Value(docs[0].Body)
		assert.EqualError(t, err, msg, src)
	}
}

// TestValue_YAML11NumbersAreRefused: what goccy/go-yaml reads as a number,
// as YAML 1.1 does (1_000, 0b101) or as no YAML does (-0x10, +0o17), but
// YAML 1.2 (and the YAML language server checking contracts in editors)
// reads as text, is refused with both readings; it was the number. (An
// octal number has no sign in YAML 1.2, so -010's advice is -8, not
// -0o10.)
func TestValue_YAML11NumbersAreRefused(t *testing.T) {
	for src, msg := range map[string]string{
		"a: 1_000\n":     "1:4: 1_000 is the number 1000 in YAML 1.1 but text in YAML 1.2: write 1000, or quote it for the text",
		"a: 0b101\n":     "1:4: 0b101 is the number 5 in YAML 1.1 but text in YAML 1.2: write 5, or quote it for the text",
		"a: -0x10\n":     "1:4: -0x10 is the number -16 in YAML 1.1 but text in YAML 1.2: write -16, or quote it for the text",
		"a: +0o17\n":     "1:4: +0o17 is the number 15 in YAML 1.1 but text in YAML 1.2: write 15, or quote it for the text",
		"a: 0_17\n":      "1:4: 0_17 is the number 15 in YAML 1.1 but text in YAML 1.2: write 15, or quote it for the text",
		"a: 1.5_0\n":     "1:4: 1.5_0 is the number 1.5 in YAML 1.1 but text in YAML 1.2: write 1.5, or quote it for the text",
		"a: [1_0]\n":     "1:5: 1_0 is the number 10 in YAML 1.1 but text in YAML 1.2: write 10, or quote it for the text",
		"a: -0o10\n":     "1:4: -0o10 is the number -8 in YAML 1.1 but text in YAML 1.2: write -8, or quote it for the text",
		"a: !!int 1_0\n": "1:9: 1_0 is the number 10 in YAML 1.1 but text in YAML 1.2: write 10, or quote it for the text",
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err, src)
		_, err = Value(docs[0].Body)
		assert.EqualError(t, err, msg, src)
	}
	v := one(t, "a: '1_000'\nb: !!str 0b101\nc: 1000\nd: 0x1F\ne: 0o17\n")
	assert.Equal(t, map[string]any{"a": "1_000", "b": "0b101", "c": json.Number("1000"), "d": json.Number("31"), "e": json.Number("15")}, v)
}

// TestParse_CRLFReadsAsLF: a file saved with CR LF line breaks reads as
// its LF twin. goccy/go-yaml folded a quoted string's CR LF into a line
// feed where an LF folds into a space: pattern: "^a\r\n  b$" was "^a\nb$",
// not "^a b$".
func TestParse_CRLFReadsAsLF(t *testing.T) {
	lf := "%YAML 1.2\n---\na: \"x\n  y\"\nb: 'x\n  y'\nc: \"x\n\n  y\"\nd: \"x\\\n  y\"\ne: x\n  y\nf: |\n  x\n  y\ng: >\n  x\n  y\n\n  z\nh: [x,\n  y]\n---\ni: 1\n"
	want := []any{map[string]any{"a": "x y", "b": "x y", "c": "x\ny", "d": "xy", "e": "x y", "f": "x\ny\n", "g": "x y\nz\n",
		"h": []any{"x", "y"}}, map[string]any{"i": json.Number("1")}}
	for _, src := range []string{lf, strings.ReplaceAll(lf, "\n", "\r\n")} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err)
		var got []any
		var lines []int
		for _, d := range docs {
			v, err := Value(d.Body)
			require.NoError(t, err)
			got = append(got, v)
			lines = append(lines, d.Line)
		}
		assert.Equal(t, want, got, "%q", src)
		assert.Equal(t, []int{3, 25}, lines, "%q", src)
	}
}

// TestParse_InvalidEscapes: an escape of a double-quoted string that is no
// character is an error, as in YAML (and JSON). goccy/go-yaml read any
// character as a hexadecimal digit ("\u00g1" was "ͱ", "\x4G" "W"), a
// lone surrogate or a code point past U+10FFFF as U+FFFD, and "\x" with
// too few characters after it as "x": the contract held another value
// than the one written.
func TestParse_InvalidEscapes(t *testing.T) {
	for src, want := range map[string]string{
		"a: \"\\u00g1\"\n":               `1:4: invalid escape \u00g1 in a quoted string: \u takes 4 hexadecimal digits`,
		"a: \"\\x4G\"\n":                 `1:4: invalid escape \x4G in a quoted string: \x takes 2 hexadecimal digits`,
		"a: \"\\x\"":                     `1:4: invalid escape \x in a quoted string: \x takes 2 hexadecimal digits`,
		"a: \"\\udc00\"\n":               `1:4: invalid escape \udc00 in a quoted string: half of a UTF-16 surrogate pair`,
		"a: \"\\UFFFFFFFF\"\n":           `1:4: invalid escape \UFFFFFFFF in a quoted string: not a Unicode character`,
		"a: \"\\U0000D800\"\n":           `1:4: invalid escape \U0000D800 in a quoted string: not a Unicode character`,
		"a: 1\n---\nb: [1, \"\\x+1\"]\n": `3:8: invalid escape \x+1 in a quoted string: \x takes 2 hexadecimal digits`,
		"{\"k\\u00zz\": 1}\n":            `1:2: invalid escape \u00zz in a quoted string: \u takes 4 hexadecimal digits`,
	} {
		_, err := Parse([]byte(src))
		assert.EqualError(t, err, want, "%q", src)
	}
	v := one(t, "a: \"\\x41\\u00e9\\ud83d\\ude00\\U0001F600\\U0010FFFF\\/\\\"\\\\\"\nb: say \"\\xZZ\"\nc: 'x\\xZZ'\n")
	assert.Equal(t, map[string]any{"a": "Aé😀😀\U0010FFFF/\"\\", "b": `say "\xZZ"`, "c": `x\xZZ`}, v)
}

// TestParse_EscapesOfALongLineInLinearTime: the escapes of a line of
// many double-quoted strings are checked in time linear in the line; each
// string was found by counting the line's characters from its start, and
// a 140 kB line of 20,000 "\x41" took 150 times as long as one of "x",
// whose escapes are not checked (3.6 s). A bad escape at the end is still
// found, at its column. (Untimed, as this project's unit tests are: a
// return to quadratic time shows as seconds of test time.)
func TestParse_EscapesOfALongLineInLinearTime(t *testing.T) {
	const n = 20000
	line := func(s, last string) []byte {
		return []byte("a: [" + strings.Repeat(s+", ", n) + "\"é\", " + last + "]\n")
	}
	_, err := Parse(line(`"x"`, `"x"`))
	require.NoError(t, err)
	_, err = Parse(line(`"\x41"`, `"\xZZ"`))
	assert.EqualError(t, err, fmt.Sprintf(`1:%d: invalid escape \xZZ in a quoted string: \x takes 2 hexadecimal digits`, 4+n*8+6))
}

// TestValue_PlusInfIsNoNumber: +.inf is infinity in YAML 1.2, as .inf and
// -.inf are, and no JSON number; goccy/go-yaml read it as the text
// "+.inf" (found by review: enum: [+.inf] allowed the string). +.nan is
// text in YAML 1.2 (a NaN has no sign), and stays so.
func TestValue_PlusInfIsNoNumber(t *testing.T) {
	for _, v := range []string{"+.inf", "+.Inf", "+.INF", ".inf", "-.Inf"} {
		docs, err := Parse([]byte("a: [" + v + "]\n"))
		require.NoError(t, err, v)
		_, err = Value(docs[0].Body)
		assert.EqualError(t, err, "1:5: "+v+" is not a JSON number", v)
	}
	assert.Equal(t, map[string]any{"a": "+.nan", "b": "+.inf", "c": "+.iNf"}, one(t, "a: +.nan\nb: '+.inf'\nc: +.iNf\n"))
}

// TestParse_NestingIsBounded: goccy/go-yaml's parser takes time and memory
// quadratic in the depth of collections nested in flow style or on one
// line (100 KB of brackets: 13 s and 4.8 GB). Deeper than MaxDepth is an
// error at the token that goes too deep, before the parser runs; as deep
// as MaxDepth, or as long, is not.
func TestParse_NestingIsBounded(t *testing.T) {
	const maxDepth = 1000 // MaxDepth
	deep := func(open, close string, n int) string {
		return "k: " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
	}
	for _, c := range []struct{ src, err string }{
		{deep("[", "]", maxDepth+1), "1:1004: nested more than 1000 levels deep"},
		{"k:\n" + strings.Repeat("[\n", maxDepth+1), "1002:1: nested more than 1000 levels deep"},
		{strings.Repeat("- ", maxDepth/2) + strings.Repeat("[", maxDepth/2+1) + strings.Repeat("]", maxDepth/2+1) + "\n", "1:1501: nested more than 1000 levels deep"},
		{"- " + deep("- ", "", maxDepth)[3:], "1:2001: nested more than 1000 levels deep"},
		{"k:\n  " + strings.Repeat("? ", maxDepth+1) + "x\n", "2:2003: nested more than 1000 levels deep"},
	} {
		_, err := Parse([]byte(c.src))
		require.Error(t, err, c.err)
		assert.Equal(t, c.err, err.Error())
	}
	for _, src := range []string{
		deep("[", "]", maxDepth),
		deep("{a: ", "}", maxDepth),
		deep("- ", "", maxDepth)[3:],
		"k: [" + strings.Repeat("[1], ", 10*maxDepth) + "2]\n",    // long, not deep
		strings.Repeat("- - 1\n", 10*maxDepth),                    // two deep on each line
		"k: [" + strings.Repeat("1, ", 10*maxDepth) + "]]]]]]]\n", // closed too often: the parser's to say
	} {
		_, err := Parse([]byte(src))
		if strings.HasSuffix(src, "]]]]]]]\n") {
			assert.NotContains(t, fmt.Sprint(err), "nested")
			continue
		}
		assert.NoError(t, err, src[:20])
	}
}

// TestParse_NotUTF8: a file that is not UTF-8 (Latin-1, UTF-16, UTF-32) was read
// with its bytes as they were, and a contract in Latin-1 loaded with an
// endpoint and texts that are not UTF-8. It is an error at the first byte
// that is not.
func TestParse_NotUTF8(t *testing.T) {
	for src, want := range map[string]string{
		"endpoint: /a\nmethod: POST\nschema: {description: \"caf\xe9\"}\n": "3:27: byte 0xe9 is not UTF-8: save the file as UTF-8",
		"\ufeffendpoint: /caf\xe9\n":                                       "1:15: byte 0xe9 is not UTF-8: save the file as UTF-8",
		"\xff\xfee\x00n\x00d\x00:\x00 \x00/\x00\n\x00":                     "1:1: the file is UTF-16 (its byte order mark says so): save it as UTF-8",
		"\xfe\xff\x00e\x00n\x00d\x00:\x00 \x00/\x00\n":                     "1:1: the file is UTF-16 (its byte order mark says so): save it as UTF-8",
		// UTF-32: its little-endian mark starts with UTF-16's, and was
		// reported as UTF-16; the big-endian one as a byte 0xfe.
		"\xff\xfe\x00\x00e\x00\x00\x00n\x00\x00\x00:\x00\x00\x00\n\x00\x00\x00": "1:1: the file is UTF-32 (its byte order mark says so): save it as UTF-8",
		"\x00\x00\xfe\xff\x00\x00\x00e\x00\x00\x00n\x00\x00\x00:\x00\x00\x00\n": "1:1: the file is UTF-32 (its byte order mark says so): save it as UTF-8",
	} {
		_, err := Parse([]byte(src))
		require.Error(t, err, "%q", src)
		assert.Equal(t, want, err.Error(), "%q", src)
	}
	_, err := Parse([]byte("endpoint: /café\nmethod: POST\n"))
	assert.NoError(t, err)
}

// TestValue_AliasInsideItsOwnAnchor: an alias inside the node its anchor
// names stands for that node (the last anchor of the name before it), a
// recursion JSON has no value for; Value read it as an earlier anchor of
// the same name (b: [1]), where Aliases, which says where a configuration
// value comes from, reads it as YAML does.
func TestValue_AliasInsideItsOwnAnchor(t *testing.T) {
	for src, want := range map[string]string{
		"a: &x 1\nb: &x [*x]\n":      "2:8: alias *x is inside the node it names",
		"b: &x {c: *x}\n":            "1:11: alias *x is inside the node it names",
		"a: &x 1\nb: &x {c: [*x]}\n": "2:12: alias *x is inside the node it names",
	} {
		docs, err := Parse([]byte(src))
		require.NoError(t, err)
		_, err = Value(docs[0].Body)
		require.Error(t, err, src)
		assert.Equal(t, want, err.Error(), src)
	}
	// An anchor whose node fails leaves the one before it to the nodes
	// converted after it.
	docs, err := Parse([]byte("- &x 1\n- &x [*x, .nan]\n- *x\n"))
	require.NoError(t, err)
	a := NewAnchors()
	items := docs[0].Body.(*ast.SequenceNode).Values
	v, err := ValueWith(items[0], a)
	require.NoError(t, err)
	assert.Equal(t, json.Number("1"), v)
	_, err = ValueWith(items[1], a)
	assert.ErrorContains(t, err, "alias *x is inside the node it names")
	v, err = ValueWith(items[2], a)
	require.NoError(t, err)
	assert.Equal(t, json.Number("1"), v)
	// A later anchor of the name is the one that counts after its node.
	docs, err = Parse([]byte("a: &x 1\nb: &x 2\nc: *x\n"))
	require.NoError(t, err)
	v, err = Value(docs[0].Body)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": json.Number("1"), "b": json.Number("2"), "c": json.Number("2")}, v)
}
