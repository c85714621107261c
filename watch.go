package contractguard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce is how long Watch waits after the last change before it
// reloads: an editor's save, a git checkout or a deployment that copies a
// folder are many events, and one reload covers them.
const watchDebounce = 250 * time.Millisecond

// watchMaxWait bounds that wait: a folder written without a pause (a
// sync tool touching files, a log written beside the contracts) is
// reloaded at least this often, not never. A variable for tests.
var watchMaxWait = 5 * time.Second

// Watch reloads the contracts (see [Guard.Reload]) whenever a file in
// Options.ContractsDir or a folder below it is written, created, removed
// or renamed, once changes have paused for a quarter of a second (or,
// in a folder written without such a pause, five seconds after the first
// change it has not reloaded for). As it starts, it reloads when the
// folder differs from what the contracts in force were loaded from (a
// file changed after New). A reload that fails is logged and leaves the
// contracts in force, and watching goes on: the next change may fix it,
// a change of permissions too. Watch blocks until ctx is done and then
// returns ctx.Err(); run it in its own goroutine:
//
//	go g.Watch(ctx)
//
// It returns an error at once when there is no folder on disk to watch
// (ContractsDir is empty or ContractsFS is set), when the guard is
// disabled, or when the operating system's watcher cannot start.
func (g *Guard) Watch(ctx context.Context) error {
	switch {
	case g.opts.Disabled:
		return errors.New("contractguard: Watch: the guard is disabled")
	case g.opts.ContractsFS != nil:
		return errors.New("contractguard: Watch: the contracts come from Options.ContractsFS, not a folder on disk; call Reload instead")
	case g.opts.ContractsDir == "":
		return errors.New("contractguard: Watch: Options.ContractsDir is empty")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("contractguard: Watch: %w", err)
	}
	defer w.Close()
	// An event names a folder as it was first watched: absolute, as the
	// folders of the links on the way (watchLinks) are, so that one
	// folder watched as two names is seen as one.
	dir := absolute(g.opts.ContractsDir)
	parent := filepath.Dir(dir)
	above := "" // the folder watched for the way to dir to be made again, its parent being gone (or not listable): "" when it is watched
	if parent != dir {
		// The folder may be deleted and made again, renamed, or be a link
		// swapped to another folder: its parent sees that.
		if err := w.Add(parent); err != nil {
			if !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("contractguard: Watch %s: %w", parent, err)
			}
			// A parent the service may search but not list (chmod 711)
			// cannot be watched: the folder's own watch sees its files,
			// and the parent is watched from above, as one that is gone.
			above = watchNearest(w, filepath.Dir(parent))
		}
	}
	// When the folder is a link, the folder it leads to may be renamed
	// over, or deleted and made again, with the link left as it is: the
	// parent of that folder sees it.
	root := resolve(dir)
	rootParent, aboveRoot := watchParent(w, root, parent) // aboveRoot: what above (below) is for dir, for root
	if err := watchTree(w, root); err != nil {
		return fmt.Errorf("contractguard: Watch %s: %w", g.opts.ContractsDir, err)
	}
	links := watchLinks(w, dir, root)
	g.log.Info("contractguard: watching the contracts folder", slog.String("contracts_dir", g.opts.ContractsDir))

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	replaced := false   // the folder was created, removed, renamed or relinked, or events were lost
	failing := false    // the last reload failed
	var since time.Time // the first change the next reload is for
	arm := func() {
		if since.IsZero() {
			since = time.Now()
		}
		timer.Reset(max(0, min(watchDebounce, watchMaxWait-time.Since(since))))
	}
	// A change made between the load in force and now has no event.
	if g.folderChanged() {
		arm()
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("contractguard: Watch: the watcher stopped")
			}
			if ev.Op == fsnotify.Chmod && !failing {
				continue // but it may fix a file the last reload could not read
			}
			// Cleaned: a watch of the folder "." names its entries
			// ./contracts, and dir is contracts.
			name := filepath.Clean(ev.Name)
			switch up := filepath.Dir(name); {
			case parent != dir && name == parent, rootParent != "" && name == rootParent, name == above, name == aboveRoot, links[name] != nil:
				// A folder watched for the way to the contracts was itself
				// renamed (over by a new one, as a deployment replaces
				// /srv/app) or deleted: its watch sees that way no more.
				replaced = true
			case up == above, up == aboveRoot:
				if !onTheWay(name, dir) && !onTheWay(name, root) {
					continue // a neighbour of the way to the folder
				}
				replaced = true // made again
			case links[up] != nil:
				if name != dir && name != root && !slices.Contains(links[up], name) {
					continue // a neighbour of the links
				}
				replaced = true
			case parent != dir && up == parent, rootParent != "" && up == rootParent:
				if name != dir && name != root {
					continue // a neighbour of the folder
				}
				replaced = true
			case ev.Has(fsnotify.Create):
				// A new folder is watched too; an error here (it was
				// removed again) is for the reload to find.
				_ = watchTree(w, name)
			}
			arm()
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("contractguard: Watch: the watcher stopped")
			}
			// Events may have been lost (the queue overflowed), those of
			// the folder replaced or of a new folder below it among them:
			// watch the folder anew and reload, to be sure the set in
			// force matches the folder.
			g.log.Warn("contractguard: watching the contracts folder", slog.Any("error", err))
			replaced = true
			arm()
		case <-timer.C:
			since = time.Time{}
			// A link that leads nowhere now is watched where it led: the
			// folder may be made again there.
			if r := cmp.Or(resolved(dir), root); replaced || r != root {
				for _, p := range w.WatchList() {
					_ = w.Remove(p)
				}
				if above = ""; parent != dir {
					// A link may lead it elsewhere now. A parent that is
					// gone too (deleted with the folder, to be made again)
					// is waited for from the nearest folder above it.
					if p := watchNearest(w, parent); p != parent {
						above = p
					}
				}
				root, replaced = r, false
				links = watchLinks(w, dir, root)
				rootParent, aboveRoot = watchParent(w, root, parent)
				if err := watchTree(w, root); err != nil {
					g.log.Warn("contractguard: the contracts folder is gone; waiting for it to come back", slog.Any("error", err))
				}
			}
			failing = g.Reload() != nil // logged by Reload
		}
	}
}

// absolute is dir made absolute against the working directory as the
// system has it, which a reload reads a relative dir from, not as $PWD may
// spell it through a link (/srv/app/current for /srv/app/releases/3): a
// swap of that link leaves the working directory where it was. It is
// dir, cleaned, when the working directory cannot be read.
func absolute(dir string) string {
	dir = filepath.Clean(dir)
	if filepath.IsAbs(dir) {
		return dir
	}
	wd, err := os.Getwd()
	if err == nil {
		wd, err = filepath.EvalSymlinks(wd)
	}
	if err != nil {
		return dir
	}
	return filepath.Join(wd, dir)
}

// resolve is dir with symbolic links resolved (the folder may be a link,
// as a mounted volume is), or dir when it cannot be resolved.
func resolve(dir string) string {
	return cmp.Or(resolved(dir), dir)
}

// resolved is dir with symbolic links resolved, or "" when it cannot be.
func resolved(dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return r
}

// watchLinks adds to w the folder of each symbolic link met on the way
// to dir, as the system resolves it (/srv/app for /srv/app/current in
// /srv/app/current/contracts, which a deployment swaps to the next
// release; and so on along the paths the links lead to: /srv/app too
// for /etc/app/contracts, a link to /srv/app/current/contracts), and
// returns the links by their folders. A link swapped there leads dir to
// another folder with no event in any folder watched but the link's
// own. A folder in root's tree is watched already, where every change
// reloads: it is left out.
func watchLinks(w *fsnotify.Watcher, dir, root string) map[string][]string {
	links := map[string][]string{}
	for _, p := range linksOnTheWay(dir) {
		up := filepath.Dir(p)
		if up == root || strings.HasPrefix(up, root+string(filepath.Separator)) {
			continue
		}
		if _, ok := links[up]; !ok && w.Add(up) != nil {
			continue
		}
		links[up] = append(links[up], p)
	}
	return links
}

// linksOnTheWay lists the symbolic links met in resolving the absolute
// path dir, component by component as filepath.EvalSymlinks does: those
// on dir's own path, then those on the paths the links lead to. A
// component that cannot be read ends the list.
func linksOnTheWay(dir string) []string {
	const maxHops = 255 // the system's limit is lower: a loop ends here
	var links []string
	if !filepath.IsAbs(dir) {
		return nil // the working directory could not be read (absolute)
	}
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(dir)
	done, rest := vol+sep, dir[len(vol):]
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(strings.TrimLeft(rest, sep), sep)
		switch name {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		p := filepath.Join(done, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return links
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = p
			continue
		}
		target, err := os.Readlink(p)
		if err != nil || len(links) == maxHops {
			return links
		}
		links = append(links, p)
		target = filepath.FromSlash(target)
		if filepath.IsAbs(target) {
			vol = filepath.VolumeName(target)
			done, target = vol+sep, target[len(vol):]
		}
		rest = target + sep + rest
	}
	return links
}

// watchNearest adds to w the folder p or, when it cannot be watched (it
// is gone), the nearest folder above it that can, and returns the folder
// watched: "" when none could be.
func watchNearest(w *fsnotify.Watcher, p string) string {
	for w.Add(p) != nil {
		up := filepath.Dir(p)
		if up == p {
			return ""
		}
		p = up
	}
	return p
}

// watchParent adds to w the folder above root, the folder the link dir
// leads to, and returns it; it returns "" when that is parent (dir is no
// link, or a link beside its folder), or when it cannot be watched. When
// it is gone too (deleted with root, to be made again), the nearest
// folder above it that is there is watched instead, and returned as
// above.
func watchParent(w *fsnotify.Watcher, root, parent string) (up, above string) {
	up = filepath.Dir(root)
	if up == root || up == parent {
		return "", ""
	}
	if p := watchNearest(w, up); p != up {
		return "", p
	}
	return up, ""
}

// onTheWay reports whether name is p or a folder above it.
func onTheWay(name, p string) bool {
	return name == p || strings.HasPrefix(p, name+string(filepath.Separator))
}

// watchTree adds dir and every folder below it to w; a file is ignored,
// and so is a folder below dir that the process may not read (lost+found
// at the root of a volume): no contracts file is there, and a $ref into
// it is the load's to report.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = w.Add(p)
		}
		if err != nil && p != dir && errors.Is(err, fs.ErrPermission) {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return err
	})
}

// folderRead is what a load read of the contracts folder on disk: every
// file, by its name in the folder, and what reading it gave. Watch reads
// them again as it starts, since a change made between the load and
// then has no event to show it.
type folderRead map[string]fileRead

// fileRead is what reading a file gave: the sum of its bytes, or that it
// could not be read.
type fileRead struct {
	sum uint64
	ok  bool
}

// readSeed seeds the sums of folderRead, which are compared within this
// process only.
var readSeed = maphash.MakeSeed()

// note records a file read; on a nil r it does nothing.
func (r folderRead) note(name string, data []byte, err error) {
	if r != nil {
		r[name] = readOf(data, err)
	}
}

func readOf(data []byte, err error) fileRead {
	if err != nil {
		return fileRead{}
	}
	return fileRead{sum: maphash.Bytes(readSeed, data), ok: true}
}

// folderChanged reports whether the contracts folder on disk now differs
// from what the contracts in force were loaded from: a contracts file
// added, or a file the load read reading otherwise (changed, gone, or
// there when it was not). A folder it cannot read has changed: the reload
// says how.
func (g *Guard) folderChanged() bool {
	seen := g.set.Load().seen
	if seen == nil {
		return false
	}
	fsys, done, err := contractsFS(&g.opts)
	if err != nil {
		return true
	}
	defer done()
	return readsOtherwise(fsys, seen)
}

// readsOtherwise reports whether the folder fsys differs from what a
// load read of it (seen): a contracts file added, or a file the load
// read reading otherwise (changed, gone, or there when it was not).
func readsOtherwise(fsys fs.FS, seen folderRead) bool {
	names, misnamed, err := contractFiles(fsys)
	if err != nil || len(misnamed) > 0 {
		return true
	}
	for _, name := range names {
		if _, ok := seen[name]; !ok {
			return true
		}
	}
	for name, was := range seen {
		if readOf(fs.ReadFile(fsys, name)) != was {
			return true
		}
	}
	return false
}
