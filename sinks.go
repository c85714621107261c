package contractguard

import (
	"log/slog"
	"slices"

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
// path matched; nil for a typed route alone. What it keeps of q, which
// goes back to its pool, is copied out.
func (g *Guard) recordInput(in *input, q *request, e *routeEntry) {
	st := q.state
	rec := &sinkInput{params: sinkParams{pathParams: q.pathParams}}
	rec.params.segs = append(rec.params.segBuf[:0], q.segs...) // q's are its pool's
	t := &rec.req
	*t = taint.Request{Method: in.method, RawQuery: in.rawQuery, Header: in.header,
		Params: &rec.params, ReportOnly: g.opts.LearningMode, Reporter: g}
	switch {
	case e != nil:
		t.Method, t.Route = e.contracts[0].method, e.contracts[0].endpoint
	default:
		t.Route = in.typed.routeName(in.r)
	}
	if in.r != nil {
		t.Host = in.r.Host
	}
	if st.doc != nil {
		t.Body = st.doc
	} else {
		t.Raw = st.plain
	}
	st.taint = t
}

// sinkInput is what recordInput keeps, in one allocation.
type sinkInput struct {
	req    taint.Request
	params sinkParams
}

// sinkParams are a request's path parameters as the sinks read them,
// with the path's segments of their own.
type sinkParams struct {
	pathParams
	segBuf [8]string
}

// SinkBlocked counts and logs a sink call that sink protection blocked (or,
// in learning mode, let happen and reported): the sink, the route and the
// input's source and path, never its value. It is how the sink package
// reports to the guard (taint.Reporter); applications do not call it.
func (g *Guard) SinkBlocked(r *taint.Request, b taint.Block) {
	if i := slices.Index(sinkNames[:], b.Sink); i >= 0 {
		g.stats.sinkBlocks[i].Add(1)
	}
	msg := "contractguard: sink protection blocked a call"
	if r.ReportOnly {
		msg = "contractguard: learning mode: sink protection would have blocked a call"
	}
	g.log.Warn(msg, slog.String("sink", b.Sink), slog.String("route", r.Method+" "+r.Route),
		slog.String("input", b.Source.String()), slog.String("path", b.Name), slog.String("reason", b.Reason))
}
