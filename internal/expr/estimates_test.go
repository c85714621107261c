package expr

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/schema"
)

// genSchema is a body schema for the generator's names (a, b, x, y), from
// the bits of seed: each an integer, a number, a string (more often than
// the others) or an array, most with a bound, or an object of the same
// names one level down.
func genSchema(t testing.TB, seed uint64) *schema.Schema {
	next := func(n uint64) uint64 {
		v := seed % n
		seed /= n
		return v
	}
	var props func(depth int) string
	prop := func(depth int) string {
		bound := func(kw string) string {
			if next(3) == 0 {
				return ""
			}
			return fmt.Sprintf(`,%q:%d`, kw, 1+next(200))
		}
		switch next(7) {
		case 0:
			return `{"type":"integer"}`
		case 1:
			return `{"type":"number"}`
		case 2, 3:
			return `{"type":"string"` + bound("maxLength") + `}`
		case 4:
			return `{"type":"array","items":{"type":"integer"}` + bound("maxItems") + `}`
		case 5:
			return `{"type":"array","items":{"type":"string"` + bound("maxLength") + `}` + bound("maxItems") + `}`
		}
		if depth > 0 {
			return `{"type":"integer"}`
		}
		return `{"type":"object","properties":` + props(depth+1) + bound("maxProperties") + `}`
	}
	props = func(depth int) string {
		var ps []string
		for _, n := range genNames {
			ps = append(ps, fmt.Sprintf("%q:%s", n, prop(depth)))
		}
		return "{" + strings.Join(ps, ",") + "}"
	}
	return compileSchema(t, `{"type":"object","properties":`+props(0)+`}`)
}

// shapedExpr writes an expression of the kinds that have a shape (no
// index, no comprehension) from data: fields of the body one or two deep,
// request.params and context, literals of every kind, comparisons,
// arithmetic, logic, has, size, string functions and in over a list.
// alt changes the integers it writes, and nothing else: the same data
// with another alt is the same expression with other numbers.
func shapedExpr(data []byte, alt int) string {
	g := &exprGen{data: data}
	nums := []string{"0", "1", "2", "7", "30", "100"}
	num := func() string { return nums[(g.pick(len(nums))+alt)%len(nums)] }
	path := func() string {
		switch g.pick(8) {
		case 0:
			return "request.params." + g.from(genNames)
		case 1:
			return "context." + g.from(genNames)
		case 2, 3:
			return "request.body." + g.from(genNames) + "." + g.from(genNames)
		}
		return "request.body." + g.from(genNames)
	}
	lits := []string{"0", "1", "7", "-3", "100", "2u", "1.5", "0.0", "'x'", "'abc'", "''", "true", "null", "b'ab'"}
	var value func(depth int) string
	value = func(depth int) string {
		switch c := g.pick(9); {
		case depth > 2 || c < 3:
			return path()
		case c == 3:
			return num()
		case c == 4:
			return g.from(lits)
		case c == 5:
			return "size(" + path() + ")"
		case c == 6:
			return "(" + value(depth+1) + " " + g.from([]string{"+", "-", "*", "/", "%"}) + " " + value(depth+1) + ")"
		case c == 7:
			switch g.pick(4) {
			case 0:
				return path() + ".substring(" + num() + ")"
			case 1:
				return path() + ".substring(" + num() + ", " + num() + ")"
			}
			return path() + "." + g.from([]string{"lowerAscii()", "trim()", "join(',')"})
		}
		return "-" + value(depth+1)
	}
	var cond func(depth int) string
	cond = func(depth int) string {
		switch c := g.pick(8); {
		case depth > 2 || c < 3:
			return "(" + value(0) + " " + g.from(genRelOps) + " " + value(0) + ")"
		case c == 3:
			return "has(" + path() + ")"
		case c == 4:
			return "(" + cond(depth+1) + " " + g.from([]string{"&&", "||"}) + " " + cond(depth+1) + ")"
		case c == 5:
			return "!" + cond(depth+1)
		case c == 6:
			return path() + "." + g.from([]string{"startsWith", "endsWith", "contains"}) + "(" + g.from(lits) + ")"
		}
		return "(" + value(0) + " in [" + g.from(lits) + ", " + g.from(lits) + "])"
	}
	return cond(0)
}

// estimatesAgree checks src in a contract of body s, then estimates it
// through m and by cel-go alone: the same estimate, or the same error.
// It reports whether src has a shape.
func estimatesAgree(t *testing.T, env *Env, m *Estimates, s *schema.Schema, src string) bool {
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	a, err := checked(env, ce.env, src, nil)
	if err != nil {
		return false
	}
	_, shaped := shapeOf(a.NativeRep(), ce.sizes)
	want, wantErr := env.env.EstimateCost(a, ce.sizes)
	got, gotErr := m.estimate(env.env, a, ce.sizes)
	require.Equal(t, wantErr, gotErr, src)
	require.Equal(t, want, got, "%s (shape: %v)", src, shaped)
	return shaped
}

// TestEstimates_AsCEL: expressions made by the generator, each over
// bodies of twelve random schemas, through one memory of estimates, so
// that expressions of one shape with other fields, bounds and numbers
// meet: every estimate is cel-go's, and shapes repeat. A third are the
// native generator's (most with an index or a comprehension: no shape),
// the rest shapedExpr's, each with three sets of numbers.
func TestEstimates_AsCEL(t *testing.T) {
	env := nativeEnv(t)
	m := env.NewEstimates()
	var schemas []*schema.Schema
	for i := range 12 {
		schemas = append(schemas, genSchema(t, uint64(i+1)*0x9e3779b97f4a7c15))
	}
	checked, shaped := 0, 0
	for i := range 400 {
		var b [24]byte
		for j := range 3 {
			binary.LittleEndian.PutUint64(b[8*j:], uint64(i+1)*0xbf58476d1ce4e5b9*uint64(j+1))
		}
		srcs := []string{(&exprGen{data: b[:]}).top()}
		if i%3 != 0 { // one expression with other numbers
			srcs = []string{shapedExpr(b[:], 0), shapedExpr(b[:], 1), shapedExpr(b[:], 2)}
		}
		for _, src := range srcs {
			for _, s := range schemas { // over bodies of other types and bounds
				if estimatesAgree(t, env, m, s, src) {
					shaped++
				}
				checked++
			}
		}
	}
	shapes := 0
	m.m.Range(func(any, any) bool { shapes++; return true })
	t.Logf("%d expressions, %d with a shape, %d shapes", checked, shaped, shapes)
	assert.Greater(t, shaped, 1000, "expressions with a shape")
	assert.Less(t, shapes, shaped/2, "shapes repeat")
}

// TestEstimates_Shapes: what a shape keeps and what it leaves out.
func TestEstimates_Shapes(t *testing.T) {
	env := nativeEnv(t)
	s := compileSchema(t, `{"type":"object","properties":{
		"a":{"type":"integer"},"b":{"type":"integer"},"f":{"type":"number"},
		"s":{"type":"string","maxLength":4},"t":{"type":"string","maxLength":400},"u":{"type":"string","maxLength":4},
		"l":{"type":"array","items":{"type":"integer"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	shape := func(src string) string {
		a, err := checked(env, ce.env, src, nil)
		require.NoError(t, err, src)
		k, ok := shapeOf(a.NativeRep(), ce.sizes)
		if !ok {
			return ""
		}
		return k
	}
	same := [][2]string{
		{"request.body.a <= 100", "request.body.b <= 7"},
		{"request.body.a * 2 < request.body.b - 1", "request.body.b * 9 < request.body.a - 3"},
		{"request.body.s == 'x'", "request.body.u == 'x'"}, // the same bound
		{"request.body.f >= 1.5 && has(request.body.a)", "request.body.f >= 0.0 && has(request.body.b)"},
	}
	for _, p := range same {
		assert.NotEmpty(t, shape(p[0]), p[0])
		assert.Equal(t, shape(p[0]), shape(p[1]), "%s / %s", p[0], p[1])
	}
	differ := [][2]string{
		{"request.body.s == 'x'", "request.body.t == 'x'"},                           // the bounds differ
		{"request.body.s == 'x'", "request.body.s == 'xy'"},                          // a string's size
		{"request.body.a <= 100", "request.body.f <= 100.0"},                         // the types
		{"request.body.a <= 100", "request.body.a >= 100"},                           // the operator
		{"request.body.a <= 100", "context.a <= 100"},                                // the variable
		{"request.body.s.substring(1) == 'b'", "request.body.s.substring(2) == 'b'"}, // a number where the estimate could read it
	}
	for _, p := range differ {
		assert.NotEqual(t, shape(p[0]), shape(p[1]), "%s / %s", p[0], p[1])
	}
	for _, src := range []string{"request.body.l.all(x, x > 0)", "request.body.l[0] == 1", "{'a': 1}.a == request.body.a",
		"request.body.a in [1, 2]", "size(request.body.l) < 3", "request.params.id == 'a'", "context.a == 1"} {
		assert.Empty(t, shape(src), "%s has no shape", src)
	}
}

// TestEstimates_ListElementBounds: two lists alike but for the bound of
// their elements, under a model that reads it (join's result is at most
// the elements' total): the two estimates differ by orders of magnitude,
// and each is cel-go's whichever is estimated first. (A shape that kept
// only a node's own size gave the second the first's estimate: a cost
// limit passed by.)
func TestEstimates_ListElementBounds(t *testing.T) {
	env := nativeEnv(t)
	s := compileSchema(t, `{"type":"object","properties":{
		"t1":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":1}},
		"t2":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10000}}}}`)
	exprs := []string{"request.body.t1.join(',').contains('x')", "request.body.t2.join(',').contains('x')"}
	for _, order := range [][]string{exprs, {exprs[1], exprs[0]}} {
		m := env.NewEstimates()
		for _, src := range order {
			estimatesAgree(t, env, m, s, src)
		}
	}
}

// TestEstimates_BoundTheLongestList: a rule over a list the schema does
// not bound is estimated with as many elements as fit in MaxBodyBytes, by
// the shortest text of an element; the estimate is at least what cel-go
// charges on the longest such list, or a rule could run untracked past
// CELCostLimit. The shortest element was taken a byte longer for each
// array or object in it (a comma counted after the last element), and
// json.Marshal's length for an enum's value (100000 for 1e5, "\u003c" for
// "<"): 20 % to 4.6 times too few elements.
func TestEstimates_BoundTheLongestList(t *testing.T) {
	const limit = 10_000
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: limit})
	require.NoError(t, err)
	for _, c := range []struct{ items, elem string }{
		{`{"type":"array","minItems":1,"items":{"type":"integer"}}`, `[1]`},
		{`{"type":"array","minItems":2,"items":{"type":"array","minItems":1}}`, `[[1],[1]]`},
		{`{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}}`, `{"a":1}`},
		{`{"type":"object","required":["a","b"]}`, `{"a":1,"b":1}`},
		{`{"enum":[100000000]}`, `1e8`},
		{`{"enum":["<<<<<<<<"]}`, `"<<<<<<<<"`},
		{`{"enum":[{"a":[1000,true]}]}`, `{"a":[1e3,true]}`},
		{`{"type":"integer"}`, `1`},
	} {
		s := compileSchema(t, `{"type":"array","items":`+c.items+`}`)
		ce, err := env.ForSchema(s)
		require.NoError(t, err)
		const src = "request.body.all(x, true)"
		ast, err := checked(env, ce.env, src, nil)
		require.NoError(t, err)
		est, err := env.env.EstimateCost(ast, ce.sizes)
		require.NoError(t, err)
		prg, err := env.env.Program(ast, cel.CostTracking(nil))
		require.NoError(t, err)
		n := (limit - 1) / (len(c.elem) + 1)
		body := "[" + strings.TrimSuffix(strings.Repeat(c.elem+",", n), ",") + "]"
		require.LessOrEqual(t, len(body), limit)
		out, det, err := prg.Eval(&Activation{Body: doc(t, body), Shape: s.Numbers()})
		require.NoError(t, err, c.items)
		require.Equal(t, true, out.Value(), c.items)
		assert.GreaterOrEqual(t, est.Max, *det.ActualCost(), "%s: %d elements %s", c.items, n, c.elem)
	}
}

// TestEstimates_OneEnvironment: a value without a path (an int written as
// a string) is sized by the environment's MaxBodyBytes, which a shape
// leaves out; a memory handed to two environments remembers the
// estimates of the one that made it only, and each environment gets its
// own.
func TestEstimates_OneEnvironment(t *testing.T) {
	small, err := NewEnv(Config{CostLimit: math.MaxInt64, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 10})
	require.NoError(t, err)
	large, err := NewEnv(Config{CostLimit: math.MaxInt64, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object"}`)
	const src = "string(size(request.method)) == request.path"
	m := small.NewEstimates()
	for _, env := range []*Env{small, large, small} {
		assert.True(t, estimatesAgree(t, env, m, s, src))
	}
	ce, err := small.ForSchema(s)
	require.NoError(t, err)
	a, err := checked(small, ce.env, src, nil)
	require.NoError(t, err)
	ceL, err := large.ForSchema(s)
	require.NoError(t, err)
	aL, err := checked(large, ceL.env, src, nil)
	require.NoError(t, err)
	k, _ := shapeOf(a.NativeRep(), ce.sizes)
	kL, _ := shapeOf(aL.NativeRep(), ceL.sizes)
	require.Equal(t, k, kL, "one shape in both")
	e1, _ := small.env.EstimateCost(a, ce.sizes)
	e2, _ := large.env.EstimateCost(aL, ceL.sizes)
	require.NotEqual(t, e1, e2, "estimates that differ")
}

// FuzzEstimatesVsCEL: a generated expression over a body of a random
// schema, estimated through a memory shared by the whole run and by
// cel-go alone: the same estimate every time.
func FuzzEstimatesVsCEL(f *testing.F) {
	env, err := NewEnv(Config{CostLimit: 200_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 16})
	require.NoError(f, err)
	memory := env.NewEstimates() // shared by every input the process runs, so that inputs of one shape meet
	f.Add([]byte("\x00\x07\x02\x01\x03"), uint64(1))
	f.Add([]byte("\x00\x00\x00\x06\x01\x0b\x00\x02\x00\x06"), uint64(77))
	f.Add([]byte("\x03\x02\x00\x08\x00\x03\x09\x01\x00\x07"), uint64(1<<40+3))
	f.Fuzz(func(t *testing.T, exprBytes []byte, schemaSeed uint64) {
		srcs := []string{(&exprGen{data: exprBytes}).top()}
		if schemaSeed%3 != 0 { // one expression with other numbers
			srcs = []string{shapedExpr(exprBytes, 0), shapedExpr(exprBytes, int(schemaSeed%5)+1)}
		}
		for _, src := range srcs {
			for i := range uint64(3) { // over bodies of other types and bounds
				estimatesAgree(t, env, memory, genSchema(t, schemaSeed/3+i*0x9e3779b97f4a7c15), src)
			}
		}
	})
}
