package contractguard

import (
	"cmp"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/contractguard/contractguard/internal/scan"
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
	// would have rejected (they reached the handler), once however many
	// of their contracts would have, as the would_block events of
	// [Guard.Observe]; see [Guard.LearningReport] for the would-be
	// rejections by contract.
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
	wouldBlock                atomic.Int64 // requests a contract in mode learn would have rejected
	reloads, reloadFailures   atomic.Int64
	findings                  [scan.Classes]atomic.Int64 // values the scan flagged, by class
	sinkBlocks                [len(sinkNames)]atomic.Int64

	observers atomic.Pointer[[]func(Event)]
}

// record counts a request the guard checked, as vd decided it, and
// returns the time it took since start, the monotonic reading when it
// reached the guard. prev is the state an earlier pass over the same
// request left (a typed handler behind Middleware; nil on the first):
// the pass's time adds to the request's, and a rejection counts, but the
// request is counted once as validated and once as would-block, however
// many passes and contracts in mode learn would have rejected it (each
// is reported on its own, learn.go; the state passed on remembers it).
func (c *counters) record(start time.Duration, vd decision, prev *state) time.Duration {
	d := monotonic() - start
	c.nanos.Add(int64(d))
	switch {
	case vd.v != nil:
		c.blocked.Add(1)
	case vd.would != nil && firstWouldBlock(cmp.Or(vd.st, prev)):
		c.wouldBlock.Add(1)
	}
	if prev == nil {
		c.validated.Add(1)
	}
	return d
}

// firstWouldBlock reports whether no pass before this one would have
// rejected the request whose state is st (nil: a request that passes on
// no state, which has no later pass), and remembers that this one would.
func firstWouldBlock(st *state) bool {
	if st == nil {
		return true
	}
	first := !st.wouldBlock
	st.wouldBlock = true
	return first
}

// epoch is when the package was initialized: monotonic's origin.
var epoch = time.Now()

// monotonic is the time since epoch on the monotonic clock. A request's
// duration is the difference of two readings: time.Since on a time with
// a monotonic reading reads only that clock, where time.Now reads the
// wall clock too (a third of the cost of timing a request).
func monotonic() time.Duration { return time.Since(epoch) }

// countFindings counts the findings of a scan's violation by class, each
// value once per request: contracts with different opt-outs that run
// apart (in mode learn, or on a later pass) scan the body again, and find
// again what an earlier scan of the request found. st remembers the paths
// counted.
func (c *counters) countFindings(v *Violation, st *state) {
	var counted map[string]bool // only when an earlier scan found something
	if len(st.flagged) > 0 {
		counted = make(map[string]bool, len(st.flagged))
		for _, p := range st.flagged {
			counted[p] = true
		}
	}
	for _, d := range v.failures() {
		if counted[d.Path] {
			continue
		}
		st.flagged = append(st.flagged, d.Path)
		c.findings[scan.ClassOf(d.Message)].Add(1)
	}
}

// sinkNames are the sinks of sink protection, as metrics name them.
var sinkNames = [...]string{"sql", "shell", "file", "http"}

// Outcome is what the guard decided on a request, as an [Event] says.
type Outcome uint8

// The outcomes.
const (
	// OutcomePassed: every contract of the request passed.
	OutcomePassed Outcome = iota + 1
	// OutcomeRejected: the request was rejected (Event.Code says why).
	OutcomeRejected
	// OutcomeWouldBlock: a contract in mode learn would have rejected it
	// (Event.Code says why); it passed.
	OutcomeWouldBlock
	// OutcomeUnmatched: no contract matched; it passed through unread.
	OutcomeUnmatched
)

// String is the outcome's name in metrics: passed, rejected, would_block,
// unmatched.
func (o Outcome) String() string {
	switch o {
	case OutcomePassed:
		return "passed"
	case OutcomeRejected:
		return "rejected"
	case OutcomeWouldBlock:
		return "would_block"
	case OutcomeUnmatched:
		return "unmatched"
	}
	return ""
}

// Event is one request the guard decided on, as an observer registered
// with [Guard.Observe] receives it. Its strings are bounded for use as
// metric labels: never the raw path, never a value of the request.
type Event struct {
	// Method is the file contract's method (upper case); for a request
	// that matched none, or a typed handler's contract alone (which takes
	// any method), the request's if it is one of the standard methods,
	// else "_OTHER": never a method of the client's choosing.
	Method string
	// Route is the endpoint of the contract that matched, as written
	// (/users/:id); for a typed handler's contract alone, the router's
	// pattern where the guard knows it, else "type T"; "" when no contract
	// matched.
	Route   string
	Outcome Outcome
	// Code is the violation's code for OutcomeRejected and
	// OutcomeWouldBlock; "" otherwise.
	Code string
	// Duration is the time the guard spent on the request (0 for an
	// unmatched one: the guard does not read the clock for those).
	Duration time.Duration
}

// Observe registers f to receive an [Event] for every request that
// reaches the guard, matched or not, on the request's goroutine once the
// guard has decided. A request checked in two passes (Middleware, then a
// typed handler) gives an event for each. f must be quick and safe for
// concurrent use; it may keep the Event. It is how metrics exporters (the
// prometheus and otel modules of this repository) see requests: with no
// observer registered, it costs nothing, and with one, no allocation.
func (g *Guard) Observe(f func(Event)) {
	for {
		old := g.stats.observers.Load()
		var fs []func(Event)
		if old != nil {
			fs = append(fs, *old...)
		}
		fs = append(fs, f)
		if g.stats.observers.CompareAndSwap(old, &fs) {
			return
		}
	}
}

// emit gives the observers the event of a request a contract ran on.
func (g *Guard) emit(in *input, e *routeEntry, o Outcome, code string, d time.Duration) {
	obs := g.stats.observers.Load()
	if obs == nil {
		return
	}
	ev := Event{Outcome: o, Code: code, Duration: d}
	switch {
	case e != nil:
		ev.Method, ev.Route = e.contracts[0].method, e.contracts[0].endpoint
	case in.typed.c != nil:
		// The request's method, which the typed contract does not bound.
		ev.Method, ev.Route = StandardMethod(in.method), in.typed.routeName(in.r)
	default:
		ev.Method = StandardMethod(in.method)
	}
	for _, f := range *obs {
		f(ev)
	}
}

// emitUnmatched gives the observers the event of a request no contract
// matched.
func (g *Guard) emitUnmatched(in *input) {
	if obs := g.stats.observers.Load(); obs != nil {
		ev := Event{Method: StandardMethod(in.method), Outcome: OutcomeUnmatched}
		for _, f := range *obs {
			f(ev)
		}
	}
}

// StandardMethod is m when it is a standard HTTP method, else "_OTHER"
// (as the OpenTelemetry conventions name it): a client chooses the
// method, and a label must stay bounded. It is how [Event.Method] bounds
// the methods no contract names, for exporters that bound their own
// labels (cgprometheus, cgotel).
func StandardMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// Stats are the guard's figures beyond the per-request events: what a
// metrics exporter reads when it is scraped. Reading them never blocks
// requests.
type Stats struct {
	Metrics
	// Reloads and ReloadFailures count Reload calls that replaced the
	// contracts, and those that failed (the old set stayed).
	Reloads, ReloadFailures int64
	// ScanFindings counts the values the vulnerability scan flagged, by
	// class: sql_injection, xss, command_injection, path_traversal,
	// nosql_injection, prototype_pollution; those a rejection listed (at
	// most 100 a request, docs/errors.md).
	ScanFindings map[string]int64
	// SinkBlocks counts the calls sink protection blocked (or, in learning
	// mode, reported), by sink: sql, shell, file, http.
	SinkBlocks map[string]int64
}

// Stats returns the guard's figures.
func (g *Guard) Stats() Stats {
	s := Stats{Metrics: g.Metrics(), Reloads: g.stats.reloads.Load(), ReloadFailures: g.stats.reloadFailures.Load(),
		ScanFindings: map[string]int64{}, SinkBlocks: map[string]int64{}}
	for c := scan.Class(1); int(c) < scan.Classes; c++ {
		s.ScanFindings[c.Name()] = g.stats.findings[c].Load()
	}
	for i, name := range sinkNames {
		s.SinkBlocks[name] = g.stats.sinkBlocks[i].Load()
	}
	return s
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
