package route

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tree maps (method, pattern) to values of type T. Lookups walk one node per
// path segment, trying the static child before the parameter child and
// backtracking only when a branch dead-ends, so the most specific pattern
// wins: compared from the left, a static segment beats a parameter.
type Tree[T comparable] struct {
	root  node[T]
	n     int
	upper bool // a static segment has capitals: a path in lower case may match it folded
	depth int  // the segments of the longest pattern
}

// limit is the most segments of a path worth reading: one past the
// longest pattern's, which no path with more matches.
func (t *Tree[T]) limit() int { return t.depth + 1 }

type node[T comparable] struct {
	static map[string]*node[T]
	folded map[string][]*node[T] // the static children by their text in lower case
	// foldedMax is the longest key of folded: a segment of more than
	// four times its bytes folds to a longer key (each rune folds to one
	// byte or more), so it is not folded (a long segment would cost a
	// copy for each lookup of each reading).
	foldedMax int
	param     *node[T]
	methods   map[string]T
}

// Add stores v for method (upper case) and pattern. If the tree already
// holds a value for the same method and shape, Add returns that value and
// false, and stores nothing.
func (t *Tree[T]) Add(method string, p Pattern, v T) (T, bool) {
	n := &t.root
	t.depth = max(t.depth, len(p))
	for _, s := range p {
		if s.Param != "" {
			if n.param == nil {
				n.param = &node[T]{}
			}
			n = n.param
			continue
		}
		if n.static == nil {
			n.static = map[string]*node[T]{}
		}
		c := n.static[s.Static]
		if c == nil {
			c = &node[T]{}
			n.static[s.Static] = c
			if n.folded == nil {
				n.folded = map[string][]*node[T]{}
			}
			lower := string(foldKey(s.Static, nil))
			n.folded[lower] = append(n.folded[lower], c)
			n.foldedMax = max(n.foldedMax, len(lower))
			t.upper = t.upper || lower != s.Static
		}
		n = c
	}
	if old, ok := n.methods[method]; ok {
		return old, false
	}
	if n.methods == nil {
		n.methods = map[string]T{}
	}
	n.methods[method] = v
	t.n++
	var zero T
	return zero, true
}

// Len is the number of values in the tree.
func (t *Tree[T]) Len() int { return t.n }

// Lookup finds the value for method (upper case) and path segments. A HEAD
// request with no HEAD pattern takes the GET one, as net/http's ServeMux
// routes HEAD to GET handlers.
func (t *Tree[T]) Lookup(method string, segs []string) (T, bool) {
	return t.lookup(method, segs, nil)
}

// Visits is the number of tree nodes a lookup visits: what matching costs,
// whatever the number of patterns.
func (t *Tree[T]) Visits(method string, segs []string) int {
	n := 0
	t.lookup(method, segs, &n)
	return n
}

func (t *Tree[T]) lookup(method string, segs []string, visits *int) (T, bool) {
	return t.lookupCase(method, segs, false, visits)
}

// lookupCase is lookup; with fold, a static segment also matches a
// pattern's in any letter case.
func (t *Tree[T]) lookupCase(method string, segs []string, fold bool, visits *int) (T, bool) {
	if v, ok := t.root.find(method, segs, fold, visits); ok {
		return v, true
	}
	if method == "HEAD" {
		return t.root.find("GET", segs, fold, visits)
	}
	var zero T
	return zero, false
}

func (n *node[T]) find(method string, segs []string, fold bool, visits *int) (T, bool) {
	if visits != nil {
		*visits++
	}
	if len(segs) == 0 {
		v, ok := n.methods[method]
		return v, ok
	}
	exact := n.static[segs[0]]
	if exact != nil {
		if v, ok := exact.find(method, segs[1:], fold, visits); ok {
			return v, true
		}
	}
	if fold && n.folded != nil && n.mayFold(segs[0]) {
		var buf [64]byte
		for _, c := range n.folded[string(foldKey(segs[0], buf[:0]))] {
			if c == exact {
				continue
			}
			if v, ok := c.find(method, segs[1:], fold, visits); ok {
				return v, true
			}
		}
	}
	if n.param != nil {
		return n.param.find(method, segs[1:], fold, visits)
	}
	var zero T
	return zero, false
}

// mayFold reports whether seg may fold to a key of n.folded: not when
// it is longer than four times the longest (see foldedMax).
func (n *node[T]) mayFold(seg string) bool {
	return len(seg) <= 4*n.foldedMax
}

// foldKey appends to dst the key of s in any letter case: A-Z in lower
// case, and, in a text with other letters, each letter as the lower case
// of the least of the letters that fold alike (unicode.SimpleFold), with
// İ as "i̇". Two texts that JavaScript's toLowerCase makes one, as
// find-my-way reads a path and its patterns with caseSensitive: false,
// have one key: /api/%E2%84%AAeys (the Kelvin sign, which toLowerCase
// makes k) is /api/keys to Fastify, /API/%C3%84RZTE /api/ärzte, and ΟΔΟΣ
// οδος, its last letter ς. (Some that toLowerCase keeps apart share one,
// ſ and s: stricter, never weaker.) A byte that is not UTF-8 is kept.
func foldKey(s string, dst []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return foldRunes(s[i:], dst)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// foldRunes is foldKey past its first byte that is not ASCII.
func foldRunes(s string, dst []byte) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[i])
		case r == 'İ': // toLowerCase: i and a combining dot above
			dst = append(dst, "i\u0307"...)
		default:
			least := r
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				least = min(least, f)
			}
			dst = utf8.AppendRune(dst, unicode.ToLower(least))
		}
		i += n
	}
	return dst
}

// Match reads rawPath (percent-encoded, without query) as Segments does and
// looks it up. When that reading matches nothing and the path can be read
// another way by some router or handler (see alternateReadings), those
// readings are tried in turn, each that matches nothing as read also with
// the format extension chi's URLFormat middleware cuts (see formatCut);
// when none matches, each reading is looked up so again with static
// segments in any letter case (Express, and Fastify
// with caseSensitive: false, route /API/Users to /api/users, and
// /API/USERS;x=1 or /API/USERS/.. as they route the path in lower case).
// It returns the value and the segments of the reading that matched
// (decoded, for the reading that matches them as sent); segs is appended
// to buf.
func (t *Tree[T]) Match(method, rawPath string, buf []string) (v T, segs []string, ok bool) {
	segs = segments(rawPath, buf[:0], resolveDots, t.limit())
	if v, ok = t.Lookup(method, segs); ok {
		return v, segs, true
	}
	oneWay, fold := t.signs(rawPath)
	if oneWay && !fold {
		return v, nil, false
	}
	var rdBuf [1 + maxAlternates]reading
	rds := appendAlternates(append(rdBuf[:0], reading{raw: rawPath}), rawPath)
	for _, folded := range [2]bool{false, true} {
		if folded && !fold {
			break
		}
		for i, rd := range rds {
			end, n := rd.cuts(t.limit())
			var first [16]string
			var base []string
			for k := range n {
				if k > 0 {
					if base == nil {
						base = rd.upTo(end).segments(first[:0], t.limit())
					}
					if v, segs, ok = t.lookupEmpties(method, rd.upTo(end+k), base, k, folded, buf[:0]); ok {
						return v, segs, true
					}
					continue
				}
				// The main reading as written was looked up above.
				if v, segs, ok = t.lookupReading(method, rd.upTo(end+k), folded, i == 0 && !folded, buf[:0]); ok {
					return v, segs, true
				}
			}
		}
	}
	return v, nil, false
}

// signs reports whether rawPath reads only one way (readsOneWay), and
// whether a lookup in any letter case may find what one in its own case
// does not: the path has a capital (or an escape, which may hide one),
// or a pattern does.
func (t *Tree[T]) signs(rawPath string) (oneWay, fold bool) {
	oneWay, fold = true, t.upper
	for i := 0; i < len(rawPath); i++ {
		switch c := rawPath[i]; {
		case otherWay(rawPath, i): // readsOneWay's signs
			oneWay, fold = false, fold || c == '%'
		case 'A' <= c && c <= 'Z', c >= utf8.RuneSelf: // a letter in upper case, or one not ASCII
			fold = true
		}
	}
	return oneWay, fold
}

// Others appends to dst the values that the other readings of rawPath
// match (see alternateReadings), but for v, the value Match found (if
// ok): a router that reads the path one of those ways sends the request
// to their handler, so they apply too. It costs nothing on a path that
// reads only one way. [Tree.Hits] gives each with its reading.
func (t *Tree[T]) Others(method, rawPath string, v T, ok bool, dst []T) []T {
	var buf [4]Hit[T]
	for _, h := range t.Hits(method, rawPath, v, nil, ok, buf[:0]) {
		if h.V != v && !slices.Contains(dst, h.V) {
			dst = append(dst, h.V)
		}
	}
	return dst
}

// Hit is a value that one reading of a path matched, with the segments
// of that reading: the path parameters and the path of the contracts it
// holds are that reading's, as the router that reads the path that way
// hands them to its handler.
type Hit[T comparable] struct {
	V    T
	Segs []string // the Hit's own
	// OwnQuery marks the reading that ends the path at its first ';'
	// (Fastify with useSemicolonDelimiter): its router reads Query, the
	// text after the ';', and the request's query string, if any, after a
	// '?', as the query string.
	OwnQuery bool
	Query    string
}

// Hits appends to dst what the other readings of rawPath match (see
// alternateReadings; and each reading, the main one too, with static
// segments in any letter case) where they differ from Match's: v, read as segs
// (ok: Match found v; when it found nothing, no reading matches). A
// reading that matches v with other segments, or with a query of its
// own, is a hit of its own, so that v's contracts are checked with each
// reading's parameters and query; two readings that match one value with
// the same segments are one hit. It
// costs nothing on a path that reads only one way; otherwise it
// allocates for a hit (its segments) and for each segment with a '%'
// that a reading decodes.
func (t *Tree[T]) Hits(method, rawPath string, v T, segs []string, ok bool, dst []Hit[T]) []Hit[T] {
	if !ok {
		return dst
	}
	return t.hits(method, rawPath, v, segs, false, dst)
}

// HitsOf appends to dst what every reading of rawPath matches, its main
// reading as written too, where it differs from v read as segs and from
// the hits dst holds: for another form a request's path reaches a router
// in (the path as Go encodes it afresh, url.URL.EscapedPath, which a Go
// reverse proxy forwards), whose readings apply as the path's own do.
func (t *Tree[T]) HitsOf(method, rawPath string, v T, segs []string, dst []Hit[T]) []Hit[T] {
	return t.hits(method, rawPath, v, segs, true, dst)
}

// hits is Hits; with main, the main reading as written counts too.
func (t *Tree[T]) hits(method, rawPath string, v T, segs []string, main bool, dst []Hit[T]) []Hit[T] {
	oneWay, fold := t.signs(rawPath)
	if oneWay && !fold && !main {
		return dst
	}
	// Every reading, each as written and in any letter case: the main
	// reading as written is Match's own (unless main).
	var rdBuf [1 + maxAlternates]reading
	rds := appendAlternates(append(rdBuf[:0], reading{raw: rawPath}), rawPath)
	var buf [16]string
	var valBuf [4]T
	for i, all := range rds {
		end, n := all.cuts(t.limit())
		var first [16]string
		var base []string
		for k := range n {
			rd := all.upTo(end + k)
			if k > 0 && base == nil {
				base = all.upTo(end).segments(first[:0], t.limit())
			}
			// Its format cut, the main reading's too, where its match as
			// written is Match's own. (A cut past the first ends in an
			// empty segment, which has none.)
			if k == 0 {
				dst = t.formatHits(method, rawPath, rd, v, segs, buf[:0], dst)
			}
			for _, folded := range [2]bool{false, true} {
				if i == 0 && !folded && !main || folded && !fold {
					continue
				}
				var ws []string
				var found []T
				if k > 0 {
					ws, found = t.emptiesValues(method, rd, base, k, folded, buf[:0], valBuf[:0])
				} else {
					ws, found = t.readingValues(method, rd, folded, buf[:0], valBuf[:0])
				}
				dst = appendHits(dst, rawPath, rd, v, segs, ws, found)
			}
		}
	}
	return dst
}

// appendHits appends to dst the values found, by rd read as ws, but for
// v read as segs and the hits dst holds.
func appendHits[T comparable](dst []Hit[T], rawPath string, rd reading, v T, segs, ws []string, found []T) []Hit[T] {
	for _, w := range found {
		if w == v && !rd.ownQuery && slices.Equal(ws, segs) || hasHit(dst, w, ws, rd.ownQuery) {
			continue
		}
		h := Hit[T]{V: w, Segs: slices.Clone(ws), OwnQuery: rd.ownQuery}
		if rd.ownQuery {
			h.Query = rawPath[len(rd.raw)+1:]
		}
		dst = append(dst, h)
	}
	return dst
}

// formatHits appends to dst the values the path read rd's way matches
// with its format cut (formatCut), where they are not v or what the
// reading matches as read (those contracts apply already; see formatCut).
func (t *Tree[T]) formatHits(method, rawPath string, rd reading, v T, segs, buf []string, dst []Hit[T]) []Hit[T] {
	if !mayCut(rd.raw) {
		return dst
	}
	rs := rd.segments(buf, t.limit())
	c, ok := t.formatCut(rd, rs)
	if !ok {
		return dst
	}
	asRead, asReadOK := t.lookupCase(method, rs, false, nil)
	for ; ok; c, ok = t.nextCut(rd, c) {
		for _, drop := range c.drops() {
			w, ws, found := t.lookupCut(method, rd, rs, c, drop, false, buf)
			if !found || w == v || asReadOK && w == asRead {
				continue
			}
			dst = appendHits(dst, rawPath, rd, v, segs, ws, []T{w})
			rs = rd.segments(buf, t.limit()) // viewCut wrote over buf
		}
	}
	return dst
}

// readingValues reads the path rd's way into buf and appends to vals
// what it matches: the value a lookup finds as written; with fold, the
// values of the most specific patterns it matches in any letter case,
// as find-my-way routes with caseSensitive: false (the path and the
// patterns read in lower case, a static segment beating a parameter), so
// patterns that differ only by case are all found (foldedFind). It
// returns the reading's segments as its contracts see them
// (reading.view).
func (t *Tree[T]) readingValues(method string, rd reading, fold bool, buf []string, vals []T) ([]string, []T) {
	return t.segmentsValues(method, rd, rd.segments(buf, t.limit()), fold, buf, vals)
}

// segmentsValues is readingValues of rd read as segs (in buf).
func (t *Tree[T]) segmentsValues(method string, rd reading, segs []string, fold bool, buf []string, vals []T) ([]string, []T) {
	if fold {
		vals = t.foldedLookup(method, segs, vals)
	} else if v, ok := t.lookupCase(method, segs, false, nil); ok {
		vals = append(vals, v)
	}
	if len(vals) > 0 && rd.encoded {
		segs = rd.view(buf, t.limit())
	}
	return segs, vals
}

// foldedLookup appends to dst the values for method (HEAD taking GET's
// when it has none) of the most specific patterns segs match in any
// letter case.
func (t *Tree[T]) foldedLookup(method string, segs []string, dst []T) []T {
	root := [1]*node[T]{&t.root}
	n := len(dst)
	if dst = foldedFind(root[:], method, segs, dst); len(dst) == n && method == "HEAD" {
		dst = foldedFind(root[:], "GET", segs, dst)
	}
	return dst
}

// foldedFind is find on the tree read in lower case, where the static
// children of ns whose text folds alike are one node: it walks the set of
// nodes a static segment leads to, and the set of their parameter
// children only when the static ones lead to no pattern, and appends the
// values for method of the set it ends in. Each node is in at most one
// set: the work is bounded by the tree's size.
func foldedFind[T comparable](ns []*node[T], method string, segs []string, dst []T) []T {
	if len(segs) == 0 {
		for _, n := range ns {
			if v, ok := n.methods[method]; ok {
				dst = append(dst, v)
			}
		}
		return dst
	}
	var setBuf [4]*node[T]
	next := setBuf[:0]
	var buf [64]byte
	var lower []byte // indexed as m[string(lower)], which does not allocate
	folded := false
	for _, n := range ns {
		if c := n.static[segs[0]]; c != nil {
			next = append(next, c) // as written (its folded key is the same)
		}
		if !n.mayFold(segs[0]) {
			continue
		}
		if !folded {
			lower, folded = foldKey(segs[0], buf[:0]), true
		}
		for _, c := range n.folded[string(lower)] {
			if !slices.Contains(next, c) {
				next = append(next, c)
			}
		}
	}
	if len(next) > 0 {
		n := len(dst)
		if dst = foldedFind(next, method, segs[1:], dst); len(dst) > n {
			return dst
		}
	}
	next = next[:0]
	for _, n := range ns {
		if n.param != nil {
			next = append(next, n.param)
		}
	}
	if len(next) == 0 {
		return dst
	}
	return foldedFind(next, method, segs[1:], dst)
}

// hasHit reports whether hits holds v read as segs, with the path's own
// query or without.
func hasHit[T comparable](hits []Hit[T], v T, segs []string, ownQuery bool) bool {
	for _, h := range hits {
		if h.V == v && h.OwnQuery == ownQuery && slices.Equal(h.Segs, segs) {
			return true
		}
	}
	return false
}

// withEmpties appends to buf base, the segments of a stripped reading's
// first cut, and k empty segments: the segments of its cut k slashes
// longer (reading.cuts), which ends in an empty segment and has no
// format cut, read without reading its path again (a long segment,
// decoded, would cost its length again for each count).
func withEmpties(buf, base []string, k int) []string {
	buf = append(buf, base...)
	for range k {
		buf = append(buf, "")
	}
	return buf
}

// lookupEmpties is lookupReading of rd, a stripped reading's cut k
// slashes longer than its first, whose segments are base (withEmpties).
func (t *Tree[T]) lookupEmpties(method string, rd reading, base []string, k int, fold bool, buf []string) (T, []string, bool) {
	segs := withEmpties(buf, base, k)
	v, ok := t.lookupCase(method, segs, fold, nil)
	if ok && rd.encoded {
		segs = rd.view(buf, t.limit())
	}
	return v, segs, ok
}

// emptiesValues is readingValues of rd, a stripped reading's cut k
// slashes longer than its first, whose segments are base (withEmpties).
func (t *Tree[T]) emptiesValues(method string, rd reading, base []string, k int, fold bool, buf []string, vals []T) ([]string, []T) {
	return t.segmentsValues(method, rd, withEmpties(buf, base, k), fold, buf, vals)
}

// lookupReading reads the path rd's way into buf and looks it up (with
// fold, static segments in any letter case), returning the value and the reading's segments as its contracts see
// them (reading.view).
func (t *Tree[T]) lookupReading(method string, rd reading, fold, skipRead bool, buf []string) (T, []string, bool) {
	segs := rd.segments(buf, t.limit())
	if !skipRead {
		if v, ok := t.lookupCase(method, segs, fold, nil); ok {
			if rd.encoded {
				segs = rd.view(buf, t.limit())
			}
			return v, segs, ok
		}
	}
	var zero T
	if !mayCut(rd.raw) {
		return zero, nil, false
	}
	for c, ok := t.formatCut(rd, segs); ok; c, ok = t.nextCut(rd, c) {
		for _, drop := range c.drops() {
			if v, ws, ok := t.lookupCut(method, rd, segs, c, drop, fold, buf); ok {
				return v, ws, true
			}
		}
	}
	return zero, nil, false
}

// lookupCut looks segs, the path read rd's way into buf, up as c cuts
// them (with drop, without their emptied last segment; with fold, static
// segments in any letter case), returning the value and the cut's
// segments as its contracts see them (reading.view, into buf).
func (t *Tree[T]) lookupCut(method string, rd reading, segs []string, c formatCutAt, drop, fold bool, buf []string) (T, []string, bool) {
	ws := cutSegments(segs[:c.n], c.last, c.cut, drop)
	v, ok := t.lookupCase(method, ws, fold, nil)
	if ok && rd.encoded {
		ws = t.viewCut(rd, c.last, c.cut, drop, buf)
	}
	return v, ws, ok
}

// formatCut: chi's URLFormat middleware cuts the path chi routes on at
// the last '.' of its last segment (/users/me.json is /users/me, the
// format json; /users/me.json;x=1 is /users/me; /.json is /), wherever it
// runs: after Middleware, or before it, where it sets chi's RoutePath
// and leaves r.URL, which the guard reads, as it was (found by review:
// /users/me.json ran the /users/me handler with only the /users/:id
// contract checked, and /a/b/c.json that of /a/b/c with none). A
// reading's segments are looked up so too: Match, where the reading
// matches nothing as read, and Hits, where the cut matches another value
// than Match's and the reading's as read. (A cut that matches the
// contract the path matches as read is not checked again with the
// parameters of the cut: /items/secret.json is /items/{id} with id
// "secret" behind URLFormat, and "secret.json" to the guard.)
//
// formatCut returns where the last of segs, rd's segments read up to the
// tree's limit, is cut: at its last '.'; false when it has none, or when
// segs fill the limit and dropping the empty rest of the last would leave
// a path not read whole. A "." last segment, kept by those readings, is
// cut to nothing and dropped, as URLFormat cuts it: /orders/../. is
// /orders/.. to chi behind URLFormat and StripSlashes, /orders/{id} with
// id ".." (found by review: no reading matched, and the handler ran
// unchecked). The cuts further URLFormat passes make (nextCut) follow.
func (t *Tree[T]) formatCut(rd reading, segs []string) (formatCutAt, bool) {
	n := len(segs)
	if n == 0 {
		return formatCutAt{}, false
	}
	return t.nextCut(rd, formatCutAt{n: n, last: segs[n-1], cut: len(segs[n-1])})
}

// maxFormatCuts is the most URLFormat passes a path is read cut by: one
// in each router URLFormat runs in, a router, one it mounts and one
// that mounts.
const maxFormatCuts = 3

// nextCut is the cut a further URLFormat pass makes of what c leaves:
// URLFormat in a router and in one it mounts cuts the last segment at
// its last '.' in each (/a/b.json.json is /a/b.json to the first, and /b
// to the mounted one; /orders/.. /orders/. and then /orders/; found by
// review: the guard cut it once, matched no contract, and the handler of
// /a/b ran unchecked); at most maxFormatCuts passes. A cut of ".." to
// "." is passed over: it reads as the same pattern as ".." in the
// readings that keep dot segments.
func (t *Tree[T]) nextCut(rd reading, c formatCutAt) (formatCutAt, bool) {
	for c.pass < maxFormatCuts {
		c.pass++
		c.cut = strings.LastIndexByte(c.last[:c.cut], '.')
		switch {
		case c.cut < 0:
			return formatCutAt{}, false
		case c.cut == 1 && c.last == "..":
			continue
		case c.n < t.limit():
			return c, true
		case c.cut > 0:
			continue // the cut leaves as many segments: more than any pattern's
		}
		var more [8]string
		return c, len(rd.segments(more[:0], t.limit()+1)) == c.n // read whole
	}
	return formatCutAt{}, false
}

// formatCutAt is where formatCut cuts n segments: their last, last, at
// cut, in the pass-th URLFormat pass.
type formatCutAt struct {
	n    int
	last string
	cut  int
	pass int
}

// drops are the ways the cut is looked up: cut, and, when the cut leaves
// the last segment empty, without it.
func (c formatCutAt) drops() []bool {
	if c.cut > 0 {
		return cutOnly
	}
	return cutThenDrop
}

var cutOnly, cutThenDrop = []bool{false}, []bool{false, true}

// mayCut reports a '.' in raw, plain or %2E: one a reading's last
// segment needs for a format cut, looked for without reading it.
func mayCut(raw string) bool {
	return strings.IndexByte(raw, '.') >= 0 || strings.Contains(raw, "%2e") || strings.Contains(raw, "%2E")
}

// cutSegments cuts segs, whose last segment is last, at cut in it; with
// drop, the last segment, empty then, is dropped (/users/.json is
// /users/ to chi, which the guard's patterns read as /users).
func cutSegments(segs []string, last string, cut int, drop bool) []string {
	if drop {
		return segs[:len(segs)-1]
	}
	segs[len(segs)-1] = last[:cut]
	return segs
}

// viewCut is reading.view, into buf, of the segments of rd (encoded) as
// formatCut cut them: the last one cut where it was as sent, then decoded
// (chi's RoutePath as sent has no %2E for URLFormat to cut at).
func (t *Tree[T]) viewCut(rd reading, last string, cut int, drop bool, buf []string) []string {
	segs := rd.view(buf, t.limit())
	if drop {
		return segs[:len(segs)-1]
	}
	segs[len(segs)-1] = unescape(last[:cut])
	return segs
}
