package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

// BenchmarkProxy_BareReverseProxy: the same body through a bare
// httputil.ReverseProxy with the proxy's Transport settings, and nothing
// of the proxy's own (no guard, no path or header handling, no access
// log, no pooled buffers): the floor of a proxy built on net/http, which
// BenchmarkProxy_Order is measured against.
func BenchmarkProxy_BareReverseProxy(b *testing.B) {
	up := readingUpstream(b)
	proxied, _ := testProxy(b, up.URL, nil)
	target, err := url.Parse(up.URL)
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = proxied.transport
	srv := httptest.NewServer(rp)
	b.Cleanup(srv.Close)
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
	cpu := processCPU()
	defer func() {
		// The CPU of the whole process: client, proxy and upstream. The
		// proxy's own is the difference from BenchmarkProxy_Direct's.
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	}()
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
