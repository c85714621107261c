package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/jsonbody"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
)

// The codes of the errors the proxy itself answers with, in the guard's
// error shape under "error": "PROXY_ERROR" (docs/proxy.md).
const (
	codeUpstreamUnavailable = "UPSTREAM_UNAVAILABLE"    // 502: the upstream refused or broke the connection
	codeUpstreamTimeout     = "UPSTREAM_TIMEOUT"        // 504: the upstream did not connect or answer in time
	codeInvalidUserHeader   = "INVALID_USER_HEADER"     // 400: the trusted user header is not usable
	codeInvalidOverride     = "INVALID_METHOD_OVERRIDE" // 400: a method override that is not a method
	codeInvalidTarget       = "INVALID_REQUEST_TARGET"  // 400: a request target with no path the guard can read
	codeInvalidHost         = "INVALID_HOST"            // 400: a Host that forwards as a list of hosts
	codeTooManyHeaders      = "TOO_MANY_HEADERS"        // 431: more header lines than a host reads
	codeRequestTimeout      = "REQUEST_TIMEOUT"         // 408: a streamed body that did not arrive within read-timeout
)

// maxHeaderLines is the most header lines (each value of a repeated
// header counts) a request may bring. Node.js (Express, Fastify) builds
// req.headers from the first 1,000 lines it reads (maxHeadersCount, 2,000
// names and values) and drops the rest without a word, and the Transport
// writes the headers sorted by name: 1,000 "A:" lines pushed out the
// proxy's X-Forwarded-For (req.ip was the proxy's loopback address), a
// trusted user header and the Content-Type, all of which the guard had
// read. 100 is Envoy's, Apache httpd's and Tomcat's default, so that what
// passes them passes here, with room below Node's for the few lines the
// proxy adds.
const maxHeaderLines = 100

// healthPrefix is where the main listener answers health and readiness
// probes (Kubernetes probes reach the pod's address, not its loopback): a
// prefix no application uses. The admin listener answers /healthz and
// /readyz.
const healthPrefix = "/_contractguard/"

// proxy is a running contractguard serve.
type proxy struct {
	s     settings
	guard *contractguard.Guard
	log   *slog.Logger

	handler http.Handler // the main listener's: health, then the guard, then the upstream
	admin   http.Handler // the admin listener's

	stopping atomic.Bool // SIGTERM received: not ready
	// Requests of the main listener whose handler runs, a websocket's for
	// as long as its tunnel: http.Server's Shutdown does not wait for
	// hijacked connections, and shutdown does.
	active atomic.Int64

	readyMu      sync.Mutex
	readyAt      time.Time
	readyErr     error
	transport    *http.Transport
	upstreamHP   string // host:port of the upstream, for readiness
	contractsDir string // watched, when on disk
	maxBody      int64  // the guard's MaxBodyBytes: no body it read whole is longer
	basePath     bool   // the upstream URL has a path, put before every request's
}

// newProxy builds the guard and the handlers. opts are the guard's
// options as configured; the proxy sets Logger and, with a user header,
// User.
func newProxy(s settings, opts contractguard.Options, log *slog.Logger) (*proxy, error) {
	p := &proxy{s: s, log: log}
	opts.Logger = log
	if s.UserHeader != "" {
		opts.User = userFromHeader(s.UserHeader)
	}
	opts.OnReject = p.reject
	g, err := contractguard.New(opts)
	if err != nil {
		return nil, err
	}
	p.guard = g
	if !opts.Disabled && opts.ContractsDir == "" && opts.ContractsFS == nil && len(opts.Contracts) == 0 {
		// Nothing asks for a contracts folder: say so, or a setting
		// forgotten in a deployment would start a proxy that checks
		// nothing, with only the configuration line's "contracts":0 to
		// tell. The scan does not change that: it reads only requests a
		// contract matches (Options.VulnerabilityScan).
		effect := "every request passes unchecked"
		switch {
		case opts.RequireContract && !opts.LearningMode:
			effect = "RequireContract rejects every request"
		case opts.VulnerabilityScan:
			effect += " (the vulnerability scan reads only requests a contract matches)"
		}
		log.Warn("contractguard serve: no contracts folder (--contracts, contractguard.contracts-dir or CONTRACTGUARD_CONTRACTS_DIR): " + effect)
	}
	p.maxBody = cmp.Or(opts.MaxBodyBytes, contractguard.DefaultMaxBodyBytes)
	if opts.ContractsFS == nil && !opts.Disabled {
		p.contractsDir = opts.ContractsDir
	}

	dial := (&net.Dialer{
		Timeout:   s.DialTimeout,
		KeepAlive: 30 * time.Second,
	}).DialContext
	if s.UpstreamTimeout > 0 {
		dial = stalledWritesFail(dial, s.UpstreamTimeout)
	}
	p.transport = &http.Transport{
		Proxy:                 nil, // never the environment's HTTP_PROXY: the upstream is beside us
		DialContext:           dial,
		ResponseHeaderTimeout: s.UpstreamTimeout,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256, // the default, 2, makes a busy proxy dial per request
		// Below the upstream's own idle timeout, so that the upstream is
		// not the one to close a kept-alive connection as a request is
		// sent on it: Node's default (Express, http.Server) is 5 s.
		IdleConnTimeout: 4 * time.Second,
		// The upstream sees the client's Accept-Encoding as sent: without
		// this, a request that has none goes upstream asking for gzip,
		// and the proxy decodes the answer for a client that never asked
		// (its Content-Length gone, its CPU spent here).
		DisableCompression: true,
	}
	host := s.Upstream.Host
	if s.Upstream.Port() == "" {
		port := "80"
		if s.Upstream.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(s.Upstream.Hostname(), port)
	}
	p.upstreamHP = host
	p.basePath = strings.Trim(s.Upstream.EscapedPath(), "/") != ""

	rp := &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      p.transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamError,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BufferPool:     copyBuffers{}, // without one, every response copy takes a new 32 KiB buffer
	}
	var h http.Handler = rp
	h = p.guard.Middleware(h)
	h = p.prepare(h)
	p.handler = p.accessLog(h)

	admin := http.NewServeMux()
	admin.Handle("/metrics", p.prometheus(opts.Metrics))
	admin.Handle("/actuator/contractguard", g.MetricsHandler())
	admin.Handle("/debug/contractguard/learned", g.LearnedHandler()) // for learn merge; 404 with learning off
	admin.HandleFunc("/healthz", p.healthz)
	admin.HandleFunc("/readyz", p.readyz)
	p.admin = admin
	return p, nil
}

// prometheus is the admin listener's /metrics: the guard's metrics
// (cgprometheus), the Go runtime's and the process's, in the Prometheus
// exposition formats; 404 unless metrics.enabled, as the JSON document.
func (p *proxy) prometheus(enabled bool) http.Handler {
	if !enabled {
		return http.NotFoundHandler()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		cgprometheus.NewCollector(p.guard),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelError),
		Registry: reg, // promhttp_metric_handler_errors_total
	})
}

// stalledWritesFail wraps dial's connections in upstreamConn: a write to
// the upstream that makes no progress within timeout fails.
func stalledWritesFail(dial func(context.Context, string, string) (net.Conn, error), timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &upstreamConn{Conn: c, timeout: timeout}, nil
	}
}

// upstreamWriteChunk is the most an upstreamConn writes under one deadline.
const upstreamWriteChunk = 64 << 10

// upstreamConn is a connection to the upstream whose writes must each make
// progress within upstream-timeout (every upstreamWriteChunk bytes). The
// Transport's ResponseHeaderTimeout starts only once the whole request has
// been written: an upstream that read the headers and then neither read
// the body nor answered held a body larger than the sockets' buffers (a
// streamed one, or a checked one sent from memory in one write) with no
// timeout at all, the client's connection and the upstream's with it. The
// write fails with a timeout, and the answer is 504 UPSTREAM_TIMEOUT. A
// long upload the upstream reads steadily is not cut: each chunk has
// upstream-timeout of its own, and the kernel wakes a blocked write each
// time about half the socket's send buffer (at most a few MB) has
// drained, so only an upstream that reads less than that within
// upstream-timeout is cut. A websocket's tunnel has none (tunnel).
type upstreamConn struct {
	net.Conn
	timeout time.Duration
	tunnel  atomic.Bool // the upstream switched to a websocket on it
}

func (c *upstreamConn) Write(b []byte) (int, error) {
	if c.tunnel.Load() {
		return c.Conn.Write(b)
	}
	n := 0
	for n < len(b) {
		c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
		m, err := c.Conn.Write(b[n:min(len(b), n+upstreamWriteChunk)])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// switchedToTunnel lifts the write deadline of the upstream connection c
// (an upstreamConn, or a TLS connection over one), once a websocket's 101
// has made it a tunnel, which lasts as long as it lasts.
func switchedToTunnel(c net.Conn) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	if uc, ok := c.(*upstreamConn); ok {
		uc.tunnel.Store(true)
		uc.Conn.SetWriteDeadline(time.Time{})
	}
}

// exchange is what the proxy knows of one request, in its context.
type exchange struct {
	rc     *http.ResponseController
	body   io.ReadCloser // the request's body as it reached the guard
	code   string        // the guard's or the proxy's error code, for the access log
	status int           // 499 when the client went away first
	// Cancels the request's context (accessLog), and with it the upstream
	// request, which inherits it; called when write-timeout
	// has passed (respTimer, modifyResponse) and when the request ends.
	cancelUpstream context.CancelFunc
	respTimer      *time.Timer
	// respTimer fired: the response was cut at write-timeout.
	timedOut atomic.Bool
	// Reading the client's body passed read-timeout (untilEOF): on a
	// streamed route, the upstream had only part of it.
	bodyTimedOut atomic.Bool
	// The read deadline of a body not yet read to its end (prepare), in
	// Unix nanoseconds; 0 once it has been. net/http cancels the request's context inside the
	// read that times out, before untilEOF can store bodyTimedOut, so the
	// Transport may give up, and upstreamError run, first: a deadline
	// passed tells it as surely, whichever goroutine gets there first.
	bodyDeadline atomic.Int64
	// The client's body as prepare wrapped it (nil for none), to tell
	// whether the upstream answered before it was read to its end.
	streamed *untilEOF
	// The upstream switched protocols: ReverseProxy writes its 101 on the
	// hijacked connection, never through WriteHeader, so the recorder
	// does not see it.
	switched bool
	// The upstream connection of a websocket upgrade request (rewrite),
	// whose write deadline goes if it becomes a tunnel (modifyResponse).
	upstreamConn net.Conn
}

type exchangeKey struct{}

func exchangeOf(r *http.Request) *exchange {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return x
}

// prepare runs before the guard: health probes are answered, the path is
// normalized, the method override applied or removed, the user header
// checked, and the read deadline set, so that the guard checks what the
// upstream will route.
func (p *proxy) prepare(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := exchangeOf(r)
		// The request, body included, must arrive within read-timeout; once
		// it has, the deadline goes, so that a slow upstream or a long
		// response does not cancel the request (net/http cancels a request
		// whose connection's read deadline passes). Set first, for every
		// answer: net/http reads what is left of an unread body before it
		// writes one (up to 256 KiB), and with no deadline a client that
		// sends none holds the connection for ever.
		var body *untilEOF
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			body = &untilEOF{ReadCloser: r.Body, x: x, done: func() {}}
			r.Body = body
			x.streamed = body
		}
		if p.s.ReadTimeout > 0 {
			deadline := time.Now().Add(p.s.ReadTimeout)
			x.rc.SetReadDeadline(deadline)
			if body == nil {
				x.rc.SetReadDeadline(time.Time{})
			} else {
				x.bodyDeadline.Store(deadline.UnixNano())
				body.done = func() {
					x.bodyDeadline.Store(0)
					x.rc.SetReadDeadline(time.Time{})
				}
			}
		}
		if body != nil {
			// An upstream that answers before it has read the body leaves
			// the Transport's writer reading the client's body when the
			// handler returns, and net/http, before it writes the answer,
			// reads what is left of the body itself (up to 256 KiB): both
			// wait until the client sends more or read-timeout passes
			// (never, with 0), so a client that sent part of its body and
			// waits was answered then. A body not read to its end when the
			// handler returns is cut: the answer goes at once, and the
			// connection, its body unread, closes after it. (Cutting only
			// a read in progress left the Transport's next read, or
			// net/http's own, to wait: the answer was still held now and
			// then.) Cut after bodyGrace, not at once: what the client has
			// sent by then is still read (below).
			defer func() {
				if !body.ended.Load() {
					cut := time.Now().Add(bodyGrace)
					if d := x.bodyDeadline.Load(); d != 0 && d < cut.UnixNano() {
						cut = time.Unix(0, d)
					}
					x.rc.SetReadDeadline(cut)
				}
			}()
		}
		if strings.HasPrefix(r.URL.Path, healthPrefix) {
			switch r.URL.Path[len(healthPrefix):] {
			case "healthz":
				p.healthz(w, r)
				return
			case "readyz":
				p.readyz(w, r)
				return
			}
		}
		// Node drops the lines past its count (maxHeaderLines): the
		// upstream must get every header the guard reads.
		if headerLines(r.Header) > maxHeaderLines {
			p.fail(w, r, http.StatusRequestHeaderFieldsTooLarge, codeTooManyHeaders, fmt.Sprintf("a request must have at most %d header lines", maxHeaderLines))
			return
		}
		// A target Go parses as a scheme and an opaque rest (http:x://h/p,
		// no "//" after the scheme) has no path for the guard to match,
		// while the Transport writes the rest as the upstream's target,
		// x://h/p, which Node, the JDK and Go route as /p.
		if r.URL.Opaque != "" {
			p.fail(w, r, http.StatusBadRequest, codeInvalidTarget, "the request target must be a path or an absolute URL with a host")
			return
		}
		// Go takes a comma in a host name (RFC 3986 allows one), and the
		// Host goes upstream whole as X-Forwarded-Host, which the guard
		// reads whole; Express with trust proxy (docs/proxy.md) reads
		// req.hostname up to the first comma, as a list of hosts:
		// admin.example.com,x is admin.example.com to it, and a rule on
		// that host was passed by.
		if strings.Contains(r.Host, ",") {
			p.fail(w, r, http.StatusBadRequest, codeInvalidHost, "the Host must be one host name, without a comma")
			return
		}
		dropConnectionOptions(r.Header)
		dropUpgradesButWebSocket(r.Header)
		setForwarded(r)
		if p.s.NormalizePath {
			normalizePath(r.URL)
		} else if strings.HasPrefix(r.URL.Path, "//") {
			// Forwarded as sent, //h/api/users is a host and the path
			// /api/users to the JDK's java.net.URI, where the guard reads
			// the path /h/api/users (normalized, the slashes collapse).
			p.fail(w, r, http.StatusBadRequest, codeInvalidTarget, "a path that starts with // is read as a host name by some servers: send it with one /")
			return
		}
		// The upstream gets the path as EscapedPath writes it: the client's
		// escapes when Go keeps them (RawPath), else the path encoded
		// afresh, where an escape such as %3B is a ';' again
		// (/api/users%3Bx{ is /api/users;x%7B upstream, which Fastify with
		// useSemicolonDelimiter and Spring route to /api/users). The guard
		// reads that path, not the client's.
		if r.URL.RawPath != "" && r.URL.RawPath != r.URL.EscapedPath() {
			r.URL.RawPath = ""
		}
		// Under a base path, / is not the upstream's root: a path that
		// climbs above it leaves the base path on an upstream that
		// resolves dot segments (Tomcat does after cutting ;parameters:
		// /base/..;/base/api/users is /base/api/users), where the guard
		// read a path of no contract (/base/api/users; the contracts are
		// the client's paths).
		if p.basePath && climbsAboveRoot(r.URL.EscapedPath()) {
			p.fail(w, r, http.StatusBadRequest, codeInvalidTarget, "a path must not climb above / with .. segments: the service is under a base path")
			return
		}
		// Any override header counts, empty or not, whichever comes first:
		// one the proxy neither applies nor removes reaches an upstream
		// that may route by it a method the guard did not check.
		if vals := overrideValues(r.Header); len(vals) > 0 {
			m := strings.ToUpper(strings.TrimSpace(vals[0]))
			// One empty override is none; one that is not applied goes.
			apply := p.s.MethodOverride && r.Method == http.MethodPost && (m != "" || len(vals) > 1)
			if apply && (len(vals) > 1 || !validMethod(m)) {
				p.fail(w, r, http.StatusBadRequest, codeInvalidOverride, "a method override must be one HTTP method, not HEAD, CONNECT or TRACE")
				return
			}
			deleteOverrides(r.Header)
			if apply {
				r.Method = m
			}
		}
		if h := p.s.UserHeader; h != "" {
			if vals := r.Header.Values(h); len(vals) > 1 {
				p.fail(w, r, http.StatusBadRequest, codeInvalidUserHeader, "the user header "+h+" must appear at most once")
				return
			} else if len(vals) == 1 && !validUser(vals[0]) {
				p.fail(w, r, http.StatusBadRequest, codeInvalidUserHeader, "the user header "+h+" must be a JSON object or an id")
				return
			}
		}
		x.body = r.Body
		next.ServeHTTP(w, r)
	})
}

// bodyGrace is how long a body not read to its end when the handler
// returns may still be read (prepare), as net/http lingers half a second
// before it closes a connection whose body it did not read
// (rstAvoidanceDelay). Cut at once, a body already sent whole (10 KiB
// behind a request refused 415 before its body was read) was not drained,
// and a client still sending one (an upload the upstream answered
// early) was still sending: the connection closed with bytes unread,
// which resets it, and the request behind the refused one, or the early
// answer itself, was lost to "connection reset by peer". A body that
// arrives within it is drained and the connection serves the next
// request; a client that sent part of its body and waits is answered
// (an early answer at once, in full duplex: modifyResponse), then cut.
const bodyGrace = 500 * time.Millisecond

// headerLines is the number of header lines h was read from: one for each
// value.
func headerLines(h http.Header) int {
	n := 0
	for _, vals := range h {
		n += len(vals)
	}
	return n
}

// untilEOF calls done once, when the body has been read to its end, notes
// on x a read that timed out (read-timeout), and tells whether the body
// was read to its end (prepare).
type untilEOF struct {
	io.ReadCloser
	x     *exchange
	done  func()
	ended atomic.Bool // a Read returned io.EOF (done has run)
}

func (b *untilEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var ne net.Error
	switch {
	case err == io.EOF:
		if !b.ended.Swap(true) {
			b.done()
		}
	case errors.As(err, &ne) && ne.Timeout():
		b.x.bodyTimedOut.Store(true)
	}
	return n, err
}

var forwardedHeaders = []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// setForwarded writes on r, with httputil's SetXForwarded, the
// X-Forwarded-For (the inbound chain, then the client's address), -Host
// and -Proto that the upstream gets, before the guard reads r: a rule on
// them checks what the upstream will see, never a value the client sent
// in their place. The client's Forwarded goes, as upstream.
func setForwarded(r *http.Request) {
	(&httputil.ProxyRequest{In: r, Out: r}).SetXForwarded()
	r.Header.Del("Forwarded") // not sent upstream either
}

// bodyOverdue reports whether the request's body, not read to its end,
// is past its read deadline: a read of it fails (or has failed) with a
// timeout, whether or not untilEOF has noted it yet.
func (x *exchange) bodyOverdue() bool {
	d := x.bodyDeadline.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

// rewrite is the outbound request: to the upstream, with X-Forwarded-For
// (the inbound chain, then the client's address), -Host and -Proto.
func (p *proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.s.Upstream)
	// As prepare wrote them, before the guard read them (ReverseProxy
	// takes every X-Forwarded-* off the outbound request).
	for _, h := range forwardedHeaders {
		if v := pr.In.Header[h]; len(v) > 0 {
			pr.Out.Header[h] = v
		}
	}
	if p.s.PreserveHost {
		pr.Out.Host = pr.In.Host
	}
	// A websocket upgrade (prepare removed every other Upgrade): its
	// connection, once a tunnel, has no write deadline (upstreamConn).
	if x := exchangeOf(pr.In); x != nil && p.s.UpstreamTimeout > 0 && pr.In.Header.Get("Upgrade") != "" {
		pr.Out = pr.Out.WithContext(httptrace.WithClientTrace(pr.Out.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { x.upstreamConn = info.Conn },
		}))
	}
	// The guard replaced the body it read (with the bytes it checked, or,
	// over the limit in learning mode, with a stream of them and the rest).
	if x := exchangeOf(pr.In); x != nil && pr.In.Body != x.body {
		// The client's Expect: 100-continue is answered (net/http sent the
		// 100 when the guard read): upstream, it would only hold the body
		// back until the upstream's 100, which would reach the client as a
		// second one.
		pr.Out.Header.Del("Expect")
		p.inMemory(pr)
		if pr.Out.ContentLength >= 0 {
			// A chunked body the guard read and checked: it is sent
			// whole, with its length, as the bytes the guard saw.
			pr.Out.TransferEncoding = nil
		}
	}
}

// inMemory hands a body the guard read on to the Transport as a
// *bytes.Reader, the kind it knows to be in memory: it then writes the
// headers and the body to the upstream in one write, and the upstream
// reads them in one, where any other body has the headers flushed first
// (ReverseProxy hides the guard's reader behind its own). The guard gives
// a body its length once it has read all of it, at most its limit; one it
// gave back as a stream (learning mode, over its limit) streams on: it
// has no length, or, when it came with a length over the limit (read as
// far as the limit for sink protection), that length, which is the
// client's and over the limit (TestProxy_LearningOverLimitStreams,
// TestProxy_LearningOverLimitStreamsWithSinkProtection).
func (p *proxy) inMemory(pr *httputil.ProxyRequest) {
	n := pr.Out.ContentLength
	if pr.Out.Body == nil || n <= 0 || n > p.maxBody {
		return
	}
	b := make([]byte, n)
	read, err := io.ReadFull(pr.Out.Body, b)
	if err != nil { // not what the guard gave on: the bytes read, then the rest, as they were
		pr.Out.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b[:read]), pr.Out.Body), pr.Out.Body}
		return
	}
	pr.Out.Body = io.NopCloser(bytes.NewReader(b))
	// The Transport may send it again, on a fresh connection, when the
	// kept-alive one it was written to turns out to be closed by the
	// upstream (Node closes idle ones after 5 s).
	pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// modifyResponse sets the write deadline once the upstream answers:
// write-timeout to send the response, none for an event stream or a
// protocol switch (a websocket), which last as long as they last.
func (p *proxy) modifyResponse(res *http.Response) error {
	if res.StatusCode == http.StatusSwitchingProtocols && !webSocketHandshake(res.Request.Header, res.Header) {
		// Returned as an error, ReverseProxy closes the upstream's
		// connection and answers 502 (upstreamError); a 101 whose Upgrade
		// is not the one asked for it left open.
		return errNotWebSocket
	}
	x := exchangeOf(res.Request)
	if x == nil {
		return nil
	}
	x.switched = res.StatusCode == http.StatusSwitchingProtocols
	if x.switched && x.upstreamConn != nil {
		switchedToTunnel(x.upstreamConn)
	}
	if b := x.streamed; b != nil && !x.switched && !b.ended.Load() {
		// An answer before the body was read to its end: net/http would
		// write it only once it can take the body's lock, which the
		// Transport's read of the client's body holds until the client
		// sends more (prepare cuts that read only once the handler has
		// returned, and an answer of more than net/http's buffer, or a
		// chunked one, is written before). In full duplex it goes at once;
		// the body is not read to its end, so the connection closes after
		// the answer, never read on from the middle of the body.
		x.rc.EnableFullDuplex()
		res.Header.Set("Connection", "close")
	}
	streaming := x.switched ||
		strings.HasPrefix(strings.ToLower(res.Header.Get("Content-Type")), "text/event-stream")
	switch {
	case streaming || p.s.WriteTimeout == 0:
		x.rc.SetWriteDeadline(time.Time{})
	default:
		x.rc.SetWriteDeadline(time.Now().Add(p.s.WriteTimeout))
		// The deadline fails a write, but the proxy writes only what it
		// reads, and an upstream that stalls mid-body held the request,
		// its connection and the upstream's, for as long as it stalled
		// (a response with a length is not even flushed before its end):
		// at the deadline the upstream's response is cut, and with it the
		// client's, which a write could no longer finish anyway.
		x.respTimer = time.AfterFunc(p.s.WriteTimeout, func() {
			x.timedOut.Store(true)
			x.cancelUpstream()
		})
	}
	return nil
}

var errNotWebSocket = errors.New("the upstream switched protocols (101) without completing a websocket handshake")

// webSocketHandshake reports whether a 101 with header res answers a
// websocket handshake of req's header: the request's one
// Sec-WebSocket-Key answered with its Sec-WebSocket-Accept (RFC 6455,
// 4.2.2), Upgrade websocket on both. After a 101 the connection is a tunnel
// the guard does not read: a 101 from a route whose status and headers
// the client chooses (or a handler's mistake), on an upstream that went on
// reading HTTP/1.1 requests on its connection, took every request the
// client sent next there unchecked. No server but a websocket one computes
// the accept value.
func webSocketHandshake(req, res http.Header) bool {
	keys := req.Values("Sec-Websocket-Key")
	if len(keys) != 1 || keys[0] == "" || !strings.EqualFold(req.Get("Upgrade"), "websocket") || !strings.EqualFold(res.Get("Upgrade"), "websocket") {
		return false
	}
	sum := sha1.Sum([]byte(keys[0] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	accept := res.Values("Sec-Websocket-Accept")
	return len(accept) == 1 && accept[0] == base64.StdEncoding.EncodeToString(sum[:])
}

// upstreamError answers a request the upstream could not serve: 504 when
// it did not connect or answer in time, else 502; 408 when the client's
// body, streamed upstream, did not arrive within read-timeout. Nothing is
// written when the client has gone.
func (p *proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	x := exchangeOf(r)
	if x != nil && (x.bodyTimedOut.Load() || x.bodyOverdue() && r.Context().Err() != nil) {
		// net/http cancels the request's context when a read of the body
		// fails, but the client is still there, waiting for an answer.
		// The deadline passed alone says nothing of the client: an
		// upstream that stopped reading the body (the Transport blocked
		// writing to it, not reading) and then broke off is 502.
		p.fail(w, r, http.StatusRequestTimeout, codeRequestTimeout, "the request body did not arrive in time")
		return
	}
	if r.Context().Err() != nil {
		if x != nil {
			x.status = 499 // as nginx logs it: the client closed the request
		}
		p.log.Debug("contractguard serve: client went away", slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()))
		// Nothing written: net/http would answer 200 with no body to a
		// client that is still reading (one that stopped sending
		// mid-body, its side of the connection closed), for a request the
		// upstream never had whole. The connection is closed instead.
		panic(http.ErrAbortHandler)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		p.log.Warn("contractguard serve: upstream timeout", slog.String("upstream", p.s.Upstream.Redacted()), slog.String("error", err.Error()))
		p.fail(w, r, http.StatusGatewayTimeout, codeUpstreamTimeout, "the upstream service did not answer in time")
		return
	}
	p.log.Warn("contractguard serve: upstream unavailable", slog.String("upstream", p.s.Upstream.Redacted()), slog.String("error", err.Error()))
	p.fail(w, r, http.StatusBadGateway, codeUpstreamUnavailable, "the upstream service is unavailable")
}

// reject writes a rejection of the guard as its default writer does, and
// notes the code for the access log.
func (p *proxy) reject(w http.ResponseWriter, r *http.Request, v *contractguard.Violation) {
	if x := exchangeOf(r); x != nil {
		x.code = v.Code
	}
	b, _ := v.MarshalJSON()
	writeJSON(w, v.Status, b)
}

// fail writes an error of the proxy's own, in the guard's shape.
func (p *proxy) fail(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if x := exchangeOf(r); x != nil {
		x.code = code
	}
	// A struct, not a map: its members in the guard's order, which a map
	// would sort ("code" first).
	b, _ := json.Marshal(struct {
		Error   string                 `json:"error"`
		Code    string                 `json:"code"`
		Details []contractguard.Detail `json:"details"`
	}{"PROXY_ERROR", code, []contractguard.Detail{{Path: "", Message: message}}})
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// healthz: the process is alive and serving.
func (p *proxy) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

// readyz: the contracts are loaded (always, once started: a guard never
// starts half-loaded), the process is not shutting down, and the upstream
// accepts a connection (checked at most once a second).
func (p *proxy) readyz(w http.ResponseWriter, r *http.Request) {
	status, body := http.StatusOK, map[string]any{"status": "ready", "contracts": p.guard.Metrics().ContractsLoaded, "upstream": "reachable"}
	if p.stopping.Load() {
		status, body["status"], body["upstream"] = http.StatusServiceUnavailable, "stopping", "not checked"
	} else if err := p.upstreamReachable(context.WithoutCancel(r.Context())); err != nil {
		// Not the request's own end: its answer is kept for a second, for
		// every probe, and a client that went away is no upstream's fault.
		status, body["status"], body["upstream"] = http.StatusServiceUnavailable, "not ready", "unreachable"
	}
	b, _ := json.Marshal(body)
	writeJSON(w, status, b)
}

func (p *proxy) upstreamReachable(ctx context.Context) error {
	p.readyMu.Lock()
	defer p.readyMu.Unlock()
	if time.Since(p.readyAt) < time.Second {
		return p.readyErr
	}
	ctx, cancel := context.WithTimeout(ctx, min(p.s.DialTimeout, 2*time.Second))
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.upstreamHP)
	if err == nil {
		c.Close()
	} else {
		p.log.Warn("contractguard serve: upstream not reachable", slog.String("upstream", p.s.Upstream.Redacted()), slog.String("error", err.Error()))
	}
	p.readyAt, p.readyErr = time.Now(), err
	return err
}

// accessLog is the outermost handler: it makes the exchange and logs one
// line per request (method, path without query, status, bytes, time,
// client, code; never a body, a query or a header value).
func (p *proxy) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.active.Add(1)
		defer p.active.Add(-1)
		start := time.Now()
		// net/http runs a handler with an Expect only when it reads
		// 100-continue among its tokens (any other is 417 first), as
		// "100-continue, x" too: it answers that itself (expects100).
		rw := &recorder{ResponseWriter: w, http10: !r.ProtoAtLeast(1, 1),
			expects100: r.Header.Get("Expect") != ""}
		// The outbound request inherits this context: cancelUpstream,
		// at write-timeout, cuts the upstream's response (modifyResponse).
		client := r.Context()
		ctx, cancel := context.WithCancel(client)
		x := &exchange{rc: http.NewResponseController(w), cancelUpstream: cancel}
		r = r.WithContext(context.WithValue(ctx, exchangeKey{}, x))
		path := r.URL.EscapedPath()
		completed := false // the handler returned, rather than aborting the response
		defer func() {
			if x.respTimer != nil {
				x.respTimer.Stop()
			}
			x.cancelUpstream()
			if !p.s.AccessLog {
				return
			}
			status := rw.status
			switch {
			case x.status != 0:
				status = x.status
			case status == 0 && x.switched: // a 101 written on the hijacked connection
				status = http.StatusSwitchingProtocols
			case status == 0:
				status = http.StatusOK
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", path),
				slog.Int("status", status),
				slog.Int64("bytes", rw.bytes),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("client", r.RemoteAddr),
			}
			if x.code != "" {
				attrs = append(attrs, slog.String("code", x.code))
			}
			if cut := cutBy(completed, x, rw, client); cut != "" {
				attrs = append(attrs, slog.String("cut", cut))
			}
			level := slog.LevelInfo
			if strings.HasPrefix(path, healthPrefix) {
				level = slog.LevelDebug // a probe every few seconds is not traffic
			}
			p.log.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(rw, r)
		completed = true
	})
}

// cutBy is why a response the handler aborted (ReverseProxy panics with
// http.ErrAbortHandler when copying a response body fails, and the client's
// connection is closed) was cut, for the access log: "write-timeout" when
// respTimer cut it, "client" when the client went away or a write to it
// failed, else "upstream" (its response broke off mid-body); "" for a
// response sent whole, and for one the proxy never answered (499, which
// the status says).
func cutBy(completed bool, x *exchange, rw *recorder, client context.Context) string {
	switch {
	case completed || x.status != 0 || x.switched:
		return ""
	case x.timedOut.Load():
		return "write-timeout"
	case rw.writeFailed || client.Err() != nil: // net/http cancels it when the client goes
		return "client"
	}
	return "upstream"
}

// recorder notes the status and size of a response. Unwrap lets
// http.ResponseController reach Flush, Hijack and the deadlines.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	http10 bool // an HTTP/1.0 client: no 1xx
	// A write to the client failed (its connection closed, or the write
	// deadline passed).
	writeFailed bool

	// The client sent Expect: 100-continue. net/http answers it with its
	// own 100 Continue when the body is first read: on a guarded route
	// when the guard reads it, on a streamed one when the Transport starts
	// sending it, which it does on the upstream's 100 (or after
	// ExpectContinueTimeout). The upstream's 100, which ReverseProxy
	// passes on, would be a second one (the Transport signals its body
	// writer before it hands the 100 on, so either may reach the client
	// first), and the client would take it for a response to the body.
	expects100 bool
}

func (w *recorder) WriteHeader(code int) {
	if code == http.StatusContinue && w.expects100 {
		return // net/http's own answers the client (expects100)
	}
	if w.http10 && code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// The upstream's 1xx (ReverseProxy passes them on): HTTP/1.0 has
		// none, and its client would take one for the response (RFC 9110,
		// 15.2); the upstream, spoken to in HTTP/1.1, cannot know.
		return
	}
	if w.status == 0 || w.status < 200 { // a 1xx is followed by the final status
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	if err != nil {
		w.writeFailed = true
	}
	return n, err
}

func (w *recorder) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// userFromHeader is Options.User for a header a trusted gateway sets: a
// JSON object is context.user as it is; any other value is the user's id,
// context.user.id. No header: an empty context.user.
func userFromHeader(name string) func(*http.Request) any {
	return func(r *http.Request) any {
		v := strings.TrimSpace(r.Header.Get(name))
		switch {
		case v == "":
			return nil
		case v[0] == '{':
			return json.RawMessage(v) // checked by validUser; the guard parses it strictly
		}
		return map[string]string{"id": v}
	}
}

// validUser reports whether a user header's value can be context.user: a
// JSON object, or an id that does not look like JSON.
func validUser(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	switch v[0] {
	case '{':
		// As strictly as the guard reads context.user: a name twice
		// ({"limit":100,"limit":1000}, whose limit depends on who reads
		// it), or a byte that is not UTF-8, is not a user. encoding/json
		// took them, and every rule on context.user then failed with its
		// own message, not this header's.
		doc, err := jsonbody.Parse([]byte(v), jsonbody.MaxDepthLimit)
		return err == nil && doc.Root().Kind() == jsonbody.Object
	case '[', '"':
		return false // JSON that is not an object: a gateway's mistake
	}
	return true
}

// dropConnectionOptions removes the headers the client named in
// Connection: they are for its hop only, and ReverseProxy does not pass
// them upstream, so the guard must not read them either (a header a rule
// requires, a Content-Encoding it would decode, the user header), or it
// checks a request the upstream never gets. Connection, Upgrade and TE
// stay, for ReverseProxy to handle: a protocol switch is passed on, and
// TE: trailers, which a client names in Connection (RFC 9110 10.1.4), too.
func dropConnectionOptions(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			// Trimmed as ReverseProxy trims it, of ASCII space alone: a
			// name after a Unicode space (U+00A0) names no header to it,
			// and the header goes upstream.
			switch f = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(f)); f {
			case "", "Connection", "Upgrade", "Te":
			default:
				delete(h, f)
			}
		}
	}
}

// dropUpgradesButWebSocket removes an Upgrade to any protocol but
// websocket, which makes the request an ordinary one: after a 101 the
// connection is a tunnel the guard no longer sees, and an upgrade to h2c
// that an upstream accepted would carry any number of HTTP/2 requests
// past it (h2c smuggling).
func dropUpgradesButWebSocket(h http.Header) {
	up := h.Values("Upgrade")
	if len(up) == 0 {
		return
	}
	// As sent (net/http trimmed the ASCII space around it): "websocket"
	// with a Unicode space is no token to ReverseProxy, which refuses the
	// request as if the upstream had failed (502).
	if len(up) == 1 && strings.EqualFold(up[0], "websocket") {
		return
	}
	h.Del("Upgrade")
	h.Del("Http2-Settings")
}

// overrideHeaders, in canonical form (as http.Header keys them).
var overrideHeaders = []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override"}

func overrideValues(h http.Header) []string {
	var vals []string
	for _, name := range overrideHeaders {
		vals = append(vals, h.Values(name)...)
	}
	return vals
}

func deleteOverrides(h http.Header) {
	for _, name := range overrideHeaders {
		h.Del(name)
	}
}

func validMethod(m string) bool {
	return m != "" && validHeaderName(m) && // a token, as a header name is
		// and not one that changes what the connection carries: a HEAD
		// answer has a Content-Length and no body, CONNECT opens a tunnel,
		// TRACE echoes the request back
		m != http.MethodHead && m != http.MethodConnect && m != http.MethodTrace
}

// climbsAboveRoot reports whether a path, read as any server may read
// it, has more ".." segments at some point than segments before them:
// with its ;parameters cut from each segment (Tomcat), percent-decoded
// (%2e%2e), and with %2F as a separator too.
func climbsAboveRoot(escaped string) bool {
	if !strings.Contains(escaped, "..") && !strings.Contains(escaped, "%2e") && !strings.Contains(escaped, "%2E") {
		return false // no dot segment in any reading
	}
	depth := 0
	for _, s := range strings.Split(escaped, "/") {
		for _, s := range splitEncodedSlash(s) {
			s, _, _ = strings.Cut(s, ";")
			if d, err := url.PathUnescape(s); err == nil {
				s = d
			}
			switch s {
			case "", ".":
			case "..":
				if depth--; depth < 0 {
					return true
				}
			default:
				depth++
			}
		}
	}
	return false
}

// splitEncodedSlash splits a segment at each %2F (or %2f).
func splitEncodedSlash(s string) []string {
	if !strings.Contains(s, "%2") {
		return []string{s}
	}
	return strings.Split(strings.ReplaceAll(s, "%2f", "%2F"), "%2F")
}

// normalizePath removes "." and ".." segments (also percent-encoded) and
// empty segments from u's path, keeping every other byte as it was sent
// (an encoded slash stays encoded) and a trailing slash: the guard and the
// upstream then read the same path, whatever the upstream's router makes
// of dot segments and repeated slashes.
func normalizePath(u *url.URL) {
	raw := u.EscapedPath()
	if !strings.HasPrefix(raw, "/") {
		return // OPTIONS *
	}
	if !strings.Contains(raw, "//") && !strings.Contains(raw, "/.") && !strings.Contains(raw, "%2e") && !strings.Contains(raw, "%2E") {
		return // the common case: nothing to do
	}
	trailing := strings.HasSuffix(raw, "/")
	var segs []string
	for _, s := range strings.Split(raw, "/") {
		if s == "" {
			continue
		}
		switch strings.ToLower(s) {
		case ".", "%2e":
			continue
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			continue
		}
		segs = append(segs, s)
	}
	clean := "/" + strings.Join(segs, "/")
	if trailing && len(segs) > 0 {
		clean += "/"
	}
	if clean == raw {
		return
	}
	path, err := url.PathUnescape(clean)
	if err != nil {
		return // not reached: the server has parsed the path
	}
	u.Path, u.RawPath = path, clean
}

// serve is contractguard serve.
func serve(args []string, stdout, stderr io.Writer) int {
	s, opts, code, ok := loadSettings(args, stdout, stderr)
	if !ok {
		return code
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: s.LogLevel}))
	// A SIGHUP while the contracts load would end the process: it waits,
	// and reloads them once serving. SIGTERM and SIGINT still end it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP)
	defer signal.Stop(sigs)
	p, err := newProxy(s, opts, log)
	if err != nil {
		for _, e := range flatten(err) {
			// A paid feature without a licence key, say, is not a contract
			// that does not load.
			msg := "contractguard serve: the guard does not start"
			if le := (*contractguard.LoadError)(nil); errors.As(e, &le) {
				msg = "contractguard serve: the contracts do not load"
			}
			log.Error(msg, slog.String("error", e.Error()))
		}
		return 1
	}
	// SIGTERM and SIGINT have a channel of their own: os/signal drops a
	// signal whose channel is full, and SIGHUPs queued behind a reload
	// (a deploy that signals once per file) filled the shared one, so a
	// SIGTERM then was lost and the proxy served on until killed.
	stops := make(chan os.Signal, 1)
	signal.Notify(stops, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stops)
	if err := p.run(context.Background(), sigs, stops); err != nil {
		log.Error("contractguard serve: stopped", slog.String("error", err.Error()))
		return 1
	}
	return 0
}

// run listens and serves until SIGTERM or SIGINT on stops (or on sigs,
// or ctx is done), then shuts down gracefully; SIGHUP on sigs reloads the
// contracts.
func (p *proxy) run(ctx context.Context, sigs, stops <-chan os.Signal) error {
	s := p.s
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.Listen, err)
	}
	main := &http.Server{
		Handler:           p.handler,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		IdleTimeout:       s.IdleTimeout,
		MaxHeaderBytes:    int(s.MaxHeaderBytes),
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		// ReadTimeout and WriteTimeout are per request, in prepare and
		// modifyResponse: the server's would cut streams and cancel
		// requests waiting on a slow upstream.
	}
	servers := []*http.Server{main}
	listeners := []net.Listener{ln}
	attrs := []any{slog.String("listen", ln.Addr().String()), slog.String("upstream", s.Upstream.Redacted())}
	if s.AdminListen != "off" {
		aln, err := net.Listen("tcp", s.AdminListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("admin-listen %s: %w", s.AdminListen, err)
		}
		admin := &http.Server{
			Handler:           p.admin,
			ReadHeaderTimeout: s.ReadHeaderTimeout,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      10 * time.Second,
			IdleTimeout:       s.IdleTimeout,
			MaxHeaderBytes:    int(s.MaxHeaderBytes),
			ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		}
		servers = append(servers, admin)
		listeners = append(listeners, aln)
		attrs = append(attrs, slog.String("admin", aln.Addr().String()))
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if s.Watch && p.contractsDir != "" {
		go keepWatching(watchCtx, p.guard, p.log, time.Second)
	}

	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	p.log.Info("contractguard serve: listening", attrs...)

	for {
		select {
		case err := <-errc:
			p.shutdown(servers)
			return err
		case <-ctx.Done():
			return p.shutdown(servers)
		case sig := <-sigs:
			if sig = coalesce(sig, sigs); sig == syscall.SIGHUP {
				select {
				case sig = <-stops: // a stop that came with the SIGHUPs stops without reloading first
				default:
				}
			}
			if sig == syscall.SIGHUP {
				p.log.Info("contractguard serve: SIGHUP: reloading the contracts")
				_ = p.guard.Reload() // a failure is logged, and the old set stays
				continue
			}
			p.log.Info("contractguard serve: shutting down", slog.String("signal", sig.String()), slog.String("timeout", s.ShutdownTimeout.String()))
			return p.shutdown(servers)
		case sig := <-stops:
			p.log.Info("contractguard serve: shutting down", slog.String("signal", sig.String()), slog.String("timeout", s.ShutdownTimeout.String()))
			return p.shutdown(servers)
		}
	}
}

// keepWatching runs g.Watch until ctx is done. Watch returns when it
// cannot watch: the system's limit of watchers reached, the folder gone
// for a moment while a volume is swapped, the watcher stopped. Once, that
// ended reloading on change for the life of the proxy, with one warning
// in its log; now it is tried again, wait after wait (doubling up to a
// minute, and from the start again after a minute of watching), and each
// new start reloads first, for what changed while nothing watched. A
// reload that fails keeps the set in force.
func keepWatching(ctx context.Context, g *contractguard.Guard, log *slog.Logger, first time.Duration) {
	wait := first
	for {
		started := time.Now()
		err := g.Watch(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			wait = first // it watched for a while: a new failure, not the same one again
		}
		log.Warn("contractguard serve: not watching the contracts; trying again", slog.String("error", err.Error()), slog.String("in", wait.String()))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
		_ = g.Reload() // a failure is logged, and the old set stays
	}
}

// coalesce is what sig and the signals queued behind it ask for: a
// SIGHUP storm (a deploy that signals once per file, or SIGHUPs queued
// while the contracts loaded at start) is one reload, and a signal to
// stop queued behind SIGHUPs stops at once, without reloading first.
func coalesce(sig os.Signal, sigs <-chan os.Signal) os.Signal {
	for sig == syscall.SIGHUP {
		select {
		case sig = <-sigs:
		default:
			return sig
		}
	}
	return sig
}

// shutdown stops accepting, lets in-flight requests finish within
// shutdown-timeout, then closes what is left.
func (p *proxy) shutdown(servers []*http.Server) error {
	p.stopping.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), p.s.ShutdownTimeout)
	defer cancel()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(ctx); err != nil {
				srv.Close()
				mu.Lock()
				errs = append(errs, fmt.Errorf("shutdown: %w (requests still running were cut)", err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) == 0 {
		// Shutdown is done with every connection but the hijacked ones:
		// websockets get the rest of the timeout, as requests do, and
		// are cut, with the process, after it.
		if err := p.tunnelsClosed(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	p.transport.CloseIdleConnections()
	if len(errs) == 0 {
		p.log.Info("contractguard serve: stopped")
	}
	return errors.Join(errs...)
}

// tunnelsClosed waits until no handler of the main listener runs, or ctx
// is done: once Shutdown has returned, those are the websockets' (a
// handler holds its tunnel until either side closes it).
func (p *proxy) tunnelsClosed(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n := p.active.Load()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shutdown: %w (%d websockets still open were cut)", ctx.Err(), n)
		case <-tick.C:
		}
	}
}

// copyBuffers lends the reverse proxy its buffers for copying responses,
// from one request to the next (httputil.BufferPool).
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (copyBuffers) Get() []byte  { return *copyBufferPool.Get().(*[]byte) }
func (copyBuffers) Put(b []byte) { copyBufferPool.Put(&b) }
