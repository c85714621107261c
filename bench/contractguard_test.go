package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contractguard/contractguard"
)

func newGuard(b testing.TB, mods ...func(*contractguard.Options)) *contractguard.Guard {
	o := contractguard.Options{ContractsDir: "testdata/contracts", MaxBodyBytes: 1 << 20}
	for _, m := range mods {
		m(&o)
	}
	g, err := contractguard.New(o)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkContractguardCheck is the whole guard without HTTP: strict
// parse, schema, invariants.
func BenchmarkContractguardCheck(b *testing.B) {
	g := newGuard(b)
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		for b.Loop() {
			v := g.Check("POST", path(size), body)
			if v != nil != (validity == "invalid") {
				b.Fatal(v)
			}
		}
	})
}

// BenchmarkContractguardMiddleware is the guard around a handler: reading
// the body, the checks, handing the handler the same bytes.
func BenchmarkContractguardMiddleware(b *testing.B) {
	g := newGuard(b)
	ran := 0
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }))
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		ran = 0
		serveLoop(b, h, path(size), body)
		if (ran > 0) != (validity == "valid") {
			b.Fatalf("%s: handler ran %d times", validity, ran)
		}
	})
}

// BenchmarkContractguardHandle is Handle[T]: the checks of T's contract
// and the body decoded into T (compare with BenchmarkDecodeStruct).
func BenchmarkContractguardHandle(b *testing.B) {
	g, err := contractguard.New(contractguard.Options{MaxBodyBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	ran := 0
	handlers := map[string]http.Handler{
		"small": contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in Line) { ran++ }),
		"order": contractguard.Handle(g, func(w http.ResponseWriter, r *http.Request, in Order) { ran++ }),
	}
	forBodies(b, func(b *testing.B, size, validity string, body []byte) {
		h := handlers["order"]
		if size == "small" {
			h = handlers["small"]
		}
		ran = 0
		serveLoop(b, h, path(size), body)
		if (ran > 0) != (validity == "valid") {
			b.Fatalf("%s: handler ran %d times", validity, ran)
		}
	})
}

// serveLoop sends body to h as a JSON POST to path for every b.Loop
// iteration, reusing one request and a writer that discards.
func serveLoop(b *testing.B, h http.Handler, path string, body []byte) {
	r := httptest.NewRequest("POST", path, nil)
	r.Header.Set("Content-Type", "application/json")
	var rd bytes.Reader
	rc := io.NopCloser(&rd)
	w := &discardWriter{h: http.Header{}}
	for b.Loop() {
		rd.Reset(body)
		r.Body, r.ContentLength = rc, int64(len(body))
		h.ServeHTTP(w, r)
	}
}

type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkContractguardScan is the cost of Options.VulnerabilityScan: the
// guard on the ~1 KB order body (which nothing in the scan flags) with the
// scan off and on, through Check and through the middleware.
func BenchmarkContractguardScan(b *testing.B) {
	body := bodies["1KB"]
	for _, via := range []string{"check", "middleware"} {
		for _, on := range []bool{false, true} {
			name := "via=" + via + "/scan=off"
			if on {
				name = "via=" + via + "/scan=on"
			}
			b.Run(name, func(b *testing.B) {
				g := newGuard(b, func(o *contractguard.Options) { o.VulnerabilityScan = on })
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				if via == "check" {
					for b.Loop() {
						if v := g.Check("POST", "/orders", body); v != nil {
							b.Fatal(v)
						}
					}
					return
				}
				ran := 0
				serveLoop(b, g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ })), "/orders", body)
				if ran == 0 {
					b.Fatal("the handler never ran")
				}
			})
		}
	}
}
