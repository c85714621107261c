package contractguard

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// Metrics are the guard's counters, as served by [Guard.MetricsHandler].
type Metrics struct {
	// RequestsValidated counts the requests checked against a contract,
	// passed or blocked (and those blocked for having none, with
	// Options.RequireContract).
	RequestsValidated int64 `json:"requests_validated"`
	// RequestsBlocked counts the requests rejected.
	RequestsBlocked int64 `json:"requests_blocked"`
	// RequestsWouldBlock counts the requests a contract in mode learn
	// would have rejected (they reached the handler); see
	// [Guard.LearningReport] for them by contract.
	RequestsWouldBlock int64 `json:"requests_would_block"`
	// ContractsLoaded is the number of contracts in force.
	ContractsLoaded int64 `json:"contracts_loaded"`
	// AverageLatencyMS is the mean time the guard spent on a validated
	// request once its route was found (reading, parsing and checking the
	// body, evaluating rules), in milliseconds.
	AverageLatencyMS float64 `json:"average_latency_ms"`
	// License is the licence key in force (Options.LicenseKey): nil when
	// there is none. It never holds the key itself.
	License *LicenseState `json:"license,omitempty"`
}

type counters struct {
	validated, blocked, nanos atomic.Int64
	wouldBlock                atomic.Int64 // would-be rejections of contracts in mode learn
}

// record counts a request the guard checked. again is a second pass over
// the same request (a typed handler behind Middleware): its time adds to
// the request's, and a rejection counts, but the request is not counted
// twice.
func (c *counters) record(start time.Time, blocked, again bool) {
	c.nanos.Add(int64(time.Since(start)))
	if blocked {
		c.blocked.Add(1)
	}
	if !again {
		c.validated.Add(1)
	}
}

// Metrics returns the counters. Reading them never blocks requests.
func (g *Guard) Metrics() Metrics {
	m := Metrics{
		RequestsValidated:  g.stats.validated.Load(),
		RequestsBlocked:    g.stats.blocked.Load(),
		RequestsWouldBlock: g.stats.wouldBlock.Load(),
		ContractsLoaded:    int64(g.set.Load().loaded()) + g.typedLoaded(),
		License:            g.licenseState(),
	}
	if m.RequestsValidated > 0 {
		m.AverageLatencyMS = float64(g.stats.nanos.Load()) / float64(m.RequestsValidated) / 1e6
	}
	return m
}

// MetricsHandler serves [Guard.Metrics] as JSON to GET requests, with the
// [Guard.LearningReport] as "learning" when learning mode saw anything. It
// answers 404 unless Options.Metrics is set.
func (g *Guard) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.opts.Metrics {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		doc := struct {
			Metrics
			Learning []ContractReport `json:"learning,omitempty"`
		}{g.Metrics(), g.LearningReport()}
		b, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
}
