package contractguard

import (
	"errors"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const typedSchema = `
schema:
  type: object
  required: [name, total, items]
  properties:
    name: {type: string, maxLength: 50}
    total: {type: number}
    count: {type: integer}
    paid: {type: boolean}
    status: {enum: [open, paid, void]}
    note: {type: [string, "null"]}
    meta: {type: object, additionalProperties: {type: integer}}
    free: {}
    customer:
      type: object
      properties:
        email: {type: string, format: email}
        address: {type: object, properties: {city: {type: string}}}
    items:
      type: array
      maxItems: 100
      items:
        type: object
        properties:
          sku: {type: string, maxLength: 20}
          qty: {type: integer}
          tags: {type: array, maxItems: 5, items: {type: string, maxLength: 10}}
`

// TestTypeCheck: invariants are type-checked against the contract's
// schema when the guard is built.
func TestTypeCheck(t *testing.T) {
	tests := []struct {
		expr, err string // err "" when the expression is fine
	}{
		{"request.body.name != ''", ""},
		{"request.body.total >= 10", ""},
		{"request.body.total * 1.5 > 0.0", ""},
		{"request.body.count * 2 > 0", ""},
		{"request.body.paid || !request.body.paid", ""},
		{"request.body.status == 'open'", ""},
		{"request.body.meta.all(k, request.body.meta[k] > 0)", ""},
		{"request.body.free == 1 || request.body.free == 'x'", ""},
		{"has(request.body.note) && request.body.note != null", ""},
		{"!has(request.body.customer) || has(request.body.customer.address.city)", ""},
		{"request.body.customer.email.endsWith('@example.com')", ""},
		{"request.body.items.all(i, i.qty > 0 && i.sku.startsWith('A'))", ""},
		{"request.body.items.exists(i, i.tags.exists(t, t == 'gift'))", ""},
		{"request.body.items.map(i, i.qty).filter(q, q > 1).size() < 10", ""},
		{"size(request.body.items) <= 100 && request.params.id != '' && request.headers['x-a'] == request.query.a", ""},
		{"request.body.amuont > 1", "undefined field 'amuont'"},
		{"request.body.customer.adress.city == 'x'", "undefined field 'adress'"},
		{"request.body.items.all(i, i.quantity > 0)", "undefined field 'quantity'"},
		{"request.body.name > 5", "no matching overload for '_>_' applied to '(string, int)'"},
		{"request.body.paid == 'yes'", "no matching overload for '_==_' applied to '(bool, string)'"},
		{"request.body.total.startsWith('1')", "found no matching overload for 'startsWith' applied to 'double.(string)'"},
		{"request.body.name.startsWith(1)", "found no matching overload for 'startsWith' applied to 'string.(int)'"},
		{"size(request.body.count) > 0", "found no matching overload for 'size' applied to '(int)'"},
		{"request.body.items.all(i, i.qty == 'x')", "no matching overload for '_==_' applied to '(int, string)'"},
		{"request.bdy.name == 'x'", "undefined field 'bdy'"},
		{"request.body.name", "must evaluate to a bool, not string"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			src := "endpoint: /t\nmethod: POST\n" + typedSchema + "invariants:\n  - expr: " + quoteYAML(tt.expr) + "\n    message: m\n"
			_, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var le *LoadError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "c.yaml", le.File)
			assert.Equal(t, "POST /t", le.Contract)
			assert.Greater(t, le.Line, 30, "the line of the invariant")
			assert.Contains(t, le.Error(), "invariants[0]: ")
			assert.Contains(t, le.Error(), tt.err)
		})
	}
}

func quoteYAML(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func TestTypeCheck_RuntimeAgreesWithTheDeclaredTypes(t *testing.T) {
	src := "endpoint: /t\nmethod: POST\n" + typedSchema + `invariants:
  - expr: request.body.total * 2.0 == 20.0 && request.body.count + 1 == 3
    message: numbers
  - expr: request.body.items.all(i, i.qty > 0) && request.body.items[0].tags[0] == 'gift'
    message: nested
  - expr: request.body.meta.a == 1 && request.body.customer.address.city == 'Paris'
    message: maps and objects
`
	g := mustNew(t, Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
	assert.Nil(t, g.Check("POST", "/t", []byte(`{"name":"n","total":10,"count":2,"items":[{"sku":"A","qty":1,"tags":["gift"]}],
		"meta":{"a":1},"customer":{"address":{"city":"Paris"}}}`)))
}

func TestCost_QuadraticRuleRefusedAtLoad(t *testing.T) {
	rule := "request.body.items.all(a, request.body.items.all(b, a.sku != b.sku || a == b))"
	for name, schema := range map[string]string{
		"no schema":          "",
		"an unbounded array": "schema: {type: object, properties: {items: {type: array, items: {type: object, properties: {sku: {type: string}}}}}}\n",
		"a large maxItems":   "schema: {type: object, properties: {items: {type: array, maxItems: 100000, items: {type: object}}}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			src := "endpoint: /t\nmethod: POST\n" + schema + "invariants:\n  - expr: " + rule + "\n    message: unique skus\n"
			_, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "estimated cost")
			assert.Contains(t, err.Error(), "exceeds the limit of 10000000")
		})
	}
	src := "endpoint: /t\nmethod: POST\nschema: {type: object, properties: {items: {type: array, maxItems: 50, items: {type: object, additionalProperties: false, properties: {sku: {type: string, maxLength: 16}, qty: {type: integer}}}}}}\ninvariants:\n  - expr: " + rule + "\n    message: unique skus\n"
	g, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
	require.NoError(t, err, "bounded by maxItems, closed items and maxLength, the same rule is fine")
	assert.NotNil(t, g.Check("POST", "/t", []byte(`{"items":[{"sku":"a","qty":1},{"sku":"a","qty":2}]}`)))
	assert.Nil(t, g.Check("POST", "/t", []byte(`{"items":[{"sku":"a","qty":1},{"sku":"b","qty":1}]}`)))

	_, err = New(Options{CELMaxEstimatedCost: math.MaxUint64, ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(
		"endpoint: /t\nmethod: POST\ninvariants:\n  - expr: " + rule + "\n    message: m\n")}}})
	assert.NoError(t, err, "the static check can be turned off; the runtime limit stays")
}

func TestCost_ExpressionLimits(t *testing.T) {
	long := "request.body.a == '" + strings.Repeat("x", 5000) + "'"
	deep := strings.Repeat("(", 40) + "true" + strings.Repeat(")", 40)
	for name, expr := range map[string]string{"too long": long, "too deep": deep} {
		_, err := New(Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Invariants: []Invariant{{Expr: expr, Message: "m"}}}}})
		require.Error(t, err, name)
		var le *LoadError
		assert.True(t, errors.As(err, &le), name)
		assert.NotContains(t, err.Error(), "-1:0", name)
		assert.Contains(t, err.Error(), map[string]string{"too long": "code point size exceeds limit", "too deep": "recursion limit exceeded"}[name])
	}
}

// TestTypeCheck_PrefixItems: beside 2020-12's prefixItems, items
// describes only the elements after theirs, so the list is of any value:
// a rule reading a prefix element as its schema says loads, and the
// elements' sizes are not items' bounds. Typed as items said, [0] of
// ["x", 1] was an int (a load error for == 'x'), and a rule comparing
// every pair of elements was estimated with items' maxLength for strings
// prefixItems leaves unbounded, and ran untracked.
func TestTypeCheck_PrefixItems(t *testing.T) {
	contract := func(items, rule string) string {
		return `endpoint: /t
method: POST
schema:
  $schema: https://json-schema.org/draft/2020-12/schema
  type: object
  properties:
    a: {type: array, maxItems: 100, prefixItems: [{type: string}], items: ` + items + `}
invariants:
  - expr: ` + quoteYAML(rule) + `
    message: m
`
	}
	g, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(
		contract("{type: integer}", "request.body.a[0] == 'x' && request.body.a[1] == 1"))}}})
	require.NoError(t, err)
	assert.Nil(t, g.Check("POST", "/t", []byte(`{"a":["x",1]}`)))
	assert.NotNil(t, g.Check("POST", "/t", []byte(`{"a":["y",1]}`)))

	_, err = New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(
		contract("{type: string, maxLength: 8}", "request.body.a.all(x, request.body.a.all(y, x.contains(y)))"))}}})
	require.Error(t, err, "a[0] may be as long as the body")
	assert.Contains(t, err.Error(), "estimated cost")
}

// TestTypeCheck_Draft2020RootRef: a 2020-12 schema that describes the body
// through a $ref beside its $defs (the draft's usual layout) types the
// body as the $ref's target: a misspelt field is a load error, and a
// number field reads as a double. The later drafts' $ref, which applies
// beside its siblings, was not followed at all: the body was dyn (no type
// checking), and 10 in a type: number field an int, so
// request.body.amount * 2.0 failed to evaluate, refusing a body the
// schema accepts.
func TestTypeCheck_Draft2020RootRef(t *testing.T) {
	contract := func(rule string) string {
		return `endpoint: /t
method: POST
schema:
  $schema: https://json-schema.org/draft/2020-12/schema
  $ref: '#/$defs/order'
  $defs:
    order:
      type: object
      properties:
        amount: {type: number}
        lines: {type: array, maxItems: 10, items: {type: string, maxLength: 8}}
invariants:
  - expr: ` + quoteYAML(rule) + `
    message: m
`
	}
	_, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(contract("request.body.amuont > 1.0"))}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "undefined field 'amuont'")

	g, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(contract(
		"request.body.amount * 2.0 > 1.0 && request.body.lines.all(a, request.body.lines.all(b, a.size() + b.size() < 20))"))}}})
	require.NoError(t, err, "maxItems and maxLength of the target bound the estimate")
	assert.Nil(t, g.Check("POST", "/t", []byte(`{"amount":10,"lines":["a"]}`)))
	assert.NotNil(t, g.Check("POST", "/t", []byte(`{"amount":0,"lines":["a"]}`)))
}
