package jsonbody

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
)

// Parse's fallback and reference: the body read token by token, each problem
// reported where it is (build.go is the fast path held to it).

// tokens reads data token by token: every check at the token it concerns,
// so that the first problem is reported where it is. It is the reference
// build is tested against, and what reports every error.
func (p *parser) tokens(data []byte, maxDepth int) (*Doc, error) {
	p.start(data, maxDepth)
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return nil, &Error{Message: "unexpected data after the JSON value"}
		}
		return nil, p.syntaxError(err)
	}
	return p.finish(root), nil
}

// value reads one value and returns its node.
func (p *parser) value(depth int) (uint32, error) {
	switch p.dec.PeekKind() {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case 0:
		_, err := p.dec.ReadToken()
		return 0, p.syntaxError(err)
	}
	return p.scalar()
}

// scalar reads a string, number or literal. Strings and numbers point into
// the body; a string with escapes is unescaped into the doc's text.
func (p *parser) scalar() (uint32, error) {
	val, err := p.dec.ReadValue()
	if err != nil {
		return 0, p.syntaxError(err)
	}
	end := uint32(p.dec.InputOffset())
	start := end - uint32(len(val))
	switch val[0] {
	case '"':
		if bytes.IndexByte(val, '\\') < 0 {
			return p.add(node{kind: String, start: start + 1, end: end - 1}), nil
		}
		d := &p.doc
		from := uint32(len(d.text))
		if d.text, err = jsontext.AppendUnquote(d.text, val); err != nil {
			return 0, p.errorHere("invalid string")
		}
		return p.add(node{kind: String, escaped: true, start: from, end: uint32(len(d.text))}), nil
	case 't':
		return p.add(node{kind: True}), nil
	case 'f':
		return p.add(node{kind: False}), nil
	case 'n':
		return p.add(node{kind: Null}), nil
	}
	if len(val) > MaxNumberLen {
		return 0, p.errorHere(fmt.Sprintf("number literal longer than %d characters", MaxNumberLen))
	}
	if !exponentInRange(val) {
		return 0, p.errorHere(fmt.Sprintf("number exponent beyond ±%d", MaxExponent))
	}
	return p.add(node{kind: Number, start: start, end: end}), nil
}

func (p *parser) object(depth int) (uint32, error) {
	if _, err := p.dec.ReadToken(); err != nil { // {
		return 0, p.syntaxError(err)
	}
	if depth > p.maxDepth { // after the token: the path is the too-deep value's
		return 0, p.depthError()
	}
	self := p.add(node{kind: Object})
	base := len(p.stack)
	var names nameSet
	for {
		k := p.dec.PeekKind()
		if k == '}' {
			break
		}
		if k != '"' {
			_, err := p.dec.ReadToken()
			return 0, p.syntaxError(err)
		}
		name, err := p.scalar()
		if err != nil {
			return 0, err
		}
		key := p.doc.str(name)
		kinds := kindsOf(key)
		p.doc.nodes[name].name, p.doc.nodes[name].word = true, kinds == 0
		if prev, clash := names.add(key, kinds, p, depth); clash {
			if prev == key {
				return 0, p.errorHere("duplicate key " + strconv.Quote(failure.Clip(key)))
			}
			return 0, p.errorHere("key " + strconv.Quote(failure.Clip(key)) + " differs from key " +
				strconv.Quote(failure.Clip(prev)) + " only in letter case")
		}
		v, err := p.value(depth)
		if err != nil {
			return 0, err
		}
		p.stack = append(p.stack, name, v)
	}
	if _, err := p.dec.ReadToken(); err != nil { // }
		return 0, p.syntaxError(err)
	}
	p.close(self, base)
	return self, nil
}

func (p *parser) array(depth int) (uint32, error) {
	if _, err := p.dec.ReadToken(); err != nil { // [
		return 0, p.syntaxError(err)
	}
	if depth > p.maxDepth { // after the token: the path is the too-deep value's
		return 0, p.depthError()
	}
	self := p.add(node{kind: Array})
	base := len(p.stack)
	for {
		k := p.dec.PeekKind()
		if k == ']' {
			break
		}
		if k == 0 {
			_, err := p.dec.ReadToken()
			return 0, p.syntaxError(err)
		}
		v, err := p.value(depth)
		if err != nil {
			return 0, err
		}
		p.stack = append(p.stack, v)
	}
	if _, err := p.dec.ReadToken(); err != nil { // ]
		return 0, p.syntaxError(err)
	}
	p.close(self, base)
	return self, nil
}

func (p *parser) errorHere(text string) error {
	return &Error{Path: string(p.dec.StackPointer()), Message: text}
}

func (p *parser) depthError() error {
	return p.errorHere(fmt.Sprintf("nesting deeper than %d levels", p.maxDepth))
}

// syntaxError turns a jsontext error into an Error without the package
// prefix, keeping the position.
func (p *parser) syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Path: string(p.dec.StackPointer()), Message: "unexpected end of JSON input"}
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		text := "invalid JSON"
		if se.Err != nil {
			text = "invalid JSON: " + se.Err.Error()
		}
		path := string(se.JSONPointer)
		if path == "" {
			path = string(p.dec.StackPointer())
		}
		return &Error{
			Path:    path,
			Message: failure.Clip(text) + " at offset " + strconv.FormatInt(se.ByteOffset, 10),
		}
	}
	return &Error{Message: failure.Clip("invalid JSON: " + err.Error())}
}
