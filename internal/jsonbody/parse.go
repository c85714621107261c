// Package jsonbody is contractguard's strict JSON reader.
//
// It turns a request body into the generic Go value the rest of the guard
// works on (map[string]any, []any, string, json.Number, bool, nil) in one
// pass over the tokens of github.com/go-json-experiment/json/jsontext, and it
// rejects everything that lets two JSON parsers disagree about what a body
// says: invalid UTF-8 and lone surrogates, trailing data, duplicate names
// (compared after unescaping), names that differ only in letter case under
// Unicode simple folding (what encoding/json uses to match struct fields),
// nesting deeper than a limit, and number literals long enough to make
// arbitrary-precision arithmetic slow. Numbers keep their exact text as
// json.Number.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/contractguard/contractguard/internal/msg"
	"io"
	"strconv"
	"strings"
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
	dec      jsontext.Decoder
	buf      bytes.Buffer
	maxDepth int
	// values and names are stacks shared by every array and object being
	// built: members collect here and move to a slice or map of exactly
	// their number when the array or object ends, instead of growing one.
	values []any
	names  []string
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooledStack is the most values a 1 MiB body can hold ("1," each):
// stacks up to that size stay with a pooled parser (until the pool drops it
// at a garbage collection), larger ones are let go.
const maxPooledStack = 1 << 19

// push appends v to the value stack, doubling it when full: append grows
// large slices by a quarter, which allocates five times the final size.
func (p *parser) push(v any) {
	if len(p.values) == cap(p.values) {
		grown := make([]any, len(p.values), max(64, 2*cap(p.values)))
		copy(grown, p.values)
		clear(p.values)
		p.values = grown
	}
	p.values = append(p.values, v)
}

// Parse decodes data strictly. maxDepth bounds the nesting of arrays and
// objects: a top-level object or array is depth 1. An empty input is not
// valid JSON; callers that treat an empty body as null check for it first.
func Parse(data []byte, maxDepth int) (any, error) {
	p := parsers.Get().(*parser)
	defer func() {
		p.buf = bytes.Buffer{}
		p.dec.Reset(&p.buf)
		clear(p.values[:cap(p.values)]) // drop references into the body
		clear(p.names[:cap(p.names)])
		if cap(p.values) > maxPooledStack { // a body over 1 MiB: do not keep its stack
			p.values, p.names = nil, nil
		}
		p.values, p.names = p.values[:0], p.names[:0]
		parsers.Put(p)
	}()
	p.buf = *bytes.NewBuffer(data)
	p.maxDepth = maxDepth
	// Duplicate names are found by our own case-folding check, which is a
	// superset of jsontext's exact-match check; doing both would cost twice.
	// jsontext's own nesting limit (MaxDepthLimit) is above any depth we allow.
	p.dec.Reset(&p.buf, jsontext.AllowDuplicateNames(true))

	tok, err := p.dec.ReadToken()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	v, err := p.value(tok, 0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return nil, &Error{Message: "unexpected data after the JSON value"}
		}
		return nil, p.syntaxError(err)
	}
	return v, nil
}

func (p *parser) value(tok jsontext.Token, depth int) (any, error) {
	switch tok.Kind() {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		return tok.String(), nil
	case '0':
		raw := tok.String()
		if len(raw) > MaxNumberLen {
			return nil, p.errorHere(fmt.Sprintf("number literal longer than %d characters", MaxNumberLen))
		}
		if !exponentInRange(raw) {
			return nil, p.errorHere(fmt.Sprintf("number exponent beyond ±%d", MaxExponent))
		}
		return json.Number(raw), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	// ReadToken never returns another kind without an error.
	return nil, p.errorHere("unexpected token")
}

// exponentInRange reports whether a valid number literal's exponent, if it
// has one, is within ±MaxExponent.
func exponentInRange(num string) bool {
	i := strings.IndexAny(num, "eE")
	if i < 0 {
		return true
	}
	e := strings.TrimLeft(num[i+1:], "+-")
	e = strings.TrimLeft(e, "0")
	if len(e) > 4 {
		return false
	}
	n, _ := strconv.Atoi(e)
	return n <= MaxExponent
}

func (p *parser) object(depth int) (any, error) {
	if depth > p.maxDepth {
		return nil, p.depthError()
	}
	base, nbase := len(p.values), len(p.names)
	var names nameSet
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		if tok.Kind() == '}' {
			break
		}
		name := tok.String()
		if prev, clash := names.add(name); clash {
			if prev == name {
				return nil, p.errorHere("duplicate key " + strconv.Quote(msg.Clip(name)))
			}
			return nil, p.errorHere("key " + strconv.Quote(msg.Clip(name)) + " differs from key " +
				strconv.Quote(msg.Clip(prev)) + " only in letter case")
		}
		tok, err = p.dec.ReadToken()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		v, err := p.value(tok, depth)
		if err != nil {
			return nil, err
		}
		p.names = append(p.names, name)
		p.push(v)
	}
	m := make(map[string]any, len(p.values)-base)
	for i, v := range p.values[base:] {
		m[p.names[nbase+i]] = v
	}
	clear(p.values[base:])
	p.values, p.names = p.values[:base], p.names[:nbase]
	return m, nil
}

func (p *parser) array(depth int) (any, error) {
	if depth > p.maxDepth {
		return nil, p.depthError()
	}
	base := len(p.values)
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		if tok.Kind() == ']' {
			break
		}
		v, err := p.value(tok, depth)
		if err != nil {
			return nil, err
		}
		p.push(v)
	}
	a := make([]any, len(p.values)-base)
	copy(a, p.values[base:])
	clear(p.values[base:])
	p.values = p.values[:base]
	return a, nil
}

func (p *parser) errorHere(msg string) error {
	return &Error{Path: string(p.dec.StackPointer()), Message: msg}
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
			Message: msg.Clip(text) + " at offset " + strconv.FormatInt(se.ByteOffset, 10),
		}
	}
	return &Error{Message: msg.Clip("invalid JSON: " + err.Error())}
}
