package learn

import (
	"bytes"
	"strconv"
	"strings"

	paths "github.com/contractguard/contractguard/internal/route"
)

// maxTemplate is the longest route template kept, in bytes; a request
// whose template would be longer is not learned from (it counts as dropped).
const maxTemplate = 256

// templater turns a request's method, router pattern and path into a route
// name, "METHOD template", in contract endpoint syntax. It keeps its
// buffers from one request to the next.
type templater struct {
	segs []string
	name []byte
}

// appendRoute appends the route name of a request to dst. router reports a
// template taken from the router's pattern; ok is false when the request
// cannot be learned from (a method that is not a token, or * or ANY, a
// template over maxTemplate).
func (t *templater) appendRoute(dst []byte, method, pattern, rawPath string) (out []byte, router, ok bool) {
	method = paths.UpperMethod(method)
	if method == "" || len(method) > 32 || paths.MeansEveryMethod(method) { // a contract the loader refuses
		return dst, false, false
	}
	for i := 0; i < len(method); i++ {
		if !tokenChar(method[i]) {
			return dst, false, false
		}
	}
	dst = append(dst, method...)
	dst = append(dst, ' ')
	start := len(dst)
	t.segs = paths.Segments(rawPath, t.segs[:0])
	if pattern != "" {
		if out, ok := t.fromPattern(dst, pattern); ok {
			dst, router = out, true
		} else {
			dst = dst[:start]
		}
	}
	if !router {
		dst = t.infer(dst, start, 0, false)
	}
	if len(dst) == start {
		dst = append(dst, '/')
	}
	return dst, router, len(dst)-start <= maxTemplate
}

func tokenChar(c byte) bool {
	return alnum(c) || strings.IndexByte("!#$%&'*+.^_`|~-", c) >= 0
}

// fromPattern appends the template a router pattern gives the path: chi's
// RoutePattern() ("/users/{id}", "/users/{id:[0-9]+}", "/files/*") or a
// ServeMux pattern ("GET example.com/users/{id}", "/files/{path...}",
// "/{$}"). A wildcard's segments are inferred as a path's are. It fails
// when the pattern does not describe the path.
func (t *templater) fromPattern(dst []byte, pattern string) ([]byte, bool) {
	start := len(dst)
	p := pattern
	if i := strings.IndexByte(p, ' '); i >= 0 { // ServeMux: "METHOD [HOST]/PATH"
		p = strings.TrimLeft(p[i+1:], " \t")
	}
	i := strings.IndexByte(p, '/')
	if i < 0 {
		return dst, false
	}
	p = p[i+1:]    // after the host, if any
	k := 0         // segments of the path consumed
	param := false // the last segment written is a parameter of the pattern
	for p != "" {
		if len(dst)-start > maxTemplate {
			return dst, true // refused by appendRoute: no need to read on
		}
		var ps string
		if j := strings.IndexByte(p, '/'); j >= 0 {
			ps, p = p[:j], p[j+1:]
		} else {
			ps, p = p, ""
		}
		switch {
		case ps == "":
			continue
		case ps == "{$}":
			return dst, p == "" && k == len(t.segs)
		case ps == "*" || strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "...}"):
			return t.infer(dst, start, k, param), p == "" || p == "*"
		case k >= len(t.segs):
			return dst, false
		case strings.IndexByte(ps, '{') >= 0:
			// {name}, chi's {name:regexp}, or a segment that mixes text and
			// parameters ("{name}.{ext}"), which a contract cannot: the whole
			// segment becomes one parameter.
			name := ps[strings.IndexByte(ps, '{')+1:]
			if j := strings.IndexAny(name, ":}"); j >= 0 {
				name = name[:j]
			}
			dst = t.appendParam(dst, start, sanitize(name))
			param = true
		case ps == t.segs[k]:
			dst = appendStatic(dst, ps)
			param = false
		default:
			return dst, false
		}
		k++
	}
	return dst, k == len(t.segs)
}

// infer appends segments from the k-th on, each as a parameter where it
// looks like a value (see looksLikeData), else as it is; a parameter is
// named after the static segment before it, never after the value of a
// pattern's parameter (afterParam: segment k-1 is one). It stops once the
// template is over maxTemplate, which appendRoute refuses: a path may have
// hundreds of thousands of segments, and appendParam's cost grows with the
// template.
func (t *templater) infer(dst []byte, start, k int, afterParam bool) []byte {
	for i := k; i < len(t.segs) && len(dst)-start <= maxTemplate; i++ {
		s := t.segs[i]
		if looksLikeData(s, true) {
			prev := ""
			if i > 0 && !(i == k && afterParam) && !looksLikeData(t.segs[i-1], true) {
				prev = t.segs[i-1]
			}
			t.name = paramName(t.name[:0], prev)
			dst = t.appendParam(dst, start, string(t.name))
		} else {
			dst = appendStatic(dst, s)
		}
	}
	return dst
}

// appendParam appends "/{name}", the name made unique within the template
// begun at start with a number.
func (t *templater) appendParam(dst []byte, start int, name string) []byte {
	at := len(dst)
	dst = append(dst, "/{"...)
	dst = append(dst, name...)
	dst = append(dst, '}')
	for n := 2; bytes.Contains(dst[start:at], dst[at+1:]); n++ {
		dst = append(dst[:at], "/{"...)
		dst = append(dst, name...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '}')
	}
	return dst
}

// appendStatic appends "/" and a static segment, escaping what a contract
// endpoint would read otherwise: %, /, {, }, ? and #, and a leading : or *.
func appendStatic(dst []byte, s string) []byte {
	dst = append(dst, '/')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' || c == '/' || c == '{' || c == '}' || c == '?' || c == '#' || (c == ':' || c == '*') && i == 0:
			dst = append(dst, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// sanitize makes a router's parameter name a contract's: letters, digits
// and _, not starting with a digit.
func sanitize(name string) string {
	ok := name != "" && !('0' <= name[0] && name[0] <= '9')
	for i := 0; ok && i < len(name); i++ {
		ok = alnum(name[i]) || name[i] == '_'
	}
	if ok {
		return name
	}
	var b []byte
	for i := 0; i < len(name); i++ {
		if alnum(name[i]) || name[i] == '_' {
			b = append(b, name[i])
		}
	}
	if len(b) == 0 || '0' <= b[0] && b[0] <= '9' {
		b = append([]byte("p"), b...)
	}
	return string(b)
}

// paramName appends the name of a parameter that follows the static
// segment prev: "users" gives userId, "order-items" orderItemId, none id.
func paramName(dst []byte, prev string) []byte {
	start := len(dst)
	upper := false
	for i := 0; i < len(prev) && len(dst)-start < 32; i++ {
		c := prev[i]
		if !alnum(c) {
			upper = len(dst) > start
			continue
		}
		if len(dst) == start {
			if '0' <= c && c <= '9' {
				dst = append(dst, 'p')
			}
			c = lower(c)
		} else if upper {
			c = upperOf(c)
		}
		upper = false
		dst = append(dst, c)
	}
	word := dst[start:]
	switch {
	case len(word) > 4 && bytes.HasSuffix(word, []byte("ies")):
		dst = append(dst[:len(dst)-3], 'y')
	case len(word) > 4 && (bytes.HasSuffix(word, []byte("sses")) || bytes.HasSuffix(word, []byte("xes"))):
		dst = dst[:len(dst)-2]
	case len(word) > 3 && word[len(word)-1] == 's' && word[len(word)-2] != 's':
		dst = dst[:len(dst)-1]
	}
	if len(dst) == start {
		return append(dst, "id"...)
	}
	return append(dst, "Id"...)
}

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

func upperOf(c byte) byte {
	if isLower(c) {
		return c - ('a' - 'A')
	}
	return c
}

// templateSegment is one segment of a template: static text (decoded) or
// a parameter.
type templateSegment struct {
	static string
	param  string
}

// parseTemplate splits a template the learner wrote.
func parseTemplate(t string) ([]templateSegment, bool) {
	p, err := paths.ParsePattern(t)
	if err != nil {
		return nil, false
	}
	segs := make([]templateSegment, len(p))
	for i, s := range p {
		segs[i] = templateSegment{static: s.Static, param: s.Param}
	}
	return segs, true
}

// joinTemplate writes segments back as a template.
func joinTemplate(segs []templateSegment) string {
	if len(segs) == 0 {
		return "/"
	}
	var b []byte
	for _, s := range segs {
		if s.param != "" {
			b = append(b, "/{"...)
			b = append(b, s.param...)
			b = append(b, '}')
		} else {
			b = appendStatic(b, s.static)
		}
	}
	return string(b)
}
