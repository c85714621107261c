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
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/names"
)

// Into stores v into dst, which must be settable. It reports every value
// that dst's type cannot hold to rep, and reports whether there was none.
func Into(dst reflect.Value, v jsonbody.Value, rep failure.Reporter) bool {
	p, err := planFor(dst.Type())
	if err != nil {
		rep.Add("", err.Error())
		return false
	}
	s := state{rep: rep, ok: true}
	p.decode(&s, v, dst)
	return s.ok
}

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
}

func (s *state) fail(message string) {
	s.ok = false
	s.rep.Add(s.path.Pointer(), message)
}

// plan decodes one type.
type plan struct {
	decode func(s *state, v jsonbody.Value, dst reflect.Value)
}

var (
	plans   sync.Map // reflect.Type -> *plan
	buildMu sync.Mutex
)

func planFor(t reflect.Type) (*plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*plan), nil
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	b := builder{building: map[reflect.Type]*plan{}}
	p, err := b.plan(t)
	if err != nil {
		return nil, err
	}
	for t, p := range b.building {
		plans.Store(t, p)
	}
	return p, nil
}

type builder struct {
	building map[reflect.Type]*plan // plans of this build, for recursive types
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	numberType      = reflect.TypeFor[json.Number]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (b *builder) plan(t reflect.Type) (*plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*plan), nil
	}
	if p, ok := b.building[t]; ok {
		return p, nil // recursive: filled in below, before use
	}
	p := &plan{}
	b.building[t] = p
	var err error
	p.decode, err = b.decoder(t)
	if err != nil {
		delete(b.building, t)
		return nil, err
	}
	return p, nil
}

func (b *builder) decoder(t reflect.Type) (func(*state, jsonbody.Value, reflect.Value), error) {
	switch {
	case t == timeType:
		return decodeTime, nil
	case t == numberType:
		return decodeNumber, nil
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return decodeUnmarshaler, nil
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(textType):
		return decodeText, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool, nil
	case reflect.String:
		return decodeString, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint, nil
	case reflect.Float32, reflect.Float64:
		return decodeFloat, nil
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil, fmt.Errorf("cannot decode into interface type %s", t)
		}
		return decodeAny, nil
	case reflect.Pointer:
		elem, err := b.plan(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(s *state, v jsonbody.Value, dst reflect.Value) {
			if v.Kind() == jsonbody.Null {
				dst.SetZero()
				return
			}
			if dst.IsNil() {
				dst.Set(reflect.New(t.Elem()))
			}
			elem.decode(s, v, dst.Elem())
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) && !reflect.PointerTo(t.Elem()).Implements(textType) {
			return decodeBytes, nil
		}
		elem, err := b.plan(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(s *state, v jsonbody.Value, dst reflect.Value) {
			switch v.Kind() {
			case jsonbody.Null:
				dst.SetZero()
				return
			case jsonbody.Array:
			default:
				s.fail(mismatch("an array", v))
				return
			}
			n := v.Len()
			out := reflect.MakeSlice(t, n, n)
			for i := range n {
				s.path.Index(i)
				elem.decode(s, v.Index(i), out.Index(i))
				s.path.Pop()
			}
			dst.Set(out)
		}, nil
	case reflect.Array:
		elem, err := b.plan(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(s *state, v jsonbody.Value, dst reflect.Value) {
			switch v.Kind() {
			case jsonbody.Null:
				return
			case jsonbody.Array:
			default:
				s.fail(mismatch("an array", v))
				return
			}
			for i := 0; i < dst.Len(); i++ {
				if i < v.Len() {
					s.path.Index(i)
					elem.decode(s, v.Index(i), dst.Index(i))
					s.path.Pop()
				} else {
					dst.Index(i).SetZero()
				}
			}
		}, nil
	case reflect.Map:
		return b.mapDecoder(t)
	case reflect.Struct:
		return b.structDecoder(t)
	}
	return nil, fmt.Errorf("cannot decode into %s", t)
}

func (b *builder) mapDecoder(t reflect.Type) (func(*state, jsonbody.Value, reflect.Value), error) {
	kt := t.Key()
	var key func(string) (reflect.Value, error)
	switch {
	case kt.Kind() == reflect.String && !reflect.PointerTo(kt).Implements(textType):
		key = func(k string) (reflect.Value, error) { return reflect.ValueOf(k).Convert(kt), nil }
	case reflect.PointerTo(kt).Implements(textType):
		key = func(k string) (reflect.Value, error) {
			kv := reflect.New(kt)
			err := kv.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k))
			return kv.Elem(), err
		}
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		key = func(k string) (reflect.Value, error) {
			n, err := strconv.ParseInt(k, 10, kt.Bits())
			return reflect.ValueOf(n).Convert(kt), err
		}
	case kt.Kind() >= reflect.Uint && kt.Kind() <= reflect.Uintptr:
		key = func(k string) (reflect.Value, error) {
			n, err := strconv.ParseUint(k, 10, kt.Bits())
			return reflect.ValueOf(n).Convert(kt), err
		}
	default:
		return nil, fmt.Errorf("cannot decode into %s: map keys must be strings, integers or text", t)
	}
	elem, err := b.plan(t.Elem())
	if err != nil {
		return nil, err
	}
	return func(s *state, v jsonbody.Value, dst reflect.Value) {
		switch v.Kind() {
		case jsonbody.Null:
			dst.SetZero()
			return
		case jsonbody.Object:
		default:
			s.fail(mismatch("an object", v))
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(t, v.Len()))
		}
		ev := reflect.New(t.Elem()).Elem()
		for i := range v.Len() {
			k, e := v.Member(i)
			s.path.Member(k)
			kv, err := key(k)
			if err != nil {
				s.fail("is not a valid key for " + kt.String())
				s.path.Pop()
				continue
			}
			ev.SetZero()
			elem.decode(s, e, ev)
			dst.SetMapIndex(kv, ev)
			s.path.Pop()
		}
	}, nil
}

type field struct {
	name  string
	index []int
	plan  *plan
}

func (b *builder) structDecoder(t reflect.Type) (func(*state, jsonbody.Value, reflect.Value), error) {
	fields, err := jsonFields(t)
	if err != nil {
		return nil, err
	}
	list := make([]string, len(fields))
	for i := range fields {
		f := &fields[i]
		p, err := b.plan(t.FieldByIndex(f.index).Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, t.FieldByIndex(f.index).Name, err)
		}
		f.plan = p
		list[i] = f.name
	}
	byName := names.New(list)
	return func(s *state, v jsonbody.Value, dst reflect.Value) {
		switch v.Kind() {
		case jsonbody.Null:
			return
		case jsonbody.Object:
		default:
			s.fail(mismatch("an object", v))
			return
		}
		for i := range v.Len() {
			k, e := v.Member(i)
			fi := byName.Find(k)
			if fi < 0 {
				continue // no field of that exact name: not stored, as encoding/json
			}
			f := &fields[fi]
			s.path.Member(k)
			f.plan.decode(s, e, fieldByIndexAlloc(dst, f.index))
			s.path.Pop()
		}
	}, nil
}

// fieldByIndexAlloc is FieldByIndex that allocates nil embedded pointers.
func fieldByIndexAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// jsonFields lists the fields encoding/json would decode into, by name,
// with its rules for embedded structs: the shallowest field of a name wins,
// a tagged one among equals, and a tie leaves the name to no field.
func jsonFields(t reflect.Type) ([]field, error) {
	type candidate struct {
		field
		tagged bool
	}
	byName := map[string][]candidate{}
	var order []string
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		name, skip, inline := FieldName(sf)
		if skip || inline { // inline: its fields are promoted; VisibleFields lists them
			continue
		}
		tagName, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if strings.Contains(","+opts+",", ",string,") {
			return nil, fmt.Errorf("%s.%s: the json tag option \"string\" is not supported", t, sf.Name)
		}
		tagged := tagName != ""
		if sf.Anonymous && !tagged && !sf.IsExported() {
			continue
		}
		if hidden(t, sf.Index) {
			continue
		}
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], candidate{field{name: name, index: sf.Index}, tagged})
	}
	var out []field
	for _, name := range order {
		cs := byName[name]
		depth := len(cs[0].index)
		for _, c := range cs {
			depth = min(depth, len(c.index))
		}
		var top []candidate
		for _, c := range cs {
			if len(c.index) == depth {
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []candidate
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			top = tagged
		}
		if len(top) == 1 {
			out = append(out, top[0].field)
		}
	}
	return out, nil
}

// FieldName is the member name encoding/json reads the field sf from: the
// name of its json tag, else its Go name. skip: json:"-", never read (but
// json:"-," is the member "-"). inline: an embedded struct without a tag
// name, whose fields are promoted instead.
func FieldName(sf reflect.StructField) (name string, skip, inline bool) {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", true, false
	}
	if name, _, _ = strings.Cut(tag, ","); name != "" {
		return name, false, false
	}
	ft := sf.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	return sf.Name, false, sf.Anonymous && ft.Kind() == reflect.Struct
}

// hidden reports whether a promoted field sits below an embedded struct
// that encoding/json does not inline: one tagged json:"-" or given a name,
// or an unexported pointer (which it could not allocate).
func hidden(t reflect.Type, index []int) bool {
	for i := 1; i < len(index); i++ {
		sf := t.FieldByIndex(index[:i])
		if _, skip, inline := FieldName(sf); skip || !inline {
			return true
		}
		if !sf.IsExported() && sf.Type.Kind() == reflect.Pointer {
			return true
		}
	}
	return false
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
	n, err := strconv.ParseInt(lit, 10, dst.Type().Bits())
	if err != nil {
		s.fail(intError(lit, dst.Type(), err))
		return
	}
	dst.SetInt(n)
}

func decodeUint(s *state, v jsonbody.Value, dst reflect.Value) {
	lit, ok := number(s, v)
	if !ok {
		return
	}
	n, err := strconv.ParseUint(lit, 10, dst.Type().Bits())
	if err != nil {
		s.fail(intError(lit, dst.Type(), err))
		return
	}
	dst.SetUint(n)
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
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil {
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
		t, err := time.Parse(time.RFC3339Nano, v.Str())
		if err != nil {
			s.fail("must be a valid date-time (RFC 3339)")
			return
		}
		dst.Set(reflect.ValueOf(t))
	default:
		s.fail(mismatch("a string", v))
	}
}

// decodeUnmarshaler hands a type its value's JSON text, as encoding/json
// would (null included).
func decodeUnmarshaler(s *state, v jsonbody.Value, dst reflect.Value) {
	b, err := json.Marshal(v.Any())
	if err != nil {
		s.fail("is not a JSON value")
		return
	}
	if err := dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
		s.fail("is invalid: " + failure.Clip(err.Error()))
	}
}

func decodeText(s *state, v jsonbody.Value, dst reflect.Value) {
	switch v.Kind() {
	case jsonbody.Null:
	case jsonbody.String:
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(v.Str())); err != nil {
			s.fail("is invalid: " + failure.Clip(err.Error()))
		}
	default:
		s.fail(mismatch("a string", v))
	}
}
