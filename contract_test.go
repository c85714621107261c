package contractguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
