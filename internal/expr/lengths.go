package expr

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// The cost of reading a string whole.
//
// cel-go's cost model charges a constant for size() of a string, for
// the conversions that parse one (int(), uint(), double(), bool(),
// duration(), timestamp()) and for the time zone of a timestamp's
// getHours() and the like, in its estimate and in its tracker alike; yet
// each reads the whole string: counting its code points, parsing it, or
// copying it into the error of a text that does not parse (a time zone of
// 500 KB took 2 ms a call, 26 s for a rule over 12,000 items). A rule that
// reads a long string of the body once for each element of a list
// (items.all(i, i.qty <= int(request.body.limit))) ran for seconds on a
// 1 MiB body, under a limit meant to stop it within milliseconds, and
// whether or not it was tracked.
//
// Such a call is charged here a unit per ten bytes of its string, as
// cel-go charges other reads of a whole string (startsWith, contains),
// besides its call: compareCosts prices it for cel-go's tracker
// (scanCost), the native path charges the same (frame.unary). A program
// that may make one is tracked, whatever its estimate: the estimate counts
// the call, not its string, and counting the string there (its longest,
// for every element of a list) would refuse linear rules at load.
//
// format() is the same, and worse: cel-go charges it by its format string
// alone, yet it writes out its arguments whole, lists and maps to their
// leaves, and a list that map() makes of one list N times is N² values
// to write. A rule formatting a 1 MiB list once per element of another
// ran for 15 s; '%s'.format([items.map(i, items)]) over 5,000 items
// allocated 519 MiB in one call. Its call is charged here by what it
// wrote (its result's bytes; when it fails, what its arguments hold,
// formatUnits), and, since that is known only once the call has run, a
// call whose arguments alone would be charged more than the whole cost
// limit is stopped before it starts, with the error of the limit that its
// charge would meet after it (boundFormat).

// scanFunctions are the functions that read a string argument whole.
var scanFunctions = map[string]bool{
	overloads.Size: true, overloads.TypeConvertInt: true, overloads.TypeConvertUint: true,
	overloads.TypeConvertDouble: true, overloads.TypeConvertBool: true,
	overloads.TypeConvertDuration: true, overloads.TypeConvertTimestamp: true,
}

// zoneFunctions are the functions of a timestamp that read a time zone,
// their second argument, whole.
var zoneFunctions = map[string]bool{
	overloads.TimeGetFullYear: true, overloads.TimeGetMonth: true, overloads.TimeGetDayOfYear: true,
	overloads.TimeGetDate: true, overloads.TimeGetDayOfMonth: true, overloads.TimeGetDayOfWeek: true,
	overloads.TimeGetHours: true, overloads.TimeGetMinutes: true, overloads.TimeGetSeconds: true,
	overloads.TimeGetMilliseconds: true,
}

// scanOverloads are their overloads that take a string, and format(): a
// call the checker left any of them to may read a string whole.
var scanOverloads = map[string]bool{
	overloads.ExtFormatString: true, overloads.SizeString: true, overloads.SizeStringInst: true,
	overloads.StringToInt: true, overloads.StringToUint: true, overloads.StringToDouble: true,
	overloads.StringToBool: true, overloads.StringToDuration: true, overloads.StringToTimestamp: true,
	overloads.TimestampToYearWithTz: true, overloads.TimestampToMonthWithTz: true,
	overloads.TimestampToDayOfYearWithTz: true, overloads.TimestampToDayOfMonthZeroBasedWithTz: true,
	overloads.TimestampToDayOfMonthOneBasedWithTz: true, overloads.TimestampToDayOfWeekWithTz: true,
	overloads.TimestampToHoursWithTz: true, overloads.TimestampToMinutesWithTz: true,
	overloads.TimestampToSecondsWithTz: true, overloads.TimestampToMillisecondsWithTz: true,
}

// scanUnits is the charge for reading n bytes of a string: one unit per
// ten, rounded up.
func scanUnits(n int) uint64 { return (uint64(n) + 9) / 10 }

// scanCost is the cost of a call of function on args, with result, when
// it reads a string whole: the call and its bytes; or a call of format():
// the call, its format string and what it wrote. nil for any other call.
func scanCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if overloadID == overloads.ExtFormatString && len(args) == 2 {
		target, _ := args[0].(types.String)
		var wrote uint64
		if s, ok := result.(types.String); ok {
			wrote = scanUnits(len(s))
		} else { // it failed: what it may have written
			wrote = formatUnits(args, math.MaxUint64)
		}
		c := 1 + scanUnits(len(target)) + wrote
		return &c
	}
	var s types.String
	var ok bool
	switch {
	case scanFunctions[function] && len(args) == 1:
		s, ok = args[0].(types.String)
	case zoneFunctions[function] && len(args) == 2:
		s, ok = args[1].(types.String)
	}
	if !ok {
		return nil
	}
	c := 1 + scanUnits(len(s))
	return &c
}

// scansStrings reports whether call, of ast, may be a function that
// reads a string whole (see scanOverloads): a program with such a call is
// tracked (tracksCalls).
func scansStrings(ast *celast.AST, call celast.Expr) bool {
	for _, id := range ast.GetOverloadIDs(call.ID()) {
		if scanOverloads[id] {
			return true
		}
	}
	return false
}

// boundFormat is env with its format() stopped, at the cost limit, before
// it writes arguments that would be charged more than limit (see above):
// its charge after it would stop the evaluation there anyway. What it
// counts is at most what scanCost charges the call (formatUnits), so it
// stops no call cel-go's tracker would let finish.
func boundFormat(env *cel.Env, limit uint64) (*cel.Env, error) {
	b, err := binding(env, "format", overloads.ExtFormatString)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return env, nil
	}
	format := b.Function
	if format == nil {
		return nil, errors.New("format() has no binding to bound")
	}
	return env.Extend(cel.Function("format",
		cel.MemberOverload(overloads.ExtFormatString, []*cel.Type{cel.StringType, cel.ListType(cel.DynType)}, cel.StringType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				if formatUnits(args, limit) > limit {
					panic(cost.LimitExceededError{Message: "operation cancelled: actual cost limit exceeded"})
				}
				return format(args...)
			}))))
}

// formatUnits is scanUnits of the bytes format() writes at least for the
// arguments its format string uses (one per clause, in order): a string's
// or bytes' own, a byte for any other value, and for a list or map those of
// its elements, keys and values, and a byte each (a separator). It stops
// counting past limit.
func formatUnits(args []ref.Val, limit uint64) uint64 {
	if len(args) != 2 {
		return 0
	}
	target, _ := args[0].(types.String)
	list, ok := args[1].(traits.Lister)
	if !ok {
		return 0
	}
	used := int64(0) // the clauses: % not part of %%
	for i := 0; i < len(target); i++ {
		if target[i] == '%' {
			if i+1 < len(target) && target[i+1] == '%' {
				i++
				continue
			}
			used++
		}
	}
	if size, ok := list.Size().(types.Int); ok && int64(size) < used {
		used = int64(size)
	}
	w := formatWalk{most: math.MaxUint64}
	if limit < (math.MaxUint64-10)/10 {
		w.most = 10*limit + 10 // scanUnits of more is over limit
	}
	for i := int64(0); i < used && w.n <= w.most; i++ {
		w.walk(list.Get(types.Int(i)))
	}
	return scanUnits(int(min(w.n, math.MaxInt)))
}

// formatWalk counts the bytes of values, up to a little past most.
type formatWalk struct{ n, most uint64 }

func (w *formatWalk) walk(v ref.Val) {
	if w.n > w.most {
		return
	}
	switch v := v.(type) {
	case types.String:
		w.n += uint64(len(v))
	case types.Bytes:
		w.n += uint64(len(v))
	case traits.Mapper:
		for it := v.Iterator(); it.HasNext() == types.True && w.n <= w.most; {
			k := it.Next()
			w.n++
			w.walk(k)
			if e, found := v.Find(k); found {
				w.walk(e)
			}
		}
	case traits.Lister:
		for it := v.Iterator(); it.HasNext() == types.True && w.n <= w.most; {
			w.n++
			w.walk(it.Next())
		}
	default:
		w.n++
	}
}

// binding is the binding of overload of env's function fn, to wrap: nil
// when env has no such function; an error when it has one without that
// overload's binding.
func binding(env *cel.Env, fn, overload string) (*functions.Overload, error) {
	decl, ok := env.Functions()[fn]
	if !ok {
		return nil, nil
	}
	bindings, err := decl.Bindings()
	if err != nil {
		return nil, err
	}
	for _, b := range bindings {
		if b.Operator == overload {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s() has no binding of %s to wrap", fn, overload)
}

// The sizes of compared strings.
//
// cel-go charges ==, != and the ordering of strings (<, <=, >, >=) by
// the smaller of its two operands' sizes (a tenth of a unit a code
// point), and its tracker works that out by counting the code points of
// both, the longer one whole: a rule comparing a 500 KB string of the
// body with 'x' once per element of a list (items.all(i, request.body.s
// != 'x')) was charged a unit or so a call, and counted 500 KB each
// time: 1.9 s on a 1 MiB body under the default limits, meant to stop it
// within 8 ms. When an operand is a string longer than shortString,
// minSizeCost gives cel-go's own tracker of the overload (stdTrackers)
// each longer string's count of code points only up to the smaller
// operand's bound (runesUpTo): the minimum, and so the charge, are
// cel-go's, for a count as long as the comparison it charges.

// stdTrackers are cel-go's trackers of its standard overloads, with the
// default model that a program's tracker uses.
var stdTrackers = cost.StandardOverloadTrackers()

// minSizeOverloads are the overloads cel-go charges by the smaller size
// of their two operands.
var minSizeOverloads = map[string]bool{
	overloads.Equals: true, overloads.NotEquals: true,
	overloads.LessString: true, overloads.LessEqualsString: true,
	overloads.GreaterString: true, overloads.GreaterEqualsString: true,
}

// minSizeCost is cel-go's charge of a call of such an overload on args,
// when one is a string longer than shortString, or an optional that holds
// one (cel-go sizes an optional by the value it holds); nil otherwise
// (cel-go charges it).
func minSizeCost(overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if !minSizeOverloads[overloadID] || len(args) != 2 {
		return nil
	}
	long, bound := false, uint64(math.MaxUint64) // bound: at least the smaller size
	for _, a := range args {
		l, b := sizeBound(a)
		long, bound = long || l, min(bound, b)
	}
	track := stdTrackers[overloadID]
	if !long || track == nil {
		return nil
	}
	var sized [2]ref.Val
	for i, a := range args {
		sized[i], _ = sizedUpTo(a, bound)
	}
	return track(sized[:], result)
}

// sizeBound is at least cel-go's size of v, found without counting a
// string's code points (a string has at most as many as it has bytes),
// and whether v is, or holds, a string longer than shortString.
func sizeBound(v ref.Val) (long bool, bound uint64) {
	switch v := v.(type) {
	case types.String:
		return len(v) > shortString, uint64(len(v))
	case *types.Optional: // 1, or 1 and the size of what it holds, by cel-go's model version
		if !v.HasValue() {
			return false, 1
		}
		long, bound = sizeBound(v.GetValue())
		return long, cost.SafeAdd(1, bound)
	}
	return false, cost.ActualSize(v)
}

// sizedUpTo is v, or, when v is or holds a string of more than n bytes,
// v with that string's count of code points, up to n, in its place
// (sizeOnly), and true: cel-go's tracker then finds the same smaller size
// of two operands when n is at least their sizeBound's smaller one.
func sizedUpTo(v ref.Val, n uint64) (ref.Val, bool) {
	switch s := v.(type) {
	case types.String:
		if uint64(len(s)) > n {
			return sizeOnly(runesUpTo(string(s), n)), true
		}
	case *types.Optional:
		if s.HasValue() {
			if in, ok := sizedUpTo(s.GetValue(), n); ok {
				return types.OptionalOf(in), true
			}
		}
	}
	return v, false
}

// The empty needle.
//
// cel-go charges contains() and matches() by the product of their
// operands' sizes, and so the call alone (cel-go's least) when the
// substring or pattern is empty; yet its tracker counts the code points of
// the string searched whole to find that product: a rule
// request.body.items.all(i, request.body.s.contains('')) over 16,000
// items and a 500 KB string counted it for each, 1.6 s under the default
// limits (matches('') the same), while the search ends at once.
// emptyNeedleCost hands cel-go's tracker of the overload the searched
// string's size as none: a product with an empty factor is the same.

// needleOverloads are the overloads cel-go charges by the product of
// their string's size and their substring's or pattern's (the second
// argument).
var needleOverloads = map[string]bool{
	overloads.ContainsString: true, overloads.MatchesString: true, overloads.Matches: true,
}

// emptyNeedleCost is cel-go's charge of such a call when its second
// argument is empty and its first a string longer than shortString; nil
// otherwise (cel-go charges it).
func emptyNeedleCost(overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if !needleOverloads[overloadID] || len(args) != 2 {
		return nil
	}
	s, ok := args[0].(types.String)
	if needle, isStr := args[1].(types.String); !ok || !isStr || needle != "" || len(s) <= shortString {
		return nil
	}
	track := stdTrackers[overloadID]
	if track == nil {
		return nil
	}
	return track([]ref.Val{sizeOnly(0), args[1]}, result)
}

// indexOf and lastIndexOf (ext strings) turn their whole receiver into
// code points on every call ([]rune(s)), whatever the needle, and the
// library charges them by the product of the two sizes: a call with an
// empty needle cost a unit, and request.body.items.all(i,
// request.body.s.indexOf(”) == 0) over a 500 KB s ran 10 s under the
// default limits. The library's trackers come before the program's
// estimator (compareCosts is never asked); a program option comes after
// the library's, and replaces them: trackIndexOf charges a call with an
// empty needle on a string longer than shortString a unit per ten bytes
// of it, as scanCost charges a read of a whole string, and any other call
// as the library does, by its own model (searchModel).
var trackIndexOf = func() cel.ProgramOption {
	var opts []cost.TrackerOption
	for _, id := range searchOverloads {
		library := searchModel(id).FunctionTracker()
		opts = append(opts, cost.OverloadTracker(id, func(args []ref.Val, result ref.Val) *uint64 {
			if len(args) >= 2 {
				s, ok := args[0].(types.String)
				if needle, isStr := args[1].(types.String); ok && isStr && needle == "" && len(s) > shortString {
					c := 1 + scanUnits(len(s))
					return &c
				}
			}
			return library(args, result)
		}))
	}
	return cel.CostTrackerOptions(opts...)
}()

// searchOverloads are indexOf's and lastIndexOf's overloads, which read
// their receiver whole (scanOverloads: such a program is tracked).
var searchOverloads = []string{"string_index_of_string", "string_index_of_string_int",
	"string_last_index_of_string", "string_last_index_of_string_int"}

func init() {
	for _, id := range searchOverloads {
		scanOverloads[id] = true
	}
}

// searchModel is ext strings' cost model of a search (indexOf,
// lastIndexOf): the call and a tenth of a unit for each pair of code
// points of the receiver and the needle (TestIndexOfCostsAsCEL holds it
// to the library's).
func searchModel(id string) cost.OverloadModel {
	return cost.MemberOverload(id, cost.EvalCost(cost.Sum(cost.Const(cost.CallCost),
		cost.StringScan(cost.Mul(cost.Length(cost.Target()), cost.Length(cost.Arg(0)))))))
}

// runesUpTo is the number of code points of s (as utf8.RuneCountInString
// counts them), or n when it has more.
func runesUpTo(s string, n uint64) uint64 {
	var c uint64
	for range s {
		if c == n {
			break
		}
		c++
	}
	return c
}

// sizeOnly is a value of a size, all cel-go's tracker reads of an
// operand (traits.Sizer).
type sizeOnly uint64

func (v sizeOnly) Size() ref.Val                           { return types.Int(v) }
func (sizeOnly) ConvertToNative(reflect.Type) (any, error) { return nil, errors.New("size only") }
func (sizeOnly) ConvertToType(ref.Type) ref.Val            { return types.NewErr("size only") }
func (sizeOnly) Equal(ref.Val) ref.Val                     { return types.False }
func (sizeOnly) Type() ref.Type                            { return types.IntType }
func (v sizeOnly) Value() any                              { return uint64(v) }
