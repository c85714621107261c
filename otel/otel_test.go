package cgotel_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/licence"
	cgotel "github.com/contractguard/contractguard/otel"
)

// The contracts of the tests: a registration (enforced), a user's page
// with a rule on its parameter, and an order contract that learns.
const (
	usersYAML = `endpoint: /api/users
method: POST
schema:
  type: object
  required: [email, age]
  properties:
    email: {type: string, format: email}
    age: {type: integer, minimum: 18}
---
endpoint: /api/users/:id
method: GET
invariants:
  - expr: request.params.id.matches('^[0-9]+$')
    message: id must be a number
`
	ordersYAML = `endpoint: /api/orders
method: POST
mode: learn
schema:
  type: object
  required: [total]
  properties:
    total: {type: number}
`
)

var discard = slog.New(slog.DiscardHandler)

// keyIDs numbers the test key pairs newGuard trusts.
var keyIDs atomic.Int64

// newGuard writes the test contracts to a folder and starts a guard on
// it, with the vulnerability scan on and a licence key (the order
// contract's mode learn is a paid feature) that expires in 90 days; edit
// changes the options first. Without a key, the order contract is left
// out.
func newGuard(t testing.TB, edit ...func(*contractguard.Options)) (*contractguard.Guard, string) {
	t.Helper()
	dir := t.TempDir()
	opts := contractguard.Options{ContractsDir: dir, VulnerabilityScan: true, Logger: discard,
		LicenseKey: trustTestKey(t, fmt.Sprintf("test-%d", keyIDs.Add(1)), time.Now().Add(90*24*time.Hour))}
	for _, e := range edit {
		e(&opts)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.yaml"), []byte(usersYAML), 0o644))
	if opts.LicenseKey != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.yaml"), []byte(ordersYAML), 0o644))
	}
	g, err := contractguard.New(opts)
	require.NoError(t, err)
	return g, dir
}

// trustTestKey makes a key pair, trusts its public key as if it were
// built in, under kid, for the test, and returns a key for "Acme Ltd"
// that expires at expires, entitling both paid features.
//
// The library trusts the keys of internal/licence.BuiltIn, a map its own
// tests replace through an unexported hook this module cannot reach; the
// test adds its key to the map instead, before any guard reads it, and
// removes it afterwards. (A guard refusing the key, should that change,
// fails the test loudly: New returns the reason.)
func trustTestKey(t testing.TB, kid string, expires time.Time) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	licence.BuiltIn[kid] = pub
	t.Cleanup(func() { delete(licence.BuiltIn, kid) })
	key, err := licence.Issue(priv, licence.Licence{KeyID: kid, Licensee: "Acme Ltd",
		IssuedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second), Expires: expires,
		Features: []string{licence.FeatureSinkProtection, licence.FeatureLearningMode}})
	require.NoError(t, err)
	return key
}

// app is a guarded application: every route answers 200.
func app(g *contractguard.Guard) http.Handler {
	return g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
}

// send sends a request to srv and returns the status.
func send(t testing.TB, srv *httptest.Server, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// traffic is a mix of every outcome, with the status each must get.
var traffic = []struct {
	method, path, body string
	status             int
}{
	{"POST", "/api/users", `{"email":"ada@example.com","age":36}`, 200},
	{"POST", "/api/users", `{"email":"bob@example.com","age":40}`, 200},
	{"POST", "/api/users", `{"email":"ada.example.com","age":36}`, 400},
	{"POST", "/api/users", `{"email":"ada@example.com","age":12}`, 400},
	{"POST", "/api/users", `{"email":"' OR 1=1 --","age":36}`, 403},
	{"GET", "/api/users/7", ``, 200},
	{"GET", "/api/users/x7", ``, 422},
	{"POST", "/api/orders", `{"total":12.5}`, 200},
	{"POST", "/api/orders", `{"total":"twelve"}`, 200}, // mode learn: would have been 400
	{"GET", "/static/app.js", ``, 200},
	{"GET", "/static/app.css", ``, 200},
	{"BREW", "/coffee", ``, 200},
}

// collect reads every metric of the reader, by name.
func collect(t *testing.T, r sdkmetric.Reader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, cgotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum is a monotonic cumulative sum of int64 points, as the SDK collects
// a counter.
func sum(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points}
}

func point(n int64, kvs ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(kvs...), Value: n}
}

var (
	method  = attribute.Key("http.request.method").String
	route   = attribute.Key("http.route").String
	outcome = attribute.Key("contractguard.outcome").String
	code    = attribute.Key("contractguard.code").String
)

// TestRegister_Collect drives a real guard with every outcome and reads
// the instruments' data points through the SDK's manual reader.
func TestRegister_Collect(t *testing.T) {
	g, dir := newGuard(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	unregister, err := cgotel.Register(g, mp)
	require.NoError(t, err)
	srv := httptest.NewServer(app(g))
	defer srv.Close()

	for _, r := range traffic {
		require.Equal(t, r.status, send(t, srv, r.method, r.path, r.body), "%s %s %s", r.method, r.path, r.body)
	}
	require.NoError(t, g.Reload())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("endpoint: /x\nmethod: POST\ninvariants:\n  - expr: 'request.body.'\n"), 0o644))
	require.Error(t, g.Reload())

	got := collect(t, reader)
	requests := got["contractguard.requests"]
	assert.Equal(t, "{request}", requests.Unit)
	metricdatatest.AssertAggregationsEqual(t, sum(
		point(2, method("POST"), route("/api/users"), outcome("passed")),
		point(2, method("POST"), route("/api/users"), outcome("rejected"), code("SCHEMA_INVALID")),
		point(1, method("POST"), route("/api/users"), outcome("rejected"), code("VULNERABILITY_DETECTED")),
		point(1, method("GET"), route("/api/users/:id"), outcome("passed")),
		point(1, method("GET"), route("/api/users/:id"), outcome("rejected"), code("INVARIANT_VIOLATED")),
		point(1, method("POST"), route("/api/orders"), outcome("passed")),
		point(1, method("POST"), route("/api/orders"), outcome("would_block"), code("SCHEMA_INVALID")),
		point(2, method("GET"), outcome("unmatched")),
		point(1, method("_OTHER"), outcome("unmatched")),
	), requests.Data, metricdatatest.IgnoreTimestamp())

	duration := got["contractguard.check.duration"]
	assert.Equal(t, "s", duration.Unit)
	h, ok := duration.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%T", duration.Data)
	counts := map[string]uint64{}
	for _, p := range h.DataPoints {
		m, _ := p.Attributes.Value("http.request.method")
		r, _ := p.Attributes.Value("http.route")
		key := m.AsString() + " " + r.AsString()
		counts[key] = p.Count
		assert.Equal(t, 2, p.Attributes.Len(), "method and route only: %v", p.Attributes)
		assert.Equal(t, cgotel.DefaultBuckets, p.Bounds, "the advised bounds")
		assert.Positive(t, p.Sum, key)
		var n uint64
		for _, c := range p.BucketCounts {
			n += c
		}
		assert.Equal(t, p.Count, n, key)
	}
	assert.Equal(t, map[string]uint64{"POST /api/users": 5, "GET /api/users/:id": 2, "POST /api/orders": 2}, counts)

	gauge := func(n int64, kvs ...attribute.KeyValue) metricdata.Gauge[int64] {
		return metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{point(n, kvs...)}}
	}
	metricdatatest.AssertAggregationsEqual(t, gauge(3), got["contractguard.contracts.loaded"].Data, metricdatatest.IgnoreTimestamp())
	result := attribute.Key("contractguard.reload.result").String
	metricdatatest.AssertAggregationsEqual(t, sum(point(1, result("ok")), point(1, result("failed"))),
		got["contractguard.reloads"].Data, metricdatatest.IgnoreTimestamp())
	class := attribute.Key("contractguard.scan.class").String
	metricdatatest.AssertAggregationsEqual(t, sum(point(1, class("sql_injection")), point(0, class("xss")),
		point(0, class("command_injection")), point(0, class("path_traversal")), point(0, class("nosql_injection")),
		point(0, class("prototype_pollution"))), got["contractguard.scan.findings"].Data, metricdatatest.IgnoreTimestamp())
	sink := attribute.Key("contractguard.sink").String
	metricdatatest.AssertAggregationsEqual(t, sum(point(0, sink("sql")), point(0, sink("shell")), point(0, sink("file")), point(0, sink("http"))),
		got["contractguard.sink.blocks"].Data, metricdatatest.IgnoreTimestamp())

	// After unregister, nothing more is recorded or observed.
	require.NoError(t, unregister())
	require.Equal(t, 200, send(t, srv, "GET", "/api/users/7", ""))
	got = collect(t, reader)
	assert.NotContains(t, got, "contractguard.contracts.loaded", "the callback is gone")
	passed := attribute.NewSet(method("GET"), route("/api/users/:id"), outcome("passed"))
	n := int64(-1)
	for _, p := range got["contractguard.requests"].Data.(metricdata.Sum[int64]).DataPoints {
		if p.Attributes.Equals(&passed) {
			n = p.Value
		}
	}
	assert.EqualValues(t, 1, n, "not counted after unregister")
}

// TestRegister_License: the licence's state and time left, never its key.
func TestRegister_License(t *testing.T) {
	expires := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	key := trustTestKey(t, "test-otel", expires)
	g, _ := newGuard(t, func(o *contractguard.Options) { o.LicenseKey = key })
	reader := sdkmetric.NewManualReader()
	_, err := cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	m := collect(t, reader)["contractguard.license.time_remaining"]
	assert.Equal(t, "s", m.Unit)
	gauge, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%T", m.Data)
	require.Len(t, gauge.DataPoints, 1)
	p := gauge.DataPoints[0]
	assert.InDelta(t, time.Until(expires).Seconds(), float64(p.Value), 60, "seconds left")
	assert.Equal(t, attribute.NewSet(
		attribute.String("contractguard.license.licensee", "Acme Ltd"),
		attribute.String("contractguard.license.key_id", "test-otel"),
		attribute.StringSlice("contractguard.license.features", []string{"learning-mode", "sink-protection"}),
	), p.Attributes)
	for _, kv := range p.Attributes.ToSlice() {
		assert.NotContains(t, kv.Value.Emit(), key[strings.LastIndexByte(key, '.')+1:], "the key's signature")
	}

	unlicensed, _ := newGuard(t, func(o *contractguard.Options) { o.LicenseKey = "" })
	reader = sdkmetric.NewManualReader()
	_, err = cgotel.Register(unlicensed, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	assert.NotContains(t, collect(t, reader), "contractguard.license.time_remaining", "no key, no licence gauge")
}

// TestRegister_LicenseFarExpiry: a key may expire as late as the year
// 9999 (a "perpetual" key); the time left is more than a time.Duration
// holds (292 years), and is still the seconds to that instant, not the
// Duration's saturated maximum.
func TestRegister_LicenseFarExpiry(t *testing.T) {
	expires := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	key := trustTestKey(t, "test-otel-far", expires)
	g, _ := newGuard(t, func(o *contractguard.Options) { o.LicenseKey = key })
	reader := sdkmetric.NewManualReader()
	_, err := cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	gauge, ok := collect(t, reader)["contractguard.license.time_remaining"].Data.(metricdata.Gauge[int64])
	require.True(t, ok)
	require.Len(t, gauge.DataPoints, 1)
	assert.InDelta(t, float64(expires.Unix()-time.Now().Unix()), float64(gauge.DataPoints[0].Value), 60, "seconds left")
}

// TestRegister_Options: WithAttributes tells two guards apart on one
// provider; WithBuckets sets the advised bounds; bounds out of order and
// a nil guard are errors; a nil provider is the global one (a no-op
// until the application sets one).
func TestRegister_Options(t *testing.T) {
	a, _ := newGuard(t)
	b, _ := newGuard(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	guard := attribute.Key("contractguard.guard").String
	_, err := cgotel.Register(a, mp, cgotel.WithAttributes(guard("public")), cgotel.WithBuckets(0.001, 0.01))
	require.NoError(t, err)
	_, err = cgotel.Register(b, mp, cgotel.WithAttributes(guard("admin")))
	require.NoError(t, err)
	srv := httptest.NewServer(app(a))
	defer srv.Close()
	require.Equal(t, 200, send(t, srv, "GET", "/api/users/7", ""))

	got := collect(t, reader)
	metricdatatest.AssertAggregationsEqual(t, sum(point(1, guard("public"), method("GET"), route("/api/users/:id"), outcome("passed"))),
		got["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
	loaded := got["contractguard.contracts.loaded"].Data.(metricdata.Gauge[int64])
	var guards []string
	for _, p := range loaded.DataPoints {
		v, _ := p.Attributes.Value("contractguard.guard")
		guards = append(guards, v.AsString())
		assert.EqualValues(t, 3, p.Value)
	}
	assert.ElementsMatch(t, []string{"public", "admin"}, guards, "one per guard")
	h := got["contractguard.check.duration"].Data.(metricdata.Histogram[float64])
	require.Len(t, h.DataPoints, 1)
	assert.Equal(t, []float64{0.001, 0.01}, h.DataPoints[0].Bounds)

	_, err = cgotel.Register(a, mp, cgotel.WithBuckets(0.1, 0.01))
	assert.EqualError(t, err, "cgotel: WithBuckets: the buckets must be in increasing order")
	// A NaN is in no order: it hid 1 > 0.5 from the check, which a
	// provider other than the SDK (which refuses a NaN bound) relied on.
	for _, buckets := range [][]float64{{0.01, 1, math.NaN(), 0.5}, {math.NaN()}, {math.NaN(), 1}, {0.1, math.NaN()}} {
		for _, p := range []metric.MeterProvider{mp, noop.NewMeterProvider()} {
			_, err = cgotel.Register(a, p, cgotel.WithBuckets(buckets...))
			assert.EqualError(t, err, "cgotel: WithBuckets: the buckets must be in increasing order", "%v %T", buckets, p)
		}
	}
	// No buckets: the SDK's defaults, in milliseconds, went in for a
	// histogram in seconds.
	_, err = cgotel.Register(a, mp, cgotel.WithBuckets())
	assert.EqualError(t, err, "cgotel: WithBuckets: no buckets given")
	_, err = cgotel.Register(nil, mp)
	assert.EqualError(t, err, "cgotel: Register: the guard is nil")
	unregister, err := cgotel.Register(a, nil)
	require.NoError(t, err, "the global provider")
	assert.NoError(t, unregister())
	unregister, err = cgotel.Register(a, noop.NewMeterProvider())
	require.NoError(t, err)
	assert.NoError(t, unregister())
}

// TestRegister_Concurrent: requests from many goroutines while the
// reader collects are each counted once (run with -race).
func TestRegister_Concurrent(t *testing.T) {
	g, _ := newGuard(t)
	reader := sdkmetric.NewManualReader()
	_, err := cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	h := app(g)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				path := fmt.Sprintf("/api/users/%d", i)
				if (w+i)%2 == 1 {
					path = "/static" + path
				}
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
			}
		}()
	}
	for range 20 {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
	}
	wg.Wait()
	metricdatatest.AssertAggregationsEqual(t, sum(
		point(workers*each/2, method("GET"), route("/api/users/:id"), outcome("passed")),
		point(workers*each/2, method("GET"), outcome("unmatched")),
	), collect(t, reader)["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
}

// TestRegister_RouteNotUTF8: a typed route whose router pattern holds a
// byte that is not UTF-8 (ServeMux takes it, and a request's path
// matches; the loader refuses such a contract endpoint) is recorded under
// http.route with that byte replaced by U+FFFD: an attribute's string
// must be UTF-8, and OTLP's protobuf refuses to encode one that is not,
// failing the whole export.
func TestRegister_RouteNotUTF8(t *testing.T) {
	g, err := contractguard.New(contractguard.Options{Logger: discard})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /caf\xe9", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, _ *struct{}) {}))
	reader := sdkmetric.NewManualReader()
	_, err = cgotel.Register(g, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	require.Equal(t, 200, send(t, srv, "GET", "/caf%E9", ""))

	got := collect(t, reader)
	metricdatatest.AssertAggregationsEqual(t, sum(point(1, method("GET"), route("GET /caf\uFFFD"), outcome("passed"))),
		got["contractguard.requests"].Data, metricdatatest.IgnoreTimestamp())
	h := got["contractguard.check.duration"].Data.(metricdata.Histogram[float64])
	require.Len(t, h.DataPoints, 1)
	r, _ := h.DataPoints[0].Attributes.Value("http.route")
	assert.Equal(t, "GET /caf\uFFFD", r.AsString())
}
