package contractguard

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/scan"
)

// scanRequest runs the vulnerability scan for the contracts of cs that
// have not had it on this request: the body with each one's opt-outs
// (a value is skipped only when every contract skips it), the query and
// the path parameters once.
func scanRequest(cs []*contract, in *request) *Violation {
	st := in.state
	in.resetDetails()
	// A contract without opt-outs scans all that the others would: it alone
	// is run, and nothing is scanned after it, on this pass or the next.
	if i := slices.IndexFunc(cs, func(c *contract) bool { return c.skip == nil }); i >= 0 {
		cs = cs[i : i+1]
	}
	for _, c := range cs {
		skip := c.skip
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
		case utf8.Valid(st.plain): // a body the guard does not parse: one string
			if k := scan.Bytes(st.plain); k != scan.None && in.Wants() {
				in.Add("", k.Message())
			}
		}
		if first {
			if in.rawQuery != "" {
				scan.Query(in.queryValues(), in)
			}
			in.scanReadings()
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
	return newViolation(CodeVulnerabilityDetected, in.listed()...)
}

// scanReadings scans the path parameters: the router's, or the pattern's
// without building Params' map; those of every reading of the path that
// matched (request.views), and the query of one that reads it from the
// path.
func (q *request) scanReadings() {
	if len(q.views) == 0 {
		for name, v := range q.EachParam {
			scan.Param(name, v, q)
		}
		return
	}
	for i := range q.views {
		q.useView(i)
		for name, v := range q.EachParam {
			scan.Param(name, v, q)
		}
		if q.ownQuery {
			scan.Query(q.viewQueryValues(), q)
		}
	}
	q.useView(0)
}
