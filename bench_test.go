package contractguard

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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
	g := mustNew(b, Options{Logger: discard, CELMaxEstimatedCost: math.MaxUint64, Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Invariants: []Invariant{{Expr: "request.body.all(a, request.body.all(b, a == b || a != b))", Message: "m"}}}}})
	body := []byte("[" + strings.TrimSuffix(strings.Repeat("1,", 20_000), ",") + "]")
	b.ReportAllocs()
	for b.Loop() {
		if v := g.Check("POST", "/t", body); v == nil {
			b.Fatal("passed")
		}
	}
}

// The order body as a Go type with the same rules, for Handle[T].

type benchAddress struct {
	Street   string `json:"street"`
	City     string `json:"city"`
	Postcode string `json:"postcode,omitempty"`
	Country  string `json:"country" jsonschema:"enum=GB,enum=FR,enum=DE,enum=NL,enum=US"`
	IP6      string `json:"ip6,omitempty" jsonschema:"format=ipv6"`
}

type benchCustomer struct {
	Email   string        `json:"email" jsonschema:"format=email"`
	Name    string        `json:"name"`
	Address *benchAddress `json:"address,omitempty"`
}

type benchItem struct {
	SKU       string  `json:"sku"`
	Quantity  int     `json:"quantity" jsonschema:"minimum=1"`
	UnitPrice float64 `json:"unitPrice" jsonschema:"minimum=0"`
}

type benchOrder struct {
	_            struct{}      `cg:"cel=data.items.all(i, i.quantity <= 100),msg=at most 100 of one item per order"`
	_            struct{}      `cg:"cel=data.total <= 10000,msg=orders over 10000 need a sales contact"`
	_            struct{}      `cg:"cel=data.couponCode == '' || data.total >= 20,msg=a coupon needs an order of at least 20"`
	OrderID      string        `json:"orderId" jsonschema:"format=uuid"`
	Customer     benchCustomer `json:"customer"`
	Items        []benchItem   `json:"items" jsonschema:"minItems=1"`
	Currency     string        `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	Total        float64       `json:"total" jsonschema:"minimum=0,maximum=1000000"`
	PlacedAt     time.Time     `json:"placedAt"`
	DeliveryDate string        `json:"deliveryDate,omitempty" jsonschema:"format=date"`
	Channel      string        `json:"channel,omitempty" jsonschema:"enum=web,enum=mobile,enum=store"`
	CallbackURL  string        `json:"callbackUrl,omitempty" jsonschema:"format=uri"`
	ClientIP     string        `json:"clientIp,omitempty" jsonschema:"format=ipv4"`
	Notes        string        `json:"notes,omitempty"`
	CouponCode   string        `json:"couponCode,omitempty"`
}

func BenchmarkDecodeStructBaseline_Order(b *testing.B) {
	body := []byte(readFile(b, "testdata/bodies/order.json"))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var o benchOrder
		if err := json.Unmarshal(body, &o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHandle_Order(b *testing.B) {
	g := mustNew(b, Options{})
	var got benchOrder
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in benchOrder) { got = in })
	body := []byte(readFile(b, "testdata/bodies/order.json"))
	br := newBenchRequest("POST", "/api/orders", body)
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		h.ServeHTTP(w, br.reset())
	}
	if got.Total != 123.23 {
		b.Fatalf("handler not reached: %+v", got)
	}
}

// BenchmarkHandle_Build is what building a typed handler costs at start-up:
// the contract reflected from the order's type (its tags each checked
// against invopop/jsonschema, schematags.go), compiled, and its floats'
// bounds walked. A guard per iteration, since Handle reuses a contract a
// guard already built for the type.
func BenchmarkHandle_Build(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		g := mustNew(b, Options{})
		Handle(g, func(w http.ResponseWriter, r *http.Request, in benchOrder) {})
	}
}
