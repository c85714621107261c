package sink

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/contractguard/contractguard/internal/taint"
)

// ErrBlocked is what every blocked call's error wraps: errors.Is(err,
// sink.ErrBlocked) tells a blocked query, command, open or request from the
// call's own failures. The call never happened.
var ErrBlocked = errors.New("blocked by sink protection")

// BlockedError is a call stopped because request input would have changed
// its structure. It names where the input came from, never its value.
type BlockedError struct {
	Sink   string // "sql", "shell", "file" or "http"
	Route  string // the contract's method and endpoint ("POST /users/:id"); "" when unknown
	Source string // where in the request: "body", "body key", "query", "query name", "path parameter", "header", "cookie"
	Input  string // the input's JSON pointer (body inputs) or name
	Reason string // what the input did
}

// Error says which call was blocked and why, in one line.
func (e *BlockedError) Error() string {
	var b strings.Builder
	b.WriteString("sink: ")
	b.WriteString(e.Sink)
	b.WriteString(" call blocked: ")
	if e.Source != "" {
		b.WriteString("input from ")
		b.WriteString(e.Source)
		if e.Input != "" {
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(e.Input))
		}
		b.WriteByte(' ')
	}
	b.WriteString(e.Reason)
	if e.Route != "" {
		b.WriteString(" (")
		b.WriteString(e.Route)
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap is ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Sink names, as reports and errors give them.
const (
	sinkSQL   = "sql"
	sinkShell = "shell"
	sinkFile  = "file"
	sinkHTTP  = "http"
)

// block reports that in made a call of sink unsafe, and returns the error
// to give the caller: nil in report-only (learning) mode, where the call
// goes ahead.
func block(r *taint.Request, sink string, in taint.Input, reason string) error {
	return blockAgain(r, sink, in, reason, false)
}

// blockAgain is block; again says that this call was already reported
// (report-only mode goes on reporting its inputs), so that the guard
// counts the call once however many reports it gets.
func blockAgain(r *taint.Request, sink string, in taint.Input, reason string, again bool) error {
	b := taint.Block{Sink: sink, Source: in.Source, Name: r.Where(in), Reason: reason, Again: again}
	r.Report(b)
	if r.ReportOnly {
		return nil
	}
	route := r.Route
	if r.Method != "" {
		route = r.Method + " " + route
	}
	src := ""
	if in.Source != 0 {
		src = in.Source.String()
	}
	return &BlockedError{Sink: sink, Route: strings.TrimSpace(route), Source: src, Input: b.Name, Reason: reason}
}

// overBudget blocks a call whose check would cost more than the bounds
// allow: a security check that gives up fails closed.
func overBudget(r *taint.Request, sink string) error {
	return overBudgetAgain(r, sink, false)
}

// overBudgetAgain is overBudget for a call that may already have been
// reported (blockAgain).
func overBudgetAgain(r *taint.Request, sink string, again bool) error {
	return blockAgain(r, sink, taint.Input{}, "too much input to check", again)
}

// tooLarge blocks a call (overBudget) when r's form body holds
// more fields than its inputs are read to (taint.Request.TooLarge): a
// check of what was read could let the rest through. ok is false for
// every other request; then the call is checked as usual.
func tooLarge(r *taint.Request, sink string) (ok bool, err error) {
	if !r.TooLarge() {
		return false, nil
	}
	return true, overBudget(r, sink)
}

// request is the recorded input of ctx, or nil.
func request(ctx context.Context) *taint.Request { return taint.FromContext(ctx) }

// The bounds of one check.
const (
	// maxWork bounds the bytes one check may scan looking for inputs in a
	// sink's text, about 20 ms: a request of thousands of inputs made to
	// look like a long query gets its call blocked, not the server slowed.
	maxWork = 64 << 20
	// maxOccurrences bounds the places where inputs occur in one text.
	maxOccurrences = 1 << 16
)

// finder looks for inputs in one sink text, ignoring ASCII case (SQL
// keywords, host names and the case-insensitive file systems of Windows
// and macOS ignore it, and applications upper- or lower-case values), with
// a filter on the text's byte pairs that rules most inputs out without a
// search. An input is also looked for in its otherCases.
type finder struct {
	text  string
	work  int
	pairs [64]uint64 // a bit per hash of each folded byte pair of text
	built bool
	// The last place index found, to go on from there when asked for the
	// place after it (occurrences, and the loops over each place of an
	// input): an indexFold from the byte after each place may compare for
	// 8 bytes a byte of what is left, again at each place.
	last     string      // what was found
	lastNext int         // the byte after the place; 0 for none
	search   *foldSearch // the search that goes on, nil till asked
}

func newFinder(text string) finder { return finder{text: text} }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func pairHash(a, b byte) uint { return (uint(lower(a))*31 + uint(lower(b))) & 4095 }

// mayContain is false when s surely does not occur in the text: one of a
// few of its byte pairs does not.
func (f *finder) mayContain(s string) bool {
	if len(s) > len(f.text) {
		return false
	}
	if len(f.text) < 32 || len(s) < 2 {
		return true
	}
	if !f.built {
		for i := 0; i+1 < len(f.text); i++ {
			h := pairHash(f.text[i], f.text[i+1])
			f.pairs[h>>6] |= 1 << (h & 63)
		}
		f.built = true
		f.work += len(f.text)
	}
	n := len(s) - 1
	for _, i := range [4]int{0, n - 1, n / 2, n / 3} {
		h := pairHash(s[i], s[i+1])
		if f.pairs[h>>6]&(1<<(h&63)) == 0 {
			return false
		}
	}
	return true
}

// index is the first place at or after from where s occurs in the text,
// ignoring ASCII case, or -1; ok is false when the check's work is spent.
// The work counted is the text scanned: up to the match, or to the end.
func (f *finder) index(s string, from int) (i int, ok bool) {
	if f.work > maxWork {
		return -1, false
	}
	t := f.text[from:]
	if len(s) > len(t) || s == "" {
		return -1, true
	}
	if from > 0 && from == f.lastNext && s == f.last {
		// The place after the last: one search goes on where it stopped.
		if f.search == nil {
			// A fresh search, as it stands after a match at the last place.
			f.search = newFoldSearch(s)
			f.search.n = f.search.fail[len(s)-1]
		}
		i, end := f.search.next(f.text, from-1+len(s)) // from where the last place ends
		if i < 0 {
			f.work += len(t)
			f.lastNext = 0
			return -1, true
		}
		f.work += end - from
		f.lastNext = i + 1
		return i, true
	}
	i = indexFold(t, s)
	if i < 0 {
		f.work += len(t)
		return -1, true
	}
	f.work += i + len(s)
	f.last, f.lastNext, f.search = s, from+i+1, nil
	return from + i, true
}

// indexFold is strings.Index ignoring ASCII case. It looks for a byte of s
// that has no case with the fast IndexByte and compares around it; a run
// of letters only is looked for by its first byte in either case. Each
// place compared may cost len(s): past about 8 bytes compared per byte of
// t, the rest is searched in linear time (a 50,000-byte s over a 1 MiB t of
// "aaa…" compared for seconds).
func indexFold(t, s string) int {
	budget := 8*len(t) + 4096
	k := -1
	for j := 0; j < len(s); j++ {
		if c := s[j] | 0x20; c < 'a' || c > 'z' {
			k = j
			break
		}
	}
	if k >= 0 {
		c := s[k]
		for p := k; p <= len(t)-len(s)+k; {
			q := strings.IndexByte(t[p:len(t)-len(s)+k+1], c)
			if q < 0 {
				return -1
			}
			p += q
			if budget -= len(s); budget < 0 {
				return indexFoldLinear(t, s, p-k)
			}
			if equalFold(t[p-k:p-k+len(s)], s) {
				return p - k
			}
			p++
		}
		return -1
	}
	c0 := lower(s[0])
	for p := 0; p+len(s) <= len(t); p++ {
		if lower(t[p]) == c0 {
			if budget -= len(s); budget < 0 {
				return indexFoldLinear(t, s, p)
			}
			if equalFold(t[p:p+len(s)], s) {
				return p
			}
		}
	}
	return -1
}

// indexFoldLinear is indexFold from t[from:] on (s is at no place
// before), in time linear in len(t)+len(s) (Knuth–Morris–Pratt, comparing
// bytes ignoring ASCII case).
func indexFoldLinear(t, s string, from int) int {
	m := newFoldSearch(s)
	i, _ := m.next(t, from)
	return i
}

// foldSearch finds s in a text ignoring ASCII case, place after place, in
// time linear in the text and s however the places overlap
// (Knuth–Morris–Pratt).
type foldSearch struct {
	s    string
	fail []int32 // the longest proper border of s[:i+1]
	n    int32   // how much of s ends where the last search stopped
}

func newFoldSearch(s string) *foldSearch {
	fail := make([]int32, len(s))
	for i, n := 1, int32(0); i < len(s); i++ {
		for n > 0 && lower(s[i]) != lower(s[n]) {
			n = fail[n-1]
		}
		if lower(s[i]) == lower(s[n]) {
			n++
		}
		fail[i] = n
	}
	return &foldSearch{s: s, fail: fail}
}

// next is the first place of s in t that ends at or after from, given
// that how much of s ends just before from is what m holds (nothing for
// a first search: s is at no place that ends before from), or -1; and
// where the next search goes on.
func (m *foldSearch) next(t string, from int) (int, int) {
	s, fail, n := m.s, m.fail, m.n
	for i := from; i < len(t); i++ {
		for n > 0 && lower(t[i]) != lower(s[n]) {
			n = fail[n-1]
		}
		if lower(t[i]) == lower(s[n]) {
			if n++; int(n) == len(s) {
				m.n = fail[n-1]
				return i + 1 - len(s), i + 1
			}
		}
	}
	m.n = n
	return -1, len(t)
}

func equalFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// occurrence is where an input occurs in a text: [start, end).
type occurrence struct {
	start, end int
	input      int // index in the check's inputs
}

// occurrences appends every place where s occurs in f's text, overlapping
// ones included. ok is false when a bound is reached.
func (f *finder) occurrences(s string, input int, occ []occurrence) ([]occurrence, bool) {
	if !f.mayContain(s) {
		return occ, true
	}
	for from := 0; ; {
		i, ok := f.index(s, from)
		if !ok {
			return occ, false
		}
		if i < 0 {
			return occ, true
		}
		if len(occ) >= maxOccurrences {
			return occ, false
		}
		occ = append(occ, occurrence{i, i + len(s), input})
		from = i + 1
	}
}

// otherCases are what strings.ToUpper and strings.ToLower make of input
// v, which is not ASCII, each unless it is v, or the one before, but for
// ASCII case, or is shorter than taint.MinInputLen: the sinks look for
// those too. Go's case mapping takes some letters to ASCII (ı to I, ſ to
// S, the Kelvin sign K to k), which the finder's folding of ASCII case
// does not follow: an application that upper-cases `ı' OR 1=1 --` writes
// `I' OR 1=1 --`, which is not v in any ASCII case.
func otherCases(v string) (forms [2]string, n int) {
	for _, w := range [2]string{strings.ToUpper(v), strings.ToLower(v)} {
		same := len(w) == len(v) && equalFold(w, v) || n > 0 && len(w) == len(forms[0]) && equalFold(w, forms[0])
		if same || len(w) < taint.MinInputLen {
			continue
		}
		forms[n] = w
		n++
	}
	return forms, n
}

// checkOtherCases checks each of the otherCases of input v with check,
// as the sink checks v itself, to the first that finds something (why)
// or runs out of budget (!ok).
func checkOtherCases(v string, check func(string) (why string, ok bool)) (why string, ok bool) {
	forms, n := otherCases(v)
	for _, w := range forms[:n] {
		if why, ok = check(w); !ok || why != "" {
			return why, ok
		}
	}
	return "", true
}

// isASCII: s has no byte of other than ASCII. Every input a sink looks
// for goes through it, so it reads eight bytes at a time (the last eight
// overlapping, and four for a shorter s).
func isASCII(s string) bool {
	const hi = 0x8080808080808080
	n := len(s)
	switch {
	case n >= 8:
		for i := 0; i+8 < n; i += 8 {
			if load64(s[i:])&hi != 0 {
				return false
			}
		}
		return load64(s[n-8:])&hi == 0
	case n >= 4:
		return (load32(s)|load32(s[n-4:]))&hi == 0
	}
	for i := 0; i < n; i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint64 {
	_ = s[3]
	return uint64(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
}

// trimSpace trims ASCII white space: applications trim what they are
// given, so the input is looked for without it.
func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// trimAnySpace is s without what the trims of common runtimes take off
// its ends, beyond trimSpace's: Go's strings.TrimSpace and Python's strip
// take Unicode's white space (U+00A0, U+2028, U+3000), JavaScript's trim
// U+FEFF too, Java's String.trim every byte up to ' '.
func trimAnySpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' || r == '\ufeff' || unicode.IsSpace(r) })
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
