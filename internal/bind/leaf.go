package bind

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// The decoders of leaf values: booleans, strings, numbers, json.Number, any,
// []byte, time.Time and the types that unmarshal themselves.
//
// Strings handed to the value share the body's memory (the guard's own
// buffer, which nothing writes to): a value kept after the request keeps
// that buffer.

func decodeBool(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
	case jsonbody.True:
		dst.SetBool(true)
	case jsonbody.False:
		dst.SetBool(false)
	default:
		s.fail(mismatch("a boolean", v))
	}
}

func decodeString(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
	case jsonbody.String:
		dst.SetString(v.Str())
	default:
		s.fail(mismatch("a string", v))
	}
}

func number(s *state, v jsonbody.Value) (string, bool) {
	switch v.Kind() {
	case jsonbody.Null:
		return "", false
	case jsonbody.Number:
		return v.Number(), true
	}
	s.fail(mismatch("a number", v))
	return "", false
}

func decodeInt(s *state, v jsonbody.Value, dst reflect.Value) {
	lit, ok := number(s, v)
	if !ok {
		return
	}
	if n, ok := jsonbody.ShortInt(lit); ok && !dst.OverflowInt(n) {
		dst.SetInt(n) // most integers: what ParseInt returns, by one loop
		return
	}
	n, err := strconv.ParseInt(lit, 10, dst.Type().Bits())
	if err != nil {
		s.failInt(lit, dst.Type(), err)
		return
	}
	dst.SetInt(n)
}

func decodeUint(s *state, v jsonbody.Value, dst reflect.Value) {
	lit, ok := number(s, v)
	if !ok {
		return
	}
	if n, ok := jsonbody.ShortInt(lit); ok && lit[0] != '-' && !dst.OverflowUint(uint64(n)) {
		dst.SetUint(uint64(n)) // ParseUint takes no sign, not even "-0"
		return
	}
	n, err := strconv.ParseUint(lit, 10, dst.Type().Bits())
	if err != nil {
		s.failInt(lit, dst.Type(), err)
		return
	}
	dst.SetUint(n)
}

// failInt is fail with intError's message, worked out only for a
// failure the reporter takes: intError may read the literal as a big.Rat
// (10^999 for "1e999", microseconds), which for every element of a long
// array of such numbers cost the binder far more than the body's size
// (a 1 MiB body of them: 0.4 s), for details the reporter drops after
// the first hundred.
func (s *state) failInt(lit string, t reflect.Type, err error) {
	s.ok = false
	if s.rep.Wants() {
		s.rep.Add(s.path.Pointer(), intError(lit, t, err))
	}
}

// intError explains why a valid JSON number does not fit an integer type.
func intError(lit string, t reflect.Type, err error) string {
	if strings.ContainsAny(lit, ".eE") {
		if r, ok := new(big.Rat).SetString(lit); ok && r.IsInt() {
			return "must be written without a fraction or exponent for " + t.Kind().String()
		}
		return "must be an integer"
	}
	if errors.Is(err, strconv.ErrRange) || strings.HasPrefix(lit, "-") {
		return "is out of range for " + t.Kind().String()
	}
	return "must be an integer"
}

func decodeFloat(s *state, v jsonbody.Value, dst reflect.Value) {
	lit, ok := number(s, v)
	if !ok {
		return
	}
	if dst.Kind() == reflect.Float64 { // a float32 is rounded once, from the literal
		if f, ok := jsonbody.ShortDecimal(lit); ok {
			dst.SetFloat(f)
			return
		}
	}
	f, err := strconv.ParseFloat(lit, dst.Type().Bits())
	if err != nil {
		s.fail("is out of range for " + dst.Type().Kind().String())
		return
	}
	dst.SetFloat(f)
}

func decodeNumber(s *state, v jsonbody.Value, dst reflect.Value) {
	if lit, ok := number(s, v); ok {
		dst.SetString(lit)
	}
}

// decodeAny gives an any field the generic value.
func decodeAny(s *state, v jsonbody.Value, dst reflect.Value) {
	if v.Kind() == jsonbody.Null {
		dst.SetZero()
		return
	}
	dst.Set(reflect.ValueOf(v.Any()))
}

func decodeBytes(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
		dst.SetZero()
	case jsonbody.String:
		// DecodeString skips "\r" and "\n", which json v2 refuses (RFC 4648,
		// section 3.3: not of the alphabet).
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil || strings.ContainsAny(v.Str(), "\r\n") {
			s.fail("must be base64")
			return
		}
		dst.SetBytes(b)
	default:
		s.fail(mismatch("a base64 string", v))
	}
}

func decodeTime(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
	case jsonbody.String:
		var t time.Time
		if err := t.UnmarshalText([]byte(v.Str())); err != nil || !strictRFC3339(v.Str()) {
			s.fail("must be a valid date-time (RFC 3339)")
			return
		}
		dst.Set(reflect.ValueOf(t))
	default:
		s.fail(mismatch("a string", v))
	}
}

// decodeUnmarshaler hands a type its value's JSON text as the body has
// it, as json v2 would (null included): its members in their order, its
// strings as written. A copy: the method may write to it, and the body is
// what the handler reads.
func decodeUnmarshaler(s *state, v jsonbody.Value, dst reflect.Value) {
	if err := dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(bytes.Clone(v.Raw())); err != nil {
		s.fail(invalid(err))
	}
}

// decodeUnmarshalerFrom hands a type implementing json v2's
// UnmarshalerFrom a decoder over its value's text; the method must read
// that one value, all of it, as json v2 requires. A method that returns
// errors.ErrUnsupported having read nothing leaves the value to next, as
// json v2 leaves it to the type's other methods or its default reading.
//
// One decoder serves a body's values, each in turn, as json v2 reuses
// its own, reading through a bytes.Reader: what the method sees is the
// decoder's copy of the value, never the body, and only as much of it as
// the method reads. (A decoder and a copy of the value for each value
// cost hundreds of bytes for an element "{}" of a []T, and for a
// recursive type that declines, a copy of every subtree at each level.)
func decodeUnmarshalerFrom(s *state, v jsonbody.Value, dst reflect.Value, next func(*state, jsonbody.Value, reflect.Value)) {
	s.rd.Reset(v.Raw())
	if s.dec == nil {
		s.dec = jsontext.NewDecoder(&s.rd)
	} else {
		s.dec.Reset(&s.rd)
	}
	dec := s.dec
	err := dst.Addr().Interface().(jsonv2.UnmarshalerFrom).UnmarshalJSONFrom(dec)
	read := dec.InputOffset() > 0
	if errors.Is(err, errors.ErrUnsupported) {
		if _, n := dec.StackIndex(0); n == 0 && dec.StackDepth() == 0 {
			next(s, v, dst)
			return
		}
		err = errors.New("returned errors.ErrUnsupported having read its value")
	}
	if err == nil {
		if _, end := dec.ReadToken(); end != io.EOF {
			err = errors.New("read other than the one JSON value")
		}
	}
	if err != nil {
		s.fail(invalid(err))
	}
	if read {
		// It read, from the decoder's buffer, what it may keep (a
		// jsontext.Value from ReadValue, valid by the letter only until
		// the next read; json v2 hands it the caller's own bytes, which
		// stay): the next value gets a buffer of its own. Reset keeps the
		// buffer unless the reader it replaces is a bytes.Buffer, which
		// the decoder reads in place.
		dec.Reset(&s.noBuffer)
	}
}

// invalid is the message of a value a type's own method refused: its
// error, which may echo the value as it came (net.IP's "invalid IP
// address: 1\n2"), clipped, and quoted when it holds a character that
// does not print (a line break), so that the message stays one line.
func invalid(err error) string {
	return "is invalid: " + failure.Printable(failure.Clip(err.Error()))
}

func decodeText(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
	case jsonbody.String:
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(v.Str())); err != nil {
			s.fail(invalid(err))
		}
	default:
		s.fail(mismatch("a string", v))
	}
}

// strictRFC3339 holds a time the time package parsed as RFC 3339 to what
// RFC 3339 allows and the time package does not check (go.dev/issue/54580),
// as json v2 does: a two-digit hour, "." before a fraction, an offset's
// hour below 24 and minute below 60. ("2026-01-02T3:04:05,5+24:00" is
// not a date-time; encoding/json v1 reads it.)
func strictRFC3339(s string) bool {
	dec2 := func(b string) int { return 10*int(b[0]-'0') + int(b[1]-'0') }
	switch {
	case s[len("2006-01-02T")+1] == ':':
		return false
	case s[len("2006-01-02T15:04:05")] == ',':
		return false
	case s[len(s)-1] != 'Z':
		return dec2(s[len(s)-len("07:00"):]) < 24 && dec2(s[len(s)-len("00"):]) < 60
	}
	return true
}
