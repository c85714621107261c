package expr

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"unsafe"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// The cost of comparing objects and lists.
//
// Equality of two objects or two lists (==, !=, in, distinct(),
// sets.contains, hasAll, …) compares them member by member, element by
// element, down to their leaves: work in proportion to their nested
// sizes. cel-go's cost model charges a comparison by the top-level sizes
// of its operands (a tenth of a unit per member), and a function such as
// distinct() or sets.contains by the number of pairs of elements it
// compares, however deep each pair is; and it charges a call after the
// call has run. So a rule comparing 100 objects of 1,000 members each ran
// for seconds under a limit meant to stop it within milliseconds.
//
// A comparison unit is one pair of members (or elements) visited while
// comparing two objects (or two lists) of the same size, at any depth;
// a comparison that stops at the top (different kinds or sizes) costs
// none beyond the call's own charge. Two strings of the same length met
// there, or by in over a list, are read to compare them: they cost
// scanUnits of their length besides (strUnits), as cel-go charges == of
// two strings by their length; strings of different lengths are unequal
// at once, and cost none. (Two strings of 500 KB compared for each of
// 16,000 items ran 110 to 270 ms, charged a unit a pair or none, under a
// limit meant to stop a rule within 8 ms.) The body's values count their
// units as they compare (value.go) into the evaluation's meter, which
// charges them to cel-go's cost tracker every meterChunk units, as a call
// of compareOverload that the program's compareCosts prices: the
// evaluation stops at the cost limit in the middle of the comparison, as
// any over-limit evaluation does. The native path charges the same units
// to its budget (frame.equal), member by member in the same order, so it
// never decides an evaluation cel-go would stop.
//
// Only programs cel-go tracks are metered; compile tracks every program
// that compares values which may be objects or lists, or looks for a
// string of the data in a list or in the body's object, whose member
// names a lookup reads (object.Contains) (comparesComposites).

// meterChunk is the units the meter lets pend before it charges the
// tracker: a boxed types.Int of less than 256 does not allocate. More
// pending at once (a long string's units, strUnits) are charged in
// powers of two (bigUnits), boxed once.
const meterChunk = 64

// compareOverload is the overload the meter's charges are calls of.
const compareOverload = "@contractguard_compare_units"

// meter counts the comparison units of one cel-go evaluation. It lives
// in the Activation; the body's values hold a pointer to it.
type meter struct {
	frame   *interpreter.ExecutionFrame // the tracked evaluation running; nil: none (units are not counted)
	depth   int                         // comparisons under way, nested
	pending uint64                      // units not yet charged
	total   uint64                      // units counted in the evaluation
	key     string                      // the key of a lookup about to be made (keyNode)
}

// counting reports whether m counts: a tracked evaluation is running.
func (m *meter) counting() bool { return m != nil && m.frame != nil }

// count adds n units, charging them to the tracker a chunk at a time.
// The tracker panics at the cost limit, as for any call: cel-go's Eval
// recovers that and fails the evaluation.
func (m *meter) count(n uint64) {
	if !m.counting() {
		return
	}
	m.total += n
	m.pending = chargeBig(m.frame.CostTracker(), m.pending+n)
}

// chargeBig charges t (nil: none) the largest power of two of n units, and
// again of what is left, while that is at least meterChunk; it returns
// what is left, less than meterChunk.
func chargeBig(t *interpreter.CostTracker, n uint64) (left uint64) {
	for n >= meterChunk {
		p := uint64(1) << min(bits.Len64(n)-1, len(bigUnits)-1)
		chargeTracker(t, p)
		n -= p
	}
	return n
}

// strUnits are the units of comparing x with y: scanUnits of their
// length when both are strings of the same length, which equality reads
// (strings of different lengths are unequal at once); none otherwise.
func strUnits(x, y ref.Val) uint64 {
	if xs, ok := x.(types.String); ok {
		if ys, ok := y.(types.String); ok && len(xs) == len(ys) {
			return scanUnits(len(xs))
		}
	}
	return 0
}

// enter and leave bracket a comparison that counts; the outermost charges
// what is left when it ends, so that an evaluation is charged every unit
// it counted. (A panic at the limit skips counted's leave, not the
// deferred leaves of value.go's Equal and Contains, which charge what is
// pending as the panic unwinds: the evaluation is stopped either way, and
// run resets the meter for each evaluation.)
func (m *meter) enter() { m.depth++ }

func (m *meter) leave() {
	if m.depth--; m.depth == 0 && m.pending > 0 {
		n := m.pending // less than meterChunk (count)
		m.pending = 0
		chargeTracker(m.frame.CostTracker(), n)
	}
}

// counted runs count, which counts units in m, as one comparison (enter,
// leave): what is still pending when the outermost ends is charged.
func (m *meter) counted(count func()) {
	m.enter()
	count()
	m.leave()
}

// chargeTracker charges t (nil: none) n units, at most meterChunk or a
// power of two, as a call of compareOverload.
func chargeTracker(t *interpreter.CostTracker, n uint64) {
	if t != nil {
		var units ref.Val = types.Int(n)
		if n > meterChunk {
			units = bigUnits[bits.Len64(n)-1]
		}
		t.EvalUnary(nil, 0, compareCall{}, units, nil)
	}
}

// compareCall is the call the meter charges.
type compareCall struct{}

func (compareCall) Function() string   { return compareOverload }
func (compareCall) OverloadID() string { return compareOverload }

// compareCosts prices the meter's calls for cel-go's tracker: the units
// each carries; and the calls that read a string whole (lengths.go).
// Every other call is priced by cel-go's own model (nil).
type compareCosts struct{}

// unitCosts are the costs of charges of 0 to meterChunk units, for
// CallCost to point at.
var unitCosts = func() (c [meterChunk + 1]uint64) {
	for i := range c {
		c[i] = uint64(i)
	}
	return c
}()

// bigUnits are the powers of two boxed, and bigCosts their costs: the
// charges of more than meterChunk units.
var bigUnits, bigCosts = func() (v [63]ref.Val, c [63]uint64) {
	for i := range v {
		v[i], c[i] = types.Int(int64(1)<<i), uint64(1)<<i
	}
	return v, c
}()

func (compareCosts) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if overloadID != compareOverload || len(args) != 1 {
		if c := minSizeCost(overloadID, args, result); c != nil { // lengths.go
			return c
		}
		if c := emptyNeedleCost(overloadID, args, result); c != nil { // lengths.go
			return c
		}
		return scanCost(function, overloadID, args, result) // lengths.go
	}
	n, ok := args[0].(types.Int)
	switch {
	case !ok || n < 0:
	case n <= meterChunk:
		return &unitCosts[n]
	case n&(n-1) == 0:
		return &bigCosts[bits.Len64(uint64(n))-1]
	}
	return nil
}

var _ interpreter.ActualCostEstimator = compareCosts{}

// trackComparisons is the program option that prices the meter's calls.
var trackComparisons = cel.CostTracking(compareCosts{})

// comparers are the functions that compare values of their arguments
// with CEL's equality (which recurses into objects and lists), and which
// arguments' values they compare: both operands of == and !=; the
// left operand of in with the elements of a list (in a map, in finds a
// key); the elements of a list among themselves (distinct), or with the
// elements of another list (the sets and hasX functions).
var comparers = map[string]func(c celast.Expr, a *celast.AST) bool{
	operators.Equals:    bothComposite,
	operators.NotEquals: bothComposite,
	operators.In: func(c celast.Expr, a *celast.AST) bool {
		args := c.AsCall().Args()
		if len(args) != 2 {
			return false
		}
		x, l := a.GetType(args[0].ID()), a.GetType(args[1].ID())
		if l.Kind() == types.MapKind { // a lookup, which reads a key of the data (object.Contains)
			return args[0].Kind() != celast.LiteralKind && mayBeString(x) && args[1].Kind() != celast.MapKind
		}
		return mayBeComposite(x) && elemMayBeComposite(l) || comparesStrings(args[0], x, args[1], l)
	},
	"distinct":        elemsComposite,
	"sets.contains":   elemsComposite,
	"sets.equivalent": elemsComposite,
	"sets.intersects": elemsComposite,
	"hasAll":          elemsComposite,
	"hasAny":          elemsComposite,
	"hasOnly":         elemsComposite,
	"hasExactly":      elemsComposite,
}

// comparesStrings reports whether x in l (of types xt and lt) may compare
// two strings of the data, which reads both (strUnits): x may be a string
// and is not a literal, and l is not a list of literals (whose strings
// are as short as the expression). cel-go charges in by the list's size
// alone; a rule that reads a long string of the body that way once per
// element of another list is stopped by the limit only if tracked.
func comparesStrings(x celast.Expr, xt *types.Type, l celast.Expr, lt *types.Type) bool {
	if x.Kind() == celast.LiteralKind || !mayBeString(xt) {
		return false
	}
	if lt.Kind() == types.ListKind && len(lt.Parameters()) == 1 && !mayBeString(lt.Parameters()[0]) {
		return false
	}
	if l.Kind() == celast.ListKind {
		for _, e := range l.AsList().Elements() {
			if e.Kind() != celast.LiteralKind {
				return true
			}
		}
		return false
	}
	return true
}

// mayBeString reports whether a value of type t may be a string.
func mayBeString(t *types.Type) bool {
	switch t.Kind() {
	case types.StringKind, types.DynKind, types.AnyKind, types.TypeParamKind:
		return true
	}
	return false
}

// Set membership.
//
// cel-go makes x in [constants] (a list of primitives) a lookup in a hash
// set, which hashes x whole, and charges nothing for it, not even the
// list's size that its estimate counts. A rule that looks up a long string
// of the body so once per element of a list (items.all(i, request.body.s
// in ['a', 'b'])) hashed 300 KB 20,000 times, 70 to 80 ms, under the
// default limits. A program with such an in (x may be a string and is not
// a literal: looksUpStrings) keeps it a call (keepInCalls), which compares
// x with each constant, a string of another length at once, and is
// charged the list's size, as its estimate counts it; the native path
// charges the same (opInSet).

// looksUpStrings reports whether a has an in whose list is a list of
// literals (a set, to cel-go) and whose x may be a string of the data.
func looksUpStrings(a *cel.Ast) bool { return keepsInCalls(a.NativeRep()) }

// keepsInCalls is looksUpStrings of a checked AST: whether its program
// keeps every in over a constant list a call (keepInCalls), whose
// membership is Equal's, not the set's.
func keepsInCalls(ast *celast.AST) bool {
	return hasCall(ast, func(e celast.Expr) bool {
		if e.AsCall().FunctionName() != operators.In {
			return false
		}
		args := e.AsCall().Args()
		return len(args) == 2 && args[1].Kind() == celast.ListKind && args[0].Kind() != celast.LiteralKind &&
			mayBeString(ast.GetType(args[0].ID())) && every(args[1].AsList().Elements(), isLiteral)
	})
}

func isLiteral(e celast.Expr) bool { return e.Kind() == celast.LiteralKind }

// keepInCalls is the program option that keeps a program's calls of in
// over a constant list, not empty, with an operand that is not constant,
// calls: cel-go's optimizer makes a set of one it sees as a call.
var keepInCalls = cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || call.OverloadID() != overloads.InList || len(call.Args()) != 2 {
		return i, nil
	}
	if _, ok := call.Args()[0].(interpreter.InterpretableConst); ok {
		return i, nil
	}
	l, ok := call.Args()[1].(interpreter.InterpretableConst)
	if !ok {
		return i, nil
	}
	if list, ok := l.Value().(traits.Lister); !ok || list.Size() == types.IntZero {
		return i, nil // an empty list is false, x unevaluated: left to the optimizer
	}
	return inCall{i}, nil
})

// inCall is a call of in, hidden from cel-go's optimizer.
type inCall struct{ interpreter.InterpretableV2 }

// Lists and maps cel-go builds.
//
// The body's lists and objects count their comparisons (value.go); the
// lists and maps a rule builds ([request.body.s], {'k': request.body.s},
// request.body.strs.map(x, x), optional.of(request.body.s)) are cel-go's,
// whose equality reads their strings with String.Equal, uncounted: a rule
// comparing [s] != [t], two strings of 490 KB, once per element of
// 16,000 items read them each time (30 ms), as did s in [t] (41 ms). A
// tracked program's == and != whose operands may be lists or maps
// (bothComposite), and its in over a list it builds, are calls
// (meterBuiltComparisons) that count, before cel-go compares, the units
// of the pairs of strings of the same length that cel-go's comparison may
// read inside such a list or map (pairUnits, strUnits), up to where a
// pair of strings decides (two that differ stop ==; in stops at one equal
// to its string), and past a pair of other values, which the count does
// not decide (an upper bound there); the strings of ==, != at the top
// cel-go charges itself; in's compares with the elements of the list, as
// list.Contains counts them.
// The body's values met there count their own. The verdict is cel-go's
// (types.Equal; in's binding).

// builtComparisons are the ids of a's == and != whose operands may both
// be lists or maps, and of its in over a list that is not the body's
// list nor a list of literals (whose elements may be strings or lists);
// nil: none.
func builtComparisons(a *cel.Ast) map[int64]bool {
	ast := a.NativeRep()
	return callIDs(ast, func(e celast.Expr) (int64, bool) {
		switch e.AsCall().FunctionName() {
		case operators.Equals, operators.NotEquals:
			return e.ID(), bothComposite(e, ast)
		case operators.In:
			args := e.AsCall().Args()
			return e.ID(), len(args) == 2 && ast.GetType(args[1].ID()).Kind() != types.MapKind && comparers[operators.In](e, ast)
		}
		return 0, false
	})
}

// callIDs are the ids pick returns for the calls of ast (pick reports
// which to take, and which id: the call's, or an operand's); nil: none.
func callIDs(ast *celast.AST, pick func(call celast.Expr) (int64, bool)) map[int64]bool {
	var ids map[int64]bool
	celast.PostOrderVisit(ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		if id, ok := pick(e); ok {
			if ids == nil {
				ids = map[int64]bool{}
			}
			ids[id] = true
		}
	}))
	return ids
}

// hasCall reports whether ast has a call that is is.
func hasCall(ast *celast.AST, is func(call celast.Expr) bool) bool {
	found := false
	callIDs(ast, func(e celast.Expr) (int64, bool) {
		found = found || is(e)
		return 0, false
	})
	return found
}

// meterBuiltComparisons is the program option that makes the calls of ids
// (builtComparisons) equalCall and inListCall, with env's binding of in.
func meterBuiltComparisons(env *cel.Env, ids map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		call, ok := i.(interpreter.InterpretableCall)
		if !ok || !ids[i.ID()] || len(call.Args()) != 2 {
			return i, nil
		}
		args := call.Args() // a new slice each call: kept
		switch call.OverloadID() {
		case overloads.Equals:
			return equalCall{InterpretableCall: call, x: args[0], y: args[1]}, nil
		case overloads.NotEquals:
			return equalCall{InterpretableCall: call, x: args[0], y: args[1], not: true}, nil
		}
		if call.Function() != operators.In {
			return i, nil
		}
		if _, ok := args[1].(interpreter.InterpretableConst); ok {
			return i, nil
		}
		b, err := binding(env, operators.In, operators.In) // a singleton binding: the function's
		if err != nil || b == nil || b.Binary == nil {
			return nil, fmt.Errorf("in has no binding to meter: %v", err)
		}
		return inListCall{InterpretableCall: call, x: args[0], l: args[1], impl: b.Binary}, nil
	})
}

// equalCall is == (!= when not) as cel-go's call, which counts the units
// of the strings it reads inside lists and maps cel-go built.
type equalCall struct {
	interpreter.InterpretableCall
	x, y interpreter.InterpretableV2 // its operands
	not  bool
}

func (c equalCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	costs := frame.CostTracker()
	x := c.x.Exec(frame)
	if types.IsError(x) {
		if costs != nil {
			costs.EvalBinary(frame, c.ID(), c.InterpretableCall, x, types.UnknownType, x)
		}
		return x
	}
	y := c.y.Exec(frame)
	var res ref.Val
	switch {
	case types.IsError(y):
		res = y
	case types.IsUnknown(x) || types.IsUnknown(y):
		res = mergeUnknowns(x, y)
	default:
		m := meter{frame: frame}
		m.counted(func() { m.pairUnits(x, y) })
		res = types.Equal(x, y)
		if c.not {
			res = types.Bool(res != types.True)
		}
	}
	if costs != nil {
		costs.EvalBinary(frame, c.ID(), c.InterpretableCall, x, y, res)
	}
	return res
}

func (c equalCall) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// mergeUnknowns is the unknown of x and y, one of which is unknown. No
// program evaluates partially, but an Options.User that returns a CEL
// value reaches the rule as it is (userValue), an unknown too: ==, != and
// in over it are unknown, as cel-go's, not a bool
// (TestEval_UnknownUserDecidesAsCEL).
func mergeUnknowns(x, y ref.Val) ref.Val {
	xu, xok := x.(*types.Unknown)
	yu, yok := y.(*types.Unknown)
	if xok && yok {
		return types.MergeUnknowns(xu, yu)
	}
	if xok {
		return x
	}
	return y
}

// inListCall is x in l as cel-go's call, which counts first the units of
// the strings its comparisons of x with the elements of a list cel-go
// built may read.
type inListCall struct {
	interpreter.InterpretableCall
	x, l interpreter.InterpretableV2 // its operands
	impl func(x, l ref.Val) ref.Val  // env's binding of in
}

func (c inListCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	x := c.x.Exec(frame)
	if types.IsError(x) {
		return x
	}
	l := c.l.Exec(frame)
	if types.IsError(l) {
		return l
	}
	var res ref.Val
	if types.IsUnknown(x) || types.IsUnknown(l) {
		res = mergeUnknowns(x, l)
	} else {
		if lv, ok := l.(traits.Lister); ok && !isBodyValue(l) { // the body's list counts its own
			m := meter{frame: frame}
			m.counted(func() { m.lookUnits(x, lv) })
		}
		res = types.LabelErrNode(c.ID(), c.impl(x, l))
	}
	if costs := frame.CostTracker(); costs != nil {
		costs.EvalBinary(frame, c.ID(), c.InterpretableCall, x, l, res)
	}
	return res
}

func (c inListCall) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// isBodyValue reports whether v is the body's list or object, which
// counts the units of its comparisons itself.
func isBodyValue(v ref.Val) bool {
	switch v.(type) {
	case *list, *object:
		return true
	}
	return false
}

// pairUnits counts the units of the strings that comparing x with y (x
// the receiver, as cel-go's Equal) may read inside the lists, maps and
// optionals cel-go built: those of each pair of strings of the same
// length at the same place in both (strUnits), up to the first pair of
// strings that differ, where cel-go's Equal stops; a pair of other
// values decides nothing here, and the pairs after it are counted
// whether or not cel-go stops there (an upper bound). It reports whether
// x and y may be equal: false when they surely differ (two strings that
// differ, lists or maps of different sizes, a missing key). The body's
// values count their own.
func (m *meter) pairUnits(x, y ref.Val) (mayEqual bool) {
	switch xv := x.(type) {
	case *list, *object:
	case *types.Optional:
		if yv, ok := y.(*types.Optional); ok && xv.HasValue() && yv.HasValue() {
			return m.elemUnits(xv.GetValue(), yv.GetValue())
		}
	case traits.Lister:
		yl, ok := y.(traits.Lister)
		if !ok {
			return true
		}
		if xv.Size() != yl.Size() {
			return false
		}
		n, _ := xv.Size().(types.Int)
		for i := types.IntZero; i < n; i++ {
			if !m.elemUnits(xv.Get(i), yl.Get(i)) {
				return false
			}
		}
	case traits.Mapper:
		ym, ok := y.(traits.Mapper)
		if !ok {
			return true
		}
		if xv.Size() != ym.Size() {
			return false
		}
		for it := xv.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			a, _ := xv.Find(k)
			b, found := ym.Find(k)
			if !found || !m.elemUnits(a, b) {
				return false
			}
		}
	}
	return true
}

// elemUnits counts the units of comparing x with y, two elements
// (members) of lists (maps) cel-go compares, or x and an element of a
// list in looks in: two strings of the same length are read, charged
// when longer than shortString (a shorter pair costs what cel-go charges
// for it, as in comparesLongStrings' untracked rules). It reports
// whether x and y may be equal, as pairUnits; two strings are equal or
// not for sure (String.Equal: a string equals only the same string).
func (m *meter) elemUnits(x, y ref.Val) (mayEqual bool) {
	if xs, ok := x.(types.String); ok {
		ys, ok := y.(types.String)
		if !ok {
			return false
		}
		if len(xs) > shortString { // a short one costs what cel-go charges the pair (comparesLongStrings)
			m.count(strUnits(x, y))
		}
		return xs == ys
	}
	return m.pairUnits(x, y)
}

// distinct(), the sets functions and hasAll and its kin compare the
// elements of lists with Equal, and a list that is not the body's counts
// nothing: strs.map(x, x).distinct() over two strings of 490 KB that
// differ in their last byte, once per element of 16,000 items, read them
// each time (30 ms), as did sets.contains(strs.map(x, x), [s]) (37 ms). A
// tracked program's calls of them whose operands may hold strings or
// lists (builtSets) are calls (setCall) that count first the units of
// the pairs of elements the function may compare (setUnits: elemUnits of
// each pair, up to where a string found decides, an upper bound past
// other values), and then call env's binding, cel-go's function; the
// body's list as the list looked in counts its own (list.Contains), and
// so does distinct() of the body's list (meterDistinct).

// setUnits count, by overload, the units of the pairs of elements a
// function may compare (the lists it is called with: target first):
// distinct(), each element with those kept before it (distinctUnits);
// the others, each element of a list with those
// of the list it is looked up in (lookAllUnits), as cel-go's ext does:
// sets.contains(l, sub) and l.hasAll(sub) look sub's up in l,
// sets.intersects(a, b) and a.hasAny(b) a's in b, a.hasOnly(b) a's in b,
// sets.equivalent and hasExactly both ways.
var setUnits = map[string]func(m *meter, args []ref.Val){
	"list_distinct":             func(m *meter, args []ref.Val) { m.distinctUnits(args[0].(traits.Lister)) },
	"list_sets_contains_list":   func(m *meter, args []ref.Val) { m.lookAllUnits(args[0], args[1]) },
	"list_hasAll_list":          func(m *meter, args []ref.Val) { m.lookAllUnits(args[0], args[1]) },
	"list_sets_intersects_list": func(m *meter, args []ref.Val) { m.lookAllUnits(args[1], args[0]) },
	"list_hasAny_list":          func(m *meter, args []ref.Val) { m.lookAllUnits(args[1], args[0]) },
	"list_hasOnly_list":         func(m *meter, args []ref.Val) { m.lookAllUnits(args[1], args[0]) },
	"list_sets_equivalent_list": func(m *meter, args []ref.Val) { m.lookAllUnits(args[0], args[1]); m.lookAllUnits(args[1], args[0]) },
	"list_hasExactly_list":      func(m *meter, args []ref.Val) { m.lookAllUnits(args[0], args[1]); m.lookAllUnits(args[1], args[0]) },
}

// setFunctions are the functions that compare the elements of lists
// (distinct(), the sets functions, hasAll and its kin), whose calls
// builtSets meters and comparesLongStrings tracks.
var setFunctions = map[string]bool{"distinct": true, "sets.contains": true, "sets.equivalent": true, "sets.intersects": true,
	"hasAll": true, "hasAny": true, "hasOnly": true, "hasExactly": true}

// builtSets are the ids of a's calls of setUnits' functions whose
// lists' elements may be strings, lists or maps; nil: none.
func builtSets(a *cel.Ast) map[int64]bool {
	ast := a.NativeRep()
	return callIDs(ast, func(e celast.Expr) (int64, bool) {
		if !setFunctions[e.AsCall().FunctionName()] {
			return 0, false
		}
		for _, arg := range callOperands(e) {
			if t := ast.GetType(arg.ID()); !elemMayBeString(t) && !elemMayBeComposite(t) {
				return 0, false
			}
		}
		return e.ID(), true
	})
}

// meterBuiltSets is the program option that makes the calls of ids
// (builtSets) setCall, with env's bindings of their functions.
func meterBuiltSets(env *cel.Env, ids map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		call, ok := i.(interpreter.InterpretableCall)
		if !ok || !ids[i.ID()] || setUnits[call.OverloadID()] == nil {
			return i, nil
		}
		b, err := binding(env, call.Function(), call.OverloadID())
		if err != nil || b == nil {
			return i, nil
		}
		c := setCall{InterpretableCall: call, args: call.Args(), units: setUnits[call.OverloadID()]}
		switch {
		case len(c.args) == 1 && b.Unary != nil:
			c.impl = func(args []ref.Val) ref.Val { return b.Unary(args[0]) }
		case len(c.args) == 2 && b.Binary != nil:
			c.impl = func(args []ref.Val) ref.Val { return b.Binary(args[0], args[1]) }
		default:
			return i, nil
		}
		return c, nil
	})
}

// setCall is a call of distinct(), a sets function or hasAll and its kin
// as cel-go's (strict in its arguments), which counts first the units of
// the comparisons the function may make of lists that are not the
// body's (distinct) or whose elements it looks for in a list.
type setCall struct {
	interpreter.InterpretableCall
	args  []interpreter.InterpretableV2 // its target and arguments
	units func(m *meter, args []ref.Val)
	impl  func(args []ref.Val) ref.Val // env's binding
}

func (c setCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	var buf [2]ref.Val
	vals := buf[:len(c.args)]
	for i, a := range c.args {
		v := a.Exec(frame)
		switch v.(type) {
		case *types.Err, *types.Unknown:
			return v
		}
		vals[i] = v
	}
	if _, body := vals[0].(*list); c.lists(vals) && !(len(vals) == 1 && body) { // distinct() of the body's list counts its own (meterDistinct)
		m := meter{frame: frame}
		m.counted(func() { c.units(&m, vals) })
	}
	res := c.impl(vals)
	if types.IsError(res) {
		if err, ok := res.(*types.Err); ok && err.NodeID() == 0 {
			res = types.LabelErrNode(c.ID(), err)
		}
	}
	if costs := frame.CostTracker(); costs != nil {
		if len(vals) == 1 {
			costs.EvalUnary(frame, c.ID(), c.InterpretableCall, vals[0], res)
		} else {
			costs.EvalBinary(frame, c.ID(), c.InterpretableCall, vals[0], vals[1], res)
		}
	}
	return res
}

func (c setCall) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// lists reports whether vals are all lists.
func (setCall) lists(vals []ref.Val) bool {
	for _, v := range vals {
		if _, ok := v.(traits.Lister); !ok {
			return false
		}
	}
	return true
}

// lookAllUnits counts the units of looking each element of sub up in l,
// l not the body's list (which counts its own).
func (m *meter) lookAllUnits(l, sub ref.Val) {
	if isBodyValue(l) {
		return
	}
	ll := l.(traits.Lister)
	for it := sub.(traits.Lister).Iterator(); it.HasNext() == types.True; {
		m.lookUnits(it.Next(), ll)
	}
}

// lookUnits counts the units of looking e up in l, as baseList.Contains
// compares it (the receiver) with each element: up to the first equal
// one when e is a string (elemUnits decides), else every element.
func (m *meter) lookUnits(e ref.Val, l traits.Lister) {
	_, str := e.(types.String)
	for it := l.Iterator(); it.HasNext() == types.True; {
		if m.elemUnits(e, it.Next()) && str {
			return
		}
	}
}

// distinctUnits counts the units of distinct() of l: each element
// compared, as the receiver, with those kept before it, up to the first
// equal one (distinctList). A string is kept or not for sure (elemUnits
// decides); any other element is taken to be kept, and compared with
// every element kept before it.
func (m *meter) distinctUnits(l traits.Lister) {
	n, _ := l.Size().(types.Int)
	dup := make([]bool, n) // a string equal to one kept before it: not kept
	for i := types.Int(1); i < n; i++ {
		v := l.Get(i)
		_, str := v.(types.String)
		for j := types.IntZero; j < i; j++ {
			if !dup[j] && m.elemUnits(v, l.Get(j)) && str {
				dup[i] = true
				break
			}
		}
	}
}

// A map of constants ({'gold': 100, 'silver': 50}, which cel-go's
// optimizer builds once) looks a key up in a Go map, which hashes it
// whole, and cel-go charges the lookup a unit: a rule looking up a 490 KB
// string of the body so once per element of 16,000 hashed it each time
// (x in m 130 ms, m[x] 175 ms). A string equals only a string key of its
// length, and those are as short as the expression: such a map, looked
// up by in or indexed by a key that is not a literal (lookedUpMaps), is
// built when the program is planned, as cel-go's optimizer would, into a
// lenMap, which finds a string of no key's length absent without hashing
// it. in and the index stay cel-go's calls, which look the key up with
// the map's Find.

// lookedUpMaps are the ids of a's maps of literal keys and values that
// are looked up by in or indexed by a key that is not a literal; nil:
// none.
func lookedUpMaps(a *cel.Ast) map[int64]bool {
	return callIDs(a.NativeRep(), func(e celast.Expr) (int64, bool) {
		call := e.AsCall()
		if len(call.Args()) != 2 {
			return 0, false
		}
		var m celast.Expr
		switch call.FunctionName() {
		case operators.Index, operators.OptIndex:
			if call.Args()[1].Kind() == celast.LiteralKind {
				return 0, false
			}
			m = call.Args()[0]
		case operators.In:
			m = call.Args()[1]
		default:
			return 0, false
		}
		if m.Kind() != celast.MapKind {
			return 0, false
		}
		for _, en := range m.AsMap().Entries() {
			en := en.AsMapEntry()
			if en.IsOptional() || en.Key().Kind() != celast.LiteralKind || en.Value().Kind() != celast.LiteralKind {
				return 0, false
			}
		}
		return m.ID(), true
	})
}

// buildLookedUpMaps is the program option that builds the maps of ids
// (lookedUpMaps), not empty, into constant lenMaps.
func buildLookedUpMaps(ids map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		c, ok := i.(interpreter.InterpretableConstructor)
		if !ok || !ids[i.ID()] {
			return i, nil
		}
		if lm, ok := constLenMap(c); ok {
			return lm, nil
		}
		return i, nil
	})
}

// constLenMap is the map c builds, when all its keys and values are
// constants and it is not empty, built now into a constant lenMap; ok
// false otherwise.
func constLenMap(c interpreter.InterpretableConstructor) (lm interpreter.InterpretableConst, ok bool) {
	for _, v := range c.InitVals() {
		if _, ok := v.(interpreter.InterpretableConst); !ok {
			return nil, false
		}
	}
	frame, err := interpreter.NewExecutionFrame(interpreter.EmptyActivation())
	if err != nil {
		return nil, false
	}
	v := c.Exec(frame)
	frame.Close()
	m, ok := v.(traits.Mapper)
	if !ok || m.Size() == types.IntZero {
		return nil, false // an error (a key twice) is cel-go's to report, as it is
	}
	l := lenMap{Mapper: m, lens: map[int]bool{}}
	for it := m.Iterator(); it.HasNext() == types.True; {
		if k, ok := it.Next().(types.String); ok {
			l.lens[len(k)] = true
		}
	}
	return interpreter.NewConstValue(c.ID(), l), true
}

// lenMap is a map of constants, not empty, that is only looked up: a
// string of no key's length (lens) is absent without being hashed.
type lenMap struct {
	traits.Mapper
	lens map[int]bool
}

func (m lenMap) Find(key ref.Val) (ref.Val, bool) {
	if k, ok := key.(types.String); ok && !m.lens[len(k)] {
		return nil, false
	}
	return m.Mapper.Find(key)
}

func (m lenMap) Get(key ref.Val) ref.Val { return mapGet(m, key) }

func (m lenMap) Contains(key ref.Val) ref.Val { return mapContains(m, key) }

func (lenMap) IsZeroValue() bool { return false }

// Maps built from keys of the data.
//
// A map a rule builds with a key that is not a literal ({request.body.t:
// 1}) is a Go map, which hashes each key whole when it is built, and
// again each string looked up in it by in, an index or an optional index
// (or by the equality of two maps); cel-go charges the map's creation and
// each lookup a unit or so. A rule building or looking up 490 KB strings
// so once per element of 16,000 items ran 40 ms (s in {t: 1}), 60 ms
// ({t: 1}[?s]) and 70 ms ({s: 1} != {t: 1}) before its other costs met
// the limit. A program that builds such a map, or builds a map that is
// not a map of constants and looks up a string of the data
// (buildsMapsOfData), is tracked, and in a tracked program each map
// literal that is not a map of constants looked up (lookedUpMaps) is
// metered (meterBuiltMaps): each key that is not a literal counts, once
// evaluated and before the map is built, the units of hashing it
// (scanUnits of its length; a string of at most shortString bytes costs
// what cel-go charges: mapKeyNode); the map built is a builtMap, whose
// lookups count the same before cel-go's Find hashes the key, and whose
// equality counts its keys before cel-go's Equal looks them up in the
// other map. A map of constants (keys and values folded) is built when
// the program is planned into a lenMap, as lookedUpMaps' are. cel-go
// builds and looks up, and decides.

// builtMaps are the ids of a's map literals other than consts' (its
// lookedUpMaps), and of their keys that are not literals; nil, nil: none.
func builtMaps(a *cel.Ast, consts map[int64]bool) (maps, keys map[int64]bool) {
	celast.PostOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.MapKind || consts[e.ID()] {
			return
		}
		if maps == nil {
			maps, keys = map[int64]bool{}, map[int64]bool{}
		}
		maps[e.ID()] = true
		for _, en := range e.AsMap().Entries() {
			if k := en.AsMapEntry().Key(); k.Kind() != celast.LiteralKind {
				keys[k.ID()] = true
			}
		}
	}))
	return maps, keys
}

// buildsMapsOfData reports whether a builds a map with a key that is not
// a literal and may be a string, or builds a map that is not a map of
// constants (a key or value not a literal, an optional entry) and looks
// up a string of the data: in over a value that may be a map, an index
// or optional index, with a key that is not a literal and may be a
// string.
func buildsMapsOfData(a *cel.Ast) bool {
	ast := a.NativeRep()
	dataKeys, builds, looksUp := false, false, false
	celast.PostOrderVisit(ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.MapKind:
			for _, en := range e.AsMap().Entries() {
				en := en.AsMapEntry()
				k := en.Key()
				if k.Kind() != celast.LiteralKind && mayBeString(ast.GetType(k.ID())) {
					dataKeys = true
				}
				if en.IsOptional() || k.Kind() != celast.LiteralKind || en.Value().Kind() != celast.LiteralKind {
					builds = true
				}
			}
		case celast.CallKind:
			call := e.AsCall()
			if len(call.Args()) != 2 {
				return
			}
			var m, k celast.Expr
			switch call.FunctionName() {
			case operators.Index, operators.OptIndex:
				m, k = call.Args()[0], call.Args()[1]
			case operators.In:
				k, m = call.Args()[0], call.Args()[1]
			default:
				return
			}
			if k.Kind() != celast.LiteralKind && mayBeString(ast.GetType(k.ID())) && mayBeMap(ast.GetType(m.ID())) {
				looksUp = true
			}
		}
	}))
	return dataKeys || builds && looksUp
}

// meterBuiltMaps is the program option that wraps the keys of ids (keys:
// builtMaps) in mapKeyNode, and makes the maps of ids (maps) builtMapNode,
// or lenMaps when their keys and values are constants.
func meterBuiltMaps(maps, keys map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if keys[i.ID()] {
			if attr, ok := i.(interpreter.InterpretableAttribute); ok {
				return mapKeyAttr{attr}, nil // an attribute stays one (see meterSortKeys)
			}
			return mapKeyNode{i}, nil
		}
		c, ok := i.(interpreter.InterpretableConstructor)
		if !ok || !maps[i.ID()] || c.Type() != types.MapType {
			return i, nil
		}
		if lm, ok := constLenMap(c); ok {
			return lm, nil
		}
		return builtMapNode{c}, nil
	})
}

// hashUnits charges t, the cost tracker of a tracked evaluation (nil:
// none), the units of hashing k, a string longer than shortString: the
// largest powers of two first, then the rest, as a meter would.
func hashUnits(t *interpreter.CostTracker, k ref.Val) {
	if s, ok := k.(types.String); ok && len(s) > shortString && t != nil {
		if n := chargeBig(t, scanUnits(len(s))); n > 0 {
			chargeTracker(t, n)
		}
	}
}

// mapKeyNode is a key of a map built: it counts the units of hashing
// its value before the map is built.
type mapKeyNode struct{ interpreter.InterpretableV2 }

func (n mapKeyNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := n.InterpretableV2.Exec(frame)
	hashUnits(frame.CostTracker(), v)
	return v
}

func (n mapKeyNode) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// mapKeyAttr is mapKeyNode of an attribute, still an attribute.
type mapKeyAttr struct {
	interpreter.InterpretableAttribute
}

func (n mapKeyAttr) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return mapKeyNode{n.InterpretableAttribute}.Exec(frame)
}

func (n mapKeyAttr) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// builtMapNode is a map literal: the map cel-go builds is a builtMap of
// the evaluation's tracker.
//
// builtMapNode, sortKeysNode and keyNode are planned only in tracked
// programs (compile), whose every evaluation has its tracker before any
// node runs (cel-go's root node sets it; a comprehension's frame inherits
// it). Without one they charge nothing (chargeTracker, hashUnits) and
// decide as cel-go (TestMeterNodes_UntrackedDecideAsCEL).
type builtMapNode struct {
	interpreter.InterpretableConstructor
}

func (n builtMapNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := n.InterpretableConstructor.Exec(frame)
	if m, ok := v.(traits.Mapper); ok {
		return builtMap{Mapper: m, tracker: frame.CostTracker()}
	}
	return v
}

func (n builtMapNode) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// builtMap is a map cel-go built in a tracked evaluation, or
// one of the request's maps of strings (params, query, headers) or
// context.user's Go map read in it (activation.go): its lookups count the
// units of hashing a long string key before cel-go's map does.
//
// It keeps the evaluation's cost tracker, not the frame it was built in:
// a map built in a comprehension (in a frame cel-go pushes for it, and
// puts back in its pool when the comprehension ends, for any evaluation
// to take) may be looked up after it, ['t'].map(k, {k: 1})[0][s].
type builtMap struct {
	traits.Mapper
	tracker *interpreter.CostTracker
}

func (m builtMap) Find(key ref.Val) (ref.Val, bool) {
	hashUnits(m.tracker, key)
	return m.Mapper.Find(key)
}

func (m builtMap) Get(key ref.Val) ref.Val { return mapGet(m, key) }

func (m builtMap) Contains(key ref.Val) ref.Val { return mapContains(m, key) }

// Equal is cel-go's, which looks each key of m up in other (and a key it
// misses twice): counted first, the whole (an upper bound).
func (m builtMap) Equal(other ref.Val) ref.Val {
	if o, ok := other.(builtMap); ok {
		other = o.Mapper // its lookups are m's keys: counted here
	}
	if o, ok := other.(traits.Mapper); ok && o.Size() == m.Size() {
		longest := types.String("")
		for it := m.Mapper.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			hashUnits(m.tracker, k)
			if s, ok := k.(types.String); ok && len(s) > len(longest) {
				longest = s
			}
		}
		hashUnits(m.tracker, longest)
	}
	return m.Mapper.Equal(other)
}

func (m builtMap) IsZeroValue() bool { return m.Size() == types.IntZero }

func (m builtMap) String() string { return fmt.Sprint(m.Mapper) }

// distinct() of the body's list compares each element with those kept
// before it, as list.Equal does; a string with a kept string of its
// length reads both, with String.Equal, which counts nothing: a rule
// calling it on two strings of 500 KB once per element of a list of
// 16,000 read them 16,000 times (230 ms). meterDistinct counts those
// units in the list's meter before distinct() runs, in the order it
// compares them, so the evaluation stops at the limit before the reads.

// meterDistinct is env with its distinct() counting, first, the units of
// the strings it will compare in a body's list (see above).
func meterDistinct(env *cel.Env) (*cel.Env, error) {
	b, err := binding(env, "distinct", "list_distinct")
	if err != nil {
		return nil, err
	}
	if b == nil {
		return env, nil
	}
	distinct := b.Unary
	if distinct == nil {
		return nil, errors.New("distinct() has no binding to meter")
	}
	listT := cel.ListType(cel.TypeParamType("T"))
	return env.Extend(cel.Function("distinct",
		cel.MemberOverload("list_distinct", []*cel.Type{listT}, listT,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				if l, ok := v.(*list); ok && l.m.counting() {
					l.m.counted(l.countDistinctStrings)
				}
				return distinct(v)
			}))))
}

// countDistinctStrings counts in l's meter the units of the strings
// distinct() compares (strUnits): each string with the strings kept
// before it, up to one equal to it (then not kept). Other elements are
// never equal to a string, and their comparisons count themselves.
func (l *list) countDistinctStrings() {
	var kept []string
	for i := range l.v.Len() {
		e := l.v.Index(i)
		if e.Kind() != jsonbody.String {
			continue
		}
		s, dup := e.Str(), false
		for _, k := range kept {
			if len(k) == len(s) {
				if l.m.count(scanUnits(len(s))); k == s {
					dup = true
					break
				}
			}
		}
		if !dup {
			kept = append(kept, s)
		}
	}
}

// sort() and sortBy() compare strings with String.Compare, which reads
// their common prefix, and cel-go charges them by the number of elements
// alone: a rule sorting two strings of 500 KB that share all but their
// last byte once per element of a list of 16,000 ran for 1.4 s. A program
// that sorts keys that may be strings is tracked (sortsStrings), and its
// keys (the list sort() sorts; the keys sortBy's map() made) are
// wrapped (meterSortKeys) so that, before the call, the comparisons
// sort.Slice will make of them are counted to the evaluation's tracker:
// scanUnits of the shorter string of each pair, in the order sort.Slice
// compares them (a dry run of the same sort, on the same order, with the
// same comparison, which stops at the limit before the reads it would
// not pay for).

// sortKeys are the operands of a's sorts whose keys may be strings: the
// target of sort(), the keys of sortBy (@sortByAssociatedKeys).
func sortKeys(a *cel.Ast) map[int64]bool {
	ast := a.NativeRep()
	return callIDs(ast, func(e celast.Expr) (int64, bool) {
		call := e.AsCall()
		if !call.IsMemberFunction() {
			return 0, false
		}
		var keys celast.Expr
		switch {
		case call.FunctionName() == "sort" && len(call.Args()) == 0:
			keys = call.Target()
		case call.FunctionName() == "@sortByAssociatedKeys" && len(call.Args()) == 1:
			keys = call.Args()[0]
		default:
			return 0, false
		}
		return keys.ID(), elemMayBeString(ast.GetType(keys.ID()))
	})
}

// elemMayBeString reports whether the elements of a value of type t may
// be strings: t is a list of such, or not known to be a list.
func elemMayBeString(t *types.Type) bool {
	if t.Kind() == types.ListKind && len(t.Parameters()) == 1 {
		return mayBeString(t.Parameters()[0])
	}
	return mayBeString(t)
}

// meterSortKeys is the program option that wraps the nodes of ids (the
// keys of sorts: sortKeys) in sortKeysNode. An attribute stays one
// (sortKeysAttr): cel-go's planner also decorates, with the id of an
// index whose key is computed (m[k + 'x']), the attribute of that key,
// which it requires to remain an attribute ("invalid attribute
// decoration"): the sort of such an index was refused at load.
func meterSortKeys(ids map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if !ids[i.ID()] {
			return i, nil
		}
		if attr, ok := i.(interpreter.InterpretableAttribute); ok {
			return sortKeysAttr{attr}, nil
		}
		return sortKeysNode{i}, nil
	})
}

// sortKeysAttr is sortKeysNode of an attribute, still an attribute.
type sortKeysAttr struct {
	interpreter.InterpretableAttribute
}

func (n sortKeysAttr) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return sortKeysNode{n.InterpretableAttribute}.Exec(frame)
}

func (n sortKeysAttr) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// sortKeysNode is the keys of a sort: it counts the units of the
// comparisons the sort will make of them (see builtMapNode).
type sortKeysNode struct{ interpreter.InterpretableV2 }

func (n sortKeysNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := n.InterpretableV2.Exec(frame)
	l, ok := v.(traits.Lister)
	if !ok {
		return v
	}
	size, ok := l.Size().(types.Int)
	if !ok || size < 2 {
		return v
	}
	longest := 0
	for i := range int(size) {
		s, ok := l.Get(indexKey(i)).(types.String)
		if !ok {
			return v // not all strings: compared in constant time, or refused
		}
		longest = max(longest, len(s))
	}
	if scanUnits(longest) <= 1 {
		// Each comparison reads at most a unit's bytes, which cel-go's
		// charge of the sort (by its size, squared) pays for: no dry run,
		// which costs allocations of its own.
		return v
	}
	keys := make([]string, size)
	for i := range keys {
		keys[i] = string(l.Get(indexKey(i)).(types.String))
	}
	idx := make([]int, size)
	for i := range idx {
		idx[i] = i
	}
	m := meter{frame: frame}
	m.counted(func() {
		sort.Slice(idx, func(i, j int) bool {
			a, b := keys[idx[i]], keys[idx[j]]
			m.count(scanUnits(min(len(a), len(b))))
			return strings.Compare(a, b) < 0
		})
	})
	return v
}

func (n sortKeysNode) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// Lookups by a key of the data.
//
// obj[k] and obj[?k], with a key k that is not a literal, look k up among
// the member names of the body's object, as in does (object.Contains):
// reading the names of k's length, up to the one equal to it, or hashing
// k in an object of more than 16 members (GetReads); cel-go charges the
// index a unit or two. A rule looking up a 490 KB key, which differs from
// the one member name in its last byte, once per element of 16,000 read
// it 16,000 times (265 ms) before its other costs met the limit. cel-go
// looks a key up through FindStringKey, which every selection of a member
// by its name (request.body.total) takes too, and which cannot tell them
// apart; so a program with such a lookup (lookupKeys) is tracked, and its
// keys are wrapped (meterLookupKeys): a key that is a string is left in
// the evaluation's meter (meter.key), and the body's object looked up by
// that very string next counts the units of the reads (object.FindStringKey),
// as the native path charges them (frame.index). A key that is itself an
// index by a key neither constant nor an attribute (obj[m[k + 'x']],
// obj[m[k]] whose k is wrapped) is not wrapped, nor tracked for it:
// cel-go's planner decorates its id twice, once for an attribute it
// requires to stay one.

// lookupKeys are the ids of a's keys of lookups by a key of the data: the
// key of an index or optional index that is not a literal and may be a
// string, into an operand that may be an object; nil: none.
func lookupKeys(a *cel.Ast) map[int64]bool {
	ast := a.NativeRep()
	var ids map[int64]bool
	celast.PostOrderVisit(ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		call := e.AsCall()
		if fn := call.FunctionName(); fn != operators.Index && fn != operators.OptIndex || len(call.Args()) != 2 {
			return
		}
		obj, key := call.Args()[0], call.Args()[1]
		if key.Kind() == celast.LiteralKind || obj.Kind() == celast.MapKind || // a map the rule writes: lookedUpMaps, builtMaps
			!mayBeString(ast.GetType(key.ID())) || !mayBeMap(ast.GetType(obj.ID())) {
			return
		}
		if isIndex(key) {
			// cel-go decorates the id of an index whose key is neither a
			// constant nor an attribute twice, the first time for an
			// attribute it requires to stay one (see above).
			switch k := key.AsCall().Args()[len(key.AsCall().Args())-1]; k.Kind() {
			case celast.LiteralKind:
			case celast.IdentKind, celast.SelectKind:
				if ids[k.ID()] {
					return
				}
			default:
				return
			}
		}
		if ids == nil {
			ids = map[int64]bool{}
		}
		ids[key.ID()] = true
	}))
	return ids
}

// isIndex reports whether e is an index, optional index or optional
// selection.
func isIndex(e celast.Expr) bool {
	if e.Kind() != celast.CallKind {
		return false
	}
	switch e.AsCall().FunctionName() {
	case operators.Index, operators.OptIndex, operators.OptSelect:
		return true
	}
	return false
}

// mayBeMap reports whether a value of type t may be a map (the body's
// object).
func mayBeMap(t *types.Type) bool {
	switch t.Kind() {
	case types.MapKind, types.DynKind, types.AnyKind, types.TypeParamKind:
		return true
	}
	return false
}

// meterLookupKeys is the program option that wraps the nodes of ids (the
// keys of lookups: lookupKeys) in keyNode.
func meterLookupKeys(ids map[int64]bool) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if ids[i.ID()] {
			return keyNode{i}, nil
		}
		return i, nil
	})
}

// keyNode is the key of a lookup: a string key is left in the meter for
// the lookup that follows (see builtMapNode).
type keyNode struct{ interpreter.InterpretableV2 }

func (n keyNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := n.InterpretableV2.Exec(frame)
	if k, ok := v.(types.String); ok && k != "" {
		if m := meterOf(frame); m.counting() {
			m.key = string(k)
		}
	}
	return v
}

func (n keyNode) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, n.Exec)
}

// meterOf is the meter of the Activation frame evaluates; nil: none.
func meterOf(frame *interpreter.ExecutionFrame) *meter {
	if r, ok := frame.ResolveName("request"); ok {
		if rv, ok := r.(*requestVal); ok {
			return &(*Activation)(rv).meter
		}
	}
	return nil
}

// lookedUp reports whether k is the key left in m (keyNode), the very
// string, and forgets it.
func (m *meter) lookedUp(k string) bool {
	if m == nil || m.key == "" || len(m.key) != len(k) || unsafe.StringData(m.key) != unsafe.StringData(k) {
		return false
	}
	m.key = ""
	return true
}

// callOperands are a call's target and arguments.
func callOperands(c celast.Expr) []celast.Expr {
	call := c.AsCall()
	if call.IsMemberFunction() {
		return append([]celast.Expr{call.Target()}, call.Args()...)
	}
	return call.Args()
}

func bothComposite(c celast.Expr, a *celast.AST) bool {
	args := callOperands(c)
	return len(args) == 2 && mayBeComposite(a.GetType(args[0].ID())) && mayBeComposite(a.GetType(args[1].ID()))
}

// elemsComposite: every list operand's elements may be composite (a
// scalar on one side of a comparison stops it at the top).
func elemsComposite(c celast.Expr, a *celast.AST) bool {
	for _, arg := range callOperands(c) {
		if !elemMayBeComposite(a.GetType(arg.ID())) {
			return false
		}
	}
	return true
}

// elemMayBeComposite reports whether the elements of a value of type t
// may be objects or lists: t is a list of such, or not known to be a
// list of scalars.
func elemMayBeComposite(t *types.Type) bool {
	if t.Kind() == types.ListKind && len(t.Parameters()) == 1 {
		return mayBeComposite(t.Parameters()[0])
	}
	return mayBeComposite(t)
}

// mayBeComposite reports whether a value of type t may be an object, a
// list or a map (or hold one: an optional): whether comparing it may
// recurse.
func mayBeComposite(t *types.Type) bool {
	switch t.Kind() {
	case types.BoolKind, types.IntKind, types.UintKind, types.DoubleKind, types.StringKind, types.BytesKind,
		types.NullTypeKind, types.TimestampKind, types.DurationKind, types.TypeKind:
		return false
	case types.OpaqueKind:
		for _, p := range t.Parameters() {
			if mayBeComposite(p) {
				return true
			}
		}
		return t.TypeName() != "optional_type" // another opaque type: not known
	}
	return true
}

// comparesComposites reports whether call, of ast, compares values that
// may be objects or lists (see comparers): a program with such a call is
// tracked, whatever its estimate, since the estimate does not count the
// depth of what it compares (tracksCalls).
func comparesComposites(ast *celast.AST, call celast.Expr) bool {
	f := comparers[call.AsCall().FunctionName()]
	return f != nil && f(call, ast)
}

// A program whose estimate is within the cost limit runs untracked, and
// cel-go's estimate of distinct(), the sets functions and hasAll and its
// kin counts the pairs of elements they compare, not the strings they
// read: distinct() of two strings of 490 KB once per element of a list of
// items ran for 27 ms without a limit. A program that calls them on
// lists whose strings the schema does not bound to shortString bytes
// (comparesLongStrings) is tracked; one whose strings are bounded
// (request.body.tags.distinct(), tags of maxLength 10) reads at most a
// few units a pair more than its estimate, and stays untracked.

// shortString is the longest string, in bytes, that a rule's set
// functions may compare untracked.
const shortString = 64

// comparesLongStrings reports whether call, of ast, is distinct(), a
// sets function or hasAll and its kin on a list whose elements may be
// strings longer than shortString bytes: a list of the data whose items
// the schema (sizes) does not bound so, or a list the rule builds of such
// values.
func comparesLongStrings(ast *celast.AST, sizes cost.Estimator, call celast.Expr) bool {
	long := func(e celast.Expr, items bool) bool {
		if e.Kind() == celast.LiteralKind {
			return false
		}
		path, ok := pathOf(e)
		if !ok || sizes == nil {
			return true
		}
		if items {
			path = append(path, "@items")
		}
		est := sizes.EstimateSize(shapeNode{path: path, t: types.StringType})
		return est == nil || est.Max > shortString
	}
	if !setFunctions[call.AsCall().FunctionName()] {
		return false
	}
	for _, arg := range callOperands(call) {
		if !elemMayBeString(ast.GetType(arg.ID())) {
			continue
		}
		if arg.Kind() != celast.ListKind {
			if long(arg, true) {
				return true
			}
			continue
		}
		for _, el := range arg.AsList().Elements() {
			if long(el, false) {
				return true
			}
		}
	}
	return false
}

// tracksCalls reports whether a has a call that makes a program tracked,
// whatever its estimate: one that compares values that may be objects or
// lists (comparesComposites), reads a string whole (scansStrings), or
// compares long strings in a set function (comparesLongStrings).
func tracksCalls(a *cel.Ast, sizes cost.Estimator) bool {
	ast := a.NativeRep()
	return hasCall(ast, func(call celast.Expr) bool {
		return comparesComposites(ast, call) || scansStrings(ast, call) || comparesLongStrings(ast, sizes, call)
	})
}

// pathOf is the path of e, a variable and the names selected from it, as
// cel-go's estimator names the values it sizes; ok false when e is not
// such a path.
func pathOf(e celast.Expr) (path []string, ok bool) {
	switch e.Kind() {
	case celast.IdentKind:
		return []string{e.AsIdent()}, true
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil, false
		}
		if path, ok = pathOf(sel.Operand()); ok {
			return append(path, sel.FieldName()), true
		}
	}
	return nil, false
}
