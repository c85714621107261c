package contractguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorTable produces every row of the specification's error table.
func TestErrorTable(t *testing.T) {
	g := testdataGuard(t, func(o *Options) { o.MaxBodyBytes = 4096; o.RequireContract = true; o.VulnerabilityScan = true })
	h := g.Middleware(&echo{})
	order := readFile(t, "testdata/bodies/order.json")

	eb := rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"ada@example.com"`, `"ada.example.com"`, 1)), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/customer/email", "must be a valid email address"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", `{"a":1,"a":2}`), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"/a", `duplicate key "a"`}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"total":123.23`, `"total":12345`, 1)), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "orders over 10000 need a sales contact"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", `{"notes":"`+strings.Repeat("x", 5000)+`"}`), 413, CodePayloadTooLarge)
	assert.Equal(t, []Detail{{"", "body must be at most 4096 bytes"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", order, "Content-Type", "text/plain"), 415, CodeUnsupportedMediaType)
	assert.Equal(t, []Detail{{"", "Content-Type must be application/json"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/nothing/here", order), 403, CodeNoContract)
	assert.Equal(t, []Detail{{"", "no contract for POST /api/nothing/here"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"Ada Lovelace"`, `"x' OR 1=1 --"`, 1)), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"/customer/name", "possible SQL injection"}}, eb.Details)
}

func TestOrder_PassesAndReachesHandlerUnchanged(t *testing.T) {
	g := testdataGuard(t)
	e := &echo{}
	order := readFile(t, "testdata/bodies/order.json")
	w := send(g.Middleware(e), "POST", "/api/orders", order)
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, order, string(e.body))
	assert.Equal(t, int64(len(order)), e.r.ContentLength)
	v, ok := Body(e.r)
	require.True(t, ok)
	assert.Equal(t, json.Number("123.23"), v.(map[string]any)["total"])
}

func TestOrder_AllFailuresReportedTogetherSortedByPath(t *testing.T) {
	g := testdataGuard(t)
	w := send(g.Middleware(&echo{}), "POST", "/api/orders", readFile(t, "testdata/bodies/order-invalid.json"))
	eb := rejected(t, w, 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{
		{"/currency", `must be one of "EUR", "USD", "GBP"`},
		{"/customer/email", "must be a valid email address"},
		{"/items/0/quantity", "must be >= 1"},
		{"/orderId", "must be a valid UUID"},
	}, eb.Details)
}

func TestInvariants_AllFalseReportedInOrder(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Invariants: []Invariant{
			{Expr: "request.body.a > 1", Message: "first"},
			{Expr: "request.body.a > 0", Message: "holds"},
			{Expr: "request.body.b == 'x'", Message: "second"},
			{Expr: "request.body.missing == 1", Message: "third (fails to evaluate: closed)"},
		},
	}}})
	eb := rejected(t, send(g.Middleware(&echo{}), "POST", "/t", `{"a":1,"b":"y"}`), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "first"}, {"", "second"}, {"", "third (fails to evaluate: closed)"}}, eb.Details)
	assert.NotContains(t, send(g.Middleware(&echo{}), "POST", "/t", `{"a":1,"b":"y"}`).Body.String(), "request.body", "the CEL source is never sent")
}

func TestInvariants_NotRunWhenSchemaFails(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Schema:     map[string]any{"type": "object", "required": []string{"a"}},
		Invariants: []Invariant{{Expr: "request.body.a > 1", Message: "a > 1"}},
	}}})
	rejected(t, send(g.Middleware(&echo{}), "POST", "/t", `{}`), 400, CodeSchemaInvalid)
}

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

func TestInvariants_NumberRules(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/n", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"total": map[string]any{}, // any number: an int when integral
			"price": map[string]any{"type": "number"},
			"qty":   map[string]any{"type": "integer"},
		}},
		Invariants: []Invariant{
			{Expr: "request.body.total >= 10", Message: "total"},
			{Expr: "request.body.price * 2.0 > 0.0", Message: "a number field is a double"},
			{Expr: "request.body.qty * 2 > 0", Message: "an integer field is an int"},
		},
	}}})
	h := g.Middleware(&echo{})
	for _, total := range []string{"10", "10.0", "1e1", "10.5", "123456789012345678901234567890"} {
		w := send(h, "POST", "/n", `{"total":`+total+`,"price":3,"qty":2.0}`)
		assert.Equal(t, 200, w.Code, "total %s: %s", total, w.Body.String())
	}
	rejected(t, send(h, "POST", "/n", `{"total":9.99,"price":3,"qty":2}`), 422, CodeInvariantViolated)
}

func TestCheck_SharesTheMiddlewarePath(t *testing.T) {
	g := testdataGuard(t)
	order := readFile(t, "testdata/bodies/order.json")
	assert.Nil(t, g.Check("POST", "/api/orders", []byte(order)))
	assert.Nil(t, g.Check("GET", "/not/guarded", nil))

	v := g.Check("post", "/api//orders/", []byte(readFile(t, "testdata/bodies/order-invalid.json")))
	require.NotNil(t, v)
	assert.Equal(t, 400, v.Status)
	assert.Equal(t, CodeSchemaInvalid, v.Code)
	assert.Len(t, v.Details, 4)

	v = g.Check("GET", "/api/users/abc", nil)
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"", "id must be numeric"}}, v.Details)
	assert.Nil(t, g.Check("GET", "/api/users/42?x=1", nil))
	assert.Nil(t, g.Check("GET", "/api/users/me", nil), "static beats parameter")

	small := mustNew(t, Options{ContractsDir: "testdata/contracts", MaxBodyBytes: 100})
	v = small.Check("POST", "/api/orders", []byte(order))
	require.NotNil(t, v)
	assert.Equal(t, CodePayloadTooLarge, v.Code)

	m := g.Metrics()
	assert.Equal(t, int64(5), m.RequestsValidated)
	assert.Equal(t, int64(2), m.RequestsBlocked)
}

func TestViolation_JSONAndError(t *testing.T) {
	v := newViolation(CodeSchemaInvalid, Detail{"/email", "must be a valid email address"}, Detail{"/age", "is required"})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/email","message":"must be a valid email address"},{"path":"/age","message":"is required"}]}`, string(b))
	assert.Equal(t, "contractguard: SCHEMA_INVALID: /email: must be a valid email address; /age: is required", v.Error())

	b, _ = json.Marshal(&Violation{Status: 403, Code: CodeNoContract})
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"NO_CONTRACT","details":[]}`, string(b))
	var _ error = v
}

func TestOnReject(t *testing.T) {
	var got *Violation
	g := testdataGuard(t, func(o *Options) {
		o.OnReject = func(w http.ResponseWriter, r *http.Request, v *Violation) {
			got = v
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(v.Status)
			fmt.Fprintf(w, `{"type":"about:blank","status":%d,"title":%q}`, v.Status, v.Code)
		}
	})
	e := &echo{}
	w := send(g.Middleware(e), "POST", "/api/users", `{"email":"a@b.co","password":"x","age":3}`)
	assert.Equal(t, 400, w.Code)
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	require.NotNil(t, got)
	assert.Equal(t, []string{"/age", "/password"}, paths(got.Details))
	assert.Zero(t, e.calls)
}

func TestMetrics(t *testing.T) {
	g := testdataGuard(t)
	h := g.Middleware(&echo{})
	send(h, "GET", "/api/users/1", "")
	send(h, "GET", "/api/users/x", "")
	send(h, "GET", "/untracked", "")
	w := send(g.MetricsHandler(), "GET", "/actuator/contractguard", "")
	require.Equal(t, 200, w.Code)
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m))
	assert.Len(t, m, 4)
	assert.Equal(t, 2.0, m["requests_validated"])
	assert.Equal(t, 1.0, m["requests_blocked"])
	assert.Equal(t, 5.0, m["contracts_loaded"])
	assert.Greater(t, m["average_latency_ms"], 0.0)

	off := mustNew(t, Options{})
	assert.Equal(t, 404, send(off.MetricsHandler(), "GET", "/actuator/contractguard", "").Code)
	assert.Equal(t, 405, send(g.MetricsHandler(), "POST", "/actuator/contractguard", "").Code)
}

func TestMiddleware_RunsOncePerRequest(t *testing.T) {
	g := testdataGuard(t)
	e := &echo{}
	h := g.Middleware(g.Middleware(e)) // installed twice, as with a global and a group Use
	order := readFile(t, "testdata/bodies/order.json")
	w := send(h, "POST", "/api/orders", order)
	require.Equal(t, 200, w.Code)
	assert.Equal(t, order, string(e.body))
	assert.Equal(t, int64(1), g.Metrics().RequestsValidated)
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

func TestMiddleware_OnChiAndServeMux(t *testing.T) {
	g := testdataGuard(t)
	order := readFile(t, "testdata/bodies/order.json")
	bad := readFile(t, "testdata/bodies/order-invalid.json")

	r := chi.NewRouter()
	r.Use(g.Middleware)
	e1 := &echo{}
	r.Post("/api/orders", e1.ServeHTTP)

	mux := http.NewServeMux()
	e2 := &echo{}
	mux.Handle("POST /api/orders", e2)

	for name, c := range map[string]struct {
		h http.Handler
		e *echo
	}{"chi": {r, e1}, "ServeMux": {g.Middleware(mux), e2}} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, 200, send(c.h, "POST", "/api/orders", order).Code)
			rejected(t, send(c.h, "POST", "/api/orders", bad), 400, CodeSchemaInvalid)
			assert.Equal(t, 1, c.e.calls)
		})
	}
}

func TestBody_EmptyIsNull(t *testing.T) {
	g := testdataGuard(t)
	eb := rejected(t, send(g.Middleware(&echo{}), "POST", "/api/orders", ""), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"", "must be an object, not null"}}, eb.Details)

	g2 := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/n", Method: "POST", Schema: map[string]any{"type": "null"}}}})
	e := &echo{}
	assert.Equal(t, 200, send(g2.Middleware(e), "POST", "/n", "").Code)
	v, ok := Body(e.r)
	assert.True(t, ok)
	assert.Nil(t, v)
}

func TestBody_NoSchemaNonJSONIsNotParsed(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/upload", Method: "POST",
		Invariants: []Invariant{{Expr: "request.headers['content-type'] == 'text/csv'", Message: "csv only"}}}}})
	e := &echo{}
	w := send(g.Middleware(e), "POST", "/upload", "a,b\n1,2\n", "Content-Type", "text/csv")
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, "a,b\n1,2\n", string(e.body))
	_, ok := Body(e.r)
	assert.False(t, ok)
	rejected(t, send(g.Middleware(e), "POST", "/upload", `{"a":1,"a":2}`), 400, CodeMalformedJSON)
}

func TestBody_LargeBodyByteIdentical(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/big", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"rows": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []string{"id"}}},
		}},
		Invariants: []Invariant{{Expr: "size(request.body.rows) > 0", Message: "rows"}},
	}}})
	var b strings.Builder
	b.WriteString("{\n  \"rows\": [")
	for i := 0; b.Len() < 900<<10; i++ {
		if i > 0 {
			b.WriteString(",\n    ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "row \u00e9 %d", "value": %d.50e-1 }`, i, i, i)
	}
	b.WriteString("]\n}\n")
	body := b.String()
	require.Greater(t, len(body), 900<<10)

	e := &echo{}
	srv := httptest.NewServer(g.Middleware(e))
	defer srv.Close()
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
		req, _ := http.NewRequest("POST", srv.URL+"/big", rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "chunked=%v", chunked)
		assert.True(t, bytes.Equal([]byte(body), e.body), "handler got the identical bytes (chunked=%v)", chunked)
		assert.True(t, bytes.Equal([]byte(body), got))
		assert.Equal(t, int64(len(body)), e.r.ContentLength)
	}
}

func TestBody_TooLargeChunkedIsNotReadToTheEnd(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 1024, Contracts: []Contract{{Endpoint: "/t", Method: "POST"}}})
	e := &echo{}
	src := &countingReader{n: 10 << 20}
	r := httptest.NewRequest("POST", "/t", src)
	r.ContentLength = -1
	w := httptest.NewRecorder()
	g.Middleware(e).ServeHTTP(w, r)
	rejected(t, w, 413, CodePayloadTooLarge)
	assert.Zero(t, e.calls)
	assert.LessOrEqual(t, src.read, 4096, "stopped just past the limit")
}

type countingReader struct{ n, read int }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	n := min(len(p), c.n-c.read)
	for i := range p[:n] {
		p[i] = ' '
	}
	c.read += n
	return n, nil
}

func TestBody_ContentLengthOverLimitIsRejectedUnread(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 1024, Contracts: []Contract{{Endpoint: "/t", Method: "POST"}}})
	src := &countingReader{n: 2048}
	r := httptest.NewRequest("POST", "/t", src)
	r.ContentLength = 2048
	w := httptest.NewRecorder()
	g.Middleware(&echo{}).ServeHTTP(w, r)
	rejected(t, w, 413, CodePayloadTooLarge)
	assert.Zero(t, src.read)
}

func TestBody_MediaTypes(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{"type": "object"}}}})
	h := g.Middleware(&echo{})
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", "application/vnd.api+json", "application/x+json"} {
		assert.Equal(t, 200, send(h, "POST", "/t", `{}`, "Content-Type", ct).Code, "%q", ct)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/jsonx", "text/json", "application/json;;", "json"} {
		rejected(t, send(h, "POST", "/t", `{}`, "Content-Type", ct), 415, CodeUnsupportedMediaType)
	}
	r := httptest.NewRequest("POST", "/t", strings.NewReader("{}"))
	r.Header.Add("Content-Type", "application/json")
	r.Header.Add("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	rejected(t, w, 415, CodeUnsupportedMediaType)
}

func TestUser_NoOptionIsEmptyMap(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "GET",
		Invariants: []Invariant{{Expr: "size(context.user) == 0", Message: "empty"}}}}})
	e := &echo{}
	assert.Equal(t, 200, send(g.Middleware(e), "GET", "/t", "").Code)
	assert.Nil(t, User(e.r))
	assert.Nil(t, User(httptest.NewRequest("GET", "/", nil)))
}

// TestConcurrentRequests sends 20,000 mixed requests from 64 goroutines
// through one guard — the middleware over file contracts, a typed handler
// and Check — and checks every verdict, every body the handlers got, and
// the counters at the end.
func TestConcurrentRequests(t *testing.T) {
	g := testdataGuard(t)
	good := readFile(t, "testdata/bodies/order.json")
	bad := readFile(t, "testdata/bodies/order-invalid.json")
	over := strings.Replace(good, `"total":123.23`, `"total":20000`, 1)
	form := `{"orderId":"` + acctA + `","email":"ada@example.com","items":[{"sku":"A","quantity":2,"unitPrice":20.25}],"currency":"EUR","total":40.5,"placedAt":"2026-11-21T10:15:00Z"}`

	var handlerErrors atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/orders", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if v, ok := Body(r); !ok || v == nil || string(b) != good {
			handlerErrors.Add(1)
		}
	})
	mux.Handle("POST /typed", Handle(g, func(w http.ResponseWriter, r *http.Request, in OrderForm) {
		if in.Total != 40.5 || in.Items[0].Quantity != 2 {
			handlerErrors.Add(1)
		}
	}))
	h := g.Middleware(mux)

	type request struct {
		path, body string
		check      bool // through Check instead of HTTP
		want       int
	}
	kinds := []request{
		{"/api/orders", good, false, 200},
		{"/api/orders", bad, false, 400},
		{"/api/orders", over, false, 422},
		{"/api/orders", `{"a":1,"A":2}`, false, 400},
		{"/typed", form, false, 200},
		{"/typed", strings.Replace(form, `"quantity":2`, `"quantity":2.0`, 1), false, 400},
		{"/typed", strings.Replace(form, `"total":40.5`, `"total":10001`, 1), false, 422},
		{"/api/orders", good, true, 200},
		{"/api/orders", bad, true, 400},
		{"/api/users/abc", "", true, 422},
	}
	const workers, total = 64, 20_000
	var next atomic.Int64
	var wantBlocked atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, total)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				k := kinds[i%int64(len(kinds))]
				if k.want != 200 {
					wantBlocked.Add(1)
				}
				status := 200
				if k.check {
					method := "POST"
					if k.body == "" {
						method = "GET"
					}
					if v := g.Check(method, k.path, []byte(k.body)); v != nil {
						status = v.Status
					}
				} else {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("POST", k.path, strings.NewReader(k.body)))
					status = w.Code
				}
				if status != k.want {
					errs <- fmt.Errorf("%s %.40s: status %d, want %d", k.path, k.body, status, k.want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Zero(t, handlerErrors.Load(), "every handler got the very body that was checked")
	m := g.Metrics()
	assert.Equal(t, int64(total), m.RequestsValidated)
	assert.Equal(t, wantBlocked.Load(), m.RequestsBlocked)
	assert.Equal(t, int64(6), m.ContractsLoaded, "five file contracts and the typed route")
}

func TestNew_RefusesFeaturesNotBuilt(t *testing.T) {
	for _, o := range []Options{{LearningMode: true}, {SinkProtection: true}, {MaxDepth: 20000}, {MaxBodyBytes: -1}} {
		_, err := New(o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestLogsRejectionsAtDebugWithoutValues(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := testdataGuard(t, func(o *Options) { o.Logger = log })
	send(g.Middleware(&echo{}), "POST", "/api/users", `{"email":"secret@example.com","password":"hunter2hunter2","age":"x"}`)
	out := buf.String()
	assert.Contains(t, out, `level=DEBUG msg="contractguard: request rejected" method=POST route=/api/users code=SCHEMA_INVALID paths=[/age]`)
	assert.NotContains(t, out, "secret@example.com")
	assert.NotContains(t, out, "hunter2")

	// A typed route alone is named by its router pattern.
	buf.Reset()
	type T struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	mux := http.NewServeMux()
	mux.Handle("POST /typed/{id}", Handle(g, func(http.ResponseWriter, *http.Request, T) {}))
	send(mux, "POST", "/typed/7", `{"n":0}`)
	assert.Contains(t, buf.String(), `method=POST route="POST /typed/{id}" code=SCHEMA_INVALID paths=[/n]`)
}

// CEL quotes the value it could not use; the debug line of a rule that
// failed to evaluate must not carry it.
func TestLogsEvaluationErrorsWithoutValues(t *testing.T) {
	var buf bytes.Buffer
	g := mustNew(t, Options{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Contracts: []Contract{{Endpoint: "/t", Method: "POST", Invariants: []Invariant{
			{Expr: `timestamp(request.body.t) > timestamp("2020-01-01T00:00:00Z")`, Message: "too early"},
		}}},
	})
	v := g.Check("POST", "/t", []byte(`{"t":"hunter2-SECRET"}`))
	require.NotNil(t, v)
	out := buf.String()
	assert.Contains(t, out, `timestamp \"…\"`, "the reason stays, the value goes")
	assert.NotContains(t, out, "hunter2")

	// CEL writes other values bare, after a colon: a key read from the
	// body, from a map of the body.
	buf.Reset()
	g = mustNew(t, Options{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Contracts: []Contract{{Endpoint: "/k", Method: "POST", Invariants: []Invariant{
			{Expr: `request.body.m[request.body.k] == 1`, Message: "no such entry"},
		}}},
	})
	require.NotNil(t, g.Check("POST", "/k", []byte(`{"m":{},"k":"hunter2"}`)))
	out = buf.String()
	assert.Contains(t, out, "no such key: …", "the reason stays, the value goes")
	assert.NotContains(t, out, "hunter2")
}

func TestMiddleware_NoAllocationWithoutAContract(t *testing.T) {
	g := testdataGuard(t)
	h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/static/app.js", nil)
	w := &nopWriter{h: http.Header{}}
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }))
}

// TestAdmit_SecondPassWithNothingLeftAllocatesNothing: a request an
// earlier pass of the guard checked (Middleware, then a typed handler) is
// passed on without a request object built for it.
func TestAdmit_SecondPassWithNothingLeftAllocatesNothing(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/items/{id}", Method: "POST"}}})
	r := httptest.NewRequest("POST", "/items/7", strings.NewReader(`{}`))
	r2, v := g.admit(r, routed{}, false)
	require.Nil(t, v)
	require.NotSame(t, r, r2, "the first pass attaches its state")
	again, v := g.admit(r2, routed{}, false)
	require.Nil(t, v)
	assert.Same(t, r2, again, "nothing left to do: passed on as it is")
	assert.Zero(t, testing.AllocsPerRun(100, func() { g.admit(r2, routed{}, false) }))
}

func TestViolation_WrittenWithoutHTMLEscapes(t *testing.T) {
	w := httptest.NewRecorder()
	writeViolation(w, nil, newViolation(CodeSchemaInvalid, Detail{"/a&b", "must be >= 18 <x>"}))
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/a&b","message":"must be >= 18 <x>"}]}`+"\n", w.Body.String())
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
}

// TestViolation_JSONRoundTrips: whatever the strings hold (quotes,
// control characters, line separators, non-ASCII, invalid UTF-8), the body
// is valid JSON that reads back as the violation (invalid bytes as U+FFFD).
func TestViolation_JSONRoundTrips(t *testing.T) {
	v := newViolation(CodeInvariantViolated,
		Detail{"/a\"b", "tab\there\nnew line \u2028 \u0000 é 😀"},
		Detail{"", "bad \xff byte"},
		Detail{"/~1x/0", `<script>&</script>`})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.True(t, json.Valid(b), "%s", b)
	var got struct {
		Error, Code string
		Details     []Detail
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "CONTRACT_VIOLATION", got.Error)
	assert.Equal(t, CodeInvariantViolated, got.Code)
	want := slices.Clone(v.Details)
	want[1].Message = "bad \ufffd byte"
	assert.Equal(t, want, got.Details)

	empty, err := json.Marshal(newViolation(CodeNoContract))
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":"CONTRACT_VIOLATION","code":"NO_CONTRACT","details":[]}`, string(empty))
}

func TestMiddleware_TwiceWithDifferentRoutes(t *testing.T) {
	// The same guard outside and inside http.StripPrefix sees two paths:
	// each contract is enforced, the body read once.
	g := mustNew(t, Options{Contracts: []Contract{
		{Endpoint: "/api/items", Method: "POST", Invariants: []Invariant{{Expr: "!has(request.query.deny)", Message: "outer"}}},
		{Endpoint: "/items", Method: "POST", Schema: map[string]any{"required": []string{"b"}}},
	}})
	e := &echo{}
	h := g.Middleware(http.StripPrefix("/api", g.Middleware(e)))
	assert.Equal(t, 200, send(h, "POST", "/api/items", `{"a":1,"b":2}`).Code)
	assert.Equal(t, `{"a":1,"b":2}`, string(e.body))
	rejected(t, send(h, "POST", "/api/items", `{"a":1}`), 400, CodeSchemaInvalid)
	rejected(t, send(h, "POST", "/api/items?deny=1", `{"a":0,"b":1}`), 422, CodeInvariantViolated)
	rejected(t, send(h, "POST", "/api/items", `{"a":1,"b":2}`, "Content-Type", "text/plain"), 415, CodeUnsupportedMediaType)
}

// Two guards stacked on one handler each enforce their own contracts: the
// state one left on the request is not taken for the other's.
func TestMiddleware_StackedGuards(t *testing.T) {
	requires := func(field string) Options {
		return Options{Contracts: []Contract{{Endpoint: "/s", Method: "POST", Schema: map[string]any{
			"type": "object", "required": []any{field}}}}}
	}
	outer, inner := mustNew(t, requires("a")), mustNew(t, requires("b"))
	h := outer.Middleware(inner.Middleware(&echo{}))
	assert.Equal(t, 200, send(h, "POST", "/s", `{"a":1,"b":2}`).Code)
	rejected(t, send(h, "POST", "/s", `{"b":2}`), 400, CodeSchemaInvalid)
	rejected(t, send(h, "POST", "/s", `{"a":1}`), 400, CodeSchemaInvalid)
}
