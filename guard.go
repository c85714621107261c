package contractguard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/scan"
)

// Defaults for the zero values of [Options].
const (
	// DefaultMaxBodyBytes is the largest body read when Options.MaxBodyBytes is 0: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxDepth is the deepest nesting of arrays and objects accepted
	// when Options.MaxDepth is 0.
	DefaultMaxDepth = 64
	// DefaultCELCostLimit bounds the cost of each invariant's evaluation
	// when Options.CELCostLimit is 0. Measured (docs/contracts.md), a cost
	// unit of a rule over a list takes about 80 ns, so an evaluation stops
	// within about 8 ms: less than reading a 1 MiB body takes. (Kubernetes
	// allows 1,000,000 per call, for admission requests, which are rare.)
	DefaultCELCostLimit = 100_000
	// DefaultCELMaxEstimatedCost is the highest worst-case cost an
	// expression may be estimated to have, when Options.CELMaxEstimatedCost
	// is 0. It refuses rules that are quadratic in an unbounded list, and
	// admits linear ones, which the runtime limit bounds.
	DefaultCELMaxEstimatedCost = 10_000_000
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
	// CELMaxEstimatedCost refuses, when the guard is built, an expression
	// whose estimated worst-case cost is higher: estimated from the
	// schema's maxItems, maxLength and maxProperties, else from what fits in
	// MaxBodyBytes. 0 means DefaultCELMaxEstimatedCost; math.MaxUint64
	// turns the check off (the runtime limit still holds).
	CELMaxEstimatedCost uint64

	// VulnerabilityScan checks, on every request that matches a contract,
	// every key and string value of the body, the query and the path
	// parameters for SQL injection, cross-site scripting, path traversal,
	// command injection, NoSQL operators and prototype pollution, after
	// the body is parsed and before the schema: 403 VULNERABILITY_DETECTED
	// with the path of each value flagged. A property whose schema says
	// x-contractguard-scan: false is not scanned (on the schema's root:
	// nothing of the contract's requests is). See docs/vulnerability-scan.md.
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
	// Logger receives one info line when the guard starts (contracts
	// loaded, features on) and one per reload, an error line for a reload
	// that fails, and debug lines for rejections (method, route, code,
	// detail paths, never values) and for invariants that fail to
	// evaluate. Nothing is logged per request at info level. nil means
	// slog.Default().
	Logger *slog.Logger

	// Disabled turns the guard off (the configuration's enabled: false):
	// no contract file is read, Middleware returns its handler as it is,
	// Check and CheckRequest pass everything, and typed handlers only
	// decode the body into T (a body that is not a T is still 400: the
	// handler cannot run without one). A typed handler's contract is still
	// built, so a bad one still fails Handle at start-up. Nothing is
	// counted, and contracts_loaded is 0.
	Disabled bool
}

// Guard enforces a set of contracts. It is safe for concurrent use.
type Guard struct {
	opts  Options
	env   *expr.Env
	log   *slog.Logger
	set   atomic.Pointer[contractSet]
	stats counters
	typed typedRegistry

	reloading sync.Mutex // one Reload at a time
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
}

// New compiles every contract of opts. Any problem in any contract is an
// error, a [*LoadError] per problem joined with errors.Join: a guard never
// starts half-loaded.
func New(opts Options) (*Guard, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	env, err := expr.NewEnv(expr.Config{
		CostLimit:        opts.CELCostLimit,
		MaxEstimatedCost: opts.CELMaxEstimatedCost,
		MaxBodyBytes:     opts.MaxBodyBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("contractguard: %w", err)
	}
	g := &Guard{opts: opts, env: env, log: opts.Logger}
	if opts.Disabled {
		g.set.Store(newSet(nil))
		g.log.Info("contractguard: disabled; requests pass through unchecked")
		return g, nil
	}
	cs, err := loadContracts(&g.opts, env)
	if err != nil {
		return nil, err
	}
	g.set.Store(newSet(cs))
	g.log.Info("contractguard: started",
		slog.Int("contracts", len(cs)),
		slog.String("contracts_dir", opts.ContractsDir),
		slog.Bool("vulnerability_scan", opts.VulnerabilityScan),
		slog.Bool("require_contract", opts.RequireContract),
		slog.Bool("metrics", opts.Metrics),
		slog.Int64("max_body_bytes", opts.MaxBodyBytes),
		slog.Int("max_depth", opts.MaxDepth))
	return g, nil
}

// Reload reads the contract sources again (Options.ContractsDir or
// ContractsFS, and Options.Contracts) and compiles them. When every
// contract compiles, the new set replaces the old one at once: a request
// is checked entirely against the set in force when it arrived. When any
// does not, the old set stays in force, and the error, as [New] would
// return it, is logged and returned. Typed contracts are not affected.
// Reload is safe to call concurrently with requests and with itself.
func (g *Guard) Reload() error {
	if g.opts.Disabled {
		return nil
	}
	g.reloading.Lock()
	defer g.reloading.Unlock()
	cs, err := loadContracts(&g.opts, g.env)
	if n := g.set.Load().loaded; err == nil && len(cs) == 0 && n > 0 {
		// A folder emptied, or caught between a delete and a copy, would
		// switch every check off: fail closed instead.
		err = &LoadError{File: cmp.Or(g.opts.ContractsDir, "Options.ContractsFS"), Err: fmt.Errorf("no contracts found; the %d in force stay (a reload never drops them all: restart to run without contracts)", n)}
	}
	if err != nil {
		g.log.Error("contractguard: reload failed; the previous contracts stay in force", slog.Any("error", err))
		return err
	}
	g.set.Store(newSet(cs))
	g.log.Info("contractguard: contracts reloaded", slog.Int("contracts", len(cs)))
	return nil
}

func (o *Options) check() error {
	var errs []error
	for _, f := range []struct {
		on   bool
		name string
	}{
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
	if o.CELMaxEstimatedCost == 0 {
		o.CELMaxEstimatedCost = DefaultCELMaxEstimatedCost
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OnReject == nil {
		o.OnReject = writeViolation
	}
}

// newRequest is a request as invariants will see it, with its own copy of
// segs: the one allocation of a request the guard checks.
func newRequest(method string, pattern route.Pattern, segs []string) *request {
	q := &request{method: method, pattern: pattern}
	q.segs = append(q.segBuf[:0], segs...)
	return q
}

func newSet(cs []*compiled) *contractSet {
	s := &contractSet{}
	for _, c := range cs {
		e := &routeEntry{contracts: []*compiled{c}, pattern: c.pattern}
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
	set    *contractSet // the contracts in force when the request reached the guard
	raw    []byte
	doc    *jsonbody.Doc // the parsed body; nil until parsed
	done   []*compiled   // contracts already enforced on this request
	values []boundValue  // the typed values decoded for them

	scanned    []*scan.Skip // the opt-outs the body was scanned with (nil: none)
	scannedBuf [2]*scan.Skip

	// The context and body the guard passes on, here so that passing a
	// request costs no allocations of their own.
	ctx     stateContext
	body    bodyReader
	doneBuf [2]*compiled

	user    any
	hasUser bool
}

// boundValue is the decoded request value of a typed contract: a pointer
// to a value of its type.
type boundValue struct {
	c *compiled
	v any
}

// stateContext is a request's context with its state under stateKey: a
// context.WithValue that lives inside the state.
type stateContext struct {
	context.Context
	st *state
}

func (c *stateContext) Value(key any) any {
	if _, ok := key.(stateKey); ok {
		return c.st
	}
	return c.Context.Value(key)
}

// bodyReader is the body a passed request carries: the checked bytes.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(stateKey{}).(*state)
	return st
}

// Body returns the body of a request that passed a guard, as the guard
// decoded it: map[string]any, []any, string, json.Number, bool or nil. It
// is built on the first call, from the parse the guard already made, and
// its strings share the body's memory. It reports false when no guard
// parsed the body (no contract matched, or the body was not JSON on a
// contract without a schema).
func Body(r *http.Request) (any, bool) {
	if st := stateOf(r); st != nil && st.doc != nil {
		return st.doc.Any(), true
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
//
// When next is a *http.ServeMux or a chi router, Middleware also asks it
// which handler will serve the request: if it is a typed handler of this
// guard ([Handle], [Post]…), its contract is enforced here together with
// the route's file contract, in the specified order, and the route counts
// as covered for RequireContract.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	if g.opts.Disabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r2, ok := g.enforce(w, r, g.routedContract(r, next), true); ok {
			next.ServeHTTP(w, r2)
		}
	})
}

// enforce runs on r every contract that applies and has not run yet: the
// contracts of the route r matches and extra, a typed contract. It writes
// the rejection and reports false, or returns the request to pass on (r
// itself when nothing ran).
func (g *Guard) enforce(w http.ResponseWriter, r *http.Request, extra routed, requireContract bool) (*http.Request, bool) {
	r2, v := g.admit(r, extra, requireContract)
	if v != nil {
		g.opts.OnReject(w, r, v)
		return nil, false
	}
	return r2, true
}

// CheckRequest runs r through the guard as Middleware would, without a
// handler: it reads r.Body, and returns the violation, or nil when r would
// reach the handler. Headers, the query and the Content-Type count, as
// they do for Middleware. It counts in the metrics like a request.
func (g *Guard) CheckRequest(r *http.Request) *Violation {
	if g.opts.Disabled {
		return nil
	}
	_, v := g.admit(r, routed{}, true)
	return v
}

// admit decides: it returns the request to pass on, or the violation. It
// records the metrics and logs rejections at debug level.
func (g *Guard) admit(r *http.Request, extra routed, requireContract bool) (*http.Request, *Violation) {
	method := route.UpperMethod(r.Method)
	set := g.set.Load()
	var segBuf [16]string
	e, segs, matched := set.tree.Match(method, r.URL.EscapedPath(), segBuf[:0])
	if !matched && extra.c == nil && !(requireContract && g.opts.RequireContract) {
		// Not the guard's: no context lookup, no clock read, no allocation.
		// (On a later pass of a request the guard checked, a reload may have
		// taken its pattern away; the first pass enforced it.)
		return r, nil
	}
	prev := stateOf(r)
	if prev != nil && prev.guard != g {
		prev = nil // another guard's
	}
	if prev != nil && prev.set != set {
		// A later pass (typed handler after Middleware) uses the set of the
		// first, reload or not.
		set = prev.set
		e, segs, matched = set.tree.Match(method, r.URL.EscapedPath(), segBuf[:0])
	}
	start := time.Now()
	reject := func(v *Violation) (*http.Request, *Violation) {
		g.stats.record(start, true, prev != nil)
		if g.log.Enabled(r.Context(), slog.LevelDebug) {
			g.logReject(r, method, e, extra.c, v)
		}
		return nil, v
	}
	var todoBuf [4]*compiled
	todo := todoBuf[:0]
	if matched {
		todo = pending(prev, e.contracts, todo)
	}
	if extra.c != nil {
		todo = pending(prev, []*compiled{extra.c}, todo)
	}
	if len(todo) == 0 {
		if !matched && extra.c == nil && prev == nil && requireContract && g.opts.RequireContract {
			return reject(noContract(method, r.URL.EscapedPath()))
		}
		return r, nil
	}
	isJSON, badType := mediaType(r.Header)
	for _, c := range todo {
		if c.schema != nil {
			if badType != "" {
				return reject(newViolation(CodeUnsupportedMediaType, Detail{Message: badType}))
			}
			break
		}
	}
	var in *request
	if matched {
		in = newRequest(method, e.pattern, segs)
	} else { // a typed route the guard has no pattern for
		in = newRequest(method, extra.pattern, route.Segments(r.URL.EscapedPath(), segBuf[:0]))
	}
	in.rawQuery, in.header, in.r = r.URL.RawQuery, r.Header, r
	st := prev
	if st == nil {
		raw, v := readBody(r, g.opts.MaxBodyBytes)
		if v != nil {
			return reject(v)
		}
		st = &in.own
		st.guard, st.set, st.raw = g, set, raw
	}
	in.state = st
	if v := g.run(todo, in, isJSON); v != nil {
		return reject(v)
	}
	g.stats.record(start, false, prev != nil)
	// A fresh request carrying the checked bytes, also when an earlier pass
	// of this guard replaced the body: something between may have read it.
	if prev == nil {
		return st.attach(r), nil
	}
	b := new(bodyReader)
	b.Reset(st.raw)
	r2 := r.WithContext(r.Context())
	r2.Body, r2.ContentLength = b, int64(len(st.raw))
	return r2, nil
}

// parse reads the body as JSON, once; an empty body is null.
func (st *state) parse(maxDepth int) *Violation {
	if st.doc != nil {
		return nil
	}
	if len(st.raw) == 0 {
		st.doc = jsonbody.NullDoc()
		return nil
	}
	d, err := jsonbody.Parse(st.raw, maxDepth)
	if err != nil {
		return malformed(err)
	}
	st.doc = d
	return nil
}

// attach returns r carrying st in its context and the checked bytes as
// its body.
func (st *state) attach(r *http.Request) *http.Request {
	st.ctx = stateContext{r.Context(), st}
	st.body.Reset(st.raw)
	r2 := r.WithContext(&st.ctx)
	r2.Body, r2.ContentLength = &st.body, int64(len(st.raw))
	return r2
}

// pending appends to todo the contracts of cs that have not run on the
// request.
func pending(st *state, cs []*compiled, todo []*compiled) []*compiled {
	for _, c := range cs {
		if st == nil || !slices.Contains(st.done, c) {
			todo = append(todo, c)
		}
	}
	return todo
}

func (g *Guard) logReject(r *http.Request, method string, e *routeEntry, typed *compiled, v *Violation) {
	paths := make([]string, len(v.Details))
	for i, d := range v.Details {
		paths[i] = d.Path
	}
	g.log.LogAttrs(r.Context(), slog.LevelDebug, "contractguard: request rejected",
		slog.String("method", method), slog.String("route", routeOf(r, e, typed)),
		slog.String("code", v.Code), slog.Any("paths", paths))
}

// Check runs one request through the guard as Middleware would, with body
// as an application/json body, and returns the violation or nil. path is
// the request path, still percent-encoded; a query string after "?" is
// read as request.query. It counts in the metrics like a request.
func (g *Guard) Check(method, path string, body []byte) *Violation {
	if g.opts.Disabled {
		return nil
	}
	method = route.UpperMethod(method)
	rawPath, rawQuery, _ := strings.Cut(path, "?")
	set := g.set.Load()
	var segBuf [16]string
	e, segs, ok := set.tree.Match(method, rawPath, segBuf[:0])
	if !ok {
		if g.opts.RequireContract {
			v := noContract(method, rawPath)
			g.stats.record(time.Now(), true, false)
			return v
		}
		return nil
	}
	start := time.Now()
	if int64(len(body)) > g.opts.MaxBodyBytes {
		g.stats.record(start, true, false)
		return tooLarge(g.opts.MaxBodyBytes)
	}
	in := newRequest(method, e.pattern, segs)
	in.rawQuery = rawQuery
	in.state = &in.own
	in.own.guard, in.own.set, in.own.raw = g, set, body
	v := g.run(e.contracts, in, true)
	g.stats.record(start, v != nil, false)
	return v
}

// malformed is the violation of a body jsonbody.Parse refused.
func malformed(err error) *Violation {
	var pe *jsonbody.Error
	if errors.As(err, &pe) {
		return newViolation(CodeMalformedJSON, Detail{Path: pe.Path, Message: pe.Message})
	}
	return newViolation(CodeMalformedJSON, Detail{Message: "invalid JSON"})
}

// scanRequest runs the vulnerability scan for the contracts of cs that
// have not had it on this request: the body with each one's opt-outs
// (a value is skipped only when every contract skips it), the query and
// the path parameters once.
func scanRequest(cs []*compiled, in *request) *Violation {
	st := in.state
	in.details = in.details[:0]
	// A contract without opt-outs scans all that the others would: it alone
	// is run, and nothing is scanned after it, on this pass or the next.
	if i := slices.IndexFunc(cs, func(c *compiled) bool { return c.scanSkip == nil }); i >= 0 {
		cs = cs[i : i+1]
	}
	for _, c := range cs {
		skip := c.scanSkip
		if skip != nil && skip.Off || slices.Contains(st.scanned, skip) || slices.Contains(st.scanned, nil) {
			continue
		}
		first := len(st.scanned) == 0
		if st.scanned == nil {
			st.scanned = st.scannedBuf[:0]
		}
		st.scanned = append(st.scanned, skip)
		switch {
		case st.doc != nil:
			scan.Doc(st.doc, skip, in)
		case utf8.Valid(st.raw): // a body the guard does not parse: one string
			if k := scan.Bytes(st.raw); k != scan.None {
				in.Add("", k.Message())
			}
		}
		if first {
			if in.rawQuery != "" {
				scan.Query(in.queryValues(), in)
			}
			in.scanParams()
		}
	}
	if len(in.details) == 0 {
		return nil
	}
	// One detail per path, the first reported: a body may hold thousands
	// of findings, and contracts with different opt-outs scan it more than
	// once.
	slices.SortStableFunc(in.details, func(a, b Detail) int { return strings.Compare(a.Path, b.Path) })
	in.details = slices.CompactFunc(in.details, func(a, b Detail) bool { return a.Path == b.Path })
	return newViolation(CodeVulnerabilityDetected, in.details...)
}

// scanParams scans the path parameters: the router's, or the pattern's
// without building Params' map.
func (q *request) scanParams() {
	if q.routerParams() {
		for name, v := range routerParams(q.r) {
			scan.Param(name, v, q)
		}
		return
	}
	for name, v := range q.pattern.EachParam(q.segs) {
		scan.Param(name, v, q)
	}
}

// run parses the body (unless an earlier pass did) and enforces cs on
// it: the vulnerability scan (if on), every schema, decoding the values
// of typed contracts, then every invariant and rule, in the order of cs. It is the one code path of
// Middleware, typed handlers and Check. On success the contracts are marked
// done in the request's state.
func (g *Guard) run(cs []*compiled, in *request, isJSON bool) *Violation {
	st := in.state
	hasSchema := false
	for _, c := range cs {
		hasSchema = hasSchema || c.schema != nil
	}
	if st.doc == nil && (len(st.raw) == 0 || isJSON || hasSchema) {
		if v := st.parse(g.opts.MaxDepth); v != nil {
			return v
		}
	}

	if g.opts.VulnerabilityScan {
		if v := scanRequest(cs, in); v != nil {
			return v
		}
	}

	in.details = in.details[:0]
	var values []boundValue
	for _, c := range cs {
		if c.schema != nil && !c.schema.Validate(st.doc, in) {
			continue
		}
		if c.typed != nil {
			v := reflect.New(c.typed.t)
			if bind.Into(v.Elem(), st.doc.Root(), in) {
				values = append(values, boundValue{c, v.Interface()})
			}
		}
	}
	if details := in.details; len(details) > 0 {
		slices.SortStableFunc(details, func(a, b Detail) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return strings.Compare(a.Message, b.Message)
		})
		return newViolation(CodeSchemaInvalid, details...)
	}

	act := &in.act
	*act = expr.Activation{Body: st.doc, Method: in.method, Src: in}
	for _, c := range cs {
		if len(c.invariants) == 0 && (c.typed == nil || c.typed.rules == nil) {
			continue
		}
		act.Shape = c.shape
		for i, inv := range c.invariants {
			ok, err := inv.prg.Eval(act)
			if !ok {
				if err != nil {
					g.evalFailed(c.name()+" invariant "+strconv.Itoa(i), err)
				}
				in.details = append(in.details, Detail{Message: inv.message})
			}
		}
		if c.typed != nil && c.typed.rules != nil {
			v, _ := boundOf(values, c)
			r := ruleRun{act: act, guard: g}
			c.typed.rules.walk(&r, reflect.ValueOf(v).Elem())
			in.details = append(in.details, r.details...)
		}
	}
	*act = expr.Activation{}
	if details := in.details; len(details) > 0 {
		return newViolation(CodeInvariantViolated, details...)
	}
	if st.done == nil {
		st.done = st.doneBuf[:0]
	}
	st.done = append(st.done, cs...)
	st.values = append(st.values, values...)
	return nil
}

func boundOf(values []boundValue, c *compiled) (any, bool) {
	for _, b := range values {
		if b.c == c {
			return b.v, true
		}
	}
	return nil, false
}

// request is one request as invariants see it; it supplies the costly
// parts of request and context.user on demand.
type request struct {
	method   string
	rawQuery string
	query    url.Values // rawQuery parsed, by queryValues
	header   http.Header
	r        *http.Request // nil for Check
	segs     []string
	pattern  route.Pattern // of the matched file contract; nil for a typed route alone
	state    *state        // own, or an earlier pass's
	own      state
	segBuf   [8]string

	// What one run works with, here so that it costs no allocation of its own.
	details []Detail
	act     expr.Activation
}

// Add collects a failure of the schema, of decoding or of the scan
// (msg.Reporter).
func (q *request) Add(path, message string) {
	q.details = append(q.details, Detail{Path: path, Message: message})
}

// evalFailed logs, at debug level, a rule that failed to evaluate (and so
// counted as false). The error holds no value of the request
// (expr.Program.Eval leaves them out), as a log never does.
func (g *Guard) evalFailed(where string, err error) {
	if g.log.Enabled(context.Background(), slog.LevelDebug) {
		g.log.Debug("contractguard: rule failed to evaluate; counted as false",
			slog.String("rule", where), slog.String("error", err.Error()))
	}
}

// Params are the path parameters: by the matched contract's pattern, or,
// on a typed route the guard has no pattern for, as chi or ServeMux
// extracted them.
func (q *request) Params() map[string]string {
	if q.routerParams() {
		return routerParams(q.r)
	}
	return q.pattern.Params(q.segs)
}

// routerParams reports whether the path parameters are the router's: a
// typed route the guard has no pattern for.
func (q *request) routerParams() bool { return q.pattern == nil && q.r != nil }

func (q *request) Path() string { return route.Join(q.segs) }

func (q *request) Query() map[string]string { return firstValues(q.queryValues()) }

// queryValues is the query as r.URL.Query() reads it (bad pairs dropped),
// parsed once for the scan and the rules.
func (q *request) queryValues() url.Values {
	if q.query == nil {
		q.query, _ = url.ParseQuery(q.rawQuery)
	}
	return q.query
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

// mediaType reads a request's Content-Type once. isJSON says whether the
// body is read as JSON on a contract without a schema: no Content-Type, or
// a JSON one. bad is why a contract with a schema refuses it (415): ""
// for no Content-Type, application/json or application/*+json in utf-8.
func mediaType(h http.Header) (isJSON bool, bad string) {
	vals := h["Content-Type"]
	if len(vals) == 0 || len(vals) == 1 && vals[0] == "application/json" {
		return true, ""
	}
	mt, params, err := mime.ParseMediaType(vals[0])
	isJSON = err == nil && isJSONType(mt)
	switch {
	case len(vals) > 1:
		bad = "more than one Content-Type header"
	case !isJSON:
		bad = "Content-Type must be application/json"
	default:
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			bad = "charset must be utf-8"
		}
	}
	return isJSON, bad
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
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

func noContract(method, rawPath string) *Violation {
	return newViolation(CodeNoContract, Detail{Message: "no contract for " + method + " " + route.Clean(nil, rawPath)})
}

func tooLarge(limit int64) *Violation {
	return newViolation(CodePayloadTooLarge, Detail{Message: fmt.Sprintf("body must be at most %d bytes", limit)})
}
