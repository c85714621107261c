// Package bind stores a decoded JSON value (as jsonbody produces it) into a
// Go value, the way encoding/json would decode the same bytes but
// case-sensitively, without parsing the bytes again, and reporting every
// value the Go type cannot hold at its JSON pointer instead of failing.
//
// Plans are built once per type. Object members are matched to fields by
// exact name (the json tag, else the field name), with encoding/json's rules
// for embedded structs; members without a field are skipped. Numbers must
// fit the field: 1.0 is not an int, 300 is not a uint8. A field of type any
// receives the value as jsonbody decoded it (numbers as json.Number). Types
// with an UnmarshalJSON method get the JSON text of their value; time.Time
// is read as RFC 3339.
package bind

import (
	"bytes"
	"reflect"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// Into stores v into dst, which must be settable. It reports every value
// that dst's type cannot hold to rep, and reports whether there was none.
func Into(dst reflect.Value, v jsonbody.Value, rep failure.Reporter) bool {
	p, err := planFor(dst.Type())
	if err != nil {
		if rep.Wants() {
			rep.Add("", err.Error())
		}
		return false
	}
	// From a pool: the decoders are called through function values, so a
	// state on the stack would escape anyway, once per body.
	s := states.Get().(*state)
	s.rep, s.ok = rep, true
	p.decode(s, v, dst)
	ok := s.ok
	s.rep = nil
	s.path.Reset() // no names of this body kept in the pool
	s.rd.Reset(nil)
	s.dec = nil // nor its buffer, as large as the largest value a method read
	states.Put(s)
	return ok
}

var states = sync.Pool{New: func() any { return new(state) }}

// Check reports whether values of type t can be decoded at all: no field of
// a kind JSON cannot fill (channels, functions, complex numbers, non-empty
// interfaces), no unsupported tag option. Into reports the same error for
// every request; Check lets registration report it once.
func Check(t reflect.Type) error {
	_, err := planFor(t)
	return err
}

type state struct {
	path failure.Path
	rep  failure.Reporter
	ok   bool
	// For UnmarshalJSONFrom methods (decodeUnmarshalerFrom): the decoder,
	// made at the first such value of a body, its reader, and an empty
	// bytes.Buffer to reset it to, which drops its buffer.
	dec      *jsontext.Decoder
	rd       bytes.Reader
	noBuffer bytes.Buffer
}

func (s *state) fail(message string) {
	s.ok = false
	if s.rep.Wants() {
		s.rep.Add(s.path.Pointer(), message)
	}
}

func mismatch(want string, v jsonbody.Value) string {
	return "must be " + want + ", not " + kindOf(v)
}

func kindOf(v jsonbody.Value) string {
	switch v.Kind() {
	case jsonbody.Null:
		return "null"
	case jsonbody.False, jsonbody.True:
		return "a boolean"
	case jsonbody.String:
		return "a string"
	case jsonbody.Number:
		return "a number"
	case jsonbody.Array:
		return "an array"
	}
	return "an object"
}
