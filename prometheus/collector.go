// Package cgprometheus exports a contractguard Guard's metrics to
// Prometheus: a [prometheus.Collector] to register on a registry, served
// by promhttp like any other.
//
//	g, err := contractguard.New(opts)
//	...
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(cgprometheus.NewCollector(g))
//	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// It is a module of its own (github.com/contractguard/contractguard/prometheus)
// so that the Prometheus client never reaches the library's users who do
// not use it. The package is named cgprometheus, not prometheus, so that
// it never shadows client_golang's prometheus package at a call site that
// needs both (as every one that registers it does).
//
// # Metrics
//
// Per request, fed by [contractguard.Guard.Observe]:
//
//	contractguard_requests_total{method,route,outcome,code}       counter
//	contractguard_check_duration_seconds{method,route}             histogram
//
// Read from [contractguard.Guard.Stats] at each scrape:
//
//	contractguard_contracts_loaded                                 gauge
//	contractguard_reloads_total{result="ok"|"failed"}              counter
//	contractguard_scan_findings_total{class}                       counter
//	contractguard_sink_blocks_total{sink}                          counter
//	contractguard_license_info{licensee,key_id,features}           gauge, 1
//	contractguard_license_expiry_timestamp_seconds                 gauge
//
// The labels are bounded: route is the contract's endpoint pattern
// (/users/:id), never the raw path; method is the file contract's, or for
// a request no contract matched or a typed handler's contract alone a
// standard method or "_OTHER"; outcome is passed, rejected, would_block or
// unmatched; code is the violation's code (rejected and would_block only).
// The licence metrics are there only when the guard has a licence key, and
// never show the key. docs/metrics.md in the repository describes each
// metric and the PromQL for the questions operators ask.
package cgprometheus

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractguard/contractguard"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultBuckets are the upper bounds, in seconds, of the
// contractguard_check_duration_seconds buckets unless [WithBuckets] says
// otherwise: from 10µs (a small body, checked) to 1 s (a large one from a
// slow client: the time includes reading the body).
var DefaultBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
}

// MaxSeries bounds the label sets of contractguard_requests_total one
// Collector keeps. Real contracts never come near it (it would take
// hundreds of routes with every outcome and code); past it, a new label
// set's requests are counted with route "_overflow" and, unless it is a
// standard one, method "_OTHER", so that memory stays bounded whatever is
// loaded over a process's life.
const MaxSeries = 10000

// overflowRoute is the route label of the requests past MaxSeries.
const overflowRoute = "_overflow"

// overflow is k as counted past MaxSeries: route "_overflow", and method
// "_OTHER" unless it is a standard one (a contract's method may be any
// token), so that the overflow's label sets are few: the standard methods
// and _OTHER, by outcome and code.
func (k seriesKey) overflow() seriesKey {
	k.route, k.method = overflowRoute, contractguard.StandardMethod(k.method) // a contract's method may be any token
	return k
}

// Option configures a Collector.
type Option func(*config)

type config struct {
	buckets []float64
	labels  prometheus.Labels
}

// WithBuckets sets the upper bounds, in seconds and in increasing order,
// of the contractguard_check_duration_seconds buckets (default
// [DefaultBuckets]); at least one.
func WithBuckets(buckets ...float64) Option {
	return func(c *config) { c.buckets = slices.Clone(buckets) }
}

// WithConstLabels adds labels with fixed values to every metric of the
// Collector: what tells two guards of one process apart on one registry
// ({"guard": "public"}, {"guard": "admin"}). A label named le is refused
// (contractguard_check_duration_seconds's buckets are named so).
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *config) {
		c.labels = make(prometheus.Labels, len(labels))
		for k, v := range labels {
			c.labels[k] = v
		}
	}
}

// Collector is a [prometheus.Collector] of one Guard's metrics. Make one
// with [NewCollector] and register it; it is safe for concurrent use.
type Collector struct {
	g *contractguard.Guard

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	// series maps a request's labels to its counter and histogram,
	// resolved once: a request reads the map (copied on write, so a read
	// takes no lock) and adds to what it finds, without allocating.
	series atomic.Pointer[map[seriesKey]*series]
	mu     sync.Mutex // serializes adding to series
	max    int        // MaxSeries; smaller in tests

	contracts, reloads, findings, sinkBlocks, licenseInfo, licenseExpiry *prometheus.Desc
}

// seriesKey is the labels of contractguard_requests_total.
type seriesKey struct {
	method, route string
	outcome       contractguard.Outcome
	code          string
}

// series is one label set's counter, and its method and route's
// histogram (nil for unmatched requests, which the guard does not time).
type series struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// NewCollector returns a Collector of g's metrics, observing g's requests
// from now on (see [contractguard.Guard.Observe]: with it registered, a
// request costs no allocation more). Register it on one registry. The
// observing cannot be undone: a Collector unregistered from its registry
// goes on counting, which costs a map lookup and two atomic adds per
// request. NewCollector panics when g is nil, the buckets are not in
// increasing order or a constant label is named le, as client_golang
// does for its own mistakes of set-up.
func NewCollector(g *contractguard.Guard, opts ...Option) *Collector {
	if g == nil {
		panic("cgprometheus: NewCollector: the guard is nil")
	}
	cfg := config{buckets: DefaultBuckets}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.buckets) == 0 {
		// client_golang would put its own defaults in, not DefaultBuckets.
		panic("cgprometheus: WithBuckets: no buckets given")
	}
	for i, b := range cfg.buckets {
		// !(b > prev), not b <= prev: a NaN is in no order but compares
		// false with anything, and (0.01, 1, NaN, 0.5) passed b <= prev.
		if math.IsNaN(b) || i > 0 && !(b > cfg.buckets[i-1]) {
			panic("cgprometheus: WithBuckets: the buckets must be in increasing order")
		}
	}
	if _, ok := cfg.labels["le"]; ok {
		// client_golang refuses it only when it makes a histogram, on the
		// first request a contract runs on: a panic on that request's
		// goroutine, and on every one after.
		panic(`cgprometheus: WithConstLabels: "le" is the histogram's bucket label`)
	}
	c := &Collector{
		g:   g,
		max: MaxSeries,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "contractguard_requests_total",
			Help:        "Requests the guard decided on, by the contract's method and route, outcome (passed, rejected, would_block, unmatched) and violation code. A request checked in two passes (Middleware, then a typed handler) counts in each.",
			ConstLabels: cfg.labels,
		}, []string{"method", "route", "outcome", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "contractguard_check_duration_seconds",
			Help:        "Time the guard spent on a request a contract ran on (reading the body, parsing, schema, scan, rules), by the contract's method and route.",
			Buckets:     cfg.buckets,
			ConstLabels: cfg.labels,
		}, []string{"method", "route"}),
		contracts: prometheus.NewDesc("contractguard_contracts_loaded",
			"Contracts in force.", nil, cfg.labels),
		reloads: prometheus.NewDesc("contractguard_reloads_total",
			"Reloads of the contracts, by result: ok (the new set is in force) or failed (the old set stayed).", []string{"result"}, cfg.labels),
		findings: prometheus.NewDesc("contractguard_scan_findings_total",
			"Values the vulnerability scan flagged, by class.", []string{"class"}, cfg.labels),
		sinkBlocks: prometheus.NewDesc("contractguard_sink_blocks_total",
			"Calls sink protection blocked (or reported, in learning mode), by sink.", []string{"sink"}, cfg.labels),
		licenseInfo: prometheus.NewDesc("contractguard_license_info",
			"The licence key in force (never the key itself): 1, with its licensee, key id and entitled features (comma-separated).", []string{"licensee", "key_id", "features"}, cfg.labels),
		licenseExpiry: prometheus.NewDesc("contractguard_license_expiry_timestamp_seconds",
			"When the licence key in force expires, in seconds since the Unix epoch.", nil, cfg.labels),
	}
	c.series.Store(&map[seriesKey]*series{})
	g.Observe(c.observe)
	return c
}

// observe counts one request. It allocates only the first time a label
// set is seen.
func (c *Collector) observe(e contractguard.Event) {
	k := seriesKey{method: e.Method, route: e.Route, outcome: e.Outcome, code: e.Code}
	m := *c.series.Load()
	s := m[k]
	if s == nil && len(m) >= c.max {
		k = k.overflow()
		s = m[k]
	}
	if s == nil {
		s = c.add(k)
	}
	s.count.Inc()
	if s.duration != nil {
		s.duration.Observe(e.Duration.Seconds())
	}
}

// add resolves k's counter and histogram and publishes a copy of the map
// with them. Past MaxSeries label sets, k is counted as its overflow.
func (c *Collector) add(k seriesKey) *series {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.series.Load()
	if len(old) >= c.max {
		k = k.overflow()
	}
	if s := old[k]; s != nil {
		return s // added while this request waited for the lock
	}
	// client_golang panics on a label value that is not UTF-8: a
	// contract's endpoint in code, or a router's pattern, may hold such a
	// byte (/caf\xe9), and this runs on a request's goroutine.
	method, route := strings.ToValidUTF8(k.method, "\uFFFD"), strings.ToValidUTF8(k.route, "\uFFFD")
	s := &series{count: c.requests.WithLabelValues(method, route, k.outcome.String(), strings.ToValidUTF8(k.code, "\uFFFD"))}
	if k.outcome != contractguard.OutcomeUnmatched {
		s.duration = c.duration.WithLabelValues(method, route)
	}
	m := make(map[seriesKey]*series, len(old)+1)
	for key, v := range old {
		m[key] = v
	}
	m[k] = s
	c.series.Store(&m)
	return s
}

// Describe sends the descriptors of every metric of the Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.requests.Describe(ch)
	c.duration.Describe(ch)
	for _, d := range []*prometheus.Desc{c.contracts, c.reloads, c.findings, c.sinkBlocks, c.licenseInfo, c.licenseExpiry} {
		ch <- d
	}
}

// Collect sends the per-request metrics as counted so far and the
// guard's figures as [contractguard.Guard.Stats] reads them now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.requests.Collect(ch)
	c.duration.Collect(ch)
	s := c.g.Stats()
	ch <- prometheus.MustNewConstMetric(c.contracts, prometheus.GaugeValue, float64(s.ContractsLoaded))
	ch <- prometheus.MustNewConstMetric(c.reloads, prometheus.CounterValue, float64(s.Reloads), "ok")
	ch <- prometheus.MustNewConstMetric(c.reloads, prometheus.CounterValue, float64(s.ReloadFailures), "failed")
	for class, n := range s.ScanFindings {
		ch <- prometheus.MustNewConstMetric(c.findings, prometheus.CounterValue, float64(n), class)
	}
	for sink, n := range s.SinkBlocks {
		ch <- prometheus.MustNewConstMetric(c.sinkBlocks, prometheus.CounterValue, float64(n), sink)
	}
	if l := s.License; l != nil {
		features := slices.Clone(l.Features)
		slices.Sort(features)
		ch <- prometheus.MustNewConstMetric(c.licenseInfo, prometheus.GaugeValue, 1, l.Licensee, l.KeyID, strings.Join(features, ","))
		if t, err := time.Parse(time.RFC3339, l.Expires); err == nil {
			ch <- prometheus.MustNewConstMetric(c.licenseExpiry, prometheus.GaugeValue, float64(t.Unix()))
		}
	}
}
