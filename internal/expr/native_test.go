package expr

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
		for n := 1; n < 600; n = n*2 + 1 {
			items := strings.TrimSuffix(strings.Repeat("1,", n), ",")
			body := doc(t, fmt.Sprintf(`{"items":[%s],"s":"%s","t":"%s"}`, items, strings.Repeat("a", n*3), strings.Repeat("a", n)))
			nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: body} })
			if !bailed {
				assert.Equal(t, cel, nat, "%s with %d items", src, n)
				assert.NotEqual(t, vdError, cel, "%s with %d items: within the limit for cel-go too", src, n)
			}
		}
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
}

// contractInvariants are the invariants of the repository's contracts:
// testdata/contracts, the conformance suites' and the bench module's, each
// with the schema it is compiled against.
func contractInvariants(t *testing.T) (out []struct {
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

// exprGen writes a random expression of the subset (and a little beyond)
// from the bytes of a fuzz input.
type exprGen struct {
	data  []byte
	vars  []string
	depth int
}

func (g *exprGen) pick(n int) int {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return int(b) % n
}

var (
	genNames    = []string{"a", "b", "x", "y"}
	genLiterals = []string{"0", "1", "-1", "2", "1.0", "0.5", "-0.0", "1e308", "1u", "0u", "18446744073709551615u",
		"9223372036854775807", "-9223372036854775808", "9223372036854775807.0", "'a'", "''", "'b'", "true", "false", "null"}
	genBinary = []string{"==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "&&", "||", "in"}
)

func (g *exprGen) expr() string {
	if g.depth > 6 || len(g.data) == 0 {
		return g.leaf()
	}
	g.depth++
	defer func() { g.depth-- }()
	switch g.pick(16) {
	case 0, 1, 2, 3:
		return "(" + g.expr() + " " + genBinary[g.pick(len(genBinary))] + " " + g.expr() + ")"
	case 4:
		return "!" + g.expr()
	case 5:
		return "-" + g.expr()
	case 6:
		return "(" + g.expr() + " ? " + g.expr() + " : " + g.expr() + ")"
	case 7:
		return []string{"int", "uint", "double", "size"}[g.pick(4)] + "(" + g.expr() + ")"
	case 8:
		return "has(" + g.path() + "." + genNames[g.pick(len(genNames))] + ")"
	case 9:
		var elems []string
		for range g.pick(4) {
			elems = append(elems, genLiterals[g.pick(len(genLiterals))])
		}
		return g.expr() + " in [" + strings.Join(elems, ", ") + "]"
	case 10:
		v := []string{"e", "f", "g"}[len(g.vars)%3]
		rng := g.path()
		g.vars = append(g.vars, v)
		body := g.expr()
		g.vars = g.vars[:len(g.vars)-1]
		return rng + "." + []string{"all", "exists"}[g.pick(2)] + "(" + v + ", " + body + ")"
	case 11:
		return g.expr() + "." + []string{"startsWith", "endsWith", "contains"}[g.pick(3)] + "(" + g.expr() + ")"
	case 12:
		return g.expr() + ".matches('" + []string{"^a", "b$", "^[0-9]+$", ""}[g.pick(4)] + "')"
	}
	return g.leaf()
}

func (g *exprGen) leaf() string {
	if g.pick(2) == 0 {
		return genLiterals[g.pick(len(genLiterals))]
	}
	return g.path()
}

// path is request.body or an iteration variable, and up to three
// selections or indexes below it.
func (g *exprGen) path() string {
	p := "request.body"
	if len(g.vars) > 0 && g.pick(2) == 0 {
		p = g.vars[g.pick(len(g.vars))]
	}
	for range g.pick(4) {
		switch g.pick(4) {
		case 0:
			p += "[" + strconv.Itoa(g.pick(3)) + "]"
		case 1:
			p += "['" + genNames[g.pick(len(genNames))] + "']"
		default:
			p += "." + genNames[g.pick(len(genNames))]
		}
	}
	return p
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
		return s
	}
	return level(2)
}

// FuzzNativeVsCEL compiles random expressions both ways and evaluates
// them on random bodies under random shapes: the same verdict, true,
// false or error, every time the native path does not hand over.
func FuzzNativeVsCEL(f *testing.F) {
	env := nativeEnv(f)
	seeds := []struct{ expr, body string }{
		{"\x00\x07\x02\x01\x03", `{"a":1,"b":2.5}`},
		{"\x0a\x01\x00\x02\x00\x03\x01\x02", `{"a":[{"a":1},{"b":[1,2]}],"x":{"y":"a"}}`},
		{"\x09\x03\x01\x00\x05\x0c\x0f", `{"x":9223372036854775807,"y":-0.0,"a":1e400}`},
		{"\x06\x08\x00\x01\x04\x0b\x02\x06", `{"a":"abc","b":null,"x":[true,false],"y":{}}`},
		{"\x00\x0d\x0e\x01\x03\x02\x07\x09", `{"a":18446744073709551615,"b":1.0,"x":"1","y":[[1]]}`},
	}
	for i, s := range seeds {
		f.Add([]byte(s.expr), []byte(s.body), uint64(i)*7919)
	}
	for _, o := range operands {
		f.Add([]byte("\x00\x02\x01\x00\x07\x01\x02\x03"), []byte(`{"a":`+o+`,"b":[`+o+`],"x":{"a":`+o+`}}`), uint64(len(o)))
	}
	f.Fuzz(func(t *testing.T, exprBytes, body []byte, shapeSeed uint64) {
		g := &exprGen{data: exprBytes}
		src := g.expr()
		d, err := jsonbody.Parse(body, 16)
		if err != nil {
			return
		}
		p, err := env.Compile(src)
		if err != nil || p.nat == nil {
			return // not a bool, an undefined operator: the checker's business
		}
		s := genShape(shapeSeed)
		nat, cel, bailed := both(p, func() *Activation { return &Activation{Body: d, Shape: s, Method: "POST", Src: requestSrc()} })
		if !bailed && nat != cel {
			t.Fatalf("%s on %s (shape seed %d): native %s, cel-go %s", src, body, shapeSeed, nat, cel)
		}
	})
}

// TestExprGen: the generator reaches the native path for most inputs.
func TestExprGen(t *testing.T) {
	env := nativeEnv(t)
	compiled, native := 0, 0
	for i := range 2000 {
		var b [32]byte
		for j := range 4 {
			binary.LittleEndian.PutUint64(b[8*j:], uint64(i+1)*0x9e3779b97f4a7c15*uint64(j+1))
		}
		p, err := env.Compile((&exprGen{data: b[:]}).expr())
		if err != nil {
			continue
		}
		compiled++
		if p.Native() {
			native++
		}
	}
	t.Logf("%d of 2000 generated expressions compile, %d of them native", compiled, native)
	assert.Greater(t, compiled, 400)
	assert.Equal(t, compiled, native, "the grammar stays in the subset")
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
		body := doc(b, r.body)
		for _, path := range []string{"native", "cel-go"} {
			b.Run(r.name+"/"+path, func(b *testing.B) {
				a := &Activation{}
				b.ReportAllocs()
				for b.Loop() {
					*a = Activation{Body: body, Shape: s.Numbers()}
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
}
