package contractguard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
)

// Defaults for the zero values of [Options].
const (
	// DefaultMaxBodyBytes is the largest body read when Options.MaxBodyBytes is 0: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxDepth is the deepest nesting of arrays and objects accepted
	// when Options.MaxDepth is 0.
	DefaultMaxDepth = 64
	// DefaultCELCostLimit bounds the cost of each invariant's evaluation
	// when Options.CELCostLimit is 0; it is the per-call limit Kubernetes
	// uses for its CEL validation rules.
	DefaultCELCostLimit = 1_000_000
)

// Options configures a [Guard]. A zero Options is valid: it guards nothing
// until contracts are given, with the defaults below.
type Options struct {
	// ContractsDir is a folder whose *.yaml, *.yml and *.json files are
	// loaded as contracts, in name order, without recursing. Subfolders can
	// hold schema files for $ref.
	ContractsDir string
	// ContractsFS, when set, is where ContractsDir is read (an embed.FS,
	// say); ContractsDir "" then means its root. Otherwise ContractsDir is
	// read from disk.
	ContractsFS fs.FS
	// Contracts are contracts given in code, loaded after the files.
	Contracts []Contract
	// SchemaFS is where typed handlers read schema files named by
	// cg:"schema=…" tags.
	SchemaFS fs.FS

	// User returns the user a request is made for, as context.user in
	// invariants: a map, or a struct whose json tags name its fields. With
	// no User, context.user is an empty map.
	User func(*http.Request) any

	// RequireContract rejects requests that match no contract, 403
	// NO_CONTRACT, instead of passing them through.
	RequireContract bool
	// MaxBodyBytes is the largest body accepted (413 above); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxDepth is the deepest nesting of arrays and objects accepted (400
	// MALFORMED_JSON deeper); 0 means DefaultMaxDepth, at most 10000.
	MaxDepth int
	// CELCostLimit bounds the cost of each invariant's evaluation; an
	// invariant over it counts as false. 0 means DefaultCELCostLimit.
	CELCostLimit uint64

	// VulnerabilityScan switches on the built-in attack checks. Not yet
	// available: New returns an error when it is set.
	VulnerabilityScan bool
	// LicenseKey enables paid-tier features.
	LicenseKey string
	// LearningMode is a paid-tier feature, not yet available: New returns
	// an error when it is set.
	LearningMode bool
	// SinkProtection is a paid-tier feature, not yet available: New returns
	// an error when it is set.
	SinkProtection bool
	// Metrics enables [Guard.MetricsHandler]; the counters run either way.
	Metrics bool

	// OnReject writes a rejection. The default writes the JSON error body
	// with the violation's status; replace it for RFC 9457 problem details
	// or an application's own error shape.
	OnReject func(http.ResponseWriter, *http.Request, *Violation)
	// Logger receives debug lines for rejections and for invariants that
	// fail to evaluate. nil means slog.Default().
	Logger *slog.Logger
}

// Guard enforces a set of contracts. It is safe for concurrent use.
type Guard struct {
	opts     Options
	env      *expr.Env
	log      *slog.Logger
	onReject func(http.ResponseWriter, *http.Request, *Violation)
	set      atomic.Pointer[contractSet]
	stats    counters
}

// contractSet is an immutable, compiled set of contracts.
type contractSet struct {
	tree   route.Tree[*routeEntry]
	loaded int
}

// routeEntry is what one method and route shape must satisfy.
type routeEntry struct {
	contracts []*compiled
	pattern   route.Pattern // for request.params
	hasSchema bool
}

// New compiles every contract of opts. Any problem in any contract is an
// error, a [*LoadError] per problem joined with errors.Join: a guard never
// starts half-loaded.
func New(opts Options) (*Guard, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	env, err := expr.NewEnv(opts.CELCostLimit)
	if err != nil {
		return nil, fmt.Errorf("contractguard: %w", err)
	}
	g := &Guard{opts: opts, env: env, log: opts.Logger, onReject: opts.OnReject}
	cs, err := loadContracts(&g.opts, env)
	if err != nil {
		return nil, err
	}
	g.set.Store(newSet(cs))
	return g, nil
}

func (o *Options) check() error {
	var errs []error
	for _, f := range []struct {
		on   bool
		name string
	}{
		{o.VulnerabilityScan, "VulnerabilityScan"},
		{o.LearningMode, "LearningMode"},
		{o.SinkProtection, "SinkProtection"},
	} {
		if f.on {
			errs = append(errs, fmt.Errorf("contractguard: Options.%s: not available in this version", f.name))
		}
	}
	if o.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("contractguard: Options.MaxBodyBytes must not be negative"))
	}
	if o.MaxDepth < 0 || o.MaxDepth > jsonbody.MaxDepthLimit {
		errs = append(errs, fmt.Errorf("contractguard: Options.MaxDepth must be between 0 and %d", jsonbody.MaxDepthLimit))
	}
	return errors.Join(errs...)
}

func (o *Options) defaults() {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.CELCostLimit == 0 {
		o.CELCostLimit = DefaultCELCostLimit
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OnReject == nil {
		o.OnReject = writeViolation
	}
}

// match finds the entry for a request. The path is split into a buffer on
// the stack, so that a request that matches nothing costs no allocation;
// the segments of a match are copied out.
func (s *contractSet) match(method, rawPath string) (*routeEntry, []string, bool) {
	var buf [16]string
	e, segs, ok := s.tree.Match(method, rawPath, buf[:0])
	if !ok {
		return nil, nil, false
	}
	return e, slices.Clone(segs), true
}

func newSet(cs []*compiled) *contractSet {
	s := &contractSet{}
	for _, c := range cs {
		e := &routeEntry{contracts: []*compiled{c}, pattern: c.pattern, hasSchema: c.schema != nil}
		if _, ok := s.tree.Add(c.method, c.pattern, e); !ok {
			// The loader has already refused duplicates.
			panic("contractguard: duplicate contract " + c.name())
		}
		s.loaded++
	}
	return s
}

// stateKey is the context key of a request's *state.
type stateKey struct{}

// state is what the guard knows of a request that passed it.
type state struct {
	guard  *Guard
	r      *http.Request
	raw    []byte
	body   any
	parsed bool
	done   []*routeEntry // entries already enforced on this request

	user    any
	hasUser bool
}

func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(stateKey{}).(*state)
	return st
}

// Body returns the body of a request that passed a guard, as the guard
// decoded it: map[string]any, []any, string, json.Number, bool or nil. It
// reports false when no guard parsed the body (no contract matched, or the
// body was not JSON on a contract without a schema).
func Body(r *http.Request) (any, bool) {
	if st := stateOf(r); st != nil && st.parsed {
		return st.body, true
	}
	return nil, false
}

// User returns what Options.User returned for a request that passed a
// guard (calling it if no invariant has yet), and nil otherwise.
func User(r *http.Request) any {
	if st := stateOf(r); st != nil {
		return st.userOf(r)
	}
	return nil
}

func (st *state) userOf(r *http.Request) any {
	if !st.hasUser {
		st.hasUser = true
		if f := st.guard.opts.User; f != nil {
			st.user = f(r)
		}
	}
	return st.user
}

// Middleware returns next guarded: a request that matches a contract
// reaches next only if it satisfies the contract, with the body bytes it
// was checked on in r.Body; anything else is rejected through
// Options.OnReject. Requests that match no contract pass untouched, unless
// Options.RequireContract is set.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serve(w, r, next)
	})
}

func (g *Guard) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	start := time.Now()
	method := route.UpperMethod(r.Method)
	e, segs, ok := g.set.Load().match(method, r.URL.EscapedPath())
	prev := stateOf(r)
	if !ok {
		if g.opts.RequireContract && (prev == nil || prev.guard != g) {
			g.reject(w, r, start, method, nil, newViolation(CodeNoContract,
				Detail{Message: "no contract for " + method + " " + route.Clean(segs, r.URL.EscapedPath())}))
			return
		}
		next.ServeHTTP(w, r)
		return
	}
	if prev != nil && prev.guard == g && slices.Contains(prev.done, e) {
		next.ServeHTTP(w, r) // this guard already enforced it, earlier in the chain
		return
	}
	if e.hasSchema {
		if v := checkMediaType(r.Header); v != nil {
			g.reject(w, r, start, method, e, v)
			return
		}
	}
	var raw []byte
	if prev != nil && prev.guard == g {
		raw = prev.raw // the body was read by this guard before
	} else {
		var v *Violation
		if raw, v = readBody(r, g.opts.MaxBodyBytes); v != nil {
			g.reject(w, r, start, method, e, v)
			return
		}
	}
	in := &request{method: method, rawQuery: r.URL.RawQuery, header: r.Header, r: r, segs: segs, entry: e}
	st := &state{guard: g, r: r, raw: raw}
	if prev != nil && prev.guard == g {
		st.done = prev.done
	}
	in.state = st
	if v := g.validate(e, in, raw, jsonContent(r.Header)); v != nil {
		g.reject(w, r, start, method, e, v)
		return
	}
	g.stats.record(start, false)
	st.done = append(st.done[:len(st.done):len(st.done)], e)
	r2 := r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	r2.Body = io.NopCloser(bytes.NewReader(raw))
	r2.ContentLength = int64(len(raw))
	st.r = r2
	next.ServeHTTP(w, r2)
}

func (g *Guard) reject(w http.ResponseWriter, r *http.Request, start time.Time, method string, e *routeEntry, v *Violation) {
	g.stats.record(start, true)
	if g.log.Enabled(r.Context(), slog.LevelDebug) {
		g.logReject(r.Context(), method, e, v)
	}
	g.opts.OnReject(w, r, v)
}

func (g *Guard) logReject(ctx context.Context, method string, e *routeEntry, v *Violation) {
	paths := make([]string, len(v.Details))
	for i, d := range v.Details {
		paths[i] = d.Path
	}
	pattern := ""
	if e != nil {
		pattern = e.contracts[0].endpoint
	}
	g.log.LogAttrs(ctx, slog.LevelDebug, "contractguard: request rejected",
		slog.String("method", method), slog.String("route", pattern),
		slog.String("code", v.Code), slog.Any("paths", paths))
}

// Check runs one request through the guard as Middleware would, with body
// as an application/json body, and returns the violation or nil. path is
// the request path, still percent-encoded; a query string after "?" is
// read as request.query. It counts in the metrics like a request.
func (g *Guard) Check(method, path string, body []byte) *Violation {
	start := time.Now()
	method = route.UpperMethod(method)
	rawPath, rawQuery, _ := strings.Cut(path, "?")
	e, segs, ok := g.set.Load().match(method, rawPath)
	if !ok {
		if g.opts.RequireContract {
			v := newViolation(CodeNoContract, Detail{Message: "no contract for " + method + " " + route.Clean(segs, rawPath)})
			g.stats.record(start, true)
			return v
		}
		return nil
	}
	if int64(len(body)) > g.opts.MaxBodyBytes {
		g.stats.record(start, true)
		return tooLarge(g.opts.MaxBodyBytes)
	}
	in := &request{method: method, rawQuery: rawQuery, segs: segs, entry: e}
	in.state = &state{guard: g, raw: body}
	v := g.validate(e, in, body, true)
	g.stats.record(start, v != nil)
	return v
}

// validate parses the body and runs every contract of e on it: all the
// schemas first, then all the invariants. It is the one code path of
// Middleware and Check.
func (g *Guard) validate(e *routeEntry, in *request, raw []byte, isJSON bool) *Violation {
	st := in.state
	if len(raw) > 0 && (isJSON || e.hasSchema) {
		v, err := jsonbody.Parse(raw, g.opts.MaxDepth)
		if err != nil {
			var pe *jsonbody.Error
			if errors.As(err, &pe) {
				return newViolation(CodeMalformedJSON, Detail{Path: pe.Path, Message: pe.Message})
			}
			return newViolation(CodeMalformedJSON, Detail{Message: "invalid JSON"})
		}
		st.body, st.parsed = v, true
	} else if len(raw) == 0 {
		st.parsed = true // an empty body is null
	}

	var details []Detail
	for _, c := range e.contracts {
		if c.schema != nil {
			c.schema.Validate(st.body, func(path, msg string) {
				details = append(details, Detail{Path: path, Message: msg})
			})
		}
	}
	if len(details) > 0 {
		slices.SortStableFunc(details, func(a, b Detail) int { return strings.Compare(a.Path, b.Path) })
		return newViolation(CodeSchemaInvalid, details...)
	}

	act := expr.Activation{Body: st.body, Method: in.method, Src: in}
	for _, c := range e.contracts {
		if len(c.invariants) == 0 {
			continue
		}
		if act.Path == "" {
			act.Path = route.Join(in.segs)
		}
		act.Shape = c.shape
		for i, inv := range c.invariants {
			ok, err := inv.prg.Eval(&act)
			if ok {
				continue
			}
			if err != nil && g.log.Enabled(context.Background(), slog.LevelDebug) {
				g.log.Debug("contractguard: invariant failed to evaluate; counted as false",
					slog.String("contract", c.name()), slog.Int("invariant", i), slog.String("error", err.Error()))
			}
			details = append(details, Detail{Message: inv.message})
		}
	}
	if len(details) > 0 {
		return newViolation(CodeInvariantViolated, details...)
	}
	return nil
}

// request is one request as invariants see it; it supplies the costly
// parts of request and context.user on demand.
type request struct {
	method   string
	rawQuery string
	header   http.Header
	r        *http.Request // nil for Check
	segs     []string
	entry    *routeEntry
	state    *state
}

func (q *request) Params() map[string]string { return q.entry.pattern.Params(q.segs) }

func (q *request) Query() map[string]string {
	vals, _ := url.ParseQuery(q.rawQuery) // as r.URL.Query() reads it: bad pairs dropped
	return firstValues(vals)
}

func (q *request) Headers() map[string]string {
	m := make(map[string]string, len(q.header))
	for k, v := range q.header {
		if len(v) > 0 {
			m[strings.ToLower(k)] = v[0]
		}
	}
	return m
}

func (q *request) User() any {
	r := q.r
	if r == nil { // Check: Options.User still gets a request to read
		r = &http.Request{Method: q.method, URL: &url.URL{Path: route.Join(q.segs), RawQuery: q.rawQuery}, Header: http.Header{}}
		r = r.WithContext(context.Background())
	}
	return q.state.userOf(r)
}

func firstValues(vals map[string][]string) map[string]string {
	m := make(map[string]string, len(vals))
	for k, v := range vals {
		if len(v) > 0 {
			m[k] = v[0]
		}
	}
	return m
}

// checkMediaType accepts no Content-Type, application/json and
// application/*+json, with no charset but UTF-8.
func checkMediaType(h http.Header) *Violation {
	vals := h["Content-Type"]
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) == 1 && vals[0] == "application/json":
		return nil
	case len(vals) > 1:
		return newViolation(CodeUnsupportedMediaType, Detail{Message: "more than one Content-Type header"})
	}
	mt, params, err := mime.ParseMediaType(vals[0])
	if err == nil && isJSONType(mt) {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
		return newViolation(CodeUnsupportedMediaType, Detail{Message: "charset must be utf-8"})
	}
	return newViolation(CodeUnsupportedMediaType, Detail{Message: "Content-Type must be application/json"})
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// jsonContent reports whether a request's body is to be read as JSON on a
// contract without a schema: no Content-Type, or a JSON one.
func jsonContent(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" || ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && isJSONType(mt)
}

// readBody reads the whole body, at most limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, *Violation) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	// Read at most limit+1 bytes: one more than allowed proves the body too
	// large without reading the rest.
	most := int(limit) + 1
	size := 512
	if r.ContentLength > 0 {
		size = int(r.ContentLength) + 1 // +1: EOF is seen without growing
	}
	buf := make([]byte, 0, min(size, most))
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), most-len(buf)))
		}
		n, err := r.Body.Read(buf[len(buf):min(cap(buf), most)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, tooLarge(limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge(mbe.Limit)
			}
			return nil, newViolation(CodeMalformedJSON, Detail{Message: "the request body could not be read"})
		}
	}
}

func tooLarge(limit int64) *Violation {
	return newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf("body must be at most %d bytes", limit)})
}
