package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/learn"
)

type sample struct {
	method, pattern, path, body string
	at                          int // seconds
}

// shopTraffic is a few hundred requests over three routes.
func shopTraffic() []sample {
	var s []sample
	for i := range 240 {
		switch i % 3 {
		case 0:
			s = append(s, sample{"POST", "/api/users", "/api/users",
				fmt.Sprintf(`{"email":"u%d@example.com","plan":%q,"age":%d}`, i, []string{"free", "pro"}[i%2], 20+i%50), i})
		case 1:
			s = append(s, sample{"PUT", "", fmt.Sprintf("/api/orders/%d", 1000+i), fmt.Sprintf(`{"total":%d.5,"items":[{"sku":"S%d"}]}`, i, i%7), i})
		default:
			s = append(s, sample{"DELETE", "/api/users/{id}", fmt.Sprintf("/api/users/%d", i), "", i})
		}
	}
	return s
}

// exportOf is the JSON export of a learner that saw the samples.
func exportOf(t *testing.T, samples []sample) []byte {
	t.Helper()
	l := learn.New(learn.Limits{SampleRate: 1})
	for _, s := range samples {
		doc := jsonbody.NullDoc()
		if s.body != "" {
			var err error
			doc, err = jsonbody.Parse([]byte(s.body), 64)
			require.NoError(t, err)
		}
		l.Observe(s.method, s.pattern, s.path, doc.Root(), time.Unix(1_800_000_000+int64(s.at), 0))
	}
	b, err := json.Marshal(l.Export())
	require.NoError(t, err)
	return b
}

// readDir is every file of a folder, by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestLearnMerge: two replicas' exports from files and a third served by a
// running service merge into exactly the contracts of one learner that
// saw all the traffic, written as files a guard loads.
func TestLearnMerge(t *testing.T) {
	traffic := shopTraffic()
	var parts [3][]sample
	for i, s := range traffic {
		parts[(i*7)%3] = append(parts[(i*7)%3], s)
	}
	in := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(in, "replica-1.json"), exportOf(t, parts[0]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in, "replica-2.json"), exportOf(t, parts[1]), 0o644))
	third := exportOf(t, parts[2])
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.Write(third)
	}))
	defer srv.Close()

	out := filepath.Join(t.TempDir(), "contracts")
	r := cli(t, "", "learn", "merge", filepath.Join(in, "replica-*.json"), srv.URL+"/learned", "--out", out, "-H", "Authorization: Bearer test")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Equal(t, "Bearer test", gotAuth)
	assert.Contains(t, r.stdout, "merged 3 exports: 240 requests observed, 0 dropped at the caps")
	assert.Contains(t, r.stdout, "new       POST /api/users: ")
	assert.Contains(t, r.stdout, "3 new, 0 updated, 0 unchanged, 0 to review, 0 not seen")

	// One learner that saw it all writes the same files, byte for byte.
	var all learn.Observations
	require.NoError(t, json.Unmarshal(exportOf(t, traffic), &all))
	want := filepath.Join(t.TempDir(), "contracts")
	_, err := learn.WriteContracts(want, all.Contracts(), learn.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, readDir(t, want), readDir(t, out))
	assert.Contains(t, readDir(t, out), "put_api_orders_orderId.yaml")

	g, err := contractguard.New(contractguard.Options{ContractsDir: out, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	for _, s := range traffic {
		assert.Nil(t, g.Check(s.method, s.path, []byte(s.body)), "%v", s)
	}
	assert.Equal(t, 0, cli(t, "", "lint", out).code)

	// Run again: nothing new.
	r = cli(t, "", "learn", "merge", "--out", out, filepath.Join(in, "replica-1.json"), filepath.Join(in, "replica-2.json"), srv.URL)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "0 new, ")
}

// TestLearnMerge_HeadersStayWithTheirHost: the -H headers went with a
// redirect to another host (Go's client drops only Authorization and
// Cookie there), so an X-Api-Key for the service reached wherever it
// redirected (found by helper-39). Same host: kept.
func TestLearnMerge_HeadersStayWithTheirHost(t *testing.T) {
	export := exportOf(t, shopTraffic())
	var mu sync.Mutex // the servers' goroutines and the test's
	var gotKey, gotAuth []string
	got := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		gotKey, gotAuth = append(gotKey, r.Header.Get("X-Api-Key")), append(gotAuth, r.Header.Get("Authorization"))
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got(r)
		w.Write(export)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another host, as the client sees it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got(r)
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, otherURL+"/learned", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/learned", http.StatusFound)
		default:
			w.Write(export)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path           string
		wantKey, wantA []string
	}{
		{"/here", []string{"k", "k"}, []string{"Bearer t", "Bearer t"}},
		{"/away", []string{"k", ""}, []string{"Bearer t", ""}},
	} {
		mu.Lock()
		gotKey, gotAuth = nil, nil
		mu.Unlock()
		r := cli(t, "", "learn", "merge", "--out", filepath.Join(t.TempDir(), "c"), "-H", "X-Api-Key: k", "-H", "Authorization: Bearer t", srv.URL+tc.path)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		mu.Lock()
		assert.Equal(t, tc.wantKey, gotKey, tc.path)
		assert.Equal(t, tc.wantA, gotAuth, tc.path)
		mu.Unlock()
	}
}

// TestLearnMerge_HeadersNotSentInClear: a redirect from https to http on
// the same host (a server's http listener, a downgrade in between) gets
// none of the -H headers, which Go's client would copy (Authorization
// too: it compares hosts only); one from http to https keeps them.
func TestLearnMerge_HeadersNotSentInClear(t *testing.T) {
	hdr := http.Header{"Authorization": {"Bearer t"}, "X-Api-Key": {"k"}}
	for _, tc := range []struct {
		from, to string
		kept     bool
	}{
		{"https://example.com/learned", "http://example.com/export", false},
		{"https://example.com:8443/learned", "http://example.com:8443/export", false},
		{"http://example.com/learned", "https://example.com/export", true},
		{"https://example.com/learned", "https://example.com/export", true},
		{"http://example.com/learned", "http://example.com/export", true},
	} {
		first, err := http.NewRequest("GET", tc.from, nil)
		require.NoError(t, err)
		next, err := http.NewRequest("GET", tc.to, nil)
		require.NoError(t, err)
		next.Header = hdr.Clone()
		require.NoError(t, sameHostHeaders(hdr)(next, []*http.Request{first}))
		assert.Equal(t, tc.kept, next.Header.Get("Authorization") != "", "%s -> %s: Authorization", tc.from, tc.to)
		assert.Equal(t, tc.kept, next.Header.Get("X-Api-Key") != "", "%s -> %s: X-Api-Key", tc.from, tc.to)
	}
}

func TestLearnMerge_Errors(t *testing.T) {
	in := t.TempDir()
	good := filepath.Join(in, "good.json")
	require.NoError(t, os.WriteFile(good, exportOf(t, shopTraffic()[:30]), 0o644))
	bad := filepath.Join(in, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"contractguard.learn/v0"}`), 0o644))
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	out := filepath.Join(t.TempDir(), "contracts")

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no subcommand", []string{"learn"}, 2, "want a subcommand: merge"},
		{"no --out", []string{"learn", "merge", good}, 2, "need --out DIR and at least one SOURCE"},
		{"no source", []string{"learn", "merge", "--out", out}, 2, "need --out DIR and at least one SOURCE"},
		{"a missing file", []string{"learn", "merge", "--out", out, good, filepath.Join(in, "none.json")}, 1, "none.json"},
		{"a glob matching nothing", []string{"learn", "merge", "--out", out, filepath.Join(in, "x-*.json")}, 1, "no file matches"},
		{"another format", []string{"learn", "merge", "--out", out, good, bad}, 1, bad + `: learned observations: format "contractguard.learn/v0", want "contractguard.learn/v1"`},
		{"a service that fails", []string{"learn", "merge", "--out", out, good, failing.URL}, 1, "GET: 503 Service Unavailable"},
		{"a bad header", []string{"learn", "merge", "--out", out, "-H", "nope", good}, 2, `-H "nope"`},
		{"a zero timeout", []string{"learn", "merge", "--out", out, "--timeout", "0", failing.URL}, 2, "--timeout 0s: want a time more than 0"},
		{"a negative timeout", []string{"learn", "merge", "--out", out, "--timeout", "-5s", good}, 2, "--timeout -5s: want a time more than 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, "", tc.args...)
			assert.Equal(t, tc.code, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stderr, tc.stderr)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}

	r := cli(t, "", "learn", "merge", "--help")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "Usage: contractguard learn merge"))
	assert.Contains(t, cli(t, "", "--help").stdout, "contractguard learn merge")
}

// TestLearnMerge_JSONErrorsNameTheLine: an export that is not valid JSON,
// or holds a value of the wrong type, is named with the line and column
// of the fault, FILE:LINE:COLUMN, not the file alone.
func TestLearnMerge_JSONErrorsNameTheLine(t *testing.T) {
	in := t.TempDir()
	syntax := filepath.Join(in, "syntax.json")
	require.NoError(t, os.WriteFile(syntax, []byte("{\n \"format\": \"contractguard.learn/v1\",\n \"routes\": [\n  {\"a\": 1,}\n ]\n}\n"), 0o644))
	typed := filepath.Join(in, "typed.json")
	require.NoError(t, os.WriteFile(typed, []byte("{\n \"format\": \"contractguard.learn/v1\",\n \"routes\": 5\n}\n"), 0o644))
	cut := filepath.Join(in, "cut.json")
	require.NoError(t, os.WriteFile(cut, []byte("{\n \"format\": \"contractguard.learn/v1\",\n \"routes\": ["), 0o644))
	out := filepath.Join(t.TempDir(), "contracts")
	for file, want := range map[string]string{
		syntax: syntax + ":4:11: invalid character '}'",
		typed:  typed + ":3:",
		cut:    cut + ":3:13: unexpected end of JSON input",
	} {
		r := cli(t, "", "learn", "merge", "--out", out, file)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "contractguard learn merge: "+want)
	}
}

// TestLearnMerge_JSONErrorsNameTheLineAfterLeadingSpace: a value of the
// wrong type is found by the observations' own decoding, which is given
// the document from its first "{": an export with blank lines before it
// (written by hand, or by a tool) was named that many bytes too early.
func TestLearnMerge_JSONErrorsNameTheLineAfterLeadingSpace(t *testing.T) {
	typed := filepath.Join(t.TempDir(), "typed.json")
	require.NoError(t, os.WriteFile(typed, []byte("\n\n  \n{\n \"format\": \"contractguard.learn/v1\",\n \"routes\": 5\n}\n"), 0o644))
	r := cli(t, "", "learn", "merge", "--out", filepath.Join(t.TempDir(), "contracts"), typed)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "contractguard learn merge: "+typed+":6:12: ") // the value's first byte
}

// TestLearnMerge_DuplicateKeyNamesTheLine: an export with a key twice in
// one object (here a route's body, after blank lines) is refused and named
// at the second key, FILE:LINE:COLUMN. encoding/json read the second into
// the first, its member "a" replaced: a string member was learned as an
// integer, without a word.
func TestLearnMerge_DuplicateKeyNamesTheLine(t *testing.T) {
	dup := filepath.Join(t.TempDir(), "dup.json")
	require.NoError(t, os.WriteFile(dup, []byte("\n\n{\"format\":\"contractguard.learn/v1\",\"limits\":{},\"samples\":1,\"routes\":[\n"+
		" {\"method\":\"POST\",\"template\":\"/a\",\"samples\":1,\"first\":\"2026-01-01T00:00:00Z\",\"last\":\"2026-01-01T00:00:01Z\",\n"+
		"  \"body\":{\"seen\":1,\"obj\":1,\"members\":{\"a\":{\"seen\":1,\"str\":1}}},\n"+
		"  \"body\":{\"members\":{\"a\":{\"seen\":1,\"int\":1}}}}]}\n"), 0o644))
	out := filepath.Join(t.TempDir(), "contracts")
	r := cli(t, "", "learn", "merge", "--out", out, dup)
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "contractguard learn merge: "+dup+`:6:3: learned observations: jsontext: duplicate object member name "body"`)
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// TestLearnMerge_BrokenContractsInOutAreEachOneLine: contracts already in
// --out that do not read are each named on a line of their own, with the
// command's prefix, FILE:LINE[:COLUMN]: message (they were joined into
// one error spread over lines, the first alone prefixed, and a syntax
// error was "FILE: 2:9: …").
func TestLearnMerge_BrokenContractsInOutAreEachOneLine(t *testing.T) {
	in := t.TempDir()
	good := filepath.Join(in, "good.json")
	require.NoError(t, os.WriteFile(good, exportOf(t, shopTraffic()[:30]), 0o644))
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, "a.yaml"), []byte("endpoint: /a\nmethod: [POST\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "b.yaml"), []byte("endpoint: /b\nmethod: POST\n---\nendpoint: /c/{\nmethod: GET\n"), 0o644))

	r := cli(t, "", "learn", "merge", "--out", out, good)
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	require.Len(t, lines, 3, r.stderr)
	assert.Equal(t, "contractguard learn merge: contracts already in "+out+" cannot be read, so learned ones could clash with them", lines[0])
	assert.Regexp(t, `^contractguard learn merge: `+regexp.QuoteMeta(filepath.Join(out, "a.yaml"))+`:\d+:\d+: \S`, lines[1])
	assert.Regexp(t, `^contractguard learn merge: `+regexp.QuoteMeta(filepath.Join(out, "b.yaml"))+`:4: "GET" "/c/\{": \S`, lines[2])
}
