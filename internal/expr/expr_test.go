package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/shape"
)

type src struct {
	params, query, headers map[string]string
	user                   any
	calls                  int
}

func (s *src) Params() map[string]string  { s.calls++; return s.params }
func (s *src) Query() map[string]string   { s.calls++; return s.query }
func (s *src) Headers() map[string]string { s.calls++; return s.headers }
func (s *src) User() any                  { s.calls++; return s.user }
func (s *src) Path() string               { s.calls++; return "/from/source" }

// doc parses a body as the guard does.
func doc(t testing.TB, s string) *jsonbody.Doc {
	d, err := jsonbody.Parse([]byte(s), 64)
	require.NoError(t, err)
	return d
}

func decode(t testing.TB, s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// compileSchema compiles a schema as contracts' schemas are compiled.
func compileSchema(t testing.TB, src string) *schema.Schema {
	s, err := schema.NewCompiler(nil, nil).Compile("s.json", decode(t, src))
	require.NoError(t, err)
	return s
}

func orderShape(t testing.TB) *shape.Numbers {
	return compileSchema(t, `{
		"type":"object",
		"definitions":{"item":{"type":"object","properties":{"qty":{"type":"integer"},"price":{"type":"number"}}}},
		"properties":{
			"total":{"type":"number"},
			"count":{"type":"integer"},
			"items":{"type":"array","items":{"$ref":"#/definitions/item"}},
			"tags":{"type":"object","additionalProperties":{"type":"number"}}
		}
	}`).Numbers()
}

func TestEval(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	body := doc(t, `{"total":10,"count":3,"free":2.5,"big":1e2,"items":[{"sku":"A","qty":2,"price":5},{"sku":"B","qty":1,"price":1.5}],
		"tags":{"x":1},"email":"ada@example.com","nested":{"deep":{"flag":true}},"none":null}`)
	s := &src{
		params:  map[string]string{"orderId": "42"},
		query:   map[string]string{"dry": "1"},
		headers: map[string]string{"x-tenant": "acme"},
		user:    map[string]any{"role": "admin", "dailyLimit": 100.0},
	}
	tests := []struct {
		expr string
		want bool
	}{
		{"request.body.total >= 10", true},
		{"request.body.total == 10", true},
		{"request.body.total == 10.0", true},
		{"request.body.total * 2.5 == 25.0", true}, // a number field is a double even when integral
		{"request.body.count * 2 == 6", true},      // an integer field is an int
		{"request.body.free > 2 && request.body.free < 3", true},
		{"request.body.big == 100 && type(request.body.big) == int", true}, // 1e2 without a schema word is an int
		{"request.body.items.all(i, i.qty > 0)", true},
		{"request.body.items.exists(i, i.sku == 'B')", true},
		{"request.body.items.exists_one(i, i.qty == 2)", true},
		{"request.body.items.map(i, i.price * 2.0)[1] == 3.0", true},
		{"request.body.items[0].price * 2.0 == 10.0", true}, // through $ref: number
		{"request.body.items.filter(i, i.qty > 1).size() == 1", true},
		{"size(request.body.items) == 2", true},
		{"request.body.tags.x * 1.5 == 1.5", true}, // additionalProperties: number
		{"has(request.body.email) && !has(request.body.phone)", true},
		{"has(request.body.nested.deep.flag)", true},
		{"request.body.email.endsWith('@example.com')", true},
		{"request.body.email.lowerAscii().contains('ada')", true}, // strings extension
		{"math.greatest([1, 2, request.body.count]) == 3", true},  // math extension
		{"sets.contains(['A', 'B'], request.body.items.map(i, i.sku))", true},
		{"request.body.items.map(i, i.sku).distinct().size() == 2", true}, // lists extension
		{"request.body.?phone.orValue('none') == 'none'", true},           // optional values
		{"request.body.none == null", true},
		{"'B' in request.body.items.map(i, i.sku)", true},
		{"request.body.items + [1] != request.body.items", true},
		{"request.body.nested == {'deep': {'flag': true}}", true},
		{"request.body.tags.all(k, k == 'x')", true},
		{"request.params.orderId == '42'", true},
		{"request.query.dry == '1'", true},
		{"request.headers['x-tenant'] == 'acme'", true},
		{"request.method == 'POST' && request.path == '/orders/42'", true},
		{"context.user.role == 'admin' && request.body.total <= context.user.dailyLimit", true},
		{"request.body.total > 10", false},
	}
	shape := orderShape(t)
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := env.Compile(tt.expr)
			require.NoError(t, err)
			a := &Activation{Body: body, Shape: shape, Method: "POST", Path: "/orders/42", Src: s}
			got, err := p.Eval(a)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestEval_Fold runs comprehensions over a list longer than one chunk of
// Fold's object wrappers, with other kinds mixed in: every element must
// keep its own value, whether the fold keeps it (map, filter) or not.
func TestEval_Fold(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	var elems []string
	for i := range 2*foldChunk + 7 {
		elems = append(elems, fmt.Sprintf(`{"n":%d}`, i))
	}
	body := doc(t, `{"many":[`+strings.Join(elems, ",")+`],"mixed":[1,"a",{"n":5},[2],null,{"n":6}]}`)
	n := 2*foldChunk + 7
	tests := []string{
		fmt.Sprintf("request.body.many.map(o, o.n) == %s", seq(n)),
		"request.body.many.all(o, o.n >= 0 && o.n < 71)",
		"request.body.many.exists(o, o.n == 40)",
		"request.body.many.filter(o, o.n % 31 == 0).map(o, o.n) == [0, 31, 62]",
		"request.body.many.exists_one(o, o.n == 70)",
		"request.body.mixed.filter(e, type(e) == map).map(o, o.n) == [5, 6]",
		"request.body.mixed.exists(e, e == [2])",
	}
	for _, expr := range tests {
		t.Run(expr, func(t *testing.T) {
			p, err := env.Compile(expr)
			require.NoError(t, err)
			got, err := p.Eval(&Activation{Body: body, Src: &src{}})
			require.NoError(t, err)
			assert.True(t, got)
		})
	}
}

// seq is the CEL list [0, 1, …, n-1].
func seq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func TestEval_FailsClosed(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	body := doc(t, `{"a":1,"s":"x","items":[`+strings.Repeat(`1,`, 999)+`1]}`)
	for _, expr := range []string{
		"request.body.missing > 1", // missing key
		"request.body.s > 1",       // type mismatch at run time
		"request.body.items.all(a, request.body.items.all(b, a == b || a != b))", // cost limit
		"request.body.a",                // not a bool
		"request.body.items[5000] == 1", // index out of range
	} {
		t.Run(expr, func(t *testing.T) {
			p, err := env.Compile(expr)
			require.NoError(t, err)
			ok, err := p.Eval(&Activation{Body: body})
			assert.False(t, ok)
			assert.Error(t, err)
		})
	}
}

func TestEval_CostLimitStopsQuadraticRule(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	p, err := env.Compile("request.body.items.all(a, request.body.items.all(b, a.sku != b.sku || a == b))")
	require.NoError(t, err)
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := range 20000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"sku":"` + strings.Repeat("x", 1) + string(rune('a'+i%26)) + `"}`)
	}
	sb.WriteString(`]}`)
	ok, err := p.Eval(&Activation{Body: doc(t, sb.String())})
	assert.False(t, ok)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cost limit")
}

func TestCompile_Errors(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	for expr, msg := range map[string]string{
		"":                      "empty expression",
		"reqest.body.x > 1":     "1:1: undeclared reference to 'reqest'",
		"request.body.x >":      "Syntax error",
		"1 + 1":                 "must evaluate to a bool, not int",
		"request.body.x.foo(1)": "undeclared reference to 'foo'",
	} {
		_, err := env.Compile(expr)
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), msg, expr)
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
}

func TestActivation_FetchesOnlyWhatIsRead(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	p, err := env.Compile("request.body.a == 1 && request.params.id == '7' && request.params.id != ''")
	require.NoError(t, err)
	s := &src{params: map[string]string{"id": "7"}}
	ok, err := p.Eval(&Activation{Body: doc(t, `{"a":1}`), Src: s})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 1, s.calls, "params fetched once; query, headers and user not at all")
}

func TestUserValue(t *testing.T) {
	type claims struct {
		Sub        string  `json:"sub"`
		DailyLimit float64 `json:"dailyLimit"`
		Roles      []string
	}
	env, err := NewEnv(Config{CostLimit: 1000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	p, err := env.Compile("context.user.sub == 'u1' && context.user.dailyLimit == 500 && 'ops' in context.user.Roles")
	require.NoError(t, err)
	for _, u := range []any{
		claims{"u1", 500, []string{"ops"}},
		&claims{"u1", 500, []string{"ops"}},
		map[string]any{"sub": "u1", "dailyLimit": 500, "Roles": []string{"ops"}},
	} {
		ok, err := p.Eval(&Activation{Src: &src{user: u}})
		require.NoError(t, err, "%T", u)
		assert.True(t, ok, "%T", u)
	}
	empty, err := env.Compile("size(context.user) == 0")
	require.NoError(t, err)
	ok, err := empty.Eval(&Activation{})
	require.NoError(t, err)
	assert.True(t, ok, "no Options.User: an empty map")

	ok, err = p.Eval(&Activation{Src: &src{user: 42}})
	assert.False(t, ok)
	assert.Error(t, err)
}

func TestNumber(t *testing.T) {
	tests := []struct {
		in   string
		k    shape.NumKind
		want any
	}{
		{"10", shape.NumAuto, types.Int(10)},
		{"10.0", shape.NumAuto, types.Int(10)},
		{"1e2", shape.NumAuto, types.Int(100)},
		{"1.5", shape.NumAuto, types.Double(1.5)},
		{"9223372036854775808", shape.NumAuto, types.Double(9223372036854775808)},
		{"10", shape.NumDouble, types.Double(10)},
		{"10", shape.NumInt, types.Int(10)},
		{"1e400", shape.NumAuto, types.Double(math.Inf(1))},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Number(tt.in, tt.k), tt.in)
	}
}

func BenchmarkEval_ThreeInvariants(b *testing.B) {
	env, _ := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	var progs []*Program
	for _, e := range []string{
		"request.body.total >= 10",
		"request.body.items.all(i, i.qty > 0)",
		"request.body.count <= 100",
	} {
		p, err := env.Compile(e)
		require.NoError(b, err)
		progs = append(progs, p)
	}
	body := doc(b, `{"total":10,"count":3,"items":[{"qty":2},{"qty":1},{"qty":10}]}`)
	shape := orderShape(b)
	b.ReportAllocs()
	for b.Loop() {
		a := Activation{Body: body, Shape: shape}
		for _, p := range progs {
			if ok, err := p.Eval(&a); !ok || err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Only expressions whose cost the estimate cannot bound below the limit
// carry CEL's cost tracker: the others run without its bookkeeping.
func TestCompile_TrackedOnlyWhereUnbounded(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	s := compileSchema(t, `{
		"type":"object",
		"properties":{
			"total":{"type":"number"},
			"name":{"type":"string","maxLength":20},
			"items":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"qty":{"type":"integer"}}}},
			"free":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"integer"}}}}
		}
	}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for expr, tracked := range map[string]bool{
		"request.body.total > 1.0":                                           false,
		"request.body.name.startsWith('a')":                                  false,
		"request.body.items.all(i, i.qty > 0)":                               false,
		"request.body.free.all(a, request.body.free.all(b, a.qty != b.qty))": true, // no maxItems: bounded only by the body size, far over the limit
		"context.user.role == 'admin'":                                       true, // whatever the application returns
		"request.headers['x-a'] == 'b'":                                      true, // headers are not the body
		"[request][0].headers['x-a'] == 'b'":                                 true, // nor when request is read whole
		"request.body.name == 'a' && request.method == 'POST'":               false,
	} {
		p, err := ce.Compile(expr)
		require.NoError(t, err, expr)
		assert.Equal(t, tracked, p.Tracked(), expr)
	}
}

// TestCompile_TrackedWhereRequestReadWhole: request read other than by
// selecting its body or method (in a list, by a comprehension) may lead to
// its headers, which the estimate then sizes as a body of MaxBodyBytes:
// such a rule is tracked, and a header far longer than MaxBodyBytes stops
// it at the cost limit instead of running it untracked far past it.
func TestCompile_TrackedWhereRequestReadWhole(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64, MaxBodyBytes: 1000})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	long := strings.Repeat("a", 1<<20)
	for _, expr := range []string{
		"request.headers['x-a'].split('').all(c, c != 'b')",
		"[request][0].headers['x-a'].split('').all(c, c != 'b')",
		"[request].all(r, r.headers['x-a'].split('').all(c, c != 'b'))",
	} {
		p, err := ce.Compile(expr)
		require.NoError(t, err, expr)
		assert.True(t, p.Tracked(), expr)
		ok, err := p.Eval(&Activation{Src: &src{headers: map[string]string{"x-a": long}, query: map[string]string{"x-a": long}}})
		assert.False(t, ok, expr)
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), "cost limit", expr)
	}
}

// TestCompile_ReadsBody: a program knows whether it reads the request's
// body (so that a contract whose rules do, schema or not, takes a JSON
// body only): request.body; not request's other fields, context, or a
// comprehension's own variables.
func TestCompile_ReadsBody(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	ce, err := env.ForSchema(nil)
	require.NoError(t, err)
	for expr, reads := range map[string]bool{
		"request.body.qty <= 100":                                       true,
		"!has(request.body.admin)":                                      true,
		"request.body.?qty.orValue(0) <= 100":                           true,
		"request.body == null":                                          true,
		"has(request.body) && request.method == 'POST'":                 true,
		"request.query.exists(k, k == request.body.name)":               true,
		"!('debug' in request.query)":                                   false,
		"request.headers.?x.orValue('') != 'no' && request.path != '/'": false,
		"request.params.id != 'admin' && request.method == 'GET'":       false,
		"request.query.all(k, k.size() < 10)":                           false, // k is the comprehension's own
		"context.user.role == 'admin'":                                  false,
	} {
		p, err := ce.Compile(expr)
		require.NoError(t, err, expr)
		assert.Equal(t, reads, p.ReadsBody(), expr)
	}
}

// TestSizes_Draft2020Items: an array's element schema bounds its size
// whether the schema says items (draft-07) or items with prefixItems
// (2020-12): the same array gets the same bounds under both drafts.
func TestSizes_Draft2020Items(t *testing.T) {
	sizes := func(draft *jsonschema.Draft) (uint64, uint64) {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(draft)
		require.NoError(t, c.AddResource("file:///a.json", decode(t,
			`{"type":"array","minItems":2,"maxItems":3,"items":{"type":"string","minLength":2,"maxLength":4}}`)))
		s, err := c.Compile("file:///a.json")
		require.NoError(t, err)
		return minSize(s, 0), maxSize(s, 0)
	}
	min7, max7 := sizes(jsonschema.Draft7)
	min2020, max2020 := sizes(jsonschema.Draft2020)
	assert.Equal(t, uint64(2+2*4+1), min7, "[\"xx\",\"xx\"]: 11 bytes")
	assert.Equal(t, uint64(2+3*(2+4*6+1)), max7, "three strings of four characters, each written \\uXXXX")
	assert.Equal(t, min7, min2020)
	assert.Equal(t, max7, max2020)
}

func TestWithoutQuoted(t *testing.T) {
	for in, want := range map[string]string{
		`invalid timestamp "x"`: `invalid timestamp "…"`,
		`a "x" and "y" end`:     `a "…" and "…" end`,
		`escaped "a\"b" end`:    `escaped "…" end`,
		`unclosed "rest`:        `unclosed "…`,
		`no quotes`:             `no quotes`,
		`"héllo ☃"`:             `"…"`,
	} {
		assert.Equal(t, want, withoutQuoted(in), in)
	}
}

// TestValueFree: an evaluation error keeps its reason and loses what the
// request held, quoted, after a colon or bare; the cost limit's error has
// none and stays whole.
func TestValueFree(t *testing.T) {
	for in, want := range map[string]string{
		`no such key: hunter2`:                          `no such key: …`,
		`no such attribute(s): hunter2`:                 `no such attribute: …`,
		`invalid RFC 3339 timestamp "hunter2"`:          `invalid RFC 3339 timestamp "…"`,
		`index out of bounds: 7`:                        `index out of bounds: …`,
		`index '7' out of range in list size '2'`:       `index: …`,
		`unsupported index value hunter2 in list`:       `unsupported index value: …`,
		`type conversion error from 'hunter2' to 'int'`: `type conversion error: …`,
		`division by zero`:                              `division by zero`,
		`no such overload`:                              `no such overload`,
		`indexhunter2`:                                  `evaluation error`,
		`something new: hunter2`:                        `evaluation error`,
	} {
		assert.Equal(t, want, valueFree(errors.New(in)), in)
	}
	limit := interpreter.EvalCancelledError{Message: "operation cancelled: actual cost limit exceeded", Cause: interpreter.CostLimitExceeded}
	assert.Equal(t, limit.Message, valueFree(limit))
}

// TestCompile_ContractEnvNotKept: a contract's programs are planned in
// the base environment, so the environment ForSchema made to type-check
// them (a copy of the base's declarations and cost models, about 14 KiB)
// is garbage once they are compiled; the programs still read the body's
// fields through cel-go.
func TestCompile_ContractEnvNotKept(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{"qty":{"type":"integer"},"line":{"type":"object","properties":{"sku":{"type":"string"}}}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	p, err := ce.Compile("request.body.qty < 10 && has(request.body.line.sku) && request.body.line.sku.startsWith('A')")
	require.NoError(t, err)
	kept := weak.Make(ce.env)
	ce = nil
	runtime.GC()
	assert.Nil(t, kept.Value(), "the contract's environment outlives its compile")

	for body, want := range map[string]bool{`{"qty":3,"line":{"sku":"AB"}}`: true, `{"qty":30,"line":{"sku":"AB"}}`: false, `{"qty":3,"line":{"sku":"B"}}`: false} {
		ok, err := p.evalCEL(&Activation{Body: doc(t, body), Shape: s.Numbers()})
		require.NoError(t, err, body)
		assert.Equal(t, want, ok, body)
	}
	_, err = p.evalCEL(&Activation{Body: doc(t, `{"qty":3,"line":{}}`), Shape: s.Numbers()})
	assert.NoError(t, err, "has() is false, and && stops")
}

// TestCheckingEnvChecksAsEnv: a contract's expressions are type-checked in
// an environment made of the base's declarations without its cost models
// (checkingEnv). Checked there or in the base environment itself, every
// expression gets the same verdict, the same message, the same type, the
// same cost tracking and the same results.
func TestCheckingEnvChecksAsEnv(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 1_000_000})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"total":{"type":"number"},"count":{"type":"integer"},"name":{"type":"string","maxLength":20},"email":{"type":"string"},
		"items":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"sku":{"type":"string","maxLength":8},"qty":{"type":"integer"}}}},
		"free":{"type":"array","items":{"type":"string"}},
		"tags":{"type":"object","additionalProperties":{"type":"number"}},
		"customer":{"type":"object","properties":{"id":{"type":"integer"}}}}}`)
	exprs := []string{
		"request.body.total >= 10", "request.body.count * 2 == 6", "request.body.total * 2.5 == 25.0", "request.body.count < request.body.total",
		"request.body.items.all(i, i.qty > 0)", "request.body.items.exists(i, i.sku == 'B')", "request.body.items.exists_one(i, i.qty == 2)",
		"request.body.items.map(i, i.qty).size() == 2", "request.body.items.filter(i, i.qty > 1).size() == 1", "size(request.body.items) <= 10",
		"has(request.body.email) && !has(request.body.name)", "request.body.email.endsWith('@example.com')", "request.body.email.lowerAscii().contains('a')",
		"math.greatest([1, 2, request.body.count]) == 3", "math.greatest(1, request.body.count) == 3", "sets.contains(['A'], request.body.items.map(i, i.sku))",
		"request.body.items.map(i, i.sku).distinct().size() == 2", "request.body.free.sortBy(f, f)[0] == 'a'", "request.body.?name.orValue('none') == 'none'",
		"request.body.tags.x * 1.5 == 1.5", "'x' in request.body.tags", "request.body.free.all(a, request.body.free.all(b, a != b || a == b))",
		"request.headers['x-a'] == 'b'", "request.params.id == '1'", "request.query.dry == '1'", "request.method == 'POST'", "request.path.startsWith('/')",
		"context.user.role == 'admin'", "int('1') == 1", "duration('1s') > duration('0s')", "timestamp('2020-01-01T00:00:00Z').getFullYear() == 2020",
		"request.body.name.matches('^[a-z]+$')", "optional.of(1).hasValue()", "[1, 2].exists(x, x == 2)", "{'a': 1}.a == 1", "request.body.free[0] == 'a'",
		// and what does not compile
		"reqest.body.total > 1", "request.body.totl > 1", "request.body.items.exsts(i, true)", "request.body.name > 5", "request.body.customer > 1",
		"size(request.body.items) == 'a'", "math.greatest(1, 'a') == 1", "1 + 'a' == 2", "request.body.total", "cel.bind(x, 1, x == 1)",
		"request.body.free.all(a, request.body.free.all(b, request.body.free.all(c, a + b + c != '')))", "request.body.items.foo()", "",
	}
	full, err := env.forSchema(env.env, s)
	require.NoError(t, err)
	checking, err := env.ForSchema(s)
	require.NoError(t, err)
	bodies := []string{`{"total":10,"count":3,"email":"Ada@example.com","items":[{"sku":"A","qty":2},{"sku":"B","qty":1}],"free":["a","b"],"tags":{"x":1}}`, `{}`, `{"count":-1,"items":[]}`}
	src := &src{params: map[string]string{"id": "1"}, query: map[string]string{"dry": "1"}, headers: map[string]string{"x-a": "b"}, user: map[string]any{"role": "admin"}}
	compiled := 0
	for _, e := range exprs {
		want, wantErr := full.Compile(e)
		got, gotErr := checking.Compile(e)
		if wantErr != nil || gotErr != nil {
			require.Error(t, gotErr, e)
			require.Error(t, wantErr, e)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), e)
			continue
		}
		compiled++
		assert.Equal(t, want.Tracked(), got.Tracked(), e)
		for _, b := range bodies {
			act := func() *Activation {
				return &Activation{Body: doc(t, b), Shape: s.Numbers(), Method: "POST", Path: "/p", Src: src}
			}
			wantOK, wantEvalErr := want.evalCEL(act())
			gotOK, gotEvalErr := got.evalCEL(act())
			assert.Equal(t, wantOK, gotOK, "%s on %s", e, b)
			assert.Equal(t, wantEvalErr != nil, gotEvalErr != nil, "%s on %s: %v / %v", e, b, wantEvalErr, gotEvalErr)
		}
	}
	assert.Greater(t, compiled, 30, "most of the expressions compile")
}

// TestTypeNames_SharedSchema: an object type is named by where it is, and
// a schema reached at two paths (one definition under two properties) by
// the first of them in key order, so that a type error reads the same on
// every load.
func TestTypeNames_SharedSchema(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 1_000_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	const src = `{"type":"object","definitions":{"addr":{"type":"object","properties":{"zip":{"type":"string"}}}},
		"properties":{"ship":{"$ref":"#/definitions/addr"},"bill":{"$ref":"#/definitions/addr"},"a":{"type":"object","properties":{"n":{"type":"integer"}}}}}`
	for range 20 {
		ce, err := env.ForSchema(compileSchema(t, src))
		require.NoError(t, err)
		_, err = ce.Compile("request.body.ship > 1")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "'(object request.body.bill, int)'", "the first path in key order names the shared type")
		_, err = ce.Compile("request.body.a > 1")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "'(object request.body.a, int)'")
	}
}

// TestSizes_PatternProperties: additionalProperties bounds only the
// members that no pattern of patternProperties matches, so a member a
// pattern matches is not bounded by it in cost estimates: a rule
// quadratic in such a member's string is tracked and stopped at the cost
// limit, not run untracked because the estimate took additionalProperties'
// maxLength for it.
func TestSizes_PatternProperties(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object",
		"patternProperties":{"^x":{"type":"string"}},
		"additionalProperties":{"type":"string","maxLength":1}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	for _, src := range []string{
		"request.body.xa.split('').all(c, !request.body.xa.contains(c + 'c'))",
		"request.body.all(k, request.body[k].split('').all(c, !request.body[k].contains(c + 'c')))",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.True(t, p.Tracked(), src)
		ok, err := p.Eval(&Activation{Body: doc(t, `{"xa":"`+strings.Repeat("a", 20_000)+`"}`)})
		assert.False(t, ok, src)
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), "cost limit", src)
	}
	// A member no pattern matches is bounded by additionalProperties.
	p, err := ce.Compile("request.body.ya.split('').all(c, !request.body.ya.contains(c + 'c'))")
	require.NoError(t, err)
	assert.False(t, p.Tracked())

	// A closed object with patternProperties holds members of any size.
	closed := compileSchema(t, `{"type":"object","properties":{"a":{"type":"boolean"}},
		"patternProperties":{"^x":{}},"additionalProperties":false}`)
	assert.Equal(t, uint64(math.MaxUint64), maxSize(closed.Compiled(), 0))
}

// TestForSchema_ListOrMapOfItself: a list or map whose elements are of its
// own schema (a tree of arrays, {items: {$ref: '#'}}, fine for the
// validator) has no finite CEL type: where it meets itself it is dyn.
// Typed as its elements' type all the way down, building the type never
// ended: New ran out of stack (a fatal error, not a panic), its path
// strings growing with the depth.
func TestForSchema_ListOrMapOfItself(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(8 << 20)) // the old code fails fast
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	for _, c := range []struct{ schema, expr, body string }{
		{`{"type":"array","items":{"$ref":"#"}}`, `size(request.body) == 2 && size(request.body[1]) == 1`, `[[],[[]]]`},
		{`{"type":"object","additionalProperties":{"$ref":"#"}}`, `has(request.body.a.b)`, `{"a":{"b":{}}}`},
		{`{"type":"object","patternProperties":{"^a":{"$ref":"#"}}}`, `size(request.body.a) == 0`, `{"a":{}}`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/properties/a"}}}}`, `size(request.body.a[0]) == 0`, `{"a":[[]]}`},
	} {
		ce, err := env.ForSchema(compileSchema(t, c.schema))
		require.NoError(t, err, c.schema)
		p, err := ce.Compile(c.expr)
		require.NoError(t, err, c.schema)
		ok, err := p.Eval(&Activation{Body: doc(t, c.body)})
		require.NoError(t, err, c.schema)
		assert.True(t, ok, c.schema)
	}
}

// TestSizes_SharedSchemasWorkedOutOnce: minSize and maxSize work out each
// schema once per depth. A closed tree of ten children ({properties:
// {a: {$ref: '#'}, …}}, additionalProperties: false), whose objects a
// rule compares, was walked once per path down to the depth limit, 10^17
// times (three children: 100 s), when the guard was built.
func TestSizes_SharedSchemasWorkedOutOnce(t *testing.T) {
	var names []string
	for c := 'a'; c <= 'j'; c++ {
		names = append(names, `"`+string(c)+`"`)
	}
	refs := strings.Join(names, `:{"$ref":"#"},`) + `:{"$ref":"#"}`
	tree := compileSchema(t, `{"type":"object","additionalProperties":false,"properties":{`+refs+`}}`)
	required := compileSchema(t, `{"type":"object","required":[`+strings.Join(names, ",")+`],"properties":{`+refs+`}}`)
	done := make(chan [2]uint64, 1)
	go func() { done <- [2]uint64{maxSize(tree.Compiled(), 0), minSize(required.Compiled(), 0)} }()
	select {
	case got := <-done:
		assert.Equal(t, uint64(math.MaxUint64), got[0], "a tree is as large as the body")
		assert.Greater(t, got[1], uint64(10*6), "ten members at least")
	case <-time.After(10 * time.Second):
		t.Fatal("still working out sizes after 10 s")
	}
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	ce, err := env.ForSchema(tree)
	require.NoError(t, err)
	_, err = ce.Compile("request.body.a != request.body.b")
	require.NoError(t, err)
}

// TestForSchema_SharedSchemasTypedOnce: each schema's CEL type is worked
// out once. A chain of 16 maps of eight patterns, each pattern a $ref to
// the next map, was typed once per path, 8^16 times, when the guard was
// built (depth 7: half a second; each level eight times longer).
func TestForSchema_SharedSchemasTypedOnce(t *testing.T) {
	var defs []string
	for i := range 16 {
		var pats []string
		for j := range 8 {
			pats = append(pats, fmt.Sprintf(`"^p%d":{"$ref":"#/definitions/d%d"}`, j, i+1))
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","patternProperties":{%s}}`, i, strings.Join(pats, ",")))
	}
	defs = append(defs, `"d16":{"type":"integer"}`)
	s := compileSchema(t, `{"$ref":"#/definitions/d0","definitions":{`+strings.Join(defs, ",")+`}}`)
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		ce, err := env.ForSchema(s)
		if err == nil {
			_, err = ce.Compile("size(request.body) > 0")
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("still typing the schema after 10 s")
	}
}

// TestForSchema_ListOfObjectsOfItself: an object type between ends a
// schema's loop, so a list of objects whose member is the list again (a
// tree, {type: array, items: {properties: {kids: {$ref: '#'}}}}) is
// typed at every level, as before lists and maps met inside themselves
// became dyn: the list was dyn below the first object, so a misspelt
// field there loaded and its maxItems and maxLength bounded no estimate.
func TestForSchema_ListOfObjectsOfItself(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20})
	require.NoError(t, err)
	ce, err := env.ForSchema(compileSchema(t, `{"type":"array","maxItems":10,"items":{"type":"object",
		"properties":{"name":{"type":"string","maxLength":10},"kids":{"$ref":"#"}}}}`))
	require.NoError(t, err)
	_, err = ce.Compile(`request.body[0].kids[0].nmae == ''`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "undefined field 'nmae'")
	p, err := ce.Compile(`request.body[0].kids.all(a, a.kids.all(b, a.name != b.name))`)
	require.NoError(t, err, "kids' maxItems and name's maxLength bound the estimate")
	ok, err := p.Eval(&Activation{Body: doc(t, `[{"name":"a","kids":[{"name":"b","kids":[{"name":"c"}]}]}]`)})
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = p.Eval(&Activation{Body: doc(t, `[{"name":"a","kids":[{"name":"b","kids":[{"name":"b"}]}]}]`)})
	require.NoError(t, err)
	assert.False(t, ok)
}
