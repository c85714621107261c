package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"debug/elf"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/learn"
	"github.com/contractguard/contractguard/internal/licence"
)

// TestStaticBinary: the command builds with CGO off into one binary that
// needs no dynamic loader (what the distroless/static image runs).
func TestStaticBinary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "contractguard")
	b, err := build(out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	f, err := elf.Open(out)
	if err != nil {
		t.Skipf("not an ELF system: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "the binary asks for a dynamic loader")
	}
	libs, _ := f.ImportedLibraries()
	assert.Empty(t, libs)
}

func TestNormalizePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/api/users", "/api/users"},
		{"/api/users/", "/api/users/"},
		{"//api//users", "/api/users"},
		{"/api/users//", "/api/users/"},
		{"/api/./users", "/api/users"},
		{"/api/x/../users", "/api/users"},
		{"/api/x/%2e%2E/users", "/api/users"},
		{"/api/x/.%2e/users", "/api/users"},
		{"/api/users/..", "/api"},
		{"/api/users/../", "/api/"},
		{"/api/users/%2e", "/api/users"},
		{"/../../etc", "/etc"},
		{"/..", "/"},
		{"/api/a%2Fb/%2e%2e", "/api"},
		{"/api/a%2Fb", "/api/a%2Fb"},           // an encoded slash stays inside its segment
		{"/api/..;x/users", "/api/..;x/users"}, // ;: the guard reads it both ways
		{"/api/.hidden/x", "/api/.hidden/x"},
		{"/api/users%3F/..", "/api"},
		{"*", "*"},
	} {
		u := &url.URL{}
		if tc.in == "*" {
			u.Path = "*"
		} else {
			var err error
			u, err = url.ParseRequestURI(tc.in)
			require.NoError(t, err)
		}
		normalizePath(u)
		assert.Equal(t, tc.want, u.EscapedPath(), tc.in)
	}
}

func TestValidUser(t *testing.T) {
	for v, want := range map[string]bool{
		``:                          true,
		`ada`:                       true,
		`42`:                        true,
		`{"id":"ada","limit":100}`:  true,
		` {"roles":["a","b"]} `:     true,
		`{"id":`:                    false,
		`{"id":"ada"} trailing`:     false,
		`["ada"]`:                   false,
		`"ada"`:                     false,
		`{"a":{"b":{"c":[1,2,3]}}}`: true,
	} {
		assert.Equal(t, want, validUser(v), v)
	}
}

// TestLoadSettings: defaults, then the file's contractguard.serve.…, then
// the environment, then the flags.
func TestLoadSettings(t *testing.T) {
	clearServeEnv(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "contractguard.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
contractguard:
  contracts-dir: contracts
  max-depth: 9
  serve:
    upstream: http://127.0.0.1:3000
    listen: ":7000"
    read-timeout: 5s
    upstream-timeout: 2s
    user-header: X-User
`), 0o644))
	var out, errb bytes.Buffer

	s, opts, code, ok := loadSettings([]string{"--config", cfg}, &out, &errb)
	require.True(t, ok, "%d %s", code, errb.String())
	assert.Equal(t, "http://127.0.0.1:3000", s.Upstream.String())
	assert.Equal(t, ":7000", s.Listen)
	assert.Equal(t, "127.0.0.1:9090", s.AdminListen, "default: loopback only")
	assert.Equal(t, 5*time.Second, s.ReadTimeout)
	assert.Equal(t, 2*time.Second, s.UpstreamTimeout)
	assert.Equal(t, 10*time.Second, s.ReadHeaderTimeout)
	assert.Equal(t, int64(65536), s.MaxHeaderBytes)
	assert.Equal(t, "X-User", s.UserHeader)
	assert.True(t, s.Watch)
	assert.True(t, s.NormalizePath)
	assert.False(t, s.MethodOverride)
	assert.Equal(t, slog.LevelInfo, s.LogLevel)
	assert.Equal(t, filepath.Join(dir, "contracts"), opts.ContractsDir)
	assert.Equal(t, 9, opts.MaxDepth)

	// The environment wins over the file, a flag over both.
	t.Setenv("CONTRACTGUARD_SERVE_LISTEN", ":7001")
	t.Setenv("CONTRACTGUARD_SERVE_READ_TIMEOUT", "6s")
	t.Setenv("CONTRACTGUARD_SERVE_WATCH", "false")
	s, opts, _, ok = loadSettings([]string{"--config", cfg, "--read-timeout", "7s", "--contracts", "elsewhere", "--method-override", "--log-level", "debug"}, &out, &errb)
	require.True(t, ok, errb.String())
	assert.Equal(t, ":7001", s.Listen)
	assert.Equal(t, 7*time.Second, s.ReadTimeout)
	assert.False(t, s.Watch)
	assert.True(t, s.MethodOverride)
	assert.Equal(t, slog.LevelDebug, s.LogLevel)
	assert.Equal(t, "elsewhere", opts.ContractsDir)

	// Without a file: the environment alone.
	clearServeEnv(t)
	t.Setenv("CONTRACTGUARD_SERVE_UPSTREAM", "http://127.0.0.1:4000/base")
	t.Setenv("CONTRACTGUARD_CONTRACTS_DIR", "c")
	s, opts, _, ok = loadSettings(nil, &out, &errb)
	require.True(t, ok, errb.String())
	assert.Equal(t, "/base", s.Upstream.Path)
	assert.Equal(t, "c", opts.ContractsDir)
}

// TestLoadSettings_FlatProperties: serve.listen: written flat, which
// LoadConfig checks and takes, is read by serve as serve: {listen:} is;
// it was skipped, and the proxy listened on :8080 with the admin
// listener on though the file said off.
func TestLoadSettings_FlatProperties(t *testing.T) {
	clearServeEnv(t)
	cfg := filepath.Join(t.TempDir(), "contractguard.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
contractguard:
  serve.upstream: http://127.0.0.1:3000
  serve.listen: ":7000"
  serve.admin-listen: "off"
`), 0o644))
	var out, errb bytes.Buffer
	s, _, code, ok := loadSettings([]string{"--config", cfg}, &out, &errb)
	require.True(t, ok, "%d %s", code, errb.String())
	assert.Equal(t, "http://127.0.0.1:3000", s.Upstream.String())
	assert.Equal(t, ":7000", s.Listen)
	assert.Equal(t, "off", s.AdminListen)
}

func TestLoadSettings_Errors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "contractguard.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("contractguard:\n  serve:\n    upstream: http://x\n    lissen: :1\n"), 0o644))
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{args: nil, want: "contractguard.serve.upstream: the service to guard is required"},
		{args: []string{"--upstream", "127.0.0.1:3000"}, want: `--upstream: contractguard.serve.upstream: want an absolute http:// or https:// URL, not "127.0.0.1:3000"`},
		{args: []string{"--upstream", "http://x", "--read-timeout", "5"}, want: `--read-timeout: contractguard.serve.read-timeout: want a duration`},
		{args: []string{"--upstream", "http://x", "--listen", "off"}, want: "contractguard.serve.listen: the proxy needs an address"},
		{args: []string{"--upstream", "http://x", "--log-level", "loud"}, want: `contractguard.serve.log-level: want debug, info, warn or error, not "loud"`},
		{args: []string{"--upstream", "http://x", "--user-header", "X User"}, want: `contractguard.serve.user-header: "X User" is not a header name`},
		{args: []string{"--upstream", "http://x", "--user-header", "connection"}, want: `contractguard.serve.user-header: connection is not forwarded to the service, so it cannot carry the user`},
		{args: []string{"--upstream", "http://x", "--user-header", "Upgrade"}, want: `contractguard.serve.user-header: Upgrade is not forwarded to the service`},
		{args: []string{"--upstream", "http://x", "--user-header", "x-forwarded-host"}, want: `contractguard.serve.user-header: x-forwarded-host is written by the proxy`},
		{args: []string{"--upstream", "http://x", "--user-header", "Host"}, want: `contractguard.serve.user-header: Host is the request's host`},
		{args: []string{"--upstream", "http://x", "--user-header", "X-HTTP-Method-Override"}, want: `contractguard.serve.user-header: X-HTTP-Method-Override is a method override`},
		{args: []string{"--config", cfg}, want: "contractguard.yaml:4: contractguard.serve.lissen: unknown property"},
		{env: map[string]string{"CONTRACTGUARD_SERVE_IDLE_TIMEOUT": "long"}, args: []string{"--upstream", "http://x"}, want: `environment CONTRACTGUARD_SERVE_IDLE_TIMEOUT: contractguard.serve.idle-timeout: want a duration`},
		{args: []string{"--upstream", "http://x", "extra"}, want: `unexpected argument "extra"`},
		{args: []string{"--upstream", "http://x", "--read-header-timeout", "0"}, want: "contractguard.serve.read-header-timeout: must be more than 0 (0 would mean no limit on a client sending its headers slowly)"},
		{args: []string{"--upstream", "http://x", "--idle-timeout", "0s"}, want: "contractguard.serve.idle-timeout: must be more than 0"},
		{env: map[string]string{"CONTRACTGUARD_SERVE_SHUTDOWN_TIMEOUT": "0"}, args: []string{"--upstream", "http://x"}, want: "contractguard.serve.shutdown-timeout: must be more than 0"},
		{args: []string{"--upstream", "http://x", "--max-header-bytes", "0"}, want: "contractguard.serve.max-header-bytes: must be more than 0"},
		{args: []string{"--upstream", "http://x", "--dial-timeout", "0"}, want: "contractguard.serve.dial-timeout: must be more than 0"},
		// net/http adds 4096 to the limit: the sum wrapped, and every request was refused 431.
		{args: []string{"--upstream", "http://x", "--max-header-bytes", "9223372036854775807"}, want: "contractguard.serve.max-header-bytes: must be at most 9223372036854771711, not 9223372036854775807"},
		// An empty address flag is refused, as an empty property or variable is: it
		// once left the setting with no value at all, and settingsOf panicked.
		{args: []string{"--upstream", "http://x", "--listen="}, want: `--listen: contractguard.serve.listen: want host:port`},
		{args: []string{"--upstream", "http://x", "--admin-listen", ""}, want: `--admin-listen: contractguard.serve.admin-listen: want host:port`},
		{env: map[string]string{"CONTRACTGUARD_SERVE_UPSTREAM": "http://x"}, args: []string{"--upstream="}, want: `--upstream: contractguard.serve.upstream: want an absolute http:// or https:// URL, not ""`},
	} {
		clearServeEnv(t)
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var out, errb bytes.Buffer
		_, _, code, ok := loadSettings(tc.args, &out, &errb)
		assert.False(t, ok, "%v", tc.args)
		assert.Equal(t, 2, code)
		assert.Contains(t, errb.String(), tc.want, "%v", tc.args)
	}
}

// TestLoadSettings_ErrorsNameTheLine: a setting each property's kind
// allows but serve refuses (listen: off, a 0 timeout, a user header the
// proxy removes) names where it was set, file:line, the variable or the
// flag, as every other configuration error does; it named only the
// property, and the file's line had to be searched for.
func TestLoadSettings_ErrorsNameTheLine(t *testing.T) {
	clearServeEnv(t)
	cfg := filepath.Join(t.TempDir(), "contractguard.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`contractguard:
  serve:
    upstream: http://127.0.0.1:3000
    listen: "off"
    idle-timeout: 0s
    log-level: loud
    user-header: Connection
    max-header-bytes: 9223372036854775807
`), 0o644))
	var out, errb bytes.Buffer
	_, _, code, ok := loadSettings([]string{"--config", cfg}, &out, &errb)
	assert.False(t, ok)
	assert.Equal(t, 2, code)
	for _, want := range []string{
		cfg + ":4: contractguard.serve.listen: the proxy needs an address",
		cfg + ":5: contractguard.serve.idle-timeout: must be more than 0",
		cfg + ":6: contractguard.serve.log-level: want debug, info, warn or error, not \"loud\"",
		cfg + ":7: contractguard.serve.user-header: Connection is not forwarded to the service",
		cfg + ":8: contractguard.serve.max-header-bytes: must be at most",
	} {
		assert.Contains(t, errb.String(), "contractguard serve: "+want)
	}

	errb.Reset()
	t.Setenv("CONTRACTGUARD_SERVE_SHUTDOWN_TIMEOUT", "0")
	_, _, _, ok = loadSettings([]string{"--config", cfg, "--listen", "off", "--idle-timeout", "1s", "--log-level", "info", "--user-header", "", "--max-header-bytes", "1"}, &out, &errb)
	assert.False(t, ok)
	assert.Contains(t, errb.String(), "contractguard serve: --listen: contractguard.serve.listen: the proxy needs an address")
	assert.Contains(t, errb.String(), "contractguard serve: environment CONTRACTGUARD_SERVE_SHUTDOWN_TIMEOUT: contractguard.serve.shutdown-timeout: must be more than 0")
}

// TestServe_StartErrors: a guard that does not start for want of a
// licence key was logged as "the contracts do not load", sending its
// operator to contracts that load; a broken contract still is.
func TestServe_StartErrors(t *testing.T) {
	clearServeEnv(t)
	good := writeFiles(t, map[string]string{"c.yaml": "endpoint: /users\nmethod: POST\nschema: {type: object}\n"})
	bad := writeFiles(t, map[string]string{"c.yaml": "endpoint: /users\nmethod: POST\nschema: {type: objec}\n"})
	args := func(dir string) []string {
		return []string{"--contracts", dir, "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0", "--admin-listen", "off"}
	}
	t.Setenv("CONTRACTGUARD_LEARNING_MODE", "true")
	var out, errb bytes.Buffer
	assert.Equal(t, 1, serve(args(good), &out, &errb))
	assert.Contains(t, errb.String(), `"msg":"contractguard serve: the guard does not start","error":"contractguard: learning-mode is a paid feature`)
	assert.NotContains(t, errb.String(), "the contracts do not load")

	os.Unsetenv("CONTRACTGUARD_LEARNING_MODE")
	errb.Reset()
	assert.Equal(t, 1, serve(args(bad), &out, &errb))
	assert.Contains(t, errb.String(), `"msg":"contractguard serve: the contracts do not load","error":"`+filepath.Join(bad, "c.yaml")+`:3: POST /users: schema/type`)
}

func clearServeEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CONTRACTGUARD_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// testProxy is a proxy in this process, in front of upstream, with the
// hosts' contracts, on a real listener.
func testProxy(t testing.TB, upstream string, edit func(*settings, *contractguard.Options)) (*proxy, *httptest.Server) {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	s := settings{
		Upstream: u, Listen: "127.0.0.1:0", AdminListen: "off",
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 65536, DialTimeout: time.Second, UpstreamTimeout: 5 * time.Second,
		ShutdownTimeout: 5 * time.Second, NormalizePath: true, PreserveHost: true,
	}
	opts := contractguard.Options{ContractsDir: filepath.Join(hostsDir, "contracts"), Metrics: true}
	if edit != nil {
		edit(&s, &opts)
	}
	p, err := newProxy(s, opts, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	srv := httptest.NewServer(p.handler)
	t.Cleanup(srv.Close)
	return p, srv
}

// countingUpstream counts the requests it gets and answers 200.
func countingUpstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	t.Cleanup(up.Close)
	return up, &n
}

// TestProxy_ClientGoneMidBody: a client that sends half a body and hangs
// up: nothing reaches the upstream, and no goroutine is left behind.
func TestProxy_ClientGoneMidBody(t *testing.T) {
	up, n := countingUpstream(t)
	_, srv := testProxy(t, up.URL, nil)
	// Warm up: the connections and goroutines of a first request stay.
	res, err := http.Post(srv.URL+"/api/users", "application/json", strings.NewReader(`{"email":"ada@example.com"}`))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, int64(1), n.Load())
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	base := runtime.NumGoroutine()

	for range 20 {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		fmt.Fprintf(c, "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"email\":\"ada@")
		time.Sleep(5 * time.Millisecond)
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base, "goroutines left behind")
	assert.Equal(t, int64(1), n.Load(), "half a body reached the upstream")
}

// TestProxy_StreamedBodyCutShort: a body streamed upstream (no contract)
// that stops short of its length. net/http cancels the request's context
// when a read of the body fails, and the proxy, taking that for a client
// gone, wrote nothing; net/http then answered 200 with no body to a
// client still waiting, for a request the upstream never had whole. Past
// read-timeout the client is told (408); one that closed its side
// mid-body gets the connection closed, no response.
func TestProxy_StreamedBodyCutShort(t *testing.T) {
	up, _ := countingUpstream(t)
	_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.ReadTimeout = 300 * time.Millisecond })
	for _, closeWrite := range []bool{false, true} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"a\":")
		if closeWrite {
			require.NoError(t, c.(*net.TCPConn).CloseWrite())
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if closeWrite {
			assert.Error(t, err, "an answer to a request cut short: %v", res)
			c.Close()
			continue
		}
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		c.Close()
		assert.Equal(t, http.StatusRequestTimeout, res.StatusCode, "%s", b)
		assert.JSONEq(t, `{"error":"PROXY_ERROR","code":"REQUEST_TIMEOUT","details":[{"path":"","message":"the request body did not arrive in time"}]}`, string(b))
	}
}

// TestProxy_StalledUpstreamCutAtWriteTimeout: an upstream that sends its
// headers and part of a body, then nothing. The write deadline fails only
// a write, and the proxy waited on the upstream for as long as it
// stalled: a response with a length reached the client not even in part
// (the proxy flushes it at its end), and the client, its connection and
// the upstream's were held until one side gave up. At write-timeout the
// response is cut and the connection closed.
func TestProxy_StalledUpstreamCutAtWriteTimeout(t *testing.T) {
	stop := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/length" {
			w.Header().Set("Content-Length", "100")
		}
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() { close(stop) })
	_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.WriteTimeout = 200 * time.Millisecond })
	for _, path := range []string{"/length", "/chunked"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		b, err := io.ReadAll(c) // to the connection's end
		c.Close()
		assert.NoError(t, err, "%s: the proxy still waits on the upstream; read %q", path, b)
		if path == "/chunked" {
			assert.True(t, strings.HasSuffix(string(b), "\r\n4\r\npart\r\n"), "%s: %q", path, b)
		}
	}
}

// TestProxy_AdminOnly: the metrics are on the admin listener only; on the
// main listener /metrics is the upstream's.
func TestProxy_AdminOnly(t *testing.T) {
	up, n := countingUpstream(t)
	p, srv := testProxy(t, up.URL, nil)
	res, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, "GET /metrics", string(b), "the upstream's /metrics")
	assert.Equal(t, int64(1), n.Load())

	admin := httptest.NewServer(p.admin)
	defer admin.Close()
	res, err = http.Get(admin.URL + "/actuator/contractguard")
	require.NoError(t, err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	assert.Contains(t, string(b), `"contracts_loaded":5`)
	res, err = http.Get(admin.URL + "/readyz")
	require.NoError(t, err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	assert.JSONEq(t, `{"status":"ready","contracts":5,"upstream":"reachable"}`, string(b))

	p.stopping.Store(true)
	res, err = http.Get(admin.URL + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "not ready once stopping")
}

// TestProxy_ReadyzClientGone: a readiness check whose client has gone
// (a request on the main listener's /_contractguard/readyz, closed at
// once) still dials the upstream for the answer it keeps for a second
// (found by review: the dial took the request's context, failed as
// canceled, and every probe got 503 "unreachable" for that second, so a
// client could keep the pod out of service).
func TestProxy_ReadyzClientGone(t *testing.T) {
	up, _ := countingUpstream(t)
	p, _ := testProxy(t, up.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.readyz(httptest.NewRecorder(), httptest.NewRequest("GET", "/_contractguard/readyz", nil).WithContext(ctx))
	rec := httptest.NewRecorder()
	p.readyz(rec, httptest.NewRequest("GET", "/_contractguard/readyz", nil))
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestProxy_Prometheus: the admin listener's /metrics is the Prometheus
// exposition of the guard's metrics (by contract route, outcome and code),
// the Go runtime's and the process's; 404 unless metrics.enabled, like the
// JSON document.
func TestProxy_Prometheus(t *testing.T) {
	up, n := countingUpstream(t)
	p, srv := testProxy(t, up.URL, nil)
	for body, status := range map[string]int{`{"email":"ada@example.com"}`: 200, `{"email":"not-an-email"}`: 400, `{"email":"ada@example.com","name":"root"}`: 422} {
		res, err := http.Post(srv.URL+"/api/users", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, status, res.StatusCode, body)
	}
	res, err := http.Get(srv.URL + "/static/app.js")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, int64(2), n.Load(), "the passed request and the unmatched one reached the upstream")

	admin := httptest.NewServer(p.admin)
	defer admin.Close()
	res, err = http.Get(admin.URL + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, res.Header.Get("Content-Type"), "text/plain")
	for _, line := range []string{
		`contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/users"} 1`,
		`contractguard_requests_total{code="SCHEMA_INVALID",method="POST",outcome="rejected",route="/api/users"} 1`,
		`contractguard_requests_total{code="INVARIANT_VIOLATED",method="POST",outcome="rejected",route="/api/users"} 1`,
		`contractguard_requests_total{code="",method="GET",outcome="unmatched",route=""} 1`,
		`contractguard_check_duration_seconds_count{method="POST",route="/api/users"} 3`,
		`contractguard_contracts_loaded 5`,
		`contractguard_reloads_total{result="failed"} 0`,
	} {
		assert.Contains(t, string(b), line+"\n")
	}
	assert.Contains(t, string(b), "\ngo_goroutines ", "the Go runtime's")
	assert.Contains(t, string(b), "\nprocess_resident_memory_bytes ", "the process's")

	p, _ = testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) { o.Metrics = false })
	admin = httptest.NewServer(p.admin)
	defer admin.Close()
	for _, path := range []string{"/metrics", "/actuator/contractguard"} {
		res, err = http.Get(admin.URL + path)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusNotFound, res.StatusCode, "metrics.enabled: false: "+path)
	}
}

// TestProxy_PathSeenByUpstream: the upstream routes the path the guard
// checked.
func TestProxy_PathSeenByUpstream(t *testing.T) {
	up, _ := countingUpstream(t)
	_, srv := testProxy(t, up.URL+"/base", nil)
	for in, want := range map[string]string{
		"/api//users/./7/../8": "GET /base/api/users/8",
		"/x/%2e%2e/y":          "GET /base/y",
		"/a%2Fb":               "GET /base/a/b", // r.URL.Path of the upstream: decoded
	} {
		res := rawRequest(t, srv.URL, "GET", in, nil, "")
		assert.Equal(t, want, string(res.body), in)
	}
}

// TestProxy_CheckedBodyInOneWrite: a body the guard checked goes to the
// upstream with its headers in one write (the Transport knows it is in
// memory), byte for byte; a body on a path no contract guards is streamed
// as it arrives, headers first.
func TestProxy_CheckedBodyInOneWrite(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(b)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(up.Close)
	p, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) { o.ContractsDir = e2eContracts(t) })
	var writes atomic.Int64
	dial := p.transport.DialContext
	p.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, writes: &writes}, nil
	}
	body := string(orderBody(t))
	for _, tc := range []struct {
		path   string
		writes int64
	}{
		{"/orders", 1},    // guarded: checked, then sent from memory
		{"/unguarded", 2}, // no contract: streamed, the headers flushed first
		{"/orders", 1},    // again, on the kept-alive connection
	} {
		writes.Store(0)
		res := post(t, srv.URL+tc.path, body, nil)
		require.Equal(t, http.StatusCreated, res.status, tc.path)
		assert.Equal(t, body, string(got.Load().([]byte)), tc.path)
		assert.Equal(t, tc.writes, writes.Load(), tc.path)
	}
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestProxy_AcceptEncodingAsSent: the upstream sees the client's
// Accept-Encoding as sent, none added, and its response comes back as it
// was encoded: a client that asked for no encoding is not made to pay for
// the proxy asking for gzip and decoding it on its behalf.
func TestProxy_AcceptEncodingAsSent(t *testing.T) {
	var seen atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Values("Accept-Encoding"))
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "hello")
			zw.Close()
			return
		}
		io.WriteString(w, "hello")
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, nil)
	for _, tc := range []struct {
		accept []string
		coding string
	}{
		{nil, ""},
		{[]string{"gzip"}, "gzip"},
		{[]string{"identity"}, ""},
	} {
		req, err := http.NewRequest("GET", srv.URL+"/anything", nil)
		require.NoError(t, err)
		req.Header["Accept-Encoding"] = tc.accept
		// A transport that adds nothing and decodes nothing, so the
		// test sees what the proxy sent.
		res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, tc.accept, seen.Load(), "Accept-Encoding upstream, client sent %q", tc.accept)
		assert.Equal(t, tc.coding, res.Header.Get("Content-Encoding"), "client sent %q", tc.accept)
		if tc.coding == "" {
			assert.Equal(t, "hello", string(b))
		}
	}
}

// TestProxy_MethodOverrideRemoved: every override header is removed when
// the proxy does not apply it, and refused when it does and there is more
// than one, also when the first is empty: the upstream never routes a
// method the guard did not check.
func TestProxy_MethodOverrideRemoved(t *testing.T) {
	var seen atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var got []string
		for _, name := range overrideHeaders {
			got = append(got, r.Header.Values(name)...)
		}
		seen.Store(got)
	}))
	t.Cleanup(up.Close)
	for _, on := range []bool{false, true} {
		_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.MethodOverride = on })
		for _, headers := range []map[string]string{
			{"X-HTTP-Method-Override": "", "X-HTTP-Method": "PUT"},
			{"X-HTTP-Method-Override": " ", "X-Method-Override": "PUT"},
			{"X-HTTP-Method": "", "X-Method-Override": "PUT"},
		} {
			seen.Store([]string(nil))
			res := rawRequest(t, srv.URL, "POST", "/api/users/7", headers, `{"name":5}`)
			if on {
				assert.Equal(t, http.StatusBadRequest, res.status, "override on, %v", headers)
				assert.Equal(t, codeInvalidOverride, codeOf(res.body), "override on, %v", headers)
				continue
			}
			assert.Equal(t, http.StatusOK, res.status, "%v", headers)
			assert.Empty(t, seen.Load(), "override off: %v reached the upstream", headers)
		}
		// One empty override is none, on or off: the request goes on as
		// the POST the guard checked, without it.
		seen.Store([]string(nil))
		res := rawRequest(t, srv.URL, "POST", "/api/users/7", map[string]string{"X-HTTP-Method-Override": ""}, `{"name":5}`)
		assert.Equal(t, http.StatusOK, res.status, "one empty override, on=%v", on)
		assert.Empty(t, seen.Load(), "one empty override, on=%v, reached the upstream", on)
	}
}

// TestProxy_ExpectContinue: a client that sends Expect: 100-continue gets
// one 100 Continue. On a guarded route the proxy answers it (the guard
// reads the body), and the body goes upstream from memory with no Expect:
// the upstream's own 100 would be a second one, after the body, and the
// Transport would hold the body back waiting for it. On a streamed route
// the upstream answers it: the client's one 100 goes out when the
// Transport, on the upstream's 100, starts sending the body; the
// upstream's own is not passed on as well.
func TestProxy_ExpectContinue(t *testing.T) {
	var expect atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		expect.Store(r.Header.Get("Expect"))
		io.Copy(io.Discard, r.Body) // a Go server sends 100 Continue here
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, nil)
	body := `{"email":"ada@example.com"}`
	// Each path many times: on a streamed route the upstream's 100 and
	// net/http's own raced to the client, and two reached it once in a
	// few dozen runs.
	for i := range 40 {
		path, upstreamExpect := "/api/users", ""
		if i%2 == 1 {
			path, upstreamExpect = "/unguarded", "100-continue"
		}
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", path, len(body))
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		require.NoError(t, err, path)
		require.Equal(t, "HTTP/1.1 100 Continue\r\n", line, path)
		_, err = io.WriteString(c, body)
		require.NoError(t, err)
		rest, err := io.ReadAll(br)
		c.Close()
		require.NoError(t, err)
		assert.NotContains(t, string(rest), "100 Continue", "%s: a second 100 Continue, after the body", path)
		assert.Contains(t, string(rest), "HTTP/1.1 200 OK\r\n", path)
		assert.Equal(t, upstreamExpect, expect.Load(), path)
	}
}

// TestProxy_InformationalHTTP10: an upstream's 1xx (here 103 Early Hints)
// reaches an HTTP/1.1 client, never an HTTP/1.0 one, which has no 1xx
// and would take it for the response (RFC 9110, 15.2): the upstream,
// spoken to in HTTP/1.1, cannot know.
func TestProxy_InformationalHTTP10(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</app.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "final")
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, nil)
	for _, proto := range []string{"HTTP/1.0", "HTTP/1.1"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /page %s\r\nHost: x\r\nConnection: close\r\n\r\n", proto)
		b, err := io.ReadAll(c)
		c.Close()
		require.NoError(t, err)
		got := string(b)
		if proto == "HTTP/1.0" {
			assert.True(t, strings.HasPrefix(got, "HTTP/1.0 200 OK\r\n"), "%s: %q", proto, got)
		} else {
			assert.True(t, strings.HasPrefix(got, "HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"), "%s: %q", proto, got)
		}
		assert.True(t, strings.HasSuffix(got, "\r\n\r\nfinal"), "%s: %q", proto, got)
	}
}

// TestProxy_ConnectionNamedHeaders: a header the client names in
// Connection is for its hop only, and does not reach the upstream; so the
// guard does not read it either, and checks the request the upstream gets:
// a required Idempotency-Key the upstream never sees, or a
// Content-Encoding it does not decode, does not pass.
func TestProxy_ConnectionNamedHeaders(t *testing.T) {
	var seen atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		seen.Store(r.Header.Clone())
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "payments.yaml"), []byte(`
endpoint: /payments
method: POST
schema:
  type: object
  required: [amount]
  properties:
    amount: {type: number}
invariants:
  - expr: "'idempotency-key' in request.headers"
    message: an Idempotency-Key is required
`), 0o644))
	_, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) { o.ContractsDir = dir })
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, `{"amount":5}`)
	zw.Close()
	for _, tc := range []struct {
		headers map[string]string
		body    string
		status  int
	}{
		{map[string]string{"Idempotency-Key": "k1"}, `{"amount":5}`, http.StatusOK},
		{map[string]string{"Idempotency-Key": "k1", "Connection": "close, Idempotency-Key"}, `{"amount":5}`, http.StatusUnprocessableEntity},
		{map[string]string{"Idempotency-Key": "k1", "Content-Encoding": "gzip"}, gz.String(), http.StatusOK},
		{map[string]string{"Idempotency-Key": "k1", "Content-Encoding": "gzip", "Connection": "Content-Encoding"}, gz.String(), http.StatusBadRequest},
	} {
		seen.Store(http.Header(nil))
		res := rawRequest(t, srv.URL, "POST", "/payments", tc.headers, tc.body)
		assert.Equal(t, tc.status, res.status, "%v: %s", tc.headers, res.body)
		if res.status == http.StatusOK {
			h := seen.Load().(http.Header)
			for name, v := range tc.headers {
				if name != "Connection" {
					assert.Equal(t, v, h.Get(name), "%v: %s upstream", tc.headers, name)
				}
			}
		}
	}
	// TE: trailers, which a client names in Connection (RFC 9110 10.1.4),
	// still tells the upstream that trailers are welcome.
	res := rawRequest(t, srv.URL, "GET", "/anything", map[string]string{"TE": "trailers", "Connection": "TE"}, "")
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, "trailers", seen.Load().(http.Header).Get("Te"))
}

// TestProxy_MethodOverrideTargets: with --method-override, an override to
// a method that changes what the connection carries (HEAD: a length and no
// body; CONNECT: a tunnel; TRACE: the request echoed) is refused.
func TestProxy_MethodOverrideTargets(t *testing.T) {
	var method atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		method.Store(r.Method)
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.MethodOverride = true })
	for _, m := range []string{"HEAD", "CONNECT", "TRACE", "head"} {
		res := rawRequest(t, srv.URL, "POST", "/unguarded", map[string]string{"X-HTTP-Method-Override": m}, `{}`)
		assert.Equal(t, http.StatusBadRequest, res.status, m)
		assert.Equal(t, codeInvalidOverride, codeOf(res.body), m)
	}
	for _, m := range []string{"PUT", "PATCH", "DELETE", "GET"} {
		method.Store("")
		res := rawRequest(t, srv.URL, "POST", "/unguarded", map[string]string{"X-HTTP-Method-Override": m}, `{}`)
		assert.Equal(t, http.StatusOK, res.status, m)
		assert.Equal(t, m, method.Load(), m)
	}
}

// TestProxy_UpgradeOnlyWebSocket: an Upgrade to anything but websocket
// (h2c above all, whose tunnel would carry HTTP/2 requests past the guard)
// reaches the upstream as an ordinary request, without Upgrade or
// HTTP2-Settings; a websocket upgrade keeps its headers.
func TestProxy_UpgradeOnlyWebSocket(t *testing.T) {
	var upgrade, settings atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upgrade.Store(r.Header.Get("Upgrade"))
		settings.Store(r.Header.Get("Http2-Settings"))
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, nil)
	for _, tc := range []struct{ upgrade, upstream string }{
		{"h2c", ""},
		{"H2C", ""},
		{"websocket, h2c", ""},
		{"tls/1.2", ""},
		// Not a token to ReverseProxy, which answered 502 for it, the
		// upstream blamed: removed, as any Upgrade but websocket is.
		{"websocket\u00a0", ""},
		{"websocket", "websocket"},
	} {
		upgrade.Store("-")
		req, err := http.NewRequest("GET", srv.URL+"/unguarded", nil)
		require.NoError(t, err)
		req.Header.Set("Connection", "Upgrade") // not naming HTTP2-Settings, which would drop it as a Connection option anyway
		req.Header.Set("Upgrade", tc.upgrade)
		req.Header.Set("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")
		res, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "Upgrade: %s", tc.upgrade)
		assert.Equal(t, tc.upstream, upgrade.Load(), "Upgrade: %s", tc.upgrade)
		if tc.upstream == "" {
			assert.Empty(t, settings.Load(), "Upgrade: %s", tc.upgrade)
		}
	}
}

// TestProxy_CheckedBodyCanBeResent: a body the guard checked can be sent
// again, byte for byte, on a fresh connection, when the kept-alive one the
// Transport chose turns out to be closed by the upstream: the upstream
// here reads the second request of its first connection and closes it
// without an answer, as a server closing an idle connection does when a
// request crosses its close. (The Transport resends a request that says
// it is idempotent; without a way to read the body again, it cannot: 502.)
func TestProxy_CheckedBodyCanBeResent(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	upstream := rawUpstream(t, func(c net.Conn, conn int) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(req.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			if conn == 0 && n == 1 {
				return // closed, the request read and not answered
			}
			io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
		}
	})
	_, srv := testProxy(t, upstream, func(_ *settings, o *contractguard.Options) { o.ContractsDir = e2eContracts(t) })
	body := string(orderBody(t))
	for range 2 {
		res := post(t, srv.URL+"/orders", body, map[string]string{"Idempotency-Key": "k-1"})
		assert.Equal(t, http.StatusCreated, res.status, string(res.body))
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{body, body, body}, bodies, "the second request, then sent again")
}

// TestProxy_GuardSeesForwardedAsUpstream: the guard reads X-Forwarded-For,
// -Host and -Proto as the upstream gets them, the proxy's, not the values
// a client sent in their place; and no Forwarded, which is not sent.
func TestProxy_GuardSeesForwardedAsUpstream(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store([]string{r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Forwarded-Proto"), r.Header.Get("Forwarded")})
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fwd.yaml"), []byte(`endpoint: /fwd
method: GET
invariants:
  - expr: "request.headers['x-forwarded-proto'] == 'http'"
    message: proto
  - expr: "request.headers['x-forwarded-for'] == '203.0.113.9, 127.0.0.1'"
    message: for
  - expr: "!('forwarded' in request.headers)"
    message: forwarded
  - expr: "request.headers['x-forwarded-host'] != 'evil.example'"
    message: host
`), 0o644))
	_, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) { o.ContractsDir = dir })
	req, err := http.NewRequest("GET", srv.URL+"/fwd", nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("Forwarded", "for=198.51.100.1;proto=https")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(b))
	assert.Equal(t, []string{"203.0.113.9, 127.0.0.1", strings.TrimPrefix(srv.URL, "http://"), "http", ""}, got.Load())
}

// TestProxy_AdminServesWhatWasLearned: with learning on, the admin
// listener serves the guard's export where docs/learning-mode.md mounts
// LearnedHandler, for contractguard learn merge to read; serve learned
// from traffic no contract matched but had no way to hand it over. With
// learning off, 404.
func TestProxy_AdminServesWhatWasLearned(t *testing.T) {
	key := trustedKey(t, "test-serve-learned", licence.FeatureLearningMode)
	up, _ := countingUpstream(t)
	p, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) {
		o.LearningMode, o.LearnSampleRate, o.LicenseKey = true, 1, key
	})
	admin := httptest.NewServer(p.admin)
	defer admin.Close()
	for range 3 {
		res := rawRequest(t, srv.URL, "POST", "/api/widgets", nil, `{"name":"w","size":3}`)
		require.Equal(t, http.StatusOK, res.status)
	}
	res, err := http.Get(admin.URL + "/debug/contractguard/learned")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(b))
	var o learn.Observations
	require.NoError(t, json.Unmarshal(b, &o), string(b))
	assert.Contains(t, string(b), `"template":"/api/widgets"`)
	assert.Contains(t, string(b), `"size":{`)

	p, _ = testProxy(t, up.URL, nil)
	off := httptest.NewServer(p.admin)
	defer off.Close()
	res, err = http.Get(off.URL + "/debug/contractguard/learned")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "learning off")
}

// TestProxy_LearningOverLimitStreams: in learning mode a body over the
// guard's limit is given back as a stream (the bytes read, then the
// rest), and the proxy streams it on, never reads it whole first: the
// upstream reads the start of the body while the client still holds the
// rest back, until it has seen that start.
func TestProxy_LearningOverLimitStreams(t *testing.T) {
	key := trustedKey(t, "test-serve", licence.FeatureLearningMode)

	head, tail := bytes.Repeat([]byte("a"), 1024), bytes.Repeat([]byte("b"), 3072)
	var sawHead chan struct{}
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, len(head))
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return
		}
		close(sawHead)
		rest, _ := io.ReadAll(r.Body)
		got.Store(append(b, rest...))
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) {
		o.ContractsDir = e2eContracts(t)
		o.LearningMode, o.LicenseKey, o.MaxBodyBytes = true, key, 64
	})
	// Both cases are the proxy's. With a length over the limit the guard
	// reads nothing and the body passes as it came: it fails if the proxy
	// reads a body into memory that the guard did not replace. Chunked,
	// the guard reads up to its limit and gives the body back as a stream
	// without a length: it fails if the proxy reads into memory a body
	// without one.
	for _, length := range []int64{int64(len(head) + len(tail)), -1} {
		sawHead = make(chan struct{})
		got.Store([]byte(nil))
		pr, pw := io.Pipe()
		go func() {
			pw.Write(head)
			select {
			case <-sawHead:
				pw.Write(tail)
				pw.Close()
			case <-time.After(5 * time.Second):
				pw.CloseWithError(errors.New("the upstream never saw the start of the body: the proxy held it back"))
			}
		}()
		req, err := http.NewRequest("POST", srv.URL+"/orders", pr)
		require.NoError(t, err)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "length %d", length)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusCreated, res.StatusCode, "length %d", length)
		assert.Equal(t, append(head, tail...), got.Load(), "length %d", length)
	}
}

// TestProxy_LearningOverLimitStreamsWithSinkProtection: with
// sink-protection on as well (a configuration may turn it on for the
// proxy too), the guard reads the part its limit allows of a body whose
// Content-Length is over it, for the sinks' input, and gives it back as a
// stream that keeps the client's length: the proxy must stream it on, not
// take that length for a body the guard read whole and read the body
// into a buffer of that size (the client's number) first.
func TestProxy_LearningOverLimitStreamsWithSinkProtection(t *testing.T) {
	key := trustedKey(t, "test-serve", licence.FeatureLearningMode, licence.FeatureSinkProtection)

	head, tail := bytes.Repeat([]byte("a"), 1024), bytes.Repeat([]byte("b"), 3072)
	sawHead := make(chan struct{})
	var got atomic.Value
	got.Store([]byte(nil))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, len(head))
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return
		}
		close(sawHead)
		rest, _ := io.ReadAll(r.Body)
		got.Store(append(b, rest...))
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(up.Close)
	_, srv := testProxy(t, up.URL, func(_ *settings, o *contractguard.Options) {
		o.ContractsDir = e2eContracts(t)
		o.LearningMode, o.SinkProtection, o.LicenseKey, o.MaxBodyBytes = true, true, key, 64
	})
	pr, pw := io.Pipe()
	go func() {
		pw.Write(head)
		select {
		case <-sawHead:
			pw.Write(tail)
			pw.Close()
		case <-time.After(5 * time.Second):
			pw.CloseWithError(errors.New("the upstream never saw the start of the body: the proxy held it back"))
		}
	}()
	req, err := http.NewRequest("POST", srv.URL+"/orders", pr)
	require.NoError(t, err)
	req.ContentLength = int64(len(head) + len(tail))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode)
	assert.Equal(t, append(head, tail...), got.Load())
}

// TestProxy_OpaqueTargetRefused: a request target Go's server parses as a
// scheme and an opaque rest (POST http:x://h/api/users, no "//" after the
// scheme) has no path for the guard, which matched no contract, while the
// Transport writes the opaque rest as the upstream's request target,
// x://h/api/users, an absolute URL that Node, the JDK and Go route as
// /api/users: the body went upstream unchecked. It is refused; an
// absolute-form target with its authority is checked as its path.
// TestProxy_LeadingDoubleSlashAsSent: with normalize-path off the path
// goes upstream as sent, and the JDK's java.net.URI reads //h/api/users
// as the host h and the path /api/users, which the guard read as
// /h/api/users and matched no contract for: the refused body reached the
// JDK's POST /api/users (helper-35). Such a path is refused; normalized,
// its slashes collapse before the guard and the upstream see it.
func TestProxy_LeadingDoubleSlashAsSent(t *testing.T) {
	up, n := countingUpstream(t)
	_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.NormalizePath = false })
	for _, target := range []string{"//h/api/users", "//api/api/users", "//h:1/api/users", "///api/users"} {
		res := rawRequest(t, srv.URL, "POST", target, nil, badUser)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", target, res.body)
		assert.Equal(t, "INVALID_REQUEST_TARGET", codeOf(res.body), target)
	}
	assert.Zero(t, n.Load(), "a refused body reached the upstream")
	res := rawRequest(t, srv.URL, "POST", "/api//users", nil, badUser)
	assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body), "// inside the path: checked as the routers read it")
}

func TestProxy_OpaqueTargetRefused(t *testing.T) {
	up, n := countingUpstream(t)
	_, srv := testProxy(t, up.URL, nil)
	for _, target := range []string{"http:x://h/api/users", "http:http://h/api/users", "x:h/api/users", "http:%2Fapi%2Fusers"} {
		res := rawRequest(t, srv.URL, "POST", target, nil, badUser)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", target, res.body)
		assert.Equal(t, "INVALID_REQUEST_TARGET", codeOf(res.body), target)
	}
	res := rawRequest(t, srv.URL, "POST", "http://h/api/users", nil, badUser)
	assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body), "absolute-form: checked as its path")
	assert.Zero(t, n.Load(), "a refused body reached the upstream")
}

// TestProxy_GuardReadsThePathAsForwarded: a path whose escapes Go cannot
// keep (a raw '{' beside them) is forwarded encoded afresh from its
// decoded form, where %3B is a ';' again: /api/users%3Bx{ reaches the
// upstream as /api/users;x%7B, which Fastify with useSemicolonDelimiter
// (and Spring, stripping matrix parameters) routes to /api/users. The
// guard reads the path the upstream gets (found by review: it read the
// client's, with no ';', and passed it unchecked).
func TestProxy_GuardReadsThePathAsForwarded(t *testing.T) {
	for _, normalize := range []bool{true, false} {
		var got atomic.Value
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Store(r.RequestURI)
			io.Copy(io.Discard, r.Body)
		}))
		t.Cleanup(up.Close)
		_, srv := testProxy(t, up.URL, func(s *settings, o *contractguard.Options) { s.NormalizePath = normalize })
		for _, target := range []string{"/api/users%3Bx{", "/API/USERS%3b{", "/api/users%3B|"} {
			res := rawRequest(t, srv.URL, "POST", target, nil, badUser)
			assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body), "%s (normalize %v): %s", target, normalize, res.body)
		}
		res := rawRequest(t, srv.URL, "GET", "/api/users/7%3Bdebug=1{", nil, "")
		assert.Equal(t, "INVARIANT_VIOLATED", codeOf(res.body), "normalize %v: %s", normalize, res.body)
		assert.Nil(t, got.Load(), "a refused request reached the upstream")
		// The control: what the upstream gets.
		res = rawRequest(t, srv.URL, "GET", "/api/users/7%3Bv=1{", nil, "")
		assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
		assert.Equal(t, "/api/users/7;v=1%7B", got.Load())
	}
}

// TestProxy_BasePathNotLeft: with a base path on the upstream, a path
// that climbs above / in any reading is refused. Forwarded, it climbs out
// of the base path on an upstream that resolves dot segments after
// cutting ;parameters (Tomcat, so Spring Boot: /v1/..;/v1/api/users is
// /v1/api/users), or that resolves plain ones (--normalize-path=false),
// where the guard had read /v1/api/users, a path of no contract (the
// contracts are the client's paths, /api/users): the invalid body reached
// the guarded handler. The upstream here reads paths as Tomcat does.
func TestProxy_BasePathNotLeft(t *testing.T) {
	var reached atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		segs := strings.Split(r.URL.EscapedPath(), "/")
		for i, s := range segs {
			s, _, _ = strings.Cut(s, ";") // Tomcat cuts path parameters, then decodes, then resolves
			segs[i], _ = url.PathUnescape(s)
		}
		if path.Clean(strings.Join(segs, "/")) == "/v1/api/users" {
			reached.Add(1)
		}
	}))
	t.Cleanup(up.Close)
	for _, normalize := range []bool{true, false} {
		_, srv := testProxy(t, up.URL+"/v1", func(s *settings, _ *contractguard.Options) { s.NormalizePath = normalize })
		targets := []string{"/..;/v1/api/users", "/.;/..;/v1/api/users", "/x/..;/..;/v1/api/users", "/%2e%2E;x/v1/api/users", "/..;/..;/v1/api/users"}
		if !normalize {
			targets = append(targets, "/../v1/api/users", "/x/../../v1/api/users", "/%2e%2e/v1/api/users")
		}
		for _, target := range targets {
			res := rawRequest(t, srv.URL, "POST", target, nil, `{"email":1}`)
			assert.Equal(t, http.StatusBadRequest, res.status, "normalize %v, %s: %s", normalize, target, res.body)
			assert.Equal(t, codeInvalidTarget, codeOf(res.body), "normalize %v, %s", normalize, target)
		}
		assert.Zero(t, reached.Load(), "normalize %v: the guarded handler got an unchecked body", normalize)
		// A path that stays under / is forwarded: checked as the client's
		// /api/users, or passed.
		res := rawRequest(t, srv.URL, "POST", "/x/..;/api/users", nil, `{"email":1}`)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		assert.Equal(t, contractguard.CodeSchemaInvalid, codeOf(res.body))
		res = rawRequest(t, srv.URL, "POST", "/x/..;y/z", nil, `{}`)
		assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
	}
	// Without a base path, / is the upstream's own root: nothing to leave.
	_, srv := testProxy(t, up.URL, nil)
	res := rawRequest(t, srv.URL, "POST", "/..;/unguarded", nil, `{}`)
	assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
}

// informationalRecorder notes the statuses written through it.
type informationalRecorder struct {
	http.ResponseWriter
	codes []int
}

func (w *informationalRecorder) WriteHeader(code int) {
	w.codes = append(w.codes, code)
	w.ResponseWriter.WriteHeader(code)
}

// TestProxy_ExpectContinueAsNetHTTPReadsIt: net/http answers an Expect
// that has 100-continue among its tokens, in any letter case (its
// hasToken; any other expectation is 417 before a handler runs), with its
// own 100 Continue when the body is read; the upstream's 100, passed on
// by ReverseProxy, would be a second one. The recorder compared the
// whole value with 100-continue, and passed the upstream's 100 for
// "100-continue, x" or "foo 100-continue".
func TestProxy_ExpectContinueAsNetHTTPReadsIt(t *testing.T) {
	up, _ := countingUpstream(t)
	p, _ := testProxy(t, up.URL, nil)
	h := p.accessLog(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusContinue) // the upstream's, as ReverseProxy writes it
		w.WriteHeader(http.StatusOK)
	}))
	for _, expect := range []string{"100-continue", "100-Continue", "100-continue, x", "x 100-continue", "100-continue,"} {
		w := &informationalRecorder{ResponseWriter: httptest.NewRecorder()}
		r := httptest.NewRequest("POST", "/unguarded", strings.NewReader("{}"))
		r.Header.Set("Expect", expect)
		h.ServeHTTP(w, r)
		assert.Equal(t, []int{http.StatusOK}, w.codes, "Expect: %s", expect)
	}
}

// TestProxy_ConnectionOptionsAsReverseProxyReadsThem: a name in
// Connection is removed before the guard reads the request exactly when
// ReverseProxy removes it on the way upstream. A name followed by a
// Unicode space (U+00A0, U+0085, U+3000: obs-text to net/http) was
// trimmed with strings.TrimSpace, so the guard no longer saw the header,
// while ReverseProxy, which trims ASCII space alone, found no header of
// that name and sent it on: a header a rule refuses (X-Debug here), or the
// trusted user a rule refuses, reached the upstream unchecked.
func TestProxy_ConnectionOptionsAsReverseProxyReadsThem(t *testing.T) {
	var reached atomic.Int64
	var seen atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		reached.Add(1)
		seen.Store(r.Header.Clone())
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "payments.yaml"), []byte(`
endpoint: /payments
method: POST
invariants:
  - expr: "!('x-debug' in request.headers)"
    message: no debugging in production
  - expr: "!has(context.user.id) || context.user.id != 'blocked'"
    message: this user may not pay
`), 0o644))
	_, srv := testProxy(t, up.URL, func(s *settings, o *contractguard.Options) { o.ContractsDir = dir; s.UserHeader = "X-User" })
	for _, space := range []string{"\u00a0", "\u0085", "\u3000", "\u2028"} {
		for _, h := range []map[string]string{
			{"X-Debug": "1", "Connection": "X-Debug" + space},
			{"X-User": "blocked", "Connection": "keep-alive, " + space + "X-User"},
		} {
			reached.Store(0)
			res := rawRequest(t, srv.URL, "POST", "/payments", h, `{}`)
			assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%q: %s", h, res.body)
			assert.Zero(t, reached.Load(), "%q: reached the upstream", h)
		}
	}
	// A name the two read alike goes before the guard and upstream alike.
	res := rawRequest(t, srv.URL, "POST", "/payments", map[string]string{"X-Debug": "1", "Connection": " X-Debug\t"}, `{}`)
	assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
	assert.NotContains(t, seen.Load().(http.Header), "X-Debug")
}

// TestProxy_HostWithAComma: Go takes Host: admin.example.com,x, and
// the upstream got it whole as X-Forwarded-Host, which the guard read
// whole: a rule refusing the host admin.example.com passed, where
// Express with trust proxy reads the host up to the first comma. Such a
// Host is refused before the guard.
func TestProxy_HostWithAComma(t *testing.T) {
	up, n := countingUpstream(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "admin.yaml"), []byte(`
endpoint: /payments
method: POST
invariants:
  - expr: "request.headers['x-forwarded-host'] != 'admin.example.com'"
    message: not through the admin host
`), 0o644))
	_, srv := testProxy(t, up.URL, func(s *settings, o *contractguard.Options) { o.ContractsDir = dir })
	for _, target := range []string{"http://admin.example.com,x/payments", "http://x,admin.example.com/payments"} {
		res := rawRequest(t, srv.URL, "POST", target, nil, `{}`)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", target, res.body)
		assert.Contains(t, string(res.body), "INVALID_HOST", target)
	}
	assert.Zero(t, n.Load(), "requests that reached the upstream")
	res := rawRequest(t, srv.URL, "POST", "http://admin.example.com/payments", nil, `{}`)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s", res.body)
	res = rawRequest(t, srv.URL, "POST", "http://shop.example.com/payments", nil, `{}`)
	assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
	assert.Equal(t, int64(1), n.Load())
}

// TestProxy_TooManyHeaderLines: a request of more than maxHeaderLines
// header lines is refused before the guard, and reaches no upstream:
// Node keeps the first 1,000 lines and drops the rest, which the
// Transport writes sorted, the proxy's own X-Forwarded-For among them
// (TestServe_HeaderLinesNodeDrops). Each value of a repeated header is a
// line.
func TestProxy_TooManyHeaderLines(t *testing.T) {
	up, n := countingUpstream(t)
	_, srv := testProxy(t, up.URL, nil)
	lines := func(k int) map[string]string {
		h := map[string]string{}
		for i := range k {
			h[fmt.Sprintf("A%04d", i)] = "x"
		}
		return h
	}
	// rawRequest sends Connection, Content-Type and Content-Length too.
	res := rawRequest(t, srv.URL, "POST", "/unguarded", lines(maxHeaderLines-3), `{}`)
	assert.Equal(t, http.StatusOK, res.status, "%s", res.body)
	assert.Equal(t, int64(1), n.Load())
	res = rawRequest(t, srv.URL, "POST", "/unguarded", lines(maxHeaderLines-2), `{}`)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.status, "%s", res.body)
	assert.JSONEq(t, `{"error":"PROXY_ERROR","code":"TOO_MANY_HEADERS","details":[{"path":"","message":"a request must have at most 100 header lines"}]}`, string(res.body))

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET /api/users/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n", strings.Repeat("A: x\r\n", 1000))
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(r.Body)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.StatusCode, "%s", b)
	assert.Equal(t, int64(1), n.Load(), "requests that reached the upstream")
}

// TestProxy_ReadTimeoutOnEveryAnswer: read-timeout bounds the whole
// request, body included, also one the proxy answers itself before the
// guard (a probe, a refused target, override or user header). Before its
// answer goes out, net/http reads what is left of a body the handler did
// not read (up to 256 KiB); with no deadline on the connection, a client
// that announced a body and sent none got no answer, and held the
// connection and its goroutine as long as it liked.
func TestProxy_ReadTimeoutOnEveryAnswer(t *testing.T) {
	up, n := countingUpstream(t)
	_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) {
		s.ReadTimeout = 200 * time.Millisecond
		s.MethodOverride = true
		s.UserHeader = "X-User"
		s.NormalizePath = false
	})
	for _, tc := range []struct{ method, target, header string }{
		{"GET", "/_contractguard/healthz", ""},
		{"GET", "/_contractguard/readyz", ""},
		{"POST", "http:x://h/api/users", ""},
		{"POST", "//h/api/users", ""},
		{"POST", "/unguarded", "X-HTTP-Method-Override: HEAD\r\n"},
		{"POST", "/unguarded", "X-User: [1]\r\n"},
	} {
		func() {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 10\r\n\r\n", tc.method, tc.target, tc.header)
			// The body never comes: the answer comes at the read
			// timeout, and the connection closes after it.
			start := time.Now()
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if !assert.NoError(t, err, "%s %s %s: no answer", tc.method, tc.target, tc.header) {
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			assert.True(t, res.Close, "%s %s: the connection is kept for a body that never came", tc.method, tc.target)
			_, err = br.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "%s %s", tc.method, tc.target)
			assert.Less(t, time.Since(start), 2*time.Second, "%s %s", tc.method, tc.target)
		}()
	}
	assert.Zero(t, n.Load())
}

// TestProxy_WarnsWithoutContracts: serve needs no contracts folder, so
// one forgotten in a deployment started a proxy that checked nothing,
// logged only as "contracts":0 at INFO. It now warns, saying what the
// proxy will do.
func TestProxy_WarnsWithoutContracts(t *testing.T) {
	u, err := url.Parse("http://127.0.0.1:1")
	require.NoError(t, err)
	for _, tc := range []struct {
		edit func(*contractguard.Options)
		want string // "" for no warning
	}{
		{func(o *contractguard.Options) {}, "every request passes unchecked"},
		// The scan reads only requests a contract matches: with none, it
		// reads nothing (it said "requests are only scanned").
		{func(o *contractguard.Options) { o.VulnerabilityScan = true }, "every request passes unchecked (the vulnerability scan reads only requests a contract matches)"},
		{func(o *contractguard.Options) { o.RequireContract = true }, "RequireContract rejects every request"},
		{func(o *contractguard.Options) { o.ContractsDir = filepath.Join(hostsDir, "contracts") }, ""},
		{func(o *contractguard.Options) { o.Disabled = true }, ""},
	} {
		var logs bytes.Buffer
		opts := contractguard.Options{}
		tc.edit(&opts)
		_, err := newProxy(settings{Upstream: u}, opts, slog.New(slog.NewTextHandler(&logs, nil)))
		require.NoError(t, err)
		if tc.want == "" {
			assert.NotContains(t, logs.String(), "no contracts folder", "%+v", opts)
			continue
		}
		assert.Contains(t, logs.String(), "level=WARN msg=\"contractguard serve: no contracts folder (--contracts, contractguard.contracts-dir or CONTRACTGUARD_CONTRACTS_DIR): "+tc.want+"\"")
	}
}

// TestProxy_AccessLogOfAProtocolSwitch: a websocket's line in the access
// log has the status its client got, 101. ReverseProxy writes a switch
// on the hijacked connection, never through WriteHeader, and the line
// said 200.
func TestProxy_AccessLogOfAProtocolSwitch(t *testing.T) {
	up := webSocketEcho(t, 1) // an echo, then the tunnel closes
	var logs syncBuffer
	p, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.AccessLog = true })
	p.log = slog.New(slog.NewJSONHandler(&logs, nil))

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	io.WriteString(c, "ping\n")
	echo, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ping\n", echo)
	c.Close()

	var line string
	for deadline := time.Now().Add(5 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, `"msg":"request"`) {
				line = l
			}
		}
	}
	require.NotEmpty(t, line, "no access log line")
	assert.Contains(t, line, `"status":101`)
}

// TestProxy_ErrorBodyAsDocumented: the proxy's own errors have the
// guard's shape member for member, in its order ("error", "code",
// "details"), the body docs/proxy.md shows; they came with "code" first.
func TestProxy_ErrorBodyAsDocumented(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there: refused at once
	_, srv := testProxy(t, down, nil)
	res, err := http.Get(srv.URL + "/unguarded")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.Equal(t, `{"error":"PROXY_ERROR","code":"UPSTREAM_UNAVAILABLE","details":[{"path":"","message":"the upstream service is unavailable"}]}`+"\n", string(b))
}

// TestProxy_ShutdownWaitsForWebSockets: SIGTERM gives a websocket's
// tunnel the shutdown timeout, as any request in flight: http.Server's
// Shutdown does not wait for hijacked connections, and run returned at
// once, "stopped" and exit status 0, the tunnel cut as the process
// ended. A tunnel that closes within the timeout lets it stop cleanly;
// one still open at the timeout is cut, and said so.
func TestProxy_ShutdownWaitsForWebSockets(t *testing.T) {
	up := webSocketEcho(t, -1)                                              // echoes until the client closes
	for _, closeAfter := range []time.Duration{300 * time.Millisecond, 0} { // 0: never
		u, err := url.Parse(up.URL)
		require.NoError(t, err)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		s := settings{
			Upstream: u, Listen: addr, AdminListen: "off",
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
			IdleTimeout: time.Minute, MaxHeaderBytes: 65536, DialTimeout: time.Second, UpstreamTimeout: 5 * time.Second,
			ShutdownTimeout: time.Second, NormalizePath: true, PreserveHost: true,
		}
		if closeAfter > 0 {
			// The tunnel closes well within the timeout whatever the
			// machine's load: the clean stop does not race a second.
			s.ShutdownTimeout = time.Minute
		}
		p, err := newProxy(s, contractguard.Options{ContractsDir: filepath.Join(hostsDir, "contracts")}, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.run(ctx, nil, nil) }()

		var c net.Conn
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if c, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
				break
			}
		}
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /chat HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)

		stop()
		if closeAfter > 0 {
			time.Sleep(closeAfter)
			// Still a tunnel while the proxy shuts down.
			io.WriteString(c, "ping\n")
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ping\n", line)
			assert.Empty(t, done, "run returned while a tunnel was open")
			c.Close()
		}
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("run did not return")
		}
		if closeAfter > 0 {
			assert.NoError(t, err, "the tunnel closed within the timeout: a clean stop")
		} else {
			// Cut at the shutdown timeout, and said so.
			require.Error(t, err, "a tunnel still open at the timeout was cut without a word")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "1 websockets still open were cut")
		}
	}
}

// TestProxy_NoContractsScanReadsNothing: what the warning of a proxy
// without contracts says of the scan is what it does: the scan reads only
// requests a contract matches, so with none an injection reaches the
// upstream (the warning said "requests are only scanned").
func TestProxy_NoContractsScanReadsNothing(t *testing.T) {
	reached := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	t.Cleanup(up.Close)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	var logs bytes.Buffer
	p, err := newProxy(settings{Upstream: u, DialTimeout: time.Second, UpstreamTimeout: 5 * time.Second},
		contractguard.Options{VulnerabilityScan: true}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	r := httptest.NewRequest("POST", "/search?q=1%27%20OR%20%271%27=%271", strings.NewReader(`{"q":"1' OR '1'='1"}`))
	w := httptest.NewRecorder()
	p.handler.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, 1, reached, "not scanned: no contract matches it")
	assert.Contains(t, logs.String(), "every request passes unchecked")
	assert.NotContains(t, logs.String(), "only scanned")
}

// webSocketEcho is an upstream that switches every request to a
// websocket and echoes n lines of its client (n < 0: until the client
// closes), then closes the tunnel.
func webSocketEcho(t *testing.T, n int) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", webSocketAccept(r.Header.Get("Sec-WebSocket-Key")))
		for i := 0; n < 0 || i < n; i++ {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			io.WriteString(c, line)
		}
	}))
	t.Cleanup(up.Close)
	return up
}

// TestProxy_AccessLogOfACutResponse: a response cut at write-timeout (an
// upstream that stalls mid-body) was logged as a 200 like any other, with
// nothing to tell it from one the client got whole. Its line keeps the
// status the upstream sent and says it was cut, and why; so does one the
// upstream broke off mid-body. A response sent whole says nothing of it.
func TestProxy_AccessLogOfACutResponse(t *testing.T) {
	stop := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/whole":
			io.WriteString(w, "whole")
			return
		case "/length", "/broken":
			w.Header().Set("Content-Length", "100")
		}
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/broken" {
			panic(http.ErrAbortHandler) // the upstream's connection closes mid-body
		}
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() { close(stop) })
	var logs syncBuffer
	p, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) {
		s.WriteTimeout = 200 * time.Millisecond
		s.AccessLog = true
	})
	p.log = slog.New(slog.NewJSONHandler(&logs, nil))
	p.transport.DisableKeepAlives = true
	for _, tc := range []struct{ path, cut string }{
		{"/length", "write-timeout"}, {"/chunked", "write-timeout"}, {"/broken", "upstream"}, {"/gone", "client"}, {"/whole", ""},
	} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", tc.path)
		if tc.path == "/gone" { // the client hangs up once the response has begun
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			res.Body.Read(make([]byte, 4))
		} else {
			io.ReadAll(c)
		}
		c.Close()
		var entry map[string]any
		for deadline := time.Now().Add(5 * time.Second); entry == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for l := range strings.Lines(logs.String()) {
				var e map[string]any
				if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "request" && e["path"] == tc.path {
					entry = e
				}
			}
		}
		require.NotNil(t, entry, "%s: no access log line in %s", tc.path, logs.String())
		assert.Equal(t, float64(http.StatusOK), entry["status"], "%s: the status the upstream sent", tc.path)
		if tc.cut == "" {
			assert.NotContains(t, entry, "cut", "%s: sent whole", tc.path)
		} else {
			assert.Equal(t, tc.cut, entry["cut"], "%s: %v", tc.path, entry)
		}
	}
}

// TestProxy_RequestTimeoutBeforeTheReadReturns: net/http cancels the
// request's context inside the body read that passes read-timeout, before
// that read returns to untilEOF, which notes the timeout; the Transport,
// watching the context, may give up first, and upstreamError then found
// no timeout noted and aborted the connection (nothing written) where
// the client was owed a 408. The body's deadline passed says so whichever
// goroutine is first.
func TestProxy_RequestTimeoutBeforeTheReadReturns(t *testing.T) {
	p, _ := testProxy(t, "http://127.0.0.1:1", nil)
	x := &exchange{}
	past := time.Now().Add(-time.Millisecond)
	x.bodyDeadline.Store(past.UnixNano()) // the body not read to its end, its deadline passed; bodyTimedOut not stored yet
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), exchangeKey{}, x))
	cancel() // as net/http cancels it in the failed read
	r := httptest.NewRequestWithContext(ctx, "POST", "/upload", strings.NewReader("{"))
	w := httptest.NewRecorder()
	require.NotPanics(t, func() { p.upstreamError(w, r, context.Canceled) }, "taken for a client gone")
	assert.Equal(t, http.StatusRequestTimeout, w.Code)
	assert.Equal(t, codeRequestTimeout, x.code)
}

// TestProxy_BodyDeadlinePassedIsNoTimeoutAlone: a streamed body's
// deadline can pass while no read of it waits on the client: the
// Transport was blocked writing to an upstream that stopped reading, and
// then broke off. The client sent at full speed and is still there (its
// context not cancelled): the answer is 502, not 408 "the request body
// did not arrive in time".
func TestProxy_BodyDeadlinePassedIsNoTimeoutAlone(t *testing.T) {
	p, _ := testProxy(t, "http://127.0.0.1:1", nil)
	x := &exchange{}
	past := time.Now().Add(-time.Millisecond)
	x.bodyDeadline.Store(past.UnixNano()) // the body not read to its end, its deadline passed
	r := httptest.NewRequestWithContext(context.WithValue(context.Background(), exchangeKey{}, x), "POST", "/upload", strings.NewReader("{"))
	w := httptest.NewRecorder()
	p.upstreamError(w, r, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET})
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.NotEqual(t, codeRequestTimeout, x.code)
}

// TestProxy_EarlyAnswerNotHeldByTheBody: an upstream that answers before
// it has read the body (a 413, a 401 to an upload) while the client has
// sent only part of its body, on a route whose body streams upstream. The
// Transport's writer goroutine, still reading the client's body, held the
// body's lock, and net/http cannot write the answer before it has it: the
// client got the upstream's answer only when the read failed at
// read-timeout, and never with read-timeout 0. An answer of more than
// net/http's response buffer (a 413 of 5,000 bytes) or a chunked one is
// written while the handler still runs, so cutting the read once the
// handler had returned came too late for it. The answer goes whole, at
// once, and the connection, its body unread, closes after it: no request
// is read from the middle of the body.
func TestProxy_EarlyAnswerNotHeldByTheBody(t *testing.T) {
	for _, answer := range []struct {
		raw    string
		status int
		body   string
	}{
		{"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 7\r\nConnection: close\r\n\r\ntoo big", http.StatusRequestEntityTooLarge, "too big"},
		{"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("x", 5000), http.StatusRequestEntityTooLarge, strings.Repeat("x", 5000)},
		{"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nno!\r\n0\r\n\r\n", http.StatusUnauthorized, "no!"},
	} {
		upstream := rawUpstream(t, func(c net.Conn, _ int) {
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			io.WriteString(c, answer.raw)
			time.Sleep(5 * time.Second) // the upstream's side stays open
		})
		for _, readTimeout := range []time.Duration{4 * time.Second, 0} {
			_, srv := testProxy(t, upstream, func(s *settings, _ *contractguard.Options) { s.ReadTimeout = readTimeout })
			for _, req := range []string{
				"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc",
				"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
			} {
				c, err := net.Dial("tcp", srv.Listener.Addr().String())
				require.NoError(t, err)
				c.SetDeadline(time.Now().Add(2 * time.Second))
				io.WriteString(c, req)
				br := bufio.NewReader(c)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err, "read-timeout %v: the upstream's answer waited on the client's body", readTimeout)
				assert.Equal(t, answer.status, res.StatusCode)
				b, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				assert.Equal(t, answer.body, string(b))
				assert.True(t, res.Close, "the body was not read to its end: the connection closes")
				// What the client sends next is its body, never a request.
				io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
				_, err = br.ReadByte()
				assert.Error(t, err, "nothing more is answered on the connection")
				c.Close()
			}
		}
	}
}

// TestProxy_SwitchOnlyToAWebSocket: after a 101 the connection is a
// tunnel the guard no longer reads. An upstream that answered a websocket
// upgrade with a 101 without being a websocket server (a route whose
// status and headers the client chooses, or a handler's mistake) and went
// on reading HTTP/1.1 requests on its connection took every request the
// client sent next through the tunnel, unchecked: here a POST /api/users
// with a name the contract refuses reached it. A 101 is passed on only as
// the answer to a websocket handshake, with the Sec-WebSocket-Accept that
// the request's Sec-WebSocket-Key asks for (RFC 6455, 4.2.2); any other
// is 502, and the upstream's connection closed (a 101 whose Upgrade is not
// the one asked for was left open by ReverseProxy).
func TestProxy_SwitchOnlyToAWebSocket(t *testing.T) {
	const key = "dGhlIHNhbXBsZSBub25jZQ=="
	var reached atomic.Int64
	upstream := rawUpstream(t, func(c net.Conn, _ int) { // answers /switch with the 101 its query asks for, and reads on
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.URL.Path == "/switch" {
				fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\nConnection: Upgrade\r\n", req.URL.Query().Get("upgrade"))
				if a := req.URL.Query().Get("accept"); a != "" {
					fmt.Fprintf(c, "Sec-WebSocket-Accept: %s\r\n", a)
				}
				io.WriteString(c, "\r\n")
				continue
			}
			reached.Add(1)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nreached")
		}
	})
	_, srv := testProxy(t, upstream, nil)
	for _, tc := range []struct {
		query, key string
		status     int
	}{
		{"upgrade=websocket", key, http.StatusBadGateway},                               // no Sec-WebSocket-Accept
		{"upgrade=websocket&accept=x", key, http.StatusBadGateway},                      // not the key's
		{"upgrade=websocket&accept=" + webSocketAccept(key), "", http.StatusBadGateway}, // no key asked for one
		{"upgrade=h2c&accept=" + webSocketAccept(key), key, http.StatusBadGateway},      // not the protocol asked for
		{"upgrade=websocket&accept=" + url.QueryEscape(webSocketAccept(key)), key, http.StatusSwitchingProtocols},
	} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /switch?%s HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n", tc.query)
		if tc.key != "" {
			fmt.Fprintf(c, "Sec-WebSocket-Key: %s\r\n", tc.key)
		}
		io.WriteString(c, "\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "%s", tc.query)
		io.Copy(io.Discard, res.Body)
		assert.Equal(t, tc.status, res.StatusCode, "%s", tc.query)
		if tc.status == http.StatusBadGateway {
			// The connection is still the proxy's: what comes next is checked.
			body := `{"email":"ada@example.com","name":"root"}`
			fmt.Fprintf(c, "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			res, err = http.ReadResponse(br, nil)
			require.NoError(t, err, "%s", tc.query)
			b, _ := io.ReadAll(res.Body)
			assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "%s: the next request went through a tunnel: %s", tc.query, b)
		}
		c.Close()
	}
	assert.Zero(t, reached.Load(), "a request reached the upstream past the guard")
}

// webSocketAccept is the Sec-WebSocket-Accept a websocket server answers
// key with (RFC 6455, 4.2.2).
func webSocketAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// rawUpstream is an upstream that speaks HTTP/1.1 by hand, for answers
// net/http would not write: serve runs on each connection it accepts (the
// n-th, from 0), which is closed when serve returns. It gives the
// upstream's URL.
func rawUpstream(t *testing.T, serve func(c net.Conn, n int)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c, n)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestProxy_StalledUpstreamWriteTimesOut: an upstream that reads a
// request's headers and then neither reads its body nor answers. The
// Transport's ResponseHeaderTimeout starts only once the whole body has
// been written, and a streamed body (no contract: /upload) larger than
// the sockets' buffers never is: the request, the client's connection and
// the upstream's were held with no timeout, for as long as the upstream
// kept its connection (read-timeout had passed, but no read of the
// client's body was waiting on it). A write to the upstream that makes no
// progress within upstream-timeout fails: 504 UPSTREAM_TIMEOUT. A checked
// body (in memory, written in one write) is bounded the same way.
func TestProxy_StalledUpstreamWriteTimesOut(t *testing.T) {
	release := make(chan struct{})
	upstream := rawUpstream(t, func(c net.Conn, _ int) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		<-release // reads nothing more, answers nothing, keeps the connection
	})
	// Closed first: the proxies' servers, when they close, wait for
	// their requests, which a failing test leaves to the upstream.
	defer close(release)
	for _, tc := range []struct {
		path        string
		size        int
		readTimeout time.Duration
	}{
		// Streamed: read-timeout passes while the Transport is blocked
		// writing, with no read of the client's body waiting on it.
		{"/upload", 64 << 20, 300 * time.Millisecond},
		// Checked, then sent from memory: read whole first.
		{"/api/users", 16 << 20, 10 * time.Second},
	} {
		_, srv := testProxy(t, upstream, func(s *settings, o *contractguard.Options) {
			s.ReadTimeout = tc.readTimeout
			s.UpstreamTimeout = 500 * time.Millisecond
			o.MaxBodyBytes = 64 << 20
		})
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(20 * time.Second)) // answered, or hung
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", tc.path, tc.size)
		go func() { // at full speed, until the proxy stops reading
			doc := `{"email":"ada@example.com"}`
			if _, err := io.WriteString(c, doc); err != nil {
				return
			}
			chunk := bytes.Repeat([]byte(" "), 64<<10)
			for n := len(doc); n < tc.size; n += len(chunk) {
				if _, err := c.Write(chunk[:min(len(chunk), tc.size-n)]); err != nil {
					return
				}
			}
		}()
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "%s: no answer: the proxy waits on an upstream that stopped reading", tc.path)
		b, _ := io.ReadAll(res.Body)
		c.Close()
		assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode, "%s: %s", tc.path, b)
		assert.Contains(t, string(b), codeUpstreamTimeout, tc.path)
	}
}

// TestProxy_SteadyUploadOutlastsUpstreamTimeout: upstream-timeout bounds
// a write that makes no progress, not an upload: a body the upstream
// reads slowly but steadily (5 MB/s: the kernel wakes a blocked write
// each time half the socket's send buffer has drained, every few hundred
// ms here), for longer than upstream-timeout (48 reads 50 ms apart), goes
// through whole.
func TestProxy_SteadyUploadOutlastsUpstreamTimeout(t *testing.T) {
	const size = 16 << 20
	upstream := rawUpstream(t, func(c net.Conn, _ int) {
		// A buffer that does not grow: the proxy's writes stay blocked
		// until the upstream reads, to the end of the slow part.
		c.(*net.TCPConn).SetReadBuffer(128 << 10)
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		n := 0
		buf := make([]byte, 256<<10)
		for n < 12<<20 { // 2.4 s at least, slowly
			time.Sleep(50 * time.Millisecond)
			m, err := io.ReadFull(req.Body, buf)
			n += m
			if err != nil {
				break
			}
		}
		// The rest at once: what the sockets' buffers hold once the
		// proxy has written all is ResponseHeaderTimeout's.
		m, _ := io.Copy(io.Discard, req.Body)
		n += int(m)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%d", len(strconv.Itoa(n)), n)
	})
	_, srv := testProxy(t, upstream, func(s *settings, _ *contractguard.Options) { s.UpstreamTimeout = 2 * time.Second })
	res, err := http.Post(srv.URL+"/upload", "application/octet-stream", bytes.NewReader(make([]byte, size)))
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	assert.Equal(t, strconv.Itoa(size), string(b))
}

// TestUpstreamConn_TunnelHasNoWriteDeadline: a write to the upstream that
// makes no progress fails after upstream-timeout, but not once the
// connection is a websocket's tunnel, which lasts as long as it lasts.
func TestUpstreamConn_TunnelHasNoWriteDeadline(t *testing.T) {
	for _, tunnel := range []bool{false, true} {
		a, b := net.Pipe()
		c := &upstreamConn{Conn: a, timeout: 50 * time.Millisecond}
		if tunnel {
			switchedToTunnel(c)
		}
		go func() {
			time.Sleep(300 * time.Millisecond) // the upstream reads late
			io.Copy(io.Discard, b)
		}()
		_, err := c.Write([]byte("frame"))
		if tunnel {
			assert.NoError(t, err)
		} else {
			var ne net.Error
			assert.True(t, errors.As(err, &ne) && ne.Timeout(), "%v", err)
		}
		a.Close()
		b.Close()
	}
}

// TestProxy_RefusedBodyDrainedForTheNextRequest: a request refused before
// its body was read (415 by its Content-Type), its body of 10 KiB sent
// whole, and a second request behind it on the same connection. 35bb86d
// cut every body not read to its end when the handler returned, so
// net/http's drain of what was left (up to 256 KiB) failed at once: the
// connection was closed with the body unread, which resets it (RST), and
// the second request got "connection reset by peer" where it was
// answered before. A body that arrives within a moment is drained, and
// the connection serves the next request.
func TestProxy_RefusedBodyDrainedForTheNextRequest(t *testing.T) {
	up, n := countingUpstream(t)
	for _, readTimeout := range []time.Duration{10 * time.Second, 0} {
		_, srv := testProxy(t, up.URL, func(s *settings, _ *contractguard.Options) { s.ReadTimeout = readTimeout })
		for _, size := range []int{10 << 10, 100 << 10} {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			go fmt.Fprintf(c, "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"+
				"GET /api/users/7 HTTP/1.1\r\nHost: x\r\n\r\n", size, strings.Repeat("a", size))
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			io.Copy(io.Discard, res.Body)
			assert.Equal(t, http.StatusUnsupportedMediaType, res.StatusCode)
			res, err = http.ReadResponse(br, nil)
			if assert.NoError(t, err, "read-timeout %v, %d bytes: the request after a refused one", readTimeout, size) {
				assert.Equal(t, http.StatusOK, res.StatusCode)
			}
			c.Close()
		}
	}
	assert.Equal(t, int64(4), n.Load())
}

// TestProxy_EarlyAnswerReachesAClientStillSending: an upstream that
// answers an upload before reading it (401), while the client goes on
// sending its body (chunked, 64 MiB, as Go's client sends a body of
// unknown length: writing it and reading the answer at once). The body,
// cut as the handler returned, was left unread and the connection closed
// at once, which resets it (RST): the client's write failed with
// "connection reset by peer" before it had read the answer (7 times in
// 10). The connection now closes a moment after the answer.
func TestProxy_EarlyAnswerReachesAClientStillSending(t *testing.T) {
	release := make(chan struct{})
	upstream := rawUpstream(t, func(c net.Conn, _ int) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 7\r\n\r\nno auth")
		<-release // the upstream's side stays open, its body unread
	})
	defer close(release)
	_, srv := testProxy(t, upstream, nil)
	for range 5 {
		res, err := http.Post(srv.URL+"/upload", "application/octet-stream", io.LimitReader(zeros{}, 64<<20))
		require.NoError(t, err, "the answer was lost to the reset")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
		assert.Equal(t, "no auth", string(b))
	}
}

// zeros reads as zero bytes for ever; behind an io.LimitReader, a body of
// unknown length.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
