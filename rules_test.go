package contractguard

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvariants_AllFalseReportedInOrder(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Invariants: []Invariant{
			{Expr: "request.body.a > 1", Message: "first"},
			{Expr: "request.body.a > 0", Message: "holds"},
			{Expr: "request.body.b == 'x'", Message: "second"},
			{Expr: "request.body.missing == 1", Message: "third (fails to evaluate: closed)"},
		},
	}}})
	eb := rejected(t, send(g.Middleware(&echo{}), "POST", "/t", `{"a":1,"b":"y"}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "first"}, {"", "second"}, {"", "third (fails to evaluate: closed)"}}, eb.Details)
	assert.NotContains(t, send(g.Middleware(&echo{}), "POST", "/t", `{"a":1,"b":"y"}`).Body.String(), "request.body", "the CEL source is never sent")
}

func TestInvariants_NotRunWhenSchemaFails(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Schema:     map[string]any{"type": "object", "required": []string{"a"}},
		Invariants: []Invariant{{Expr: "request.body.a > 1", Message: "a > 1"}},
	}}})
	rejected(t, send(g.Middleware(&echo{}), "POST", "/t", `{}`), 400, CodeSchemaInvalid)
}

func TestInvariants_NumberRules(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/n", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"total": map[string]any{}, // any number: an int when integral
			"price": map[string]any{"type": "number"},
			"qty":   map[string]any{"type": "integer"},
		}},
		Invariants: []Invariant{
			{Expr: "request.body.total >= 10", Message: "total"},
			{Expr: "request.body.price * 2.0 > 0.0", Message: "a number field is a double"},
			{Expr: "request.body.qty * 2 > 0", Message: "an integer field is an int"},
		},
	}}})
	h := g.Middleware(&echo{})
	for _, total := range []string{"10", "10.0", "1e1", "10.5", "123456789012345678901234567890"} {
		w := send(h, "POST", "/n", `{"total":`+total+`,"price":3,"qty":2.0}`)
		assert.Equal(t, 200, w.Code, "total %s: %s", total, w.Body.String())
	}
	rejected(t, send(h, "POST", "/n", `{"total":9.99,"price":3,"qty":2}`), 422, CodeInvariantViolated)
}

// CEL quotes the value it could not use; the debug line of a rule that
// failed to evaluate must not carry it.
func TestLogsEvaluationErrorsWithoutValues(t *testing.T) {
	var buf bytes.Buffer
	g := mustNew(t, Options{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Contracts: []Contract{{Endpoint: "/t", Method: "POST", Invariants: []Invariant{
			{Expr: `timestamp(request.body.t) > timestamp("2020-01-01T00:00:00Z")`, Message: "too early"},
		}}},
	})
	v := g.Check("POST", "/t", []byte(`{"t":"hunter2-SECRET"}`))
	require.NotNil(t, v)
	out := buf.String()
	assert.Contains(t, out, `timestamp \"…\"`, "the reason stays, the value goes")
	assert.NotContains(t, out, "hunter2")

	// CEL writes other values bare, after a colon: a key read from the
	// body, from a map of the body.
	buf.Reset()
	g = mustNew(t, Options{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Contracts: []Contract{{Endpoint: "/k", Method: "POST", Invariants: []Invariant{
			{Expr: `request.body.m[request.body.k] == 1`, Message: "no such entry"},
		}}},
	})
	require.NotNil(t, g.Check("POST", "/k", []byte(`{"m":{},"k":"hunter2"}`)))
	out = buf.String()
	assert.Contains(t, out, "no such key: …", "the reason stays, the value goes")
	assert.NotContains(t, out, "hunter2")
}

// TestInvariants_PatternProperties: a member patternProperties describes
// has the pattern's type and numbers, not additionalProperties' (which
// JSON Schema does not apply to it), and can be named beside declared
// properties (found by review: `request.body.rate` was "undefined field"
// at load beside properties, an int where the pattern says number, and
// "rate" of a string pattern was typed an int, so startsWith did not
// compile).
func TestInvariants_PatternProperties(t *testing.T) {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	typ := func(t string) map[string]any { return obj("type", t) }
	for _, c := range []struct {
		schema     map[string]any
		expr, good string
		bad        string
	}{
		{obj("type", "object", "properties", obj("a", typ("integer")), "patternProperties", obj("^r", typ("number")), "additionalProperties", false),
			"request.body.rate / 4.0 == 0.5", `{"a":1,"rate":2}`, `{"a":1,"rate":3}`},
		{obj("type", "object", "patternProperties", obj("^r", typ("number")), "additionalProperties", typ("integer")),
			"request.body.rate / 4.0 == 0.5 && request.body.n / 2 == 1", `{"rate":2,"n":3}`, `{"rate":3,"n":3}`},
		{obj("type", "object", "patternProperties", obj("^r", typ("string")), "additionalProperties", typ("integer")),
			"request.body.rate.startsWith('x')", `{"rate":"xy"}`, `{"rate":"yx"}`},
		{obj("type", "object", "properties", obj("a", typ("integer")), "patternProperties", obj("^r", typ("string"), "^ra", typ("string"))),
			"request.body.rate.startsWith('x')", `{"rate":"xy"}`, `{"rate":"yx"}`},
	} {
		g, err := New(Options{Logger: discard, Contracts: []Contract{{Endpoint: "/n", Method: "POST", Schema: c.schema, Invariants: []Invariant{{Expr: c.expr, Message: "m"}}}}})
		require.NoError(t, err, c.expr)
		assert.Nil(t, g.Check("POST", "/n", []byte(c.good)), "%s on %s", c.expr, c.good)
		if v := g.Check("POST", "/n", []byte(c.bad)); assert.NotNil(t, v, c.bad) {
			assert.Equal(t, CodeInvariantViolated, v.Code)
		}
	}
	// A name neither declared nor matched is still a load error.
	_, err := New(Options{Logger: discard, Contracts: []Contract{{Endpoint: "/n", Method: "POST",
		Schema:     obj("type", "object", "properties", obj("a", typ("integer")), "patternProperties", obj("^r", typ("number"))),
		Invariants: []Invariant{{Expr: "request.body.amount > 0", Message: "m"}}}}})
	assert.ErrorContains(t, err, "undefined field 'amount'")
}
