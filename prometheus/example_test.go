package cgprometheus_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contractguard/contractguard"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
)

// The collector on a registry of the application's, served at /metrics.
func ExampleNewCollector() {
	g, err := contractguard.New(contractguard.Options{Logger: slog.New(slog.DiscardHandler), Contracts: []contractguard.Contract{{
		Endpoint:   "/users/:id",
		Method:     "GET",
		Invariants: []contractguard.Invariant{{Expr: "request.params.id.matches('^[0-9]+$')", Message: "id must be a number"}},
	}}})
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(cgprometheus.NewCollector(g))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(http.ResponseWriter, *http.Request) {})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	h := g.Middleware(mux)

	for _, path := range []string{"/users/7", "/users/x", "/metrics"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for sc := bufio.NewScanner(w.Body); sc.Scan(); {
		if line := sc.Text(); strings.HasPrefix(line, "contractguard_requests_total") || strings.HasPrefix(line, "contractguard_contracts_loaded") {
			fmt.Println(line)
		}
	}
	// Output:
	// contractguard_contracts_loaded 1
	// contractguard_requests_total{code="",method="GET",outcome="passed",route="/users/:id"} 1
	// contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} 2
	// contractguard_requests_total{code="INVARIANT_VIOLATED",method="GET",outcome="rejected",route="/users/:id"} 1
}
