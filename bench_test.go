package contractguard

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The order body: ~1 KB, 12 top-level fields, a nested object, an array of
// items, formats and enums; its contract has 3 invariants.

func BenchmarkDecodeBaseline_Order(b *testing.B) {
	body := []byte(readFile(b, "testdata/bodies/order.json"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck_Order(b *testing.B) {
	g := testdataGuard(b)
	body := []byte(readFile(b, "testdata/bodies/order.json"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if v := g.Check("POST", "/api/orders", body); v != nil {
			b.Fatal(v)
		}
	}
}

func BenchmarkCheck_OrderInvalid(b *testing.B) {
	g := testdataGuard(b)
	body := []byte(readFile(b, "testdata/bodies/order-invalid.json"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if v := g.Check("POST", "/api/orders", body); v == nil || len(v.Details) != 4 {
			b.Fatal(v)
		}
	}
}

// benchRequest reuses one request, resetting its body, so that the figures
// are the middleware's and not httptest's.
type benchRequest struct {
	r    *http.Request
	body []byte
	rd   bytes.Reader
	rc   io.ReadCloser
}

func newBenchRequest(method, target string, body []byte) *benchRequest {
	br := &benchRequest{body: body}
	br.r = httptest.NewRequest(method, target, nil)
	br.r.Header.Set("Content-Type", "application/json")
	br.rc = io.NopCloser(&br.rd)
	return br
}

func (br *benchRequest) reset() *http.Request {
	br.rd.Reset(br.body)
	br.r.Body = br.rc
	br.r.ContentLength = int64(len(br.body))
	return br.r
}

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

func benchMiddleware(b *testing.B, target, file string) {
	g := testdataGuard(b)
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	body := []byte(readFile(b, file))
	br := newBenchRequest("POST", target, body)
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		h.ServeHTTP(w, br.reset())
	}
}

func BenchmarkMiddleware_Order(b *testing.B) {
	benchMiddleware(b, "/api/orders", "testdata/bodies/order.json")
}

func BenchmarkMiddleware_OrderInvalid(b *testing.B) {
	benchMiddleware(b, "/api/orders", "testdata/bodies/order-invalid.json")
}

func BenchmarkMiddleware_NoMatch(b *testing.B) {
	benchMiddleware(b, "/static/app.js", "testdata/bodies/order.json")
}

// Adversarial inputs: each must stay bounded.

func BenchmarkCheck_DeepNesting(b *testing.B) {
	g := mustNew(b, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{}}}})
	body := []byte(strings.Repeat("[", DefaultMaxDepth) + strings.Repeat("]", DefaultMaxDepth))
	b.ReportAllocs()
	for b.Loop() {
		if v := g.Check("POST", "/t", body); v != nil {
			b.Fatal(v)
		}
	}
}

func BenchmarkCheck_HugeArray(b *testing.B) {
	g := mustNew(b, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 0}}}}})
	body := []byte("[" + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") + "]")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if v := g.Check("POST", "/t", body); v != nil {
			b.Fatal(v)
		}
	}
}

func BenchmarkCheck_QuadraticRuleHitsCostLimit(b *testing.B) {
	g := mustNew(b, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Invariants: []Invariant{{Expr: "request.body.all(a, request.body.all(b, a == b || a != b))", Message: "m"}}}}})
	body := []byte("[" + strings.TrimSuffix(strings.Repeat("1,", 20_000), ",") + "]")
	b.ReportAllocs()
	for b.Loop() {
		if v := g.Check("POST", "/t", body); v == nil {
			b.Fatal("passed")
		}
	}
}
