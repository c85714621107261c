// Package route matches request paths to endpoint patterns with a segment
// tree, reading the path as leniently as any router would so that the guard
// is never weaker than the router behind it.
package route

import (
	"errors"
	"fmt"
	"iter"
	"strings"
)

// Segment is one segment of a pattern: a static text, or a parameter.
type Segment struct {
	Static string // decoded text of a static segment
	Param  string // name of a parameter segment; "" for a static one
}

// Pattern is a parsed endpoint pattern.
type Pattern []Segment

// ParsePattern parses an endpoint such as /users/:id/orders/{orderId}.
// Static segments are percent-decoded, empty segments and a trailing slash
// are ignored, as they are in requests.
func ParsePattern(p string) (Pattern, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, errors.New("endpoint must start with /")
	}
	var pat Pattern
	seen := map[string]bool{}
	for _, s := range strings.Split(p[1:], "/") {
		if s == "" {
			continue
		}
		var name string
		switch {
		case s[0] == ':':
			name = s[1:]
		case s[0] == '{' && s[len(s)-1] == '}':
			name = s[1 : len(s)-1]
		case strings.ContainsAny(s, "{}"):
			return nil, fmt.Errorf("segment %q: a parameter must be a whole segment, :name or {name}", s)
		case s[0] == '*':
			// chi's /files/*, Express's /files/*splat: read as the static
			// text *, the contract covered no path the router sends there.
			return nil, fmt.Errorf("segment %q: wildcards are not supported: a contract covers one route shape, its parameters :name or {name} (escape it as %%2A to mean the character)", s)
		}
		if name == "" && (s[0] == ':' || s[0] == '{') {
			return nil, fmt.Errorf("segment %q: parameter without a name", s)
		}
		if name != "" {
			if !validName(name) {
				return nil, fmt.Errorf("segment %q: parameter names are letters, digits and _", s)
			}
			if seen[name] {
				return nil, fmt.Errorf("parameter %q appears twice", name)
			}
			seen[name] = true
			pat = append(pat, Segment{Param: name})
			continue
		}
		if s == "." || s == ".." {
			return nil, fmt.Errorf("segment %q: dot segments are not allowed in an endpoint", s)
		}
		// No request path holds a raw ? or # (they end it), so an endpoint
		// with one was a contract never enforced: a path, without its
		// query. (In a parameter, Express's optional :id?, it is the
		// name's error: escaping it would not make a parameter.)
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			return nil, fmt.Errorf("%q starts a query or a fragment: an endpoint is a path alone (escape it as %%%02X to mean the character)", string(s[i]), s[i])
		}
		pat = append(pat, Segment{Static: unescape(s)})
	}
	return pat, nil
}

func validName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Shape is the pattern with parameter names left out (/a/{x} and /a/:y have
// the same shape): two contracts for one method and one shape conflict.
func (p Pattern) Shape() string {
	if len(p) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		if s.Param != "" {
			b.WriteString("{}")
		} else {
			b.WriteString(escapeSegment(s.Static))
		}
	}
	return b.String()
}

// Params returns the parameter values of a path that matched p.
func (p Pattern) Params(segs []string) map[string]string {
	m := make(map[string]string, len(p))
	for name, v := range p.EachParam(segs) {
		m[name] = v
	}
	return m
}

// EachParam yields the name and value of each parameter of a path that
// matched p, without building Params' map.
func (p Pattern) EachParam(segs []string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i, s := range p {
			if s.Param != "" && i < len(segs) && !yield(s.Param, segs[i]) {
				return
			}
		}
	}
}

func escapeSegment(s string) string {
	if !strings.ContainsAny(s, "/%{}") {
		return s
	}
	r := strings.NewReplacer("%", "%25", "/", "%2F", "{", "%7B", "}", "%7D")
	return r.Replace(s)
}
