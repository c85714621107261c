package expr

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

// Value presents a body value to CEL. Objects and arrays are wrapped, not
// copied: their members are converted only when an expression reads them,
// numbers as the shape says, strings without copying.
func Value(v jsonbody.Value, s *shape.Numbers) ref.Val { return valueIn(v, s, nil) }

// valueIn is Value whose objects and arrays count the units of their
// comparisons in m (compare.go); nil: they count none.
func valueIn(v jsonbody.Value, s *shape.Numbers, m *meter) ref.Val {
	switch v.Kind() {
	case jsonbody.Null:
		return types.NullValue
	case jsonbody.False:
		return types.False
	case jsonbody.True:
		return types.True
	case jsonbody.String:
		return types.String(v.Str())
	case jsonbody.Number:
		return Number(v.Number(), s.Kind())
	case jsonbody.Object:
		return &object{v: v, shape: s, m: m}
	default:
		return &list{v: v, shape: s.Elements(), m: m}
	}
}

// Number converts a JSON number literal. NumAuto gives an int when the
// value is integral and fits in int64 (so 1.0 and 1e2 are ints), else a
// double.
func Number(s string, k shape.NumKind) ref.Val {
	i, f, isInt := parseNumber(s, k)
	if isInt {
		return types.Int(i)
	}
	return types.Double(f)
}

// parseNumber is Number without the boxing: an int i when isInt, else
// the double f.
func parseNumber(s string, k shape.NumKind) (i int64, f float64, isInt bool) {
	if k != shape.NumDouble {
		if i, ok := jsonbody.ShortInt(s); ok {
			return i, 0, true
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, 0, true
		}
		if mayBeIntegral(s) {
			if r, ok := new(big.Rat).SetString(s); ok && r.IsInt() && r.Num().IsInt64() {
				return r.Num().Int64(), 0, true
			}
		}
	}
	if f, ok := jsonbody.ShortDecimal(s); ok {
		return 0, f, false
	}
	f, _ = strconv.ParseFloat(s, 64) // out of range: ±Inf, which compares correctly
	return 0, f, false
}

// mayBeIntegral reports whether a number literal that is not a plain
// integer could still be integral: it has an exponent, or its fraction is
// all zeros (1.0). 123.23 is not, and needs no exact arithmetic to say so.
func mayBeIntegral(s string) bool {
	if strings.ContainsAny(s, "eE") {
		return true
	}
	dot := strings.IndexByte(s, '.')
	return dot < 0 || strings.Trim(s[dot+1:], "0") == ""
}

// object is a JSON object as a CEL map(string, dyn).
type object struct {
	v     jsonbody.Value
	shape *shape.Numbers
	m     *meter // where its comparisons count (compare.go)
}

var (
	_ traits.Mapper   = (*object)(nil)
	_ traits.Lister   = (*list)(nil)
	_ traits.Foldable = (*list)(nil)
)

// FindStringKey is the fast path cel-go's interpreter takes for field
// selection (request.body.total) on values that offer it, and for an
// index. A lookup by the key a keyNode left in the meter counts the units
// of the names it reads (GetReads), as frame.index charges them.
func (o *object) FindStringKey(k string) (any, bool) {
	if o.m.lookedUp(k) && o.m.counting() {
		o.m.counted(func() { o.m.count(o.v.GetReads(k, scanUnits)) })
	}
	v, ok := o.v.Get(k)
	if !ok {
		return nil, false
	}
	return valueIn(v, o.shape.Member(k), o.m), true
}

func (o *object) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		if types.IsUnknownOrError(key) {
			return key, false
		}
		return nil, false
	}
	v, found := o.FindStringKey(string(k))
	if !found {
		return nil, false
	}
	return v.(ref.Val), true
}

func (o *object) Get(key ref.Val) ref.Val          { return mapGet(o, key) }
func (o *object) Size() ref.Val                    { return types.Int(o.v.Len()) }
func (o *object) Type() ref.Type                   { return types.MapType }
func (o *object) Value() any                       { return o.v.Any() }
func (o *object) ConvertToType(t ref.Type) ref.Val { return convertToType(o, types.MapType, t) }

func (o *object) ConvertToNative(t reflect.Type) (any, error) {
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, o.v.Any().(map[string]any)).ConvertToNative(t)
}

// Contains is in: a member of name key. It counts the units of the
// names of key's length the lookup reads (GetReads), as frame.in charges
// them: a long key looked up once per element of a list read the names
// each time.
func (o *object) Contains(key ref.Val) ref.Val {
	if k, ok := key.(types.String); ok && o.m.counting() {
		o.m.key = "" // counted here, not again by the lookup
		o.m.counted(func() { o.m.count(o.v.GetReads(string(k), scanUnits)) })
	}
	return mapContains(o, key)
}

// Equal is CEL's equality of maps: the same size, and each member equal
// to the other's member of its name. It visits the members in the body's
// order, which does not change its verdict, and counts a unit per member,
// and the units of two strings it reads (strUnits, compare.go), as
// frame.equal does in the same order.
func (o *object) Equal(other ref.Val) ref.Val {
	if o.m.counting() {
		o.m.enter()
		defer o.m.leave()
	}
	switch ov := other.(type) {
	case *object:
		if ov.v.Len() != o.v.Len() {
			return types.False
		}
		for i := range o.v.Len() {
			o.m.count(1)
			name, v := o.v.Member(i)
			w, ok := ov.v.Get(name)
			if !ok {
				return types.False
			}
			x, y := valueIn(v, o.shape.Member(name), o.m), valueIn(w, ov.shape.Member(name), ov.m)
			if o.m.count(strUnits(x, y)); types.Equal(x, y) != types.True {
				return types.False
			}
		}
		return types.True
	case traits.Mapper:
		if ov.Size() != o.Size() {
			return types.False
		}
		for i := range o.v.Len() {
			o.m.count(1)
			name, v := o.v.Member(i)
			w, ok := ov.Find(types.String(name))
			if !ok {
				return types.False
			}
			x := valueIn(v, o.shape.Member(name), o.m)
			if o.m.count(strUnits(x, w)); types.Equal(x, w) != types.True {
				return types.False
			}
		}
		return types.True
	}
	return types.False
}

// Iterator visits the keys in sorted order, so that results never depend
// on the order of the body (sorted once per object and request: see
// jsonbody.Value.SortedNames).
func (o *object) Iterator() traits.Iterator {
	return &keyIterator{keys: o.v.SortedNames()}
}

// list is a JSON array as a CEL list(dyn).
type list struct {
	v     jsonbody.Value
	shape *shape.Numbers // of the items
	m     *meter         // where its comparisons count (compare.go)
}

func (l *list) Get(index ref.Val) ref.Val {
	i, err := indexOf(index)
	if err != nil {
		return types.WrapErr(err)
	}
	if i < 0 || i >= int64(l.v.Len()) {
		return types.NewErr("index out of range: %d", i)
	}
	return valueIn(l.v.Index(int(i)), l.shape, l.m)
}

func indexOf(v ref.Val) (int64, error) {
	switch i := v.(type) {
	case types.Int:
		return int64(i), nil
	case types.Uint:
		return int64(i), nil
	case types.Double:
		if float64(int64(i)) == float64(i) {
			return int64(i), nil
		}
	}
	return 0, fmt.Errorf("unsupported index: %v", v)
}

func (l *list) Size() ref.Val  { return types.Int(l.v.Len()) }
func (l *list) Type() ref.Type { return types.ListType }
func (l *list) Value() any     { return l.v.Any() }

// Contains is in: an element equal to v. Each element is the receiver of
// its comparison, as in frame's in; one that is a string of v's length
// counts the units of reading them (strUnits), as frame.in charges them.
func (l *list) Contains(v ref.Val) ref.Val {
	if l.m.counting() {
		if _, ok := v.(types.String); ok {
			l.m.enter()
			defer l.m.leave()
		}
	}
	for i := range l.v.Len() {
		e := valueIn(l.v.Index(i), l.shape, l.m)
		if l.m.count(strUnits(e, v)); types.Equal(e, v) == types.True {
			return types.True
		}
	}
	return types.False
}

func (l *list) Add(other ref.Val) ref.Val {
	return l.values().Add(other)
}

func (l *list) values() traits.Lister {
	vals := make([]ref.Val, l.v.Len())
	for i := range vals {
		vals[i] = valueIn(l.v.Index(i), l.shape, l.m)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

// Equal is CEL's equality of lists, counting a unit per pair of
// elements, and the units of two strings it reads (strUnits, compare.go),
// as frame.equal does.
func (l *list) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if o.Size() != l.Size() {
		return types.False
	}
	if l.m.counting() {
		l.m.enter()
		defer l.m.leave()
	}
	for i := range l.v.Len() {
		l.m.count(1)
		x, y := valueIn(l.v.Index(i), l.shape, l.m), o.Get(indexKey(i))
		if l.m.count(strUnits(x, y)); types.Equal(x, y) != types.True {
			return types.False
		}
	}
	return types.True
}

func (l *list) ConvertToType(t ref.Type) ref.Val { return convertToType(l, types.ListType, t) }

func (l *list) ConvertToNative(t reflect.Type) (any, error) { return l.values().ConvertToNative(t) }

func (l *list) Iterator() traits.Iterator { return &listIterator{l: l} }

// foldChunk is how many object elements Fold allocates wrappers for at a
// time: one allocation per chunk instead of one per element, without
// paying for a whole long list when the fold stops early (exists).
const foldChunk = 32

// indexes are the first list indexes, boxed once: Fold passes its index
// as an interface, and boxing an int of 256 or more allocates.
var indexes = func() (v [1024]ref.Val) {
	for i := range v {
		v[i] = types.Int(i)
	}
	return v
}()

func indexKey(i int) ref.Val {
	if i < len(indexes) {
		return indexes[i]
	}
	return types.Int(i)
}

// Fold is the path cel-go's comprehensions (all, exists, map, filter)
// take over lists that offer it, instead of Get per index.
func (l *list) Fold(f traits.Folder) {
	n := l.v.Len()
	var objs []object
	for i := range n {
		e := l.v.Index(i)
		var val ref.Val
		if e.Kind() == jsonbody.Object {
			if len(objs) == 0 {
				objs = make([]object, min(n-i, foldChunk))
			}
			objs[0] = object{v: e, shape: l.shape, m: l.m}
			val, objs = &objs[0], objs[1:]
		} else {
			val = valueIn(e, l.shape, l.m)
		}
		if !f.FoldEntry(indexKey(i), val) {
			return
		}
	}
}

type listIterator struct {
	baseIterator
	l *list
	i int
}

func (it *listIterator) HasNext() ref.Val { return types.Bool(it.i < it.l.v.Len()) }

func (it *listIterator) Next() ref.Val {
	if it.i >= it.l.v.Len() {
		return nil
	}
	v := valueIn(it.l.v.Index(it.i), it.l.shape, it.l.m)
	it.i++
	return v
}

type keyIterator struct {
	baseIterator
	keys []string
	i    int
}

func (it *keyIterator) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }

func (it *keyIterator) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	k := it.keys[it.i]
	it.i++
	return types.String(k)
}

// baseIterator is the ref.Val part of an iterator, which CEL never shows to
// expressions.
type baseIterator struct{}

func (baseIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("iterators cannot be converted")
}
func (baseIterator) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("iterators cannot be converted")
}
func (baseIterator) Equal(ref.Val) ref.Val { return types.False }
func (baseIterator) Type() ref.Type        { return types.IteratorType }
func (baseIterator) Value() any            { return nil }

// Helpers shared by the map-like values of this package.

func mapGet(m traits.Mapper, key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

func mapContains(m traits.Mapper, key ref.Val) ref.Val {
	_, found := m.Find(key)
	return types.Bool(found)
}

func mapEqual(m traits.Mapper, other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok || o.Size() != m.Size() {
		return types.False
	}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		ov, found := o.Find(k)
		if !found || types.Equal(m.Get(k), ov) != types.True {
			return types.False
		}
	}
	return types.True
}

func convertToType(v ref.Val, own *types.Type, t ref.Type) ref.Val {
	switch t {
	case own:
		return v
	case types.TypeType:
		return own
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own, t)
}
