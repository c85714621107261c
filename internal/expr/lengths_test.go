package expr

import (
	"fmt"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// TestEval_CostLimitBoundsStringScans: size() of a string and the
// conversions that parse one read it whole. A rule that does so for every
// element of a list, on a long string of the body, is stopped at the cost
// limit (it ran 2,000 × 1 MiB of parsing, seconds, charged a unit a
// call), on both paths; on short strings the same rules hold. So is one
// that reads a long time zone (26 s over 12,000 items of a 500 KB zone),
// or looks for an empty string in a long one with indexOf.
func TestEval_CostLimitBoundsStringScans(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":2000,"items":{"type":"integer"}},"s":{"type":"string"},"d":{}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 200), ",")
	long := doc(t, `{"items":[`+items+`],"s":"`+strings.Repeat("0", 1_000_000)+`7","d":"`+strings.Repeat("0", 1_000_000)+`7"}`)
	short := doc(t, `{"items":[`+items+`],"s":"7","d":"7"}`)
	for _, src := range []string{
		"request.body.items.all(i, size(request.body.s) > 0)",
		"request.body.items.all(i, request.body.s.size() > 0)",
		"request.body.items.all(i, size(request.body.d) > 0)",
		"request.body.items.all(i, i <= int(request.body.s))",
		"request.body.items.all(i, i <= int(request.body.d))",
		"request.body.items.all(i, uint(i) <= uint(request.body.s))",
		"request.body.items.all(i, double(i) <= double(request.body.s))",
		"request.body.items.all(i, bool(request.body.s) || i > 0)",
		"request.body.items.all(i, duration(request.body.s) != duration('1s') || i > 0)",
		"request.body.items.all(i, timestamp(request.body.s) != timestamp('2020-01-01T00:00:00Z') || i > 0)",
		"request.body.items.all(i, timestamp('2020-01-01T00:00:00Z').getHours(request.body.s) >= 0 || i > 0)",
		"request.body.items.all(i, timestamp('2020-01-01T00:00:00Z').getDayOfWeek(request.body.d) >= 0 || i > 0)",
		// indexOf and lastIndexOf turn their receiver into code points whole,
		// and an empty needle's call was charged a unit (10 s over 16,000
		// items of a 500 KB string).
		"request.body.items.all(i, request.body.s.indexOf('') == 0)",
		"request.body.items.all(i, request.body.s.lastIndexOf('') >= 0)",
		"request.body.items.all(i, request.body.s.indexOf('', 1) == 1)",
	} {
		p := stopsAtLimit(t, ce, src, &Activation{Body: long, Shape: s.Numbers()}) // tracked: it may read a string whole
		if p.Native() {
			_, _, done := p.nat.eval(&Activation{Body: long, Shape: s.Numbers()})
			assert.False(t, done, "%s: the native path hands over at the budget", src)
		}
		if !strings.Contains(src, "bool(") && !strings.Contains(src, "duration(") && !strings.Contains(src, "timestamp(") || strings.Contains(src, "|| i > 0") {
			ok, err := p.Eval(&Activation{Body: short, Shape: s.Numbers()})
			require.NoError(t, err, src)
			assert.True(t, ok, src)
		}
	}
	// A conversion of a number, or size() of a list, reads no string: not
	// tracked for it.
	for _, src := range []string{"request.body.items.all(i, double(i) > 0.0)", "size(request.body.items) <= 10"} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.False(t, p.Tracked(), src)
	}
}

// TestEval_CostLimitBoundsFormat: format() writes its arguments whole,
// and cel-go charged it by its format string alone. A rule formatting a
// long value once per element of a list, whether the call succeeds or
// fails, is stopped at the cost limit (it formatted 200 × 200 KB); so is
// a single call on a list map() made of one list N times (2,000² values
// written, where a 5,000-element list allocated 519 MiB); small calls
// still hold.
func TestEval_CostLimitBoundsFormat(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":2000,"items":{"type":"integer"}},"pad":{},"s":{"type":"string"},"n":{}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 200), ",")
	pad := `["` + strings.Repeat("a", 200_000) + `"]`
	body := doc(t, `{"items":[`+items+`],"pad":`+pad+`,"s":"a","n":1}`)
	square := doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 2000), ",")+`]}`)
	for src, d := range map[string]*jsonbody.Doc{
		"request.body.items.all(i, '%s'.format([request.body.pad]) != '')":                            body,
		"request.body.items.all(i, '%s%d'.format([request.body.pad, request.body.s]) == '' || i > 0)": body,
		"'%s'.format([request.body.items.map(i, request.body.items)]) != ''":                          square,
	} {
		stopsAtLimit(t, ce, src, &Activation{Body: d, Shape: s.Numbers()})
	}
	for _, src := range []string{
		"'%s-%d'.format([request.body.s, request.body.n]) == 'a-1'",
		"'%s'.format([request.body.items]).size() > 10 && '%s %s'.format(['x', 1]) == 'x 1'",
		"'%d%%'.format([request.body.n, request.body.pad]) == '1%'", // an argument no clause uses is not written
		"request.body.items.all(i, '%s'.format([request.body.s]) == 'a')",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		ok, err := p.Eval(&Activation{Body: body, Shape: s.Numbers()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
	}
}

// TestCompareCosts_PricesLongStringComparisons: cel-go's tracker charges
// ==, != and <, <=, >, >= of strings by the smaller operand's count of
// code points, but counts the longer operand's whole to find it: a rule
// comparing a 500 KB string of the body with 'x' once per element of a
// list (request.body.items.all(i, request.body.s != 'x')) counted 500 KB
// a call for a unit, 1.9 s on a 1 MiB body under the default limits. The
// program's estimator (compareCosts) now prices such a call, when an
// operand is a string longer than shortString, so that cel-go's tracker
// does not count it; at cel-go's price.
func TestCompareCosts_PricesLongStringComparisons(t *testing.T) {
	long := types.String(strings.Repeat("x", 500_000))
	std := cost.StandardOverloadTrackers()
	for _, tc := range []struct {
		overload string
		args     []ref.Val
	}{
		{overloads.NotEquals, []ref.Val{long, types.String("x")}},
		{overloads.Equals, []ref.Val{types.String("x"), long}},
		{overloads.LessString, []ref.Val{long, types.String("abc")}},
		{overloads.GreaterEqualsString, []ref.Val{types.String(strings.Repeat("é", 40)), long}},
		{overloads.Equals, []ref.Val{long, types.Int(1)}},
		{overloads.NotEquals, []ref.Val{types.NewDynamicList(types.DefaultTypeAdapter, []string{"a", "b"}), long}},
	} {
		got := compareCosts{}.CallCost(tc.overload, tc.overload, tc.args, types.True)
		if assert.NotNil(t, got, "%s", tc.overload) {
			assert.Equal(t, *std[tc.overload](tc.args, types.True), *got, "%s", tc.overload)
		}
	}
}

// TestCompareCosts_PricesLongOptionalStringComparisons: cel-go sizes an
// optional by the value it holds, and its tracker counts an optional's
// string whole as it does a string's: request.body.?s != optional.of('x')
// once per element of 16,000 counted a 500 KB string each time, 1.7 s
// under the default limits. minSizeCost prices these calls too, at
// cel-go's price.
func TestCompareCosts_PricesLongOptionalStringComparisons(t *testing.T) {
	long := types.String(strings.Repeat("é", 300_000))
	std := cost.StandardOverloadTrackers()
	for _, tc := range []struct {
		overload string
		args     []ref.Val
	}{
		{overloads.NotEquals, []ref.Val{types.OptionalOf(long), types.OptionalOf(types.String("x"))}},
		{overloads.Equals, []ref.Val{types.OptionalOf(types.String("x")), types.OptionalOf(long)}},
		{overloads.Equals, []ref.Val{types.OptionalOf(long), types.OptionalNone}},
		{overloads.Equals, []ref.Val{types.OptionalOf(types.OptionalOf(long)), types.OptionalOf(types.OptionalOf(types.String("ab")))}},
		{overloads.NotEquals, []ref.Val{types.OptionalOf(long), types.String("x")}},
		{overloads.NotEquals, []ref.Val{long, types.OptionalOf(types.String("x"))}},
		{overloads.Equals, []ref.Val{types.OptionalOf(long), types.Bytes("abc")}},
	} {
		got := compareCosts{}.CallCost(tc.overload, tc.overload, tc.args, types.False)
		if assert.NotNil(t, got, "%s %v", tc.overload, tc.args[1]) {
			assert.Equal(t, *std[tc.overload](tc.args, types.False), *got, "%s %v", tc.overload, tc.args[1])
		}
	}
}

// TestLongStringComparisonsCostAsCEL: the cost of comparing strings and
// other values, long strings among them (multi-byte, invalid UTF-8,
// around shortString), is what cel-go's own tracker charges, and the
// verdict is cel-go's.
func TestLongStringComparisonsCostAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes())
	require.NoError(t, err)
	vals := []any{"", "a", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 40), strings.Repeat("é", 33) + "a",
		strings.Repeat("€", 100), strings.Repeat("a", 300), strings.Repeat("b", 300), strings.Repeat("\xff", 100), "\xff" + strings.Repeat("a", 99),
		1, 1.5, []byte("abc"), []any{"a", strings.Repeat("a", 100)}, map[string]any{"k": strings.Repeat("a", 100)}, nil, true,
		strings.Repeat("b", 64), strings.Repeat("€", 22), strings.Repeat("€", 21) + "ab", "\xff" + strings.Repeat("é", 40), []byte(strings.Repeat("a", 100)),
		[]byte(strings.Repeat("\xff", 65)), []byte{}, []any{}, map[string]any{}, -1}
	for _, src := range []string{"x == y", "x != y", "string(x) < string(y)", "string(x) <= string(y)", "string(x) > string(y)",
		"string(x) >= string(y)", "optional.of(x) == y", "x == optional.of(y)",
		"optional.of(x) == optional.of(y)", "optional.of(x) != optional.of(y)", "optional.of(optional.of(x)) == optional.of(optional.of(y))",
		"optional.of(optional.of(x)) != optional.of(y)", "optional.of(x) == optional.none()", "optional.ofNonZeroValue(x) != optional.of(y)",
		"{'k': x}.?k == optional.of(y)", "dyn(x) == dyn(y)", "[x, y].all(v, v == y)", "[x].map(v, v != y)[0]", "[x, y].exists(v, dyn(v) == y)",
		"x == null", "null != y", "x == 1", "x == []", "x == {}", "bytes(string(x)) == bytes(string(y))", "bytes(string(x)) < bytes(string(y))",
		"string(x) == string(y)", "[x, y].map(v, string(v) < string(y)).all(b, b)"} {
		decidesAsCEL(t, env, src, vals, nil, trackComparisons)
	}
}

// TestCompareCosts_PricesEmptyNeedles: cel-go charges contains() and
// matches() by the product of the string's size and the substring's or
// pattern's, the call alone for an empty one, but its tracker counted the
// string whole to find the product: s.contains("") once per element of
// 16,000, on a 500 KB string, 1.6 s under the default limits. The
// program's estimator now prices these calls, at cel-go's price.
func TestCompareCosts_PricesEmptyNeedles(t *testing.T) {
	long := types.String(strings.Repeat("é", 300_000))
	std := cost.StandardOverloadTrackers()
	for _, overload := range []string{overloads.ContainsString, overloads.MatchesString, overloads.Matches} {
		args := []ref.Val{long, types.String("")}
		got := compareCosts{}.CallCost(overload, overload, args, types.True)
		if assert.NotNil(t, got, overload) {
			assert.Equal(t, *std[overload](args, types.True), *got, overload)
		}
	}
}

// TestSearchCostsAsCEL: the cost and verdict of contains() and matches()
// over long strings and empty ones, on either side, are cel-go's.
func TestSearchCostsAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.StringType), cel.Variable("y", cel.StringType))
	require.NoError(t, err)
	vals := []string{"", "a", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 40), strings.Repeat("€", 100),
		strings.Repeat("\xff", 100), strings.Repeat("a", 300), "(", "^a*$"}
	for _, src := range []string{"x.contains(y)", "x.matches(y)", "matches(x, y)", "x.contains('')", "x.matches('')",
		"[x, y].all(v, v.contains(''))", "dyn(x).contains(dyn(y))"} {
		decidesAsCEL(t, env, src, vals, nil, trackComparisons)
	}
}

// TestIndexOfCostsAsCEL: indexOf and lastIndexOf decide as cel-go does,
// and cost what the ext strings library charges (trackIndexOf replaces
// its trackers with its own model), but for an empty needle in a string
// longer than shortString, which costs a unit per ten bytes of it, more
// than the library's unit.
func TestIndexOfCostsAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.StringType), cel.Variable("y", cel.StringType), ext.Strings())
	require.NoError(t, err)
	vals := []string{"", "a", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 40),
		strings.Repeat("€", 100), strings.Repeat("\xff", 100), strings.Repeat("ab", 150) + "c", "bc"}
	for _, src := range []string{"x.indexOf(y)", "x.lastIndexOf(y)", "x.indexOf(y, 1)", "x.lastIndexOf(y, 1)",
		"x.indexOf('')", "[x, y].all(v, v.indexOf(y) >= -1)", "dyn(x).indexOf(dyn(y))"} {
		decidesAsCEL(t, env, src, vals, func(x, y any) bool { // an empty needle in a long string costs more
			xs, ys := x.(string), y.(string)
			return len(xs) <= shortString || ys != "" && !strings.Contains(src, "''")
		}, trackComparisons, trackIndexOf)
	}
}

// decidesAsCEL evaluates src over every pair of vals as x and y, with
// plain cel-go's tracking and with ours (the options), and holds ours to
// cel-go's verdict and error, and to its cost where sameCost says so (nil:
// for every pair), more than it elsewhere.
func decidesAsCEL[V any](t *testing.T, env *cel.Env, src string, vals []V, sameCost func(x, y any) bool, ours ...cel.ProgramOption) {
	t.Helper()
	ast, iss := env.Compile(src)
	require.NoError(t, iss.Err(), src)
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
	plain, err := env.Program(ast, opts...)
	require.NoError(t, err, src)
	prg, err := env.Program(ast, append(opts, ours...)...)
	require.NoError(t, err, src)
	for _, x := range vals {
		for _, y := range vals {
			in := map[string]any{"x": x, "y": y}
			want, wantDet, wantErr := plain.Eval(in)
			got, gotDet, gotErr := prg.Eval(in)
			assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %.20q, y = %.20q", src, x, y)
			assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s, x = %.20q, y = %.20q", src, x, y)
			if sameCost == nil || sameCost(x, y) {
				assert.Equal(t, *wantDet.ActualCost(), *gotDet.ActualCost(), "%s, x = %.20q, y = %.20q", src, x, y)
			} else {
				assert.Greater(t, *gotDet.ActualCost(), *wantDet.ActualCost(), "%s, x = %.20q, y = %.20q", src, x, y)
			}
		}
	}
}
