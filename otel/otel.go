// Package cgotel exports a contractguard Guard's metrics through the
// OpenTelemetry metrics API, to whatever MeterProvider the application
// has set up (an OTLP exporter, a Prometheus bridge, …).
//
//	g, err := contractguard.New(opts)
//	...
//	unregister, err := cgotel.Register(g, otel.GetMeterProvider())
//	...
//	defer unregister()
//
// It is a module of its own (github.com/contractguard/contractguard/otel)
// so that OpenTelemetry never reaches the library's users who do not use
// it. The package is named cgotel, not otel, so that it never shadows
// go.opentelemetry.io/otel at a call site that needs both.
//
// # Instruments
//
// Per request, fed by [contractguard.Guard.Observe]:
//
//	contractguard.requests        Int64Counter, {request}
//	contractguard.check.duration  Float64Histogram, s
//
// Observed from [contractguard.Guard.Stats] at each collection:
//
//	contractguard.contracts.loaded       Int64ObservableGauge, {contract}
//	contractguard.reloads                Int64ObservableCounter, {reload}
//	contractguard.scan.findings          Int64ObservableCounter, {finding}
//	contractguard.sink.blocks            Int64ObservableCounter, {call}
//	contractguard.license.time_remaining Int64ObservableGauge, s
//
// The attributes follow the HTTP semantic conventions where they apply:
// http.request.method (the file contract's method; for a request no
// contract matched or a typed handler's contract alone a standard method
// or _OTHER, as the conventions say) and http.route (the contract's
// endpoint pattern, never the raw path; absent when no contract matched);
// then contractguard.outcome (passed, rejected, would_block, unmatched),
// contractguard.code (the violation's code, for rejected and would_block),
// contractguard.reload.result (ok, failed), contractguard.scan.class,
// contractguard.sink and, on the licence's gauge,
// contractguard.license.licensee, .key_id and .features (never the key).
// docs/metrics.md in the repository describes each instrument.
package cgotel

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/contractguard/contractguard"
)

// ScopeName is the instrumentation scope of the instruments: the name of
// the Meter they are created with.
const ScopeName = "github.com/contractguard/contractguard/otel"

// DefaultBuckets are the explicit bucket boundaries, in seconds, advised
// for contractguard.check.duration unless [WithBuckets] says otherwise:
// from 10µs (a small body, checked) to 1 s (a large one from a slow
// client: the time includes reading the body). A View of the
// MeterProvider can replace them.
var DefaultBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
}

// MaxSeries bounds the attribute sets of contractguard.requests one
// registration keeps. Real contracts never come near it; past it, a new
// set's requests are recorded with http.route "_overflow" and, unless it
// is a standard one, http.request.method "_OTHER", so that memory stays
// bounded whatever is loaded over a process's life.
const MaxSeries = 10000

// maxSeries is MaxSeries; smaller in tests.
var maxSeries = MaxSeries

// overflowRoute is the http.route of the requests past MaxSeries.
const overflowRoute = "_overflow"

// overflow is k as recorded past MaxSeries: http.route "_overflow", and
// http.request.method "_OTHER" unless it is a standard one (a contract's
// method may be any token), so that the overflow's attribute sets are
// few: the standard methods and _OTHER, by outcome and code.
func (k seriesKey) overflow() seriesKey {
	k.route, k.method = overflowRoute, contractguard.StandardMethod(k.method) // a contract's method may be any token
	return k
}

// The attribute keys of contractguard's own attributes (the HTTP ones are
// semconv's http.request.method and http.route).
const (
	OutcomeKey         = attribute.Key("contractguard.outcome")          // passed, rejected, would_block, unmatched
	CodeKey            = attribute.Key("contractguard.code")             // the violation's code: rejected and would_block only
	ReloadResultKey    = attribute.Key("contractguard.reload.result")    // ok, failed
	ScanClassKey       = attribute.Key("contractguard.scan.class")       // sql_injection, xss, …
	SinkKey            = attribute.Key("contractguard.sink")             // sql, shell, file, http
	LicenseLicenseeKey = attribute.Key("contractguard.license.licensee") // who the licence is for
	LicenseKeyIDKey    = attribute.Key("contractguard.license.key_id")   // the vendor key that signed it
	LicenseFeaturesKey = attribute.Key("contractguard.license.features") // the entitled features, sorted (a string slice)
)

// Option configures [Register].
type Option func(*config)

type config struct {
	buckets []float64
	attrs   []attribute.KeyValue
}

// WithBuckets sets the explicit bucket boundaries, in seconds and in
// increasing order, advised for contractguard.check.duration (default
// [DefaultBuckets]); at least one.
func WithBuckets(buckets ...float64) Option {
	return func(c *config) { c.buckets = slices.Clone(buckets) }
}

// WithAttributes adds attributes to every measurement of the
// registration: what tells two guards of one process apart
// (attribute.String("contractguard.guard", "public")).
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, attrs...) }
}

// exporter is one registration: the instruments and the attribute sets
// of the requests seen.
type exporter struct {
	requests metric.Int64Counter
	duration metric.Float64Histogram
	attrs    []attribute.KeyValue
	stopped  atomic.Bool

	// series maps an event's attributes to its measurement options,
	// built once: a request reads the map (copied on write, so a read
	// takes no lock) and records with what it finds, without allocating.
	series atomic.Pointer[map[seriesKey]*series]
	mu     sync.Mutex // serializes adding to series
	max    int        // MaxSeries; smaller in tests
}

// seriesKey is the attributes of contractguard.requests.
type seriesKey struct {
	method, route string
	outcome       contractguard.Outcome
	code          string
}

// series is one attribute set's options: for the counter, and for the
// histogram (nil for unmatched requests, which the guard does not time).
// They are slices so that passing them on (opts...) makes no new one.
type series struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// Register creates contractguard's instruments with a Meter of mp
// (nil: the global MeterProvider, otel.GetMeterProvider()) and records
// g's requests from now on (see [contractguard.Guard.Observe]: with it
// registered, a request costs no allocation more with the OpenTelemetry
// SDK). unregister stops the recording and the observable instruments'
// callback; the guard keeps calling the stopped observer, which then
// returns at once. Register returns an error when an instrument cannot be
// created (the MeterProvider says why) or the buckets are not in
// increasing order. Register a guard once per MeterProvider: OpenTelemetry
// takes a second registration with the same attributes without a word
// (where a Prometheus registry refuses a second collector), and every
// request then counts twice.
func Register(g *contractguard.Guard, mp metric.MeterProvider, opts ...Option) (unregister func() error, err error) {
	if g == nil {
		return nil, errors.New("cgotel: Register: the guard is nil")
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	cfg := config{buckets: DefaultBuckets}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.buckets) == 0 {
		// The SDK would take its own defaults, in milliseconds, for a
		// histogram in seconds.
		return nil, errors.New("cgotel: WithBuckets: no buckets given")
	}
	for i, b := range cfg.buckets {
		// !(b > prev), not b <= prev: a NaN is in no order but compares
		// false with anything, and (0.01, 1, NaN, 0.5) passed b <= prev.
		if math.IsNaN(b) || i > 0 && !(b > cfg.buckets[i-1]) {
			return nil, errors.New("cgotel: WithBuckets: the buckets must be in increasing order")
		}
	}
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	x, err := newExporter(meter, cfg)
	if err != nil {
		return nil, err
	}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	contracts, err := meter.Int64ObservableGauge("contractguard.contracts.loaded", metric.WithUnit("{contract}"),
		metric.WithDescription("Contracts in force."))
	check(err)
	reloads, err := meter.Int64ObservableCounter("contractguard.reloads", metric.WithUnit("{reload}"),
		metric.WithDescription("Reloads of the contracts, by result: ok (the new set is in force) or failed (the old set stayed)."))
	check(err)
	findings, err := meter.Int64ObservableCounter("contractguard.scan.findings", metric.WithUnit("{finding}"),
		metric.WithDescription("Values the vulnerability scan flagged, by class."))
	check(err)
	sinks, err := meter.Int64ObservableCounter("contractguard.sink.blocks", metric.WithUnit("{call}"),
		metric.WithDescription("Calls sink protection blocked (or reported, in learning mode), by sink."))
	check(err)
	licence, err := meter.Int64ObservableGauge("contractguard.license.time_remaining", metric.WithUnit("s"),
		metric.WithDescription("Time until the licence key in force expires (negative once it has), with its licensee, key id and entitled features; never the key itself."))
	check(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	with := func(kvs ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(kvs, x.attrs...)...)
	}
	base := with()
	ok, failed := with(ReloadResultKey.String("ok")), with(ReloadResultKey.String("failed"))
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if x.stopped.Load() {
			return nil
		}
		s := g.Stats()
		o.ObserveInt64(contracts, s.ContractsLoaded, base)
		o.ObserveInt64(reloads, s.Reloads, ok)
		o.ObserveInt64(reloads, s.ReloadFailures, failed)
		for class, n := range s.ScanFindings {
			o.ObserveInt64(findings, n, with(ScanClassKey.String(class)))
		}
		for sink, n := range s.SinkBlocks {
			o.ObserveInt64(sinks, n, with(SinkKey.String(sink)))
		}
		if l := s.License; l != nil {
			if t, err := time.Parse(time.RFC3339, l.Expires); err == nil {
				features := slices.Clone(l.Features)
				slices.Sort(features)
				// Unix seconds, not time.Until: a key may expire in the
				// year 9999, beyond a Duration's 292 years.
				o.ObserveInt64(licence, t.Unix()-time.Now().Unix(), with(LicenseLicenseeKey.String(l.Licensee),
					LicenseKeyIDKey.String(l.KeyID), LicenseFeaturesKey.StringSlice(features)))
			}
		}
		return nil
	}, contracts, reloads, findings, sinks, licence)
	if err != nil {
		return nil, err
	}
	g.Observe(x.observe)
	return func() error {
		x.stopped.Store(true)
		return reg.Unregister()
	}, nil
}

// newExporter creates the per-request instruments with meter.
func newExporter(meter metric.Meter, cfg config) (*exporter, error) {
	x := &exporter{attrs: slices.Clone(cfg.attrs), max: maxSeries}
	var err1, err2 error
	x.requests, err1 = meter.Int64Counter("contractguard.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests the guard decided on. A request checked in two passes (Middleware, then a typed handler) counts in each."))
	x.duration, err2 = meter.Float64Histogram("contractguard.check.duration", metric.WithUnit("s"),
		metric.WithDescription("Time the guard spent on a request a contract ran on (reading the body, parsing, schema, scan, rules)."),
		metric.WithExplicitBucketBoundaries(cfg.buckets...))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	x.series.Store(&map[seriesKey]*series{})
	return x, nil
}

// observe records one request. It allocates only the first time an
// attribute set is seen.
func (x *exporter) observe(e contractguard.Event) {
	if x.stopped.Load() {
		return
	}
	k := seriesKey{method: e.Method, route: e.Route, outcome: e.Outcome, code: e.Code}
	m := *x.series.Load()
	s := m[k]
	if s == nil && len(m) >= x.max {
		k = k.overflow()
		s = m[k]
	}
	if s == nil {
		s = x.add(k)
	}
	// The event carries no request context: measurements are made with
	// the background one (so no exemplar links them to a trace).
	ctx := context.Background()
	x.requests.Add(ctx, 1, s.add...)
	if s.record != nil {
		x.duration.Record(ctx, e.Duration.Seconds(), s.record...)
	}
}

// add builds k's options and publishes a copy of the map with them. Past
// MaxSeries attribute sets, k is recorded as its overflow.
func (x *exporter) add(k seriesKey) *series {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := *x.series.Load()
	if len(old) >= x.max {
		k = k.overflow()
	}
	if s := old[k]; s != nil {
		return s // added while this request waited for the lock
	}
	// An attribute's string must be UTF-8 (OTLP's protobuf refuses to
	// encode one that is not, and with it the whole export): a contract's
	// endpoint in code, or a router's pattern, may hold a byte that is not
	// (/caf\xe9).
	where := append(slices.Clone(x.attrs), semconv.HTTPRequestMethodKey.String(strings.ToValidUTF8(k.method, "\uFFFD")))
	if k.route != "" {
		where = append(where, semconv.HTTPRouteKey.String(strings.ToValidUTF8(k.route, "\uFFFD")))
	}
	what := append(slices.Clone(where), OutcomeKey.String(k.outcome.String()))
	if k.code != "" {
		what = append(what, CodeKey.String(strings.ToValidUTF8(k.code, "\uFFFD")))
	}
	s := &series{add: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(what...))}}
	if k.outcome != contractguard.OutcomeUnmatched {
		s.record = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(where...))}
	}
	m := make(map[seriesKey]*series, len(old)+1)
	for key, v := range old {
		m[key] = v
	}
	m[k] = s
	x.series.Store(&m)
	return s
}
