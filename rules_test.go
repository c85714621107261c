package contractguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestBodyRules gives each rule of the strict body reader a passing and a
// failing request through the middleware.
func TestBodyRules(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 2048, MaxDepth: 8, Contracts: []Contract{{
		Endpoint: "/t", Method: "POST", Schema: map[string]any{},
	}}})
	h := g.Middleware(&echo{})
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		rule, pass, fail string
		status           int
		code, path, msg  string
	}{
		{"size limit", strings.Repeat(" ", 2040) + "{}", strings.Repeat(" ", 2050) + "{}", 413, CodePayloadTooLarge, "", "body must be at most 2048 bytes"},
		{"valid JSON", `{"a":[1,2]}`, `{"a":[1,2}`, 400, CodeMalformedJSON, "/a", "invalid JSON"},
		{"no trailing data", `{"a":1}  `, `{"a":1} {"a":2}`, 400, CodeMalformedJSON, "", "unexpected data after the JSON value"},
		{"valid UTF-8", `{"a":"café"}`, "{\"a\":\"caf\xe9\"}", 400, CodeMalformedJSON, "/a", "invalid UTF-8"},
		{"no lone surrogates", `{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, 400, CodeMalformedJSON, "/a", "surrogate"},
		{"no duplicate keys", `{"role":"user","r":1}`, `{"role":"user","role":"admin"}`, 400, CodeMalformedJSON, "/role", `duplicate key "role"`},
		{"duplicates after unescaping", `{"r\u006fla":"x","role":"y"}`, `{"role":"user","r\u006fle":"admin"}`, 400, CodeMalformedJSON, "/role", `duplicate key "role"`},
		{"no keys equal but for case", `{"total":5,"totals":1}`, `{"total":5,"TOTAL":1}`, 400, CodeMalformedJSON, "/TOTAL", "only in letter case"},
		{"depth limit", deep(8), deep(9), 400, CodeMalformedJSON, "/0/0/0/0/0/0/0/0", "nesting deeper than 8 levels"},
		{"number length", `[` + strings.Repeat("1", 1000) + `]`, `[` + strings.Repeat("1", 1001) + `]`, 400, CodeMalformedJSON, "/0", "number literal longer than 1000 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			w := send(h, "POST", "/t", tt.pass)
			assert.Equal(t, 200, w.Code, w.Body.String())
			eb := rejected(t, send(h, "POST", "/t", tt.fail), tt.status, tt.code)
			require.Len(t, eb.Details, 1)
			assert.Equal(t, tt.path, eb.Details[0].Path)
			assert.Contains(t, eb.Details[0].Message, tt.msg)
		})
	}
}

func TestBodyRules_NumbersKeepFullPrecision(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"properties": map[string]any{"id": map[string]any{"maximum": 9007199254740993}}},
	}}})
	e := &echo{}
	h := g.Middleware(e)
	assert.Equal(t, 200, send(h, "POST", "/t", `{"id":9007199254740993}`).Code)
	v, _ := Body(e.r)
	assert.Equal(t, "9007199254740993", string(v.(map[string]any)["id"].(interface{ String() string }).String()))
	rejected(t, send(h, "POST", "/t", `{"id":9007199254740994}`), 400, CodeSchemaInvalid)
}

// TestMatching covers each matching rule, and the bypass attempts that
// must all be rejected for an invalid body on a protected route.
func TestMatching(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{
		{Endpoint: "/a/b", Method: "POST", Schema: map[string]any{"type": "object", "required": []string{"ok"}}},
		{Endpoint: "/users/:id", Method: "POST", Schema: map[string]any{"type": "object", "required": []string{"ok"}}},
		{Endpoint: "/users/me", Method: "POST", Schema: map[string]any{"type": "object", "required": []string{"me"}}},
		{Endpoint: "/items/{id}", Method: "GET", Invariants: []Invariant{{Expr: "request.params.id != 'bad'", Message: "bad id"}}},
	}})
	e := &echo{}
	h := g.Middleware(e)
	invalid := `{}`

	t.Run("static and parameter", func(t *testing.T) {
		assert.Equal(t, 200, send(h, "POST", "/users/7", `{"ok":1}`).Code)
		rejected(t, send(h, "POST", "/users/7", invalid), 400, CodeSchemaInvalid)
		assert.Equal(t, 200, send(h, "GET", "/items/7", "").Code, "{name} parameters")
		rejected(t, send(h, "GET", "/items/bad", ""), 422, CodeInvariantViolated)
	})
	t.Run("static beats parameter", func(t *testing.T) {
		assert.Equal(t, 200, send(h, "POST", "/users/me", `{"me":1}`).Code)
		eb := rejected(t, send(h, "POST", "/users/me", `{"ok":1}`), 400, CodeSchemaInvalid)
		assert.Equal(t, []Detail{{"/me", "is required"}}, eb.Details)
	})
	t.Run("a parameter is one non-empty segment", func(t *testing.T) {
		e.calls = 0
		assert.Equal(t, 200, send(h, "POST", "/users/7/extra", invalid).Code, "no contract: passes through")
		assert.Equal(t, 1, e.calls)
	})
	t.Run("unmatched passes through untouched", func(t *testing.T) {
		assert.Equal(t, 200, send(h, "POST", "/elsewhere", `{"a":1,"a":2}`).Code)
		assert.Equal(t, `{"a":1,"a":2}`, string(e.body))
		_, ok := Body(e.r)
		assert.False(t, ok)
	})
	t.Run("RequireContract", func(t *testing.T) {
		strict := mustNew(t, Options{RequireContract: true, Contracts: []Contract{{Endpoint: "/a", Method: "GET"}}})
		sh := strict.Middleware(&echo{})
		assert.Equal(t, 200, send(sh, "GET", "/a", "").Code)
		eb := rejected(t, send(sh, "POST", "/a", ""), 403, CodeNoContract)
		assert.Equal(t, "no contract for POST /a", eb.Details[0].Message)
		rejected(t, send(sh, "GET", "/b", ""), 403, CodeNoContract)
	})

	bypasses := []struct{ name, method, path string }{
		{"trailing slash", "POST", "/a/b/"},
		{"doubled slashes", "POST", "//a//b"},
		{"dot segment", "POST", "/a/./b"},
		{"dot-dot segment", "POST", "/a/x/../b"},
		{"encoded letter", "POST", "/a/%62"},
		{"encoded dot-dot", "POST", "/a/x/%2e%2E/b"},
		{"encoded slash stays in its segment", "POST", "/users/a%2Fb"},
		{"lower-case method", "post", "/a/b"},
		{"mixed-case method", "PoSt", "/a/b"},
		{"matrix parameter", "POST", "/a;x=1/b"},
	}
	for _, b := range bypasses {
		t.Run("bypass "+b.name, func(t *testing.T) {
			e.calls = 0
			r := httptest.NewRequest("POST", "/", strings.NewReader(invalid))
			r.Method = b.method
			r.URL.Path, r.URL.RawPath = "", ""
			setRawPath(t, r, b.path)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			rejected(t, w, 400, CodeSchemaInvalid)
			assert.Zero(t, e.calls)
		})
	}
	t.Run("bypass HEAD on a GET contract", func(t *testing.T) {
		e.calls = 0
		rejected(t, send(h, "HEAD", "/items/bad", ""), 422, CodeInvariantViolated)
		assert.Zero(t, e.calls)
		assert.Equal(t, 200, send(h, "HEAD", "/items/good", "").Code)
	})
}

func setRawPath(t *testing.T, r *http.Request, raw string) {
	t.Helper()
	u, err := r.URL.Parse(raw)
	require.NoError(t, err)
	if strings.HasPrefix(raw, "//") { // would parse as a host
		u.Host, u.Path, u.RawPath = "", raw, ""
	}
	r.URL = u
	r.RequestURI = raw
}
