package contractguard

import (
	"net/http"
	"reflect"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard/internal/bind"
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
	if !g.opts.Disabled { // a disabled guard routes nothing to its typed handlers
		g.typed.handlers.Add(1)
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
	c  *contract
	fn HandlerFunc[T]
}

// typedRoute is implemented by every typed handler, whatever its T.
type typedRoute interface {
	typedContract() (*Guard, *contract)
}

func (h *typedHandler[T]) typedContract() (*Guard, *contract) { return h.g, h.c }

func (h *typedHandler[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.g.opts.Disabled {
		h.decodeOnly(w, r, nil)
		return
	}
	r2, ok := h.g.enforce(w, r, routed{c: h.c}, false)
	if !ok {
		return
	}
	st := h.g.stateIn(r2)
	if st == nil || st.early {
		// Every contract of the request learns, and its body was refused
		// before any ran (its size or media type): reported, and passed on
		// as it came. The handler still needs its T: decoded as with the
		// guard off, or refused as there.
		h.decodeOnly(w, r2, st)
		return
	}
	data, v := h.value(st)
	if v != nil {
		h.g.opts.OnReject(w, r, v)
		return
	}
	h.fn(w, r2, data)
}

// value is the T the guard decoded for the request when its contract ran
// (on this pass or an earlier one); should it not be there, it is decoded
// now from the parsed body, and a body that is not a T is rejected.
func (h *typedHandler[T]) value(st *state) (T, *Violation) {
	if p, ok := st.boundOf(h.c).(*T); ok {
		return *p, nil // copied, not boxed: reflect's Interface would allocate a copy
	}
	return decode[T](st, h.g.opts.MaxDepth)
}

// decode decodes the body of st into a T, parsing it if no pass has: a
// body that is not JSON is 400 MALFORMED_JSON, a value T cannot hold 400
// SCHEMA_INVALID at its path.
func decode[T any](st *state, maxDepth int) (T, *Violation) {
	var data T
	return data, st.decodeInto(reflect.ValueOf(&data).Elem(), maxDepth)
}

// decodeInto decodes the body of st into v, parsing it if no pass has,
// as decode does.
func (st *state) decodeInto(v reflect.Value, maxDepth int) *Violation {
	if v := st.parse(maxDepth, nil); v != nil {
		return v
	}
	var fails detailList
	if !bind.Into(v, st.parsed().Root(), &fails) {
		sortByPath(fails.details) // found in field order; listed by path, as the schema's are
		return newViolation(CodeSchemaInvalid, fails.listed()...)
	}
	return nil
}

// bindFor makes sure st holds c's Go value of the body (the contract's
// checks bind only a body its schema passed): nil, or the violation of a
// body no such value can be had from, as the typed handler would send
// it.
func (st *state) bindFor(c *contract, maxDepth int) *Violation {
	if st.boundOf(c) != nil {
		return nil
	}
	p := reflect.New(c.body)
	if v := st.decodeInto(p.Elem(), maxDepth); v != nil {
		return v
	}
	if st.values == nil {
		st.values = st.valBuf[:0]
	}
	st.values = append(st.values, boundValue{c, p.Interface()})
	return nil
}

// decodeOnly is a typed handler of a disabled guard: the body decoded
// into T, nothing checked, nothing counted. A body too large, not JSON, or
// not a T is still rejected: the handler cannot run without its T.
//
// It also serves a request whose body was refused early (prev, the early
// state it passed the guard with: see Guard.early). The request it passes
// on may go through the guard again (a handler behind Middleware,
// CheckRequest): its state then says what the early one did, the
// contracts in force and those that ran, so that a later pass neither
// finds no contract set nor runs and reports those contracts again.
func (h *typedHandler[T]) decodeOnly(w http.ResponseWriter, r *http.Request, prev *state) {
	raw, plain, v := readBody(&input{r: r, header: r.Header}, h.g.opts.MaxBodyBytes)
	st := &state{guard: h.g, raw: raw, plain: plain}
	if prev != nil && prev.guard == h.g {
		st.set, st.done, st.wouldBlock = prev.set, slices.Clone(prev.done), prev.wouldBlock
	}
	var data T
	if v == nil {
		data, v = decode[T](st, h.g.opts.MaxDepth)
	}
	if v != nil {
		h.g.opts.OnReject(w, r, v)
		return
	}
	h.fn(w, st.pass(r, true), data) // as with the guard on: Body and User work
}
