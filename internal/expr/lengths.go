package expr

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The cost of reading a string whole.
//
// cel-go's cost model charges a constant for size() of a string and for
// the conversions that parse one (int(), uint(), double(), bool(),
// duration(), timestamp()), in its estimate and in its tracker alike; yet
// each reads the whole string: counting its code points, parsing it, or
// copying it into the error of a text that does not parse. A rule that
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

// scanFunctions are the functions that read a string argument whole.
var scanFunctions = map[string]bool{
	overloads.Size: true, overloads.TypeConvertInt: true, overloads.TypeConvertUint: true,
	overloads.TypeConvertDouble: true, overloads.TypeConvertBool: true,
	overloads.TypeConvertDuration: true, overloads.TypeConvertTimestamp: true,
}

// scanOverloads are their overloads that take a string: a call the
// checker left any of them to may read one.
var scanOverloads = map[string]bool{
	overloads.SizeString: true, overloads.SizeStringInst: true,
	overloads.StringToInt: true, overloads.StringToUint: true, overloads.StringToDouble: true,
	overloads.StringToBool: true, overloads.StringToDuration: true, overloads.StringToTimestamp: true,
}

// scanUnits is the charge for reading n bytes of a string: one unit per
// ten, rounded up.
func scanUnits(n int) uint64 { return (uint64(n) + 9) / 10 }

// scanCost is the cost of a call of function on args when it reads a
// string whole: the call and its bytes; nil for any other call.
func scanCost(function string, args []ref.Val) *uint64 {
	if !scanFunctions[function] || len(args) != 1 {
		return nil
	}
	s, ok := args[0].(types.String)
	if !ok {
		return nil
	}
	c := 1 + scanUnits(len(s))
	return &c
}

// scansStrings reports whether a may call a function that reads a string
// whole (see scanOverloads): such a program is tracked.
func scansStrings(a *cel.Ast) bool {
	ast := a.NativeRep()
	found := false
	celast.PostOrderVisit(ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if found || e.Kind() != celast.CallKind {
			return
		}
		for _, id := range ast.GetOverloadIDs(e.ID()) {
			found = found || scanOverloads[id]
		}
	}))
	return found
}
