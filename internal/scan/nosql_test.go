package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDatabaseCallLinear: the method after each db. is read as far as it
// is letters. It was read up to the next (, so that every db. before a
// late ( read the rest of the value again: 100 KB of "db." and a ( took
// ten seconds, a body of them many minutes.
func TestDatabaseCallLinear(t *testing.T) {
	const n = 256 << 10
	for _, s := range []string{strings.Repeat("db.", n/3) + "(", strings.Repeat("db.x", n/4) + "(", strings.Repeat("db.x.", n/5) + "("} {
		assert.Equal(t, None, String(s), s[:8]) // not timed (unit tests assert no times): quadratic, this test takes minutes
	}
	assert.Equal(t, NoSQLInjection, String(strings.Repeat("db.", n/3)+"getCollectionNames()"))
	assert.Equal(t, NoSQLInjection, String(strings.Repeat("db.x", n/4)+".find({})"))
	for _, set := range []*foldSet{databaseMethods, collectionMethods} {
		for _, w := range set.slots {
			assert.True(t, w == "" || !strings.ContainsFunc(w, func(r rune) bool { return r > 0x7f || !isLetter(byte(r)) }), "%q: methodCall reads letters only", w)
		}
	}
}

// TestJSAfterQuoteThroughJavaScriptSpace: the || or && after a quote
// closed early, and the statement after a ;, are found across whatever
// JavaScript reads as blank between them: a line break, a vertical tab, a
// form feed, a no-break space, U+2028, and comments. Only blanks and tabs
// were skipped, so that "admin'\n|| 'a'=='a" passed, which a $where clause
// built as "this.user == '" + input + "'" runs as
// this.user == 'admin' || 'a'=='a', true for every document, while the
// same value with a blank was flagged.
func TestJSAfterQuoteThroughJavaScriptSpace(t *testing.T) {
	for _, s := range []string{
		"admin'\n|| 'a'=='a",
		"admin'\r\n&& this.password.match(/.*/)//",
		"x'\v|| '1'=='1",
		"x'\f|| '1'=='1",
		"x'\u00a0|| '1'=='1",
		"x'\u2028|| '1'=='1",
		"x'\ufeff|| '1'=='1",
		"x'/**/|| '1'=='1",
		"x\"/* a */&&/**/\"1\"==\"1",
		"x'//c\n|| '1'=='1",
		"x';\nvar a='",
		"x' ; var a='",
		"x'\n;\nthis.a='",
	} {
		assert.True(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
		assert.Equal(t, NoSQLInjection, String(s), "%q", s)
	}
	for _, s := range []string{
		"Rock 'n'\nroll",
		"it's 'ok'\n\nnot || really",
		"x'/* open || '1'=='1",
		"'Tis\nthe season; try again",
	} {
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
	}
	// Linear: an unclosed comment after every quote is looked for once.
	for _, s := range []string{strings.Repeat("'/*", 100<<10), strings.Repeat("'//", 100<<10), strings.Repeat("' \n", 100<<10) + ";", strings.Repeat(" \n;", 100<<10)} {
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", s[:9])
	}
}

// TestJSBlanksLinear: a skip that starts inside comments an earlier skip
// crossed stops where it meets that one's steps. Each ; of "//;\n" again
// and again walked every line comment after it to the end of the value:
// 256 KB took 25 seconds (not timed: unit tests assert no times).
func TestJSBlanksLinear(t *testing.T) {
	const n = 256 << 10
	for _, u := range []string{"//;\n", "//x'\n", ";/*//*\n", "/*;*//**/", "//;\u2028 \u00a0"} {
		s := strings.Repeat(u, n/len(u))
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", u)
		s += "x' || '1'=='1"
		assert.True(t, jsAfterQuote(s, bytesIn(s)), "%q", u)
	}
	assert.Equal(t, NoSQLInjection, String(strings.Repeat("//;\n", n/4)+"x'\n|| '1'=='1"))
}

// TestJSAfterQuoteThroughHTMLComments: a script's HTML-like comments,
// <!-- anywhere and --> at a line's start, run to the line's end in
// the JavaScript a $where clause runs, as // does; "x'<!--\n|| '1'=='1"
// passed while "x'//\n|| '1'=='1" was flagged.
func TestJSAfterQuoteThroughHTMLComments(t *testing.T) {
	for _, s := range []string{"x'<!--\n|| '1'=='1", "x'\n-->c\n|| '1'=='1", "x'\n \t--> c\r&& '1'=='1", "x';<!-- c\nreturn true;'", "x'\u2028-->\u2028||1"} {
		assert.True(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
		assert.Equal(t, NoSQLInjection, String(s), "%q", s)
	}
	for _, s := range []string{"x'-->\n|| '1'=='1", "x' a-->\n|| '1'=='1", "it's <!-- a comment -->"} {
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
	}
}

// TestJSAfterQuoteThroughHTMLCloseCommentVariants: a script reads --> as
// a comment after a line terminator and any white space (U+000B, U+000C,
// U+00A0, U+FEFF too) or /*…*/ comments on that line, and after a /*…*/
// that holds a line terminator (Annex B's SingleLineHTMLCloseComment and
// MultiLineComment), as V8 does; only blanks and tabs were read before it.
func TestJSAfterQuoteThroughHTMLCloseCommentVariants(t *testing.T) {
	for _, s := range []string{
		"x'\n\v--> c\n|| '1'=='1", "x'\n\f-->\n|| '1'=='1", "x'\n\u00a0--> c\n|| '1'=='1", "x'\n\ufeff-->\n&& '1'=='1",
		"x'\n/**/--> c\n|| '1'=='1", "x'\n /* a */ /**/\t--> c\n|| '1'=='1",
		"x'/*\n*/--> c\n|| '1'=='1", "x'/* a\u2028b */ /**/--> c\n|| '1'=='1",
	} {
		assert.True(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
		assert.Equal(t, NoSQLInjection, String(s), "%q", s)
	}
	for _, s := range []string{"x'/**/-->\n|| '1'=='1", "x'\na/**/-->\n|| '1'=='1", "x'\n*/-->\n|| '1'=='1", "x'/*/\n-->\n|| '1'=='1"} {
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
	}
}

// TestJSAfterQuoteThroughHTMLCloseCommentOpenedEarlier: a /*…*/ before a
// --> reads back to where it opens, its first /*, not the nearest /*
// inside it: V8 reads each of these as this.n == "x" || "a"=="a" (the
// value passed the whole scan).
func TestJSAfterQuoteThroughHTMLCloseCommentOpenedEarlier(t *testing.T) {
	for _, s := range []string{
		"x\"\n//\n/* a /* b */--> c\n|| \"a\"==\"a", "x\"\n//\n/*/**/--> c\n|| \"a\"==\"a",
		"x\"\n//\n/* \n a /* b */--> c\n|| \"a\"==\"a", "x\"\n<!--\n/*/ a */ /* b /* c */--> c\n&& \"a\"==\"a",
	} {
		assert.True(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
		assert.Equal(t, NoSQLInjection, String(s), "%q", s)
	}
	for _, s := range []string{"x\"/* a /* b */--> c\n|| \"a\"==\"a", "x\"\n/**/ a /* b */--> c\n|| \"a\"==\"a"} {
		assert.False(t, jsAfterQuote(s, bytesIn(s)), "%q", s)
	}
}

// TestJSBlanksCloseCommentLinear: many skips, each from its own /*,
// cross one long comment to a --> whose reading goes back over it: it is
// read back once, not once a skip.
func TestJSBlanksCloseCommentLinear(t *testing.T) {
	const n = 64 << 10
	s := strings.Repeat("'/*", n) + strings.Repeat(" ", n) + "*/-->x"
	b := jsBlanks{s: s, block: notLooked, line: notLooked}
	for i := 1; i < len(s); i += 3 {
		if s[i-1] == '\'' {
			assert.Equal(t, len(s)-len("-->x"), b.skip(i))
		}
	}
	assert.False(t, jsAfterQuote(s, bytesIn(s)))
}

// TestJSBlanksWithoutMemo: a value longer than maxBlanksMemo (2 GiB: its
// remembered ends are int32, which would wrap) is skipped through without
// them, to the same verdicts.
func TestJSBlanksWithoutMemo(t *testing.T) {
	values := []string{"x'/**/|| '1'=='1", "x'//c\n|| 1", "x'\n/**/--> c\n|| '1'=='1", "x'/* fine */ here", "x'//;\n//;\nx' ; var a='"}
	want := make([]bool, len(values))
	for i, s := range values {
		want[i] = jsAfterQuote(s, bytesIn(s))
	}
	defer func(n int) { maxBlanksMemo = n }(maxBlanksMemo)
	maxBlanksMemo = 4
	for i, s := range values {
		b := jsBlanks{s: s, block: notLooked, line: notLooked}
		b.skip(2) // after the quote: through a comment
		assert.Nil(t, b.ends, "%q: no memo past the limit", s)
		assert.Equal(t, want[i], jsAfterQuote(s, bytesIn(s)), "%q", s)
	}
}
