package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/contractguard/contractguard"
)

// BenchmarkProxy_Order: the ~1 KB order through the proxy, which checks
// it against its contract, to an upstream that reads it, 8 connections:
// what the proxy costs a request, besides the upstream's work (compare
// BenchmarkProxy_Direct).
func BenchmarkProxy_Order(b *testing.B) {
	up := readingUpstream(b)
	_, srv := testProxy(b, up.URL, func(_ *settings, o *contractguard.Options) { o.ContractsDir = e2eContracts(b) })
	benchPost(b, srv.URL+"/orders")
}

// BenchmarkProxy_Unmatched: the same body on a path no contract guards,
// streamed through.
func BenchmarkProxy_Unmatched(b *testing.B) {
	up := readingUpstream(b)
	_, srv := testProxy(b, up.URL, nil)
	benchPost(b, srv.URL+"/orders")
}

func readingUpstream(b *testing.B) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(201)
	}))
	b.Cleanup(up.Close)
	return up
}

func BenchmarkProxy_Direct(b *testing.B) {
	up := readingUpstream(b)
	benchPost(b, up.URL+"/orders")
}

func benchPost(b *testing.B, url string) {
	body, err := os.ReadFile("../../testdata/bodies/order.json")
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/8 + 1
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				res, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 201 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
}
