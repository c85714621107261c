package bench

import (
	"bytes"
	"encoding/json"
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

// BenchmarkLoad drives a chi server on loopback from a Go client with 8
// connections, b.N requests of the ~1 KB order body in all (stopping early
// after loadTimeout; each request times out after 10 s), and reports
// requests per second and the 50th and 99th percentile latency. The
// handler answers 201 with the order decoded:
//
//   - unguarded: it decodes the body into Order with encoding/json;
//   - typed: contractguard.Post gives it the Order, checked against the
//     contract and decoded from the guard's one parse (the product's way);
//   - middleware: the guard's middleware on the router, then the handler
//     decodes the body again with encoding/json (the most a guard can add).
func BenchmarkLoad(b *testing.B) {
	created := func(w http.ResponseWriter, o *Order) {
		if o.Total == 0 {
			http.Error(w, "no order", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
	decode := func(w http.ResponseWriter, r *http.Request) {
		var o Order
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		created(w, &o)
	}
	for _, server := range []string{"unguarded", "typed", "middleware"} {
		b.Run("server="+server, func(b *testing.B) {
			r := chi.NewRouter()
			switch server {
			case "unguarded":
				r.Post("/orders", decode)
			case "typed":
				g, err := contractguard.New(contractguard.Options{})
				if err != nil {
					b.Fatal(err)
				}
				contractguard.Post(r, g, "/orders", func(w http.ResponseWriter, r *http.Request, o Order) { created(w, &o) })
			case "middleware":
				r.Use(newGuard(b).Middleware)
				r.Post("/orders", decode)
			}
			srv := httptest.NewServer(r)
			defer srv.Close()
			load(b, srv.URL+"/orders", bodies["1KB"])
		})
	}
}

// loadTimeout bounds one run of the load test whatever b.N is.
const loadTimeout = time.Minute

func load(b *testing.B, url string, body []byte) {
	const clients = 8
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients},
		Timeout:   10 * time.Second,
	}
	defer client.CloseIdleConnections()
	latencies := make([][]time.Duration, clients)
	var next sync.Mutex
	remaining := b.N
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if remaining == 0 || time.Since(start) > loadTimeout {
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
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
