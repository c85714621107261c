package scan

import (
	"strings"

	"github.com/contractguard/contractguard/internal/formats"
)

// The prefilters: the values libinjection's SQL and XSS checks would find
// nothing in, told by their shape, so that it is not run on them.

// needsSQLi reports whether libinjection's SQL check must run on s. It
// never calls SQL injection a value of letters, digits and _ only (one or
// two words to its tokenizer, and no fingerprint of its list is that
// short), nor a plain URL or e-mail address, a UUID, a date or a date-time
// (their letters, a-f, T and Z, spell no keyword), an IP address, a product
// code, or prose without a SQL word. Any other byte opens a way: "0AND-0"
// is a tautology, "0::@" a cast and a variable, "0OR.OR.OR.0" a chain of
// ORs. The cheap shape tests come first. FuzzPrefilters holds the claim to
// libinjection's verdicts, on the corpora and on random input, and
// TestPrefilterShapes on every SQL word in every shape.
func needsSQLi(s string, f uint32) bool {
	if f&notToken == 0 {
		return false
	}
	digit := isDigit(s[0])
	switch {
	case f&notURL == 0 && plainURL(s),
		f&notEmail == 0 && plainEmail(s),
		len(s) == 36 && formats.UUID(s),
		len(s) == 10 && digit && formats.Date(s),
		len(s) >= 20 && digit && s[4] == '-' && formats.DateTime(s),
		!digit && f&notCode == 0 && productCode(s),
		len(s) <= 15 && digit && f&hasColon == 0 && formats.IPv4(s),
		len(s) <= 45 && f&hasColon != 0 && formats.IPv6(s):
		return false
	case f&notProse == 0 && (f&hasDash == 0 || !strings.Contains(s, "--")) && !hasSQLWord(s):
		return false
	}
	return true
}

// plainURL reports a value that starts http:// or https://. needsSQLi
// asks it only of a value whose bytes are letters, digits and ._~/?=&#:%-
// (no notURL byte): its scheme, colon and slashes are the first tokens
// libinjection reads, and no fingerprint that starts so is in its list
// (TestPrefilterShapes and FuzzPrefilters try SQL in every part).
func plainURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// plainEmail reports an address local@domain whose local part starts
// with a letter and holds letters, digits, _ and dots, and whose domain
// holds letters, digits and dots, where no part of the local part that a
// dot follows is a SQL word. libinjection reads it as two tokens: the
// local part as one word (its tokenizer splits a word at a dot only after
// a keyword), and @domain as one variable, which runs to the end. No
// fingerprint of its list is a token and a variable, or a variable alone
// (what is left when the word is one it skips, such as a type), whatever
// the word reads as: TestPrefilterShapes tries every SQL word there.
func plainEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || !isLetter(s[0]) || strings.IndexByte(s[at+1:], '@') >= 0 ||
		strings.IndexByte(s[at+1:], '_') >= 0 {
		return false
	}
	start := 0
	for i := range at {
		if s[i] == '.' {
			if sqlWordIndex.hasFold(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// productCode reports a code of up to 8 letters, an optional hyphen and
// up to 12 digits (BK-001, SKU12345): a word and a number to libinjection,
// whatever the word (TestPrefilterShapes tries every SQL keyword).
func productCode(s string) bool {
	i := 0
	for i < len(s) && i < 8 && isLetter(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	return i == len(s) && 0 < digits && digits <= 12
}

// needsXSS reports whether libinjection's XSS check must run on s, with
// the bytes f. Its checks fire on a tag, a comment or a doctype, which
// need <, or on an attribute value after a black attribute name, which
// needs =. libinjection reads a value in five contexts, and in the
// unquoted one it starts before an attribute name, so "onerror=alert(1)"
// is a name and a value to it. A value of URL bytes only (no notURL byte:
// no blank, quote or >) is narrower: see blackNameBefore.
// TestXSSPrefilter and FuzzPrefilters hold this to libinjection.
func needsXSS(s string, f uint32) bool {
	switch {
	case f&hasLT != 0:
		return true
	case f&hasEQ == 0:
		return false
	case f&notURL == 0:
		return blackNameBefore(s)
	}
	return true
}

// blackNameBefore reports whether some = of s follows a run of letters
// and colons that starts s or a / does. libinjection may find XSS in a
// value of URL bytes only there: quoted, it is one attribute value, with
// no name; unquoted, it is attribute names split by / up to the first =
// that ends one, and the rest one value, and the name before that value
// is black only if it is such a run (every name it holds black is letters
// and colons: on* events, xmlns, xlink, style, src, href, …), which starts
// the name, so s or a / comes before it. "https://x.org/a?id=1" holds
// none: its one name is "a?id".
func blackNameBefore(s string) bool {
	for i := 0; i < len(s); i++ {
		k := strings.IndexByte(s[i:], '=')
		if k < 0 {
			return false
		}
		i += k
		j := i
		for j > 0 && (isLetter(s[j-1]) || s[j-1] == ':') {
			j--
		}
		if j < i && (j == 0 || s[j-1] == '/') {
			return true
		}
	}
	return false
}
