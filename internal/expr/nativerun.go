package expr

import (
	"math"
	"reflect"
	"strings"
)

// Running a native program (native.go) on one request.

// frame is the state of one native evaluation. It lives on Eval's stack.
type frame struct {
	a       *Activation
	bail    bool            // a value outside the subset, or the cost budget spent: cel-go decides
	budget  uint64          // what is left of the cost limit, for programs cel-go tracks
	tracked bool            // the program is one cel-go tracks (budget is the cost limit)
	regs    []agg           // objects and arrays of the body
	goRegs  []reflect.Value // structs and slices of data, apart: a small agg keeps body values in registers
	slots   []slot
}

// slot is the value of an iteration variable.
type slot struct {
	v val
	r agg
	g reflect.Value
}

// eval runs the program on a. done is false when the evaluation fell
// back: cel-go must decide.
//
// The registers and slots are arrays on its stack, which Go zeroes: most
// programs get small ones.
func (p *native) eval(a *Activation) (ok bool, err error, done bool) {
	if p.regs <= smallRegs && p.slots <= 1 {
		var regs [smallRegs]agg
		var goRegs [smallRegs]reflect.Value
		var slots [1]slot
		return p.run(&frame{a: a, budget: p.budget, tracked: p.budget != unlimited, regs: regs[:], goRegs: goRegs[:], slots: slots[:]})
	}
	var regs [maxRegs]agg
	var goRegs [maxRegs]reflect.Value
	var slots [maxSlots]slot
	return p.run(&frame{a: a, budget: p.budget, tracked: p.budget != unlimited, regs: regs[:], goRegs: goRegs[:], slots: slots[:]})
}

// smallRegs is the registers of most programs.
const smallRegs = 4

func (p *native) run(f *frame) (ok bool, err error, done bool) {
	v := f.eval(p.root)
	if f.bail {
		return false, nil, false
	}
	switch v.k {
	case kBool:
		return v.b(), nil, true
	case kErr:
		return false, nativeErrors[v.e], true // already value-free: no evalError to box
	}
	return false, notBool[v.k], true
}

// charge spends c of the budget. Every node charges at least what cel-go's
// cost tracker charges for it (see native's doc), so an evaluation that
// stays within the budget is one that cel-go runs within the cost limit.
// One that does not falls back to cel-go, which decides whether its actual
// cost is over the limit.
func (f *frame) charge(c uint64) {
	if c >= f.budget {
		f.bail, f.budget = true, 0
		return
	}
	f.budget -= c
}

// put stores a value's agg in n's register: the value is n's result.
func (f *frame) put(n *nnode, v val, r agg) val {
	if isComposite(v.k) {
		f.regs[n.reg] = r
		v.r = n.reg
	}
	return v
}

// putGo is put for data's structs and slices.
func (f *frame) putGo(n *nnode, v val, g reflect.Value) val {
	if isGo(v.k) {
		f.goRegs[n.reg] = g
		v.r = n.reg
	}
	return v
}

// sizeFor is the size cel-go's cost tracker gives a value (a string's
// length in code points; here its bytes, no fewer), 1 for a scalar.
func (f *frame) sizeFor(v val) uint64 {
	switch v.k {
	case kString:
		return uint64(len(v.s))
	case kObject, kList:
		return uint64(f.regs[v.r].size())
	case kGoList:
		return uint64(f.goRegs[v.r].Len())
	}
	return 1
}

// reqString is a string of the request line or headers. One longer than
// the estimate assumed (an application may raise MaxHeaderBytes) falls
// back to cel-go, which tracks the cost of expressions that read them.
func (f *frame) reqString(s string) val {
	if len(s) > MaxHeaderBytes {
		f.bail = true
	}
	return stringVal(s)
}

// firstErr is the error && and || report when no operand decides: the
// first operand's that is not a bool.
func firstErr(x, y val) val {
	switch {
	case x.k == kErr:
		return x
	case x.k == kBool && y.k == kErr:
		return y
	}
	return errVal(errNoSuchOverload)
}

// eval dispatches to a function per kind of node, each with the few
// values it needs on its own stack frame (one function of every case
// inline had a frame of kilobytes, zeroed on every call of the
// recursion).
func (f *frame) eval(n *nnode) val {
	switch n.op {
	case opConst:
		return n.lit
	case opIter:
		f.charge(2)
		s := &f.slots[n.slot]
		if isGo(s.v.k) {
			return f.putGo(n, s.v, s.g)
		}
		return f.put(n, s.v, s.r)
	case opBody, opMethod, opPath, opReqMap, opReqMapHas:
		return f.request(n)
	case opSelect, opHas:
		return f.member(n)
	case opIndex:
		return f.index(n)
	case opAnd, opOr:
		return f.logical(n)
	case opNot, opCond:
		return f.branch(n)
	case opNeg, opConvert, opSize, opMatches, opInSet, opInList:
		return f.unary(n)
	case opAll, opExists:
		return f.comprehension(n)
	case opData, opDataHas, opSelf, opGoField:
		return f.typed(n)
	}
	return f.binary(n)
}

// typed reads data and self; what it cannot read makes cel-go decide.
//
//go:noinline
func (f *frame) typed(n *nnode) val {
	f.charge(2)
	var v val
	var g reflect.Value
	var ok bool
	switch n.op {
	case opData:
		v, g, ok = f.dataField(n.field)
	case opDataHas:
		v, ok = f.dataHas(n.field)
	case opSelf:
		v, ok = f.selfVal(n.selfT, n.to)
	default: // opGoField
		x := f.eval(n.a)
		switch x.k {
		case kErr:
			return x
		case kGoStruct:
			v, g, ok = goFieldOf(f.goRegs[x.r], n.field)
		}
	}
	if !ok {
		f.bail = true
	}
	return f.putGo(n, v, g)
}

//go:noinline
func (f *frame) request(n *nnode) val {
	f.charge(4)
	switch n.op {
	case opBody:
		if f.a.Body == nil {
			return vNull
		}
		v, r := bodyVal(f.a.Body.Root(), f.a.Shape)
		return f.put(n, v, r)
	case opMethod:
		return f.reqString(f.a.Method)
	case opPath:
		return f.reqString(f.a.requestPath())
	}
	s, ok := f.a.requestMap(n.part)[n.name]
	if n.op == opReqMapHas {
		return boolVal(ok)
	}
	if !ok {
		return errVal(errNoSuchKey)
	}
	return f.reqString(s)
}

//go:noinline
func (f *frame) member(n *nnode) val {
	f.charge(2)
	x := f.eval(n.a)
	switch {
	case x.k == kErr:
		return x
	case isGo(x.k):
		f.bail = true
		return val{}
	case n.op == opSelect:
		if x.k == kObject {
			if m, mr, ok := f.regs[x.r].member(n.name); ok {
				return f.put(n, m, mr)
			}
		}
		return errVal(errNoSuchKey)
	case n.op == opHas:
		switch x.k {
		case kObject:
			_, ok := f.regs[x.r].j.Get(n.name)
			return boolVal(ok)
		case kList:
			return errVal(errNoSuchOverload)
		}
		return vFalse // cel-go's presence test on a primitive, without EnableErrorOnBadPresenceTest
	}
	return errVal(errNoSuchKey)
}

// elemAt is element i of the list x, an array of the body or a slice of
// data, as n's result.
func (f *frame) elemAt(n *nnode, x val, i int64) val {
	if x.k == kGoList {
		xg := f.goRegs[x.r]
		if i < 0 || i >= int64(xg.Len()) {
			return errVal(errIndex)
		}
		e, eg := goElem(x, xg, int(i))
		return f.putGo(n, e, eg)
	}
	xr := f.regs[x.r]
	if i < 0 || i >= int64(xr.size()) {
		return errVal(errIndex)
	}
	e, er := xr.elem(int(i))
	return f.put(n, e, er)
}

// index is a[b], b a constant or evaluated at run time: a member of an
// object by a string, an element of a list by an int, or a uint or double
// that converts to one without loss.
//
//go:noinline
func (f *frame) index(n *nnode) val {
	f.charge(2)
	x := f.eval(n.a)
	if x.k == kErr {
		return x
	}
	k := f.eval(n.b)
	if k.k == kErr {
		return k
	}
	switch x.k {
	case kObject:
		if k.k == kString {
			if f.charge(f.regs[x.r].j.GetReads(k.s, scanUnits)); f.bail { // as object.FindStringKey counts them
				return val{}
			}
			if m, mr, ok := f.regs[x.r].member(k.s); ok {
				return f.put(n, m, mr)
			}
		}
		return errVal(errNoSuchKey)
	case kList, kGoList:
		var i int64
		switch k.k {
		case kInt:
			i = k.i()
		case kUint:
			if k.n > math.MaxInt64 {
				return errVal(errIndex)
			}
			i = int64(k.n)
		case kDouble:
			d, ok := doubleToInt(k.f())
			if !ok || float64(d) != k.f() {
				return errVal(errIndex)
			}
			i = d
		default:
			return errVal(errIndex)
		}
		return f.elemAt(n, x, i)
	case kGoStruct:
		f.bail = true
		return val{}
	}
	return errVal(errNoSuchKey)
}

//go:noinline
func (f *frame) logical(n *nnode) val {
	f.charge(1)
	stop := n.op == opOr // the value that decides
	x := f.eval(n.a)
	if x.k == kBool && x.b() == stop {
		return x
	}
	y := f.eval(n.b)
	if y.k == kBool && y.b() == stop {
		return y
	}
	if x.k == kBool && y.k == kBool {
		return boolVal(!stop)
	}
	return firstErr(x, y)
}

//go:noinline
func (f *frame) branch(n *nnode) val {
	f.charge(1)
	c := f.eval(n.a)
	switch {
	case c.k == kErr:
		return c
	case c.k != kBool:
		return errVal(errNoSuchOverload)
	case n.op == opNot:
		return boolVal(!c.b())
	}
	var v val
	if c.b() {
		v = f.eval(n.b)
	} else {
		v = f.eval(n.c)
	}
	if isGo(v.k) {
		return f.putGo(n, v, f.goRegs[v.r])
	}
	return f.put(n, v, f.regs[v.r])
}

//go:noinline
func (f *frame) unary(n *nnode) val {
	f.charge(2)
	x := f.eval(n.a)
	if x.k == kErr {
		return x
	}
	switch n.op {
	case opNeg:
		return negate(x)
	case opConvert:
		if x.k == kString { // parsed whole: charged as cel-go's tracker is, guard or not (lengths.go)
			if f.charge(scanUnits(len(x.s))); f.bail {
				return val{}
			}
		}
		if n.guard != kErr && x.k != n.guard {
			return errVal(errNoSuchOverload)
		}
		return convert(n.to, x)
	case opSize:
		if x.k == kGoList {
			return intVal(int64(f.goRegs[x.r].Len()))
		}
		if x.k == kString { // its code points counted: charged as cel-go's tracker is (lengths.go)
			if f.charge(scanUnits(len(x.s))); f.bail {
				return val{}
			}
		}
		return sizeOf(x, f.regs[x.r])
	case opInSet:
		f.charge(uint64(n.set.n))
		return boolVal(n.set.has(x))
	case opInList:
		if isGo(x.k) {
			f.bail = true
			return val{}
		}
		f.charge(uint64(len(n.list)))
		xr := f.regs[x.r]
		for _, e := range n.list {
			if equal(x, xr, e, agg{}) {
				return vTrue
			}
		}
		return vFalse
	}
	if x.k != kString { // opMatches
		return errVal(errNoSuchOverload)
	}
	f.charge((uint64(len(x.s)) + 1) * (uint64(len(n.re.String())) + 1))
	if f.bail {
		return vFalse
	}
	return boolVal(n.re.MatchString(x.s))
}

// binary is the strict binary operators: an error operand, the left one
// first, is the result.
//
//go:noinline
func (f *frame) binary(n *nnode) val {
	f.charge(2)
	x := f.eval(n.a)
	if x.k == kErr {
		return x
	}
	y := f.eval(n.b)
	if y.k == kErr {
		return y
	}
	xr, yr := f.regs[x.r], f.regs[y.r]
	if (isGo(x.k) || isGo(y.k)) && n.op != opLt && n.op != opLe && n.op != opGt && n.op != opGe {
		f.bail = true // equality and concatenation of data's values stay with cel-go
		return val{}
	}
	switch n.op {
	case opEq, opNe:
		f.charge(min(f.sizeFor(x), f.sizeFor(y)))
		eq := f.equal(x, xr, y, yr)
		if f.bail {
			return val{}
		}
		return boolVal(eq == (n.op == opEq))
	case opLt, opLe, opGt, opGe:
		f.charge(min(f.sizeFor(x), f.sizeFor(y)))
		return relation(n.op, x, y)
	case opAdd, opSub, opMul, opDiv, opMod:
		v, bail := arith(n.op, x, y)
		if bail {
			f.bail = true
		}
		return v
	case opIn:
		f.charge(f.sizeFor(y))
		v := f.in(x, xr, y, yr)
		if f.bail {
			return val{}
		}
		return v
	}
	if x.k != kString || y.k != kString { // opStartsWith, opEndsWith, opContains
		return errVal(errNoSuchOverload)
	}
	switch n.op { // cel-go charges these by the size of y, the prefix or suffix
	case opStartsWith:
		f.charge(uint64(max(len(x.s), len(y.s))))
		return boolVal(strings.HasPrefix(x.s, y.s))
	case opEndsWith:
		f.charge(uint64(max(len(x.s), len(y.s))))
		return boolVal(strings.HasSuffix(x.s, y.s))
	}
	f.charge((uint64(len(x.s)) + 1) * (uint64(len(y.s)) + 1))
	if f.bail {
		return vFalse
	}
	return boolVal(strings.Contains(x.s, y.s))
}

// in is x in y for a y evaluated at run time: inAggregate over a list
// (Equal, each element the receiver, as in list.Contains) or an object
// (its member names).
func (f *frame) in(x val, xr agg, y val, yr agg) val {
	switch y.k {
	case kList:
		for i := range yr.size() {
			e, er := yr.elem(i)
			if f.charge(strValUnits(e, x)); f.bail {
				return val{}
			}
			if f.equal(e, er, x, xr) {
				return vTrue
			}
			if f.bail {
				return val{}
			}
		}
		return vFalse
	case kObject:
		if x.k != kString {
			return vFalse
		}
		if f.charge(yr.j.GetReads(x.s, scanUnits)); f.bail { // as object.Contains counts them
			return val{}
		}
		_, ok := yr.j.Get(x.s)
		return boolVal(ok)
	}
	return errVal(errNoSuchOverload)
}

// strValUnits is strUnits (compare.go) of two values: the units of
// reading two strings of the same length, which object.Equal, list.Equal
// and list.Contains count before they compare them.
func strValUnits(x, y val) uint64 {
	if x.k == kString && y.k == kString && len(x.s) == len(y.s) {
		return scanUnits(len(x.s))
	}
	return 0
}

// equal is equal, charging the comparison units of two objects or two
// lists (compare.go): a unit per pair of members, resp. elements, it
// visits, and the units of two strings it reads (strValUnits), in the order object.Equal and list.Equal visit them (x's
// members in the body's order, looked up in y), so that it charges what
// cel-go's meter counts. It stops, with f.bail, once the budget is spent.
func (f *frame) equal(x val, xr agg, y val, yr agg) bool {
	if x.k != y.k || !isComposite(x.k) {
		return equal(x, xr, y, yr)
	}
	n := xr.size()
	if n != yr.size() {
		return false
	}
	for i := range n {
		if f.charge(1); f.bail {
			return false
		}
		var xe, ye val
		var xer, yer agg
		if x.k == kObject {
			var name string
			var ok bool
			name, xe, xer = xr.memberAt(i)
			if ye, yer, ok = yr.member(name); !ok {
				return false
			}
		} else {
			xe, xer = xr.elem(i)
			ye, yer = yr.elem(i)
		}
		if f.charge(strValUnits(xe, ye)); f.bail {
			return false
		}
		if !f.equal(xe, xer, ye, yer) {
			return false
		}
	}
	return true
}

// comprehension is all() and exists(): false (all), resp. true (exists),
// as soon as an element's predicate is; otherwise an error if one was an
// error or not a bool, as cel-go's fold of && and || gives; otherwise
// true, resp. false. An object's elements are its member names.
// Verdicts do not depend on the order of the elements, so an object's
// are visited in the order of the body, not sorted as cel-go visits them.
// Costs do: under the cost limit, cel-go, stopping at the first member
// in sorted order that decides, may evaluate members the body's order
// did not reach before it stopped (and stop at the limit: an error where
// the native path decided). A tracked program that stops then evaluates
// those members too (sortedBefore), so that its charges still bound
// cel-go's cost.
//
//go:noinline
func (f *frame) comprehension(n *nnode) val {
	f.charge(2)
	r := f.eval(n.a)
	if r.k == kErr {
		return r
	}
	stop := n.op == opExists
	if r.k == kString && r.s == "" { // cel-go folds an empty Sizer to the initial value, iterable or not
		return boolVal(!stop)
	}
	if r.k == kGoStruct {
		f.bail = true
		return val{}
	}
	if r.k != kList && r.k != kObject && r.k != kGoList {
		return errVal(errNoSuchOverload)
	}
	rr, rg := f.regs[r.r], f.goRegs[r.r]
	size := 0
	if r.k == kGoList {
		size = rg.Len()
	} else {
		size = rr.size()
	}
	bad, failed := val{}, false // the first predicate that was not a bool
	s := &f.slots[n.slot]
	for i := range size {
		f.charge(5)
		switch r.k {
		case kList:
			s.v, s.r = rr.elem(i)
		case kGoList:
			s.v, s.g = goElem(r, rg, i)
		default:
			name, _ := rr.j.Member(i)
			s.v, s.r = stringVal(name), agg{}
		}
		p := f.eval(n.b)
		if f.bail {
			return val{}
		}
		switch {
		case p.k == kBool && p.b() == stop:
			if r.k == kObject && f.tracked {
				if f.sortedBefore(n, rr, i); f.bail {
					return val{}
				}
			}
			return p
		case p.k != kBool && !failed:
			bad, failed = p, true
			if p.k != kErr {
				bad = errVal(errNoSuchOverload)
			}
		}
	}
	if failed {
		return bad
	}
	return boolVal(!stop)
}

// sortedBefore evaluates the predicate of the comprehension n, which
// member i of the object r decided, on the members after i that sort
// before it: cel-go, visiting members in sorted order, evaluates every
// member that sorts before the first that decides, and those before i
// were evaluated already. The native path has then charged for all that
// cel-go evaluates; the verdict stays member i's, which cel-go reaches
// too (or stops earlier, at one of these, with the same verdict).
func (f *frame) sortedBefore(n *nnode, r agg, i int) {
	f.charge(uint64(r.size() - i)) // the scan, so that nested loops stay within the budget
	name, _ := r.j.Member(i)
	s := &f.slots[n.slot]
	for j := i + 1; j < r.size() && !f.bail; j++ {
		if other, _ := r.j.Member(j); other < name {
			f.charge(5)
			s.v, s.r = stringVal(other), agg{}
			f.eval(n.b)
		}
	}
}

// unlimited is the budget of programs cel-go runs without its tracker:
// their estimate is within the cost limit.
const unlimited = math.MaxUint64
