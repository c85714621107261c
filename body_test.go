package contractguard

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/adler32"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBodyRules gives each rule of the strict body reader a passing and a
// failing request through the middleware.
func TestBodyRules(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 2048, MaxDepth: 8, Contracts: []Contract{{
		Endpoint: "/t", Method: "POST", Schema: map[string]any{},
	}}})
	h := g.Middleware(&echo{})
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		rule, pass, fail string
		status           int
		code, path, msg  string
	}{
		{"size limit", strings.Repeat(" ", 2040) + "{}", strings.Repeat(" ", 2050) + "{}", 413, CodePayloadTooLarge, "", "body must be at most 2048 bytes"},
		{"valid JSON", `{"a":[1,2]}`, `{"a":[1,2}`, 400, CodeMalformedJSON, "/a", "invalid JSON"},
		{"no trailing data", `{"a":1}  `, `{"a":1} {"a":2}`, 400, CodeMalformedJSON, "", "unexpected data after the JSON value"},
		{"valid UTF-8", `{"a":"café"}`, "{\"a\":\"caf\xe9\"}", 400, CodeMalformedJSON, "/a", "invalid UTF-8"},
		{"no lone surrogates", `{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, 400, CodeMalformedJSON, "/a", "surrogate"},
		{"no duplicate keys", `{"role":"user","r":1}`, `{"role":"user","role":"admin"}`, 400, CodeMalformedJSON, "/role", `duplicate key "role"`},
		{"duplicates after unescaping", `{"r\u006fla":"x","role":"y"}`, `{"role":"user","r\u006fle":"admin"}`, 400, CodeMalformedJSON, "/role", `duplicate key "role"`},
		{"no keys equal but for case", `{"total":5,"totals":1}`, `{"total":5,"TOTAL":1}`, 400, CodeMalformedJSON, "/TOTAL", "only in letter case"},
		{"depth limit", deep(8), deep(9), 400, CodeMalformedJSON, "/0/0/0/0/0/0/0/0", "nesting deeper than 8 levels"},
		{"number length", `[` + strings.Repeat("1", 1000) + `]`, `[` + strings.Repeat("1", 1001) + `]`, 400, CodeMalformedJSON, "/0", "number literal longer than 1000 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			w := send(h, "POST", "/t", tt.pass)
			assert.Equal(t, 200, w.Code, w.Body.String())
			eb := rejected(t, send(h, "POST", "/t", tt.fail), tt.status, tt.code)
			require.Len(t, eb.Details, 1)
			assert.Equal(t, tt.path, eb.Details[0].Path)
			assert.Contains(t, eb.Details[0].Message, tt.msg)
		})
	}
}

func TestBodyRules_NumbersKeepFullPrecision(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"properties": map[string]any{"id": map[string]any{"maximum": 9007199254740993}}},
	}}})
	e := &echo{}
	h := g.Middleware(e)
	assert.Equal(t, 200, send(h, "POST", "/t", `{"id":9007199254740993}`).Code)
	v, _ := Body(e.r)
	assert.Equal(t, "9007199254740993", string(v.(map[string]any)["id"].(interface{ String() string }).String()))
	rejected(t, send(h, "POST", "/t", `{"id":9007199254740994}`), 400, CodeSchemaInvalid)
}

func TestBody_EmptyIsNull(t *testing.T) {
	g := testdataGuard(t)
	eb := rejected(t, send(g.Middleware(&echo{}), "POST", "/api/orders", ""), 400, CodeSchemaInvalid)
	assert.Equal(t, []Detail{{"", "must be an object, not null"}}, eb.Details)

	g2 := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/n", Method: "POST", Schema: map[string]any{"type": "null"}}}})
	e := &echo{}
	assert.Equal(t, 200, send(g2.Middleware(e), "POST", "/n", "").Code)
	v, ok := Body(e.r)
	assert.True(t, ok)
	assert.Nil(t, v)
}

func TestBody_NoSchemaNonJSONIsNotParsed(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/upload", Method: "POST",
		Invariants: []Invariant{{Expr: "request.headers['content-type'] == 'text/csv'", Message: "csv only"}}}}})
	e := &echo{}
	w := send(g.Middleware(e), "POST", "/upload", "a,b\n1,2\n", "Content-Type", "text/csv")
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Equal(t, "a,b\n1,2\n", string(e.body))
	_, ok := Body(e.r)
	assert.False(t, ok)
	rejected(t, send(g.Middleware(e), "POST", "/upload", `{"a":1,"a":2}`), 400, CodeMalformedJSON)
}

func TestBody_LargeBodyByteIdentical(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/big", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"rows": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []string{"id"}}},
		}},
		Invariants: []Invariant{{Expr: "size(request.body.rows) > 0", Message: "rows"}},
	}}})
	var b strings.Builder
	b.WriteString("{\n  \"rows\": [")
	for i := 0; b.Len() < 900<<10; i++ {
		if i > 0 {
			b.WriteString(",\n    ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "row \u00e9 %d", "value": %d.50e-1 }`, i, i, i)
	}
	b.WriteString("]\n}\n")
	body := b.String()
	require.Greater(t, len(body), 900<<10)

	e := &echo{}
	srv := httptest.NewServer(g.Middleware(e))
	defer srv.Close()
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
		req, _ := http.NewRequest("POST", srv.URL+"/big", rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "chunked=%v", chunked)
		assert.True(t, bytes.Equal([]byte(body), e.body), "handler got the identical bytes (chunked=%v)", chunked)
		assert.True(t, bytes.Equal([]byte(body), got))
		assert.Equal(t, int64(len(body)), e.r.ContentLength)
	}
}

func TestBody_TooLargeChunkedIsNotReadToTheEnd(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 1024, Contracts: []Contract{{Endpoint: "/t", Method: "POST"}}})
	e := &echo{}
	src := &countingReader{n: 10 << 20}
	r := httptest.NewRequest("POST", "/t", src)
	r.ContentLength = -1
	w := httptest.NewRecorder()
	g.Middleware(e).ServeHTTP(w, r)
	rejected(t, w, 413, CodePayloadTooLarge)
	assert.Zero(t, e.calls)
	assert.LessOrEqual(t, src.read, 4096, "stopped just past the limit")
}

func TestBody_ContentLengthOverLimitIsRejectedUnread(t *testing.T) {
	g := mustNew(t, Options{MaxBodyBytes: 1024, Contracts: []Contract{{Endpoint: "/t", Method: "POST"}}})
	src := &countingReader{n: 2048}
	r := httptest.NewRequest("POST", "/t", src)
	r.ContentLength = 2048
	w := httptest.NewRecorder()
	g.Middleware(&echo{}).ServeHTTP(w, r)
	rejected(t, w, 413, CodePayloadTooLarge)
	assert.Zero(t, src.read)
}

func TestBody_MediaTypes(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{"type": "object"}}}})
	h := g.Middleware(&echo{})
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", "application/vnd.api+json", "application/x+json"} {
		assert.Equal(t, 200, send(h, "POST", "/t", `{}`, "Content-Type", ct).Code, "%q", ct)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/jsonx", "text/json", "application/json;;", "json"} {
		rejected(t, send(h, "POST", "/t", `{}`, "Content-Type", ct), 415, CodeUnsupportedMediaType)
	}
	r := httptest.NewRequest("POST", "/t", strings.NewReader("{}"))
	r.Header.Add("Content-Type", "application/json")
	r.Header.Add("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	rejected(t, w, 415, CodeUnsupportedMediaType)
}

// TestBody_CharsetInRFC2231Form: mime.ParseMediaType reads RFC 2231
// parameters (charset*=…, charset*0=…) over a plain charset= beside them,
// which Express (the content-type package) and Spring do not read at all:
// with "charset=utf-7; charset*=utf-8'en'utf-8" the guard read utf-8 and
// checked the bytes as they are, while express.json() decodes them as
// UTF-7, where "+ACI-" is a quote: {"name":"x+ACI-,+ACI-role+ACI-:+ACI-admin"}
// is {"name":"x","role":"admin"} to the handler. A charset in that form is
// refused, whatever it says.
func TestBody_CharsetInRFC2231Form(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "additionalProperties": false}}}})
	h := g.Middleware(&echo{})
	body := `{"name":"x+ACI-,+ACI-role+ACI-:+ACI-admin"}`
	for _, ct := range []string{
		"application/json; charset=utf-7; charset*=utf-8''utf-8",
		"application/json; charset*=utf-8''utf-8; charset=utf-7",
		"application/json; charset=utf-7; charset*0=utf-8",
		"application/json; charset=utf-7; CHARSET*0*=utf-8''utf-8",
		"application/json; charset*=utf-8''utf-8",
		"application/json; charset=utf-7;charset*=utf-8''utf-8",
		"application/json; charset=utf-7;\tcharset* =utf-8''utf-8",
		"application/json; charset=utf-7;\u00a0charset*=utf-8''utf-8", // mime trims Unicode spaces
	} {
		rejected(t, send(h, "POST", "/t", body, "Content-Type", ct), 415, CodeUnsupportedMediaType)
	}
	assert.Equal(t, 200, send(h, "POST", "/t", body, "Content-Type", "application/json; charset=utf-8").Code)
	// A parameter whose name only ends in charset is no charset, to mime
	// or Express: x-charset*=utf-8''a is x-charset.
	for _, ct := range []string{
		"application/json; x-charset*=utf-8''a",
		"application/json; charset=utf-8; mycharset*=utf-8''a",
	} {
		assert.Equal(t, 200, send(h, "POST", "/t", `{"name":"x"}`, "Content-Type", ct).Code, ct)
	}
}

// TestBody_NoBodyStaysNoBody: a request without a body reaches the
// handler with http.NoBody, as Go's server gives it, on the guard's first
// pass and on a later one (a guard inside another of its own); it got a
// reader of no bytes, which a handler testing r.Body == http.NoBody reads
// as a body sent, and which a request made from it sends chunked.
func TestBody_NoBodyStaysNoBody(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/t", Method: "GET"}, {Endpoint: "/t", Method: "POST"}}})
	for _, method := range []string{"GET", "POST"} {
		for name, wrap := range map[string]func(http.Handler) http.Handler{
			"first pass": g.Middleware,
			"later pass": func(h http.Handler) http.Handler { return g.Middleware(g.Middleware(h)) },
		} {
			e := &echo{}
			assert.Equal(t, 200, send(wrap(e), method, "/t", "").Code)
			require.Equal(t, 1, e.calls)
			assert.Equal(t, http.NoBody, e.r.Body, "%s, %s", method, name)
			assert.Zero(t, e.r.ContentLength)
		}
	}
}

// gzipped and deflated compress b as a client would.
func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func deflated(t testing.TB, b []byte, wrap bool) []byte {
	var buf bytes.Buffer
	var zw io.WriteCloser
	if wrap {
		zw = zlib.NewWriter(&buf)
	} else {
		w, err := flate.NewWriter(&buf, flate.DefaultCompression)
		require.NoError(t, err)
		zw = w
	}
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestBody_ContentEncoding: a gzip or deflate body is decoded and checked;
// the handler gets the bytes as they came (its own decompressor works) and
// the decoded value from Body; an encoding the guard does not decode is
// 415, saying so.
func TestBody_ContentEncoding(t *testing.T) {
	g := testdataGuard(t)
	var got []byte
	var parsed any
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		parsed, _ = Body(r)
	}))
	good := []byte(`{"email":"ada@example.com","password":"correct horse","age":36}`)
	bad := []byte(`{"email":"ada.example.com","password":"correct horse","age":36}`)
	for enc, compress := range map[string]func([]byte) []byte{
		"gzip":     func(b []byte) []byte { return gzipped(t, b) },
		"x-gzip":   func(b []byte) []byte { return gzipped(t, b) },
		"deflate":  func(b []byte) []byte { return deflated(t, b, true) },
		"GZIP":     func(b []byte) []byte { return gzipped(t, b) },
		"identity": func(b []byte) []byte { return b },
		" gzip ":   func(b []byte) []byte { return gzipped(t, b) },
	} {
		header := enc
		body := compress(good)
		w := send(h, "POST", "/api/users", string(body), "Content-Encoding", header)
		require.Equal(t, 200, w.Code, enc)
		assert.Equal(t, body, got, "%s: the handler gets the bytes as they came", enc)
		assert.Equal(t, map[string]any{"email": "ada@example.com", "password": "correct horse", "age": json.Number("36")}, parsed, enc)
		eb := rejected(t, send(h, "POST", "/api/users", string(compress(bad)), "Content-Encoding", header), 400, CodeSchemaInvalid)
		assert.Equal(t, []Detail{{"/email", "must be a valid email address"}}, eb.Details, enc)
	}
	for enc, msg := range map[string]string{
		"br":         "Content-Encoding br is not decoded: send the body as it is, or gzip or deflate it",
		"gzip, gzip": "Content-Encoding gzip, gzip is not decoded: send the body as it is, or gzip or deflate it",
		"zstd":       "Content-Encoding zstd is not decoded: send the body as it is, or gzip or deflate it",
	} {
		eb := rejected(t, send(h, "POST", "/api/users", string(good), "Content-Encoding", enc), 415, CodeUnsupportedMediaType)
		assert.Equal(t, []Detail{{"", msg}}, eb.Details, enc)
	}
	eb := rejected(t, send(h, "POST", "/api/users", string(good), "Content-Encoding", "gzip"), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"", "the gzip body could not be decoded"}}, eb.Details)
	truncated := gzipped(t, good)
	eb = rejected(t, send(h, "POST", "/api/users", string(truncated[:len(truncated)-6]), "Content-Encoding", "gzip"), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"", "the gzip body could not be decoded"}}, eb.Details)
	// x-gzip is named as the client sent it, whether its header or its
	// end is what fails.
	for _, body := range [][]byte{good, truncated[:len(truncated)-6]} {
		eb = rejected(t, send(h, "POST", "/api/users", string(body), "Content-Encoding", "x-gzip"), 400, CodeMalformedJSON)
		assert.Equal(t, []Detail{{"", "the x-gzip body could not be decoded"}}, eb.Details)
	}
}

// TestBody_RulesThatReadTheBodyTakeJSON: a contract without a schema
// whose rules read the body takes a JSON body only, as one with a schema
// does: its rules would see another media type's body as null, and pass
// it, while Go handlers decode JSON whatever the Content-Type says. A
// contract whose rules read nothing of the body takes any body.
func TestBody_RulesThatReadTheBodyTakeJSON(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{
		{Endpoint: "/has", Method: "POST", Invariants: []Invariant{{Expr: "!has(request.body.admin)", Message: "refused"}}},
		{Endpoint: "/optional", Method: "POST", Invariants: []Invariant{{Expr: "request.body.?qty.orValue(0) <= 100", Message: "refused"}}},
		{Endpoint: "/query", Method: "POST", Invariants: []Invariant{{Expr: "!('debug' in request.query)", Message: "refused"}}},
	}})
	app := &echo{}
	h := g.Middleware(app)
	body := `{"qty":1000,"admin":true}`
	for _, path := range []string{"/has", "/optional"} {
		rejected(t, send(h, "POST", path, body), 422, CodeInvariantViolated)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonp"} {
			eb := rejected(t, send(h, "POST", path, body, "Content-Type", ct), 415, CodeUnsupportedMediaType)
			assert.Equal(t, []Detail{{"", "Content-Type must be application/json"}}, eb.Details, path+" "+ct)
		}
	}
	require.Equal(t, 200, send(h, "POST", "/query", "qty=1000", "Content-Type", "application/x-www-form-urlencoded").Code)
	assert.Equal(t, "qty=1000", string(app.body))
	rejected(t, send(h, "POST", "/query?debug=1", "qty=1000", "Content-Type", "application/x-www-form-urlencoded"), 422, CodeInvariantViolated)
}

// TestBody_EncodedBodyIsAllItsEncoding: a body is decoded whole, as a
// host's decoder reads it, or refused: every member of a gzip body is
// checked (a handler's gzip reader reads them all), and bytes after the
// compressed stream, or deflate without zlib's wrapper, are 400. Raw
// deflate of stored blocks can be JSON as it is, which a host that does
// not decode the body reads: the guard would check one document and the
// host act on another.
func TestBody_EncodedBodyIsAllItsEncoding(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{
		{Endpoint: "/qty", Method: "PUT", Schema: map[string]any{"type": "integer", "maximum": 100}},
		{Endpoint: "/users", Method: "POST", Schema: map[string]any{"type": "object", "required": []any{"email"},
			"properties": map[string]any{"email": map[string]any{"type": "string", "format": "email"}}}},
	}})
	var got []byte
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	members := append(gzipped(t, []byte("1")), gzipped(t, []byte("0000"))...)
	rejected(t, send(h, "PUT", "/qty", string(members), "Content-Encoding", "gzip"), 400, CodeSchemaInvalid) // 10000
	members = append(gzipped(t, []byte("1")), gzipped(t, []byte("0"))...)
	require.Equal(t, 200, send(h, "PUT", "/qty", string(members), "Content-Encoding", "gzip").Code, "10, from two members")
	assert.Equal(t, members, got)

	// A stored block of spaces, then a last one holding the checked JSON:
	// decoded, {"email":"ada@example.com"}; as it is, {"{\x84\xdd   …": {…},
	// "email":"not-an-email"}, which a host that does not decode accepts.
	poly := append([]byte{' ', '{', '"', 0x84, 0xDD}, bytes.Repeat([]byte(" "), 0x227B)...)
	poly = append(poly, '!', 0xDD, 0xC5, '"', ':')
	checked := `{"email":"ada@example.com"}`
	poly = append(poly, checked...)
	poly = append(poly, bytes.Repeat([]byte(" "), 0xC5DD-len(checked))...)
	poly = append(poly, `,"email":"not-an-email"}`...)
	plain, err := io.ReadAll(flate.NewReader(bytes.NewReader(poly)))
	require.NoError(t, err, "the polyglot is raw deflate")
	require.JSONEq(t, checked, string(plain))

	good := []byte(`{"email":"ada@example.com"}`)
	for name, tc := range map[string]struct {
		enc  string
		body []byte
	}{
		"raw deflate":              {"deflate", deflated(t, good, false)},
		"raw deflate that is JSON": {"deflate", poly},
		"zlib, then more":          {"deflate", append(deflated(t, good, true), ' ')},
		"gzip, then more":          {"gzip", append(gzipped(t, good), "{}"...)},
	} {
		eb := rejected(t, send(h, "POST", "/users", string(tc.body), "Content-Encoding", tc.enc), 400, CodeMalformedJSON)
		assert.Equal(t, []Detail{{"", "the " + tc.enc + " body could not be decoded"}}, eb.Details, name)
	}
}

// TestBody_DeflateThatAlsoReadsAsRawDeflate: a zlib stream read as raw
// DEFLATE starts with a stored block (zlib's first byte, CM 8, is BFINAL 0
// and BTYPE 00), whose length is the next two bytes and its complement
// the two after. A body whose bytes match so is valid zlib and raw DEFLATE
// at once, two documents: here zlib's (what the guard checked) has role
// "adA @\u07ffmin", and raw DEFLATE's, what a host that decodes
// Content-Encoding: deflate with flate.NewReader (a common Go idiom)
// reads, has role "admin": the raw reading's second stored block header
// is five bytes inside the zlib reading's string, valid UTF-8 there.
// Found by review: such a body passed, and the handler read role admin.
// It is refused, as raw deflate is; a zlib body whose first bytes are no
// stored block's header, every other, still passes.
func TestBody_DeflateThatAlsoReadsAsRawDeflate(t *testing.T) {
	h, role := roleGuard(t)
	// Raw DEFLATE reads a stored block of 0x0909 bytes, then at 2311 a
	// final stored block ('A', 20 40, DF BF) of 0x4020 bytes.
	head, tail, doc, body := zlibAlsoRaw(t, 'A')
	asRaw, err := io.ReadAll(flate.NewReader(bytes.NewReader(body)))
	require.NoError(t, err, "the body is raw DEFLATE too")
	require.JSONEq(t, `{"pad":"`+strings.Repeat("p", 2311-len(head)-len(tail))+`","role":"admin"}`, string(asRaw))

	eb := rejected(t, send(h, "POST", "/users", string(body), "Content-Encoding", "deflate"), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"", "the deflate body could not be decoded"}}, eb.Details)
	assert.Empty(t, *role, "the handler never ran")

	// The same document, deflated by a client, passes.
	w := send(h, "POST", "/users", string(deflated(t, []byte(doc), true)), "Content-Encoding", "deflate")
	assert.Equal(t, 200, w.Code, w.Body.String())

	// A zlib body whose first five bytes head a raw stored block by chance
	// (here a stored zlib block of 0xFEFE bytes: raw, a block of 0x0101),
	// whose raw reading then fails (the JSON after it is no DEFLATE), is
	// zlib alone: it passes (found by review: refused on its five bytes,
	// one zlib body in 65,536).
	plain := `{"role":"user","pad":"` + strings.Repeat("p", 0xFEFE-len(`{"role":"user","pad":""}`)) + `"}`
	chance := append([]byte{0x78, 0x01, 0x01, 0xFE, 0xFE, 0x01, 0x01}, plain...)
	chance = binary.BigEndian.AppendUint32(chance, adler32.Checksum([]byte(plain)))
	_, err = io.ReadAll(flate.NewReader(bytes.NewReader(chance)))
	require.Error(t, err, "no raw DEFLATE past its first block")
	w = send(h, "POST", "/users", string(chance), "Content-Encoding", "deflate")
	assert.Equal(t, 200, w.Code, w.Body.String())
}

// TestBody_DecompressionBomb: the limit is on the decoded size, and
// decoding stops there: 64 MiB of spaces in 64 KiB of gzip is 413, and
// the guard never holds more than the limit of it.
func TestBody_DecompressionBomb(t *testing.T) {
	g := testdataGuard(t)
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the bomb reached the handler") }))
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 64 {
		_, err = zw.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	bomb := buf.String()
	require.Less(t, len(bomb), 1<<20, "the compressed bomb fits the limit: only its decoded size is over")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	eb := rejected(t, send(h, "POST", "/api/users", bomb, "Content-Encoding", "gzip"), 413, CodePayloadTooLarge)
	runtime.ReadMemStats(&after)
	assert.Equal(t, []Detail{{"", "body must be at most 1048576 bytes once decoded"}}, eb.Details)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "decoding stopped at the limit, not at 64 MiB")

	type T struct {
		Email string `json:"email"`
	}
	typed := Handle(g, func(w http.ResponseWriter, r *http.Request, in T) { t.Error("the bomb reached the typed handler") })
	rejected(t, send(typed, "POST", "/typed", bomb, "Content-Encoding", "gzip"), 413, CodePayloadTooLarge)
}

// TestBody_ContentEncodingTyped: a typed handler decodes a gzip body into
// T, with the guard on and off.
func TestBody_ContentEncodingTyped(t *testing.T) {
	type T struct {
		Email string `json:"email" jsonschema:"format=email"`
	}
	for _, disabled := range []bool{false, true} {
		g := mustNew(t, Options{Disabled: disabled, Logger: discard})
		var got T
		h := Handle(g, func(w http.ResponseWriter, r *http.Request, in T) { got = in })
		assert.Equal(t, 200, send(h, "POST", "/t", string(gzipped(t, []byte(`{"email":"ada@example.com"}`))), "Content-Encoding", "gzip").Code)
		assert.Equal(t, T{"ada@example.com"}, got)
		if !disabled {
			rejected(t, send(h, "POST", "/t", string(gzipped(t, []byte(`{"email":"ada"}`))), "Content-Encoding", "gzip"), 400, CodeSchemaInvalid)
		}
	}
}

// TestBody_LargestLimit: MaxBodyBytes math.MaxInt64 (no limit, in
// effect) reads bodies as any other limit does. The bytes that prove a
// body too large, limit+1, wrapped to a negative count: every request
// with a body panicked in make, and an encoded one decoded to nothing
// (400) through a LimitReader of a negative count.
func TestBody_LargestLimit(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, MaxBodyBytes: math.MaxInt64, Contracts: []Contract{{
		Endpoint: "/t", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"maximum": 1}}},
	}}})
	e := &echo{}
	h := g.Middleware(e)
	require.NotPanics(t, func() {
		assert.Equal(t, 200, send(h, "POST", "/t", `{"a":1}`).Code)
		assert.Equal(t, `{"a":1}`, string(e.body))
		rejected(t, send(h, "POST", "/t", `{"a":2}`), 400, CodeSchemaInvalid)
		for _, enc := range []string{"gzip", "deflate"} {
			compress := func(b []byte) []byte { return gzipped(t, b) }
			if enc == "deflate" {
				compress = func(b []byte) []byte { return deflated(t, b, true) }
			}
			w := send(h, "POST", "/t", string(compress([]byte(`{"a":1}`))), "Content-Encoding", enc)
			assert.Equal(t, 200, w.Code, "%s: %s", enc, w.Body.String())
			rejected(t, send(h, "POST", "/t", string(compress([]byte(`{"a":2}`))), "Content-Encoding", enc), 400, CodeSchemaInvalid)
		}
	})
}

// TestBody_AnnouncedLengthIsNotAllocatedUpFront: the buffer for a body
// was made the size its Content-Length announced, up to the limit, before
// any byte of it arrived: with a large limit a request of headers alone
// (Content-Length: 1 TiB, under a 1 TiB limit) made the process allocate
// it, and die out of memory; at the default limit, each such request
// held a mebibyte. Past 64 KiB, the buffer grows with what arrives.
func TestBody_AnnouncedLengthIsNotAllocatedUpFront(t *testing.T) {
	for _, limit := range []int64{DefaultMaxBodyBytes, 256 << 20, math.MaxInt64} {
		g := mustNew(t, Options{Logger: discard, MaxBodyBytes: limit, Contracts: []Contract{{Endpoint: "/t", Method: "POST", Schema: map[string]any{}}}})
		e := &echo{}
		h := g.Middleware(e)
		r := httptest.NewRequest("POST", "/t", strings.NewReader(`{"a":1}`))
		r.ContentLength = limit // a lie: the body ends long before
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := httptest.NewRecorder()
		require.NotPanics(t, func() { h.ServeHTTP(w, r) })
		runtime.ReadMemStats(&after)
		assert.Equal(t, 200, w.Code, w.Body.String())
		assert.Equal(t, `{"a":1}`, string(e.body))
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "limit %d", limit)
	}
}

// TestBody_DeflateWhoseRawReadingFailsAfterItsDocument: a zlib body whose
// raw DEFLATE reading yields a whole JSON document and only then fails
// is refused too: a host that decodes with json.NewDecoder over
// flate.NewReader (the idiom of the test above) stops at the document's
// end and never sees the error (found by review: the raw reading was
// refused only when it read to its end, so ending it with a block that
// does not decode passed role "admin" to the handler as
// "ad@ @\u07ffmin" to the guard).
func TestBody_DeflateWhoseRawReadingFailsAfterItsDocument(t *testing.T) {
	h, role := roleGuard(t)
	// As in TestBody_DeflateThatAlsoReadsAsRawDeflate, but the raw
	// reading's second stored block ('@', 20 40, DF BF) is not final: the
	// spaces after it head a block whose length does not match.
	_, _, _, body := zlibAlsoRaw(t, '@')
	_, err := io.ReadAll(flate.NewReader(bytes.NewReader(body)))
	require.Error(t, err, "the raw reading fails after its document")

	eb := rejected(t, send(h, "POST", "/users", string(body), "Content-Encoding", "deflate"), 400, CodeMalformedJSON)
	assert.Equal(t, []Detail{{"", "the deflate body could not be decoded"}}, eb.Details)
	assert.Empty(t, *role, "the handler never ran")
}

// TestBody_DeflateThatIsJSONAsItIs: zlib's header can be JSON as it is.
// CMF 0x38 (CM 8, a 2 KiB window) is '8', and FLG 0x4F ('O'; 0x11, 0x8D
// and 0xCB too) makes the pair a multiple of 31 without a preset
// dictionary: valid zlib, whose bytes json.NewDecoder, in a handler that
// does not decode Content-Encoding (most Go handlers), reads as the
// number 8 and stops. The guard checked the decoded document (100,
// within the contract) and the handler acted on 8 (found by review). It
// is refused, as raw deflate that is JSON as it is; a zlib body with the
// common header (0x78, 'x', no JSON) still passes.
func TestBody_DeflateThatIsJSONAsItIs(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{
		{Endpoint: "/qty", Method: "PUT", Schema: map[string]any{"type": "integer", "minimum": 10}},
	}})
	var got any
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = nil
		_ = json.NewDecoder(r.Body).Decode(&got)
	}))
	zl := deflated(t, []byte("100"), true)
	require.Equal(t, byte(0x78), zl[0])
	w := send(h, "PUT", "/qty", string(zl), "Content-Encoding", "deflate")
	require.Equal(t, 200, w.Code, w.Body.String())

	for _, flg := range []byte{0x11, 0x4F, 0x8D, 0xCB} {
		body := append([]byte{0x38, flg}, zl[2:]...)
		zr, err := zlib.NewReader(bytes.NewReader(body))
		require.NoError(t, err, "%#x: valid zlib", flg)
		checked, err := io.ReadAll(zr)
		require.NoError(t, err)
		require.Equal(t, "100", string(checked))
		var asIs any
		require.NoError(t, json.NewDecoder(bytes.NewReader(body)).Decode(&asIs))
		require.Equal(t, 8.0, asIs, "%#x: 8 as it is", flg)

		got = nil
		eb := rejected(t, send(h, "PUT", "/qty", string(body), "Content-Encoding", "deflate"), 400, CodeMalformedJSON)
		assert.Equal(t, []Detail{{"", "the deflate body could not be decoded"}}, eb.Details, "%#x", flg)
		assert.Nil(t, got, "%#x: the handler never ran", flg)
	}
}

// roleGuard is a guard whose contract refuses role admin, around a
// handler that decodes the body as raw DEFLATE (flate.NewReader, a
// common Go idiom for Content-Encoding: deflate), and the role it read.
func roleGuard(t *testing.T) (http.Handler, *string) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/users", Method: "POST",
		Schema:     map[string]any{"type": "object"},
		Invariants: []Invariant{{Expr: "request.body.role != 'admin'", Message: "no admins"}},
	}}})
	var role string
	return g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v struct{ Role string }
		if json.NewDecoder(flate.NewReader(r.Body)).Decode(&v) == nil {
			role = v.Role
		}
	})), &role
}

// zlibAlsoRaw is a zlib body (CMF 0x58, FLG 0x09, one final stored block
// of 0xF6F6 bytes, its header 0x09, F6 F6, 09 09, then Adler-32) whose
// document doc has role "ad…min" where, read as raw DEFLATE (a stored
// block of 0x0909 bytes, the first 2311 of the zlib block's), the five
// bytes marker, 20 40, DF BF head a second stored block of 0x4020 bytes
// inside the string. It checks the body reads as zlib to doc.
func zlibAlsoRaw(t *testing.T, marker byte) (head, tail, doc string, body []byte) {
	head, tail = `{"pad":"`, `","role":"ad`
	doc = head + strings.Repeat("p", 2311-len(head)-len(tail)) + tail + string(marker) + " \x40\xDF\xBF" + `min"}`
	doc += strings.Repeat(" ", 0xF6F6-len(doc))
	body = append([]byte{0x58, 0x09, 0x09, 0xF6, 0xF6, 0x09, 0x09}, doc...)
	body = binary.BigEndian.AppendUint32(body, adler32.Checksum([]byte(doc)))
	zr, err := zlib.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	checked, err := io.ReadAll(zr)
	require.NoError(t, err, "the body is zlib")
	require.Equal(t, doc, string(checked))
	return head, tail, doc, body
}

// TestCheckRequest_PutsTheBodyBack: CheckRequest read r.Body and left it
// empty, so a caller that checks and then hands r on (a framework
// adapter) gave its handler no body: it now puts back the bytes it
// checked, as they came (gzip too), as httputil.DumpRequest does.
func TestCheckRequest_PutsTheBodyBack(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/n", Method: "POST",
		Schema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"maximum": 10}}}}}})
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(`{"n":2}`))
	zw.Close()
	for _, tc := range []struct {
		body     []byte
		encoding string
	}{{[]byte(`{"n":1}`), ""}, {zipped.Bytes(), "gzip"}} {
		r := httptest.NewRequest("POST", "/n", bytes.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		if tc.encoding != "" {
			r.Header.Set("Content-Encoding", tc.encoding)
		}
		require.Nil(t, g.CheckRequest(r))
		got, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		assert.Equal(t, tc.body, got, "the bytes checked, as they came")
	}
	r := httptest.NewRequest("POST", "/n", strings.NewReader(`{"n":11}`))
	r.Header.Set("Content-Type", "application/json")
	require.NotNil(t, g.CheckRequest(r))
}
