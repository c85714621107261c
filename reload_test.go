package contractguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versionContract is version k of the contracts folder of the reload
// tests: POST /v refuses n == k with the message "version k", and k/2%3
// more contracts on other routes, so that contracts_loaded changes too.
func versionContract(k int) (text string, contracts int) {
	var b strings.Builder
	fmt.Fprintf(&b, `endpoint: /v
method: POST
schema: {type: object, required: [n], properties: {n: {type: integer}}}
invariants:
  - expr: request.body.n != %d
    message: version %d
`, k, k)
	for i := range k / 2 % 3 {
		fmt.Fprintf(&b, "---\nendpoint: /extra/%d\nmethod: GET\n", i)
	}
	return b.String(), 1 + k/2%3
}

// brokenContract is an invalid version k (k odd), broken in one of four
// ways; were it to take effect, n == k would be refused with "version k".
func brokenContract(k int) string {
	good, _ := versionContract(k)
	switch k / 2 % 4 {
	case 0: // a CEL syntax error
		return strings.Replace(good, fmt.Sprintf("!= %d", k), fmt.Sprintf("!= %d &&", k), 1)
	case 1: // an unknown key
		return good + "colour: red\n"
	case 2: // a schema that does not compile
		return strings.Replace(good, "type: object", "type: objekt", 1)
	default: // a YAML syntax error
		return strings.Replace(good, "method: POST", "method: [POST", 1)
	}
}

func writeVersion(t *testing.T, dir, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(text), 0o644))
}

// A reload that fails leaves the contracts in force; one that succeeds
// replaces them, and contracts_loaded follows.
func TestReload_KeepsTheOldSetOnError(t *testing.T) {
	dir := t.TempDir()
	v0, n0 := versionContract(0)
	writeVersion(t, dir, v0)
	var logs bytes.Buffer
	g := mustNew(t, Options{ContractsDir: dir, Metrics: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	assert.EqualValues(t, n0, g.Metrics().ContractsLoaded)

	writeVersion(t, dir, "endpoint: /v\nmethod: POST\ninvariants: [{expr: 'request.body.n >', message: m}]\n")
	err := g.Reload()
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, err.Error(), "c.yaml:3")
	assert.Contains(t, logs.String(), "level=ERROR msg=\"contractguard: reload failed; the previous contracts stay in force\"")
	assert.Equal(t, "version 0", g.Check("POST", "/v", []byte(`{"n":0}`)).Details[0].Message)

	v4, n4 := versionContract(4)
	writeVersion(t, dir, v4)
	require.NoError(t, g.Reload())
	assert.Contains(t, logs.String(), "level=INFO msg=\"contractguard: contracts reloaded\" contracts=3")
	assert.Nil(t, g.Check("POST", "/v", []byte(`{"n":0}`)))
	assert.Equal(t, "version 4", g.Check("POST", "/v", []byte(`{"n":4}`)).Details[0].Message)
	assert.EqualValues(t, n4, g.Metrics().ContractsLoaded)

	// A folder emptied (or caught between a delete and a copy) would turn
	// every check off: a reload refuses it, as it refuses a truncated file.
	for name, change := range map[string]func() error{
		"file removed":   func() error { return os.Remove(filepath.Join(dir, "c.yaml")) },
		"file truncated": func() error { return os.WriteFile(filepath.Join(dir, "c.yaml"), nil, 0o644) },
	} {
		writeVersion(t, dir, v4)
		require.NoError(t, change(), name)
		err = g.Reload()
		require.ErrorAs(t, err, &le, name)
		assert.Contains(t, err.Error(), "no contracts found; the 3 in force stay", name)
		assert.Equal(t, "version 4", g.Check("POST", "/v", []byte(`{"n":4}`)).Details[0].Message, name)
		assert.EqualValues(t, n4, g.Metrics().ContractsLoaded, name)
	}
}

// TestReload_DuplicateRouteKeepsTheOldSet: a file edit that gives one
// route two contracts (which once reached a panic in building the set, a
// step apart from the loader's own conflict check) is an error naming
// both, and the set in force stays.
func TestReload_DuplicateRouteKeepsTheOldSet(t *testing.T) {
	dir := t.TempDir()
	v0, n0 := versionContract(0)
	writeVersion(t, dir, v0)
	g := mustNew(t, Options{ContractsDir: dir})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d.yaml"), []byte("endpoint: /v/\nmethod: post\n"), 0o644))
	err := g.Reload()
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "d.yaml", filepath.Base(le.File))
	assert.Equal(t, 1, le.Line)
	assert.Contains(t, err.Error(), "POST /v/: a contract for POST /v is already defined at "+filepath.Join(dir, "c.yaml")+":1")
	assert.Equal(t, "version 0", g.Check("POST", "/v", []byte(`{"n":0}`)).Details[0].Message, "the old set is in force")
	assert.EqualValues(t, n0, g.Metrics().ContractsLoaded)
}

// Contracts in code do not make an emptied folder a valid set: the
// folder's contracts would be dropped, and their routes pass unchecked.
func TestReload_EmptiedFolderBesideCodeContracts(t *testing.T) {
	dir := t.TempDir()
	v0, n0 := versionContract(0)
	writeVersion(t, dir, v0)
	g := mustNew(t, Options{ContractsDir: dir, Metrics: true, Logger: discard,
		Contracts: []Contract{{Endpoint: "/code", Method: "GET"}}})
	require.NoError(t, os.Remove(filepath.Join(dir, "c.yaml")))
	err := g.Reload()
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, err.Error(), fmt.Sprintf("no contracts found; the %d in force stay", n0+1))
	assert.Equal(t, "version 0", g.Check("POST", "/v", []byte(`{"n":0}`)).Details[0].Message)
	assert.EqualValues(t, n0+1, g.Metrics().ContractsLoaded)
}

// A guard that started without contracts may reload into none.
func TestReload_EmptyToEmpty(t *testing.T) {
	g := mustNew(t, Options{ContractsDir: t.TempDir(), Metrics: true})
	require.NoError(t, g.Reload())
	assert.EqualValues(t, 0, g.Metrics().ContractsLoaded)
}

// A request passes the guard twice when something stands between
// Middleware and the router (a logging wrapper, a sub-router): Middleware
// checks the file contract, the typed handler its type. A reload between
// the two passes must not make the second pass use the new set.
func TestReload_OneSetPerRequestAcrossPasses(t *testing.T) {
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	g := mustNew(t, Options{ContractsDir: dir, Metrics: true})
	type T struct {
		N int `json:"n"`
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v", Handle(g, func(w http.ResponseWriter, r *http.Request, v T) { w.WriteHeader(http.StatusCreated) }))
	v2, _ := versionContract(2)
	reloadBetween := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeVersion(t, dir, v2)
		require.NoError(t, g.Reload())
		mux.ServeHTTP(w, r)
	})
	h := g.Middleware(reloadBetween)
	w := send(h, "POST", "/v", `{"n":2}`)
	assert.Equal(t, http.StatusCreated, w.Code, "version 0 let n=2 in; version 2 came after: %s", w.Body)
	assert.EqualValues(t, 1, g.Metrics().RequestsValidated, "one request, validated once")
	w = send(h, "POST", "/v", `{"n":2}`)
	rejected(t, w, http.StatusUnprocessableEntity, CodeInvariantViolated)
}

// Typed contracts are registered once, not read from the folder: a
// reload keeps them, and they keep counting.
func TestReload_KeepsTypedContracts(t *testing.T) {
	dir := t.TempDir()
	v0, n0 := versionContract(0)
	writeVersion(t, dir, v0)
	g := mustNew(t, Options{ContractsDir: dir, Metrics: true})
	type T struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	mux := http.NewServeMux()
	mux.Handle("POST /typed", Handle(g, func(w http.ResponseWriter, r *http.Request, v T) {}))
	rejected(t, send(mux, "POST", "/typed", `{"n":0}`), 400, CodeSchemaInvalid)
	assert.EqualValues(t, n0+1, g.Metrics().ContractsLoaded)
	require.NoError(t, g.Reload())
	assert.EqualValues(t, n0+1, g.Metrics().ContractsLoaded)
	rejected(t, send(mux, "POST", "/typed", `{"n":0}`), 400, CodeSchemaInvalid)
}

// The acceptance test of live reload: clients send requests without
// pause while the contracts on disk change 20 times, valid and invalid
// versions alternating. Every request must get the verdict of a version
// that was in force while it ran, no request may fail for another reason,
// and no invalid version may ever take effect.
func TestReload_UnderLoad(t *testing.T) {
	const changes = 20
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	g := mustNew(t, Options{ContractsDir: dir, Metrics: true})
	srv := httptest.NewServer(g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})))
	defer srv.Close()

	// Valid versions are the even ones. starting is the version a Reload
	// in progress may swap in, settled the one known to be in force; a
	// request ran under some valid version from settled (read before
	// sending) to starting (read after the response).
	var starting, settled atomic.Int64
	var stop atomic.Bool
	var total atomic.Int64
	seen := make([]atomic.Int64, changes+1) // 422s per version
	errs := make(chan error, 16)
	fail := func(format string, args ...any) {
		select {
		case errs <- fmt.Errorf(format, args...):
		default:
		}
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			client := srv.Client()
			for !stop.Load() {
				n := rng.IntN(changes + 1)
				lo := settled.Load()
				resp, err := client.Post(srv.URL+"/v", "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d}`, n)))
				if err != nil {
					fail("request failed: %v", err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				hi := starting.Load()
				total.Add(1)
				if err != nil {
					fail("reading the response: %v", err)
					return
				}
				switch resp.StatusCode {
				case http.StatusOK:
					// Passed: some valid version in [lo, hi] is not n.
					if lo == hi && int64(n) == lo {
						fail("n=%d passed while only version %d was in force", n, lo)
					}
				case http.StatusUnprocessableEntity:
					var e errorBody
					if err := json.Unmarshal(body, &e); err != nil || len(e.Details) != 1 {
						fail("422 body %s", body)
						continue
					}
					want := Detail{Path: "", Message: fmt.Sprintf("version %d", n)}
					if e.Code != CodeInvariantViolated || e.Details[0] != want {
						fail("n=%d: got %s", n, body)
					} else if n%2 != 0 {
						fail("n=%d refused: invalid version %d took effect", n, n)
					} else if int64(n) < lo || int64(n) > hi {
						fail("n=%d refused by version %d, outside the versions in force [%d, %d]", n, n, lo, hi)
					}
					seen[n].Add(1)
				default:
					fail("n=%d: status %d %s", n, resp.StatusCode, body)
				}
			}
		})
	}

	waitFor := func(requests int64) {
		deadline := time.Now().Add(10 * time.Second)
		for total.Load() < requests && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	for k := 1; k <= changes; k++ {
		waitFor(total.Load() + 50) // every version serves requests
		if k%2 == 1 {
			writeVersion(t, dir, brokenContract(k))
			assert.Error(t, g.Reload(), "version %d", k)
			assert.EqualValues(t, contractsOf(k-1), g.Metrics().ContractsLoaded, "after invalid version %d", k)
			continue
		}
		text, n := versionContract(k)
		writeVersion(t, dir, text)
		starting.Store(int64(k))
		require.NoError(t, g.Reload(), "version %d", k)
		settled.Store(int64(k))
		assert.EqualValues(t, n, g.Metrics().ContractsLoaded, "after version %d", k)
	}
	waitFor(total.Load() + 50)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	versions := 0
	for k := 0; k <= changes; k += 2 {
		if seen[k].Load() > 0 {
			versions++
		}
	}
	t.Logf("%d requests; refusals seen from %d of the 11 valid versions", total.Load(), versions)
	assert.Greater(t, versions, 1, "the test must see the verdicts of more than one version")
}

// gatedFS serves c.yaml at its current version. While held, the next
// read of it takes the version of that moment, says so on read, and
// returns only when released: a reload caught between reading its files
// and storing what it compiled.
type gatedFS struct {
	mu      sync.Mutex
	version int
	held    bool
	read    chan struct{}
	release chan struct{}
}

func (f *gatedFS) Open(name string) (fs.File, error) {
	f.mu.Lock()
	text, _ := versionContract(f.version)
	wait := f.held && name == "c.yaml"
	f.held = f.held && !wait
	f.mu.Unlock()
	if wait {
		f.read <- struct{}{}
		<-f.release
	}
	return fstest.MapFS{"c.yaml": {Data: []byte(text)}}.Open(name)
}

func (f *gatedFS) set(version int, hold bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version, f.held = version, hold
}

// Reload is safe to call concurrently with itself: when it returns, the
// set in force was read no earlier than the call. A reload that read
// version 1 is held before it stores it; version 2 is written and
// reloaded meanwhile. Version 2 must be in force once both are done,
// never the older set, stored last by the slower reload.
func TestReload_ConcurrentReloadsKeepTheNewest(t *testing.T) {
	files := &gatedFS{read: make(chan struct{}), release: make(chan struct{})}
	g := mustNew(t, Options{ContractsFS: files, Logger: slog.New(slog.DiscardHandler)})
	version := func() string {
		v := g.Check("POST", "/v", []byte(`{"n":2}`))
		if v == nil {
			return "not version 2"
		}
		return v.Details[0].Message
	}

	files.set(1, true)
	slow := make(chan error)
	go func() { slow <- g.Reload() }()
	<-files.read // the slow reload has read version 1

	files.set(2, false)
	fast := make(chan error)
	go func() { fast <- g.Reload() }()
	// Without a lock the fast reload stores version 2 now; with one it
	// waits for the slow one. Either way the slow one goes on after.
	select {
	case err := <-fast:
		require.NoError(t, err)
		close(files.release)
		require.NoError(t, <-slow)
	case <-time.After(100 * time.Millisecond):
		close(files.release)
		require.NoError(t, <-slow)
		require.NoError(t, <-fast)
	}
	assert.Equal(t, "version 2", version())
}

func contractsOf(k int) int {
	_, n := versionContract(k)
	return n
}

// A reload that finds no contracts in Options.ContractsFS names it, as
// there is no folder to name.
func TestReload_EmptiedFSIsNamed(t *testing.T) {
	text, _ := versionContract(0)
	fsys := fstest.MapFS{"c.yaml": {Data: []byte(text)}}
	g := mustNew(t, Options{ContractsFS: fsys, Logger: discard})
	delete(fsys, "c.yaml")
	err := g.Reload()
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "Options.ContractsFS: no contracts found"), err.Error())
}

// TestReload_FolderSwappedWhileRead: a Kubernetes ConfigMap's update
// swaps the ..data link its files point through; a load that read a.yaml
// before the swap and b.yaml after it put old and new contracts together,
// a set no one deployed, until another reload (none, with the watch off).
// A load whose folder changed while it was read is done again.
func TestReload_FolderSwappedWhileRead(t *testing.T) {
	dir := t.TempDir()
	version := func(name string, max int) { writeMaxima(t, filepath.Join(dir, name), max) }
	version("..v1", 1)
	require.NoError(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	for _, f := range []string{"a.yaml", "b.yaml"} {
		require.NoError(t, os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)))
	}
	g := mustNew(t, Options{ContractsDir: dir})
	require.NotNil(t, g.Check("POST", "/a", []byte("2")))

	// The update, as the kubelet makes it: a new folder, a link to it,
	// renamed over ..data; here while the load reads the folder, before
	// b.yaml (and after a.yaml: one reader at a time).
	swapped := beforeReading(t, "b.yaml", func() {
		version("..v2", 2)
		swapData(t, dir, "..v2")
	})
	require.NoError(t, g.Reload())
	require.True(t, *swapped)
	assert.Nil(t, g.Check("POST", "/a", []byte("2")), "a.yaml of the new version, not the one read before the swap")
	assert.Nil(t, g.Check("POST", "/b", []byte("2")))
	assert.NotNil(t, g.Check("POST", "/a", []byte("3")))

	// A folder that changes on every reading: the reload fails, and the
	// set in force stays.
	n := 0
	testHookRead = func(name string) {
		if name == "b.yaml" {
			n++
			to := []string{"..v2", "..v1"}[n%2] // ..v2 is in force
			swapData(t, dir, to)
		}
	}
	err := g.Reload()
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir+": the folder changed while it was read, 3 times")
	assert.Equal(t, 3, n)
	assert.Nil(t, g.Check("POST", "/a", []byte("2")), "the set in force stays")
}

// TestReload_UnsearchableFolderSaysSo: a folder that can be listed but not
// searched (chmod -R 644, a common slip) cannot be stamped either; the
// load's own error, permission denied, is the one to report, once, not
// "the folder changed while it was read" after three loads of a folder
// that did not change. (Run as root, it runs again as another user.)
func TestReload_UnsearchableFolderSaysSo(t *testing.T) {
	if unprivileged(t) { // root reads through permissions
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("endpoint: /a\nmethod: POST\nschema: {type: integer}\n"), 0o644))
	require.NoError(t, os.Chmod(dir, 0o644))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	_, err := New(Options{ContractsDir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "permission denied")
	assert.NotContains(t, err.Error(), "changed while it was read")
}

// TestReload_LinkedFolderSwappedWhileRead: a ContractsDir that is a link
// (a folder inside a ConfigMap's projection, reached through ..data) is
// opened at the folder it leads to; the update swaps ..data and removes
// that folder. The load done again opens the link anew: the old code read
// the removed folder again and the reload failed.
func TestReload_LinkedFolderSwappedWhileRead(t *testing.T) {
	dir := t.TempDir()
	version := func(name string, max int) {
		writeMaxima(t, filepath.Join(dir, name, "contracts"), max)
	}
	version("..v1", 1)
	// The load sees the update only by the removal of the folder it read,
	// in that folder's modification time (its size and inode stay): the
	// version in force was written at an update of its own, long before.
	// Written just now, the removal could fall in the same clock tick (a
	// kernel before 6.13 stamps a change with the tick's time), look like
	// no change, and fail the reload.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "..v1", "contracts"), old, old))
	require.NoError(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink(filepath.Join("..data", "contracts"), filepath.Join(dir, "contracts")))
	g := mustNew(t, Options{ContractsDir: filepath.Join(dir, "contracts")})
	require.NotNil(t, g.Check("POST", "/a", []byte("2")))

	swapped := beforeReading(t, "b.yaml", func() {
		version("..v2", 2)
		swapData(t, dir, "..v2")
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "..v1"))) // the kubelet's last step
	})
	require.NoError(t, g.Reload())
	require.True(t, *swapped)
	assert.Nil(t, g.Check("POST", "/a", []byte("2")))
	assert.Nil(t, g.Check("POST", "/b", []byte("2")))
	assert.NotNil(t, g.Check("POST", "/b", []byte("3")))
}

// TestReload_OtherFilesChangingWhileRead: a folder whose other files
// come and go while the contracts load (a journal, a rotated log) was
// taken as changing, three times, and the guard did not start: a load
// whose every file still reads the same, with no contracts file come or
// gone, is one version's, whatever else changed.
func TestReload_OtherFilesChangingWhileRead(t *testing.T) {
	dir := t.TempDir()
	writeMaxima(t, dir, 1)
	journal := filepath.Join(dir, "app.db-journal")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one reader at a time: the hook is theirs
	testHookRead = func(string) {
		require.NoError(t, os.WriteFile(journal, nil, 0o644))
		require.NoError(t, os.Remove(journal))
	}
	defer func() { testHookRead = nil }()
	g, err := New(Options{ContractsDir: dir, Logger: discard})
	require.NoError(t, err)
	assert.NotNil(t, g.Check("POST", "/b", []byte("2")))
	require.NoError(t, g.Reload())

	// A contracts file changed while read is still seen as a change.
	n := 0
	testHookRead = func(name string) {
		if name == "b.yaml" && n == 0 {
			n++
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("endpoint: /a\nmethod: POST\nschema:\n  type: integer\n  maximum: 5\n"), 0o644))
			require.NoError(t, os.WriteFile(journal, nil, 0o644)) // and the folder with it
		}
	}
	require.NoError(t, g.Reload())
	assert.Nil(t, g.Check("POST", "/a", []byte("5")), "a.yaml as it was after the change: loaded again")
}

// swapData points dir's ..data link at the folder to, as the kubelet
// updates a ConfigMap: a new link, renamed over the old.
func swapData(t *testing.T, dir, to string) {
	require.NoError(t, os.Symlink(to, filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
}

// writeMaxima writes a.yaml and b.yaml into folder (made if missing):
// contracts for POST /a and POST /b whose body is an integer of at most
// max, so that a check tells which version of them is in force.
func writeMaxima(t *testing.T, folder string, max int) {
	require.NoError(t, os.MkdirAll(folder, 0o755))
	for _, f := range []string{"a", "b"} {
		c := fmt.Sprintf("endpoint: /%s\nmethod: POST\nschema:\n  type: integer\n  maximum: %d\n", f, max)
		require.NoError(t, os.WriteFile(filepath.Join(folder, f+".yaml"), []byte(c), 0o644))
	}
}

// beforeReading has the next load call f before it reads file, once,
// with one reader at a time (so that the files before it are read
// first); done reports that it was called. Undone when the test ends.
func beforeReading(t *testing.T, file string, f func()) (done *bool) {
	done = new(bool)
	procs := runtime.GOMAXPROCS(1)
	testHookRead = func(name string) {
		if name == file && !*done {
			*done = true
			f()
		}
	}
	t.Cleanup(func() {
		testHookRead = nil
		runtime.GOMAXPROCS(procs)
	})
	return done
}
