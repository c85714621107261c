package contractguard

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard/internal/bind"
	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/route"
)

// HandlerFunc is a handler that receives the request body decoded into T,
// after T's contract has passed.
type HandlerFunc[T any] func(w http.ResponseWriter, r *http.Request, data T)

// Handle returns a handler that reads the body, enforces the contract of
// T and of any file contract for the request's route, decodes the body
// into T and calls fn. T's contract is its JSON Schema (reflected from its
// json and jsonschema tags, or the file a blank field names with
// cg:"schema=…", read from Options.SchemaFS) and the CEL rules of its cg
// tags; it is built once per type. A contract that does not build is a
// programmer's mistake: Handle panics with a "contractguard:" message
// naming the type, the field and the reason. [NewHandler] returns the
// error instead.
//
// Decoding into T is case-sensitive and reads the value the schema was
// checked on, without parsing the bytes again; a value the schema accepts
// but T cannot hold (1.0 for an int, 300 for a uint8) is rejected, 400
// SCHEMA_INVALID at its path. Strings in T share the memory of the body
// the guard read (which nothing writes to), so a T kept after the request
// keeps that body alive.
func Handle[T any](g *Guard, fn HandlerFunc[T]) http.Handler {
	h, err := NewHandler(g, fn)
	if err != nil {
		panic(err)
	}
	return h
}

// NewHandler is [Handle] returning the error of a contract that does not
// build.
func NewHandler[T any](g *Guard, fn HandlerFunc[T]) (http.Handler, error) {
	c, err := g.typedContract(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	if !g.opts.Disabled { // a disabled guard has no contract in force
		g.typed.routes.Add(1)
	}
	return &typedHandler[T]{g: g, c: c, fn: fn}, nil
}

// Get registers fn for GET requests to pattern on r, with T's contract,
// and records the route in the guard (see [Post]).
func Get[T any](r chi.Router, g *Guard, pattern string, fn HandlerFunc[T]) {
	register(r, g, http.MethodGet, pattern, fn)
}

// Post registers fn for POST requests to pattern on r, as [Handle] builds
// it. The guard's Middleware, on the same router, finds the route: a file
// contract for the same method and pattern is enforced with T's contract,
// RequireContract counts the route as covered, and contracts_loaded counts
// it. Post panics like Handle on a contract that does not build.
func Post[T any](r chi.Router, g *Guard, pattern string, fn HandlerFunc[T]) {
	register(r, g, http.MethodPost, pattern, fn)
}

// Put registers fn for PUT requests; see [Post].
func Put[T any](r chi.Router, g *Guard, pattern string, fn HandlerFunc[T]) {
	register(r, g, http.MethodPut, pattern, fn)
}

// Patch registers fn for PATCH requests; see [Post].
func Patch[T any](r chi.Router, g *Guard, pattern string, fn HandlerFunc[T]) {
	register(r, g, http.MethodPatch, pattern, fn)
}

// Delete registers fn for DELETE requests; see [Post].
func Delete[T any](r chi.Router, g *Guard, pattern string, fn HandlerFunc[T]) {
	register(r, g, http.MethodDelete, pattern, fn)
}

func register[T any](r chi.Router, g *Guard, method, pattern string, fn HandlerFunc[T]) {
	r.Method(method, pattern, Handle(g, fn))
}

// typedHandler is what Handle returns.
type typedHandler[T any] struct {
	g  *Guard
	c  *compiled
	fn HandlerFunc[T]
}

// typedRoute is implemented by every typed handler, whatever its T.
type typedRoute interface {
	typedContract() (*Guard, *compiled)
}

func (h *typedHandler[T]) typedContract() (*Guard, *compiled) { return h.g, h.c }

func (h *typedHandler[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.g.opts.Disabled {
		h.decodeOnly(w, r)
		return
	}
	r2, ok := h.g.enforce(w, r, routed{c: h.c}, false)
	if !ok {
		return
	}
	v, ok := boundOf(stateOf(r2).values, h.c)
	if !ok { // cannot happen: enforce ran the contract or found it run
		http.Error(w, "contractguard: no decoded value", http.StatusInternalServerError)
		return
	}
	h.fn(w, r2, *v.(*T))
}

// decodeOnly is a typed handler of a disabled guard: the body decoded
// into T, nothing checked, nothing counted. A body too large, not JSON, or
// not a T is still rejected: the handler cannot run without its T.
func (h *typedHandler[T]) decodeOnly(w http.ResponseWriter, r *http.Request) {
	raw, v := readBody(r, h.g.opts.MaxBodyBytes)
	st := &state{guard: h.g, raw: raw}
	if v == nil {
		v = st.parse(h.g.opts.MaxDepth)
	}
	var data T
	if v == nil {
		var fails []Detail
		report := failure.ReportFunc(func(path, message string) { fails = append(fails, Detail{Path: path, Message: message}) })
		if !bind.Into(reflect.ValueOf(&data).Elem(), st.doc.Root(), report) {
			v = newViolation(CodeSchemaInvalid, fails...)
		}
	}
	if v != nil {
		h.g.opts.OnReject(w, r, v)
		return
	}
	h.fn(w, st.attach(r), data) // as with the guard on: Body and User work
}

// typedRegistry holds a guard's typed contracts.
type typedRegistry struct {
	mu     sync.Mutex
	cache  sync.Map     // reflect.Type -> *compiled
	n      int          // reflected schemas compiled, for unique names
	routes atomic.Int64 // typed handlers built: each counts as a contract, and a new one makes chi indexes stale
	chi    sync.Map     // chi.Routes -> *chiIndex
}

// routed is the typed contract of the handler a request is routed to, and
// the router's pattern for it.
type routed struct {
	c       *compiled
	pattern route.Pattern
}

// routedContract asks the router behind the middleware which handler will
// serve r; when it is a typed handler of this guard, it returns its
// contract. Only done when the guard has typed handlers.
func (g *Guard) routedContract(r *http.Request, next http.Handler) routed {
	if g.typed.routes.Load() == 0 {
		return routed{}
	}
	switch n := next.(type) {
	case *http.ServeMux:
		h, pattern := n.Handler(r)
		if c := g.ownTyped(h); c != nil {
			return routed{c, routerPattern(pattern)}
		}
		return routed{}
	case chi.Routes:
		return g.chiTyped(n, r)
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.Routes != nil {
		return g.chiTyped(rctx.Routes, r)
	}
	return routed{}
}

func (g *Guard) ownTyped(h http.Handler) *compiled {
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
	routes  map[string]*compiled
}

var chiContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

func (g *Guard) chiTyped(routes chi.Routes, r *http.Request) routed {
	idx := g.chiIndexOf(routes, "")
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	if path == "" {
		path = "/"
	}
	rctx := chiContexts.Get().(*chi.Context)
	rctx.Reset()
	pattern := routes.Find(rctx, r.Method, path)
	chiContexts.Put(rctx)
	if pattern == "" {
		return routed{}
	}
	key := r.Method + " " + pattern
	c, known := idx.routes[key]
	if !known {
		// A route added since the index was made: walk again. The key is
		// cloned for the index, so that this one stays on the stack.
		c = g.chiIndexOf(routes, strings.Clone(key)).routes[key]
	}
	if c != nil {
		return routed{c, routerPattern(pattern)}
	}
	return routed{}
}

// chiIndexOf is the index of routes' typed handlers, made again when the
// guard's typed routes changed or a request found a pattern it lacks
// (missing, which is then remembered as no typed handler's).
func (g *Guard) chiIndexOf(routes chi.Routes, missing string) *chiIndex {
	v := g.typed.routes.Load() // a disabled guard, whose count stays 0, never routes
	if idx, ok := g.typed.chi.Load(routes); ok && idx.(*chiIndex).version == v && missing == "" {
		return idx.(*chiIndex)
	}
	idx := &chiIndex{version: v, routes: map[string]*compiled{}}
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
func routeOf(r *http.Request, e *routeEntry, typed *compiled) string {
	switch {
	case e != nil:
		return e.contracts[0].endpoint
	case typed == nil:
		return ""
	case r.Pattern != "":
		return r.Pattern
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePattern() != "" {
		return rctx.RoutePattern()
	}
	return typed.endpoint
}

// routerParams are the path parameters chi or ServeMux extracted for r,
// percent-decoded.
func routerParams(r *http.Request) map[string]string {
	m := map[string]string{}
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		for i, k := range rctx.URLParams.Keys {
			if k != "*" && i < len(rctx.URLParams.Values) {
				v, err := url.PathUnescape(rctx.URLParams.Values[i])
				if err != nil {
					v = rctx.URLParams.Values[i]
				}
				m[k] = v
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
	return m
}
