package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		raw  string
		want any
		err  string
	}{
		{Bool, " TRUE ", true, ""},
		{Bool, "yes", nil, `want true or false, not "yes"`},
		{Size, "65536", int64(65536), ""},
		{Size, "-1", nil, `want a whole number, 0 or more, not "-1"`},
		{Text, "", "", ""},
		{Path, " ", nil, "needs a value"},
		{Duration, "0", time.Duration(0), ""},
		{Duration, "1m30s", 90 * time.Second, ""},
		{Duration, "250ms", 250 * time.Millisecond, ""},
		{Duration, "30", nil, `want a duration such as 30s, 1m or 250ms, 0 or more, not "30"`},
		{Duration, "-1s", nil, `want a duration such as 30s, 1m or 250ms, 0 or more, not "-1s"`},
		{Address, ":8080", ":8080", ""},
		{Address, "127.0.0.1:9090", "127.0.0.1:9090", ""},
		{Address, "[::1]:0", "[::1]:0", ""},
		{Address, "off", "off", ""},
		{Address, "8080", nil, `want host:port (:8080, 127.0.0.1:9090, [::1]:9090) or off, not "8080"`},
		{Address, ":99999", nil, `want host:port (:8080, 127.0.0.1:9090, [::1]:9090) or off, not ":99999"`},
		{Fraction, "0.25", 0.25, ""},
		{Fraction, " 1 ", 1.0, ""},
		{Fraction, "0", 0.0, ""},
		{Fraction, "1.5", nil, `want a number from 0 to 1 (0.1 is one in ten), not "1.5"`},
		{Fraction, "NaN", nil, `want a number from 0 to 1 (0.1 is one in ten), not "NaN"`},
		{Fraction, "10%", nil, `want a number from 0 to 1 (0.1 is one in ten), not "10%"`},
		{URL, "ftp://x", nil, `want an absolute http:// or https:// URL, not "ftp://x"`},
		{URL, "127.0.0.1:3000", nil, `want an absolute http:// or https:// URL, not "127.0.0.1:3000"`},
		{URL, "http://u:secret@x", nil, `want a URL without user, query or fragment, not "http://u:xxxxx@x"`}, // not the password
		{URL, "http://u@x", nil, `want a URL without user, query or fragment, not "http://u@x"`},
		// Nor when it is refused for its scheme, host or syntax.
		{URL, "ftp://u:secret@x", nil, `want an absolute http:// or https:// URL, not "ftp://u:xxxxx@x"`},
		{URL, "http://u:secret@", nil, `want an absolute http:// or https:// URL, not "http://u:xxxxx@"`},
		{URL, "http://u:secret@x:8o/p@q", nil, `want an absolute http:// or https:// URL, not "http://u:xxxxx@x:8o/p@q"`},
		{URL, "u:secret@x:80", nil, `want an absolute http:// or https:// URL, not "u:xxxxx@x:80"`},
		{URL, "ftp://x/a:b@c", nil, `want an absolute http:// or https:// URL, not "ftp://x/a:b@c"`},
		// At most failure.MaxEcho bytes of a value: a licence key set as
		// another property is not logged whole.
		{Bool, "cg1." + strings.Repeat("A", 60) + ".SIGNATURE", nil, `want true or false, not "cg1.` + strings.Repeat("A", 60) + `…"`},
		{URL, "http://x:99999", nil, `want a port from 1 to 65535, not "http://x:99999"`},
		{URL, "http://x:0", nil, `want a port from 1 to 65535, not "http://x:0"`},
	} {
		v, err := Parse(tc.kind, tc.raw)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, "%d %q", tc.kind, tc.raw)
			continue
		}
		require.NoError(t, err, "%d %q", tc.kind, tc.raw)
		assert.Equal(t, tc.want, v, "%d %q", tc.kind, tc.raw)
	}
	u, err := Parse(URL, "https://app.internal:8443/base")
	require.NoError(t, err)
	assert.Equal(t, "https://app.internal:8443/base", u.(interface{ String() string }).String())
}

var table = []Property{
	{"enabled", Bool},
	{"contracts-dir", Path},
	{"serve.listen", Address},
	{"serve.read-timeout", Duration},
}

func TestRead_Scope(t *testing.T) {
	src := []byte("contractguard:\n  enabled: maybe\n  contracts-dir: c\n  serve:\n    listen: :1\n    read-timeout: 2s\n")
	// Unscoped: every property, every problem.
	v, problems, err := Read("/etc/cg/f.yaml", src, table, "")
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.EqualError(t, problems[0], `/etc/cg/f.yaml:2: contractguard.enabled: want true or false, not "maybe"`)
	assert.Equal(t, Values{"contracts-dir": filepath.Join("/etc/cg", "c"), "serve.listen": ":1", "serve.read-timeout": 2 * time.Second}, v)

	// Scoped to serve: the rest is another table's, unread and unchecked.
	v, problems, err = Read("/etc/cg/f.yaml", src, []Property{{"serve.listen", Address}, {"serve.read-timeout", Duration}}, "serve")
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, Values{"serve.listen": ":1", "serve.read-timeout": 2 * time.Second}, v)

	// A property of the scope written flat (serve.listen:), which the
	// unscoped read takes, is the scope's too: it was skipped as another
	// table's, and serve ran on the default address with no word.
	src = []byte("contractguard:\n  enabled: maybe\n  serve.listen: :1\n  serve:\n    read-timeout: 2s\n  serveX: 1\n")
	v, problems, err = Read("/etc/cg/f.yaml", src, []Property{{"serve.listen", Address}, {"serve.read-timeout", Duration}}, "serve")
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, Values{"serve.listen": ":1", "serve.read-timeout": 2 * time.Second}, v)
}

func TestEnv(t *testing.T) {
	t.Setenv("CONTRACTGUARD_SERVE_LISTEN", ":9")
	t.Setenv("CONTRACTGUARD_SERVE_READ_TIMEOUT", "later")
	os.Unsetenv("CONTRACTGUARD_ENABLED")
	v, problems := Env(table)
	assert.Equal(t, Values{"serve.listen": ":9"}, v)
	require.Len(t, problems, 1)
	assert.EqualError(t, problems[0], `environment CONTRACTGUARD_SERVE_READ_TIMEOUT: contractguard.serve.read-timeout: want a duration such as 30s, 1m or 250ms, 0 or more, not "later"`)
}

func TestServeTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Serve {
		assert.False(t, seen[p.Name], "%s twice", p.Name)
		seen[p.Name] = true
		assert.Regexp(t, `^serve\.[a-z-]+$`, p.Name)
	}
}

// TestRead_ErrorsStayOneLine: a key or a placeholder name with a line
// break in it (YAML's quoted strings allow one) is quoted in the message.
func TestRead_ErrorsStayOneLine(t *testing.T) {
	tbl := []Property{{"license-key", Text}}
	_, problems, err := Read("/etc/cg/f.yaml", []byte("contractguard:\n  \"a\\nb\": 1\n  license-key: \"${CG_TEST\\nUNSET}\"\n"), tbl, "")
	require.NoError(t, err)
	require.Len(t, problems, 2)
	assert.EqualError(t, problems[0], `/etc/cg/f.yaml:2: "contractguard.a\nb": unknown property (known: license-key)`)
	assert.EqualError(t, problems[1], `/etc/cg/f.yaml:3: contractguard.license-key: placeholder ${"CG_TEST\nUNSET"}: the environment variable "CG_TEST\nUNSET" is not set and there is no default (${"CG_TEST\nUNSET":default})`)
}

// TestReadFile_FileNameStaysOneLine: a file whose name holds a line break
// is quoted in every message, as a contracts file's is; the message was
// two lines, "dir\nname/cg.yaml:2: …" and "open dir\nname/…".
func TestReadFile_FileNameStaysOneLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a\nb")
	require.NoError(t, os.Mkdir(dir, 0o755))
	file := filepath.Join(dir, "cg.yaml")
	require.NoError(t, os.WriteFile(file, []byte("contractguard:\n  max-depth: deep\n  serve:\n    listen: :1\n"), 0o644))
	tbl := []Property{{"max-depth", Depth}, {"serve.listen", Address}}
	shown := strconv.Quote(file)
	_, where, problems, err := ReadFileWhere(file, tbl, "")
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.EqualError(t, problems[0], shown+`:2: contractguard.max-depth: want a whole number, 0 or more, not "deep"`)
	assert.Equal(t, map[string]string{"serve.listen": shown + ":4"}, where)

	_, _, err = ReadFile(filepath.Join(dir, "none.yaml"), tbl, "")
	missing := strconv.Quote(filepath.Join(dir, "none.yaml"))
	assert.EqualError(t, err, missing+": open "+missing+": no such file or directory")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	for _, src := range []string{"contractguard: [\n", "other: 1\n", "- 1\n"} {
		require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
		_, _, err := ReadFile(file, tbl, "")
		require.Error(t, err, "%q", src)
		assert.True(t, strings.HasPrefix(err.Error(), shown), "%q: %v", src, err)
		assert.NotContains(t, err.Error(), "\n", "%q", src)
	}
}

// TestRead_ByteOrderMark: a file that starts with a byte order mark (as
// Windows editors save UTF-8) is read; its first key was "\ufeffcontractguard",
// another component's, and every property was silently left out.
func TestRead_ByteOrderMark(t *testing.T) {
	v, problems, err := Read("/etc/cg/f.yaml", []byte("\ufeffcontractguard:\n  enabled: false\n  contracts-dir: c\n"), table, "")
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, Values{"enabled": false, "contracts-dir": filepath.Join("/etc/cg", "c")}, v)
}

// TestRead_AnchoredKeys: a key with an anchor is that key; the tree under
// "&cg contractguard:" was read as another component's key "&" and left
// out without an error.
func TestRead_AnchoredKeys(t *testing.T) {
	v, problems, err := Read("/etc/cg/f.yaml", []byte("&cg contractguard:\n  &e enabled: false\n"), table, "")
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, Values{"enabled": false}, v)
}

// TestRead_PropertySetTwice: a property set twice, nested and dotted or in
// two documents, is an error at the second; the last one silently won,
// where YAML's own duplicate keys are refused.
func TestRead_PropertySetTwice(t *testing.T) {
	for _, src := range []string{
		"contractguard:\n  serve:\n    listen: :1\n  serve.listen: :2\n",
		"contractguard:\n  serve.listen: :1\n---\ncontractguard:\n  serve: {listen: :2}\n",
	} {
		_, problems, err := Read("/etc/cg/f.yaml", []byte(src), table, "")
		require.NoError(t, err)
		require.Len(t, problems, 1, src)
		assert.Regexp(t, `^/etc/cg/f.yaml:[45]: contractguard.serve.listen: set twice, first at line [23]$`, problems[0].Error(), src)
	}
}

// TestRead_NoTree: a file without a contractguard: key (empty, or the key
// misspelt) is an error; every property was silently left at its default,
// require-contract and the contracts folder with them.
func TestRead_NoTree(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "contractgaurd:\n  enabled: false\n", "CONTRACTGUARD:\n  enabled: false\n"} {
		_, _, err := Read("/etc/cg/f.yaml", []byte(src), table, "")
		assert.EqualError(t, err, "/etc/cg/f.yaml: no contractguard: key; a configuration file holds its properties under contractguard:", src)
	}
}

// TestRead_DirectiveErrorsNameNoContracts: a directive the reader refuses
// is an error at its line that speaks of the file it is in; a
// configuration file's said "contracts files are read as YAML 1.2".
func TestRead_DirectiveErrorsNameNoContracts(t *testing.T) {
	for src, want := range map[string]string{
		"%YAML 1.1\n---\ncontractguard:\n  enabled: true\n":                     "/etc/cg/f.yaml:1: %YAML 1.1: this file is read as YAML 1.2 (in which yes is a string, not true); declare %YAML 1.2, or no version",
		"%TAG !e! tag:example.com,2000:\n---\ncontractguard: {enabled: true}\n": "/etc/cg/f.yaml:1: %TAG directives are not supported",
		"%FOO bar\n---\ncontractguard: {enabled: true}\n":                       "/etc/cg/f.yaml:1: %FOO: unknown directive (only %YAML 1.2 may be declared)",
	} {
		_, _, err := Read("/etc/cg/f.yaml", []byte(src), table, "")
		assert.EqualError(t, err, want, src)
	}
}

// TestRead_ByteOrderMarkInside: a byte order mark that starts a later
// document (files joined with --- between them, each saved with one)
// made its contractguard: tree another component's key, and its
// properties (require-contract: true here) were left out without a word.
func TestRead_ByteOrderMarkInside(t *testing.T) {
	for _, src := range []string{
		"contractguard:\n  enabled: true\n---\n\ufeffcontractguard:\n  enabled: false\n",
		"contractguard:\n  enabled: true\n---\n\ufeffcontractguard.enabled: false\n",
	} {
		_, problems, err := Read("/etc/cg/f.yaml", []byte(src), table, "")
		require.NoError(t, err, "%q", src)
		require.Len(t, problems, 1, "%q", src)
		assert.EqualError(t, problems[0], "/etc/cg/f.yaml:4: a byte order mark (U+FEFF) before the key contractguard: only the file's first byte may be one; remove it", "%q", src)
	}
}
