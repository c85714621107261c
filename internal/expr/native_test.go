package expr

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/shape"
	"github.com/contractguard/contractguard/internal/yamljson"
)

// verdict is what an invariant's evaluation decides: true, false, or an
// error (which the guard counts as false, but which must stay an error
// under && and ||).
type verdict string

const (
	vdTrue  verdict = "true"
	vdFalse verdict = "false"
	vdError verdict = "error"
)

func verdictOf(ok bool, err error) verdict {
	switch {
	case err != nil:
		return vdError
	case ok:
		return vdTrue
	}
	return vdFalse
}

// both evaluates p natively and with cel-go on fresh activations of the
// same request. bailed: the native path handed this evaluation to cel-go.
func both(p *Program, newAct func() *Activation) (native, cel verdict, bailed bool) {
	ok, err, done := p.nat.eval(newAct())
	cel = verdictOf(p.evalCEL(newAct()))
	return verdictOf(ok, err), cel, !done
}

// nativeEnv has no cost limit worth the name, so that every expression of
// the subset takes the native path whatever the estimate of a dyn body.
func nativeEnv(t testing.TB) *Env {
	env, err := NewEnv(Config{CostLimit: math.MaxInt64, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 16})
	require.NoError(t, err)
	return env
}

func requestSrc() *src {
	return &src{
		params:  map[string]string{"id": "42", "empty": ""},
		query:   map[string]string{"q": "x y"},
		headers: map[string]string{"x-tenant": "acme"},
	}
}

// operands are the values x and y take in the table test: every kind,
// the numbers at the edges of int64, uint64 and float64, integral doubles,
// negative zero, and values of other kinds in nested places.
var operands = []string{
	`0`, `1`, `-1`, `2`, `1.0`, `1.5`, `-0.0`, `0.0`, `1e2`, `1e400`, `-1e400`, `1e-400`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
	`18446744073709551615`, `18446744073709551616`, `9007199254740993`, `9.223372036854775807e18`,
	`""`, `"a"`, `"b"`, `"ab"`, `"é"`, `"1"`, `"1.5"`, `"-3"`,
	`true`, `false`, `null`,
	`{}`, `{"a":1}`, `{"a":"x","b":[1]}`, `{"a":{"a":1}}`,
	`[]`, `[1]`, `[1,2.0,"a"]`, `[{"a":1},{"a":2}]`, `[true,false]`, `[[1]]`,
}

// tableExprs are the expressions of the table test, over X and Y:
// request.body.x and request.body.y (either may be missing).
var tableExprs = []string{
	// comparisons
	"X == Y", "X != Y", "X < Y", "X <= Y", "X > Y", "X >= Y",
	"X == 1", "X == 1.0", "X == 1u", "X == -0.0", "X == null", "X != null", "X == 'a'", "X == true",
	"X < 1", "X <= 1.0", "X > 1u", "X >= -1", "X < 'b'", "X > false",
	"X == 9223372036854775807", "X == 9223372036854775807.0", "X < -9223372036854775808",
	"X == 18446744073709551615u", "X > 18446744073709551615u", "X == 9007199254740992.0", "X >= 9007199254740993",
	// logic and error absorption
	"X && Y", "X || Y", "!X", "X ? Y : false", "X ? true : Y", "!(X == Y) || X < Y", "X < Y && Y < X",
	"(X > 0) && (Y > 0)", "(X > 0) || (Y > 0)", "has(X.a) && X.a == 1", "!has(X.a) || X.a > 0",
	// arithmetic and conversions
	"X + Y == Y + X", "X - Y < 0", "X * Y > 1", "X / Y == 1", "X % Y == 0", "-X < 0", "X + 1 > X",
	"X * 2.0 > 1.0", "X - 1u == 0u", "X * 1e308 > 1.0", "X * 1e308 * 10.0 - X * 1e308 * 10.0 < 1.0",
	"double(X) == 1.0", "double(X) * 2.0 <= 3.0", "int(X) == 1", "uint(X) == 1u", "int(X) < int(Y)",
	"double(X) * Y <= 10000.0", "X / 0.0 > 0.0", "int(X) * 4611686018427387904 > 0",
	// selection, presence, indexes, size
	"has(X.a)", "has(X.a.a)", "X.a == 1", "X.a.a == 1", "X['a'] == 1", "X[0] == 1", "X[1] == 2", "X[0].a == 1",
	"size(X) == 1", "X.size() > 0", "size(X) == size(Y)",
	// membership
	"X in [1, 2.0, 'a', true]", "X in [1u, -1]", "X in [null, 1]", "X in []", "X in [1.5, 9223372036854775807]",
	"X in Y", "'a' in X", "1 in X", "X in [-0.0]", "X in [1e2]",
	// comprehensions
	"X.all(e, e == 1)", "X.exists(e, e > 1)", "X.all(e, e.a > 0)", "X.exists(e, e.a == 2)", "X.all(k, k == 'a')",
	"X.exists(e, e)", "X.all(e, e)", "X.all(e, Y.exists(f, e == f))", "X.all(x, x > 0)",
	// strings
	"X.startsWith('a')", "X.endsWith(Y)", "X.contains('b')", "X.matches('^a+$')", "X.matches('b')",
	// the value itself
	"X", "Y == X",
}

// tableRequestExprs read the rest of the request.
var tableRequestExprs = []string{
	"request.method == 'POST'", "request.method < 'Q'", "request.path == '/from/source'", "request.path.startsWith('/')",
	"request.params.id == '42'", "request.params.missing == 'x'", "has(request.params.id)", "!has(request.params.x)",
	"request.query.q.contains(' ')", "request.headers['x-tenant'] == 'acme'", "request.headers['x-none'] == ''",
	"has(request.body)", "has(request.headers)", "request.params.empty == '' && request.method == 'POST'",
	"request.params.id.matches('^[0-9]+$')", "int(request.params.id) == 42", "request.body == null",
}

// bodyExpr writes X and Y as request.body.x and request.body.y.
func bodyExpr(e string) string {
	return strings.NewReplacer("X", "request.body.x", "Y", "request.body.y").Replace(e)
}

var numKinds = []shape.NumKind{shape.NumAuto, shape.NumInt, shape.NumDouble}

// TestNativeMatchesCEL evaluates every expression of the table on every
// pair of operands under every number kind, natively and with cel-go:
// the same verdict every time.
func TestNativeMatchesCEL(t *testing.T) {
	env := nativeEnv(t)
	var progs []*Program
	var srcs []string
	for _, e := range tableExprs {
		src := bodyExpr(e)
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), "%s is in the subset", src)
		progs, srcs = append(progs, p), append(srcs, src)
	}
	var bodies []*jsonbody.Doc
	var texts []string
	for _, x := range append(operands, "") {
		for _, y := range append(operands, "") {
			var members []string
			if x != "" {
				members = append(members, `"x":`+x)
			}
			if y != "" {
				members = append(members, `"y":`+y)
			}
			text := "{" + strings.Join(members, ",") + "}"
			bodies, texts = append(bodies, doc(t, text)), append(texts, text)
		}
	}
	counts := map[verdict]int{}
	bails := 0
	for _, k := range numKinds {
		s := &shape.Numbers{Num: k, Additional: &shape.Numbers{Num: k, Additional: &shape.Numbers{Num: k}, Items: &shape.Numbers{Num: k}},
			Items: &shape.Numbers{Num: k}}
		for pi, p := range progs {
			for bi, body := range bodies {
				nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Shape: s, Method: "POST", Src: requestSrc()} })
				if bailed {
					bails++
					continue
				}
				counts[cel]++
				if nat != cel {
					t.Errorf("%s on %s (numbers %d): native %s, cel-go %s", srcs[pi], texts[bi], k, nat, cel)
				}
			}
		}
	}
	t.Logf("verdicts %v, %d evaluations handed to cel-go", counts, bails)
	assert.Less(t, bails, len(progs)*len(bodies)/100, "concatenation is rare in the table")
	for _, v := range []verdict{vdTrue, vdFalse, vdError} {
		assert.Greater(t, counts[v], 1000, "the table reaches every verdict")
	}
}

// TestNativeMatchesCEL_Request reads the request line, parameters and
// headers, and a null body.
func TestNativeMatchesCEL_Request(t *testing.T) {
	env := nativeEnv(t)
	for _, src := range tableRequestExprs {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		for _, body := range []*jsonbody.Doc{nil, doc(t, `{"a":1}`)} {
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Method: "POST", Src: requestSrc()} })
			require.False(t, bailed, src)
			assert.Equal(t, cel, nat, src)
		}
		// No Source: the maps are empty, the path is "".
		nat, cel, _ := both(p, func() *Activation { return &Activation{Method: "GET"} })
		assert.Equal(t, cel, nat, "%s without a source", src)
	}
}

// TestNativeMatchesCEL_Typed compiles against schemas, as contracts are:
// the checker then picks single overloads (int64_to_double for an
// integer), whose type guards cel-go applies at run time to numbers the
// schema calls integers but that int64 cannot hold.
func TestNativeMatchesCEL_Typed(t *testing.T) {
	env := nativeEnv(t)
	s := compileSchema(t, `{"type":"object","properties":{
		"q":{"type":"integer"},"p":{"type":"number"},"s":{"type":"string"},"b":{"type":"boolean"},
		"o":{"type":"object","properties":{"n":{"type":"integer"}}},
		"l":{"type":"array","items":{"type":"object","properties":{"n":{"type":"number"}}}},
		"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	exprs := []string{
		"request.body.q <= 100", "double(request.body.q) * request.body.p <= 10000.0", "int(request.body.p) == 1",
		"request.body.s != 'USD' || request.body.p >= 1.0", "uint(request.body.q) > 1u", "double(request.body.s) > 1.0",
		"request.body.q * 2 == 4", "request.body.p * 2.0 == 3.0", "request.body.q < request.body.p",
		"request.body.o.n == 1", "has(request.body.o.n)", "request.body.l.all(e, e.n > 0.0)", "request.body.l.exists(e, e.n == 2.0)",
		"request.body.m.all(k, request.body.m[k] > 0)", "request.body.m.x == 1", "request.body.b", "!request.body.b || request.body.q > 0",
		"request.body.s in ['a', 'b']", "request.body.q in [1, 2]", "request.body.p in [1.0, 2.0]", "size(request.body.s) <= 3",
		"int(request.body.s) == 1", "request.body.q % 3 == 1", "request.body.l.size() == 2",
	}
	bodies := []string{
		`{}`, `{"q":1,"p":1,"s":"a","b":true}`, `{"q":2,"p":1.5,"s":"USD","b":false}`, `{"q":1e30,"p":1e30,"s":"1"}`,
		`{"q":9223372036854775807,"p":9223372036854775807}`, `{"q":9223372036854775808,"p":-0.0}`, `{"q":-1,"p":1e400,"s":"1e400"}`,
		`{"q":1.0,"p":2,"s":"é"}`, `{"o":{"n":1},"l":[{"n":1},{"n":2}],"m":{"x":1,"y":2}}`, `{"o":{},"l":[{"n":-1},{}],"m":{"x":0}}`,
		`{"q":"1","p":"x","s":1,"b":"true","o":[],"l":{},"m":[]}`, // what a schema rejects: wrong kinds everywhere
	}
	for _, src := range exprs {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		for _, b := range bodies {
			body := doc(t, b)
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Shape: s.Numbers()} })
			require.False(t, bailed)
			assert.Equal(t, cel, nat, "%s on %s", src, b)
		}
	}
}

// TestNative_Subset: what takes the native path and what stays with
// cel-go.
func TestNative_Subset(t *testing.T) {
	env := nativeEnv(t)
	for src, native := range map[string]bool{
		"request.body.a.b.c == 1 && request.body.d[0] != 'x'":                          true,
		"request.body.items.all(i, i.qty > 0 && i.price < 10.0)":                       true,
		"request.body.a.all(x, x.b.all(y, y.c.all(z, z.d.all(w, w > 0))))":             true,
		"request.body.a.all(x, x.b.all(y, y.c.all(z, z.d.all(w, w.e.all(v, v > 0)))))": false, // nested deeper than maxSlots
		"request.body.items.exists_one(i, i.qty > 0)":                                  false,
		"request.body.items.map(i, i.qty).size() > 0":                                  false,
		"request.body.items.filter(i, i.qty > 0).size() > 0":                           false,
		"request.body.a == [1, 2]":                                                     false, // a list built at run time
		"request.body.a == {'b': 1}":                                                   false,
		"request.body.a in [request.body.b]":                                           false, // not a constant list
		"context.user.role == 'admin'":                                                 false,
		"request.body.s.lowerAscii() == 'a'":                                           false,
		"request.body.s.matches(request.body.p)":                                       false,
		"type(request.body.a) == int":                                                  false,
		"request.body.?a.orValue(1) == 1":                                              false,
		"size(request.params) > 0":                                                     false,
		"request.headers[request.body.h] == 'x'":                                       false,
		"string(request.body.a) == '1'":                                                false,
		"request.body.a + request.body.b == 'ab'":                                      true, // a concatenation falls back when it happens
		"timestamp(request.body.t) < timestamp('2030-01-01T00:00:00Z')":                false,
		"dyn(request.body.a) == 1":                                                     false,
		"b'a' == request.body.a":                                                       false,
	} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		assert.Equal(t, native, p.Native(), src)
	}
}

// TestNative_CostLimit: the native path charges every node at least
// what cel-go's cost tracker does, and hands an evaluation over the limit
// to cel-go, which stops it there.
func TestNative_CostLimit(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	quadratic, err := env.Compile("request.body.items.all(a, request.body.items.all(b, a == b || a != b))")
	require.NoError(t, err)
	require.True(t, quadratic.Native())
	require.True(t, quadratic.Tracked(), "estimated over the limit")

	small := &Activation{Body: doc(t, `{"items":[1,2,3]}`)}
	ok, err, done := quadratic.nat.eval(small)
	assert.True(t, done, "nine comparisons are within the limit")
	assert.True(t, ok)
	require.NoError(t, err)

	big := &Activation{Body: doc(t, `{"items":[`+strings.Repeat(`1,`, 999)+`1]}`)}
	_, _, done = quadratic.nat.eval(big)
	assert.False(t, done, "a million comparisons are not")
	ok, err = quadratic.Eval(big)
	assert.False(t, ok)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cost limit")

	// The charges are an upper bound of cel-go's: wherever the native path
	// decides, cel-go's actual cost is within the limit.
	for _, src := range []string{
		"request.body.items.all(a, request.body.items.exists(b, a < b || a == 7))",
		"request.body.items.exists(a, a == 7) || request.body.s.matches('^a+b*$')",
		"request.body.s.contains(request.body.t) && request.body.s.startsWith('a')",
		"request.body.items == request.body.items && request.body.s != request.body.t",
		"request.body.s in ['a', 'b'] && request.body.items.all(i, i in [1, 2, null])",
	} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		decided := 0
		for n := 1; n < 600; n = n*2 + 1 {
			items := strings.TrimSuffix(strings.Repeat("1,", n), ",")
			body := doc(t, fmt.Sprintf(`{"items":[%s],"s":"%s","t":"%s"}`, items, strings.Repeat("a", n*3), strings.Repeat("a", n)))
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body} })
			if !bailed {
				decided++
				assert.Equal(t, cel, nat, "%s with %d items", src, n)
				assert.NotEqual(t, vdError, cel, "%s with %d items: within the limit for cel-go too", src, n)
			}
		}
		t.Logf("%s: %d of 9 sizes decided natively", src, decided)
		assert.Greater(t, decided, 0, "%s: the small bodies are within the budget, so the loop checks something", src)
	}
}

// TestNative_LongRequestStringsFallBack: a header longer than the
// estimate assumed goes to cel-go, which tracks the cost of reading it.
func TestNative_LongRequestStringsFallBack(t *testing.T) {
	env := nativeEnv(t)
	p, err := env.Compile("request.headers['x-a'] == 'b'")
	require.NoError(t, err)
	long := &src{headers: map[string]string{"x-a": strings.Repeat("b", MaxHeaderBytes+1)}}
	_, _, done := p.nat.eval(&Activation{Src: long})
	assert.False(t, done)
	ok, err := p.Eval(&Activation{Src: long})
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestNative_Errors: evaluation errors name their reason and no value,
// in the words valueFree gives cel-go's.
func TestNative_Errors(t *testing.T) {
	env := nativeEnv(t)
	for src, msg := range map[string]string{
		"request.body.missing == 1":                "no such key: …",
		"request.body.a * 9223372036854775807 > 0": "integer overflow",
		"request.body.a / 0 > 0":                   "division by zero",
		"request.body.s < 1":                       "no such overload",
		"request.body.l[5] == 1":                   "index out of bounds: …",
		"int(request.body.s) == 1":                 "type conversion error: …",
		"request.body.a":                           "evaluated to int, not a bool",
	} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		ok, err := p.Eval(&Activation{Body: doc(t, `{"a":2,"s":"hunter2","l":[1]}`)})
		assert.False(t, ok, src)
		require.Error(t, err, src)
		assert.Equal(t, msg, err.Error(), src)
		assert.NotContains(t, err.Error(), "hunter2")
	}
	// Eval returns them unwrapped: each is already what valueFree writes.
	for _, e := range nativeErrors {
		assert.Equal(t, valueFree(e), e.Error())
	}
}

// contractInvariants are the invariants of the repository's contracts:
// testdata/contracts, the conformance suites' and the bench module's, each
// with the schema it is compiled against.
func contractInvariants(t testing.TB) (out []struct {
	where, expr string
	schema      *schema.Schema
}) {
	load := func(name string, data []byte) (any, error) {
		docs, err := yamljson.Parse(data)
		if err != nil {
			return nil, err
		}
		return yamljson.Value(docs[0].Body)
	}
	var addFile func(where string, data []byte, c *schema.Compiler)
	addFile = func(where string, data []byte, c *schema.Compiler) {
		docs, err := yamljson.Parse(data)
		require.NoError(t, err, where)
		for di, d := range docs {
			v, err := yamljson.Value(d.Body)
			require.NoError(t, err, where)
			if m, ok := v.(map[string]any); ok {
				if inner, ok := m["contracts"].(string); ok { // a conformance suite
					addFile(where, []byte(inner), c)
					continue
				}
			}
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for ci, cv := range list {
				m := cv.(map[string]any)
				var s *schema.Schema
				if sch, ok := m["schema"]; ok {
					s, err = c.Compile(fmt.Sprintf("%s?d=%d&c=%d", where, di, ci), sch)
					require.NoError(t, err, where)
				}
				invs, _ := m["invariants"].([]any)
				for _, inv := range invs {
					out = append(out, struct {
						where, expr string
						schema      *schema.Schema
					}{where, inv.(map[string]any)["expr"].(string), s})
				}
			}
		}
	}
	for _, dir := range []string{"../../testdata/contracts", "../../testdata/conformance", "../../bench/testdata/contracts"} {
		files, err := filepath.Glob(dir + "/*.*")
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		c := schema.NewCompiler(os.DirFS(dir), load)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			addFile(filepath.Base(f), data, c)
		}
	}
	return out
}

// notNative are the repository's invariants outside the subset, each with
// the reason. Every other invariant must take the native path: a change
// that drops one from it fails here.
var notNative = map[string]string{
	"context.user.role == 'clerk'":                                                            "context.user",
	"request.body.amount <= context.user.dailyLimit":                                          "context.user",
	"request.body.region in context.user.regions":                                             "context.user",
	"!has(request.body.role) || request.body.role != 'admin' || context.user.role == 'admin'": "context.user",
	"!has(request.body.free) || type(request.body.free) == int":                               "type()",
	"request.body.items.exists_one(i, i.qty >= 10)":                                           "exists_one",
	"request.body.items.map(i, i.sku).distinct().size() == size(request.body.items)":          "map, lists extension",
	"request.body.items.filter(i, i.qty > 100).size() == 0":                                   "filter",
	"request.body.items.all(i, i.sku.lowerAscii().matches('^[a-z]+$'))":                       "strings extension",
	"math.greatest(request.body.items.map(i, i.qty)) <= 50":                                   "math extension, map",
	"sets.intersects(request.body.items.map(i, i.sku), ['GIFT', 'BOOK'])":                     "sets extension, map",
	"request.body.?coupon.orValue('') != 'EXPIRED'":                                           "optional values",
}

func TestNative_RepositoryContracts(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	native, total := 0, 0
	for _, inv := range contractInvariants(t) {
		ce, err := env.ForSchema(inv.schema)
		require.NoError(t, err)
		p, err := ce.Compile(inv.expr)
		if err != nil {
			continue // the conformance suites hold invariants that must not compile
		}
		total++
		if _, out := notNative[inv.expr]; out {
			assert.False(t, p.Native(), "%s: %s is listed as outside the subset", inv.where, inv.expr)
			continue
		}
		native++
		assert.True(t, p.Native(), "%s: %s", inv.where, inv.expr)
	}
	t.Logf("%d of %d invariants take the native path", native, total)
	assert.Greater(t, native, 25)
}

// exprGen writes a random expression of the subset from the bytes of a
// fuzz input, by the type it wants at each place (so that most
// expressions type-check): bool, number, string, or dyn (a value of the
// request, whose kind only the body tells).
type exprGen struct {
	data  []byte
	vars  []genVar
	depth int
	typed bool // data and self (of NativeRecord, field f64) besides request.body
}

// genVar is an iteration variable, and what it ranges over: the body, or
// data's items (NativeItem) or a list of scalars.
type genVar struct {
	name       string
	item, elem bool
}

type genType int

const (
	gBool genType = iota
	gNum
	gStr
	gDyn
)

var (
	genNames      = []string{"a", "b", "x", "y"}
	genFields     = []string{"i", "i32", "i64", "u", "u64", "f32", "f64", "s", "b", "cur", "depth", "inline", "items", "tags", "list"} // of NativeRecord
	genItemFields = []string{"sku", "qty", "price"}                                                                                    // of NativeItem
	genNums       = []string{"0", "1", "-1", "2", "1.0", "0.5", "-0.0", "1e308", "1u", "0u", "18446744073709551615u",
		"9223372036854775807", "-9223372036854775808", "9223372036854775807.0", "9007199254740993", "9007199254740992.0"}
	genStrs    = []string{"'a'", "''", "'b'", "'ab'", "'1'", "'é'"}
	genLits    = append(append(append([]string{}, genNums...), genStrs...), "true", "false", "null")
	genRelOps  = []string{"==", "!=", "<", "<=", ">", ">="}
	genArithOp = []string{"+", "-", "*", "/", "%"}
	genRegexps = []string{"^a", "b$", "^[0-9]+$", "", "a+"}
)

func (g *exprGen) pick(n int) int {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return int(b) % n
}

func (g *exprGen) from(list []string) string { return list[g.pick(len(list))] }

// top is the whole expression, a bool.
func (g *exprGen) top() string { return g.gen(gBool) }

func (g *exprGen) gen(t genType) string {
	if g.depth > 5 || len(g.data) == 0 {
		return g.leaf(t)
	}
	g.depth++
	defer func() { g.depth-- }()
	switch t {
	case gBool:
		switch g.pick(14) {
		case 0, 1, 2:
			l, r := g.operands()
			return "(" + l + " " + g.from(genRelOps) + " " + r + ")"
		case 3:
			return "(" + g.gen(gBool) + " && " + g.gen(gBool) + ")"
		case 4:
			return "(" + g.gen(gBool) + " || " + g.gen(gBool) + ")"
		case 5:
			return "!" + g.gen(gBool)
		case 6:
			if g.typed && g.pick(2) == 0 {
				return "has(data." + g.from(genFields) + ")"
			}
			return "has(" + g.bodyPath() + "." + g.from(genNames) + ")"
		case 7:
			var elems []string
			for range g.pick(4) {
				elems = append(elems, g.from(genLits))
			}
			return "(" + g.gen(gDyn) + " in [" + strings.Join(elems, ", ") + "])"
		case 8:
			return "(" + g.gen(g.anyType()) + " in " + g.path() + ")"
		case 9:
			v := genVar{name: []string{"e", "f", "g", "h"}[len(g.vars)%4]}
			rng := g.path()
			if g.typed && g.pick(2) == 0 {
				rng = g.from([]string{"data.items", "data.tags", "data.list"})
				v.item, v.elem = rng == "data.items", rng != "data.items"
			}
			g.vars = append(g.vars, v)
			body := g.gen(gBool)
			g.vars = g.vars[:len(g.vars)-1]
			return rng + "." + []string{"all", "exists"}[g.pick(2)] + "(" + v.name + ", " + body + ")"
		case 10:
			return g.gen(g.strOrDyn()) + "." + g.from([]string{"startsWith", "endsWith", "contains"}) + "(" + g.gen(g.strOrDyn()) + ")"
		case 11:
			return g.gen(g.strOrDyn()) + ".matches('" + g.from(genRegexps) + "')"
		case 12:
			return "(" + g.gen(gBool) + " ? " + g.gen(gBool) + " : " + g.gen(gBool) + ")"
		}
		return g.gen(gDyn)
	case gNum:
		switch g.pick(8) {
		case 0, 1:
			return "(" + g.gen(gNum) + " " + g.from(genArithOp) + " " + g.gen(gNum) + ")"
		case 2:
			return "-" + g.gen(gNum)
		case 3:
			return g.from([]string{"int", "uint", "double"}) + "(" + g.gen(g.anyType()) + ")"
		case 4:
			return "size(" + g.gen(g.strOrDyn()) + ")"
		case 5:
			return "(" + g.gen(gBool) + " ? " + g.gen(gNum) + " : " + g.gen(gNum) + ")"
		}
		return g.gen(gDyn)
	case gStr:
		if g.pick(3) == 0 {
			return "(" + g.gen(gBool) + " ? " + g.gen(gStr) + " : " + g.gen(gStr) + ")"
		}
		return g.leaf(gStr)
	}
	if g.pick(4) == 0 {
		return g.path() + "[" + g.gen(g.anyType()) + "]"
	}
	return g.path()
}

// operands are two operands of a comparison: dyn against anything, or
// two of one type.
func (g *exprGen) operands() (string, string) {
	switch g.pick(4) {
	case 0:
		return g.gen(gDyn), g.gen(g.anyType())
	case 1:
		return g.gen(g.anyType()), g.gen(gDyn)
	case 2:
		return g.gen(gNum), g.gen(gNum)
	}
	return g.gen(gStr), g.gen(gStr)
}

func (g *exprGen) anyType() genType { return genType(g.pick(4)) }

func (g *exprGen) strOrDyn() genType {
	if g.pick(2) == 0 {
		return gStr
	}
	return gDyn
}

func (g *exprGen) leaf(t genType) string {
	switch t {
	case gBool:
		if g.pick(3) == 0 {
			return g.from([]string{"true", "false"})
		}
	case gNum:
		if g.pick(2) == 0 {
			return g.from(genNums)
		}
	case gStr:
		if g.pick(2) == 0 {
			return g.from(genStrs)
		}
	default:
		if g.pick(4) == 0 {
			return g.from(genLits)
		}
	}
	return g.path()
}

// path is request.body, an iteration variable, or data's field or self,
// and selections or indexes below it.
func (g *exprGen) path() string {
	if g.typed {
		switch g.pick(4) {
		case 0:
			return "data." + g.from(genFields)
		case 1:
			return "self"
		}
	}
	if len(g.vars) > 0 && g.pick(2) == 0 {
		v := g.vars[g.pick(len(g.vars))]
		switch {
		case v.item && g.pick(3) > 0:
			return v.name + "." + g.from(genItemFields)
		case v.item || v.elem:
			return v.name
		}
		return g.below(v.name)
	}
	return g.below("request.body")
}

// bodyPath is a path in the body: below request.body or a variable
// ranging over the body.
func (g *exprGen) bodyPath() string {
	for _, v := range g.vars {
		if !v.item && !v.elem && g.pick(2) == 0 {
			return g.below(v.name)
		}
	}
	return g.below("request.body")
}

// below adds up to three selections or indexes to p.
func (g *exprGen) below(p string) string {
	for range g.pick(4) {
		switch g.pick(4) {
		case 0:
			p += "[" + strconv.Itoa(g.pick(3)) + "]"
		case 1:
			p += "['" + g.from(genNames) + "']"
		default:
			p += "." + g.from(genNames)
		}
	}
	return p
}

// body writes a JSON value: an object of the generator's names and
// NativeRecord's fields, with values of every kind (the table test's
// operands) and nested objects and arrays.
func (g *exprGen) body(depth int) string {
	switch c := g.pick(8); {
	case depth < 3 && (c < 3 || depth == 0):
		var members []string
		seen := map[string]bool{}
		for range g.pick(5) {
			name := g.from(genNames)
			switch g.pick(3) {
			case 0:
				name = g.from(genFields)
			case 1:
				name = g.from(genItemFields)
			}
			if !seen[name] {
				seen[name] = true
				members = append(members, strconv.Quote(name)+":"+g.body(depth+1))
			}
		}
		return "{" + strings.Join(members, ",") + "}"
	case depth < 3 && c < 5:
		var elems []string
		for range g.pick(4) {
			elems = append(elems, g.body(depth+1))
		}
		return "[" + strings.Join(elems, ",") + "]"
	}
	return g.from(operands)
}

// genShape is a random shape of numbers for the names the generator
// uses, two levels deep, from the bits of seed.
func genShape(seed uint64) *shape.Numbers {
	next := func() shape.NumKind {
		k := shape.NumKind(seed % 3)
		seed /= 3
		return k
	}
	var level func(depth int) *shape.Numbers
	level = func(depth int) *shape.Numbers {
		s := &shape.Numbers{Num: next()}
		if depth == 0 {
			return s
		}
		s.Props = map[string]*shape.Numbers{}
		for _, n := range genNames[:2] {
			s.Props[n] = level(depth - 1)
		}
		s.Additional, s.Items = level(depth-1), level(depth-1)
		s.IndexProps() // as the schema's derivation leaves it
		return s
	}
	return level(2)
}

// FuzzNativeVsCEL compiles random expressions both ways and evaluates
// them on random bodies under random shapes: the same verdict, true,
// false or error, every time the native path does not hand over. The
// same input also makes a struct-tag rule over data and self, evaluated
// on the body decoded into NativeRecord.
func FuzzNativeVsCEL(f *testing.F) {
	// A cost limit, as the guard has: nested comprehensions over a large
	// body would otherwise run for ever, and the native budget is tested.
	env, err := NewEnv(Config{CostLimit: 200_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 16})
	require.NoError(f, err)
	// A limit so low that comparisons of the body's objects and lists
	// (dyn == dyn, dyn in a path) reach it: the native path charges their
	// units (compare.go) and hands over wherever cel-go may stop.
	low, err := NewEnv(Config{CostLimit: 40, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1 << 16})
	require.NoError(f, err)
	rt := reflect.TypeFor[NativeRecord]()
	te, err := env.ForType(rt, nil)
	require.NoError(f, err)
	seeds := []struct{ expr, body string }{
		{"\x00\x07\x02\x01\x03", `{"a":1,"b":2.5}`},
		{"\x0a\x01\x00\x02\x00\x03\x01\x02", `{"a":[{"a":1},{"b":[1,2]}],"x":{"y":"a"}}`},
		{"\x09\x03\x01\x00\x05\x0c\x0f", `{"x":9223372036854775807,"y":-0.0,"a":1e400}`},
		{"\x06\x08\x00\x01\x04\x0b\x02\x06", `{"a":"abc","b":null,"x":[true,false],"y":{}}`},
		{"\x00\x0d\x0e\x01\x03\x02\x07\x09", `{"a":18446744073709551615,"b":1.0,"x":"1","y":[[1]]}`},
		{"\x00\x00\x00\x06\x01\x0b\x00\x02\x00\x06", `{"i":3,"f64":12.5,"s":"USD","u64":18446744073709551615,"b":true,"depth":2}`},
		{"\x03\x02\x00\x08\x00\x03\x09\x01\x00\x07", `{"i32":-7,"f32":1e38,"cur":"EUR","inline":"","i64":-9223372036854775808}`},
		{"\x09\x01\x00\x00\x00\x00\x00\x01\x02\x01", `{"items":[{"sku":"A","qty":2,"price":1.5},{"sku":"B","qty":101}],"tags":["x"],"list":[1,-1]}`},
	}
	for i, s := range seeds {
		f.Add([]byte(s.expr), []byte(s.body), uint64(i)*7919)
	}
	// request.body.a == request.body.b on two equal objects of 60 leaves:
	// 64 comparison units, over the low limit.
	leaves := `{"x":{"y":[` + strings.TrimSuffix(strings.Repeat("1,", 60), ",") + `]}}`
	f.Add([]byte("\x00\x00\x01\x01\x02\x00\x03\x01\x01\x02\x01\x00"), []byte(`{"a":`+leaves+`,"b":`+leaves+`}`), uint64(0))
	// The same on two lists of one string of 400 bytes: one unit for the
	// pair, 40 for reading the strings (strUnits), over the low limit.
	long := `["` + strings.Repeat("x", 400) + `"]`
	f.Add([]byte("\x00\x00\x01\x01\x02\x00\x03\x01\x01\x02\x01\x00"), []byte(`{"a":`+long+`,"b":`+long+`}`), uint64(0))
	for _, o := range operands {
		f.Add([]byte("\x00\x02\x01\x00\x07\x01\x02\x03"), []byte(`{"a":`+o+`,"b":[`+o+`],"x":{"a":`+o+`}}`), uint64(len(o)))
	}
	f.Fuzz(func(t *testing.T, exprBytes, body []byte, shapeSeed uint64) {
		g := &exprGen{data: exprBytes}
		src := g.top()
		d, err := jsonbody.Parse(body, 16)
		if err != nil { // not JSON: the bytes choose a body
			body = []byte((&exprGen{data: body}).body(0))
			d, err = jsonbody.Parse(body, 16)
			require.NoError(t, err, "%s", body)
		}
		p, err := env.Compile(src)
		if err != nil || p.nat == nil {
			return // not a bool, an undefined operator: the checker's business
		}
		_, err = p.program() // left for later: it must not fail then
		require.NoError(t, err, src)
		s := genShape(shapeSeed)
		nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: d, Shape: s, Method: "POST", Src: requestSrc()} })
		if !bailed && nat != cel {
			t.Fatalf("%s on %s (shape seed %d): native %s, cel-go %s", src, body, shapeSeed, nat, cel)
		}
		if lp, err := low.Compile(src); err == nil && lp.nat != nil {
			nat, cel, bailed := both(lp, func() *Activation { return &Activation{Body: d, Shape: s, Method: "POST", Src: requestSrc()} })
			if !bailed && nat != cel {
				t.Fatalf("%s on %s (shape seed %d), cost limit 40: native %s, cel-go %s", src, body, shapeSeed, nat, cel)
			}
		}

		// The same bytes as a struct-tag rule on NativeRecord, the body
		// decoded into it.
		tg := &exprGen{data: exprBytes, typed: true}
		tsrc := tg.top()
		tp, err := te.Rule(rt, "f64", tsrc)
		if err != nil || tp.nat == nil {
			return
		}
		_, err = tp.program()
		require.NoError(t, err, tsrc)
		var rec NativeRecord
		_ = json.Unmarshal(body, &rec) // what does not fit stays zero
		nat, cel, bailed = both(tp, func() *Activation { return &Activation{Body: d, Shape: s, Data: &rec, Self: rec.F64} })
		if !bailed && nat != cel {
			t.Fatalf("%s on %+v: native %s, cel-go %s", tsrc, rec, nat, cel)
		}
	})
}

// TestExprGen: the generator reaches the native path for most inputs,
// on the body and on data and self.
func TestExprGen(t *testing.T) {
	env := nativeEnv(t)
	rt := reflect.TypeFor[NativeRecord]()
	te, err := env.ForType(rt, nil)
	require.NoError(t, err)
	for _, typed := range []bool{false, true} {
		compiled, native := 0, 0
		for i := range 2000 {
			var b [32]byte
			for j := range 4 {
				binary.LittleEndian.PutUint64(b[8*j:], uint64(i+1)*0x9e3779b97f4a7c15*uint64(j+1))
			}
			src := (&exprGen{data: b[:], typed: typed}).top()
			var p *Program
			if typed {
				p, err = te.Rule(rt, "f64", src)
			} else {
				p, err = env.Compile(src)
			}
			if err != nil {
				continue
			}
			compiled++
			if p.Native() {
				native++
			}
		}
		t.Logf("typed %v: %d of 2000 generated expressions compile, %d of them native", typed, compiled, native)
		assert.Greater(t, compiled, 300)
		assert.Equal(t, compiled, native, "the grammar stays in the subset")
	}
}

// benchRules are the invariants of the bench module's contracts
// (bench/testdata/contracts/contracts.yaml) on their small body (/lines)
// and on the order.
var benchRules = []struct {
	name, schema, body string
	exprs              []string
}{
	{"small", `{"type":"object","properties":{"sku":{"type":"string","maxLength":32},"quantity":{"type":"integer"},
		"unitPrice":{"type":"number"},"currency":{"type":"string","enum":["EUR","USD","GBP"]},"email":{"type":"string"}}}`,
		`{"sku":"SKU-1","quantity":3,"unitPrice":12.5,"currency":"EUR","email":"ada@example.com"}`,
		[]string{
			"request.body.quantity <= 100",
			"double(request.body.quantity) * request.body.unitPrice <= 10000.0",
			"request.body.currency != 'USD' || request.body.unitPrice >= 1.0",
		}},
	{"order", `{"type":"object","properties":{"total":{"type":"number"},"couponCode":{"type":"string","maxLength":32},
		"items":{"type":"array","maxItems":10000,"items":{"type":"object","properties":{"sku":{"type":"string"},
		"quantity":{"type":"integer"},"unitPrice":{"type":"number"}}}}}}`,
		`{"total":123.5,"couponCode":"SAVE","items":[{"sku":"A","quantity":2,"unitPrice":10},{"sku":"B","quantity":1,"unitPrice":3.5},
		{"sku":"C","quantity":7,"unitPrice":0.5}]}`,
		[]string{
			"request.body.items.all(i, i.quantity <= 100)",
			"request.body.total <= 10000",
			"!has(request.body.couponCode) || request.body.total >= 20",
		}},
}

// BenchmarkEval_BenchRules evaluates the bench's rules on one activation
// per request, natively and with cel-go.
func BenchmarkEval_BenchRules(b *testing.B) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(b, err)
	for _, r := range benchRules {
		s := compileSchema(b, r.schema)
		ce, err := env.ForSchema(s)
		require.NoError(b, err)
		var progs []*Program
		for _, e := range r.exprs {
			p, err := ce.Compile(e)
			require.NoError(b, err)
			require.True(b, p.Native(), e)
			progs = append(progs, p)
		}
		benchPaths(b, r.name, progs, Activation{Body: doc(b, r.body), Shape: s.Numbers()})
	}
}

// benchPaths evaluates progs, natively and with cel-go, on an activation
// set to act anew for each request: every one must hold.
func benchPaths(b *testing.B, name string, progs []*Program, act Activation) {
	for _, path := range []string{"native", "cel-go"} {
		b.Run(name+"/"+path, func(b *testing.B) {
			a := &Activation{}
			b.ReportAllocs()
			for b.Loop() {
				*a = act
				for _, p := range progs {
					eval := p.Eval
					if path == "cel-go" {
						eval = p.evalCEL
					}
					if ok, err := eval(a); !ok || err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

type nativeInner struct {
	Depth  int    `json:"depth"`
	Inline string `json:"inline"`
}

type NativeCurrency string

type NativeItem struct {
	SKU   string  `json:"sku"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

type nativeRecord struct {
	nativeInner
	Ptr      *nativeInner      `json:"ptr"`
	I        int               `json:"i"`
	I32      int32             `json:"i32"`
	I64      int64             `json:"i64,omitempty"`
	U        uint              `json:"u"`
	U32      uint32            `json:"u32"`
	U64      uint64            `json:"u64"`
	F32      float32           `json:"f32"`
	F64      float64           `json:"f64"`
	S        string            `json:"s"`
	B        bool              `json:"b"`
	Cur      NativeCurrency    `json:"cur"`
	Untagged int               // CEL name: Untagged
	Hidden   int               `json:"-"`
	Wait     time.Duration     `json:"wait"`
	At       time.Time         `json:"at"`
	List     []int             `json:"list"`
	Map      map[string]string `json:"map"`
	Items    []NativeItem      `json:"items"`
	Tags     []string          `json:"tags"`
	Ptrs     []*NativeItem     `json:"ptrs"`
	Arr      [2]int            `json:"arr"`
}

// NativeRecord is nativeRecord under a name CEL can refer to.
type NativeRecord nativeRecord

// TestNativeMatchesCEL_Typed_Data evaluates struct-tag rules on data and
// self natively and with cel-go.
func TestNativeMatchesCEL_Typed_Data(t *testing.T) {
	env := nativeEnv(t)
	rt := reflect.TypeFor[NativeRecord]()
	te, err := env.ForType(rt, nil)
	require.NoError(t, err)
	values := []NativeRecord{
		{},
		{I: 1, I32: -2, I64: math.MaxInt64, U: 3, U32: 4, U64: math.MaxUint64, F32: 1.5, F64: -0.0, S: "a", B: true, Cur: "EUR",
			Untagged: 9, Hidden: 1, Wait: time.Second, At: time.Unix(1, 0), List: []int{1}, Map: map[string]string{"k": "v"},
			Ptr: &nativeInner{Depth: 1}, nativeInner: nativeInner{Depth: 2, Inline: "x"},
			Items: []NativeItem{{"A", 2, 10}, {"B", 101, -0.0}}, Tags: []string{"x", "y"}, Ptrs: []*NativeItem{nil}, Arr: [2]int{1, 2}},
		{I: math.MinInt64, I64: -1, F32: float32(math.Inf(1)), F64: 1e300, S: "USD", Cur: "USD", U64: 1 << 63},
		{F64: math.NaN(), F32: float32(math.NaN()), I: 100, S: "é", Items: []NativeItem{{"A", 1, math.NaN()}}, Tags: []string{}},
	}
	rules := []struct {
		field, src string
		native     bool
	}{
		{"", "data.i <= 100", true},
		{"", "double(data.i) * data.f64 <= 10000.0", true},
		{"", "data.s != 'USD' || data.f64 >= 1.0", true},
		{"", "data.i32 < data.i64 && data.u < data.u64", true},
		{"", "data.u32 == 4u && data.f32 > 1.0", true},
		{"", "data.i < data.f64 || data.u64 > data.i64", true},
		{"", "data.b && data.s.startsWith('a')", true},
		{"", "data.cur == 'EUR'", true},
		{"", "data.Untagged == 9", true},
		{"", "data.depth == 2 && data.inline == 'x'", true},
		{"", "has(data.s) && !has(data.i64)", true},
		{"", "has(data.ptr) || has(data.list) || has(data.map) || has(data.at) || has(data.wait)", true},
		{"", "has(data.f64) && has(data.f32) && has(data.depth)", true},
		{"", "data.s == '' || data.i > 0", true},
		{"", "data.f64 == data.f64", true}, // NaN
		{"", "data.items.all(e, e.qty <= 100)", true},
		{"", "data.items.exists(e, e.sku == 'B' && e.price == 0.0)", true},
		{"", "data.items.all(e, e.price < 100.0 && data.i >= 0)", true},
		{"", "data.items.all(e, data.items.exists(f, f.qty >= e.qty))", true},
		{"", "size(data.items) == 2 && data.items[0].qty == 2", true},
		{"", "data.items[1].sku == 'B'", true},
		{"", "data.tags.exists(t, t == 'y') || size(data.tags) == 0", true},
		{"", "'x' in data.tags", true}, // native, but in on data's lists hands over
		{"", "data.items.all(e, has(e.qty))", false},
		{"", "data.ptrs.all(p, p == null)", false},
		{"", "data.arr[0] == 1", false},
		{"", "data.wait > duration('0s')", false},
		{"", "data.ptr.depth == 1", false},
		{"", "size(data.list) == 1 && data.list.all(x, x > 0)", true},
		{"", "data.map.k == 'v'", false},
		{"i", "self <= 100", true},
		{"i32", "self < 0", true},
		{"u64", "self > 1u", true},
		{"f32", "self > 1.0", true},
		{"f64", "self == 0.0 && data.i == 1", true},
		{"s", "self.size() > 0", true},
		{"b", "self", true},
		{"cur", "self == 'EUR'", false}, // a named type
		{"list", "size(self) == 1", false},
	}
	for _, r := range rules {
		p, err := te.Rule(rt, r.field, r.src)
		require.NoError(t, err, r.src)
		require.Equal(t, r.native, p.Native(), r.src)
		if !r.native {
			continue
		}
		for i := range values {
			v := &values[i]
			var self any
			if r.field != "" {
				for _, sf := range reflect.VisibleFields(rt) {
					if strings.Split(sf.Tag.Get("json"), ",")[0] == r.field {
						self = reflect.ValueOf(v).Elem().FieldByIndex(sf.Index).Interface()
					}
				}
			}
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Data: v, Self: self} })
			if strings.Contains(r.src, " in data.") {
				assert.True(t, bailed, r.src)
				continue
			}
			require.False(t, bailed, r.src)
			assert.Equal(t, cel, nat, "%s on value %d", r.src, i)
		}
		// data of another type, or none: cel-go decides.
		_, _, done := p.nat.eval(&Activation{Data: &nativeInner{}, Self: struct{}{}})
		assert.False(t, done, r.src)
	}
}

// BenchLine and BenchOrder are the bench module's typed bodies (its
// data_test.go), with their struct-tag rules below.
type BenchLine struct {
	SKU       string  `json:"sku"`
	Quantity  int     `json:"quantity"`
	UnitPrice float64 `json:"unitPrice"`
	Currency  string  `json:"currency"`
	Email     string  `json:"email"`
}

type BenchItem struct {
	SKU       string  `json:"sku"`
	Quantity  int     `json:"quantity"`
	UnitPrice float64 `json:"unitPrice"`
}

type BenchOrder struct {
	Items      []BenchItem `json:"items"`
	Total      float64     `json:"total"`
	CouponCode string      `json:"couponCode,omitempty"`
}

// BenchmarkEval_TypedRules evaluates the bench's struct-tag rules,
// natively and with cel-go.
func BenchmarkEval_TypedRules(b *testing.B) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(b, err)
	for _, r := range []struct {
		name   string
		data   any
		rules  []string
		native []bool
	}{
		{"small", &BenchLine{"SKU-1", 3, 12.5, "EUR", "ada@example.com"}, []string{
			"data.quantity <= 100", "double(data.quantity) * data.unitPrice <= 10000.0", "data.currency != 'USD' || data.unitPrice >= 1.0",
		}, []bool{true, true, true}},
		{"order", &BenchOrder{Items: []BenchItem{{"A", 2, 10}, {"B", 1, 3.5}}, Total: 123.5, CouponCode: "SAVE"}, []string{
			"data.items.all(i, i.quantity <= 100)", "data.total <= 10000", "data.couponCode == '' || data.total >= 20",
		}, []bool{true, true, true}},
	} {
		rt := reflect.TypeOf(r.data).Elem()
		te, err := env.ForType(rt, nil)
		require.NoError(b, err)
		var progs []*Program
		for i, e := range r.rules {
			p, err := te.Rule(rt, "", e)
			require.NoError(b, err)
			require.Equal(b, r.native[i], p.Native(), e)
			progs = append(progs, p)
		}
		benchPaths(b, r.name, progs, Activation{Data: r.data})
	}
}

// TestNative_PlannedLater: cel-go's program of an expression the native
// path covers is planned when an evaluation first falls back, not when it
// compiles; one with a call of constants is planned when it compiles, so
// that a conversion cel-go folds and refuses is still a load-time error.
func TestNative_PlannedLater(t *testing.T) {
	env := nativeEnv(t)
	for _, src := range []string{"request.body.a < 100", "request.body.s in ['a', 'b'] && has(request.body.b)", "request.body.s.matches('^[a-z]+$')"} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		assert.NotNil(t, p.plan, "%s: planned when compiled", src)
		ok, err := p.evalCEL(&Activation{Body: doc(t, `{"a":1,"s":"a","b":true}`), Method: "POST", Src: requestSrc()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
		assert.Nil(t, p.plan, src)
	}
	for src, msg := range map[string]string{"int('a') == 0": "type conversion error", "request.body.a == 1 && uint(-1) == 1u": "unsigned integer overflow",
		"double('x') < request.body.a": "type conversion error", "int(int('1.5')) == 1": "type conversion error",
		// An index by a constant null, which cel-go's planner refuses: not
		// in the native subset, so planned, and refused, when it compiles.
		"request.body.a[null] == 1 || request.body.ok": "invalid qualifier type",
		"request.body.all(e, e[null] == 1 || true)":    "invalid qualifier type"} {
		_, err := env.Compile(src)
		assert.ErrorContains(t, err, msg, src)
	}
	p, err := env.Compile("int('1') == request.body.a")
	require.NoError(t, err)
	require.True(t, p.Native(), "covered by the native path, so only the call of constants plans it now")
	assert.Nil(t, p.plan, "a call of constants is planned when it compiles")
}

// TestNative_CostLimit_ObjectOrder: all() and exists() over an object
// stop at the first member that decides, which the native path meets in
// the body's order and cel-go in sorted order. Under the cost limit, the
// members cel-go visits first may be the expensive ones: where cel-go
// stops at the limit, the native path must not decide.
func TestNative_CostLimit_ObjectOrder(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"m":{"type":"object","maxProperties":4,"additionalProperties":{"type":"integer"}},
		"l":{"type":"array","maxItems":400,"items":{"type":"integer"}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	l := strings.TrimSuffix(strings.Repeat("1,", 400), ",")
	for _, src := range []string{
		// 'z' decides at once, 'c' is cheap; any other member costs a
		// quadratic walk of l.
		"!request.body.m.all(k, k != 'z' && (k == 'c' || request.body.l.all(x, request.body.l.all(y, x == y || x != y))))",
		"!request.body.m.exists(k, k == 'z' || k != 'c' && request.body.l.exists(x, request.body.l.exists(y, x != y)))",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		require.True(t, p.Tracked(), src)
		for m, decides := range map[string]bool{
			`{"z":1,"a":2}`: false, `{"a":2,"z":1}`: false, `{"c":1,"b":2,"z":3,"d":4}`: false,
			`{"z":1}`: true, `{"z":1,"zz":2}`: true, `{"z":1,"c":2}`: true, `{"c":1,"z":2,"zz":3}`: true,
		} {
			body := doc(t, `{"m":`+m+`,"l":[`+l+`]}`)
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Shape: s.Numbers()} })
			if !bailed {
				assert.Equal(t, cel, nat, "%s on %s", src, m)
			}
			assert.Equal(t, decides, !bailed, "%s on %s", src, m)
			ok, err := p.Eval(&Activation{Body: body, Shape: s.Numbers()})
			assert.Equal(t, cel, verdictOf(ok, err), "%s on %s", src, m)
		}
	}
	// Looking for the members that sort before the deciding one is charged
	// too: nested in another loop, it would otherwise be work no budget
	// bounds.
	small, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	p, err := small.Compile("request.body.m.exists(k, true)")
	require.NoError(t, err)
	require.True(t, p.Tracked())
	var members []string
	for i := range 2000 {
		members = append(members, fmt.Sprintf(`"k%04d":0`, i))
	}
	body := doc(t, `{"m":{`+strings.Join(members, ",")+`}}`)
	_, _, done := p.nat.eval(&Activation{Body: body})
	assert.False(t, done, "2000 members to look through, on a budget of 1000")
}

// TestNativeMatchesCEL_InKeptCalls: a program that keeps its calls of in
// over a constant list (keepInCalls: one whose x may be a string) is
// evaluated by cel-go with list.Contains, whose Equal finds an int in a
// list of the double it converts to (9007199254740993 in
// [9007199254740992.0]), which cel-go's set does not: the native path
// decides each program as cel-go runs it, a constant x (a set still)
// included.
func TestNativeMatchesCEL_InKeptCalls(t *testing.T) {
	env := nativeEnv(t)
	s := compileSchema(t, `{"type":"object","properties":{"q":{"type":"integer"},"x":{},"s":{"type":"string"}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for _, c := range []struct {
		src, body string
		want      verdict
	}{
		{"request.body.x in [9007199254740992.0]", `{"x":9007199254740993}`, vdTrue},
		{"request.body.x in [9223372036854775807.0]", `{"x":9223372036854775807}`, vdTrue},
		{"!(request.body.x in [9007199254740992.0, 'a'])", `{"x":9007199254740993}`, vdFalse},
		{"request.body.x in [1.8446744073709551615e19]", `{"x":18446744073709551615}`, vdTrue}, // a double either way
		// An integer x alone is a set's lookup; with a string's in in the
		// same program, every in is a call.
		{"request.body.q in [9007199254740992.0, 'a']", `{"q":9007199254740993}`, vdFalse},
		{"request.body.q in [9007199254740992.0, 'a'] || request.body.s in ['a']", `{"q":9007199254740993,"s":"b"}`, vdTrue},
		{"int('9007199254740993') in [9007199254740992.0, 'a'] || request.body.s in ['a']", `{"s":"b"}`, vdFalse},
		{"9007199254740993 in [9007199254740992.0, 'a'] || request.body.s in ['a']", `{"s":"b"}`, vdFalse},
	} {
		p, err := ce.Compile(c.src)
		require.NoError(t, err, c.src)
		require.True(t, p.Native(), c.src)
		body := doc(t, c.body)
		nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body, Shape: s.Numbers()} })
		require.False(t, bailed, c.src)
		assert.Equal(t, c.want, cel, "%s on %s: cel-go", c.src, c.body)
		assert.Equal(t, cel, nat, "%s on %s", c.src, c.body)
	}
}

// TestNative_CostLimit_PrefixLength: cel-go charges startsWith and
// endsWith by the length of the prefix or suffix (a tenth of a unit per
// code point), not of the string searched: a long prefix of a short
// string is over the limit to cel-go, so the native path must not decide
// it either.
func TestNative_CostLimit_PrefixLength(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	for _, src := range []string{"!request.body.s.startsWith(request.body.t)", "!request.body.s.endsWith(request.body.t)"} {
		p, err := env.Compile(src)
		require.NoError(t, err, src)
		require.True(t, p.Native(), src)
		require.True(t, p.Tracked(), src)
		for _, body := range []string{
			`{"s":"a","t":"` + strings.Repeat("b", 20000) + `"}`, // 2,000 units for cel-go
			`{"t":"a","s":"` + strings.Repeat("b", 20000) + `"}`,
			`{"s":"a","t":"` + strings.Repeat("b", 500) + `"}`, // within the limit
		} {
			d := doc(t, body)
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: d} })
			if !bailed {
				assert.Equal(t, cel, nat, "%s on %.40s", src, body)
			}
			ok, err := p.Eval(&Activation{Body: d})
			assert.Equal(t, cel, verdictOf(ok, err), "%s on %.40s", src, body)
		}
	}
}
