package route

import (
	"iter"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/formats"
)

// QueryAsFastify parses a query string as fast-querystring, Fastify's
// parser, does, where url.ParseQuery drops what it finds malformed: pairs
// are split at '&' alone (a ';' belongs to its name or value), a pair at
// its first '=', '+' is a space, and a name or value whose escapes do not
// decode to UTF-8 is kept as sent. It reads the query of the reading that
// ends a path at its first ';' (Hit.OwnQuery).
func QueryAsFastify(s string) url.Values {
	vals := url.Values{}
	for k, v := range FastifyPairs(s) {
		vals[k] = append(vals[k], v)
	}
	return vals
}

// FastifyPairs are the names and values of QueryAsFastify, in the order
// of s, without a map of them.
func FastifyPairs(s string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for s != "" {
			var pair string
			pair, s, _ = strings.Cut(s, "&")
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			if !yield(decodeComponent(k), decodeComponent(v)) {
				return
			}
		}
	}
}

// GoPairs are the pairs of query split at each of seps, as url.ParseQuery
// reads them: a pair with a ';' left in it, or a malformed escape,
// dropped; with seps "&;", as it reads them once http.AllowQuerySemicolons
// has made every ';' a '&'.
func GoPairs(query, seps string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for query != "" {
			var pair string
			if i := strings.IndexAny(query, seps); i >= 0 {
				pair, query = query[:i], query[i+1:]
			} else {
				pair, query = query, ""
			}
			k, v, _ := strings.Cut(pair, "=")
			k, err1 := url.QueryUnescape(k)
			v, err2 := url.QueryUnescape(v)
			if pair == "" || strings.IndexByte(pair, ';') >= 0 || err1 != nil || err2 != nil {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// decodeComponent is s with '+' read as a space and its escapes decoded,
// or s as it is, but for the '+', when an escape is malformed or what they
// decode to is not UTF-8 (as fast-decode-uri-component gives up).
func decodeComponent(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !formats.IsHex(s[i+1]) || !formats.IsHex(s[i+2]) {
			return s
		}
		b = append(b, formats.Unhex(s[i+1])<<4|formats.Unhex(s[i+2]))
		i += 2
	}
	if !utf8.Valid(b) {
		return s
	}
	return string(b)
}
