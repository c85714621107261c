package scan

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodePath: percent-encoding, overlong forms in either case, and
// one string built per round of decoding, not one per escape.
func TestDecodePath(t *testing.T) {
	for in, want := range map[string]string{
		"report%20Q3.pdf":        "report Q3.pdf",
		"..%2F..%2Fetc%2Fpasswd": "../../etc/passwd",
		"%C0%AE%c0%ae/":          "../",
		"%U002E%u002e%E0%80%AF":  "../",
		"%25%32%65%25%32%65":     "..",  // two rounds
		"%25252e%25252e%25252f":  "../", // three rounds
		"%2525252e":              "%2e", // a fourth is not done
		"100%":                   "100%",
		"%u002e%u002e%u005c":     `..\`,
		"%uFF0E%uff0e%uFF0F":     "../",
		// Raw overlong bytes, as url.ParseQuery leaves %c0%af.
		"..\xc0\xaf..\xc0\xafetc":               "../../etc",
		"\xc0\xae\xc0\xae\xc1\x9c":              `..\`,
		"\xe0\x80\xae\xe0\x80\xae\xe0\x80\xafx": "../x",
		"नमस्ते":                                "नमस्ते", // a 0xE0 lead byte of real UTF-8
	} {
		assert.Equal(t, want, decodePath(in), in)
	}
	for _, v := range []string{"..\xc0\xaf..\xc0\xafetc\xc0\xafpasswd", "..\xc1\x9c..\xc1\x9cwin.ini", "\xe0\x80\xae\xe0\x80\xae\xe0\x80\xafsecret"} {
		assert.Equal(t, PathTraversal, String(v), "%q", v)
	}
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { decodePath("..%2F..%2Fetc%2Fpasswd") }), 1.0)
}

// TestPathTraversalShortWays: pathTraversal's short ways answer as its
// general path does (taken here by claiming every kind of byte it looks
// for): for a value without a separator, and for one with nothing to
// decode and no backslash. Tried on every sensitive path and its parts,
// with and without separators around them, and on the corpora.
func TestPathTraversalShortWays(t *testing.T) {
	values := []string{"..", "...", ".env", ".envelope", "ID_RSA.pub", "win.ini", "x.htaccess", "web.config.bak",
		"https://shop.example.com/hooks/orders?id=42", "2018-02-12/..", "Home/.../Settings", "a/../b"}
	for _, p := range sensitivePaths {
		values = append(values, p, strings.ToUpper(p), p+"x", p+".x", "."+p, "/"+p, "x/"+p, "../"+p, "./"+p+"/x")
		values = append(values, strings.Split(p, "/")...)
	}
	for _, c := range publicCorpora(t) {
		for _, s := range c.samples {
			values = append(values, s.text)
		}
	}
	const general = hasSep | hasPercent | hasOverlong | hasBackslash
	noSeparator, nothingToDecode := 0, 0
	for _, s := range values {
		f := bytesIn(s)
		switch {
		case f&hasPath == 0 || f&general == general:
			continue
		case f&hasSep == 0:
			noSeparator++
		case f&(hasPercent|hasOverlong|hasBackslash) == 0:
			nothingToDecode++
		}
		require.Equal(t, pathTraversal(s, f|general), pathTraversal(s, f), "%q", s)
	}
	require.Greater(t, noSeparator, 100)
	require.Greater(t, nothingToDecode, 100)
}

// TestPathTraversalFullwidth: the characters IIS's %uff0e, %uff0f,
// %uff3c, %u2215 and %u2216 stand for (which Windows' best-fit mapping and
// NFKC normalisation make . / \) are read as the escapes are when they
// come decoded: in a JSON string, or percent-encoded as UTF-8 in a query
// value. Text that holds them (CJK punctuation, fractions) is not a path
// for that.
func TestPathTraversalFullwidth(t *testing.T) {
	for v, want := range map[string]Class{
		"．．／．．／secret":                      PathTraversal,
		"..／..／secret":                      PathTraversal,
		"..＼..＼secret":                      PathTraversal,
		"..∕..∕secret":                      PathTraversal,
		"..∖..∖secret":                      PathTraversal,
		"%EF%BC%8E%EF%BC%8E%EF%BC%8Fsecret": PathTraversal,
		"%25EF%25BC%258E%25EF%25BC%258E/x":  PathTraversal,
		"価格／数量":                             None,
		"１／２ cup":                           None,
		"Ｑ＆Ａ．．．":                            None,
		"A — B / C … “quoted” ‘x’ €5":       None,
		"日本語．テキスト／資料．pdf":                   None,
		"見出し１．．．見出し２":                       None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for form := range overlong { // hasWide knows every one
		if r, err := strconv.ParseUint(form[2:], 16, 32); form[1] == 'u' && err == nil && r >= utf8.RuneSelf {
			assert.True(t, hasWide("x"+string(rune(r))), form)
		}
	}
	for _, v := range []string{"A — B / C … “quoted”", "日本語，テキスト（資料）"} {
		assert.LessOrEqual(t, testing.AllocsPerRun(20, func() { decodePath(v) }), 0.0, v)
	}
}

// TestPathTraversalBareNameBesideUTF8: the lead bytes of ．／＼∕∖ (0xE2,
// 0xEF) lead dashes, quotes and ellipses too, and the lead byte of the
// raw overlong forms (0xE0) Thai: a value they are in holds no separator
// for them unless it holds those characters, and a sensitive name with
// no ., /, \ or % beside them stays a bare name (found by review:
// "id_rsa — my key" was a path traversal since 790d616, "id_rsa" not).
func TestPathTraversalBareNameBesideUTF8(t *testing.T) {
	for s, want := range map[string]Class{
		"id_rsa — my key":      None,
		"id_rsa…":              None,
		"id_ed25519 “backup”":  None,
		"id_rsa ＋ id_dsa":      None,
		"id_rsa ภาษาไทย":       None,
		"id_rsa／x":             PathTraversal,
		"．．／．．／etc — x":        PathTraversal,
		"id_rsa — /etc/passwd": PathTraversal,
		"id_rsa — ..\\x":       PathTraversal,
		"id_rsa.pub — key":     PathTraversal,
		"\xc0\xae\xc0\xae/x —": PathTraversal,
	} {
		assert.Equal(t, want, String(s), "%q", s)
	}
}

// TestPathTraversalDotDotBeforeQuery: a URL's path ends at a ? or a #,
// so WHATWG's parser and RFC 3986 read "users/..?x" as users/.. and step
// up, as "users/.." does: a value an application puts into a URL
// ("/api/users/" + id, id "..?x" or "..#") reaches /api/. A .. was a
// segment before a / or at the end only, and these passed. An ellipsis
// before a ? is no segment.
func TestPathTraversalDotDotBeforeQuery(t *testing.T) {
	for s, want := range map[string]Class{
		"x/..?y": PathTraversal, "..?x": PathTraversal, "..#": PathTraversal, "a/..#frag": PathTraversal,
		`x\..?y`: PathTraversal, "/api/%2e%2e?x": PathTraversal, "/api/.%2E#x": PathTraversal,
		"Wait..?": None, "So... what?": None, "Really..? Yes": None, "x/...?y": None, "?a=..": None,
	} {
		assert.Equal(t, want, String(s), "%q", s)
	}
}
