package contractguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
)

func TestTyped_CaseVariantsNeverReachTheStruct(t *testing.T) {
	type Total struct {
		Total int `json:"total"`
	}
	g := mustNew(t, Options{})
	calls := 0
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Total) {
		calls++
		assert.Equal(t, 5, in.Total)
	})
	rejected(t, send(h, "POST", "/", `{"total":5,"TOTAL":1}`), 400, CodeMalformedJSON)
	eb := rejected(t, send(h, "POST", "/", `{"Total":5}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/Total", "is not allowed"}, {"/total", "is required"}}, eb.Details)
	assert.Equal(t, 200, send(h, "POST", "/", `{"total":5}`).Code)

	// With a schema file that allows any member, the binder still matches
	// names exactly: "Total" never fills Total.
	type Loose struct {
		_     struct{} `cg:"schema=loose.json"`
		Total int      `json:"total"`
	}
	lg := mustNew(t, Options{SchemaFS: fstest.MapFS{"loose.json": {Data: []byte(`{"type":"object"}`)}}})
	var got Loose
	lh := Handle(lg, func(w http.ResponseWriter, r *http.Request, in Loose) { got = in })
	assert.Equal(t, 200, send(lh, "POST", "/", `{"Total":5}`).Code)
	assert.Equal(t, 0, got.Total)
	assert.Equal(t, 1, calls)
}

// TestTyped_Mixing: a file contract and a typed contract on one route are
// both enforced, schemas first (file, then type), then invariants (file,
// then type), each once, whether the middleware, the handler or both run.
func TestTyped_Mixing(t *testing.T) {
	file := Contract{Endpoint: "/accounts/{id}/transfers", Method: "POST",
		Schema:     map[string]any{"type": "object", "required": []string{"reference"}},
		Invariants: []Invariant{{Expr: "request.params.id == request.body.from", Message: "transfers leave the account in the path"}},
	}
	type Tagged struct {
		_         struct{} `cg:"cel=data.amount < 100,msg=typed: amount under 100"`
		From      string   `json:"from"`
		Amount    float64  `json:"amount"`
		Reference string   `json:"reference"`
	}
	ok := `{"from":"a1","amount":5,"reference":"r"}`
	cases := []struct {
		body   string
		status int
		want   []Detail
	}{
		{ok, 201, nil},
		{`{"from":"a1","amount":5}`, 400, []Detail{{"/reference", "is required"}, {"/reference", "is required"}}}, // both schemas
		{`{"from":"a1","amount":"5","reference":"r"}`, 400, []Detail{{"/amount", "must be a number, not a string"}}},
		{`{"from":"zz","amount":500,"reference":"r"}`, 422, []Detail{{"", "transfers leave the account in the path"}, {"", "typed: amount under 100"}}},
		{`{"from":"zz","amount":"5"}`, 400, []Detail{{"/amount", "must be a number, not a string"}, {"/reference", "is required"}, {"/reference", "is required"}}},
	}
	setups := map[string]func(g *Guard, fn HandlerFunc[Tagged]) http.Handler{
		"ServeMux, handler only": func(g *Guard, fn HandlerFunc[Tagged]) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /accounts/{id}/transfers", Handle(g, fn))
			return mux
		},
		"ServeMux behind the middleware": func(g *Guard, fn HandlerFunc[Tagged]) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /accounts/{id}/transfers", Handle(g, fn))
			return g.Middleware(mux)
		},
		"chi, handler only": func(g *Guard, fn HandlerFunc[Tagged]) http.Handler {
			r := chi.NewRouter()
			Post(r, g, "/accounts/{id}/transfers", fn)
			return r
		},
		"chi behind the middleware, in a sub-router": func(g *Guard, fn HandlerFunc[Tagged]) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			r.Route("/accounts", func(r chi.Router) { Post(r, g, "/{id}/transfers", fn) })
			return r
		},
		"chi behind the middleware twice": func(g *Guard, fn HandlerFunc[Tagged]) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			r.Group(func(r chi.Router) {
				r.Use(g.Middleware)
				Post(r, g, "/accounts/{id}/transfers", fn)
			})
			return g.Middleware(r)
		},
	}
	for name, setup := range setups {
		t.Run(name, func(t *testing.T) {
			g := mustNew(t, Options{Contracts: []Contract{file}})
			calls := 0
			h := setup(g, func(w http.ResponseWriter, r *http.Request, in Tagged) {
				calls++
				body, _ := Body(r)
				assert.NotNil(t, body)
				w.WriteHeader(201)
			})
			for _, c := range cases {
				w := send(h, "POST", "/accounts/a1/transfers", c.body)
				if c.status == 201 {
					assert.Equal(t, 201, w.Code, w.Body.String())
					continue
				}
				eb := rejected(t, w, c.status, map[int]string{400: CodeSchemaInvalid, 422: CodeInvariantViolated}[c.status])
				assert.Equal(t, c.want, eb.Details, c.body)
			}
			assert.Equal(t, 1, calls)
			m := g.Metrics()
			assert.Equal(t, int64(len(cases)), m.RequestsValidated, "each request validated once")
			assert.Equal(t, int64(len(cases)-1), m.RequestsBlocked)
			assert.Equal(t, int64(2), m.ContractsLoaded, "the file contract and the typed route")
		})
	}
}

func TestTyped_RequireContractCountsTypedRoutes(t *testing.T) {
	type In struct {
		N int `json:"n"`
	}
	fn := func(w http.ResponseWriter, r *http.Request, in In) { w.WriteHeader(201) }

	g := mustNew(t, Options{RequireContract: true})
	r := chi.NewRouter()
	r.Use(g.Middleware)
	r.Route("/api", func(r chi.Router) {
		Post(r, g, "/typed/{id:[0-9]+}", fn)
		r.Post("/plain", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	})
	assert.Equal(t, 201, send(r, "POST", "/api/typed/7", `{"n":1}`).Code)
	rejected(t, send(r, "POST", "/api/typed/7", `{"n":"x"}`), 400, CodeSchemaInvalid)
	rejected(t, send(r, "POST", "/api/plain", `{}`), 403, CodeNoContract)

	g2 := mustNew(t, Options{RequireContract: true})
	mux := http.NewServeMux()
	mux.Handle("POST /typed", Handle(g2, fn))
	mux.HandleFunc("POST /plain", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	h := g2.Middleware(mux)
	assert.Equal(t, 201, send(h, "POST", "/typed", `{"n":1}`).Code)
	rejected(t, send(h, "POST", "/plain", `{}`), 403, CodeNoContract)
	assert.Equal(t, int64(1), g2.Metrics().ContractsLoaded)
}

func TestTyped_ParamsOnTypedRoutes(t *testing.T) {
	type In struct {
		_    struct{} `cg:"cel=request.params.id == data.id,msg=id must match the path"`
		ID   string   `json:"id"`
		Name string   `json:"name"`
	}
	fn := func(w http.ResponseWriter, r *http.Request, in In) { w.WriteHeader(201) }
	for name, h := range map[string]func(g *Guard) http.Handler{
		"chi": func(g *Guard) http.Handler {
			r := chi.NewRouter()
			Put(r, g, "/things/{id}", fn)
			return r
		},
		"chi with middleware": func(g *Guard) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			Put(r, g, "/things/{id}", fn)
			return r
		},
		"ServeMux": func(g *Guard) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("PUT /things/{id}", Handle(g, fn))
			return mux
		},
		"ServeMux with middleware": func(g *Guard) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("PUT /things/{id}", Handle(g, fn))
			return g.Middleware(mux)
		},
	} {
		t.Run(name, func(t *testing.T) {
			hh := h(mustNew(t, Options{}))
			assert.Equal(t, 201, send(hh, "PUT", "/things/a%20b", `{"id":"a b","name":"x"}`).Code)
			rejected(t, send(hh, "PUT", "/things/7", `{"id":"8","name":"x"}`), 422, CodeInvariantViolated)
		})
	}
}

func TestTyped_OtherMethodsAndNonStructTypes(t *testing.T) {
	g := mustNew(t, Options{})
	r := chi.NewRouter()
	got := ""
	Get(r, g, "/g", func(w http.ResponseWriter, r *http.Request, in *struct{}) { got += "G" })
	Patch(r, g, "/p", func(w http.ResponseWriter, r *http.Request, in []LineItem) { got += fmt.Sprint(len(in)) })
	Delete(r, g, "/d", func(w http.ResponseWriter, r *http.Request, in map[string]int) { got += "D" })
	assert.Equal(t, 200, send(r, "GET", "/g", "").Code, "an empty body is null: a *struct{} is nil")
	assert.Equal(t, 200, send(r, "PATCH", "/p", `[{"sku":"ABC","quantity":1,"unitPrice":2}]`).Code)
	eb := rejected(t, send(r, "PATCH", "/p", `[{"sku":"ABC","quantity":101,"unitPrice":2}]`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"/0/quantity", "at most 100 per line"}}, eb.Details)
	assert.Equal(t, 200, send(r, "DELETE", "/d", `{"a":1}`).Code)
	rejected(t, send(r, "DELETE", "/d", `{"a":1.5}`), 400, CodeSchemaInvalid)
	assert.Equal(t, "G1D", got)
	assert.Equal(t, int64(3), g.Metrics().ContractsLoaded)
}

// TestTyped_ValueNotBoxed: the T a pass decoded reaches the handler as a
// copy, without the allocation of boxing it in an interface first.
func TestTyped_ValueNotBoxed(t *testing.T) {
	type line struct {
		SKU      string `json:"sku" jsonschema:"maxLength=32"`
		Quantity int    `json:"quantity" jsonschema:"minimum=1"`
	}
	g := mustNew(t, Options{})
	h := Handle(g, func(http.ResponseWriter, *http.Request, line) {}).(*typedHandler[line])
	st := &state{values: []boundValue{{h.c, &line{SKU: "BK-1", Quantity: 2}}}}
	var got line
	assert.Zero(t, testing.AllocsPerRun(100, func() { got, _ = h.value(st) }))
	assert.Equal(t, line{SKU: "BK-1", Quantity: 2}, got)
}

// TestTyped_InterfaceTypeTakesNull: a handler of an interface type gets a
// null body as its nil value (reflect's Interface on the bound nil, then
// a type assertion, used to panic on it).
func TestTyped_InterfaceTypeTakesNull(t *testing.T) {
	g := mustNew(t, Options{})
	var got any = "unset"
	ran := false
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in any) { got, ran = in, true })
	w := send(h, "POST", "/x", "null")
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.True(t, ran)
	assert.Nil(t, got)
	w = send(h, "POST", "/x", `{"a":[1,"b"]}`)
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, map[string]any{"a": []any{json.Number("1"), "b"}}, got)
}
