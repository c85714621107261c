package cgprometheus_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
)

// signup is a typed handler's contract.
type signup struct {
	Email string `json:"email" jsonschema:"format=email"`
	Age   int    `json:"age" jsonschema:"minimum=18"`
}

// TestCollector_TwoPasses: a request Middleware checks against a file
// contract and a typed handler (that Middleware cannot see) checks again
// against T's counts once in each pass, both under the file contract's
// route: the valid one passes twice, the one T refuses passes the file
// contract (which allows other members) and is rejected by T's.
func TestCollector_TwoPasses(t *testing.T) {
	g, _ := newGuard(t)
	c := cgprometheus.NewCollector(g)
	mux := http.NewServeMux()
	mux.Handle("POST /api/users", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in signup) {}))
	// The wrapper hides the mux from Middleware: the typed contract runs
	// in a second pass.
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
	for _, body := range []string{`{"email":"ada@example.com","age":36}`, `{"email":"ada@example.com","age":36,"x":1}`} {
		r := httptest.NewRequest("POST", "/api/users", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/users"} 3
contractguard_requests_total{code="SCHEMA_INVALID",method="POST",outcome="rejected",route="/api/users"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
	assert.EqualValues(t, 2, g.Stats().RequestsValidated, "the guard's own counter counts each request once")
}

// TestCollector_Overflow: past the bound on label sets, new ones are
// counted under route "_overflow"; those seen before keep their own.
func TestCollector_Overflow(t *testing.T) {
	g, _ := newGuard(t)
	c := cgprometheus.NewCollector(g)
	cgprometheus.SetMaxSeries(c, 2)
	h := app(g)
	for _, target := range []string{"/api/users/1", "/static/a", "/api/users/x", "/api/users/x", "/api/users/2"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/static/a", nil))
	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="GET",outcome="passed",route="/api/users/:id"} 2
contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} 1
contractguard_requests_total{code="",method="_OTHER",outcome="unmatched",route="_overflow"} 1
contractguard_requests_total{code="INVARIANT_VIOLATED",method="GET",outcome="rejected",route="_overflow"} 2
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
	assert.Equal(t, 2, testutil.CollectAndCount(c, "contractguard_check_duration_seconds"), "/api/users/:id and the overflow's")
}

// TestCollector_OverflowFoldsMethods: past the bound on label sets, a new
// set's method is folded too (a method that is not a standard one becomes
// "_OTHER"), so that the overflow's sets are bounded even when the
// contracts' methods are not.
func TestCollector_OverflowFoldsMethods(t *testing.T) {
	var contracts []contractguard.Contract
	for _, m := range []string{"PROPFIND", "MKCOL", "LOCK", "UNLOCK", "COPY", "MOVE", "GET"} {
		contracts = append(contracts, contractguard.Contract{Endpoint: "/dav", Method: m})
	}
	g, err := contractguard.New(contractguard.Options{Contracts: contracts, Logger: discard})
	require.NoError(t, err)
	c := cgprometheus.NewCollector(g)
	cgprometheus.SetMaxSeries(c, 2)
	h := app(g)
	for _, m := range []string{"PROPFIND", "MKCOL", "LOCK", "UNLOCK", "COPY", "MOVE", "GET", "PROPFIND"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/dav", nil))
	}
	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="GET",outcome="passed",route="_overflow"} 1
contractguard_requests_total{code="",method="MKCOL",outcome="passed",route="/dav"} 1
contractguard_requests_total{code="",method="PROPFIND",outcome="passed",route="/dav"} 2
contractguard_requests_total{code="",method="_OTHER",outcome="passed",route="_overflow"} 4
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
	assert.Equal(t, 4, testutil.CollectAndCount(c, "contractguard_check_duration_seconds"))
}

// TestCollector_MadeUpMethods: the requests a typed handler's contract
// alone checks are counted under a standard method or "_OTHER", never
// under the methods a client makes up, one series each.
func TestCollector_MadeUpMethods(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	g, err := contractguard.New(contractguard.Options{Logger: discard})
	require.NoError(t, err)
	c := cgprometheus.NewCollector(g)
	mux := http.NewServeMux()
	mux.Handle("/items", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in item) {}))
	h := g.Middleware(mux)
	for i := range 200 {
		r := httptest.NewRequest(fmt.Sprintf("M%d", i), "/items", strings.NewReader(`{"name":"a"}`))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="",method="_OTHER",outcome="passed",route="/items"} 200
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
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

// request makes a reusable request: its body is reset before each use.
func request(method, target, body string) (*http.Request, func()) {
	r := httptest.NewRequest(method, target, nil)
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

// TestCollector_NoAllocation: with the collector, a request allocates
// exactly what it does without, whatever its outcome (once its label set
// has been seen).
func TestCollector_NoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted exactly under the race detector (sync.Pool drops items)")
	}
	allocs := func(collect bool) []float64 {
		g, _ := newGuard(t, func(o *contractguard.Options) { o.VulnerabilityScan = false })
		if collect {
			cgprometheus.NewCollector(g)
		}
		h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
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
// the collector; allocs/op must be the same.
//
//	go test -run '^$' -bench Middleware -benchmem ./prometheus/
func BenchmarkMiddleware(b *testing.B) {
	for _, q := range requests {
		for _, collect := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/collector=%t", q.name, collect), func(b *testing.B) {
				g, _ := newGuard(b, func(o *contractguard.Options) { o.VulnerabilityScan = false })
				if collect {
					cgprometheus.NewCollector(g)
				}
				h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
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
// goroutine adds to the same series.
func BenchmarkMiddlewareParallel(b *testing.B) {
	for _, collect := range []bool{false, true} {
		b.Run(fmt.Sprintf("collector=%t", collect), func(b *testing.B) {
			g, _ := newGuard(b, func(o *contractguard.Options) { o.VulnerabilityScan = false })
			if collect {
				cgprometheus.NewCollector(g)
			}
			h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
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

// TestCollector_LearningTypedBodyNotT: in learning mode, a body of
// another media type sent to a typed handler is reported, and reaches the
// handler when it is a T (would_block); one that is no T is refused, as
// the handler cannot run without it, and counts as rejected, with the
// code it is refused with. It counted as would_block, as though it had
// reached the handler, and not in requests_blocked.
func TestCollector_LearningTypedBodyNotT(t *testing.T) {
	g, _ := newGuard(t, func(o *contractguard.Options) { o.LearningMode = true })
	c := cgprometheus.NewCollector(g)
	mux := http.NewServeMux()
	var got []signup
	mux.Handle("POST /signup", contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in signup) { got = append(got, in) }))
	h := g.Middleware(mux)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"email":"ada@example.com","age":36}`, 200},
		{`email=ada@example.com&age=36`, 400},
	} {
		r := httptest.NewRequest("POST", "/signup", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tc.status, w.Code, "%s: %s", tc.body, w.Body)
	}
	assert.Equal(t, []signup{{Email: "ada@example.com", Age: 36}}, got)
	expected := `
# HELP contractguard_requests_total Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.
# TYPE contractguard_requests_total counter
contractguard_requests_total{code="MALFORMED_JSON",method="POST",outcome="rejected",route="POST /signup"} 1
contractguard_requests_total{code="UNSUPPORTED_MEDIA_TYPE",method="POST",outcome="would_block",route="POST /signup"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), "contractguard_requests_total"))
	m := g.Metrics()
	assert.EqualValues(t, 2, m.RequestsValidated)
	assert.EqualValues(t, 1, m.RequestsBlocked)
	assert.EqualValues(t, 1, m.RequestsWouldBlock)
}
