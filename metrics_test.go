package contractguard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	g := testdataGuard(t)
	h := g.Middleware(&echo{})
	send(h, "GET", "/api/users/1", "")
	send(h, "GET", "/api/users/x", "")
	send(h, "GET", "/untracked", "")
	w := send(g.MetricsHandler(), "GET", "/actuator/contractguard", "")
	require.Equal(t, 200, w.Code)
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m))
	assert.Len(t, m, 5, "the document of SPEC 8 and requests_would_block (learning mode); no licence, no learning report")
	assert.Equal(t, 0.0, m["requests_would_block"])
	assert.Equal(t, 2.0, m["requests_validated"])
	assert.Equal(t, 1.0, m["requests_blocked"])
	assert.Equal(t, 5.0, m["contracts_loaded"])
	assert.Greater(t, m["average_latency_ms"], 0.0)

	off := mustNew(t, Options{})
	assert.Equal(t, 404, send(off.MetricsHandler(), "GET", "/actuator/contractguard", "").Code)
	assert.Equal(t, 405, send(g.MetricsHandler(), "POST", "/actuator/contractguard", "").Code)
}

// TestObserve_Events: an observer gets one event per request, with the
// contract's method and route (never the raw path), the outcome and the
// code; a request no contract matched says so, with a bounded method.
func TestObserve_Events(t *testing.T) {
	g := testdataGuard(t, func(o *Options) { o.VulnerabilityScan = true })
	var events []Event
	g.Observe(func(e Event) { events = append(events, e) })
	h := g.Middleware(&echo{})
	send(h, "GET", "/api/users/1", "")
	send(h, "GET", "/api/users/x", "")
	send(h, "GET", "/untracked", "")
	send(h, "BREW", "/untracked", "")
	send(h, "POST", "/api/users", `{"email":"' OR 1=1 --","password":"x","age":30}`)
	require.Len(t, events, 5)
	for i := range events {
		if events[i].Route != "" {
			assert.Positive(t, events[i].Duration, i)
		}
		events[i].Duration = 0
	}
	assert.Equal(t, []Event{
		{Method: "GET", Route: "/api/users/{id}", Outcome: OutcomePassed},
		{Method: "GET", Route: "/api/users/{id}", Outcome: OutcomeRejected, Code: CodeInvariantViolated},
		{Method: "GET", Outcome: OutcomeUnmatched},
		{Method: "_OTHER", Outcome: OutcomeUnmatched},
		{Method: "POST", Route: "/api/users", Outcome: OutcomeRejected, Code: CodeVulnerabilityDetected},
	}, events)
	s := g.Stats()
	assert.EqualValues(t, 1, s.ScanFindings["sql_injection"])
	assert.Len(t, s.ScanFindings, 6)
	assert.EqualValues(t, 3, s.RequestsValidated)
}

// TestObserve_TypedHandlerMethodIsBounded: a typed handler's contract
// takes any method, so the event of a request only it checked, alone or
// behind Middleware, has the request's method as a request no contract
// matched has it (a standard method or _OTHER), never as the client sent
// it: made-up methods cannot make up label values.
func TestObserve_TypedHandlerMethodIsBounded(t *testing.T) {
	type order struct {
		SKU string `json:"sku"`
	}
	g := mustNew(t, Options{Logger: discard})
	var events []Event
	g.Observe(func(e Event) { events = append(events, e) })
	typed := Handle(g, func(http.ResponseWriter, *http.Request, order) {})
	mux := http.NewServeMux()
	mux.Handle("/orders", typed)
	for _, h := range []http.Handler{typed, g.Middleware(mux)} {
		for _, method := range []string{"POST", "X-1", "X-2", "BREW"} {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/orders", strings.NewReader(`{"sku":"a"}`)))
		}
	}
	var got []Event
	for _, e := range events {
		assert.Positive(t, e.Duration)
		got = append(got, Event{Method: e.Method, Route: e.Route, Outcome: e.Outcome})
	}
	alone, behind := "type contractguard.order", "/orders" // the router's pattern
	assert.Equal(t, []Event{
		{Method: "POST", Route: alone, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: alone, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: alone, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: alone, Outcome: OutcomePassed},
		{Method: "POST", Route: behind, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: behind, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: behind, Outcome: OutcomePassed},
		{Method: "_OTHER", Route: behind, Outcome: OutcomePassed},
	}, got)
}

// TestObserve_NoAllocation: an observer adds no allocation to a request,
// passed, rejected or unmatched.
func TestObserve_NoAllocation(t *testing.T) {
	if raceDetector {
		t.Skip("counts allocations through sync.Pool, which the race detector empties at random: .ci/run runs it without")
	}
	allocs := func(observe bool) [3]float64 {
		g := testdataGuard(t)
		n := 0
		if observe {
			g.Observe(func(e Event) { n++ })
		}
		h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		w := &nopWriter{h: http.Header{}}
		var out [3]float64
		for i, target := range []string{"/api/users/1", "/api/users/x", "/static/app.js"} {
			r := httptest.NewRequest("GET", target, nil)
			out[i] = testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) })
		}
		if observe {
			assert.Equal(t, 3*101, n, "every request observed")
		}
		return out
	}
	without, with := allocs(false), allocs(true)
	assert.Equal(t, without, with)
	assert.Zero(t, with[2], "unmatched")
}

// scanOptOutMemo is a typed handler's request type that takes its memo out
// of the scan: its contract's opt-outs differ from those of a file
// contract that takes out another member.
type scanOptOutMemo struct {
	Memo string `json:"memo" jsonschema_extras:"x-contractguard-scan=false"`
	Q    string `json:"q"`
}

// TestMetrics_ScanFindingsCountValuesOnce: a value the scan flags counts
// once per request (docs/metrics.md: findings count values), also in
// learning mode, where the contracts of a request run one by one and
// those with different opt-outs each scan the body again, in one pass or
// in two (Middleware, then a typed handler it cannot see).
func TestMetrics_ScanFindingsCountValuesOnce(t *testing.T) {
	v := trustTestVendor(t)
	for _, hidden := range []bool{false, true} {
		g := mustNew(t, Options{LicenseKey: v.key(t), LearningMode: true, VulnerabilityScan: true, Logger: discard,
			Contracts: []Contract{{Endpoint: "/items", Method: "POST", Schema: map[string]any{"type": "object",
				"properties": map[string]any{"note": map[string]any{"type": "string", "x-contractguard-scan": false}}}}}})
		mux := http.NewServeMux()
		mux.Handle("POST /items", Handle(g, func(http.ResponseWriter, *http.Request, scanOptOutMemo) {}))
		var next http.Handler = mux
		if hidden {
			next = http.HandlerFunc(mux.ServeHTTP) // Middleware cannot see the typed handler: two passes
		}
		h := g.Middleware(next)
		require.Equal(t, 200, send(h, "POST", "/items", `{"q":"' OR 1=1 --","memo":"<script>x</script>"}`).Code, "learning mode")
		s := g.Stats()
		assert.EqualValues(t, 1, s.ScanFindings["sql_injection"], "q, flagged by both contracts' scans; two passes: %v", hidden)
		assert.EqualValues(t, 1, s.ScanFindings["xss"], "memo, flagged by the file contract's scan alone; two passes: %v", hidden)
		assert.EqualValues(t, 1, s.RequestsWouldBlock)
	}
}
