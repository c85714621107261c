package jsonbody

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// checkThenBuild is Parse's fast path. jsontext checks the whole body in
// one call (syntax, UTF-8, surrogates, trailing data), which costs a
// quarter of reading it token by token; the tape is then built from the
// checked bytes, with the checks jsontext does not make (names that clash
// under case folding, depth, number literals) made on the way. It reports
// false, having built nothing the caller sees, for any body that is not
// accepted that way: tokens reads such a body again and reports its first
// problem where it is. FuzzBuildMatchesTokens holds the two to the same
// tape for every body this path accepts.
func (p *parser) checkThenBuild(data []byte, maxDepth int) (*Doc, bool) {
	p.start(data, maxDepth)
	val, err := p.dec.ReadValue()
	if err != nil {
		return nil, false
	}
	end := int(p.dec.InputOffset())
	if _, err := p.dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	b := builder{p: p, s: data[:end], i: end - len(val)}
	root, ok := b.value(0)
	if !ok || b.i != end {
		return nil, false
	}
	return p.finish(root), true
}

// builder walks bytes jsontext has checked. It still never indexes past
// its input: anything unexpected ends the walk with false.
type builder struct {
	p *parser
	s []byte
	i int
}

func (b *builder) ws() {
	for b.i < len(b.s) {
		switch b.s[b.i] {
		case ' ', '\t', '\n', '\r':
			b.i++
		default:
			return
		}
	}
}

func (b *builder) value(depth int) (uint32, bool) {
	b.ws()
	if b.i >= len(b.s) {
		return 0, false
	}
	switch b.s[b.i] {
	case '{':
		return b.object(depth + 1)
	case '[':
		return b.array(depth + 1)
	case '"':
		return b.str()
	case 't':
		return b.literal("true", True)
	case 'f':
		return b.literal("false", False)
	case 'n':
		return b.literal("null", Null)
	}
	return b.number()
}

func (b *builder) literal(text string, k Kind) (uint32, bool) {
	if !bytes.HasPrefix(b.s[b.i:], []byte(text)) {
		return 0, false
	}
	b.i += len(text)
	return b.p.add(node{kind: k}), true
}

// str reads a string: its node points into the body, or, when it has
// escapes, to its text unescaped by jsontext into the doc's text.
func (b *builder) str() (uint32, bool) {
	start := b.i + 1
	if start > len(b.s) {
		return 0, false
	}
	end := start
	for end < len(b.s) && b.s[end] != '"' && b.s[end] != '\\' {
		end++
	}
	if end < len(b.s) && b.s[end] == '"' {
		b.i = end + 1
		return b.p.add(node{kind: String, start: uint32(start), end: uint32(end)}), true
	}
	for ; end < len(b.s) && b.s[end] != '"'; end++ {
		if b.s[end] == '\\' {
			end++ // the escaped character, which may be a quote
		}
	}
	if end >= len(b.s) {
		return 0, false
	}
	d := &b.p.doc
	from := uint32(len(d.text))
	var err error
	if d.text, err = jsontext.AppendUnquote(d.text, b.s[b.i:end+1]); err != nil {
		return 0, false
	}
	b.i = end + 1
	return b.p.add(node{kind: String, escaped: true, start: from, end: uint32(len(d.text))}), true
}

// name reads a member name as str reads a string, and marks its node. A
// name without escapes, the common case, has the kinds of its bytes told
// as it is read (see kindsOf), which costs what looking for its end does;
// one with escapes is read again by str, and told once unescaped. (str
// ending in a shared tail for both costs every string a call: +1.1k
// instructions to parse the order body.)
func (b *builder) name() (n uint32, kinds byte, ok bool) {
	end := b.i + 1
	for end < len(b.s) {
		k := nameBytes[b.s[end]]
		if k&quoted != 0 {
			break
		}
		kinds |= k
		end++
	}
	if end < len(b.s) && b.s[end] == '"' {
		n = b.p.add(node{kind: String, start: uint32(b.i + 1), end: uint32(end)})
		b.i = end + 1
	} else if n, ok = b.str(); ok {
		kinds = kindsOf(b.p.doc.str(n))
	} else {
		return 0, 0, false
	}
	b.p.doc.nodes[n].name, b.p.doc.nodes[n].word = true, kinds == 0
	return n, kinds, true
}

func (b *builder) number() (uint32, bool) {
	start := b.i
	for b.i < len(b.s) {
		c := b.s[b.i]
		if '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			b.i++
			continue
		}
		break
	}
	num := b.s[start:b.i]
	if len(num) == 0 || len(num) > MaxNumberLen || !exponentInRange(num) {
		return 0, false
	}
	return b.p.add(node{kind: Number, start: uint32(start), end: uint32(b.i)}), true
}

func (b *builder) object(depth int) (uint32, bool) {
	if depth > b.p.maxDepth {
		return 0, false
	}
	b.i++ // {
	self := b.p.add(node{kind: Object})
	base := len(b.p.stack)
	var names nameSet
	b.ws()
	if b.i < len(b.s) && b.s[b.i] == '}' {
		b.i++
		b.p.close(self, base)
		return self, true
	}
	for {
		b.ws()
		if b.i >= len(b.s) || b.s[b.i] != '"' {
			return 0, false
		}
		name, kinds, ok := b.name()
		if !ok {
			return 0, false
		}
		if _, clash := names.add(b.p.doc.str(name), kinds, b.p, depth); clash {
			return 0, false
		}
		b.ws()
		if b.i >= len(b.s) || b.s[b.i] != ':' {
			return 0, false
		}
		b.i++
		v, ok := b.value(depth)
		if !ok {
			return 0, false
		}
		b.p.stack = append(b.p.stack, name, v)
		if !b.next('}') {
			return 0, false
		}
		if b.s[b.i-1] == '}' {
			break
		}
	}
	b.p.close(self, base)
	return self, true
}

func (b *builder) array(depth int) (uint32, bool) {
	if depth > b.p.maxDepth {
		return 0, false
	}
	b.i++ // [
	self := b.p.add(node{kind: Array})
	base := len(b.p.stack)
	b.ws()
	if b.i < len(b.s) && b.s[b.i] == ']' {
		b.i++
		b.p.close(self, base)
		return self, true
	}
	for {
		v, ok := b.value(depth)
		if !ok {
			return 0, false
		}
		b.p.stack = append(b.p.stack, v)
		if !b.next(']') {
			return 0, false
		}
		if b.s[b.i-1] == ']' {
			break
		}
	}
	b.p.close(self, base)
	return self, true
}

// next reads the comma or the closing delimiter after a member or element.
func (b *builder) next(closing byte) bool {
	b.ws()
	if b.i < len(b.s) && (b.s[b.i] == ',' || b.s[b.i] == closing) {
		b.i++
		return true
	}
	return false
}
