package learn

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// shapeless is traffic built to grow a learner without end: paths that are
// new words, member names never seen before, nesting to the depth limit,
// distinct short strings for enum candidates, long names.
type shapeless struct {
	rng   *rand.Rand
	paths []string
	docs  []jsonbody.Value
}

func newShapeless(seed uint64, n int) *shapeless {
	s := &shapeless{rng: rand.New(rand.NewPCG(seed, 99))}
	for range n {
		s.paths = append(s.paths, "/"+word(s.rng)+"/"+word(s.rng))
		body := s.object(0)
		doc, err := jsonbody.Parse([]byte(body), 64)
		if err != nil {
			panic(err)
		}
		s.docs = append(s.docs, doc.Root())
	}
	return s
}

func word(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	n := 3 + rng.IntN(10)
	if rng.IntN(20) == 0 {
		n = 40 + rng.IntN(24) // a long name
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

func (s *shapeless) object(depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 1 + s.rng.IntN(6) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", fmt.Sprintf("%s%d", word(s.rng), i))
		switch k := s.rng.IntN(8); {
		case k == 0 && depth < 18:
			b.WriteString(s.object(depth + 1))
		case k == 1 && depth < 3:
			fmt.Fprintf(&b, "[%s,%s]", s.object(depth+1), s.object(depth+1))
		case k == 2:
			fmt.Fprint(&b, s.rng.IntN(1000)-500)
		default:
			fmt.Fprintf(&b, "%q", word(s.rng))
		}
	}
	b.WriteByte('}')
	return b.String()
}

func (s *shapeless) feed(l *Learner, n int) {
	for i := range n {
		j := i % len(s.docs)
		if l.Sample() {
			l.Observe("POST", "", s.paths[(i*7+j)%len(s.paths)], s.docs[j], epoch)
		}
	}
}

// TestMemoryWithinCap: under traffic that never repeats a shape, the
// accounted bytes stay within Limits.MaxBytes (each route within its
// share), and the heap the learner holds, as the runtime counts it, within
// the accounted bytes: the charges are upper bounds.
func TestMemoryWithinCap(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 requests")
	}
	lim := Limits{Routes: 16, MaxBytes: 16 * 64 << 10, SampleRate: 1}
	traffic := newShapeless(1, 2000)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := New(lim)
	for round := range 10 {
		traffic.feed(l, 2000)
		require.LessOrEqual(t, l.Bytes(), int64(lim.MaxBytes), "after %d requests", (round+1)*2000)
		for _, r := range l.o.routes {
			require.LessOrEqual(t, r.bytes, l.lim.routeBudget())
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	accounted := l.Bytes()
	t.Logf("accounted %d bytes, heap held %d bytes, cap %d", accounted, held, lim.MaxBytes)
	assert.Greater(t, accounted, int64(lim.MaxBytes)/2, "the traffic fills the cap")
	assert.LessOrEqual(t, held, accounted+32<<10, "the heap held is within the accounted bytes (and the learner's buffers)")
	assert.Positive(t, l.Export().Dropped(), "routes past the cap are counted as dropped")
	runtime.KeepAlive(l)
	runtime.KeepAlive(traffic)
}

// BenchmarkSample is the cost of the sampling decision alone.
func BenchmarkSample(b *testing.B) {
	l := New(Limits{})
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if l.Sample() {
			n++
		}
	}
	runtime.KeepAlive(n)
}

// BenchmarkObserve_Order is Sample and Observe of an order-like body on a
// route learned already: the steady cost of a sampled request.
func BenchmarkObserve_Order(b *testing.B) {
	l := New(Limits{SampleRate: 1})
	body := `{"customer":"3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a","email":"ada@example.com","status":"pending",
		"items":[{"sku":"A-1","quantity":2,"unitPrice":9.99},{"sku":"B-2","quantity":1,"unitPrice":19.5}],
		"shipping":{"street":"1 Main St","city":"Springfield","zip":"12345","country":"US"},"note":"leave at door"}`
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(b, err)
	v := doc.Root()
	for range 100 {
		l.Observe("POST", "/orders/{id}", "/orders/42", v, epoch)
	}
	b.ReportAllocs()
	for b.Loop() {
		if l.Sample() {
			l.Observe("POST", "/orders/{id}", "/orders/42", v, epoch)
		}
	}
}

// BenchmarkObserve_RandomShapes is 100,000 requests of shapes that never
// repeat, per op: the cost per request (ns/request) and what the learner
// keeps after them, accounted (kept-bytes) and on the heap (heap-bytes),
// against the default 16 MiB cap.
func BenchmarkObserve_RandomShapes(b *testing.B) {
	const requests = 100_000
	traffic := newShapeless(2, 5000)
	var kept, heapHeld int64
	b.ReportAllocs()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l := New(Limits{SampleRate: 1})
		start := time.Now()
		traffic.feed(l, requests)
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/requests, "ns/request")
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = l.Bytes()
		heapHeld = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(l)
	}
	b.ReportMetric(float64(kept), "kept-bytes")
	b.ReportMetric(float64(heapHeld), "heap-bytes")
}

// TestObserve_KeepsNoPath: once Observe returns, the learner's buffers hold
// nothing of the request's path, whether it was learned from or refused
// (here: its template is over maxTemplate), and a path of very many
// segments leaves no buffer of its size behind.
func TestObserve_KeepsNoPath(t *testing.T) {
	l := New(Limits{SampleRate: 1})
	long := "/reset/Kq7sealed" + strings.Repeat("/a", 200_000)
	l.Observe("POST", "", long, parse(t, `{"a":1}`), epoch)
	for i, s := range l.t.segs[:cap(l.t.segs)] {
		require.Empty(t, s, "segment %d of a refused request kept", i)
	}
	assert.LessOrEqual(t, cap(l.t.segs), 1<<12, "the segments buffer of a 200,000-segment path kept")
	assert.LessOrEqual(t, cap(l.name), 1<<12, "the name buffer of a 200,000-segment path kept")
}

// TestObserve_KeepsNoPathInTheName: the route name a refused request's
// path was made into (its static segments as they came) is not kept in
// the learner's name buffer either, as TestObserve_KeepsNoPath says of
// the segments.
func TestObserve_KeepsNoPathInTheName(t *testing.T) {
	l := New(Limits{SampleRate: 1})
	long := "/reset/Kq7sealed" + strings.Repeat("/a", 200_000) // refused: its template is over maxTemplate
	l.Observe("POST", "", long, parse(t, `{"a":1}`), epoch)
	assert.NotContains(t, string(l.name[:cap(l.name)]), "Kq7sealed", "the refused request's path kept in the name buffer")
}
