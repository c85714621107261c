package contractguard

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/contractguard/contractguard/internal/route"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/scan"
	"github.com/contractguard/contractguard/internal/shape"
)

type commentForm struct {
	Text    string `json:"text"`
	Snippet string `json:"snippet,omitempty" jsonschema_extras:"x-contractguard-scan=false"`
}

func TestScan_OffByDefault(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/c", Method: "POST"}}})
	assert.Equal(t, 200, send(g.Middleware(&echo{}), "POST", "/c", `{"q":"1' OR '1'='1"}`).Code)
	assert.Nil(t, g.Check("POST", "/c?q=%3Cscript%3E", []byte(`{"q":"<script>alert(1)</script>"}`)))
}

func TestScan_TypedOptOutWithJSONSchemaExtras(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true})
	r := chi.NewRouter()
	Post(r, g, "/comments", func(w http.ResponseWriter, r *http.Request, in commentForm) { w.WriteHeader(201) })
	assert.Equal(t, 201, send(r, "POST", "/comments", `{"text":"hi","snippet":"<script>alert(1)</script>"}`).Code)
	eb := rejected(t, send(r, "POST", "/comments", `{"text":"<script>alert(1)</script>"}`), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"/text", "possible cross-site scripting"}}, eb.Details)
}

// TestScan_SkippedOnlyWhenEveryContractSkips: a file contract and a typed
// contract on one route; the typed one opts snippet out, the file one does
// not, so snippet is scanned.
func TestScan_SkippedOnlyWhenEveryContractSkips(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/comments", Method: "POST"}}})
	r := chi.NewRouter()
	r.Use(g.Middleware)
	Post(r, g, "/comments", func(w http.ResponseWriter, r *http.Request, in commentForm) { w.WriteHeader(201) })
	eb := rejected(t, send(r, "POST", "/comments", `{"text":"hi","snippet":"<script>alert(1)</script>"}`), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"/snippet", "possible cross-site scripting"}}, eb.Details)
	assert.Equal(t, 201, send(r, "POST", "/comments", `{"text":"hi"}`).Code)
}

// TestScan_SkippedOnlyWhenEveryContractSkips_Mirror: the same with the
// roles swapped (the file contract opts snippet out, the typed one does
// not: scanned), and with both opting out (not scanned), so that neither
// contract's order nor which one opts out decides alone.
func TestScan_SkippedOnlyWhenEveryContractSkips_Mirror(t *testing.T) {
	type plainForm struct {
		Text    string `json:"text"`
		Snippet string `json:"snippet,omitempty"`
	}
	optOut := map[string]any{"type": "object", "properties": map[string]any{
		"snippet": map[string]any{"type": "string", "x-contractguard-scan": false},
	}}
	attack := `{"text":"hi","snippet":"<script>alert(1)</script>"}`

	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/plain", Method: "POST", Schema: optOut}}})
	r := chi.NewRouter()
	r.Use(g.Middleware)
	Post(r, g, "/plain", func(w http.ResponseWriter, r *http.Request, in plainForm) { w.WriteHeader(201) })
	eb := rejected(t, send(r, "POST", "/plain", attack), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"/snippet", "possible cross-site scripting"}}, eb.Details)
	assert.Equal(t, 201, send(r, "POST", "/plain", `{"text":"hi"}`).Code)

	g = mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/comments", Method: "POST", Schema: optOut}}})
	r = chi.NewRouter()
	r.Use(g.Middleware)
	Post(r, g, "/comments", func(w http.ResponseWriter, r *http.Request, in commentForm) { w.WriteHeader(201) })
	assert.Equal(t, 201, send(r, "POST", "/comments", attack).Code, "both contracts opt snippet out")
	rejected(t, send(r, "POST", "/comments", `{"text":"<script>alert(1)</script>"}`), 403, CodeVulnerabilityDetected)
}

func TestScan_NonJSONBodyOfAContractWithoutSchema(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	assert.Equal(t, 200, send(h, "POST", "/raw", "hello there", "Content-Type", "text/plain").Code)
	eb := rejected(t, send(h, "POST", "/raw", "; rm -rf /", "Content-Type", "text/plain"), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"", "possible command injection"}}, eb.Details)
}

// TestScan_JSONAfterAByteOrderMark: a body the guard does not parse (a
// Content-Type other than JSON, on a contract that does not read the
// body) is scanned as JSON too, as a handler that decodes JSON whatever
// the Content-Type says reads it. Python's json.loads of the body's bytes
// (Flask's request.get_json(force=True)) drops a leading UTF-8 byte order
// mark, as Express's and Fastify's JSON parsers do, so that a body
// starting with one is JSON to it, "1' OR '1'='1" below. The scan's JSON
// reading stopped at the mark (no JSON to json.NewDecoder) and passed it
// (found by review). It reads past one mark, as they do.
func TestScan_JSONAfterAByteOrderMark(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	body := `{"q":"1\u0027 OR \u00271\u0027=\u00271"}`
	for _, ct := range []string{"text/plain", "application/octet-stream"} {
		for _, b := range []string{body, "\xef\xbb\xbf" + body, "\xef\xbb\xbf \n" + body} {
			eb := rejected(t, send(h, "POST", "/raw", b, "Content-Type", ct), 403, CodeVulnerabilityDetected)
			assert.Equal(t, []Detail{{"", "possible SQL injection"}}, eb.Details, "%q %q", ct, b)
		}
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", "\xef\xbb\xbf"+`{"q":"O\u0027Brien"}`, "Content-Type", "text/plain").Code)
}

// TestScan_JSONInAnotherCharset: the scan reads a JSON body as UTF-8,
// and a contract without a schema took a JSON body of another charset
// (it does not read the body), which express.json() decodes: in UTF-7,
// "+ACc-" is a quote, so {"q":"1+ACc- OR +ACc-1+ACc-=+ACc-1"} passed the
// scan as it reads it and was "1' OR '1'='1" to the host (found by
// review); so did "application/json; charset=utf-7; foo", whose
// parameters Go's mime refuses (not JSON to the guard, which scanned its
// bytes), and whose first charset Express reads. With the scan on, such a
// body is refused (415), as on a contract that reads it; without the
// scan, nothing reads it, and it passes as before.
func TestScan_JSONInAnotherCharset(t *testing.T) {
	contracts := []Contract{{Endpoint: "/raw", Method: "POST"}}
	body := `{"q":"1+ACc- OR +ACc-1+ACc-=+ACc-1"}`
	h := mustNew(t, Options{VulnerabilityScan: true, Contracts: contracts}).Middleware(&echo{})
	for _, ct := range []string{"application/json; charset=utf-7", "application/json; charset=UTF-7", "application/json; charset=utf-16"} {
		eb := rejected(t, send(h, "POST", "/raw", body, "Content-Type", ct), 415, CodeUnsupportedMediaType)
		assert.Equal(t, []Detail{{"", "charset must be utf-8"}}, eb.Details, ct)
	}
	// Parameters mime refuses (an unnamed one, a charset twice): Express
	// still reads the first charset, utf-7.
	for _, ct := range []string{"application/json; charset=utf-7; foo", "application/json; charset=utf-7; charset=utf-8", "Application/JSON ;charset=utf-7;;"} {
		eb := rejected(t, send(h, "POST", "/raw", body, "Content-Type", ct), 415, CodeUnsupportedMediaType)
		assert.Equal(t, []Detail{{"", "Content-Type must be application/json"}}, eb.Details, ct)
	}
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "text/plain"} {
		assert.Equal(t, 200, send(h, "POST", "/raw", body, "Content-Type", ct).Code, ct)
	}
	h = mustNew(t, Options{Contracts: contracts}).Middleware(&echo{})
	assert.Equal(t, 200, send(h, "POST", "/raw", body, "Content-Type", "application/json; charset=utf-7").Code, "no scan: not read")
}

// TestScan_FormBodyDecoded: a form body is scanned as the handler reads
// it, its names and values decoded (r.ParseForm, and Express's parser,
// which keeps a pair with a ';' or a malformed escape), as well as as its
// bytes. A browser encodes every quote and bracket of a form, so a scan
// of the bytes alone let "q=1%27%20or%20%271%27%3D%271" through.
func TestScan_FormBodyDecoded(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	for _, tc := range []struct{ body, ct, want string }{
		{"q=1%27%20or%20%271%27%3D%271", "application/x-www-form-urlencoded", "possible SQL injection"},
		{"name=x&q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "application/x-www-form-urlencoded; charset=UTF-8", "possible cross-site scripting"},
		{"user%5B%24ne%5D=1", "Application/X-WWW-Form-Urlencoded", "possible NoSQL operator injection"},
		{"a=1;q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "application/x-www-form-urlencoded", "possible cross-site scripting"},
		{"q=1%27%20or%20%271%27%3D%271&x=\xff", "application/x-www-form-urlencoded", "possible SQL injection"}, // not UTF-8: still a form
	} {
		eb := rejected(t, send(h, "POST", "/raw", tc.body, "Content-Type", tc.ct), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.body)
	}
	for _, body := range []string{"q=Shoes+%26+More&name=O%27Brien", "comment=Hello%2C+world%21&price=%2430", "a=%zz"} {
		assert.Equal(t, 200, send(h, "POST", "/raw", body, "Content-Type", "application/x-www-form-urlencoded").Code, body)
	}
	// Another type is its bytes only: text/plain is not decoded by anyone.
	assert.Equal(t, 200, send(h, "POST", "/raw", "q=1%27%20or%20%271%27%3D%271", "Content-Type", "text/plain").Code)
}

// TestScan_MultipartFormFieldsDecoded: a multipart form is scanned as the
// handler reads its fields (r.FormValue, r.MultipartForm): each part's
// name, file name and text, decoded as the multipart reader decodes it.
// A scan of the body's bytes alone let through a field encoded
// quoted-printable ("1=27 OR =271=27=3D=271" is "1' OR '1'='1" to the
// handler), and every field of a form with a binary file in it, a body
// that is not UTF-8 and so was not scanned at all; the same field
// urlencoded was refused.
func TestScan_MultipartFormFieldsDecoded(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition, header, content string) string {
		return "--XyZ\r\nContent-Disposition: form-data; " + disposition + "\r\n" + header + "\r\n" + content + "\r\n"
	}
	const end = "--XyZ--\r\n"
	png := part(`name="f"; filename="a.png"`, "Content-Type: image/png\r\n", "\x89PNG\r\n\x1a\n\x00\xff")
	for _, tc := range []struct{ body, ct, want string }{
		{part(`name="q"`, "Content-Transfer-Encoding: quoted-printable\r\n", "1=27 OR =271=27=3D=271") + end, "multipart/form-data; boundary=XyZ", "possible SQL injection"},
		{png + part(`name="q"`, "", "1' OR '1'='1") + end, "multipart/form-data; boundary=XyZ", "possible SQL injection"},
		{png + part(`name="q"`, "", "<script>alert(1)</script>") + end, "multipart/form-data; boundary=\"XyZ\"", "possible cross-site scripting"},
		{png + part(`name="user[$ne]"`, "", "1") + end, "multipart/form-data; boundary=XyZ", "possible NoSQL operator injection"},
		{png + part(`name="q"; filename="<svg onload=alert(1)>"`, "", "x") + end, "multipart/form-data; boundary=XyZ", "possible cross-site scripting"},
		{png + part(`name="q"`, "", "; cat /etc/passwd") + end, "multipart/mixed; boundary=XyZ", "possible command injection"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", tc.body, "Content-Type", tc.ct), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.body)
	}
	// An image among text fields that are text; a file whose bytes are
	// not UTF-8 is no text, as a body that is not.
	for _, body := range []string{
		png + part(`name="title"`, "", "Shoes & More") + part(`name="note"`, "", "O'Brien's photo, 30% off") + end,
		png + part(`name="q"`, "Content-Transfer-Encoding: quoted-printable\r\n", "caf=C3=A9 au lait") + end,
		part(`name="f"; filename="x.bin"`, "", "\x00\x00../../etc/passwd\xff") + end,
	} {
		assert.Equal(t, 200, send(h, "POST", "/raw", body, "Content-Type", "multipart/form-data; boundary=XyZ").Code, body)
	}
}

// TestScan_MultipartNameOfABinaryPart: a part's name is scanned whatever
// its content: a field or file whose bytes are not UTF-8 is no text, but
// its name, "password[$ne]" or "__proto__[admin]", is what a parser that
// nests names (multer's append-field, qs) reads, and is scanned as a
// text field's is. The name went with the content it came with, and a
// byte not UTF-8 in the content took the name out of the scan too.
func TestScan_MultipartNameOfABinaryPart(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition, content string) string {
		return "--XyZ\r\nContent-Disposition: form-data; " + disposition + "\r\n\r\n" + content + "\r\n"
	}
	const end = "--XyZ--\r\n"
	for _, tc := range []struct{ body, want string }{
		{part(`name="user"`, "ada") + part(`name="password[$ne]"`, "\xff") + end, "possible NoSQL operator injection"},
		{part(`name="__proto__[admin]"`, "\x00\xff") + end, "possible prototype pollution"},
		{part(`name="user[$ne]"; filename="a.bin"`, "\x00\xff") + end, "possible NoSQL operator injection"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", tc.body, "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.body)
	}
	// The binary content itself is still no text: not scanned.
	assert.Equal(t, 200, send(h, "POST", "/raw", part(`name="blob"`, "\x00../../etc/passwd\xff")+end,
		"Content-Type", "multipart/form-data; boundary=XyZ").Code)
}

// TestScan_MultipartFileNameNotUTF8: a file name is scanned whatever its
// bytes, as the part's name is: FileName gives a handler
// "<svg onload=alert(1)>\xff.png" as sent (and an RFC 2231 filename*
// with %FF, percent-decoded), which a page that lists uploads shows. It went with
// the test for a content, "is it UTF-8?", and an image's file name with
// one byte that is not was not scanned.
func TestScan_MultipartFileNameNotUTF8(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	file := func(filename string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; " + filename + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, fn := range []string{"filename=\"<svg onload=alert(1)>\xff.png\"", `filename*=UTF-8''%3Csvg%20onload%3Dalert%281%29%3E%FF.png`} {
		eb := rejected(t, send(h, "POST", "/raw", file(fn), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", "possible cross-site scripting"}}, eb.Details, fn)
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", file("filename=\"caf\xe9.png\""), "Content-Type", "multipart/form-data; boundary=XyZ").Code,
		"a Latin-1 file name is a name")
}

// TestScan_MultipartFileNameAsSent: a file name is scanned also as the
// client sent it, with the folders FileName drops (filepath.Base, as RFC
// 7578 asks): werkzeug's FileStorage.filename, Spring's
// getOriginalFilename and formidable's originalFilename give a handler
// "../../../var/www/html/shell.php" as sent, which a handler that saves
// the upload under that name writes outside its folder. Only FileName's
// "shell.php" was scanned, so an upload of an image (a body that is not
// UTF-8, whose bytes are not scanned whole) under such a name passed.
func TestScan_MultipartFileNameAsSent(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	file := func(filename string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; " + filename + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, fn := range []string{`filename="../../../var/www/html/shell.php"`, `filename*=UTF-8''..%2F..%2Fetc%2Fcron.d%2Fx`, `filename="a/../../x.php"`, `filename="/etc/passwd"`} {
		eb := rejected(t, send(h, "POST", "/raw", file(fn), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", "possible path traversal"}}, eb.Details, fn)
	}
	for _, fn := range []string{`filename="photo.png"`, `filename="C:\Users\Ada\Pictures\photo 1.png"`, `filename="2024/05/holiday.png"`} {
		assert.Equal(t, 200, send(h, "POST", "/raw", file(fn), "Content-Type", "multipart/form-data; boundary=XyZ").Code, fn)
	}
}

// TestScan_JSONBodyOfAnotherType: a JSON body sent with another
// Content-Type to a contract that does not parse it is scanned as
// json.NewDecoder(r.Body) reads it, whatever the type says, as well as
// as its bytes: its escapes decoded, duplicate names and invalid UTF-8
// allowed. A scan of the bytes alone let "\u0027 OR …" and
// "\u005f_proto__" through to a handler that decodes them.
func TestScan_JSONBodyOfAnotherType(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	for _, tc := range []struct{ body, ct, want string }{
		{`{"q":"1\u0027 OR \u00271\u0027=\u00271"}`, "text/plain", "possible SQL injection"},
		{` [ "\u003cscript\u003ealert(1)\u003c/script\u003e" ]`, "text/plain;charset=UTF-8", "possible cross-site scripting"},
		{`"1\u0027 OR \u00271\u0027=\u00271"`, "application/octet-stream", "possible SQL injection"},
		{`{"\u005f_proto__":{"isAdmin":true}}`, "text/plain", "possible prototype pollution"},
		{`{"a":{"constructo\u0072":{"prototype":{"isAdmin":true}}}}`, "text/plain", "possible prototype pollution"},
		{`{"user":{"\u0024ne":1}}`, "text/plain", "possible NoSQL operator injection"},
		{`{"q":"fine","q":"\u003cscript\u003ealert(1)\u003c/script\u003e"}`, "text/plain", "possible cross-site scripting"}, // the last one is Go's
		{"{\"q\":\"1\\u0027 OR \\u00271\\u0027=\\u00271\",\"x\":\"\xff\"}", "text/plain", "possible SQL injection"},         // not UTF-8: still JSON to Go
		{`{"q":"1\u0027 OR \u00271\u0027=\u00271"} trailing`, "text/plain", "possible SQL injection"},                       // json.Decoder reads the first value
	} {
		eb := rejected(t, send(h, "POST", "/raw", tc.body, "Content-Type", tc.ct), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.body)
	}
	for _, body := range []string{
		`{"name":"O\u0027Brien","note":"Please select a plan"}`,
		`{"constructor":"x","prototype":{"a":1}}`,
		`{"a":{"constructor":1},"prototype":{}}`,
		`[1, 2.5, true, null, "\u00e9t\u00e9"]`,
		`{"q":"1\u0027 OR`, // not JSON to anyone
	} {
		assert.Equal(t, 200, send(h, "POST", "/raw", body, "Content-Type", "text/plain").Code, body)
	}
}

func TestScan_MessagesNeverEchoThePayload(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "POST"}}})
	payload := "SECRETMARKER' UNION SELECT password FROM users --"
	escaped := url.QueryEscape(payload)
	// In a value, a member name (at any depth), a query value and a query
	// name: the 403 names where and what, never the payload.
	for _, tc := range []struct{ target, body string }{
		{"/c", `{"q":"` + payload + `"}`},
		{"/c", `{"` + payload + `":1}`},
		{"/c", `{"a":[{"` + payload + `":{"b":"<script>x</script>"}}]}`},
		{"/c?q=" + escaped, `{}`},
		{"/c?" + escaped + "=1", `{}`},
	} {
		w := send(g.Middleware(&echo{}), "POST", tc.target, tc.body)
		rejected(t, w, 403, CodeVulnerabilityDetected)
		assert.NotContains(t, w.Body.String(), "SECRETMARKER", tc)
		assert.NotContains(t, w.Body.String(), "UNION", tc)
	}
}

func TestScan_CountsAsBlocked(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "POST"}}})
	assert.NotNil(t, g.Check("POST", "/c", []byte(`{"a":"../../etc/passwd"}`)))
	assert.Equal(t, int64(1), g.Metrics().RequestsBlocked)
}

// TestScan_ManyFindingsOneDetailEach: a body full of findings gets one
// detail per path. Forty members flagged for their names and their values
// are one detail, at the object: a flagged name is reported there, and
// its value, whose pointer would repeat it, is not.
func TestScan_ManyFindingsOneDetailEach(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "POST"}}})
	var b strings.Builder
	b.WriteString("{")
	want := make([]Detail, 0, 40)
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"$where%02d":"<script>alert(%d)</script>"`, i, i)
	}
	want = append(want, Detail{"", "possible NoSQL operator injection"})
	b.WriteString("}")
	v := g.Check("POST", "/c", []byte(b.String()))
	if assert.NotNil(t, v) {
		assert.Equal(t, CodeVulnerabilityDetected, v.Code)
		assert.Equal(t, want, v.Details)
	}
}

// TestScan_FlaggedNamesDoNotCrowdOutTheRest: an object of many flagged
// names is one detail, at the object (TestScan_ManyFindingsOneDetailEach);
// its names used up the list of 100 details one each before they were
// made one, so that a finding elsewhere in the body was left out and the
// rejection said that more were not listed, of the one detail it had.
func TestScan_FlaggedNamesDoNotCrowdOutTheRest(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "POST"}}})
	var b strings.Builder
	b.WriteString(`{"a":{`)
	for i := range 3 * maxDetails {
		fmt.Fprintf(&b, `"$where%03d":1,`, i)
	}
	b.WriteString(`"x":1},"z":"<script>alert(1)</script>"}`)
	v := g.Check("POST", "/c", []byte(b.String()))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/a", "possible NoSQL operator injection"}, {"/z", "possible cross-site scripting"}}, v.Details)
}

// TestScan_QueryAndPathParameters: the query and the path parameters are
// scanned with the body, the parameters by the matched pattern, or by the
// router's on a typed route without a file contract.
func TestScan_QueryAndPathParameters(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/files/{name}/v/{version}", Method: "POST"}}})
	assert.Nil(t, g.Check("POST", "/files/report.pdf/v/2?q=shoes", []byte(`{}`)))
	v := g.Check("POST", "/files/..%2F..%2Fetc%2Fpasswd/v/2?q=%3Cscript%3Ealert(1)%3C/script%3E&user%5B%24ne%5D=1", []byte(`{"a":"; rm -rf /"}`))
	if assert.NotNil(t, v) {
		assert.Equal(t, []Detail{
			{"/a", "possible command injection"},
			{"param:name", "possible path traversal"},
			{"query", "possible NoSQL operator injection"}, // user[$ne]: the name is the payload
			{"query:q", "possible cross-site scripting"},
		}, v.Details)
	}

	r := chi.NewRouter()
	Post(r, mustNew(t, Options{VulnerabilityScan: true}), "/users/{id}/comments", func(w http.ResponseWriter, r *http.Request, in commentForm) { w.WriteHeader(201) })
	assert.Equal(t, 201, send(r, "POST", "/users/42/comments", `{"text":"hi"}`).Code)
	eb := rejected(t, send(r, "POST", "/users/1%20UNION%20SELECT%20password%20FROM%20users/comments", `{"text":"hi"}`), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"param:id", "possible SQL injection"}}, eb.Details)
}

// TestScan_QueryPairsGoDrops: a pair url.ParseQuery drops, one with a ';'
// or a malformed escape, is scanned as the readers that keep it read it:
// split at '&' alone, the escapes kept (Express, Fastify, a handler that
// reads r.URL.RawQuery), and with ';' as '&' (http.AllowQuerySemicolons
// inside the guard). Such pairs were not scanned at all.
func TestScan_QueryPairsGoDrops(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "GET"}}})
	for _, tc := range []struct {
		target string
		want   []Detail
	}{
		{"/c?cmd=x;cat%20/etc/passwd", []Detail{ // with ';' as '&', "cat /etc/passwd" is a name
			{"query", "possible path traversal"}, {"query:cmd", "possible command injection"}}},
		{"/c?file=../../etc/passwd;x=1", []Detail{{"query:file", "possible path traversal"}}},
		{"/c?q=1'or'1'='1'--%zz&page=2", []Detail{{"query:q", "possible SQL injection"}}},
		{"/c?q=<script>alert(1)</script>%", []Detail{{"query:q", "possible cross-site scripting"}}},
		{"/c?a=1;u=javascript:alert(1)", []Detail{{"query:u", "possible cross-site scripting"}}},
		{"/c?page=2;%3Cscript%3Ealert(1)%3C/script%3E=1", []Detail{ // a name to one reading, in a value to the other
			{"query", "possible cross-site scripting"}, {"query:page", "possible cross-site scripting"}}},
	} {
		v := g.Check("GET", tc.target, nil)
		if assert.NotNil(t, v, tc.target) {
			assert.Equal(t, tc.want, v.Details, tc.target)
		}
	}
	h := g.Middleware(http.AllowQuerySemicolons(&echo{}))
	rejected(t, send(h, "GET", "/c?file=../../etc/passwd;x=1", ""), 403, CodeVulnerabilityDetected)
	for _, target := range []string{"/c?a=1;b=2", "/c?q=100%&page=2", "/c?sort=name;desc", "/c?x=%zz"} {
		assert.Nil(t, g.Check("GET", target, nil), target)
	}
	// Past the 10,000 pairs url.ParseQuery reads at all (it then reads
	// none): pair by pair.
	long := "/c?" + strings.Repeat("a=1&b=x;", 100_000) + "file=../../etc/passwd"
	if v := g.Check("GET", long, nil); assert.NotNil(t, v) {
		assert.Equal(t, []Detail{{"query:b", "possible path traversal"}, {"query:file", "possible path traversal"}}, v.Details)
	}
}

// TestScan_QueryAndFormAsNodeReadsThem: Node's querystring (Express 5's
// query parser; body-parser's urlencoded with extended: false) decodes
// every escape of two hex digits in a name or value with a malformed one
// and keeps the malformed one as sent: "%3Cscript%3E…%zz" is
// "<script>…%zz" to it. url.ParseQuery drops that pair and fast-querystring
// keeps it all as sent, encoded: no reading the scan had saw the script.
func TestScan_QueryAndFormAsNodeReadsThem(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "GET"}, {Endpoint: "/f", Method: "POST"}}})
	for _, tc := range []struct {
		target string
		want   []Detail
	}{
		{"/c?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%zz", []Detail{{"query:q", "possible cross-site scripting"}}},
		{"/c?page=2&q=1%27%20OR%20%271%27%3D%271%", []Detail{{"query:q", "possible SQL injection"}}},
		{"/c?%3Cscript%3Ealert(1)%3C%2Fscript%3E%zz=1", []Detail{{"query", "possible cross-site scripting"}}},
	} {
		v := g.Check("GET", tc.target, nil)
		if assert.NotNil(t, v, tc.target) {
			assert.Equal(t, tc.want, v.Details, tc.target)
		}
	}
	for _, target := range []string{"/c?q=100%&page=2", "/c?x=%zz", "/c?q=50%25%20off%zz"} {
		assert.Nil(t, g.Check("GET", target, nil), target)
	}
	h := g.Middleware(&echo{})
	eb := rejected(t, send(h, "POST", "/f", "q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%zz", "Content-Type", "application/x-www-form-urlencoded"), 403, CodeVulnerabilityDetected)
	assert.Equal(t, []Detail{{"", "possible cross-site scripting"}}, eb.Details)
	assert.Equal(t, 200, send(h, "POST", "/f", "q=50%25%20off%zz&name=O%27Brien", "Content-Type", "application/x-www-form-urlencoded").Code)
}

// TestScan_DroppedPairsDoNotCrowdTheList: the readings of a query that
// url.ParseQuery could not read whole find again every pair it kept.
// Those repeats took places in the list, so that 60 findings and one
// malformed escape ended with the note "more failures are not listed"
// over 60 details. A repeat is dropped as it is found; more findings
// than the list holds still end with the note.
func TestScan_DroppedPairsDoNotCrowdTheList(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "GET"}}})
	for _, n := range []int{60, 150} {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "q%03d=<script>alert(1)</script>&", i)
		}
		for _, bad := range []string{"x=%zz", "x=1;y=2"} {
			v := g.Check("GET", "/c?"+b.String()+bad, nil)
			require.NotNil(t, v)
			if n < maxDetails {
				require.Len(t, v.Details, n, "every finding once, and no note")
				continue
			}
			require.Len(t, v.Details, maxDetails+1)
			assert.Equal(t, moreNotListed, v.Details[maxDetails])
		}
	}
}

// TestScan_ReadingsDoNotCrowdTheList: a path that reads another way too
// (Fastify's, which ends it at its first ';' and reads the rest as the
// query, the request's query string after it) is scanned in each reading,
// and each finds again what the first found in the query: the repeats took
// places in the list, said that more failures were not listed when there
// were none, and pushed out the findings of the reading's own query.
func TestScan_ReadingsDoNotCrowdTheList(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/users/{id}", Method: "GET"}}})
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "q%03d=<script>alert(1)</script>&", i)
	}
	// Fastify's x is "1?q000=<script>…": a finding of that reading alone.
	v := g.Check("GET", "/users/a;x=1?"+b.String(), nil)
	require.NotNil(t, v)
	require.Len(t, v.Details, 61, "every finding once, and no note")
	assert.Equal(t, Detail{"query:x", "possible cross-site scripting"}, v.Details[60])
	v = g.Check("GET", "/users/..%2f..%2fetc%2fpasswd;x=1?"+b.String(), nil)
	require.NotNil(t, v)
	require.Len(t, v.Details, 62, "every finding once, and no note")
	assert.Equal(t, Detail{"param:id", "possible path traversal"}, v.Details[0])
	assert.Equal(t, Detail{"query:x", "possible cross-site scripting"}, v.Details[61])
}

// TestScan_QueryParsedOnce: a rule that reads the query and the scan share
// one parse of it, so the scan's allocations with such a rule are fewer
// than without one (where it parses the query for itself).
func TestScan_QueryParsedOnce(t *testing.T) {
	const target = "/search?q=shoes&size=42&page=2"
	allocs := func(scanOn bool, rule string) float64 {
		c := Contract{Endpoint: "/search", Method: "POST"}
		if rule != "" {
			c.Invariants = []Invariant{{Expr: rule, Message: "query"}}
		}
		g := mustNew(t, Options{VulnerabilityScan: scanOn, Contracts: []Contract{c}})
		assert.Nil(t, g.Check("POST", target, []byte(`{}`)))
		return testing.AllocsPerRun(50, func() { g.Check("POST", target, []byte(`{}`)) })
	}
	const rule = "request.query.q == 'shoes'"
	scanAlone := allocs(true, "") - allocs(false, "")
	scanWithRule := allocs(true, rule) - allocs(false, rule)
	assert.Less(t, scanWithRule, scanAlone)
	// By the parse's allocations (5 here), with room for the walkers that
	// -race's sync.Pool drops at random.
	assert.GreaterOrEqual(t, scanAlone-scanWithRule, 3.0)
	assert.Positive(t, scanAlone)
}

// TestScan_CleanParamsAndQueryAllocateNothing: scanning clean path
// parameters and a clean query of a request with no body costs no
// allocation beyond the query's parse (a range over a func value once put
// two on every scanned request).
func TestScan_CleanParamsAndQueryAllocateNothing(t *testing.T) {
	allocs := func(scanOn bool, target string) float64 {
		g := mustNew(t, Options{VulnerabilityScan: scanOn, Contracts: []Contract{{Endpoint: "/files/{name}/v/{version}", Method: "GET"}}})
		assert.Nil(t, g.Check("GET", target, nil))
		return testing.AllocsPerRun(50, func() { g.Check("GET", target, nil) })
	}
	assert.Zero(t, allocs(true, "/files/report.pdf/v/2")-allocs(false, "/files/report.pdf/v/2"))
	// The query: parsed into its map (the values' slices and the map), and
	// nothing for its scan.
	withQuery := allocs(true, "/files/report.pdf/v/2?q=shoes") - allocs(false, "/files/report.pdf/v/2?q=shoes")
	assert.LessOrEqual(t, withQuery, 3.0)
}

// TestScan_OnceWhenOneContractScansAll: of the contracts of a request,
// one without opt-outs scans all the others would, so the body is scanned
// once, whatever their order and on a later pass too. A body the guard
// does not parse is scanned as one string, which libinjection, which
// allocates, reads: a second scan would show in the count (a parsed body
// would not do: its walkers come from a sync.Pool, which -race empties at
// random).
func TestScan_OnceWhenOneContractScansAll(t *testing.T) {
	all := &contract{}
	optOut := &contract{skip: &shape.Skip{Props: map[string]*shape.Skip{"html": {Off: true}}}}
	in := &request{method: "POST", state: &state{}}
	in.state.raw = []byte("12 Analytical Row. Ring twice; it is quiet.")
	in.state.plain = in.state.raw
	allocs := func(passes ...[]*contract) float64 {
		return testing.AllocsPerRun(20, func() {
			in.state.scanned = nil
			for _, cs := range passes {
				scanRequest(cs, in)
			}
		})
	}
	once := allocs([]*contract{all})
	require.Positive(t, once)
	assert.Equal(t, once, allocs([]*contract{optOut, all}))
	assert.Equal(t, once, allocs([]*contract{all, optOut}))
	assert.Equal(t, once, allocs([]*contract{all}, []*contract{optOut}))
	assert.Greater(t, allocs([]*contract{optOut}, []*contract{all}), once, "an opt-out first does not cover all")

	// The one scan is the full one.
	doc, err := jsonbody.Parse([]byte(`{"html":"<script>alert(1)</script>"}`), 64)
	require.NoError(t, err)
	in.state.raw, in.state.plain, in.state.scanned = nil, nil, nil
	in.state.doc.Store(doc)
	v := scanRequest([]*contract{optOut, all}, in)
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/html", "possible cross-site scripting"}}, v.Details)
}

// TestScan_SecondScanDoesNotCrowdTheList: two contracts with different
// opt-outs scan a body twice in one pass, and the second scan finds again
// most of what the first did. Those repeats took places in the list, so
// that 60 findings, fewer than the list holds, ended with the note "more
// failures are not listed" (found by helpers 29 and 34). A repeat is now
// dropped as it is found; a body with more findings than the list holds
// still ends with the note.
func TestScan_SecondScanDoesNotCrowdTheList(t *testing.T) {
	off := func(name string) *contract {
		return &contract{skip: &shape.Skip{Props: map[string]*shape.Skip{name: {Off: true}}}}
	}
	for _, n := range []int{60, 150} {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"m%03d":"<script>alert(1)</script>"`, i)
		}
		b.WriteString("}")
		doc, err := jsonbody.Parse([]byte(b.String()), 64)
		require.NoError(t, err)
		in := &request{method: "POST", state: &state{}}
		in.state.doc.Store(doc)
		v := scanRequest([]*contract{off("m000"), off("m001")}, in)
		require.NotNil(t, v)
		if n < maxDetails {
			require.Len(t, v.Details, n, "every finding once, and no note")
			assert.Equal(t, "/m000", v.Details[0].Path, "what the first scan skipped, the second found")
			continue
		}
		require.Len(t, v.Details, maxDetails+1)
		assert.Equal(t, moreNotListed, v.Details[maxDetails])
	}
}

// TestScan_OptOutOfAdditional: an opt-out of additionalProperties leaves
// the declared properties scanned.
func TestScan_OptOutOfAdditional(t *testing.T) {
	extra := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
		"additionalProperties": map[string]any{"x-contractguard-scan": false}}
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/extra", Method: "POST", Schema: extra}}})
	const markup = `"<script>alert(1)</script>"`
	assert.Nil(t, g.Check("POST", "/extra", []byte(`{"snippet":`+markup+`}`)))
	if v := g.Check("POST", "/extra", []byte(`{"text":`+markup+`}`)); assert.NotNil(t, v) {
		assert.Equal(t, []Detail{{"/text", "possible cross-site scripting"}}, v.Details)
	}
}

// TestScan_OptOutOfAdditionalScansTheirNames: under an opt-out of
// additionalProperties a member's value is not scanned, but its name,
// which the client chose, is (found by review: {"__proto__": …} and
// {"$where": …} passed); a declared property's opt-out leaves its name
// out too, the schema's own.
func TestScan_OptOutOfAdditionalScansTheirNames(t *testing.T) {
	extra := map[string]any{"type": "object", "properties": map[string]any{"html": map[string]any{"x-contractguard-scan": false}},
		"additionalProperties": map[string]any{"x-contractguard-scan": false}}
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/extra", Method: "POST", Schema: extra}}})
	for body, want := range map[string]string{
		`{"__proto__":{"isAdmin":true}}`:          "prototype pollution",
		`{"$where":"sleep(100)"}`:                 "NoSQL",
		`{"constructor":{"prototype":{"x":1}}}`:   "prototype pollution",
		`{"note":{"__proto__":{"isAdmin":true}}}`: "",
		`{"snippet":"<script>alert(1)</script>"}`: "",
		`{"html":{"__proto__":{"isAdmin":true}}}`: "",
	} {
		v := g.Check("POST", "/extra", []byte(body))
		if want == "" {
			assert.Nil(t, v, body)
			continue
		}
		if assert.NotNil(t, v, body) {
			assert.Equal(t, CodeVulnerabilityDetected, v.Code)
			assert.Contains(t, v.Details[0].Message, want, body)
		}
	}
}

// TestJSONFinding_Bounded: a body of another Content-Type read as JSON
// for the scan costs nothing when it holds no string (no quote: no name,
// no string value; [0,0,…] of 1 MiB was a token walk of 65 MB), and its
// nesting is read no deeper than json.Decoder.Decode reads (1 MiB of [
// grew a stack with it, 57 MB). Found by review.
func TestJSONFinding_Bounded(t *testing.T) {
	zeros := []byte("[" + strings.Repeat("0,", 50000) + "0]")
	assert.Zero(t, testing.AllocsPerRun(5, func() { jsonFinding(zeros) }), "no quote, no walk")
	deep := []byte(strings.Repeat("[", 1<<20) + `"x"`)
	var after, before runtime.MemStats
	runtime.ReadMemStats(&before)
	assert.Equal(t, scan.None, jsonFinding(deep))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "the walk stops at the nesting json.Decoder reads (%d)", maxJSONNesting)
	assert.Equal(t, scan.SQLInjection, jsonFinding([]byte(`{"q":"1\u0027 OR \u00271\u0027=\u00271"}`)), "a string is still read")
}

// TestScan_OptOutOfItemsBesidePrefixItems: an opt-out of 2020-12's items
// beside prefixItems took every element out of the scan, the prefix's
// too, which no opt-out describes.
func TestScan_OptOutOfItemsBesidePrefixItems(t *testing.T) {
	sch := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",
		"prefixItems": []any{map[string]any{"type": "string"}}, "items": map[string]any{"$ref": "d.json"},
		"$defs": map[string]any{"d": map[string]any{"$id": "d.json", "$schema": "http://json-schema.org/draft-07/schema#", "x-contractguard-scan": false}}}
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/x", Method: "POST", Schema: sch}}})
	if v := g.Check("POST", "/x", []byte(`["<script>alert(1)</script>"]`)); assert.NotNil(t, v) {
		assert.Equal(t, []Detail{{"/0", "possible cross-site scripting"}}, v.Details)
	}
}

// TestScan_LearningContractsFindingCoversNoLaterContract: a contract in
// mode learn that scans a body and finds an injection reports it and lets
// the request on; the typed handler it goes to, which enforces, scans it
// on its own pass and refuses it. Its scan was skipped (the body counted
// as scanned), and the injection reached the handler: adding a learning
// contract in front of a typed handler turned its scan off.
func TestScan_LearningContractsFindingCoversNoLaterContract(t *testing.T) {
	g, rec := learnGuard(t, func(o *Options) {
		o.VulnerabilityScan = true
		o.ContractsFS = mapFS(map[string]string{"c.yaml": "endpoint: /notes\nmethod: POST\nmode: learn\n"})
	})
	type note struct {
		Text string `json:"text"`
	}
	reached := 0
	mux := http.NewServeMux()
	mux.Handle("POST /notes", Handle(g, func(w http.ResponseWriter, r *http.Request, n note) { reached++ }))
	// A handler between (a logger, say): Middleware does not see the
	// router, and the typed contract is checked on the handler's pass.
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) }))
	body := `{"text":"x' OR '1'='1' --"}`
	rejected(t, send(mux, "POST", "/notes", body), http.StatusForbidden, CodeVulnerabilityDetected)
	rejected(t, send(h, "POST", "/notes", body), http.StatusForbidden, CodeVulnerabilityDetected)
	assert.Zero(t, reached)
	require.Len(t, rec.observed, 1, "the learning contract reports what it found")
	assert.Equal(t, CodeVulnerabilityDetected, rec.observed[0].Violation.Code)
	assert.EqualValues(t, 2, g.Stats().ScanFindings["sql_injection"], "one value a request, counted once over both passes of the second")
	assert.Equal(t, 200, send(h, "POST", "/notes", `{"text":"hello"}`).Code)
}

// TestScan_QueryPairsExpressDecodes: Express 5's query parser and
// body-parser's simple urlencoded one (node:querystring) decode the
// well-formed escapes of a value that has a malformed one, where Fastify
// and qs keep it as sent: ?q=%zz1%27%20OR%201%3D1-- is q "%zz1' OR 1=1--"
// to them. The query and a form body are scanned as they read them too
// (found by review: such values passed, read with every escape kept).
func TestScan_QueryPairsExpressDecodes(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/c", Method: "GET"}, {Endpoint: "/raw", Method: "POST"}}})
	for _, tc := range []struct {
		target string
		want   []Detail
	}{
		{"/c?q=%zz1%27%20OR%201%3D1--", []Detail{{"query:q", "possible SQL injection"}}},
		{"/c?q=1%27%20OR%201%3D1--%", []Detail{{"query:q", "possible SQL injection"}}},
		{"/c?q=%3Cscript%3Ealert(1)%3C/script%3E%zz", []Detail{{"query:q", "possible cross-site scripting"}}},
		{"/c?page=1&%zz%3Cscript%3Ealert(1)%3C/script%3E=1", []Detail{{"query", "possible cross-site scripting"}}},
	} {
		v := g.Check("GET", tc.target, nil)
		if assert.NotNil(t, v, tc.target) {
			assert.Equal(t, tc.want, v.Details, tc.target)
		}
	}
	for _, target := range []string{"/c?x=%zz", "/c?q=100%&page=2", "/c?q=Shoes%20%26%20More%zz"} {
		assert.Nil(t, g.Check("GET", target, nil), target)
	}
	h := g.Middleware(&echo{})
	for _, body := range []string{"q=%zz1%27%20OR%201%3D1--", "q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%"} {
		rejected(t, send(h, "POST", "/raw", body, "Content-Type", "application/x-www-form-urlencoded"), 403, CodeVulnerabilityDetected)
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", "q=Shoes+%26+More%zz", "Content-Type", "application/x-www-form-urlencoded").Code)
}

// TestScan_MultipartOverReadFormBounds: a multipart body of more parts
// than multipart.Reader.ReadForm reads (1,000), or a part of more header
// lines than it reads, is refused, 413, and read no further than that:
// every part of a megabyte of 100,000 empty ones was read (84 ms, eight
// times a megabyte of JSON), and a streaming reader (r.MultipartReader,
// busboy behind the proxy) reads on past where ReadForm stops, so the
// scan may not stop there and let the request through.
func TestScan_MultipartOverReadFormBounds(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	const ct = "multipart/form-data; boundary=b"
	empty := "--b\r\n\r\n\r\n"
	tail := "--b\r\nContent-Disposition: form-data; name=\"q\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n1=27 OR =271=27=3D=271\r\n--b--\r\n"
	for _, body := range []string{
		strings.Repeat(empty, 100_000) + "--b--\r\n",
		strings.Repeat(empty, route.MultipartMaxParts) + tail, // the finding in the part one over
		"--b\r\n" + strings.Repeat("A: 1\r\n", route.MultipartMaxHeaders+1) + "\r\n\r\n" + tail,
		strings.Repeat("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n"+strings.Repeat("A: 1\r\n", 999)+"\r\n\r\n", 10) + tail,
	} {
		eb := rejected(t, send(h, "POST", "/raw", body, "Content-Type", ct), 413, CodePayloadTooLarge)
		assert.Equal(t, []Detail{{"", "multipart body must have at most 1000 parts and 10000 header lines"}}, eb.Details)
	}
	// As many as ReadForm reads: read, and scanned.
	ok := strings.Repeat(empty, route.MultipartMaxParts-1)
	assert.Equal(t, 200, send(h, "POST", "/raw", ok+"--b--\r\n", "Content-Type", ct).Code)
	rejected(t, send(h, "POST", "/raw", ok+tail, "Content-Type", ct), 403, CodeVulnerabilityDetected)
	// Header lines of parts that are not files do not count in all (nor in ReadForm).
	many := strings.Repeat("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n"+strings.Repeat("A: 1\r\n", 999)+"\r\n\r\n", 20)
	assert.Equal(t, 200, send(h, "POST", "/raw", many+"--b--\r\n", "Content-Type", ct).Code)
}

// TestScan_FormOverParseQueryBound: a form body of more pairs than
// url.ParseQuery reads (10,000) is refused, 413, unread: each of a
// megabyte of '&' was read three ways (70 ms; "a=%41%zz&…" 210 ms,
// against 11 ms for a megabyte of JSON). r.ParseForm gives the handler
// none of its fields, and Express refuses more than 1,000 (413).
func TestScan_FormOverParseQueryBound(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	const ct = "application/x-www-form-urlencoded"
	for _, body := range []string{strings.Repeat("&", 1<<20), strings.Repeat("a=b&", route.FormMaxPairs) + "a=b",
		// Unread: not scanned as one string first (53 ms of a megabyte of "a=%41%zz&").
		"q=1' OR '1'='1" + strings.Repeat("&", route.FormMaxPairs)} {
		eb := rejected(t, send(h, "POST", "/raw", body, "Content-Type", ct), 413, CodePayloadTooLarge)
		assert.Equal(t, []Detail{{"", "form body must have at most 10000 fields"}}, eb.Details)
	}
	// As many as url.ParseQuery reads: read, and scanned.
	ok := strings.Repeat("a=b&", route.FormMaxPairs-1)
	assert.Equal(t, 200, send(h, "POST", "/raw", ok+"a=b", "Content-Type", ct).Code)
	rejected(t, send(h, "POST", "/raw", ok+"q=1%27%20or%20%271%27%3D%271", "Content-Type", ct), 403, CodeVulnerabilityDetected)
	_, err := url.ParseQuery(ok + "a=b&a=b")
	assert.Error(t, err, "Go's bound moved")
	_, err = url.ParseQuery(ok + "a=b")
	assert.NoError(t, err)
}

// TestScan_MultipartDispositionGoCannotRead: a part whose
// Content-Disposition mime.ParseMediaType refuses (a parameter given
// twice) has no name and no file name to Go, which skips it, while hosts
// that keep the first or the last of a parameter read them: the scan reads
// every name and file name written there. It read none.
func TestScan_MultipartDispositionGoCannotRead(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition string) string {
		return "--XyZ\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, tc := range []struct{ disposition, want string }{
		{`form-data; name="f"; filename="ok.png"; filename="../../shell.php"`, "possible path traversal"},
		{`form-data; name="f"; filename="../../shell.php"; filename="ok.png"`, "possible path traversal"},
		{`form-data; name="f"; filename*=UTF-8''ok.png; filename*=UTF-8''..%2F..%2Fx.php`, "possible path traversal"},
		{`form-data; name="f"; name="__proto__"; filename="ok.png"`, "possible prototype pollution"},
		{`form-data; name="f"; name="a[$ne]"; filename="ok.png"`, "possible NoSQL operator injection"},
		{`form-data; name="f"; filename="a;b.png"; filename="..\\..\\x.php"`, "possible path traversal"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", part(tc.disposition), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.disposition)
	}
	for _, d := range []string{`form-data; name="f"; name="g"; filename="photo.png"`, `form-data; name="f"; filename="a"; filename="b \"1\".png"`} {
		assert.Equal(t, 200, send(h, "POST", "/raw", part(d), "Content-Type", "multipart/form-data; boundary=XyZ").Code, d)
	}
}

// TestScan_MultipartDispositionContinuations: werkzeug (Flask) reads
// RFC 2231 continuations (filename*0, filename*1*) by appending each, in
// the order written, to the parameter's value so far, whether or not Go
// can parse the disposition; Go joins them in index order and stops at a
// missing index, and the loose reading of a disposition it cannot parse
// skipped them. So "../../shell.php" reached a Flask handler unscanned
// through a gap in the indexes, an order other than theirs, a filename*
// before them, or a parameter given twice.
func TestScan_MultipartDispositionContinuations(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition string) string {
		return "--XyZ\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, tc := range []struct{ disposition, want string }{
		{`form-data; name="f"; filename*0="a"; filename*2="/../../shell.php"`, "possible path traversal"},
		{`form-data; name="f"; filename*1=".."; filename*0="/shell.php"`, "possible path traversal"},
		{`form-data; name="f"; filename*=UTF-8''a; filename*0="/../../shell.php"`, "possible path traversal"},
		{`form-data; name="f"; name="g"; filename*0="../../sh"; filename*1="ell.php"`, "possible path traversal"},
		{`form-data; name="f"; name="g"; filename*0*=UTF-8''..%2F..%2Fsh; filename*1*=ell.php`, "possible path traversal"},
		{`form-data; name="f"; name="g"; name*0="__pro"; name*1="to__"; filename="ok.png"`, "possible prototype pollution"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", part(tc.disposition), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.disposition)
	}
	for _, d := range []string{`form-data; name="f"; filename*0="my "; filename*1="photo.png"`, `form-data; name="f"; name="g"; filename*0*=UTF-8''r%C3%A9sum; filename*1*=%C3%A9.pdf`} {
		assert.Equal(t, 200, send(h, "POST", "/raw", part(d), "Content-Type", "multipart/form-data; boundary=XyZ").Code, d)
	}
}

// TestScan_MultipartPlainNameBesideStarForm: a disposition Go parses, with
// a plain filename (or name) and a filename* (name*) beside it, is read
// by Go as the starred one alone, FileName and the name as sent alike;
// werkzeug and Django keep the last one written, Python's cgi the plain
// one, so "../../shell.php" reached their handlers unscanned.
func TestScan_MultipartPlainNameBesideStarForm(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition string) string {
		return "--XyZ\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, tc := range []struct{ disposition, want string }{
		{`form-data; name="f"; filename*=UTF-8''ok.png; filename="../../shell.php"`, "possible path traversal"},
		{`form-data; name="f"; filename="../../shell.php"; filename*=UTF-8''ok.png`, "possible path traversal"},
		{`form-data; name*=UTF-8''f; name="__proto__"; filename="ok.png"`, "possible prototype pollution"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", part(tc.disposition), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.disposition)
	}
	for _, d := range []string{`form-data; name="f"; filename="resume.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`, `form-data; name*=UTF-8''f; filename*=UTF-8''photo.png`} {
		assert.Equal(t, 200, send(h, "POST", "/raw", part(d), "Content-Type", "multipart/form-data; boundary=XyZ").Code, d)
	}
}

// TestScan_MultipartSecondDispositionLine: a part with two
// Content-Disposition lines is read by Go (FormName, FileName) from the
// first, and by Django from the last, which handed its handler
// "../../shell.php" (or a field __proto__) unscanned.
func TestScan_MultipartSecondDispositionLine(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(second string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"ok.png\"\r\ncontent-disposition: " + second +
			"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, tc := range []struct{ second, want string }{
		{`form-data; name="f"; filename="../../shell.php"`, "possible path traversal"},
		{`form-data; name="__proto__"`, "possible prototype pollution"},
	} {
		eb := rejected(t, send(h, "POST", "/raw", part(tc.second), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", tc.want}}, eb.Details, tc.second)
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", part(`form-data; name="f"; filename="photo.png"`), "Content-Type", "multipart/form-data; boundary=XyZ").Code)
}

// TestScan_MultipartDispositionNotFormData: a part whose disposition is
// not form-data (attachment, file) and holds a file name has no name to
// Go (FormName) but its file name; werkzeug and Django read its name
// whatever the type, and "__proto__" reached them unscanned.
func TestScan_MultipartDispositionNotFormData(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition string) string {
		return "--XyZ\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, d := range []string{`attachment; name="__proto__"; filename="ok.png"`, `file; name="__proto__"; filename="ok.png"`} {
		eb := rejected(t, send(h, "POST", "/raw", part(d), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", "possible prototype pollution"}}, eb.Details, d)
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", part(`attachment; name="f"; filename="ok.png"`), "Content-Type", "multipart/form-data; boundary=XyZ").Code)
}

// TestScan_MultipartExtendedValueAfterItsLanguage: werkzeug (Flask) and
// RFC 2231 read a filename* (name*, and their continuations) as
// charset'language'value, the value after the second quote, whatever
// quotes it holds; the loose reading of a disposition Go cannot parse
// took what followed the last quote, so "utf-8”%2e%2e%2fshell'php",
// "../shell'php" to a Flask handler, was scanned as "php". A quoted one
// is no such triple to werkzeug, which takes it whole, unquoted:
// filename*="../x" is ../x, and was scanned with its quotes.
func TestScan_MultipartExtendedValueAfterItsLanguage(t *testing.T) {
	g := mustNew(t, Options{VulnerabilityScan: true, Contracts: []Contract{{Endpoint: "/raw", Method: "POST"}}})
	h := g.Middleware(&echo{})
	part := func(disposition string) string {
		return "--XyZ\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\x00\xff\r\n--XyZ--\r\n"
	}
	for _, d := range []string{
		`form-data; name="f"; name="g"; filename*=utf-8''%2e%2e%2fshell'php`,
		`form-data; name="f"; name="g"; filename*0*=utf-8''%2e%2e%2fsh'ell; filename*1=".php"`,
		`form-data; name="f"; name="g"; filename*="x'y'../../z'w"`,
		`form-data; name="f"; name="g"; filename*="../x"`,
	} {
		eb := rejected(t, send(h, "POST", "/raw", part(d), "Content-Type", "multipart/form-data; boundary=XyZ"), 403, CodeVulnerabilityDetected)
		assert.Equal(t, []Detail{{"", "possible path traversal"}}, eb.Details, d)
	}
	assert.Equal(t, 200, send(h, "POST", "/raw", part(`form-data; name="f"; name="g"; filename*=utf-8''O'Brien.png`), "Content-Type", "multipart/form-data; boundary=XyZ").Code)
}
