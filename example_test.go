package contractguard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard"
)

func Example() {
	g, err := contractguard.New(contractguard.Options{
		Contracts: []contractguard.Contract{{
			Endpoint: "/api/orders/:orderId/items",
			Method:   "POST",
			Schema: map[string]any{
				"type":                 "object",
				"required":             []string{"sku", "quantity"},
				"additionalProperties": false,
				"properties": map[string]any{
					"sku":      map[string]any{"type": "string"},
					"quantity": map[string]any{"type": "integer", "minimum": 1},
				},
			},
			Invariants: []contractguard.Invariant{
				{Expr: "request.body.quantity <= 100", Message: "at most 100 items per line"},
			},
		}},
	})
	if err != nil {
		panic(err)
	}
	for _, body := range []string{
		`{"sku":"BK-001","quantity":2}`,
		`{"sku":"BK-001","quantity":0,"note":"x"}`,
		`{"sku":"BK-001","quantity":500}`,
	} {
		fmt.Println(g.Check("POST", "/api/orders/42/items", []byte(body)))
	}
	// Output:
	// <nil>
	// contractguard: SCHEMA_INVALID: /note: is not allowed; /quantity: must be >= 1
	// contractguard: INVARIANT_VIOLATED: at most 100 items per line
}

func ExampleGuard_Middleware() {
	g, err := contractguard.New(contractguard.Options{
		Contracts: []contractguard.Contract{{
			Endpoint: "/users", Method: "POST",
			Schema: map[string]any{"type": "object", "required": []string{"email"},
				"properties": map[string]any{"email": map[string]any{"type": "string", "format": "email"}}},
		}},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /users", func(w http.ResponseWriter, r *http.Request) {
		body, _ := contractguard.Body(r) // decoded once, by the guard
		fmt.Fprintf(w, "created %v\n", body.(map[string]any)["email"])
	})
	h := g.Middleware(mux)

	for _, body := range []string{`{"email":"ada@example.com"}`, `{"email":"ada"}`} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/users", strings.NewReader(body)))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// 200 created ada@example.com
	// 400 {"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/email","message":"must be a valid email address"}]}
}

func ExampleViolation() {
	g, _ := contractguard.New(contractguard.Options{
		Contracts: []contractguard.Contract{{Endpoint: "/t", Method: "POST",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}}},
	})
	v := g.Check("POST", "/t", []byte(`{"n":"seven"}`))
	fmt.Println(v.Status, v.Code)
	for _, d := range v.Details {
		fmt.Printf("%s: %s\n", d.Path, d.Message)
	}
	// Output:
	// 400 SCHEMA_INVALID
	// /n: must be an integer, not a string
}

func ExampleLoadError() {
	_, err := contractguard.New(contractguard.Options{
		Contracts: []contractguard.Contract{{Endpoint: "/t", Method: "POST",
			Invariants: []contractguard.Invariant{{Expr: "reqest.body.n > 1", Message: "n > 1"}}}},
	})
	fmt.Println(err)
	// Output:
	// Options.Contracts[0]: POST /t: invariants[0]: 1:1: undeclared reference to 'reqest' (did you mean 'request'?)
}

// Transfer is a request type that is its own contract.
type Transfer struct {
	_      struct{} `cg:"cel=data.from != data.to,msg=cannot transfer to the same account"`
	From   string   `json:"from"`
	To     string   `json:"to"`
	Amount float64  `json:"amount" jsonschema:"minimum=0.01" cg:"cel=self <= 10000,msg=at most 10000 per transfer"`
}

func ExampleHandle() {
	g, _ := contractguard.New(contractguard.Options{})
	mux := http.NewServeMux()
	mux.Handle("POST /transfers", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in Transfer) {
		fmt.Fprintf(w, "%.2f from %s to %s\n", in.Amount, in.From, in.To)
	}))
	for _, body := range []string{
		`{"from":"a","to":"b","amount":12.5}`,
		`{"from":"a","to":"a","amount":20000}`,
		`{"from":"a","to":"b","amount":0,"memo":"x"}`,
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("POST", "/transfers", strings.NewReader(body)))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// 200 12.50 from a to b
	// 422 {"error":"CONTRACT_VIOLATION","code":"INVARIANT_VIOLATED","details":[{"path":"","message":"cannot transfer to the same account"},{"path":"/amount","message":"at most 10000 per transfer"}]}
	// 400 {"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/amount","message":"must be >= 0.01"},{"path":"/memo","message":"is not allowed"}]}
}

func ExamplePost() {
	g, _ := contractguard.New(contractguard.Options{
		// A file contract for the same route: enforced together with Transfer's.
		Contracts: []contractguard.Contract{{Endpoint: "/accounts/{id}/transfers", Method: "POST",
			Invariants: []contractguard.Invariant{{Expr: "request.params.id == request.body.from", Message: "the transfer must leave this account"}}}},
	})
	r := chi.NewRouter()
	r.Use(g.Middleware)
	contractguard.Post(r, g, "/accounts/{id}/transfers", func(w http.ResponseWriter, r *http.Request, in Transfer) {
		fmt.Fprintf(w, "ok %.2f\n", in.Amount)
	})
	for _, path := range []string{"/accounts/a/transfers", "/accounts/z/transfers"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(`{"from":"a","to":"b","amount":5}`)))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	fmt.Println(g.Metrics().ContractsLoaded, "contracts")
	// Output:
	// 200 ok 5.00
	// 422 {"error":"CONTRACT_VIOLATION","code":"INVARIANT_VIOLATED","details":[{"path":"","message":"the transfer must leave this account"}]}
	// 2 contracts
}
