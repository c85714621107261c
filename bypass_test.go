package contractguard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bypass tests send requests as raw bytes to a real server, through
// every supported way of installing the guard, and assert one thing: the
// handler never runs on bytes the guard did not pass.

const bypassContracts = `
endpoint: /a/b
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
---
endpoint: /files/:name
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
---
endpoint: /items/:id
method: GET
invariants:
  - expr: request.params.id != 'secret'
    message: not that one
`

// recorder is the application: it remembers every body it was given.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, string(b))
	rec.mu.Unlock()
	w.Header().Set("X-Handler", "ran")
}

func (rec *recorder) ran() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.bodies...)
}

type bypassSetup struct {
	name  string
	build func(g *Guard, app http.Handler) http.Handler
}

var bypassSetups = []bypassSetup{
	{"bare handler", func(g *Guard, app http.Handler) http.Handler { return g.Middleware(app) }},
	{"chi", func(g *Guard, app http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Use(g.Middleware)
		chiRoutes(r, app)
		return r
	}},
	{"chi, path rewriting before the guard", func(g *Guard, app http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Use(middleware.CleanPath, middleware.StripSlashes, g.Middleware)
		chiRoutes(r, app)
		return r
	}},
	{"chi, path rewriting after the guard", func(g *Guard, app http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Use(g.Middleware, middleware.CleanPath, middleware.StripSlashes)
		chiRoutes(r, app)
		return r
	}},
	{"chi, guard on a route group", func(g *Guard, app http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Group(func(r chi.Router) {
			r.Use(g.Middleware)
			chiRoutes(r, app)
		})
		return r
	}},
	{"ServeMux", func(g *Guard, app http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("POST /a/b", app)
		mux.Handle("POST /files/{name}", app)
		mux.Handle("GET /items/{id}", app)
		return g.Middleware(mux)
	}},
}

func chiRoutes(r chi.Router, app http.Handler) {
	r.Method("POST", "/a/b", app)
	r.Method("POST", "/files/{name}", app)
	r.Method("GET", "/items/{id}", app)
}

// assertNoBypass sends each request through every setup; valid lists the
// bodies the guard may pass. Each setup then passes a valid control request.
func assertNoBypass(t *testing.T, reqs []conformanceCase, valid ...string) {
	t.Helper()
	for _, setup := range bypassSetups {
		t.Run(setup.name, func(t *testing.T) {
			g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": bypassContracts}), MaxBodyBytes: 1024, Logger: discard})
			rec := &recorder{}
			srv := httptest.NewServer(setup.build(g, rec))
			defer srv.Close()
			for _, c := range reqs {
				before := len(rec.ran())
				v := rawRequest(t, srv, c)
				after := rec.ran()
				if len(after) > before {
					got := after[len(after)-1]
					assert.Contains(t, valid, got, "%s %s: the handler ran on bytes the guard did not pass (status %d)", c.Method, c.Path, v.status)
					assert.Equal(t, string(c.body(t)), got, "%s %s: the handler got other bytes than were checked", c.Method, c.Path)
				}
			}
			// A control: the setup does pass a valid request, so the
			// rejections above are the guard's verdicts, not a dead route.
			before := len(rec.ran())
			v := rawRequest(t, srv, post("/a/b", `{"ok":true}`))
			assert.Equal(t, http.StatusOK, v.status, "the control request")
			assert.Len(t, rec.ran(), before+1, "the control request reaches the handler")
		})
	}
}

const (
	invalid = `{"ok":false}`
	valid   = `{"ok":true}`
)

func post(path, body string) conformanceCase {
	return conformanceCase{Method: "POST", Path: path, Body: body}
}

func TestBypass_TrailingSlash(t *testing.T) {
	assertNoBypass(t, []conformanceCase{post("/a/b/", invalid), post("/a/b//", invalid), post("/files/x/", invalid)}, valid)
}

func TestBypass_DoubleSlash(t *testing.T) {
	assertNoBypass(t, []conformanceCase{post("//a/b", invalid), post("/a//b", invalid), post("//a//b//", invalid), post("//files//x", invalid)}, valid)
}

func TestBypass_DotSegments(t *testing.T) {
	assertNoBypass(t, []conformanceCase{post("/a/./b", invalid), post("/./a/b", invalid), post("/a/b/.", invalid), post("/a/%2e/b", invalid)}, valid)
}

func TestBypass_DotDotSegments(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/a/x/../b", invalid), post("/x/../a/b", invalid), post("/../a/b", invalid),
		post("/a/x/%2e%2e/b", invalid), post("/a/x/.%2E/b", invalid), post("/files/x/../y", invalid),
	}, valid)
}

func TestBypass_EncodedLetters(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/a/%62", invalid), post("/%61/%62", invalid), post("/%66iles/x", invalid),
		{Method: "GET", Path: "/items/sec%72et"}, {Method: "GET", Path: "/%69tems/secret"},
	}, valid)
}

func TestBypass_EncodedSlash(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/files/a%2Fb", invalid), post("/files/a%2fb", invalid), post("/files/..%2Fx", invalid),
		post("/a%2Fb", invalid), post("/a%2fb", invalid),
	}, valid)
}

// TestBypass_EncodedSlashBesideAByteGoEscapes: a path with a byte an
// encoded path should not hold, sent raw ('{', '|', '"', '^'), is one
// whose r.URL.RawPath EscapedPath does not trust: it encodes r.URL.Path
// afresh, the %2F decoded to a '/'. chi still routes on RawPath:
// /files/a%2Fb{ is /files/{name} for it, /files/a/b%7B for EscapedPath,
// which matches no contract (found by review: the handler ran on an
// invalid body).
func TestBypass_EncodedSlashBesideAByteGoEscapes(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/files/a%2Fb{", invalid), post("/files/a%2Fb|", invalid), post(`/files/x%2F"`, invalid),
		post("/files/%2F^", invalid), post("/files/a%2fb}", invalid), post("/files/..%2F{", invalid),
	}, valid)
}

func TestBypass_MatrixParameters(t *testing.T) {
	assertNoBypass(t, []conformanceCase{post("/a;x/b", invalid), post("/a/b;x=1", invalid), post("/a;/b;", invalid), post("/files;v=1/x", invalid)}, valid)
}

func TestBypass_LowerCaseMethod(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		{Method: "post", Path: "/a/b", Body: invalid}, {Method: "get", Path: "/items/secret"},
	}, valid)
}

func TestBypass_MixedCaseMethod(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		{Method: "PoSt", Path: "/a/b", Body: invalid}, {Method: "Get", Path: "/items/secret"},
	}, valid)
}

func TestBypass_HeadOnGetContract(t *testing.T) {
	assertNoBypass(t, []conformanceCase{{Method: "HEAD", Path: "/items/secret"}, {Method: "head", Path: "/items/secret"}})
}

func TestBypass_ContentTypes(t *testing.T) {
	reqs := []conformanceCase{
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": ""}},
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": "text/plain"}},
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": "application/json;charset=utf-8"}},
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": "application/x+json"}},
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": "application/json; charset=latin1"}},
		{Method: "POST", Path: "/a/b", Body: invalid, Headers: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}},
		{Method: "POST", Path: "/a/b", Body: valid, Headers: map[string]string{"Content-Type": ""}},
		{Method: "POST", Path: "/a/b", Body: valid, Headers: map[string]string{"Content-Type": "application/json;charset=utf-8"}},
		{Method: "POST", Path: "/a/b", Body: valid, Headers: map[string]string{"Content-Type": "application/x+json"}},
	}
	assertNoBypass(t, reqs, valid)
}

func TestBypass_ChunkedBody(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		{Method: "POST", Path: "/a/b", Body: invalid, Chunked: true},
		{Method: "POST", Path: "/a/b", Body: valid, Chunked: true},
	}, valid)
}

func TestBypass_ChunkedBodyOverTheLimit(t *testing.T) {
	big := `{"ok":true,"pad":"` + strings.Repeat("x", 3000) + `"}`
	assertNoBypass(t, []conformanceCase{{Method: "POST", Path: "/a/b", Body: big, Chunked: true}, post("/a/b", big)})
}

func TestBypass_DuplicateAndCaseVariantKeys(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/a/b", `{"ok":false,"ok":true}`), post("/a/b", `{"ok":true,"ok":false}`),
		post("/a/b", `{"ok":true,"OK":false}`), post("/a/b", `{"ok":true,"o\u006b":false}`),
	}, valid)
}

// TestBypass_DotSegmentAsParameter: chi (and Express, Fastify, the JDK's
// server) route /files/.. to /files/{name} with name "..", where the
// guard's main reading resolves the dot segment and climbs to /: the
// guard enforces every reading that matches.
func TestBypass_DotSegmentAsParameter(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/files/..", invalid), post("/files/.", invalid), post("/files/%2e%2e", invalid), post("/files/%2E", invalid),
		post("/files/.%2e", invalid), post("/files/../a/b", invalid),
	}, valid)
}

// TestBypass_LetterCase: Express routes case-insensitively by default (and
// Fastify with caseSensitive: false): /A/B reaches the handler of /a/b.
// A path that matches no contract as it is written is matched again in
// any letter case.
func TestBypass_LetterCase(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/A/B", invalid), post("/a/B", invalid), post("/FILES/x", invalid), post("/Files/X", invalid),
		{Method: "GET", Path: "/ITEMS/secret"}, {Method: "GET", Path: "/Items/secret"},
	}, valid)
}

// TestBypass_OtherReadingsParameters: a contract that another reading of
// the path matched is checked with that reading's path parameters and
// path, as the router that reads the path that way hands them to its
// handler, not with those of the reading that matched first.
// /users/admin%2Fb is /users/:id (id "admin/b") as chi and ServeMux read
// it, and /users/:id/:sub (id "admin") for a handler routing on
// r.URL.Path; /files/.. is / with the dot segment resolved, and
// /files/:name (path /files/..) as chi, Express and Fastify read it.
func TestBypass_OtherReadingsParameters(t *testing.T) {
	for _, tt := range []struct {
		name, contracts string
		refused, passed string // a path each reading refuses; one they pass
	}{
		{"params", `
endpoint: /users/:id
method: POST
---
endpoint: /users/:id/:sub
method: POST
invariants:
  - {expr: "request.params.id != 'admin'", message: not admin}
`, "/users/admin%2Fb", "/users/alice%2Fb"},
		{"path", `
endpoint: /
method: POST
---
endpoint: /files/:name
method: POST
invariants:
  - {expr: "request.path != '/files/..'", message: not the parent}
`, "/files/..", "/files/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": tt.contracts}), Logger: discard})
			app := &echo{}
			w := send(g.Middleware(app), "POST", tt.refused, `{}`)
			assert.Equal(t, http.StatusUnprocessableEntity, w.Code, "the handler ran")
			assert.Zero(t, app.calls)
			if v := g.Check("POST", tt.refused, []byte(`{}`)); assert.NotNil(t, v) {
				assert.Equal(t, CodeInvariantViolated, v.Code)
			}
			assert.Equal(t, http.StatusOK, send(g.Middleware(app), "POST", tt.passed, `{}`).Code)
		})
	}
}

// TestBypass_EncodedStaticSegment: chi routes on the path as sent when
// its escapes are not Go's own (r.URL.RawPath), and Express always
// matches the path as sent: /users/m%65 is /users/{id} for them (the
// static /users/me does not match "m%65"), /users/me for ServeMux and
// for the guard's decoding. Both contracts are enforced, so the stricter
// /users/{id} one refuses the body whichever handler it reaches.
func TestBypass_EncodedStaticSegment(t *testing.T) {
	contracts := `
endpoint: /users/me
method: POST
schema: {type: object}
---
endpoint: /users/:id
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	for name, build := range map[string]func(app http.Handler) http.Handler{
		"chi": func(app http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Use(g.Middleware)
			r.Method("POST", "/users/me", app)
			r.Method("POST", "/users/{id}", app)
			return r
		},
		"ServeMux": func(app http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /users/me", app)
			mux.Handle("POST /users/{id}", app)
			return g.Middleware(mux)
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			srv := httptest.NewServer(build(rec))
			defer srv.Close()
			for _, path := range []string{"/users/m%65", "/users/%6De", "/users/%6d%65", "/users/me%2F"} {
				v := rawRequest(t, srv, post(path, invalid))
				assert.Equal(t, http.StatusBadRequest, v.status, path)
			}
			assert.Empty(t, rec.ran(), "a handler ran on a body the /users/{id} contract refuses")
			v := rawRequest(t, srv, post("/users/m%65", valid))
			assert.Equal(t, http.StatusOK, v.status, "the control request")
		})
	}
}

// TestBypass_EncodedStaticSegmentCleanedByChi: chi's CleanPath
// middleware cleans the path chi routes on, r.URL.RawPath when the
// escapes are not Go's own, with path.Clean: dot segments are resolved
// and the escapes kept, so /users/m%65/x/.. is /users/m%65, which is
// /users/{id} for chi (found by review: the guard resolved the dot
// segments only of the decoded path, /users/me, and enforced only the
// /users/me contract).
func TestBypass_EncodedStaticSegmentCleanedByChi(t *testing.T) {
	contracts := `
endpoint: /users/me
method: POST
schema: {type: object}
---
endpoint: /users/:id
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	r := chi.NewRouter()
	r.Use(middleware.CleanPath, g.Middleware)
	rec := &recorder{}
	r.Method("POST", "/users/me", rec)
	r.Method("POST", "/users/{id}", rec)
	srv := httptest.NewServer(r)
	defer srv.Close()
	for _, path := range []string{"/users/m%65/x/..", "/users/x/../m%65", "/users/m%65/.", "/x/../users/./%6De"} {
		v := rawRequest(t, srv, post(path, invalid))
		assert.Equal(t, http.StatusBadRequest, v.status, path)
	}
	assert.Empty(t, rec.ran(), "a handler ran on a body the /users/{id} contract refuses")
	v := rawRequest(t, srv, post("/users/x/../m%65", valid))
	assert.Equal(t, http.StatusOK, v.status, "the control request")
	assert.Len(t, rec.ran(), 1)
	if v := g.Check("POST", "/users/m%65/x/..", []byte(invalid)); assert.NotNil(t, v) {
		assert.Equal(t, CodeSchemaInvalid, v.Code)
	}
}

// TestBypass_EmptySegmentAsParameter: chi matches a parameter to an
// empty segment between two slashes: /users//orders is /users/{id}/orders
// with id "", where the guard's readings dropped the empty segment and
// matched no contract (found by review: the handler ran on a body its
// contract refuses).
func TestBypass_EmptySegmentAsParameter(t *testing.T) {
	contracts := `
endpoint: /users/:id/orders
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
invariants:
  - {expr: "request.params.id == ''", message: only the empty id}
---
endpoint: /users/:id/orders/:oid
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	r := chi.NewRouter()
	r.Use(g.Middleware)
	rec := &recorder{}
	r.Method("POST", "/users/{id}/orders", rec)
	r.Method("POST", "/users/{id}/orders/{oid}", rec)
	srv := httptest.NewServer(r)
	defer srv.Close()
	for _, path := range []string{"/users//orders", "/users//orders/7", "/users//orders/x%2F", "/users//orders/.."} {
		v := rawRequest(t, srv, post(path, invalid))
		assert.Equal(t, http.StatusBadRequest, v.status, path)
	}
	assert.Empty(t, rec.ran(), "a handler ran on a body its contract refuses")
	v := rawRequest(t, srv, post("/users//orders", valid))
	assert.Equal(t, http.StatusOK, v.status, "the control request: id is empty")
	assert.Len(t, rec.ran(), 1)
	assert.Nil(t, g.Check("POST", "/users//orders", []byte(valid)))
	if v := g.Check("POST", "/users//orders", []byte(invalid)); assert.NotNil(t, v) {
		assert.Equal(t, CodeSchemaInvalid, v.Code)
	}
}

// TestBypass_LetterCaseOfOtherReadings: a router that routes in any letter
// case reads the other ways of a path in any letter case too: Fastify
// with caseSensitive: false and useSemicolonDelimiter routes /A/B;x=1 to
// /a/b, Express /FILES/.. to /files/:name. Every reading is matched again
// in any letter case.
func TestBypass_LetterCaseOfOtherReadings(t *testing.T) {
	assertNoBypass(t, []conformanceCase{
		post("/A/B;x=1", invalid), post("/A;v=1/B", invalid), post("/a/B;", invalid),
		post("/FILES/..", invalid), post("/Files/%2e%2e", invalid), post("/FILES/x%2F..", invalid),
		{Method: "GET", Path: "/ITEMS/secret;v=1"}, {Method: "GET", Path: "/Items/sec%72et"},
	}, valid)
}

// TestBypass_LetterCaseOfAStaticBesideAParameter: Express routes
// /users/ME to its /users/me handler (in any letter case, the static
// route before the parameter), while /users/ME as written is /users/:id:
// the contracts of both are enforced, not only the one matched as
// written.
func TestBypass_LetterCaseOfAStaticBesideAParameter(t *testing.T) {
	contracts := `
endpoint: /users/me
method: PUT
schema: {type: object, additionalProperties: false, properties: {name: {type: string}}}
---
endpoint: /users/:id
method: PUT
schema: {type: object}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	bad := []byte(`{"name":"Ada","role":"admin"}`)
	for _, path := range []string{"/users/me", "/users/ME", "/Users/Me", "/USERS/ME/"} {
		if v := g.Check("PUT", path, bad); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
	}
	assert.Nil(t, g.Check("PUT", "/users/42", bad), "the /users/:id contract alone")
	assert.Nil(t, g.Check("PUT", "/users/ME", []byte(`{"name":"Ada"}`)))
}

// TestBypass_PatternsThatDifferOnlyByCase: find-my-way with
// caseSensitive: false reads /api/getuser as /api/getuser and routes it
// to its handler of /Api/GetUser, the static pattern beating /api/:action
// (Express, to the one registered first): the contracts of the most
// specific patterns in any letter case are enforced, every one of those
// that differ only by case, beside the one matched as written (found by
// review: the first pattern the case-blind walk met, /api/:action, hid
// the others).
func TestBypass_PatternsThatDifferOnlyByCase(t *testing.T) {
	contracts := `
endpoint: /api/:action
method: POST
schema: {type: object}
---
endpoint: /Api/GetUser
method: POST
schema: {type: object, additionalProperties: false, properties: {id: {type: integer}}}
---
endpoint: /API/GETUSER
method: POST
schema: {type: object, required: [id]}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	for _, path := range []string{"/api/getuser", "/API/GETUSER", "/Api/GetUser", "/api/GETUSER/"} {
		for _, body := range []string{`{"id":1,"role":"admin"}`, `{}`} {
			if v := g.Check("POST", path, []byte(body)); assert.NotNil(t, v, "%s %s", path, body) {
				assert.Equal(t, CodeSchemaInvalid, v.Code, path)
			}
		}
		assert.Nil(t, g.Check("POST", path, []byte(`{"id":1}`)), path)
	}
	assert.Nil(t, g.Check("POST", "/api/other", []byte(`{"role":"admin"}`)), "/api/:action alone")
}

// TestBypass_SemicolonQuery: Fastify with useSemicolonDelimiter ends the
// path at its first ';' and reads what follows as the query string, as
// its parser does (pairs split at '&' alone): /items/7;debug=1 is
// /items/7 with debug=1 for it. The contracts of that reading are checked
// with that query as request.query, beside the request's own.
func TestBypass_SemicolonQuery(t *testing.T) {
	contracts := `
endpoint: /items/:id
method: GET
invariants:
  - {expr: "!('debug' in request.query)", message: debug is not for clients}
  - {expr: "request.query.?limit.orValue('5') in ['5', '10', '50']", message: a page size}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	assertGETsRefused(t, g, []string{
		"/items/7?debug=1", "/items/7;debug=1", "/items/7;x=1&debug", "/items/7;debug=1;x=2",
		"/items/7;a=%ff&debug", "/items/7/;debug", "/ITEMS/7;debug=1", "/items/7;limit=5;drop", "/items/7;limit=%ff",
		"/items/7;limit=5?x=1", // limit "5?x=1" for Fastify
	}, []string{"/items/7", "/items/7;jsessionid=abc", "/items/7;limit=5", "/items/7;limit=5&x=1"})
}

// assertGETsRefused sends each of refused through Middleware and Check:
// an invariant refuses it, and the handler never runs; each of passed
// reaches the handler.
func assertGETsRefused(t *testing.T, g *Guard, refused, passed []string) {
	t.Helper()
	app := &echo{}
	h := g.Middleware(app)
	for _, target := range refused {
		assert.Equal(t, http.StatusUnprocessableEntity, send(h, "GET", target, "").Code, target)
		if v := g.Check("GET", target, nil); assert.NotNil(t, v, target) {
			assert.Equal(t, CodeInvariantViolated, v.Code, target)
		}
	}
	assert.Zero(t, app.calls, "the handler ran")
	for _, target := range passed {
		assert.Equal(t, http.StatusOK, send(h, "GET", target, "").Code, target)
	}
}

// TestBypass_EncodedSlashWithDotSegment: gin and httprouter route on
// r.URL.Path, where Go's server has decoded %2F and left dot segments as
// they are: /users/..%2Fadmin is /users/:id/admin to them, with id "..".
// The guard reads the path that way too, and enforces what it matches
// (found by review: no reading decoded the slash and kept the dots).
func TestBypass_EncodedSlashWithDotSegment(t *testing.T) {
	contracts := `
endpoint: /users/:id
method: POST
---
endpoint: /users/:id/admin
method: POST
invariants:
  - {expr: "false", message: never}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	var ranAdmin int
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // routes as httprouter does
		if s := strings.Split(strings.Trim(r.URL.Path, "/"), "/"); len(s) == 3 && s[0] == "users" && s[2] == "admin" {
			ranAdmin++
		}
	})
	h := g.Middleware(app)
	for _, p := range []string{"/users/..%2Fadmin", "/users/%2e%2e%2Fadmin", "/users/.%2Fadmin", "/users/..%2fadmin"} {
		assert.Equal(t, http.StatusUnprocessableEntity, send(h, "POST", p, `{}`).Code, p)
	}
	assert.Zero(t, ranAdmin, "the /users/:id/admin handler ran past a contract that refuses everything")
	assert.Equal(t, http.StatusOK, send(h, "POST", "/users/7", `{}`).Code)
}

// TestBypass_QueryPairsGoDrops: url.ParseQuery, and so request.query as
// r.URL.Query() reads it, drops a pair with a ';' or a malformed escape,
// which Express's and Fastify's query parsers keep: ?debug=1;x is debug
// "1;x" to them, ?debug=%zz debug "%zz", and ?x=1;debug=1 is debug "1" to
// a Go handler behind http.AllowQuerySemicolons; of a query of more than
// 10,000 pairs url.ParseQuery reads none. Such a query is checked as
// those readers read it too (found by review: the rules saw no debug,
// and a handler reading the query so got it).
func TestBypass_QueryPairsGoDrops(t *testing.T) {
	contracts := `
endpoint: /items/:id
method: GET
invariants:
  - {expr: "!('debug' in request.query)", message: debug is not for clients}
  - {expr: "request.query.?limit.orValue('5') in ['5', '10', '50']", message: a page size}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	assertGETsRefused(t, g, []string{
		"/items/7?debug=1;x", "/items/7?debug=%zz", "/items/7?debug=1%", "/items/7?x=%&debug",
		"/items/7?x=1;debug=1", "/items/7?limit=1000;x", "/items/7?limit=1000%", "/ITEMS/7/?debug=%zz",
		"/items/7?debug=1" + strings.Repeat("&", 10000), // more pairs than url.ParseQuery reads
	}, []string{"/items/7", "/items/7?x=%zz", "/items/7?limit=10&x=1;y", "/items/7?q=a%3Bb"})
}

// TestBypass_QueryPairsExpressDecodes: Express 5's query parser
// (node:querystring, its default) keeps a value with a malformed escape
// too, but decodes the escapes in it that are well formed: ?q=%zz%27 is q
// "%zz'" to it, where Fastify and qs keep "%zz%27" whole, and a rule that
// refuses a quote saw none (found by review: the readings kept every
// escape of such a value as sent).
func TestBypass_QueryPairsExpressDecodes(t *testing.T) {
	contracts := `
endpoint: /items/:id
method: GET
invariants:
  - {expr: "!('q' in request.query) || !request.query.q.contains(\"'\")", message: no quotes}
  - {expr: "request.query.?sort.orValue('name') in ['name', 'date', 'name%zz']", message: a sort order}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	assertGETsRefused(t, g, []string{
		"/items/7?q=%zz%27", "/items/7?q=1%27%20OR%201%3D1--%", "/items/7?sort=n%61me%zz&x=1",
	}, []string{"/items/7?q=%zz", "/items/7?q=a%20b", "/items/7?sort=name%zz", "/items/7?q=%zz&sort=date"})
}

// TestBypass_LetterCaseBeyondASCII: find-my-way with caseSensitive: false
// reads the decoded path and its patterns in lower case as JavaScript's
// toLowerCase writes them, which makes the Kelvin sign (U+212A) a k and
// Ä an ä: Fastify routes /api/%E2%84%AAeys to its /api/keys handler and
// /API/%C3%84RZTE to /api/ärzte. The guard's reading in any letter case
// does so too (found by review: it folded A-Z alone).
func TestBypass_LetterCaseBeyondASCII(t *testing.T) {
	contracts := `
endpoint: /api/keys
method: POST
schema: {type: object, additionalProperties: false}
---
endpoint: /api/ärzte
method: POST
schema: {type: object, additionalProperties: false}
---
endpoint: /api/οδος
method: POST
schema: {type: object, additionalProperties: false}
---
endpoint: /api/:name
method: PUT
schema: {type: object}
---
endpoint: /api/%C4%B0d
method: PUT
schema: {type: object, additionalProperties: false}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	bad := []byte(`{"role":"admin"}`)
	for _, path := range []string{
		"/api/%E2%84%AAeys", "/API/%E2%84%AAEYS", "/api/\u212aeys", "/api/%C3%84RZTE", "/Api/%C3%84rzte/",
		"/api/%CE%9F%CE%94%CE%9F%CE%A3", "/api/%CE%BF%CE%B4%CE%BF%CF%83",
	} {
		if v := g.Check("POST", path, bad); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
	}
	// İ is i and a combining dot above to toLowerCase: /api/İd (the
	// pattern) is /api/i̇d in any letter case, and not /api/id.
	for _, path := range []string{"/api/%C4%B0d", "/API/%C4%B0D", "/api/i%CC%87d", "/api/I%CC%87D"} {
		if v := g.Check("PUT", path, bad); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
	}
	assert.Nil(t, g.Check("POST", "/api/%E2%84%AAeys", []byte(`{}`)))
}

// TestBypass_ReverseProxyForwardsThePathReencoded: a Go reverse proxy
// (or any Go client forwarding r.URL) sends the upstream
// r.URL.EscapedPath(), which encodes r.URL.Path afresh when r.URL.RawPath
// holds a byte an encoded path should not ('{', '|', '"'): the client's
// %3B is a ';' again. /api/users%3Bx{ reaches the upstream as
// /api/users;x%7B, which Fastify with useSemicolonDelimiter (and Spring,
// stripping matrix parameters) routes to /api/users; the guard must
// check that route's contract, with the query that reading yields
// (found by review: the guard read only /api/users%3Bx{, which matches
// nothing, and the upstream's handler got the body unchecked).
func TestBypass_ReverseProxyForwardsThePathReencoded(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []string // the paths the upstream got, as sent
		body []string // the bodies its /api/users route got
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Routes as find-my-way with useSemicolonDelimiter: the path ends
		// at its first ';'.
		p, _, _ := strings.Cut(r.URL.EscapedPath(), ";")
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.RequestURI)
		if p == "/api/users" {
			body = append(body, string(b))
		}
		w.Header().Set("X-Handler", "ran")
	}))
	defer upstream.Close()
	target, err := url.Parse(upstream.URL)
	require.NoError(t, err)
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{{
		Endpoint: "/api/users", Method: "POST",
		Schema:     map[string]any{"type": "object", "required": []string{"ok"}, "properties": map[string]any{"ok": map[string]any{"const": true}}},
		Invariants: []Invariant{{Expr: "!has(request.query.x)", Message: "no x"}},
	}}})
	srv := httptest.NewServer(g.Middleware(httputil.NewSingleHostReverseProxy(target)))
	defer srv.Close()

	for _, path := range []string{"/api/users%3Bx{", "/api/users%3B{", "/api/users%3b|", `/api%2Fusers%3B"`, "/api/users%3Ba=%7B{"} {
		v := rawRequest(t, srv, post(path, invalid))
		assert.False(t, v.ran, "%s: the upstream got a body the guard did not pass (status %d)", path, v.status)
		assert.Equal(t, http.StatusBadRequest, v.status, path)
	}
	// The upstream reads x from the path (x=%7B%7B, x is "{{"): the invariant
	// sees that query.
	v := rawRequest(t, srv, post("/api/users%3Bx=%7B{", valid))
	assert.Equal(t, http.StatusUnprocessableEntity, v.status, "the query the upstream reads from the path")
	assert.Contains(t, string(v.body), "no x")
	// A valid body passes, on the path as the proxy forwards it; a
	// benign path with a '{' still reaches the upstream.
	for _, path := range []string{"/api/users%3Bq{", "/api/other{", "/static/a{b}"} {
		v := rawRequest(t, srv, post(path, valid))
		assert.True(t, v.ran, "%s: status %d %s", path, v.status, v.body)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{valid}, body, "the /api/users route got only the valid body")
	assert.Equal(t, []string{"/api/users;q%7B", "/api/other%7B", "/static/a%7Bb%7D"}, got, "the paths as the proxy forwards them")
}

// TestCheck_PathAsAGoProxyForwardsIt: Check and CheckRequest read a path
// as Middleware does, in the form a Go proxy forwards it too; under
// RequireContract a request only that form's readings match has a
// contract, and one no reading of either form matches has none.
func TestCheck_PathAsAGoProxyForwardsIt(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, RequireContract: true, Contracts: []Contract{{
		Endpoint: "/api/users", Method: "POST",
		Schema: map[string]any{"type": "object", "required": []string{"ok"}, "properties": map[string]any{"ok": map[string]any{"const": true}}},
	}}})
	for _, path := range []string{"/api/users%3Bx{", "/api/users%3Bx|", "/api%2fusers%3B{"} {
		v := g.Check("POST", path, []byte(invalid))
		if assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
		assert.Nil(t, g.Check("POST", path, []byte(valid)), path)
		v = g.CheckRequest(httptest.NewRequest("POST", path, strings.NewReader(invalid)))
		if assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
		assert.Nil(t, g.CheckRequest(httptest.NewRequest("POST", path, strings.NewReader(valid))), path)
	}
	for _, path := range []string{"/api/other{", "/api/users{", "/api/users%3B"} {
		v := g.Check("POST", path, []byte(valid))
		if assert.NotNil(t, v, path) {
			assert.Equal(t, CodeNoContract, v.Code, path)
		}
		v = g.CheckRequest(httptest.NewRequest("POST", path, strings.NewReader(valid)))
		if assert.NotNil(t, v, path) {
			assert.Equal(t, CodeNoContract, v.Code, path)
		}
	}
}

// TestBypass_EncodedSlashBesideASlashAsEmptyParameter: chi routes on
// r.URL.Path, decoded, when StripSlashes made its RoutePath of it, and
// matches a parameter to an empty segment there: /users/%2Forders/ is
// /users//orders to it, /users/{id}/orders with id "". The guard reads
// the path with its encoded slashes decoded and that empty segment kept
// too (found by review: no reading kept it, and the handler ran on a
// body the contract refuses).
func TestBypass_EncodedSlashBesideASlashAsEmptyParameter(t *testing.T) {
	contracts := `
endpoint: /users/:id/orders
method: POST
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
invariants:
  - {expr: "request.params.id == ''", message: only the empty id}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	r := chi.NewRouter()
	r.Use(g.Middleware, middleware.StripSlashes)
	rec := &recorder{}
	r.Method("POST", "/users/{id}/orders", rec)
	srv := httptest.NewServer(r)
	defer srv.Close()
	for _, path := range []string{"/users/%2Forders/", "/users%2F%2Forders/"} {
		v := rawRequest(t, srv, post(path, invalid))
		assert.Equal(t, http.StatusBadRequest, v.status, path)
	}
	assert.Empty(t, rec.ran(), "a handler ran on a body its contract refuses")
	v := rawRequest(t, srv, post("/users/%2Forders/", valid))
	assert.Equal(t, http.StatusOK, v.status, "the control request: id is empty")
	assert.Len(t, rec.ran(), 1)
	if v := g.Check("POST", "/users/%2Forders/", []byte(invalid)); assert.NotNil(t, v) {
		assert.Equal(t, CodeSchemaInvalid, v.Code)
	}
}

// TestBypass_TrailingSlashAsEmptyParameter: find-my-way (Fastify's
// router, defaults) reads a trailing slash as an empty last segment and
// matches a parameter to it: PUT /users/ reaches the /users/:id handler
// with id "", and with useSemicolonDelimiter PUT /users/;x=1 does too.
// The guard enforces /users/:id's contract on them, with id "" (found by
// review: every reading dropped the empty segment, and the request
// passed as one of no contract; TestServe_RoutingTricks sends them to
// Fastify).
func TestBypass_TrailingSlashAsEmptyParameter(t *testing.T) {
	contracts := `
endpoint: /users/:id
method: PUT
schema: {type: object, required: [ok], properties: {ok: {const: true}}}
invariants:
  - {expr: "request.params.id != ''", message: an id is needed}
`
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
	for _, path := range []string{"/users/", "/users/;x=1", "/USERS/", "/users//"} {
		if v := g.Check("PUT", path, []byte(invalid)); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeSchemaInvalid, v.Code, path)
		}
		if v := g.Check("PUT", path, []byte(valid)); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeInvariantViolated, v.Code, "%s: checked with id \"\"", path)
		}
	}
	assert.Nil(t, g.Check("PUT", "/users/7/", []byte(valid)), "the control: a trailing slash after an id")
}

// TestBypass_HeadToAMoreSpecificGetRoute: Express and Fastify send a
// HEAD to the GET route of its path when no HEAD route is as specific:
// HEAD /users/me reaches the GET /users/me handler beside a HEAD
// /users/:id route. The guard checks the GET /users/me contract on it as
// well as the HEAD /users/:id one (found by review: only the HEAD one
// was, and a query the GET contract refuses passed;
// TestServe_HeadToAMoreSpecificGetRoute sends it to Express and
// Fastify).
func TestBypass_HeadToAMoreSpecificGetRoute(t *testing.T) {
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{
		{Endpoint: "/users/me", Method: "GET", Invariants: []Invariant{{Expr: "!('debug' in request.query)", Message: "no debug"}}},
		{Endpoint: "/users/:id", Method: "HEAD", Invariants: []Invariant{{Expr: "request.params.id != 'x'", Message: "not x"}}},
	}})
	for _, path := range []string{"/users/me?debug=1", "/users/m%65?debug=1", "/users/me/?debug=1", "/USERS/ME?debug=1"} {
		if v := g.Check("HEAD", path, nil); assert.NotNil(t, v, path) {
			assert.Equal(t, CodeInvariantViolated, v.Code, path)
			assert.Equal(t, "no debug", v.Details[0].Message, path)
		}
	}
	assert.Nil(t, g.Check("HEAD", "/users/me", nil), "the control")
	assert.Nil(t, g.Check("HEAD", "/users/7?debug=1", nil), "the control: /users/7 is the HEAD route's alone")
	assert.NotNil(t, g.Check("HEAD", "/users/x", nil), "the HEAD contract")
}

// TestBypass_ChiURLFormat: chi's URLFormat middleware cuts the path chi
// routes on at the last '.' of its last segment, wherever it runs (before
// Middleware it sets chi's RoutePath, not r.URL, which the guard reads):
// /a/b.json is /a/b to chi, which routes it to the handler of /a/b
// (found by review: the guard matched /a/:x, which checks nothing, and
// the handler ran on a body the /a/b contract refuses).
func TestBypass_ChiURLFormat(t *testing.T) {
	contracts := bypassContracts + `
---
endpoint: /a/:x
method: POST
`
	for _, before := range []bool{true, false} {
		g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
		rec := &recorder{}
		r := chi.NewRouter()
		if before {
			r.Use(middleware.URLFormat, g.Middleware)
		} else {
			r.Use(g.Middleware, middleware.StripSlashes, middleware.URLFormat)
		}
		chiRoutes(r, rec)
		r.Method("POST", "/a/{x}", rec)
		for _, path := range []string{"/a/b.json", "/a/b%2Ejson", "/a/b.json;x=1", "/a/b.JSON"} {
			w := send(r, "POST", path, invalid)
			assert.Equal(t, http.StatusBadRequest, w.Code, "URLFormat before the guard: %v; %s", before, path)
		}
		assert.Empty(t, rec.ran(), "URLFormat before the guard: %v", before)
		assert.Equal(t, http.StatusOK, send(r, "POST", "/a/b.json", valid).Code, "the control")
		assert.Equal(t, http.StatusOK, send(r, "POST", "/a/c.json", invalid).Code, "/a/{x}: no check")
	}
}

// TestBypass_ChiURLFormatCutsADotSegment: URLFormat cuts a "." last
// segment to nothing, and StripSlashes the slash it leaves:
// /files/../. is /files/.. to chi, /files/{name} with name ".." (found
// by review: the guard read /files/../. as / or as /files/../., matched
// nothing, and the handler ran on a body the /files/:name contract
// refuses).
func TestBypass_ChiURLFormatCutsADotSegment(t *testing.T) {
	for _, before := range []bool{true, false} {
		g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": bypassContracts}), Logger: discard})
		rec := &recorder{}
		r := chi.NewRouter()
		if before {
			r.Use(middleware.URLFormat, middleware.StripSlashes, g.Middleware)
		} else {
			r.Use(g.Middleware, middleware.URLFormat, middleware.StripSlashes)
		}
		chiRoutes(r, rec)
		for _, path := range []string{"/files/../.", "/files/%2e%2e/%2e", "/files/../.;x=1"} {
			w := send(r, "POST", path, invalid)
			assert.Equal(t, http.StatusBadRequest, w.Code, "URLFormat before the guard: %v; %s", before, path)
		}
		assert.Empty(t, rec.ran(), "URLFormat before the guard: %v", before)
		assert.Equal(t, http.StatusOK, send(r, "POST", "/files/../.", valid).Code, "the control")
	}
}

// TestBypass_PathRewrittenBeforeTheGuardLeavingRawPath: a middleware
// before the guard that sets r.URL.Path alone leaves r.URL.RawPath as the
// client sent it, and chi routes on RawPath whenever it is set:
// /files/x%2F..%2F..%2Fpublic, its Path cleaned to /public, is
// /files/{name} to chi (found by review: the guard read /public only,
// matched no contract, and the handler ran on a body the /files/:name
// contract refuses).
func TestBypass_PathRewrittenBeforeTheGuardLeavingRawPath(t *testing.T) {
	clean := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.URL.Path = path.Clean(r.URL.Path) // RawPath left as it was
			next.ServeHTTP(w, r)
		})
	}
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": bypassContracts}), Logger: discard})
	rec := &recorder{}
	r := chi.NewRouter()
	r.Use(clean, g.Middleware)
	chiRoutes(r, rec)
	for _, p := range []string{"/files/x%2F..%2F..%2Fpublic", "/files/x%2F..%2F..%2Fitems%2F7"} {
		assert.Equal(t, http.StatusBadRequest, send(r, "POST", p, invalid).Code, p)
	}
	assert.Empty(t, rec.ran())
	assert.Equal(t, http.StatusOK, send(r, "POST", "/files/x%2F..%2F..%2Fpublic", valid).Code, "the control")
	// The path as ServeMux reads it, r.URL.Path encoded afresh, is read
	// too: /a/x%2F..%2Fb is /a/b to it.
	mux := http.NewServeMux()
	mux.Handle("POST /a/b", rec)
	assert.Equal(t, http.StatusBadRequest, send(clean(g.Middleware(mux)), "POST", "/a/x%2F..%2Fb", invalid).Code)
	assert.Len(t, rec.ran(), 1, "only the control ran")
}

// TestBypass_StripSlashesBeforeAMountEndingInAParameter: a router
// mounted at a pattern that ends in a parameter (chi's README:
// r.Route("/{articleID}", …) with r.Put("/", …)) takes /articles// with
// articleID "", and StripSlashes, on either side of the guard, makes
// /articles/// that path (found by review: the guard read it as
// /articles with two empty segments, matched nothing, and the handler
// ran on a body the /articles/{articleID} contract refuses).
func TestBypass_StripSlashesBeforeAMountEndingInAParameter(t *testing.T) {
	refusedThroughChi(t, "/articles/{articleID}", []func(http.Handler) http.Handler{middleware.StripSlashes},
		func(r chi.Router, h http.HandlerFunc) {
			r.Route("/articles", func(r chi.Router) {
				r.Route("/{articleID}", func(r chi.Router) {
					r.Use(middleware.StripSlashes)
					r.Put("/", h)
				})
			})
		},
		[]string{"/articles///", "/articles////", "/articles/%2F/", "/articles//%2F/"}, "/articles///")
}

// TestBypass_StripSlashesBeforeAMountAfterAnEmptyParameter: StripSlashes
// (with URLFormat, as chi's README uses them) before a router mounted at
// /articles/{articleID}/comments makes /articles//comments// its "/"
// route with articleID "" (found by review: the guard read the path as
// ending in an empty segment, or without its empty articleID, matched
// nothing, and the handler ran on a body the contract refuses).
func TestBypass_StripSlashesBeforeAMountAfterAnEmptyParameter(t *testing.T) {
	refusedThroughChi(t, "/articles/{articleID}/comments", []func(http.Handler) http.Handler{middleware.StripSlashes},
		commentsMount, []string{"/articles//comments//", "/articles//comments/%2F"}, "/articles//comments//")
}

// TestBypass_URLFormatLeavesTrailingSlashesBeforeAMount: URLFormat cuts
// /articles//comments//.json to /articles//comments//, and StripSlashes
// to /articles//comments/, which a router mounted at
// /articles/{articleID}/comments takes with articleID "" (found by
// review: the readings that cut the format ended in an empty segment, or
// dropped the empty articleID, and the handler ran on a body the
// contract refuses).
func TestBypass_URLFormatLeavesTrailingSlashesBeforeAMount(t *testing.T) {
	refusedThroughChi(t, "/articles/{articleID}/comments", []func(http.Handler) http.Handler{middleware.URLFormat, middleware.StripSlashes},
		commentsMount, []string{"/articles//comments//.json", "/articles//comments//.", "/articles//comments/%2F.json"}, "/articles//comments//.json")
}

// TestBypass_StripSlashesBeforeAMountEndingInParameters: a router
// mounted at a pattern that ends in two parameters takes /a/// with both
// "", and StripSlashes, on either side of the guard, makes /a//// that
// path (/a////.json, behind URLFormat too); three parameters, /a/////
// (found by review: the guard read the trailing slashes cut to two or to
// one only, matched nothing, and the handler ran on a body the contract
// refuses).
func TestBypass_StripSlashesBeforeAMountEndingInParameters(t *testing.T) {
	mountAt := func(pattern string, mws ...func(http.Handler) http.Handler) func(chi.Router, http.HandlerFunc) {
		return func(r chi.Router, h http.HandlerFunc) {
			r.Route(pattern, func(r chi.Router) {
				r.Use(mws...)
				r.Put("/", h)
			})
		}
	}
	refusedThroughChi(t, "/a/{x}/{y}", []func(http.Handler) http.Handler{middleware.StripSlashes},
		mountAt("/a/{x}/{y}"), []string{"/a////", "/a/%2F%2F%2F", "/a%2F%2F%2F%2F"}, "/a////")
	refusedThroughChi(t, "/a/{x}/{y}", []func(http.Handler) http.Handler{middleware.URLFormat, middleware.StripSlashes},
		mountAt("/a/{x}/{y}"), []string{"/a////.json", "/a////", "/a/%2F%2F/.json"}, "/a////.json")
	refusedThroughChi(t, "/a/{x}/{y}/{z}", []func(http.Handler) http.Handler{middleware.StripSlashes},
		mountAt("/a/{x}/{y}/{z}", middleware.StripSlashes), []string{"/a/////", "/a//////", "/a/%2F%2F%2F%2F%2F"}, "/a//////")
}

// TestBypass_URLFormatInAMountCutsAgain: URLFormat in a router and in
// a router it mounts cuts the path's last segment twice, once in each:
// /a/b.json.json is /a/b.json to the first, and /b to the mounted one,
// whose /b route runs (/a///.json.json is /a/// to a router mounted at
// /a/{x}/{y}, and /orders/.. /orders/ to one at /orders; found by
// review: the guard cut the format once, matched no contract, and the
// handler ran on a body the contract refuses).
func TestBypass_URLFormatInAMountCutsAgain(t *testing.T) {
	uf := []func(http.Handler) http.Handler{middleware.URLFormat}
	refusedThroughChi(t, "/a/b", uf, func(r chi.Router, h http.HandlerFunc) {
		r.Route("/a", func(r chi.Router) {
			r.Use(middleware.URLFormat)
			r.Put("/b", h)
		})
	}, []string{"/a/b.json.json", "/a/b.x.json", "/a/b%2Ejson.json"}, "/a/b.json.json")
	refusedThroughChi(t, "/a/{x}/{y}", uf, func(r chi.Router, h http.HandlerFunc) {
		r.Route("/a/{x}/{y}", func(r chi.Router) {
			r.Use(middleware.URLFormat, middleware.StripSlashes)
			r.Put("/", h)
		})
	}, []string{"/a///.json.json", "/a//.json.json"}, "/a///.json.json")
	refusedThroughChi(t, "/orders", uf, func(r chi.Router, h http.HandlerFunc) {
		r.Route("/orders", func(r chi.Router) {
			r.Use(middleware.URLFormat)
			r.Put("/", h)
		})
	}, []string{"/orders/..", "/orders/.json.json", "/orders/.x.y"}, "/orders/..")
}

// TestBypass_URLFormatCutsTheSegmentBeforeAFormatAlone: URLFormat cuts
// /a/b.json/.json to /a/b.json/, StripSlashes to /a/b.json, and
// URLFormat in the router mounted at /a cuts its /b.json to /b, its /b
// route (found by review: the guard cut the last segment alone, matched
// no contract, and the handler ran on a body the contract refuses).
func TestBypass_URLFormatCutsTheSegmentBeforeAFormatAlone(t *testing.T) {
	refusedThroughChi(t, "/a/b", []func(http.Handler) http.Handler{middleware.URLFormat, middleware.StripSlashes},
		func(r chi.Router, h http.HandlerFunc) {
			r.Route("/a", func(r chi.Router) {
				r.Use(middleware.URLFormat)
				r.Put("/b", h)
			})
		}, []string{"/a/b.json/.json", "/a%2Fb.json%2F.json"}, "/a/b.json/.json")
}

// commentsMount mounts h as the "/" PUT route of a router at
// /articles/{articleID}/comments.
func commentsMount(r chi.Router, h http.HandlerFunc) {
	r.Route("/articles/{articleID}/comments", func(r chi.Router) { r.Put("/", h) })
}

// refusedThroughChi builds a chi router that runs mws before the guard,
// then one that runs them after it, with routes from mount, and a PUT
// contract at endpoint that wants {"ok": true}: each path with an invalid
// body is refused and its handler never runs; control with a valid body
// passes.
func refusedThroughChi(t *testing.T, endpoint string, mws []func(http.Handler) http.Handler, mount func(chi.Router, http.HandlerFunc), paths []string, control string) {
	t.Helper()
	contracts := "endpoint: " + endpoint + "\nmethod: PUT\nschema: {type: object, required: [ok], properties: {ok: {const: true}}}\n"
	for _, before := range []bool{true, false} {
		g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": contracts}), Logger: discard})
		rec := &recorder{}
		r := chi.NewRouter()
		if before {
			r.Use(append(slices.Clone(mws), g.Middleware)...)
		} else {
			r.Use(append([]func(http.Handler) http.Handler{g.Middleware}, mws...)...)
		}
		mount(r, rec.ServeHTTP)
		for _, path := range paths {
			assert.Equal(t, http.StatusBadRequest, send(r, "PUT", path, invalid).Code, "the middlewares before the guard: %v; %s", before, path)
		}
		assert.Empty(t, rec.ran(), "the middlewares before the guard: %v", before)
		assert.Equal(t, http.StatusOK, send(r, "PUT", control, valid).Code, "the control")
	}
}

// TestBypass_StripSlashesBeforeURLFormatCutsAFormatAlone: StripSlashes
// cuts /a/////.json/ to /a/////.json, URLFormat to /a/////, and a
// router mounted at /a/{x}/{y}/{z} with StripSlashes of its own takes
// it with x, y and z "" (found by review: the guard read a format
// alone only at the very end of the path, not before a trailing slash,
// matched nothing, and the handler ran on a body its contract refuses).
func TestBypass_StripSlashesBeforeURLFormatCutsAFormatAlone(t *testing.T) {
	mountAt := func(pattern string, mws ...func(http.Handler) http.Handler) func(chi.Router, http.HandlerFunc) {
		return func(r chi.Router, h http.HandlerFunc) {
			r.Route(pattern, func(r chi.Router) {
				r.Use(mws...)
				r.Put("/", h)
			})
		}
	}
	refusedThroughChi(t, "/a/{x}/{y}/{z}", []func(http.Handler) http.Handler{middleware.StripSlashes, middleware.URLFormat},
		mountAt("/a/{x}/{y}/{z}", middleware.StripSlashes), []string{"/a/////.json/", "/a/%2F%2F%2F%2F.json/", "/a/////.x.json/"}, "/a/////.json/")
}

// TestBypass_URLFormatTwiceLeavesAFormatAlone: URLFormat and
// StripSlashes cut /a/.b/.json/.json to /a/.b/.json, and URLFormat in
// the router mounted at /a/{x} its /.json to /, x ".b" (found by review:
// the guard cut .b as a third format, matched nothing, and the handler
// ran on a body its contract refuses).
func TestBypass_URLFormatTwiceLeavesAFormatAlone(t *testing.T) {
	mountAt := func(pattern string, mws ...func(http.Handler) http.Handler) func(chi.Router, http.HandlerFunc) {
		return func(r chi.Router, h http.HandlerFunc) {
			r.Route(pattern, func(r chi.Router) {
				r.Use(mws...)
				r.Put("/", h)
			})
		}
	}
	refusedThroughChi(t, "/a/{x}", []func(http.Handler) http.Handler{middleware.URLFormat, middleware.StripSlashes},
		mountAt("/a/{x}", middleware.URLFormat), []string{"/a/.b/.json/.json", "/a/.b/.json%2F.json", "/a%2F.b/.json//.json"}, "/a/.b/.json/.json")
	refusedThroughChi(t, "/items/{id}", []func(http.Handler) http.Handler{middleware.CleanPath, middleware.URLFormat, middleware.StripSlashes},
		mountAt("/items/{id}", middleware.URLFormat, middleware.StripSlashes), []string{"/items/.j/.json/.json/"}, "/items/.j/.json/.json/")
}

// TestBypass_URLFormatCountsTheDotsItSees: behind CleanPath, chi's
// RoutePath is the path as sent, where %2e is no dot: URLFormat cuts
// /a/x/.json/.j%2e%2e%2e%2e at its one "." to /a/x/.json/, StripSlashes
// to /a/x/.json, and URLFormat in the router mounted at /a/{x} its
// /.json to / (found by review: the guard counted the decoded segment's
// five dots, more than three passes cut, left it whole, matched nothing,
// and the handler ran on a body its contract refuses).
func TestBypass_URLFormatCountsTheDotsItSees(t *testing.T) {
	mountAt := func(pattern string, mws ...func(http.Handler) http.Handler) func(chi.Router, http.HandlerFunc) {
		return func(r chi.Router, h http.HandlerFunc) {
			r.Route(pattern, func(r chi.Router) {
				r.Use(mws...)
				r.Put("/", h)
			})
		}
	}
	refusedThroughChi(t, "/a/{x}", []func(http.Handler) http.Handler{middleware.CleanPath, middleware.URLFormat, middleware.StripSlashes},
		mountAt("/a/{x}", middleware.URLFormat), []string{"/a/x//.json/.j%2e%2e%2e%2e", "/a/x/.json/.%2e%2e%2e"}, "/a/x//.json/.json")
}

// TestBypass_CaseVariantOfADeclaredProperty: one member whose name differs
// from a declared property only in letter case ("Role" for "role", the
// Kelvin sign for "k") is one the schema never checked, and encoding/json
// fills the property's struct field from it. The guard refuses it at the
// member, in nested objects and in allOf and $ref branches too; exact
// names and members of other names still pass.
func TestBypass_CaseVariantOfADeclaredProperty(t *testing.T) {
	role := map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"enum": []any{"user"}}}}
	g := mustNew(t, Options{Logger: discard, Contracts: []Contract{
		{Endpoint: "/t", Method: "POST", Schema: role},
		{Endpoint: "/nested", Method: "POST", Schema: map[string]any{"type": "object", "properties": map[string]any{"user": role}}},
		{Endpoint: "/allof", Method: "POST", Schema: map[string]any{"allOf": []any{role, map[string]any{"required": []any{"name"}}}}},
		{Endpoint: "/ref", Method: "POST", Schema: map[string]any{
			"definitions": map[string]any{"r": role},
			"type":        "object", "properties": map[string]any{"user": map[string]any{"$ref": "#/definitions/r"}},
		}},
		{Endpoint: "/key", Method: "POST", Schema: map[string]any{"type": "object", "properties": map[string]any{"key": map[string]any{"const": 1}}}},
		{Endpoint: "/not", Method: "POST", Schema: map[string]any{"type": "object", "not": map[string]any{"properties": map[string]any{"role": map[string]any{"const": "admin"}}}}},
		{Endpoint: "/if", Method: "POST", Schema: map[string]any{"type": "object",
			"if":   map[string]any{"properties": map[string]any{"role": map[string]any{"const": "admin"}}, "required": []any{"role"}},
			"then": map[string]any{"required": []any{"token"}}}},
		{Endpoint: "/open", Method: "POST", Schema: map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"enum": []any{"user"}}},
			"patternProperties": map[string]any{"^R": map[string]any{}}, "additionalProperties": false}},
	}})
	type target struct {
		Role string `json:"role"`
		Key  int    `json:"key"`
		User struct {
			Role string `json:"role"`
		} `json:"user"`
	}
	var got []target
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v target
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		got = append(got, v)
	})
	h := g.Middleware(app)
	send := func(path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(body)))
		return w
	}
	for _, c := range []struct{ path, body, at, prop string }{
		{"/t", `{"Role":"admin"}`, "/Role", "role"},
		{"/t", `{"ROLE":"admin"}`, "/ROLE", "role"},
		{"/t", `{"rOlE":"admin","other":1}`, "/rOlE", "role"},
		{"/nested", `{"user":{"Role":"admin"}}`, "/user/Role", "role"},
		{"/allof", `{"name":"x","Role":"admin"}`, "/Role", "role"},
		{"/ref", `{"user":{"ROLE":"admin"}}`, "/user/ROLE", "role"},
		{"/key", `{"\u212aey":2}`, "/\u212aey", "key"},
		{"/key", `{"KEY":2}`, "/KEY", "key"},
		{"/open", `{"Role":"admin"}`, "/Role", "role"}, // a pattern takes it past additionalProperties: false
		{"/not", `{"Role":"admin"}`, "/Role", "role"},  // a failure inside not would let it pass
		{"/if", `{"Role":"admin"}`, "/Role", "role"},   // nor may it choose the else branch
	} {
		w := send(c.path, c.body)
		eb := rejected(t, w, http.StatusBadRequest, CodeSchemaInvalid)
		assert.Contains(t, eb.Details, Detail{Path: c.at, Message: `is not allowed: it differs only in letter case from the property "` + c.prop + `", whose field encoding/json would fill from it`}, "%s %s", c.path, c.body)
	}
	for _, v := range got {
		assert.NotEqual(t, "admin", v.Role, "the handler ran with role=admin")
		assert.NotEqual(t, "admin", v.User.Role, "the handler ran with user.role=admin")
		assert.NotEqual(t, 2, v.Key, "the handler ran with key=2")
	}
	assert.Empty(t, got, "the handler never ran")

	// additionalProperties: false keeps its own failure, once.
	closed := mustNew(t, Options{Logger: discard, Contracts: []Contract{{Endpoint: "/c", Method: "POST", Schema: map[string]any{
		"type": "object", "properties": map[string]any{"role": map[string]any{}}, "additionalProperties": false}}}})
	v := closed.Check("POST", "/c", []byte(`{"Role":"admin"}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{Path: "/Role", Message: "is not allowed"}}, v.Details)

	// Exact names, and members of other names, pass.
	for _, c := range []struct{ path, body string }{
		{"/t", `{"role":"user"}`}, {"/t", `{"role":"user","roles":["admin"],"Rolf":1}`}, {"/t", `{}`},
		{"/nested", `{"user":{"role":"user","Name":"x"}}`}, {"/allof", `{"name":"x","role":"user"}`},
		{"/ref", `{"user":{"role":"user"},"USER2":1}`}, {"/key", `{"key":1,"keys":2}`}, {"/open", `{"role":"user","Rx":1}`},
		{"/not", `{"role":"user","Roles":1}`}, {"/if", `{"role":"admin","token":"t"}`}, {"/if", `{"role":"user"}`},
	} {
		w := send(c.path, c.body)
		assert.Equal(t, http.StatusOK, w.Code, "%s %s: %s", c.path, c.body, w.Body.String())
	}
}
