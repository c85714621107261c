package sink

import (
	"context"
	"slices"
	"strings"

	"github.com/contractguard/contractguard/internal/taint"
)

// CheckSQL checks query, about to run on behalf of the request whose input
// ctx carries, in dialect d. It returns an error wrapping ErrBlocked when an
// input occurs in the query's text and its occurrence is not inside one
// token: it spans tokens (`1 OR 1=1`), opens or closes a string literal or
// quoted identifier (`x' OR '1'='1`), starts or ends a comment (`admin'--`),
// or ends the statement (`1; DROP TABLE users`). Two kinds of multi-token
// input are let through, as they change no statement: a list of numbers
// (`1, 2, 3`, `-5`) and a column list for ORDER BY, GROUP BY or SELECT
// (`name DESC, t.id`). Arguments passed as parameters are not in the text
// and never trip it. With no input in ctx it does nothing.
//
// The wrappers (WrapDriver, WrapConnector, OpenDB) call it for every query
// and prepared statement; call it directly for a database library that
// does not go through database/sql.
func CheckSQL(ctx context.Context, query string, d Dialect) error {
	r := request(ctx)
	if r == nil {
		return nil
	}
	return checkSQL(r, query, d)
}

func checkSQL(r *taint.Request, query string, d Dialect) error {
	f := newFinder(query)
	var inBuf [8]taint.Input
	var occBuf [16]occurrence
	inputs, occ := inBuf[:0], occBuf[:0]
	over, backslash := false, false
	r.Inputs(func(in taint.Input) bool {
		v := trimSpace(in.Value)
		if len(v) < taint.MinInputLen {
			return true
		}
		n := len(occ)
		var ok bool
		if occ, ok = f.occurrences(v, len(inputs), occ); !ok {
			over = true
			return false
		}
		if len(occ) > n {
			// The occurrences point past the trimmed space: keep the
			// trimmed value, for the verdict's look at its bytes.
			in.Value = v
			inputs = append(inputs, in)
			backslash = backslash || strings.IndexByte(v, '\\') >= 0
		}
		return true
	})
	if over {
		return overBudget(r, sinkSQL)
	}
	if len(occ) == 0 {
		return nil
	}
	slices.SortFunc(occ, func(a, b occurrence) int { return a.start - b.start })
	if i, why := sqlVerdict(query, d, false, occ); why != "" {
		return block(r, sinkSQL, inputs[i], why)
	}
	// A backslash in an input: read the query the other way as well (MySQL
	// with NO_BACKSLASH_ESCAPES, PostgreSQL without standard strings), as
	// the server's setting is not known here.
	if backslash && d != SQLite {
		if i, why := sqlVerdict(query, d, true, occ); why != "" {
			return block(r, sinkSQL, inputs[i], why)
		}
	}
	return nil
}

// sqlVerdict reads the query once and judges each occurrence (sorted by
// start) against the tokens it covers: the first that changes the
// structure gives its input and the reason.
func sqlVerdict(query string, d Dialect, alt bool, occ []occurrence) (input int, reason string) {
	lx := newLexer(query, d, alt)
	var winBuf [32]token
	win := winBuf[:0]
	var prev token // the last token that is not space before the window
	prevOK, more := false, true
	for _, o := range occ {
		// Drop what ends before this occurrence.
		k := 0
		for k < len(win) && win[k].end <= o.start {
			if win[k].kind != tSpace && win[k].kind != tComment {
				prev, prevOK = win[k], true
			}
			k++
		}
		if k > 0 {
			win = append(win[:0], win[k:]...)
		}
		for more && (len(win) == 0 || win[len(win)-1].end < o.end) {
			t, ok := lx.next()
			if !ok {
				more = false
				break
			}
			if t.end <= o.start {
				if t.kind != tSpace && t.kind != tComment {
					prev, prevOK = t, true
				}
				continue
			}
			win = append(win, t)
		}
		n := 0
		for n < len(win) && win[n].start < o.end {
			n++
		}
		if n == 0 {
			continue // cannot happen: every byte is in a token
		}
		var before string
		if prevOK {
			before = query[prev.start:prev.end]
		}
		if why := judge(query, o, win[:n], before); why != "" {
			return o.input, why
		}
	}
	return -1, ""
}

// judge decides one occurrence [o.start, o.end) that covers tokens cover;
// before is the text of the token before it ("" at the start).
func judge(query string, o occurrence, cover []token, before string) string {
	s, e := o.start, o.end
	if len(cover) == 1 {
		t := cover[0]
		switch t.kind {
		case tString, tIdent:
			if (s >= t.in0 && e <= t.in1) || (s == t.start && e == t.end && t.closed) {
				return "" // inside the quotes, or a whole quoted token
			}
			if t.kind == tString {
				return "opens or closes a string literal"
			}
			return "opens or closes a quoted identifier"
		case tComment:
			if s >= t.in0 && e <= t.in1 {
				return ""
			}
			return "adds a comment"
		case tExecOpen, tExecClose:
			return "adds a MySQL code comment"
		}
		return "" // within one keyword, identifier, number, parameter or operator
	}
	if numberList(query, cover) || nameList(query, s, e, cover, before) {
		return ""
	}
	// The reason: the most telling thing the input did.
	why := ""
	for i, t := range cover {
		switch {
		case t.kind == tComment:
			return "adds a comment"
		case t.kind == tExecOpen || t.kind == tExecClose:
			return "adds a MySQL code comment"
		case t.kind == tPunct && query[t.start] == ';':
			why = "ends the statement"
		case why == "" && (t.kind == tString || t.kind == tIdent) && (i == 0 && s > t.start || i == len(cover)-1 && e < t.end):
			why = "opens or closes a string literal"
			if t.kind == tIdent {
				why = "opens or closes a quoted identifier"
			}
		}
	}
	if why != "" {
		return why
	}
	return "spans " + itoa(len(cover)) + " tokens of the query"
}

// numberList: numbers, commas and signs only (`1, 2, 3`, `-1`), which can
// add values to a list, never a statement, clause or condition.
func numberList(query string, cover []token) bool {
	num := false
	for _, t := range cover {
		switch t.kind {
		case tNumber:
			num = true
		case tSpace:
		case tPunct:
			if query[t.start] != ',' {
				return false
			}
		case tOp:
			if op := query[t.start:t.end]; op != "-" && op != "+" {
				return false
			}
		default:
			return false
		}
	}
	return num
}

// nameList: a column, or, right after BY (ORDER BY, GROUP BY), SELECT or
// DISTINCT, a list of columns, each a name or qualified name (`t.col`,
// "quoted"), optionally followed by ASC or DESC. Names cannot add a
// condition or a statement; a list of them elsewhere could (`id IN (id,
// x)` is true for every row), and so is allowed only where a list of
// columns goes.
func nameList(query string, s, e int, cover []token, before string) bool {
	items := 1
	const (
		wantName = iota
		afterName
		afterDot
		afterOrder
	)
	state := wantName
	for i, t := range cover {
		if t.kind == tSpace {
			continue
		}
		text := query[t.start:t.end]
		switch t.kind {
		case tWord:
			if text[0] == '@' {
				return false // a MySQL variable: @@version is no column
			}
			if state == afterName && (strings.EqualFold(text, "ASC") || strings.EqualFold(text, "DESC")) {
				state = afterOrder
				continue
			}
			if state != wantName && state != afterDot {
				return false
			}
			state = afterName
		case tIdent:
			if !t.closed || (i == 0 && s > t.start) || (i == len(cover)-1 && e < t.end) {
				return false
			}
			if state != wantName && state != afterDot {
				return false
			}
			state = afterName
		case tPunct:
			switch text {
			case ".":
				// A qualified name, or the start of one the text goes on with
				// (`.col` in `t.col`).
				if state != afterName && !(state == wantName && items == 1 && i == 0) {
					return false
				}
				state = afterDot
			case ",":
				if state != afterName && state != afterOrder {
					return false
				}
				items++
				state = wantName
			default:
				return false
			}
		default:
			return false
		}
	}
	if items == 1 {
		return state == afterName || state == afterOrder || state == afterDot // `t.` goes on in the text
	}
	if state != afterName && state != afterOrder {
		return false
	}
	return strings.EqualFold(before, "BY") || strings.EqualFold(before, "SELECT") || strings.EqualFold(before, "DISTINCT")
}
