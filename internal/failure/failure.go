// Package failure is what a check reports and how: a failure at a JSON
// pointer (Path, Pointer) to a Reporter, in a message that echoes at
// most MaxEcho bytes of the rejected value (Clip).
package failure

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable is s as an error names it (a file, a contract, a schema): as
// it is, or quoted when it holds a character that would not print as
// itself (a line break, a byte that is not UTF-8), so that the error
// stays one line.
func Printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// PrintablePath is err, when it is an *fs.PathError, with its file named
// as Printable names it, so that an OS error stays one line; any other
// error as it is.
func PrintablePath(err error) error {
	if pe, ok := err.(*fs.PathError); ok && Printable(pe.Path) != pe.Path {
		return &fs.PathError{Op: pe.Op, Path: Printable(pe.Path), Err: pe.Err}
	}
	return err
}

// MaxEcho is the most of a rejected value, in bytes, a message may repeat.
const MaxEcho = 64

// Clip keeps at most MaxEcho bytes of s, cut on a rune boundary, and marks
// the cut with an ellipsis.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	return Cut(s, MaxEcho) + "…"
}

// Cut keeps at most n bytes of s, cut on a rune boundary: a cut inside a
// character would leave bytes that read as U+FFFD.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Reporter receives the failures of a check: the JSON pointer of the
// failing value and a short message. An interface rather than a function,
// so that a caller's collector costs no closure per request.
type Reporter interface {
	// Wants reports whether the reporter takes another failure. A check
	// asks once for each failure it finds, before it renders the failure's
	// pointer, and calls Add only when the answer is yes (once it is no,
	// the check may stop asking): a reporter that has all it will list
	// spares the check that cost (a body can fail at every one of its
	// elements, each at a pointer that repeats a long member name).
	Wants() bool
	Add(path, message string)
}

// Discard is a Reporter that takes no failure: for a check run only for
// its verdict.
var Discard Reporter = discard{}

type discard struct{}

func (discard) Wants() bool        { return false }
func (discard) Add(string, string) {}

// ReportFunc is a function as a Reporter that takes every failure.
type ReportFunc func(path, message string)

// Wants is true: f takes every failure.
func (f ReportFunc) Wants() bool { return true }

// Add calls f.
func (f ReportFunc) Add(path, message string) { f(path, message) }

// Pointer renders JSON pointer tokens (RFC 6901).
func Pointer(tokens []string) string {
	n := 0
	for _, t := range tokens {
		n += 1 + escapedLen(t)
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range tokens {
		writeToken(&b, t)
	}
	return b.String()
}

// Segment is name as one step of a JSON pointer: "/" and name escaped
// (the pointer of member name of the root). A check computes it once for
// each member its schema declares and steps in with Path.Segment, so that
// a failure found there costs no escaping, and at the root no allocation.
func Segment(name string) string {
	var b strings.Builder
	b.Grow(1 + escapedLen(name))
	writeToken(&b, name)
	return b.String()
}

// escapedLen is the length of t escaped in a JSON pointer.
func escapedLen(t string) int {
	n := len(t)
	for i := 0; i < len(t); i++ {
		if t[i] == '~' || t[i] == '/' {
			n++
		}
	}
	return n
}

// writeToken writes "/" and t escaped: "~" as "~0", "/" as "~1".
func writeToken(b *strings.Builder, t string) {
	b.WriteByte('/')
	start := 0
	for i := 0; i < len(t); i++ {
		var esc string
		switch t[i] {
		case '~':
			esc = "~0"
		case '/':
			esc = "~1"
		default:
			continue
		}
		b.WriteString(t[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(t[start:])
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
	name  string // a member name, or a Segment
	index int    // >= 0: an array index; member or segment
}

// The index of a pathToken that is not an array's.
const (
	member  = -1 // name is a member name
	segment = -2 // name is a member's Segment, escaped already
)

// Member steps into the member name of an object.
func (p *Path) Member(name string) { p.push(pathToken{name: name, index: member}) }

// Segment steps into a member of an object by its Segment (seg, not the
// name: "/" and the name escaped).
func (p *Path) Segment(seg string) { p.push(pathToken{name: seg, index: segment}) }

// Index steps into element i of an array.
func (p *Path) Index(i int) { p.push(pathToken{index: i}) }

// SetIndex moves the last step, an Index, to element i: a loop over an
// array pushes once.
func (p *Path) SetIndex(i int) { p.at(p.n - 1).index = i }

// Len is the depth of the path.
func (p *Path) Len() int { return p.n }

// Step is step i of the path (0 is the first): an array index (index
// >= 0), or a member's name (index < 0; escaped, seg set, for a Segment).
func (p *Path) Step(i int) (name string, index int, seg bool) {
	t := p.at(i)
	return t.name, t.index, t.index == segment
}

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
	if len(more) == 0 && p.n == 1 && p.buf[0].index == segment {
		return p.buf[0].name // a member of the root, rendered already
	}
	return p.render(more, "")
}

// PointerSegment renders the path as a JSON pointer with seg, a member's
// Segment, after it.
func (p *Path) PointerSegment(seg string) string {
	if p.n == 0 {
		return seg
	}
	return p.render(nil, seg)
}

// render writes the path, the member names more, then seg.
func (p *Path) render(more []string, seg string) string {
	var digits [20]byte
	n := len(seg)
	for i := range p.n {
		switch t := p.at(i); {
		case t.index >= 0:
			n += 1 + len(strconv.AppendInt(digits[:0], int64(t.index), 10))
		case t.index == segment:
			n += len(t.name)
		default:
			n += 1 + escapedLen(t.name)
		}
	}
	for _, m := range more {
		n += 1 + escapedLen(m)
	}
	var b strings.Builder
	b.Grow(n)
	for i := range p.n {
		switch t := p.at(i); {
		case t.index >= 0:
			b.WriteByte('/')
			b.Write(strconv.AppendInt(digits[:0], int64(t.index), 10))
		case t.index == segment:
			b.WriteString(t.name)
		default:
			writeToken(&b, t.name)
		}
	}
	for _, m := range more {
		writeToken(&b, m)
	}
	b.WriteString(seg)
	return b.String()
}
