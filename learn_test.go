package contractguard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/contractguard/contractguard/sink"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/contractguard/contractguard/internal/learn"
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

// TestLearn_WouldBlockCountsRequests: a request that two learning
// contracts would both reject counts once in requests_would_block, as it
// does in requests_validated and in the observers' events, while each
// contract still reports its own would-be rejection (OnObserve, the
// learning report). Two contracts run on one request beside a typed
// handler's (which Middleware finds), or where its path reads two ways;
// after the body is read, or before (another media type).
func TestLearn_WouldBlockCountsRequests(t *testing.T) {
	type order struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku" jsonschema:"minLength=5"`
	}
	const twoWays = `endpoint: /files/:name
method: POST
mode: learn
schema: {type: object, required: [name]}
---
endpoint: /
method: POST
mode: learn
schema: {type: object, required: [root]}
`
	for _, tc := range []struct {
		name, files, target, body string
		header                    []string
		typed                     bool
		code                      string
	}{
		// The file contract wants qty; the typed one, a longer sku.
		{name: "file and typed", files: learnContracts, target: "/orders", body: `{"sku":"a"}`, typed: true, code: CodeSchemaInvalid},
		// A router resolving the dots serves /; one that does not, /files/:name.
		{name: "two readings", files: twoWays, target: "/files/..", body: `{}`, code: CodeSchemaInvalid},
		{name: "two readings, before the contracts run", files: twoWays, target: "/files/..", body: `a`,
			header: []string{"Content-Type", "text/plain"}, code: CodeUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rec := learnGuard(t, func(o *Options) { o.ContractsFS = mapFS(map[string]string{"c.yaml": tc.files}) })
			var events []Event
			g.Observe(func(e Event) { events = append(events, e) })
			var next http.Handler = &echo{}
			if tc.typed {
				mux := http.NewServeMux()
				mux.Handle("POST "+tc.target, Handle(g, func(http.ResponseWriter, *http.Request, order) {}))
				next = mux
			}
			w := send(g.Middleware(next), "POST", tc.target, tc.body, tc.header...)
			require.Equal(t, 200, w.Code, w.Body.String())

			require.Len(t, events, 1)
			assert.Equal(t, OutcomeWouldBlock, events[0].Outcome)
			assert.Equal(t, tc.code, events[0].Code)
			m := g.Metrics()
			assert.EqualValues(t, 1, m.RequestsValidated)
			assert.EqualValues(t, 1, m.RequestsWouldBlock, "one request")
			assert.Len(t, rec.observed, 2, "one observation per contract")
			report := g.LearningReport()
			require.Len(t, report, 2)
			for _, r := range report {
				assert.EqualValues(t, 1, r.WouldBlock, r.Contract)
			}
		})
	}
}

// TestLearn_TwoPassesCountOnce: a request checked in two passes (a
// typed handler that Middleware cannot see, behind a wrapper) counts once
// in requests_validated and once in requests_would_block, however many
// passes would have rejected it, and each contract reports once; the
// exporters' events count each pass. It holds when the body is refused
// before any contract runs (its media type), where the first pass leaves
// no parsed body behind, and when the second pass's contract enforces.
func TestLearn_TwoPassesCountOnce(t *testing.T) {
	type learning struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku" jsonschema:"minLength=5"`
	}
	type enforcing struct {
		SKU string `json:"sku" jsonschema:"minLength=5"`
	}
	for _, tc := range []struct {
		name, body  string
		header      []string
		enforce     bool
		status      int
		outcomes    []Outcome
		would, bad  int64
		observed    int
		typedReport bool
	}{
		{name: "both would reject", body: `{"sku":"a"}`, status: 200,
			outcomes: []Outcome{OutcomeWouldBlock, OutcomeWouldBlock}, would: 1, observed: 2, typedReport: true},
		{name: "both would reject, before the contracts run", body: `{"sku":"a"}`, header: []string{"Content-Type", "text/plain"}, status: 200,
			outcomes: []Outcome{OutcomeWouldBlock, OutcomeWouldBlock}, would: 1, observed: 2, typedReport: true},
		{name: "the first would reject before it runs, the second rejects", body: `{"sku":"a"}`, header: []string{"Content-Type", "text/plain"},
			enforce: true, status: 415, outcomes: []Outcome{OutcomeWouldBlock, OutcomeRejected}, would: 1, bad: 1, observed: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rec := learnGuard(t)
			var outcomes []Outcome
			g.Observe(func(e Event) { outcomes = append(outcomes, e.Outcome) })
			mux := http.NewServeMux()
			reached := 0
			if tc.enforce {
				mux.Handle("POST /orders", Handle(g, func(http.ResponseWriter, *http.Request, enforcing) { reached++ }))
			} else {
				mux.Handle("POST /orders", Handle(g, func(http.ResponseWriter, *http.Request, learning) { reached++ }))
			}
			// The wrapper hides the mux from Middleware: T's contract runs in a second pass.
			h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))

			w := send(h, "POST", "/orders", tc.body, tc.header...)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			assert.Equal(t, tc.status == 200, reached == 1, "the handler runs when nothing enforces a rejection")
			assert.Equal(t, tc.outcomes, outcomes, "an event a pass")
			m := g.Metrics()
			assert.EqualValues(t, 1, m.RequestsValidated, "one request")
			assert.EqualValues(t, tc.would, m.RequestsWouldBlock, "one request")
			assert.EqualValues(t, tc.bad, m.RequestsBlocked)
			assert.Len(t, rec.observed, tc.observed, "one observation per learning contract")
			for _, r := range g.LearningReport() {
				assert.EqualValues(t, 1, r.WouldBlock, r.Contract)
			}
			assert.Len(t, g.LearningReport(), map[bool]int{true: 2, false: 1}[tc.typedReport])
		})
	}
}

// TestLearn_TypedHandlerWithoutItsT: in learning mode a body the typed
// handler cannot decode into its T (a member of the wrong type, a body
// too large, not JSON) is refused, as the handler cannot run without it;
// it was counted and reported as a would-block, a request that "reached
// the handler", where the client got the refusal. It is counted as
// refused now, the contract's would-be rejection still observed.
func TestLearn_TypedHandlerWithoutItsT(t *testing.T) {
	type line struct {
		_ struct{} `cg:"mode=learn"`
		N int      `json:"n" jsonschema:"minimum=1"`
	}
	for _, tc := range []struct {
		name, path, body string
		twoPasses        bool
		status           int
		code             string
		outcomes         []Outcome
		would, bad       int64
	}{
		{name: "not a T", path: "/lines", body: `{"n":"x"}`, status: 400, code: CodeSchemaInvalid,
			outcomes: []Outcome{OutcomeRejected}, bad: 1},
		{name: "too large", path: "/lines", body: `{"n":1,"pad":"` + strings.Repeat("x", 100) + `"}`, status: 413, code: CodePayloadTooLarge,
			outcomes: []Outcome{OutcomeRejected}, bad: 1},
		{name: "not JSON", path: "/lines", body: `{"n":`, status: 400, code: CodeMalformedJSON,
			outcomes: []Outcome{OutcomeRejected}, bad: 1},
		{name: "a T its contract would refuse", path: "/lines", body: `{"n":0}`, status: 200,
			outcomes: []Outcome{OutcomeWouldBlock}, would: 1},
		{name: "two passes, not a T", path: "/orders", body: `{"n":"x"}`, twoPasses: true, status: 400, code: CodeSchemaInvalid,
			outcomes: []Outcome{OutcomeWouldBlock, OutcomeRejected}, would: 1, bad: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rec := learnGuard(t, func(o *Options) { o.MaxBodyBytes = 64 })
			var outcomes []Outcome
			g.Observe(func(e Event) { outcomes = append(outcomes, e.Outcome) })
			mux := http.NewServeMux()
			reached := 0
			mux.Handle("POST "+tc.path, Handle(g, func(http.ResponseWriter, *http.Request, line) { reached++ }))
			var h http.Handler = mux
			if tc.twoPasses { // the wrapper hides the mux from Middleware: T's contract runs in a second pass
				h = g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
			}
			w := send(h, "POST", tc.path, tc.body)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			assert.Equal(t, tc.status == 200, reached == 1)
			if tc.code != "" {
				require.Len(t, rec.rejected, 1, "OnReject")
				assert.Equal(t, tc.code, rec.rejected[0].Code)
			}
			assert.Equal(t, tc.outcomes, outcomes, "an event a pass")
			m := g.Metrics()
			assert.EqualValues(t, 1, m.RequestsValidated, "one request")
			assert.EqualValues(t, tc.would, m.RequestsWouldBlock)
			assert.EqualValues(t, tc.bad, m.RequestsBlocked)
			assert.NotEmpty(t, rec.observed, "the learning contracts' would-be rejections are observed")
		})
	}
}

// TestLearn_NoContractThenTypedCountsOnce: under RequireContract in
// learning mode, a request Middleware finds no contract for would be
// refused (NO_CONTRACT) and passes; the typed handler behind a wrapper
// then checks it against T's contract. One request: counted once as
// validated and once as would-block, and the typed pass still records
// the input for the sinks (found by review).
func TestLearn_NoContractThenTypedCountsOnce(t *testing.T) {
	type signup struct {
		Name string `json:"name" jsonschema:"minLength=3"`
	}
	g, _ := learnGuard(t, func(o *Options) { o.RequireContract, o.LearningMode, o.SinkProtection = true, true, true })
	var sqlErr error
	mux := http.NewServeMux()
	mux.Handle("POST /signup", Handle(g, func(w http.ResponseWriter, r *http.Request, in signup) {
		sqlErr = sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = '"+in.Name+"'", sink.SQLite)
	}))
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
	w := send(h, "POST", "/signup", `{"name":"x' OR '1'='1"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	m := g.Metrics()
	assert.EqualValues(t, 1, m.RequestsValidated, "one request")
	assert.EqualValues(t, 1, m.RequestsWouldBlock, "one request")
	assert.NoError(t, sqlErr, "learning mode: report only")
	assert.EqualValues(t, 1, g.Stats().SinkBlocks["sql"], "the typed pass recorded the input")
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

// TestLearn_ReportKeepsTypesOfOneNameApart: two typed contracts whose Go
// types print alike (declared in two functions here; api.Request of two
// packages named api in an application) are two contracts in the learning
// report. They were one entry, keyed by the name: the would-be rejections
// and paths of both, under the first one's information.
func TestLearn_ReportKeepsTypesOfOneNameApart(t *testing.T) {
	g, _ := learnGuard(t)
	a, b := sameNamedTypeA(g), sameNamedTypeB(g)
	assert.Equal(t, 200, send(a, "POST", "/a", `{"a":1}`).Code)
	assert.Equal(t, 200, send(b, "POST", "/b", `{"b":"x"}`).Code)
	assert.Equal(t, 200, send(b, "POST", "/b", `{"b":"y"}`).Code)
	var typed []ContractReport
	for _, cr := range g.LearningReport() {
		if cr.Contract.Source == "type contractguard.sameName" {
			typed = append(typed, cr)
		}
	}
	require.Len(t, typed, 2, "one entry per contract")
	slices.SortFunc(typed, func(x, y ContractReport) int { return cmp.Compare(x.WouldBlock, y.WouldBlock) })
	assert.EqualValues(t, 1, typed[0].WouldBlock)
	assert.Equal(t, []PathCount{{"/a", 1}}, typed[0].Paths)
	assert.EqualValues(t, 2, typed[1].WouldBlock)
	assert.Equal(t, []PathCount{{"/b", 2}}, typed[1].Paths)
}

// sameNamedTypeA and sameNamedTypeB are typed handlers of two types that
// print alike, contractguard.sameName.
func sameNamedTypeA(g *Guard) http.Handler {
	type sameName struct {
		_ struct{} `cg:"mode=learn"`
		A int      `json:"a" jsonschema:"minimum=5"`
	}
	return Handle(g, func(w http.ResponseWriter, r *http.Request, in sameName) {})
}

func sameNamedTypeB(g *Guard) http.Handler {
	type sameName struct {
		_ struct{} `cg:"mode=learn"`
		B string   `json:"b" jsonschema:"minLength=5"`
	}
	return Handle(g, func(w http.ResponseWriter, r *http.Request, in sameName) {})
}

// TestLearn_TypedHandlerBodyRefusedEarly: with a typed contract that
// learns, a body refused before any contract runs (another media type,
// too large) is reported and passed on as it came; the handler gets its
// T decoded from it, as with the guard off, and a body it cannot have is
// refused as there. (It used to reach the handler with no state: a nil
// dereference, on any client's say.)
func TestLearn_TypedHandlerBodyRefusedEarly(t *testing.T) {
	type Line struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku"`
	}
	g, rec := learnGuard(t, func(o *Options) { o.MaxBodyBytes = 64 })
	var got []Line
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Line) {
		got = append(got, in)
		_, parsed := Body(r)
		assert.True(t, parsed, "Body works as with the guard off")
	})
	assert.Equal(t, 200, send(h, "POST", "/lines", `{"sku":"A"}`, "Content-Type", "text/plain").Code)
	rejected(t, send(h, "POST", "/lines", `{"sku":"`+strings.Repeat("x", 100)+`"}`), 413, CodePayloadTooLarge)
	rejected(t, send(h, "POST", "/lines", `sku=A`, "Content-Type", "text/plain"), 400, CodeMalformedJSON)
	assert.Equal(t, []Line{{SKU: "A"}}, got)
	var codes []string
	for _, o := range rec.observed {
		codes = append(codes, o.Violation.Code)
	}
	assert.Equal(t, []string{CodeUnsupportedMediaType, CodePayloadTooLarge, CodeUnsupportedMediaType}, codes)
}

// TestLearn_TypedHandlerBodyRefusedEarlyThenTheGuardAgain: the request
// a typed handler passes on after decoding its T from a body refused
// early (learning) went through the guard again when the handler's
// function handed it to a handler behind the guard's Middleware, or to
// CheckRequest: that later pass took the request's state, which had no
// contract set, and dereferenced nil (a panic, on any client's say, by a
// Content-Type). It is the same request: the contracts that ran are not
// run or reported again, and the handler behind gets the body.
func TestLearn_TypedHandlerBodyRefusedEarlyThenTheGuardAgain(t *testing.T) {
	type Line struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku"`
	}
	g, rec := learnGuard(t)
	var inner []byte
	behind := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner, _ = io.ReadAll(r.Body) }))
	var checked *Violation
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, in Line) {
		checked = g.CheckRequest(r)
		behind.ServeHTTP(w, r)
	})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/orders", strings.NewReader(`{"sku":"A"}`)) // and the file contract of /orders, which learns
	r.Header.Set("Content-Type", "text/plain")
	require.NotPanics(t, func() { h.ServeHTTP(w, r) })
	assert.Equal(t, 200, w.Code, w.Body.String())
	assert.Nil(t, checked)
	assert.Equal(t, `{"sku":"A"}`, string(inner))
	require.Len(t, rec.observed, 2, "each contract reported once")
	for _, o := range rec.observed {
		assert.Equal(t, CodeUnsupportedMediaType, o.Violation.Code)
	}
	assert.EqualValues(t, 1, g.Metrics().RequestsValidated)
	assert.EqualValues(t, 1, g.Metrics().RequestsWouldBlock)
}

// trafficRequest is one recorded request of the learning tests.
type trafficRequest struct {
	method, path, body string
}

// recordedTraffic is the traffic of a small API: three routes without a
// contract, with bodies of a stable shape (formats, enums, an optional
// member, nested objects and arrays), and the learning contract's route,
// some of whose requests it would reject. Deterministic.
func recordedTraffic() (reqs []trafficRequest, wouldBlock int) {
	rnd := rand.New(rand.NewPCG(7, 11))
	roles := []string{"admin", "user", "guest"}
	for i := range 240 {
		switch i % 4 {
		case 0:
			note := ""
			if rnd.IntN(2) == 0 {
				note = fmt.Sprintf(`,"nickname":"n%d"`, rnd.IntN(1e6))
			}
			reqs = append(reqs, trafficRequest{"POST", "/api/users", fmt.Sprintf(
				`{"email":"user%d@example.com","name":"Name %d","age":%d,"role":%q,"tags":["t%d"]%s}`,
				rnd.IntN(1e6), rnd.IntN(1e6), 18+rnd.IntN(60), roles[rnd.IntN(3)], rnd.IntN(9), note)})
		case 1:
			reqs = append(reqs, trafficRequest{"PUT", fmt.Sprintf("/api/orders/%d", 1000+rnd.IntN(1e5)), fmt.Sprintf(
				`{"items":[{"sku":"SKU-%d","qty":%d},{"sku":"SKU-%d","qty":%d}],"total":%d.%02d}`,
				rnd.IntN(1e4), 1+rnd.IntN(9), rnd.IntN(1e4), 1+rnd.IntN(9), rnd.IntN(500), rnd.IntN(100))})
		case 2:
			reqs = append(reqs, trafficRequest{"POST", "/api/events", fmt.Sprintf(
				`{"id":"%08x-1234-4abc-8def-%012x","at":"2026-11-%02dT10:%02d:00Z","ip":"10.0.%d.%d"}`,
				rnd.Uint32(), rnd.Uint64()&0xffffffffffff, 1+rnd.IntN(28), rnd.IntN(60), rnd.IntN(256), rnd.IntN(256))})
		case 3:
			qty := 1 + rnd.IntN(200) // over 100: the learning contract's invariant
			if qty > 100 {
				wouldBlock++
			}
			reqs = append(reqs, trafficRequest{"POST", "/orders", fmt.Sprintf(`{"sku":"A%d","qty":%d}`, rnd.IntN(99), qty)})
		}
	}
	return reqs, wouldBlock
}

// TestLearn_FromTraffic drives real servers (chi and ServeMux) in learning
// mode with recorded traffic: nothing is blocked, the would-be rejections
// are reported exactly, and the contracts learned from the routes without
// one, loaded into an enforcing guard, accept every request of that
// traffic and reject mutated ones.
func TestLearn_FromTraffic(t *testing.T) {
	reqs, wouldBlock := recordedTraffic()
	for name, build := range map[string]func(g *Guard, h http.Handler) http.Handler{
		"chi": func(g *Guard, h http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			r.Post("/api/users", h.ServeHTTP)
			r.Put("/api/orders/{orderId}", h.ServeHTTP)
			r.Post("/api/events", h.ServeHTTP)
			r.Post("/orders", h.ServeHTTP)
			return r
		},
		"ServeMux": func(g *Guard, h http.Handler) http.Handler {
			mux := http.NewServeMux()
			for _, p := range []string{"POST /api/users", "PUT /api/orders/{orderId}", "POST /api/events", "POST /orders"} {
				mux.Handle(p, h)
			}
			return g.Middleware(mux)
		},
	} {
		t.Run(name, func(t *testing.T) {
			g, _ := learnGuard(t, func(o *Options) { o.LearningMode, o.LearnSampleRate = true, 1 })
			e := &echo{}
			srv := httptest.NewServer(build(g, e))
			defer srv.Close()
			for _, rq := range reqs {
				req, err := http.NewRequest(rq.method, srv.URL+rq.path, strings.NewReader(rq.body))
				require.NoError(t, err)
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, 200, res.StatusCode, "%s %s: nothing is blocked in learning mode", rq.method, rq.path)
			}
			assert.Equal(t, len(reqs), e.calls)
			report := g.LearningReport()
			require.Len(t, report, 1)
			assert.EqualValues(t, wouldBlock, report[0].WouldBlock)
			assert.Equal(t, map[string]int64{CodeInvariantViolated: int64(wouldBlock)}, report[0].Codes)

			// The learned contracts, written and loaded as contractguard
			// learn merge does.
			var obs learn.Observations
			require.NoError(t, json.Unmarshal(g.Learned(), &obs))
			learned := obs.Contracts()
			var routes []string
			for _, l := range learned {
				routes = append(routes, l.Method+" "+l.Endpoint)
			}
			assert.ElementsMatch(t, []string{"POST /api/users", "PUT /api/orders/{orderId}", "POST /api/events"}, routes,
				"the routes without a contract, by the router's pattern")
			dir := t.TempDir()
			_, err := learn.WriteContracts(dir, learned, learn.WriteOptions{})
			require.NoError(t, err)
			enforcing := mustNew(t, Options{ContractsDir: dir, Logger: discard})
			for _, rq := range reqs {
				if rq.path == "/orders" {
					continue
				}
				assert.Nil(t, enforcing.Check(rq.method, rq.path, []byte(rq.body)), "%s %s %s", rq.method, rq.path, rq.body)
			}
			for _, m := range []struct {
				method, path, body, code string
			}{
				{"POST", "/api/users", `{"name":"Ada","age":36,"role":"user","tags":[]}`, CodeSchemaInvalid},                                        // missing required email
				{"POST", "/api/users", `{"email":"ada@example.com","name":"Ada","age":"36","role":"user","tags":[]}`, CodeSchemaInvalid},            // wrong type
				{"POST", "/api/users", `{"email":"not an email","name":"Ada","age":36,"role":"user","tags":[]}`, CodeSchemaInvalid},                 // bad format
				{"POST", "/api/users", `{"email":"ada@example.com","name":"Ada","age":36,"role":"user","tags":[],"admin":true}`, CodeSchemaInvalid}, // unknown member
				{"POST", "/api/users", `{"email":"ada@example.com","name":"Ada","age":36,"role":"root","tags":[]}`, CodeSchemaInvalid},              // not in the enum
				{"PUT", "/api/orders/7", `{"items":[{"sku":"S","qty":1.5}],"total":1}`, CodeSchemaInvalid},                                          // not an integer
				{"POST", "/api/events", `{"id":"not-a-uuid","at":"2026-11-01T10:00:00Z","ip":"10.0.0.1"}`, CodeSchemaInvalid},                       // bad uuid
			} {
				v := enforcing.Check(m.method, m.path, []byte(m.body))
				if assert.NotNil(t, v, "%s %s %s", m.method, m.path, m.body) {
					assert.Equal(t, m.code, v.Code)
				}
			}
		})
	}
}

// TestLearn_NoCostOnAnEnforcingContract: sampling unmatched requests adds
// no allocation to a request that matches an enforcing contract.
func TestLearn_NoCostOnAnEnforcingContract(t *testing.T) {
	if raceDetector {
		t.Skip("counts allocations through sync.Pool, which the race detector empties at random: .ci/run runs it without")
	}
	allocs := func(rate float64) float64 {
		g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate = rate })
		h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		w := &nopWriter{h: http.Header{}}
		return testing.AllocsPerRun(200, func() {
			h.ServeHTTP(w, httptest.NewRequest("POST", "/users", strings.NewReader(`{"name":"Ada"}`)))
		})
	}
	assert.Equal(t, allocs(0), allocs(1))
}

// TestLearn_ReplicasMergeExactly: the exports of three guards, each shown
// a random part of one traffic stream, merge (in any order) to exactly
// the contracts of one guard that saw it all.
func TestLearn_ReplicasMergeExactly(t *testing.T) {
	reqs, _ := recordedTraffic()
	newGuard := func() (*Guard, http.Handler) {
		g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate = 1 })
		r := chi.NewRouter()
		r.Use(g.Middleware)
		ok := func(w http.ResponseWriter, r *http.Request) {}
		r.Post("/api/users", ok)
		r.Put("/api/orders/{orderId}", ok)
		r.Post("/api/events", ok)
		return g, r
	}
	all, allH := newGuard()
	var replicas [3]*Guard
	var handlers [3]http.Handler
	for i := range replicas {
		replicas[i], handlers[i] = newGuard()
	}
	rnd := rand.New(rand.NewPCG(3, 5))
	for _, rq := range reqs {
		send(allH, rq.method, rq.path, rq.body)
		send(handlers[rnd.IntN(3)], rq.method, rq.path, rq.body)
	}
	export := func(g *Guard) *learn.Observations {
		var o learn.Observations
		require.NoError(t, json.Unmarshal(g.Learned(), &o))
		return &o
	}
	// Each guard read its own clock when it saw a request: the first and
	// last seen differ by microseconds, and are left out.
	untimed := func(ls []learn.Learned) []learn.Learned {
		for i := range ls {
			ls[i].First, ls[i].Last = time.Time{}, time.Time{}
		}
		return ls
	}
	want := untimed(export(all).Contracts())
	require.Len(t, want, 3)
	for _, order := range [][3]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		merged := learn.Merge(export(replicas[order[0]]), learn.Merge(export(replicas[order[1]]), export(replicas[order[2]])))
		assert.Equal(t, want, untimed(merged.Contracts()), "%v", order)
	}
}

// TestLearn_SampledBodyCutShort: a sampled request whose body fails part
// way through (here a server's http.MaxBytesReader, under MaxBodyBytes)
// reaches the handler as it would unsampled: the bytes read before the
// failure, then the error. The bytes read were dropped, so the handler saw
// the error at once, nothing of the body before it.
func TestLearn_SampledBodyCutShort(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate = 1 })
	body := `{"a":"` + strings.Repeat("y", 500) + `"}`
	read := func(h http.Handler) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/unmatched", strings.NewReader(body))
		r.Body = http.MaxBytesReader(w, r.Body, 100)
		h.ServeHTTP(w, r)
	}
	var got []byte
	var err error
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, err = io.ReadAll(r.Body) })
	read(handler)
	wantBytes, wantErr := got, err
	require.Len(t, wantBytes, 100)
	read(g.Middleware(handler))
	assert.Equal(t, string(wantBytes), string(got), "the bytes before the failure")
	assert.Equal(t, wantErr, err)
}

// TestLearn_RequireContractStillSamples: under RequireContract in learning
// mode, a request that matches no contract passes (NO_CONTRACT, would
// block) and is still sampled for learning: it is the very traffic there
// is no contract for. The early state it now carries must not hide it
// from the sampler.
func TestLearn_RequireContractStillSamples(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.LearningMode, o.RequireContract, o.LearnSampleRate = true, true, 1 })
	var got []byte
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	body := `{"name":"Ada","age":36}`
	require.Equal(t, 200, send(h, "POST", "/api/people", body).Code)
	assert.Equal(t, body, string(got))
	var obs learn.Observations
	require.NoError(t, json.Unmarshal(g.Learned(), &obs))
	var routes []string
	for _, l := range obs.Contracts() {
		routes = append(routes, l.Method+" "+l.Endpoint)
	}
	assert.Equal(t, []string{"POST /api/people"}, routes, "the unmatched request was learned from")
	assert.EqualValues(t, 1, g.Metrics().RequestsWouldBlock)
}

// TestLearn_TypedWildcardRouteIsNotLearned: a typed handler on a route
// with a wildcard (ServeMux's {path...}, chi's *) has its contract checked
// by the handler, after Middleware; Middleware knew the route had one, yet
// sampled its requests for learning as if it had none: their bodies read
// once more, and the route, contract and all, learned and written as a
// contract of its own by contractguard learn merge.
func TestLearn_TypedWildcardRouteIsNotLearned(t *testing.T) {
	type upload struct {
		Name string `json:"name"`
	}
	fn := func(w http.ResponseWriter, r *http.Request, in upload) {}
	for name, build := range map[string]func(g *Guard) http.Handler{
		"ServeMux": func(g *Guard) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /files/{path...}", Handle(g, fn))
			return g.Middleware(mux)
		},
		"chi": func(g *Guard) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			Post(r, g, "/files/*", fn)
			return r
		},
	} {
		t.Run(name, func(t *testing.T) {
			g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate = 1 })
			h := build(g)
			w := send(h, "POST", "/files/a/b", `{"name":"x"}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			var obs learn.Observations
			require.NoError(t, json.Unmarshal(g.Learned(), &obs))
			assert.Zero(t, obs.Samples(), "a request to a typed handler's route sampled for learning")
			assert.Zero(t, obs.Routes())
			w = send(h, "POST", "/files/a/b", `{"name":1}`)
			assert.Equal(t, 400, w.Code, "the handler still checks its contract")
		})
	}
}

// TestLearn_SampledNoContractThenTypedCountsOnce: the request of
// TestLearn_NoContractThenTypedCountsOnce, sampled for learning: still
// one request, and the typed pass reads the body learning read.
func TestLearn_SampledNoContractThenTypedCountsOnce(t *testing.T) {
	type signup struct {
		Name string `json:"name" jsonschema:"minLength=3"`
	}
	g, _ := learnGuard(t, func(o *Options) {
		o.RequireContract, o.LearningMode, o.SinkProtection, o.LearnSampleRate = true, true, true, 1
	})
	var sqlErr error
	var name string
	mux := http.NewServeMux()
	mux.Handle("POST /signup", Handle(g, func(w http.ResponseWriter, r *http.Request, in signup) {
		name = in.Name
		sqlErr = sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = '"+in.Name+"'", sink.SQLite)
	}))
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
	w := send(h, "POST", "/signup", `{"name":"x' OR '1'='1"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, "x' OR '1'='1", name)
	m := g.Metrics()
	assert.EqualValues(t, 1, m.RequestsValidated, "one request")
	assert.EqualValues(t, 1, m.RequestsWouldBlock, "one request")
	assert.NoError(t, sqlErr, "learning mode: report only")
	assert.EqualValues(t, 1, g.Stats().SinkBlocks["sql"], "the typed pass recorded the input")
	assert.NotEmpty(t, g.Learned())
}

// TestLearn_ReportLeavesOutTheNoteOfFailuresNotListed: a would-be
// rejection that does not list every failure ends with a detail at path
// "" saying so (docs/errors.md); the report's paths are where the
// failures were, and "" is the body as a whole, which did not fail.
func TestLearn_ReportLeavesOutTheNoteOfFailuresNotListed(t *testing.T) {
	v := trustTestVendor(t)
	g := mustNew(t, Options{LicenseKey: v.key(t), LearningMode: true, Logger: discard, Contracts: []Contract{
		{Endpoint: "/l", Method: "POST", Schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}})
	require.Nil(t, g.Check("POST", "/l", []byte("["+strings.TrimSuffix(strings.Repeat("1,", 2*maxDetails), ",")+"]")))
	rep := g.LearningReport()
	require.Len(t, rep, 1)
	total := rep[0].OtherPaths
	for _, p := range rep[0].Paths {
		assert.NotEqual(t, "", p.Path, "the note is no failure of the body as a whole")
		total += p.Count
	}
	assert.EqualValues(t, maxDetails, total, "the failures listed")
}

// TestLearn_ReportCutsLongPathsBetweenCharacters: a report path longer
// than reportPathBytes was cut at that byte, inside a character whose
// remaining bytes then read as U+FFFD: two paths that differ there looked
// alike, and the report's JSON held no character of the path.
func TestLearn_ReportCutsLongPathsBetweenCharacters(t *testing.T) {
	v := trustTestVendor(t)
	long := strings.Repeat("a", reportPathBytes-2) // with its "/", the é is across the cut
	g := mustNew(t, Options{LicenseKey: v.key(t), LearningMode: true, Logger: discard, Contracts: []Contract{
		{Endpoint: "/l", Method: "POST", Schema: map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}}}})
	require.Nil(t, g.Check("POST", "/l", []byte(`{"`+long+`é":1}`)))
	rep := g.LearningReport()
	require.Len(t, rep, 1)
	require.Len(t, rep[0].Paths, 1)
	p := rep[0].Paths[0].Path
	assert.True(t, utf8.ValidString(p), "%q", p)
	assert.Equal(t, "/"+long, p, "cut before the é that did not fit")
}

// TestLearn_SampledBehindAnotherGuard: a request that matches no contract
// of a guard learning from traffic is sampled, also when another guard
// in front checked it against a contract of its own. The sampler skipped
// any request that carried a guard's state, not only one this guard had
// checked on an earlier pass: behind another guard, it learnt nothing of
// the routes that guard covers.
func TestLearn_SampledBehindAnotherGuard(t *testing.T) {
	a, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate = 1 })
	b := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/widgets", Method: "POST"}}})
	var got []byte
	h := b.Middleware(a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) })))
	require.Equal(t, 200, send(h, "POST", "/widgets", `{"name":"x"}`).Code)
	assert.Equal(t, `{"name":"x"}`, string(got))
	var ex struct {
		Samples int64 `json:"samples"`
	}
	require.NoError(t, json.Unmarshal(a.Learned(), &ex))
	assert.EqualValues(t, 1, ex.Samples, "sampled behind b")

	// A later pass of the same guard, on a path no contract matches, is
	// not sampled: the request was checked.
	inner := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	h = a.Middleware(http.StripPrefix("/orders", inner))
	require.Equal(t, 200, send(h, "POST", "/orders", `{"sku":"A","qty":2}`).Code)
	require.NoError(t, json.Unmarshal(a.Learned(), &ex))
	assert.EqualValues(t, 1, ex.Samples)
}

// TestLearn_NotFromAMediaTypeAContractRefuses: a sampled request whose
// Content-Type is JSON but one a contract with a schema refuses (415: a
// charset other than utf-8, in either form, or two Content-Type headers)
// is not learned from. It was: the contract learned from it refused the
// very request it was learned from, as UNSUPPORTED_MEDIA_TYPE.
func TestLearn_NotFromAMediaTypeAContractRefuses(t *testing.T) {
	for _, ct := range [][]string{
		{"application/json; charset=iso-8859-1"},
		{"application/json; charset*=utf-8''utf-8"},
		{"application/json", "text/plain"},
	} {
		g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate, o.ContractsFS = 1, nil })
		var got []byte
		h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
		r := httptest.NewRequest("POST", "/things", strings.NewReader(`{"x":1}`))
		r.Header["Content-Type"] = ct
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, "%q", ct)
		assert.Equal(t, `{"x":1}`, string(got), "%q: the body passed on", ct)
		var obs learn.Observations
		require.NoError(t, json.Unmarshal(g.Learned(), &obs))
		assert.Empty(t, obs.Contracts(), "%q: learned from a request its contract refuses", ct)
	}
}

// TestLearn_NotFromHeadOrOptionsInAnyCase: OPTIONS and HEAD requests are
// not learned from, whatever the letter case of the method. A request
// with the method "head" was: the learner reads methods in upper case, as
// the guard matches them, and learned a HEAD contract from its body,
// which would then refuse the bodiless HEAD requests of every client.
func TestLearn_NotFromHeadOrOptionsInAnyCase(t *testing.T) {
	for _, method := range []string{"head", "Head", "options", "oPTIONS"} {
		g, _ := learnGuard(t, func(o *Options) { o.LearnSampleRate, o.ContractsFS = 1, nil })
		h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		require.Equal(t, 200, send(h, method, "/things", `{"x":1}`).Code)
		var obs learn.Observations
		require.NoError(t, json.Unmarshal(g.Learned(), &obs))
		assert.Empty(t, obs.Contracts(), "learned from a %q request", method)
	}
}
