package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoad compares, in one interleaved run, requests/s and latency of
// the ~1 KB order (POST /orders, valid) sent to Express and Fastify
// directly and through contractguard serve, with the CPU time the proxy
// and the host spend per request (from /proc/PID/stat). It is a
// measurement, not a check: it runs only when CONTRACTGUARD_LOAD is set,
// to the length of one timed run (docs/proxy.md has the figures):
//
//	CONTRACTGUARD_LOAD=5s go test -run TestLoad -v -count=1 ./cmd/contractguard/
//
// CONTRACTGUARD_LOAD_ROUNDS (default 3) and CONTRACTGUARD_LOAD_CLIENTS
// (default 16 connections) change the shape; CONTRACTGUARD_LOAD_PROXY_ENV
// ("GOMAXPROCS=1 GOGC=200") adds a proxy run with that environment.
func TestLoad(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("CONTRACTGUARD_LOAD"))
	if err != nil {
		t.Skip("a measurement: set CONTRACTGUARD_LOAD=5s to run it")
	}
	rounds := envInt("CONTRACTGUARD_LOAD_ROUNDS", 3)
	clients := envInt("CONTRACTGUARD_LOAD_CLIENTS", 16)
	body := orderBody(t)
	dir := e2eContracts(t)

	type target struct {
		name      string
		url       string
		proxyPID  int
		hostPID   int
		rps, cpuP []float64
		cpuH      []float64
		sysP      []float64 // of cpuP, the kernel's
		sysH      []float64
		lat       []time.Duration
		errors    int
	}
	var targets []*target
	for _, kind := range []string{"express", "fastify"} {
		h := startHost(t, kind)
		p := startProxy(t, h.url, dir, "--access-log=false")
		// As examples/deploy/sidecar.yaml runs it: fewer garbage
		// collections, bounded by a memory limit under the container's.
		tuned := startProxyEnv(t, deployGC, h.url, dir, "--access-log=false")
		targets = append(targets,
			&target{name: kind + " direct", url: h.url, hostPID: h.cmd.Process.Pid},
			&target{name: kind + " through serve", url: p.url, hostPID: h.cmd.Process.Pid, proxyPID: p.cmd.Process.Pid},
			&target{name: kind + " through serve, " + strings.Join(deployGC, " "), url: tuned.url, hostPID: h.cmd.Process.Pid, proxyPID: tuned.cmd.Process.Pid})
		if env := strings.Fields(os.Getenv("CONTRACTGUARD_LOAD_PROXY_ENV")); len(env) > 0 {
			other := startProxyEnv(t, env, h.url, dir, "--access-log=false")
			targets = append(targets, &target{name: kind + " through serve, " + strings.Join(env, " "), url: other.url, hostPID: h.cmd.Process.Pid, proxyPID: other.cmd.Process.Pid})
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	// Warm up every target (JIT, connections).
	for _, tg := range targets {
		hammer(client, tg.url+"/orders", body, clients, 500*time.Millisecond)
	}
	for r := 0; r < rounds; r++ {
		for _, tg := range targets {
			p0, ps0 := cpuTicks(tg.proxyPID)
			h0, hs0 := cpuTicks(tg.hostPID)
			res := hammer(client, tg.url+"/orders", body, clients, d)
			p1, ps1 := cpuTicks(tg.proxyPID)
			h1, hs1 := cpuTicks(tg.hostPID)
			n := float64(len(res.lat))
			tg.rps = append(tg.rps, n/res.elapsed.Seconds())
			tg.cpuP = append(tg.cpuP, float64(p1-p0)*1e6/clockTicks/n)
			tg.cpuH = append(tg.cpuH, float64(h1-h0)*1e6/clockTicks/n)
			tg.sysP = append(tg.sysP, float64(ps1-ps0)*1e6/clockTicks/n)
			tg.sysH = append(tg.sysH, float64(hs1-hs0)*1e6/clockTicks/n)
			tg.lat = append(tg.lat, res.lat...)
			tg.errors += res.errors
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds of %s, %d connections, POST /orders (%d bytes, valid), interleaved; medians of the rounds\n", rounds, d, clients, len(body))
	fmt.Fprintf(&b, "| target | requests/s | p50 | p99 | serve CPU/request (system) | host CPU/request (system) | errors |\n|---|---|---|---|---|---|---|\n")
	for _, tg := range targets {
		slices.Sort(tg.lat)
		proxyCPU := "—"
		if tg.proxyPID != 0 {
			proxyCPU = fmt.Sprintf("%.0f µs (%.0f)", median(tg.cpuP), median(tg.sysP))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %.0f µs (%.0f) | %d |\n", tg.name, median(tg.rps),
			pct(tg.lat, 0.50), pct(tg.lat, 0.99), proxyCPU, median(tg.cpuH), median(tg.sysH), tg.errors)
	}
	t.Log("\n" + b.String())
	for _, tg := range targets {
		require.Zero(t, tg.errors, tg.name)
	}
}

// deployGC is the garbage collector's setting in examples/deploy/sidecar.yaml
// (TestDeployGC keeps them equal).
var deployGC = []string{"GOGC=400", "GOMEMLIMIT=192MiB"}

type hammerResult struct {
	lat     []time.Duration
	elapsed time.Duration
	errors  int
}

// hammer sends the body from clients goroutines for d and times each
// request; anything but 201 counts as an error.
func hammer(client *http.Client, url string, body []byte, clients int, d time.Duration) hammerResult {
	var mu sync.Mutex
	var res hammerResult
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			errs := 0
			for time.Now().Before(stop) {
				t0 := time.Now()
				r, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					errs++
					continue
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode != http.StatusCreated {
					errs++
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

const clockTicks = 100 // USER_HZ on Linux

// cpuTicks is the user+system CPU time of a process, and the system
// part of it, in clock ticks; 0
// for pid 0 or where /proc is not.
func cpuTicks(pid int) (all, system int64) {
	if pid == 0 {
		return 0, 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The command may hold spaces: fields count from the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime, stime
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func pct(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "—"
	}
	v := sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
	return fmt.Sprintf("%.2f ms", float64(v.Microseconds())/1000)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestDeployGC: the load test runs the proxy with the garbage collector's
// settings of the example deployment.
func TestDeployGC(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "deploy", "sidecar.yaml"))
	require.NoError(t, err)
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`- \{name: (GO\w+), value: "?([^"}]+?)"?\}`).FindAllStringSubmatch(string(b), -1) {
		env[m[1]] = m[2]
	}
	want := map[string]string{}
	for _, kv := range deployGC {
		name, value, _ := strings.Cut(kv, "=")
		want[name] = value
	}
	assert.Equal(t, want, env)
}
