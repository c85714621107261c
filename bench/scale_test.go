package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/route"
)

// contracts returns n distinct contracts in the format of the order's,
// each with its own route: what a large service loads.
func contracts(n int) []contractguard.Contract {
	cs := make([]contractguard.Contract, n)
	for i := range cs {
		cs[i] = contractguard.Contract{
			Endpoint: fmt.Sprintf("/svc%d/orders/:id/lines/%d", i%100, i),
			Method:   "POST",
			Schema: map[string]any{"type": "object", "required": []string{"sku", "quantity"},
				"properties": map[string]any{
					"sku":      map[string]any{"type": "string", "maxLength": 32},
					"quantity": map[string]any{"type": "integer", "minimum": 1},
				}},
			Invariants: []contractguard.Invariant{{Expr: "request.body.quantity <= 100", Message: "at most 100"}},
		}
	}
	return cs
}

// distinctContracts returns n contracts that share nothing: each has its
// own property names, bounds and rule, so that nothing compiled for one
// serves another (the worst case of a large service).
func distinctContracts(n int) []contractguard.Contract {
	cs := make([]contractguard.Contract, n)
	for i := range cs {
		sku, qty := fmt.Sprintf("sku%d", i), fmt.Sprintf("quantity%d", i)
		cs[i] = contractguard.Contract{
			Endpoint: fmt.Sprintf("/svc%d/orders/:id/lines/%d", i%100, i),
			Method:   "POST",
			Schema: map[string]any{"type": "object", "required": []string{sku, qty},
				"properties": map[string]any{
					sku: map[string]any{"type": "string", "maxLength": 16 + i%32},
					qty: map[string]any{"type": "integer", "minimum": 1},
				}},
			Invariants: []contractguard.Invariant{{Expr: fmt.Sprintf("request.body.%s <= %d", qty, 100+i), Message: "too many"}},
		}
	}
	return cs
}

// BenchmarkStartup builds a guard from n contracts, each with a schema and
// an invariant, alike (a schema and rule repeated, as services repeat
// them: compiled once) or distinct (nothing shared); and reloads it. It
// reports the heap the guard keeps, per contract.
func BenchmarkStartup(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for kind, build := range map[string]func(int) []contractguard.Contract{"alike": contracts, "distinct": distinctContracts} {
			cs := build(n)
			b.Run(fmt.Sprintf("contracts=%d/%s/op=new", n, kind), func(b *testing.B) {
				var g *contractguard.Guard
				for b.Loop() {
					var err error
					if g, err = contractguard.New(contractguard.Options{Contracts: cs}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				var before, after runtime.MemStats
				g = nil
				runtime.GC()
				runtime.ReadMemStats(&before)
				g, _ = contractguard.New(contractguard.Options{Contracts: cs})
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n)/1024, "KiB-kept/contract")
				runtime.KeepAlive(g)
			})
			b.Run(fmt.Sprintf("contracts=%d/%s/op=reload", n, kind), func(b *testing.B) {
				g, err := contractguard.New(contractguard.Options{Contracts: cs})
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := g.Reload(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMatchAmong10000 finds a request's route among 10,000 contracts:
// op=match is the lookup alone, in the same tree the guard builds;
// op=check-matched a whole Check of a GET that matches a contract without
// body rules (the match, the request state, the clock, the metrics);
// op=check-unmatched a path no contract matches, which must not allocate.
func BenchmarkMatchAmong10000(b *testing.B) {
	cs := contracts(10_000)
	var tree route.Tree[int]
	for i := range cs {
		cs[i].Method, cs[i].Schema, cs[i].Invariants = "GET", nil, nil
		p, err := route.ParsePattern(cs[i].Endpoint)
		if err != nil {
			b.Fatal(err)
		}
		tree.Add("GET", p, i)
	}
	g, err := contractguard.New(contractguard.Options{Contracts: cs})
	if err != nil {
		b.Fatal(err)
	}
	const hit, miss = "/svc42/orders/7/lines/9942", "/static/app.js"
	b.Run("op=match", func(b *testing.B) {
		var buf [16]string
		b.ReportAllocs()
		for b.Loop() {
			if v, _, ok := tree.Match("GET", hit, buf[:0]); !ok || v != 9942 {
				b.Fatal("no match")
			}
		}
	})
	b.Run("op=check-matched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v := g.Check("GET", hit, nil); v != nil {
				b.Fatal(v)
			}
		}
	})
	b.Run("op=check-unmatched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g.Check("GET", miss, nil)
		}
	})
	b.Run("op=middleware-unmatched", func(b *testing.B) {
		ran := 0
		h := g.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran++ }))
		r := httptest.NewRequest("GET", miss, nil)
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, r)
		}
		if ran == 0 {
			b.Fatal("the handler never ran")
		}
	})
}

// bigOrder is the order body with 10,000 items: just under the default
// 1 MiB body limit.
func bigOrder(b *testing.B) []byte {
	body := []byte(orderWithItems(string(bodies["1KB"]), 10_000))
	if len(body) > 1<<20 {
		b.Fatalf("%d bytes", len(body))
	}
	return body
}

// Benchmark1MiBBody is the guard on a body just under the default 1 MiB
// limit; Benchmark1MiBDecode its yardstick.
func Benchmark1MiBBody(b *testing.B) {
	g := newGuard(b)
	body := bigOrder(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if v := g.Check("POST", "/orders", body); v != nil {
			b.Fatal(v)
		}
	}
}

func Benchmark1MiBDecode(b *testing.B) {
	body := bigOrder(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
