package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

// objects is a list of n objects that differ only in their last member,
// z, last in the body and in sorted order: a comparison of two of them
// reads every other member first. nested: each has one other member, x,
// an object of m members; else m members of its own.
func objects(n, m int, nested bool) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		if nested {
			b.WriteString(`"x":{`)
		}
		for j := range m {
			b.WriteString(`"k` + strconv.Itoa(j) + `":0,`)
		}
		if nested {
			b.WriteString(`"k":0},`)
		}
		b.WriteString(`"z":` + strconv.Itoa(i) + `}`)
	}
	b.WriteByte(']')
	return b.String()
}

// TestEval_CostLimitBoundsComparisons: comparing objects and lists does
// work in proportion to their nested sizes, which the cost limit must
// bound as it bounds any other work. Each rule here would take from half
// a second to seconds uncharged; charged, it stops at the limit and fails
// closed, tracked whether or not its estimate is within the limit.
func TestEval_CostLimitBoundsComparisons(t *testing.T) {
	contract := func(maxItems int, maxEstimated uint64) *ContractEnv {
		env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: maxEstimated, MaxBodyBytes: 1 << 20})
		require.NoError(t, err)
		s := compileSchema(t, `{"type":"object","properties":{
			"objs":{"type":"array","maxItems":`+strconv.Itoa(maxItems)+`,"items":{"type":"object"}},
			"other":{"type":"array","maxItems":`+strconv.Itoa(maxItems)+`,"items":{"type":"object"}}}}`)
		ce, err := env.ForSchema(s)
		require.NoError(t, err)
		return ce
	}
	// The defaults refuse the comprehensions below at load; an
	// application may allow them (CELMaxEstimatedCost).
	ce100, ce200, anyEstimate := contract(100, 10_000_000), contract(200, 10_000_000), contract(100, math.MaxUint64)
	// 100 objects of an object of 1,000 members; 200 of 500 members, twice.
	nestedSrc := `{"objs":` + objects(100, 1000, true) + `}`
	flatSrc := `{"objs":` + objects(200, 500, false) + `,"other":` + objects(200, 500, false) + `}`
	require.Less(t, len(nestedSrc), 1<<20, "within the default MaxBodyBytes")
	require.Less(t, len(flatSrc), 2<<20)
	nested, flat := doc(t, nestedSrc), doc(t, flatSrc)
	for _, c := range []struct {
		expr string
		body *jsonbody.Doc
		ce   *ContractEnv
	}{
		{"request.body.objs.all(a, request.body.objs.exists_one(b, a == b))", nested, anyEstimate},
		{"request.body.objs.all(a, request.body.objs.all(b, a == b || a != b))", nested, anyEstimate},
		{"request.body.objs.all(a, request.body.objs.exists(b, a != b && a == b))", nested, anyEstimate},
		{"request.body.objs.all(a, a in request.body.objs.map(o, o))", nested, ce100},
		{"request.body.objs.distinct().size() == request.body.objs.size()", nested, ce100},
		{"request.body.objs.distinct().size() == request.body.objs.size()", flat, ce200},
		{"sets.equivalent(request.body.objs, request.body.other)", flat, ce200},
		{"sets.contains(request.body.objs, request.body.other.reverse())", flat, ce200},
		{"sets.intersects(request.body.objs.filter(o, o.z < 100), request.body.other.filter(o, o.z >= 100))", flat, ce200},
		{"request.body.objs.hasAll(request.body.other.reverse())", flat, ce200},
		{"request.body.objs.map(o, [o]).distinct() == request.body.other.map(o, [o])", flat, ce200},
	} {
		t.Run(c.expr, func(t *testing.T) {
			p, err := c.ce.Compile(c.expr)
			require.NoError(t, err)
			assert.True(t, p.Tracked(), "compares values that may be objects or lists")
			act := &Activation{Body: c.body}
			ok, err := p.Eval(act)
			assert.False(t, ok)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "cost limit")
			assert.LessOrEqual(t, act.meter.total, uint64(100_000)+meterChunk, "comparison work counted past the limit")
		})
	}

}

// TestEval_SmallComparisonsPass: the same rules over a few small objects
// are within the limit, natively and by cel-go, with the verdicts of
// equality.
func TestEval_SmallComparisonsPass(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	body := doc(t, `{"objs":`+objects(5, 3, true)+`,"other":`+objects(5, 3, true)+`}`)
	for expr, want := range map[string]bool{
		"request.body.objs.all(a, request.body.objs.exists_one(b, a == b))":          true,
		"request.body.objs.all(a, request.body.objs.exists(b, a == b))":              true,
		"request.body.objs.all(a, a in request.body.other)":                          true,
		"request.body.objs.distinct().size() == request.body.objs.size()":            true,
		"sets.equivalent(request.body.objs, request.body.other)":                     true,
		"request.body.objs.hasAll(request.body.other.reverse())":                     true,
		"request.body.objs[0] != request.body.objs[1]":                               true,
		"request.body.objs == request.body.other":                                    true,
		"request.body.objs[0].x == request.body.objs[1].x":                           true,
		"request.body.objs.exists(a, request.body.objs.exists(b, a != b && a == b))": false,
	} {
		p, err := env.Compile(expr)
		require.NoError(t, err, expr)
		assert.True(t, p.Tracked(), expr)
		act := &Activation{Body: body}
		ok, err := p.Eval(act)
		require.NoError(t, err, expr)
		assert.Equal(t, want, ok, expr)
		if !p.Native() {
			assert.Positive(t, act.meter.total, "%s: its comparisons are counted", expr)
		} else {
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body} })
			assert.False(t, bailed, expr)
			assert.Equal(t, cel, nat, expr)
		}
	}
}

// TestCompile_TrackedWhereComparingComposites: a rule is tracked when it
// compares values that may be objects or lists, whatever its estimate;
// comparisons with a scalar on one side stop at the top, and stay
// untracked.
func TestCompile_TrackedWhereComparingComposites(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	s := compileSchema(t, `{
		"type":"object",
		"properties":{
			"total":{"type":"number"},
			"name":{"type":"string","maxLength":20},
			"tags":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10}},
			"items":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"qty":{"type":"integer"}}}},
			"a":{"type":"object","maxProperties":3},
			"b":{"type":"object","maxProperties":3}
		}
	}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for expr, tracked := range map[string]bool{
		"request.body.total > 0":                                                 false,
		"request.body.name == 'a'":                                               false,
		"dyn(request.body.a) == 'x'":                                             false, // an object and a string: unequal at once
		"request.body.items.all(i, i.qty > 0 && i.qty != 3)":                     false,
		"'x' in request.body.tags":                                               false,
		"request.body.tags.distinct().size() == 2":                               false, // strings
		"sets.contains(request.body.tags, ['a'])":                                false,
		"request.body.a == request.body.b":                                       true,
		"request.body.a != request.body.b":                                       true,
		"request.body.items[0] in request.body.items":                            true,
		"request.body.items.distinct().size() == 2":                              true,
		"sets.intersects(request.body.items, request.body.items)":                true,
		"request.body.items.hasAny([request.body.items[1]])":                     true,
		"request.body.items.exists(i, i == request.body.items[0])":               true,
		"optional.of(request.body.a) == optional.of(request.body.b)":             true,
		"request.body.items.map(i, [i]).exists(l, l == [request.body.items[0]])": true,
	} {
		p, err := ce.Compile(expr)
		require.NoError(t, err, expr)
		assert.Equal(t, tracked, p.Tracked(), expr)
	}
}

// TestNative_ChargesComparisonUnits: the native path charges the units of
// comparing objects and lists as cel-go's meter counts them: wherever it
// decides, cel-go decides the same within the limit, and the larger
// comparisons it hands over, which cel-go stops at the limit.
func TestNative_ChargesComparisonUnits(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	for _, src := range []string{
		"request.body.a == request.body.b",
		"request.body.a != request.body.b",
		"request.body.a in request.body.l",
		"request.body.l.exists(x, x == request.body.b)",
		"request.body.l.all(x, request.body.l.all(y, x == y))",
	} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		require.True(t, p.Tracked(), src)
		decided, stopped := 0, 0
		for n := 1; n < 3000; n = n*2 + 1 {
			leaves := `{"x":[` + strings.TrimSuffix(strings.Repeat(`{"y":1},`, n), ",") + `]}`
			body := doc(t, `{"a":`+leaves+`,"b":`+leaves+`,"l":[`+leaves+`,`+leaves+`]}`)
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body} })
			if !bailed {
				decided++
				assert.Equal(t, cel, nat, "%s with %d leaves", src, n)
				assert.NotEqual(t, vdError, cel, "%s with %d leaves: within the limit for cel-go too", src, n)
			} else if cel == vdError {
				stopped++
			}
		}
		assert.Positive(t, decided, "%s: the small bodies are decided natively", src)
		assert.Positive(t, stopped, "%s: the large ones are handed to cel-go, which stops them", src)
	}
}

// TestEval_CostLimitBoundsStringComparisons: comparing two strings of the
// same length reads both. Inside in over a list of the body, and inside
// the equality of its lists and objects, that read was charged nothing
// (one unit for the pair, none for in): a rule comparing two strings of
// 500 KB, which differ in their last byte, for each of 16,000 items read
// them 16,000 times before the rule's other costs reached the limit. Now
// the strings' units (scanUnits) are what stop it, after a few reads; on
// short strings the same rules hold, natively and by cel-go.
func TestEval_CostLimitBoundsStringComparisons(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},
		"strs":{"type":"array","items":{"type":"string"}},
		"a":{"type":"array","items":{"type":"string"}},
		"b":{"type":"array","items":{"type":"string"}},
		"o":{"type":"object"},"p":{"type":"object"}}}`)
	body := func(n int, x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", n), ",")+`],"s":"`+x+`a","strs":["`+x+`b"],`+
			`"a":["`+x+`a"],"b":["`+x+`b"],"o":{"k":"`+x+`a"},"p":{"k":"`+x+`b"}}`)
	}
	long, short := body(16000, strings.Repeat("x", 500_000)), body(100, "x")
	for _, src := range []string{
		"request.body.items.all(i, !(request.body.s in request.body.strs))",
		"request.body.items.all(i, request.body.a != request.body.b)",
		"request.body.items.all(i, request.body.o != request.body.p)",
		"request.body.items.all(i, !sets.contains(request.body.strs, [request.body.s]))",
	} {
		act := &Activation{Body: long, Shape: s.Numbers()}
		p := stopsAtLimit(t, ce, src, act)
		// The strings' units reached the limit: it stopped after a few reads.
		assert.Greater(t, act.meter.total, uint64(100_000-meterChunk), "%s: the strings read are counted", src)
		assert.LessOrEqual(t, act.meter.total, uint64(100_000)+scanUnits(500_001)+meterChunk, src)
		if p.Native() {
			_, _, done := p.nat.eval(&Activation{Body: long, Shape: s.Numbers()})
			assert.False(t, done, "%s: the native path hands over at the budget", src)
		}
		ok, err := p.Eval(&Activation{Body: short, Shape: s.Numbers()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
		if p.Native() {
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: short, Shape: s.Numbers()} })
			assert.False(t, bailed, src)
			assert.Equal(t, vdTrue, nat, src)
			assert.Equal(t, vdTrue, cel, src)
		}
	}
}

// TestNative_ChargesStringComparisonUnits: two strings of the same length
// compared inside in, or inside the equality of lists and objects, count
// scanUnits of their length (strings of different lengths, none), in
// cel-go's meter and in the native budget alike: the native path hands
// over where cel-go stops at the limit, and decides the same elsewhere.
func TestNative_ChargesStringComparisonUnits(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	for src, want := range map[string]uint64{ // the units of 100-byte strings (10 each)
		"request.body.s in request.body.l":             10 + 0 + 10, // l: s's length, longer, equal to s
		"request.body.a == request.body.b":             1 + 10,
		"request.body.a != request.body.b":             1 + 10,
		"request.body.o == request.body.p":             1 + 10,
		"[request.body.a] == [request.body.b]":         1 + 10,
		"request.body.o in [request.body.p]":           1 + 10,
		"request.body.a in request.body.l.map(x, [x])": (1 + 10) + 1 + (1 + 10), // a is the receiver
	} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Tracked(), src)
		n := 100
		x := strings.Repeat("x", n-1)
		b := doc(t, `{"s":"`+x+`a","l":["`+x+`b","`+x+`xa","`+x+`a"],"a":["`+x+`a"],"b":["`+x+`a"],"o":{"k":"`+x+`a"},"p":{"k":"`+x+`a"}}`)
		act := &Activation{Body: b}
		_, err = p.evalCEL(act)
		require.NoError(t, err, src)
		assert.Equal(t, want, act.meter.total, src)

		// Long strings: 2,000 units a comparison, over the limit.
		for _, n := range []int{100, 20_000} {
			for _, differ := range []bool{false, true} {
				x := strings.Repeat("x", n-1)
				y := x + "b"
				if differ {
					y = x + "ab" // one byte longer: unequal at once
				}
				b := doc(t, `{"s":"`+x+`a","l":["`+y+`"],"a":["`+x+`a"],"b":["`+y+`"],"o":{"k":"`+x+`a"},"p":{"k":"`+y+`"}}`)
				newAct := func() *Activation { return &Activation{Body: b} }
				cel := verdictOf(p.evalCEL(newAct()))
				nat, bailed := cel, false
				if p.Native() {
					ok, err, done := p.nat.eval(newAct())
					nat, bailed = verdictOf(ok, err), !done
				} else if cel == vdError {
					bailed = true
				}
				if n > 10_000 && !differ {
					assert.Equal(t, vdError, cel, "%s, %d bytes: stopped at the limit", src, n)
					assert.True(t, bailed, "%s, %d bytes: handed over", src, n)
				} else {
					assert.NotEqual(t, vdError, cel, "%s, %d bytes (differ %v)", src, n, differ)
				}
				if !bailed {
					assert.Equal(t, cel, nat, "%s, %d bytes (differ %v)", src, n, differ)
				}
			}
		}
	}
}

// TestCompile_TrackedWhereInComparesStrings: x in a list, with x a string
// of the data (not a literal) and a list whose elements may be strings
// (not a list of literals), reads both strings of each pair of the same
// length, which cel-go's estimate does not count (in costs the list's
// size): such a rule is tracked whatever its estimate, so that its
// strings' units (strUnits) stop it. Untracked, a rule estimated within
// the limit read a 500 KB string once per item of 3,000, unlimited.
func TestCompile_TrackedWhereInComparesStrings(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":3000,"items":{"type":"integer"}},
		"s":{"type":"string"},"d":{},
		"strs":{"type":"array","maxItems":1,"items":{"type":"string"}},
		"nums":{"type":"array","maxItems":1,"items":{"type":"integer"}},
		"obj":{"type":"object","maxProperties":1}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for src, tracked := range map[string]bool{
		"request.body.s in request.body.strs":                       true,
		"request.body.d in request.body.strs":                       true,
		"request.body.s + 'x' in request.body.strs":                 true,
		"request.body.s in [request.body.strs[0], 'a']":             true,
		"'abc' in request.body.strs":                                false, // a literal: as short as the expression
		"request.body.s in ['a', 'b']":                              false,
		"request.body.s in request.body.nums.map(n, string(n))":     true,
		"request.body.items[0] in request.body.nums":                false, // numbers
		"request.body.s in {'a': 1}":                                false, // a map literal: not the body's
		"request.body.s in request.body.obj":                        true,  // a lookup of the body's object
		"'abc' in request.body.obj":                                 false,
		"request.body.items.all(i, i in request.body.nums)":         false,
		"request.body.items.all(i, string(i) in request.body.strs)": true,
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, tracked, p.Tracked(), src)
	}

	x := strings.Repeat("x", 500_000)
	body := func(x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 3000), ",")+`],"s":"`+x+`a","strs":["`+x+`b"]}`)
	}
	src := "request.body.items.all(i, !(request.body.s in request.body.strs))"
	p, err := ce.Compile(src)
	require.NoError(t, err)
	assert.True(t, p.Tracked())
	act := &Activation{Body: body(x), Shape: s.Numbers()}
	ok, err := p.Eval(act)
	assert.False(t, ok)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "cost limit")
	}
	assert.Greater(t, act.meter.total, uint64(100_000-meterChunk), "the strings read are counted")
	_, _, done := p.nat.eval(&Activation{Body: body(x), Shape: s.Numbers()})
	assert.False(t, done, "the native path hands over at the budget")
	ok, err = p.Eval(&Activation{Body: body("x"), Shape: s.Numbers()})
	require.NoError(t, err)
	assert.True(t, ok)
}

// TestEval_SetMembershipReadsNoLongString: cel-go makes x in [constants]
// a lookup in a hash set, which hashes x whole and was charged nothing: a
// rule looking up a 300 KB string of the body once for each of 20,000
// items hashed it at each (70 to 80 ms) before its other costs reached
// the limit. Such an in stays a call, which compares x with the constants
// (a string of another length at once), charged the list's size, as the
// native path charges it, with the verdicts of the set.
func TestEval_SetMembershipReadsNoLongString(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":20000,"items":{"type":"integer"}},"s":{"type":"string"}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	src := "request.body.items.all(i, request.body.s in ['a', 'b'] || i > 0)"
	p, err := ce.Compile(src)
	require.NoError(t, err)
	require.True(t, p.Tracked())
	body := doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 20000), ",")+`],"s":"`+strings.Repeat("x", 300_000)+`"}`)
	_, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Shape: s.Numbers()} })
	assert.True(t, bailed, "the native path finds it over the limit")
	assert.Equal(t, vdError, cel, "so does cel-go")

	// The call is charged the list's size.
	cost := func(src string) uint64 {
		p, err := ce.Compile("size(request.body.s) > 0 && " + src) // tracked: size() of a string
		require.NoError(t, err, src)
		prg, err := p.program()
		require.NoError(t, err)
		_, det, err := prg.Eval(&Activation{Body: doc(t, `{"s":"xyz"}`), Shape: s.Numbers()})
		require.NoError(t, err, src)
		return *det.ActualCost()
	}
	assert.Equal(t, uint64(3), cost("request.body.s in ['a', 'b', 'c', 'd']")-cost("request.body.s in ['a']"))

	// The verdicts of the set: numbers by their value, an error operand,
	// an empty list false without its operand.
	ne := nativeEnv(t)
	for src, b := range map[string]string{
		"request.body.d in [1, 2.0, 'c']":   `{"d":1.0}`,
		"request.body.d in [1, 2.0, 'c'] ":  `{"d":2}`,
		"request.body.d in [1, 2.0, 'c']  ": `{"d":"c"}`,
		"request.body.d in [0u, 'x']":       `{"d":-0.0}`,
		"request.body.d in [1.5, 'x']":      `{"d":"1.5"}`,
		"request.body.d in ['a', 'b']":      `{}`,
		"request.body.d in []":              `{}`,
		"request.body.d in [true]":          `{"d":true}`,
	} {
		p, err := ne.Compile(src)
		require.NoError(t, err, src)
		body := doc(t, b)
		nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body} })
		require.False(t, bailed, src)
		assert.Equal(t, nat, cel, "%s on %s", src, b)
	}
}

// TestEval_CostLimitBoundsDistinctStrings: distinct() of the body's list
// compares its strings with String.Equal, which counted nothing: a rule
// calling it on two strings of 500 KB that differ in their last byte once
// per element of 16,000 read them 16,000 times (230 ms) before its other
// costs met the limit. The reads now count strUnits, in the order
// distinct() makes them, before it runs.
func TestEval_CostLimitBoundsDistinctStrings(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"strs":{"type":"array","maxItems":4,"items":{"type":"string"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 16000), ",")
	x := strings.Repeat("x", 500_000)
	src := "request.body.items.all(i, request.body.strs.distinct().size() == 2)"
	p, err := ce.Compile(src)
	require.NoError(t, err)
	require.True(t, p.Tracked())
	act := &Activation{Body: doc(t, `{"items":[`+items+`],"strs":["`+x+`b","`+x+`c"]}`), Shape: s.Numbers()}
	ok, err := p.Eval(act)
	assert.False(t, ok)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "cost limit")
	}
	assert.Greater(t, act.meter.total, uint64(100_000-meterChunk), "the strings read are counted")

	// The units of the reads distinct() makes: b with a, then a again with
	// a (equal: not kept); not b again, nor the longer string.
	y := strings.Repeat("y", 99)
	act = &Activation{Body: doc(t, `{"items":[1],"strs":["`+y+`a","`+y+`b","`+y+`a","`+y+`ab"]}`), Shape: s.Numbers()}
	p, err = ce.Compile("request.body.items.all(i, request.body.strs.distinct().size() == 3)")
	require.NoError(t, err)
	ok, err = p.Eval(act)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, uint64(10+10), act.meter.total)
}

// TestEval_CostLimitBoundsObjectLookups: x in an object of the body looks
// x up among its member names, reading those of x's length (or hashing x,
// in a large object), which cel-go charges a unit: a rule looking up a
// 500 KB key, which differs from the one member name in its last byte,
// once per element of 16,000 read it 16,000 times (110 ms). The reads now
// count their units (GetReads), in cel-go's meter and the native budget.
func TestEval_CostLimitBoundsObjectLookups(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"obj":{"type":"object","maxProperties":30}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	src := "request.body.items.all(i, !(request.body.s in request.body.obj))"
	p, err := ce.Compile(src)
	require.NoError(t, err)
	require.True(t, p.Tracked())
	require.True(t, p.Native())
	items := strings.TrimSuffix(strings.Repeat("7,", 16000), ",")
	x := strings.Repeat("x", 500_000)
	body := doc(t, `{"items":[`+items+`],"obj":{"`+x+`b":1},"s":"`+x+`a"}`)
	act := &Activation{Body: body, Shape: s.Numbers()}
	ok, err := p.Eval(act)
	assert.False(t, ok)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "cost limit")
	}
	assert.Greater(t, act.meter.total, uint64(100_000-meterChunk), "the names read are counted")
	_, _, done := p.nat.eval(&Activation{Body: body, Shape: s.Numbers()})
	assert.False(t, done, "the native path hands over at the budget")

	// The units: the names of the key's length, up to the one equal to
	// it; in an object of more than 16 members, the key hashed, and
	// compared with the name found.
	y := strings.Repeat("y", 99)
	small := `{"` + y + `a":1,"` + y + `b":1,"` + y + `c":1,"` + y + `ab":1,"z":1}`
	var big strings.Builder
	big.WriteString(`{"` + y + `b":1`)
	for i := range 20 {
		big.WriteString(`,"k` + strconv.Itoa(i) + `":1`)
	}
	big.WriteString(`}`)
	p, err = ce.Compile("request.body.s in request.body.obj")
	require.NoError(t, err)
	require.True(t, p.Tracked())
	for _, c := range lookupCases(small, big.String(), y) {
		b := doc(t, `{"obj":`+c.obj+`,"s":"`+c.key+`"}`)
		act := &Activation{Body: b, Shape: s.Numbers()}
		ok, err := p.evalCEL(act)
		require.NoError(t, err)
		assert.Equal(t, c.found, ok, c.key)
		assert.Equal(t, c.units, act.meter.total, c.key)
		nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: b, Shape: s.Numbers()} })
		assert.False(t, bailed)
		assert.Equal(t, cel, nat)
	}
}

// TestEval_CostLimitBoundsSorts: sort() and sortBy() compare strings by
// their common prefix, and cel-go charged them by the number of elements
// alone: a rule sorting two strings of 500 KB that differ in their last
// byte once per element of a list of 16,000 ran for 1.4 s (sortBy 0.6 s),
// under the default limits. A program that sorts strings is tracked, and
// the comparisons its sorts make count scanUnits of the shorter string,
// before the sort: such a rule stops at the limit; short strings still
// sort.
func TestEval_CostLimitBoundsSorts(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"strs":{"type":"array","maxItems":2,"items":{"type":"string"}},
		"nums":{"type":"array","maxItems":2,"items":{"type":"integer"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 16000), ",")
	body := func(x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+items+`],"strs":["`+x+`c","`+x+`b"],"nums":[2,1]}`)
	}
	long, short := body(strings.Repeat("x", 500_000)), body("x")
	for _, src := range []string{
		"request.body.items.all(i, request.body.strs.sort()[0] != 'a')",
		"request.body.items.all(i, request.body.strs.sortBy(x, x)[0] != 'a')",
		"request.body.items.all(i, request.body.strs.map(x, x).sort()[0] != 'a')",
	} {
		stopsAtLimit(t, ce, src, &Activation{Body: long, Shape: s.Numbers()})
	}
	// Short strings sort (under a limit for 16,000 items).
	env2, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: 100_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	ce2, err := env2.ForSchema(s)
	require.NoError(t, err)
	p2, err := ce2.Compile("request.body.items.all(i, request.body.strs.sort()[0] == 'xb')")
	require.NoError(t, err)
	ok, err := p2.Eval(&Activation{Body: short, Shape: s.Numbers()})
	require.NoError(t, err)
	assert.True(t, ok)

	// Tracked whatever its estimate; the comparison of two strings of
	// 1,000 bytes costs 100 units (of strings of at most 10 bytes, none
	// beyond cel-go's charge of the sort: no dry run).
	for src, tracked := range map[string]bool{
		"request.body.strs.sort().size() == 2":           true,
		"request.body.strs.sortBy(x, x).size() == 2":     true,
		"request.body.nums.sort().size() == 2":           false,
		"request.body.nums.sortBy(n, -n).size() == 2":    false,
		"request.body.nums.sortBy(n, string(n))[0] == 1": true,
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, tracked, p.Tracked(), src)
	}
	p, err := ce.Compile("request.body.strs.sort().size() == 2")
	require.NoError(t, err)
	prg, err := p.program()
	require.NoError(t, err)
	cost := func(n int) uint64 {
		x := strings.Repeat("x", n-1)
		_, det, err := prg.Eval(&Activation{Body: doc(t, `{"strs":["`+x+`c","`+x+`b"]}`), Shape: s.Numbers()})
		require.NoError(t, err)
		return *det.ActualCost()
	}
	assert.Equal(t, uint64(100), cost(1000)-cost(1))
}

// TestCompile_SortOfAComputedIndex: cel-go's planner decorates, with the
// id of an index whose key is computed (m[k + 'x']), the attribute of
// that key, and refuses a decoration that is no longer an attribute: the
// sort of such an index, whose keys are wrapped to count its comparisons,
// was refused at load with "invalid attribute decoration: {0x…}
// (expr.sortKeysNode)". It compiles, sorts, and its comparisons of long
// strings still stop at the limit.
func TestCompile_SortOfAComputedIndex(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"k":{"type":"string","maxLength":10},
		"m":{"type":"object","additionalProperties":{"type":"array","maxItems":2,"items":{"type":"string"}}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 1000), ",") // within the limit but for the sorts' comparisons
	for _, src := range []string{
		"request.body.items.all(i, request.body.m[request.body.k + 'x'].sort()[0] != 'a')",
		"request.body.items.all(i, request.body.m[request.body.k].sort()[0] != 'a')",
		"request.body.items.all(i, request.body.m[?(request.body.k + 'x')].orValue([]).sort()[0] != 'a')",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Tracked(), src)
		short := doc(t, `{"items":[1,2],"k":"a","m":{"ax":["c","b"],"a":["c","b"]}}`)
		ok, err := p.Eval(&Activation{Body: short, Shape: s.Numbers()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
		x := strings.Repeat("x", 500_000)
		long := doc(t, `{"items":[`+items+`],"k":"a","m":{"ax":["`+x+`c","`+x+`b"],"a":["`+x+`c","`+x+`b"]}}`)
		ok, err = p.Eval(&Activation{Body: long, Shape: s.Numbers()})
		assert.False(t, ok, src)
		if assert.Error(t, err, src) {
			assert.Contains(t, err.Error(), "cost limit", src)
		}
	}
}

// TestEval_CostLimitBoundsKeyLookups: obj[k] and obj[?k] with a key of
// the data look it up among the object's member names, as in does (the
// names of k's length, or k hashed in a large object), and cel-go charged
// the index a unit or two: a rule looking up a 500 KB key, which differs
// from the one member name in its last byte, once per element of 16,000
// read it 16,000 times (265 ms). The reads now count their units
// (GetReads), in cel-go's meter and the native budget; a selection by a
// literal name counts none.
func TestEval_CostLimitBoundsKeyLookups(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"n":{"type":"integer"},"obj":{"type":"object","maxProperties":30},
		"strs":{"type":"array","maxItems":3,"items":{"type":"string"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 16000), ",")
	x := strings.Repeat("x", 500_000)
	body := doc(t, `{"items":[`+items+`],"obj":{"`+x+`b":1},"s":"`+x+`a"}`)
	for _, src := range []string{
		"request.body.items.all(i, request.body.obj[request.body.s] == 1 || true)",
		"request.body.items.all(i, !request.body.obj[?request.body.s].hasValue())",
		"request.body.items.all(i, request.body.obj[?request.body.s].orValue(0) == 0)",
	} {
		act := &Activation{Body: body, Shape: s.Numbers()}
		p := stopsAtLimit(t, ce, src, act)
		assert.Greater(t, act.meter.total, uint64(100_000-meterChunk), "%s: the names read are counted", src)
		if p.Native() {
			_, _, done := p.nat.eval(&Activation{Body: body, Shape: s.Numbers()})
			assert.False(t, done, "%s: the native path hands over at the budget", src)
		}
	}

	// Tracked where the key may be a string of the data.
	for src, tracked := range map[string]bool{
		"request.body.obj[request.body.s] == 1":                                true,
		"request.body.obj[?request.body.s].hasValue()":                         true,
		"request.body.obj[request.body.strs[0]] == 1":                          true,
		"request.body.obj['k'] == 1":                                           false,
		"request.body.obj.k == 1":                                              false,
		"request.body.obj[request.body.obj[request.body.s]] == 1":              true,
		"request.body.obj[request.body.obj[request.body.s + '']] == 1":         true,
		"request.body.obj[request.body.obj[?request.body.s].orValue('')] == 1": true,
		"request.body.strs[request.body.n] == 'a'":                             false,
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, tracked, p.Tracked(), src)
		_, err = p.program() // planned: cel-go's planner takes the wrapped keys
		require.NoError(t, err, src)
		_, err = p.Eval(&Activation{Body: doc(t, `{"obj":{"k":"k"},"s":"k","strs":["k"],"n":0}`), Shape: s.Numbers()})
		require.NoError(t, err, src)
	}

	// The units: the names of the key's length, up to the one equal to
	// it; in an object of more than 16 members, the key hashed, and
	// compared with the name found. Once a lookup, hit or miss.
	y := strings.Repeat("y", 99)
	small := `{"` + y + `a":1,"` + y + `b":1,"` + y + `c":1,"` + y + `ab":1,"z":1}`
	var big strings.Builder
	big.WriteString(`{"` + y + `b":1`)
	for i := range 20 {
		big.WriteString(`,"k` + strconv.Itoa(i) + `":1`)
	}
	big.WriteString(`}`)
	for _, src := range []string{
		"request.body.obj[request.body.s] == 1",
		"request.body.obj[?request.body.s].hasValue()",
		"request.body.obj[?request.body.s].orValue(0) == 1",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		for _, c := range lookupCases(small, big.String(), y) {
			b := doc(t, `{"obj":`+c.obj+`,"s":"`+c.key+`"}`)
			act := &Activation{Body: b, Shape: s.Numbers()}
			ok, err := p.evalCEL(act)
			if c.found || src != "request.body.obj[request.body.s] == 1" {
				require.NoError(t, err, src)
				assert.Equal(t, c.found, ok, "%s: %s", src, c.key)
			}
			assert.Equal(t, c.units, act.meter.total, "%s: %s", src, c.key)
			if p.Native() {
				nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: b, Shape: s.Numbers()} })
				assert.False(t, bailed)
				assert.Equal(t, cel, nat)
			}
		}
	}
}

// lookupCase is a key looked up in an object of the body: the units the
// lookup counts (the names of the key's length it reads, up to the one
// equal to it; in an object of more than 16 members the key hashed and
// the name found), and whether it finds a member.
type lookupCase struct {
	obj, key string
	units    uint64
	found    bool
}

// lookupCases are the lookups of keys of 100 bytes (y and a byte) in
// small, an object of a few such names, and big, one of more than 16.
func lookupCases(small, big, y string) []lookupCase {
	return []lookupCase{
		{small, y + "b", 10 + 10, true},
		{small, y + "d", 10 + 10 + 10, false},
		{small, y + "ab", 11, true},
		{small, "q", 1, false},
		{small, "", 0, false},
		{big, y + "b", 10 + 10, true},
		{big, y + "d", 10, false},
	}
}

// TestCompile_TrackedWhereSetsCompareLongStrings: cel-go's estimate of
// distinct(), the sets functions and hasAll and its kin counts the pairs
// they compare, not the strings they read: a rule estimated within the
// limit, distinct() of two strings of 500 KB once per item of 3,000, ran
// untracked, unlimited. A rule whose strings the schema does not bound to
// shortString bytes is now tracked, and stops at the limit; one on short
// strings (maxLength 10) stays untracked.
func TestCompile_TrackedWhereSetsCompareLongStrings(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":3000,"items":{"type":"integer"}},
		"tags":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10}},
		"names":{"type":"array","maxItems":2,"items":{"type":"string"}},
		"nums":{"type":"array","maxItems":10,"items":{"type":"integer"}},
		"s":{"type":"string"},"short":{"type":"string","maxLength":20}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for src, tracked := range map[string]bool{
		"request.body.tags.distinct().size() == 2":                      false,
		"sets.contains(request.body.tags, ['a'])":                       false,
		"sets.contains(request.body.tags, [request.body.short])":        false,
		"request.body.tags.hasAny(['a', request.body.short])":           false,
		"request.body.nums.distinct().size() == 2":                      false,
		"request.body.names.distinct().size() == 2":                     true,
		"sets.contains(request.body.tags, [request.body.s])":            true,
		"request.body.names.hasAny(['a'])":                              true,
		"sets.intersects(request.body.tags, request.body.names)":        true,
		"request.body.tags.map(t, t + request.body.s).distinct() == []": true,
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, tracked, p.Tracked(), src)
	}

	items := strings.TrimSuffix(strings.Repeat("7,", 3000), ",")
	x := strings.Repeat("x", 500_000)
	src := "request.body.items.all(i, request.body.names.distinct().size() == 2)"
	p, err := ce.Compile(src)
	require.NoError(t, err)
	require.True(t, p.Tracked())
	act := &Activation{Body: doc(t, `{"items":[`+items+`],"names":["`+x+`b","`+x+`c"]}`), Shape: s.Numbers()}
	ok, err := p.Eval(act)
	assert.False(t, ok)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "cost limit")
	}
	ok, err = p.Eval(&Activation{Body: doc(t, `{"items":[`+items+`],"names":["b","c"]}`), Shape: s.Numbers()})
	require.NoError(t, err)
	assert.True(t, ok)
}

// stopsAtLimit compiles src in ce, which must track it, and evaluates it
// with act: it must stop at the cost limit, false. It returns the
// program.
func stopsAtLimit(t *testing.T, ce *ContractEnv, src string, act *Activation) *Program {
	t.Helper()
	p, err := ce.Compile(src)
	require.NoError(t, err, src)
	require.True(t, p.Tracked(), src)
	ok, err := p.Eval(act)
	assert.False(t, ok, src)
	if assert.Error(t, err, src) {
		assert.Contains(t, err.Error(), "cost limit", src)
	}
	return p
}

// limitedEnv is a contract environment for the schema src under a cost
// limit of 100,000 with no limit on estimates, and the schema.
func limitedEnv(t *testing.T, src string) (*ContractEnv, *schema.Schema) {
	t.Helper()
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 4 << 20})
	require.NoError(t, err)
	s := compileSchema(t, src)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	return ce, s
}

// stopsOnlyWhenLong asserts that src stops at the limit on the body long
// and passes on short, read with s's numbers.
func stopsOnlyWhenLong(t *testing.T, ce *ContractEnv, s *schema.Schema, long, short *jsonbody.Doc, src string) {
	t.Helper()
	p := stopsAtLimit(t, ce, src, &Activation{Body: long, Shape: s.Numbers()})
	ok, err := p.Eval(&Activation{Body: short, Shape: s.Numbers()})
	require.NoError(t, err, src)
	assert.True(t, ok, src)
}

// TestEval_CostLimitBoundsBuiltComparisons: the lists and maps a rule
// builds ([s], {'k': s}, optional.of(s)) are cel-go's, whose equality read
// their strings uncounted: a rule comparing [s] != [t], two strings of
// 500 KB that differ in their last byte, once per element of 16,000 read
// them each time (30 ms; s in [t] 41 ms) before its other costs met the
// limit. Their strings of the same length now count their units
// (strUnits) before they are read; short strings still compare.
func TestEval_CostLimitBoundsBuiltComparisons(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"t":{"type":"string"},
		"strs":{"type":"array","items":{"type":"string"}}}}`)
	body := func(n int, x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", n), ",")+`],"s":"`+x+`a","t":"`+x+`b","strs":["`+x+`b"]}`)
	}
	long, short := body(1000, strings.Repeat("x", 500_000)), body(1000, "x")
	for _, src := range []string{
		"request.body.items.all(i, !(request.body.s in [request.body.t]))",
		"request.body.items.all(i, [request.body.s] != [request.body.t])",
		"request.body.items.all(i, {'k': request.body.s} != {'k': request.body.t})",
		"request.body.items.all(i, [[request.body.s]] != [[request.body.t]])",
		"request.body.items.all(i, !(request.body.s in request.body.strs.map(x, x)))",
		"request.body.items.all(i, request.body.strs.map(x, x) != [request.body.s])",
		"request.body.items.all(i, [optional.of(request.body.s)] != [optional.of(request.body.t)])",
	} {
		// The strings' units stop it after a few reads: its cost without
		// them, a few units an item, is under the limit for 1,000 items.
		stopsOnlyWhenLong(t, ce, s, long, short, src)
	}

	// The units of 100-byte strings (10 each): those met inside the lists
	// and maps built, and those in compares with the elements of a list
	// built; none for strings of different lengths (t and strs[0] one
	// byte longer), and none for == at the top, which cel-go charges.
	x := strings.Repeat("x", 99)
	cost := func(src, t1 string) uint64 {
		b := doc(t, `{"s":"`+x+`a","t":"`+x+t1+`","strs":["`+x+t1+`","`+x+`ab","`+x+`a"]}`)
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Tracked(), src)
		prg, err := p.program()
		require.NoError(t, err, src)
		_, det, err := prg.Eval(&Activation{Body: b, Shape: s.Numbers()})
		require.NoError(t, err, src)
		return *det.ActualCost()
	}
	for src, units := range map[string]uint64{
		"[request.body.s] != [request.body.t]":                    10,
		"[request.body.t, 1] == [request.body.s, 2]":              10,
		"{'k': request.body.s} != {'k': request.body.t}":          10,
		"[[request.body.s]] != [[request.body.t]]":                10,
		"request.body.s in [request.body.t, 'a', request.body.s]": 10,
		"request.body.s in request.body.strs.map(y, y)":           10,
		"[request.body.s] == request.body.strs":                   0, // sizes differ: at the top
	} {
		assert.Equal(t, units, cost(src, "b")-cost(src, "bb"), src)
	}
}

// TestBuiltComparisonsDecideAsCEL: the calls that count the strings of
// lists and maps cel-go built (equalCall, inListCall) give cel-go's
// verdicts and errors.
func TestBuiltComparisonsDecideAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true))
	require.NoError(t, err)
	vals := []any{nil, "a", "b", "", 1, 1.0, uint(1), 2.5, true, []any{}, []any{"a"}, []any{"b"}, []any{1.0, "a"}, []any{[]any{"a"}},
		map[string]any{}, map[string]any{"k": "a"}, map[string]any{"k": "b"}, map[string]any{"k": []any{"a"}}, map[int64]any{1: "a"}}
	for _, src := range []string{
		"x == y", "x != y", "x in y", "[x] == [y]", "[x] != [y]", "{'k': x} == {'k': y}", "[x, 1] != [y, 1.0]",
		"optional.of(x) == optional.of(y)", "[optional.of(x)] == [optional.of(y)]", "[optional.none()] == [optional.of(y)]",
		"x.missing == y", "x == y.missing", "x in [y, x]", "x in [y]", "[x] in [[y]]", "x in y.missing", "{x: 1} == {y: 1}",
		"[x, y] == [y, x]", "x in [y, 'a']", "[[x]] != [[y]]",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := builtComparisons(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		planned := 0
		spy := cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
			switch i.(type) {
			case equalCall, inListCall:
				planned++
			}
			return i, nil
		})
		metered, err := env.Program(ast, append(opts, meterBuiltComparisons(env, ids), spy, trackComparisons)...)
		require.NoError(t, err, src)
		assert.Positive(t, planned, src)
		for _, x := range vals {
			for _, y := range vals {
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

// TestEval_CostLimitBoundsBuiltSets: distinct(), the sets functions and
// hasAll and its kin compare the elements of lists with Equal, and a
// list that is not the body's counted nothing: strs.map(x, x).distinct()
// over two strings of 500 KB that differ in their last byte, once per
// element of 16,000, read them each time (30 ms), as did
// sets.contains(strs.map(x, x), [s]). Their strings of the same length
// now count their units before they are read; short strings still
// compare.
func TestEval_CostLimitBoundsBuiltSets(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"t":{"type":"string"},
		"strs":{"type":"array","items":{"type":"string"}}}}`)
	body := func(n int, x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", n), ",")+`],"s":"`+x+`a","t":"`+x+`b","strs":["`+x+`b","`+x+`c"]}`)
	}
	long, short := body(1000, strings.Repeat("x", 500_000)), body(1000, "x")
	for _, src := range []string{
		"request.body.items.all(i, request.body.strs.map(x, x).distinct().size() == 2)",
		"request.body.items.all(i, !sets.contains(request.body.strs.map(x, x), [request.body.s]))",
		"request.body.items.all(i, !sets.contains([request.body.t], [request.body.s]))",
		"request.body.items.all(i, !sets.intersects([request.body.s], request.body.strs))",
		"request.body.items.all(i, !sets.equivalent([request.body.t], [request.body.s]))",
		"request.body.items.all(i, !request.body.strs.map(x, x).hasAny([request.body.s]))",
		"request.body.items.all(i, !request.body.strs.hasAll([request.body.s]))",
		"request.body.items.all(i, !request.body.strs.map(x, x).hasOnly([request.body.s, request.body.t]))",
		"request.body.items.all(i, ![request.body.s].hasExactly([request.body.t]))",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Tracked(), src)
		ok, err := p.Eval(&Activation{Body: long, Shape: s.Numbers()})
		assert.False(t, ok, src)
		if assert.Error(t, err, src) {
			assert.Contains(t, err.Error(), "cost limit", src)
		}
		ok, err = p.Eval(&Activation{Body: short, Shape: s.Numbers()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
	}
}

// TestBuiltSetsDecideAsCEL: setCall gives cel-go's verdicts, results and
// errors for distinct(), the sets functions and hasAll and its kin.
func TestBuiltSetsDecideAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.Variable("y", cel.DynType), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Lists(), ext.Sets())
	require.NoError(t, err)
	vals := []any{nil, "a", 1, []any{}, []any{"a"}, []any{"b", "a"}, []any{1.0, "a", 1}, []any{[]any{"a"}, []any{"a"}},
		[]any{map[string]any{"k": "a"}, map[string]any{"k": "a"}}, []any{nil, nil}, []any{uint(1), 1, 1.0}, map[string]any{"k": "a"}}
	for _, src := range []string{
		"x.distinct()", "x.map(e, e).distinct()", "[x, x, y].distinct()", "sets.contains(x, y)", "sets.contains(x.map(e, e), y)",
		"sets.intersects(x, y.map(e, e))", "sets.equivalent(x, y)", "sets.equivalent([x], [y])", "x.hasAll(y)", "x.hasAny(y)",
		"x.hasOnly(y)", "x.hasExactly(y)", "[x].hasAll([y])", "x.missing.distinct()", "sets.contains(x, y.missing)",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := builtSets(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		planned := 0
		spy := cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
			if _, ok := i.(setCall); ok {
				planned++
			}
			return i, nil
		})
		metered, err := env.Program(ast, append(opts, meterBuiltSets(env, ids), spy, trackComparisons)...)
		require.NoError(t, err, src)
		assert.Positive(t, planned, src)
		for _, x := range vals {
			for _, y := range vals {
				in := map[string]any{"x": x, "y": y}
				want, _, wantErr := plain.Eval(in)
				got, _, gotErr := metered.Eval(in)
				if wantErr != nil || gotErr != nil {
					assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v, y = %v", src, x, y)
					continue
				}
				assert.Equal(t, types.Equal(want, got), types.True, "%s, x = %v, y = %v: %v, %v", src, x, y, want, got)
				assert.Equal(t, want.Type(), got.Type(), "%s, x = %v, y = %v", src, x, y)
			}
		}
	}
}

// TestEval_ConstMapLookupHashesNoLongString: in over a map of constants
// looks x up in a Go map, which hashes x whole, and cel-go charged it a
// unit: a rule looking up a 490 KB string of the body so once per element
// of 16,000 hashed it each time (130 ms) before its other costs met the
// limit. Such a map is now a lenMap, which finds a string of no key's
// length absent without hashing it; the verdicts, errors and costs of
// in, cel-go's call, are cel-go's.
func TestEval_ConstMapLookupHashesNoLongString(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType))
	require.NoError(t, err)
	var planned int
	spy := cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if c, ok := i.(interpreter.InterpretableConst); ok {
			if _, ok := c.Value().(lenMap); ok {
				planned++
			}
		}
		return i, nil
	})
	xs := []any{"a", "b", "bb", "bc", "", strings.Repeat("x", 1000), 1, 1.0, 2.5, uint(1), true, nil, []any{"a"}, map[string]any{"a": 1}}
	for _, src := range []string{
		"x in {'a': 1, 'bb': 2, 1: 3}",
		"x in {1: 'a', 2u: 'b'}",
		"x in {true: 1}",
		"!(x in {'a': 1}) || x == 'a'",
		"x.missing in {'a': 1}", // an error operand
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := lookedUpMaps(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		planned = 0
		kept, err := env.Program(ast, append(opts, buildLookedUpMaps(ids), spy)...)
		require.NoError(t, err, src)
		assert.Equal(t, 1, planned, "%s: the map is a lenMap", src)
		for _, x := range xs {
			want, wantDet, wantErr := plain.Eval(map[string]any{"x": x})
			got, gotDet, gotErr := kept.Eval(map[string]any{"x": x})
			assert.Equal(t, wantErr, gotErr, "%s, x = %v", src, x)
			assert.Equal(t, want, got, "%s, x = %v", src, x)
			assert.Equal(t, *wantDet.ActualCost(), *gotDet.ActualCost(), "%s, x = %v", src, x)
		}
	}
	ast, iss := env.Compile("x in {'a': x}")
	require.NoError(t, iss.Err())
	assert.Nil(t, lookedUpMaps(ast), "a map of values not constants: built at each evaluation")
}

// TestEval_ConstMapIndexHashesNoLongString: an index of a map of
// constants by a key that is not a literal hashed the key whole: a rule
// looking up a 490 KB string of the body so once per element of 16,000
// hashed it each time (175 ms) before its other costs met the limit. The
// map is built into a lenMap, which finds a string of no key's length
// absent without hashing it; verdicts, errors and costs are cel-go's.
func TestEval_ConstMapIndexHashesNoLongString(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType), cel.OptionalTypes())
	require.NoError(t, err)
	var planned int
	spy := cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if c, ok := i.(interpreter.InterpretableConst); ok {
			if _, ok := c.Value().(lenMap); ok {
				planned++
			}
		}
		return i, nil
	})
	xs := []any{"a", "b", "bb", "bc", "", strings.Repeat("x", 1000), 1, 1.0, 2.5, uint(1), uint(2), true, nil, []any{"a"}}
	for _, src := range []string{
		"{'a': 1, 'bb': 2, 1: 3}[x]",
		"{'a': 1, 'bb': 2, 1: 3}[x] == 1",
		"{1: 'a', 2u: 'b'}[x]",
		"{'a': 1}[?x].orValue(0)",
		"{'a': 1, true: 2}[?x].hasValue()",
		"{'a': 1}[x.missing]",
		"{'a': 1}[x] + {'b': 2}[?x].orValue(0)",
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		ids := lookedUpMaps(ast)
		require.NotNil(t, ids, src)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)}
		plain, err := env.Program(ast, opts...)
		require.NoError(t, err, src)
		planned = 0
		built, err := env.Program(ast, append(opts, buildLookedUpMaps(ids), spy)...)
		require.NoError(t, err, src)
		assert.Positive(t, planned, "%s: the map is a lenMap", src)
		for _, x := range xs {
			want, wantDet, wantErr := plain.Eval(map[string]any{"x": x})
			got, gotDet, gotErr := built.Eval(map[string]any{"x": x})
			assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "%s, x = %v", src, x)
			assert.Equal(t, want, got, "%s, x = %v", src, x)
			assert.Equal(t, *wantDet.ActualCost(), *gotDet.ActualCost(), "%s, x = %v", src, x)
		}
	}
	for src, found := range map[string]bool{
		"{'a': x}[x]":               false, // built at each evaluation
		"{'a': 1}['a']":             false, // a literal key
		"{'a': 1}[x] == 1":          true,
		"{?'a': optional.of(1)}[x]": false,
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		assert.Equal(t, found, lookedUpMaps(ast) != nil, src)
	}
}

// TestEval_BuiltComparisonsCountUpToWhereCELStops: the units counted
// before cel-go compares the lists a rule builds are those of the pairs of
// strings it reads: in and the lookups of sets stop at the first string
// equal to the one looked up, distinct() compares a string with the
// strings it kept, and == stops at the first pair of strings that
// differ. Counting every pair stopped these rules, which read each string
// a few times, at a limit their reads are far under.
func TestEval_BuiltComparisonsCountUpToWhereCELStops(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 30_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{"s":{"type":"string"},"t":{"type":"string"},
		"strs":{"type":"array","items":{"type":"string"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	x := `"` + strings.Repeat("x", 1000) + `"` // 100 units
	b := doc(t, `{"s":`+x+`,"t":"y","strs":[`+strings.TrimSuffix(strings.Repeat(x+",", 30), ",")+`]}`)
	for _, src := range []string{
		"request.body.strs.map(x, x).distinct().size() == 1",
		"request.body.strs.all(y, y in request.body.strs.map(x, x))",
		"request.body.strs.map(x, x).hasAll(request.body.strs)",
		"request.body.strs.all(y, [request.body.t] + request.body.strs.map(x, x) != [request.body.s] + request.body.strs.map(x, x))",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Tracked(), src)
		ok, err := p.Eval(&Activation{Body: b, Shape: s.Numbers()})
		assert.NoError(t, err, src)
		assert.True(t, ok, src)
	}
}

// TestEval_BuiltListsOfShortStringsAsEstimated: a rule over a list it
// builds of strings the schema bounds short (skus of maxLength 10, 200
// items) was charged a unit for each pair of equal-length strings besides
// cel-go's own charge for the pair, which its estimate does not count:
// within the limit as loaded, over it on a valid body of 200 distinct
// skus (106,715 against a limit of 100,000), which was refused. Strings of
// at most shortString bytes cost what cel-go charges the pair, as they do
// in the body's lists (comparesLongStrings).
func TestEval_BuiltListsOfShortStringsAsEstimated(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 100_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	for _, tc := range []struct {
		n   int
		src string
	}{
		{200, "request.body.items.map(i, i.sku).distinct().size() == request.body.items.size()"},
		{300, "sets.contains(request.body.items.map(i, i.sku), request.body.tags)"},
	} {
		s := compileSchema(t, fmt.Sprintf(`{"type":"object","properties":{
			"items":{"type":"array","maxItems":%d,"items":{"type":"object","properties":{"sku":{"type":"string","maxLength":10}}}},
			"tags":{"type":"array","maxItems":%[1]d,"items":{"type":"string","maxLength":10}}}}`, tc.n))
		ce, err := env.ForSchema(s)
		require.NoError(t, err)
		var items, tags []string
		for i := range tc.n {
			items = append(items, fmt.Sprintf(`{"sku":"SKU-%06d"}`, i))
			tags = append(tags, fmt.Sprintf(`"SKU-%06d"`, i))
		}
		b := doc(t, `{"items":[`+strings.Join(items, ",")+`],"tags":[`+strings.Join(tags, ",")+`]}`)
		p, err := ce.Compile(tc.src)
		require.NoError(t, err, tc.src)
		ok, err := p.Eval(&Activation{Body: b, Shape: s.Numbers()})
		assert.NoError(t, err, tc.src)
		assert.True(t, ok, tc.src)
	}
}

// TestEval_CostLimitBoundsBuiltMaps: a map a rule builds from a key of
// the data ({request.body.t: 1}) hashes the key whole when it is built,
// and a string looked up in it whole again, each for a unit or so: rules
// building or looking up 490 KB strings so once per element of 16,000
// items ran 40 ms (s in {t: 1}), 60 ms ({t: 1}[?s]) and 70 ms ({s: 1} !=
// {t: 1}) before their other costs met the limit. The hashing of a long
// key now counts its units (scanUnits) before cel-go hashes it: on 1,000
// items, under the limit by their other costs, they stop at it; with
// short strings they still pass.
func TestEval_CostLimitBoundsBuiltMaps(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"t":{"type":"string"}}}`)
	body := func(n int, x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", n), ",")+`],"s":"`+x+`a","t":"`+x+`b"}`)
	}
	long, short := body(1000, strings.Repeat("x", 490_000)), body(1000, "x")
	for _, src := range []string{
		"request.body.items.all(i, !(request.body.s in {request.body.t: 1}))",
		"request.body.items.all(i, {request.body.s: 1} != {request.body.t: 1})",
		"request.body.items.all(i, {request.body.t: 1}[?request.body.s].orValue(0) == 0)",
		"request.body.items.all(i, {request.body.t: i}[request.body.t] == 7)",
		"request.body.items.all(i, {?request.body.t: optional.of(i)}.size() == 1)",
		"request.body.items.all(i, {'a': i}[?request.body.s].orValue(0) == 0)",
		"request.body.items.all(i, !(request.body.s in [{request.body.t: 1}][0]))",
	} {
		stopsOnlyWhenLong(t, ce, s, long, short, src)
	}
}

// TestCompile_TrackedWhereMapsAreBuiltFromData: a rule that builds a map
// with a key of the data that may be a string, or builds a map that is
// not of constants and looks a string of the data up, runs under the
// limit whatever its estimate (which counts the map, not its keys'
// lengths); a map of constants and maps looked up by literals do not.
func TestCompile_TrackedWhereMapsAreBuiltFromData(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":100,"items":{"type":"integer"}},
		"s":{"type":"string","maxLength":1000000},"t":{"type":"string","maxLength":1000000},"n":{"type":"integer"}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for src, tracked := range map[string]bool{
		"request.body.items.all(i, !(request.body.s in {request.body.t: 1}))":             true,
		"request.body.items.all(i, {request.body.t: 1}[?request.body.s].orValue(0) == 0)": true,
		"request.body.items.all(i, {request.body.t: 1}.size() == 1)":                      true,
		"request.body.items.all(i, {'a': i}[?request.body.s].orValue(0) == 0)":            true,
		"request.body.items.all(i, {?'a': optional.of(i)}[request.body.s] == 0)":          true,
		"request.body.items.all(i, i > 0)":                                                false,
		"request.body.items.all(i, request.body.s in {'a': 1, 'b': 2})":                   false,
		"request.body.items.all(i, {'a': 1, 'b': 2}[?request.body.s].orValue(0) == 0)":    false,
		"request.body.items.all(i, {'a': i}['a'] == i)":                                   false,
		"request.body.items.all(i, {request.body.n: i}[request.body.n] == i)":             false,
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, tracked, p.Tracked(), src)
	}
}

// TestEval_CostLimitBoundsRequestMapLookups: request.params, .query and
// .headers, and a context.user of strings, are Go maps, which hash a
// string looked up in them whole (once they hold more than 8 entries),
// for a unit or so: a rule looking up a 490 KB string so once per element
// of 16,000 items ran 80 ms before its other costs met the limit. Their
// lookups now count the units of the hashing first (builtMap): on 1,000
// items, under the limit by their other costs, such rules stop at it;
// with short strings they still pass.
func TestEval_CostLimitBoundsRequestMapLookups(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},"s":{"type":"string"}}}`)
	many := map[string]string{}
	for i := range 20 {
		many[fmt.Sprint("h", i)] = "v"
	}
	body := func(x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 1000), ",")+`],"s":"`+x+`a"}`)
	}
	long, short := body(strings.Repeat("x", 490_000)), body("x")
	for _, rule := range []string{
		"request.body.items.all(i, !(request.body.s in request.headers))",
		"request.body.items.all(i, request.query[?request.body.s].orValue('') == '')",
		"request.body.items.all(i, !(request.body.s in request.params))",
		"request.body.items.all(i, !(request.body.s in context.user))",
		"request.body.items.all(i, context.user[?request.body.s].orValue('') == '')",
	} {
		act := func(b *jsonbody.Doc) *Activation {
			return &Activation{Body: b, Shape: s.Numbers(), Src: &src{params: many, query: many, headers: many, user: many}}
		}
		stopsAtLimit(t, ce, rule, act(long))
		p, err := ce.Compile(rule)
		require.NoError(t, err, rule)
		ok, err := p.Eval(act(short))
		require.NoError(t, err, rule)
		assert.True(t, ok, rule)
	}
}

// TestEval_CostLimitBoundsMapsBuiltInComprehensions: a map built in a
// comprehension ([1].map(j, {t: j})[0]) is looked up after cel-go has put
// the comprehension's frame back in its pool, whose cost tracker is then
// nil (or another evaluation's): the lookup of a 490 KB s in it counted
// nothing, and 1,000 items of it passed under the limit that the same
// map built outside a comprehension meets. Both stop at it now; with a
// short s both pass.
func TestEval_CostLimitBoundsMapsBuiltInComprehensions(t *testing.T) {
	ce, s := limitedEnv(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":16000,"items":{"type":"integer"}},
		"s":{"type":"string"},"t":{"type":"string"}}}`)
	body := func(x string) *jsonbody.Doc {
		return doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 1000), ",")+`],"s":"`+x+`a","t":"b"}`)
	}
	long, short := body(strings.Repeat("x", 490_000)), body("x")
	for _, src := range []string{
		"request.body.items.all(i, !(request.body.s in {request.body.t: 1}))",
		"request.body.items.all(i, !(request.body.s in [1].map(j, {request.body.t: j})[0]))",
		"request.body.items.all(i, [request.body.t].map(k, {k: i})[0][?request.body.s].orValue(0) == 0)",
		"request.body.items.all(i, [1].map(j, {'a': j}).all(m, !(request.body.s in m)))",
	} {
		stopsOnlyWhenLong(t, ce, s, long, short, src)
	}
}

// TestEval_RequestMapsWrappedOncePerEvaluation: in a tracked evaluation
// request.params, .query, .headers and a context.user of strings are
// builtMaps of the evaluation's tracker; each was made again on every
// read (two allocations a read of a request map: a rule reading
// request.query twice made it twice). They are made on the first read of
// the evaluation and read again with no allocation; a wrapper of another
// evaluation's tracker is not reused, and none is kept once Eval returns.
func TestEval_RequestMapsWrappedOncePerEvaluation(t *testing.T) {
	m := map[string]string{"a": "b"}
	a := &Activation{Src: &src{params: m, query: m, headers: m, user: m}}
	frame, err := interpreter.NewExecutionFrame(a)
	require.NoError(t, err)
	defer frame.Close()
	tracker, err := interpreter.NewCostTracker(nil)
	require.NoError(t, err)
	frame.SetCostTracker(tracker)
	a.meter = meter{frame: frame}
	read := func(k string) any {
		if k == "user" {
			v, _ := (*contextVal)(a).FindStringKey(k)
			return v
		}
		v, _ := (*requestVal)(a).FindStringKey(k)
		return v
	}
	for _, k := range []string{"params", "query", "headers", "user"} {
		first := read(k)
		b, ok := first.(builtMap)
		require.True(t, ok, k)
		assert.Same(t, tracker, b.tracker, k)
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = read(k) }), k)
		other, err := interpreter.NewCostTracker(nil)
		require.NoError(t, err)
		frame.SetCostTracker(other)
		assert.Same(t, other, read(k).(builtMap).tracker, "%s: another evaluation's tracker", k)
		frame.SetCostTracker(tracker)
	}
	a.meter = meter{}

	env, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	p, err := ce.Compile("request.query[?'dry'].orValue('0') != '1' && request.headers.a == context.user.a && request.params.size() == 1")
	require.NoError(t, err)
	require.True(t, p.Tracked())
	a = &Activation{Src: &src{params: m, query: m, headers: m, user: m}}
	ok, err := p.Eval(a)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, [len(a.built)]ref.Val{}, a.built, "no wrapper kept past the evaluation")
}

// TestEval_UnknownUserDecidesAsCEL: no program evaluates partially, but
// an Options.User that returns a CEL value reaches the rule as it is, an
// unknown too. ==, != and in over it (equalCall, inListCall: their
// unknown branches) and the set functions (setCall) are unknown, as plain
// cel-go's, which Eval refuses as not a bool: without those branches !=
// and !(x in l) were true.
func TestEval_UnknownUserDecidesAsCEL(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	plainEnv, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)), cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true), ext.Lists(), ext.Sets())
	require.NoError(t, err)
	unknown := types.NewUnknown(7, nil)
	for _, rule := range []string{
		"context.user != {'a': 1}", "{'a': request.method} != context.user", "context.user == {'a': request.method}",
		"!(context.user in [{'a': request.method}])", "!(dyn(context.user) in [{'a': request.method}])",
		"!sets.contains([{'a': request.method}], dyn(context.user))", "!dyn(context.user).hasAll([{'a': request.method}])",
		"dyn(context.user).distinct() == []",
	} {
		p, plain := trackedAndPlain(t, ce, plainEnv, rule)
		want, _, err := plain.Eval(map[string]any{"request": map[string]any{"method": "GET"}, "context": map[string]any{"user": unknown}})
		require.NoError(t, err, rule)
		require.True(t, types.IsUnknown(want), "%s: %v", rule, want)
		ok, err := p.Eval(&Activation{Method: "GET", Src: &src{user: unknown}})
		assert.False(t, ok, rule)
		assert.ErrorContains(t, err, "not a bool", rule)
	}
}

// TestMeterNodes_UntrackedDecideAsCEL: keyNode, sortKeysNode and
// builtMapNode are planned only in tracked programs; planned in one
// without a cost tracker they charge nothing, do not panic, and decide
// as cel-go.
func TestMeterNodes_UntrackedDecideAsCEL(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)), cel.OptionalTypes(), ext.Lists())
	require.NoError(t, err)
	long := strings.Repeat("k", 100)
	body := doc(t, `{"s":"`+long+`","t":"b","l":["`+long+`","a","`+long+`x"],"m":{"`+long+`":1,"b":2}}`)
	for _, rule := range []string{
		"request.body.l.sort()[0] == 'a'", "[request.body.s, request.body.t].sort()[1] == request.body.s",
		"request.body.l.sortBy(x, x)[2] == request.body.s + 'x'", "request.body.m[request.body.s] == 1",
		"request.body.m[?request.body.t].orValue(0) == 2", "{request.body.s: 1}[request.body.s] == 1",
		"{request.body.s: 1} == {request.body.s: 1}", "!(request.body.t in {request.body.s: 1})",
		"[request.body.t].map(k, {k: 1})[0][?request.body.s].orValue(0) == 0",
	} {
		ast, iss := env.Compile(rule)
		require.NoError(t, iss.Err(), rule)
		plain, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
		require.NoError(t, err, rule)
		maps, keys := builtMaps(ast, lookedUpMaps(ast))
		require.True(t, sortKeys(ast) != nil || lookupKeys(ast) != nil || maps != nil, rule)
		ours, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize),
			meterSortKeys(sortKeys(ast)), meterLookupKeys(lookupKeys(ast)), meterBuiltMaps(maps, keys))
		require.NoError(t, err, rule)
		want, _, wantErr := plain.Eval(&Activation{Body: body})
		require.NoError(t, wantErr, rule)
		require.Equal(t, types.True, want, rule)
		got, _, err := ours.Eval(&Activation{Body: body})
		require.NoError(t, err, rule)
		assert.Equal(t, want, got, rule)
	}
}
