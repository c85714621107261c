package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
)

// freePort is an address nothing listens on.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestServe_UpstreamDown: a refused connection is 502 at once, with the
// proxy's error body; readiness says so, liveness does not.
func TestServe_UpstreamDown(t *testing.T) {
	p := startProxy(t, "http://"+freePort(t), e2eContracts(t))
	client := &http.Client{Timeout: 10 * time.Second} // a hang fails the test, not CI
	for _, path := range []string{"/api/users", "/anything"} {
		start := time.Now()
		res, err := client.Post(p.url+path, "application/json", strings.NewReader(`{"email":"ada@example.com"}`))
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusBadGateway, res.StatusCode)
		assert.JSONEq(t, `{"error":"PROXY_ERROR","code":"UPSTREAM_UNAVAILABLE","details":[{"path":"","message":"the upstream service is unavailable"}]}`, string(b))
		assert.Less(t, time.Since(start), 2*time.Second, "a refused connection is not waited on")
	}
	// A rejected request is still the guard's: the upstream is not needed.
	res, err := client.Post(p.url+"/api/users", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)

	for _, u := range []string{p.admin + "/readyz", p.url + "/_contractguard/readyz"} {
		res, err := client.Get(u)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, u)
		assert.Contains(t, string(b), `"upstream":"unreachable"`)
	}
	for _, u := range []string{p.admin + "/healthz", p.url + "/_contractguard/healthz"} {
		res, err := client.Get(u)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, u)
	}
	p.waitLog(t, `"msg":"contractguard serve: upstream unavailable"`, "connection refused")
}

// TestServe_UpstreamSlow: an upstream that does not answer within
// --upstream-timeout is 504; one that answers in time is served.
func TestServe_UpstreamSlow(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t), "--upstream-timeout", "300ms")
	client := &http.Client{Timeout: 10 * time.Second}

	start := time.Now()
	res, err := client.Get(p.url + "/slow?ms=5000")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.JSONEq(t, `{"error":"PROXY_ERROR","code":"UPSTREAM_TIMEOUT","details":[{"path":"","message":"the upstream service did not answer in time"}]}`, string(b))
	assert.Less(t, time.Since(start), 3*time.Second, "504 comes at the timeout, not when the upstream answers")

	res, err = client.Get(p.url + "/slow?ms=10")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	line := p.waitLog(t, `"msg":"request"`, `"code":"UPSTREAM_TIMEOUT"`)
	assert.Contains(t, line, `"status":504`)
	assert.NotContains(t, line, "ms=5000", "the access log has no query")
}

// TestServe_SIGHUPBrokenContract: SIGHUP with a broken contract in the
// folder keeps the contracts in force and logs why; SIGHUP after the fix
// loads the new set.
func TestServe_SIGHUPBrokenContract(t *testing.T) {
	h := startHost(t, "express")
	dir := e2eContracts(t)
	p := startProxy(t, h.url, dir, "--watch=false")

	broken := filepath.Join(dir, "zz-broken.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("endpoint: /api/transfers\nmethod: POST\ninvariants:\n  - expr: request.body.amount <=\n    message: x\n"), 0o644))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	line := p.waitLog(t, `"level":"ERROR"`, "reload failed; the previous contracts stay in force")
	assert.Contains(t, line, "zz-broken.yaml")

	// The old set is in force: still checked, still passing what it did.
	res := post(t, p.url+"/api/users", `{"email":"nope"}`, nil)
	assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body))
	res = post(t, p.url+"/api/users", `{"email":"ada@example.com"}`, nil)
	assert.Equal(t, http.StatusCreated, res.status)

	// Fixed: a new contract is enforced after the next SIGHUP.
	require.NoError(t, os.WriteFile(broken, []byte("endpoint: /slow\nmethod: GET\ninvariants:\n  - expr: \"!('ms' in request.query) || int(request.query.ms) <= 100\"\n    message: at most 100 ms\n"), 0o644))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, `"msg":"contractguard: contracts reloaded"`)
	res2, err := http.Get(p.url + "/slow?ms=1000")
	require.NoError(t, err)
	res2.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, res2.StatusCode)
}

// TestServe_SIGHUPWhileLoading: a SIGHUP that comes while the contracts
// are still loading at start (a deploy that changes a file and signals
// just as the proxy restarts) does not kill the proxy: it reloads once it
// has started. A contracts file that is a pipe holds the loading until
// the test has signalled.
func TestServe_SIGHUPWhileLoading(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "a.yaml")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	cmd := exec.Command(binary, "serve", "--contracts", dir, "--upstream", "http://"+freePort(t),
		"--listen", "127.0.0.1:0", "--admin-listen", "off", "--watch=false")
	cmd.Env = withoutServeEnv()
	logs := &syncBuffer{}
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("contractguard serve log:\n%s", logs.String())
		}
	})

	// Opening the pipe to write succeeds once the proxy has it open to read.
	var w *os.File
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		require.ErrorIs(t, err, syscall.ENXIO)
		require.True(t, time.Now().Before(deadline), "contractguard serve did not read the contracts within 30s")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	contract := "endpoint: /a\nmethod: POST\n"
	file := filepath.Join(dir, "a.yaml.new")
	require.NoError(t, os.WriteFile(file, []byte(contract), 0o644))
	require.NoError(t, os.Rename(file, pipe)) // what the reload will read
	_, err := w.WriteString(contract)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"contractguard: contracts reloaded"`) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("contractguard serve exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no reload within 30s of the start")
	}
	assert.Contains(t, logs.String(), "SIGHUP: reloading the contracts")
}

// TestServe_SIGTERMBehindSIGHUPs: a SIGTERM sent while a reload runs and
// SIGHUPs are queued behind it (a deploy that signals once per file) stops
// the proxy. The SIGHUPs and SIGTERM shared one channel of 4, which
// os/signal never blocks on: with 4 SIGHUPs queued, the SIGTERM was
// dropped, and the proxy reloaded again and went on serving until killed.
// A contracts file that is a pipe holds the reload while the test signals.
func TestServe_SIGTERMBehindSIGHUPs(t *testing.T) {
	dir := t.TempDir()
	contract := "endpoint: /a\nmethod: POST\n"
	file := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(file, []byte(contract), 0o644))
	p := startProxy(t, "http://"+freePort(t), dir, "--watch=false", "--admin-listen", "off")

	pipe := filepath.Join(dir, "a.yaml.pipe")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	require.NoError(t, os.Rename(pipe, file))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	var w *os.File
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		require.ErrorIs(t, err, syscall.ENXIO)
		require.True(t, time.Now().Before(deadline), "the reload did not read the contracts within 30s")
		time.Sleep(10 * time.Millisecond)
	}
	// The reload is held: SIGHUPs queue behind it, one at a time (the
	// system merges a signal sent while one of its kind is pending), then
	// a SIGTERM.
	for range 6 {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(100 * time.Millisecond)
	next := filepath.Join(dir, "a.yaml.new")
	require.NoError(t, os.WriteFile(next, []byte(contract), 0o644))
	require.NoError(t, os.Rename(next, file)) // what a reload after this one reads
	_, err := w.WriteString(contract)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the SIGTERM sent behind the SIGHUPs was lost: the proxy is still running")
	}
	assert.Equal(t, 0, p.exitCode)
	assert.Contains(t, p.logs.String(), `"signal":"terminated"`)
}

// TestCoalesce: SIGHUPs queued behind one are one reload; a SIGTERM or
// SIGINT queued behind them stops without reloading.
func TestCoalesce(t *testing.T) {
	for _, tc := range []struct {
		queued []os.Signal
		want   os.Signal
	}{
		{nil, syscall.SIGHUP},
		{[]os.Signal{syscall.SIGHUP, syscall.SIGHUP, syscall.SIGHUP}, syscall.SIGHUP},
		{[]os.Signal{syscall.SIGHUP, syscall.SIGTERM}, syscall.SIGTERM},
		{[]os.Signal{syscall.SIGINT, syscall.SIGHUP}, syscall.SIGINT},
	} {
		sigs := make(chan os.Signal, 4)
		for _, s := range tc.queued {
			sigs <- s
		}
		assert.Equal(t, tc.want, coalesce(syscall.SIGHUP, sigs), "%v", tc.queued)
		if tc.want == syscall.SIGHUP {
			assert.Empty(t, sigs, "every queued SIGHUP taken")
		}
	}
	assert.Equal(t, syscall.SIGTERM, coalesce(syscall.SIGTERM, make(chan os.Signal)))
}

// TestKeepWatching_AfterWatchFails: Watch returns when it cannot watch
// (here the folder is gone for a moment, as while a volume is swapped);
// serve used to log it once and never reload on a change again.
// keepWatching starts it again, reloads what changed meanwhile, and
// watches on.
func TestKeepWatching_AfterWatchFails(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "contracts")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write := func(name, endpoint string) {
		t.Helper()
		body := "endpoint: " + endpoint + "\nmethod: GET\ninvariants:\n  - expr: \"false\"\n    message: closed\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("a.yaml", "/a")
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	g, err := contractguard.New(contractguard.Options{ContractsDir: dir, Logger: log})
	require.NoError(t, err)
	require.NoError(t, os.Rename(dir, dir+".old"))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { keepWatching(ctx, g, log, 20*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	endpoints := func() []string {
		var out []string
		for _, c := range g.Contracts() {
			out = append(out, c.Endpoint)
		}
		return out
	}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "not watching the contracts; trying again") }, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, os.Rename(dir+".old", dir))
	write("b.yaml", "/b") // while nothing watches
	require.Eventually(t, func() bool { return slices.Equal(endpoints(), []string{"/a", "/b"}) }, 10*time.Second, 10*time.Millisecond, "%v", endpoints)
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "watching the contracts folder") >= 1 }, 10*time.Second, 10*time.Millisecond)
	write("c.yaml", "/c") // watched again
	require.Eventually(t, func() bool { return slices.Equal(endpoints(), []string{"/a", "/b", "/c"}) }, 10*time.Second, 10*time.Millisecond, "%v", endpoints)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("keepWatching did not return when its context ended")
	}
}

// TestServe_WatchReloads: with --watch (the default), a contract written
// into the folder is enforced without a signal.
func TestServe_WatchReloads(t *testing.T) {
	h := startHost(t, "express")
	dir := e2eContracts(t)
	p := startProxy(t, h.url, dir)
	p.waitLog(t, "watching the contracts folder")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "slow.yaml"), []byte("endpoint: /slow\nmethod: GET\ninvariants:\n  - expr: \"false\"\n    message: closed\n"), 0o644))
	p.waitLog(t, `"msg":"contractguard: contracts reloaded"`)
	res, err := http.Get(p.url + "/slow?ms=1")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
}

// TestServe_SIGTERMUnderLoad: SIGTERM while clients keep sending. Every
// request the proxy took gets its response: requests in flight (slow ones
// included) finish, every one the host handled comes back to its client,
// and what fails fails before the proxy took it (the listener closed, or
// a kept-alive connection closed while idle). The proxy exits 0.
func TestServe_SIGTERMUnderLoad(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t))
	before := h.counts(t).Routes

	var ok, rejected, slowOK, refused, closedIdle atomic.Int64
	var other sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	worker := func(slow bool) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var res *http.Response
			var err error
			if slow {
				res, err = client.Get(p.url + "/slow?ms=400")
			} else if i%4 == 3 {
				res, err = client.Post(p.url+"/api/users", "application/json", strings.NewReader(`{"email":"nope"}`))
			} else {
				res, err = client.Post(p.url+"/api/users", "application/json", strings.NewReader(`{"email":"ada@example.com"}`))
			}
			if err != nil {
				var oe *net.OpError
				switch {
				case errors.As(err, &oe) && oe.Op == "dial":
					refused.Add(1)
					return // the listener is closed: the proxy has stopped taking requests
				case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "server closed idle connection"):
					closedIdle.Add(1)
					continue
				}
				other.Store(err.Error(), true)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			switch {
			case slow && res.StatusCode == http.StatusOK:
				slowOK.Add(1)
			case res.StatusCode == http.StatusCreated:
				ok.Add(1)
			case res.StatusCode == http.StatusBadRequest:
				rejected.Add(1)
			default:
				other.Store(fmt.Sprintf("status %d", res.StatusCode), true)
			}
		}
	}
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go worker(false)
	}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go worker(true)
	}
	time.Sleep(700 * time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(25 * time.Second):
		t.Fatal("the proxy did not stop")
	}
	close(stop)
	wg.Wait()

	after := h.counts(t).Routes
	other.Range(func(k, _ any) bool { t.Errorf("a request failed otherwise: %v", k); return true })
	assert.Equal(t, 0, p.exitCode)
	assert.Contains(t, p.logs.String(), `"msg":"contractguard serve: stopped"`)
	assert.Equal(t, int(ok.Load()), after["POST /api/users"]-before["POST /api/users"], "every request the host handled came back to its client")
	assert.Equal(t, int(slowOK.Load()), after["GET /slow"]-before["GET /slow"], "every slow request in flight finished")
	assert.Positive(t, ok.Load())
	assert.Positive(t, slowOK.Load())
	assert.Positive(t, rejected.Load())
	t.Logf("passed %d, rejected %d, slow passed %d; after SIGTERM: %d refused at connect, %d on idle connections the proxy closed",
		ok.Load(), rejected.Load(), slowOK.Load(), refused.Load(), closedIdle.Load())
}
