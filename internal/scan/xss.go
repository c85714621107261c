package scan

import (
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/formats"

	libinjection "github.com/corazawaf/libinjection-go"
)

// Cross-site scripting: libinjection's check, and URLs that run script.

// xss reports markup libinjection calls cross-site scripting, or a value
// that is a script URL (javascript:, vbscript:, data:text/html), which
// libinjection judges only inside an href or src attribute, while the
// value of a "website" or "avatar" field ends up in one.
func xss(s string, f uint32) bool {
	return f&(hasColon|hasAmp) != 0 && (scriptURL(s) || f&hasEQ != 0 && attributeScriptURL(s, f&hasLT != 0)) ||
		needsXSS(s, f) && libinjection.IsXSS(s)
}

// attributeScriptURL reports an attribute value that is a script URL:
// after an =, blanks and a quote, what scriptURL finds; in markup (s holds
// a <), or quoted, in a value meant for an attribute (` href="…`), not
// in a query-like "a=1;u=javascript:…", a value of its own. libinjection
// judges a URL in an href, src or action, but reads its "java" without
// dropping a tab or a carriage return, or their references, as a browser
// does: <a href="jav&#x09;ascript:alert(1)"> and its raw tab ran script
// and passed. Each byte is read by the scriptURL of the = before it at
// most.
func attributeScriptURL(s string, markup bool) bool {
	for i := strings.IndexByte(s, '='); i >= 0; {
		v := strings.TrimLeft(s[i+1:], " \t\n\r\f")
		quoted := v != "" && (v[0] == '"' || v[0] == '\'' || v[0] == '`')
		if quoted {
			v = v[1:]
		}
		if (markup || quoted) && scriptURL(v) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '=')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// scriptURL reports a URL whose scheme runs script, ignoring leading
// blanks and control characters and tabs or newlines within the scheme,
// as browsers do, and reading the character references a browser decodes
// in an attribute value before it reads the URL (&#106;avascript:,
// javascript&colon;, jav&#x09;ascript:).
func scriptURL(s string) bool {
	var scheme [16]byte
	n := 0
	for i := 0; i < len(s) && n < len(scheme); i++ {
		c := s[i]
		if c == '&' {
			r, w := charRef(s[i:])
			if w == 0 {
				return false
			}
			c, i = r, i+w-1
		}
		switch {
		case c <= ' ':
			continue // browsers drop them
		case c == ':':
			switch string(scheme[:n]) {
			case "javascript", "vbscript", "livescript":
				return true
			case "data":
				rest := s[i+1:]
				return hasPrefixRefs(rest, "text/html") || hasPrefixRefs(rest, "image/svg") ||
					hasPrefixRefs(rest, "application/xhtml")
			}
			return false
		case isLetter(c):
			scheme[n] = c | 0x20
			n++
		default:
			return false
		}
	}
	return false
}

// charRef reads the character reference at the start of s (at an &) as
// a browser does in an attribute value: &#106; or &#x6A, with or without
// the ;, and the named &colon;, &Tab;, &NewLine; and &sol;. It gives the ASCII
// byte it stands for and its length; w is 0 for anything else (another
// name, a character beyond ASCII), which no scheme holds.
func charRef(s string) (c byte, w int) {
	for _, named := range [...]struct {
		name string
		c    byte
	}{{"&colon;", ':'}, {"&Tab;", '\t'}, {"&NewLine;", '\n'}, {"&sol;", '/'}} {
		if strings.HasPrefix(s, named.name) {
			return named.c, len(named.name)
		}
	}
	if len(s) < 3 || s[1] != '#' {
		return 0, 0
	}
	i, base := 2, rune(10)
	if s[2] == 'x' || s[2] == 'X' {
		i, base = 3, 16
	}
	start, v := i, rune(0)
	for ; i < len(s); i++ {
		d := rune(-1)
		switch b := s[i]; {
		case isDigit(b):
			d = rune(b - '0')
		case base == 16 && formats.IsHex(b):
			d = rune(formats.Unhex(b))
		}
		if d < 0 {
			break
		}
		v = min(v*base+d, utf8.MaxRune+1) // no wrap to ASCII
	}
	if i == start || v >= utf8.RuneSelf {
		return 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	return byte(v), i
}

// hasPrefixRefs reports whether s, a data: URL's text after its scheme,
// starts with prefix (lower case) in any case, read as a browser reads an
// attribute value's URL: its character references decoded (text&#47;html
// is text/html, as &#106;avascript: is javascript:), blanks before it and
// tabs and newlines within it dropped.
func hasPrefixRefs(s, prefix string) bool {
	j := 0
	for i := 0; i < len(s) && j < len(prefix); i++ {
		c := s[i]
		if c == '&' {
			r, w := charRef(s[i:])
			if w == 0 {
				return false
			}
			c, i = r, i+w-1
		}
		switch {
		case c == '\t' || c == '\n' || c == '\r' || c == ' ' && j == 0:
			continue
		case isLetter(c):
			c |= 0x20
		}
		if c != prefix[j] {
			return false
		}
		j++
	}
	return j == len(prefix)
}
