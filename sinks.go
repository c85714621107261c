package contractguard

import (
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/route"
	"github.com/contractguard/contractguard/internal/taint"
)

// Sink protection (docs/sink-protection.md, the sink package): with
// Options.SinkProtection on, a request that passed its contracts carries
// its input in its context (internal/taint), where the sink package's
// wrappers find it: body strings and member names from the parse the guard
// made (nothing copied), the query, the path parameters, the headers and
// cookies. With it off, nothing is recorded and nothing costs.

// recordInput keeps q's input in its state for the sinks: once, on the
// first pass, after the checks (which parsed the body), before the state
// is handed on (it is read-only from then on). e is the route entry the
// path matched; nil for a typed route alone.
func (g *Guard) recordInput(in *input, q *request, e *routeEntry) {
	st := q.state
	var others []route.Hit[*routeEntry]
	if len(q.views) > 1 {
		others = q.views[1:]
	}
	doc := st.doc.Load()
	if q.small.Holds(doc) { // the input outlives the pooled request's tape
		doc = q.small.Copy()
		st.doc.Store(doc)
	}
	st.taint = g.sinkRequest(in, q.pattern, q.segs, others, e, doc, st.plain)
}

// sinkRequest is the input of a request the guard passes, as the sinks
// read it: the parsed body (doc), or else the body's bytes as read
// (plain), the query, the path parameters (pattern's, in the path's
// segments segs, or the router's: see pathParams), the headers and the
// Host; and the parameters of the other readings of the path that
// matched a contract (others: a router that reads the path one of those
// ways hands its handler those parameters), with the query of one that
// reads it from the path (route.Tree.Hits). The segments, a pooled
// request's or on the caller's stack, are copied.
func (g *Guard) sinkRequest(in *input, pattern route.Pattern, segs []string, others []route.Hit[*routeEntry], e *routeEntry, doc *jsonbody.Doc, plain []byte) *taint.Request {
	rec := &sinkInput{params: sinkParams{pathParams: pathParams{r: in.r, pattern: pattern}}}
	rec.params.segs = append(rec.params.segBuf[:0], segs...)
	t := &rec.req
	*t = taint.Request{Method: in.method, RawQuery: in.rawQuery, Header: in.header,
		Params: &rec.params, ReportOnly: g.opts.LearningMode, Reporter: g}
	for _, h := range others {
		rec.params.more = append(rec.params.more, pathParams{r: in.r, pattern: h.V.pattern, segs: slices.Clone(h.Segs)})
		if h.OwnQuery {
			t.RawQuery += "&" + h.Query
		}
	}
	rec.params.fixRouters()
	switch {
	case e != nil:
		t.Method, t.Route = e.contracts[0].method, e.contracts[0].endpoint
	default:
		t.Route = in.typed.routeName(in.r)
		if m, rest, ok := strings.Cut(t.Route, " "); ok && !strings.Contains(m, "/") {
			// A ServeMux pattern names its method: "POST /files/{path...}".
			t.Method, t.Route = m, strings.TrimLeft(rest, " \t")
		}
	}
	if in.r != nil {
		t.Host = in.r.Host
	}
	if doc != nil {
		t.Body = doc
	} else {
		t.Raw = plain
	}
	return t
}

// earlyInput is sinkRequest for a request that passes as it came, its
// body refused before any contract ran (every contract learns: see
// Guard.early). A body the guard had not read yet (its media type was
// refused) is read now, at most MaxBodyBytes, and given back with the
// rest; raw is what was read already, plain what of it decoded. A body
// refused unread for its Content-Length is read now as far as the limit.
// The input holds the body as far as it was read, decoded as far as it
// goes: of a body over the limit, the part read (taint reads the whole
// strings of a JSON text cut short).
func (g *Guard) earlyInput(in *input, e *routeEntry, segs []string, others []route.Hit[*routeEntry], raw, plain []byte, read bool) *taint.Request {
	var buf [16]string
	pattern, segs := patternOf(in, e, segs, buf[:0])
	if !read {
		raw, plain, _ = readBody(in, g.opts.MaxBodyBytes)
		giveBack(in.r, raw)
	}
	if raw == nil && in.r != nil && in.r.Body != nil && in.r.ContentLength > g.opts.MaxBodyBytes {
		// Refused by its length alone, unread (also when it was its media
		// type that was refused first): the part the limit allows. (A
		// request made in code may have no Body at all, whatever its
		// Content-Length says: nothing to read.)
		raw, _ = io.ReadAll(io.LimitReader(in.r.Body, g.opts.MaxBodyBytes))
		giveBack(in.r, raw)
	}
	if plain == nil && len(raw) > 0 { // over the limit as it came
		plain, _ = decodeBody(in.header, raw, g.opts.MaxBodyBytes)
	}
	if plain == nil { // an encoding that does not decode at all
		plain = raw
	}
	return g.sinkRequest(in, pattern, segs, others, e, nil, plain)
}

// sinkInput is what recordInput keeps, in one allocation.
type sinkInput struct {
	req    taint.Request
	params sinkParams
}

// sinkParams are a request's path parameters as the sinks read them,
// with the path's segments of their own; and those of the other readings
// of its path that matched (more).
type sinkParams struct {
	pathParams
	segBuf [8]string
	more   []pathParams
	// fixed: the parameters, some of them the router's, were copied out
	// into router as the request was recorded (fixRouters).
	fixed  bool
	router [][2]string
}

// fixRouters copies out the parameters now when any reading's are the
// router's (pathParams.routerParams): chi keeps them in a context it
// takes back, for another request, once the handler returns, and a sink
// may first be called after that, from a goroutine the handler started
// on a context.WithoutCancel of the request's. Read then, they were
// another request's, or none.
func (p *sinkParams) fixRouters() {
	if !p.routerParams() && !slices.ContainsFunc(p.more, func(m pathParams) bool { return m.routerParams() }) {
		return
	}
	var all [][2]string
	p.EachParam(func(name, value string) bool {
		all = append(all, [2]string{name, value})
		return true
	})
	p.router, p.fixed = all, true
}

// EachParam yields the path parameters of every reading (taint.ParamLister).
func (p *sinkParams) EachParam(yield func(name, value string) bool) {
	if p.fixed {
		for _, kv := range p.router {
			if !yield(kv[0], kv[1]) {
				return
			}
		}
		return
	}
	stopped := false
	all := func(name, value string) bool {
		stopped = !yield(name, value)
		return !stopped
	}
	p.pathParams.EachParam(all)
	for i := 0; i < len(p.more) && !stopped; i++ {
		p.more[i].EachParam(all)
	}
}

// SinkBlocked counts and logs a sink call that sink protection blocked (or,
// in learning mode, let happen and reported): the sink, the route and the
// input's source and path, never its value. A call reported again (in
// learning mode, for each input that would have blocked it: b.Again) is
// logged again but counted once. It is how the sink package
// reports to the guard (taint.Reporter); applications do not call it.
func (g *Guard) SinkBlocked(r *taint.Request, b taint.Block) {
	if i := slices.Index(sinkNames[:], b.Sink); i >= 0 && !b.Again {
		g.stats.sinkBlocks[i].Add(1)
	}
	msg := "contractguard: sink protection blocked a call"
	if r.ReportOnly {
		msg = "contractguard: learning mode: sink protection would have blocked a call"
	}
	g.log.Warn(msg, slog.String("sink", b.Sink), slog.String("route", r.Method+" "+r.Route),
		slog.String("input", b.Source.String()), slog.String("path", b.Name), slog.String("reason", b.Reason))
}
