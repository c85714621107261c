package bind

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/names"
)

// Plans: the decoder of a type, built once and kept, for pointers, slices,
// arrays, maps and structs, with the leaf decoders (leaf.go) at their ends.

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
	fromType        = reflect.TypeFor[jsonv2.UnmarshalerFrom]()
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
	return b.decoderFrom(t, true)
}

// decoderFrom is decoder, taking t's UnmarshalJSONFrom if from is set,
// and otherwise what json v2 falls back to when the method returns
// errors.ErrUnsupported.
func (b *builder) decoderFrom(t reflect.Type, from bool) (func(*state, jsonbody.Value, reflect.Value), error) {
	switch {
	case t == timeType:
		return decodeTime, nil
	case t == numberType:
		return decodeNumber, nil
	case from && reflect.PointerTo(t).Implements(fromType): // before UnmarshalJSON, as json v2 prefers it
		next, err := b.decoderFrom(t, false)
		if err != nil { // json v2 takes the type, and fails where it falls back
			msg := invalid(err)
			next = func(s *state, _ jsonbody.Value, _ reflect.Value) { s.fail(msg) }
		}
		return func(s *state, v jsonbody.Value, dst reflect.Value) { decodeUnmarshalerFrom(s, v, dst, next) }, nil
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
		if endless(t) {
			// Every value but null would allocate for ever (a stack
			// overflow, which no recover stops).
			return nil, fmt.Errorf("cannot decode into %s: a pointer that points, through pointers, to itself holds no value", t)
		}
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
		// Bytes in base64: of byte itself only. A slice of a named byte
		// type is a slice of numbers to json v2, methods or none.
		if t.Elem().Kind() == reflect.Uint8 && t.Elem().PkgPath() == "" {
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
			if v.Len() != dst.Len() {
				// A Go array holds its length exactly (json v2 refuses
				// another): dropping the extra items, or zero-filling the
				// missing ones (encoding/json), gave the handler other
				// values than the schema checked.
				s.fail(fmt.Sprintf("must have exactly %d items for %s, not %d", dst.Len(), t, v.Len()))
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

// endless reports whether pointer type t leads, through pointers only,
// to a type met before (type P *P): no value is ever reached.
func endless(t reflect.Type) bool {
	var seen []reflect.Type
	for ; t.Kind() == reflect.Pointer; t = t.Elem() {
		if slices.Contains(seen, t) {
			return true
		}
		seen = append(seen, t)
	}
	return false
}

// Opaque reports whether values of t decode themselves from their JSON
// (json.Unmarshaler, json v2's UnmarshalerFrom, encoding.TextUnmarshaler,
// time.Time, json.Number): nothing inside them is a member or element of
// the body.
func Opaque(t reflect.Type) bool {
	return t == timeType || t == numberType || reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(fromType) ||
		t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(textType)
}

// TakesJSON reports whether t decodes itself from any JSON value: a
// json.Unmarshaler or a json v2 UnmarshalerFrom (an Opaque type that is
// neither takes a string, or is time.Time or json.Number).
func TakesJSON(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(fromType)
}

// MapKey is the key of a map of type t that member name k decodes into,
// as Into decodes it.
func MapKey(t reflect.Type, k string) (reflect.Value, error) {
	key, err := mapKey(t)
	if err != nil {
		return reflect.Value{}, err
	}
	return key(k)
}

// mapKey is how a member name becomes a key of a map of type t.
func mapKey(t reflect.Type) (func(string) (reflect.Value, error), error) {
	kt := t.Key()
	switch {
	case kt == timeType: // RFC 3339, as a time.Time value
		return func(k string) (reflect.Value, error) {
			var tm time.Time
			if err := tm.UnmarshalText([]byte(k)); err != nil {
				return reflect.Zero(kt), err
			}
			if !strictRFC3339(k) {
				return reflect.Zero(kt), strconv.ErrSyntax
			}
			return reflect.ValueOf(tm), nil
		}, nil
	case reflect.PointerTo(kt).Implements(unmarshalerType), reflect.PointerTo(kt).Implements(fromType):
		// json v2 hands such a key its name as a JSON string, quotes
		// and escapes as the body has them, which a name is not here.
		return nil, fmt.Errorf("cannot decode into %s: a map key that decodes itself from JSON (UnmarshalJSON or UnmarshalJSONFrom) is not supported", t)
	case kt.Kind() == reflect.String && !reflect.PointerTo(kt).Implements(textType):
		return func(k string) (reflect.Value, error) { return reflect.ValueOf(k).Convert(kt), nil }, nil
	case reflect.PointerTo(kt).Implements(textType):
		return func(k string) (reflect.Value, error) {
			kv := reflect.New(kt)
			err := kv.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k))
			return kv.Elem(), err
		}, nil
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		return func(k string) (reflect.Value, error) {
			if !isJSONInt(k) {
				return reflect.Zero(kt), strconv.ErrSyntax
			}
			n, err := strconv.ParseInt(k, 10, kt.Bits())
			return reflect.ValueOf(n).Convert(kt), err
		}, nil
	case kt.Kind() >= reflect.Uint && kt.Kind() <= reflect.Uintptr:
		return func(k string) (reflect.Value, error) {
			if !isJSONInt(k) {
				return reflect.Zero(kt), strconv.ErrSyntax
			}
			n, err := strconv.ParseUint(k, 10, kt.Bits())
			return reflect.ValueOf(n).Convert(kt), err
		}, nil
	default:
		return nil, fmt.Errorf("cannot decode into %s: map keys must be strings, integers or text", t)
	}
}

// isJSONInt reports whether k is an integer as JSON writes it,
// -?(0|[1-9][0-9]*): the names json v2 reads as integer keys. strconv
// also takes "+1" and "01", other names for the key of "1".
func isJSONInt(k string) bool {
	k = strings.TrimPrefix(k, "-")
	if k == "" || k[0] == '0' && len(k) > 1 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

func (b *builder) mapDecoder(t reflect.Type) (func(*state, jsonbody.Value, reflect.Value), error) {
	key, err := mapKey(t)
	if err != nil {
		return nil, err
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
				s.fail("is not a valid key for " + t.Key().String())
				s.path.Pop()
				continue
			}
			if dst.MapIndex(kv).IsValid() {
				// Two names of one key ("0" and "-0"; any two a text key
				// reads alike): the schema checked both members, the map
				// would hold one. json v2 refuses them too.
				s.fail("is the same " + t.Key().String() + " key as an earlier member")
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

func (b *builder) structDecoder(t reflect.Type) (func(*state, jsonbody.Value, reflect.Value), error) {
	fields, err := jsonFields(t)
	if err != nil {
		return nil, err
	}
	list := make([]string, len(fields))
	for i := range fields {
		f := &fields[i]
		list[i] = f.name
		if f.hidden {
			continue
		}
		p, err := b.plan(t.FieldByIndex(f.index).Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, t.FieldByIndex(f.index).Name, err)
		}
		f.plan = p
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
			if f.hidden {
				s.fail("cannot be set: its field is below an unexported embedded pointer, which no JSON decoder can allocate")
			} else {
				f.plan.decode(s, e, fieldByIndexAlloc(dst, f.index))
			}
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
