package contractguard

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/route"
)

// The abuse tests bound what one request can cost, measured in bytes read,
// allocations and evaluation steps — never in time.

// allocated runs f once and returns the bytes and objects it allocated.
func allocated(f func()) (bytes, objects uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

func TestAbuse_TenMegabyteBody(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{}}}})
	for _, length := range []int64{-1, 10 << 20} { // chunked, and announced
		src := &countingReader{n: 10 << 20}
		r := httptest.NewRequest("POST", "/t", src)
		r.ContentLength = length
		w := httptest.NewRecorder()
		b, _ := allocated(func() { g.Middleware(&echo{}).ServeHTTP(w, r) })
		rejected(t, w, 413, CodePayloadTooLarge)
		assert.LessOrEqual(t, src.read, DefaultMaxBodyBytes+1, "reads at most one byte past the limit")
		assert.Less(t, b, uint64(4*DefaultMaxBodyBytes), "allocates about the limit (a growing buffer), not the 10 MB body")
	}
}

func TestAbuse_HundredThousandElements(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
		Schema:     map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 0}},
		Invariants: []Invariant{{Expr: "size(request.body) == 100000", Message: "size"}}}}})
	body := []byte("[" + strings.TrimSuffix(strings.Repeat("7,", 100_000), ",") + "]")
	require.Less(t, len(body), DefaultMaxBodyBytes)
	var v *Violation
	b, objects := allocated(func() { v = g.Check("POST", "/t", body) })
	require.Nil(t, v)
	t.Logf("100,000 elements (%d bytes): %d bytes, %d objects allocated", len(body), b, objects)
	// The worst case for memory: one-byte values. A node and a child
	// index per element on the parser's tape, and its stack when it has
	// to grow (a pooled parser may already have it).
	assert.Less(t, b, uint64(48*len(body)), "memory proportional to the body")
	assert.Less(t, objects, uint64(2*100_000), "about one object per element")
}

// TestAbuse_FailuresNotListedCostNothing: on the fast path a failure the
// rejection does not list costs no allocation, so a body failing at each
// of 100,000 elements costs what a passing one does, plus the failures
// listed. Its type failures wrote their message before asking whether it
// was wanted (two objects each, 20 MB for a 1 MB body); a schema that
// uses not, anyOf or oneOf went to santhosh-tekuri/jsonschema, which
// builds an error per failing element.
func TestAbuse_FailuresNotListedCostNothing(t *testing.T) {
	array := func(items string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "array", "items": map[string]any{"type": items}}}}
	}
	with := func(s map[string]any, k string, v any) map[string]any { s[k] = v; return s }
	body := []byte(`{"a":[` + strings.Repeat("1,", 100_000) + `1]}`)
	check := func(schema map[string]any) (objects uint64, v *Violation) {
		g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: schema}}})
		g.Check("POST", "/t", body) // the fast path compiled, the pools filled
		_, objects = allocated(func() { v = g.Check("POST", "/t", body) })
		return objects, v
	}
	passing, v := check(array("integer"))
	require.Nil(t, v)
	for name, schema := range map[string]map[string]any{
		"type":  array("string"),
		"not":   with(array("string"), "not", map[string]any{"required": []any{"zzz"}}),
		"anyOf": with(array("string"), "anyOf", []any{map[string]any{"required": []any{"a"}}, map[string]any{"required": []any{"b"}}}),
		"oneOf": with(array("integer"), "oneOf", []any{map[string]any{"properties": map[string]any{"a": map[string]any{"items": map[string]any{"type": "string"}}}}, false}),
	} {
		failing, v := check(schema)
		require.NotNil(t, v, name)
		assert.Less(t, failing, passing+1_000, "%s: %d objects failing, %d passing", name, failing, passing)
	}
}

func TestAbuse_NestingAtTheDepthLimit(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{}}}})
	at := []byte(strings.Repeat(`{"a":`, DefaultMaxDepth) + "1" + strings.Repeat("}", DefaultMaxDepth))
	over := []byte(strings.Repeat("[", DefaultMaxDepth+1) + strings.Repeat("]", DefaultMaxDepth+1))
	var v *Violation
	_, objects := allocated(func() { v = g.Check("POST", "/t", at) })
	assert.Nil(t, v)
	assert.Less(t, objects, uint64(10*DefaultMaxDepth), "a few objects per level")
	v = g.Check("POST", "/t", over)
	require.NotNil(t, v)
	assert.Equal(t, CodeMalformedJSON, v.Code)
	deep := []byte(strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000))
	_, objects = allocated(func() { v = g.Check("POST", "/t", deep) })
	require.NotNil(t, v)
	assert.Less(t, objects, uint64(10*DefaultMaxDepth), "parsing stops at the limit")
}

// TestAbuse_SchemaMetTwicePerLevel: a type that inherits through allOf
// and declares an inherited recursive member again checks that member
// twice at every level; a body nested to the depth limit was 2^63 checks
// (the fast path now keeps a shared schema's verdicts once a run makes
// more checks than a walk without repeats: internal/schema's
// TestNative_SchemaMetTwiceBoundedWork counts them).
func TestAbuse_SchemaMetTwicePerLevel(t *testing.T) {
	schema := func(label map[string]any) map[string]any {
		return map[string]any{
			"definitions": map[string]any{"node": map[string]any{"type": "object", "properties": map[string]any{
				"child": map[string]any{"$ref": "#"}, "id": map[string]any{"type": "integer"}}}},
			"allOf":      []any{map[string]any{"$ref": "#/definitions/node"}},
			"properties": map[string]any{"child": map[string]any{"$ref": "#"}, "label": label},
		}
	}
	g := mustNew(t, Options{Contracts: []Contract{
		{Endpoint: "/t", Method: "POST", Schema: schema(map[string]any{"type": "string"})},
		// format: regex was left to the library, which has no memo.
		{Endpoint: "/regex", Method: "POST", Schema: schema(map[string]any{"type": "string", "format": "regex"})},
	}})
	depth := DefaultMaxDepth - 1
	body := func(leaf string) []byte {
		return []byte(strings.Repeat(`{"id":1,"label":"x","child":`, depth) + leaf + strings.Repeat("}", depth))
	}
	for _, path := range []string{"/t", "/regex"} {
		assert.Nil(t, g.Check("POST", path, body(`{"id":2}`)), path)
		v := g.Check("POST", path, body(`{"id":"two"}`))
		require.NotNil(t, v, path)
		assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		assert.Equal(t, "/child"+strings.Repeat("/child", depth-1)+"/id", v.Details[0].Path, path)
	}
	v := g.Check("POST", "/regex", body(`{"id":2,"label":"a("}`))
	require.NotNil(t, v, "a label that is no regular expression")
	assert.Equal(t, "/child"+strings.Repeat("/child", depth-1)+"/label", v.Details[0].Path)
}

func TestAbuse_QuadraticRuleStopsAtTheCostLimit(t *testing.T) {
	var logs bytes.Buffer
	g := mustNew(t, Options{
		// Refused at load by default (TestCost_QuadraticRuleRefusedAtLoad);
		// this test is about the runtime bound, so the estimate is let through.
		CELMaxEstimatedCost: math.MaxUint64,
		Logger:              slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Contracts: []Contract{{Endpoint: "/t", Method: "POST", Invariants: []Invariant{{
			Expr:    "request.body.items.all(a, request.body.items.all(b, a.sku != b.sku || a == b))",
			Message: "skus must be unique",
		}}}},
	})
	var items []string
	for i, size := 0, 0; size < 1000<<10-100; i++ {
		items = append(items, fmt.Sprintf(`{"sku":"%d"}`, i))
		size += len(items[i]) + 1
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `]}`)
	require.Less(t, len(body), DefaultMaxBodyBytes)
	var v *Violation
	_, objects := allocated(func() { v = g.Check("POST", "/t", body) })
	require.NotNil(t, v, "fails closed")
	assert.Equal(t, CodeInvariantViolated, v.Code)
	assert.Contains(t, logs.String(), "cost limit exceeded", "stopped by the cost limit, not finished")
	t.Logf("%d items (%d pairs): %d objects allocated before the limit stopped it", len(items), len(items)*len(items), objects)
	assert.Less(t, objects, uint64(len(items)*len(items)/10), "nowhere near one step per pair")
}

// A loop over an object inside another loop, where the rule runs on
// cel-go: CEL visits an object's keys in sorted order, and each inner
// loop sorted the keys again, work the cost limit does not count. A
// 14 KB body of 1,400 keys, within the default limits, cost 31 MB and
// 1,400 sorts (35 ms) when the inner loop stopped at its first key.
// A large object is now sorted once a request.
func TestAbuse_NestedLoopsOverAnObjectSortItOnce(t *testing.T) {
	const n = 1400 // under the default CELMaxEstimatedCost
	var b strings.Builder
	b.WriteString(`{"m":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%05d":1`, n-i)
	}
	b.WriteString(`}}`)
	body := []byte(b.String())
	for _, rule := range []string{
		"request.body.m.all(k, request.body.m.exists(j, true))",
		"request.body.m.filter(k, request.body.m.exists(j, true)).size() == 1400",
	} {
		g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST",
			Schema:     map[string]any{"type": "object", "properties": map[string]any{"m": map[string]any{"type": "object", "maxProperties": n}}},
			Invariants: []Invariant{{Expr: rule, Message: "m"}}}}})
		require.Nil(t, g.Check("POST", "/t", body), rule)
		bytes, _ := allocated(func() { g.Check("POST", "/t", body) })
		assert.Less(t, bytes, uint64(100*len(body)), "%s: %d bytes for a body of %d", rule, bytes, len(body))
	}
}

func TestAbuse_TenThousandContracts(t *testing.T) {
	build := func(n int) *Guard {
		cs := make([]Contract, n)
		for i := range cs {
			cs[i] = Contract{Endpoint: fmt.Sprintf("/svc%d/items/:id/parts/%d", i%100, i), Method: "POST"}
		}
		return mustNew(t, Options{Contracts: cs})
	}
	small, large := build(10), build(10_000)
	assert.Equal(t, int64(10_000), large.Metrics().ContractsLoaded)
	segs := route.Segments("/svc9/items/42/parts/9", nil)
	want := small.set.Load().tree.Visits("POST", segs)
	assert.Equal(t, want, large.set.Load().tree.Visits("POST", segs), "the same nodes visited among 10 or 10,000 contracts")
	assert.LessOrEqual(t, want, len(segs)+1, "one node per segment")
	miss := route.Segments("/svc9/items/42/parts/nope", nil)
	assert.LessOrEqual(t, large.set.Load().tree.Visits("POST", miss), 2*(len(miss)+1), "a miss backtracks at most once per segment here")
	assert.Nil(t, large.Check("POST", "/svc42/items/7/parts/9942", []byte(`{}`)))
}

// Options.CELCostLimit is the limit every evaluation runs under: a rule
// the default lets through fails closed under a lower one.
func TestCELCostLimit_Option(t *testing.T) {
	contract := Contract{Endpoint: "/c", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"items": map[string]any{"type": "array", "maxItems": 1000, "items": map[string]any{"type": "integer"}}}},
		Invariants: []Invariant{{Expr: "request.body.items.all(i, i > 0)", Message: "positive items"}}}
	body := []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat("1,", 50), ",") + `]}`)
	assert.Nil(t, mustNew(t, Options{Contracts: []Contract{contract}}).Check("POST", "/c", body), "the default limit")
	v := mustNew(t, Options{Contracts: []Contract{contract}, CELCostLimit: 100}).Check("POST", "/c", body)
	require.NotNil(t, v, "a limit of 100 stops the rule over 50 items")
	assert.Equal(t, CodeInvariantViolated, v.Code)
	assert.Equal(t, []Detail{{"", "positive items"}}, v.Details)
}

// manyFailures is a body of n elements under a member named by a long
// name: each element fails, and each failure's path repeats the name.
func manyFailures(name string, n int, elem string) []byte {
	return []byte(`{"` + name + `":[` + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + "]}")
}

type abuseItem struct {
	N int `json:"n" cg:"cel=self > 0,msg=must be positive"`
}

// TestAbuse_ManyFailuresAreNotAllListed: a body whose every element fails
// (each at a path repeating a 4 KiB member name) gets a bounded error body
// and costs memory in proportion to itself, not to the failures times
// their paths; the violation says that more were not listed; which are
// listed does not depend on the order a check found them in. Each front
// door: the schema's fast path, the library, the scan, tag rules on
// elements, and a disabled guard's decoding.
func TestAbuse_ManyFailuresAreNotAllListed(t *testing.T) {
	long := strings.Repeat("k", 4096)
	elems := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{
		{Endpoint: "/native", Method: "POST", Schema: map[string]any{"type": "object", "additionalProperties": elems}},
		{Endpoint: "/library", Method: "POST", Schema: map[string]any{"type": "object", "additionalProperties": elems,
			"$schema":    "https://json-schema.org/draft/2020-12/schema", // a later draft's keyword: outside the fast path
			"properties": map[string]any{"zzz": map[string]any{"dependentRequired": map[string]any{"a": []any{"b"}}}}}},
		{Endpoint: "/scan", Method: "POST"},
	}})
	mux := http.NewServeMux()
	mux.Handle("/", g.Middleware(&echo{}))
	mux.Handle("POST /typed", Handle(g, func(http.ResponseWriter, *http.Request, map[string][]abuseItem) {}))
	off := mustNew(t, Options{Disabled: true})
	mux.Handle("POST /off", Handle(off, func(http.ResponseWriter, *http.Request, map[string][]int) {}))

	for _, c := range []struct {
		path, elem, code string
	}{
		{"/native", "1", CodeSchemaInvalid},
		{"/library", "1", CodeSchemaInvalid},
		{"/scan", `"1' OR 1=1 --"`, CodeVulnerabilityDetected},
		{"/typed", `{"n":0}`, CodeInvariantViolated},
		{"/off", `"x"`, CodeSchemaInvalid},
	} {
		t.Run(c.path[1:], func(t *testing.T) {
			n := 20_000 / len(c.elem)
			body := manyFailures(long, n, c.elem)
			var w *httptest.ResponseRecorder
			b, _ := allocated(func() { w = send(mux, "POST", c.path, string(body)) })
			eb := rejected(t, w, statusOf[c.code], c.code)
			// The same failures under a short name: the library allocates
			// an error of its own for each (some 800 bytes), whatever the
			// name; the long name may cost in proportion to the body, not
			// once per failure.
			short, _ := allocated(func() { send(mux, "POST", c.path, string(manyFailures("k", n, c.elem))) })
			t.Logf("%d bytes in: %d details, %d bytes out, %d bytes allocated (%d with a short name)", len(body), len(eb.Details), w.Body.Len(), b, short)
			assert.Less(t, w.Body.Len(), 64<<10, "a bounded error body")
			assert.Less(t, b, short+uint64(64*len(body)), "the long name's cost in proportion to the body")
			require.NotEmpty(t, eb.Details)
			last := eb.Details[len(eb.Details)-1]
			assert.True(t, last == Detail{Path: "", Message: "more failures are not listed"}, "the last detail says more were not listed")
			for range 5 { // the library finds them in map order
				again := rejected(t, send(mux, "POST", c.path, string(body)), statusOf[c.code], c.code).Details
				require.True(t, slices.Equal(eb.Details, again), "the same details each time")
			}
		})
	}
	// The scan's findings count what its rejection listed, not the note
	// that more were not listed.
	findings := func() (n int64) {
		for _, c := range g.Stats().ScanFindings {
			n += c
		}
		return n
	}
	before := findings()
	eb := rejected(t, send(mux, "POST", "/scan", string(manyFailures("k", 1000, `"1' OR 1=1 --"`))), 403, CodeVulnerabilityDetected)
	require.Len(t, eb.Details, maxDetails+1)
	assert.EqualValues(t, maxDetails, findings()-before, "%v", g.Stats().ScanFindings)
}
