package contractguard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

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
