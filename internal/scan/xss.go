package scan

import (
	"strings"

	libinjection "github.com/corazawaf/libinjection-go"
)

// Cross-site scripting: libinjection's check, and URLs that run script.

// xss reports markup libinjection calls cross-site scripting, or a value
// that is a script URL (javascript:, vbscript:, data:text/html), which
// libinjection judges only inside an href or src attribute, while the
// value of a "website" or "avatar" field ends up in one.
func xss(s string, f uint32) bool {
	return f&hasColon != 0 && scriptURL(s) || needsXSS(s, f) && libinjection.IsXSS(s)
}

// scriptURL reports a URL whose scheme runs script, ignoring leading
// blanks and control characters and tabs or newlines within the scheme,
// as browsers do.
func scriptURL(s string) bool {
	var scheme [16]byte
	n := 0
	for i := 0; i < len(s) && n < len(scheme); i++ {
		c := s[i]
		switch {
		case c <= ' ':
			continue // browsers drop them
		case c == ':':
			switch string(scheme[:n]) {
			case "javascript", "vbscript", "livescript":
				return true
			case "data":
				rest := strings.TrimLeft(s[i+1:], " \t")
				return hasPrefixFold(rest, "text/html") || hasPrefixFold(rest, "image/svg") ||
					hasPrefixFold(rest, "application/xhtml")
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

// hasPrefixFold is strings.HasPrefix without regard to case, for a lower
// case prefix, without a copy of s.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
