package sink

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/contractguard/contractguard/internal/taint"
)

// Files checks file names before they are opened. The zero Files is what
// Open, OpenFile, ReadFile and CheckPath use. A Files is made for the
// handler that uses it, so its Base is as narrow as that handler's files.
type Files struct {
	// Base is a directory below which input may choose any path: a handler
	// that serves /srv/uploads sets it, and then an absolute path or a ..
	// that stays below it is let through. Outside Base (or with no Base),
	// input may not make a path absolute or climb out of the directory the
	// application put it in. A relative Base is taken from the working
	// directory.
	Base string
}

// Open is os.Open(name) after CheckPath.
func Open(ctx context.Context, name string) (*os.File, error) { return Files{}.Open(ctx, name) }

// OpenFile is os.OpenFile(name, flag, perm) after CheckPath.
func OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (*os.File, error) {
	return Files{}.OpenFile(ctx, name, flag, perm)
}

// ReadFile is os.ReadFile(name) after CheckPath.
func ReadFile(ctx context.Context, name string) ([]byte, error) { return Files{}.ReadFile(ctx, name) }

// CheckPath checks a file name against the request input ctx carries,
// before it is opened. It returns an error wrapping ErrBlocked when an
// input
//   - makes the path absolute (`/etc/passwd` as the whole name, or as its
//     start, also as filepath.Clean writes it: `/etc//passwd`);
//   - climbs out of the directory the application put it in with ..
//     (`"uploads/" + input`, or filepath.Join's cleaned result, or after a
//     percent-decoding the application did itself);
//   - names a sensitive file or directory: .env, .git, .ssh, .aws, id_rsa,
//     /etc/passwd, /proc, and the like — even below a Base;
//   - holds a NUL byte.
//
// Names and dots inside the directory are fine (`report.v2.pdf`,
// `a/../b.txt`). The check reads the name as written: a symbolic link
// below the directory that points out of it is not seen (os.Root is the
// tool for that). With no input in ctx it does nothing.
func CheckPath(ctx context.Context, name string) error { return Files{}.Check(ctx, name) }

// Open is os.Open(name) after f.Check.
func (f Files) Open(ctx context.Context, name string) (*os.File, error) {
	if err := f.Check(ctx, name); err != nil {
		return nil, err
	}
	return os.Open(name)
}

// OpenFile is os.OpenFile(name, flag, perm) after f.Check.
func (f Files) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (*os.File, error) {
	if err := f.Check(ctx, name); err != nil {
		return nil, err
	}
	return os.OpenFile(name, flag, perm)
}

// ReadFile is os.ReadFile(name) after f.Check.
func (f Files) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if err := f.Check(ctx, name); err != nil {
		return nil, err
	}
	return os.ReadFile(name)
}

// Check is CheckPath with f's Base.
func (f Files) Check(ctx context.Context, name string) error {
	r := request(ctx)
	if r == nil {
		return nil
	}
	if ok, err := tooLarge(r, sinkFile); ok {
		return err
	}
	pc := pathCheck{f: f, name: name, clean: filepath.Clean(name), fd: newFinder(name)}
	var failed error
	reported := false // report-only: the call is reported for each input
	r.Inputs(func(in taint.Input) bool {
		why, ok := pc.forms(in.Value)
		v := trimSpace(in.Value)
		if ok && why == "" && len(v) < len(in.Value) {
			// Applications trim what they are given (` ../secret.txt`).
			why, ok = pc.forms(v)
		}
		if w := trimAnySpace(v); ok && why == "" && len(w) < len(v) {
			// Most trim more than ASCII's white space ("\u00a0../secret.txt").
			why, ok = pc.forms(w)
		}
		if !ok {
			failed = overBudgetAgain(r, sinkFile, reported)
			return false
		}
		if why != "" {
			failed = blockAgain(r, sinkFile, in, why, reported)
			reported = true
			return failed == nil
		}
		return true
	})
	return failed
}

type pathCheck struct {
	f     Files
	name  string
	clean string
	fd    finder
	base  string // f.Base made absolute and clean, on first use
}

const windows = runtime.GOOS == "windows"

func isSep(c byte) bool { return c == '/' || (windows && c == '\\') }

func lastSep(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if isSep(s[i]) {
			return i
		}
	}
	return -1
}

// segments splits a path on its separators.
func segments(p string, each func(seg string) bool) {
	for p != "" {
		i := 0
		for i < len(p) && !isSep(p[i]) {
			i++
		}
		if !each(p[:i]) {
			return
		}
		if i == len(p) {
			return
		}
		p = p[i+1:]
	}
}

// cleanShortens: filepath.Clean takes something off v other than a climb
// (which the caller looks for): an empty or "." segment ("a//b", "a/./b",
// "./a") or a separator at its end ("a/").
func cleanShortens(v string) bool {
	if v[0] == '.' && (len(v) == 1 || isSep(v[1])) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if !isSep(v[i]) {
			continue
		}
		if i+1 == len(v) || isSep(v[i+1]) || v[i+1] == '.' && (i+2 == len(v) || isSep(v[i+2])) {
			return true
		}
	}
	return false
}

func isAbsInput(v string) bool {
	if isSep(v[0]) {
		return true
	}
	return windows && len(v) >= 2 && v[1] == ':' && ('a' <= v[0]|0x20 && v[0]|0x20 <= 'z')
}

// forms checks input v as it is, percent-decoded (the application may
// decode what the guard already decoded once) and in its otherCases.
func (pc *pathCheck) forms(v string) (why string, ok bool) {
	why, ok = pc.inputDecoded(v)
	if ok && why == "" && !isASCII(v) {
		why, ok = checkOtherCases(v, pc.inputDecoded)
	}
	return why, ok
}

// inputDecoded is input, of v and, when v has an escape, of v decoded, as
// Check has it for each input.
func (pc *pathCheck) inputDecoded(v string) (why string, ok bool) {
	why, ok = pc.input(v)
	if ok && why == "" && strings.IndexByte(v, '%') >= 0 {
		if u, err := url.PathUnescape(v); err == nil && u != v {
			why, ok = pc.input(u)
		}
	}
	return why, ok
}

// input checks one input; ok is false when the check's work is spent.
func (pc *pathCheck) input(v string) (why string, ok bool) {
	if len(v) < taint.MinInputLen || len(v) > len(pc.name) && !strings.Contains(v, "..") && !cleanShortens(v) {
		// Longer than the name, it is not there, nor cleaned (filepath.Clean
		// of "/etc//passwd" is "/etc/passwd", shorter than the input).
		return "", true
	}
	// What the input could do to a path, told from the input alone: most
	// inputs can do nothing, and are not looked for.
	abs := isAbsInput(v)
	nul := strings.IndexByte(v, 0) >= 0
	depth, climbs, seps := 0, false, 0
	// The input names a sensitive file or directory that is in the cleaned
	// name (every one it names is looked at, not the first alone:
	// .ssh/../.env names .ssh and reaches .env). One it names that is not
	// there can reach nothing below: the checks below look for the
	// input's own segments in the name.
	reaches := false
	dotFirst := false // the input's first segment is "."
	segments(v, func(seg string) bool {
		if seps == 0 {
			dotFirst = seg == "."
		}
		seps++
		switch seg {
		case "", ".":
		case "..":
			depth--
			climbs = climbs || depth < 0
		default:
			depth++
			reaches = reaches || sensitiveName(seg) && hasSegment(pc.clean, seg)
			if systemFileName(seg) {
				seps++ // looked for: it may be the end of "/etc/" + input
			}
		}
		return true
	})
	if !abs && !nul && !climbs && !reaches && seps < 2 {
		return "", true
	}
	at, ok := pc.fd.index(v, 0)
	if !ok {
		return "", false
	}
	if nul && at >= 0 {
		return "puts a NUL byte in the path", true
	}
	dotJoined := false // the climb of a "./" input after the application's dot, cleaned away
	if dotFirst && !climbs {
		// After a "." the application wrote at a segment's start (a hidden
		// file's, dir + "/." + input), the input's "./" makes "..":
		// "./secret" climbs out of dir.
		for i := at; i >= 0 && !climbs; {
			climbs = i >= 1 && pc.name[i-1] == '.' && (i == 1 || isSep(pc.name[i-2]))
			if i, ok = pc.fd.index(v, i+1); !ok {
				return "", false
			}
		}
		if at < 0 && pc.f.Base != "" {
			// Joined, filepath.Join(dir, "."+input), the name holds what is
			// left after the climb, as a name joined with dir + "/" + input
			// does: only a Base tells the two apart.
			climbs, dotJoined = true, true
		}
	}
	if abs {
		cv := filepath.Clean(v)
		if at == 0 || pc.clean == cv || strings.HasPrefix(pc.clean, strings.TrimSuffix(cv, string(filepath.Separator))+string(filepath.Separator)) {
			if !pc.inBase() {
				return "makes the path absolute", true
			}
		}
	}
	if climbs {
		escapes := false
		for i := at; i >= 0 && !escapes; {
			escapes = pc.escapes(i)
			pc.fd.work += len(pc.name) // the cleaning escapes did
			if i, ok = pc.fd.index(v, i+1); !ok {
				return "", false
			}
		}
		if at < 0 {
			// Not in the name as written: joined and cleaned (filepath.Join).
			// What is left of the input after its climb, where a segment of
			// the name starts, is the input's doing: at its end, or with
			// what the application wrote after the input (Join(dir, input,
			// "index.html"), Join(dir, input+".txt")).
			cv := filepath.Clean(v)
			if dotJoined {
				cv = filepath.Clean("." + v) // "./secret" after the dot: "../secret"
			}
			tail := cv
			for strings.HasPrefix(tail, "..") && (len(tail) == 2 || isSep(tail[2])) {
				tail = strings.TrimLeft(tail[2:], `/\`)
			}
			switch {
			case tail != "" && tail != cv:
				if escapes, ok = pc.startsSegment(tail); !ok {
					return "", false
				}
				pc.fd.work += len(pc.clean)
			case tail == "" && pc.f.Base != "":
				// A bare climb leaves nothing of itself: only a Base tells
				// whether the name is where input may lead.
				escapes = true
			}
		}
		if escapes && !pc.inBase() {
			return "climbs out of its directory with ..", true
		}
	}
	// The input's doing where it is written, or where it is not but its
	// cleaned form ends the name (filepath.Join cleans .ssh/../.env to .env).
	if reaches && (at >= 0 || abs || climbs || pc.endsWith(filepath.Clean(v))) {
		return "reaches a sensitive file", true
	}
	// A system file, or a path below a sensitive directory, that the input
	// wrote part of.
	if at >= 0 || abs || climbs {
		p := filepath.ToSlash(pc.clean)
		if sensitiveFile(p) && sharesSegment(filepath.ToSlash(v), p) {
			return "reaches a sensitive file", true
		}
		if dir := sensitiveDir(p); dir != "" && sharesSegment(filepath.ToSlash(v), p[len(dir):]) {
			return "reaches a sensitive file", true
		}
	}
	return "", true
}

// endsWith: the clean name is tail (clean), or ends with it after a
// separator.
func (pc *pathCheck) endsWith(tail string) bool {
	return pc.clean == tail || strings.HasSuffix(pc.clean, string(filepath.Separator)+tail)
}

// startsSegment: tail (clean) occurs in the clean name where a segment
// starts, ignoring ASCII case; ok is false when the check's work is
// spent. Only the places where a segment starts are compared, each
// counting the bytes it compared: looking for every occurrence of tail
// compared it again at each byte of a long run ("aaa…" in the name and
// "../aaa…b" as an input: seconds for one call).
func (pc *pathCheck) startsSegment(tail string) (found, ok bool) {
	c := pc.clean
	for i := 0; i+len(tail) <= len(c); i++ {
		if i > 0 && !isSep(c[i-1]) {
			continue
		}
		n := 0
		for n < len(tail) && (c[i+n] == tail[n] || lower(c[i+n]) == lower(tail[n])) {
			n++
		}
		if n == len(tail) {
			return true, true
		}
		if pc.fd.work += n + 1; pc.fd.work > maxWork {
			return false, false
		}
	}
	return false, true
}

// escapes: with the input at i, the cleaned name leaves the directory
// written before it.
func (pc *pathCheck) escapes(i int) bool {
	dir := "."
	if j := lastSep(pc.name[:i]); j >= 0 {
		dir = filepath.Clean(pc.name[:j+1])
	}
	return !within(pc.clean, dir)
}

// within: path p (clean) is dir (clean) or below it, lexically.
func within(p, dir string) bool {
	if dir == "." {
		return !filepath.IsAbs(p) && p != ".." && !strings.HasPrefix(p, ".."+string(filepath.Separator))
	}
	if p == dir {
		return true
	}
	if strings.HasSuffix(dir, string(filepath.Separator)) { // the root
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

func (pc *pathCheck) inBase() bool {
	if pc.f.Base == "" {
		return false
	}
	if pc.base == "" {
		b, err := filepath.Abs(pc.f.Base)
		if err != nil {
			return false
		}
		pc.base = b
	}
	p, err := filepath.Abs(pc.clean)
	if err != nil {
		return false
	}
	return within(p, pc.base)
}

func hasSegment(p, seg string) bool {
	found := false
	segments(p, func(s string) bool {
		found = strings.EqualFold(s, seg)
		return !found
	})
	return found
}

// sharesSegment: v has a segment (not empty) that is a segment of p.
func sharesSegment(v, p string) bool {
	found := false
	segments(p, func(s string) bool {
		found = s != "" && s != "." && hasSegment(v, s)
		return !found
	})
	return found
}

// sensitiveName: a file or directory name that holds secrets or code in
// most deployments.
func sensitiveName(seg string) bool {
	if len(seg) > 64 {
		return strings.HasPrefix(strings.ToLower(seg[:5]), ".env.") // .env. and a long suffix
	}
	var buf [64]byte
	for i := 0; i < len(seg); i++ {
		buf[i] = lower(seg[i])
	}
	s := string(buf[:len(seg)]) // not kept: no allocation
	switch s {
	case ".env", ".git", ".svn", ".hg", ".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".npmrc",
		".netrc", ".pgpass", ".my.cnf", ".bash_history", ".zsh_history", ".htpasswd", ".htaccess",
		".git-credentials", ".terraform", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "authorized_keys",
		"web.config":
		return true
	}
	return strings.HasPrefix(s, ".env.") || strings.HasSuffix(s, ".pem") && strings.Contains(s, "key")
}

// sensitiveFile: the accounts and sudo rules of a Unix system.
func sensitiveFile(p string) bool {
	dir, name, _ := cutLast(p)
	return dir == "/etc" && systemFileName(name)
}

func systemFileName(name string) bool {
	switch name {
	case "passwd", "shadow", "gshadow", "master.passwd", "sudoers", "group":
		return true
	}
	return false
}

func cutLast(p string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p, false
	}
	return p[:i], p[i+1:], true
}

// sensitiveDir is the sensitive directory a clean absolute path (with
// forward slashes) is below, or "".
func sensitiveDir(p string) string {
	for _, s := range [...]string{
		"/etc/ssh/", "/etc/ssl/private/", "/proc/", "/sys/", "/dev/", "/root/", "/boot/",
		"/var/run/secrets/", "/run/secrets/",
	} {
		if strings.HasPrefix(p, s) {
			return s
		}
	}
	if windows {
		l := strings.ToLower(p)
		for _, s := range [...]string{"c:/windows/", "c:/inetpub/"} {
			if strings.HasPrefix(l, s) {
				return p[:len(s)]
			}
		}
	}
	return ""
}
