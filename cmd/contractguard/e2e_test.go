package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
)

// rawResponse is what rawRequest got back.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// rawRequest sends exactly method and target (no cleaning, no encoding)
// to base, with headers and body, and reads the response.
func rawRequest(t *testing.T, base, method, target string, headers map[string]string, body string) rawResponse {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, u.Host)
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n" + body)
	_, err = io.WriteString(c, b.String())
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	require.NoError(t, err, "%s %s", method, target)
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return rawResponse{res.StatusCode, res.Header, data}
}

// trick is a request whose path or method a router might read otherwise
// than the guard, carrying a body (or query) its contract rejects.
type trick struct {
	method, target string
	route          string // the host handler the plain form reaches
	body           string
	headers        map[string]string
}

const (
	badUser   = `{"email":"not-an-email"}`
	badRename = `{"name":5}`
)

// tricks are the routing differences searched for: case, trailing and
// repeated slashes, dot segments plain and encoded, encoded slashes and
// letters, matrix parameters, letter case with matrix parameters and with
// dot segments, query marks, a query after ';', query pairs Go's
// url.ParseQuery drops (';' in a pair, a malformed escape), '#', '\',
// NUL and non-ASCII escapes, absolute-form targets, HEAD for GET, method
// case and method-override headers.
var tricks = []trick{
	{method: "POST", target: "/api/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/API/USERS", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/Api/Users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users/", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users//", route: "POST /api/users", body: badUser},
	{method: "POST", target: "//api//users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api//users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/./api/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/./users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/x/../users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/x/%2e%2e/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/x/%2E%2E/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users/.", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users/%2e", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api%2Fusers", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api%2fusers", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users%2F", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/%75sers", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users;x=1", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api;x=1/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/API/USERS;x=1", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/Api/Users;", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users?", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users?x=1", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users/?", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users%3F", route: "POST /api/users", body: badUser},
	{method: "post", target: "/api/users", route: "POST /api/users", body: badUser},
	{method: "PUT", target: "/api/users/7", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/API/USERS/7", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/7/", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "//api/users/7", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/a%2Fb", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/7;v=1", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/API/USERS/", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/;v=1", route: "PUT /api/users/:id", body: badRename},
	{method: "GET", target: "/api/users/?debug=1", route: "GET /api/users/:id"},
	{method: "PUT", target: "/api/users/..", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/%2e%2e", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/.", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/%2e", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/API/USERS/..", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/Api/Users/%2e%2e", route: "PUT /api/users/:id", body: badRename},
	{method: "POST", target: "/api/users/7", route: "PUT /api/users/:id", body: badRename, headers: map[string]string{"X-HTTP-Method-Override": "PUT"}},
	{method: "GET", target: "/api/users/7?debug=1", route: "GET /api/users/:id"},
	{method: "HEAD", target: "/api/users/7?debug=1", route: "GET /api/users/:id"},
	{method: "GET", target: "/API/users/7?debug=1", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7/?debug=1", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7?debug", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7;debug=1", route: "GET /api/users/:id"},
	{method: "GET", target: "/API/Users/7;x=1&debug", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7?debug=1;x", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7?debug=%zz", route: "GET /api/users/:id"},
	{method: "GET", target: "/api/users/7?x=%&debug", route: "GET /api/users/:id"},
	{method: "POST", target: "/api/users#x", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users%23x", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api\\users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/users%00", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/api/%55sers", route: "POST /api/users", body: badUser},
	{method: "POST", target: "http://h/api/users", route: "POST /api/users", body: badUser},
	{method: "POST", target: "HTTP://H/API/USERS", route: "POST /api/users", body: badUser},
	{method: "POST", target: "http://h//api//users/", route: "POST /api/users", body: badUser},
	{method: "Post", target: "/api/users", route: "POST /api/users", body: badUser},
	{method: "PUT", target: "/api/users/%C0%AE", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/%ZZ", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/7%00", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "/api/users/%E2%84%AA", route: "PUT /api/users/:id", body: badRename},
	{method: "PUT", target: "http://h/api/users/7", route: "PUT /api/users/:id", body: badRename},
	{method: "POST", target: "/api/users%3Bx{", route: "POST /api/users", body: badUser},
	{method: "POST", target: "/API/USERS%3B{", route: "POST /api/users", body: badUser},
}

func (tr trick) String() string {
	s := tr.method + " " + tr.target
	for k, v := range tr.headers {
		s += " [" + k + ": " + v + "]"
	}
	return s
}

// knownGaps are the tricks that get past the proxy to the host's guarded
// handler, by host setup: each a difference between the guard's matching
// (internal/route) and the host's router that only the library can close
// (docs/proxy.md, "Routing differences"). The test asserts they still get
// through, so that a fix in the library shows up here as a failure to
// update this list. It is empty: the two the proxy's tests found, letter
// case (Express; Fastify with caseSensitive: false) and dot segments read
// as a parameter's value (without the proxy's path normalization), are
// closed in the library (TestBypass_LetterCase,
// TestBypass_DotSegmentAsParameter).
var knownGaps = map[string]map[string]bool{}

// TestServe_RoutingTricks sends each trick to the host directly and
// through the proxy: the host may route it to the guarded handler when
// asked directly (that is what makes it a trick), but through the proxy
// the rejected body never reaches that handler. The table of what each
// host routes is logged.
func TestServe_RoutingTricks(t *testing.T) {
	for _, hc := range []struct {
		name, kind string
		env        []string
		args       []string
	}{
		{"express", "express", nil, nil},
		// The guard alone, as the library is: what it reads differently
		// from Express when the proxy does not normalize the path.
		{"express-not-normalized", "express", nil, []string{"--normalize-path=false"}},
		{"fastify", "fastify", nil, nil},
		{"fastify-lenient", "fastify", []string{`FASTIFY_ROUTER={"ignoreTrailingSlash":true,"ignoreDuplicateSlashes":true,"caseSensitive":false,"useSemicolonDelimiter":true}`}, nil},
		{"java", "java", nil, nil},
	} {
		t.Run(hc.name, func(t *testing.T) {
			h := startHost(t, hc.kind, hc.env...)
			p := startProxy(t, h.url, e2eContracts(t), hc.args...)
			var table strings.Builder
			fmt.Fprintf(&table, "%-52s %-8s %s\n", "request", "host", "through the proxy")
			for _, tr := range tricks {
				before := h.counts(t).Routes[tr.route]
				direct := rawRequest(t, h.url, tr.method, tr.target, tr.headers, tr.body)
				afterDirect := h.counts(t).Routes[tr.route]
				routed := afterDirect > before
				via := rawRequest(t, p.url, tr.method, tr.target, tr.headers, tr.body)
				got := h.counts(t).Routes[tr.route] > afterDirect
				verdict := fmt.Sprintf("%d", via.status)
				if code := codeOf(via.body); code != "" {
					verdict += " " + code
				}
				if got {
					verdict += " REACHED " + tr.route
				}
				fmt.Fprintf(&table, "%-52s %-8s %s\n", tr, map[bool]string{true: "routed", false: fmt.Sprint(direct.status)}[routed], verdict)
				if knownGaps[hc.name][tr.String()] {
					assert.True(t, got, "%s: a known gap is closed: remove it from knownGaps and docs/proxy.md", tr)
					continue
				}
				assert.False(t, got, "%s reached %s through the proxy (%s)", tr, tr.route, verdict)
			}
			t.Logf("%s, routing tricks:\n%s", hc.name, table.String())
		})
	}
}

// TestServe_LetterCaseOfAStaticBesideAParameter: Express routes
// PUT /api/users/ME to its /api/users/me handler (in any letter case, the
// static route registered before the parameter one), where the path as
// written is /api/users/:id: the proxy enforces the /api/users/me
// contract too, which refuses a role the :id one lets through.
func TestServe_LetterCaseOfAStaticBesideAParameter(t *testing.T) {
	app := startNodeApp(t, `
const express = require('express');
const app = express();
app.use(express.json());
app.put('/api/users/me', (req, res) => res.json({handler: 'me', body: req.body}));
app.put('/api/users/:id', (req, res) => res.json({handler: 'id', body: req.body}));
const s = app.listen(0, '127.0.0.1', () => console.log('LISTENING ' + s.address().port));
`)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.yaml"), []byte(`
endpoint: /api/users/me
method: PUT
schema:
  type: object
  additionalProperties: false
  properties:
    name: {type: string}
---
endpoint: /api/users/:id
method: PUT
schema:
  type: object
`), 0o644))
	_, srv := testProxy(t, app, func(_ *settings, o *contractguard.Options) { o.ContractsDir = dir })
	const bad = `{"name":"Ada","role":"admin"}`
	for _, target := range []string{"/api/users/me", "/api/users/ME", "/Api/Users/Me", "/api/users/m%65", "/API/USERS/M%45"} {
		res := rawRequest(t, srv.URL, "PUT", target, nil, bad)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", target, res.body)
		assert.NotContains(t, string(res.body), `"handler":"me"`, "%s reached the /api/users/me handler", target)
	}
	res := rawRequest(t, srv.URL, "PUT", "/api/users/42", nil, bad)
	assert.Contains(t, string(res.body), `"handler":"id"`, "the control: /api/users/:id alone lets the role through")
}

// TestServe_LetterCaseBeyondASCII: Fastify with caseSensitive: false
// reads the decoded path in lower case as JavaScript's toLowerCase
// writes it, which makes the Kelvin sign (U+212A) a k: it routes
// POST /api/%E2%84%AAeys to its /api/keys handler. Through the proxy the
// /api/keys contract is enforced on it.
func TestServe_LetterCaseBeyondASCII(t *testing.T) {
	app := startNodeApp(t, `
const fastify = require('fastify');
const app = fastify({ routerOptions: { caseSensitive: false } });
app.post('/api/keys', async (req) => ({ handler: 'keys', body: req.body }));
app.listen({ port: 0, host: '127.0.0.1' }).then(() => console.log('LISTENING ' + app.server.address().port));
`)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(`
endpoint: /api/keys
method: POST
schema:
  type: object
  additionalProperties: false
  properties:
    name: {type: string}
`), 0o644))
	_, srv := testProxy(t, app, func(_ *settings, o *contractguard.Options) { o.ContractsDir = dir })
	const bad = `{"name":"k1","scope":"admin"}`
	for _, target := range []string{"/api/keys", "/api/%E2%84%AAeys", "/API/%E2%84%AAEYS"} {
		direct := rawRequest(t, app, "POST", target, nil, bad)
		assert.Contains(t, string(direct.body), `"handler":"keys"`, "%s: Fastify routes it to /api/keys", target)
		res := rawRequest(t, srv.URL, "POST", target, nil, bad)
		assert.Equal(t, http.StatusBadRequest, res.status, "%s: %s", target, res.body)
		assert.NotContains(t, string(res.body), `"handler":"keys"`, "%s reached the /api/keys handler", target)
	}
}

func codeOf(body []byte) string {
	var e struct{ Code string }
	json.Unmarshal(body, &e)
	return e.Code
}

// TestServe_Hosts: through the proxy, a valid request reaches the host
// and its response comes back unchanged; an invalid one gets the guard's
// error body and never reaches the host.
func TestServe_Hosts(t *testing.T) {
	for _, kind := range []string{"express", "fastify", "java"} {
		t.Run(kind, func(t *testing.T) {
			h := startHost(t, kind)
			p := startProxy(t, h.url, e2eContracts(t))

			// Valid: the same answer as the host gives directly.
			body := `{"email":"ada@example.com","name":"Ada"}`
			before := h.counts(t)
			direct := post(t, h.url+"/api/users", body, nil)
			via := post(t, p.url+"/api/users", body, map[string]string{"X-Forwarded-For": "203.0.113.9"})
			after := h.counts(t)
			assert.Equal(t, before.Routes["POST /api/users"]+2, after.Routes["POST /api/users"])
			assert.Equal(t, http.StatusCreated, via.status)
			assert.Equal(t, direct.status, via.status)
			for _, name := range []string{"Content-Type", "X-Host", "Set-Cookie", "Cache-Control"} {
				assert.Equal(t, direct.header.Values(name), via.header.Values(name), name)
			}
			assert.Equal(t, kind, via.header.Get("X-Host"))
			var d, v map[string]any
			require.NoError(t, json.Unmarshal(direct.body, &d))
			require.NoError(t, json.Unmarshal(via.body, &v))
			assert.Equal(t, d["url"], v["url"])
			assert.Equal(t, d["method"], v["method"])
			if kind != "java" {
				assert.Equal(t, map[string]any{"email": "ada@example.com", "name": "Ada"}, v["body"])
			} else {
				assert.Equal(t, sha(body), v["rawSha256"])
			}
			hdr := v["headers"].(map[string]any)
			assert.Equal(t, "203.0.113.9, 127.0.0.1", hdr["x-forwarded-for"], "the chain, then the client")
			assert.Equal(t, strings.TrimPrefix(p.url, "http://"), hdr["host"], "the client's Host is kept")
			if kind != "java" {
				assert.Equal(t, strings.TrimPrefix(p.url, "http://"), hdr["x-forwarded-host"])
				assert.Equal(t, "http", hdr["x-forwarded-proto"])
			}
			assert.Equal(t, int64(len(via.body)), via.contentLength)

			// Invalid: the guard's body, and the host never sees it.
			for _, tc := range []struct{ body, code string }{
				{`{"email":"nope"}`, "SCHEMA_INVALID"},
				{`{"email":"ada@example.com","name":"root"}`, "INVARIANT_VIOLATED"},
				{`{"email":"ada@example.com","email":"eve@example.com"}`, "MALFORMED_JSON"},
				{`{"email":"ada@example.com",`, "MALFORMED_JSON"},
			} {
				before := h.counts(t).Total
				res := post(t, p.url+"/api/users", tc.body, nil)
				assert.Equal(t, tc.code, codeOf(res.body), tc.body)
				assert.Equal(t, "CONTRACT_VIOLATION", errorOf(res.body))
				assert.Equal(t, before, h.counts(t).Total, "%s reached the host", tc.body)
			}

			// The ~1 KB order passes; with four violations it does not.
			before = h.counts(t)
			res := post(t, p.url+"/orders", string(orderBody(t)), nil)
			assert.Equal(t, http.StatusCreated, res.status, "%s", res.body)
			bad := strings.Replace(string(orderBody(t)), `"currency":"EUR"`, `"currency":"YEN"`, 1)
			res = post(t, p.url+"/orders", bad, nil)
			assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body))
			assert.Equal(t, before.Routes["POST /orders"]+1, h.counts(t).Routes["POST /orders"])
		})
	}
}

// TestServe_ForwardsCheckedBytes: the upstream gets exactly the bytes the
// guard checked, with their length, also when the client sent them
// chunked.
func TestServe_ForwardsCheckedBytes(t *testing.T) {
	for _, kind := range []string{"express", "java"} {
		t.Run(kind, func(t *testing.T) {
			h := startHost(t, kind)
			p := startProxy(t, h.url, e2eContracts(t))
			body := "{ \"n\" :\t1 , \"pad\": \"\\u00e9 spaces  \" }\n"
			route := "/api/raw"
			if kind == "java" {
				route = "/api/users"
				body = "{ \"email\" :\t\"ada@example.com\" }\n"
			}
			// Chunked: the client does not say the length.
			req, err := http.NewRequest("POST", p.url+route, io.MultiReader(strings.NewReader(body[:5]), strings.NewReader(body[5:])))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			var v map[string]any
			require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
			assert.Equal(t, sha(body), v["rawSha256"])
			assert.EqualValues(t, len(body), v["rawLength"])
			if kind == "express" {
				hdr := v["headers"].(map[string]any)
				assert.Equal(t, fmt.Sprint(len(body)), hdr["content-length"])
				assert.Nil(t, hdr["transfer-encoding"])
			}
		})
	}
}

// TestServe_HeaderLinesNodeDrops: Express reads the first 1,000 header
// lines of a request into req.headers and drops the rest without a word;
// through the proxy, whose Transport writes the headers sorted by name,
// 1,000 "A:" lines pushed out the X-Forwarded-For the proxy wrote (so
// req.ip was the proxy's loopback address with trust proxy) and the
// trusted user header the guard had read. The proxy refuses such a
// request (TestProxy_TooManyHeaderLines).
func TestServe_HeaderLinesNodeDrops(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t), "--user-header", "X-User")
	send := func(base string) (int, []byte) {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "GET /api/users/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%sX-User: ada\r\n\r\n", strings.Repeat("A: x\r\n", 1000))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	status, b := send(h.url)
	require.Equal(t, http.StatusOK, status, "%s", b)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Nil(t, v["headers"].(map[string]any)["x-user"], "Express read the 1,001st line: the proxy's limit may not be needed")

	status, b = send(p.url)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status, "%s", b)
	assert.Equal(t, "TOO_MANY_HEADERS", codeOf(b))
	assert.Equal(t, 1, h.counts(t).Routes["GET /api/users/:id"], "the direct request alone reached the handler")
}

// TestServe_HopByHop: hop-by-hop headers, and those named in Connection,
// stop at the proxy.
func TestServe_HopByHop(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t))
	res := rawRequest(t, p.url, "GET", "/api/users/7", map[string]string{
		"Connection": "close, X-Hop", "X-Hop": "secret", "Keep-Alive": "timeout=5",
	}, "")
	require.Equal(t, http.StatusOK, res.status)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.body, &v))
	hdr := v["headers"].(map[string]any)
	assert.Nil(t, hdr["x-hop"])
	assert.Nil(t, hdr["keep-alive"])
}

// TestServe_EventStream: an event stream is passed on as it is written,
// not when it ends: the host sends one event, and the client reads it
// while the host still holds the stream open.
func TestServe_EventStream(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t), "--write-timeout", "100ms")
	res, err := http.Get(p.url + "/events")
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	r := bufio.NewReader(res.Body)
	var events []string
	start := time.Now()
	var firstAt time.Duration
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, "data: ") {
			if len(events) == 0 {
				firstAt = time.Since(start)
			}
			events = append(events, strings.TrimSpace(line))
		}
		if err != nil {
			break
		}
	}
	// Three events 150 ms apart, the first at once: the proxy flushed it
	// before the stream ended. And the 100ms write timeout did not cut a
	// stream that lasts longer.
	assert.Equal(t, []string{"data: 0", "data: 1", "data: 2"}, events)
	assert.Less(t, firstAt, time.Since(start)-200*time.Millisecond, "the first event came with the last")
}

// TestServe_Upgrade: a protocol switch (a websocket handshake) passes, and
// then bytes flow both ways.
func TestServe_Upgrade(t *testing.T) {
	for _, kind := range []string{"express", "fastify"} {
		t.Run(kind, func(t *testing.T) {
			h := startHost(t, kind)
			p := startProxy(t, h.url, e2eContracts(t))
			u, _ := url.Parse(p.url)
			c, err := net.Dial("tcp", u.Host)
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", u.Host)
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
			assert.Equal(t, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", res.Header.Get("Sec-WebSocket-Accept"))
			for _, msg := range []string{"hello", "again"} {
				_, err = c.Write([]byte(msg))
				require.NoError(t, err)
				got := make([]byte, len(msg))
				_, err = io.ReadFull(br, got)
				require.NoError(t, err)
				assert.Equal(t, msg, string(got))
			}
		})
	}
}

// TestServe_MethodOverride: by default the override headers are removed,
// so a host that honours them (Express with method-override) routes the
// request by its real method; with --method-override the proxy applies
// the override itself, and the guard checks the method the host will see.
func TestServe_MethodOverride(t *testing.T) {
	h := startHost(t, "express")
	dir := e2eContracts(t)
	override := map[string]string{"X-HTTP-Method-Override": "PUT"}

	p := startProxy(t, h.url, dir)
	before := h.counts(t).Routes["PUT /api/users/:id"]
	res := rawRequest(t, p.url, "POST", "/api/users/7", override, `{"name":"Ada"}`)
	assert.Equal(t, http.StatusNotFound, res.status, "Express saw a POST: %s", res.body)
	assert.Equal(t, before, h.counts(t).Routes["PUT /api/users/:id"])

	p = startProxy(t, h.url, dir, "--method-override")
	res = rawRequest(t, p.url, "POST", "/api/users/7", override, badRename)
	assert.Equal(t, "SCHEMA_INVALID", codeOf(res.body), "the PUT contract was checked")
	res = rawRequest(t, p.url, "POST", "/api/users/7", override, `{"name":"Ada"}`)
	assert.Equal(t, http.StatusOK, res.status)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.body, &v))
	assert.Equal(t, "PUT", v["method"])
	assert.Nil(t, v["headers"].(map[string]any)["x-http-method-override"])
	assert.Equal(t, before+1, h.counts(t).Routes["PUT /api/users/:id"])
	res = rawRequest(t, p.url, "POST", "/api/users/7", map[string]string{"X-HTTP-Method-Override": "PU T"}, `{}`)
	assert.Equal(t, "INVALID_METHOD_OVERRIDE", codeOf(res.body))
}

// TestServe_UserHeader: with --user-header, the header a gateway sets is
// context.user: a JSON object as it is, anything else as the user's id.
func TestServe_UserHeader(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t), "--user-header", "X-User")
	for _, tc := range []struct {
		user   string // "" : no header
		amount string
		status int
		code   string
	}{
		{`{"id":"ada","limit":100}`, "50", http.StatusOK, ""},
		{`{"id":"ada","limit":100}`, "500", http.StatusUnprocessableEntity, "INVARIANT_VIOLATED"},
		{`{"id":"blocked","limit":100}`, "5", http.StatusUnprocessableEntity, "INVARIANT_VIOLATED"},
		{"", "5", http.StatusUnprocessableEntity, "INVARIANT_VIOLATED"},                        // no user: no limit, fails closed
		{"ada", "5", http.StatusUnprocessableEntity, "INVARIANT_VIOLATED"},                     // an id has no limit
		{`{"limit":100,"limit":1000}`, "500", http.StatusBadRequest, "INVALID_USER_HEADER"},    // a name twice: not a user to the guard's strict reading
		{"{\"id\":\"\xff\",\"limit\":100}", "5", http.StatusBadRequest, "INVALID_USER_HEADER"}, // not UTF-8: likewise
		{`{"limit":`, "5", http.StatusBadRequest, "INVALID_USER_HEADER"},
		{`["ada"]`, "5", http.StatusBadRequest, "INVALID_USER_HEADER"},
	} {
		headers := map[string]string{}
		if tc.user != "" {
			headers["X-User"] = tc.user
		}
		res := rawRequest(t, p.url, "POST", "/api/transfers", headers, `{"amount":`+tc.amount+`}`)
		assert.Equal(t, tc.status, res.status, "%s %s: %s", tc.user, tc.amount, res.body)
		assert.Equal(t, tc.code, codeOf(res.body), "%s %s", tc.user, tc.amount)
	}
	// Twice (a gateway that appends instead of replacing): refused.
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	require.NoError(t, err)
	defer c.Close()
	body := `{"amount":5}`
	fmt.Fprintf(c, "POST /api/transfers HTTP/1.1\r\nHost: x\r\nX-User: {\"limit\":1}\r\nX-User: {\"limit\":100}\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	assert.Equal(t, "INVALID_USER_HEADER", codeOf(b))
}

type postResult struct {
	status        int
	header        http.Header
	body          []byte
	contentLength int64
}

func post(t *testing.T, u, body string, headers map[string]string) postResult {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return postResult{res.StatusCode, res.Header, b, res.ContentLength}
}

func errorOf(body []byte) string {
	var e struct{ Error string }
	json.Unmarshal(body, &e)
	return e.Error
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestServe_Gzip: a gzip body is decoded and checked by the proxy, and the
// host gets the bytes as they came (Express's own inflating reads them); a
// bad one, or a decompression bomb, never reaches the host.
func TestServe_Gzip(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t))
	gz := func(s string) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(s))
		zw.Close()
		return buf.String()
	}
	enc := map[string]string{"Content-Encoding": "gzip"}

	res := post(t, p.url+"/api/users", gz(`{"email":"ada@example.com","name":"Ada"}`), enc)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.body, &v))
	assert.Equal(t, map[string]any{"email": "ada@example.com", "name": "Ada"}, v["body"], "Express inflated what the proxy forwarded")

	raw := gz(`{"n":1}`)
	res = post(t, p.url+"/api/raw", raw, enc)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.NoError(t, json.Unmarshal(res.body, &v))
	assert.Equal(t, sha(raw), v["rawSha256"], "the original bytes, not the decoded ones")

	bomb := gz(strings.Repeat(" ", 8<<20) + `{"email":"ada@example.com","name":"Ada"}`)
	for _, tc := range []struct{ body, code string }{
		{gz(`{"email":"nope"}`), "SCHEMA_INVALID"},
		{bomb, "PAYLOAD_TOO_LARGE"},
		{"not gzip", "MALFORMED_JSON"},
	} {
		before := h.counts(t).Total
		res := post(t, p.url+"/api/users", tc.body, enc)
		assert.Equal(t, tc.code, codeOf(res.body))
		assert.Equal(t, before, h.counts(t).Total, "%s reached the host", tc.code)
	}
	before := h.counts(t).Total
	res = post(t, p.url+"/api/users", `{"email":"ada@example.com","name":"Ada"}`, map[string]string{"Content-Encoding": "br"})
	assert.Equal(t, http.StatusUnsupportedMediaType, res.status)
	assert.Equal(t, "UNSUPPORTED_MEDIA_TYPE", codeOf(res.body))
	assert.Equal(t, before, h.counts(t).Total)
}

// TestServe_CharsetInRFC2231Form: express.json() decodes a body in the
// charset its Content-Type names, UTF-7 included, where "+ACI-" is a
// quote; Go's mime reads "charset*=utf-8'en'utf-8" over the plain charset
// beside it. Sent to Express itself, the body below names the user
// "root", which the contract forbids; the guard, which read it as UTF-8,
// saw "Ada+ACI-,…". It is refused, and never reaches the host.
func TestServe_CharsetInRFC2231Form(t *testing.T) {
	h := startHost(t, "express")
	p := startProxy(t, h.url, e2eContracts(t))
	body := `{"email":"ada@example.com","name":"Ada+ACI-,+ACI-name+ACI-:+ACI-root"}`
	ct := map[string]string{"Content-Type": "application/json; charset=utf-7; charset*=utf-8'en'utf-8"}

	res := post(t, h.url+"/api/users", body, ct)
	require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.body, &v))
	assert.Equal(t, map[string]any{"email": "ada@example.com", "name": "root"}, v["body"], "what Express reads")

	before := h.counts(t).Total
	res = post(t, p.url+"/api/users", body, ct)
	assert.Equal(t, http.StatusUnsupportedMediaType, res.status, "%s", res.body)
	assert.Equal(t, "UNSUPPORTED_MEDIA_TYPE", codeOf(res.body))
	assert.Equal(t, before, h.counts(t).Total, "Express got a body it reads otherwise than the guard")
}

// TestServe_DeflateThatIsJSON: Fastify does not decode a request's
// Content-Encoding and parses the bytes as they came. A raw deflate body
// of stored blocks can be JSON as it is: decoded, it is the document the
// guard checks; as it is, another, which Fastify would act on. Deflate
// is zlib (RFC 9110), so the guard refuses it; zlib and gzip cannot start
// a JSON text.
func TestServe_DeflateThatIsJSON(t *testing.T) {
	h := startHost(t, "fastify")
	p := startProxy(t, h.url, e2eContracts(t))
	checked := `{"email":"ada@example.com"}`
	// Each stored block is its header byte, its length and the length's
	// complement (little-endian), then its bytes; the headers are chosen
	// to read as JSON: ` {"…` opens a name the next block's `":` closes.
	var body []byte
	for _, b := range []struct {
		head byte
		data string
	}{
		{' ', strings.Repeat(" ", 0x227B)},                        // length `{"`
		{'!', checked + strings.Repeat(" ", 0xC5DD-len(checked))}, // the last block; its complement is `":`
	} {
		n := uint16(len(b.data))
		body = append(body, b.head, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		body = append(body, b.data...)
	}
	body = append(body, `,"email":"not-an-email","name":"root"}`...) // after the stream
	before := h.counts(t).Total
	res := post(t, p.url+"/api/users", string(body), map[string]string{"Content-Encoding": "deflate"})
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Equal(t, "MALFORMED_JSON", codeOf(res.body))
	assert.Equal(t, before, h.counts(t).Total, "Fastify got a body whose bytes say something else than their decoding")
}

// TestServe_HeadToAMoreSpecificGetRoute: Express and Fastify send
// HEAD /api/users/me to their GET /api/users/me handler (Fastify's HEAD
// route made from it, Express's GET route) beside a HEAD
// /api/users/:id route: through the proxy, the GET /api/users/me
// contract is enforced on it as well as the HEAD one.
func TestServe_HeadToAMoreSpecificGetRoute(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.yaml"), []byte(`
endpoint: /api/users/me
method: GET
invariants:
  - expr: "!('debug' in request.query)"
    message: debug is not for clients
---
endpoint: /api/users/:id
method: HEAD
`), 0o644))
	for name, src := range map[string]string{
		"express": `
const express = require('express');
const app = express();
app.get('/api/users/me', (req, res) => res.set('X-Handler', 'get me').json({}));
app.head('/api/users/:id', (req, res) => res.set('X-Handler', 'head id').end());
const s = app.listen(0, '127.0.0.1', () => console.log('LISTENING ' + s.address().port));
`,
		"fastify": `
const fastify = require('fastify');
const app = fastify();
app.get('/api/users/me', async (req, reply) => { reply.header('X-Handler', 'get me'); return {}; });
app.head('/api/users/:id', async (req, reply) => { reply.header('X-Handler', 'head id'); return ''; });
app.listen({ port: 0, host: '127.0.0.1' }).then(() => console.log('LISTENING ' + app.server.address().port));
`,
	} {
		t.Run(name, func(t *testing.T) {
			app := startNodeApp(t, src)
			direct := rawRequest(t, app, "HEAD", "/api/users/me?debug=1", nil, "")
			assert.Equal(t, "get me", direct.header.Get("X-Handler"), "%s sends it to the GET /api/users/me handler", name)
			_, srv := testProxy(t, app, func(_ *settings, o *contractguard.Options) { o.ContractsDir = dir })
			res := rawRequest(t, srv.URL, "HEAD", "/api/users/me?debug=1", nil, "")
			assert.Equal(t, http.StatusUnprocessableEntity, res.status)
			assert.Empty(t, res.header.Get("X-Handler"), "it reached a handler")
			res = rawRequest(t, srv.URL, "HEAD", "/api/users/me", nil, "")
			assert.Equal(t, "get me", res.header.Get("X-Handler"), "the control")
		})
	}
}
