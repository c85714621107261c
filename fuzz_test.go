package contractguard

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/sink"
)

// The contracts FuzzGuard's requests meet: a schema with formats, a
// pattern, limits and nested values, invariants on the body, the path and
// the query, a schema that allows anything, a contract without one, and
// one in learning mode, which never refuses.
const fuzzContracts = `
- endpoint: /orders/{id}
  method: POST
  schema:
    type: object
    required: [sku, quantity]
    additionalProperties: false
    properties:
      sku: {type: string, pattern: "^[A-Z]{2}-[0-9]{3}$"}
      quantity: {type: integer, minimum: 1, maximum: 100}
      unitPrice: {type: number, exclusiveMinimum: 0}
      email: {type: string, format: email}
      placedAt: {type: string, format: date-time}
      currency: {type: string, enum: [EUR, USD, GBP]}
      tags: {type: array, maxItems: 4, items: {type: string, maxLength: 16}}
      notes: {type: string}
      address:
        type: object
        properties:
          city: {type: string}
          zip: {type: string, maxLength: 10}
  invariants:
    - expr: "!has(request.body.unitPrice) || double(request.body.quantity) * request.body.unitPrice <= 5000.0"
      message: a line may not exceed 5000
    - expr: request.params.id != 'locked'
      message: the order is locked
    - expr: "!has(request.body.tags) || request.body.tags.all(t, t != 'banned')"
      message: no banned tags
- endpoint: /notes
  method: PUT
  schema: {}
  invariants:
    - expr: "!('debug' in request.query) || request.query.debug == 'off'"
      message: debug must be off
- endpoint: /raw
  method: POST
  invariants:
    - expr: request.method == 'POST'
      message: only posts
- endpoint: /items/{id}
  method: GET
  invariants:
    - expr: request.params.id.matches('^[0-9]+$')
      message: the id is a number
- endpoint: /drafts/{id}
  method: PATCH
  mode: learn
  schema:
    type: object
    required: [title]
    properties:
      title: {type: string, maxLength: 20}
  invariants:
    - expr: request.body.title != 'x'
      message: a real title
`

// fuzzLine is the typed handler's request: field rules, a struct rule, a
// nested type with a rule of its own in a slice.
type fuzzLine struct {
	_         struct{}      `cg:"cel=data.sku != data.note,msg=the note may not repeat the sku"`
	SKU       string        `json:"sku" jsonschema:"pattern=^[A-Z]{2}-[0-9]{3}$"`
	Quantity  int           `json:"quantity" jsonschema:"minimum=1,maximum=100" cg:"cel=self != 13,msg=no thirteen"`
	Price     float64       `json:"price,omitempty" jsonschema:"exclusiveMinimum=0"`
	Email     string        `json:"email,omitempty" jsonschema:"format=email"`
	Tags      []string      `json:"tags,omitempty" jsonschema:"maxItems=4"`
	Note      string        `json:"note,omitempty"`
	Size      int32         `json:"size,omitempty"`
	Addresses []fuzzAddress `json:"addresses,omitempty"`
}

type fuzzAddress struct {
	City string `json:"city"`
	Zip  string `json:"zip,omitempty" cg:"cel=size(self) <= 10,msg=the zip is too long"`
}

// What the fuzzer's bytes become on the wire: each encoding the guard
// reads, one it does not, and bodies that say they are encoded and are not.
const (
	encNone = iota
	encGzip
	encZlib
	encRawDeflate // deflate without zlib's wrapper: never passes as decoded
	encBrotli     // declared, not decoded: 415 where the body is read
	encIdentity   // declared identity: the body as it is
	encFalseGzip  // declared gzip, sent plain
	encXGzipUpper // "X-GZIP", gzipped
	encCutGzip    // gzipped, its last bytes cut off: never passes as decoded
	encGzipTwice  // "gzip, gzip": two layers, which the guard does not decode
	encGzipHalves // two gzip members, each half the body: decoded whole
	encZlibMore   // zlib, then a byte more: never passes as decoded
	encGzipMore   // gzip, then bytes more: never passes as decoded
	encodings
)

var fuzzMethods = []string{"POST", "PUT", "GET", "post", "PATCH", "DELETE"}

// The Content-Type headers the fuzzer chooses from; nil: none.
var fuzzTypes = [][]string{nil, {"application/json"}, {"application/json; charset=utf-8"},
	{"text/plain"}, {"application/merge-patch+json"}, {"APPLICATION/JSON"},
	{"application/json; charset=latin1"}, {"application/json", "application/json"}}

// fuzzHandled is what the handler behind the guard saw.
type fuzzHandled struct {
	calls  int
	body   []byte
	doc    any
	doced  bool
	line   fuzzLine
	length int64 // the request's ContentLength

	sinkErrs []error // what the sink checks said of a value spliced in
}

// record is what a handler sees of r: every handler records it.
func (h *fuzzHandled) record(r *http.Request) {
	h.calls++
	h.body, _ = io.ReadAll(r.Body)
	h.length = r.ContentLength
	h.doc, h.doced = Body(r)
}

// FuzzGuard sends arbitrary requests through the guard's front doors —
// Middleware, a typed handler, both (a ServeMux behind Middleware), Check
// — and holds what the guard promises
// on every one, whatever it decides: it never panics; a request it passes
// reaches the handler with exactly the bytes that came, and what it
// decoded of them is what encoding/json (the body) and json v2 (the typed
// value) make of the same bytes; a rejection is the specified JSON error
// body, its code and status from the spec's table, its paths JSON
// pointers, its messages one line that echo at most 64 bytes of the body
// and no invariant's source; and Check decides as Middleware does.
func FuzzGuard(f *testing.F) {
	run := fuzzGuard(f)
	for _, s := range fuzzSeeds {
		f.Add(s.method, s.target, s.ctype, s.enc, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method uint8, target string, ctype, enc uint8, plain []byte) {
		run(t, method, target, ctype, enc, plain)
	})
}

// TestFuzzGuard_Seeds: the harness is live. Each seed gets the status it
// must, so FuzzGuard's checks of passed and refused requests both run,
// and a value spliced into the sinks reaches them.
func TestFuzzGuard_Seeds(t *testing.T) {
	run := fuzzGuard(t)
	for _, s := range fuzzSeeds {
		got, seen := run(t, s.method, s.target, s.ctype, s.enc, []byte(s.body))
		if got != s.status {
			t.Errorf("%s %q (Content-Type %d, encoding %d): %d, want %d", fuzzMethods[s.method], s.target, s.ctype, s.enc, got, s.status)
		}
		if blocked := len(seen.sinkErrs) > 0 && errors.Is(seen.sinkErrs[0], sink.ErrBlocked); blocked != s.sqlBlocked {
			t.Errorf("%s %q: the spliced query blocked: %v, want %v", fuzzMethods[s.method], s.target, blocked, s.sqlBlocked)
		}
	}
}

const (
	fuzzOrder    = `{"sku":"BK-001","quantity":2,"unitPrice":19.99,"email":"ada@example.com","placedAt":"2026-11-26T10:00:00Z","currency":"EUR","tags":["gift"],"notes":"leave at the door","address":{"city":"Lyon","zip":"69001"}}`
	fuzzLineBody = `{"sku":"BK-001","quantity":2,"price":1.5,"email":"ada@example.com","tags":["a"],"note":"n","size":7,"addresses":[{"city":"Lyon","zip":"69001"}]}`
)

var fuzzSeeds = []struct {
	method     uint8
	target     string
	ctype, enc uint8
	body       string
	status     int
	sqlBlocked bool // the body's notes, spliced into a query, are blocked
}{
	{0, "/orders/42", 1, encNone, fuzzOrder, 200, false},
	{0, "/orders/42", 1, encNone, `{"sku":"BK-001","quantity":2,"notes":"O'Brien"}`, 200, true},
	{0, "/typed", 1, encGzip, `{"sku":"BK-001","quantity":2,"note":"O'Brien"}`, 200, true},
	{0, "/orders/42", 0, encGzip, fuzzOrder, 200, false},
	{0, "/orders/42", 0, encGzip | 0x80, fuzzOrder, 200, false},
	{0, "/orders/locked", 2, encZlib, fuzzOrder, 422, false},
	{0, "/orders/42", 1, encRawDeflate, `{"sku":"BK-001","quantity":200}`, 400, false},
	{0, "/orders/42", 1, encRawDeflate, `{"sku":"BK-001","quantity":2,"tags":["banned"]}`, 400, false},
	{0, "/orders/42", 1, encGzipHalves, fuzzOrder, 200, false},
	{0, "/orders/42", 1, encGzipHalves, `{"sku":"BK-001","quantity":2,"tags":["banned"]}`, 422, false},
	{0, "/orders/42", 1, encZlibMore, fuzzOrder, 400, false},
	{0, "/orders/42", 1, encGzipMore | 0x80, fuzzOrder, 400, false},
	{0, "/orders/42", 1, encBrotli, fuzzOrder, 415, false},
	{0, "/orders/42", 1, encFalseGzip, fuzzOrder, 400, false},
	{0, "/orders/42", 1, encCutGzip, fuzzOrder, 400, false},
	{0, "/orders/42", 1, encGzipTwice | 0x80, fuzzOrder, 415, false},
	{0, "/orders/42", 1, encXGzipUpper, strings.Repeat(" ", 5000) + "{}", 413, false},
	{0, "/orders/42", 3, encNone, fuzzOrder, 415, false},
	{0, "/orders/42", 6, encNone, fuzzOrder, 415, false},
	{0, "/orders/42", 7, encNone, fuzzOrder, 415, false},
	{0, "/orders/42/", 1, encNone, `{"sku":"BK-001","quantity":2,"sku":"x"}`, 400, false},
	{3, "/ORDERS/42", 5, encNone, `{"sku":"BK-001","quantity":2,"notes":"' OR 1=1 --"}`, 403, false},
	{1, "/notes?debug=on", 4, encIdentity, `[1,2,{"a":null}]`, 422, false},
	{1, "/notes?debug=off", 4, encIdentity, `[1,2,{"a":null}]`, 200, false},
	{1, "/notes", 0, encXGzipUpper, `"\ud83d\ude00"`, 200, false},
	{1, "/notes", 0, encNone, `{"__proto__":{"x":1}}`, 403, false},
	{1, "/notes", 0, encNone, `{"a":1}{}`, 400, false},
	{3, "/notes", 0, encNone, `{"a":1}{}`, 200, false},
	{0, "/raw", 3, encNone, `not json`, 200, false},
	{2, "/items/12", 0, encNone, ``, 200, false},
	{0, "/unguarded", 1, encNone, strings.Repeat(" ", 5000) + "{}", 200, false},
	{0, "/unguarded", 0, encGzip | 0x80, `{"notes":"x"}`, 200, false},
	{0, "/orders/42", 1, encNone, `{"sku":"BK-001","quantity":2,"notes":"x' OR '1'='1"}`, 403, false},
	{0, "/orders/42", 1, encNone, `{"sku":"BK-001","quantity":2,"notes":"../../etc/passwd"}`, 403, false},
	{2, "/items/a%2Fb", 0, encNone, ``, 422, false},
	// A raw path Go distrusts (the brace): EscapedPath encodes the decoded
	// path afresh (/items/1/2%7B, no contract); Check is given the path as
	// sent, as Middleware reads it.
	{2, "/items/1%2F2{", 0, encNone, ``, 422, false},
	{2, "/items/1%27%20OR%201=1--", 0, encNone, ``, 403, false},
	{2, "/items/..%2F..%2Fetc%2Fpasswd", 0, encNone, ``, 403, false},
	{1, "/notes?q=%27%20OR%201%3D1%20--", 0, encNone, `{}`, 403, false},
	{1, "/notes", 0, encNone, `{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA":1,"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA":2}`, 400, false},
	{0, "/orders/42", 1, encNone, `{"sku":"BK-001","quantity":2,"request\u002ebody.":1}`, 400, false},
	{0, "/typed", 1, encNone, fuzzLineBody, 200, false},
	{0, "/typed/both", 1, encNone, fuzzLineBody, 200, false},
	{0, "/typed/both", 1, encGzip, `{"sku":"BK-001","quantity":13}`, 422, false},
	{0, "/typed/both", 1, encNone, `{"sku":"BK-001","quantity":2,"note":"O'Brien"}`, 200, true},
	{4, "/drafts/7", 1, encNone, `{"title":"x"}`, 200, false},
	{4, "/drafts/7", 1, encNone, `{"title":"a title far too long for it"}`, 200, false},
	{4, "/drafts/7", 1, encNone, `{"title":"x",`, 200, false},
	{0, "/typed", 1, encGzip, `{"sku":"BK-001","quantity":13}`, 422, false},
	{0, "/typed", 1, encNone, `{"sku":"BK-001","quantity":2,"addresses":[{"city":"x","zip":"12345678901"}]}`, 422, false},
	{0, "/typed", 1, encNone, `{"sku":"BK-001","quantity":1.0}`, 400, false},
	{0, "/typed", 1, encNone, `{"sku":"BK-001","quantity":2,"size":4294967296}`, 400, false},
}

// fuzzGuard is FuzzGuard's check of one request, on a guard of its own;
// it returns the response's status.
func fuzzGuard(tb testing.TB) func(t *testing.T, method uint8, target string, ctype, enc uint8, plain []byte) (int, fuzzHandled) {
	g := mustNew(tb, Options{
		ContractsFS:  mapFS(map[string]string{"c.yaml": fuzzContracts}),
		MaxBodyBytes: 4096, MaxDepth: 16, VulnerabilityScan: true, Metrics: true, Logger: discard,
		SinkProtection: true, LearnSampleRate: 1, LicenseKey: trustTestVendor(tb).key(tb),
	})
	var seen fuzzHandled
	mw := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.record(r)
		if m, ok := seen.doc.(map[string]any); ok {
			if notes, ok := m["notes"].(string); ok {
				seen.sinkErrs = fuzzSinks(r, notes)
			}
		}
	}))
	typed := Handle(g, func(w http.ResponseWriter, r *http.Request, in fuzzLine) {
		seen.record(r)
		seen.line = in
		seen.sinkErrs = fuzzSinks(r, in.Note)
	})
	// The typed handler behind Middleware too: its contract enforced once,
	// by whichever door comes first, with the same verdict.
	mux := http.NewServeMux()
	mux.Handle("/typed/both", typed)
	both := g.Middleware(mux)
	return func(t *testing.T, method uint8, target string, ctype, enc uint8, plain []byte) (int, fuzzHandled) {
		seen = fuzzHandled{}
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Host != "" || !strings.HasPrefix(target, "/") {
			return 0, seen
		}
		chunked, mode := enc&0x80 != 0, enc&0x7f%encodings
		wire, encoding := fuzzWire(t, plain, mode)
		r := &http.Request{
			Method: fuzzMethods[int(method)%len(fuzzMethods)], URL: u, RequestURI: target,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "example.com",
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(wire)), ContentLength: int64(len(wire)),
		}
		if chunked {
			r.ContentLength = -1
		}
		if ct := fuzzTypes[int(ctype)%len(fuzzTypes)]; ct != nil {
			r.Header["Content-Type"] = ct
		}
		if encoding != "" {
			r.Header.Set("Content-Encoding", encoding)
		}
		isTyped := strings.HasPrefix(u.Path, "/typed")
		h := mw
		if isTyped {
			h = typed
		}

		var viaBoth *httptest.ResponseRecorder
		var sawBoth fuzzHandled
		if u.Path == "/typed/both" {
			r2 := *r
			r2.Body = io.NopCloser(bytes.NewReader(wire))
			viaBoth = httptest.NewRecorder()
			both.ServeHTTP(viaBoth, &r2)
			sawBoth, seen = seen, fuzzHandled{}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if viaBoth != nil && (viaBoth.Code != w.Code || viaBoth.Body.String() != w.Body.String() || !sameHandled(sawBoth, seen)) {
			t.Fatalf("the typed handler behind Middleware answers %d %s and sees %+v %v; alone %d %s and %+v %v", viaBoth.Code, viaBoth.Body, sawBoth, sawBoth.sinkErrs, w.Code, w.Body, seen, seen.sinkErrs)
		}
		if r.Method == "PATCH" && strings.HasPrefix(u.Path, "/drafts/") && strings.Count(u.Path, "/") == 2 && seen.calls != 1 {
			t.Fatalf("a contract in learning mode refused: %d %s", w.Code, w.Body)
		}

		switch {
		case seen.calls == 0:
			fuzzRejection(t, w, target, plain)
		case seen.calls > 1 || w.Code != http.StatusOK:
			t.Fatalf("the handler ran %d times, and the response is %d: %s", seen.calls, w.Code, w.Body)
		case !bytes.Equal(seen.body, wire):
			t.Fatalf("the handler got %q, not the %q that came", seen.body, wire)
		case seen.length != int64(len(wire)) && !(chunked && seen.length == -1):
			t.Fatalf("the handler's request says Content-Length %d for a body of %d bytes", seen.length, len(wire))
		case (mode == encCutGzip || mode == encRawDeflate || mode == encZlibMore || mode == encGzipMore) && seen.doced:
			t.Fatalf("a body that is not wholly gzip or zlib (mode %d) was decoded and passed", mode)
		case mode != encFalseGzip: // else the decoded bytes are not plain, if the body was a gzip after all
			fuzzPassed(t, &seen, isTyped, strings.HasPrefix(strings.ToLower(u.EscapedPath()), "/orders/"), plain)
		}
		for _, err := range seen.sinkErrs {
			if err != nil && !errors.Is(err, sink.ErrBlocked) {
				t.Fatalf("a sink check failed other than by blocking: %v", err)
			}
		}

		// Check decides as Middleware does, on the requests both can see:
		// a JSON body (or no Content-Type), not encoded, no typed handler.
		if isJSON, bad := mediaType(r.Header); isTyped || mode != encNone && mode != encIdentity || !isJSON || bad != "" {
			return w.Code, seen
		}
		// The target as sent: u.EscapedPath() encodes the decoded path
		// afresh when it distrusts the raw one, and is another path.
		path := target
		v := g.Check(r.Method, path, plain)
		switch {
		case v == nil && seen.calls == 0:
			t.Fatalf("Check passes %s %s, Middleware refuses it: %s", r.Method, path, w.Body)
		case v != nil && seen.calls > 0:
			t.Fatalf("Middleware passes %s %s, Check refuses it: %v", r.Method, path, v)
		case v != nil:
			var eb errorBody
			json.Unmarshal(w.Body.Bytes(), &eb) // fuzzRejection has checked it
			// Check's details as JSON carries them: a query name or value of
			// invalid UTF-8 is U+FFFD there.
			var details []Detail
			b, _ := json.Marshal(v.Details)
			json.Unmarshal(b, &details)
			if v.Status != w.Code || v.Code != eb.Code || !reflect.DeepEqual(details, eb.Details) {
				t.Fatalf("Check refuses %s %s with %d %s %v, Middleware with %d %s", r.Method, path, v.Status, v.Code, v.Details, w.Code, w.Body)
			}
		}
		return w.Code, seen
	}
}

// sameHandled reports whether two handlers saw the same, and the sinks
// blocked the same calls. (Their messages name the route, which a typed
// handler alone knows only by its type.)
func sameHandled(a, b fuzzHandled) bool {
	blocked := func(errs []error) (out []bool) {
		for _, err := range errs {
			out = append(out, errors.Is(err, sink.ErrBlocked))
		}
		return out
	}
	if !slices.Equal(blocked(a.sinkErrs), blocked(b.sinkErrs)) {
		return false
	}
	a.sinkErrs, b.sinkErrs = nil, nil
	return reflect.DeepEqual(a, b)
}

// fuzzSinks hands a value of the body to the sinks as an application that
// splices it would: the sink checks read the request's input from r.
func fuzzSinks(r *http.Request, v string) []error {
	ctx := r.Context()
	return []error{
		sink.CheckSQL(ctx, "SELECT * FROM notes WHERE text = '"+v+"'", sink.SQLite),
		sink.CheckSQL(ctx, "SELECT * FROM notes WHERE id = "+v, sink.PostgreSQL),
		sink.CheckPath(ctx, "uploads/"+v),
		sink.CheckCmd(ctx, exec.Command("sh", "-c", "echo "+v)),
	}
}

// fuzzWire is what goes on the wire for plain in mode, and the
// Content-Encoding header that says so.
func fuzzWire(t *testing.T, plain []byte, mode uint8) ([]byte, string) {
	// compress is p through a writer that new makes on a buffer of its own.
	compress := func(p []byte, new func(io.Writer) io.WriteCloser) []byte {
		var b bytes.Buffer
		w := new(&b)
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	gz := func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }
	zl := func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }
	switch mode {
	case encGzip:
		return compress(plain, gz), "gzip"
	case encZlib:
		return compress(plain, zl), "deflate"
	case encRawDeflate:
		return compress(plain, func(w io.Writer) io.WriteCloser { fw, _ := flate.NewWriter(w, flate.BestSpeed); return fw }), "deflate"
	case encBrotli:
		return plain, "br"
	case encIdentity:
		return plain, "identity"
	case encFalseGzip:
		return plain, "gzip"
	case encXGzipUpper:
		return compress(plain, gz), "X-GZIP"
	case encCutGzip:
		z := compress(plain, gz)
		return z[:len(z)-4], "gzip"
	case encGzipTwice:
		return compress(compress(plain, gz), gz), "gzip, gzip"
	case encGzipHalves:
		return append(compress(plain[:len(plain)/2], gz), compress(plain[len(plain)/2:], gz)...), "gzip"
	case encZlibMore:
		return append(compress(plain, zl), 0), "deflate"
	case encGzipMore:
		return append(compress(plain, gz), "{}"...), "gzip"
	}
	return plain, ""
}

// fuzzPassed holds what the handler of a passed request decoded: Body(r)
// is encoding/json's reading of plain, and the typed value json v2's; and
// both meet their contract. Body(r) is nil where no contract parsed the
// body. plain, which a contract accepted, is within the size limit and
// meets the strict body rules (SPEC.md 3.4), held to jsontext, which reads
// JSON by RFC 7493.
func fuzzPassed(t *testing.T, seen *fuzzHandled, isTyped, orders bool, plain []byte) {
	if !seen.doced {
		if isTyped {
			t.Fatalf("the typed handler ran without Body(r)")
		}
		return
	}
	if len(plain) > 4096 {
		t.Fatalf("the guard passed a body of %d bytes decoded, over its limit of 4096", len(plain))
	}
	if len(plain) > 0 && !jsontext.Value(plain).IsValid() {
		t.Fatalf("the guard passed %q, which is not I-JSON", plain)
	}
	want, err := stdDecode(plain)
	if err != nil {
		t.Fatalf("the guard passed %q, which encoding/json refuses: %v", plain, err)
	}
	if !reflect.DeepEqual(seen.doc, want) {
		t.Fatalf("Body(r) is %#v for %q, encoding/json reads %#v", seen.doc, plain, want)
	}
	if err := fuzzStrict(want, 0); err != "" {
		t.Fatalf("the guard passed %q: %s", plain, err)
	}
	switch {
	case isTyped:
		var v fuzzLine
		if err := jsonv2.Unmarshal(plain, &v); err != nil {
			t.Fatalf("the typed handler got %+v from %q, which json v2 refuses: %v", seen.line, plain, err)
		}
		if !reflect.DeepEqual(seen.line, v) {
			t.Fatalf("the typed handler got %+v from %q, json v2 reads %+v", seen.line, plain, v)
		}
		l := seen.line
		bad := l.Quantity < 1 || l.Quantity > 100 || l.Quantity == 13 || l.Note == l.SKU || !skuPattern.MatchString(l.SKU)
		for _, a := range l.Addresses {
			bad = bad || utf8.RuneCountInString(a.Zip) > 10
		}
		if bad {
			t.Fatalf("the typed handler got %+v, which its contract refuses", l)
		}
	case orders:
		m, _ := want.(map[string]any)
		sku, _ := m["sku"].(string)
		// An integer to draft-07 is a number with no fraction: 2.0 is
		// one, as 2 is (the oracle read it with ParseInt, which refuses
		// 2.0, and called the guard wrong for passing it).
		q, ok := new(big.Rat).SetString(fmt.Sprint(m["quantity"]))
		bad := m == nil || !skuPattern.MatchString(sku) || !ok || !q.IsInt() || q.Cmp(big.NewRat(1, 1)) < 0 || q.Cmp(big.NewRat(100, 1)) > 0
		tags, _ := m["tags"].([]any)
		bad = bad || slices.Contains(tags, any("banned"))
		if bad {
			t.Fatalf("a handler of /orders/{id} got %q, which the contract refuses", plain)
		}
	}
}

var skuPattern = regexp.MustCompile(`^[A-Z]{2}-[0-9]{3}$`)

// fuzzStrict is what a passed body holds to that jsontext does not check:
// no two names of an object equal but for case, at most 16 levels deep
// (Options.MaxDepth), numbers of at most 1,000 characters.
func fuzzStrict(v any, depth int) string {
	switch v := v.(type) {
	case map[string]any:
		if depth++; depth > 16 {
			return "nested deeper than 16"
		}
		names := slices.Collect(maps.Keys(v))
		for i, a := range names {
			for _, b := range names[i+1:] {
				if strings.EqualFold(a, b) {
					return fmt.Sprintf("names %q and %q differ only in case", a, b)
				}
			}
		}
		for _, e := range v {
			if err := fuzzStrict(e, depth); err != "" {
				return err
			}
		}
	case []any:
		if depth++; depth > 16 {
			return "nested deeper than 16"
		}
		for _, e := range v {
			if err := fuzzStrict(e, depth); err != "" {
				return err
			}
		}
	case json.Number:
		if len(v) > 1000 {
			return "a number longer than 1000 characters"
		}
	}
	return ""
}

// stdDecode is encoding/json's reading of a body the guard passed; an
// empty body is null to the guard.
func stdDecode(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// fuzzSources are the rules' sources, which no rejection shows: the
// invariants of fuzzContracts and the cg rules of fuzzLine's types.
var fuzzSources = func() (out []string) {
	for _, m := range regexp.MustCompile(`(?m)^ +- expr: (.+)$`).FindAllStringSubmatch(fuzzContracts, -1) {
		out = append(out, strings.Trim(m[1], `"`))
	}
	for _, t := range []reflect.Type{reflect.TypeFor[fuzzLine](), reflect.TypeFor[fuzzAddress]()} {
		for i := range t.NumField() {
			cg, ok := t.Field(i).Tag.Lookup("cg")
			if !ok {
				continue
			}
			tag, err := parseTag(cg)
			if err != nil {
				panic(err)
			}
			for _, r := range tag.rules {
				out = append(out, r.expr)
			}
		}
	}
	return out
}()

// fuzzRejection holds a rejection to the spec: a code of its table and
// that code's status (errors_test.go and the seeds pin each status), the JSON error body, a JSON pointer or the scan's query: and
// param: paths, one-line messages that echo at most 64 bytes of a value of
// the body and no invariant's source.
func fuzzRejection(t *testing.T, w *httptest.ResponseRecorder, target string, plain []byte) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("a rejection with Content-Type %q: %d %s", ct, w.Code, w.Body)
	}
	var eb errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil {
		t.Fatalf("a rejection's body is not JSON (%v): %s", err, w.Body)
	}
	if status, ok := statusOf[eb.Code]; eb.Error != "CONTRACT_VIOLATION" || !ok || status != w.Code || eb.Details == nil {
		t.Fatalf("a rejection out of the spec: status %d, %s", w.Code, w.Body)
	}
	// The strings of the body, unescaped, which a message may echo in part.
	var values []string
	if v, err := stdDecode(plain); err == nil {
		values = fuzzStrings(v, nil)
	}
	for _, d := range eb.Details {
		switch {
		case d.Path == "" || d.Path[0] == '/' || d.Path == "query":
		case strings.HasPrefix(d.Path, "query:") || strings.HasPrefix(d.Path, "param:"):
		default:
			t.Fatalf("a detail's path is neither a JSON pointer nor a query or parameter: %q", d.Path)
		}
		if strings.ContainsAny(d.Message, "\r\n") || d.Message == "" {
			t.Fatalf("a detail's message is not one line: %q", d.Message)
		}
		for _, src := range fuzzSources {
			if strings.Contains(d.Message, src) && !strings.Contains(target, src) && !bytes.Contains(plain, []byte(src)) {
				t.Fatalf("a message shows an invariant's source: %q", d.Message)
			}
		}
		for _, v := range values {
			for i := 0; i+failure.MaxEcho < len(v); i++ {
				if strings.Contains(d.Message, v[i:i+failure.MaxEcho+1]) {
					t.Fatalf("a message echoes more than %d bytes of %q: %q", failure.MaxEcho, v, d.Message)
				}
			}
		}
	}
}

// fuzzStrings appends the names and string values in v to out.
func fuzzStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case map[string]any:
		for k, e := range v {
			out = fuzzStrings(e, append(out, k))
		}
	case []any:
		for _, e := range v {
			out = fuzzStrings(e, out)
		}
	}
	return out
}
