package contractguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorTable produces every row of the specification's error table.
func TestErrorTable(t *testing.T) {
	g := testdataGuard(t, func(o *Options) { o.MaxBodyBytes = 4096; o.RequireContract = true; o.VulnerabilityScan = true })
	h := g.Middleware(&echo{})
	order := readFile(t, "testdata/bodies/order.json")

	eb := rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"ada@example.com"`, `"ada.example.com"`, 1)), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"/customer/email", "must be a valid email address"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", `{"a":1,"a":2}`), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"/a", `duplicate key "a"`}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"total":123.23`, `"total":12345`, 1)), 422, CodeInvariantViolated)
	assert.Equal(t, []Detail{{"", "orders over 10000 need a sales contact"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", `{"notes":"`+strings.Repeat("x", 5000)+`"}`), 413, CodePayloadTooLarge)
	assert.Equal(t, []Detail{{"", "body must be at most 4096 bytes"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", order, "Content-Type", "text/plain"), 415, CodeUnsupportedMediaType)
	assert.Equal(t, []Detail{{"", "Content-Type must be application/json"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/nothing/here", order), 403, CodeNoContract)
	assert.Equal(t, []Detail{{"", "no contract for POST /api/nothing/here"}}, eb.Details)

	eb = rejected(t, send(h, "POST", "/api/orders", strings.Replace(order, `"Ada Lovelace"`, `"x' OR 1=1 --"`, 1)), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"/customer/name", "possible SQL injection"}}, eb.Details)
}

// TestViolation_ErrorIsOneLine: a path holds the client's member names
// and query names as sent, a line break included ({"a\nb": 1} with
// additionalProperties false, ?x%0Ay=…): Error(), which applications log,
// quotes such a path, as NO_CONTRACT's message quotes the request's, so
// that a client cannot start a line of its own in a log.
func TestViolation_ErrorIsOneLine(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/x", Method: "POST",
		Schema: map[string]any{"type": "object", "additionalProperties": false}}}})
	for _, target := range []string{"/x", "/x?a%0Ab=%3Cscript%3Ealert(1)%3C/script%3E"} {
		body := `{"a\nb\r":1}`
		if target != "/x" {
			body = `{}`
		}
		v := g.Check("POST", target, []byte(body))
		require.NotNil(t, v, target)
		assert.NotContains(t, v.Error(), "\n", target)
		assert.NotContains(t, v.Error(), "\r", target)
		assert.Contains(t, v.Error(), `"`, target)
	}
	v := newViolation(CodeSchemaInvalid, Detail{"/a b/é", "is not allowed"})
	assert.Equal(t, "contractguard: SCHEMA_INVALID: /a b/é: is not allowed", v.Error(), "a printable path as it is")
}

func TestViolation_JSONAndError(t *testing.T) {
	v := newViolation(CodeSchemaInvalid, Detail{"/email", "must be a valid email address"}, Detail{"/age", "is required"})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/email","message":"must be a valid email address"},{"path":"/age","message":"is required"}]}`, string(b))
	assert.Equal(t, "contractguard: SCHEMA_INVALID: /email: must be a valid email address; /age: is required", v.Error())

	b, _ = json.Marshal(&Violation{Status: 403, Code: CodeNoContract})
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"NO_CONTRACT","details":[]}`, string(b))
	var _ error = v
}

func TestOnReject(t *testing.T) {
	var got *Violation
	g := testdataGuard(t, func(o *Options) {
		o.OnReject = func(w http.ResponseWriter, r *http.Request, v *Violation) {
			got = v
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(v.Status)
			fmt.Fprintf(w, `{"type":"about:blank","status":%d,"title":%q}`, v.Status, v.Code)
		}
	})
	e := &echo{}
	w := send(g.Middleware(e), "POST", "/api/users", `{"email":"a@b.co","password":"x","age":3}`)
	assert.Equal(t, 400, w.Code)
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	require.NotNil(t, got)
	assert.Equal(t, []string{"/age", "/password"}, paths(got.Details))
	assert.Zero(t, e.calls)
}

func TestViolation_WrittenWithoutHTMLEscapes(t *testing.T) {
	w := httptest.NewRecorder()
	writeViolation(w, nil, newViolation(CodeSchemaInvalid, Detail{"/a&b", "must be >= 18 <x>"}))
	assert.Equal(t, `{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/a&b","message":"must be >= 18 <x>"}]}`+"\n", w.Body.String())
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}, "X-Content-Type-Options": {"nosniff"}}, w.Header())
}

// TestSchemaMessages_ShowValuesAsWritten: an enum or const value in a
// message reads as the contract wrote it, on both schema engines: "R&D",
// not json.Marshal's HTML-safe "R\u0026D", which the client would read as
// those six characters (the body is not HTML-escaped either).
func TestSchemaMessages_ShowValuesAsWritten(t *testing.T) {
	props := map[string]any{
		"e": map[string]any{"enum": []any{"R&D", "<none>", map[string]any{"x": ">"}}},
		"c": map[string]any{"const": "R&D"},
	}
	for name, schema := range map[string]map[string]any{
		"native":  {"type": "object", "properties": props},
		"library": {"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object", "properties": props, "dependentRequired": map[string]any{"q": []any{"r"}}},
	} {
		g := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/x", Method: "POST", Schema: schema}}})
		require.Equal(t, name == "native", g.set.Load().list[0].schema.Native(), name)
		v := g.Check("POST", "/x", []byte(`{"e":"x","c":"y"}`))
		require.NotNil(t, v, name)
		assert.Equal(t, []Detail{
			{Path: "/c", Message: `must be "R&D"`},
			{Path: "/e", Message: `must be one of "R&D", "<none>", {"x":">"}`},
		}, v.Details, name)
	}
}

// TestViolation_JSONRoundTrips: whatever the strings hold (quotes,
// control characters, line separators, non-ASCII, invalid UTF-8), the body
// is valid JSON that reads back as the violation (invalid bytes as U+FFFD).
func TestViolation_JSONRoundTrips(t *testing.T) {
	v := newViolation(CodeInvariantViolated,
		Detail{"/a\"b", "tab\there\nnew line \u2028 \u0000 é 😀"},
		Detail{"", "bad \xff byte"},
		Detail{"/~1x/0", `<script>&</script>`})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.True(t, json.Valid(b), "%s", b)
	var got struct {
		Error, Code string
		Details     []Detail
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "CONTRACT_VIOLATION", got.Error)
	assert.Equal(t, CodeInvariantViolated, got.Code)
	want := slices.Clone(v.Details)
	want[1].Message = "bad \ufffd byte"
	assert.Equal(t, want, got.Details)

	empty, err := json.Marshal(newViolation(CodeNoContract))
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":"CONTRACT_VIOLATION","code":"NO_CONTRACT","details":[]}`, string(empty))
}

// TestNoContract_MessageEchoesAtMost64Bytes: the NO_CONTRACT message
// names the method and path the client sent, each clipped like any echo
// of the request (a long path or method is not sent back whole).
func TestNoContract_MessageEchoesAtMost64Bytes(t *testing.T) {
	g := mustNew(t, Options{RequireContract: true, Contracts: []Contract{{Endpoint: "/a", Method: "GET"}}})
	long := strings.Repeat("x", 100_000)
	eb := rejected(t, send(g.Middleware(&echo{}), "GET", "/"+long, ""), 403, CodeNoContract)
	require.Len(t, eb.Details, 1)
	assert.Equal(t, "no contract for GET /"+strings.Repeat("x", 63)+"…", eb.Details[0].Message)

	v := g.Check(strings.Repeat("M", 1000), "/a", nil)
	require.NotNil(t, v)
	assert.Equal(t, "no contract for "+strings.Repeat("M", 64)+"… /a", v.Details[0].Message)
}

// TestNoContract_MessageIsOneLine: the NO_CONTRACT message put the
// decoded path as it was, so /x%0Ay made a message of two lines (and a
// NUL or a right-to-left override went out raw), where every other
// message quotes what it echoes. A method or path that does not print is
// quoted; one that does is written as before.
func TestNoContract_MessageIsOneLine(t *testing.T) {
	g := mustNew(t, Options{RequireContract: true, Contracts: []Contract{{Endpoint: "/a", Method: "GET"}}})
	h := g.Middleware(&echo{})
	for target, want := range map[string]string{
		"/x%0Ay":        `no contract for GET "/x\ny"`,
		"/x%0D%0Ay":     `no contract for GET "/x\r\ny"`,
		"/x%00y":        `no contract for GET "/x\x00y"`,
		"/%E2%80%AEabc": `no contract for GET "/\u202eabc"`,
		"/x%20y":        `no contract for GET /x y`,
	} {
		eb := rejected(t, send(h, "GET", target, ""), 403, CodeNoContract)
		require.Len(t, eb.Details, 1, target)
		assert.Equal(t, want, eb.Details[0].Message, target)
	}
	v := g.Check("PO\nST", "/b", nil)
	require.NotNil(t, v)
	assert.Equal(t, `no contract for "PO\nST" /b`, v.Details[0].Message)
}

// TestContentEncoding_MessageIsOneLine: an encoding the guard does not
// decode is echoed in its 415 message, quoted when it holds what does not
// print (a header a Go caller of CheckRequest set; over HTTP, a tab), as
// every echo of the request is.
func TestContentEncoding_MessageIsOneLine(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/a", Method: "POST", Schema: map[string]any{}}}})
	for enc, want := range map[string]string{
		"br\nx-injected: 1": `Content-Encoding "br\nx-injected: 1" is not decoded: send the body as it is, or gzip or deflate it`,
		"br\tzstd":          `Content-Encoding "br\tzstd" is not decoded: send the body as it is, or gzip or deflate it`,
		"br":                `Content-Encoding br is not decoded: send the body as it is, or gzip or deflate it`,
	} {
		r := httptest.NewRequest("POST", "/a", strings.NewReader("{}"))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Content-Encoding", enc)
		v := g.CheckRequest(r)
		require.NotNil(t, v, enc)
		assert.Equal(t, CodeUnsupportedMediaType, v.Code)
		assert.Equal(t, []Detail{{"", want}}, v.Details, enc)
	}
}

// TestTypedDecode_DetailsSortedByPath: a body a typed handler's T cannot
// hold, found by decoding it (here with the guard off, which checks no
// schema), lists its failures by path like any SCHEMA_INVALID, not in
// the order of T's fields.
func TestTypedDecode_DetailsSortedByPath(t *testing.T) {
	type T struct {
		B int `json:"b"`
		A int `json:"a"`
	}
	g := mustNew(t, Options{Disabled: true})
	h := Handle(g, func(http.ResponseWriter, *http.Request, T) {})
	eb := rejected(t, send(h, "POST", "/x", `{"b":"x","a":"y"}`), 400, CodeSchemaInvalid)
	assert.Equal(t, []string{"/a", "/b"}, paths(eb.Details))
}

// TestTypedDecode_MethodErrorIsOneLine: a field whose type decodes
// itself (net.IP's UnmarshalText, regexp's, a UnmarshalJSON) fails with
// its error, which may echo the value as it came: a line break sent in
// the value ("1\n2") stays out of the message, quoted as NO_CONTRACT
// quotes a path, so that the message and the Violation's Error() stay
// one line.
func TestTypedDecode_MethodErrorIsOneLine(t *testing.T) {
	type T struct {
		IP net.IP         `json:"ip,omitempty"`
		Re *regexp.Regexp `json:"re,omitempty"`
	}
	g := mustNew(t, Options{Logger: discard})
	h := Handle(g, func(http.ResponseWriter, *http.Request, T) {})
	for _, body := range []string{`{"ip":"1\n2"}`, `{"re":"(\r\n"}`} {
		eb := rejected(t, send(h, "POST", "/x", body), 400, CodeSchemaInvalid)
		require.Len(t, eb.Details, 1, body)
		d := eb.Details[0]
		assert.True(t, strings.HasPrefix(d.Message, "is invalid: "), d.Message)
		assert.NotContains(t, d.Message, "\n", body)
		assert.NotContains(t, d.Message, "\r", body)
	}
}

// TestLoadError_DuplicateRouteIsOneLine: the error of two contracts for
// one route names the first one's endpoint and file, quoted when they
// hold a line break, so that the LoadError stays one line.
func TestLoadError_DuplicateRouteIsOneLine(t *testing.T) {
	c := Contract{Endpoint: "/u\n/x", Method: "POST"}
	_, err := New(Options{Contracts: []Contract{c, c}})
	require.Error(t, err)
	assert.Equal(t, `Options.Contracts[1]: "POST /u\n/x": a contract for "POST /u\n/x" is already defined at Options.Contracts[0]`, err.Error())

	_, err = New(Options{
		ContractsFS: mapFS(map[string]string{"a\nb.yaml": "endpoint: /v\nmethod: GET\n"}),
		Contracts:   []Contract{{Endpoint: "/v", Method: "GET"}},
	})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), `already defined at "a\nb.yaml:1"`)
}

// TestLoadError_MissingFolderIsOneLine: a contracts folder that cannot
// be read was named quoted, but the operating system's error after it
// names the folder as given: a line break in its name made the error two
// lines (found by helper-94 through contractguard lint).
func TestLoadError_MissingFolderIsOneLine(t *testing.T) {
	_, err := New(Options{ContractsDir: filepath.Join(t.TempDir(), "nl\ndir", "nothere")})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), `nl\ndir`)
}

// TestRejection_DropsAContentLengthSetBefore: a Content-Length an outer
// middleware set on the response is dropped with the rejection, as
// http.Error drops it (found by review: net/http cut the error body at
// that length).
func TestRejection_DropsAContentLengthSetBefore(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/a", Method: "POST",
		Schema: map[string]any{"type": "object", "required": []any{"x"}}}}})
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	res, err := http.Post(srv.URL+"/a", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, 400, res.StatusCode)
	assert.True(t, json.Valid(b), "%q", b)
}

// FuzzQuoteVsJSONText holds the error writer's quoting to jsontext's, the
// reference it stands in for on plain ASCII.
func FuzzQuoteVsJSONText(f *testing.F) {
	for _, s := range []string{"", "/email", "must be >= 0", `a"b`, `a\b`, "tab\t", "\x7f", "caf\u00e9", "\xff", "\u2028", "<&>", "~", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := jsontext.AppendQuote([]byte("x"), s) // invalid UTF-8: U+FFFD, and an error the writer ignores
		got := appendQuote([]byte("x"), s)
		require.Equal(t, string(want), string(got), "%q", s)
	})
}
