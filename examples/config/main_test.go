package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var discard = slog.New(slog.DiscardHandler)

const (
	user      = `{"email":"ada@example.com","password":"correct horse","age":36}`
	badEmail  = `{"email":"ada.example.com","password":"correct horse","age":36}`
	injection = `{"email":"ada@example.com","password":"x' OR '1'='1' --","age":36}`
)

// post sends body to path on a server built from the configuration file
// and returns the status and the response body.
func post(t *testing.T, h http.Handler, path, body string) (int, string) {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func TestConfigExample(t *testing.T) {
	_, h, err := newServer("contractguard.yaml", discard)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, body string
		status     int
		contains   string
	}{
		{"a valid registration", user, 200, `"accepted":"POST /api/users"`},
		{"a bad email", badEmail, 400, `{"path":"/email","message":"must be a valid email address"}`},
		{"vulnerability-scan: true", injection, 403, `{"path":"/password","message":"possible SQL injection"}`},
		{"max-body-bytes from its placeholder's default", `{"email":"` + strings.Repeat("a", 70000) + `"}`, 413, `"PAYLOAD_TOO_LARGE"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, h, "/api/users", tc.body)
			assert.Equal(t, tc.status, status, body)
			assert.Contains(t, body, tc.contains)
		})
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/actuator/contractguard", nil))
	require.Equal(t, 200, w.Code, "metrics.enabled: true")
	var m map[string]float64
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m))
	assert.Equal(t, 3.0, m["contracts_loaded"], "the quickstart's contracts (that the folder is read relative to the file, not the working directory, is TestLoadConfig_StartsAGuard's)")
	assert.Equal(t, 3.0, m["requests_blocked"])

	// The same, for Prometheus (metrics.enabled: true): the injection is
	// a scan finding.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, w.Code)
	for _, line := range []string{
		`contractguard_requests_total{code="",method="POST",outcome="passed",route="/api/users"} 1`,
		`contractguard_requests_total{code="VULNERABILITY_DETECTED",method="POST",outcome="rejected",route="/api/users"} 1`,
		`contractguard_requests_total{code="PAYLOAD_TOO_LARGE",method="POST",outcome="rejected",route="/api/users"} 1`,
		`contractguard_scan_findings_total{class="sql_injection"} 1`,
		`contractguard_contracts_loaded 3`,
	} {
		assert.Contains(t, w.Body.String(), line+"\n")
	}
}

// The environment wins over the file, as it does for the Spring starter.
func TestConfigExample_Environment(t *testing.T) {
	for _, tc := range []struct {
		name, value, body string
		status            int
	}{
		{"CONTRACTGUARD_VULNERABILITY_SCAN", "false", injection, 200},
		{"CONTRACTGUARD_ENABLED", "false", badEmail, 200},
		{"MAX_BODY_BYTES", "16", user, 413}, // fills the file's placeholder
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			_, h, err := newServer("contractguard.yaml", discard)
			require.NoError(t, err)
			status, body := post(t, h, "/api/users", tc.body)
			assert.Equal(t, tc.status, status, body)
		})
	}
	t.Run("CONTRACTGUARD_METRICS_ENABLED=false", func(t *testing.T) {
		t.Setenv("CONTRACTGUARD_METRICS_ENABLED", "false")
		_, h, err := newServer("contractguard.yaml", discard)
		require.NoError(t, err)
		for _, path := range []string{"/metrics", "/actuator/contractguard"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			assert.Equal(t, 404, w.Code, path)
		}
	})
	t.Run("a bad value names the variable", func(t *testing.T) {
		t.Setenv("CONTRACTGUARD_MAX_BODY_BYTES", "lots")
		_, _, err := newServer("contractguard.yaml", discard)
		assert.EqualError(t, err, `environment CONTRACTGUARD_MAX_BODY_BYTES: contractguard.max-body-bytes: want a whole number, 0 or more, not "lots"`)
	})
}

// run serves the guarded application until its context ends, and refuses
// a broken configuration with the file and line of the problem.
func TestRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, "contractguard.yaml", ln, discard) }()
	url := "http://" + ln.Addr().String()
	resp, err := http.Post(url+"/api/users", "application/json", strings.NewReader(badEmail))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode)
	assert.Contains(t, string(body), `{"path":"/email","message":"must be a valid email address"}`)
	resp, err = http.Post(url+"/api/users", "application/json", strings.NewReader(user))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	cancel()
	assert.NoError(t, <-done)

	bad := filepath.Join(t.TempDir(), "contractguard.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("contractguard:\n  contracts-dir: .\n  metrics:\n    enabeld: true\n"), 0o644))
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	err = run(context.Background(), bad, ln, discard)
	assert.EqualError(t, err, bad+":4: contractguard.metrics.enabeld: unknown property (known: metrics.enabled)")
}
