package contractguard

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const reloaded, failed = "contractguard: contracts reloaded", "contractguard: reload failed; the previous contracts stay in force"

// watched is a guard over dir with Watch running, and ways to wait for
// what it does.
type watched struct {
	t       *testing.T
	g       *Guard
	reloads chan string
}

func startWatch(t *testing.T, dir string) *watched {
	t.Helper()
	return startWatchWith(t, dir, func(slog.Record) {}, func() {})
}

// startWatchWith is startWatch with hook called on every log record
// first, in the goroutine that logs it, and between called after the
// guard's load and before Watch starts.
func startWatchWith(t *testing.T, dir string, hook func(slog.Record), between func()) *watched {
	t.Helper()
	watching := make(chan struct{}, 1)
	w := &watched{t: t, reloads: make(chan string, 1024)}
	logger := slog.New(logHook(func(r slog.Record) {
		hook(r)
		switch r.Message {
		case "contractguard: watching the contracts folder":
			select {
			case watching <- struct{}{}:
			default:
			}
		case reloaded, failed:
			select {
			case w.reloads <- r.Message:
			default:
			}
		}
	}))
	w.g = mustNew(t, Options{ContractsDir: dir, Logger: logger})
	between()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.g.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
	select {
	case <-watching:
	case err := <-done:
		done <- err // for the cleanup, which waits for it
		t.Fatalf("Watch: %v", err)
	}
	return w
}

// awaitLog waits for the log line want of a reload, skipping others.
func (w *watched) awaitLog(want string) {
	w.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-w.reloads:
			if m == want {
				return
			}
		case <-timeout:
			w.t.Fatalf("no %q within 10s of a change", want)
		}
	}
}

// await waits until the guard gives the details want for body on POST
// path.
func (w *watched) await(path, body string, want ...Detail) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := w.g.Check("POST", path, []byte(body))
		if v != nil && assert.ObjectsAreEqual(want, v.Details) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("POST %s %s: still %v 10s after a change, want %v", path, body, v, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatch_ReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)
	g, await, awaitLog := w.g, w.await, w.awaitLog

	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	await("/v", `{"n":2}`, Detail{"", "version 2"})

	writeVersion(t, dir, brokenContract(3))
	awaitLog(failed)
	assert.Equal(t, "version 2", g.Check("POST", "/v", []byte(`{"n":2}`)).Details[0].Message)
	writeVersion(t, dir, v2)
	awaitLog(reloaded)

	// A new folder (of schemas, say) is watched as well: by the time its
	// creation has caused a reload, it is watched.
	sub := filepath.Join(dir, "schemas")
	require.NoError(t, os.Mkdir(sub, 0o755))
	awaitLog(reloaded)
	writeSchema := func(required string) {
		require.NoError(t, os.WriteFile(filepath.Join(sub, "m.json"), []byte(`{"type":"object","required":["`+required+`"]}`), 0o644))
	}
	writeSchema("m")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("endpoint: /m\nmethod: POST\nschema: {$ref: schemas/m.json}\n"), 0o644))
	await("/m", `{}`, Detail{"/m", "is required"})
	writeSchema("k")
	await("/m", `{}`, Detail{"/k", "is required"})
}

// The folder deleted and made again, or a link swapped to another
// folder (a deployment, a mounted volume): Watch follows.
func TestWatch_FolderReplaced(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "contracts")
	require.NoError(t, os.Mkdir(dir, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)

	require.NoError(t, os.RemoveAll(dir))
	w.awaitLog(failed)
	w.await("/v", `{"n":0}`, Detail{"", "version 0"}) // still in force
	require.NoError(t, os.Mkdir(dir, 0o755))
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, dir, v4) // the new folder is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
}

func TestWatch_LinkSwapped(t *testing.T) {
	base := t.TempDir()
	for i, k := range []int{0, 2} {
		d := filepath.Join(base, fmt.Sprintf("r%d", i+1))
		require.NoError(t, os.Mkdir(d, 0o755))
		v, _ := versionContract(k)
		writeVersion(t, d, v)
	}
	current := filepath.Join(base, "current")
	require.NoError(t, os.Symlink("r1", current))
	w := startWatch(t, current)

	require.NoError(t, os.Symlink("r2", current+".new"))
	require.NoError(t, os.Rename(current+".new", current)) // atomic, as deployments swap
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, filepath.Join(base, "r2"), v4) // the folder now linked is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
}

// A link higher up the path, as a deployment swaps current to the next
// release (current -> releases/N, the contracts in current/contracts):
// no folder Watch watched saw it, and the old release's contracts stayed
// in force until a change in that old folder or a restart.
func TestWatch_LinkAboveSwapped(t *testing.T) {
	base := t.TempDir()
	for i, k := range []int{0, 2} {
		d := filepath.Join(base, "releases", fmt.Sprintf("r%d", i+1), "contracts")
		require.NoError(t, os.MkdirAll(d, 0o755))
		v, _ := versionContract(k)
		writeVersion(t, d, v)
	}
	require.NoError(t, os.Mkdir(filepath.Join(base, "shared"), 0o755))
	current := filepath.Join(base, "current")
	swap := func(to string) {
		require.NoError(t, os.Symlink(to, current+".new"))
		require.NoError(t, os.Rename(current+".new", current)) // atomic, as deployments swap
	}
	require.NoError(t, os.Symlink("releases/r1", current))
	w := startWatch(t, filepath.Join(current, "contracts"))

	// A neighbour of the link is no reason to reload.
	require.NoError(t, os.WriteFile(filepath.Join(base, "shared", "x"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(base, "logs"), 0o755))
	time.Sleep(2 * watchDebounce)
	assert.Empty(t, w.reloads)

	swap("releases/r2")
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, filepath.Join(base, "releases", "r2", "contracts"), v4) // the release now linked is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
	swap("releases/r1") // a rollback
	w.await("/v", `{"n":0}`, Detail{"", "version 0"})
	v6, _ := versionContract(6)
	writeVersion(t, filepath.Join(base, "releases", "r1", "contracts"), v6)
	w.await("/v", `{"n":6}`, Detail{"", "version 6"})
}

// The folder is a link whose way to the contracts goes through another
// link that a deployment swaps: /etc/app/contracts, a link to
// /srv/app/current/contracts or to /srv/app/current, with current swapped
// to the next release and the old one left in place (a rollback needs
// it). No folder Watch watched saw the swap, and the old release's
// contracts stayed in force until a restart.
func TestWatch_LinkThroughALinkSwapped(t *testing.T) {
	for _, tc := range []struct{ name, release, link string }{
		{"a link to a path through it", "releases/%s", "../current/contracts"},
		{"a link to it", "releases/%s/contracts", "../current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			for i, k := range []int{0, 2, 4} {
				d := filepath.Join(base, "releases", fmt.Sprintf("r%d", i+1), "contracts")
				require.NoError(t, os.MkdirAll(d, 0o755))
				v, _ := versionContract(k)
				writeVersion(t, d, v)
			}
			current := filepath.Join(base, "current")
			swap := func(release string) {
				require.NoError(t, os.Symlink(fmt.Sprintf(tc.release, release), current+".new"))
				require.NoError(t, os.Rename(current+".new", current)) // atomic, as deployments swap
			}
			swap("r1")
			require.NoError(t, os.Mkdir(filepath.Join(base, "etc"), 0o755))
			dir := filepath.Join(base, "etc", "contracts")
			require.NoError(t, os.Symlink(tc.link, dir))
			w := startWatch(t, dir)

			swap("r2")
			w.await("/v", `{"n":2}`, Detail{"", "version 2"})
			v6, _ := versionContract(6)
			writeVersion(t, filepath.Join(base, "releases", "r2", "contracts"), v6) // the release now linked is watched
			w.await("/v", `{"n":6}`, Detail{"", "version 6"})
			swap("r3")
			w.await("/v", `{"n":4}`, Detail{"", "version 4"})
		})
	}
}

// The folder is deleted with its parent, and both are made again a while
// later (a deployment that replaces /srv/app whole): the parent's watch
// went with it, Watch logged that it was waiting for the folder to come
// back but watched nothing, and the old contracts stayed in force until
// a restart. It waits from the nearest folder above that is there, and
// the grandparent going too is seen from further up.
func TestWatch_ParentReplaced(t *testing.T) {
	base := t.TempDir()
	app := filepath.Join(base, "srv", "app")
	dir := filepath.Join(app, "contracts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)

	for i, gone := range []string{app, filepath.Dir(app)} {
		require.NoError(t, os.RemoveAll(gone))
		w.awaitLog(failed)
		time.Sleep(2 * watchDebounce) // the reload for the removal has run: watched anew
		require.NoError(t, os.MkdirAll(dir, 0o755))
		v, _ := versionContract(2 * (i + 1))
		writeVersion(t, dir, v)
		w.await("/v", fmt.Sprintf(`{"n":%d}`, 2*(i+1)), Detail{"", fmt.Sprintf("version %d", 2*(i+1))})
	}
	v6, _ := versionContract(6)
	writeVersion(t, dir, v6) // the folder made again is watched
	w.await("/v", `{"n":6}`, Detail{"", "version 6"})
}

// A relative folder is read against the working directory as the system
// has it: with $PWD spelling it through a link (the service started in
// /srv/app/current), a swap of that link leaves it where it was, and a
// change there is what a reload reads. Watch made the folder absolute as
// $PWD spells it, followed the swap, and watched the other release.
func TestWatch_RelativeFolderUnderALinkedWorkingDirectory(t *testing.T) {
	base := t.TempDir()
	for i, k := range []int{0, 2} {
		d := filepath.Join(base, "releases", fmt.Sprintf("r%d", i+1), "contracts")
		require.NoError(t, os.MkdirAll(d, 0o755))
		v, _ := versionContract(k)
		writeVersion(t, d, v)
	}
	current := filepath.Join(base, "current")
	require.NoError(t, os.Symlink("releases/r1", current))
	t.Chdir(current) // $PWD is current, the link
	w := startWatch(t, "contracts")

	require.NoError(t, os.Symlink("releases/r2", current+".new"))
	require.NoError(t, os.Rename(current+".new", current))
	time.Sleep(3 * watchDebounce)
	v4, _ := versionContract(4)
	writeVersion(t, filepath.Join(base, "releases", "r1", "contracts"), v4) // the working directory
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
}

// The folder is a link, and the folder it leads to is deleted with its
// parent, both made again a while later: as for the folder's own parent
// (TestWatch_ParentReplaced), nothing was watched where they came back.
func TestWatch_LinkedFolderParentReplaced(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data", "v")
	target := filepath.Join(data, "contracts")
	require.NoError(t, os.MkdirAll(target, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, target, v0)
	etc := filepath.Join(base, "etc")
	require.NoError(t, os.Mkdir(etc, 0o755))
	dir := filepath.Join(etc, "contracts")
	require.NoError(t, os.Symlink(target, dir))
	w := startWatch(t, dir)

	require.NoError(t, os.RemoveAll(data))
	w.awaitLog(failed)
	time.Sleep(2 * watchDebounce) // the reload for the removal has run: watched anew
	require.NoError(t, os.MkdirAll(target, 0o755))
	v2, _ := versionContract(2)
	writeVersion(t, target, v2)
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, target, v4) // the folder made again is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
}

// The folder's parent is renamed away and a new one renamed into its
// place (a deployment that swaps /srv/app whole): the reload for it ran,
// but the watches stayed on the folders renamed away, and no change made
// in the new folder afterwards was loaded until a restart.
func TestWatch_ParentRenamedOver(t *testing.T) {
	base := t.TempDir()
	app := filepath.Join(base, "app")
	dir := filepath.Join(app, "contracts")
	var w *watched
	for i := range 3 {
		next := filepath.Join(base, "app.new", "contracts")
		require.NoError(t, os.MkdirAll(next, 0o755))
		v, _ := versionContract(2 * i)
		writeVersion(t, next, v)
		if i > 0 {
			require.NoError(t, os.Rename(app, filepath.Join(base, fmt.Sprintf("app.%d", i))))
		}
		require.NoError(t, os.Rename(filepath.Join(base, "app.new"), app))
		if w == nil {
			w = startWatch(t, dir)
			continue
		}
		w.await("/v", fmt.Sprintf(`{"n":%d}`, 2*i), Detail{"", fmt.Sprintf("version %d", 2*i)})
		v8, _ := versionContract(8)
		writeVersion(t, dir, v8) // the new folder is watched
		w.await("/v", `{"n":8}`, Detail{"", "version 8"})
	}
}

// The folder is a link, as a deployment makes it, and the folder it leads
// to is replaced with the link left as it is: renamed over by a new one,
// then deleted and made again a while later. Watch follows each time:
// a change made in the folder afterwards is loaded too.
func TestWatch_LinkedFolderReplaced(t *testing.T) {
	base := t.TempDir()
	data, etc := filepath.Join(base, "data"), filepath.Join(base, "etc")
	target := filepath.Join(data, "contracts")
	require.NoError(t, os.MkdirAll(target, 0o755))
	require.NoError(t, os.Mkdir(etc, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, target, v0)
	dir := filepath.Join(etc, "contracts")
	require.NoError(t, os.Symlink(target, dir))
	w := startWatch(t, dir)

	next := filepath.Join(data, "next")
	require.NoError(t, os.Mkdir(next, 0o755))
	v2, _ := versionContract(2)
	writeVersion(t, next, v2)
	require.NoError(t, os.Rename(target, filepath.Join(data, "previous")))
	require.NoError(t, os.Rename(next, target))
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, target, v4) // the folder renamed in is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})

	require.NoError(t, os.RemoveAll(target))
	w.awaitLog(failed) // the link leads nowhere for a while
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
	require.NoError(t, os.Mkdir(target, 0o755))
	v6, _ := versionContract(6)
	writeVersion(t, target, v6)
	w.await("/v", `{"n":6}`, Detail{"", "version 6"})
	v8, _ := versionContract(8)
	writeVersion(t, target, v8) // the folder made again is watched
	w.await("/v", `{"n":8}`, Detail{"", "version 8"})
}

// A reload that failed as a file could not be read is tried again when
// the file's permissions change: the chmod that fixes it may be the last
// change made. (Run as root, it runs again as another user.)
func TestWatch_ReloadsAfterAPermissionFix(t *testing.T) {
	if unprivileged(t) { // root reads through permissions
		return
	}
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)
	d := filepath.Join(dir, "d.yaml")
	require.NoError(t, os.WriteFile(d, []byte("endpoint: /d\nmethod: POST\nschema: {type: object, required: [d]}\n"), 0o200))
	w.awaitLog(failed) // permission denied
	require.NoError(t, os.Chmod(d, 0o644))
	w.await("/d", `{}`, Detail{"/d", "is required"})
}

// Events lost when the operating system's queue of them overflows may be
// those of the folder being replaced: Watch then watches the folder anew,
// as well as reloading, or it would miss every change after. The queue is
// made to overflow while Watch is held inside a reload (in its log line).
func TestWatch_OverflowWatchesAnew(t *testing.T) {
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("not inotify")
	}
	queue, err := strconv.Atoi(strings.TrimSpace(string(limit)))
	if err != nil || queue > 1<<16 {
		t.Skipf("inotify queue of %s events: too long to overflow here", limit)
	}
	base := t.TempDir()
	dir := filepath.Join(base, "contracts")
	junk := filepath.Join(dir, "junk")
	require.NoError(t, os.MkdirAll(junk, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	var holding atomic.Bool
	held, hold, overflowed := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	w := startWatchWith(t, dir, func(r slog.Record) {
		switch {
		case r.Message == reloaded && holding.CompareAndSwap(true, false):
			close(held)
			<-hold
		case r.Level == slog.LevelWarn && r.Message == "contractguard: watching the contracts folder":
			select {
			case overflowed <- struct{}{}:
			default:
			}
		}
	}, func() {})

	holding.Store(true)
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	<-held
	for i := range queue + 1000 {
		require.NoError(t, os.WriteFile(filepath.Join(junk, strconv.Itoa(i)), nil, 0o644))
	}
	require.NoError(t, os.RemoveAll(dir)) // lost: the queue is full
	require.NoError(t, os.Mkdir(dir, 0o755))
	v4, _ := versionContract(4)
	writeVersion(t, dir, v4)
	close(hold)
	select {
	case <-overflowed:
	case <-time.After(10 * time.Second):
		t.Fatal("the queue did not overflow")
	}
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
	v6, _ := versionContract(6)
	writeVersion(t, dir, v6) // the folder made again is watched
	w.await("/v", `{"n":6}`, Detail{"", "version 6"})
}

// A burst of changes is one reload: twenty saves, 20 ms apart, each well
// inside the quarter second Watch waits for a pause. Only a stall of the
// test of over 200 ms could split the burst, so the bar allows three.
func TestWatch_OneReloadForABurst(t *testing.T) {
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)
	const saves = 20
	for k := 1; k <= saves; k++ {
		v, _ := versionContract(2 * k)
		writeVersion(t, dir, v)
		time.Sleep(20 * time.Millisecond)
	}
	w.await("/v", fmt.Sprintf(`{"n":%d}`, 2*saves), Detail{"", fmt.Sprintf("version %d", 2*saves)})
	time.Sleep(2 * watchDebounce) // any reload still to come
	reloads := len(w.reloads)     // logged, whether it succeeded or failed
	assert.LessOrEqual(t, reloads, 3, "%d saves made %d reloads", saves, reloads)
}

// A folder written without a quarter second's pause (a sync tool, a log
// beside the contracts) was never reloaded: each change pushed the reload
// back. It is reloaded once watchMaxWait has passed since the first
// change not reloaded, while the writes go on.
func TestWatch_ReloadsWhileWritesGoOn(t *testing.T) {
	// Put back once Watch has stopped (cleanups run last first, and
	// startWatch's stops it): a deferred write raced its reads.
	old := watchMaxWait
	t.Cleanup(func() { watchMaxWait = old })
	watchMaxWait = 600 * time.Millisecond
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	stop := make(chan struct{})
	writing := make(chan struct{})
	go func() { // a file beside the contracts, written every 50 ms
		defer close(writing)
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			_ = os.WriteFile(filepath.Join(dir, "busy.log"), []byte(strconv.Itoa(k)), 0o644)
		}
	}()
	defer func() { close(stop); <-writing }()
	w.awaitLog(reloaded) // within 10 s, while the writes go on
	assert.Equal(t, "version 2", w.g.Check("POST", "/v", []byte(`{"n":2}`)).Details[0].Message)
}

// A change made after the guard loaded its contracts and before Watch
// started has no event: it waited for the next change. Watch now reads
// the folder again as it starts, and reloads when it differs from what
// the contracts in force were loaded from.
func TestWatch_ChangesBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatchWith(t, dir, func(slog.Record) {}, func() {
		v2, _ := versionContract(2)
		writeVersion(t, dir, v2)
	})
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
}

// folderChanged: what the load read, compared with the folder now. Files
// it does not load (hidden, other extensions, a folder of schemas nobody
// refers to) are no change; a contracts file added, changed or removed
// is, and so is a schema a $ref read.
func TestWatch_FolderChanged(t *testing.T) {
	write := func(dir, name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	for name, tc := range map[string]struct {
		change  func(dir string)
		changed bool
	}{
		"nothing":            {func(string) {}, false},
		"the same bytes":     {func(dir string) { write(dir, "m.yaml", mContract) }, false},
		"a hidden file":      {func(dir string) { write(dir, ".#m.yaml", "x") }, false},
		"a text file":        {func(dir string) { write(dir, "notes.txt", "x") }, false},
		"a schema unread":    {func(dir string) { write(dir, "schemas/other.json", "{}") }, false},
		"a contracts file":   {func(dir string) { write(dir, "n.yml", "endpoint: /n\nmethod: GET\n") }, true},
		"the contract":       {func(dir string) { write(dir, "m.yaml", mContract+"# edited\n") }, true},
		"the contract gone":  {func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "m.yaml"))) }, true},
		"the schema":         {func(dir string) { write(dir, "schemas/m.json", `{"type":"array"}`) }, true},
		"the schema gone":    {func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "schemas/m.json"))) }, true},
		"the folder renamed": {func(dir string) { require.NoError(t, os.Rename(dir, dir+".old")) }, true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "contracts")
			write(dir, "m.yaml", mContract)
			write(dir, "schemas/m.json", `{"type":"object"}`)
			g := mustNew(t, Options{ContractsDir: dir})
			require.False(t, g.folderChanged(), "as loaded")
			tc.change(dir)
			assert.Equal(t, tc.changed, g.folderChanged())
			if tc.changed && name != "the folder renamed" {
				_ = g.Reload() // the set in force is now the folder's, or the reload failed and it is not
				assert.Equal(t, g.Stats().Reloads == 0, g.folderChanged(), "after the reload")
			}
		})
	}
	// Contracts that do not come from a folder on disk are never changed.
	g := mustNew(t, Options{ContractsFS: mapFS(map[string]string{"c.yaml": "endpoint: /a\nmethod: GET\n"})})
	assert.False(t, g.folderChanged())
}

const mContract = "endpoint: /m\nmethod: POST\nschema: {$ref: schemas/m.json}\n"

func TestWatch_NeedsAFolder(t *testing.T) {
	for name, o := range map[string]Options{
		"no folder":   {Contracts: []Contract{{Endpoint: "/a", Method: "GET"}}},
		"ContractsFS": {ContractsFS: mapFS(map[string]string{"c.yaml": "endpoint: /a\nmethod: GET\n"})},
		"disabled":    {ContractsDir: "testdata/contracts", Disabled: true},
	} {
		t.Run(name, func(t *testing.T) {
			g := mustNew(t, o)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := g.Watch(ctx) // refused at once; a wait would end at the timeout, without the prefix
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "contractguard: Watch"), err.Error())
		})
	}
}

// logHook is a slog handler that calls fn with every record.
type logHook func(slog.Record)

func (h logHook) Enabled(context.Context, slog.Level) bool      { return true }
func (h logHook) Handle(_ context.Context, r slog.Record) error { h(r); return nil }
func (h logHook) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h logHook) WithGroup(string) slog.Handler                 { return h }

// A relative folder in the working directory (contracts-dir: ./contracts
// beside contractguard.yaml, as LoadConfig gives it) deleted and made
// again: the parent's events name it ./contracts, not contracts.
func TestWatch_RelativeFolderReplaced(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := "contracts"
	require.NoError(t, os.Mkdir(dir, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	w := startWatch(t, dir)

	require.NoError(t, os.RemoveAll(dir))
	w.awaitLog(failed)
	require.NoError(t, os.Mkdir(dir, 0o755))
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
	v4, _ := versionContract(4)
	writeVersion(t, dir, v4) // the new folder is watched
	w.await("/v", `{"n":4}`, Detail{"", "version 4"})
}

// A folder below the contracts that the service cannot read (lost+found
// at the root of a volume, a colleague's private folder): no contract is
// there, and New loads without it. Watch watched the rest, not failed to
// start. (Run as root, it runs again as another user.)
func TestWatch_UnreadableFolderBelow(t *testing.T) {
	if unprivileged(t) { // root reads through permissions
		return
	}
	dir := t.TempDir()
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	private := filepath.Join(dir, "lost+found")
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.Chmod(private, 0))
	t.Cleanup(func() { _ = os.Chmod(private, 0o700) })
	w := startWatch(t, dir)
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
}

// TestWatch_ParentNotListable: a contracts folder whose parent the
// service may search but not list (chmod 311, 711 to others) is watched;
// Watch returned "permission denied" at once, for the parent it watches
// to see the folder replaced, and no edit was ever reloaded.
func TestWatch_ParentNotListable(t *testing.T) {
	if unprivileged(t) { // root lists through permissions
		return
	}
	parent := filepath.Join(t.TempDir(), "app")
	dir := filepath.Join(parent, "contracts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	v0, _ := versionContract(0)
	writeVersion(t, dir, v0)
	require.NoError(t, os.Chmod(parent, 0o311)) // searched, not listed
	t.Cleanup(func() { _ = os.Chmod(parent, 0o755) })
	w := startWatch(t, dir)
	v2, _ := versionContract(2)
	writeVersion(t, dir, v2)
	w.await("/v", `{"n":2}`, Detail{"", "version 2"})
}
