package contractguard

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
)

func TestMiddleware_OnChiAndServeMux(t *testing.T) {
	g := testdataGuard(t)
	order := readFile(t, "testdata/bodies/order.json")
	bad := readFile(t, "testdata/bodies/order-invalid.json")

	r := chi.NewRouter()
	r.Use(g.Middleware)
	e1 := &echo{}
	r.Post("/api/orders", e1.ServeHTTP)

	mux := http.NewServeMux()
	e2 := &echo{}
	mux.Handle("POST /api/orders", e2)

	for name, c := range map[string]struct {
		h http.Handler
		e *echo
	}{"chi": {r, e1}, "ServeMux": {g.Middleware(mux), e2}} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, 200, send(c.h, "POST", "/api/orders", order).Code)
			rejected(t, send(c.h, "POST", "/api/orders", bad), 400, CodeSchemaInvalid)
			assert.Equal(t, 1, c.e.calls)
		})
	}
}

// A typed route mounted on a chi router after the guard has indexed it
// (a request came first) is found: an unknown pattern makes the index
// walk the router again.
func TestTyped_ChiRouteMountedAfterFirstRequest(t *testing.T) {
	g := mustNew(t, Options{RequireContract: true})
	type T struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	r := chi.NewRouter()
	r.Use(g.Middleware)
	r.Method("POST", "/plain", Handle(g, func(w http.ResponseWriter, r *http.Request, v T) { w.WriteHeader(http.StatusNoContent) }))
	assert.Equal(t, http.StatusNoContent, send(r, "POST", "/plain", `{"n":1}`).Code)

	sub := chi.NewRouter()
	sub.Method("POST", "/x", Handle(g, func(w http.ResponseWriter, r *http.Request, v T) { w.WriteHeader(http.StatusNoContent) }))
	send(r, "POST", "/plain", `{"n":1}`) // indexed before the mount
	r.Mount("/api", sub)
	// The 204 is the point (RequireContract refused the stale index with
	// 403); the 400 shows the mounted handler's contract still holds.
	assert.Equal(t, http.StatusNoContent, send(r, "POST", "/api/x", `{"n":1}`).Code)
	rejected(t, send(r, "POST", "/api/x", `{"n":0}`), 400, CodeSchemaInvalid)
}

// A typed handler at the root of a mounted router is found at /api as at
// /api/: chi's Walk lists it as "/api/", its Find reports "/api".
func TestTyped_ChiMountRoot(t *testing.T) {
	g := mustNew(t, Options{RequireContract: true})
	type T struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	sub := chi.NewRouter()
	sub.Method("POST", "/", Handle(g, func(w http.ResponseWriter, r *http.Request, v T) { w.WriteHeader(http.StatusNoContent) }))
	r := chi.NewRouter()
	r.Use(g.Middleware)
	r.Mount("/api", sub)
	for _, path := range []string{"/api", "/api/"} {
		assert.Equal(t, http.StatusNoContent, send(r, "POST", path, `{"n":1}`).Code, path)
		rejected(t, send(r, "POST", path, `{"n":0}`), 400, CodeSchemaInvalid)
	}
}
