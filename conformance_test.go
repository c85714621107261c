package contractguard

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A conformance file: contracts (the text of a contract file), options,
// and requests with the verdict each must get. See testdata/conformance.
type conformanceFile struct {
	Description string `yaml:"description"`
	Contracts   string `yaml:"contracts"`
	Options     struct {
		RequireContract   bool           `yaml:"requireContract"`
		MaxBodyBytes      int64          `yaml:"maxBodyBytes"`
		MaxDepth          int            `yaml:"maxDepth"`
		VulnerabilityScan bool           `yaml:"vulnerabilityScan"`
		User              map[string]any `yaml:"user"`
	} `yaml:"options"`
	// Type names a Go type (conformanceTypes) that is the twin of the
	// file's contracts: the cases run through Handle[T] too, at TypedRoute.
	Type       string            `yaml:"type"`
	TypedRoute string            `yaml:"typedRoute"`
	Cases      []conformanceCase `yaml:"cases"`
}

type conformanceCase struct {
	Name       string            `yaml:"name"`
	Method     string            `yaml:"method"`
	Path       string            `yaml:"path"` // as sent on the wire, query included
	Headers    map[string]string `yaml:"headers"`
	Body       string            `yaml:"body"`
	BodyBase64 string            `yaml:"bodyBase64"` // for bytes YAML cannot hold
	Chunked    bool              `yaml:"chunked"`
	Status     int               `yaml:"status"` // 200: passed to the handler
	Code       string            `yaml:"code"`
	Details    []Detail          `yaml:"details"` // exact, when given
	Paths      []string          `yaml:"paths"`   // detail paths, when given
	// NotIn lists the runners a case cannot express: "check" (no headers,
	// no transfer encoding) or "typed" (with the reason in a comment).
	NotIn []string `yaml:"notIn"`
}

// conformanceTypes are the Go twins of conformance files.
var conformanceTypes = map[string]func(g *Guard) http.Handler{
	"OrderForm": func(g *Guard) http.Handler {
		return Handle(g, func(w http.ResponseWriter, r *http.Request, in OrderForm) { echoBody(w, r) })
	},
}

func (c conformanceCase) body(t testing.TB) []byte {
	if c.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(c.BodyBase64)
		require.NoError(t, err)
		return b
	}
	return []byte(c.Body)
}

func (c conformanceCase) skips(runner string) bool {
	for _, n := range c.NotIn {
		if n == runner {
			return true
		}
	}
	return false
}

// echoBody is the handler behind the guard: it answers 200 with the body
// it received.
func echoBody(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Handler", "ran")
	w.Write(b)
}

func loadConformance(t *testing.T) map[string]conformanceFile {
	files, err := filepath.Glob("testdata/conformance/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]conformanceFile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var cf conformanceFile
		require.NoError(t, yaml.UnmarshalWithOptions(b, &cf, yaml.Strict()), f)
		out[filepath.Base(f)] = cf
	}
	return out
}

func (cf conformanceFile) guard(t *testing.T, withContracts bool) *Guard {
	o := Options{
		RequireContract:   cf.Options.RequireContract,
		MaxBodyBytes:      cf.Options.MaxBodyBytes,
		MaxDepth:          cf.Options.MaxDepth,
		VulnerabilityScan: cf.Options.VulnerabilityScan,
		Logger:            discard,
	}
	if cf.Options.User != nil {
		u := cf.Options.User
		o.User = func(*http.Request) any { return u }
	}
	if withContracts {
		o.ContractsFS = fstest.MapFS{"contracts.yaml": {Data: []byte(cf.Contracts)}}
	}
	return mustNew(t, o)
}

type verdict struct {
	status int
	body   []byte
	ran    bool // the handler ran
}

// TestConformance runs every case of testdata/conformance through the
// middleware over a real server with raw requests, through Check, and,
// for files with a Go twin, through Handle[T]: all must give the verdict
// the file states.
func TestConformance(t *testing.T) {
	total := 0
	runs := map[string]int{}
	for name, cf := range loadConformance(t) {
		t.Run(name, func(t *testing.T) {
			g := cf.guard(t, true)
			srv := httptest.NewServer(g.Middleware(http.HandlerFunc(echoBody)))
			defer srv.Close()
			var typed http.Handler
			if cf.Type != "" {
				mux := http.NewServeMux()
				mux.Handle(cf.TypedRoute, conformanceTypes[cf.Type](cf.guard(t, false)))
				typed = mux
			}
			for _, c := range cf.Cases {
				total++
				t.Run(c.Name, func(t *testing.T) {
					require.NotEmpty(t, c.Method)
					require.NotZero(t, c.Status, "every case states its status")
					check := func(runner string, v verdict) {
						runs[runner]++
						if strings.EqualFold(c.Method, "HEAD") && runner != "check" {
							// No body in a response to HEAD: the status and whether the handler ran.
							assert.Equal(t, c.Status, v.status, runner)
							assert.Equal(t, c.Status == 200, v.ran, runner)
							return
						}
						if c.Status == 200 {
							assert.Equal(t, 200, v.status, "%s: %s", runner, v.body)
							assert.True(t, v.ran, "%s: the handler ran", runner)
							if runner != "check" {
								assert.Equal(t, c.body(t), v.body, "%s: the handler got the very bytes", runner)
							}
							return
						}
						assert.False(t, v.ran, "%s: the handler must not run", runner)
						require.Equal(t, c.Status, v.status, "%s: %s", runner, v.body)
						var eb errorBody
						require.NoError(t, json.Unmarshal(v.body, &eb), "%s: %s", runner, v.body)
						assert.Equal(t, "CONTRACT_VIOLATION", eb.Error)
						assert.Equal(t, c.Code, eb.Code, runner)
						if c.Details != nil {
							assert.Equal(t, c.Details, eb.Details, runner)
						}
						if c.Paths != nil {
							assert.Equal(t, c.Paths, paths(eb.Details), runner)
						}
					}
					check("middleware", rawRequest(t, srv, c))
					if !c.skips("check") {
						check("check", viaCheck(g, c.Method, c.Path, c.body(t)))
					}
					if typed != nil && !c.skips("typed") {
						check("typed", viaHandler(typed, c, c.body(t)))
					}
				})
			}
		})
	}
	fmt.Printf("conformance: %d cases; runs: %v\n", total, runs)
	assert.GreaterOrEqual(t, total, 150)
	for _, via := range []string{"middleware", "check", "typed"} {
		assert.Positive(t, runs[via], "no case ran through %s", via)
	}
}

func viaCheck(g *Guard, method, path string, body []byte) verdict {
	v := g.Check(method, path, body)
	if v == nil {
		return verdict{status: 200, ran: true}
	}
	b, _ := v.MarshalJSON()
	return verdict{status: v.Status, body: b}
}

func viaHandler(h http.Handler, c conformanceCase, body []byte) verdict {
	r := httptest.NewRequest(c.Method, "/", bytes.NewReader(body))
	u, _ := r.URL.Parse(c.Path)
	r.URL = u
	r.RequestURI = c.Path
	setHeaders(r.Header, c, body)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return verdict{status: w.Code, body: w.Body.Bytes(), ran: w.Header().Get("X-Handler") == "ran"}
}

func setHeaders(h http.Header, c conformanceCase, body []byte) {
	if len(body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
}

// rawRequest writes the request byte for byte, so that no client cleans
// the path or the method, and reads the response.
func rawRequest(t *testing.T, srv *httptest.Server, c conformanceCase) verdict {
	t.Helper()
	conn, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	body := c.body(t)
	h := http.Header{}
	setHeaders(h, c, body)
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: conformance\r\nConnection: close\r\n", c.Method, c.Path)
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&req, "%s: %s\r\n", k, h.Get(k))
	}
	if c.Chunked {
		req.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for len(body) > 0 {
			n := min(len(body), 1000)
			fmt.Fprintf(&req, "%x\r\n%s\r\n", n, body[:n])
			body = body[n:]
		}
		req.WriteString("0\r\n\r\n")
	} else {
		req.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
		req.Write(body)
	}
	_, err = conn.Write(req.Bytes())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: c.Method})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return verdict{status: resp.StatusCode, body: b, ran: resp.Header.Get("X-Handler") == "ran"}
}

func TestConformanceFilesAreValidContracts(t *testing.T) {
	for name, cf := range loadConformance(t) {
		_, err := New(Options{ContractsFS: fstest.MapFS{"contracts.yaml": {Data: []byte(cf.Contracts)}}})
		assert.NoError(t, err, name)
		assert.NotEmpty(t, strings.TrimSpace(cf.Description), name)
	}
}
