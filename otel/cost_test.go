package cgotel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/contractguard/contractguard"
	cgotel "github.com/contractguard/contractguard/otel"
)

// TestRegister_Overflow: past the bound on attribute sets, new ones are
// recorded under http.route "_overflow"; those seen before keep their
// own.
func TestRegister_Overflow(t *testing.T) {
	defer cgotel.SetMaxSeries(2)()
	g, _ := newGuard(t)
	reader := sdkmetric.NewManualReader()
	_, err := cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	h := app(g)
	for _, target := range []string{"/api/users/1", "/static/a", "/api/users/x", "/api/users/x", "/api/users/2"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/static/a", nil))
	got := collect(t, reader)
	metricdatatest.AssertAggregationsEqual(t, sum(
		point(2, method("GET"), route("/api/users/:id"), outcome("passed")),
		point(1, method("GET"), outcome("unmatched")),
		point(1, method("_OTHER"), route("_overflow"), outcome("unmatched")),
		point(2, method("GET"), route("_overflow"), outcome("rejected"), code("INVARIANT_VIOLATED")),
	), got["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
	assert.Len(t, got["contractguard.check.duration"].Data.(metricdata.Histogram[float64]).DataPoints, 2, "/api/users/:id and the overflow's")
}

// TestRegister_OverflowFoldsMethods: past the bound on attribute sets, a
// new set's http.request.method is folded too (a method that is not a
// standard one becomes "_OTHER"), so that the overflow's sets are bounded
// even when the contracts' methods are not.
func TestRegister_OverflowFoldsMethods(t *testing.T) {
	defer cgotel.SetMaxSeries(2)()
	var contracts []contractguard.Contract
	for _, m := range []string{"PROPFIND", "MKCOL", "LOCK", "UNLOCK", "COPY", "MOVE", "GET"} {
		contracts = append(contracts, contractguard.Contract{Endpoint: "/dav", Method: m})
	}
	g, err := contractguard.New(contractguard.Options{Contracts: contracts, Logger: discard})
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	_, err = cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	h := app(g)
	for _, m := range []string{"PROPFIND", "MKCOL", "LOCK", "UNLOCK", "COPY", "MOVE", "GET", "PROPFIND"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/dav", nil))
	}
	got := collect(t, reader)
	metricdatatest.AssertAggregationsEqual(t, sum(
		point(2, method("PROPFIND"), route("/dav"), outcome("passed")),
		point(1, method("MKCOL"), route("/dav"), outcome("passed")),
		point(4, method("_OTHER"), route("_overflow"), outcome("passed")),
		point(1, method("GET"), route("_overflow"), outcome("passed")),
	), got["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
	assert.Len(t, got["contractguard.check.duration"].Data.(metricdata.Histogram[float64]).DataPoints, 4)
}

// TestRegister_TwoPasses: a request Middleware checks against a file
// contract and a typed handler (that Middleware cannot see) checks again
// against T's is recorded once in each pass, both under the file
// contract's route.
func TestRegister_TwoPasses(t *testing.T) {
	g, _ := newGuard(t)
	reader := sdkmetric.NewManualReader()
	_, err := cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	type signup struct {
		Email string `json:"email" jsonschema:"format=email"`
		Age   int    `json:"age" jsonschema:"minimum=18"`
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/users", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in signup) {}))
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
	for _, body := range []string{`{"email":"ada@example.com","age":36}`, `{"email":"ada@example.com","age":36,"x":1}`} {
		r := httptest.NewRequest("POST", "/api/users", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	metricdatatest.AssertAggregationsEqual(t, sum(
		point(3, method("POST"), route("/api/users"), outcome("passed")),
		point(1, method("POST"), route("/api/users"), outcome("rejected"), code("SCHEMA_INVALID")),
	), collect(t, reader)["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
}

// nopWriter is a ResponseWriter that keeps nothing, so that a measure of
// allocations counts the guard's alone.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// requests are the kinds of request the allocation test and the
// benchmark send: a pass, a rejection, one no contract matches, and a
// body that passes.
var requests = []struct{ name, method, target, body string }{
	{"passed", "GET", "/api/users/1", ""},
	{"rejected", "GET", "/api/users/x", ""},
	{"unmatched", "GET", "/static/app.js", ""},
	{"body", "POST", "/api/users", `{"email":"ada@example.com","age":36}`},
}

// request makes a reusable request: reset gives it its body again.
func request(method, target, body string) (r *http.Request, reset func()) {
	r = httptest.NewRequest(method, target, nil)
	if body == "" {
		return r, func() {}
	}
	r.Header.Set("Content-Type", "application/json")
	rd := strings.NewReader(body)
	return r, func() {
		rd.Reset(body)
		r.Body = readCloser{rd}
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

// guarded is a guard's Middleware around a handler that does nothing,
// with the exporter registered on the SDK (a manual reader) when
// export is true.
func guarded(t testing.TB, export bool) http.Handler {
	g, _ := newGuard(t, func(o *contractguard.Options) { o.VulnerabilityScan = false })
	if export {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		_, err := cgotel.Register(g, mp, cgotel.WithAttributes(attribute.String("service.instance", "a")))
		require.NoError(t, err)
		t.Cleanup(func() { mp.Shutdown(context.Background()) })
	}
	return g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
}

// TestRegister_NoAllocation: with the exporter on the OpenTelemetry SDK,
// a request allocates exactly what it does without, whatever its outcome
// (once its attribute set has been seen).
func TestRegister_NoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted exactly under the race detector (sync.Pool drops items)")
	}
	allocs := func(export bool) []float64 {
		h := guarded(t, export)
		w := &nopWriter{h: http.Header{}}
		var out []float64
		for _, q := range requests {
			r, reset := request(q.method, q.target, q.body)
			out = append(out, testing.AllocsPerRun(200, func() { reset(); h.ServeHTTP(w, r) }))
		}
		return out
	}
	without, with := allocs(false), allocs(true)
	assert.Equal(t, without, with, "allocations per request, by kind: %v", requests)
	assert.Zero(t, with[2], "unmatched")
}

// BenchmarkMiddleware is a request through Middleware without and with
// the exporter on the SDK; allocs/op must be the same.
//
//	go test -run '^$' -bench Middleware -benchmem ./otel/
func BenchmarkMiddleware(b *testing.B) {
	for _, q := range requests {
		for _, export := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/otel=%t", q.name, export), func(b *testing.B) {
				h := guarded(b, export)
				w := &nopWriter{h: http.Header{}}
				r, reset := request(q.method, q.target, q.body)
				b.ReportAllocs()
				for b.Loop() {
					reset()
					h.ServeHTTP(w, r)
				}
			})
		}
	}
}

// BenchmarkMiddlewareParallel is the same under contention: every
// goroutine records into the same attribute set.
func BenchmarkMiddlewareParallel(b *testing.B) {
	for _, export := range []bool{false, true} {
		b.Run(fmt.Sprintf("otel=%t", export), func(b *testing.B) {
			h := guarded(b, export)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := &nopWriter{h: http.Header{}}
				r := httptest.NewRequest("GET", "/api/users/1", nil)
				for pb.Next() {
					h.ServeHTTP(w, r)
				}
			})
		})
	}
}
