// Package msg holds the rules every message a client reads follows.
package msg

import "strings"

// MaxEcho is the most of a rejected value, in bytes, a message may repeat.
const MaxEcho = 64

// Clip keeps at most MaxEcho bytes of s, cut on a rune boundary, and marks
// the cut with an ellipsis.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	i := MaxEcho
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// Reporter receives the failures of a check: the JSON pointer of the
// failing value and a short message. An interface rather than a function,
// so that a caller's collector costs no closure per request.
type Reporter interface {
	Add(path, message string)
}

// ReportFunc is a function as a Reporter.
type ReportFunc func(path, message string)

// Add calls f.
func (f ReportFunc) Add(path, message string) { f(path, message) }

// Pointer renders JSON pointer tokens (RFC 6901).
func Pointer(tokens []string) string {
	n := 0
	for _, t := range tokens {
		n += 1 + len(t)
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range tokens {
		b.WriteByte('/')
		if strings.ContainsAny(t, "~/") {
			t = strings.ReplaceAll(t, "~", "~0")
			t = strings.ReplaceAll(t, "/", "~1")
		}
		b.WriteString(t)
	}
	return b.String()
}
