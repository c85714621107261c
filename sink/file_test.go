package sink

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// fileTree is a directory with uploads/ (the files a handler serves) and,
// beside it, secret.txt and .env, which no input may reach.
func fileTree(t *testing.T) (root, uploads string) {
	t.Helper()
	root = t.TempDir()
	uploads = filepath.Join(root, "uploads")
	for name, content := range map[string]string{
		"uploads/report.v2.pdf":       "report",
		"uploads/notes..txt":          "notes",
		"uploads/..hidden":            "hidden",
		"uploads/sub/dir/file.txt":    "deep",
		"uploads/b.txt":               "b",
		"uploads/my file (1).txt":     "spaces",
		"uploads/caf\u00e9.txt":       "accent",
		"secret.txt":                  "secret",
		".env":                        "KEY=1",
		"uploads/.git/config":         "git",
		"uploads/photos/.ssh/id_rsa":  "key",
		"uploads/sub/.env.production": "KEY=2",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root, uploads
}

// How an application turns an input into a file name.
type fileHow struct {
	name string
	path func(uploads, in string) string
}

var fileHows = []fileHow{
	{"concatenated", func(u, in string) string { return u + "/" + in }},
	{"filepath.Join", func(u, in string) string { return filepath.Join(u, in) }},
	{"with extension", func(u, in string) string { return u + "/" + in + ".txt" }},
	{"decoded by the app", func(u, in string) string {
		d, err := url.PathUnescape(in)
		if err != nil {
			d = in
		}
		return filepath.Join(u, d)
	}},
}

var fileAttacks = []string{
	"../secret.txt",
	"../../../../../../etc/passwd",
	"sub/../../secret.txt",
	"../.env",
	"..",
	"../",
	"..%2fsecret.txt",
	"%2e%2e/secret.txt",
	"/etc/passwd",
	"/proc/self/environ",
	".env",
	".git/config",
	"photos/.ssh/id_rsa",
	"sub/.env.production",
	"b.txt\x00.png",
	".ssh/../.env", // found by the end-to-end test: a sensitive name beyond the first
	".git/../.env",
}

var fileBenign = []string{
	"report.v2.pdf",
	"notes..txt",
	"..hidden",
	"sub/dir/file.txt",
	"sub/../b.txt",
	"./b.txt",
	"my file (1).txt",
	"caf\u00e9.txt",
	"b.txt",
}

// attackIn: the attack can do harm through how (a NUL byte, or an absolute
// path, can only when the input starts the name).
func attackIn(h fileHow, in string) bool {
	if strings.Contains(in, "%") && h.name != "decoded by the app" {
		return false // a name with a % in it, harmless unless decoded
	}
	switch h.name {
	case "concatenated", "filepath.Join", "with extension", "decoded by the app":
		if in == "/etc/passwd" || in == "/proc/self/environ" {
			return false // below uploads/: /uploads//etc/passwd is harmless
		}
	}
	if h.name == "with extension" && (in == "b.txt\x00.png" || in == ".." || in == ".env" || in == "sub/.env.production" ||
		in == ".ssh/../.env" || in == ".git/../.env") {
		return false
	}
	if (in == ".." || in == "../") && (h.name == "filepath.Join" || h.name == "decoded by the app") {
		// Joined and cleaned, a climb that names nothing leaves no trace of
		// itself in the name: a known limit without a Base (TestFiles_Base).
		return false
	}
	return true
}

func TestCheckPath_Attacks(t *testing.T) {
	_, uploads := fileTree(t)
	for _, h := range append(fileHows, fileHow{"as given", func(_, in string) string { return in }}) {
		for _, in := range fileAttacks {
			if !attackIn(h, in) {
				continue
			}
			name := h.path(uploads, in)
			for _, src := range sources {
				if !carries(src, in) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%v/%q", h.name, src, in), func(t *testing.T) {
					r, rc := inputAt(t, src, in)
					f, err := Open(ctxOf(r), name)
					if f != nil {
						f.Close()
					}
					assert.Nil(t, f)
					assertBlocked(t, err, rc, src, in, "file")
				})
			}
		}
	}
}

func TestCheckPath_Benign(t *testing.T) {
	_, uploads := fileTree(t)
	for _, h := range fileHows[:2] {
		for _, in := range fileBenign {
			for _, src := range sources {
				r, rc := inputAt(t, src, in)
				b, err := ReadFile(ctxOf(r), h.path(uploads, in))
				require.NoError(t, err, "%s %v %q", h.name, src, in)
				assert.NotEmpty(t, b)
				assert.Empty(t, rc.all())
			}
		}
	}
}

// Base lets input choose any path below it, absolute or climbing, and
// nothing outside it; sensitive names stay blocked below it.
func TestFiles_Base(t *testing.T) {
	root, uploads := fileTree(t)
	f := Files{Base: uploads}
	cases := []struct {
		name, input string
		ok          bool
	}{
		{filepath.Join(uploads, "report.v2.pdf"), filepath.Join(uploads, "report.v2.pdf"), true},
		{uploads + "/sub/dir/../../b.txt", "../../b.txt", true},
		{filepath.Join(uploads, "sub/dir", "../../b.txt"), "../../b.txt", true},
		{filepath.Join(root, "secret.txt"), filepath.Join(root, "secret.txt"), false},
		{uploads + "/../secret.txt", "../secret.txt", false},
		{filepath.Join(uploads, ".git/config"), ".git/config", false},
	}
	for _, c := range cases {
		r, _ := inputAt(t, taint.Query, c.input)
		err := f.Check(ctxOf(r), c.name)
		if c.ok {
			assert.NoError(t, err, c.name)
			b, err := f.ReadFile(ctxOf(r), c.name)
			require.NoError(t, err)
			assert.NotEmpty(t, b)
		} else {
			assert.ErrorIs(t, err, ErrBlocked, c.name)
		}
	}
	// A bare climb, joined and cleaned, is seen only against a Base.
	r, _ := inputAt(t, taint.Query, "..")
	assert.ErrorIs(t, f.Check(ctxOf(r), filepath.Join(uploads, "..")), ErrBlocked)
	assert.NoError(t, CheckPath(ctxOf(r), filepath.Join(uploads, "..")))

	// Without Base, the same climb inside uploads/ leaves the directory the
	// application wrote, sub/dir/.
	r, _ = inputAt(t, taint.Query, "../../b.txt")
	assert.ErrorIs(t, CheckPath(ctxOf(r), uploads+"/sub/dir/../../b.txt"), ErrBlocked)
}

func TestCheckPath_ReportOnly(t *testing.T) {
	root, uploads := fileTree(t)
	r, rc := inputAt(t, taint.Query, "../secret.txt")
	r.ReportOnly = true
	b, err := ReadFile(ctxOf(r), uploads+"/../secret.txt")
	require.NoError(t, err)
	assert.Equal(t, "secret", string(b))
	assert.Len(t, rc.all(), 1)
	_ = root
}

func TestCheckPath_OpenFile(t *testing.T) {
	_, uploads := fileTree(t)
	r, _ := inputAt(t, taint.Query, "../owned.txt")
	f, err := OpenFile(ctxOf(r), uploads+"/../owned.txt", os.O_CREATE|os.O_WRONLY, 0o644)
	assert.Nil(t, f)
	assert.ErrorIs(t, err, ErrBlocked)
	_, statErr := os.Stat(filepath.Join(filepath.Dir(uploads), "owned.txt"))
	assert.True(t, os.IsNotExist(statErr), "the file was not created")

	r, _ = inputAt(t, taint.Query, "new.txt")
	f, err = OpenFile(ctxOf(r), filepath.Join(uploads, "new.txt"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestCheckPath_Rates(t *testing.T) {
	_, uploads := fileTree(t)
	attacks, blocked, benign, falseBlocks := 0, 0, 0, 0
	for _, h := range append(fileHows, fileHow{"as given", func(_, in string) string { return in }}) {
		for _, in := range fileAttacks {
			if !attackIn(h, in) {
				continue
			}
			r, _ := inputAt(t, taint.Query, in)
			attacks++
			if CheckPath(ctxOf(r), h.path(uploads, in)) != nil {
				blocked++
			}
		}
	}
	for _, h := range fileHows[:2] {
		for _, in := range fileBenign {
			r, _ := inputAt(t, taint.Query, in)
			benign++
			if CheckPath(ctxOf(r), h.path(uploads, in)) != nil {
				falseBlocks++
			}
		}
	}
	t.Logf("file: %d/%d attacks blocked, %d/%d benign opens blocked", blocked, attacks, falseBlocks, benign)
	assert.Equal(t, attacks, blocked)
	assert.Zero(t, falseBlocks)
}

// TestCheckPath_CaseMappedInput: as TestCheckSQL_CaseMappedInput, in a
// file name.
func TestCheckPath_CaseMappedInput(t *testing.T) {
	_, uploads := fileTree(t)
	for _, c := range []struct {
		in   string
		fold func(string) string
	}{
		{"../secret.txt", strings.ToUpper}, // ASCII, as before
		{"../\u017fecret.txt", strings.ToUpper},
		{".\u212aube/config", strings.ToLower},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		assertBlocked(t, CheckPath(ctxOf(r), uploads+"/"+c.fold(c.in)), rc, taint.Query, c.in, "file")
	}
	r, _ := inputAt(t, taint.Query, "résumé.pdf")
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/"+strings.ToUpper("résumé.pdf")))
}

// TestCheckPath_JoinedWithMore: a climb that filepath.Join cleaned away is
// told by what is left of the input where a segment of the name starts,
// not only at its end: the application may join more after it (found by a
// review: Join(uploads, input+".txt") and Join(uploads, input,
// "config") with "../secret" read the file beside uploads/).
func TestCheckPath_JoinedWithMore(t *testing.T) {
	root, uploads := fileTree(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "private"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "private", "config"), []byte("private"), 0o644))
	for _, c := range []struct {
		in   string
		name func(string) string
	}{
		{"../secret", func(in string) string { return filepath.Join(uploads, in+".txt") }},
		{"../private", func(in string) string { return filepath.Join(uploads, in, "config") }},
		{"sub/../../private", func(in string) string { return filepath.Join(uploads, in, "config") }},
		{"../PRIVATE", func(in string) string { return filepath.Join(uploads, strings.ToLower(in), "config") }},
	} {
		name := c.name(c.in)
		b, err := os.ReadFile(name)
		require.NoError(t, err, "the attack reads a file outside uploads/")
		require.NotEmpty(t, b)
		readBlockedFromEverySource(t, name, c.in)
	}
	// What stays below the input's directory is a name as before.
	for _, in := range fileBenign {
		r, _ := inputAt(t, taint.Query, in)
		assert.NoError(t, CheckPath(ctxOf(r), filepath.Join(uploads, in, "x.txt")), in)
	}
}

// TestCheckPath_TrimmedInput: an application that trims its input writes
// the input without its white space, which is looked for too, as the SQL,
// shell and host checks do (found by a review: " ../secret.txt", trimmed
// and concatenated, read the file beside uploads/).
func TestCheckPath_TrimmedInput(t *testing.T) {
	_, uploads := fileTree(t)
	for _, in := range []string{" ../secret.txt", "../secret.txt\n", "\t../.env ", " ../\u017fecret.txt"} {
		for _, how := range []func(string) string{
			func(in string) string { return uploads + "/" + strings.TrimSpace(in) },
			func(in string) string { return filepath.Join(uploads, strings.TrimSpace(in)) },
		} {
			name := how(in)
			for _, src := range sources {
				if !carries(src, in) {
					continue
				}
				r, rc := inputAt(t, src, in)
				_, err := ReadFile(ctxOf(r), name)
				assertBlocked(t, err, rc, src, in, "file")
			}
		}
	}
	r, _ := inputAt(t, taint.Query, " b.txt ")
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/b.txt"))
}

// TestCheckPath_TrimmedInputUnicode: applications trim more than ASCII's
// white space: Go's strings.TrimSpace and Python's strip take U+00A0,
// U+2028 and U+3000 too, JavaScript's trim U+FEFF, Java's String.trim
// control bytes. The input so trimmed is looked for as well (found by a
// review: "\u00a0../secret.txt", trimmed by strings.TrimSpace and joined,
// read the file beside uploads/).
func TestCheckPath_TrimmedInputUnicode(t *testing.T) {
	_, uploads := fileTree(t)
	trims := []func(string) string{
		strings.TrimSpace,
		func(s string) string { return strings.Trim(s, "\ufeff \t") },                               // JavaScript's trim, as far as these go
		func(s string) string { return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }) }, // Java's String.trim
	}
	for _, in := range []string{"\u00a0../secret.txt", "../secret.txt\u3000", "\u2028../.env", " \u00a0../secret.txt ", "\ufeff../secret.txt", "\x01../secret.txt"} {
		for _, trim := range trims {
			trimmed := trim(in)
			if !strings.HasPrefix(trimmed, "..") {
				continue // not a trim of this runtime's
			}
			for _, name := range []string{uploads + "/" + trimmed, filepath.Join(uploads, trimmed)} {
				for _, src := range sources {
					if !carries(src, in) {
						continue
					}
					r, rc := inputAt(t, src, in)
					_, err := ReadFile(ctxOf(r), name)
					assertBlocked(t, err, rc, src, in, "file")
				}
			}
		}
	}
	r, _ := inputAt(t, taint.Query, "\u00a0b.txt\u3000")
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/b.txt"))
}

// TestCheckPath_JoinedClimbBounded: the look for what is left of a climb
// that filepath.Join cleaned away compares it where a segment of the name
// starts, within the check's work. It looked for every occurrence, each
// compared in full: a name with a long run (another input, joined) and an
// input climbing into a slightly longer run took seconds per call, past
// the bound the other looks keep.
func TestCheckPath_JoinedClimbBounded(t *testing.T) {
	_, uploads := fileTree(t)
	const n = 300_000
	for _, tc := range []struct{ in, name string }{
		{"../" + strings.Repeat("a", n/2) + "b", strings.Repeat("a", n)},
		{"../" + strings.Repeat("a.", n/4) + "b", strings.Repeat("a.", n/2)},
		{"../" + strings.Repeat("a/", n/4) + "b", strings.Repeat("a/", n/2)},
	} {
		// Counted, not timed: the look compares where a segment starts,
		// and stops once the check's work is spent.
		pc := &pathCheck{clean: tc.name}
		found, ok := pc.startsSegment(tc.in[len("../"):])
		assert.False(t, found && !ok)
		assert.LessOrEqual(t, pc.fd.work, maxWork+len(tc.in), "%q…: work", tc.in[:8])
		r, _ := inputAt(t, taint.Query, tc.in)
		if err := CheckPath(ctxOf(r), filepath.Join(uploads, tc.name)); err != nil {
			assert.ErrorIs(t, err, ErrBlocked) // too much to check: blocked
		}
	}
	// Still found where a segment starts, with more joined after it.
	in := "../" + strings.Repeat("a", 1000) + "/x"
	r, _ := inputAt(t, taint.Query, in)
	assert.ErrorIs(t, CheckPath(ctxOf(r), filepath.Join(uploads, in, "index.html")), ErrBlocked)
}

// TestCheckPath_CleanedInput: an application that cleans its input
// (filepath.Clean, as linters advise for a name from input) writes a name
// shorter than the input, which the check took for an input not in the
// name and let through (found by a review: filepath.Clean("/etc//passwd")
// read /etc/passwd, ".ssh//id_rsa" cleaned read the key).
func TestCheckPath_CleanedInput(t *testing.T) {
	root, uploads := fileTree(t)
	t.Chdir(filepath.Join(uploads, "photos"))
	for _, in := range []string{
		"/etc//passwd", "/etc/./passwd", "/etc/passwd/", "/proc/self/./environ",
		root + "//secret.txt", root + "/./.env",
		".ssh//id_rsa", "./.ssh/id_rsa", ".ssh/./id_rsa/",
	} {
		name := filepath.Clean(in)
		require.Less(t, len(name), len(in))
		if !strings.HasPrefix(in, "/proc/") {
			_, err := os.ReadFile(name)
			require.NoError(t, err, "the attack reads %s", name)
		}
		readBlockedFromEverySource(t, name, in)
	}
	// Names cleaned that stay in the directory are names as before.
	for _, in := range []string{"sub//dir/file.txt", "./b.txt", "sub/./dir/", "my file (1).txt/"} {
		r, _ := inputAt(t, taint.Query, in)
		assert.NoError(t, CheckPath(ctxOf(r), filepath.Clean(in)), in)
		assert.NoError(t, CheckPath(ctxOf(r), filepath.Join(uploads, in)), in)
	}
}

// TestCheckPath_DotBeforeInput: an application that writes a hidden
// file's dot before the input (dir + "/." + input) makes ".." of the
// dot and an input that starts with "./": "./secret.txt" in
// "uploads/." + input reads the secret beside uploads/, though the input
// alone climbs nothing. Where the application's dot is not there, the
// same input is a name.
func TestCheckPath_DotBeforeInput(t *testing.T) {
	_, uploads := fileTree(t)
	for _, in := range []string{"./secret.txt", "./uploads/../secret.txt"} {
		name := uploads + "/." + in
		_, err := os.ReadFile(name)
		require.NoError(t, err, "the attack reads %s", name)
		readBlockedFromEverySource(t, name, in)
		r, _ := inputAt(t, taint.Query, in)
		assert.ErrorIs(t, Files{Base: uploads}.Check(ctxOf(r), name), ErrBlocked, in)
	}
	r, _ := inputAt(t, taint.Query, "./b.txt")
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/./b.txt"))
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/x./b.txt"))
	r, _ = inputAt(t, taint.Query, "./uploads/b.txt")
	assert.NoError(t, CheckPath(ctxOf(r), uploads+"/."+"./uploads/b.txt"), "a climb that comes back")
}

// TestCheckPath_DotBeforeInputJoined: filepath.Join(dir, "."+input), the
// hidden file's dot joined rather than written before the input, cleans
// the climb of "./secret.txt" away: the name is the secret beside dir,
// which the input is not in as written. With a Base, a name that leaves
// it holding what is left of the input after the climb is blocked, as
// for an input that climbs itself; names in Base pass.
func TestCheckPath_DotBeforeInputJoined(t *testing.T) {
	_, uploads := fileTree(t)
	f := Files{Base: uploads}
	for _, in := range []string{"./secret.txt", "./uploads/../secret.txt", ".//secret.txt"} {
		name := filepath.Join(uploads, "."+in)
		_, err := os.ReadFile(name)
		require.NoError(t, err, "the attack reads %s", name)
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			_, err := f.ReadFile(ctxOf(r), name)
			assertBlocked(t, err, rc, src, in, "file")
		}
	}
	for _, in := range []string{"./b.txt", "./sub/dir/file.txt"} {
		r, rc := inputAt(t, taint.Query, in)
		assert.NoError(t, f.Check(ctxOf(r), filepath.Join(uploads, in)), in)
		assert.NoError(t, f.Check(ctxOf(r), filepath.Join(uploads, "sub", "."+in)), "climbs, within Base: %s", in)
		assert.Empty(t, rc.all(), in)
	}
	r, _ := inputAt(t, taint.Query, "./uploads/b.txt")
	assert.NoError(t, f.Check(ctxOf(r), filepath.Join(uploads, "."+"./uploads/b.txt")), "a climb that comes back")
}

// readBlockedFromEverySource asserts that ReadFile of name is blocked,
// and reported, when in came from each source.
func readBlockedFromEverySource(t *testing.T, name, in string) {
	t.Helper()
	for _, src := range sources {
		r, rc := inputAt(t, src, in)
		_, err := ReadFile(ctxOf(r), name)
		assertBlocked(t, err, rc, src, in, "file")
	}
}
