package expr

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
)

// parserCorpus is expressions of every syntax the base environment knows,
// valid and not, plain and not: literals, escapes, operators and their
// precedence, macros, optional syntax, the extensions' functions,
// comments and line breaks (offsets), reserved words, texts the two
// parsers are known to read apart, and the size and nesting limits.
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
	`request.body.total >= 1.5e3 && request.body.total < 1e-3 || request.body.n == 0x1F || request.body.u == 42u`,
	`b"\x00\377" == bytes("\000") || r"\d+" == '\\d+' || """multi
line""" == '''x'''`,
	`-(-request.body.a) == --1 && !!true && -9223372036854775808 < 0`,
	`-9223372036854775808 < 0`, `9223372036854775807 > 0`, `-1 == - 1`, `--1 == 1`, `- -1 == 1`, `!!true`, `! !true`,
	`1 + 2 * 3 - 4 / 5 % 6 == 7 || 1 < 2 == true && "a" in ["a"]`,
	`1 < 2 < 3`, `a == b == c`, `a in b in c`, `!a in b`, `-a.b`, `a.b(c)(d)`, `a[b][c].d`, `a.b[c](d)`,
	`request.headers["x-id"] != "" && request.params.id.matches("^[0-9]+$")`,
	`request.body.name.lowerAscii().trim().startsWith("a") && "a,b".split(",").size() == 2`,
	`math.greatest(1, 2) == 2 && [3, 1].sort() == [1, 3] && sets.contains([1, 2], [1])`,
	`context.user.role == "admin" // a comment
	&& request.method == "POST"`,
	"request.body.a\n\t&&\r\n  request.body.b",
	"request.body.a\n\t&&\n  request.body.b\n",
	`int("1") + uint(2) + double(3) > 0.0 && string(1) == "1" && type(1) == int`,
	`a.b.c{d: 1}`, `.request.body`, `request.body[0]["a"][1u]`, `dyn(request.body).x == null`,
	`'abc'.size() == 3`, `"x".startsWith("x")`, `[1, 2][0] == 1`, `[].size() == 0`, `size([]) == 0`, `[1,]`, `f(1,)`,
	`has(a.b)`, `has(a)`, `has(a.b.c) && has(a[0].b)`, `a.all(1, true)`, `a.all(x)`, `a.map(x, y, z, w)`, `has()`,
	`in`, `a in`, `in a`, `null.x`, `true.x`, `a.true`, `a.null`, `a.in`, `a.if`, `if`, `while`, `a.while`, `namespace.x`,
	// Not expressions.
	``, ` `, `(`, `)`, `1 +`, `request.body.`, `a.?`, `[1,`, `{"a" 1}`, `1 ? 2`,
	`"unterminated`, `'\q'`, `b"\u00e9"`, `0x`, `1e`, `18446744073709551616u`, `9223372036854775808`, `99999999999999999999`,
	"`escaped`.field", "a.`b c`", `1 == = 2`, `a | b`, `a & b`, `!`, `a b`, `1 2`, `'a' 'b'`, `a 'b'`, `a()b`, `()`, `[)`, `(]`,
	`a.b()()`, `a[]`, `{:}`, "\x00", "\xff", `"\xff"`, `a.1`, `1.a`, `1.5.a`, `01`, `00`, `0.0`, `1.`, `.5`,
	"0X0.A", "0X1 == 1", "{,}", "[,]", `rb"x" == b"x"`, `Rb'\d' == b''`, `RB"" == bR""`, `b'' == br''`, `r''`, `''`, `'''a'''`,
	strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1),
	strings.Repeat("(", MaxNesting-2) + "1" + strings.Repeat(")", MaxNesting-2),
	strings.Repeat("(", 14) + "a" + strings.Repeat(")", 14),
	strings.Repeat("a.", 40) + "b",
	strings.Repeat("a.", 14) + "b",
	strings.Repeat("1 + ", 100) + "1 == 0",
	strings.Repeat("1 + ", 14) + "1 == 0",
	strings.Repeat("(1 + ", 7) + "1" + strings.Repeat(")", 7),
	"'" + strings.Repeat("x", MaxExpressionLength) + "'",
	"'" + strings.Repeat("é", MaxExpressionLength-2) + "'",
}

// repositoryTexts are the texts of the repository's invariants
// (contractInvariants), each once.
func repositoryTexts(t testing.TB) []string {
	var out []string
	for _, inv := range contractInvariants(t) {
		if !slices.Contains(out, inv.expr) {
			out = append(out, inv.expr)
		}
	}
	return out
}

func TestPlain(t *testing.T) {
	// Almost every invariant of the repository is plain: 40 of 42 when
	// this was written (an optional selection and a text of 33 tokens are
	// not).
	texts, plainTexts := repositoryTexts(t), 0
	for _, src := range texts {
		if plain(src) {
			plainTexts++
		}
	}
	assert.GreaterOrEqual(t, plainTexts, len(texts)-2, "plain texts among the repository's invariants")
	for _, src := range []string{
		`request.body.quantity42 <= 142`, // bench/scale_test.go's distinct contracts
		`!has(request.body.couponCode) || request.body.total >= 20`,
		`request.params.orderId.matches('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')`,
		`a`, `a.b`, `f(a, b)`, `a[0]`, `'a'.b()`, `[1, 2]`, `(a) in b`, `a in [1]`, `-1`, `!a`, "a\n&&\tb",
		strings.Repeat("a.", maxPlainTokens/2-1) + "a",
	} {
		assert.True(t, plain(src), "%q", src)
	}
	// The texts the Pratt parser is known to read apart from ANTLR, and
	// whatever lies outside the subset.
	for _, src := range []string{
		``, ` `, `0X1 == 1`, `0x1`, `1u`, `1e3`, `1.`, `.5`, `01`, `1.5.a`, `1a`, `12345678901234567`,
		`rb'' == b''`, `r'x'`, `b'x'`, `'''x'''`, `''''`, `'a\'b'`, `'é'`, "'\t'", `'a'b`,
		`.a`, `a .b`, `a. b`, `a.?b`, `a[?0]`, `a ? b : c`, `{}`, `{'a': 1}`, `A{b: 1}`, "`a`",
		`a // x`, `a = b`, `a & b`, `a | b`, `a ~ b`, `a b`, `1 2`, `'a' 'b'`, `a 1`, `) a`, `in a`,
		`if`, `a.while`, `as`, "a\r\nb", "\x00", "\xff",
		strings.Repeat("a.", maxPlainTokens/2) + "a",
		strings.Repeat("(", 16) + "a" + strings.Repeat(")", 16),
		strings.Repeat("1 + ", 100) + "1",
		"'" + strings.Repeat("x", MaxExpressionLength) + "'",
	} {
		assert.False(t, plain(src), "%q", src)
	}
}

// samePrattParse requires of what the Pratt parser accepts (a plain text)
// that the base environment's own (ANTLR) parser accepts it too, with the
// same AST: the same nodes, ids, start positions, line offsets and macro
// calls (parsed keeps no stop positions: see there).
// (What the Pratt parser refuses, compile parses with env's parser: "[,]"
// is one.) It reports whether the Pratt parser accepted src.
func samePrattParse(t *testing.T, e *Env, src string) bool {
	t.Helper()
	got, _ := prattParse(e.pratt, src)
	if got == nil {
		return false
	}
	want, iss := e.env.Parse(src)
	require.NoError(t, iss.Err(), "%q: the Pratt parser accepts it, env refuses it", src)
	wp, err := cel.AstToParsedExpr(want)
	require.NoError(t, err)
	gp, err := parsedExpr(got)
	require.NoError(t, err)
	require.True(t, proto.Equal(wp, gp), "%q:\nenv:   %v\npratt: %v", src, wp, gp)
	return true
}

// plainVocabulary is what randomPlainText draws tokens from: names (the
// macros, functions, literals and reserved words among them), numbers,
// strings, operators and brackets.
var plainVocabulary = []string{
	"request", "body", "items", "quantity", "a", "b", "i", "x", "_x", "x1", "A",
	"has", "all", "exists", "exists_one", "map", "filter", "size", "double", "int", "string", "matches",
	"in", "true", "false", "null", "if", "while", "as",
	"0", "1", "42", "100", "1.5", "0.0", "10000.0", "123456789012345", "9223372036854775807",
	"'a'", `"b"`, "'USD'", "''", `""`, "'^[a-z]+$'",
	".", ",", "(", ")", "[", "]", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "+", "-", "*", "/", "%",
}

// randomPlainText is up to maxPlainTokens+2 tokens of plainVocabulary,
// joined with nothing, a blank or a line feed: mostly not expressions.
func randomPlainText(r *rand.Rand) string {
	var b strings.Builder
	n := 1 + r.IntN(maxPlainTokens+2)
	for k := range n {
		if k > 0 {
			b.WriteString([]string{"", "", " ", " ", "\n"}[r.IntN(5)])
		}
		b.WriteString(plainVocabulary[r.IntN(len(plainVocabulary))])
	}
	return b.String()
}

// randomPlainExpr is a random expression of the plain subset, mostly
// well-formed: what invariants are made of, nested depth deep.
func randomPlainExpr(r *rand.Rand, depth int) string {
	leaf := func() string {
		switch r.IntN(6) {
		case 0:
			return []string{"0", "1", "100", "1.5", "-1", "-2.5"}[r.IntN(6)]
		case 1:
			return []string{"'a'", `"USD"`, "''", "'x y'"}[r.IntN(4)]
		case 2:
			return []string{"true", "false", "null"}[r.IntN(3)]
		default:
			return []string{"request.body.a", "request.body.items", "i.qty", "context.user.role", "x", "request.params.id"}[r.IntN(6)]
		}
	}
	if depth <= 0 {
		return leaf()
	}
	sub := func() string { return randomPlainExpr(r, depth-1) }
	switch r.IntN(12) {
	case 0:
		return sub() + " " + []string{"==", "!=", "<", "<=", ">", ">="}[r.IntN(6)] + " " + sub()
	case 1:
		return sub() + " " + []string{"&&", "||"}[r.IntN(2)] + " " + sub()
	case 2:
		return sub() + " " + []string{"+", "-", "*", "/", "%"}[r.IntN(5)] + " " + sub()
	case 3:
		return "!" + sub()
	case 4:
		return "-" + sub()
	case 5:
		return "(" + sub() + ")"
	case 6:
		return "has(" + leaf() + ")"
	case 7:
		return sub() + " in [" + leaf() + ", " + leaf() + "]"
	case 8:
		return sub() + "." + []string{"all", "exists", "exists_one", "map", "filter"}[r.IntN(5)] + "(i, " + sub() + ")"
	case 9:
		return []string{"size", "double", "int", "string"}[r.IntN(4)] + "(" + sub() + ")"
	case 10:
		return sub() + "[" + leaf() + "]"
	}
	return sub() + "." + []string{"size()", "startsWith('a')", "x", "lowerAscii()"}[r.IntN(4)]
}

// nestWrappers are the ways one expression nests inside another: each an
// opening and a closing text around it.
var nestWrappers = [][2]string{
	{"(", ")"}, {"[", "]"}, {"[1 + ", "]"}, {"size(", ")"}, {"f(1 + ", ")"}, {"a.f(", ")"}, {"1 + (", ")"},
	{"a == (", ")"}, {"a && (", ")"}, {"a || (", ")"}, {"2 * (", ")"}, {"1 in (", ")"}, {"!", ""}, {"-", ""},
	{"!(", ")"}, {"a[", "]"}, {"a.all(x, ", ")"}, {"(a.exists(x, ", "))"}, {"(", " + 1)"}, {"a.b[", "].c"},
	{"(", ")[0]"}, {"[1, 2, ", ", 3]"}, {"a.b.c.d(", ")"}, {"1 < (", ")"}, {"(", ").b.c"},
	{"a ? 1 : ", ""}, {"{1: ", "}"}, {"a[?", "]"}, // not plain
}

// nestedTexts are each way of nesting 1 to 40 deep, and n random mixes
// of them 1 to 40 deep, around a name, the same every run.
func nestedTexts(n int) []string {
	var out []string
	for _, w := range nestWrappers {
		for d := 1; d <= 40; d++ {
			out = append(out, strings.Repeat(w[0], d)+"a"+strings.Repeat(w[1], d))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
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
		out = append(out, open.String()+"a"+close.String())
	}
	return out
}

// TestPrattSubset holds the Pratt parser to env's on every plain text of
// the corpus, on nestings, on random token sequences and on random
// expressions.
func TestPrattSubset(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	for _, src := range append(parserCorpus, repositoryTexts(t)...) {
		samePrattParse(t, e, src)
	}
	// Nesting: neither parser's limit decides on a plain text.
	for _, src := range nestedTexts(3000) {
		samePrattParse(t, e, src)
	}
	r := rand.New(rand.NewPCG(7, 11))
	plainTexts, accepted := 0, 0
	for range 6000 {
		for _, src := range []string{randomPlainText(r), randomPlainExpr(r, 1+r.IntN(4))} {
			if plain(src) {
				plainTexts++
			}
			if samePrattParse(t, e, src) {
				accepted++
			}
		}
	}
	// The random texts must reach the subset, parsed and not.
	assert.Greater(t, plainTexts, 4000)
	assert.Greater(t, accepted, 2000)
	t.Logf("%d plain texts, %d parsed by the Pratt parser", plainTexts, accepted)
}

// TestPrattSubset_HalfTheLimit: no plain text nests deeper than half of
// MaxNesting, in either parser: with both limits at 16, each parser gives
// every plain text of the tests the verdict it gives at MaxNesting.
func TestPrattSubset_HalfTheLimit(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	withLimit := func(limit int, pratt bool) *parser.Parser {
		p, err := newParser(e.env, limit, pratt)
		require.NoError(t, err)
		return p
	}
	accepts := func(p *parser.Parser, src string) bool {
		_, errs := p.Parse(common.NewTextSource(src))
		return len(errs.GetErrors()) == 0
	}
	texts := append(append(slices.Clone(parserCorpus), repositoryTexts(t)...), nestedTexts(3000)...)
	r := rand.New(rand.NewPCG(13, 17))
	for range 3000 {
		texts = append(texts, randomPlainText(r), randomPlainExpr(r, 1+r.IntN(4)))
	}
	plainTexts := 0
	for _, pratt := range []bool{false, true} {
		full, half := withLimit(MaxNesting, pratt), withLimit(MaxNesting/2, pratt)
		for _, src := range texts {
			if plain(src) {
				plainTexts++
				require.Equal(t, accepts(full, src), accepts(half, src), "pratt=%v: %q", pratt, src)
				if !pratt { // newParser's ANTLR parser is env's
					_, iss := e.env.Parse(src)
					require.Equal(t, iss.Err() == nil, accepts(full, src), "%q", src)
				}
			}
		}
	}
	assert.Greater(t, plainTexts, 4000)
}

// FuzzPrattVsEnv is TestPrattSubset on any text, and TestPrattChecked_AsEnv
// on what it parses, with a dyn body.
func FuzzPrattVsEnv(f *testing.F) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(f, err)
	for _, src := range append(parserCorpus, repositoryTexts(f)...) {
		f.Add(src)
	}
	r := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		f.Add(randomPlainExpr(r, 3))
	}
	dyn, err := e.ForSchema(nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, src string) {
		if samePrattParse(t, e, src) {
			samePrattCheck(t, e, dyn, src)
		}
	})
}

// countingParser counts what the Pratt parser parsed without error.
type countingParser struct {
	astParser
	ok int
}

func (p *countingParser) Parse(s common.Source) (*celast.AST, *common.Errors) {
	a, errs := p.astParser.Parse(s)
	if len(errs.GetErrors()) == 0 {
		p.ok++
	}
	return a, errs
}

// TestCompile_PlainTextsTakeThePrattParser: compile parses every plain
// invariant of the repository that env's own parser parses with the Pratt
// parser, checks that parse (prattChecked), and the programs decide as
// those compiled from env's own parse.
func TestCompile_PlainTextsTakeThePrattParser(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ref, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ref.pratt = refusing{}
	counting := &countingParser{astParser: e.pratt}
	e.pratt = counting
	body := doc(t, `{"coupon": "", "couponCode": "X", "total": 25, "role": "user", "price": 2.5, "quantity": 2,
		"unitPrice": 9.5, "currency": "USD", "region": "eu", "a": 2, "b": "x", "c": "zz", "qty": 1, "ok": true,
		"items": [{"quantity": 5, "qty": 10, "sku": "GIFT"}]}`)
	s := &src{
		params:  map[string]string{"orderId": "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "slot": "id", "id": "7"},
		query:   map[string]string{},
		headers: map[string]string{"x-tenant": "acme"},
		user:    map[string]any{"id": "u1", "role": "admin", "regions": []any{"eu"}},
	}
	taken, evaluated := 0, 0
	for _, inv := range contractInvariants(t) {
		if _, iss := e.env.Parse(inv.expr); !plain(inv.expr) || iss.Err() != nil {
			continue
		}
		before := counting.ok
		gce, err := e.ForSchema(inv.schema)
		require.NoError(t, err)
		wce, err := ref.ForSchema(inv.schema)
		require.NoError(t, err)
		p, gotErr := gce.Compile(inv.expr)
		q, wantErr := wce.Compile(inv.expr)
		require.Equal(t, before+1, counting.ok, "%s: %s is not parsed by the Pratt parser", inv.where, inv.expr)
		taken++
		require.Equal(t, wantErr, gotErr, inv.expr)
		if wantErr != nil {
			continue // the conformance suites hold invariants that must not compile
		}
		// And checked without the ANTLR parser: what checked made of it is
		// what prattChecked makes (env's parse, checked, has other ids).
		fast := e.prattChecked(gce.env, inv.expr)
		require.NotNil(t, fast, "%s: %s is not checked as the Pratt parser read it", inv.where, inv.expr)
		slow, err := checked(e, gce.env, inv.expr, nil)
		require.NoError(t, err)
		fc, err := cel.AstToCheckedExpr(fast)
		require.NoError(t, err)
		sc, err := cel.AstToCheckedExpr(slow)
		require.NoError(t, err)
		require.True(t, proto.Equal(fc, sc), "%s: %s is checked as env's own parse", inv.where, inv.expr)
		act := func() *Activation {
			return &Activation{Body: body, Shape: inv.schema.Numbers(), Method: "GET", Path: "/vars/acme/a b", Src: s}
		}
		if inv.schema == nil {
			act = func() *Activation { return &Activation{Body: body, Method: "GET", Path: "/vars/acme/a b", Src: s} }
		}
		got, gerr := p.Eval(act())
		want, werr := q.Eval(act())
		assert.Equal(t, want, got, inv.expr)
		assert.Equal(t, werr == nil, gerr == nil, inv.expr)
		evaluated++
	}
	t.Logf("%d plain invariants taken, %d evaluated", taken, evaluated)
	assert.Greater(t, taken, 30)
	assert.Greater(t, evaluated, 25)
}

// refusing is a Pratt parser that refuses everything: compile then
// parses with env's own parser alone.
type refusing struct{}

func (refusing) Parse(s common.Source) (*celast.AST, *common.Errors) {
	errs := common.NewErrors(s)
	errs.ReportErrorAtID(0, common.NoLocation, "refused")
	return nil, errs
}

// panicking is a Pratt parser that panics.
type panicking struct{}

func (panicking) Parse(common.Source) (*celast.AST, *common.Errors) { panic("pratt") }

// TestCompile_PrattPanicFallsBack: a Pratt parser that panics costs the
// load nothing: env's own parser parses the text, and a text env refuses
// gets env's message.
func TestCompile_PrattPanicFallsBack(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	e.pratt = panicking{}
	_, err = e.Compile(`request.body.quantity <= 100`)
	require.NoError(t, err)
	_, err = e.Compile(`request.body.quantity <= `)
	require.Error(t, err)
	_, err = e.Compile(`request.body.quantity <= 100 && 1 == 'a'`)
	require.ErrorContains(t, err, "found no matching overload for '_==_' applied to '(int, string)'")
}

// TestCompile_PrattMessagesAreEnvs: a plain text that parses but does not
// check gets the message env's own parse gives, positions included.
func TestCompile_PrattMessagesAreEnvs(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	ref, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	ref.pratt = refusing{}
	for _, src := range []string{
		`request.body.a == 1 && nope`, `1 == 'a'`, `size(1, 2)`, `request.body.items.all(i, i + 1)`, `x.y`, `has(a)`, `1 + 'a' == 2`,
		"request.body.a\n  && undeclared.b", `int('1')`,
	} {
		_, got := e.Compile(src)
		_, want := ref.Compile(src)
		require.Error(t, want, src)
		assert.Equal(t, want.Error(), got.Error(), src)
	}
}

// substituting is a Pratt parser that parses another text in src's place.
type substituting struct {
	astParser
	text string
}

func (p substituting) Parse(common.Source) (*celast.AST, *common.Errors) {
	return p.astParser.Parse(common.NewTextSource(p.text))
}

// TestCompile_PrattASTIsUsed: the program is compiled from the Pratt
// parser's AST when it checks (here the AST of "false" for the text
// "true"), and from env's own parse when it does not: the message is
// env's for the text as written, whatever the Pratt AST said.
func TestCompile_PrattASTIsUsed(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: 1 << 40})
	require.NoError(t, err)
	real := e.pratt
	e.pratt = substituting{astParser: real, text: "false"}
	p, err := e.Compile("true")
	require.NoError(t, err)
	ok, err := p.Eval(&Activation{Body: doc(t, `{}`)})
	require.NoError(t, err)
	assert.False(t, ok, "the Pratt parser's AST")
	e.pratt = substituting{astParser: real, text: "'a' == 1"}
	_, err = e.Compile("1 == 'a'")
	require.ErrorContains(t, err, "found no matching overload for '_==_' applied to '(int, string)'")
}

// TestPrattChecked_AsEnv: what prattChecked makes of a plain text, through
// cel-go's optimizer, is what env's own parse makes of it checked in the
// same environment (the same checked expression: nodes, types,
// references, start positions; ids renumbered as the optimizer renumbers
// them; neither parser records macro calls here), and it checks exactly
// what that checks. Over the repository's invariants in their contracts'
// environments, and the corpus and random texts with a dyn body.
func TestPrattChecked_AsEnv(t *testing.T) {
	e, err := NewEnv(Config{CostLimit: 1 << 20, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	both := 0
	for _, inv := range contractInvariants(t) {
		ce, err := e.ForSchema(inv.schema)
		require.NoError(t, err)
		if samePrattCheck(t, e, ce, inv.expr) {
			both++
		}
	}
	dyn, err := e.ForSchema(nil)
	require.NoError(t, err)
	texts := append(slices.Clone(parserCorpus), nestedTexts(300)...)
	r := rand.New(rand.NewPCG(19, 23))
	for range 3000 {
		texts = append(texts, randomPlainExpr(r, 1+r.IntN(4)))
	}
	for _, src := range texts {
		if samePrattCheck(t, e, dyn, src) {
			both++
		}
	}
	t.Logf("%d texts checked both ways", both)
	assert.Greater(t, both, 500)
}

// samePrattCheck requires of src that prattChecked checks it in ce exactly
// when env's own parse of it checks there, and then into the same checked
// expression, with ids renumbered as the optimizer renumbers them. It
// reports whether both checked it.
func samePrattCheck(t *testing.T, e *Env, ce *ContractEnv, src string) bool {
	t.Helper()
	got := e.prattChecked(ce.env, src)
	pa, _ := prattParse(e.pratt, src)
	parsed, iss := e.env.Parse(src)
	if iss.Err() == nil {
		_, iss = ce.env.Check(parsed) // which may change parsed: parsed again below
	}
	if pa == nil || iss.Err() != nil {
		require.Nil(t, got, "%q: prattChecked has what env does not check, or the Pratt parser refuses", src)
		return false
	}
	require.NotNil(t, got, "%q: env checks it, prattChecked does not", src)
	parsed, iss = e.env.Parse(src)
	require.NoError(t, iss.Err())
	want, iss := ce.env.Check(renumbered(parsed))
	require.NoError(t, iss.Err())
	wc, err := cel.AstToCheckedExpr(want)
	require.NoError(t, err)
	gc, err := cel.AstToCheckedExpr(got)
	require.NoError(t, err)
	require.True(t, proto.Equal(wc, gc), "%q:\nenv:   %v\npratt: %v", src, wc, gc)
	require.Equal(t, want.Source().Content(), got.Source().Content())
	return true
}

// renumbered is a, a parsed AST, with its ids renumbered as cel-go's
// optimizer renumbers those of the AST an optimizer returns before
// checking it: from 1, in the order the expression visits them (cel-go's
// idGenerator.renumberStable).
func renumbered(a *cel.Ast) *cel.Ast {
	n := celast.Copy(a.NativeRep())
	ids := map[int64]int64{}
	renumber := func(id int64) int64 {
		if id == 0 {
			return 0
		}
		if n, ok := ids[id]; ok {
			return n
		}
		ids[id] = int64(len(ids) + 1)
		return ids[id]
	}
	n.Expr().RenumberIDs(renumber)
	n.SourceInfo().RenumberIDs(renumber)
	pe, err := parsedExpr(n)
	if err != nil {
		panic(err)
	}
	return cel.ParsedExprToAstWithSource(pe, a.Source())
}

// parsedExpr is a parsed AST as its proto.
func parsedExpr(a *celast.AST) (*exprpb.ParsedExpr, error) {
	e, err := celast.ExprToProto(a.Expr())
	if err != nil {
		return nil, err
	}
	info, err := celast.SourceInfoToProto(a.SourceInfo())
	if err != nil {
		return nil, err
	}
	return &exprpb.ParsedExpr{Expr: e, SourceInfo: info}, nil
}
