package contractguard

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/learn"
	"github.com/contractguard/contractguard/internal/route"
)

// Guard enforces a set of contracts. It is safe for concurrent use.
type Guard struct {
	opts    Options
	env     *expr.Env
	log     *slog.Logger
	set     atomic.Pointer[contractSet]
	stats   counters
	typed   typedRegistry
	licence *licenceState  // nil: no licence key in force
	learned learnReport    // what learning mode saw
	learner *learn.Learner // learns contracts from unmatched traffic; nil: off
	// learning is why a contract may not be in mode learn (the licence
	// error, one line), decided once by New: nil when it may.
	learning error

	reloading sync.Mutex // one Reload at a time
}

// New compiles every contract of opts. Any problem in any contract is an
// error, a [*LoadError] per problem joined with errors.Join: a guard never
// starts half-loaded. The contracts are compiled on up to GOMAXPROCS
// goroutines, all finished when New returns; the errors and the set do not
// depend on how many. An fs.FS in ContractsFS is read from one goroutine at
// a time.
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
	if !opts.Disabled { // a guard that is off runs no feature: learns nothing
		g.learner = newLearner(&opts)
	}
	if !opts.Disabled {
		if err := g.checkLicence(); err != nil {
			return nil, err
		}
	}
	if opts.Disabled {
		g.set.Store(&contractSet{})
		g.log.Info("contractguard: disabled; requests pass through unchecked")
		return g, nil
	}
	set, err := g.loadContracts()
	if err != nil {
		return nil, err
	}
	g.set.Store(set)
	g.log.Info("contractguard: started",
		slog.Int("contracts", set.loaded()),
		slog.String("contracts_dir", opts.ContractsDir),
		slog.Bool("vulnerability_scan", opts.VulnerabilityScan),
		slog.Bool("require_contract", opts.RequireContract),
		slog.Bool("metrics", opts.Metrics),
		slog.Int64("max_body_bytes", opts.MaxBodyBytes),
		slog.Int("max_depth", opts.MaxDepth))
	if set.fromFolder(&opts) == 0 && (opts.ContractsDir != "" || opts.ContractsFS != nil) {
		// A folder path that is wrong but exists (a mount not yet filled,
		// the parent of the right one) would otherwise run unguarded with
		// only the line above to say so.
		effect := "every request passes unchecked"
		switch {
		case opts.RequireContract && opts.LearningMode:
			effect = "learning mode passes every request, reported as NO_CONTRACT,"
		case opts.RequireContract:
			effect = "RequireContract rejects every request"
		}
		g.log.Warn("contractguard: no contracts found in " + cmp.Or(opts.ContractsDir, "Options.ContractsFS") + ": " + effect +
			" but those of contracts in code or typed handlers, until a reload finds some")
	}
	return g, nil
}

// Reload reads the contract sources again (Options.ContractsDir or
// ContractsFS, and Options.Contracts) and compiles them. When every
// contract compiles, the new set replaces the old one at once: a request
// is checked entirely against the set in force when it arrived. When any
// does not, the old set stays in force, and the error, as [New] would
// return it, is logged and returned. Typed contracts are not affected.
// Reload is safe to call concurrently with requests and with itself.
//
// A ContractsDir that changes while it is read (a Kubernetes ConfigMap's
// update swapping ..data, a file renamed into the folder) is read again,
// as by New, so that a set is never part old, part new; one whose files
// change three times running fails to load. Other files coming and going
// in the folder do not count when every file the load read still reads
// the same. A ContractsFS is read once: an fs.FS says nothing of
// its changes.
func (g *Guard) Reload() error {
	if g.opts.Disabled {
		return nil
	}
	g.reloading.Lock()
	defer g.reloading.Unlock()
	set, err := g.loadContracts()
	if n := g.set.Load(); err == nil && set.fromFolder(&g.opts) == 0 && n.fromFolder(&g.opts) > 0 {
		// A folder emptied, or caught between a delete and a copy, would
		// switch every check of its contracts off: fail closed instead.
		err = &LoadError{File: cmp.Or(g.opts.ContractsDir, "Options.ContractsFS"), Err: fmt.Errorf("no contracts found; the %d in force stay (a reload never drops them all: restart to run without contracts)", n.loaded())}
	}
	if err != nil {
		g.stats.reloadFailures.Add(1)
		g.log.Error("contractguard: reload failed; the previous contracts stay in force", slog.Any("error", err))
		return err
	}
	g.stats.reloads.Add(1)
	g.set.Store(set)
	g.log.Info("contractguard: contracts reloaded", slog.Int("contracts", set.loaded()))
	return nil
}

// Contracts lists the contracts the guard enforces: those of files and
// code, in load order, then the typed contracts of its handlers, in the
// order they were built.
func (g *Guard) Contracts() []ContractInfo {
	var out []ContractInfo
	for _, c := range g.set.Load().list {
		out = append(out, c.info())
	}
	if !g.opts.Disabled {
		for _, c := range g.typedContracts() {
			out = append(out, c.info())
		}
	}
	return out
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
// as covered for RequireContract. (A route whose pattern has a wildcard,
// chi's * or ServeMux's {name...}, has its parameters only once the
// router routes: its typed contract is enforced by its handler, before
// the handler's function runs; so is that of a route whose parameters a chi
// path middleware after Middleware, StripSlashes, URLFormat or
// CleanPath, would change: /items/a.json is /items/{id} with id "a" behind
// URLFormat.)
func (g *Guard) Middleware(next http.Handler) http.Handler {
	if g.opts.Disabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		typed := g.routedContract(r, next)
		r2, ok := g.enforce(w, r, typed, true)
		switch {
		case !ok:
		case g.learner != nil && typed.c == nil && g.stateIn(r) == nil && unmatched(r, r2) && g.learner.Sample():
			// No contract (a typed handler's route has one, even where
			// its handler checks it, typed.later), on no pass of this
			// guard (another guard's in front may have checked it):
			// sampled for learning (learn.go).
			g.learnFrom(w, r2, next)
		default:
			next.ServeHTTP(w, r2)
		}
	})
}

// CheckRequest runs r through the guard as Middleware would, without a
// handler, and returns the violation, or nil when r would reach the
// handler. Headers, the query and the Content-Type count, as they do for
// Middleware. It counts in the metrics like a request. Like
// httputil.DumpRequest, it consumes r.Body when it reads it and then
// replaces it with one that yields the same bytes: a handler called with
// r after a nil gets the bytes that were checked. r's context is not
// changed, so what the guard hands a handler through it is not there:
// Body, User, and the input sink protection checks sinks against (a sink
// called with r.Context() after CheckRequest checks nothing). A handler
// that needs them runs behind Middleware.
func (g *Guard) CheckRequest(r *http.Request) *Violation {
	if g.opts.Disabled {
		return nil
	}
	r2, v := g.admit(r, routed{}, true)
	if v == nil && r2 != r {
		r.Body = r2.Body // the checked bytes, as they came
	}
	return v
}

// Check runs one request through the guard as Middleware would, with body
// as an application/json body, and returns the violation or nil. path is
// the request path, still percent-encoded; a query string after "?" is
// read as request.query. It counts in the metrics like a request.
func (g *Guard) Check(method, path string, body []byte) *Violation {
	if g.opts.Disabled {
		return nil
	}
	rawPath, rawQuery, _ := strings.Cut(path, "?")
	in := input{method: route.UpperMethod(method), rawPath: rawPath, reencoded: reencodedPath(rawPath), rawQuery: rawQuery, body: body, require: true}
	return g.decide(&in).v
}

// enforce runs r through the guard with typed, the typed contract of the
// handler it is routed to, if any. It writes the rejection and reports
// false, or returns the request to pass on.
func (g *Guard) enforce(w http.ResponseWriter, r *http.Request, typed routed, require bool) (*http.Request, bool) {
	r2, v := g.admit(r, typed, require)
	if v != nil {
		g.opts.OnReject(w, r, v)
		return nil, false
	}
	return r2, true
}

// admit decides on r: it returns the request to pass on (r itself when
// nothing ran), or the violation.
func (g *Guard) admit(r *http.Request, typed routed, require bool) (*http.Request, *Violation) {
	sent, reencoded := sentPaths(r.URL)
	in := input{
		method: route.UpperMethod(r.Method), rawPath: sent, reencoded: reencoded, rawQuery: r.URL.RawQuery,
		header: r.Header, r: r, typed: typed, require: require,
	}
	switch d := g.decide(&in); {
	case d.v != nil:
		return nil, d.v
	case d.st != nil:
		return d.st.pass(r, d.first), nil
	}
	return r, nil
}

// input is one request as the guard takes it: from an *http.Request
// (Middleware, CheckRequest, typed handlers), or from Check's arguments.
type input struct {
	method  string // upper case
	rawPath string // percent-encoded, without the query
	// reencoded is the path as Go encodes it afresh (url.URL.EscapedPath),
	// when that is not rawPath: what a Go reverse proxy or client
	// forwarding r.URL sends on, whose readings apply too; "" when the same.
	// (Or, when r.URL.RawPath is not r.URL.Path encoded, RawPath, which chi
	// routes on: see sentPaths.)
	reencoded string
	rawQuery  string
	header    http.Header   // nil for Check: the body is JSON
	r         *http.Request // nil for Check
	body      []byte        // Check's body; otherwise read from r.Body
	typed     routed        // the typed contract of the handler r is routed to
	require   bool          // Options.RequireContract applies on this pass
}

// decide is the spine of the guard: every request, from any front door,
// goes through these steps, in this order. It returns the request's state
// (nil when no contract ran: pass it on as it is), whether this pass is
// the first to check the request, or the violation (see decision). It
// records the metrics and logs rejections at debug level.
func (g *Guard) decide(in *input) (d decision) {
	// 1. Find the contracts of the request (contract.go, router.go).
	set := g.set.Load()
	var segBuf [16]string
	e, segs, matched := set.match(in.method, in.rawPath, in.reencoded, segBuf[:0])
	if !matched && in.typed.c == nil && !g.requires(in) {
		// Not the guard's: no context lookup, no clock read, no allocation.
		// (On a later pass of a request the guard checked, a reload may have
		// taken its pattern away; the first pass enforced it.)
		g.emitUnmatched(in)
		return decision{}
	}
	prev := g.earlierPass(in)
	if prev != nil && prev.set != set {
		// A later pass uses the set of the first, reload or not.
		set = prev.set
		e, segs, matched = set.match(in.method, in.rawPath, in.reencoded, segBuf[:0])
	}
	// A path routers read in more than one way (an encoded slash, ";", a
	// dot segment), or that a Go proxy forwards re-encoded, gets the
	// contracts of every reading that matches, each checked with the path
	// parameters of the readings that matched it.
	var otherBuf [2]route.Hit[*routeEntry]
	others := set.hits(in.method, in.rawPath, in.reencoded, e, segs, matched, otherBuf[:0])
	start := monotonic()
	var todoBuf [4]*contract
	todo := pending(e, others, in.typed, prev, todoBuf[:0])
	if len(todo) == 0 {
		if matched || in.typed.c != nil || prev != nil || !g.requires(in) {
			return decision{} // done by an earlier pass
		}
		v := noContract(in.method, in.rawPath)
		if g.opts.LearningMode {
			g.observe(in, nil, v)
			vd := decision{would: v}
			if in.r != nil { // for a later pass (a typed handler): the request is counted
				vd.st, vd.first = g.earlyState(set), true // done: none, so sampled for learning (unmatched)
			}
			return g.decided(in, e, prev, start, vd)
		}
		return g.decided(in, e, prev, start, decision{v: v})
	}
	// 2. The media type and the body (body.go). Before any contract runs,
	// contracts that all learn report a violation instead (learn.go).
	// The scan reads a JSON body too, as UTF-8: one of another charset,
	// which a host may transcode (express.json() decodes UTF-7, where
	// "+ACc-" is a quote), is refused as on a contract that reads it; so
	// is one whose parameters mime refuses (Express reads the charset of
	// "application/json; charset=utf-7; foo").
	isJSON, badType := mediaType(in.header)
	if badType != "" && (anyReadsBody(todo) || g.opts.VulnerabilityScan && namesJSON(in.header)) {
		return g.decided(in, e, prev, start, g.early(in, e, segs, others, prev, set, todo, nil, nil, false, newViolation(CodeUnsupportedMediaType, Detail{Message: badType})))
	}
	q := g.newRequest(in, e, segs, others, prev, segBuf[:0])
	defer func() { d.v = q.release(d.v, d.st) }()
	reads := prev == nil || prev.early // no earlier pass read the body
	if reads {
		raw, plain, v := readBody(in, g.opts.MaxBodyBytes)
		if v != nil {
			return g.decided(in, e, prev, start, g.early(in, e, segs, others, prev, set, todo, raw, plain, true, v))
		}
		q.state.guard, q.state.set, q.state.raw, q.state.plain, q.state.early = g, set, raw, plain, false
	}
	// 3. Every check of every contract: those that enforce together, then
	// each that learns alone.
	var learnBuf [4]*contract
	enforce, learn := byMode(todo, learnBuf[:0])
	if len(enforce) > 0 {
		if v := g.run(enforce, q, isJSON); v != nil {
			return g.decided(in, e, prev, start, decision{v: v})
		}
	}
	vd := decision{first: prev == nil}
	if in.r != nil { // Check hands no request on
		vd.st = q.state
	}
	for _, c := range learn {
		one := [1]*contract{c}
		if v := g.run(one[:], q, isJSON); v != nil {
			g.observe(in, c, v)
			q.state.markDone(one[:]) // reported once, not again on a later pass
			if c == in.typed.c && in.r != nil {
				// The typed handler this request goes to cannot run
				// without its T: a body that is none is refused, learning
				// or not, and counted as refused.
				if dv := q.state.bindFor(c, g.opts.MaxDepth); dv != nil {
					return g.decided(in, e, prev, start, decision{v: dv})
				}
			}
			if vd.would == nil {
				vd.would = v
			}
		}
	}
	// 4. The request passes: for sink protection, its input (sinks.go).
	if g.opts.SinkProtection && reads && in.r != nil { // Check hands no request on
		g.recordInput(in, q, e)
	}
	return g.decided(in, e, prev, start, vd)
}

// decision is what decide decided on a request that a contract ran on (or
// that was refused for having none).
type decision struct {
	st    *state     // the state to pass on; nil: the request as it came
	first bool       // st is this pass's own
	v     *Violation // the rejection; nil: the request passes
	would *Violation // learning mode: the first rejection a contract would have sent
}

// early is a violation found before any contract ran (the body's size or
// media type): sent, unless every contract of todo learns and a typed
// handler the request goes to can still have its T (the body was not
// refused as it was read, and, read here when its media type was the
// refusal, is a T; else its refusal is sent); then it is
// reported for each, the part of the body read (raw, and decoded as far
// as it went, plain; read says whether the body was read) is given back,
// and the request passes as it came. On its first pass it passes with an
// early state (earlyState): what a later pass of this guard needs to
// count the request once and not report these contracts again, and,
// on the first pass that refuses the body so, its input, for sink
// protection (that a contract learns does not turn the sinks' checks
// off). e, segs and others are the path's matches, as decide found them;
// set the contracts in force.
func (g *Guard) early(in *input, e *routeEntry, segs []string, others []route.Hit[*routeEntry], prev *state, set *contractSet, todo []*contract, raw, plain []byte, read bool, v *Violation) decision {
	if !learnsOnly(todo) {
		return decision{v: v}
	}
	g.observeAll(in, todo, v)
	if in.r != nil && slices.Contains(todo, in.typed.c) {
		if read {
			// A body that could not be read (too large, cut off, an encoding
			// that does not decode) is no T either: the typed handler this
			// request goes to cannot run, learning or not.
			return decision{v: v}
		}
		// Its media type was refused, the body not read: the typed handler
		// decodes it all the same, and refuses a body that is no T. Read it
		// here, so that such a request counts as refused (it counted as
		// would-block, as though it reached the handler); one that is a T
		// is given back below, for the handler to decode.
		var rv *Violation
		raw, plain, rv = readBody(in, g.opts.MaxBodyBytes)
		read = true
		if rv == nil {
			rv = (&state{guard: g, raw: raw, plain: plain}).bindFor(in.typed.c, g.opts.MaxDepth)
		}
		if rv != nil {
			return decision{v: rv}
		}
	}
	vd := decision{would: v}
	st := prev
	if st == nil && in.r != nil { // Check hands no request on
		st = g.earlyState(set)
		vd.st, vd.first = st, true
	}
	if st != nil {
		st.markDone(todo)
		if st.early && st.taint == nil && g.opts.SinkProtection {
			st.taint = g.earlyInput(in, e, segs, others, raw, plain, read) // gives back what it reads
		}
	}
	if read {
		giveBack(in.r, raw)
	}
	return vd
}

// earlyState is the state a request passes on with when no contract ran
// on it in learning mode (Guard.early; or none matched, under
// RequireContract): what a later pass needs to count it once.
func (g *Guard) earlyState(set *contractSet) *state {
	return &state{guard: g, set: set, early: true}
}

// unmatched reports whether r2, what the guard passes on of r on its
// first pass, is r as it came, no contract having run on it: r itself,
// or, under RequireContract in learning mode, r with the early state of a
// request no contract matched (early, and no contract done).
func unmatched(r, r2 *http.Request) bool {
	if r2 == r {
		return true
	}
	st := stateOf(r2)
	return st != nil && st.early && len(st.done) == 0
}

// byMode splits cs into the contracts that enforce (in cs's own array)
// and those that learn (appended to learn).
func byMode(cs []*contract, learn []*contract) (enforce, learnt []*contract) {
	enforce = cs[:0]
	for _, c := range cs {
		if c.learn {
			learn = append(learn, c)
		} else {
			enforce = append(enforce, c)
		}
	}
	return enforce, learn
}

// requires reports whether a request that matches nothing is rejected.
func (g *Guard) requires(in *input) bool { return in.require && g.opts.RequireContract }

// decided records what decide decided (the metrics, the observers, a
// debug line for a rejection) and returns it. prev is the state of an
// earlier pass over the request (nil on its first); e the route entry
// matched.
func (g *Guard) decided(in *input, e *routeEntry, prev *state, start time.Duration, vd decision) decision {
	d := g.stats.record(start, vd, prev)
	switch {
	case vd.v != nil:
		g.emit(in, e, OutcomeRejected, vd.v.Code, d)
		g.logReject(in, e, vd.v)
		return decision{v: vd.v}
	case vd.would != nil:
		g.emit(in, e, OutcomeWouldBlock, vd.would.Code, d)
	default:
		g.emit(in, e, OutcomePassed, "", d)
	}
	return vd
}

// run enforces cs on a request, in the specified order: the body is
// parsed (unless an earlier pass did), scanned (when the scan is on),
// checked against every contract's schema and decoded into every Go type,
// and only then are the rules evaluated. On success the contracts are
// marked done in the request's state. It is the one code path of every
// contract, whatever it came from.
func (g *Guard) run(cs []*contract, q *request, isJSON bool) *Violation {
	st := q.state
	if v := st.parseFor(cs, isJSON, g.opts.MaxDepth, q.tape()); v != nil { // body.go
		return v
	}
	if g.opts.VulnerabilityScan {
		if v := scanRequest(cs, q); v != nil { // scan.go
			g.stats.countFindings(v, st)
			return v
		}
	}
	q.resetDetails()
	for _, c := range cs {
		c.checkBody(q) // check.go
	}
	if v := q.schemaViolation(); v != nil {
		return v
	}
	q.act = expr.Activation{Body: st.doc.Load(), Method: q.method, Src: q}
	for _, c := range cs {
		if len(q.views) == 0 {
			g.applyRules(c, q, st.valueOf(c)) // rules.go
		} else {
			g.applyRulesByView(c, q, st.valueOf(c))
		}
	}
	q.act = expr.Activation{}
	if v := q.ruleViolation(); v != nil {
		return v
	}
	st.markDone(cs)
	return nil
}

// anyReadsBody reports whether any of cs reads the body: by its schema,
// or by a rule.
func anyReadsBody(cs []*contract) bool {
	return slices.ContainsFunc(cs, func(c *contract) bool { return c.readsBody })
}

// logReject logs a rejection at debug level: method, route, code and the
// detail paths, never a value.
func (g *Guard) logReject(in *input, e *routeEntry, v *Violation) {
	ctx := contextOf(in.r)
	if !g.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	paths := make([]string, len(v.Details))
	for i, d := range v.Details {
		paths[i] = d.Path
	}
	g.log.LogAttrs(ctx, slog.LevelDebug, "contractguard: request rejected",
		slog.String("method", in.method), slog.String("route", routeOf(in.r, e, in.typed.c)),
		slog.String("code", v.Code), slog.Any("paths", paths))
}

// valueOf is the value the body was decoded into for c, as its rules
// walk it: invalid when c has no Go type.
func (st *state) valueOf(c *contract) reflect.Value {
	if p := st.boundOf(c); p != nil {
		return reflect.ValueOf(p).Elem()
	}
	return reflect.Value{}
}

// boundOf is the pointer to the value the body was decoded into for c
// (a *T as any): nil when c has no Go type or nothing was decoded.
func (st *state) boundOf(c *contract) any {
	if c.body == nil {
		return nil
	}
	for _, b := range st.values {
		if b.c == c {
			return b.v
		}
	}
	return nil
}
