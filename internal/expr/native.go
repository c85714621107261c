package expr

import (
	"reflect"
	"regexp"
	"slices"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
)

// The native fast path of a Program: the most common shapes of
// invariants evaluated on the request directly, without cel-go's
// interpreter, its boxed values and its wrappers of the body. cel-go
// still parses, type-checks and estimates every expression; compile then
// translates the checked AST into a tree of nodes when every node is in
// the subset below, and Eval runs that tree instead of the cel-go program.
// cel-go remains the reference: a differential test and a fuzz target
// (native_test.go) hold the two to the same verdicts.
//
// The subset: literals (int, uint, double, string, bool, null);
// request.body and selections, has() and indexes below it;
// request.method and request.path; request.params, .query and .headers
// with a constant key, and has() on them; in struct-tag rules, data.f for
// a field of a scalar kind, has(data.f), and self of a basic scalar type
// (nativetyped.go); the variables of all() and exists() over a list or an
// object; && || ! ?: == != < <= > >= with CEL's error absorption and its
// cross-type numeric comparisons; in over a constant list (with cel-go's
// set semantics) or a body value; + - * / % and unary minus on numbers;
// int(), uint(), double() with the type guards of the overload the
// checker chose; size(); startsWith, endsWith, contains; matches with a
// constant pattern. An evaluation that meets what the subset does not
// build (a concatenation), data or self of another type than the program
// was translated for, or a request-line string longer than
// MaxHeaderBytes, falls back to cel-go.
//
// Cost: cel-go bounds an evaluation two ways. An expression whose
// estimated worst case is within the cost limit runs untracked: its
// actual cost cannot exceed the estimate. The native path runs it
// untracked too, and does per node what cel-go does up to a constant
// (comprehensions loop over the elements the estimate counted, string
// operations are linear in the lengths it bounded), so it is bounded by
// the same estimate. Any other expression cel-go runs under the cost
// limit's tracker; the native path then charges each node at least what
// cel-go's tracker charges for it (frame.charge) against a budget of the
// cost limit, and hands an evaluation that would spend it to cel-go (the
// units of comparing objects and lists included, as cel-go's meter counts
// them: compare.go, frame.equal). An
// evaluation the native path finishes is one that cel-go finishes within
// the limit, with the same verdict; and native work never passes the
// limit either.
type native struct {
	root   *nnode
	budget uint64 // the cost limit for programs cel-go tracks, else unlimited
	regs   int    // the registers it uses
	slots  int    // the iteration variables it nests
}

const (
	// maxSlots bounds the nesting of comprehensions on the native path.
	maxSlots = 4
	// maxRegs bounds the registers of objects and arrays a native program
	// uses: a node's is its parent's plus its place among the parent's
	// operands, so that the operands' values are all live when the
	// parent reads them.
	maxRegs = 16
)

type op uint8

const (
	opConst      op = iota
	opBody          // request.body
	opMethod        // request.method
	opPath          // request.path
	opReqMap        // request.params/query/headers[name]: part, name
	opReqMapHas     // has(request.params.name)
	opIter          // an iteration variable: slot
	opSelect        // a.name, and a['name']
	opHas           // has(a.name)
	opIndex         // a[b], a constant int b included
	opAnd           // a && b
	opOr            // a || b
	opNot           // !a
	opCond          // a ? b : c
	opEq            // a == b
	opNe            // a != b
	opLt            // a < b
	opLe            // a <= b
	opGt            // a > b
	opGe            // a >= b
	opAdd           // a + b
	opSub           // a - b
	opMul           // a * b
	opDiv           // a / b
	opMod           // a % b
	opNeg           // -a
	opInSet         // a in a constant list of primitives: set
	opInList        // a in a constant list with null, or in a program that keeps in calls: list
	opIn            // a in b
	opConvert       // int(a), uint(a), double(a): to, guard
	opSize          // size(a)
	opStartsWith    // a.startsWith(b)
	opEndsWith      // a.endsWith(b)
	opContains      // a.contains(b)
	opMatches       // a.matches(re)
	opAll           // a.all(slot, b)
	opExists        // a.exists(slot, b)
	opData          // data.f: field
	opDataHas       // has(data.f): field
	opSelf          // self: selfT, to
	opGoField       // a.f on a struct of data: field
)

// nnode is a node of a native program.
type nnode struct {
	op      op
	a, b, c *nnode
	lit     val    // opConst
	name    string // opSelect, opHas, opReqMap(Has)
	part    uint8  // opReqMap(Has): gotParams, gotQuery or gotHeaders
	slot    int    // opIter, opAll, opExists
	reg     uint8  // the register of its object or array result
	to      kind   // opConvert
	guard   kind   // opConvert: the kind the one overload the checker chose takes; kErr: any
	set     *constSet
	list    []val // opInList
	re      *regexp.Regexp
	field   *goField     // opData, opDataHas, opGoField
	selfT   reflect.Type // opSelf
	goT     reflect.Type // the type of its result when that is a struct of data
	goElemT reflect.Type // the type of its result's elements when that is a slice of data
}

// constSet is a constant list of primitives as cel-go's set-membership
// optimization makes it: its elements, and the lossless conversions of
// its numbers to the other numeric kinds.
type constSet struct {
	n       int // the list's length
	ints    []int64
	uints   []uint64
	doubles []float64
	strings []string
	bools   []bool
}

func (s *constSet) has(x val) bool {
	switch x.k {
	case kInt:
		return slices.Contains(s.ints, x.i())
	case kUint:
		return slices.Contains(s.uints, x.n)
	case kDouble:
		f := x.f()
		return slices.ContainsFunc(s.doubles, func(d float64) bool { return d == f })
	case kString:
		return slices.Contains(s.strings, x.s)
	case kBool:
		return slices.Contains(s.bools, x.b())
	}
	return false
}

func (s *constSet) add(v val) {
	s.n++
	switch v.k {
	case kInt:
		s.ints = append(s.ints, v.i())
		s.doubles = append(s.doubles, float64(v.i()))
		if v.i() >= 0 {
			s.uints = append(s.uints, uint64(v.i()))
		}
	case kUint:
		s.uints = append(s.uints, v.n)
		s.doubles = append(s.doubles, float64(v.n))
		if v.n <= 1<<63-1 {
			s.ints = append(s.ints, int64(v.n))
		}
	case kDouble:
		f := v.f()
		s.doubles = append(s.doubles, f)
		if i, ok := doubleToInt(f); ok && equal(intVal(i), agg{}, v, agg{}) {
			s.ints = append(s.ints, i)
		}
		if u, ok := doubleToUint(f); ok && equal(uintVal(u), agg{}, v, agg{}) {
			s.uints = append(s.uints, u)
		}
	case kString:
		s.strings = append(s.strings, v.s)
	case kBool:
		s.bools = append(s.bools, v.b())
	}
}

// translate returns the native program of a checked expression, or nil
// when a node is outside the subset. budget: see native. vars: the
// variables of struct-tag rules, nil for contracts.
func translate(a *celast.AST, budget uint64, vars *typedVars) *native {
	t := translator{ast: a, vars: vars, keepIn: keepsInCalls(a)}
	root, ok := t.node(a.Expr())
	if !ok {
		return nil
	}
	p := &native{root: root, budget: budget}
	if !p.assignRegs(root, 0) {
		return nil
	}
	return p
}

// assignRegs gives n register r and its operands r, r+1 and r+2, and
// counts the registers and slots the program uses; false when it needs
// more than maxRegs.
func (p *native) assignRegs(n *nnode, r int) bool {
	if n == nil {
		return true
	}
	if r >= maxRegs {
		return false
	}
	n.reg = uint8(r)
	p.regs = max(p.regs, r+1)
	if n.op == opAll || n.op == opExists {
		p.slots = max(p.slots, n.slot+1)
	}
	return p.assignRegs(n.a, r) && p.assignRegs(n.b, r+1) && p.assignRegs(n.c, r+2)
}

type translator struct {
	ast   *celast.AST
	vars  *typedVars
	scope []iterVar // outermost first; the index is the slot
	// keepIn: the program keeps in over a constant list a call
	// (keepsInCalls), which cel-go then evaluates with list.Contains
	keepIn bool
}

// iterVar is an iteration variable: its name, and the struct type of
// data it holds (nil: a value of the body).
type iterVar struct {
	name string
	goT  reflect.Type
}

// iterSlot is the slot of iteration variable name, innermost first.
func (t *translator) iterSlot(name string) (int, bool) {
	for i := len(t.scope) - 1; i >= 0; i-- {
		if t.scope[i].name == name {
			return i, true
		}
	}
	return 0, false
}

// isVar reports the variable name (not an iteration variable of that
// name).
func (t *translator) isVar(e celast.Expr, name string) bool {
	if e.Kind() != celast.IdentKind || e.AsIdent() != name {
		return false
	}
	_, shadowed := t.iterSlot(name)
	return !shadowed
}

func (t *translator) isRequest(e celast.Expr) bool { return t.isVar(e, "request") }

// requestPart is the bit of request.params, .query or .headers.
func (t *translator) requestPart(e celast.Expr) (uint8, bool) {
	if e.Kind() != celast.SelectKind || e.AsSelect().IsTestOnly() || !t.isRequest(e.AsSelect().Operand()) {
		return 0, false
	}
	switch e.AsSelect().FieldName() {
	case "params":
		return gotParams, true
	case "query":
		return gotQuery, true
	case "headers":
		return gotHeaders, true
	}
	return 0, false
}

func (t *translator) node(e celast.Expr) (*nnode, bool) {
	switch e.Kind() {
	case celast.LiteralKind:
		v, ok := literal(e)
		return &nnode{op: opConst, lit: v}, ok
	case celast.IdentKind:
		if slot, ok := t.iterSlot(e.AsIdent()); ok {
			return &nnode{op: opIter, slot: slot, goT: t.scope[slot].goT}, true
		}
		if t.vars != nil && e.AsIdent() == "self" {
			st, to, ok := t.vars.selfType()
			return &nnode{op: opSelf, selfT: st, to: to}, ok
		}
		return nil, false
	case celast.SelectKind:
		return t.sel(e)
	case celast.CallKind:
		return t.call(e)
	case celast.ComprehensionKind:
		return t.comprehension(e)
	}
	return nil, false
}

func literal(e celast.Expr) (val, bool) {
	switch v := e.AsLiteral().(type) {
	case types.Bool:
		return boolVal(bool(v)), true
	case types.Int:
		return intVal(int64(v)), true
	case types.Uint:
		return uintVal(uint64(v)), true
	case types.Double:
		return doubleVal(float64(v)), true
	case types.String:
		return stringVal(string(v)), true
	case types.Null:
		return vNull, true
	}
	return val{}, false
}

func (t *translator) sel(e celast.Expr) (*nnode, bool) {
	s := e.AsSelect()
	field := s.FieldName()
	if t.isRequest(s.Operand()) {
		if s.IsTestOnly() { // request's keys are always present; has() of another is refused
			return &nnode{op: opConst, lit: vTrue}, slices.Contains(requestKeys, field)
		}
		switch field {
		case "body":
			return &nnode{op: opBody}, true
		case "method":
			return &nnode{op: opMethod}, true
		case "path":
			return &nnode{op: opPath}, true
		}
		return nil, false // params, query, headers as a whole: not in the subset
	}
	if t.vars != nil && t.isVar(s.Operand(), "data") {
		gf := t.vars.field(field)
		switch {
		case gf == nil:
			return nil, false
		case s.IsTestOnly():
			return &nnode{op: opDataHas, field: gf}, true
		}
		n := &nnode{op: opData, field: gf}
		if gf.elem == kGoStruct {
			n.goElemT = gf.elemT
		}
		return n, gf.index != nil
	}
	if part, ok := t.requestPart(s.Operand()); ok {
		if s.IsTestOnly() {
			return &nnode{op: opReqMapHas, part: part, name: field}, true
		}
		return &nnode{op: opReqMap, part: part, name: field}, true
	}
	operand, ok := t.node(s.Operand())
	if !ok {
		return nil, false
	}
	if operand.goT != nil { // a scalar field of a struct of data; has() stays with cel-go
		gf := t.vars.fieldOf(operand.goT, field)
		if s.IsTestOnly() || gf == nil || gf.index == nil {
			return nil, false
		}
		n := &nnode{op: opGoField, a: operand, field: gf}
		if gf.elem == kGoStruct {
			n.goElemT = gf.elemT
		}
		return n, true
	}
	if s.IsTestOnly() {
		return &nnode{op: opHas, a: operand, name: field}, true
	}
	return &nnode{op: opSelect, a: operand, name: field}, true
}

// binaryOps are the operators whose two operands are evaluated strictly
// (an error operand is the result) before the operator.
var binaryOps = map[string]op{
	operators.Equals: opEq, operators.NotEquals: opNe,
	operators.Less: opLt, operators.LessEquals: opLe, operators.Greater: opGt, operators.GreaterEquals: opGe,
	operators.Add: opAdd, operators.Subtract: opSub, operators.Multiply: opMul, operators.Divide: opDiv, operators.Modulo: opMod,
	operators.In: opIn,
}

// conversions are the kinds int(), uint() and double() convert to, and
// the kind each of their overloads takes.
var conversions = map[string]kind{overloads.TypeConvertInt: kInt, overloads.TypeConvertUint: kUint, overloads.TypeConvertDouble: kDouble}

var conversionArgs = map[string]kind{
	overloads.IntToInt: kInt, overloads.UintToInt: kUint, overloads.DoubleToInt: kDouble, overloads.StringToInt: kString,
	overloads.UintToUint: kUint, overloads.IntToUint: kInt, overloads.DoubleToUint: kDouble, overloads.StringToUint: kString,
	overloads.DoubleToDouble: kDouble, overloads.IntToDouble: kInt, overloads.UintToDouble: kUint, overloads.StringToDouble: kString,
}

// stringOps are the member functions of a string with a string argument,
// each of one overload.
var stringOps = map[string]op{
	overloads.StartsWith: opStartsWith, overloads.EndsWith: opEndsWith, overloads.Contains: opContains,
}

func (t *translator) call(e celast.Expr) (*nnode, bool) {
	c := e.AsCall()
	fn, args := c.FunctionName(), c.Args()
	if c.IsMemberFunction() {
		args = append([]celast.Expr{c.Target()}, args...)
	}
	// strict is a node of op o over the call's n arguments, in a, b, c.
	strict := func(o op, n int) (*nnode, bool) {
		if len(args) != n {
			return nil, false
		}
		nd := &nnode{op: o}
		for i, operand := range []**nnode{&nd.a, &nd.b, &nd.c}[:n] {
			var ok bool
			if *operand, ok = t.node(args[i]); !ok {
				return nil, false
			}
		}
		return nd, true
	}
	switch {
	case fn == operators.LogicalAnd:
		return strict(opAnd, 2)
	case fn == operators.LogicalOr:
		return strict(opOr, 2)
	case fn == operators.LogicalNot:
		return strict(opNot, 1)
	case fn == operators.Negate:
		return strict(opNeg, 1)
	case fn == operators.Conditional:
		return strict(opCond, 3)
	case fn == operators.Index:
		return t.index(args)
	case fn == operators.In && len(args) == 2 && args[1].Kind() == celast.ListKind:
		return t.inList(args)
	case binaryOps[fn] != opConst:
		return strict(binaryOps[fn], 2)
	case conversions[fn] != kErr:
		n, ok := strict(opConvert, 1)
		if !ok {
			return nil, false
		}
		n.to = conversions[fn]
		if ids := t.ast.GetOverloadIDs(e.ID()); len(ids) == 1 {
			// One overload: cel-go calls it through its type guard.
			if n.guard = conversionArgs[ids[0]]; n.guard == kErr {
				return nil, false
			}
		}
		return n, true
	case fn == overloads.Size:
		return strict(opSize, 1)
	case stringOps[fn] != opConst && c.IsMemberFunction():
		return strict(stringOps[fn], 2)
	case fn == overloads.Matches && len(args) == 2 && args[1].Kind() == celast.LiteralKind:
		pattern, ok := args[1].AsLiteral().(types.String)
		if !ok {
			return nil, false
		}
		re, err := regexp.Compile(string(pattern)) // as cel-go compiles a constant pattern
		if err != nil {
			return nil, false
		}
		target, ok := t.node(args[0])
		if !ok {
			return nil, false
		}
		return &nnode{op: opMatches, a: target, re: re}, true
	}
	return nil, false
}

// index is a[k]: with a constant int or string k, or another k (a
// constant of another kind, or one evaluated at run time). Of request,
// only its maps by a constant name are in the subset.
func (t *translator) index(args []celast.Expr) (*nnode, bool) {
	if len(args) != 2 {
		return nil, false
	}
	if part, ok := t.requestPart(args[0]); ok || t.isRequest(args[0]) {
		name, isName := args[1].AsLiteral().(types.String) // AsLiteral: nil for another kind of node
		return &nnode{op: opReqMap, part: part, name: string(name)}, ok && isName
	}
	operand, ok := t.node(args[0])
	if !ok {
		return nil, false
	}
	switch k := args[1].AsLiteral().(type) {
	case types.String:
		return &nnode{op: opSelect, a: operand, name: string(k)}, true // a['name'] is a.name
	case types.Null:
		return nil, false // cel-go's planner refuses a constant null index: a load-time error, planned now
	}
	key, ok := t.node(args[1])
	return &nnode{op: opIndex, a: operand, b: key, goT: operand.goElemT}, ok
}

// inList is a in [constants]. cel-go (with OptOptimize, as programs are
// built) makes an empty list false without evaluating a, and a list of
// primitives a set, which finds a number by the lossless conversions of
// the list's numbers; a list with null is searched with Equal, and so is
// every list of a program that keeps its calls of in (keepInCalls), unless
// a is planned as a constant: there Equal finds 9007199254740993 in
// [9007199254740992.0] (the int converted to a double), which the set
// does not.
func (t *translator) inList(args []celast.Expr) (*nnode, bool) {
	l := args[1].AsList()
	if len(l.OptionalIndices()) > 0 {
		return nil, false
	}
	elems := l.Elements()
	vals := make([]val, len(elems))
	primitive := true
	for i, el := range elems {
		if el.Kind() != celast.LiteralKind {
			return nil, false
		}
		v, ok := literal(el)
		if !ok {
			return nil, false
		}
		vals[i] = v
		primitive = primitive && v.k != kNull
	}
	if len(vals) == 0 {
		return &nnode{op: opConst, lit: vFalse}, true
	}
	lhs, ok := t.node(args[0])
	if !ok {
		return nil, false
	}
	if !primitive || t.keepIn && !plannedConst(args[0]) {
		return &nnode{op: opInList, a: lhs, list: vals}, true
	}
	set := &constSet{}
	for _, v := range vals {
		set.add(v)
	}
	return &nnode{op: opInSet, a: lhs, set: set}, true
}

// plannedConst reports whether cel-go plans e as a constant, which
// keepInCalls leaves to the set: a literal, or a conversion of one
// (OptOptimize folds those).
func plannedConst(e celast.Expr) bool {
	switch e.Kind() {
	case celast.LiteralKind:
		return true
	case celast.CallKind:
		c := e.AsCall()
		return conversions[c.FunctionName()] != kErr && !c.IsMemberFunction() && len(c.Args()) == 1 && plannedConst(c.Args()[0])
	}
	return false
}

// comprehension is all() or exists() as the standard macros expand them,
// with one iteration variable.
func (t *translator) comprehension(e celast.Expr) (*nnode, bool) {
	c := e.AsComprehension()
	if c.HasIterVar2() || len(t.scope) >= maxSlots {
		return nil, false
	}
	accu := c.AccuVar()
	isAccu := func(x celast.Expr) bool { return x.Kind() == celast.IdentKind && x.AsIdent() == accu }
	callOf := func(x celast.Expr, fn string, n int) []celast.Expr {
		if x.Kind() != celast.CallKind || x.AsCall().FunctionName() != fn || x.AsCall().IsMemberFunction() ||
			len(x.AsCall().Args()) != n {
			return nil
		}
		return x.AsCall().Args()
	}
	if c.AccuInit().Kind() != celast.LiteralKind || !isAccu(c.Result()) {
		return nil, false
	}
	init, ok := c.AccuInit().AsLiteral().(types.Bool)
	if !ok {
		return nil, false
	}
	cond := callOf(c.LoopCondition(), operators.NotStrictlyFalse, 1)
	if cond == nil {
		return nil, false
	}
	o, stepFn := opAll, operators.LogicalAnd
	if init { // all: @not_strictly_false(@result), @result && pred
		if !isAccu(cond[0]) {
			return nil, false
		}
	} else { // exists: @not_strictly_false(!@result), @result || pred
		not := callOf(cond[0], operators.LogicalNot, 1)
		if not == nil || !isAccu(not[0]) {
			return nil, false
		}
		o, stepFn = opExists, operators.LogicalOr
	}
	step := callOf(c.LoopStep(), stepFn, 2)
	if step == nil || !isAccu(step[0]) {
		return nil, false
	}
	rng, ok := t.node(c.IterRange())
	if !ok {
		return nil, false
	}
	t.scope = append(t.scope, iterVar{c.IterVar(), rng.goElemT})
	pred, ok := t.node(step[1])
	t.scope = t.scope[:len(t.scope)-1]
	if !ok { // the accumulator is no variable of the subset: a predicate that reads it is refused here
		return nil, false
	}
	return &nnode{op: o, a: rng, b: pred, slot: len(t.scope)}, true
}
