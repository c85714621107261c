package main

// The harness of the end-to-end tests: real host applications (Express 5,
// Fastify 5, a JDK HttpServer) started from testdata/hosts, and the real
// contractguard binary running serve in front of them.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const hostsDir = "testdata/hosts"

var (
	npmOnce    sync.Once
	npmModules string
	npmErr     error
)

// nodeModules installs the hosts' npm packages (package-lock.json, with
// npm ci) once per lockfile into the user's cache folder, outside the
// repository, and returns the node_modules folder. Without node or npm
// the test is skipped; an install that fails fails it.
func nodeModules(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the end-to-end tests against Express and Fastify need node and npm", tool)
		}
	}
	npmOnce.Do(func() { npmModules, npmErr = installHosts() })
	require.NoError(t, npmErr)
	return npmModules
}

func installHosts() (string, error) {
	lock, err := os.ReadFile(filepath.Join(hostsDir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	pkg, err := os.ReadFile(filepath.Join(hostsDir, "package.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(append(lock, 0), pkg...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "contractguard-e2e", hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return modules, nil
	}
	// Install beside, then rename: a run that stops half-way, or another
	// test process, never sees half a folder.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", tmp, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, ".installed")); statErr == nil {
			return modules, nil // another process won the race
		}
		return "", err
	}
	return modules, nil
}

// host is a running host application.
type host struct {
	name string
	url  string
	cmd  *exec.Cmd
}

// startHost starts the host kind (express, fastify, java) on a free port;
// it stops when the test ends.
func startHost(t *testing.T, kind string, env ...string) *host {
	t.Helper()
	var cmd *exec.Cmd
	switch kind {
	case "express", "fastify":
		modules := nodeModules(t)
		cmd = exec.Command("node", kind+".js")
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	case "java":
		if _, err := exec.LookPath("java"); err != nil {
			t.Skip("java is not installed: the end-to-end test against a JDK HttpServer needs it")
		}
		cmd = exec.Command("java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "Host.java")
		cmd.Env = os.Environ()
	default:
		t.Fatalf("no host %q", kind)
	}
	cmd.Dir = hostsDir
	cmd.Env = append(cmd.Env, append([]string{"PORT=0"}, env...)...)
	port := startAndRead(t, cmd, func(line string) (string, bool) {
		return strings.CutPrefix(line, "LISTENING ")
	}, 60*time.Second)
	return &host{name: kind, url: "http://127.0.0.1:" + port, cmd: cmd}
}

// startNodeApp runs src, a node program of a test's own (Express or
// Fastify from the hosts' node_modules), on a free port; it must print
// "LISTENING <port>" when it listens. It stops when the test ends.
func startNodeApp(t *testing.T, src string) string {
	t.Helper()
	modules := nodeModules(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.js"), []byte(src), 0o644))
	cmd := exec.Command("node", "app.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "PORT=0")
	port := startAndRead(t, cmd, func(line string) (string, bool) {
		return strings.CutPrefix(line, "LISTENING ")
	}, 60*time.Second)
	return "http://127.0.0.1:" + port
}

// startAndRead starts cmd and waits for a line of its stdout that want
// accepts, returning what want returned. The process is killed when the
// test ends; its stderr goes to the test log on failure.
func startAndRead(t *testing.T, cmd *exec.Cmd, want func(string) (string, bool), timeout time.Duration) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s stderr:\n%s", filepath.Base(cmd.Path), stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := want(sc.Text()); ok {
				found <- v
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case v := <-found:
		return v
	case <-done:
		t.Fatalf("%s exited before it was ready:\n%s", cmd.Args, stderr.String())
	case <-time.After(timeout):
		t.Fatalf("%s not ready after %s:\n%s", cmd.Args, timeout, stderr.String())
	}
	return ""
}

// counts is what a host received: every request, and each route's handler.
type counts struct {
	Total  int            `json:"total"`
	Routes map[string]int `json:"routes"`
}

func (h *host) counts(t *testing.T) counts {
	t.Helper()
	res, err := http.Get(h.url + "/_count")
	require.NoError(t, err)
	defer res.Body.Close()
	var c counts
	require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
	return c
}

// proxyProc is a running contractguard serve.
type proxyProc struct {
	url, admin string
	cmd        *exec.Cmd
	logs       *syncBuffer
	exited     chan struct{}
	exitCode   int
}

// startProxy runs the binary's serve in front of upstream with the
// contracts in dir, on free ports, and stops it (SIGTERM) when the test
// ends.
func startProxy(t *testing.T, upstream, dir string, args ...string) *proxyProc {
	t.Helper()
	return startProxyEnv(t, nil, upstream, dir, args...)
}

// startProxyEnv is startProxy with env added to the environment.
func startProxyEnv(t *testing.T, env []string, upstream, dir string, args ...string) *proxyProc {
	t.Helper()
	all := append([]string{"serve", "--contracts", dir, "--upstream", upstream,
		"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(binary, all...)
	cmd.Env = append(withoutServeEnv(), env...)
	p := &proxyProc{cmd: cmd, logs: &syncBuffer{}, exited: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.logs.Write(append(sc.Bytes(), '\n'))
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "contractguard serve: listening" {
				ready <- line
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.exitCode = ee.ExitCode()
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("contractguard serve log:\n%s", p.logs.String())
		}
	})
	select {
	case line := <-ready:
		p.url = "http://" + line["listen"].(string)
		if a, ok := line["admin"].(string); ok {
			p.admin = "http://" + a
		}
	case <-p.exited:
		t.Fatalf("contractguard serve exited (%d):\n%s", p.exitCode, p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("contractguard serve not listening after 30s:\n%s", p.logs.String())
	}
	return p
}

// waitLog waits until the proxy has logged a line containing every one of
// parts, and returns it.
func (p *proxyProc) waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(p.logs.String(), "\n") {
			ok := line != ""
			for _, part := range parts {
				ok = ok && strings.Contains(line, part)
			}
			if ok {
				return line
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no log line with %q:\n%s", parts, p.logs.String())
	return ""
}

// withoutServeEnv is the environment without CONTRACTGUARD_ variables, so
// that the machine's cannot change a test's outcome.
func withoutServeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONTRACTGUARD_") {
			env = append(env, kv)
		}
	}
	return env
}

// e2eContracts is a fresh folder with the hosts' contracts and the
// benchmark's order contracts.
func e2eContracts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(hostsDir, "contracts", "*.yaml"))
	require.NoError(t, err)
	files = append(files, filepath.Join("..", "..", "bench", "testdata", "contracts", "contracts.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		name := filepath.Base(f)
		if strings.Contains(f, "bench") {
			name = "orders.yaml"
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// orderBody is the ~1 KB order of the root module's testdata.
func orderBody(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "bodies", "order.json"))
	require.NoError(t, err)
	return bytes.TrimSpace(b)
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}
