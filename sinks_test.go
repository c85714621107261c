package contractguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
	"github.com/contractguard/contractguard/sink"
)

// sinkGuard is a guard with sink protection on, a licence for it, a
// contract for /users/{id}, and its logs.
func sinkGuard(t *testing.T, mod ...func(*Options)) (*Guard, *bytes.Buffer) {
	t.Helper()
	v := trustTestVendor(t)
	var logs bytes.Buffer
	o := Options{SinkProtection: true, LicenseKey: v.key(t), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Contracts: []Contract{{Endpoint: "/users/{id}", Method: "POST",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}
	for _, m := range mod {
		m(&o)
	}
	return mustNew(t, o), &logs
}

// TestSinks_InputReachesTheSinks: a request that passed carries its input
// to the sink package: a query spliced from the body is blocked before it
// runs, counted and logged with the route and the input's path, never its
// value; the same query from a constant passes.
func TestSinks_InputReachesTheSinks(t *testing.T) {
	g, logs := sinkGuard(t)
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := Body(r)
		name := b.(map[string]any)["name"].(string)
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = '"+name+"'", sink.SQLite))
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = 'ada'", sink.SQLite))
	}))
	send(h, "POST", "/users/7", `{"name":"x' OR '1'='1"}`)
	send(h, "POST", "/users/7", `{"name":"O'Brien"}`)
	require.Len(t, errs, 4)
	assert.True(t, errors.Is(errs[0], sink.ErrBlocked), "%v", errs[0])
	assert.NoError(t, errs[1])
	assert.True(t, errors.Is(errs[2], sink.ErrBlocked), "a name with a quote spliced in breaks the literal: %v", errs[2])
	assert.NoError(t, errs[3])
	assert.EqualValues(t, 2, g.Stats().SinkBlocks["sql"])
	assert.Contains(t, logs.String(), `msg="contractguard: sink protection blocked a call" sink=sql route="POST /users/{id}" input=body path=/name`)
	assert.NotContains(t, logs.String(), "OR '1'")
}

// TestSinks_SmallBodyOutlivesThePooledTape: a small body's parse is the
// pooled request's (request.release), which the next request parses into;
// the sinks keep the input of a request for its handler's calls, which may
// come after other requests went through: theirs is a copy. Here the
// calls are made once both requests are done.
func TestSinks_SmallBodyOutlivesThePooledTape(t *testing.T) {
	g, _ := sinkGuard(t)
	var kept []*http.Request
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { kept = append(kept, r) }))
	send(h, "POST", "/users/7", `{"name":"x' OR '1'='1"}`)
	send(h, "POST", "/users/7", `{"name":"O'Brien"}`)
	require.Len(t, kept, 2)
	err := sink.CheckSQL(kept[0].Context(), "SELECT * FROM users WHERE name = '"+"x' OR '1'='1"+"'", sink.SQLite)
	assert.True(t, errors.Is(err, sink.ErrBlocked), "%v", err)
	assert.NoError(t, sink.CheckSQL(kept[0].Context(), "SELECT * FROM users WHERE name = 'O''Brien'", sink.SQLite), "the other request's input")
	err = sink.CheckSQL(kept[1].Context(), "SELECT * FROM users WHERE name = 'O'Brien'", sink.SQLite)
	assert.True(t, errors.Is(err, sink.ErrBlocked), "%v", err)
	b, ok := Body(kept[0])
	require.True(t, ok)
	assert.Equal(t, map[string]any{"name": "x' OR '1'='1"}, b)
}

// TestSinks_PathParameterReachesTheSinks: the path parameters reach the
// sinks as the handler reads them, after the guard is done with the
// request it checked (which goes back to a pool: the sinks have a copy of
// the path's segments).
func TestSinks_PathParameterReachesTheSinks(t *testing.T) {
	g, logs := sinkGuard(t)
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/users/")
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE id = "+id, sink.SQLite))
	}))
	send(h, "POST", "/users/7%20OR%201=1", `{}`)
	send(h, "POST", "/users/7", `{}`)
	require.Len(t, errs, 2)
	assert.True(t, errors.Is(errs[0], sink.ErrBlocked), "%v", errs[0])
	assert.NoError(t, errs[1])
	assert.Contains(t, logs.String(), `input="path parameter" path=id`)
}

// TestSinks_LearningModeReports: in learning mode a sink call the input
// changes happens, and is reported.
func TestSinks_LearningModeReports(t *testing.T) {
	g, logs := sinkGuard(t, func(o *Options) { o.LearningMode = true })
	var err error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err = sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE id = "+r.PathValue("id")+r.URL.Query().Get("q"), sink.SQLite)
	}))
	send(h, "POST", "/users/7?q=%20OR%201=1", `{}`)
	assert.NoError(t, err, "report only")
	assert.EqualValues(t, 1, g.Stats().SinkBlocks["sql"])
	assert.Contains(t, logs.String(), "learning mode: sink protection would have blocked a call")
}

// TestSinks_OffRecordsNothing: with sink protection off, no input is in
// the context, and a sink lets everything through.
func TestSinks_OffRecordsNothing(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{Endpoint: "/users/{id}", Method: "POST"}}, Logger: discard})
	var got *taint.Request
	var err error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = taint.FromContext(r.Context())
		err = sink.CheckSQL(r.Context(), "SELECT * FROM t WHERE a = '"+r.URL.Query().Get("q")+"'", sink.SQLite)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/users/7?q="+strings.ReplaceAll("x' OR '1'='1", " ", "%20"), strings.NewReader("{}")))
	assert.Nil(t, got)
	assert.NoError(t, err)
}

// TestSinks_LearningContractKeepsTheInput: a contract that learns passes a
// request whose body it refuses before it runs (a media type, a size over
// the limit), as it came; sink protection still has the request's input
// then — the query, and the body as far as the guard read it, parsed as
// JSON whatever its media type says — so a client cannot turn the sinks'
// checks off by its Content-Type or its body's size. The handler gets the
// body's bytes whole.
func TestSinks_LearningContractKeepsTheInput(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection, o.MaxBodyBytes = true, 64 })
	type seen struct {
		body          string
		query, inBody error
	}
	var got []seen
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var v struct{ SKU string }
		json.Unmarshal(b, &v)
		got = append(got, seen{string(b),
			sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE sku = '"+r.URL.Query().Get("q")+"'", sink.SQLite),
			sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE sku = '"+v.SKU+"'", sink.SQLite)})
	}))
	const attack = "?q=x%27%20OR%20%271%27=%271"
	long := `{"sku":"a","qty":1,"note":"` + strings.Repeat("n", 64) + `"}`
	injected := `{"sku":"x' OR '1'='1","qty":1}`
	send(h, "POST", "/orders"+attack, `{"sku":"a","qty":1}`)                 // the contract ran: the input is its parse
	send(h, "POST", "/orders"+attack, `sku=a`, "Content-Type", "text/plain") // refused media type
	send(h, "POST", "/orders", injected, "Content-Type", "text/plain")       // the same, the attack in the body
	send(h, "POST", "/orders"+attack, long)                                  // over the limit by its length
	chunked := httptest.NewRequest("POST", "/orders"+attack, strings.NewReader(long))
	chunked.Header.Set("Content-Type", "application/json")
	chunked.ContentLength = -1 // over the limit as it is read
	h.ServeHTTP(httptest.NewRecorder(), chunked)

	require.Len(t, got, 5)
	for i, want := range []string{`{"sku":"a","qty":1}`, `sku=a`, injected, long, long} {
		assert.Equal(t, want, got[i].body, "request %d: the handler gets the body whole", i)
	}
	for _, i := range []int{0, 1, 3, 4} {
		assert.ErrorIs(t, got[i].query, sink.ErrBlocked, "request %d: the query's injection", i)
	}
	assert.ErrorIs(t, got[2].inBody, sink.ErrBlocked, "the body's injection, sent as text/plain")
	assert.NoError(t, got[2].query)
	assert.NoError(t, got[0].inBody)
	assert.EqualValues(t, 5, g.Metrics().RequestsValidated)
}

// TestSinks_LearningTypedContractKeepsTheInput: the same for a typed
// handler whose contract learns: the body of another media type is
// decoded into T as with the guard off, and the sinks have the input.
func TestSinks_LearningTypedContractKeepsTheInput(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection = true })
	type order struct {
		_   struct{} `cg:"mode=learn"`
		SKU string   `json:"sku"`
	}
	var sku string
	var err error
	h := Handle(g, func(w http.ResponseWriter, r *http.Request, o order) {
		sku = o.SKU
		err = sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE note = '"+r.URL.Query().Get("q")+"'", sink.SQLite)
	})
	rec := send(h, "POST", "/typed?q=x%27%20OR%20%271%27=%271", `{"sku":"a"}`, "Content-Type", "text/plain")
	require.Equal(t, 200, rec.Code, rec.Body.String())
	assert.Equal(t, "a", sku)
	assert.ErrorIs(t, err, sink.ErrBlocked)
}

// TestSinks_LearningContractKeepsTheInputOfABodyOverTheLimit: of a body
// over the limit on a learning contract, the guard holds the part it
// read (the first MaxBodyBytes bytes, read for the sinks when the body was
// refused unread for its Content-Length), decoded if it was encoded, and
// the sinks know the whole strings
// in it: the handler, which reads all of the body, splices one in (found
// by review: the cut JSON text, or the compressed bytes, were one input
// that no query holds).
func TestSinks_LearningContractKeepsTheInputOfABodyOverTheLimit(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection, o.MaxBodyBytes = true, 80 })
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			require.NoError(t, err)
			rd = zr
		}
		b, err := io.ReadAll(rd)
		require.NoError(t, err)
		var v struct{ SKU string }
		require.NoError(t, json.Unmarshal(b, &v))
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE sku = '"+v.SKU+"'", sink.SQLite))
	}))
	body := `{"sku":"x' OR '1'='1","qty":1,"note":"` + strings.Repeat("n", 64) + `"}`
	send(h, "POST", "/orders", body)
	chunked := httptest.NewRequest("POST", "/orders", strings.NewReader(body))
	chunked.ContentLength = -1
	h.ServeHTTP(httptest.NewRecorder(), chunked)
	small := gzipped(t, []byte(body))
	require.Less(t, len(small), 80, "under the limit as it comes")
	send(h, "POST", "/orders", string(small), "Content-Encoding", "gzip")
	require.Len(t, errs, 3)
	for _, i := range []int{0, 1, 2} {
		assert.ErrorIs(t, errs[i], sink.ErrBlocked, []string{"over the limit by its length", "over the limit as read", "gzip, over the limit decoded"}[i])
	}
}

// TestSinks_LearningContractRequestWithoutABody: a request made in code
// with no Body (nil, which http.Request allows: no body) and a
// Content-Length over the limit, whose media type a learning contract
// refuses, panicked in the read for the sinks (a nil reader): it passes
// as it came, with no body for the sinks, through Middleware and
// CheckRequest alike.
func TestSinks_LearningContractRequestWithoutABody(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection, o.MaxBodyBytes = true, 64 })
	calls := 0
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	req := func() *http.Request {
		return &http.Request{Method: "POST", URL: &url.URL{Path: "/orders"}, Header: http.Header{"Content-Type": {"text/plain"}}, ContentLength: 100}
	}
	w := httptest.NewRecorder()
	require.NotPanics(t, func() { h.ServeHTTP(w, req()) })
	assert.Equal(t, 200, w.Code)
	assert.Equal(t, 1, calls)
	require.NotPanics(t, func() { assert.Nil(t, g.CheckRequest(req())) })
}

// TestSinks_EveryReadingsParameters: a handler routing on r.URL.Path
// reads /run/ls%2F$(id) as /run/:cmd/:arg, with arg $(id), where the
// guard's first reading has one parameter, ls/$(id); the sinks know the
// parameters of every reading that matched a contract, and the query of
// one that reads it from the path (found by review).
func TestSinks_EveryReadingsParameters(t *testing.T) {
	g, _ := sinkGuard(t, func(o *Options) {
		o.Contracts = []Contract{{Endpoint: "/run/{cmd}", Method: "POST"}, {Endpoint: "/run/{cmd}/{arg}", Method: "POST"}}
	})
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := strings.Split(r.URL.Path, "/")
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM jobs WHERE arg = "+s[len(s)-1], sink.SQLite))
	}))
	send(h, "POST", "/run/ls%2F1%20OR%201=1", `{}`)
	send(h, "POST", "/run/ls%2F7", `{}`)
	require.Len(t, errs, 2)
	assert.ErrorIs(t, errs[0], sink.ErrBlocked)
	assert.NoError(t, errs[1])

	// Fastify with useSemicolonDelimiter: /run/ls;x=… is /run/ls with
	// the query x=….
	var err error
	h = g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, q, _ := strings.Cut(r.URL.Path, ";")
		vals, _ := url.ParseQuery(q)
		err = sink.CheckSQL(r.Context(), "SELECT * FROM jobs WHERE arg = "+vals.Get("x"), sink.SQLite)
	}))
	send(h, "POST", "/run/ls;x=1%20OR%201=1", `{}`)
	assert.ErrorIs(t, err, sink.ErrBlocked)
}

// TestSinks_LearningContractKeepsEveryReadingsParameters: a request whose
// body learning contracts refuse before they run (its media type) passes
// with the parameters of every reading of its path that matched, as one
// they ran on does (found by review: only the first reading's were kept).
func TestSinks_LearningContractKeepsEveryReadingsParameters(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) {
		o.SinkProtection, o.ContractsFS = true, nil
		o.Contracts = []Contract{
			{Endpoint: "/run/{cmd}", Method: "POST", Mode: ModeLearn, Schema: map[string]any{"type": "object"}},
			{Endpoint: "/run/{cmd}/{arg}", Method: "POST", Mode: ModeLearn, Schema: map[string]any{"type": "object"}},
		}
	})
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := strings.Split(r.URL.Path, "/")
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM jobs WHERE arg = "+s[len(s)-1], sink.SQLite))
	}))
	send(h, "POST", "/run/ls%2F1%20OR%201=1", `x`, "Content-Type", "text/plain")
	send(h, "POST", "/run/ls%2F7", `x`, "Content-Type", "text/plain")
	require.Len(t, errs, 2)
	assert.ErrorIs(t, errs[0], sink.ErrBlocked)
	assert.NoError(t, errs[1])
	assert.EqualValues(t, 2, g.Metrics().RequestsWouldBlock, "both passed as would-block")
}

// TestSinks_LearningContractKeepsTheInputOfABodyOfAnotherMediaTypeOverTheLimit:
// a body a learning contract refuses for its media type whose
// Content-Length is also over the limit is read as far as the limit for
// the sinks, as one refused for its length alone is: the handler, which
// reads the body whatever its Content-Type, splices one of its strings
// in. (Refused for its media type first, it was left unread: a
// Content-Type of text/plain turned the sinks' checks of the body off.)
func TestSinks_LearningContractKeepsTheInputOfABodyOfAnotherMediaTypeOverTheLimit(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection, o.MaxBodyBytes = true, 80 })
	var errs []error
	var got []string
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		got = append(got, string(b))
		var v struct{ SKU string }
		require.NoError(t, json.Unmarshal(b, &v))
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE sku = '"+v.SKU+"'", sink.SQLite))
	}))
	body := `{"sku":"x' OR '1'='1","qty":1,"note":"` + strings.Repeat("n", 64) + `"}`
	for _, ct := range []string{"text/plain", "application/json; charset=latin1"} {
		w := send(h, "POST", "/orders", body, "Content-Type", ct)
		require.Equal(t, 200, w.Code, ct)
	}
	require.Len(t, errs, 2)
	for i, ct := range []string{"text/plain", "application/json; charset=latin1"} {
		assert.Equal(t, body, got[i], "%s: the body as it came", ct)
		assert.ErrorIs(t, errs[i], sink.ErrBlocked, ct)
	}
}

// TestSinks_LearningModeCountsACallOnce: in learning mode a sink reports
// every input that would have blocked a call, each logged, but the call
// counts once in the metrics (contractguard_sink_blocks_total counts
// calls), as the call it blocks counts once in enforcement.
func TestSinks_LearningModeCountsACallOnce(t *testing.T) {
	for _, learning := range []bool{false, true} {
		g, logs := sinkGuard(t, func(o *Options) {
			o.LearningMode = learning
			o.Contracts[0].Schema = map[string]any{"type": "object"}
		})
		var errs []error
		h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := Body(r)
			m := b.(map[string]any)
			s := func(k string) string { return m[k].(string) }
			errs = append(errs, sink.CheckCmd(r.Context(), exec.Command("sh", "-c", "echo "+s("a")+" "+s("b"))))
			errs = append(errs, sink.CheckPath(r.Context(), "/srv/uploads/"+s("c")+"/"+s("d")))
		}))
		require.Equal(t, 200, send(h, "POST", "/users/7", `{"a":"x; cat /tmp/q","b":"y | cat /etc/passwd","c":"../../etc","d":"../../../root"}`).Code)
		require.Len(t, errs, 2)
		for _, err := range errs {
			assert.Equal(t, !learning, errors.Is(err, sink.ErrBlocked), "learning %v: %v", learning, err)
		}
		s := g.Stats()
		assert.EqualValues(t, 1, s.SinkBlocks["shell"], "learning %v", learning)
		assert.EqualValues(t, 1, s.SinkBlocks["file"], "learning %v", learning)
		if learning {
			assert.Equal(t, 2, strings.Count(logs.String(), "sink=shell"), "each input that would have blocked the call is logged")
			assert.Equal(t, 2, strings.Count(logs.String(), "sink=file"), "each input that would have blocked the call is logged")
		}
	}
}

// TestSinks_RouterWildcardsReachTheSinks: on a typed route the guard has
// no pattern for, the parameters ServeMux and chi extracted are input,
// their wildcards too: a {path...} of ServeMux (and the parameters beside
// it) and chi's * (found by a review: neither was recorded, so
// r.PathValue("path") of /files/..%2F..%2Fetc%2Fpasswd reached a file
// name unchecked).
func TestSinks_RouterWildcardsReachTheSinks(t *testing.T) {
	g, _ := sinkGuard(t)
	type none struct{}
	var errs []error
	mux := http.NewServeMux()
	mux.Handle("POST /files/{owner}/{path...}", Handle(g, func(w http.ResponseWriter, r *http.Request, _ none) {
		errs = append(errs, sink.CheckPath(r.Context(), "/srv/uploads/"+r.PathValue("path")))
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM files WHERE owner = '"+r.PathValue("owner")+"'", sink.SQLite))
	}))
	router := chi.NewRouter()
	router.Method("POST", "/blobs/*", Handle(g, func(w http.ResponseWriter, r *http.Request, _ none) {
		p, _ := url.PathUnescape(chi.URLParam(r, "*"))
		errs = append(errs, sink.CheckPath(r.Context(), "/srv/uploads/"+p))
	}))
	for _, c := range []struct {
		h      http.Handler
		target string
	}{
		{mux, "/files/ada/..%2F..%2Fetc%2Fpasswd"},
		{mux, "/files/x'%20OR%20'1'='1/a.txt"},
		{router, "/blobs/..%2F..%2Fsecret.txt"},
	} {
		errs = errs[:0]
		rec := send(c.h, "POST", c.target, `{}`)
		require.Equal(t, 200, rec.Code, rec.Body.String())
		require.NotEmpty(t, errs)
		blocked := false
		for _, err := range errs {
			blocked = blocked || errors.Is(err, sink.ErrBlocked)
		}
		assert.True(t, blocked, "%s: %v", c.target, errs)
	}
	var be *sink.BlockedError
	require.ErrorAs(t, errs[0], &be)
	assert.Equal(t, "POST /blobs/*", be.Route)
	errs = errs[:0]
	send(mux, "POST", "/files/ada/reports/q1.pdf", `{}`)
	send(router, "POST", "/blobs/reports/q1.pdf", `{}`)
	require.Len(t, errs, 3)
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

// TestSinks_ServeMuxRouteNamedOnce: a block on a typed ServeMux route names
// the route as "POST /files/{name}", its method once (it was "POST POST
// /files/{name}": the pattern names its method, and the request's was put
// before it).
func TestSinks_ServeMuxRouteNamedOnce(t *testing.T) {
	g, logs := sinkGuard(t)
	type none struct{}
	var err error
	mux := http.NewServeMux()
	mux.Handle("POST /files/{name}", Handle(g, func(w http.ResponseWriter, r *http.Request, _ none) {
		err = sink.CheckPath(r.Context(), "/srv/uploads/"+r.PathValue("name"))
	}))
	send(mux, "POST", "/files/..%2Fsecret.txt", `{}`)
	var be *sink.BlockedError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "POST /files/{name}", be.Route)
	assert.Contains(t, logs.String(), `route="POST /files/{name}"`)
}

// TestSinks_ChiRoutePathParamsAsTheHandlerGetsThem: behind chi's
// StripSlashes, chi routes on r.URL.Path (decoded) and hands its
// parameters over decoded: they are input as they are, not decoded again
// (found by review: /blobs/%41'%20OR%20'1'='1%2541/ was input
// "A' OR '1'='1A", while the handler put "A' OR '1'='1%41" in its query,
// which was not blocked).
func TestSinks_ChiRoutePathParamsAsTheHandlerGetsThem(t *testing.T) {
	g, _ := sinkGuard(t)
	type none struct{}
	var err error
	router := chi.NewRouter()
	router.Use(middleware.StripSlashes)
	router.Method("POST", "/blobs/{name}", Handle(g, func(w http.ResponseWriter, r *http.Request, _ none) {
		err = sink.CheckSQL(r.Context(), "SELECT * FROM blobs WHERE name = '"+chi.URLParam(r, "name")+"'", sink.SQLite)
	}))
	rec := send(router, "POST", "/blobs/%41'%20OR%20'1'='1%2541/", `{}`)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	assert.ErrorIs(t, err, sink.ErrBlocked)
	send(router, "POST", "/blobs/%41%2561/", `{}`)
	assert.NoError(t, err)
}

// TestSinks_ChiParamsOutliveTheRequest: chi keeps a route's parameters in
// a context it takes back for the next request once the handler returns.
// A sink called after that, from work the handler left running on a
// context.WithoutCancel of the request's, still has this request's
// parameters as input (they were read then, and were the next request's:
// the injection below passed).
func TestSinks_ChiParamsOutliveTheRequest(t *testing.T) {
	g, _ := sinkGuard(t)
	type none struct{}
	later := make(chan func() error, 2)
	router := chi.NewRouter()
	router.Method("POST", "/blobs/{name}", Handle(g, func(w http.ResponseWriter, r *http.Request, _ none) {
		name, _ := url.PathUnescape(chi.URLParam(r, "name"))
		ctx := context.WithoutCancel(r.Context())
		later <- func() error {
			return sink.CheckSQL(ctx, "SELECT * FROM blobs WHERE name = '"+name+"'", sink.SQLite)
		}
	}))
	require.Equal(t, 200, send(router, "POST", "/blobs/x'%20OR%20'1'='1", `{}`).Code)
	require.Equal(t, 200, send(router, "POST", "/blobs/safe", `{}`).Code)
	assert.ErrorIs(t, (<-later)(), sink.ErrBlocked)
	assert.NoError(t, (<-later)())
}

// TestSinks_FormFieldsReachTheSinks: a form's fields reach the sinks as
// r.FormValue reads them, urlencoded or multipart, names and values (found
// by a review: a multipart body was one input, whole, so a field r.FormValue
// read went into a query unchecked, and of a urlencoded form only the
// values counted).
func TestSinks_FormFieldsReachTheSinks(t *testing.T) {
	g, _ := sinkGuard(t, func(o *Options) {
		o.Contracts = []Contract{{Endpoint: "/search", Method: "POST"}} // no schema: any media type
	})
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("name") // either form
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = '"+name+"'", sink.SQLite))
		for k := range r.PostForm {
			if k != "name" {
				errs = append(errs, sink.CheckSQL(r.Context(), "UPDATE users SET "+k+" = 1 WHERE id = 7", sink.SQLite))
			}
		}
	}))
	multi := "--XX\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx' OR '1'='1\r\n--XX--\r\n"
	require.Equal(t, 200, send(h, "POST", "/search", multi, "Content-Type", "multipart/form-data; boundary=XX").Code)
	require.Equal(t, 200, send(h, "POST", "/search", "name=x%27+OR+%271%27%3D%271", "Content-Type", "application/x-www-form-urlencoded").Code)
	require.Equal(t, 200, send(h, "POST", "/search", "name=ada&admin%3D1%2C+role=1", "Content-Type", "application/x-www-form-urlencoded").Code)
	require.Len(t, errs, 4)
	assert.ErrorIs(t, errs[0], sink.ErrBlocked, "a multipart field")
	assert.ErrorIs(t, errs[1], sink.ErrBlocked, "a urlencoded field")
	assert.NoError(t, errs[2])
	assert.ErrorIs(t, errs[3], sink.ErrBlocked, "a urlencoded field's name")
}

// TestSinks_FormPastGoBoundsFailsClosed: the fields of a form past what
// Go's readers read (ReadForm: 1,000 parts; url.ParseQuery: 10,000
// pairs) are not all read into the sinks' inputs (reading them cost
// 47 ms and 32 MiB a megabyte), so a sink fails closed on such a request:
// a handler that streams the parts (r.MultipartReader) gets part 1,001,
// which would otherwise reach a query unchecked.
func TestSinks_FormPastGoBoundsFailsClosed(t *testing.T) {
	g, _ := sinkGuard(t, func(o *Options) {
		o.Contracts = []Contract{{Endpoint: "/search", Method: "POST"}} // no schema: any media type
	})
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "ada"
		if mr, err := r.MultipartReader(); err == nil {
			for p, err := mr.NextPart(); err == nil; p, err = mr.NextPart() {
				if b, _ := io.ReadAll(p); p.FormName() == "name" {
					name = string(b)
				}
			}
		}
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM users WHERE name = '"+name+"'", sink.SQLite))
	}))
	field := "--XX\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx' OR '1'='1\r\n--XX--\r\n"
	for _, n := range []int{1000, 999} {
		body := strings.Repeat("--XX\r\n\r\n\r\n", n) + field
		require.Equal(t, 200, send(h, "POST", "/search", body, "Content-Type", "multipart/form-data; boundary=XX").Code)
	}
	require.Equal(t, 200, send(h, "POST", "/search", strings.Repeat("a=b&", 10000)+"a=b", "Content-Type", "application/x-www-form-urlencoded").Code)
	require.Equal(t, 200, send(h, "POST", "/search", strings.Repeat("a=b&", 9999)+"a=b", "Content-Type", "application/x-www-form-urlencoded").Code)
	require.Len(t, errs, 4)
	assert.ErrorIs(t, errs[0], sink.ErrBlocked, "part 1,001")
	assert.ErrorContains(t, errs[0], "too much input")
	assert.ErrorIs(t, errs[1], sink.ErrBlocked, "part 1,000: read, and found")
	assert.ErrorContains(t, errs[2], "too much input")
	assert.NoError(t, errs[3])
}

// TestSinks_JSONBodySentAsAForm: a JSON body sent as a form (urlencoded
// or multipart) is input as JSON too, its strings with their escapes
// decoded, as a handler that decodes JSON whatever the media type reads
// them (found by a review: `x\u0027 OR \u00271\u0027=\u00271` was read
// only as a form, which held it escaped, and the handler's query ran).
func TestSinks_JSONBodySentAsAForm(t *testing.T) {
	g, _ := learnGuard(t, func(o *Options) { o.SinkProtection = true })
	var errs []error
	h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var v struct{ SKU string }
		require.NoError(t, json.Unmarshal(b, &v))
		errs = append(errs, sink.CheckSQL(r.Context(), "SELECT * FROM orders WHERE sku = '"+v.SKU+"'", sink.SQLite))
	}))
	body := `{"sku":"x\u0027 OR \u00271\u0027=\u00271","qty":1}`
	cts := []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=XX"}
	for _, ct := range cts {
		require.Equal(t, 200, send(h, "POST", "/orders", body, "Content-Type", ct).Code, ct)
	}
	require.Len(t, errs, len(cts))
	for i, ct := range cts {
		assert.ErrorIs(t, errs[i], sink.ErrBlocked, ct)
	}
}
