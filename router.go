package contractguard

import (
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard/internal/route"
)

// The router behind the guard: which handler a request goes to, and the
// router's pattern and parameters for it.

// routed is the typed contract of the handler a request is routed to, and
// the router's pattern for it.
type routed struct {
	c       *contract
	pattern route.Pattern
	route   string // the router's pattern as written ("POST /a/{id}", "/a/{id}"); "" when not known
	// path is the path the router matched pattern on, its parameters
	// decoded from its segments if decode (see route.RoutedSegments):
	// they are what the handler gets, whichever reading of the path the
	// guard's file contracts matched.
	path   string
	decode bool
	// later: the router's pattern has a wildcard the guard's patterns
	// cannot express (chi's *, ServeMux's {name...}), so its parameters
	// are the router's alone, which it extracts only as it routes, after
	// Middleware: the typed contract is checked on its handler's own pass,
	// and counts here only as the route's contract (RequireContract).
	later bool
}

// routeName names the typed contract's route in metrics: the router's
// pattern, found without allocating where it can be (ServeMux's, chi's
// for a route not under a mounted router), else the contract's type.
func (t routed) routeName(r *http.Request) string {
	switch {
	case t.c == nil:
		return ""
	case t.route != "":
		return t.route
	case r != nil && r.Pattern != "":
		return r.Pattern
	}
	if r != nil {
		if rctx := chi.RouteContext(r.Context()); rctx != nil && len(rctx.RoutePatterns) == 1 {
			return rctx.RoutePatterns[0]
		}
	}
	return t.c.source
}

// sentPaths reads the path of u, still percent-encoded, in its two
// forms. sent is the path as the client sent it: u.RawPath, which chi
// routes on, when it is u.Path encoded, also where it holds a byte an
// encoded path should not (a raw '{', '|', '"'), for which EscapedPath
// drops it and encodes u.Path afresh, its %2F now a '/' (chi routes
// /files/a%2Fb{ to /files/{name}, EscapedPath reads /files/a/b%7B); else
// u.EscapedPath(), as ServeMux reads it. reencoded is u.EscapedPath()
// when it is not sent: what a Go reverse proxy (httputil.ReverseProxy) or
// client forwarding u sends on, where the client's escapes are decoded
// (/api/users%3Bx{ is forwarded as /api/users;x%7B, which Fastify with
// useSemicolonDelimiter and Spring route to /api/users); else "".
//
// A u.RawPath that is not u.Path encoded was left behind by a middleware
// before the guard that set u.Path alone (r.URL.Path = path.Clean(…)):
// EscapedPath encodes u.Path afresh, as ServeMux reads it, and chi still
// routes on u.RawPath, which is then reencoded (found by review:
// /files/x%2F..%2F..%2Fpublic, cleaned to /public, matched no contract,
// and chi ran the /files/{name} handler unchecked).
func sentPaths(u *url.URL) (sent, reencoded string) {
	p := u.EscapedPath()
	if u.RawPath == "" || p == u.RawPath {
		return p, ""
	}
	if dec, err := url.PathUnescape(u.RawPath); err == nil && dec == u.Path {
		return u.RawPath, p
	}
	return p, u.RawPath
}

// reencodedPath is sentPaths' reencoded for rawPath, a path Check is
// given, read as net/http reads a request's (u.Path decoded, u.RawPath
// as sent): "" when EscapedPath would keep it as it is, a path of the
// bytes an encoded path may hold (no allocation), or when its escapes do
// not decode (a server refuses it).
func reencodedPath(rawPath string) string {
	if !needsEscaping(rawPath) {
		return ""
	}
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return ""
	}
	_, reencoded := sentPaths(&url.URL{Path: p, RawPath: rawPath})
	return reencoded
}

// needsEscaping reports a byte in s that EscapedPath does not keep as
// it is in a RawPath: one other than the letters, digits, '%', '/' and
// -._~!$&'()*+,;=:@[] (url.URL's validEncoded).
func needsEscaping(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("%/-._~!$&'()*+,;=:@[]", c) >= 0:
		default:
			return true
		}
	}
	return false
}

// routedContract asks the router behind the middleware which handler will
// serve r; when it is a typed handler of this guard, it returns its
// contract. Only done when the guard has typed handlers.
func (g *Guard) routedContract(r *http.Request, next http.Handler) routed {
	if g.typed.handlers.Load() == 0 {
		return routed{}
	}
	switch n := next.(type) {
	case *http.ServeMux:
		h, pattern := n.Handler(r)
		if c := g.ownTyped(h); c != nil {
			// ServeMux matches the escaped path, cleaned (a path that is
			// not is redirected), and decodes each segment.
			p := routerPattern(pattern)
			return routed{c: c, pattern: p, route: pattern, path: r.URL.EscapedPath(), decode: true, later: p == nil}
		}
		return routed{}
	case chi.Routes:
		return g.chiTyped(n, r, nil)
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.Routes != nil {
		// Middleware of a chi router (Use, With): chi's context names the
		// root router, and the patterns it has routed the request on so
		// far, through the mounts above the router running Middleware.
		return g.chiTyped(rctx.Routes, r, rctx.RoutePatterns)
	}
	return routed{}
}

func (g *Guard) ownTyped(h http.Handler) *contract {
	if tr, ok := h.(typedRoute); ok {
		if owner, c := tr.typedContract(); owner == g {
			return c
		}
	}
	return nil
}

// chiIndex maps "METHOD /full/pattern" to the typed contract of each route
// of a chi router (nil for a route without one), as chi.Walk lists them,
// sub-routers included. A pattern the index does not know (a route added
// or a router mounted after it was built) makes it walk the router again.
type chiIndex struct {
	version int64
	routes  map[string]*contract
}

var chiContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// chiTyped finds the typed contract of the route of routes that serves r.
// routedBy are the patterns chi routed r on already, from routes down
// (nil when routes is the router Middleware wraps): chi's RoutePath is
// the path left for the router mounted at the last of them, which
// Middleware runs in (sub.Use(g.Middleware) on /m/o/a routes /o/a on
// sub, mounted at /m/*, not on routes; found by review: the root's own
// /o/{org} was found, and its contract enforced).
func (g *Guard) chiTyped(routes chi.Routes, r *http.Request, routedBy []string) routed {
	idx := g.chiIndexOf(routes, "")
	prefix, in := "", routes
	for len(routedBy) > 0 {
		sub := g.chiMounted(in, routedBy[0])
		if sub == nil || len(routedBy) == 1 && !chiMountRan(r) {
			break
		}
		prefix += strings.TrimSuffix(routedBy[0], "/*")
		in, routedBy = sub, routedBy[1:]
	}
	path, encoded := chiRoutePath(r)
	rctx := chiContexts.Get().(*chi.Context)
	rctx.Reset()
	// chi routes on the context's RouteMethod when a middleware set it
	// (GetHead: GET for a HEAD no route takes); and, as the guard checks a
	// HEAD with no HEAD contract against the GET one (SPEC 3.3), a HEAD
	// chi has no route for is looked up as a GET, for a GetHead after
	// Middleware (found by review: HEAD to a typed GET route behind
	// GetHead was 403 NO_CONTRACT under RequireContract).
	method := r.Method
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RouteMethod != "" {
		method = rc.RouteMethod
	}
	pattern := in.Find(rctx, method, path)
	if pattern == "" && method == http.MethodHead {
		rctx.Reset()
		method = http.MethodGet
		pattern = in.Find(rctx, method, path)
	}
	// The patterns chi routed on below the last mount (a With's route)
	// are those Find takes: else the path is not this router's (a
	// handler other than a router mounted), and its route unknown.
	same := len(routedBy) <= len(rctx.RoutePatterns) && slices.Equal(rctx.RoutePatterns[:len(routedBy)], routedBy)
	chiContexts.Put(rctx)
	if pattern == "" || !same {
		return routed{}
	}
	rel := pattern // the pattern over path
	pattern = prefix + pattern
	key := method + " " + pattern
	c, known := idx.routes[key]
	if !known {
		// A route added since the index was made: walk again. The key is
		// cloned for the index, so that this one stays on the stack.
		c = g.chiIndexOf(routes, strings.Clone(key)).routes[key]
	}
	if c != nil {
		// chi's parameters are its path's segments as they are: encoded
		// when it routes on RawPath.
		p := routerPattern(rel)
		if p != nil && len(routedBy) == 0 && g.chiRewriteMoves(routes, in, r, method, prefix, path, encoded, p, c) {
			p = nil // its handler's own pass checks it, with the parameters chi hands it
		}
		return routed{c: c, pattern: p, route: pattern, path: path, decode: encoded, later: p == nil}
	}
	return routed{}
}

// chiRewriteMoves reports whether a chi middleware that may still run
// before in, the router mounted at prefix in routes, routes r (Middleware
// runs before it routes) can make it route r to the typed contract c
// with other parameters than those of routePath (routed as pattern p,
// encoded or not): StripSlashes and URLFormat cut chi's RoutePath, or
// r.URL.Path, decoded, when none is set; CleanPath cleans r.URL.RawPath
// (else r.URL.Path) when none is set. /items/secret%2F is /items/{id}
// with id "secret/" on RawPath, and behind StripSlashes /items/secret,
// id "secret" (found by review: the typed contract was checked here with
// "secret/", and its handler's own pass, finding it done, ran the
// handler with "secret").
func (g *Guard) chiRewriteMoves(routes, in chi.Routes, r *http.Request, method, prefix, routePath string, encoded bool, p route.Pattern, c *contract) bool {
	base, set := r.URL.Path, false
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
		base, set = rctx.RoutePath, true
	}
	type cand struct {
		path    string
		encoded bool
	}
	var cands [8]cand
	n, full := 0, false
	add := func(p string, enc bool) {
		switch {
		case p == "" || p == routePath:
		case n == len(cands):
			full = true
		default:
			cands[n] = cand{p, enc}
			n++
		}
	}
	baseEncoded := set && encoded // a cut of r.URL.Path is decoded; of RoutePath, as chiRoutePath read it
	// StripSlashes and URLFormat, in this router and again in those it
	// mounts, cut base in turn, in any order: URLFormat then
	// StripSlashes make /items/secret%2F.json (r.URL.Path
	// /items/secret/.json) /items/secret, id "secret", and StripSlashes
	// twice /items/secret%2F%2F (found by review: one cut of each alone
	// was read, which no route takes, the contract was checked here with
	// "secret/.json" or "secret//", and the handler ran with "secret").
	// In a mounted router they cut its RoutePath, the rest of the path
	// chi routes on, routePath, as sent where that is RawPath: URLFormat
	// there cuts /secret.json%2Fx to /secret (found by review: only
	// r.URL.Path, /items/secret.json/x, was read cut, which URLFormat
	// leaves, and the handler ran with "secret"). Each cut leaves a
	// shorter path; past as many as cuts holds, the rewrite is taken as
	// moving the route (its handler's own pass then checks it).
	seeds := [2]cand{{base, baseEncoded}, {routePath, encoded}}
	for i, seed := range seeds {
		if i == 1 && seed == seeds[0] {
			break
		}
		var cuts [8]string
		cuts[0] = seed.path
		m := 1
		for i := 0; i < m; i++ {
			b := cuts[i]
			for _, next := range [3]string{stripSlash(b, false), stripSlash(b, true), urlFormatCut(b)} {
				if next == b || slices.Contains(cuts[:m], next) {
					continue
				}
				if m == len(cuts) {
					full = true
					break
				}
				cuts[m] = next
				m++
				add(next, seed.encoded)
			}
		}
	}
	if !set {
		if r.URL.RawPath != "" {
			add(path.Clean(r.URL.RawPath), true)
		} else {
			add(path.Clean(r.URL.Path), false)
		}
	}
	if full {
		return true
	}
	if n == 0 {
		return false
	}
	var buf, alt [16]string
	want := route.RoutedSegments(routePath, encoded, buf[:0])
	idx := g.chiIndexOf(routes, "")
	rctx := chiContexts.Get().(*chi.Context)
	defer chiContexts.Put(rctx)
	for _, cd := range cands[:n] {
		rctx.Reset()
		rel := in.Find(rctx, method, cd.path)
		if rel == "" || idx.routes[method+" "+prefix+rel] != c {
			continue
		}
		q := routerPattern(rel)
		if q == nil || !samePathParams(p, want, q, route.RoutedSegments(cd.path, cd.encoded, alt[:0])) {
			return true
		}
	}
	return false
}

// stripSlash is p as StripSlashes cuts it, one trailing slash (all, as
// in each router it runs in) of a path longer than "/"; else p.
func stripSlash(p string, all bool) string {
	if len(p) <= 1 || p[len(p)-1] != '/' {
		return p
	}
	if !all {
		return p[:len(p)-1]
	}
	if t := strings.TrimRight(p, "/"); t != "" {
		return t
	}
	return "/"
}

// urlFormatCut is p as URLFormat cuts it: at the last '.' after its last
// '/', where a '.' follows its first byte; else p.
func urlFormatCut(p string) string {
	if strings.Index(p, ".") > 0 {
		slash := max(strings.LastIndexByte(p, '/'), 0)
		if dot := strings.LastIndexByte(p[slash:], '.'); dot > 0 {
			return p[:slash+dot]
		}
	}
	return p
}

// samePathParams reports whether pattern p over segs gives the parameters
// q over other does.
func samePathParams(p route.Pattern, segs []string, q route.Pattern, other []string) bool {
	a, b := p.Params(segs), q.Params(other)
	return maps.Equal(a, b)
}

// chiMountRan reports whether the last mount chi routed r through has
// handed it on to its router: Middleware may run before, in the mount's
// own middlewares (r.With(g.Middleware).Mount(…)), where chi's
// RoutePath is still its router's. The mount empties its wildcard's
// value as it hands the request on.
func chiMountRan(r *http.Request) bool {
	rctx := chi.RouteContext(r.Context())
	n := len(rctx.URLParams.Keys) - 1
	return n < 0 || n >= len(rctx.URLParams.Values) || rctx.URLParams.Keys[n] != "*" || rctx.URLParams.Values[n] == ""
}

// chiMount is a pattern a chi router routed on, for chiMounted.
type chiMount struct {
	routes  chi.Routes
	pattern string
}

// chiMounted is the router mounted on routes at pattern ("/m/*"), nil
// when pattern is not a router's mount. Remembered per pattern, which
// comes from routes' registrations (chi mounts once on a pattern), never
// from a client.
func (g *Guard) chiMounted(routes chi.Routes, pattern string) chi.Routes {
	key := chiMount{routes, pattern}
	if sub, ok := g.typed.chiMounts.Load(key); ok {
		return sub.(chiMount).routes
	}
	var sub chi.Routes
	if strings.HasSuffix(pattern, "/*") {
		for _, rt := range routes.Routes() {
			if rt.Pattern == pattern && rt.SubRoutes != nil {
				sub = rt.SubRoutes
				break
			}
		}
	}
	g.typed.chiMounts.Store(key, chiMount{routes: sub})
	return sub
}

// chiIndexOf is the index of routes' typed handlers, made again when the
// guard's typed routes changed or a request found a pattern it lacks
// (missing, which is then remembered as no typed handler's).
func (g *Guard) chiIndexOf(routes chi.Routes, missing string) *chiIndex {
	v := g.typed.handlers.Load() // a disabled guard, whose count stays 0, never routes
	if idx, ok := g.typed.chi.Load(routes); ok && idx.(*chiIndex).version == v && missing == "" {
		return idx.(*chiIndex)
	}
	idx := &chiIndex{version: v, routes: map[string]*contract{}}
	chi.Walk(routes, func(method, pattern string, h http.Handler, _ ...func(http.Handler) http.Handler) error {
		c := g.ownTyped(h)
		idx.routes[method+" "+pattern] = c
		// Walk lists the root of a mounted router as "/api/", where Find
		// reports a request to /api as "/api": the same handler, unless
		// "/api" is a route of its own.
		if root, ok := strings.CutSuffix(pattern, "/"); ok && root != "" {
			if _, listed := idx.routes[method+" "+root]; !listed {
				idx.routes[method+" "+root] = c
			}
		}
		return nil
	})
	if _, listed := idx.routes[missing]; !listed && missing != "" {
		idx.routes[missing] = nil // not a route of Walk's: not walked for again
	}
	g.typed.chi.Store(routes, idx)
	return idx
}

// routerPatterns caches routerPattern: a router has few patterns, and they
// come from its registrations, never from a client.
var routerPatterns sync.Map // string -> route.Pattern

// routerPattern reads a ServeMux ("POST host/a/{id}") or chi
// ("/a/{id:[0-9]+}") pattern as a guard pattern, for request.params; nil
// when it has wildcards the guard's patterns cannot express. Read once per
// pattern.
func routerPattern(p string) route.Pattern {
	if v, ok := routerPatterns.Load(p); ok {
		return v.(route.Pattern)
	}
	pat := parseRouterPattern(p)
	routerPatterns.Store(p, pat)
	return pat
}

func parseRouterPattern(p string) route.Pattern {
	if i := strings.IndexByte(p, ' '); i >= 0 {
		p = p[i+1:] // the method
	}
	if i := strings.IndexByte(p, '/'); i > 0 {
		p = p[i:] // the host
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case s == "*", strings.HasSuffix(s, "...}"):
			return nil
		case s == "{$}":
			segs[i] = ""
		case strings.HasPrefix(s, "{") && strings.Contains(s, ":"):
			segs[i] = s[:strings.IndexByte(s, ':')] + "}"
		}
	}
	pat, err := route.ParsePattern(strings.Join(segs, "/"))
	if err != nil {
		return nil
	}
	return pat
}

// routeOf names the route of a request for a log line: the file
// contract's endpoint, else the router's pattern of a typed route, else
// the typed contract's type; "" when no contract matched.
func routeOf(r *http.Request, e *routeEntry, typed *contract) string {
	switch {
	case e != nil:
		return e.contracts[0].endpoint
	case typed == nil || r == nil:
		return ""
	case r.Pattern != "":
		return r.Pattern
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePattern() != "" {
		return rctx.RoutePattern()
	}
	return typed.endpoint
}

// routerWildcards yields what routerParams leaves out of the path
// parameters chi or ServeMux extracted for r, for the sinks: chi's
// catch-all ("*", percent-decoded as the others) and the {name...}
// wildcards of a ServeMux pattern, which routerPattern does not read
// (routerParams reads its other wildcards). A handler reads them (chi.URLParam(r, "*"), r.PathValue("path"))
// and builds file names from them.
func routerWildcards(r *http.Request, yield func(name, value string) bool) {
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		_, encoded := chiRoutePath(r)
		for i, k := range rctx.URLParams.Keys {
			if k == "*" && i < len(rctx.URLParams.Values) {
				if !yield(k, chiParam(encoded, rctx.URLParams.Values[i])) {
					return
				}
			}
		}
	}
	muxWildcards(r.Pattern, true, func(name string) bool { return yield(name, r.PathValue(name)) })
}

// muxWildcards yields the names of the wildcards of p, a ServeMux pattern
// that routerPattern does not read (one with a {name...} wildcard): those
// of its {name...} wildcards if rest, else those of its plain {name} ones.
func muxWildcards(p string, rest bool, yield func(name string) bool) {
	if p == "" || routerPattern(p) != nil {
		return
	}
	if i := strings.IndexByte(p, '/'); i > 0 {
		p = p[i:] // the method and the host
	}
	for _, s := range strings.Split(p, "/") {
		if len(s) < 3 || s[0] != '{' || s[len(s)-1] != '}' || s == "{$}" {
			continue
		}
		name, isRest := strings.CutSuffix(s[1:len(s)-1], "...")
		if isRest == rest && !yield(name) {
			return
		}
	}
}

// chiParam is the value of a parameter chi extracted for r, decoded when
// encoded, chiRoutePath's verdict on r (read once per request, not per
// parameter): chi routes on r.URL.RawPath, and hands its segments over
// encoded, when the path's escapes are not Go's own; else on r.URL.Path,
// decoded already (/o/a%2561 is "a%61", not "aa"); or on the path a
// middleware or a Mount set (see chiRoutePath).
func chiParam(encoded bool, v string) string {
	if !encoded {
		return v
	}
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

// chiRoutePath is the path chi routes r on, and whether it is still
// percent-encoded: the chi context's RoutePath when a middleware or a
// Mount set it, else r.URL.RawPath when the path's escapes are not Go's
// own, else r.URL.Path. A RoutePath is made from one of those two:
// StripSlashes and URLFormat cut r.URL.Path (decoded), CleanPath and
// GetHead clean or copy r.URL.RawPath when it is set, a Mount passes on
// the rest of the path its router routed on. It is read as encoded unless
// only r.URL.Path can have made it (/o/A%61 from StripSlashes of
// /o/%41%2561/, whose RawPath reads /o/Aa; found by review: chi's
// parameter, decoded already, was decoded again for the typed rules).
func chiRoutePath(r *http.Request) (string, bool) {
	raw := r.URL.RawPath
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
		rp := rctx.RoutePath
		return rp, raw != "" && (madeFrom(rp, raw) || !madeFrom(rp, r.URL.Path))
	}
	switch {
	case raw != "":
		return raw, true
	case r.URL.Path == "":
		return "/", false
	}
	return r.URL.Path, false
}

// madeFrom reports whether rp, a chi RoutePath, can have been made from p
// or from p cleaned (CleanPath): a Mount keeps the rest of its router's
// path from one of its slashes on, StripSlashes and URLFormat cut a
// trailing slash or ".format" off the end; so p ends in rp followed by
// what such cuts take, slashes and "."s up to the next slash
// (/o/'a%25 from /o/'a%2525/ is no such cut: StripSlashes made it from
// /o/'a%25/, decoded; found by review).
func madeFrom(rp, p string) bool {
	return cutFrom(rp, p) || cutFrom(rp, path.Clean(p))
}

// maxCuts bounds the cuts cutFrom tries, one per middleware or Mount in
// the chain (the cost is maxCuts comparisons of rp, whatever the path).
const maxCuts = 8

// cutFrom reports whether p is rp followed by what up to maxCuts cuts of
// StripSlashes and URLFormat take: "", or a '/' or '.' after which every
// slash is followed by '/' or '.' (/a.json/ cut to /a, /a/.json to /a).
func cutFrom(rp, p string) bool {
	if !strings.HasPrefix(rp, "/") {
		return false
	}
	for e, cuts := len(p), 0; e >= len(rp) && cuts <= maxCuts; e-- {
		if e < len(p) {
			if p[e] == '/' && e+1 < len(p) && p[e+1] != '/' && p[e+1] != '.' {
				return false // a slash followed by a segment no cut takes
			}
			if p[e] != '/' && p[e] != '.' {
				continue
			}
			cuts++
		}
		if strings.HasSuffix(p[:e], rp) {
			return true
		}
	}
	return false
}

// routerParams are the path parameters chi or ServeMux extracted for r,
// percent-decoded.
func routerParams(r *http.Request) map[string]string {
	m := map[string]string{}
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		_, encoded := chiRoutePath(r)
		for i, k := range rctx.URLParams.Keys {
			if k != "*" && i < len(rctx.URLParams.Values) {
				m[k] = chiParam(encoded, rctx.URLParams.Values[i])
			}
		}
		if len(m) > 0 {
			return m
		}
	}
	for _, s := range routerPattern(r.Pattern) {
		if s.Param != "" {
			m[s.Param] = r.PathValue(s.Param)
		}
	}
	// A pattern with a {name...} wildcard, which routerPattern does not
	// read: its other wildcards are parameters as well.
	muxWildcards(r.Pattern, false, func(name string) bool {
		m[name] = r.PathValue(name)
		return true
	})
	return m
}
