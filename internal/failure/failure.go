// Package failure is what a check reports and how: a failure at a JSON
// pointer (Path, Pointer) to a Reporter, in a message that echoes at
// most MaxEcho bytes of the rejected value (Clip).
package failure

import (
	"strconv"
	"strings"
)

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

// Path is where a walk over a JSON value stands: member names and array
// indexes, with room for 16 levels before it allocates. It is rendered as
// a JSON pointer only when a message needs one. The zero Path is the root.
// It holds no pointer into itself, so that a Path in a value on the stack
// keeps that value on the stack.
type Path struct {
	n    int // the depth
	buf  [16]pathToken
	deep []pathToken // the levels past len(buf)
}

type pathToken struct {
	name  string
	index int // >= 0: an array index; -1: a member name
}

// Member steps into the member name of an object.
func (p *Path) Member(name string) { p.push(pathToken{name: name, index: -1}) }

// Index steps into element i of an array.
func (p *Path) Index(i int) { p.push(pathToken{index: i}) }

// SetIndex moves the last step, an Index, to element i: a loop over an
// array pushes once.
func (p *Path) SetIndex(i int) { p.at(p.n - 1).index = i }

// Pop steps back out.
func (p *Path) Pop() { p.n-- }

// Reset returns to the root and drops the names held, for a Path kept in
// a pool.
func (p *Path) Reset() {
	clear(p.buf[:])
	clear(p.deep)
	p.n, p.deep = 0, p.deep[:0]
}

func (p *Path) push(t pathToken) {
	if p.n < len(p.buf) {
		p.buf[p.n] = t
	} else {
		p.deep = append(p.deep[:p.n-len(p.buf)], t)
	}
	p.n++
}

func (p *Path) at(i int) *pathToken {
	if i < len(p.buf) {
		return &p.buf[i]
	}
	return &p.deep[i-len(p.buf)]
}

// Pointer renders the path as a JSON pointer, with the member names more
// after it ("" is a member name like any other).
func (p *Path) Pointer(more ...string) string {
	tokens := make([]string, 0, p.n+len(more))
	for i := range p.n {
		if t := p.at(i); t.index >= 0 {
			tokens = append(tokens, strconv.Itoa(t.index))
		} else {
			tokens = append(tokens, t.name)
		}
	}
	return Pointer(append(tokens, more...))
}
