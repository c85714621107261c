package contractguard

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvariants_Variables(t *testing.T) {
	g := mustNew(t, Options{
		Contracts: []Contract{{
			Endpoint: "/shops/{shop}/orders/:id", Method: "PUT",
			Invariants: []Invariant{
				{Expr: "request.params.shop == 'acme' && request.params.id == 'a/b'", Message: "params"},
				{Expr: "request.query.dry == '1' && !has(request.query.other)", Message: "query"},
				{Expr: "request.headers['x-tenant'] == 'acme'", Message: "headers"},
				{Expr: "request.method == 'PUT' && request.path == '/shops/acme/orders/a/b'", Message: "method and path"},
				{Expr: "context.user.role == 'admin' && request.body.amount <= context.user.limit", Message: "user"},
			},
		}},
		User: func(r *http.Request) any {
			return map[string]any{"role": "admin", "limit": 100, "sub": r.Header.Get("X-Sub")}
		},
	})
	e := &echo{}
	h := g.Middleware(e)
	w := send(h, "put", "/shops/acme/orders/a%2Fb?dry=1&dry=2", `{"amount":99.5}`, "X-Tenant", "acme", "X-Sub", "u1")
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, "u1", User(e.r).(map[string]any)["sub"])

	eb := rejected(t, send(h, "PUT", "/shops/acme/orders/a%2Fb?dry=0", `{"amount":101}`, "X-Tenant", "other"), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "query"}, {"", "headers"}, {"", "user"}}, eb.Details)
}

// TestMiddleware_PassesTheContextOn: the context a passed request carries
// holds the guard's state and is otherwise the caller's: its values, its
// cancellation (also through a context the handler derives), its deadline.
func TestMiddleware_PassesTheContextOn(t *testing.T) {
	g := testdataGuard(t)
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	var seen, derived context.Context
	var stop context.CancelFunc
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Context()
		derived, stop = context.WithCancel(r.Context())
		_, ok := Body(r)
		assert.True(t, ok)
		b, _ := io.ReadAll(r.Body)
		assert.NoError(t, r.Body.Close())
		assert.Equal(t, int64(len(b)), r.ContentLength)
	}))
	order := readFile(t, "testdata/bodies/order.json")
	r := httptest.NewRequest("POST", "/api/orders", strings.NewReader(order)).WithContext(parent)
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), r)
	require.NotNil(t, seen)
	defer stop()
	assert.Equal(t, "v", seen.Value(key{}))
	dl, ok := seen.Deadline()
	pdl, _ := parent.Deadline()
	assert.True(t, ok)
	assert.Equal(t, pdl, dl)
	assert.NoError(t, seen.Err())
	cancel()
	<-seen.Done()
	<-derived.Done()
	assert.ErrorIs(t, derived.Err(), context.Canceled)
}

func TestUser_NoOptionIsEmptyMap(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "GET",
		Invariants: []Invariant{{Expr: "size(context.user) == 0", Message: "empty"}}}}})
	e := &echo{}
	assert.Equal(t, 200, send(g.Middleware(e), "GET", "/t", "").Code)
	assert.Nil(t, User(e.r))
	assert.Nil(t, User(httptest.NewRequest("GET", "/", nil)))
}

// TestRelease_ClearsDetailsToCapacity: a run cuts a pooled request's
// details back to [:0] before each contract (learning mode runs several),
// so the strings of an earlier contract can sit past the length the last
// one left; release empties the whole array it keeps for the next Check,
// so that no body's strings stay reachable from the pool.
func TestRelease_ClearsDetailsToCapacity(t *testing.T) {
	full := []Detail{{"/a", "earlier contract"}, {"/b", "earlier contract"}, {"/c", "earlier contract"}}
	q := requests.Get().(*request) // release puts it back: only the pool makes requests
	q.details = full[:1]
	q.release(nil, nil)
	assert.Equal(t, make([]Detail, len(full)), full)
}

// TestMiddleware_RejectionsOwnTheirDetails: the guard's requests go back
// to a pool once decided, Middleware's as Check's; a violation a hook
// keeps has details of its own, which the next request does not touch.
func TestMiddleware_RejectionsOwnTheirDetails(t *testing.T) {
	var kept []*Violation
	g := mustNew(t, Options{
		Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{
			"type": "object", "required": []any{"a"},
			"properties": map[string]any{"a": map[string]any{"type": "string", "maxLength": 2}}}}},
		OnReject: func(w http.ResponseWriter, r *http.Request, v *Violation) {
			kept = append(kept, v)
			w.WriteHeader(v.Status)
		},
	})
	h := g.Middleware(&echo{})
	for _, body := range []string{`{"a":"long"}`, `{}`, `{"a":"ok"}`, `{"a":1}`} {
		send(h, "POST", "/t", body)
	}
	require.Len(t, kept, 3)
	assert.Equal(t, []Detail{{"/a", "must be at most 2 characters long"}}, kept[0].Details)
	assert.Equal(t, []Detail{{"/a", "is required"}}, kept[1].Details)
	assert.Equal(t, "/a", kept[2].Details[0].Path)
}

// TestMiddleware_RefusedRequestsLeaveTheirState: the state of a request the
// guard refuses stays with its pooled request for the next one; the state
// of a request it passed on never does, since its handler may keep it
// (here, the request, read again after refused requests have come and
// gone).
func TestMiddleware_RefusedRequestsLeaveTheirState(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{
		"type": "object", "required": []any{"a"},
		"properties": map[string]any{"a": map[string]any{"type": "string", "maxLength": 8}}}}}})
	var kept *http.Request
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { kept = r }))
	require.Equal(t, http.StatusOK, send(h, "POST", "/t", `{"a":"kept"}`).Code)
	require.NotNil(t, kept)
	for range 50 {
		require.Equal(t, http.StatusBadRequest, send(h, "POST", "/t", `{"a":"far too long"}`).Code)
		require.Equal(t, http.StatusBadRequest, send(h, "POST", "/t", `{"b":1}`).Code)
	}
	body, ok := Body(kept)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"a": "kept"}, body)
	raw, err := io.ReadAll(kept.Body)
	require.NoError(t, err)
	assert.Equal(t, `{"a":"kept"}`, string(raw))

	if raceDetector {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	// A refused request allocates no state: it had the one the request
	// before it left. (Counted by the allocator's size classes: nothing
	// else a refused request allocates is the size of a state.)
	r := httptest.NewRequest("POST", "/t", nil)
	w := &nopWriter{h: http.Header{}}
	refuse := func() {
		r.Body = io.NopCloser(strings.NewReader(`{"a":"far too long"}`))
		h.ServeHTTP(w, r)
	}
	refuse()
	const n = 200
	states := allocsOfSize(unsafe.Sizeof(state{}))
	before := states()
	for range n {
		refuse()
	}
	assert.Less(t, states()-before, uint64(n/10), "allocations of a state's size by %d refused requests", n)
	pass := func() {
		r.Body = io.NopCloser(strings.NewReader(`{"a":"kept"}`))
		h.ServeHTTP(w, r)
	}
	before = states()
	for range n {
		pass()
	}
	assert.Greater(t, states()-before, uint64(n*9/10), "a passed request takes its state along: the count sees it")
}

// TestState_SmallTapeStaysWithThePool: a small body's parse (its tape,
// 392 bytes) is the pooled request's, not the state's that a passing
// request takes along; what asks for the doc after the pass gets it
// parsed again from the same bytes: Body(r) of requests kept while later
// ones reused the pool (escapes included), from goroutines racing on one
// request (one tree for all), and a typed handler's later pass behind the
// middleware, which checks its own contract on it.
func TestState_SmallTapeStaysWithThePool(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST"}}})
	var kept []*http.Request
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { kept = append(kept, r) }))
	bodies := []string{`{"a":"x\u0041\n","n":1}`, `{"b":[true,null]}`, `"s\"t"`, `{"a":"yy","n":2.5}`}
	for range 3 {
		for _, b := range bodies {
			require.Equal(t, http.StatusOK, send(h, "POST", "/t", b).Code)
		}
	}
	for i, r := range kept {
		got, ok := Body(r)
		require.True(t, ok)
		var want any
		d := json.NewDecoder(strings.NewReader(bodies[i%len(bodies)]))
		d.UseNumber()
		require.NoError(t, d.Decode(&want))
		assert.Equal(t, want, got, "body %d", i)
	}

	kept = nil
	require.Equal(t, http.StatusOK, send(h, "POST", "/t", `{"k":"v"}`).Code)
	send(h, "POST", "/t", `{"other":"body"}`)
	r := kept[0]
	trees := make([]any, 8)
	var wg sync.WaitGroup
	for i := range trees {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trees[i], _ = Body(r)
		}()
	}
	wg.Wait()
	for _, b := range trees {
		assert.Equal(t, map[string]any{"k": "v"}, b)
		assert.Equal(t, reflect.ValueOf(trees[0]).UnsafePointer(), reflect.ValueOf(b).UnsafePointer(), "one tree for every caller")
	}

	type line struct {
		SKU string `json:"sku" jsonschema:"maxLength=5"`
	}
	var got []line
	mux := http.NewServeMux()
	mux.Handle("POST /t", Handle(g, func(w http.ResponseWriter, r *http.Request, l line) { got = append(got, l) }))
	th := g.Middleware(mux)
	rejected(t, send(th, "POST", "/t", `{"sku":"far too long"}`), http.StatusBadRequest, CodeSchemaInvalid)
	require.Equal(t, http.StatusOK, send(th, "POST", "/t", `{"sku":"BK-1"}`).Code)
	assert.Equal(t, []line{{"BK-1"}}, got)
}

// allocsOfSize returns a function that reads how many objects the
// allocator has handed out in the size class that holds size bytes
// (runtime/metrics' histogram by size).
func allocsOfSize(size uintptr) func() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs-by-size:bytes"}}
	return func() uint64 {
		metrics.Read(s)
		h := s[0].Value.Float64Histogram()
		for i, c := range h.Counts {
			if h.Buckets[i] < float64(size) && float64(size) <= h.Buckets[i+1] {
				return c
			}
		}
		panic("no size class holds a state")
	}
}

// TestState_SizeClass: a passed request allocates one state, and the
// allocator puts it in the 640-byte class only while it holds 632 bytes:
// an object with pointers over 512 bytes carries an 8-byte header of its
// own, so a state of 640 bytes takes 704 (a sync.Once where a bool was
// did that to the 1,024-byte state this was, and a check of
// unsafe.Sizeof alone let it stay). Measured, as the allocator counts
// it. (A small body's tape, 392 bytes, is the pooled request's:
// TestState_SmallTapeStaysWithThePool.)
func TestState_SizeClass(t *testing.T) {
	// TotalAlloc counts every goroutine's allocations (another test's
	// server still winding down): the least of a few runs is the state's.
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		const n = 100
		states := make([]*state, n)
		runtime.ReadMemStats(&before)
		for i := range states {
			states[i] = new(state)
		}
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(states)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/n)
	}
	assert.LessOrEqual(t, least, uint64(640), "bytes a state takes (its size: %d)", unsafe.Sizeof(state{}))
}

// TestUser_ConcurrentCallsGetTheUser: a handler may ask for User(r) from
// goroutines of its own. One that asks while Options.User is still
// running for another gets what it returns, not nil (and no data race).
func TestUser_ConcurrentCallsGetTheUser(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	g := mustNew(t, Options{
		User: func(r *http.Request) any {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
			return map[string]string{"id": "ada"}
		},
		Contracts: []Contract{{Endpoint: "/t", Method: "POST"}},
	})
	var first, second any
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := make(chan struct{})
		go func() { first = User(r); close(done) }()
		<-entered // Options.User runs for the first goroutine
		got := make(chan any, 1)
		go func() { got <- User(r) }()
		select {
		case second = <-got: // it did not wait for Options.User
			close(release)
		case <-time.After(50 * time.Millisecond): // it waits: let Options.User return
			close(release)
			second = <-got
		}
		<-done
	}))
	send(h, "POST", "/t", `{}`)
	assert.Equal(t, map[string]string{"id": "ada"}, first)
	assert.Equal(t, map[string]string{"id": "ada"}, second)
	assert.Equal(t, int64(1), calls.Load())
}

// TestInvariants_HeadersAsHeaderGet: a header map with two keys of one
// name in different cases (a middleware that wrote r.Header["x-role"]
// beside the client's X-Role) gives request.headers the value
// Header.Get, what the handler reads, gives: the canonical key's, every
// time (it was either, by the order of a map's iteration).
func TestInvariants_HeadersAsHeaderGet(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/h", Method: "GET",
		Invariants: []Invariant{{Expr: "request.headers['x-role'] != 'admin'", Message: "no admins"}}}}})
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 64 {
		r := httptest.NewRequest("GET", "/h", nil)
		r.Header = http.Header{"X-Role": {"admin"}, "x-role": {"user"}, "X-ROLE": {"user"}}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 422, w.Code, "Header.Get reads admin")

		r = httptest.NewRequest("GET", "/h", nil)
		r.Header = http.Header{"X-Role": {"user"}, "x-role": {"admin"}}
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, "Header.Get reads user")
	}
}

// TestBody_ChangesDoNotReachALaterPassesSchema: what Body returns is the
// handler's to change (a logging middleware that redacts a field), but it
// was the very value the library path of the schema check validates (a
// schema the native fast path leaves to it: a later draft's keyword,
// here), cached in the parse. A typed handler behind that middleware
// checked its T's schema against the redacted value, and got a T decoded
// from the body itself: a name of 20 characters passed maxLength 5.
func TestBody_ChangesDoNotReachALaterPassesSchema(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/notes", Method: "POST"}},
		SchemaFS: fstest.MapFS{"note.json": {Data: []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema",
			"type":"object","properties":{"name":{"type":"string","maxLength":5}},"dependentRequired":{"re":["name"]}}`)}}})
	type note struct {
		_    struct{} `cg:"schema=note.json"`
		Name string   `json:"name"`
		Re   string   `json:"re,omitempty"`
	}
	c, err := g.typedContract(reflect.TypeFor[note]())
	require.NoError(t, err)
	require.False(t, c.schema.Native(), "the library path checks T's schema")
	reached := false
	mux := http.NewServeMux()
	mux.Handle("POST /notes", Handle(g, func(w http.ResponseWriter, r *http.Request, n note) { reached = true }))
	redact := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := Body(r)
		require.True(t, ok)
		b.(map[string]any)["name"] = "***"
		mux.ServeHTTP(w, r)
	})
	h := g.Middleware(redact)
	w := send(h, "POST", "/notes", `{"name":"much too long a name"}`)
	eb := rejected(t, w, http.StatusBadRequest, CodeSchemaInvalid)
	assert.Equal(t, "/name", eb.Details[0].Path)
	assert.False(t, reached)
	assert.Equal(t, 200, send(h, "POST", "/notes", `{"name":"ada"}`).Code)
	assert.True(t, reached)
}

// TestMiddleware_SubRequestIsNoLaterPass: a handler that dispatches
// requests of its own through the guarded mux with its request's context
// (a batch endpoint) made them look like later passes of its request:
// one to another route was checked against the batch's body (and its
// handler would get those bytes), one to the batch's own route, whose
// contracts had run, passed unchecked. A later pass is the request the
// guard passed on (its header map), not any request in its context.
func TestMiddleware_SubRequestIsNoLaterPass(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{
		{Endpoint: "/items", Method: "POST", Schema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"maximum": 10}}}},
		{Endpoint: "/batch", Method: "POST", Schema: map[string]any{"type": "array"}},
	}})
	mux := http.NewServeMux()
	var h http.Handler
	var got []string
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
	})
	codes := map[string]int{}
	mux.HandleFunc("POST /batch", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Nested") != "" {
			b, _ := io.ReadAll(r.Body)
			got = append(got, "nested batch "+string(b))
			return
		}
		for _, sub := range []struct{ path, body string }{{"/items", `{"n":5}`}, {"/items", `{"n":500}`}, {"/batch", `{"not":"an array"}`}} {
			req, err := http.NewRequestWithContext(r.Context(), "POST", sub.path, strings.NewReader(sub.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Nested", "1")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			codes[sub.body] = w.Code
		}
		req, err := http.NewRequestWithContext(r.Context(), "POST", "/items", strings.NewReader(`{"n":500}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		assert.NotNil(t, g.CheckRequest(req), "CheckRequest of a request made with the context of one that passed")
	})
	h = g.Middleware(mux)
	require.Equal(t, 200, send(h, "POST", "/batch", `[]`).Code)
	assert.Equal(t, map[string]int{`{"n":5}`: 200, `{"n":500}`: 400, `{"not":"an array"}`: 400}, codes)
	assert.Equal(t, []string{`{"n":5}`}, got)

	// A middleware between the two passes that replaces the body (and
	// passes r on with another context) is still the same request.
	h2 := g.Middleware(http.StripPrefix("/v", Handle(g, func(w http.ResponseWriter, r *http.Request, in struct {
		N int `json:"n" jsonschema:"maximum=10"`
	}) {
		got = append(got, "typed")
	})))
	got = nil
	require.Equal(t, 200, send(h2, "POST", "/v/x", `{"n":1}`).Code)
	assert.Equal(t, []string{"typed"}, got)
}

// TestMiddleware_ClonedRequestToAnotherPathIsNoLaterPass: a handler that
// sends a copy of its request (r.Clone: the body the guard passed on, the
// same method and query) to another path through the guard makes a
// request of its own. Read as a later pass, the contract of /users/:id,
// done for /users/1, was not run for /users/2: its invariant on the
// parameter passed a request it refuses.
func TestMiddleware_ClonedRequestToAnotherPathIsNoLaterPass(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{
		{Endpoint: "/users/:id", Method: "POST", Invariants: []Invariant{{Expr: `request.params.id == "1"`, Message: "only user 1"}}},
	}})
	mux := http.NewServeMux()
	var h http.Handler
	var reached []string
	code := 0
	mux.HandleFunc("POST /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.PathValue("id"))
		if r.PathValue("id") == "1" {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/users/2"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r2)
			code = rec.Code
		}
	})
	h = g.Middleware(mux)
	require.Equal(t, 200, send(h, "POST", "/users/1", `{}`).Code)
	assert.Equal(t, 422, code)
	assert.Equal(t, []string{"1"}, reached)
}

// TestMiddleware_ClonedRequestIsALaterPass: a middleware between the
// guard's Middleware and its typed handler that passes r.Clone on (to set
// a header of its own) gives the handler a header map of its own: read as
// a new request, it was checked and counted again (a learning contract's
// would-be rejection reported twice), and when that middleware had read
// the body, the typed handler refused the empty rest (400). It carries the
// body the guard passed on: a later pass.
func TestMiddleware_ClonedRequestIsALaterPass(t *testing.T) {
	a, rec := learnGuard(t)
	type order struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	var got order
	mux := http.NewServeMux()
	mux.Handle("POST /orders", Handle(a, func(w http.ResponseWriter, r *http.Request, o order) { got = o }))
	clone := func(read bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if read {
				_, _ = io.ReadAll(r.Body) // logged, say
			}
			r2 := r.Clone(r.Context())
			r2.Header.Set("X-Request-Id", "1")
			mux.ServeHTTP(w, r2)
		})
	}
	require.Equal(t, 200, send(a.Middleware(clone(false)), "POST", "/orders", `{"sku":"A","qty":500}`).Code)
	assert.Equal(t, order{"A", 500}, got)
	assert.EqualValues(t, 1, a.Metrics().RequestsValidated, "one request")
	assert.EqualValues(t, 1, a.Metrics().RequestsWouldBlock)
	assert.Len(t, rec.observed, 1, "reported once")

	require.Equal(t, 200, send(a.Middleware(clone(true)), "POST", "/orders", `{"sku":"B","qty":5}`).Code)
	assert.Equal(t, order{"B", 5}, got)
	assert.EqualValues(t, 2, a.Metrics().RequestsValidated)

	// A request a handler makes with the body it was passed, but a query
	// of its own, is still a request of its own.
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/items", Method: "POST", Invariants: []Invariant{{Expr: "!('admin' in request.query)", Message: "no admin"}}}}})
	var h http.Handler
	code := 0
	h = g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), "POST", "/items?admin=1", r.Body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code = rec.Code
	}))
	require.Equal(t, 200, send(h, "POST", "/items", `{}`).Code)
	assert.Equal(t, http.StatusUnprocessableEntity, code, "checked")
}

// TestMiddleware_ClonedEarlyRequestIsALaterPass: a request a learning
// contract refused before it ran (its media type here, or its size)
// passes on as it came, its body given back; a middleware that passes
// r.Clone on (to set a header) hands the guard's next pass (its
// Middleware again, on a sub-router) that body with a header map of its
// own. Known by the checked bytes alone, the copy was read as a new
// request: counted twice, and the would-be rejection reported twice.
func TestMiddleware_ClonedEarlyRequestIsALaterPass(t *testing.T) {
	a, rec := learnGuard(t)
	var got []byte
	inner := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	clone := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.Header.Set("X-Request-Id", "1")
		inner.ServeHTTP(w, r2)
	})
	w := send(a.Middleware(clone), "POST", "/orders", `{"sku":"A","qty":5}`, "Content-Type", "text/plain")
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, `{"sku":"A","qty":5}`, string(got))
	assert.EqualValues(t, 1, a.Metrics().RequestsValidated, "one request")
	assert.EqualValues(t, 1, a.Metrics().RequestsWouldBlock)
	require.Len(t, rec.observed, 1, "reported once")
	assert.Equal(t, CodeUnsupportedMediaType, rec.observed[0].Violation.Code)
}

// TestMiddleware_AnotherGuardBetweenPasses: a guard's typed handler
// behind its Middleware finds the state of its first pass beneath that of
// another guard's Middleware between them. It looked at the last guard's
// state only, and took its own pass for the first: the request was
// counted twice as validated, and a learning contract's would-be
// rejection reported and counted twice.
func TestMiddleware_AnotherGuardBetweenPasses(t *testing.T) {
	a, rec := learnGuard(t)
	b := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/orders", Method: "POST"}}})
	type order struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	var got order
	mux := http.NewServeMux()
	mux.Handle("POST /orders", Handle(a, func(w http.ResponseWriter, r *http.Request, o order) { got = o }))
	h := a.Middleware(b.Middleware(mux))
	require.Equal(t, 200, send(h, "POST", "/orders", `{"sku":"A","qty":500}`).Code)
	assert.Equal(t, order{"A", 500}, got)
	m := a.Metrics()
	assert.EqualValues(t, 1, m.RequestsValidated, "one request")
	assert.EqualValues(t, 1, m.RequestsWouldBlock)
	assert.Len(t, rec.observed, 1, "reported once")
	assert.EqualValues(t, 1, b.Metrics().RequestsValidated)

	rejected(t, send(h, "POST", "/orders", `{"sku":"A","qty":"2"}`), http.StatusBadRequest, CodeSchemaInvalid) // no order: the typed contract enforces
	assert.EqualValues(t, 2, a.Metrics().RequestsValidated)
}

// TestMiddleware_BodySetInPlaceThenClonedIsChecked: the request the
// guard passes on is its state's own; a middleware that sets its Body (to
// bytes of its own) and then passes on r.Clone hands the guard's next
// pass bytes no pass checked. Known by the passed request's Body as it
// was at the time (not by the checked bytes' reader), the copy was taken
// for a later pass: {"qty":500} reached the handler past qty < 10.
func TestMiddleware_BodySetInPlaceThenClonedIsChecked(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/items", Method: "POST", Invariants: []Invariant{{Expr: "request.body.qty < 10", Message: "qty"}}}}})
	got := ""
	inner := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
	}))
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(`{"qty":500}`))
		r2 := r.Clone(r.Context())
		r2.Header.Set("X-Request-Id", "1")
		inner.ServeHTTP(w, r2)
	}))
	w := send(h, "POST", "/items", `{"qty":5}`, "Content-Type", "application/json")
	assert.Equal(t, http.StatusUnprocessableEntity, w.Code, w.Body.String())
	assert.Empty(t, got, "the handler did not run")
}
