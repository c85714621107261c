package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractguard/contractguard"
)

// upstreamSaw is one request as the upstream got it.
type upstreamSaw struct {
	method, target string
	header         http.Header
	body           []byte
}

// FuzzProxyWire writes arbitrary bytes to the proxy's listener, as a
// client on the wire would (pipelined requests, chunked bodies, encodings,
// method overrides, headers named in Connection, dot segments), and holds
// the proxy to its one promise: every request the upstream gets is one the
// guard passes as the upstream sees it — its method, path, query, headers
// and body, run through the same guard by CheckRequest. A transformation
// after the guard (the path normalized, an override applied, a hop-by-hop
// header dropped, a chunked body sent with its length) that changed what
// a contract decides would show here.
func FuzzProxyWire(f *testing.F) {
	run := wireHarness(f)
	for _, s := range wireSeeds() {
		f.Add([]byte(s.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { run(t, raw) })
}

// TestProxyWire_Seeds: the harness is live. Each seed gets the statuses it
// must, and as many of its requests reach the upstream as must, so
// FuzzProxyWire's check runs on requests the guard passed.
func TestProxyWire_Seeds(t *testing.T) {
	run := wireHarness(t)
	for i, s := range wireSeeds() {
		statuses, saw := run(t, []byte(s.raw))
		if fmt.Sprint(statuses) != fmt.Sprint(s.statuses) || len(saw) != s.upstream {
			t.Errorf("seed %d: statuses %v and %d at the upstream, want %v and %d\n%s", i, statuses, len(saw), s.statuses, s.upstream, s.raw)
		}
	}
}

// wireHarness is FuzzProxyWire's check of one connection's bytes, on a
// proxy (with the hosts' contracts, testdata/hosts/contracts: body
// schemas, rules on the user, the query and the body) and an upstream of
// its own; it returns the statuses of the
// responses and what the upstream got.
func wireHarness(tb testing.TB) func(t *testing.T, raw []byte) ([]int, []upstreamSaw) {
	var mu sync.Mutex
	var saw []upstreamSaw
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the proxy gave up on the request: it never arrived whole
		}
		// An upstream that honours a method override, as many hosts do
		// (Express's method-override, Spring's HiddenHttpMethodFilter):
		// the proxy must apply one or remove it.
		method := r.Method
		if vals := overrideValues(r.Header); len(vals) > 0 && validMethod(strings.ToUpper(vals[0])) {
			method = strings.ToUpper(vals[0])
		}
		mu.Lock()
		saw = append(saw, upstreamSaw{method, r.URL.RequestURI(), r.Header.Clone(), body})
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	tb.Cleanup(up.Close)
	p, srv := testProxy(tb, up.URL, func(s *settings, o *contractguard.Options) {
		s.MethodOverride, s.UserHeader = true, "X-User"
		s.ReadHeaderTimeout, s.ReadTimeout = 2*time.Second, 2*time.Second
		o.MaxBodyBytes, o.VulnerabilityScan, o.Metrics = 4096, true, false
	})
	addr := srv.Listener.Addr().String()
	return func(t *testing.T, raw []byte) ([]int, []upstreamSaw) {
		mu.Lock()
		saw = saw[:0]
		mu.Unlock()
		statuses := wireExchange(t, addr, raw)
		mu.Lock()
		got := append([]upstreamSaw(nil), saw...)
		mu.Unlock()
		for _, u := range got {
			r := httptest.NewRequest(u.method, u.target, bytes.NewReader(u.body))
			r.Header = u.header
			if v := p.guard.CheckRequest(r); v != nil {
				t.Fatalf("the upstream got %s %s %v %q, which the guard refuses: %v", u.method, u.target, u.header, u.body, v)
			}
		}
		return statuses, got
	}
}

// wireExchange writes raw to the proxy and reads the responses to the
// whole requests raw holds (as net/http reads them), or until the proxy
// closes the connection; then hangs up. It returns the responses'
// statuses. A whole request the proxy leaves unanswered for 10 s (its
// read timeout is 2 s, the upstream answers at once) is a hang, and fails.
func wireExchange(t *testing.T, addr string, raw []byte) (statuses []int) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const patience = 10 * time.Second // for each response, on a loaded machine
	c.SetReadDeadline(time.Now().Add(patience))
	go c.Write(raw)
	var reqs []*http.Request
	in := bufio.NewReader(bytes.NewReader(raw))
	for {
		r, err := http.ReadRequest(in)
		if err != nil {
			break
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			break // cut short: the proxy answers it only at its read timeout
		}
		reqs = append(reqs, r)
	}
	br := bufio.NewReader(c)
	for done := 0; done < len(reqs); {
		res, err := http.ReadResponse(br, reqs[done]) // the request: a HEAD's answer has no body
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the proxy left the %d. of the %d whole requests of %q unanswered for %v", done+1, len(reqs), raw, patience)
			}
			return statuses // closed, or not HTTP: the proxy refused the connection's bytes
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
		c.SetReadDeadline(time.Now().Add(patience))
		if res.StatusCode >= 200 {
			done++
		}
		if res.Close {
			return statuses
		}
	}
	return statuses
}

// wireSeed is one connection's bytes, the statuses of its responses, and
// how many of its requests reach the upstream.
type wireSeed struct {
	raw      string
	statuses []int
	upstream int
}

// wireSeeds are requests of each kind the proxy must get right.
func wireSeeds() []wireSeed {
	req := func(method, target string, headers []string, body string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: shop.example\r\n", method, target)
		for _, h := range headers {
			b.WriteString(h + "\r\n")
		}
		if body != "" && !strings.Contains(strings.Join(headers, "\n"), "Transfer-Encoding") {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
		}
		b.WriteString("\r\n" + body)
		return b.String()
	}
	chunk := func(parts ...string) string {
		var b strings.Builder
		for _, p := range parts {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(p), p)
		}
		return b.String() + "0\r\n\r\n"
	}
	jsonType := "Content-Type: application/json"
	valid, invalid, root := `{"email":"ada@example.com","name":"Ada"}`, `{"email":"nope"}`, `{"email":"ada@example.com","name":"root"}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, valid)
	zw.Close()
	user := func(id string) string { return `X-User: {"id":"` + id + `","limit":10}` }
	return []wireSeed{
		{req("POST", "/api/users", []string{jsonType}, valid), []int{200}, 1},
		{req("POST", "/api/users", []string{jsonType}, invalid), []int{400}, 0},
		{req("POST", "/api/users", []string{jsonType}, valid) + req("POST", "/api/users", []string{jsonType}, invalid), []int{200, 400}, 1},
		{req("POST", "/api/users", []string{jsonType, "Transfer-Encoding: chunked"}, chunk(`{"email":"ada@example.com",`, `"name":"root"}`)), []int{422}, 0},
		{req("POST", "/api/users", []string{jsonType, "Content-Encoding: gzip"}, gz.String()), []int{200}, 1},
		{req("POST", "/api/users", []string{jsonType, "Content-Encoding: gzip", "Connection: Content-Encoding"}, gz.String()), []int{400}, 0},
		{req("POST", "/api/users", []string{jsonType, "Expect: 100-continue"}, invalid), []int{100, 400}, 0},
		{req("POST", "/api/./users", []string{jsonType}, root), []int{422}, 0},
		{req("POST", "//api/users/", []string{jsonType}, root), []int{422}, 0},
		{req("POST", "/x/../API/USERS", []string{jsonType}, root), []int{422}, 0},
		{req("POST", "/api/users/7", []string{jsonType, "X-HTTP-Method-Override: PUT"}, `{}`), []int{400}, 0},
		{req("POST", "/api/users/7", []string{jsonType, "X-HTTP-Method-Override: put"}, `{"name":"Ada"}`), []int{200}, 1},
		{req("POST", "/api/transfers", []string{jsonType, user("blocked")}, `{"amount":5}`), []int{422}, 0},
		{req("POST", "/api/transfers", []string{jsonType, user("ada")}, `{"amount":5}`), []int{200}, 1},
		{req("POST", "/api/transfers", []string{jsonType, user("ada"), "Connection: X-User"}, `{"amount":5}`), []int{422}, 0},
		{req("PUT", "/api/users/7", []string{"Content-Type: text/plain"}, `hello`), []int{415}, 0},
		{req("GET", "/api/users/7?debug=1", nil, ""), []int{422}, 0},
		{req("GET", "/api/users/7", nil, ""), []int{200}, 1},
		{req("POST", "/api/users", []string{jsonType, "Transfer-Encoding: chunked", "Content-Length: 5"}, chunk(invalid)), []int{400}, 0},
		{req("GET", "/api/users/7", []string{"Upgrade: websocket", "Connection: Upgrade"}, ""), []int{200}, 1},
		{req("POST", "http:x://h/api/users", []string{jsonType}, invalid), []int{400}, 0},
	}
}
