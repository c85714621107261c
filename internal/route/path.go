package route

import (
	"strings"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/formats"
)

// Segments reads a raw (still percent-encoded) request path the way a
// lenient router would: empty segments (repeated or trailing slashes) are
// dropped, each segment is percent-decoded on its own so an encoded slash
// stays inside its segment, and "." and ".." segments (also when encoded)
// are resolved, ".." never climbing above the root. The segments are
// appended to dst, which lets callers pass a stack buffer.
func Segments(raw string, dst []string) []string {
	return segments(raw, dst, resolveDots, maxSegments)
}

// maxSegments is the limit of segments that reads every segment.
const maxSegments = int(^uint(0) >> 1)

// segmentMode is how segments reads each of a raw path's segments.
type segmentMode uint8

const (
	resolveDots segmentMode = iota // decoded, "." and ".." resolved: Segments
	keepDots                       // decoded, "." and ".." segments like any other, as routers that do not resolve them (chi, Express) read them
	asSent                         // as sent, escapes and dot segments and all, as chi reads r.URL.RawPath
	asSentClean                    // as sent, "." and ".." segments resolved, but not %2e ones, as chi's CleanPath middleware (path.Clean) reads r.URL.RawPath
)

// segments is Segments, each segment read as mode says, keeping at most
// limit of them: a path with more (after its dot segments are resolved)
// gives the first limit, and no more memory or decoding is spent on the
// rest. A tree reads a path with a limit one past its deepest pattern,
// so that a long path costs no more than its bytes to read, and matches
// nothing.
func segments(raw string, dst []string, mode segmentMode, limit int) []string {
	start, over := len(dst), 0 // over: segments past limit, counted, not kept
	resolves := mode == resolveDots || mode == asSentClean
	for len(raw) > 0 {
		var s string
		if i := strings.IndexByte(raw, '/'); i >= 0 {
			s, raw = raw[:i], raw[i+1:]
		} else {
			s, raw = raw, ""
		}
		if s == "" {
			continue
		}
		switch mode.dots(s) {
		case 1:
			continue
		case 2:
			switch {
			case over > 0:
				over--
			case len(dst) > start:
				dst = dst[:len(dst)-1]
			}
			continue
		}
		if len(dst)-start >= limit {
			if !resolves {
				return dst // no ".." takes one away again
			}
			over++
			continue
		}
		if mode != asSent && mode != asSentClean {
			s = unescape(s)
		}
		dst = append(dst, s)
	}
	return dst
}

// dots is 1 for a "." segment and 2 for a ".." one, as mode resolves
// them (resolveDots also when encoded, as decoded they are); 0 for any
// other segment, or when mode keeps them.
func (mode segmentMode) dots(s string) int {
	switch mode {
	case resolveDots:
		return dotCount(s)
	case asSentClean:
		switch s {
		case ".":
			return 1
		case "..":
			return 2
		}
	}
	return 0
}

// reading is one way of reading a raw path into segments.
type reading struct {
	raw     string
	literal bool // dot segments are segments, not resolved
	encoded bool // segments are matched as sent, escapes and all; dot segments are segments
	cleaned bool // with encoded: "." and ".." segments, as sent, are resolved
	// empties: with literal or encoded, an empty segment between two
	// slashes is a segment (chi matches a parameter to it: /users//orders
	// is /users/{id}/orders with id ""); a leading and a trailing slash
	// are not.
	empties bool
	// trailing: with empties, a trailing slash ends the path in an empty
	// segment too (find-my-way, Fastify's router, matches a parameter to
	// it: /users/ is /users/:id with id "").
	trailing bool
	// stripped: with empties, raw ends in two or more slashes, and the
	// reading stands for raw with them cut to each count (see cuts and
	// appendStripped): chi behind StripSlashes, which cuts one in each
	// router it runs in, and Mounts matches a parameter to each empty
	// segment that leaves.
	stripped bool
	// ownQuery: raw is the path up to its first ';', and what follows is
	// the query string (find-my-way's useSemicolonDelimiter, Fastify's
	// router option: /users/7;debug=1 is /users/7 with query debug=1).
	ownQuery bool
}

// segments are the segments the reading looks up, at most limit of them
// (see segments).
func (r reading) segments(dst []string, limit int) []string {
	switch {
	case r.empties:
		return segmentsWithEmpties(r.raw, dst, !r.encoded, r.trailing, limit)
	case r.encoded && r.cleaned:
		return segments(r.raw, dst, asSentClean, limit)
	case r.encoded:
		return segments(r.raw, dst, asSent, limit)
	case r.literal:
		return segments(r.raw, dst, keepDots, limit)
	}
	return segments(r.raw, dst, resolveDots, limit)
}

// view are the segments a reading that matched gives its contracts:
// those it looked up, decoded where it matched them encoded, as the
// guard's parameters always are (Express decodes a parameter it matched
// encoded; chi hands it over encoded, and router.go decodes it).
func (r reading) view(dst []string, limit int) []string {
	switch {
	case r.empties:
		return segmentsWithEmpties(r.raw, dst, true, r.trailing, limit)
	case r.encoded && r.cleaned:
		start := len(dst)
		dst = segments(r.raw, dst, asSentClean, limit)
		for i := start; i < len(dst); i++ {
			dst[i] = unescape(dst[i])
		}
		return dst
	case r.encoded:
		return segments(r.raw, dst, keepDots, limit)
	}
	return r.segments(dst, limit)
}

// alternateReadings lists the other ways a router or handler may read raw,
// for paths where readings differ:
//   - with encoded slashes decoded before the split, dot segments
//     resolved (a handler that cleans r.URL.Path) and, where it has some,
//     kept (gin and httprouter route r.URL.Path as Go decodes it, dot
//     segments and all: /users/..%2Fadmin is /users/:id/admin with id
//     "..");
//   - with ";" parameters removed from every segment (servers that strip
//     matrix parameters);
//   - ended at the first ";", what follows it being the query string
//     (Fastify with useSemicolonDelimiter), dot segments kept as
//     find-my-way keeps them;
//   - with dot segments kept as segments (chi, Express and Fastify route
//     /users/.. to /users/:id with id "..");
//   - with escapes left as they were sent (chi routes on r.URL.RawPath
//     when the path's escapes are not Go's own, and Express matches the
//     path as sent, then decodes the parameters: both route /users/m%65
//     to /users/:id, not to /users/me);
//   - with escapes left as they were sent, and "." and ".." segments, as
//     sent, resolved (chi behind its CleanPath middleware, which cleans
//     r.URL.RawPath with path.Clean: /users/m%65/x/.. is /users/m%65);
//   - with an empty segment between two slashes kept, dot segments kept,
//     decoded and as sent (chi routes /users//orders to
//     /users/{id}/orders, id ""), and with encoded slashes decoded
//     (chi routes r.URL.Path behind StripSlashes: /users/%2Forders/ is
//     /users/{id}/orders too), and, where it ends in two or more
//     slashes, with them cut to each count (chi behind StripSlashes, a
//     Mount ending in parameters: /articles/// is /articles// to it,
//     id "", /a//// is /a/// to one at /a/{x}/{y}, and
//     /articles//comments// is /articles//comments/ to one at
//     /articles/{id}/comments), also those a last segment that is a
//     format alone leaves (URLFormat: /articles//comments//.json);
//   - without its last segments where they are a format alone, dot
//     segments kept (URLFormat, StripSlashes and URLFormat in a mounted
//     router: /a/b.json/.json is /b to the router mounted at /a).
//
// It returns nil when raw reads only one way.
func alternateReadings(raw string) []reading {
	return appendAlternates(nil, raw)
}

// maxAlternates bounds the alternate readings of a path.
const maxAlternates = 22

// appendAlternates appends raw's alternate readings to dst: at most
// maxAlternates, so that a stack buffer of that size holds them.
func appendAlternates(dst []reading, raw string) []reading {
	if readsOneWay(raw) {
		return dst
	}
	if hasEncodedSlash(raw) {
		decoded := decodeSlashes(raw)
		dst = append(dst, reading{raw: decoded})
		if plain, _ := dotSegments(decoded); plain {
			dst = append(dst, reading{raw: decoded, literal: true})
		}
		first, cut := urlFormatCuts(decoded)
		dst = appendFormatCuts(dst, decoded, first, cut)
		if hasEmptySegment(decoded) {
			// chi routing on r.URL.Path (after StripSlashes or URLFormat
			// made its RoutePath of it) matches a parameter to the empty
			// segment a %2F beside a '/' leaves: /users/%2Forders/ is
			// /users/{id}/orders with id "" (found by review: no
			// reading kept it, and the handler ran unchecked).
			dst = append(dst, reading{raw: decoded, literal: true, empties: true})
			dst = appendStripped(dst, reading{raw: decoded, literal: true, empties: true}, cut)
		}
	}
	if i := strings.IndexByte(raw, ';'); i >= 0 {
		dst = append(dst, reading{raw: stripMatrix(raw)}, reading{raw: raw[:i], literal: true, ownQuery: true})
		if hasEmptySegment(raw[:i]) || hasTrailingSlash(raw[:i]) {
			// find-my-way ends the path there, then matches a parameter
			// to an empty segment: /users/;x=1 is /users/:id with id ""
			// and the query x=1.
			dst = append(dst, reading{raw: raw[:i], literal: true, empties: true, trailing: true, ownQuery: true})
		}
	}
	if plain, _ := dotSegments(raw); plain {
		dst = append(dst, reading{raw: raw, literal: true})
	}
	first, cut := urlFormatCuts(raw)
	dst = appendFormatCuts(dst, raw, first, cut)
	if strings.IndexByte(raw, '%') >= 0 {
		dst = append(dst, reading{raw: raw, encoded: true})
		if hasSentDotSegment(raw) {
			dst = append(dst, reading{raw: raw, encoded: true, cleaned: true})
		}
	}
	if hasEmptySegment(raw) {
		dst = append(dst, reading{raw: raw, literal: true, empties: true})
		dst = appendStripped(dst, reading{raw: raw, literal: true, empties: true}, cut)
		if strings.IndexByte(raw, '%') >= 0 {
			dst = append(dst, reading{raw: raw, encoded: true, empties: true})
			dst = appendStripped(dst, reading{raw: raw, encoded: true, empties: true}, cut)
		}
	}
	if hasTrailingSlash(raw) {
		// find-my-way (Fastify, without ignoreTrailingSlash) matches a
		// parameter to the empty segment a trailing slash ends the path
		// in: /users/ is /users/:id with id "" (found by review: every
		// reading dropped it, and Fastify ran the /users/:id handler on a
		// body its contract refuses).
		dst = append(dst, reading{raw: raw, literal: true, empties: true, trailing: true})
	}
	return dst
}

// appendFormatCuts appends to dst the readings of raw without its last
// segments that are a format alone, cut by urlFormatCuts to first and
// cut: URLFormat (and StripSlashes) cut a last segment that is a format
// alone, then the segment before it (urlFormatCuts), as many as the
// passes that run (first, then each last segment cut by formatCut).
func appendFormatCuts(dst []reading, raw, first, cut string) []reading {
	if first != "" && first != cut {
		dst = append(dst, reading{raw: first, literal: true})
	}
	if len(cut) < len(raw) {
		dst = append(dst, reading{raw: cut, literal: true})
	}
	return dst
}

// appendStripped appends to dst raw, a path read with its empty
// segments (literal, or encoded), marked to be read also with its
// trailing slashes cut as chi behind StripSlashes (which cuts one, once
// in each router it runs in) and Mounts (whose "/*" takes one, and whose
// "/" route the rest, cut) routes them: to each count from one up, as
// ending in each count of empty segments from none up, which parameters
// a Mount ends in match (/articles/{id} mounted, /articles/// is
// /articles// to it, id "", and its "/" route; /a/{x}/{y} mounted,
// /a//// is /a/// to it, x and y ""; /articles/{id}/comments mounted,
// /articles//comments// is /articles//comments/, id ""; found by
// review: no reading matched, and the handler ran unchecked). Fewer
// slashes cut than are there leave a path that reads as more empty
// segments, which may match a pattern of more parameters: each count is
// read, as far as the tree's patterns reach (reading.cuts).
//
// cut is rd.raw as urlFormatCuts cuts it: where that differs, rd is also
// appended so cut, as StripSlashes then URLFormat then StripSlashes
// again route it (/a/////.json/ is /a/////.json, /a////, then /a/// to
// chi, which a router mounted at /a/{x}/{y} hands on as "//" to one
// mounted at /{z}, z ""; found by review: urlFormatCuts left a path
// ending in a slash as it was, no reading dropped the format alone, and
// the handler ran unchecked).
func appendStripped(dst []reading, rd reading, cut string) []reading {
	dst = appendStrippedOne(dst, rd)
	if cut != rd.raw {
		rd.raw = cut
		dst = appendStrippedOne(dst, rd)
	}
	return dst
}

// appendStrippedOne appends rd to dst, marked stripped, where rd.raw
// ends in two or more slashes after a segment.
func appendStrippedOne(dst []reading, rd reading) []reading {
	t := strings.TrimRight(rd.raw, "/")
	if t == "" || len(rd.raw)-len(t) < 2 {
		return dst
	}
	rd.stripped = true
	return append(dst, rd)
}

// cuts are the readings r stands for: r itself (end len(r.raw), n 1),
// or, stripped, r up to end+k (r.upTo) for each k below n: the path with
// k+1 of its trailing slashes, read as ending in k empty segments, for
// each k whose segments fit limit (none past it matches a pattern).
func (r reading) cuts(limit int) (end, n int) {
	if !r.stripped {
		return len(r.raw), 1
	}
	t := strings.TrimRight(r.raw, "/")
	lo := strings.Count(t, "/") // t's segments, its empty ones too
	return len(t) + 1, max(0, min(len(r.raw)-len(t), limit-lo))
}

// upTo is r read up to end, one of its cuts.
func (r reading) upTo(end int) reading {
	r.raw, r.stripped = r.raw[:end], false
	return r
}

// urlFormatCuts gives cut, raw as chi's URLFormat cuts it where that leaves it
// ending in a slash: its trailing slashes cut first, as StripSlashes
// (in this router or one before) and CleanPath cut them, up to the '/'
// before a last segment that is its
// format alone (".json", or ".", or ".a.b", which one pass in each
// router URLFormat runs in cuts to nothing), whose trailing slashes
// appendStripped reads cut, as StripSlashes after URLFormat and a Mount
// route them (/articles//comments//.json is /articles//comments/ to chi
// behind both, which a router mounted at /articles/{id}/comments takes
// with id ""; found by review: the readings that cut the format kept an
// empty segment, or dropped the empty id, and the handler ran
// unchecked); and, where the segment before those slashes is a format
// alone too, up to the '/' before it (StripSlashes cut the slashes
// between), at most maxFormatCuts dots in all; else raw. What it leaves
// is read too, its last segment cut as formatCut cuts it
// (/a/b.json/.json is /a/b.json/ to URLFormat, /a/b.json to StripSlashes
// and /b to URLFormat in a router mounted at /a; found by review: no
// reading cut the segment before the format, and the handler of /a/b ran
// unchecked). (The segment is read decoded, as URLFormat reads
// r.URL.Path: a %2E in a RoutePath as sent, which it does not cut, is
// read cut, stricter; its dots are counted as sent where it starts with
// one, the fewer passes.)
//
// And first, raw without its first
// format alone only: where fewer URLFormat passes run than its formats
// alone take, the segment before them is a format alone left as it is
// (/a/.b/.json/.json is /a/.b/ to URLFormat twice, which a router
// mounted at /a/{x} takes with x ".b"; found by review: the guard cut
// .b too, matched nothing, and the handler ran unchecked). first read
// with its last segment cut (formatCut) gives the path each count of
// passes between leaves. first is cut where raw has one format alone.
func urlFormatCuts(raw string) (first, cut string) {
	budget, t := maxFormatCuts, strings.TrimRight(raw, "/")
	for {
		i := strings.LastIndexByte(t, '/')
		if i < 0 {
			return first, raw
		}
		if seg := t[i+1:]; seg == "" || seg[0] != '.' && !strings.HasPrefix(seg, "%2e") && !strings.HasPrefix(seg, "%2E") {
			return first, raw // not a format alone: no need to decode it
		}
		last := unescape(t[i+1:])
		dots := strings.Count(last, ".")
		if seg := t[i+1:]; seg[0] == '.' {
			// As sent (chi's RoutePath behind CleanPath, or on RawPath in
			// a mounted router), a %2e is no dot for URLFormat to cut at:
			// .j%2e%2e%2e%2e is one pass's format alone.
			dots = strings.Count(seg, ".")
		}
		if last[0] != '.' || dots > budget {
			return first, raw
		}
		budget -= dots
		raw, t = t[:i+1], strings.TrimRight(t[:i], "/")
		if first == "" {
			first = raw
		}
	}
}

// hasTrailingSlash reports a path that ends in a '/' after a segment,
// which find-my-way reads as an empty last segment.
func hasTrailingSlash(raw string) bool {
	return len(raw) > 1 && raw[len(raw)-1] == '/'
}

// hasEmptySegment reports an empty segment between two slashes, which
// the other readings drop (a leading and a trailing slash do not make
// one).
func hasEmptySegment(raw string) bool {
	raw = strings.TrimSuffix(strings.TrimPrefix(raw, "/"), "/")
	return strings.HasPrefix(raw, "/") || strings.HasSuffix(raw, "/") || strings.Contains(raw, "//")
}

// RoutedSegments appends to dst the segments of raw, the path a router
// matched a pattern on (chi's r.URL.RawPath or r.URL.Path, ServeMux's
// cleaned escaped path), as the router reads its parameters from them:
// split at each '/', an empty segment between two slashes kept (chi
// matches a parameter to it), dot segments kept; each decoded if decode.
func RoutedSegments(raw string, decode bool, dst []string) []string {
	return segmentsWithEmpties(raw, dst, decode, false, maxSegments)
}

// segmentsWithEmpties appends raw's segments to dst as chi splits the
// path it routes on: without its leading and a trailing slash, an empty
// segment between two slashes kept, dot segments kept; each decoded if
// decode; at most limit of them. With trailing, a trailing slash ends
// them in an empty segment, as find-my-way splits a path.
func segmentsWithEmpties(raw string, dst []string, decode, trailing bool, limit int) []string {
	raw = strings.TrimPrefix(raw, "/")
	if !trailing {
		raw = strings.TrimSuffix(raw, "/")
	}
	if raw == "" {
		return dst
	}
	for n := 0; n < limit; n++ {
		s, rest, more := strings.Cut(raw, "/")
		if decode {
			s = unescape(s)
		}
		dst = append(dst, s)
		if !more {
			return dst
		}
		raw = rest
	}
	return dst
}

// hasSentDotSegment reports a segment that is "." or "..", as sent (not
// %2e).
func hasSentDotSegment(raw string) bool {
	for len(raw) > 0 {
		s := raw
		if i := strings.IndexByte(raw, '/'); i >= 0 {
			s, raw = raw[:i], raw[i+1:]
		} else {
			raw = ""
		}
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// readsOneWay reports a path with none of the signs every other reading
// needs ('%', ';', '.', "//", a trailing '/'): one pass, where alternateReadings looks
// for each reading's own sign.
func readsOneWay(raw string) bool {
	for i := 0; i < len(raw); i++ {
		if otherWay(raw, i) {
			return false
		}
	}
	return true
}

// otherWay reports whether byte i of raw lets routers read it another
// way: an escape, a ';', a '.', a "//", or a trailing slash.
func otherWay(raw string, i int) bool {
	switch raw[i] {
	case '%', ';', '.':
		return true
	case '/':
		return i+1 < len(raw) && raw[i+1] == '/' || i > 0 && i+1 == len(raw)
	}
	return false
}

// hasDotSegment reports a segment that is "." or "..", also encoded
// (%2e), without allocating; or one that is up to the path's first ';',
// as a router that ends the path there reads it.
func hasDotSegment(raw string) bool {
	plain, cut := dotSegments(raw)
	return plain || cut
}

// dotSegments reports whether a segment of raw is a dot segment (plain),
// and whether the one that holds raw's first ';' is, up to it (cut).
func dotSegments(raw string) (plain, cut bool) {
	if strings.IndexByte(raw, '.') < 0 && strings.IndexByte(raw, '%') < 0 {
		return false, false
	}
	semi := false
	for len(raw) > 0 && !plain {
		s := raw
		if i := strings.IndexByte(raw, '/'); i >= 0 {
			s, raw = raw[:i], raw[i+1:]
		} else {
			raw = ""
		}
		plain = isDotSegment(s)
		if j := strings.IndexByte(s, ';'); j >= 0 && !semi {
			semi, cut = true, isDotSegment(s[:j])
		}
	}
	return plain, cut
}

// isDotSegment reports "." or "..", each dot plain or %2e.
func isDotSegment(s string) bool { return dotCount(s) > 0 }

// dotCount is 1 for "." and 2 for "..", each dot plain or %2e (what
// decodes to "." or ".."); 0 for any other segment.
func dotCount(s string) int {
	dots := 0
	for i := 0; i < len(s); dots++ {
		switch {
		case dots == 2:
			return 0
		case s[i] == '.':
			i++
		case s[i] == '%' && i+2 < len(s) && s[i+1] == '2' && (s[i+2] == 'e' || s[i+2] == 'E'):
			i += 3
		default:
			return 0
		}
	}
	return dots
}

func hasEncodedSlash(s string) bool {
	return strings.Contains(s, "%2F") || strings.Contains(s, "%2f")
}

// decodeSlashes turns %2F into / and leaves every other escape for
// Segments to decode, so that nothing is decoded twice.
func decodeSlashes(s string) string {
	return slashes.Replace(s)
}

var slashes = strings.NewReplacer("%2F", "/", "%2f", "/")

// stripMatrix removes ";..." from the end of every segment.
func stripMatrix(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for {
		s, rest, more := strings.Cut(raw, "/")
		if j := strings.IndexByte(s, ';'); j >= 0 {
			s = s[:j]
		}
		b.WriteString(s)
		if !more {
			return b.String()
		}
		b.WriteByte('/')
		raw = rest
	}
}

// unescape decodes %XX sequences; an invalid sequence is kept as it is, as
// no router can decode it either. It does not allocate when s has no '%'.
func unescape(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && formats.IsHex(s[i+1]) && formats.IsHex(s[i+2]) {
			b = append(b, formats.Unhex(s[i+1])<<4|formats.Unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// UpperMethod returns the method in upper case, without allocating when it
// already is.
func UpperMethod(m string) string {
	for i := 0; i < len(m); i++ {
		if 'a' <= m[i] && m[i] <= 'z' {
			return strings.ToUpper(m)
		}
	}
	return m
}

// MeansEveryMethod reports a method token a contract may not name, upper
// case: "*" and "ANY", written for every method, which no request uses (a
// contract of one would check nothing; learning does not learn one).
func MeansEveryMethod(upper string) bool { return upper == "*" || upper == "ANY" }

// Join renders segments as a clean path: "/a/b", "/" for none.
func Join(segs []string) string {
	if len(segs) == 0 {
		return "/"
	}
	n := 0
	for _, s := range segs {
		n += 1 + len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range segs {
		b = append(b, '/')
		b = append(b, s...)
	}
	return string(b)
}

// Clean is the path read the main way, for messages: the matched segments
// when there are some, else raw read afresh, up to its first
// failure.MaxEcho segments (the longest path a message repeats is shorter
// than they are joined: what is left out would be clipped).
func Clean(segs []string, raw string) string {
	if segs == nil {
		segs = segments(raw, nil, resolveDots, failure.MaxEcho)
	}
	return Join(segs)
}
