package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/contractguard/contractguard/internal/licence"
)

// TestMain puts an authorizer on every SQLite connection the tests open:
// SQLite calls it for each table, column, function and statement it
// compiles, so what it records is what reached the database — the
// evidence that a blocked query never did.
func TestMain(m *testing.M) {
	sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, dsn string) error {
		a := auditOf(dsn)
		return conn.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, a1, a2, _, _ string) sqlite.AuthorizerReturnCode {
			a.add(fmt.Sprintf("%d %s %s", action, a1, a2))
			return sqlite.AuthorizerOK
		})
	})
	os.Exit(m.Run())
}

// audit is what SQLite compiled on one database.
type audit struct {
	mu      sync.Mutex
	actions []string
}

var audits sync.Map // dsn → *audit

func auditOf(dsn string) *audit {
	a, _ := audits.LoadOrStore(dsn, &audit{})
	return a.(*audit)
}

func (a *audit) add(s string) {
	a.mu.Lock()
	a.actions = append(a.actions, s)
	a.mu.Unlock()
}

// since is what was compiled after mark, and the new mark.
func (a *audit) since(mark int) ([]string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.actions[mark:]), len(a.actions)
}

// trustTestKey makes a key pair, trusts its public key as if it were built
// in, for the test, and returns a key entitling both paid features. The
// library's own tests replace the keyring through a hook this module cannot
// reach; the map is changed instead, before any guard reads it, and put
// back afterwards (as prometheus/collector_test.go does).
func trustTestKey(t testing.TB) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	kid := "vulnerable-test"
	licence.BuiltIn[kid] = pub
	t.Cleanup(func() { delete(licence.BuiltIn, kid) })
	key, err := licence.Issue(priv, licence.Licence{KeyID: kid, Licensee: "Example Ltd",
		IssuedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second), Expires: time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second),
		Features: []string{licence.FeatureSinkProtection, licence.FeatureLearningMode}})
	require.NoError(t, err)
	return key
}

// mode is a configuration of the application under attack.
type mode struct {
	name                             string
	sinks, scan, learning, noLicence bool
}

var (
	control  = mode{name: "control (no protection)"}
	sinkOnly = mode{name: "sink protection", sinks: true}
	layered  = mode{name: "scan and sink protection", sinks: true, scan: true}
	learning = mode{name: "learning mode", sinks: true, learning: true}
)

// env is the application in one mode, on a real listener.
type env struct {
	t     *testing.T
	mode  mode
	app   *App
	srv   *httptest.Server
	net   *testNet
	audit *audit
	dir   string
	logs  *syncBuffer
	// seeded is the database's fingerprint as seeded.
	seeded string
	// answered counts the answers that said SINK_BLOCKED, by sink.
	answered map[string]int64
}

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

func newEnv(t *testing.T, n *testNet, key string, m mode) *env {
	t.Helper()
	dir := t.TempDir()
	logs := &syncBuffer{}
	app, err := New(Config{Dir: dir, LicenseKey: key, SinkProtection: m.sinks, VulnerabilityScan: m.scan,
		LearningMode: m.learning, Resolver: n, Dial: n.Dial, AllowHosts: []string{"10.20.0.0/16"},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	e := &env{t: t, mode: m, app: app, net: n, dir: dir, logs: logs, audit: auditOf("file:" + filepath.Join(dir, "app.db"))}
	e.srv = httptest.NewServer(app.Handler)
	t.Cleanup(func() {
		e.srv.Close()
		app.Close()
	})
	e.seeded = e.fingerprint()
	return e
}

// request is one value sent to one slot of a resource, from one location.
type request struct {
	res, loc, slot, value string
}

func (q request) String() string {
	return fmt.Sprintf("%s %s/%s %q", q.res, q.loc, q.slot, q.value)
}

// deliverable says whether q's value can reach the handler unchanged from
// its location: a header cannot hold control characters (the client
// refuses them, and the server trims blanks at the ends), a cookie holds
// only what net/http's parser keeps, and a path segment cannot be "." or
// "..", which every router resolves.
func (q request) deliverable() bool {
	switch q.loc {
	case "header":
		for i := 0; i < len(q.value); i++ {
			if c := q.value[i]; c < 0x20 || c == 0x7f {
				return false
			}
		}
		return q.value == strings.Trim(q.value, " \t")
	case "cookie":
		r := &http.Request{Header: http.Header{"Cookie": {q.slot + "=" + q.value}}}
		c, err := r.Cookie(q.slot)
		return err == nil && c.Value == q.value
	case "path":
		return q.value != "" && q.value != "." && q.value != ".."
	}
	return true
}

// httpRequest builds q as the client sends it.
func (q request) httpRequest(base string) *http.Request {
	method, path, body := http.MethodGet, "/"+q.res+"/"+q.loc, ""
	var header http.Header = http.Header{}
	switch q.loc {
	case "body":
		method, body = http.MethodPost, mustJSON(map[string]string{q.slot: q.value})
	case "keys":
		method, body = http.MethodPost, mustJSON(map[string]map[string]bool{q.slot: {q.value: true}})
	case "query":
		path += "?" + url.Values{q.slot: {q.value}}.Encode()
	case "path":
		path = "/" + q.res + "/path/" + q.slot + "/" + url.PathEscape(q.value)
	case "header":
		header.Set("X-"+q.slot, q.value)
	case "cookie":
		header.Set("Cookie", q.slot+"="+q.value)
	}
	r, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		r.Header[k] = v
	}
	return r
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// outcome is what one request did.
type outcome struct {
	status   int
	body     string
	errCode  string   // the "error" of an error answer: SINK_BLOCKED, FAILED …; the guard's "code" for its own
	sink     string   // the sink that blocked it
	compiled []string // what SQLite compiled while it ran
	hits     int64    // requests the internal servers received
	markers  []string // files the shell left in its working folder
	changed  bool     // the database is not as seeded any more
	reported counts   // the blocks the guard counted, by sink (doCounted)
}

func (o outcome) blocked() bool { return o.errCode == "SINK_BLOCKED" }
func (o outcome) scanned() bool { return o.errCode == "VULNERABILITY_DETECTED" }

// do sends q and observes what it did; it puts the database and the work
// folder back as they were afterwards.
func (e *env) do(q request) outcome {
	e.t.Helper()
	hits := e.net.hits.Load()
	_, mark := e.audit.since(0)
	resp, err := e.srv.Client().Do(q.httpRequest(e.srv.URL))
	require.NoError(e.t, err, "%v", q)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	o := outcome{status: resp.StatusCode, body: string(b), hits: e.net.hits.Load() - hits}
	var answer struct{ Error, Code, Sink string }
	if json.Unmarshal(b, &answer) == nil {
		o.errCode, o.sink = answer.Error, answer.Sink
		if answer.Code != "" {
			o.errCode = answer.Code
		}
	}
	o.compiled, _ = e.audit.since(mark)
	// What the shell left behind.
	entries, err := os.ReadDir(e.app.WorkDir)
	require.NoError(e.t, err)
	for _, de := range entries {
		o.markers = append(o.markers, de.Name())
		require.NoError(e.t, os.RemoveAll(filepath.Join(e.app.WorkDir, de.Name())))
	}
	// The database, compared with its seed.
	if e.fingerprint() != e.seeded {
		o.changed = true
		require.NoError(e.t, e.app.Seed(context.Background()))
	}
	return o
}

func (e *env) fingerprint() string { return fingerprintOf(e.t, e.app) }

// fingerprintOf reads the schema and every row, without a request's
// context (unchecked).
func fingerprintOf(t *testing.T, app *App) string {
	var b strings.Builder
	for _, q := range []string{
		"SELECT type || ' ' || name || ' ' || sql FROM sqlite_master ORDER BY name",
		"SELECT id || '|' || name || '|' || city || '|' || email FROM users ORDER BY id",
		"SELECT id || '|' || owner || '|' || password || '|' || api_key FROM secrets ORDER BY id",
	} {
		rows, err := app.DB.Query(q)
		if err != nil {
			b.WriteString("error: " + err.Error())
			continue
		}
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return b.String()
}
