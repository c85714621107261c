package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contractguard/contractguard"
)

// BenchmarkLoad drives three chi servers on loopback from a Go client
// with conns connections, with a body of each size (the ~100 B line, the
// ~1 KB order, the ~100 KB order). Their handlers answer 201 with the body
// decoded:
//
//   - unguarded: it decodes the body into its type with encoding/json;
//   - typed: contractguard.Post gives it the value, checked against the
//     contract and decoded from the guard's one parse (the product's way);
//   - middleware: the guard's middleware on the router, then the handler
//     decodes the body again with encoding/json (the most a guard can add).
//
// Each server gets b.N requests, sent in ten interleaved rounds (unguarded,
// typed, middleware, unguarded, …) so that a machine that speeds up or
// slows down during the run weighs on all three alike. It reports each
// server's requests per second and 50th and 99th percentile latency, and
// the guarded servers' share of the unguarded throughput. A run stops
// early after loadTimeout; each request times out after 10 s.
func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct {
		conns int
		size  string
	}{{8, "1KB"}, {64, "1KB"}, {8, "small"}, {8, "100KB"}} {
		b.Run(fmt.Sprintf("conns=%d/size=%s", c.conns, c.size), func(b *testing.B) {
			if c.size == "small" {
				loadBench(b, c.conns, c.size, func(l *Line) bool { return l.Quantity > 0 })
			} else {
				loadBench(b, c.conns, c.size, func(o *Order) bool { return o.Total > 0 })
			}
		})
	}
}

// loadBench is BenchmarkLoad for one number of connections and body,
// whose handlers decode T; ok tells a decoded value from a zero one.
func loadBench[T any](b *testing.B, conns int, size string, ok func(*T) bool) {
	created := func(w http.ResponseWriter, v *T) {
		if !ok(v) {
			http.Error(w, "nothing decoded", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
	decode := func(w http.ResponseWriter, r *http.Request) {
		var v T
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		created(w, &v)
	}
	route := path(size)
	servers := []string{"unguarded", "typed", "middleware"}
	urls := map[string]string{}
	for _, server := range servers {
		r := chi.NewRouter()
		switch server {
		case "unguarded":
			r.Post(route, decode)
		case "typed":
			g, err := contractguard.New(contractguard.Options{MaxBodyBytes: 1 << 20})
			if err != nil {
				b.Fatal(err)
			}
			contractguard.Post(r, g, route, func(w http.ResponseWriter, r *http.Request, v T) { created(w, &v) })
		case "middleware":
			r.Use(newGuard(b).Middleware)
			r.Post(route, decode)
		}
		srv := httptest.NewServer(r)
		defer srv.Close()
		urls[server] = srv.URL + route
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns},
		Timeout:   10 * time.Second,
	}
	defer client.CloseIdleConnections()
	body := bodies[size]
	const rounds = 10
	elapsed := map[string]time.Duration{}
	latencies := map[string][]time.Duration{}
	b.ResetTimer() // (no SetBytes: an op is a request to each of the servers)
	start := time.Now()
	for round := range rounds {
		n := b.N / rounds
		if round < b.N%rounds {
			n++
		}
		for _, server := range servers {
			d, lat := load(b, client, conns, urls[server], body, n, start)
			elapsed[server] += d
			latencies[server] = append(latencies[server], lat...)
		}
	}
	b.StopTimer()
	base := float64(len(latencies["unguarded"])) / elapsed["unguarded"].Seconds()
	for _, server := range servers {
		all := latencies[server]
		if len(all) == 0 {
			return
		}
		slices.Sort(all)
		rps := float64(len(all)) / elapsed[server].Seconds()
		b.ReportMetric(rps, server+"-req/s")
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), server+"-p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), server+"-p99-µs")
		if server != "unguarded" {
			b.ReportMetric(100*rps/base, server+"-%")
		}
	}
}

// loadTimeout bounds one run of the load test whatever b.N is.
const loadTimeout = 2 * time.Minute

// load sends n requests from conns goroutines and returns the time they
// took and the latency of each.
func load(b *testing.B, client *http.Client, conns int, url string, body []byte, n int, began time.Time) (time.Duration, []time.Duration) {
	latencies := make([][]time.Duration, conns)
	var next sync.Mutex
	remaining := n
	start := time.Now()
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if remaining == 0 || time.Since(began) > loadTimeout {
					next.Unlock()
					return
				}
				remaining--
				next.Unlock()
				t := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				latencies[c] = append(latencies[c], time.Since(t))
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), slices.Concat(latencies...)
}
