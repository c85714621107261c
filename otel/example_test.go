package cgotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/contractguard/contractguard"
	cgotel "github.com/contractguard/contractguard/otel"
)

// The instruments on the application's MeterProvider (here the SDK's,
// with a manual reader to show what it collects).
func ExampleRegister() {
	g, err := contractguard.New(contractguard.Options{Logger: slog.New(slog.DiscardHandler), Contracts: []contractguard.Contract{{
		Endpoint:   "/users/:id",
		Method:     "GET",
		Invariants: []contractguard.Invariant{{Expr: "request.params.id.matches('^[0-9]+$')", Message: "id must be a number"}},
	}}})
	if err != nil {
		panic(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	unregister, err := cgotel.Register(g, mp)
	if err != nil {
		panic(err)
	}
	defer unregister()

	h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, path := range []string{"/users/7", "/users/x", "/static/app.js"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "contractguard.requests" {
			for _, p := range sum.DataPoints {
				lines = append(lines, fmt.Sprintf("%s %s %d", m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// contractguard.requests contractguard.code=INVARIANT_VIOLATED,contractguard.outcome=rejected,http.request.method=GET,http.route=/users/:id 1
	// contractguard.requests contractguard.outcome=passed,http.request.method=GET,http.route=/users/:id 1
	// contractguard.requests contractguard.outcome=unmatched,http.request.method=GET 1
}
