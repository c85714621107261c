package contractguard

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/contractguard/contractguard/internal/expr"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/shape"
	"github.com/contractguard/contractguard/internal/taint"
)

// stateKey is the context key of a request's *state.
type stateKey struct{}

// state is what the guard knows of a request that passed it.
type state struct {
	guard  *Guard
	set    *contractSet // the contracts in force when the request reached the guard
	raw    []byte       // the body as it came: what the handler gets
	plain  []byte       // the body decoded (Content-Encoding): what is checked; raw when not encoded
	done   []*contract  // contracts already enforced on this request
	values []boundValue // the typed values decoded for them

	// doc is the parsed body; nil until parsed, or after a pass that
	// dropped it (dropped, see request.release): read it with parsed.
	// Atomic: a dropped doc is parsed again by whoever asks first, Body(r)
	// from any of the handler's goroutines included.
	doc atomic.Pointer[jsonbody.Doc]

	scanned    []*shape.Skip  // the opt-outs the body was scanned with (nil: none)
	scannedBuf [1]*shape.Skip // a second set of opt-outs (rare) allocates: the state stays in its size class
	flagged    []string       // the paths of the values the scan flagged, counted (counters.countFindings)

	// The request, context and body the guard passes on, here so that
	// passing a request costs no allocations of their own.
	req     http.Request
	ctx     stateContext
	body    bodyReader
	doneBuf [2]*contract
	valBuf  [1]boundValue

	user  any
	taint *taint.Request // the input, for sink protection; nil: off
	// userOnce: Options.User is called once, whoever asks first (User may
	// be called from a handler's goroutines). Here, beside the flags, in
	// what would be padding: the state stays in the 640-byte size class,
	// which holds 632 bytes of it (TestState_SizeClass).
	userOnce sync.Once

	// early: every contract that ran learns and refused the body before
	// any check (Guard.early); nothing was parsed, raw is nil, and the
	// request passed as it came. A later pass reads the body itself.
	early bool
	// wouldBlock: a pass counted the request as one a contract in mode
	// learn would have rejected (counters.record).
	wouldBlock bool
	// dropped: the first pass parsed a small body into its pooled
	// request's tape, which stays with the pool (request.release): the
	// doc is parsed again, from plain, when something after the pass
	// asks for it (parsed). Set before the request is passed on, never
	// after.
	dropped bool
}

// boundValue is the decoded request value of a typed contract: a pointer
// to a value of its type.
type boundValue struct {
	c *contract
	v any
}

// stateContext is a request's context with its state under stateKey: a
// context.WithValue that lives inside the state.
type stateContext struct {
	context.Context
	st *state
}

func (c *stateContext) Value(key any) any {
	switch key.(type) {
	case stateKey:
		return c.st
	case taint.ContextKey:
		if c.st.taint != nil {
			return c.st.taint
		}
	}
	return c.Context.Value(key)
}

// bodyReader is the body a passed request carries: the checked bytes.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// stateOf is the state of the last guard r passed (nil: none).
func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(stateKey{}).(*state)
	return st
}

// stateIn is the state of g's pass over r, also beneath another guard's
// (g's Middleware, then another guard's, then g's typed handler: read
// as the last, g's pass was done again, the request counted twice and a
// learning contract's would-be rejection reported twice); nil when g has
// not passed r. Each state's context is the one its pass was given.
//
// A pass over r is one over the request the guard passed on, which
// reaches a later pass with its header map, whatever the handlers
// between did to its context, URL or body (WithContext, StripPrefix,
// chi share the map): a request a handler made with its request's
// context (a batch endpoint dispatching its parts through the guarded
// mux) is a request of its own, checked as any, not a later pass of the
// one whose context it carries. A copy of the passed request with headers
// of its own (r.Clone, to set one) still carries the body the guard
// passed on, read or not, with its method and query: it is a later pass
// too, not a request counted and checked again (whose body something
// between may have read).
func (g *Guard) stateIn(r *http.Request) *state {
	for st := stateOf(r); st != nil; st, _ = st.ctx.Context.Value(stateKey{}).(*state) {
		if st.guard == g {
			if !sameHeader(st.req.Header, r.Header) && !st.copied(r) {
				return nil
			}
			return st
		}
	}
	return nil
}

// copied reports whether r is a copy of the request st passed on with
// headers of its own: its body is the one the guard passed on (the
// checked bytes; or, from an early pass, the request's body as it came,
// given back), its method, path and query string the same. A request
// passed on without a body (http.NoBody) has nothing to be known by: a
// copy of it is a request of its own. (A copy sent to another path,
// /users/2 from /users/1, is a request of its own: read as a later pass,
// its contract, done for /users/1, was not run for the other parameters.)
//
// The checked bytes' reader is known by &st.body, not by st.req.Body: the
// request passed on is st.req itself, whose Body a middleware may set (to
// bytes of its own, unchecked) before it clones it.
func (st *state) copied(r *http.Request) bool {
	body := io.ReadCloser(&st.body)
	if st.early {
		body = st.req.Body // only learning contracts ran: nothing enforced to skip
	}
	return body != nil && body != http.NoBody && r.Body == body && r.Method == st.req.Method && r.URL != nil && st.req.URL != nil &&
		r.URL.RawQuery == st.req.URL.RawQuery && r.URL.Path == st.req.URL.Path && r.URL.RawPath == st.req.URL.RawPath
}

// sameHeader reports whether a and b are one header map.
func sameHeader(a, b http.Header) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// contextOf is r's context; the background for Check, which has no r.
func contextOf(r *http.Request) context.Context {
	if r == nil {
		return context.Background()
	}
	return r.Context()
}

// Body returns the body of a request that passed a guard, as the guard
// decoded it: map[string]any, []any, string, json.Number, bool or nil. It
// is built on the first call, from the parse the guard already made (a
// small body's parse, which the guard does not keep past its checks, is
// made again from the checked bytes), and its strings share the body's
// memory. It reports false when no guard
// parsed the body (no contract matched, or the body was not JSON on a
// contract without a schema).
func Body(r *http.Request) (any, bool) {
	if st := stateOf(r); st != nil {
		if d := st.parsed(); d != nil {
			return d.Any(), true
		}
	}
	return nil, false
}

// parsed is the parsed body, nil when no pass parsed it. A small body's
// doc, which its first pass dropped, is parsed again from the same bytes
// on the first call (the parse cannot fail: it did not before); calls
// racing on it get one doc.
func (st *state) parsed() *jsonbody.Doc {
	d := st.doc.Load()
	if d != nil || !st.dropped {
		return d
	}
	d, err := jsonbody.Parse(st.plain, st.guard.opts.MaxDepth)
	if err != nil {
		return nil
	}
	if st.doc.CompareAndSwap(nil, d) {
		return d
	}
	return st.doc.Load()
}

// User returns what Options.User returned for a request that passed a
// guard (calling it if no invariant has yet), and nil otherwise. It is
// safe for concurrent use: Options.User is called once, and every caller
// gets what it returned (Options.User must therefore not call User for
// the same request).
func User(r *http.Request) any {
	if st := stateOf(r); st != nil {
		return st.userOf(r)
	}
	return nil
}

func (st *state) userOf(r *http.Request) any {
	st.userOnce.Do(func() {
		if f := st.guard.opts.User; f != nil {
			st.user = f(r)
		}
	})
	return st.user
}

// notDone reports whether c has not yet run on the request (st nil: no
// earlier pass).
func (st *state) notDone(c *contract) bool {
	return st == nil || !slices.Contains(st.done, c)
}

// markDone records that cs passed on the request.
func (st *state) markDone(cs []*contract) {
	if st.done == nil {
		st.done = st.doneBuf[:0]
	}
	st.done = append(st.done, cs...)
}

// pass returns r as it goes on to the handler: carrying st in its context
// and the checked bytes as its body. A later pass gives a fresh request
// carrying the checked bytes too: something between may have read them.
func (st *state) pass(r *http.Request, first bool) *http.Request {
	if first {
		st.ctx = stateContext{r.Context(), st}
		st.req = *r.WithContext(&st.ctx) // inlined: its copy stays on the stack

		// An early pass gave the body back as it came (Guard.early).
		if !st.early {
			st.req.Body, st.req.ContentLength = checkedBody(st.raw, &st.body), int64(len(st.raw))
		}
		return &st.req
	}
	r2 := r.WithContext(r.Context())
	r2.Body, r2.ContentLength = checkedBody(st.raw, nil), int64(len(st.raw))
	return r2
}

// checkedBody is the body a request passes on with: raw in b (nil: a new
// one), or http.NoBody for no bytes, as Go's server gives a request
// without a body (a handler may test for it; a request made from one
// with another empty body is sent chunked).
func checkedBody(raw []byte, b *bodyReader) io.ReadCloser {
	if len(raw) == 0 {
		return http.NoBody
	}
	if b == nil {
		b = new(bodyReader)
	}
	b.Reset(raw)
	return b
}

// request is one request as invariants see it, and what one run works
// with; it supplies the costly parts of request and context.user on
// demand.
type request struct {
	method   string
	rawQuery string
	query    url.Values // rawQuery parsed, by queryValues
	queryBad bool       // url.ParseQuery dropped pairs of rawQuery (see queryValues)
	header   http.Header
	pathParams
	state  *state // own, or an earlier pass's
	own    *state // the state a pass starts from, kept with the request in the pool until one passes
	segBuf [8]string

	// views are the readings of the path whose contracts the request is
	// checked against, when more than one matched (route.Tree.Hits): the
	// first is the matched entry's, read as the request's own segments;
	// nil when one reading did. view is the one pathParams holds.
	views   []route.Hit[*routeEntry]
	viewBuf [3]route.Hit[*routeEntry]
	view    int
	// ownQuery: the view in use reads the query from the path, the text
	// after its first ';' (route.Hit.OwnQuery), which is viewQuery.
	ownQuery  bool
	viewQuery string
	// queryAs is how request.query reads the request's query string:
	// as url.ParseQuery does, or, for a query it reads with pairs
	// dropped, as the readers that keep them do (applyRules).
	queryAs queryReading

	// What one run works with, here so that it costs no allocation of its own.
	detailList
	act expr.Activation
	// small is where the first pass puts a small body's doc (tape): with
	// the pool, not in the state a passing request takes along, which
	// stays small (release drops the doc from it; parsed parses again
	// the rare times it is asked for after the pass).
	small jsonbody.Small
}

// tape is where q's pass parses a small body: its own state's (the
// first pass) is q.small; a later pass's state is another request's and
// parses into its own memory.
func (q *request) tape() *jsonbody.Small {
	if q.state == q.own {
		return &q.small
	}
	return nil
}

// newRequest is a request as invariants will see it, with its own copy of
// the path's segments, from a pool: nothing of it outlives decide, which
// gives it back (release). Its state is the pooled request's own, or
// prev, the state of an earlier pass. A request that passes takes its
// state along to the handler, which may keep it, and the next request
// allocates one (640 bytes, with the body's bytes the one allocation of a
// request the guard passes); a refused request, and a Check, leave it,
// emptied, to the next. e is the route
// entry its path matched, nil for a typed route the guard has no pattern
// for (whose segments are then read into buf). (Fields, not the match: a
// match holds the caller's buffer, which must not leak.) others are the
// other readings of the path that matched (route.Tree.Hits), whose
// segments are their own.
func (g *Guard) newRequest(in *input, e *routeEntry, segs []string, others []route.Hit[*routeEntry], prev *state, buf []string) *request {
	q := requests.Get().(*request) // emptied by release
	q.method, q.rawQuery, q.header, q.r = in.method, in.rawQuery, in.header, in.r
	q.pattern, segs = patternOf(in, e, segs, buf)
	q.segs = append(q.segBuf[:0], segs...)
	if len(others) > 0 { // e is not nil: Hits finds nothing where nothing matched
		q.views = append(append(q.viewBuf[:0], route.Hit[*routeEntry]{V: e, Segs: q.segs}), others...)
	}
	if h, ok := typedView(in, e, q.segs); ok {
		if q.views == nil {
			q.views = append(q.viewBuf[:0], route.Hit[*routeEntry]{V: e, Segs: q.segs})
		}
		q.views = append(q.views, h)
	}
	if prev != nil {
		q.state = prev
		return q
	}
	if q.own == nil { // the last request that had it passed, and took it along
		q.own = new(state)
	}
	q.state = q.own
	return q
}

// requests are the guard's requests as invariants see them; decide keeps
// none of them: a violation is copied out (release) before one goes back.
// Each comes with a state, in one allocation: a request the pool dropped
// costs one allocation to replace, as before the state was kept apart.
var requests = sync.Pool{New: func() any {
	b := new(struct {
		q   request
		own state
	})
	b.q.own = &b.own
	return &b.q
}}

// release gives q back, with v, the violation decide returns, copied out
// of it: its details are the request's. (v itself is new, made for this
// request, and nothing that saw it kept it: a hook that is given a
// violation gets a copy.) passed is the state decide passes on with the
// request (nil when it is refused, or passes as it came): q's own state
// goes with it, or stays with q, emptied. Nothing else saw that state: a
// hook gets the request as it came.
func (q *request) release(v *Violation, passed *state) *Violation {
	if v != nil {
		v.Details = slices.Clone(v.Details)
	}
	// The details' array is kept for the next request, emptied to its
	// capacity (a run cuts it back to [:0] before the next contract, so
	// strings can sit past its length), unless a body with many findings
	// grew it.
	d := q.details[:0]
	if cap(d) > maxKeptDetails {
		d = nil
	}
	clear(d[:cap(d)])
	own := q.own
	switch {
	case passed != nil && passed == own:
		own = nil
		if q.small.Holds(passed.doc.Load()) { // the tape stays with q
			passed.doc.Store(nil)
			passed.dropped = true
		}
	case own != nil && q.state == own:
		*own = state{}
	}
	*q = request{detailList: detailList{details: d}, own: own}
	requests.Put(q)
	return v
}

// maxKeptDetails bounds the details a pooled request keeps room for.
const maxKeptDetails = 32

// Params are the path parameters: by the matched contract's pattern, or,
// on a typed route the guard has no pattern for, as chi or ServeMux
// extracted them.
func (q *request) Params() map[string]string {
	if q.routerParams() {
		return routerParams(q.r)
	}
	return q.pattern.Params(q.segs)
}

// pathParams are where a request's path parameters come from: the
// matched pattern over the path's segments, or, on a typed route the
// guard has no pattern for, the router.
type pathParams struct {
	r       *http.Request // nil for Check
	pattern route.Pattern // of the matched file contract; nil for a typed route alone
	segs    []string
}

// patternOf is the pattern that names in's path parameters, and the
// path's segments it reads them from: e's, the route entry the path
// matched, whose segments are segs; or, with e nil, its typed route's
// (nil: the router's), with the path's segments read into buf.
func patternOf(in *input, e *routeEntry, segs, buf []string) (route.Pattern, []string) {
	switch {
	case e != nil:
		return e.pattern, segs
	case in.typed.path != "":
		return in.typed.pattern, route.RoutedSegments(in.typed.path, in.typed.decode, buf)
	}
	return in.typed.pattern, route.Segments(in.rawPath, buf)
}

// typedView is the reading of the path the router behind Middleware
// matched the typed route on, when a file contract matched the path in
// another (another pattern, or other segments: /t/{a}/{b}/{c} is a
// "victim", b "..", c "attacker" for chi and ServeMux on
// /t/victim/%2e%2e/attacker, which the guard's main reading, /t/attacker,
// matches to /t/:a): the typed contract is checked with the parameters
// its handler gets.
//
// On the typed handler's own pass (no path: its router has routed the
// request, and extracted its parameters), the view has no pattern: the
// typed contract is checked with the router's parameters (pathParams),
// not with those of the file contract's pattern over the guard's reading.
func typedView(in *input, e *routeEntry, segs []string) (route.Hit[*routeEntry], bool) {
	t := in.typed
	if e == nil || t.c == nil {
		return route.Hit[*routeEntry]{}, false
	}
	if t.path == "" {
		if in.r == nil || t.pattern != nil {
			return route.Hit[*routeEntry]{}, false
		}
		return route.Hit[*routeEntry]{V: &routeEntry{contracts: []*contract{t.c}}, Segs: segs}, true
	}
	if t.pattern == nil {
		return route.Hit[*routeEntry]{}, false
	}
	var buf [16]string
	ts := route.RoutedSegments(t.path, t.decode, buf[:0])
	if slices.Equal(e.pattern, t.pattern) && slices.Equal(ts, segs) {
		return route.Hit[*routeEntry]{}, false
	}
	return route.Hit[*routeEntry]{V: &routeEntry{contracts: []*contract{t.c}, pattern: t.pattern}, Segs: slices.Clone(ts)}, true
}

// routerParams reports whether the path parameters are the router's: a
// typed route the guard has no pattern for.
func (p *pathParams) routerParams() bool { return p.pattern == nil && p.r != nil }

// EachParam yields the path parameters, decoded, as the handler reads
// them (taint.ParamLister, for the sinks).
func (p *pathParams) EachParam(yield func(name, value string) bool) {
	if p.routerParams() {
		stopped := false
		maps.All(routerParams(p.r))(func(name, value string) bool {
			stopped = !yield(name, value)
			return !stopped
		})
		if !stopped {
			routerWildcards(p.r, yield)
		}
		return
	}
	p.pattern.EachParam(p.segs)(yield)
}

func (q *request) Path() string { return route.Join(q.segs) }

// useView makes views[i] the reading request.params, request.path and
// request.query come from (0: the matched entry's).
func (q *request) useView(i int) {
	if i == q.view {
		return
	}
	q.view = i
	h := &q.views[i]
	q.pattern, q.segs, q.ownQuery, q.viewQuery = h.V.pattern, h.Segs, h.OwnQuery, h.Query
	q.act.Reroute()
}

// inView reports whether views[i] is one c is checked in: a reading
// that matched c's route entry; the first also for a contract no reading
// matched (a typed handler's).
func (q *request) inView(i int, c *contract) bool {
	if slices.Contains(q.views[i].V.contracts, c) {
		return true
	}
	if i > 0 {
		return false
	}
	for _, h := range q.views[1:] {
		if slices.Contains(h.V.contracts, c) {
			return false
		}
	}
	return true
}

func (q *request) Query() map[string]string {
	switch {
	case q.ownQuery:
		return firstValues(q.viewQueryValues())
	case q.queryAs == queryAsNode:
		return firstValues(route.QueryAsFastify(q.rawQuery))
	case q.queryAs == queryAsExpress:
		m := map[string]string{}
		for k, v := range route.NodePairs(q.rawQuery) {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	case q.queryAs == queryAsSemicolons:
		m := map[string]string{}
		for k, v := range route.GoPairs(q.rawQuery, "&;") {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	return firstValues(q.queryValues())
}

// queryReading is a way of reading the request's query string into
// request.query.
type queryReading uint8

const (
	queryAsGo         queryReading = iota // url.ParseQuery, as r.URL.Query() reads it
	queryAsNode                           // split at '&' alone, malformed escapes kept as sent: Fastify's and Express 4's parsers (route.QueryAsFastify)
	queryAsSemicolons                     // ';' read as '&' too: http.AllowQuerySemicolons in front of a Go handler
	queryAsExpress                        // split at '&' alone, the well-formed escapes of a value with malformed ones decoded: Express 5's node:querystring (route.NodePairs)
)

// dropsQueryPairs reports a query string that url.ParseQuery reads with
// pairs dropped, which other readers keep: a pair with a ';' or a
// malformed escape (?debug=1;x and ?debug=%zz are no debug to
// r.URL.Query(), and debug "1;x" and "%zz" to Express and Fastify), or
// every pair of a query of more than 10,000 (its limit).
func (q *request) dropsQueryPairs() bool {
	if len(q.rawQuery) < 10000 && strings.IndexByte(q.rawQuery, ';') < 0 && strings.IndexByte(q.rawQuery, '%') < 0 {
		return false // nothing url.ParseQuery refuses
	}
	q.queryValues()
	return q.queryBad
}

// readQueryAs makes request.query read the query string as rd says.
func (q *request) readQueryAs(rd queryReading) {
	if q.queryAs != rd {
		q.queryAs = rd
		q.act.Reroute()
	}
}

// viewQueryValues is the query of a view that reads it from the path
// (ownQuery), as Fastify with useSemicolonDelimiter reads it: the text
// after the path's first ';' and, after a '?', the request's query
// string, parsed as its parser does.
func (q *request) viewQueryValues() url.Values {
	text := q.viewQuery
	if q.rawQuery != "" {
		text += "?" + q.rawQuery
	}
	return route.QueryAsFastify(text)
}

// queryValues is the query as r.URL.Query() reads it (bad pairs dropped),
// parsed once for the scan and the rules.
func (q *request) queryValues() url.Values {
	if q.query == nil {
		var err error
		q.query, err = url.ParseQuery(q.rawQuery)
		q.queryBad = err != nil
	}
	return q.query
}

// Headers are the headers by lower-case name. Where two keys of the
// header map give one name (a middleware wrote r.Header["x-role"] beside
// the client's X-Role), the value is the one Header.Get reads, what the
// handler reads: the canonical key's, else (Get reads none) the smallest
// key's, not whichever the map's iteration met last.
func (q *request) Headers() map[string]string {
	m := make(map[string]string, len(q.header))
	for k, v := range q.header {
		if len(v) == 0 {
			continue
		}
		name := strings.ToLower(k)
		if _, dup := m[name]; dup {
			m[name] = q.headerNamed(name)
			continue
		}
		m[name] = v[0]
	}
	return m
}

// headerNamed is the first value of the key of the header map whose
// lower-case form is name that Headers prefers: the canonical one, else
// the smallest.
func (q *request) headerNamed(name string) string {
	if v := q.header[textproto.CanonicalMIMEHeaderKey(name)]; len(v) > 0 {
		return v[0] // what Get(name) reads
	}
	best := ""
	for k, v := range q.header {
		if len(v) == 0 || strings.ToLower(k) != name {
			continue
		}
		if best == "" || k < best {
			best = k
		}
	}
	return q.header[best][0]
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
