package contractguard

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const learnContracts = `endpoint: /orders
method: POST
mode: learn
schema:
  type: object
  required: [sku, qty]
  additionalProperties: false
  properties:
    sku: {type: string}
    qty: {type: integer, minimum: 1}
invariants:
  - expr: request.body.qty <= 100
    message: at most 100
---
endpoint: /users
method: POST
schema:
  type: object
  required: [name]
  properties:
    name: {type: string}
`

// learnGuard is a guard with the contracts above, one of them learning,
// and a licence that entitles it; it records what OnObserve and OnReject
// receive.
type learnRecorder struct {
	observed []*Observation
	rejected []*Violation
}

func learnGuard(t *testing.T, mod ...func(*Options)) (*Guard, *learnRecorder) {
	t.Helper()
	v := trustTestVendor(t)
	rec := &learnRecorder{}
	o := Options{ContractsFS: mapFS(map[string]string{"c.yaml": learnContracts}), LicenseKey: v.key(t), Logger: discard, Metrics: true,
		OnObserve: func(_ *http.Request, o *Observation) { rec.observed = append(rec.observed, o) },
		OnReject: func(w http.ResponseWriter, r *http.Request, v *Violation) {
			rec.rejected = append(rec.rejected, v)
			writeViolation(w, r, v)
		}}
	for _, m := range mod {
		m(&o)
	}
	return mustNew(t, o), rec
}

// TestLearn_ReportsAndPasses: a contract in mode learn is checked as in
// enforcement, but the request it would reject reaches the handler with
// the bytes it came with; the would-be rejection is counted, reported by
// code and path, and given to OnObserve, never to OnReject. A contract
// that enforces still rejects.
func TestLearn_ReportsAndPasses(t *testing.T) {
	g, rec := learnGuard(t)
	var got []byte
	var parsed any
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		parsed, _ = Body(r)
		w.WriteHeader(201)
	}))
	bodies := []string{`{"sku":"A","qty":0,"extra":1}`, `{"sku":"A","qty":500}`, `{"qty":"2"}`, `{"sku":"A","qty":2}`}
	for _, b := range bodies {
		w := send(h, "POST", "/orders", b)
		require.Equal(t, 201, w.Code, b)
		assert.Equal(t, b, string(got), "the bytes as they came")
		assert.NotNil(t, parsed, "Body(r) works where the body parsed")
	}
	rejected(t, send(h, "POST", "/users", `{}`), 400, CodeSchemaInvalid)

	require.Len(t, rec.observed, 3)
	assert.Equal(t, ContractInfo{Method: "POST", Endpoint: "/orders", Source: "c.yaml:1", Mode: ModeLearn}, rec.observed[0].Contract)
	assert.Equal(t, []Detail{{"/extra", "is not allowed"}, {"/qty", "must be >= 1"}}, rec.observed[0].Violation.Details)
	assert.Equal(t, CodeInvariantViolated, rec.observed[1].Violation.Code)
	assert.Equal(t, []Detail{{"/qty", "must be an integer, not a string"}, {"/sku", "is required"}}, rec.observed[2].Violation.Details)
	require.Len(t, rec.rejected, 1, "OnReject only for the enforcing contract")

	m := g.Metrics()
	assert.EqualValues(t, 5, m.RequestsValidated)
	assert.EqualValues(t, 1, m.RequestsBlocked)
	assert.EqualValues(t, 3, m.RequestsWouldBlock)
	assert.Equal(t, []ContractReport{{
		Contract:   ContractInfo{Method: "POST", Endpoint: "/orders", Source: "c.yaml:1", Mode: ModeLearn},
		WouldBlock: 3,
		Codes:      map[string]int64{CodeSchemaInvalid: 2, CodeInvariantViolated: 1},
		Paths:      []PathCount{{"/qty", 2}, {"", 1}, {"/extra", 1}, {"/sku", 1}}, // most frequent first, then by path
	}}, g.LearningReport())

	w := send(g.MetricsHandler(), "GET", "/metrics", "")
	assert.Contains(t, w.Body.String(), `"requests_would_block":3`)
	assert.Contains(t, w.Body.String(), `"learning":[{"contract":{"Method":"POST","Endpoint":"/orders","Source":"c.yaml:1","Mode":"learn"},"would_block":3`)
}

// TestLearn_GlobalMode: Options.LearningMode puts every contract in mode
// learn, and a request no contract matches under RequireContract passes
// too, counted.
func TestLearn_GlobalMode(t *testing.T) {
	g, rec := learnGuard(t, func(o *Options) { o.LearningMode, o.RequireContract = true, true })
	e := &echo{}
	h := g.Middleware(e)
	assert.Equal(t, 200, send(h, "POST", "/users", `{}`).Code)
	assert.Equal(t, 200, send(h, "POST", "/nowhere", `{}`).Code)
	assert.Equal(t, 2, e.calls)
	assert.Empty(t, rec.rejected)
	require.Len(t, rec.observed, 2)
	assert.Equal(t, ModeLearn, rec.observed[0].Contract.Mode)
	assert.Equal(t, ContractInfo{}, rec.observed[1].Contract, "no contract matched")
	assert.Equal(t, CodeNoContract, rec.observed[1].Violation.Code)
	for _, c := range g.Contracts() {
		assert.Equal(t, ModeLearn, c.Mode, c.Endpoint)
	}
	assert.Nil(t, g.Check("POST", "/users", []byte(`{}`)), "Check passes as Middleware does")
	assert.EqualValues(t, 3, g.Metrics().RequestsWouldBlock)
}

// TestLearn_BeforeTheContractRuns: a body too large, of another media
// type, or not JSON is reported, and the handler gets it as it came: a
// body over the limit as a stream, never held whole.
func TestLearn_BeforeTheContractRuns(t *testing.T) {
	g, rec := learnGuard(t, func(o *Options) { o.MaxBodyBytes = 64 })
	var got []byte
	var parsed bool
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		_, parsed = Body(r)
	}))
	big := `{"sku":"` + strings.Repeat("x", 500) + `","qty":1}`

	r := httptest.NewRequest("POST", "/orders", io.NopCloser(strings.NewReader(big))) // no Content-Length: read to the limit
	r.ContentLength = -1
	h.ServeHTTP(httptest.NewRecorder(), r)
	assert.Equal(t, big, string(got), "the part read is given back in front of the rest")

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/orders", strings.NewReader(big))) // over by Content-Length: not read
	assert.Equal(t, big, string(got))

	assert.Equal(t, 200, send(h, "POST", "/orders", `sku=A`, "Content-Type", "text/plain").Code)
	assert.Equal(t, "sku=A", string(got))
	assert.Equal(t, 200, send(h, "POST", "/orders", `{"sku":`).Code)
	assert.Equal(t, `{"sku":`, string(got))
	assert.False(t, parsed, "not JSON: Body(r) says so")

	var codes []string
	for _, o := range rec.observed {
		codes = append(codes, o.Violation.Code)
	}
	assert.Equal(t, []string{CodePayloadTooLarge, CodePayloadTooLarge, CodeUnsupportedMediaType, CodeMalformedJSON}, codes)

	// The enforcing contract still rejects the same requests.
	rejected(t, send(h, "POST", "/users", big), 413, CodePayloadTooLarge)
}

// TestLearn_LogsOnceAnInterval: a would-be rejection is logged at warn
// level, once per contract and code an interval, with the paths and never
// a value.
func TestLearn_LogsOnceAnInterval(t *testing.T) {
	var logs bytes.Buffer
	g, _ := learnGuard(t, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	h := g.Middleware(&echo{})
	for range 3 {
		send(h, "POST", "/orders", `{"sku":"hunter2","qty":0}`)
	}
	send(h, "POST", "/orders", `{"sku":"hunter2","qty":200}`)
	lines := strings.Count(logs.String(), "level=WARN")
	assert.Equal(t, 2, lines, "one line for SCHEMA_INVALID, one for INVARIANT_VIOLATED:\n%s", logs.String())
	assert.Contains(t, logs.String(), `msg="contractguard: learning mode: a request would have been rejected" contract="POST /orders" code=SCHEMA_INVALID paths=[/qty] since_last_line=1`)
	assert.NotContains(t, logs.String(), "hunter2")
	assert.EqualValues(t, 4, g.Metrics().RequestsWouldBlock, "every one is counted")
}

// TestLearn_TypedHandler: a typed contract learns through cg:"mode=learn":
// a body its schema refuses still reaches the handler when it is a T; one
// that is not a T is refused, since the handler cannot run without it. A
// file contract that enforces on the same route still rejects.
func TestLearn_TypedHandler(t *testing.T) {
	type Line struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku" jsonschema:"minLength=3"`
		Qty int      `json:"qty" jsonschema:"minimum=1" cg:"cel=self <= 100,msg=at most 100"`
	}
	g, rec := learnGuard(t)
	var got []Line
	r := chi.NewRouter()
	r.Use(g.Middleware)
	Post(r, g, "/lines", func(w http.ResponseWriter, r *http.Request, in Line) { got = append(got, in) })
	Post(r, g, "/users", func(w http.ResponseWriter, r *http.Request, in Line) { got = append(got, in) })

	assert.Equal(t, 200, send(r, "POST", "/lines", `{"sku":"A","qty":0}`).Code)
	assert.Equal(t, 200, send(r, "POST", "/lines", `{"sku":"ABC","qty":500}`).Code)
	rejected(t, send(r, "POST", "/lines", `{"sku":"ABC","qty":1.5}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []Line{{SKU: "A", Qty: 0}, {SKU: "ABC", Qty: 500}}, got)
	require.Len(t, rec.observed, 3)
	assert.Equal(t, "type contractguard.Line", rec.observed[0].Contract.Source)
	assert.Equal(t, []Detail{{"/qty", "at most 100"}}, rec.observed[1].Violation.Details)

	rejected(t, send(r, "POST", "/users", `{"sku":"ABC","qty":1}`), 400, CodeSchemaInvalid) // the file contract: name is required
	assert.Len(t, got, 2)
}
