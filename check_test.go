package contractguard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaKeywordsAndFormats gives each keyword and format of the seed a
// passing and a failing request through the middleware.
func TestSchemaKeywordsAndFormats(t *testing.T) {
	tests := []struct {
		keyword, schema, pass, fail, path, msg string
	}{
		{"type", `{"type":"object"}`, `{}`, `[]`, "", "must be an object, not an array"},
		{"properties", `{"properties":{"a":{"type":"string"}}}`, `{"a":"x"}`, `{"a":1}`, "/a", "must be a string, not a number"},
		{"items", `{"items":{"type":"integer"}}`, `[1,2]`, `[1,"2"]`, "/1", "must be an integer, not a string"},
		{"minItems", `{"minItems":2}`, `[1,2]`, `[1]`, "", "must have at least 2 items"},
		{"minimum", `{"minimum":1}`, `1`, `0.99`, "", "must be >= 1"},
		{"maximum", `{"maximum":10}`, `10`, `10.01`, "", "must be <= 10"},
		{"enum", `{"enum":["a","b",1]}`, `1`, `"c"`, "", `must be one of "a", "b", 1`},
		{"required", `{"required":["a"]}`, `{"a":null}`, `{"b":1}`, "/a", "is required"},
		{"additionalProperties", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, `{"a":1,"b":2}`, "/b", "is not allowed"},
		{"format email", `{"format":"email"}`, `"ada@example.com"`, `"ada@"`, "", "must be a valid email address"},
		{"format uri", `{"format":"uri"}`, `"https://example.com/x"`, `"/relative"`, "", "must be a valid URI"},
		{"format uuid", `{"format":"uuid"}`, `"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f"`, `"6f1c2a9e8d3b4c5a9e7f1a2b3c4d5e6f0"`, "", "must be a valid UUID"},
		{"format date", `{"format":"date"}`, `"2024-02-29"`, `"2023-02-29"`, "", "must be a valid date (YYYY-MM-DD)"},
		{"format date-time", `{"format":"date-time"}`, `"2026-11-21T10:15:00+01:00"`, `"2026-11-21T25:15:00Z"`, "", "must be a valid date-time (RFC 3339)"},
		{"format ipv4", `{"format":"ipv4"}`, `"10.0.0.1"`, `"10.0.0"`, "", "must be a valid IPv4 address"},
		{"format ipv6", `{"format":"ipv6"}`, `"::1"`, `"::g"`, "", "must be a valid IPv6 address"},
	}
	for _, tt := range tests {
		t.Run(tt.keyword, func(t *testing.T) {
			fsys := map[string]string{"c.json": `{"endpoint":"/t","method":"POST","schema":` + tt.schema + `}`}
			g := mustNew(t, Options{ContractsFS: mapFS(fsys)})
			h := g.Middleware(&echo{})
			assert.Equal(t, 200, send(h, "POST", "/t", tt.pass).Code)
			eb := rejected(t, send(h, "POST", "/t", tt.fail), 400, CodeSchemaInvalid)
			assert.Equal(t, []Detail{{tt.path, tt.msg}}, eb.Details)
		})
	}
}

// TestCheck_ViolationOutlivesTheNextCheck: Check's request and its details'
// array go back to a pool for the next Check; the violation it returned is
// the caller's, and later Checks, passing or failing, leave it as it was.
func TestCheck_ViolationOutlivesTheNextCheck(t *testing.T) {
	fsys := map[string]string{"c.json": `{"endpoint":"/t","method":"POST","schema":{"type":"object","properties":{"a":{"type":"integer","minimum":1},"b":{"type":"string"}},"additionalProperties":false}}`}
	g := mustNew(t, Options{ContractsFS: mapFS(fsys)})
	v := g.Check("POST", "/t", []byte(`{"a":0,"b":1}`))
	require.NotNil(t, v)
	want := []Detail{{"/a", "must be >= 1"}, {"/b", "must be a string, not a number"}}
	require.Equal(t, want, v.Details)
	for range 50 {
		assert.NotNil(t, g.Check("POST", "/t", []byte(`{"a":-5,"b":true,"c":1}`)))
		assert.Nil(t, g.Check("POST", "/t", []byte(`{"a":2}`)))
	}
	assert.Equal(t, want, v.Details)
}
