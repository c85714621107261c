package expr

import (
	"math/rand/v2"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// parserCorpus is expressions of every syntax the base environment knows,
// valid and not: literals, escapes, operators and their precedence,
// macros, optional syntax, the extensions' functions, comments and line
// breaks (offsets), reserved words, and the size and nesting limits.
var parserCorpus = []string{
	`request.body.quantity <= 100`,
	`request.body.items.all(i, i.qty <= 100) && size(request.body.items) > 0`,
	`request.body.items.exists(i, i.sku == "A") || !has(request.body.coupon)`,
	`request.body.items.exists_one(i, i.qty > 1)`,
	`request.body.items.map(i, i.qty * 2).filter(q, q > 4).size() == 1`,
	`request.body.items.map(i, i.qty > 1, i.sku)`,
	`has(request.body.a.b) ? request.body.a.b : 0 > -1`,
	`request.body.?a.?b.orValue(1) == 1`,
	`[1, ?request.body.?x, 3].size() == 2`,
	`{"a": 1, ?"b": optional.none()}.size() == 1`,
	`optional.of(1).optMap(x, x + 1).value() == 2`,
	`optional.of([1]).optFlatMap(x, optional.of(x[0])).hasValue()`,
	`request.body.total >= 1.5e3 && request.body.total < 1e-3 || request.body.n == 0x1F || request.body.u == 42u`,
	`b"\x00\377" == bytes("\000") || r"\d+" == '\\d+' || """multi
line""" == '''x'''`,
	`"\u00e9\U0001F600\a\b\f\n\r\t\v\\\"\'\` + "`" + `" != ""`,
	`-(-request.body.a) == --1 && !!true && -9223372036854775808 < 0`,
	`1 + 2 * 3 - 4 / 5 % 6 == 7 || 1 < 2 == true && "a" in ["a"]`,
	`request.headers["x-id"] != "" && request.params.id.matches("^[0-9]+$")`,
	`request.body.name.lowerAscii().trim().startsWith("a") && "a,b".split(",").size() == 2`,
	`math.greatest(1, 2) == 2 && [3, 1].sort() == [1, 3] && sets.contains([1, 2], [1])`,
	`lists.range(3).size() == 3 && [[1], [2]].flatten().distinct().size() == 2`,
	`context.user.role == "admin" // a comment
	&& request.method == "POST"`,
	"request.body.a\n\t&&\r\n  request.body.b",
	`int("1") + uint(2) + double(3) > 0.0 && string(1) == "1" && type(1) == int`,
	`timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z") && duration("1h") > duration("1m")`,
	`a.b.c{d: 1}`,
	`.request.body`,
	`request.body[0]["a"][1u]`,
	`dyn(request.body).x == null`,
	// Not expressions.
	``, ` `, `(`, `)`, `1 +`, `request.body.`, `a.in`, `a.?`, `[1,`, `{"a" 1}`, `1 ? 2`,
	`"unterminated`, `'\q'`, `b"\u00e9"`, `0x`, `1e`, `18446744073709551616u`, `9223372036854775808`,
	"`escaped`.field", "a.`b c`", `has(a)`, `a.all(1, true)`, `1 == = 2`, `a | b`, `a & b`, `!`,
	`in`, `null.x`, `while`, `a.b()()`, `a[]`, `{:}`, "\x00", "\xff", `"\xff"`,
	"0X0.A", "0X1 == 1", "{,}", "[,]", `rb"x" == b"x"`, `Rb'\d' == b''`, `RB"" == bR""`, `b'' == br''`,
	strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1),
	strings.Repeat("(", MaxNesting-2) + "1" + strings.Repeat(")", MaxNesting-2),
	strings.Repeat("a.", 40) + "b",
	strings.Repeat("1 + ", 100) + "1 == 0",
	"'" + strings.Repeat("x", MaxExpressionLength) + "'",
	"'" + strings.Repeat("é", MaxExpressionLength-2) + "'",
}

// samePrattParse requires of what the Pratt parser accepts that env's own
// (ANTLR) parser accepts it too, with the same AST: the same nodes, ids,
// line offsets and macro calls. (What the Pratt parser refuses, compile
// parses with env's parser: "{,}" is one.) Not always the same positions (the
// column of a leading-dot name, ".a", is 0 in one, 1 in the other): a
// position is read only to place an error message, and every expression
// that does not compile is parsed and checked again by env's parser for
// its message (compile); so of positions it requires only that every
// node has one in both.
func samePrattParse(t *testing.T, e *Env, src string) {
	t.Helper()
	want, iss := e.env.Parse(src)
	got := parsed(e.pratt, src)
	if got == nil {
		return // compile parses it with env's parser then
	}
	require.NoError(t, iss.Err(), "%q: the Pratt parser accepts it, env refuses it", src)
	wp, err := cel.AstToParsedExpr(want)
	require.NoError(t, err)
	gp, err := cel.AstToParsedExpr(got)
	require.NoError(t, err)
	wPos, gPos := wp.SourceInfo.Positions, gp.SourceInfo.Positions
	wp.SourceInfo.Positions, gp.SourceInfo.Positions = nil, nil
	require.True(t, proto.Equal(wp, gp), "%q:\nenv:   %v\npratt: %v", src, wp, gp)
	require.Equal(t, len(wPos), len(gPos), "%q: positions of other nodes", src)
	for id := range wPos {
		_, ok := gPos[id]
		require.True(t, ok, "%q: no position for node %d", src, id)
	}
}

// TestPrattParsesAsEnv holds the Pratt parser compile uses to the base
// environment's parser on the corpus.
func TestPrattParsesAsEnv(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	for _, src := range parserCorpus {
		samePrattParse(t, e, src)
	}
}

// FuzzPrattVsEnv is TestPrattParsesAsEnv on any text.
func FuzzPrattVsEnv(f *testing.F) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(f, err)
	for _, src := range parserCorpus {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		samePrattParse(t, e, src)
	})
}

// nestWrappers are the ways one expression nests inside another: each an
// opening and a closing text around it.
var nestWrappers = [][2]string{
	{"(", ")"}, {"[", "]"}, {"[1 + ", "]"}, {"{1: ", "}"}, {"size(", ")"}, {"f(1 + ", ")"},
	{"a.f(", ")"}, {"1 + (", ")"}, {"a == (", ")"}, {"a && (", ")"}, {"a || (", ")"},
	{"2 * (", ")"}, {"1 in (", ")"}, {"a ? 1 : ", ""}, {"(a ? ", " : a)"}, {"!", ""},
	{"-", ""}, {"!(", ")"}, {"a[", "]"}, {"a[?", "]"}, {"a.all(x, ", ")"},
	{"(a.exists(x, ", "))"}, {"A{b: ", "}"}, {"[?", "]"}, {"(", " + 1)"},
	{"x.?y.map(v, ", ")"}, {"optional.of(", ").value()"}, {"{?1: optional.of(", ")}"},
	{"a.b[", "].c"}, {"(", ")[0]"}, {"has(a.b) ? (", ") : 0"}, {"[1, 2, ", ", 3]"},
}

// nestedCorpus is n expressions of random nestings of nestWrappers, 1 to
// 40 deep, around a name, the same every run.
func nestedCorpus(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		d := 1 + r.IntN(40)
		var open, close strings.Builder
		ws := make([][2]string, d)
		for k := range ws {
			ws[k] = nestWrappers[r.IntN(len(nestWrappers))]
			open.WriteString(ws[k][0])
		}
		for k := d - 1; k >= 0; k-- {
			close.WriteString(ws[k][1])
		}
		out[i] = open.String() + "a" + close.String()
	}
	return out
}

// TestPrattNestingWithinEnv holds the Pratt parser's recursion limit to
// env's: each way of nesting, 1 to 40 deep, and random mixes of them.
func TestPrattNestingWithinEnv(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	for _, w := range nestWrappers {
		for d := 1; d <= 40; d++ {
			samePrattParse(t, e, strings.Repeat(w[0], d)+"a"+strings.Repeat(w[1], d))
		}
	}
	for _, src := range nestedCorpus(3000) {
		samePrattParse(t, e, src)
	}
}
