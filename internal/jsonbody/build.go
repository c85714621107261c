package jsonbody

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// build is Parse's fast path: the tape built in one pass over the body,
// which checks as it goes what jsontext checks (syntax, number grammar,
// UTF-8, control characters, escapes and surrogates, trailing data) and
// what it does not (names that clash under case folding, depth, the length
// and exponent of number literals). It reports false, having built nothing
// the caller sees, for any body it does not accept: tokens, the reference,
// reads such a body again with jsontext and reports its first problem
// where it is. FuzzBuildMatchesTokens holds the two to the same verdict on
// every body, and to the same tape on every body they accept. (It replaced
// jsontext checking the whole body before the tape was built from it, two
// passes where one does: Guard.Check on the ~1 KB order went from 93,400
// to 73,100 instructions, on the ~100 B line from 17,000 to 13,900.)
func (p *parser) build(data []byte, maxDepth int) (*Doc, bool) {
	p.startTape(data, min(maxDepth, MaxDepthLimit)) // jsontext nests no deeper, whatever it is asked
	b := builder{p: p, s: data}
	root, ok := b.value(0)
	if !ok {
		return nil, false
	}
	b.ws()
	if b.i != len(data) {
		return nil, false
	}
	return p.finish(root), true
}

// builder reads a body for build. It never indexes past its input:
// anything unexpected ends the walk with false.
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
	end := start
	for end < len(b.s) && plainBytes[b.s[end]] {
		end++
	}
	if end < len(b.s) && b.s[end] == '"' {
		b.i = end + 1
		return b.p.add(node{kind: String, start: uint32(start), end: uint32(end)}), true
	}
	plainTo := end // b.s[start:plainTo] is plain ASCII: validText starts after it
	escaped := false
	for ; end < len(b.s) && b.s[end] != '"'; end++ {
		if b.s[end] == '\\' {
			escaped = true
			end++ // the escaped character, which may be a quote
		}
	}
	if end >= len(b.s) {
		return 0, false
	}
	if !escaped {
		if !validText(b.s[plainTo:end]) {
			return 0, false
		}
		b.i = end + 1
		return b.p.add(node{kind: String, start: uint32(start), end: uint32(end)}), true
	}
	d := &b.p.doc
	from := uint32(len(d.text))
	var err error
	if d.text, err = jsontext.AppendUnquote(d.text, b.s[b.i:end+1]); err != nil { // checks all of it
		return 0, false
	}
	b.i = end + 1
	return b.p.add(node{kind: String, escaped: true, start: from, end: uint32(len(d.text))}), true
}

// plainBytes are the bytes a string holds as they are, in ASCII: not a
// control character, a quote or a backslash.
var plainBytes = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validText reports whether the text of a string without escapes is what
// JSON allows: no control character, and valid UTF-8 (no surrogate halves).
// (jsontext.AppendUnquote, which checks the strings with escapes, would
// check these too, but copies them: a ~130-byte body of eight accented or
// CJK strings took 8,494 instructions to parse that way, 7,549 this way.)
func validText(s []byte) bool {
	for _, c := range s {
		if c < ' ' {
			return false
		}
	}
	return utf8.Valid(s)
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
		if kinds&nonASCII != 0 && !utf8.Valid(b.s[b.i+1:end]) {
			return 0, 0, false
		}
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

// number reads a number literal as JSON writes it:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (b *builder) number() (uint32, bool) {
	start, i, s := b.i, b.i, b.s
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); s[i-1] == '.' {
			return 0, false
		}
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		from := i
		if i = digits(s, i); i == from {
			return 0, false
		}
	}
	num := s[start:i]
	if len(num) > MaxNumberLen || !exponentInRange(num) {
		return 0, false
	}
	b.i = i
	return b.p.add(node{kind: Number, start: uint32(start), end: uint32(i)}), true
}

// digits is the end of the run of digits of s from i.
func digits(s []byte, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
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
