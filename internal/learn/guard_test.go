package learn_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/learn"
)

type call struct{ method, pattern, path, body string }

// recorded is traffic for a small shop: routes with router patterns and
// without, optional and nullable members, formats, an enum, nested objects
// and arrays, an empty-bodied route.
func recorded(rng *rand.Rand) []call {
	var calls []call
	for i := range 300 {
		switch i % 4 {
		case 0:
			nick := ""
			if rng.IntN(2) == 0 {
				nick = fmt.Sprintf(`,"nickname":"n%d"`, rng.IntN(1000))
			}
			calls = append(calls, call{"POST", "/api/users", "/api/users", fmt.Sprintf(
				`{"email":"user%d@example.com","age":%d,"role":%q,"password":"pw-%d"%s}`,
				rng.IntN(1000), 18+rng.IntN(60), []string{"admin", "member", "guest"}[rng.IntN(3)], rng.IntN(1000), nick)})
		case 1:
			calls = append(calls, call{"POST", "", fmt.Sprintf("/api/orders/%d/items", rng.IntN(100000)), fmt.Sprintf(
				`{"sku":"SKU-%d","quantity":%d,"unitPrice":%d.%02d,"tags":["a%d"],"shipTo":{"zip":"%05d","at":"2026-0%d-1%dT10:00:00Z"}}`,
				rng.IntN(50), 1+rng.IntN(9), rng.IntN(100), rng.IntN(100), rng.IntN(3), rng.IntN(99999), 1+rng.IntN(9), rng.IntN(9))})
		case 2:
			note := "null"
			if rng.IntN(2) == 0 {
				note = fmt.Sprintf(`"note %d"`, rng.IntN(100))
			}
			calls = append(calls, call{"PUT", "PUT /api/accounts/{id}", fmt.Sprintf("/api/accounts/%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff),
				fmt.Sprintf(`{"id":"%08x-0000-4000-8000-%012x","note":%s,"limits":{"daily":%d}}`, rng.Uint32(), rng.Uint64()&0xffffffffffff, note, rng.IntN(5000))})
		default:
			calls = append(calls, call{"DELETE", "/api/sessions/{id}", fmt.Sprintf("/api/sessions/%d", rng.IntN(1000)), ""})
		}
	}
	return calls
}

func parse(t testing.TB, body string) *jsonbody.Doc {
	t.Helper()
	if body == "" {
		return jsonbody.NullDoc()
	}
	doc, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	return doc
}

// TestLearned_EnforcedByAGuard: contracts learned from traffic, written as
// files, load in a guard (what contractguard lint checks), accept every
// request of that traffic, and reject it mutated: a required member
// missing, a wrong type, a bad format, an unknown member.
func TestLearned_EnforcedByAGuard(t *testing.T) {
	calls := recorded(rand.New(rand.NewPCG(7, 7)))
	dir := t.TempDir()
	g, sum, err := learnedGuard(t, dir, calls)
	assert.Equal(t, 4, sum.Count(learn.Added), sum.String())
	require.NoError(t, err, "the learned contracts load (lint)")
	assert.EqualValues(t, 4, g.Metrics().ContractsLoaded)

	for _, c := range calls {
		assert.Nil(t, g.Check(c.method, c.path, []byte(c.body)), "%s %s %s", c.method, c.path, c.body)
	}

	mutations := []struct {
		name, method, path, body, at string
	}{
		{"missing required member", "POST", "/api/users", `{"age":30,"role":"admin","password":"x"}`, "/email"},
		{"wrong type", "POST", "/api/users", `{"email":"a@example.com","age":"thirty","role":"admin","password":"x"}`, "/age"},
		{"not an integer", "POST", "/api/orders/5/items", `{"sku":"SKU-1","quantity":1.5,"unitPrice":1.5,"tags":[],"shipTo":{"zip":"1","at":"2026-01-01T00:00:00Z"}}`, "/quantity"},
		{"negative", "POST", "/api/orders/5/items", `{"sku":"SKU-1","quantity":-1,"unitPrice":1.5,"tags":[],"shipTo":{"zip":"1","at":"2026-01-01T00:00:00Z"}}`, "/quantity"},
		{"bad format", "POST", "/api/users", `{"email":"not-an-email","age":30,"role":"admin","password":"x"}`, "/email"},
		{"bad nested format", "POST", "/api/orders/5/items", `{"sku":"SKU-1","quantity":1,"unitPrice":1.5,"tags":[],"shipTo":{"zip":"1","at":"yesterday"}}`, "/shipTo/at"},
		{"not in the enum", "POST", "/api/users", `{"email":"a@example.com","age":30,"role":"root","password":"x"}`, "/role"},
		{"unknown member", "POST", "/api/users", `{"email":"a@example.com","age":30,"role":"admin","password":"x","isAdmin":true}`, "/isAdmin"},
		{"unknown nested member", "PUT", "/api/accounts/3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a", `{"id":"3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a","note":null,"limits":{"daily":1,"weekly":2}}`, "/limits/weekly"},
		{"a body where there was none", "DELETE", "/api/sessions/5", `{"x":1}`, ""},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			v := g.Check(m.method, m.path, []byte(m.body))
			if m.at == "" { // DELETE has no schema: nothing to reject
				assert.Nil(t, v)
				return
			}
			require.NotNil(t, v, "%s %s", m.method, m.body)
			assert.Equal(t, contractguard.CodeSchemaInvalid, v.Code)
			var paths []string
			for _, d := range v.Details {
				paths = append(paths, d.Path)
			}
			assert.Contains(t, paths, m.at)
		})
	}

	// The order route had no router pattern: its ids became a parameter.
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	assert.ElementsMatch(t, []string{"post_api_users.yaml", "post_api_orders_orderId_items.yaml", "put_api_accounts_id.yaml", "delete_api_sessions_id.yaml"}, names)
	data, err := os.ReadFile(filepath.Join(dir, "post_api_users.yaml"))
	require.NoError(t, err)
	for _, want := range []string{
		"# Learned by contractguard from 75 samples of POST /api/users,",
		"/email: format email — all 75 strings match",
		"/role: enum of 3 values — 75 strings, each value seen at least 3 times",
		"body: required age, email, password, role — present in all 75 samples",
		"/password: its name, or an ancestor's, looks secret — no value recorded",
	} {
		assert.Contains(t, string(data), want)
	}
	assert.NotContains(t, string(data), "pw-")
}

// TestWriteContracts_Existing: what WriteContracts does beside contracts
// already in the folder: new files for new routes, its own untouched files
// rewritten, files someone wrote or edited never overwritten (a .learned
// file beside them when the learned schema differs), unless forced for its
// own, and contracts the traffic did not show listed.
func TestWriteContracts_Existing(t *testing.T) {
	dir := t.TempDir()
	handwritten := "endpoint: /api/users\nmethod: POST\nschema:\n  type: object\n  required: [email]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.yaml"), []byte(handwritten), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "health.yaml"), []byte("endpoint: /health\nmethod: GET\n"), 0o644))

	learnFrom := func(bodies ...string) []learn.Learned {
		l := learn.New(learn.Limits{SampleRate: 1})
		for i, b := range bodies {
			l.Observe("POST", "/api/users", "/api/users", parse(t, b).Root(), time.Unix(int64(i), 0))
			l.Observe("POST", "/api/orders", "/api/orders", parse(t, b).Root(), time.Unix(int64(i), 0))
		}
		return l.Export().Contracts()
	}
	first := learnFrom(`{"email":"a@example.com"}`, `{"email":"b@example.com"}`)
	sum, err := learn.WriteContracts(dir, first, learn.WriteOptions{})
	require.NoError(t, err)
	kinds := func(s learn.Summary) map[string]string {
		m := map[string]string{}
		for _, c := range s.Changes {
			m[c.Method+" "+c.Endpoint] = c.Kind.String() + " " + filepath.Base(c.File)
		}
		return m
	}
	assert.Equal(t, map[string]string{
		"POST /api/orders": "new post_api_orders.yaml",
		"POST /api/users":  "review users.yaml.learned",
		"GET /health":      "not seen health.yaml",
	}, kinds(sum), sum.String())
	data, err := os.ReadFile(filepath.Join(dir, "users.yaml"))
	require.NoError(t, err)
	assert.Equal(t, handwritten, string(data), "a file someone wrote is never overwritten")
	_, err = contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err, "the .learned file beside is not loaded: no duplicate")

	// The same traffic again: nothing changes but the header.
	sum, err = learn.WriteContracts(dir, first, learn.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, "unchanged post_api_orders.yaml", kinds(sum)["POST /api/orders"])

	// New traffic with a new member: its own file is rewritten, with what changed.
	second := learnFrom(`{"email":"a@example.com","age":3}`, `{"email":"b@example.com","age":4}`)
	sum, err = learn.WriteContracts(dir, second, learn.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, "updated post_api_orders.yaml", kinds(sum)["POST /api/orders"])
	for _, c := range sum.Changes {
		if c.Endpoint == "/api/orders" {
			assert.Contains(t, c.Details, "+ /age")
			assert.Contains(t, c.Details, "/age: now required")
		}
	}

	// Once someone edits it, it is theirs: a .learned beside, unless forced.
	orders := filepath.Join(dir, "post_api_orders.yaml")
	data, err = os.ReadFile(orders)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "format: email", "format: email\n      maxLength: 80", 1)
	require.NoError(t, os.WriteFile(orders, []byte(edited), 0o644))
	sum, err = learn.WriteContracts(dir, first, learn.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, "review post_api_orders.yaml.learned", kinds(sum)["POST /api/orders"])
	data, err = os.ReadFile(orders)
	require.NoError(t, err)
	assert.Equal(t, edited, string(data))

	sum, err = learn.WriteContracts(dir, first, learn.WriteOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, "updated post_api_orders.yaml", kinds(sum)["POST /api/orders"])
	data, err = os.ReadFile(orders)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "maxLength")
	assert.Equal(t, "review users.yaml.learned", kinds(sum)["POST /api/users"], "force never touches a file it did not write")

	out := sum.String()
	assert.Contains(t, out, "new, ")
	assert.Contains(t, out, "to review")
}

// TestWriteContracts_HiddenFilesAreNoContracts: the guard loads no hidden
// file; an editor's lock file, a link to nowhere while a contract is
// edited (Emacs's .#NAME.yaml), made the command fail, nothing written.
func TestWriteContracts_HiddenFilesAreNoContracts(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink("user@host.1234:1700000000", filepath.Join(dir, ".#users.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".old.yaml"), []byte("endpoint: [\n"), 0o644))
	sum, err := learn.WriteContracts(dir, []learn.Learned{{Method: "POST", Endpoint: "/users"}}, learn.WriteOptions{})
	require.NoError(t, err)
	require.Len(t, sum.Changes, 1)
	assert.Equal(t, learn.Added, sum.Changes[0].Kind)
	assert.FileExists(t, filepath.Join(dir, "post_users.yaml"))
}

func TestWriteContracts_BrokenFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("endpoint: [\n"), 0o644))
	_, err := learn.WriteContracts(dir, nil, learn.WriteOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml")
}

// TestWriteContracts_NewFileNeverReplacesOne: the file of a new contract
// never has the name of a file already in the folder, not even one that
// differs only in case (on macOS and Windows that is the same file: a
// client sending POST /API/Users would have replaced the contract someone
// wrote for POST /api/users), nor the name with a hash that a name already
// taken falls back to (a contract someone edited to another route).
func TestWriteContracts_NewFileNeverReplacesOne(t *testing.T) {
	contract := func(method, endpoint string) learn.Learned {
		return learn.Learned{Method: method, Endpoint: endpoint, Schema: map[string]any{"type": "object"}}
	}
	read := func(name string) string {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		return string(data)
	}

	t.Run("case", func(t *testing.T) {
		dir := t.TempDir()
		handwritten := "endpoint: /api/users\nmethod: POST\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "post_api_users.yaml"), []byte(handwritten), 0o644))
		sum, err := learn.WriteContracts(dir, []learn.Learned{contract("POST", "/API/Users")}, learn.WriteOptions{})
		require.NoError(t, err)
		require.Equal(t, learn.Added, sum.Changes[0].Kind, sum.String())
		assert.False(t, strings.EqualFold("post_api_users.yaml", filepath.Base(sum.Changes[0].File)),
			"%s is post_api_users.yaml on a case-insensitive file system", sum.Changes[0].File)
		assert.Equal(t, handwritten, read(filepath.Join(dir, "post_api_users.yaml")))
	})

	t.Run("hashed name", func(t *testing.T) {
		dir := t.TempDir()
		// /ab and /a_b both reduce to post_ab: the second is named with a hash.
		sum, err := learn.WriteContracts(dir, []learn.Learned{contract("POST", "/ab"), contract("POST", "/a_b")}, learn.WriteOptions{})
		require.NoError(t, err)
		second := sum.Changes[1].File
		require.NotEqual(t, filepath.Join(dir, "post_ab.yaml"), second, sum.String())
		// Someone makes that file the contract of another route.
		edited := strings.Replace(read(second), `endpoint: "/a_b"`, `endpoint: "/a_b/v2"`, 1)
		require.NotEqual(t, read(second), edited)
		require.NoError(t, os.WriteFile(second, []byte(edited), 0o644))

		sum, err = learn.WriteContracts(dir, []learn.Learned{contract("POST", "/a_b")}, learn.WriteOptions{})
		require.NoError(t, err)
		assert.Equal(t, edited, read(second), "an edited contract overwritten: %s", sum.String())
	})
}

// TestWriteContracts_LongEndpoint: an endpoint as long as a learned one
// may be (any client can send POST /a/a/…/a, 255 bytes) is written to a
// file whose name the file system takes, and the contract loads. Named
// after every segment, the file's name was over 255 bytes: the write
// failed, and with it every learn merge while the route was kept.
func TestWriteContracts_LongEndpoint(t *testing.T) {
	dir := t.TempDir()
	long := learn.Learned{Method: "M-SEARCH", Endpoint: strings.Repeat("/a", 127), Schema: map[string]any{"type": "object"}}
	longer := long
	longer.Endpoint += "/b"
	sum, err := learn.WriteContracts(dir, []learn.Learned{long, longer}, learn.WriteOptions{})
	require.NoError(t, err)
	for _, c := range sum.Changes {
		assert.LessOrEqual(t, len(filepath.Base(c.File)), 255, c.File)
	}
	_, err = contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
}

// TestWriteContracts_FileNameFromAnyMethod: a method is any token (a
// client may send "GET|X" or "M*"), and the file named after it is
// reduced to letters, digits, - and . like the segments: Windows refuses
// | and * in a file name, and learn merge stopped there.
func TestWriteContracts_FileNameFromAnyMethod(t *testing.T) {
	dir := t.TempDir()
	sum, err := learn.WriteContracts(dir, []learn.Learned{{Method: "GET|X", Endpoint: "/a"}, {Method: "M*'`^~!#$%&+", Endpoint: "/"}}, learn.WriteOptions{})
	require.NoError(t, err)
	for _, c := range sum.Changes {
		name := filepath.Base(c.File)
		assert.Empty(t, strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._"), name)
	}
	_, err = contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
}

// TestWriteContracts_ReviewsOfOneFile: two learned contracts that differ
// from contracts someone wrote in one file are both written for review,
// each to its own file. Both went to NAME.yaml.learned, the second over
// the first, while the summary listed both there.
func TestWriteContracts_ReviewsOfOneFile(t *testing.T) {
	dir := t.TempDir()
	handwritten := "- endpoint: /a\n  method: POST\n- endpoint: /b\n  method: POST\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(handwritten), 0o644))
	schema := map[string]any{"type": "object"}
	sum, err := learn.WriteContracts(dir, []learn.Learned{{Method: "POST", Endpoint: "/a", Schema: schema}, {Method: "POST", Endpoint: "/b", Schema: schema}}, learn.WriteOptions{})
	require.NoError(t, err)
	require.Len(t, sum.Changes, 2)
	for _, c := range sum.Changes {
		require.Equal(t, learn.Review, c.Kind, sum.String())
		data, err := os.ReadFile(c.File)
		require.NoError(t, err)
		assert.Contains(t, string(data), `endpoint: "`+c.Endpoint+`"`, "the file listed for review of %s", c.Endpoint)
	}
	_, err = contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
}

// TestWriteContracts_EditAboveTheChecksum: a learned file edited above its
// checksum line (a key added at the top, a contract put before it) is
// edited, and left alone. The checksum covers only what follows its line,
// so such a file was rewritten as untouched and the edit lost: mode: learn
// added at the top, as the docs advise before enforcing, silently became
// enforcement at the next merge.
func TestWriteContracts_EditAboveTheChecksum(t *testing.T) {
	learned := func(schema map[string]any) []learn.Learned {
		return []learn.Learned{{Method: "POST", Endpoint: "/orders", Schema: schema}}
	}
	for name, edit := range map[string]func(string) string{
		"a key at the top":     func(s string) string { return "mode: learn\n" + s },
		"a contract before it": func(s string) string { return "endpoint: /other\nmethod: GET\n---\n" + s },
		"a key between the lines": func(s string) string {
			return strings.Replace(s, "#\n# contractguard", "#\nmode: learn\n# contractguard", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := learn.WriteContracts(dir, learned(map[string]any{"type": "object"}), learn.WriteOptions{})
			require.NoError(t, err)
			file := sum.Changes[0].File
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			edited := edit(string(data))
			require.NotEqual(t, string(data), edited)
			require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))

			sum, err = learn.WriteContracts(dir, learned(map[string]any{"type": "array"}), learn.WriteOptions{})
			require.NoError(t, err)
			data, err = os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, edited, string(data), sum.String())
		})
	}
}

// TestSummary_OneLinePerContract: an export read from a service may hold
// any byte in a template's static segment (/%1B[2J is an endpoint): the
// summary printed it as it was, a terminal's control sequence or a line
// break in the command's output; the details were escaped already.
func TestSummary_OneLinePerContract(t *testing.T) {
	sum := learn.Summary{Changes: []learn.Change{
		{Kind: learn.Added, Method: "POST", Endpoint: "/\x1b[2J\nnew       GET /fake", File: "contracts/post_2jnewgetfake.yaml"},
		{Kind: learn.Review, Method: "PUT", Endpoint: "/a", File: "contracts/a\r.yaml.learned", Existing: "contracts/a\r.yaml"},
	}}
	out := sum.String()
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\r")
	assert.Equal(t, 3, strings.Count(out, "\n"), "%q", out)
	assert.Contains(t, out, `new       POST /\u001b[2J\u000anew       GET /fake: contracts/post_2jnewgetfake.yaml`)
}

// TestWriteContracts_FileNameNeverHidden: a method is any token, "." or
// ".PATCH" too; reduced, it named a hidden file (._api_x.yaml), which a
// guard does not load and WriteContracts does not read back: the contract
// was never enforced, and every run wrote another hidden file for it
// (._api_x-275e4d45.yaml, then -2…). The name no longer starts with a dot.
func TestWriteContracts_FileNameNeverHidden(t *testing.T) {
	dir := t.TempDir()
	ls := []learn.Learned{
		{Method: ".", Endpoint: "/api/x", Schema: map[string]any{"type": "object"}},
		{Method: "!.PATCH", Endpoint: "/", Schema: map[string]any{"type": "object"}},
	}
	for run := range 2 {
		sum, err := learn.WriteContracts(dir, ls, learn.WriteOptions{})
		require.NoError(t, err)
		for _, c := range sum.Changes {
			assert.False(t, strings.HasPrefix(filepath.Base(c.File), "."), "%s", c.File)
		}
		if run == 1 {
			assert.Equal(t, 2, sum.Count(learn.Unchanged), sum.String())
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2)
	g, err := contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	assert.EqualValues(t, 2, g.Metrics().ContractsLoaded, "the learned contracts are loaded")
}

// TestLearned_OtherReadingsOfAPath: the guard checks a request against
// the contracts of every reading of its path (in any letter case, with
// the extension chi's URLFormat cuts, an encoded slash decoded, a ';'
// parameter cut), so the contract learned for /report applies to
// /report.json too: learned from /report's bodies alone, it refused every
// request of /report.json it was learned beside (and /Users's, /users's),
// and /acc/a's refused /acc/a;v/sub's once that route was taken into
// /acc/{accId}/sub.
func TestLearned_OtherReadingsOfAPath(t *testing.T) {
	var calls []call
	for range 12 {
		calls = append(calls,
			call{"POST", "", "/report", `{"a":1}`}, call{"POST", "", "/report.json", `{"b":"x"}`},
			call{"POST", "", "/Users", `{"c":1}`}, call{"POST", "", "/users", `{"d":1}`},
			call{"PUT", "", "/files/a/b", `{"e":1}`}, call{"PUT", "", "/files/a%2Fb", `{"f":1}`},
			call{"PATCH", "", "/g/a;v/b", `{"g":1}`}, call{"PATCH", "", "/g/a/b", `{"h":1}`},
			call{"POST", "", "/acc/a", `{"i":1}`})
	}
	// Values that did not look like values, taken for a parameter when the
	// contracts are written (/acc/{accId}/sub): the path /acc/a;v/sub
	// still reaches /acc/a's contract, cut at its ';'.
	for _, name := range []string{"a;v", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory"} {
		calls = append(calls, call{"POST", "", "/acc/" + name + "/sub", `{"j":1}`}, call{"POST", "", "/acc/" + name + "/sub", `{"j":2}`})
	}
	dir := t.TempDir()
	g, _, err := learnedGuard(t, dir, calls)
	require.NoError(t, err)
	assert.EqualValues(t, 10, g.Metrics().ContractsLoaded)
	for i, c := range calls {
		if i < 9 || i >= 12*9 {
			assert.Nil(t, g.Check(c.method, c.path, []byte(c.body)), "%s %s %s", c.method, c.path, c.body)
		}
	}
	// Each contract still refuses what none of the traffic it applies to sent.
	assert.NotNil(t, g.Check("POST", "/report", []byte(`{"z":1}`)))
	assert.NotNil(t, g.Check("POST", "/report.json", []byte(`{"a":1}`)), "/report.json's own contract did not take /report's bodies")
	data, err := os.ReadFile(filepath.Join(dir, "post_report.json.yaml"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "as well", "the /report.json contract applies to no other route's requests")
	data, err = os.ReadFile(filepath.Join(dir, "post_report.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "path: applies to the requests of POST /report.json as well (another reading of their path): their 12 samples are learned from too")
}

// TestLearned_OtherReadingsBounded: a route's samples are added to every
// contract a reading of its path reaches, and 128 spellings of one path
// in letter case each reach all the others: the contracts learned from
// them held each route's body 127 times over (1.2 GB and 3 s from a
// 16 MiB state). What is added is bounded by Limits.MaxBytes; the
// contracts left short say so.
func TestLearned_OtherReadingsBounded(t *testing.T) {
	const word, maxBytes = "abcdefg", 2 << 20
	l := learn.New(learn.Limits{SampleRate: 1, Routes: 128, MaxBytes: maxBytes})
	for m := range 128 {
		path := []byte("/" + word)
		for i := range len(word) {
			if m>>i&1 == 1 {
				path[i+1] -= 'a' - 'A'
			}
		}
		for s := range 40 {
			var body strings.Builder
			body.WriteString("{")
			for k := range 64 {
				if k > 0 {
					body.WriteString(",")
				}
				fmt.Fprintf(&body, `"k%d_%d_%d":1`, m, s, k)
			}
			body.WriteString("}")
			l.Observe("POST", "", string(path), parse(t, body.String()).Root(), time.Unix(1_800_000_000, 0))
		}
	}
	e := l.Export()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cs := e.Contracts()
	runtime.ReadMemStats(&after)
	require.Len(t, cs, 128)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32*maxBytes), "bytes allocated")
	short := 0
	for _, c := range cs {
		for _, n := range c.Notes {
			if strings.Contains(n, "not learned from: over the memory cap") {
				short++
			}
		}
	}
	assert.Positive(t, short, "a contract left short says so")
}

// TestLearned_OtherReadingsLookedUpBounded: each route's readings were
// looked up whatever had been added already, and each lookup of a path
// that reaches n routes costs n² (Hits): 4,096 router patterns that are
// spellings of /abcdefghijkl took 113 s (52 s with only the bytes bound).
// The lookups stop once a route is left out; each pair made has a note.
func TestLearned_OtherReadingsLookedUpBounded(t *testing.T) {
	const word = "abcdefghi"
	l := learn.New(learn.Limits{SampleRate: 1, Routes: 512})
	for m := range 512 {
		path := []byte("/" + word)
		for i := range len(word) {
			if m>>i&1 == 1 {
				path[i+1] -= 'a' - 'A'
			}
		}
		l.Observe("POST", string(path), string(path), parse(t, fmt.Sprintf(`{"m%d":1}`, m)).Root(), time.Unix(1_800_000_000, 0))
	}
	cs := l.Export().Contracts()
	require.Len(t, cs, 512)
	pairs := 0
	for _, c := range cs {
		for _, n := range c.Notes {
			if strings.Contains(n, "are learned from too") {
				pairs++
			}
		}
	}
	assert.Less(t, pairs, 20_000, "routes learned from by other contracts (512×511 unbounded)")
}

// learnedGuard is a guard of the contracts one learner writes into dir
// from the calls (every one sampled), with what writing them did, and
// the error of loading them.
func learnedGuard(t *testing.T, dir string, calls []call) (*contractguard.Guard, learn.Summary, error) {
	t.Helper()
	l := learn.New(learn.Limits{SampleRate: 1})
	for i, c := range calls {
		l.Observe(c.method, c.pattern, c.path, parse(t, c.body).Root(), time.Unix(1_800_000_000+int64(i), 0))
	}
	sum, err := learn.WriteContracts(dir, l.Export().Contracts(), learn.WriteOptions{})
	require.NoError(t, err)
	g, err := contractguard.New(contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler)})
	return g, sum, err
}
