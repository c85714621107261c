package expr

import (
	"reflect"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// The variables of struct-tag rules on the native path: data.f, for a
// field f of a scalar kind of the struct data points to, or a slice of
// scalars or structs (whose scalar fields are read in turn, in all(),
// exists() and by index); has(data.f); self, when the field is of a basic
// scalar type. Values are read with reflect, which allocates nothing;
// cel-go's native types box every field and element they read.

// typedVars is what the translator knows of data and self.
type typedVars struct {
	provider types.Provider
	data     reflect.Type // the struct type the rule is declared on
	dataName string       // its CEL name
	self     string       // the field of a field rule, "" for a struct rule
	structs  map[string]reflect.Type
	shared   map[string]string // see TypeEnv
}

// scalarKinds are the kinds of Go values read natively, and their CEL
// kinds (cel-go's native type getters give these the same values).
var scalarKinds = map[reflect.Kind]kind{
	reflect.Bool: kBool,
	reflect.Int:  kInt, reflect.Int32: kInt, reflect.Int64: kInt,
	reflect.Uint: kUint, reflect.Uint32: kUint, reflect.Uint64: kUint,
	reflect.Float32: kDouble, reflect.Float64: kDouble,
	reflect.String: kString,
}

// goField is a field of data, or of a struct in it: cel-go's tester of
// its presence, and, when it is read natively, where it is and its kind
// (index nil: it is not).
type goField struct {
	st    reflect.Type // the struct type it is a field of
	ptr   reflect.Type // *st
	index []int        // through struct values only, no pointers
	to    kind         // a scalar kind, or kGoList
	elem  kind         // kGoList: its elements' kind, a scalar kind or kGoStruct
	elemT reflect.Type // kGoList: its elements' type
	isSet ref.FieldTester
}

// field resolves data.name (fieldOf data's type).
func (v *typedVars) field(name string) *goField { return v.fieldOf(v.data, name) }

// fieldOf resolves field name of struct type st to the Go field cel-go's
// own getter reads (nil: cel-go does not know it). It does not repeat
// cel-go's naming rules (json tags, promotion, hidden fields): it finds
// the field by setting each candidate in a fresh value and seeing which
// one the getter reads. Read natively: fields of scalarKinds' kinds, and
// slices of basic scalars (selfKinds) or of named structs, reached
// through struct values.
func (v *typedVars) fieldOf(st reflect.Type, name string) *goField {
	ft, found := v.provider.FindStructFieldType(typeName(st), name)
	if !found || ft.GetFrom == nil || ft.IsSet == nil {
		return nil
	}
	gf := &goField{st: st, ptr: reflect.PointerTo(st), isSet: ft.IsSet}
	for _, sf := range reflect.VisibleFields(st) {
		if !sf.IsExported() || sf.Type == reflect.TypeFor[time.Duration]() || !throughValues(st, sf.Index) {
			continue
		}
		if to, scalar := scalarKinds[sf.Type.Kind()]; scalar && readsField(ft.GetFrom, st, sf.Index, to) {
			gf.index, gf.to = sf.Index, to
			break
		}
		if elem, ok := sliceElem(sf.Type); ok && readsSlice(ft.GetFrom, st, sf.Index) {
			gf.index, gf.to, gf.elem, gf.elemT = sf.Index, kGoList, elem, sf.Type.Elem()
			break
		}
	}
	return gf
}

// sliceElem is the kind of the elements of a slice read natively.
func sliceElem(t reflect.Type) (kind, bool) {
	if t.Kind() != reflect.Slice {
		return kErr, false
	}
	e := t.Elem()
	if k, basic := selfKinds[e]; basic {
		return k, true
	}
	return kGoStruct, e.Kind() == reflect.Struct && e.Name() != "" && e != reflect.TypeFor[time.Time]()
}

// readsSlice reports whether get, given a pointer to a fresh t, returns
// a list of the length of the slice at index, for two lengths.
func readsSlice(get ref.FieldGetter, t reflect.Type, index []int) bool {
	p := reflect.New(t)
	f := p.Elem().FieldByIndex(index)
	if !f.CanSet() {
		return false
	}
	for _, n := range []int{2, 5} {
		f.Set(reflect.MakeSlice(f.Type(), n, n))
		got, err := get(p.Interface())
		if err != nil {
			return false
		}
		l, ok := got.(traits.Lister)
		if !ok || l.Size() != types.Int(n) {
			return false
		}
	}
	return true
}

// throughValues reports whether index reaches a field of t through
// embedded struct values only.
func throughValues(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		t = t.Field(i).Type
		if t.Kind() != reflect.Struct {
			return false
		}
	}
	return true
}

// readsField reports whether get, given a pointer to a fresh t, returns
// the value of the field at index, for two different values of it.
func readsField(get ref.FieldGetter, t reflect.Type, index []int, to kind) bool {
	p := reflect.New(t)
	f := p.Elem().FieldByIndex(index)
	if !f.CanSet() {
		return false
	}
	for _, probe := range []int64{7, -3} {
		var want ref.Val
		switch to {
		case kBool:
			f.SetBool(probe > 0)
			want = types.Bool(probe > 0)
		case kInt:
			f.SetInt(probe)
			want = types.Int(probe)
		case kUint:
			f.SetUint(uint64(probe + 10))
			want = types.Uint(probe + 10)
		case kDouble:
			f.SetFloat(float64(probe) + 0.5)
			want = types.Double(float64(probe) + 0.5)
		case kString:
			f.SetString(string(rune('a' + probe + 3)))
			want = types.String(rune('a' + probe + 3))
		}
		got, err := get(p.Interface())
		if err != nil {
			return false
		}
		g, ok := got.(ref.Val)
		if !ok || g.Type() != want.Type() || g.Equal(want) != types.True {
			return false
		}
	}
	return true
}

// selfKinds are the types of self read natively: the basic scalar types
// (a named type, such as type Currency string, stays with cel-go).
var selfKinds = map[reflect.Type]kind{
	reflect.TypeFor[bool](): kBool,
	reflect.TypeFor[int]():  kInt, reflect.TypeFor[int32](): kInt, reflect.TypeFor[int64](): kInt,
	reflect.TypeFor[uint](): kUint, reflect.TypeFor[uint32](): kUint, reflect.TypeFor[uint64](): kUint,
	reflect.TypeFor[float32](): kDouble, reflect.TypeFor[float64](): kDouble,
	reflect.TypeFor[string](): kString,
}

// selfType is the Go type of self and its kind, if it is read natively.
func (v *typedVars) selfType() (reflect.Type, kind, bool) {
	if v.self == "" {
		return nil, kErr, false
	}
	gf := v.field(v.self)
	if gf == nil || gf.index == nil || gf.to == kGoList {
		return nil, kErr, false
	}
	t := v.data.FieldByIndex(gf.index).Type
	to, basic := selfKinds[t]
	return t, to, basic
}

// dataField reads data.f; ok is false when data is not what the program
// was translated for, and cel-go must decide.
func (f *frame) dataField(gf *goField) (val, reflect.Value, bool) {
	p, ok := f.dataPtr(gf)
	if !ok {
		return val{}, reflect.Value{}, false
	}
	v, g := goValue(p.Elem().FieldByIndex(gf.index), gf.to, gf.elem)
	return v, g, true
}

// dataPtr is data, when it is a non-nil pointer to the struct gf is a
// field of.
func (f *frame) dataPtr(gf *goField) (reflect.Value, bool) {
	d := f.a.Data
	if d == nil || reflect.TypeOf(d) != gf.ptr {
		return reflect.Value{}, false
	}
	p := reflect.ValueOf(d)
	return p, !p.IsNil()
}

// goValue is a Go value of kind to (a kGoList's elements: elem), and for
// a struct or slice its reflect.Value.
func goValue(rv reflect.Value, to, elem kind) (val, reflect.Value) {
	switch to {
	case kGoList:
		return val{hdr: hdr{k: kGoList}, n: uint64(elem)}, rv
	case kGoStruct:
		return val{hdr: hdr{k: kGoStruct}}, rv
	}
	return scalarOf(rv, to), reflect.Value{}
}

// goElem is element i of the kGoList x, whose slice is xg.
func goElem(x val, xg reflect.Value, i int) (val, reflect.Value) {
	return goValue(xg.Index(i), kind(x.n), kind(x.n))
}

// goFieldOf reads field gf of a struct xg; ok is false when it is not of
// the type gf belongs to.
func goFieldOf(xg reflect.Value, gf *goField) (val, reflect.Value, bool) {
	if xg.Type() != gf.st {
		return val{}, reflect.Value{}, false
	}
	v, g := goValue(xg.FieldByIndex(gf.index), gf.to, gf.elem)
	return v, g, true
}

// dataHas is has(data.f), by cel-go's own field tester.
func (f *frame) dataHas(gf *goField) (val, bool) {
	if _, ok := f.dataPtr(gf); !ok {
		return val{}, false
	}
	return boolVal(gf.isSet(f.a.Data)), true
}

// selfVal reads self, of the basic type t (kind to).
func (f *frame) selfVal(t reflect.Type, to kind) (val, bool) {
	if reflect.TypeOf(f.a.Self) != t {
		return val{}, false
	}
	return scalarOf(reflect.ValueOf(f.a.Self), to), true
}

func scalarOf(v reflect.Value, to kind) val {
	switch to {
	case kBool:
		return boolVal(v.Bool())
	case kInt:
		return intVal(v.Int())
	case kUint:
		return uintVal(v.Uint())
	case kDouble:
		return doubleVal(v.Float())
	}
	return stringVal(v.String())
}
