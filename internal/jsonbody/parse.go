// Package jsonbody is contractguard's strict JSON reader.
//
// It reads a request body into a Doc: a flat tape of nodes over the body's
// bytes, strings not copied. The tape is built in one pass that checks the
// syntax as it reads (build.go); a body that fails anything is read again
// token by token by github.com/go-json-experiment/json/jsontext, the
// reference the fast path is held to, which reports the first problem
// where it is (tokens.go). Everything the guard checks reads the tape;
// the generic Go value (map[string]any, []any, string, json.Number, bool,
// nil) is built only when asked for.
//
// It rejects everything that lets two JSON parsers disagree about what a
// body says: invalid UTF-8 and lone surrogates, trailing data, duplicate
// names (compared after unescaping), names that differ only in letter case
// under Unicode simple folding (what encoding/json uses to match struct
// fields), nesting deeper than a limit, and number literals long enough,
// or with exponents large enough, to make exact arithmetic slow. Numbers
// keep their exact text.
package jsonbody

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxNumberLen is the longest number literal Parse accepts, in bytes.
const MaxNumberLen = 1000

// MaxExponent bounds the exponent of a number literal: 1e1000000 is nine
// bytes, but exact arithmetic on it (what JSON Schema validators do for
// minimum, maximum and integer checks) takes tens of milliseconds and
// hundreds of kilobytes. 1000 is far beyond float64's range (1e308).
const MaxExponent = 1000

// MaxLen is the longest body Parse reads, in bytes: the tape holds
// offsets into the body (and into the text of its unescaped strings) in
// 32 bits.
const MaxLen = math.MaxUint32

// MaxDepthLimit is the largest maxDepth Parse honours: jsontext refuses to
// nest deeper than this whatever it is asked.
const MaxDepthLimit = 10000

// Error is a body that is not acceptable JSON. Path is the JSON pointer of
// the offending value where it is known ("" for the whole body).
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

type parser struct {
	dec      jsontext.Decoder // tokens' (build reads the bytes itself)
	buf      bytes.Buffer
	decoding bool // dec has data to let go of
	maxDepth int
	// stack holds the children of the containers being read (node indices;
	// for objects a name node and a value node per member); they move to
	// doc.kids when their container ends.
	stack []uint32
	// folds are the name-check maps of large objects, one per depth,
	// cleared and lent again for the next object at that depth.
	folds []map[uint64]string
	// doc is the tape being read, in buffers that stay with the parser;
	// finish copies it into a Doc of its exact size.
	doc Doc
	// into is where finish puts the Doc of a small tape; nil: a new one.
	into *Small
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooledStack is the most entries a 1 MiB body can need ("1," each):
// stacks up to that size stay with a pooled parser (until the pool drops it
// at a garbage collection), larger ones are let go.
const maxPooledStack = 1 << 19

// maxPooledTape is the most nodes (and children, and bytes of unescaped
// text) a pooled parser keeps for the next body: enough for bodies of a
// few hundred kilobytes; the tapes of larger ones are let go.
const maxPooledTape = 1 << 15

// Parse reads data strictly. maxDepth bounds the nesting of arrays and
// objects: a top-level object or array is depth 1. An empty input is not
// valid JSON; callers that treat an empty body as null check for it first
// (see NullDoc). The Doc refers to data, which must not change afterwards.
func Parse(data []byte, maxDepth int) (*Doc, error) {
	p := parsers.Get().(*parser)
	defer parsers.Put(p)
	return p.parse(data, maxDepth)
}

// Small is room for the Doc of a small body (a tape of up to 16 values),
// for a caller that has somewhere to keep one already: ParseInto puts
// such a Doc there instead of allocating it.
type Small struct{ sd smallDoc }

// Holds reports whether d is the Doc ParseInto put in s.
func (s *Small) Holds(d *Doc) bool { return d != nil && d == &s.sd.Doc }

// Copy is a Doc of its own with the tape of the Doc ParseInto put in s,
// for a caller that keeps it past s's next use: the same body, the same
// unescaped strings (what was built on first use is built again).
func (s *Small) Copy() *Doc {
	c := new(smallDoc)
	src := &s.sd.Doc
	d := &c.Doc
	d.nodes = c.nodes[:copy(c.nodes[:], src.nodes)]
	d.kids = c.kids[:copy(c.kids[:], src.kids)]
	d.raw, d.text, d.root = src.raw, src.text, src.root
	return d
}

// ParseInto is Parse, with the Doc of a small body in into (which must
// outlive it, and not be used for another body while it is in use).
func ParseInto(data []byte, maxDepth int, into *Small) (*Doc, error) {
	p := parsers.Get().(*parser)
	defer parsers.Put(p)
	p.into = into
	defer func() { p.into = nil }()
	return p.parse(data, maxDepth)
}

// parse is Parse with p, which it leaves ready for the next body.
func (p *parser) parse(data []byte, maxDepth int) (*Doc, error) {
	defer func() {
		if p.decoding { // tokens read data: the decoder lets go of it
			p.buf = bytes.Buffer{}
			p.dec.Reset(&p.buf)
			p.decoding = false
		}
		if cap(p.stack) > maxPooledStack {
			p.stack = nil
		}
		// Nothing of data stays with the pooled parser: not the body, not
		// its unescaped strings, not the names of its large objects.
		tape := &p.doc
		tape.raw = nil
		clear(tape.text)
		if cap(tape.nodes) > maxPooledTape || cap(tape.kids) > maxPooledTape || cap(tape.text) > maxPooledTape {
			tape.nodes, tape.kids, tape.text = nil, nil, nil
		}
		for i, m := range p.folds {
			switch {
			case len(m) > 1024: // do not keep the map of one huge object
				p.folds[i] = nil
			case len(m) > 0:
				clear(m)
			}
		}
	}()
	if uint64(len(data)) > MaxLen {
		// Its offsets would wrap: names and strings read from elsewhere in
		// the body than where they are.
		return nil, &Error{Message: fmt.Sprintf("a body of more than %d bytes cannot be parsed", uint64(MaxLen))}
	}
	if d, ok := p.build(data, maxDepth); ok {
		return d, nil
	}
	return p.tokens(data, maxDepth)
}

// start readies the parser, its decoder and its tape, for tokens to read
// data.
func (p *parser) start(data []byte, maxDepth int) {
	p.buf, p.decoding = *bytes.NewBuffer(data), true
	// Duplicate names are found by our own case-folding check, which is a
	// superset of jsontext's exact-match check; doing both would cost twice.
	// jsontext's own nesting limit (MaxDepthLimit) is above any depth we allow.
	p.dec.Reset(&p.buf, jsontext.AllowDuplicateNames(true))
	p.startTape(data, maxDepth)
}

// startTape readies the parser's tape for data.
func (p *parser) startTape(data []byte, maxDepth int) {
	p.maxDepth = maxDepth
	p.stack = p.stack[:0]
	tape := &p.doc
	tape.raw, tape.nodes, tape.kids, tape.text = data, tape.nodes[:0], tape.kids[:0], tape.text[:0]
	// About one node per 8 bytes of a typical body; the tape grows if not.
	if n := len(data)/8 + 4; cap(tape.nodes) < n {
		tape.nodes, tape.kids = make([]node, 0, n), make([]uint32, 0, n)
	}
}

// smallDoc is a Doc with room for the tape of a small body: one allocation.
type smallDoc struct {
	Doc
	nodes [smallTape]node
	kids  [smallTape]uint32
}

const smallTape = 16

// finish makes the Doc of the parser's tape: a copy of it for a small or
// pooled-size tape, the tape's own buffers past maxPooledTape (see keep).
func (p *parser) finish(root uint32) *Doc {
	tape := &p.doc
	var d *Doc
	if len(tape.nodes) <= smallTape && len(tape.kids) <= smallTape {
		var sd *smallDoc
		if p.into != nil {
			sd = &p.into.sd
			*sd = smallDoc{}
		} else {
			sd = new(smallDoc)
		}
		d = &sd.Doc
		d.nodes = sd.nodes[:copy(sd.nodes[:], tape.nodes)]
		d.kids = sd.kids[:copy(sd.kids[:], tape.kids)]
	} else {
		d = &Doc{nodes: keep(&tape.nodes), kids: keep(&tape.kids)}
	}
	d.raw, d.root = tape.raw, root
	if len(tape.text) > 0 {
		d.text = keep(&tape.text)
	}
	return d
}

// keep returns the contents of a scratch buffer for a Doc: a copy of its
// exact size when the buffer stays with the parser, else the buffer
// itself, taken from the parser.
func keep[E any](buf *[]E) []E {
	if cap(*buf) > maxPooledTape {
		b := *buf
		*buf = nil
		return b
	}
	return slices.Clone(*buf)
}

func (p *parser) add(n node) uint32 {
	p.doc.nodes = append(p.doc.nodes, n)
	return uint32(len(p.doc.nodes) - 1)
}

// exponentInRange reports whether a valid number literal's exponent, if it
// has one, is within ±MaxExponent.
func exponentInRange(num []byte) bool {
	i := 0
	for i < len(num) && num[i]|0x20 != 'e' {
		i++
	}
	if i == len(num) {
		return true
	}
	e := bytes.TrimLeft(bytes.TrimLeft(num[i+1:], "+-"), "0")
	if len(e) > 4 {
		return false
	}
	n := 0
	for _, c := range e {
		n = 10*n + int(c-'0') // digits: jsontext or the builder checked them
	}
	return n <= MaxExponent
}

// fold lends the name-check map of depth, empty.
func (p *parser) fold(depth int) map[uint64]string {
	for len(p.folds) <= depth {
		p.folds = append(p.folds, nil)
	}
	if p.folds[depth] == nil {
		p.folds[depth] = make(map[uint64]string, 32)
	}
	clear(p.folds[depth])
	return p.folds[depth]
}

// close moves a container's children from the stack to the doc.
func (p *parser) close(self uint32, base int) {
	d := &p.doc
	d.nodes[self].start = uint32(len(d.kids))
	d.nodes[self].end = uint32(len(p.stack) - base)
	d.kids = append(d.kids, p.stack[base:]...)
	p.stack = p.stack[:base]
}
