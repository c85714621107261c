// Command quickstart is the README's demo: a small JSON API behind a
// contractguard Guard, with the contracts of ./contracts, the metrics
// document at /actuator/contractguard and Prometheus metrics at /metrics.
//
//	go run ./examples/quickstart            # listens on 127.0.0.1:8080
//	go run ./examples/quickstart -addr :9000
package main

import (
	"embed"
	"encoding/json"
	"flag"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contractguard/contractguard"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
)

//go:embed contracts
var contracts embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	h, err := newServer()
	if err != nil {
		log.Fatal(err) // every broken contract, with file:line
	}
	log.Printf("quickstart: listening on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, h))
}

// newServer builds the guarded application.
func newServer() (http.Handler, error) {
	g, err := contractguard.New(contractguard.Options{
		ContractsFS:  contracts,
		ContractsDir: "contracts",
		Metrics:      true,
		// A stand-in for real authentication: context.user in invariants
		// is what this returns. Use your auth middleware's claims instead.
		User: func(r *http.Request) any {
			return map[string]any{"role": r.Header.Get("X-Demo-Role")}
		},
	})
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/users", echo)
	mux.HandleFunc("POST /api/orders", echo)
	mux.HandleFunc("GET /api/orders/{orderId}", echo)
	mux.Handle("GET /actuator/contractguard", g.MetricsHandler())
	// Prometheus: the guard's collector on a registry of the application's
	// (an application that has one already registers it there).
	reg := prometheus.NewRegistry()
	reg.MustRegister(cgprometheus.NewCollector(g))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return g.Middleware(mux), nil
}

// echo answers with what reached the handler: only requests that passed
// their contract get here.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := contractguard.Body(r) // decoded once, by the guard
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"accepted": r.Method + " " + r.URL.Path,
		"body":     body,
	})
}
