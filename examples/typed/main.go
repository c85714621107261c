// Command typed is a money-transfer service on chi whose request type is
// its contract: formats and bounds in jsonschema tags, business rules in cg
// tags (a field rule, struct rules that read the caller's claims, rules on
// nested line items), next to a file contract on the same router.
//
//	go run ./examples/typed                  # listens on 127.0.0.1:8081
//	curl -s -X POST localhost:8081/accounts/6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f/transfers \
//	  -H 'Authorization: Bearer demo' -H 'Content-Type: application/json' \
//	  -d '{"from":"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f","to":"0b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f","amount":120,"currency":"EUR"}'
package main

import (
	"context"
	"embed"
	"encoding/json"
	"flag"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard"
)

//go:embed contracts
var contracts embed.FS

// LineItem is one part of a transfer, with its own rules: they apply to
// every element of Transfer.Lines, with the element's path in errors.
type LineItem struct {
	_           struct{} `cg:"cel=data.amount <= 1000 || data.description.startsWith('INV-'),msg=lines over 1000 need an invoice number"`
	Description string   `json:"description" jsonschema:"minLength=1,maxLength=80"`
	Amount      float64  `json:"amount" jsonschema:"minimum=0.01" cg:"cel=self <= 5000,msg=a line may not exceed 5000"`
}

// Transfer is the request body of POST /accounts/{id}/transfers, and its
// contract.
type Transfer struct {
	_         struct{}   `cg:"cel=data.from != data.to,msg=cannot transfer to the same account"`
	_         struct{}   `cg:"cel=data.amount <= context.user.dailyLimit,msg=amount exceeds your daily limit"`
	_         struct{}   `cg:"cel=!context.user.frozen,msg=your account is frozen"`
	From      string     `json:"from" jsonschema:"format=uuid"`
	To        string     `json:"to" jsonschema:"format=uuid"`
	Amount    float64    `json:"amount" jsonschema:"minimum=0.01" cg:"cel=self <= 10000,msg=at most 10000 per transfer"`
	Currency  string     `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Reference string     `json:"reference,omitempty" jsonschema:"maxLength=140"`
	ExecuteOn string     `json:"executeOn,omitempty" jsonschema:"format=date"`
	Lines     []LineItem `json:"lines,omitempty"`
}

// Claims are what the authentication middleware knows of the caller;
// invariants read them as context.user.
type Claims struct {
	Subject    string  `json:"sub"`
	DailyLimit float64 `json:"dailyLimit"`
	Frozen     bool    `json:"frozen"`
}

type claimsKey struct{}

// authenticate stands in for real authentication: any bearer token is a
// customer with a daily limit of 2500, "frozen" one whose account is.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get("Authorization")
		if len(token) < len("Bearer ")+1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		c := Claims{Subject: token[len("Bearer "):], DailyLimit: 2500, Frozen: token == "Bearer frozen"}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, c)))
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	h, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("typed: listening on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, h))
}

func newServer() (http.Handler, error) {
	g, err := contractguard.New(contractguard.Options{
		ContractsFS:  contracts,
		ContractsDir: "contracts",
		Metrics:      true,
		User:         func(r *http.Request) any { return r.Context().Value(claimsKey{}) },
	})
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Get("/actuator/contractguard", g.MetricsHandler().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(authenticate, g.Middleware) // the guard after authentication, before everything else
		contractguard.Post(r, g, "/accounts/{id}/transfers", createTransfer)
		r.Patch("/accounts/{id}", updateAccount)
	})
	return r, nil
}

// createTransfer runs only for transfers that passed both contracts; in
// is decoded and checked.
func createTransfer(w http.ResponseWriter, r *http.Request, in Transfer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{
		"status": "scheduled", "from": in.From, "to": in.To, "amount": in.Amount, "currency": in.Currency, "lines": len(in.Lines),
	})
}

func updateAccount(w http.ResponseWriter, r *http.Request) {
	body, _ := contractguard.Body(r)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"account": chi.URLParam(r, "id"), "updated": body})
}
