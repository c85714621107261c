package expr

import (
	"reflect"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The variables of struct-tag rules on the native path: data.f, for a
// field f of a scalar kind of the struct data points to, and has(data.f);
// self, when the field is of a basic scalar type. Values are read with
// reflect, which allocates nothing; cel-go's native types box every field
// it reads.

// typedVars is what the translator knows of data and self.
type typedVars struct {
	provider types.Provider
	data     reflect.Type // the struct type the rule is declared on
	dataName string       // its CEL name
	self     string       // the field of a field rule, "" for a struct rule
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

// goField is a field of data: cel-go's tester of its presence, and
// where it is and its kind when it is read natively (index nil: not).
type goField struct {
	ptr   reflect.Type // *S, the type data must have
	index []int        // through struct values only, no pointers
	to    kind
	isSet ref.FieldTester
}

// field resolves data.name to the Go field cel-go's own getter reads
// (nil: cel-go does not know it). It does not repeat cel-go's naming
// rules (json tags, promotion, hidden fields): it finds the field by
// setting each candidate in a fresh value and seeing which one the getter
// reads. A field of another kind than scalarKinds', or reached through a
// pointer, is not read natively.
func (v *typedVars) field(name string) *goField {
	ft, found := v.provider.FindStructFieldType(v.dataName, name)
	if !found || ft.GetFrom == nil || ft.IsSet == nil {
		return nil
	}
	gf := &goField{ptr: reflect.PointerTo(v.data), isSet: ft.IsSet}
	for _, sf := range reflect.VisibleFields(v.data) {
		to, scalar := scalarKinds[sf.Type.Kind()]
		if !sf.IsExported() || !scalar || sf.Type == reflect.TypeFor[time.Duration]() || !throughValues(v.data, sf.Index) {
			continue
		}
		if readsField(ft.GetFrom, v.data, sf.Index, to) {
			gf.index, gf.to = sf.Index, to
			break
		}
	}
	return gf
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
	if gf == nil || gf.index == nil {
		return nil, kErr, false
	}
	t := v.data.FieldByIndex(gf.index).Type
	to, basic := selfKinds[t]
	return t, to, basic
}

// dataField reads data.f; ok is false when data is not what the program
// was translated for, and cel-go must decide.
func (f *frame) dataField(gf *goField) (val, bool) {
	d := f.a.Data
	if d == nil || reflect.TypeOf(d) != gf.ptr {
		return val{}, false
	}
	p := reflect.ValueOf(d)
	if p.IsNil() {
		return val{}, false
	}
	return scalarOf(p.Elem().FieldByIndex(gf.index), gf.to), true
}

// dataHas is has(data.f), by cel-go's own field tester.
func (f *frame) dataHas(gf *goField) (val, bool) {
	d := f.a.Data
	if d == nil || reflect.TypeOf(d) != gf.ptr || reflect.ValueOf(d).IsNil() {
		return val{}, false
	}
	return boolVal(gf.isSet(d)), true
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
