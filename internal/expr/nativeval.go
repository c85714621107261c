package expr

import (
	"cmp"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

// The values and operators of the native evaluator (native.go), each
// written to give what cel-go gives on the same operands: the same value,
// or an error where cel-go gives one. Values are not boxed: a val is a
// small struct passed by value, so evaluating allocates nothing.

type kind uint8

const (
	kErr kind = iota
	kNull
	kBool
	kInt
	kUint
	kDouble
	kString
	kObject   // a JSON object of the body (an agg)
	kList     // a JSON array of the body (an agg)
	kGoStruct // a struct value of a struct-tag rule's data (in frame.goRegs)
	kGoList   // a slice of data (in frame.goRegs), its elements' kind in n
)

// kindNames are the CEL type names of the kinds, for the error of a
// result that is not a bool.
var kindNames = [...]string{kErr: "error", kNull: "null_type", kBool: "bool", kInt: "int", kUint: "uint",
	kDouble: "double", kString: "string", kObject: "map", kList: "list", kGoStruct: "object", kGoList: "list"}

// notBool are the errors of results that are not bools, written once.
var notBool = func() (e [len(kindNames)]error) {
	for k, n := range kindNames {
		e[k] = errors.New("evaluated to " + n + ", not a bool")
	}
	return e
}()

// val is a value of native evaluation, or an error (kErr, its code e).
// It is 32 bytes of at most four fields, which the compiler keeps in
// registers: an object or array of the body is not in it but in a
// register of the frame (frame.regs[r]).
type val struct {
	hdr
	n uint64 // bool (0, 1), int64, uint64 or float64 bits
	s string
}

type hdr struct {
	k kind
	e errCode // kErr
	r uint8   // kObject, kList: its frame register (frame.regs); kGoStruct, kGoList: frame.goRegs
}

// agg is an object or array of the body, and the place of its members,
// resp. elements, in the shape of numbers. (A struct or slice of data is
// a reflect.Value in frame.goRegs.)
type agg struct {
	j  jsonbody.Value
	sh *shape.Numbers
}

// isComposite reports the kinds whose value is an agg.
func isComposite(k kind) bool { return k == kObject || k == kList }

// isGo reports the kinds of data's composite values, which only the
// operations that know them take: the others hand over to cel-go.
func isGo(k kind) bool { return k >= kGoStruct }

// errCode is an error of native evaluation: an index in nativeErrors.
type errCode uint8

const (
	errNoSuchOverload errCode = iota
	errNoSuchKey
	errIntOverflow
	errUintOverflow
	errDivideByZero
	errModulusByZero
	errIndex
	errConversion
)

// nativeErrors are the errors of native evaluation, as valueFree writes
// cel-go's errors of the same kind: their reason, no value of the request.
// Eval returns them as they are (TestNative_Errors holds their texts).
var nativeErrors = [...]error{
	errNoSuchOverload: errors.New("no such overload"),
	errNoSuchKey:      errors.New("no such key: …"),
	errIntOverflow:    errors.New("integer overflow"),
	errUintOverflow:   errors.New("unsigned integer overflow"),
	errDivideByZero:   errors.New("division by zero"),
	errModulusByZero:  errors.New("modulus by zero"),
	errIndex:          errors.New("index out of bounds: …"),
	errConversion:     errors.New("type conversion error: …"),
}

var (
	vTrue  = val{hdr: hdr{k: kBool}, n: 1}
	vFalse = val{hdr: hdr{k: kBool}}
	vNull  = val{hdr: hdr{k: kNull}}
)

func errVal(e errCode) val { return val{hdr: hdr{k: kErr, e: e}} }
func boolVal(b bool) val {
	if b {
		return vTrue
	}
	return vFalse
}
func intVal(i int64) val      { return val{hdr: hdr{k: kInt}, n: uint64(i)} }
func uintVal(u uint64) val    { return val{hdr: hdr{k: kUint}, n: u} }
func doubleVal(f float64) val { return val{hdr: hdr{k: kDouble}, n: math.Float64bits(f)} }
func stringVal(s string) val  { return val{hdr: hdr{k: kString}, s: s} }
func (v val) b() bool         { return v.n != 0 }
func (v val) i() int64        { return int64(v.n) }
func (v val) f() float64      { return math.Float64frombits(v.n) }
func (v val) isNaN() bool     { return v.k == kDouble && math.IsNaN(v.f()) }

// bodyVal is a body value as Value presents it: a scalar, or the kind
// of an object or array and its agg.
func bodyVal(j jsonbody.Value, s *shape.Numbers) (val, agg) {
	switch j.Kind() {
	case jsonbody.Null:
		return vNull, agg{}
	case jsonbody.False:
		return vFalse, agg{}
	case jsonbody.True:
		return vTrue, agg{}
	case jsonbody.String:
		return stringVal(j.Str()), agg{}
	case jsonbody.Number:
		i, f, isInt := parseNumber(j.Number(), s.Kind())
		if isInt {
			return intVal(i), agg{}
		}
		return doubleVal(f), agg{}
	case jsonbody.Object:
		return val{hdr: hdr{k: kObject}}, agg{j: j, sh: s}
	default:
		return val{hdr: hdr{k: kList}}, agg{j: j, sh: s.Elements()}
	}
}

// member is member name of an object.
func (r agg) member(name string) (val, agg, bool) {
	m, ok := r.j.Get(name)
	if !ok {
		return val{}, agg{}, false
	}
	v, mr := bodyVal(m, r.sh.Member(name))
	return v, mr, true
}

// memberAt is member i of an object (in the body's order), and its name.
func (r agg) memberAt(i int) (string, val, agg) {
	name, m := r.j.Member(i)
	v, mr := bodyVal(m, r.sh.Member(name))
	return name, v, mr
}

// elem is element i of an array.
func (r agg) elem(i int) (val, agg) { return bodyVal(r.j.Index(i), r.sh) }

// size is the number of members or elements.
func (r agg) size() int { return r.j.Len() }

// equal is CEL's heterogeneous equality (types.Equal) of two values that
// are not errors (xr and yr: the refs of objects and arrays): null
// equals only null, numbers compare by value across int, uint and double
// (NaN equals nothing), objects and arrays member by member, and values of
// different kinds are not equal.
func equal(x val, xr agg, y val, yr agg) bool {
	if x.k == kNull || y.k == kNull {
		return x.k == y.k
	}
	switch x.k {
	case kBool:
		return y.k == kBool && x.n == y.n
	case kString:
		return y.k == kString && x.s == y.s
	case kInt:
		switch y.k {
		case kInt:
			return x.n == y.n
		case kUint:
			return cmpIntUint(x.i(), y.n) == 0
		case kDouble:
			return !y.isNaN() && cmpDoubleInt(y.f(), x.i()) == 0
		}
	case kUint:
		switch y.k {
		case kInt:
			return cmpIntUint(y.i(), x.n) == 0
		case kUint:
			return x.n == y.n
		case kDouble:
			return !y.isNaN() && cmpDoubleUint(y.f(), x.n) == 0
		}
	case kDouble:
		if x.isNaN() {
			return false
		}
		switch y.k {
		case kInt:
			return cmpDoubleInt(x.f(), y.i()) == 0
		case kUint:
			return cmpDoubleUint(x.f(), y.n) == 0
		case kDouble:
			return x.f() == y.f()
		}
	case kObject:
		if y.k != kObject || xr.size() != yr.size() {
			return false
		}
		for i := range xr.size() {
			name, xm, xmr := xr.memberAt(i) // the body has no duplicate names: x's member name is xm
			ym, ymr, ok := yr.member(name)
			if !ok || !equal(xm, xmr, ym, ymr) {
				return false
			}
		}
		return true
	case kList:
		if y.k != kList || xr.size() != yr.size() {
			return false
		}
		for i := range xr.size() {
			xe, xer := xr.elem(i)
			ye, yer := yr.elem(i)
			if !equal(xe, xer, ye, yer) {
				return false
			}
		}
		return true
	}
	return false
}

// The numeric comparisons of cel-go (common/types/compare.go), the same
// float64 conversions included: an int and a double compare as doubles
// unless the double is beyond the range of int64.

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpDoubleInt(d float64, i int64) int {
	switch {
	case d < math.MinInt64:
		return -1
	case d > math.MaxInt64:
		return 1
	}
	return cmpFloat(d, float64(i))
}

func cmpDoubleUint(d float64, u uint64) int {
	switch {
	case d < 0:
		return -1
	case d > math.MaxUint64:
		return 1
	}
	return cmpFloat(d, float64(u))
}

func cmpIntUint(i int64, u uint64) int {
	if i < 0 || u > math.MaxInt64 {
		return -1
	}
	switch c := i - int64(u); {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// compare is traits.Comparer's Compare of two values that are not errors
// NaN: -1, 0 or 1; not ok for operands CEL does not order.
func compare(x, y val) (int, bool) {
	switch x.k {
	case kBool:
		if y.k == kBool {
			return cmp.Compare(x.n, y.n), true
		}
	case kString:
		if y.k == kString {
			return strings.Compare(x.s, y.s), true
		}
	case kInt:
		switch y.k {
		case kInt:
			return cmp.Compare(x.i(), y.i()), true
		case kUint:
			return cmpIntUint(x.i(), y.n), true
		case kDouble:
			return -cmpDoubleInt(y.f(), x.i()), true
		}
	case kUint:
		switch y.k {
		case kInt:
			return -cmpIntUint(y.i(), x.n), true
		case kUint:
			return cmp.Compare(x.n, y.n), true
		case kDouble:
			return -cmpDoubleUint(y.f(), x.n), true
		}
	case kDouble:
		switch y.k {
		case kInt:
			return cmpDoubleInt(x.f(), y.i()), true
		case kUint:
			return cmpDoubleUint(x.f(), y.n), true
		case kDouble:
			return cmpFloat(x.f(), y.f()), true
		}
	}
	return 0, false
}

// relation evaluates <, <=, > or >= (op) on two values that are not
// errors. NaN on either side is false, whatever the other side is, as in
// cel-go; otherwise the operands must be ordered by compare.
func relation(op op, x, y val) val {
	switch x.k {
	case kBool, kInt, kUint, kDouble, kString:
	default: // not a traits.Comparer: checked before NaN
		return errVal(errNoSuchOverload)
	}
	if x.isNaN() || y.isNaN() {
		return vFalse
	}
	c, ok := compare(x, y)
	if !ok {
		return errVal(errNoSuchOverload)
	}
	switch op {
	case opLt:
		return boolVal(c < 0)
	case opLe:
		return boolVal(c <= 0)
	case opGt:
		return boolVal(c > 0)
	default:
		return boolVal(c >= 0)
	}
}

// arith evaluates + - * / % on two values that are not errors: both ints,
// both uints or both doubles (no % on doubles), with cel-go's overflow and
// division errors. bail is set for string and list concatenation, which
// the native path does not build.
func arith(op op, x, y val) (v val, bail bool) {
	switch x.k {
	case kString, kList:
		if op == opAdd && y.k == x.k {
			return val{}, true
		}
		return errVal(errNoSuchOverload), false
	}
	if x.k != y.k {
		return errVal(errNoSuchOverload), false
	}
	switch x.k {
	case kInt:
		a, b := x.i(), y.i()
		switch op {
		case opAdd:
			if b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b {
				return errVal(errIntOverflow), false
			}
			return intVal(a + b), false
		case opSub:
			if b < 0 && a > math.MaxInt64+b || b > 0 && a < math.MinInt64+b {
				return errVal(errIntOverflow), false
			}
			return intVal(a - b), false
		case opMul:
			if a == -1 && b == math.MinInt64 || b == -1 && a == math.MinInt64 ||
				a > 0 && b > 0 && a > math.MaxInt64/b ||
				a > 0 && b < 0 && b < math.MinInt64/a ||
				a < 0 && b > 0 && a < math.MinInt64/b ||
				a < 0 && b < 0 && b < math.MaxInt64/a {
				return errVal(errIntOverflow), false
			}
			return intVal(a * b), false
		case opDiv, opMod:
			if b == 0 {
				if op == opDiv {
					return errVal(errDivideByZero), false
				}
				return errVal(errModulusByZero), false
			}
			if a == math.MinInt64 && b == -1 {
				return errVal(errIntOverflow), false
			}
			if op == opDiv {
				return intVal(a / b), false
			}
			return intVal(a % b), false
		}
	case kUint:
		a, b := x.n, y.n
		switch op {
		case opAdd:
			if b > 0 && a > math.MaxUint64-b {
				return errVal(errUintOverflow), false
			}
			return uintVal(a + b), false
		case opSub:
			if b > a {
				return errVal(errUintOverflow), false
			}
			return uintVal(a - b), false
		case opMul:
			if b != 0 && a > math.MaxUint64/b {
				return errVal(errUintOverflow), false
			}
			return uintVal(a * b), false
		case opDiv, opMod:
			if b == 0 {
				if op == opDiv {
					return errVal(errDivideByZero), false
				}
				return errVal(errModulusByZero), false
			}
			if op == opDiv {
				return uintVal(a / b), false
			}
			return uintVal(a % b), false
		}
	case kDouble:
		a, b := x.f(), y.f()
		switch op {
		case opAdd:
			return doubleVal(a + b), false
		case opSub:
			return doubleVal(a - b), false
		case opMul:
			return doubleVal(a * b), false
		case opDiv:
			return doubleVal(a / b), false
		}
	}
	return errVal(errNoSuchOverload), false
}

// negate is unary minus: ints (checked) and doubles.
func negate(x val) val {
	switch x.k {
	case kInt:
		if x.i() == math.MinInt64 {
			return errVal(errIntOverflow)
		}
		return intVal(-x.i())
	case kDouble:
		return doubleVal(-x.f())
	}
	return errVal(errNoSuchOverload)
}

// convert is int(x), uint(x) or double(x) (to: kInt, kUint, kDouble) on a
// value that is not an error, as ConvertToType does it.
func convert(to kind, x val) val {
	switch to {
	case kDouble:
		switch x.k {
		case kDouble:
			return x
		case kInt:
			return doubleVal(float64(x.i()))
		case kUint:
			return doubleVal(float64(x.n))
		case kString:
			if f, err := strconv.ParseFloat(x.s, 64); err == nil {
				return doubleVal(f)
			}
			return errVal(errConversion)
		}
	case kInt:
		switch x.k {
		case kInt:
			return x
		case kUint:
			if x.n > math.MaxInt64 {
				return errVal(errIntOverflow)
			}
			return intVal(int64(x.n))
		case kDouble:
			if i, ok := doubleToInt(x.f()); ok {
				return intVal(i)
			}
			return errVal(errIntOverflow)
		case kString:
			if i, err := strconv.ParseInt(x.s, 10, 64); err == nil {
				return intVal(i)
			}
			return errVal(errConversion)
		}
	case kUint:
		switch x.k {
		case kUint:
			return x
		case kInt:
			if x.i() < 0 {
				return errVal(errUintOverflow)
			}
			return uintVal(uint64(x.i()))
		case kDouble:
			if u, ok := doubleToUint(x.f()); ok {
				return uintVal(u)
			}
			return errVal(errUintOverflow)
		case kString:
			if u, err := strconv.ParseUint(x.s, 10, 64); err == nil {
				return uintVal(u)
			}
			return errVal(errConversion)
		}
	}
	return errVal(errNoSuchOverload)
}

// doubleToInt and doubleToUint are cel-go's checked conversions.
func doubleToInt(f float64) (int64, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) || f <= math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

func doubleToUint(f float64) (uint64, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) || f < 0 || f >= 1<<64 {
		return 0, false
	}
	return uint64(f), true
}

// sizeOf is size(x): code points of a string, members of an object,
// elements of a list (xr).
func sizeOf(x val, xr agg) val {
	switch x.k {
	case kString:
		return intVal(int64(utf8.RuneCountInString(x.s)))
	case kObject, kList:
		return intVal(int64(xr.size()))
	}
	return errVal(errNoSuchOverload)
}
