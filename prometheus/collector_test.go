package cgprometheus_test

import (
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/licence"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
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

// newGuard writes the test contracts to a folder and starts a guard on
// it, with the vulnerability scan on and a licence key (the order
// contract's mode learn is a paid feature); edit changes the options
// first. Without a key, the order contract is left out.
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

// keyIDs numbers the test key pairs newGuard trusts.
var keyIDs atomic.Int64

var discard = slog.New(slog.DiscardHandler)

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

// TestCollector_Scrape drives a real guard with every outcome, then
// scrapes a real registry over HTTP and reads the exposition.
func TestCollector_Scrape(t *testing.T) {
	g, dir := newGuard(t)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(cgprometheus.NewCollector(g)))
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metrics.Close()
	srv := httptest.NewServer(app(g))
	defer srv.Close()

	for _, r := range traffic {
		require.Equal(t, r.status, send(t, srv, r.method, r.path, r.body), "%s %s %s", r.method, r.path, r.body)
	}
	// A reload that works, and one that fails (the old set stays).
	require.NoError(t, g.Reload())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("endpoint: /x\nmethod: POST\ninvariants:\n  - expr: 'request.body.'\n"), 0o644))
	require.Error(t, g.Reload())

	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="GET",outcome="passed",route="/api/users/:id"} 1
contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} 2
contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/orders"} 1
contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/users"} 2
contractguard_requests_total{code="",method="_OTHER",outcome="unmatched",route=""} 1
contractguard_requests_total{code="INVARIANT_VIOLATED",method="GET",outcome="rejected",route="/api/users/:id"} 1
contractguard_requests_total{code="SCHEMA_INVALID",method="POST",outcome="rejected",route="/api/users"} 2
contractguard_requests_total{code="SCHEMA_INVALID",method="POST",outcome="would_block",route="/api/orders"} 1
contractguard_requests_total{code="VULNERABILITY_DETECTED",method="POST",outcome="rejected",route="/api/users"} 1
# HELP contractguard_contracts_loaded Contracts in force.
# TYPE contractguard_contracts_loaded gauge
contractguard_contracts_loaded 3
# HELP contractguard_reloads_total Reloads of the contracts, by result: ok (the new set is in force) or failed (the old set stayed).
# TYPE contractguard_reloads_total counter
contractguard_reloads_total{result="failed"} 1
contractguard_reloads_total{result="ok"} 1
# HELP contractguard_scan_findings_total Values the vulnerability scan flagged, by class.
# TYPE contractguard_scan_findings_total counter
contractguard_scan_findings_total{class="command_injection"} 0
contractguard_scan_findings_total{class="nosql_injection"} 0
contractguard_scan_findings_total{class="path_traversal"} 0
contractguard_scan_findings_total{class="prototype_pollution"} 0
contractguard_scan_findings_total{class="sql_injection"} 1
contractguard_scan_findings_total{class="xss"} 0
# HELP contractguard_sink_blocks_total Calls sink protection blocked (or reported, in learning mode), by sink.
# TYPE contractguard_sink_blocks_total counter
contractguard_sink_blocks_total{sink="file"} 0
contractguard_sink_blocks_total{sink="http"} 0
contractguard_sink_blocks_total{sink="shell"} 0
contractguard_sink_blocks_total{sink="sql"} 0
`
	require.NoError(t, testutil.ScrapeAndCompare(metrics.URL, strings.NewReader(expected),
		"contractguard_requests_total", "contractguard_contracts_loaded", "contractguard_reloads_total",
		"contractguard_scan_findings_total", "contractguard_sink_blocks_total"))

	// The histogram: one observation per request a contract ran on, by
	// method and route, none for the unmatched; its buckets are
	// cumulative and its sum the time spent.
	families := scrape(t, metrics.URL)
	h := families["contractguard_check_duration_seconds"]
	require.NotNil(t, h)
	assert.Equal(t, dto.MetricType_HISTOGRAM, h.GetType())
	counts := map[string]uint64{}
	for _, m := range h.GetMetric() {
		hist := m.GetHistogram()
		key := label(m, "method") + " " + label(m, "route")
		counts[key] = hist.GetSampleCount()
		assert.Positive(t, hist.GetSampleSum(), key)
		require.Len(t, hist.GetBucket(), len(cgprometheus.DefaultBuckets)+1, key)
		prev := uint64(0)
		for i, b := range hist.GetBucket() {
			if i < len(cgprometheus.DefaultBuckets) {
				assert.Equal(t, cgprometheus.DefaultBuckets[i], b.GetUpperBound())
			} else {
				assert.True(t, math.IsInf(b.GetUpperBound(), 1), "the last bucket is +Inf")
			}
			assert.GreaterOrEqual(t, b.GetCumulativeCount(), prev, key)
			prev = b.GetCumulativeCount()
		}
		assert.Equal(t, hist.GetSampleCount(), prev, key)
	}
	assert.Equal(t, map[string]uint64{"POST /api/users": 5, "GET /api/users/:id": 2, "POST /api/orders": 2}, counts)
}

// scrape gets url and parses the text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// label is the value of m's label name.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestCollector_Lint: the names, types, units and help strings follow the
// Prometheus conventions, licence metrics included.
func TestCollector_Lint(t *testing.T) {
	g, _ := newGuard(t)
	c := cgprometheus.NewCollector(g)
	srv := httptest.NewServer(app(g))
	defer srv.Close()
	for _, r := range traffic {
		send(t, srv, r.method, r.path, r.body)
	}
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, 9+3+1+2+6+4+2, testutil.CollectAndCount(c), "9 request series, 3 histograms, contracts, 2 reloads, 6 classes, 4 sinks, 2 licence")
}

// TestCollector_License: the licence's state, never its key.
func TestCollector_License(t *testing.T) {
	expires := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	key := trustTestKey(t, "test-metrics", expires)
	g, _ := newGuard(t, func(o *contractguard.Options) { o.LicenseKey = key })
	reg := prometheus.NewRegistry()
	reg.MustRegister(cgprometheus.NewCollector(g))
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metrics.Close()

	expected := fmt.Sprintf(`
# HELP contractguard_license_expiry_timestamp_seconds When the licence key in force expires, in seconds since the Unix epoch.
# TYPE contractguard_license_expiry_timestamp_seconds gauge
contractguard_license_expiry_timestamp_seconds %d
# HELP contractguard_license_info The licence key in force (never the key itself): 1, with its licensee, key id and entitled features (comma-separated).
# TYPE contractguard_license_info gauge
contractguard_license_info{features="learning-mode,sink-protection",key_id="test-metrics",licensee="Acme Ltd"} 1
`, expires.Unix())
	require.NoError(t, testutil.ScrapeAndCompare(metrics.URL, strings.NewReader(expected),
		"contractguard_license_info", "contractguard_license_expiry_timestamp_seconds"))

	resp, err := http.Get(metrics.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sig := key[strings.LastIndexByte(key, '.')+1:]
	assert.NotContains(t, string(body), sig, "the key's signature")
	assert.NotContains(t, string(body), key[:len(licence.Prefix)+16], "the key's payload")

	unlicensed, _ := newGuard(t, func(o *contractguard.Options) { o.LicenseKey = "" })
	c := cgprometheus.NewCollector(unlicensed)
	assert.Zero(t, testutil.CollectAndCount(c, "contractguard_license_info", "contractguard_license_expiry_timestamp_seconds"), "no key, no licence metrics")
	assert.Equal(t, 1+2+6+4, testutil.CollectAndCount(c), "before any request: contracts, reloads, classes, sinks")
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

// TestCollector_TwoGuards: two guards' collectors on one registry need
// WithConstLabels to tell them apart; without, the registry refuses the
// second.
func TestCollector_TwoGuards(t *testing.T) {
	a, _ := newGuard(t)
	b, _ := newGuard(t)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(cgprometheus.NewCollector(a)))
	assert.Error(t, reg.Register(cgprometheus.NewCollector(b)), "same descriptors, no label to tell them apart")

	reg = prometheus.NewRegistry()
	ca := cgprometheus.NewCollector(a, cgprometheus.WithConstLabels(prometheus.Labels{"guard": "public"}))
	cb := cgprometheus.NewCollector(b, cgprometheus.WithConstLabels(prometheus.Labels{"guard": "admin"}))
	require.NoError(t, reg.Register(ca))
	require.NoError(t, reg.Register(cb))
	srv := httptest.NewServer(app(a))
	defer srv.Close()
	require.Equal(t, 200, send(t, srv, "GET", "/api/users/7", ""))

	expected := `
# HELP contractguard_contracts_loaded Contracts in force.
# TYPE contractguard_contracts_loaded gauge
contractguard_contracts_loaded{guard="admin"} 3
contractguard_contracts_loaded{guard="public"} 3
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",guard="public",method="GET",outcome="passed",route="/api/users/:id"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "contractguard_contracts_loaded", "contractguard_requests_total"))
}

// TestCollector_Buckets: WithBuckets sets the histogram's bounds; bounds
// out of order are a set-up mistake.
func TestCollector_Buckets(t *testing.T) {
	g, _ := newGuard(t)
	c := cgprometheus.NewCollector(g, cgprometheus.WithBuckets(0.001, 0.01, 0.1))
	srv := httptest.NewServer(app(g))
	defer srv.Close()
	require.Equal(t, 200, send(t, srv, "GET", "/api/users/7", ""))
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	require.NoError(t, err)
	var bounds []float64
	for _, f := range families {
		if f.GetName() == "contractguard_check_duration_seconds" {
			for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
		}
	}
	assert.Equal(t, []float64{0.001, 0.01, 0.1}, bounds)
	assert.PanicsWithValue(t, "cgprometheus: WithBuckets: the buckets must be in increasing order", func() {
		cgprometheus.NewCollector(g, cgprometheus.WithBuckets(0.1, 0.01))
	})
	// A NaN is in no order: it hid 1 > 0.5, and client_golang took it,
	// an le="NaN" bucket among the others.
	for _, buckets := range [][]float64{{0.01, 1, math.NaN(), 0.5}, {math.NaN()}, {math.NaN(), 1}, {0.1, math.NaN()}} {
		assert.PanicsWithValue(t, "cgprometheus: WithBuckets: the buckets must be in increasing order", func() {
			cgprometheus.NewCollector(g, cgprometheus.WithBuckets(buckets...))
		}, "%v", buckets)
	}
	// No buckets: client_golang's defaults went in, not DefaultBuckets.
	assert.PanicsWithValue(t, "cgprometheus: WithBuckets: no buckets given", func() {
		cgprometheus.NewCollector(g, cgprometheus.WithBuckets())
	})
	assert.PanicsWithValue(t, "cgprometheus: NewCollector: the guard is nil", func() { cgprometheus.NewCollector(nil) })
}

// TestCollector_ConstLabelLe: a constant label named le, the histogram's
// bucket label, is refused by NewCollector, a mistake of set-up. The
// registry took it, and client_golang refused it only when it made the
// histogram of the first request a contract ran on: a panic on that
// request's goroutine, and on every one after.
func TestCollector_ConstLabelLe(t *testing.T) {
	g, _ := newGuard(t)
	var c *cgprometheus.Collector
	assert.PanicsWithValue(t, `cgprometheus: WithConstLabels: "le" is the histogram's bucket label`, func() {
		c = cgprometheus.NewCollector(g, cgprometheus.WithConstLabels(prometheus.Labels{"le": "x"}))
	})
	if c != nil {
		reg := prometheus.NewRegistry()
		require.NoError(t, reg.Register(c))
		srv := httptest.NewServer(app(g))
		defer srv.Close()
		assert.Equal(t, 200, send(t, srv, "GET", "/api/users/7", ""))
	}
}

// TestCollector_Concurrent: requests from many goroutines while the
// registry is scraped are each counted once (run with -race).
func TestCollector_Concurrent(t *testing.T) {
	g, _ := newGuard(t)
	c := cgprometheus.NewCollector(g)
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
					path = "/static/" + path
				}
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
			}
		}()
	}
	for range 20 {
		testutil.CollectAndCount(c)
	}
	wg.Wait()
	expected := fmt.Sprintf(`
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="GET",outcome="passed",route="/api/users/:id"} %d
contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} %d
`, workers*each/2, workers*each/2)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
}

// TestCollector_RouteNotUTF8: a typed route whose router pattern holds
// a byte that is not UTF-8 (ServeMux takes it, and a request's path
// matches; the loader refuses such a contract endpoint) is counted under
// the pattern with that byte replaced by U+FFFD: client_golang panics on
// such a label value, and did so on the request's goroutine, for every
// request to the route.
func TestCollector_RouteNotUTF8(t *testing.T) {
	g, err := contractguard.New(contractguard.Options{Logger: discard})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /caf\xe9", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, _ *struct{}) {}))
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(cgprometheus.NewCollector(g)))
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metrics.Close()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	require.Equal(t, 200, send(t, srv, "GET", "/caf%E9", ""))

	families := scrape(t, metrics.URL)
	requests := families["contractguard_requests_total"].GetMetric()
	require.Len(t, requests, 1)
	assert.Equal(t, "GET /caf\uFFFD", label(requests[0], "route"))
	assert.Equal(t, "passed", label(requests[0], "outcome"))
	durations := families["contractguard_check_duration_seconds"].GetMetric()
	require.Len(t, durations, 1)
	assert.Equal(t, "GET /caf\uFFFD", label(durations[0], "route"))
}
