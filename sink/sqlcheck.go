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
// or ends the statement (`1; DROP TABLE users`). Some inputs of several
// tokens are let through, as they add no statement, clause or condition:
// a list of numbers (`1, 2, 3`, `-5`), a column list for ORDER BY, GROUP
// BY or SELECT (`name DESC, t.id`), and a phrase of SQL's own that users
// type too (`order by`, `is not null`). Arguments passed as parameters are
// not in the text and never trip it. With no input in ctx it does nothing.
//
// The wrappers (WrapDriver, WrapConnector, OpenDB) call it for every query
// and prepared statement; call it directly for a database library that
// does not go through database/sql.
func CheckSQL(ctx context.Context, query string, d Dialect) error {
	r := request(ctx)
	if r == nil {
		return nil
	}
	if ok, err := tooLarge(r, sinkSQL); ok {
		return err
	}
	return checkSQL(r, query, d)
}

func checkSQL(r *taint.Request, query string, d Dialect) error {
	f := newFinder(query)
	var inBuf [8]taint.Input
	var occBuf [16]occurrence
	inputs, occ := inBuf[:0], occBuf[:0]
	over, backslash := false, false
	// add looks for in trimmed to v; false when the work is spent.
	add := func(in taint.Input, v string) bool {
		if len(v) < taint.MinInputLen || wordOnly(v) {
			return true
		}
		n := len(occ)
		var ok bool
		if occ, ok = f.occurrences(v, len(inputs), occ); !ok {
			return false
		}
		if !isASCII(v) {
			if occ, ok = otherCaseOccurrences(&f, v, len(inputs), occ); !ok {
				return false
			}
		}
		if len(occ) > n {
			// The occurrences point past the trimmed space: keep the
			// trimmed value, for the verdict's look at its bytes.
			in.Value = v
			inputs = append(inputs, in)
			backslash = backslash || strings.IndexByte(v, '\\') >= 0
		}
		return true
	}
	r.Inputs(func(in taint.Input) bool {
		v := trimSpace(in.Value)
		n := len(occ)
		ok := add(in, v)
		if w := trimAnySpace(v); ok && len(w) < len(v) {
			m, k := len(occ), len(inputs)
			ok = add(in, w) // trimmed as most runtimes trim ("\u00a0' OR 1=1 --")
			// Where the input is as it came, what it holds trimmed is its
			// own text, not a trimmed copy of it: two quotes and a control
			// byte, quoted, are five quotes, the byte and a quote, and the
			// two quotes after the opening one end no literal.
			if occ = dropInside(occ, n, m); len(occ) == m && len(inputs) > k {
				inputs = inputs[:k]
			}
		}
		over = !ok
		return ok
	})
	if over {
		return overBudget(r, sinkSQL)
	}
	if len(occ) == 0 {
		return nil
	}
	slices.SortFunc(occ, func(a, b occurrence) int { return a.start - b.start })
	// A backslash of the application's right before an input escapes the
	// input's first byte in one reading and not in the other: `'C:\dir\`
	// + `' OR 1=1 -- ` is one literal with MySQL's backslash escapes, and
	// a literal closed before OR 1=1 with NO_BACKSLASH_ESCAPES.
	backslash = backslash || slices.ContainsFunc(occ, func(o occurrence) bool { return o.start > 0 && query[o.start-1] == '\\' })
	if i, why := sqlVerdict(query, d, false, occ); why != "" {
		return block(r, sinkSQL, inputs[i], why)
	}
	if d == SQLite {
		// SQLite compiles a query up to its first NUL byte: an input that
		// puts one there, even inside a comment, cuts off what follows
		// (`/* x\x00 */ WHERE owner = 5` runs without its WHERE). Inside a
		// string literal or a quoted name the cut leaves it unclosed, which
		// SQLite refuses: no query runs, and a quoted input is no attack.
		for _, o := range occ {
			if strings.IndexByte(query[o.start:o.end], 0) >= 0 && !quotedAt(query, d, o) {
				return block(r, sinkSQL, inputs[o.input], "cuts the query short with a NUL byte")
			}
		}
	}
	// A backslash in an input, or just before one: read the query the
	// other way as well (MySQL with NO_BACKSLASH_ESCAPES, PostgreSQL
	// without standard strings), as the server's setting is not known here.
	if backslash && d != SQLite {
		if i, why := sqlVerdict(query, d, true, occ); why != "" {
			return block(r, sinkSQL, inputs[i], why)
		}
	}
	return nil
}

// otherCaseOccurrences appends the occurrences of the otherCases of input
// v, but of those that are words only (ıd upper-cased is ID).
func otherCaseOccurrences(f *finder, v string, input int, occ []occurrence) ([]occurrence, bool) {
	forms, n := otherCases(v)
	for _, w := range forms[:n] {
		if wordOnly(w) {
			continue
		}
		var ok bool
		if occ, ok = f.occurrences(w, input, occ); !ok {
			return occ, false
		}
	}
	return occ, true
}

// wordOnly: letters, digits and underscores only. Such an input cannot
// span tokens: wherever it occurs, it is inside one word, number,
// parameter, string or comment, or is one of them (Aikido Zen lets these
// through for the same reason), so it is not looked for at all.
func wordOnly(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c == '_' || isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z')) {
			return false
		}
	}
	return true
}

// sqlVerdict reads the query once and judges each occurrence (sorted by
// start) against the tokens it covers: the first that changes the
// structure gives its input and the reason.
func sqlVerdict(query string, d Dialect, alt bool, occ []occurrence) (input int, reason string) {
	lx := newLexer(query, d, alt)
	var winBuf [32]token
	win := winBuf[:0]
	prev0, prev1 := 0, 0 // the last token that is not space or comment before the window
	more := true
	for _, o := range occ {
		// Drop what ends before this occurrence.
		k := 0
		for k < len(win) && win[k].end <= o.start {
			if win[k].kind != tSpace && win[k].kind != tComment {
				prev0, prev1 = win[k].start, win[k].end
			}
			k++
		}
		if k > 0 {
			win = append(win[:0], win[k:]...)
		}
		for more && (len(win) == 0 || win[len(win)-1].end < o.end) {
			win = slices.Grow(win, 1)[:len(win)+1]
			t := &win[len(win)-1]
			if !lx.next(t) {
				win, more = win[:len(win)-1], false
				break
			}
			if t.end <= o.start {
				if t.kind != tSpace && t.kind != tComment {
					prev0, prev1 = t.start, t.end
				}
				win = win[:len(win)-1]
			}
		}
		n := 0
		for n < len(win) && win[n].start < o.end {
			n++
		}
		if n == 0 {
			continue // cannot happen: every byte is in a token
		}
		if why := judge(query, o, win[:n], query[prev0:prev1]); why != "" {
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
		case tParam:
			if s <= t.start {
				return "adds a parameter"
			}
		}
		return "" // within one keyword, identifier, number or operator
	}
	if numberList(query, cover) || nameList(query, s, e, cover, before) || commonPhrase(query[s:e], cover, s, e) {
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

// numberList: numbers separated by commas, each with a sign or not (`1,
// 2, 3`, `-1`), which can add values to a list, never a statement, clause
// or condition.
func numberList(query string, cover []token) bool {
	const (
		wantNumber = iota // at the start or after a comma
		afterSign
		afterNumber
	)
	state := wantNumber
	for _, t := range cover {
		switch t.kind {
		case tSpace:
		case tNumber:
			if state == afterNumber {
				return false
			}
			state = afterNumber
		case tPunct:
			if query[t.start] != ',' || state != afterNumber {
				return false
			}
			state = wantNumber
		case tOp:
			if op := query[t.start:t.end]; (op != "-" && op != "+") || state != wantNumber {
				return false
			}
			state = afterSign
		default:
			return false
		}
	}
	return state == afterNumber
}

// commonPhrases are phrases of SQL's own that users type too (a search
// for "order by" in a query that has its own ORDER BY): alone, none adds a
// condition, a value or a statement. Aikido Zen keeps such a list for the
// same reason.
var commonPhrases = map[string]bool{
	"order by": true, "group by": true, "insert into": true, "delete from": true, "select *": true, "count(*)": true,
	"left join": true, "right join": true, "inner join": true, "full join": true, "cross join": true,
	"left outer join": true, "right outer join": true, "full outer join": true, "is null": true, "is not null": true,
	"not null": true, "not exists": true, "on conflict": true, "do nothing": true, "do update": true,
	"on duplicate key update": true, "primary key": true, "distinct on": true,
}

// commonPhrase: the occurrence is whole tokens that spell one of
// commonPhrases, words separated by white space.
func commonPhrase(text string, cover []token, s, e int) bool {
	if s != cover[0].start || e != cover[len(cover)-1].end || len(text) > 32 {
		return false
	}
	var buf [32]byte
	b := buf[:0]
	space := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space && len(b) > 0 {
			b = append(b, ' ')
		}
		space = false
		b = append(b, lower(c))
	}
	return commonPhrases[string(b)]
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

// dropInside drops the occurrences of occ[m:] that lie inside one of
// occ[n:m].
func dropInside(occ []occurrence, n, m int) []occurrence {
	if n == m {
		return occ
	}
	kept := occ[:m]
	for _, o := range occ[m:] {
		inside := false
		for _, p := range occ[n:m] {
			if p.start <= o.start && o.end <= p.end {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, o)
		}
	}
	return kept
}

// quotedAt reports whether occurrence o of query lies within one string
// literal or quoted name, between its delimiters.
func quotedAt(query string, d Dialect, o occurrence) bool {
	l := newLexer(query, d, false)
	var t token
	for l.next(&t) {
		if t.end <= o.start {
			continue
		}
		return (t.kind == tString || t.kind == tIdent) && t.in0 <= o.start && o.end <= t.in1
	}
	return false
}
