package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtDiffVals are values of x and y for the differential tests of the
// calls that count the strings of values cel-go built: numbers of the
// three kinds that CEL finds equal (1, 1.0, 1u), NaN, maps keyed by int,
// uint, bool and string, nested lists and maps, null.
var builtDiffVals = []any{
	nil, "a", "", 1, 1.0, uint(1), 2, math.NaN(), true, false,
	[]any{}, []any{"a"}, []any{1}, []any{1.0}, []any{uint(1)}, []any{math.NaN()}, []any{nil}, []any{"a", 1},
	[]any{[]any{"a"}}, []any{map[string]any{"k": "a"}}, []any{[]any{1.0}, uint(1)},
	map[string]any{}, map[string]any{"k": "a"}, map[string]any{"k": 1}, map[string]any{"k": math.NaN()},
	map[string]any{"k": []any{"a", 1}}, map[int64]any{1: "a"}, map[uint64]any{1: "a"}, map[bool]any{true: "a"},
	map[int64]any{1: 1.0}, map[uint64]any{1: 1},
}

// TestBuiltComparisonsDecideAsCEL_Kinds: equalCall and inListCall give
// cel-go's verdicts and errors over numbers of every kind, NaN, maps of
// every key type, optionals, nested and concatenated lists, and operands
// that are errors (no such key, a division by zero).
func TestBuiltComparisonsDecideAsCEL_Kinds(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Lists())
	require.NoError(t, err)
	for _, src := range []string{
		"[x] == [y]", "[x] != [y]", "[[x]] == [[y]]", "[x, [x]] == [y, [y]]", "{'k': x} == {'k': y}", "{'k': [x]} != {'k': [y]}",
		"{x: 1} == {y: 1}", "dyn({1: x}) == dyn({1u: y})", "dyn({1: x}) == dyn({true: y})", "{true: x} == {true: y}",
		"{x: 'v'} == y", "x == {y: 'v'}", "[x] == y", "y == [x]", "{'k': x} == y", "[x, y] == y", "[y] + [x] == [x] + [y]",
		"optional.of(x) == optional.of(y)", "optional.of([x]) == optional.of([y])", "[optional.of(x)] == [optional.of(y)]",
		"[optional.of(x)] == [y]", "[optional.none()] != [optional.of(y)]", "optional.of(x) == y", "[{'a': x}[?'a']] == [{'a': y}[?'a']]",
		"[{'a': 1}[x]] == [y]", "[x] == [{'a': 1}[y]]", "[x / 0] == [y]", "[x] == [y / 0]", "[x.missing] == [y]", "{'k': x} == {'k': y.k}",
		"x in [y]", "x in [y, x]", "x in [[y]]", "[x] in [[y], [x]]", "x in [y] + [x]", "x in y + [x]", "x in y.map(e, e)",
		"{'k': x} in [{'k': y}]", "optional.of(x) in [optional.of(y)]", "x in [y, y / 0]", "x.missing in [y]", "x in [y.missing]",
		"[x] in [y]", "x in y",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := builtComparisons(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		metered, err := env.Program(ast, append(opts, meterBuiltComparisons(env, ids), trackComparisons)...)
		require.NoError(t, err, src)
		for _, x := range builtDiffVals {
			for _, y := range builtDiffVals {
				in := map[string]any{"x": x, "y": y}
				want, _, wantErr := plain.Eval(in)
				got, _, gotErr := metered.Eval(in)
				if wantErr != nil || gotErr != nil {
					assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v, y = %v", src, x, y)
					continue
				}
				assert.Equal(t, want, got, "%s, x = %v, y = %v", src, x, y)
			}
		}
	}
}

// TestBuiltSetsDecideAsCEL_Kinds: setCall gives cel-go's verdicts,
// results and errors over the same values.
func TestBuiltSetsDecideAsCEL_Kinds(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Lists(), ext.Sets())
	require.NoError(t, err)
	for _, src := range []string{
		"[x, y].distinct()", "[x, y, x].distinct()", "[[x], [y]].distinct()", "[{'k': x}, {'k': y}].distinct()",
		"[optional.of(x), optional.of(y)].distinct()", "([x] + [y]).distinct()", "x.distinct()",
		"sets.contains([x], [y])", "sets.contains([x, 1], [y])", "sets.contains([[x]], [[y]])", "sets.intersects([x], [y])",
		"sets.equivalent([x, y], [y, x])", "sets.equivalent([x], [y])", "sets.contains(x, [y])", "sets.contains([x], y)",
		"sets.intersects(x, [y])", "[x].hasAll([y])", "[x].hasAny([y])", "[x].hasOnly([y])", "[x, y].hasExactly([y, x])",
		"[{x: 1}].hasAny([{y: 1}])", "[x, y / 0].distinct()", "sets.contains([x], [y.missing])",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := builtSets(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		metered, err := env.Program(ast, append(opts, meterBuiltSets(env, ids), trackComparisons)...)
		require.NoError(t, err, src)
		for _, x := range builtDiffVals {
			for _, y := range builtDiffVals {
				in := map[string]any{"x": x, "y": y}
				want, _, wantErr := plain.Eval(in)
				got, _, gotErr := metered.Eval(in)
				if wantErr != nil || gotErr != nil {
					assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v, y = %v", src, x, y)
					continue
				}
				assert.Equal(t, want.Type(), got.Type(), "%s, x = %v, y = %v", src, x, y)
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s, x = %v, y = %v", src, x, y)
			}
		}
	}
}

// TestConstMapsDecideAsCEL_Kinds: in and index of a map of constants
// (lenMap) give cel-go's verdicts, errors and costs for keys
// of every kind, numbers CEL finds equal to them, NaN and strings of
// every length.
func TestConstMapsDecideAsCEL_Kinds(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.OptionalTypes(), cel.CrossTypeNumericComparisons(true))
	require.NoError(t, err)
	xs := append([]any{"d", "dd", "ddd", -1, 2.0, uint(2), 3.5, 1e300, uint64(math.MaxUint64), int64(math.MinInt64)}, builtDiffVals...)
	for _, src := range []string{
		"x in {1: 'a', 2u: 'b', true: 'c', 'd': 1, 'ee': 2}", "x in {'d': 1}", "x in {1: 1}", "x in {2u: 1}", "x in {false: 1}",
		"{1: 'a', 2u: 'b', true: 'c', 'd': 1, 'ee': 2}[x]", "{1: 'a', 2u: 'b', true: 'c', 'd': 1}[?x]", "{'d': 1}[x] == 1",
		"{1: 'a'}[?x].orValue('z')", "{2u: 'b'}[x]", "{true: 1}[x]",
		"{'d': 1}[x] == 1 || true", "x in {'d': 1} && x in {'dd': 1}",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		ids := lookedUpMaps(ast)
		require.NotNil(t, ids, src)
		prg, err := env.Program(ast, append(opts, buildLookedUpMaps(ids))...)
		require.NoError(t, err, src)
		for _, x := range xs {
			want, wantDet, wantErr := plain.Eval(map[string]any{"x": x})
			got, gotDet, gotErr := prg.Eval(map[string]any{"x": x})
			assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v", src, x)
			if types.IsError(want) { // an error's key NaN is not DeepEqual to itself
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s, x = %v", src, x)
			} else {
				assert.Equal(t, want, got, "%s, x = %v", src, x)
			}
			assert.Equal(t, *wantDet.ActualCost(), *gotDet.ActualCost(), "%s, x = %v", src, x)
		}
	}
}

// TestBuiltMapsDecideAsCEL_Kinds: the maps a rule builds from values of
// the data, metered (mapKeyNode, builtMap, constLenMap), give cel-go's
// verdicts, results and errors for keys of every kind (int, uint, bool,
// string, and the types a key cannot be), numbers CEL finds equal, NaN,
// duplicate keys (the last one wins), optional entries, lookups by in,
// index and optional index, and equality; and cost what cel-go charges
// when no string is longer than shortString.
func TestBuiltMapsDecideAsCEL_Kinds(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Lists())
	require.NoError(t, err)
	long, long2 := strings.Repeat("k", 100), strings.Repeat("k", 99)+"j"
	vals := append([]any{long, long2, uint(2), 1.5, map[string]any{long: 1}, []any{long}}, builtDiffVals...)
	for _, src := range []string{
		"x in {y: 1}", "!(x in {y: 1})", "{y: 1}[x]", "{y: 1}[?x]", "{y: 1}[?x].orValue(0) == 0", "{y: 1, 'a': 2}[x]",
		"{x: 1} == {y: 1}", "{x: 1} != {y: 1}", "{x: 1, y: 2} == {y: 2, x: 1}", "{x: 1, y: 2}.size()", "{x: 1, y: 2}[x]", "{x: 1, 1: 2}[y]",
		"{?x: optional.of(1)}[x]", "{?x: optional.none()}.size()", "{?x: optional.of(y)}[x]", "{?x: y}.size()", "{?x: {y: 1}[?x]}[?y]",
		"{'a': x}[y]", "y in {'a': x}", "{'a': x}[?y].hasValue()", "{x: y} == {y: x}", "[{x: 1}][0][y]", "{x: 1} == {'a': 1}",
		"{'a': 1} == {x: 1}", "{x: {y: 1}}[x][y]", "{x: 1}.all(k, k == x)", "{x: 1}.exists(k, k in {y: 1})", "x in {x: 1}",
		"{x: 1} in [{y: 1}]", "{x: 1}[y] == 1", "{x: 1} == y", "y == {x: 1}", "{x: 1} == {x: 1}", "{1: x}[y]", "{x / 0: 1}[y]",
		"{x.missing: 1}.size()", "{x: y.missing}.size()", "{x: 1}[y.missing]", "{[x][0]: 1}[y]", "{{'k': x}['k']: 1}[?y]", "{x: 1, y: 1} == {y: 1, x: 1}",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		maps, keys := builtMaps(ast, lookedUpMaps(ast))
		require.NotNil(t, maps, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		planned := 0
		spy := cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
			switch i.(type) {
			case builtMapNode, mapKeyNode, mapKeyAttr:
				planned++
			}
			return i, nil
		})
		metered, err := env.Program(ast, append(opts, meterBuiltMaps(maps, keys), spy, trackComparisons)...)
		require.NoError(t, err, src)
		assert.Positive(t, planned, src)
		for _, x := range vals {
			for _, y := range vals {
				in := map[string]any{"x": x, "y": y}
				want, wantDet, wantErr := plain.Eval(in)
				got, gotDet, gotErr := metered.Eval(in)
				assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v, y = %v", src, x, y)
				if wantErr != nil || gotErr != nil {
					continue
				}
				assert.Equal(t, want.Type(), got.Type(), "%s, x = %v, y = %v", src, x, y)
				if types.IsError(want) || types.IsUnknown(want) {
					assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s, x = %v, y = %v", src, x, y)
				} else if types.Equal(want, got) != types.True { // NaN is equal to nothing
					assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "%s, x = %v, y = %v", src, x, y)
				}
				if !longIn(x) && !longIn(y) {
					assert.Equal(t, *wantDet.ActualCost(), *gotDet.ActualCost(), "%s, x = %v, y = %v", src, x, y)
				}
			}
		}
	}
}

// longIn reports whether v holds a string longer than shortString.
func longIn(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) > shortString
	case []any:
		for _, e := range v {
			if longIn(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if len(k) > shortString || longIn(e) {
				return true
			}
		}
	}
	return false
}

// TestRequestMapsDecideAsCEL: the request's maps of strings and a
// context.user of strings, read in a tracked evaluation as builtMaps,
// give the verdicts (and errors or not) of cel-go over the same Go maps.
func TestRequestMapsDecideAsCEL(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1 << 40, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	plainEnv, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)), cel.OptionalTypes())
	require.NoError(t, err)
	long := strings.Repeat("k", 100)
	many := map[string]string{"a": "b", long: "l"}
	for i := range 20 {
		many[fmt.Sprint("h", i)] = "v"
	}
	for _, rule := range []string{
		"request.body.s in request.headers", "request.headers[request.body.s] == 'b'", "request.query[?request.body.s].orValue('-') == 'l'",
		"request.params[?request.body.s].hasValue()", "request.body.s in context.user", "context.user[request.body.s] == 'v'",
		"context.user[?request.body.s].orValue('-') == '-'", "request.headers == request.query", "request.headers == {'a': 'b'}",
		"{'a': 'b'} != request.params", "request.headers.all(k, k in request.query && request.query[k] == request.headers[k])",
		"has(request.headers.a) && request.headers.a == 'b'", "request.query.size() == 22", "request.headers.exists(k, k == request.body.s)",
		"[request.headers][0][request.body.s] == 'b'", "{request.body.s: 1} == {request.body.s: 1}",
	} {
		p, plain := trackedAndPlain(t, ce, plainEnv, rule)
		for _, s := range []string{"a", "h3", long, strings.Repeat("k", 99) + "j", "", "zz"} {
			b, err := json.Marshal(map[string]string{"s": s})
			require.NoError(t, err)
			got, gotErr := p.Eval(&Activation{Body: doc(t, string(b)), Src: &src{params: many, query: many, headers: many, user: many}})
			want, _, wantErr := plain.Eval(map[string]any{
				"request": map[string]any{"body": map[string]any{"s": s}, "params": many, "query": many, "headers": many},
				"context": map[string]any{"user": many},
			})
			if wantErr != nil || gotErr != nil {
				assert.Equal(t, wantErr != nil, gotErr != nil, "%s, s = %q: %v, %v", rule, s, wantErr, gotErr)
				continue
			}
			assert.Equal(t, want, types.Bool(got), "%s, s = %q", rule, s)
		}
	}
}

// TestRequestMapsDecideAsCEL_Shapes: the request's maps, context.user and
// the maps a rule builds, read in a tracked evaluation as builtMaps,
// give cel-go's verdicts (and errors or not) in the shapes
// TestRequestMapsDecideAsCEL leaves out: size(), comprehensions over
// their keys, optional selection, dyn() and type(), equality with the
// body's objects and maps built, either side, maps inside lists and as
// values of maps, sets and distinct() of them, format(), maps built in a
// comprehension and used after it; with 22 or 2 entries, and bodies of
// 22, 2 or no members.
func TestRequestMapsDecideAsCEL_Shapes(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1 << 40, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	plainEnv, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Strings(), ext.Math(), ext.Lists(), ext.Sets())
	require.NoError(t, err)
	long := strings.Repeat("k", 100)
	many := map[string]string{"a": "b", long: "l"}
	for i := range 20 {
		many[fmt.Sprint("h", i)] = "v"
	}
	few := map[string]string{"a": "b", long: "l"}
	for _, rule := range []string{
		"request.headers.size() == 22", "size(request.query) == 22", "request.headers.map(k, k).size() == 22",
		"request.headers.exists_one(k, k == request.body.s)", "request.headers.filter(k, k == request.body.s).size() == 1",
		"request.headers.?a.orValue('') == 'b'", "request.headers.?zz.orValue('-') == '-'",
		"dyn(request.headers)[request.body.s] == 'b'", "type(request.headers) == map", "type(context.user) == map",
		"request.body.m == request.headers", "request.headers == request.body.m", "request.body.m != request.query",
		"[request.headers] == [request.query]", "request.headers in [request.query]", "request.query in [request.body.m]",
		"{'h': request.headers}['h'][request.body.s] == 'b'", "{'h': request.headers} == {'h': request.query}",
		"{'h': request.headers} == {'h': request.body.m}", "{'h': request.body.m} == {'h': request.headers}",
		"'%s'.format([request.headers]) == '%s'.format([request.body.m])",
		"request.headers.all(k, request.headers[k] == request.query[k])", "context.user == request.headers",
		"request.headers == context.user", "{request.body.s: request.headers}[request.body.s] == request.query",
		"sets.contains([request.headers], [request.query])", "[request.headers, request.query].distinct().size() == 1",
		"request.params == {}", "request.params != {request.body.s: 'b'}", "request.headers.exists(k, k in {request.body.s: 1})",
		"{request.body.s: 1}.exists(k, k in request.headers)", "optional.of(request.headers).value()[request.body.s] == 'b'",
		"[request.headers][0] == request.query", "has(request.headers.zz)", "request.headers.zz == ''",
		"request.headers[request.body.s] == request.query[request.body.s]", "request.body.s in request.headers && request.headers[request.body.s] == 'b'",
		"{request.body.s: 1} == request.body.m", "request.body.m == {request.body.s: 'b'}", "{request.body.s: 'b'} == request.body.m",
		"[{request.body.s: 1}, {request.body.s: 1}].distinct().size() == 1", "[{request.body.s: 1}] == [{request.body.s: 1}]",
		"{request.body.s: 1} in [{request.body.s: 1}]", "{request.body.s: {request.body.s: 1}} == {request.body.s: {request.body.s: 1}}",
		"request.headers[?request.body.s].orValue('') == request.body.m[?request.body.s].orValue('')",
		"dyn(request.headers) == dyn(request.query)", "request.headers.map(k, request.headers[k]).size() == 22",
		"context.user.all(k, k in request.headers)", "context.user[request.body.s] == request.headers[request.body.s]",
		"request.headers.exists(k, k == request.body.s) == (request.body.s in request.headers)",
		"lists.range(3).map(i, {request.body.s: i}).all(m, request.body.s in m)",
		"[request.body.s].map(k, {k: 1})[0] == {request.body.s: 1}",
		"{request.body.s: 1}.size() == 1 && {request.body.s: 1, 'x': 2}.size() >= 1",
	} {
		p, plain := trackedAndPlain(t, ce, plainEnv, rule)
		for _, hdr := range []map[string]string{many, few} {
			for _, mm := range []map[string]string{many, few, {}} {
				for _, s := range []string{"a", "h3", long, strings.Repeat("k", 99) + "j", "", "zz"} {
					b, err := json.Marshal(map[string]any{"s": s, "m": mm})
					require.NoError(t, err)
					got, gotErr := p.Eval(&Activation{Body: doc(t, string(b)), Src: &src{params: hdr, query: many, headers: hdr, user: many}})
					pm := map[string]any{}
					for k, v := range mm {
						pm[k] = v
					}
					want, _, wantErr := plain.Eval(map[string]any{
						"request": map[string]any{"body": map[string]any{"s": s, "m": pm}, "params": hdr, "query": many, "headers": hdr},
						"context": map[string]any{"user": many},
					})
					if wantErr != nil || gotErr != nil {
						assert.Equal(t, wantErr != nil, gotErr != nil, "%s, s = %q: %v, %v", rule, s, wantErr, gotErr)
						continue
					}
					assert.Equal(t, want, types.Bool(got), "%s, s = %q", rule, s)
				}
			}
		}
	}
}

// trackedAndPlain is rule compiled in ce, which must track it, and
// planned by plain cel-go in plainEnv.
func trackedAndPlain(t *testing.T, ce *ContractEnv, plainEnv *cel.Env, rule string) (*Program, cel.Program) {
	t.Helper()
	p, err := ce.Compile(rule)
	require.NoError(t, err, rule)
	require.True(t, p.Tracked(), rule)
	ast, iss := plainEnv.Compile(rule)
	require.NoError(t, iss.Err(), rule)
	plain, err := plainEnv.Program(ast, cel.EvalOptions(cel.OptOptimize))
	require.NoError(t, err, rule)
	return p, plain
}
