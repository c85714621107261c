package sink

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/bits"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// A command is built by the application from the input (how): the
// returned argv.
type cmdCase struct {
	how   string
	argv  func(in string) []string
	input string
}

func shC(shell, tmpl string) func(string) []string {
	return func(in string) []string { return []string{shell, "-c", fmt.Sprintf(tmpl, in)} }
}

var shellAttacks = []cmdCase{
	// One byte is a pattern the shell expands (found by the end-to-end test).
	{"sh -c rm", shC("sh", "rm -f uploads/%s"), "*"},
	{"sh -c rm", shC("sh", "rm -f uploads/%s"), "?"},
	{"sh -c ls", shC("sh", "ls %s"), "~"},
	{"sh -c echo", shC("sh", "echo %s"), "; id"},
	{"sh -c echo", shC("sh", "echo %s"), "x && id"},
	{"sh -c echo", shC("sh", "echo %s"), "x || id"},
	{"sh -c echo", shC("sh", "echo %s"), "x | id"},
	{"sh -c echo", shC("sh", "echo %s"), "$(id)"},
	{"sh -c echo", shC("sh", "echo %s"), "`id`"},
	{"sh -c echo", shC("sh", "echo %s"), "x\nid"},
	{"sh -c echo", shC("sh", "echo %s"), "x > /tmp/owned"},
	{"sh -c echo", shC("sh", "echo %s"), "$HOME"},
	{"sh -c echo", shC("sh", "echo %s"), "${PATH}"},
	{"sh -c echo", shC("sh", "echo %s"), "/etc/*"},
	{"sh -c echo", shC("sh", "echo %s"), "a b"},
	{"sh -c echo", shC("sh", "echo %s"), "x & sleep 10"},
	{"bash -c ls", shC("bash", "ls -l %s"), "--help; id"},
	{"bash -c ls", shC("bash", "ls -l %s"), "-la"},
	{"bash -c 'quoted'", shC("bash", "echo '%s'"), "x'; id; echo '"},
	{"bash -c 'quoted'", shC("bash", "echo '%s'"), "'$(id)'"},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), "$(id)"},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), "`id`"},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), `x"; id; echo "`},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), "$HOME"},
	{`sh -c "$(cat x)"`, shC("sh", `echo "$(cat %s)"`), "x; id"},
	{"sh -c program", shC("sh", "%s --version"), "id"},
	{"sh -c program", shC("sh", "/usr/bin/%s --version"), "id"},
	{"sh -ec", func(in string) []string { return []string{"sh", "-ec", "echo " + in} }, "x;id"},
	{"env sh -c", func(in string) []string { return []string{"env", "LANG=C", "sh", "-c", "echo " + in} }, "x;id"},
	{"zsh -c", shC("zsh", "print %s"), "$(id)"},
	{"dash -c #", shC("dash", "echo %s"), "x #; rm -rf /"},
	{"git clone", func(in string) []string { return []string{"git", "clone", in, "/tmp/repo"} }, "--upload-pack=touch /tmp/pwned"},
	{"git ls-remote", func(in string) []string { return []string{"git", "ls-remote", in} }, "--upload-pack=id"},
	{"ssh", func(in string) []string { return []string{"ssh", in, "uptime"} }, "-oProxyCommand=id"},
	{"curl", func(in string) []string { return []string{"curl", in} }, "-o/etc/passwd"},
	{"sudo --", func(in string) []string { return []string{"sudo", "--", "git", "clone", in} }, "--upload-pack=id"},
	{"tar", func(in string) []string { return []string{"tar", "-cf", "out.tar", in} }, "--checkpoint-action=exec=id"},
	{"program", func(in string) []string { return []string{in, "--version"} }, "/bin/sh"},
	{"program", func(in string) []string { return []string{in, "-c", "id"} }, "sh"},
	{"program path", func(in string) []string { return []string{"/opt/tools/" + in} }, "../../bin/sh"},
	{"program dir", func(in string) []string { return []string{filepath.Join(in, "convert"), "a.png"} }, "/tmp/uploads"},
	{"cmd /c", func(in string) []string { return []string{"cmd.exe", "/c", "type " + in} }, "x & whoami"},
	{"cmd /c", func(in string) []string { return []string{"cmd", "/c", "type " + in} }, "x | whoami"},
	{"cmd /c", func(in string) []string { return []string{"cmd", "/C", `type "` + in + `"`} }, `x" & whoami & "`},
	{"cmd /c", func(in string) []string { return []string{"cmd", "/c", `echo "` + in + `"`} }, "%PATH%"},
	{"powershell", func(in string) []string { return []string{"powershell", "-Command", "Get-Item " + in} }, "x; whoami"},
	{"powershell", func(in string) []string { return []string{"pwsh", "-c", "Get-Item '" + in + "'"} }, "x'; whoami; '"},
	{"powershell", func(in string) []string { return []string{"pwsh", "-c", `Get-Item "` + in + `"`} }, "$(whoami)"},
	{"powershell", func(in string) []string { return []string{"pwsh", "-c", "Get-Item '" + in + "'"} }, "x’; whoami; ’"},
	{"powershell -enc", func(in string) []string {
		return []string{"powershell", "-EncodedCommand", encodePS("Get-Item " + in)}
	}, "x; whoami"},
}

func encodePS(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

var shellBenign = []cmdCase{
	{"sh -c echo", shC("sh", "echo %s"), "hello"},
	{"sh -c echo", shC("sh", "echo %s"), "report.v2.pdf"},
	{"sh -c echo", shC("sh", "echo %s"), "user@example.com"},
	{"sh -c echo", shC("sh", "echo %s"), "a-b_c.d:e/f,g+h%i=j"},
	{"sh -c 'quoted'", shC("sh", "echo '%s'"), "hello world; $(not run) `nor this`"},
	{"sh -c 'quoted'", shC("sh", "echo '%s'"), "my file.txt"},
	{"sh -c 'quoted'", shC("sh", "echo 'uploads/%s'"), "*"},
	{"argv", func(in string) []string { return []string{"echo", "uploads/" + in} }, "*"},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), "it's a fine day!"},
	{`sh -c "quoted"`, shC("sh", `echo "%s"`), "semi; colons & pipes | are text"},
	{"sh -c arg", shC("sh", "printf '%%s\\n' %s"), "plain"},
	{"sh -c #", shC("sh", "echo ok # note: %s"), "anything; here"},
	{"argv", func(in string) []string { return []string{"echo", in} }, "a b; c $(d) `e`"},
	{"argv", func(in string) []string { return []string{"echo", "--", in} }, "-n"},
	{"argv", func(in string) []string { return []string{"echo", "-n", in} }, "-5"},
	{"argv", func(in string) []string { return []string{"echo", "--label=" + in} }, "--x"},
	{"argv", func(in string) []string { return []string{"/usr/bin/echo", in} }, "bin"},
	{"argv url", func(in string) []string { return []string{"echo", "clone", in, "/tmp/repo"} }, "https://example.com/x/y.git"},
}

func TestCheckCmd_Attacks(t *testing.T) {
	for _, c := range shellAttacks {
		argv := c.argv(c.input)
		for _, src := range sources {
			if !carries(src, c.input) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v/%s", c.how, src, c.input), func(t *testing.T) {
				r, rc := inputAt(t, src, c.input)
				cmd, err := Command(ctxOf(r), argv[0], argv[1:]...)
				assert.Nil(t, cmd)
				assertBlocked(t, err, rc, src, c.input, "shell")
			})
		}
	}
}

// Benign commands are not only let through: they run, through the real
// shell, and print what they should.
func TestCheckCmd_Benign(t *testing.T) {
	for _, c := range shellBenign {
		argv := c.argv(c.input)
		for _, src := range sources {
			if !carries(src, c.input) {
				continue
			}
			r, rc := inputAt(t, src, c.input)
			cmd, err := Command(ctxOf(r), argv[0], argv[1:]...)
			require.NoError(t, err, "%s %v %q", c.how, src, argv)
			assert.Empty(t, rc.all())
			if src == taint.Query {
				out, err := cmd.Output()
				require.NoError(t, err, "%q", argv)
				assert.NotEmpty(t, out)
			}
		}
	}
}

// The blocked command never runs: its side effect does not happen.
func TestCheckCmd_NeverRuns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	in := "x; touch " + marker
	r, _ := inputAt(t, taint.Query, in)
	cmd, err := Command(ctxOf(r), "sh", "-c", "echo "+in)
	require.ErrorIs(t, err, ErrBlocked)
	require.Nil(t, cmd)
	_, statErr := os.Stat(marker)
	assert.True(t, os.IsNotExist(statErr))

	// The same command without the request runs, and the marker appears:
	// the check, not the command, stopped it.
	cmd, err = Command(context.Background(), "sh", "-c", "echo "+in)
	require.NoError(t, err)
	require.NoError(t, cmd.Run())
	_, statErr = os.Stat(marker)
	assert.NoError(t, statErr)
}

func TestCheckCmd_Env(t *testing.T) {
	r, rc := inputAt(t, taint.Query, "/tmp/evil.so")
	cmd := exec.Command("echo", "hi")
	cmd.Env = []string{"HOME=/tmp", "LD_PRELOAD=/tmp/evil.so"}
	assertBlocked(t, CheckCmd(ctxOf(r), cmd), rc, taint.Query, "/tmp/evil.so", "shell")

	r, _ = inputAt(t, taint.Query, "en_GB.UTF-8")
	cmd.Env = []string{"LANG=en_GB.UTF-8"}
	assert.NoError(t, CheckCmd(ctxOf(r), cmd))
}

func TestCommands_AllowPrograms(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "echo")
	_, err := Command(ctxOf(r), "echo", "hi")
	assert.ErrorIs(t, err, ErrBlocked, "the input chose the program")
	cmd, err := Commands{AllowPrograms: []string{"echo", "printf"}}.Command(ctxOf(r), "echo", "hi")
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(out))
	_, err = Commands{AllowPrograms: []string{"printf"}}.Command(ctxOf(r), "sh", "-c", "echo x")
	assert.ErrorIs(t, err, ErrBlocked, "the script's program is the input")
	_, err = Commands{AllowPrograms: []string{"echo"}}.Command(ctxOf(r), "sh", "-c", "echo x")
	assert.NoError(t, err)
	_, err = Commands{AllowPrograms: []string{"echo"}}.Command(ctxOf(r), "/tmp/x/echo")
	assert.ErrorIs(t, err, ErrBlocked, "a base name allows the program by name, not at any path")
}

func TestCheckCmd_ReportOnly(t *testing.T) {
	r, rc := inputAt(t, taint.Query, "; true")
	r.ReportOnly = true
	cmd, err := Command(ctxOf(r), "sh", "-c", "echo x; true")
	require.NoError(t, err)
	require.NoError(t, cmd.Run())
	assert.Len(t, rc.all(), 1)
}

func TestCheckCmd_Rates(t *testing.T) {
	blocked, falseBlocks := 0, 0
	for _, c := range shellAttacks {
		r, _ := inputAt(t, taint.Query, c.input)
		argv := c.argv(c.input)
		if _, err := Command(ctxOf(r), argv[0], argv[1:]...); err != nil {
			blocked++
		}
	}
	for _, c := range shellBenign {
		r, _ := inputAt(t, taint.Query, c.input)
		argv := c.argv(c.input)
		if _, err := Command(ctxOf(r), argv[0], argv[1:]...); err != nil {
			falseBlocks++
		}
	}
	t.Logf("shell: %d/%d attacks blocked, %d/%d benign commands blocked", blocked, len(shellAttacks), falseBlocks, len(shellBenign))
	// The larger corpus of commands a backend runs (TestCheckCmd_BenignCorpus).
	corpus, corpusBlocks, located := 0, 0, 0
	for _, tm := range benignTmpls {
		for _, set := range tm.ins {
			for _, in := range set {
				corpus++
				argv := tm.argv(in)
				if CheckCmd(ctxOf(mustInput(t, in)), cmdOf(argv...)) != nil {
					corpusBlocks++
				}
				for _, src := range sources {
					if carries(src, in) {
						located++
					}
				}
			}
		}
	}
	t.Logf("shell: %d/%d commands of the benign corpus blocked (%d with every location)", corpusBlocks, corpus, located)
	assert.Equal(t, len(shellAttacks), blocked)
	assert.Zero(t, falseBlocks)
	assert.Zero(t, corpusBlocks)
}

func mustInput(t *testing.T, in string) *taint.Request {
	r, _ := inputAt(t, taint.Query, in)
	return r
}

func TestLexPOSIX(t *testing.T) {
	script := `A=1 sudo ls -l 'a b' "c $d" e\ f $(g h) ` + "`i`" + ` # j`
	sc := lexPOSIX(script)
	var words []string
	for _, w := range sc.words {
		tag := ""
		if w.cmd {
			tag = "cmd:"
		}
		words = append(words, tag+script[w.start:w.end])
	}
	assert.Equal(t, []string{"cmd:A=1", "cmd:sudo", "cmd:ls", "-l", "'a b'", `"c $d"`, `e\ f`, "$(g h)", "cmd:g", "h", "`i`", "cmd:i"}, words)
	lits := func(s string) string {
		var b strings.Builder
		for i := range s {
			if sc.cls[strings.Index(script, s)+i] == shLit {
				b.WriteByte(s[i])
			} else {
				b.WriteByte('_')
			}
		}
		return b.String()
	}
	assert.Equal(t, "_a b_", lits("'a b'"))
	assert.Equal(t, `_c ___`, lits(`"c $d"`))
	assert.Equal(t, `e_ f`, lits(`e\ f`))
	assert.Equal(t, shComment, sc.cls[len(script)-1])
}

// TestCommand_ProtocolWildcardHeader: the "*" of If-Match or If-None-Match
// is the protocol's wildcard, not input: a script with a * of its own runs
// when a client sends a conditional request; the same "*" in any other
// header still counts (shellAttacks, from every source).
func TestCommand_ProtocolWildcardHeader(t *testing.T) {
	script := []string{"sh", "-c", "rm -f /tmp/cache/* ; ls ~/x ; echo a?b"}
	for _, name := range []string{"If-Match", "If-None-Match", "if-none-match", "Accept-Charset", "Accept-Encoding", "accept-language"} {
		r := &taint.Request{Method: "PUT", Route: "/things/:id", Header: http.Header{name: {"*"}}}
		assert.NoError(t, CheckCmd(ctxOf(r), exec.Command(script[0], script[1:]...)), name)
	}
	r := &taint.Request{Method: "PUT", Route: "/things/:id", Header: http.Header{"X-Pattern": {"*"}}}
	assert.ErrorIs(t, CheckCmd(ctxOf(r), exec.Command(script[0], script[1:]...)), ErrBlocked, "X-Pattern: * is input")
}

// TestCheckCmd_CaseMappedInput: as TestCheckSQL_CaseMappedInput, in a
// shell script and as an option.
func TestCheckCmd_CaseMappedInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		fold func(string) string
		argv func(string) []string
	}{
		{"x; id", strings.ToUpper, shC("sh", "echo %s")}, // ASCII, as before
		{"\u0131; id", strings.ToUpper, shC("sh", "echo %s")},
		{"x; \u017fh", strings.ToUpper, shC("sh", "echo %s")},
		{"x$(\u212aill 1)", strings.ToLower, shC("bash", "echo '' %s")},
		{"-\u212a", strings.ToLower, func(in string) []string { return []string{"tar", in, "f"} }},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		err := CheckCmd(ctxOf(r), cmdOf(c.argv(c.fold(c.in))...))
		assertBlocked(t, err, rc, taint.Query, c.in, "shell")
	}
	r, _ := inputAt(t, taint.Query, "Zoë \u0131stanbul")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "printf %s '"+strings.ToUpper("Zoë \u0131stanbul")+"'")))
}

// TestCheckCmd_HereDocument: a here-document's body is text with
// expansions, where a quote or a # is no syntax, so input in it is judged
// as the shell reads it there (found by a review: `$(…)` on a body line
// after an apostrophe, or on a line starting with #, was read as inside
// single quotes or a comment and let through; the shell ran it). The
// attack runs when the check is skipped, and not when it is made.
func TestCheckCmd_HereDocument(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	in := "$(touch " + marker + ")"
	for _, tmpl := range []string{
		"cat <<EOF\nHi, it's %s here\nEOF",
		"cat > /dev/null <<EOF\n# generated for %s\nEOF",
		"cat <<-EOF\n\tDon't %s\n\tEOF\necho done",
		"cat <<EOF; echo 'x'\nit's %s\nEOF",
		"cat <<A <<B\nA\nit's %s\nB",
	} {
		script := fmt.Sprintf(tmpl, in)
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			cmd, err := Command(ctxOf(r), "sh", "-c", script)
			assert.Nil(t, cmd)
			assertBlocked(t, err, rc, src, in, "shell")
		}
		cmd, err := Command(context.Background(), "sh", "-c", script)
		require.NoError(t, err)
		require.NoError(t, cmd.Run(), script)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "the shell ran the input in %q", script)
		require.NoError(t, os.Remove(marker))
	}
	// The input is the delimiter: what follows it is code.
	r, _ := inputAt(t, taint.Query, "EOF")
	_, err := Command(ctxOf(r), "sh", "-c", "cat <<EOF\nEOF\nid\nEOF")
	assert.ErrorIs(t, err, ErrBlocked)
	// A quoted delimiter: the body is text, expansions and all (the
	// script's other reading, as code, still sees syntax there).
	for _, tmpl := range []string{"cat <<'EOF'\n%s\nEOF", "cat <<\"EOF\"\n%s\nEOF", "cat <<\\EOF\n%s\nEOF", "cat <<E'O'F\n%s\nEOF"} {
		const body = "it's $(id) `id` $HOME"
		script := fmt.Sprintf(tmpl, body)
		sc := lexPOSIXAs(script, shOpts{hereDocs: true})
		s := strings.Index(script, body)
		for i := s; i < s+len(body); i++ {
			require.Equal(t, shLit, sc.cls[i], "%q at %d", script, i)
		}
		assert.Equal(t, shOther, sc.cls[len(script)-1], "the delimiter line")
		out, err := exec.Command("sh", "-c", script).Output()
		require.NoError(t, err)
		assert.Equal(t, body+"\n", string(out))
	}
	// A here-string (<<<) is no here-document: the next line is code.
	script := "cat <<< 'a b'\necho x"
	sc := lexPOSIXAs(script, shOpts{hereDocs: true})
	w := sc.words[sc.word[strings.Index(script, "echo")]]
	assert.True(t, w.cmd, "echo is the next command")
}

// TestLexPOSIX_HereDocumentsLinear: the here-documents' reading of a
// script is linear in its length. Each body's delimiter line was looked
// for through the rest of the script, again for each body announced
// inside another ("$(<<B" on every line, none ended: 30 s for 512 kB), and
// the innermost body left was looked for down every $( a body had left
// open ("$(<<B" then B on every pair of lines: seconds for 2 MB). Input in
// the script makes both.
func TestLexPOSIX_HereDocumentsLinear(t *testing.T) {
	for _, tc := range []struct {
		unit string
		size int
	}{{"$(<<B\n", 512 << 10}, {"$(<<B\nB\n", 2 << 20}, {"$(<<B1\n$(<<B2\n$(<<B3\n", 512 << 10}} {
		script := "cat <<EOF\n" + strings.Repeat(tc.unit, tc.size/len(tc.unit)) + "EOF"
		sc := lexPOSIXAs(script, shOpts{hereDocs: true})
		// Counted, not timed: each line indexed once, each body's
		// delimiter found by a search, each frame left once.
		bodies := strings.Count(script, "<<")
		assert.LessOrEqual(t, sc.steps, len(script)+bodies*(bits.Len(uint(len(script)))+2), "%q × %d", tc.unit, tc.size/len(tc.unit))
	}
	// The bodies still end where their delimiters are.
	script := "cat <<A\n$(cat <<B\nit's\nB\n)\nA\necho x"
	sc := lexPOSIXAs(script, shOpts{hereDocs: true})
	assert.Equal(t, shLit, sc.cls[strings.Index(script, "'")], "a quote in B's body is text")
	assert.True(t, sc.words[sc.word[strings.Index(script, "echo")]].cmd, "echo is the command after A")
}

// TestCheckCmd_EscapedQuote: in bash's, zsh's and ksh's $'…' and in fish's
// '…', \' is a quote inside the string, not its end, so input after an
// application's `$'it\'s'` is code, not inside the quotes that reading
// the \' as the end would open (found by a review: `echo $'it\'s' x;id`
// was let through; bash ran id). The attack runs in bash when the check
// is skipped.
func TestCheckCmd_EscapedQuote(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	in := "x;touch " + marker
	for _, argv := range [][]string{
		{"bash", "-c", "echo $'it\\'s' " + in},
		{"bash", "-c", "cat <<EOF; echo $'it\\'s' " + in + "\nbody\nEOF"},
		{"fish", "-c", "echo 'it\\'s' " + in},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			cmd, err := Command(ctxOf(r), argv[0], argv[1:]...)
			assert.Nil(t, cmd)
			assertBlocked(t, err, rc, src, in, "shell")
		}
		if argv[0] != "bash" {
			continue
		}
		require.NoError(t, exec.Command(argv[0], argv[1:]...).Run(), "%q", argv)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "bash ran the input in %q", argv)
		require.NoError(t, os.Remove(marker))
	}
	// Inside $'…' input is text as before; dash, which has no $'…', ends
	// the quotes at \' (`x\'; id #` is blocked).
	r, _ := inputAt(t, taint.Query, "a b; c")
	cmd, err := Command(ctxOf(r), "bash", "-c", "echo $'a b; c'")
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "a b; c\n", string(out))
	r, _ = inputAt(t, taint.Query, "x\\'; id #")
	_, err = Command(ctxOf(r), "sh", "-c", "echo $'x\\'; id #'")
	assert.ErrorIs(t, err, ErrBlocked)
}

// TestCheckCmd_RedirectionFirst: a redirection may come before the
// command (`>/dev/null cmd`, `2>/dev/null cmd`): its target and its
// descriptor are not the program, the word after them is (found by a
// review: `2>/dev/null %s` took 2 for the program and let an input that
// chose it through).
func TestCheckCmd_RedirectionFirst(t *testing.T) {
	for _, tmpl := range []string{">/dev/null %s --version", "2>/dev/null %s", "</dev/null 2>&1 %s", "x=1 >/dev/null %s", "echo a; 2>>/tmp/log %s"} {
		for _, shell := range []string{"sh", "cmd"} {
			if shell == "cmd" && strings.ContainsAny(tmpl, "=;") { // no assignments, and ; is a blank
				continue
			}
			c := "-c"
			if shell == "cmd" {
				c = "/c"
			}
			r, rc := inputAt(t, taint.Query, "id")
			err := CheckCmd(ctxOf(r), cmdOf(shell, c, fmt.Sprintf(tmpl, "id")))
			require.Error(t, err, "%s %s", shell, tmpl)
			assertBlocked(t, err, rc, taint.Query, "id", "shell")
			assert.Contains(t, err.Error(), "chooses the script's program", "%s %s", shell, tmpl)
		}
	}
	// The target of a redirection is a word of the command's, not the next
	// command: after >&2 the command goes on.
	for _, tmpl := range []string{"echo x >&2 %s", "echo x 2>/dev/null %s", "cat <<EOF %s\nbody\nEOF", "echo x >| /tmp/f %s"} {
		r, _ := inputAt(t, taint.Query, "a.b")
		assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", fmt.Sprintf(tmpl, "a.b"))), tmpl)
	}
}

// TestCheckCmd_RedirectionFdVariable: bash's {name}> opens a descriptor
// into the variable name, and the word after its target is the program
// (`{fd}>/dev/null cmd` runs cmd), as after 2> (found by a review: the
// fix for 2> took {fd} for the program and let an input that chose the
// program after it through). The attack runs in bash when the check is
// skipped.
func TestCheckCmd_RedirectionFdVariable(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, tmpl := range []string{"{fd}>/dev/null %s", "echo a; {log_2}>>/dev/null %s", "timeout 5 {fd}>/dev/null %s"} {
		in := "touch"
		script := fmt.Sprintf(tmpl, in) + " " + marker
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("bash", "-c", script))
			require.Error(t, err, script)
			assertBlocked(t, err, rc, src, in, "shell")
			assert.Contains(t, err.Error(), "chooses the script's program", script)
		}
		require.NoError(t, exec.Command("bash", "-c", script).Run(), script)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "bash ran the input in %q", script)
		require.NoError(t, os.Remove(marker))
	}
	// To other shells {fd} is the program: it is one to the check too.
	r, _ := inputAt(t, taint.Query, "fd")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "{fd}>/dev/null echo x")), ErrBlocked)
	// Not a name: a word of the command, as before.
	r, _ = inputAt(t, taint.Query, "a.b")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("bash", "-c", "echo {1x}>/dev/null a.b")))
}

// TestCheckCmd_EnvFamilies: input in a variable that makes git run or
// trust what it names, a JVM load an agent, or bash define a command, is
// blocked like LD_PRELOAD (found by a review: GIT_CONFIG_VALUE_0 with
// core.sshCommand, GIT_EXTERNAL_DIFF, JAVA_TOOL_OPTIONS and
// BASH_FUNC_ls%% were let through).
func TestCheckCmd_EnvFamilies(t *testing.T) {
	for _, kv := range []struct{ env, in string }{
		{"GIT_CONFIG_VALUE_0=touch /tmp/pwned", "touch /tmp/pwned"},
		{"GIT_CONFIG_KEY_0=core.sshCommand", "core.sshCommand"},
		{"GIT_EXTERNAL_DIFF=/tmp/evil.sh", "/tmp/evil.sh"},
		{"JAVA_TOOL_OPTIONS=-javaagent:/tmp/a.jar", "-javaagent:/tmp/a.jar"},
		{"BASH_FUNC_ls%%=() { id; }", "() { id; }"},
		{"git_config_value_1=x y", "x y"},
		{"PYTHONWARNINGS=ignore::evil.mod::", "ignore::evil.mod::"},
		{"PHPRC=/tmp/uploads/php.ini", "/tmp/uploads/php.ini"},
		{"PHP_INI_SCAN_DIR=/tmp/uploads", "/tmp/uploads"},
		{"GLIBC_TUNABLES=glibc.malloc.mxfast=1", "glibc.malloc.mxfast=1"},
		{"TAR_OPTIONS=--to-command=id", "--to-command=id"},
		{"RSYNC_RSH=sh -c id", "sh -c id"},
		{"RSYNC_CONNECT_PROG=sh -c id", "sh -c id"},
		{"SUDO_ASKPASS=/tmp/uploads/a.sh", "/tmp/uploads/a.sh"},
		{"MANPAGER=sh -c id", "sh -c id"},
		{"GOFLAGS=-toolexec=/tmp/uploads/x", "-toolexec=/tmp/uploads/x"},
		{"ZDOTDIR=/tmp/uploads", "/tmp/uploads"},
		{"EXINIT=!id", "!id"},
		{"VIMINIT=!id", "!id"},
		{"LUA_INIT=os.execute('id')", "os.execute('id')"},
		{"LUA_INIT_5_4=@/tmp/uploads/x.lua", "@/tmp/uploads/x.lua"},
		{"PERLLIB=/tmp/uploads", "/tmp/uploads"},
		{"CLASSPATH=/tmp/uploads/x.jar", "/tmp/uploads/x.jar"},
		{"DOTNET_STARTUP_HOOKS=/tmp/uploads/x.dll", "/tmp/uploads/x.dll"},
		{"OPENSSL_CONF=/tmp/uploads/o.cnf", "/tmp/uploads/o.cnf"},
		// Found by a later review: each runs a command or loads a file that
		// does, and was let through.
		{"SVN_SSH=sh -c id", "sh -c id"},
		{"CVS_RSH=/tmp/uploads/x.sh", "/tmp/uploads/x.sh"},
		{"SUDO_EDITOR=sh -c id", "sh -c id"},
		{"SYSTEMD_EDITOR=sh -c id", "sh -c id"},
		{"SYSTEMD_PAGER=sh -c id", "sh -c id"},
		{"KUBE_EDITOR=sh -c id", "sh -c id"},
		{"MANOPT=-P id", "-P id"},
		{"ZIPOPT=-T -TT id", "-T -TT id"},
		{"RUSTC_WRAPPER=/tmp/uploads/x", "/tmp/uploads/x"},
		{"WGETRC=/tmp/uploads/w.rc", "/tmp/uploads/w.rc"},
		{"PSQLRC=/tmp/uploads/p.rc", "/tmp/uploads/p.rc"},
		{"HGRCPATH=/tmp/uploads/hgrc", "/tmp/uploads/hgrc"},
	} {
		r, rc := inputAt(t, taint.Query, kv.in)
		cmd := exec.Command("git", "fetch")
		cmd.Env = []string{"HOME=/tmp", "GIT_CONFIG_COUNT=1", kv.env}
		assertBlocked(t, CheckCmd(ctxOf(r), cmd), rc, taint.Query, kv.in, "shell")
	}
	r, _ := inputAt(t, taint.Query, "en_GB.UTF-8")
	cmd := exec.Command("git", "fetch")
	cmd.Env = []string{"LANG=en_GB.UTF-8", "GIT_AUTHOR_NAME=en_GB.UTF-8"}
	assert.NoError(t, CheckCmd(ctxOf(r), cmd))
}

// TestCheckCmd_WrapperSetsEnv: a wrapper's NAME=VALUE (env A=1 cmd, sudo
// A=1 cmd) is the program's environment, as cmd.Env is: input in a
// variable that makes the program run or load what it names is blocked
// there too (found by a review: the finder read env's and sudo's
// NAME=VALUE and passed them by, and exec.Command("env",
// "BASH_ENV="+input, "bash", "-c", ":") ran the file the input named).
// The attack runs when the check is skipped.
func TestCheckCmd_WrapperSetsEnv(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	in := filepath.Join(dir, "upload.sh")
	require.NoError(t, os.WriteFile(in, []byte("touch "+marker+"\n"), 0o644))
	for _, argv := range [][]string{
		{"env", "BASH_ENV=" + in, "bash", "-c", ":"},
		{"env", "-i", "A=1", "BASH_ENV=" + in, "bash", "-c", ":"},
		{"env", "--", "BASH_ENV=" + in, "bash", "-c", ":"},
		{"timeout", "5", "env", "BASH_ENV=" + in, "bash", "-c", ":"},
		{"sudo", "BASH_ENV=" + in, "bash", "-c", ":"},
		{"env", "LD_PRELOAD=" + in, "ls"},
		{"env", "GIT_CONFIG_VALUE_0=" + in, "git", "fetch"},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%q", argv)
			assertBlocked(t, err, rc, src, in, "shell")
			assert.Contains(t, err.Error(), "sets the environment variable", "%q", argv)
		}
		if argv[0] != "env" || argv[len(argv)-1] != ":" {
			continue
		}
		require.NoError(t, exec.Command(argv[0], argv[1:]...).Run(), "%q", argv)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "bash ran the file the input named in %q", argv)
		require.NoError(t, os.Remove(marker))
	}
	// Another variable is the program's business.
	r, _ := inputAt(t, taint.Query, "en_GB.UTF-8")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("env", "LANG=en_GB.UTF-8", "ls")))
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sudo", "LC_ALL=en_GB.UTF-8", "ls")))
}

// TestCheckCmd_Wrappers: an input that a wrapper (env, sudo, timeout,
// nice …) runs is the program, behind any of their options and nested,
// in argv and in a script, as args[0] is (found by a review:
// exec.Command("timeout", "5", input), ("sudo", "-u", "bob", input),
// ("env", "A=1", input) and sh -c "timeout 5 "+input took args[0] or the
// word after the wrapper for the program and let an input that chose the
// program through).
func TestCheckCmd_Wrappers(t *testing.T) {
	const in = "id"
	argvs := [][]string{
		{"timeout", "5", in},
		{"sudo", "-u", "bob", in},
		{"env", in},
		{"env", "A=1", in},
		{"nice", "-n", "5", in},
		{"/usr/bin/timeout", "5", in},
		{"sudo", "env", "timeout", "5", in},
		{"sudo", "-u", "bob", "env", "-i", "A=1", "nice", "-n", "5", "timeout", "-s", "KILL", "5", in},
		{"sudo", "-Eu", "bob", in},
		{"sudo", "-ubob", in},
		{"sudo", "--user=bob", in},
		{"sudo", "--user", "bob", in},
		{"sudo", "--us", "bob", in}, // an abbreviation, as getopt_long reads it
		{"sudo", "-g", "wheel", "-C", "5", "-D", "/tmp", "-p", "pw:", "-r", "r", "-t", "t", "-T", "5", "-U", "eve", in},
		{"sudo", "-h", "host", in},
		{"sudo", "-h", in},
		{"sudo", "--", in},
		{"sudo", "A=1", in},
		{"doas", "-u", "bob", in},
		{"env", "-i", "-u", "HOME", "-C", "/tmp", "-0", in},
		{"env", "-", "A=1", in},
		{"env", "--unset=HOME", "--chdir", "/tmp", in},
		{"env", "-S", in},
		{"env", "-S" + in},
		{"env", "--split-string=" + in},
		{"env", "--split-string", "timeout 5 " + in},
		{"env", "-S", "-i", in},
		{"nice", "-5", in},
		{"nice", "-n5", in},
		{"nice", "--adjustment=5", in},
		{"nohup", in},
		{"timeout", "-k", "1", "--signal=KILL", "5", in},
		{"timeout", "--preserve-status", "--foreground", "5", in},
		{"stdbuf", "-oL", "-e", "0", in},
		{"setsid", "-f", in},
		{"ionice", "-c", "2", "-n", "7", in},
		{"chrt", "-f", "10", in},
		{"chrt", "--other", in},
		{"taskset", "-c", "0", in},
		{"flock", "-w", "5", "/tmp/lock", in},
		{"flock", "/tmp/lock", "-c", in},
		{"flock", "-c", in, "/tmp/lock"},
		{"time", "-p", in},
		{"time", "-f", "%e", "-o", "/tmp/t", in},
		{"command", in},
		{"exec", "-a", "name", in},
		{"xargs", in},
		{"xargs", "-I", "{}", "-n", "1", in, "{}"},
		{"xargs", "-0", "--max-procs=2", in},
		{"busybox", in},
		{"busybox", "timeout", "5", in},
		{"toybox", "env", in},
		{"strace", "-f", "-o", "/tmp/s", in},
		{"chroot", "--userspec=bob", "/srv/jail", in},
		// An option the finder does not know: every reading of it.
		{"timeout", "--frobnicate", "5", in},
		{"timeout", "-Z", "x", "5", in},
		{"sudo", "-Y", "x", in},
	}
	for _, argv := range argvs {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%q", argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// A path to the program, behind a wrapper.
	r, _ := inputAt(t, taint.Query, "../../bin/sh")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("timeout", "5", "/opt/tools/../../bin/sh")), ErrBlocked)

	for _, tmpl := range []string{
		"timeout 5 %s",
		"sudo -u bob %s",
		"env %s",
		"env A=1 %s",
		"nice -n 5 %s",
		"sudo env timeout 5 %s",
		"sudo -u bob env -u HOME nice -n 5 timeout -s KILL 5 %s --version",
		"nohup %s &",
		"if timeout 5 %s; then echo ok; fi",
		"x=$(timeout 5 %s)",
		"echo \"$(sudo -u bob %s)\"",
		"A=1 timeout 5 %s",
		"! timeout 5 %s",
		"timeout 5 >/dev/null 2>&1 %s",
		"exec -a name %s",
		"time -p %s",
		"command %s",
		"xargs -n 1 %s < list",
		"busybox timeout 5 %s",
		"flock /tmp/lock %s",
		"chrt -f 10 %s",
		"'timeout' 5 %s",
		`sudo -u "$U" %s`,
		`timeout "$T" %s`,
		`timeout $T %s`,
		"env -S '%s -x'",
		"env --split-string='timeout 5 %s'",
		"flock /tmp/lock -c '%s'",
		"timeout --frobnicate 5 %s",
	} {
		script := fmt.Sprintf(tmpl, in)
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%q", script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
}

// TestCheckCmd_WrapperNotKnown: a script's wrapper named through an
// expansion ($BIN/timeout, "${SUDO}"/sudo) runs the program after it as
// the wrapper written out does (found by a review: the finder stopped at
// a program word whose value it did not know, though the check read it
// for a wrapper, and let an input that chose the program through).
func TestCheckCmd_WrapperNotKnown(t *testing.T) {
	dir := t.TempDir()
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no timeout:", err)
	}
	require.NoError(t, os.Symlink(timeout, filepath.Join(dir, "timeout")))
	marker := filepath.Join(dir, "pwned")
	const in = "touch"
	for _, tmpl := range []string{"$BIN/timeout 5 %s", `"$BIN"/timeout 5 %s`, "${BIN}/timeout 5 %s", "$BIN/timeout -s KILL 5 %s"} {
		script := fmt.Sprintf(tmpl, in) + " " + marker
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(os.Environ(), "BIN="+dir)
		require.NoError(t, cmd.Run(), script)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "the shell ran the input in %q", script)
		require.NoError(t, os.Remove(marker))
	}
	// An argument of the program such a wrapper runs is data.
	r, _ := inputAt(t, taint.Query, "in.png")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "$BIN/timeout 5 convert in.png")))
}

// TestCheckCmd_LineContinuation: the shell removes a backslash-newline
// in code, so the words around it are one command (and one word, when
// nothing separates them), as the wrapper finder must count them (found
// by a review: `timeout \<newline> 5 `+input took the line's end for the
// command's, 5 for the program and the input for an argument, and let
// the program timeout ran through).
func TestCheckCmd_LineContinuation(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	const in = "touch"
	for _, tmpl := range []string{"timeout \\\n 5 %s", "timeout \\\n5 %s", "time\\\nout 5 %s", "nice -n \\\n 5 %s", "timeout 5 \\\n %s"} {
		script := fmt.Sprintf(tmpl, in) + " " + marker
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%q", script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
		require.NoError(t, exec.Command("sh", "-c", script).Run(), "%q", script)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "the shell ran the input in %q", script)
		require.NoError(t, os.Remove(marker))
	}
	// An argument on the next line is data; the continuation itself is
	// syntax.
	r, _ := inputAt(t, taint.Query, "in.png")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "convert \\\n in.png out.png")))
	r, _ = inputAt(t, taint.Query, "a\\\nb")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "echo a\\\nb")), ErrBlocked)
}

// TestCheckCmd_WrappersBenign: an input that is an ordinary argument of
// the program a wrapper runs, or the value of a wrapper's option, is data:
// it is let through, and the command runs.
func TestCheckCmd_WrappersBenign(t *testing.T) {
	const in = "in.png"
	for _, argv := range [][]string{
		{"timeout", "5", "echo", in},
		{"timeout", "-s", "KILL", "-k", "1", "5", "echo", in},
		{"env", "A=1", "echo", in},
		{"env", "-u", "HOME", "-i", "echo", in},
		{"nice", "-n", "5", "echo", in},
		{"nice", "-5", "echo", in},
		{"nohup", "echo", in},
		{"stdbuf", "-oL", "echo", in},
		{"xargs", "-0", "echo", in},
		{"timeout", "5", "nice", "env", "A=1", "echo", in},
		{"timeout", "5", "echo", "--", in},
		{"flock", "/tmp/contractguard-test.lock", "echo", in},
		{"sudo", "-u", "bob", "convert", in, "out.png"},
		{"sudo", "-u", in, "convert", "a.png"},
		{"doas", "-u", "bob", "convert", in},
		{"timeout", "5", "convert", in},
		{"chrt", "-o", "0", "convert", in},
		{"taskset", "0x1", "convert", in},
		{"xargs", "-I", "{}", "convert", "{}", in},
		{"busybox", "timeout", "5", "convert", in},
		{"timeout", "5", "convert", "x", in},
		{"sudo", "-e", in},
		{"command", "-v", in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			cmd := cmdOf(argv...)
			require.NoError(t, CheckCmd(ctxOf(r), cmd), "%v %q", src, argv)
			assert.Empty(t, rc.all())
		}
		if _, err := exec.LookPath(argv[0]); err != nil || argv[0] == "busybox" || strings.Contains(strings.Join(argv, " "), "convert") {
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.Output()
		require.NoError(t, err, "%q", argv)
		assert.Contains(t, string(out), in, "%q", argv)
	}
	for _, tmpl := range []string{
		"timeout 5 echo %s",
		"env A=1 echo %s",
		"nice -n 5 echo '%s'",
		"sudo -u bob convert %s out.png",
		"timeout 5 convert x %s",
		"command -v %s",
		"xargs -n 1 convert %s < list",
		"if timeout 5 test -f %s; then :; fi",
		`sudo -u "$U" convert %s`,
	} {
		script := fmt.Sprintf(tmpl, in)
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), script)
		assert.Empty(t, rc.all())
	}
	// Where the finder cannot tell, it fails closed: "$T" may hold an
	// option (-k, taking convert for its value), and the input be the
	// program.
	r, _ := inputAt(t, taint.Query, in)
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", `timeout "$T" convert `+in)), ErrBlocked)
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("timeout", "--frobnicate", "5", "convert", in)), ErrBlocked)
	// An input that is a wrapper's option value is the wrapper's business.
	r, _ = inputAt(t, taint.Query, "bob")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sudo", "-u", "bob", "convert", "x")))
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "sudo -u bob convert x")))
	// AllowPrograms lets the input choose the wrapped program too.
	r, _ = inputAt(t, taint.Query, "git")
	assert.NoError(t, Commands{AllowPrograms: []string{"git"}}.Check(ctxOf(r), cmdOf("timeout", "5", "git", "status")))
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("timeout", "5", "git", "status")), ErrBlocked)
}

// TestProgFinder_TakesEachWordOnce: out of steps, the finder takes every
// word left for a program once, however many readings unwind past the
// limit. Each took them all again: an argv of 300,000 options the finder
// does not know cost a second and a half, a script of them as much per
// megabyte.
func TestProgFinder_TakesEachWordOnce(t *testing.T) {
	const n = 100_000
	words := make([]string, n)
	words[0] = "timeout"
	for i := 1; i < n; i++ {
		words[i] = "-Z"
	}
	calls := 0
	taken := make([]bool, n)
	p := progFinder{
		n:      n,
		word:   func(j int) (string, bool) { return words[j], true },
		prog:   func(j int) { calls++; taken[j] = true },
		script: func(int, int, bool) {},
	}
	p.find()
	assert.LessOrEqual(t, calls, n+maxWrapSteps, "words taken for a program")
	assert.True(t, p.all)
	first := slices.Index(taken[1:], true) + 1 // word 0 is the command's program
	require.Positive(t, first)
	for j := first; j < n; j++ {
		require.True(t, taken[j], "every word from the first taken on: %d", j)
	}
}

// TestProgFinder_Bounded: a long command of options the finder does not
// know ends its readings within its steps, taking every word left for a
// program.
func TestProgFinder_Bounded(t *testing.T) {
	argv := []string{"timeout"}
	for i := 0; i < 20000; i++ {
		argv = append(argv, "-Z")
	}
	argv = append(argv, "5", "convert", "x")
	ck := shellCheck{args: argv}
	ck.findScripts()
	assert.Contains(t, ck.progs, len(argv)-1)
	script := "timeout" + strings.Repeat(" $x", 20000) + " convert x"
	sc := lexPOSIX(script)
	assert.True(t, sc.words[len(sc.words)-1].cmd)
}

// TestCheckCmd_EnvSplitString: env -S's string is env's own arguments,
// options and assignments before the program (found by a review:
// exec.Command("env", "-S", "-i "+input) read the string as a shell
// script whose first word, -i, was the program, and let an input that
// chose the program through).
func TestCheckCmd_EnvSplitString(t *testing.T) {
	const in = "id"
	for _, argv := range [][]string{
		{"env", "-S", "-i " + in},
		{"env", "-S", "-u HOME " + in + " x"},
		{"env", "-S-i " + in},
		{"env", "--split-string=-i A=1 " + in},
		{"env", "--split-string", "-C /tmp " + in},
		{"sudo", "env", "-S", "-i " + in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%q", argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// An argument of the program it runs is data.
	r, _ := inputAt(t, taint.Query, "in.png")
	cmd, err := Command(ctxOf(r), "env", "-S", "-i echo in.png")
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "in.png\n", string(out))
}

// TestCheckCmd_WrappersRunuser: runuser -u USER COMMAND runs COMMAND, as
// a wrapper does (found by a review: with the input id, runuser -u bob id
// was let through, and so was an option after runuser's own "--"); without
// -u, its operands are the user and the user's shell's arguments, no
// program (runuser bob -c '…' is read as su's).
func TestCheckCmd_WrappersRunuser(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"runuser", "-u", "bob", "id"}},
		{"id", []string{"runuser", "-u", "bob", "--", "id", "-x"}},
		{"id", []string{"runuser", "-ubob", "id"}},
		{"id", []string{"runuser", "--user=bob", "id"}},
		{"id", []string{"runuser", "--user", "bob", "id"}},
		{"id", []string{"runuser", "--us", "bob", "id"}},
		{"id", []string{"runuser", "-m", "-g", "wheel", "-u", "bob", "id"}},
		{"id", []string{"runuser", "-mu", "bob", "id"}},
		{"id", []string{"sudo", "runuser", "-u", "bob", "timeout", "5", "id"}},
		{"id", []string{"sh", "-c", "runuser -u bob -- id"}},
		{"id", []string{"sh", "-c", "runuser -u \"$U\" id"}},
		{"id", []string{"sh", "-c", "runuser \"$OPT\" bob id"}},
		{"--upload-pack=id", []string{"runuser", "-u", "bob", "--", "git", "clone", "--upload-pack=id"}},
		{"x;id", []string{"runuser", "-u", "bob", "--", "sh", "-c", "echo x;id"}},
		{"x;id", []string{"sh", "-c", "echo 'echo x;id' | runuser -u bob sh"}},
		{"x;id", []string{"sh", "-c", "echo 'echo x;id' | runuser bob"}},
	} {
		for _, src := range sources {
			if !carries(src, c.in) {
				continue
			}
			r, rc := inputAt(t, src, c.in)
			err := CheckCmd(ctxOf(r), cmdOf(c.argv...))
			require.Error(t, err, "%v %q", src, c.argv)
			assertBlocked(t, err, rc, src, c.in, "shell")
		}
	}
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"in.png", []string{"runuser", "-u", "bob", "--", "convert", "in.png", "out.png"}},
		{"bob", []string{"runuser", "-u", "bob", "id"}},
		{"bob", []string{"runuser", "-l", "bob", "-c", "id"}},
		{"bob", []string{"runuser", "bob"}},
		{"bob", []string{"runuser", "-", "bob", "-c", "id"}},
		{"in.png", []string{"sh", "-c", "runuser -l bob -c 'convert in.png out.png'"}},
		{"bob", []string{"sh", "-c", "runuser -s /bin/sh bob -c id"}},
		{"hello", []string{"sh", "-c", "echo hello | runuser -u bob -- cat"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_WrappedScriptsLinear: a command of many command-line
// options (ssh -oProxyCommand=… or env -S … repeated) is read in linear
// time: each script found was compared with every one found before it
// (100,000 options took 18 s).
func TestCheckCmd_WrappedScriptsLinear(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "hello")
	for _, opt := range [][]string{{"ssh", "-oProxyCommand=echo x"}, {"env", "-S", "x"}} {
		argv := []string{opt[0]}
		for i := 0; i < 100000; i++ {
			argv = append(argv, opt[1:]...)
		}
		argv = append(argv, "hello")
		// Counted, not timed: each script found is looked up once, and
		// the arguments in a script marked in one pass over them.
		ck := &shellCheck{args: argv}
		for j := 1; j < len(argv); j++ {
			require.True(t, ck.newCode(j, 0), opt[0])
			require.False(t, ck.newCode(j, 0), "%s: found twice", opt[0])
		}
		_ = CheckCmd(ctxOf(r), cmdOf(argv...))
	}
}

// TestCheckCmd_ScriptExportsEnv: input in the value of a variable such as
// LD_PRELOAD that a script exports (export, declare -x, typeset -x,
// local -x, readonly: PATH is exported already) or assigns as a statement
// is blocked, as in cmd.Env (found by a review: sh -c "export
// LD_PRELOAD=/tmp/id; ls" with the input /tmp/id was let through: only
// the program and options were judged).
func TestCheckCmd_ScriptExportsEnv(t *testing.T) {
	const in = "/tmp/id"
	for _, script := range []string{
		"export LD_PRELOAD=" + in + "; ls",
		"export LD_PRELOAD='" + in + "'; ls",
		`export A=1 LD_PRELOAD="` + in + `"; ls`,
		"declare -x LD_PRELOAD=" + in + "; ls",
		"typeset -x BASH_ENV=" + in + "; bash -c :",
		"f() { local -x LD_PRELOAD=" + in + "; ls; }; f",
		"readonly PATH=" + in + ":/bin; ls",
		"readonly -x GIT_SSH=" + in + "; git fetch",
		"builtin export LD_PRELOAD=" + in + "; ls",
		"PATH=" + in + ":$PATH; export PATH; ls",
		"LD_PRELOAD=" + in + ":x.so; export LD_PRELOAD; ls",
		"LD_PRELOAD=" + in + ":x.so ls",
	} {
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
		assertBlocked(t, err, rc, taint.Query, in, "shell")
		if assert.Error(t, err, script) {
			assert.Contains(t, err.Error(), "sets the environment variable", script)
		}
	}
	// Another variable is the script's business.
	r, _ := inputAt(t, taint.Query, "en_GB.UTF-8")
	for _, script := range []string{
		"export LANG=en_GB.UTF-8; ls",
		"declare -x LC_ALL=en_GB.UTF-8; ls",
		"echo LD_PRELOAD=en_GB.UTF-8",
	} {
		assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), script)
	}
}

// TestCheckCmd_MoreWrappers: nsenter, unshare, numactl, pkexec and
// systemd-run run their operand as a program, find the word after -exec
// (-execdir, -ok, -okdir), bash's coproc the word after it, and script -c
// a command line for the user's shell (found by a review: none was read,
// and an input that was the program they ran went through).
func TestCheckCmd_MoreWrappers(t *testing.T) {
	const in = "id"
	for _, argv := range [][]string{
		{"nsenter", "-t", "1", "-m", "-u", in},
		{"nsenter", "--target", "1", "--mount", "--net=/run/netns/x", in},
		{"nsenter", "-n/run/netns/x", "-S", "0", in},
		{"unshare", "-r", "-n", in},
		{"unshare", "--map-root-user", "--wd", "/tmp", "--mount=/tmp/ns", in},
		{"numactl", "--cpunodebind=0", "--membind", "0", in},
		{"numactl", "-N", "0", "-l", in},
		{"pkexec", in},
		{"pkexec", "--user", "bob", in},
		{"systemd-run", "--user", "--scope", "-p", "MemoryMax=1G", in},
		{"systemd-run", "-u", "job", "--wait", "-t", in},
		{"systemd-run", "--frobnicate", in},
		{"find", ".", "-name", "*.png", "-exec", in, "{}", ";"},
		{"find", ".", "-execdir", "timeout", "5", in, "{}", "+"},
		{"find", ".", "-ok", in, ";"},
		{"find", ".", "-okdir", in, ";"},
		{"script", "-c", in},
		{"script", "-q", "/dev/null", "-c", in},
		{"script", "-qc", in, "/dev/null"},
		{"script", "--command=" + in, "/dev/null"},
		{"sudo", "nsenter", "-t", "1", "-a", "unshare", "-f", in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%q", argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	for _, tmpl := range []string{
		"nsenter -t 1 -m %s",
		"unshare -r %s",
		"numactl --interleave=all %s",
		"pkexec %s",
		"systemd-run --user -p X=1 %s",
		"find . -exec %s {} \\;",
		"find . -type f -execdir sudo %s {} +",
		"coproc %s",
		"coproc timeout 5 %s",
		"script -qc '%s' /dev/null",
		"script -c \"echo x; %s\"",
	} {
		script := fmt.Sprintf(tmpl, in)
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%q", script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// A script -c command line that breaks out of quotes.
	r, _ := inputAt(t, taint.Query, "x;id")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("script", "-qc", "echo x;id", "/dev/null")), ErrBlocked)
	// The benign: the arguments of the program they run, an option's
	// value, find's operands and tests.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"in.png", []string{"nsenter", "-t", "1", "-m", "convert", "in.png"}},
		{"in.png", []string{"unshare", "-r", "convert", "in.png"}},
		{"in.png", []string{"numactl", "-N", "0", "convert", "in.png"}},
		{"in.png", []string{"pkexec", "--user", "bob", "convert", "in.png"}},
		{"in.png", []string{"systemd-run", "--user", "convert", "in.png"}},
		{"in.png", []string{"find", ".", "-name", "in.png"}},
		{"in.png", []string{"find", "uploads", "-name", "in.png", "-exec", "convert", "{}", "in.png", ";"}},
		{"in.png", []string{"find", "--", "in.png"}},
		{"in.png", []string{"script", "-qc", "convert in.png out.png", "/dev/null"}},
		{"in.png", []string{"sh", "-c", "find . -name in.png -exec rm {} \\;"}},
		{"in.png", []string{"sh", "-c", "coproc convert in.png"}},
		{"in.png", []string{"sh", "-c", "script -qc 'convert in.png' /dev/null"}},
		{"bob", []string{"pkexec", "--user", "bob", "id"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_GitConfig: input in the value of a git configuration
// variable that runs a command or loads a file, given as git's -c or
// --config-env, is blocked, as it is in GIT_CONFIG_* variables (found by
// a review: `git -c core.sshCommand=<input> fetch` let the input choose
// the command git runs).
func TestCheckCmd_GitConfig(t *testing.T) {
	const in = "sh -x"
	for _, argv := range [][]string{
		{"git", "-c", "core.sshCommand=" + in, "fetch"},
		{"git", "-c", "CORE.PAGER=" + in, "log"},
		{"git", "-C", "/srv/repo", "-c", "core.fsmonitor=" + in, "status"},
		{"git", "-c", "alias.st=!" + in, "st"},
		{"git", "-c", "diff.external=" + in, "diff"},
		{"git", "-c", "credential.helper=!" + in, "push"},
		{"git", "-c", "filter.x.smudge=" + in, "checkout"},
		{"git", "-c", "uploadpack.packObjectsHook=" + in, "upload-pack", "."},
		{"git", "-c", "protocol.ext.allow=" + in, "fetch"},
		{"git", "--config-env=core.editor=" + in, "commit"},
		{"git", "--config-env", "core.hooksPath=" + in, "commit"},
		{"/usr/bin/git", "-c", "core.editor=" + in, "commit"},
		{"timeout", "5", "git", "-c", "core.pager=" + in, "log"},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// A variable that runs nothing, and an argument after "--", are data.
	for _, argv := range [][]string{
		{"git", "-c", "user.name=" + in, "commit", "-m", "x"},
		{"git", "-c", "core.pager=less", "log", "--", in},
		{"git", "log", "--grep", in},
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_GitConfigName: input that is a part of a dangerous git
// variable's name chooses it; inside a part it chooses nothing.
func TestCheckCmd_GitConfigName(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "sshCommand")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("git", "-c", "core.sshCommand=ssh -4", "fetch")), ErrBlocked)
	r, _ = inputAt(t, taint.Query, "Comman")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("git", "-c", "core.sshCommand=ssh -4", "fetch")))
}

// TestCheckCmd_SSHConfigFile: input in ssh's -F value chooses its
// configuration file, which may hold a ProxyCommand (found by a review:
// `ssh -F <input> host` went through).
func TestCheckCmd_SSHConfigFile(t *testing.T) {
	const in = "uploads/x.conf"
	for _, argv := range [][]string{
		{"ssh", "-F", in, "host"},
		{"ssh", "-F" + in, "host", "ls"},
		{"ssh", "-qF", in, "host"},
		{"ssh", "host", "-F", in, "ls"},
		{"timeout", "5", "ssh", "-p", "22", "-F", "/srv/" + in, "host"},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// The remote command's own -F is its business.
	r, rc := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("ssh", "-F", "/etc/ssh/x.conf", "host", "ls", "-F", in)))
	assert.Empty(t, rc.all())
}

// TestCheckCmd_AssignmentValueNotProgram: the value of NAME=VALUE before
// a script's program is the variable's, never the program: input in it
// (USER_NAME='hello' greet, with hello) was blocked as choosing the
// script's program, as the word is in command position. A word that only
// looks like one is still the program: quoted ('A=x' runs A=x), after a
// wrapper (nohup A=x cmd runs A=x) or dash's time, or the input making
// the name.
func TestCheckCmd_AssignmentValueNotProgram(t *testing.T) {
	for _, c := range []struct{ in, script string }{
		{"hello", "USER_NAME='hello' /srv/bin/greet"},
		{"foo bar", "USER_NAME='foo bar' /srv/bin/greet"},
		{"uploads/a.png", "SRC=uploads/a.png convert \"$SRC\" out.png"},
		{"hello", "A=hello"},
		{"hello", "A=1 B=\"hello\" >/dev/null greet"},
		{"hello", "if A=hello true; then :; fi"},
		{"hello", "echo x; { A=hello; echo \"$A\"; }"},
		{"hello", "! NAME=hello test -n x"},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, c.in)
			require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", c.script)), "%v %q", src, c.script)
			assert.Empty(t, rc.all())
		}
	}
	for _, c := range []struct{ in, script string }{
		{"hello", "'A=hello' greet"},
		{"hello", "\"A\"=hello greet"},
		{"hello", "A\\=hello greet"},
		{"hello", "nohup A=hello greet"},
		{"hello", "time A=hello greet"},
		{"hello", "exec A=hello"},
		{"A=hello", "A=hello greet"},
		{"=/tmp/x", "A=/tmp/x greet"},
		{"/tmp/x", "A=1 /tmp/x"},
		{"/tmp/x", "A=1 greet; /tmp/x"},
		{"/tmp/evil.so", "LD_PRELOAD=/tmp/evil.so greet"},
		{"x;id", "A=x;id greet"},
		{"$(id)", "A=\"$(id)\" greet"},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", c.script)), rc, taint.Query, c.in, "shell")
	}
	// The shell does not run the value.
	out, err := exec.Command("sh", "-c", `A='foo bar' B=uploads/a.png; echo "$A $B"`).Output()
	require.NoError(t, err)
	assert.Equal(t, "foo bar uploads/a.png\n", string(out))
}

// TestCheckCmd_SystemdRunSetenv: systemd-run's -E NAME=VALUE and
// --setenv=NAME=VALUE set the environment of the program it runs, as
// env's NAME=VALUE does, and are checked the same way (found by a review:
// systemd-run -E LD_PRELOAD=input ls read -E's value as an opaque value).
func TestCheckCmd_SystemdRunSetenv(t *testing.T) {
	const in = "/srv/uploads/x.so"
	for _, argv := range [][]string{
		{"systemd-run", "-E", "LD_PRELOAD=" + in, "ls"},
		{"systemd-run", "-ELD_PRELOAD=" + in, "ls"},
		{"systemd-run", "-qE", "LD_PRELOAD=" + in, "ls"},
		{"systemd-run", "--setenv=LD_PRELOAD=" + in, "ls"},
		{"systemd-run", "--setenv", "LD_PRELOAD=" + in, "ls"},
		{"systemd-run", "--sete=BASH_ENV=" + in, "bash", "-c", ":"},
		{"sudo", "systemd-run", "--wait", "-E", "GIT_CONFIG_VALUE_0=" + in, "git", "fetch"},
		{"sh", "-c", "systemd-run -E LD_PRELOAD=" + in + " ls"},
		{"sh", "-c", "systemd-run -ELD_PRELOAD=" + in + " ls"},
		{"sh", "-c", "systemd-run --setenv=LD_PRELOAD='" + in + "' ls"},
		{"sh", "-c", "systemd-run --setenv LD_PRELOAD=" + in + " ls"},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
			assert.Contains(t, err.Error(), "sets the environment variable", "%q", argv)
		}
	}
	// Another variable is the program's business, and so is an operand.
	for _, argv := range [][]string{
		{"systemd-run", "-E", "LANG=en_GB.UTF-8", "ls"},
		{"systemd-run", "--setenv=LANG=en_GB.UTF-8", "ls"},
		{"sh", "-c", "systemd-run -E LANG=en_GB.UTF-8 ls"},
		{"sh", "-c", "systemd-run --setenv=LANG=en_GB.UTF-8 ls"},
		{"systemd-run", "--wait", "ls", "en_GB.UTF-8"},
	} {
		r, rc := inputAt(t, taint.Query, "en_GB.UTF-8")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_VanishingExpansion: an unquoted expansion ($NICE, ${X},
// $(…), `…`) or "$@" may expand to no word at all, and the word after it
// is then in its place: the program, or the program a wrapper runs
// (found by a review: timeout 5 $NICE <input> let the input through,
// which is the program when NICE is empty).
func TestCheckCmd_VanishingExpansion(t *testing.T) {
	const in = "id"
	for _, script := range []string{
		"$PRE id",
		"${PRE} id x",
		"\"$@\" id",
		"\"${args[@]}\" id -a",
		"$(true) id",
		"`true` id",
		"timeout 5 $NICE id",
		"timeout 5 ${NICE} $X id",
		"nice -n 5 $(printf '') id",
		"env A=1 $EMPTY id",
		"$SUDO timeout 5 id",
		"echo x; $PRE sudo -u bob id",
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%v %q", src, script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
		// The shell runs the word after the expansion.
		out, err := exec.Command("bash", "-c", "PRE= NICE= X= T= EMPTY= SUDO=; "+strings.ReplaceAll(strings.ReplaceAll(script, "sudo -u bob ", ""), "id", "echo ran"), "bash").Output()
		require.NoError(t, err, "%q", script)
		assert.Contains(t, string(out), "ran", "%q", script)
	}
	// A quoted expansion is one word, empty or not; a word with literal
	// text is never empty; the input is an argument.
	for _, script := range []string{
		"\"$BIN\" id",
		"timeout 5 \"$NICE\" id",
		"timeout 5 ${BIN}x id",
		"$TOOL --flag id",
		"timeout 5 $NICE convert id",
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_SandboxWrappers: sandboxes, tracers and run-time wrappers
// run the program named in their arguments, as sudo and timeout do (found
// by a review: firejail <input>, bwrap --ro-bind / / <input>, xvfb-run -a
// <input> and the like let the input choose the program).
func TestCheckCmd_SandboxWrappers(t *testing.T) {
	const in = "id"
	for _, argv := range [][]string{
		{"unbuffer", in},
		{"unbuffer", "-p", in},
		{"catchsegv", in},
		{"fakeroot", in},
		{"fakeroot", "-i", "state", "--", in},
		{"firejail", in},
		{"firejail", "--quiet", "--net=none", in},
		{"bwrap", "--ro-bind", "/", "/", in},
		{"bwrap", "--unshare-all", "--dev", "/dev", "--bind", "/tmp", "/tmp", "--setenv", "A", "1", in},
		{"proot", "-r", "/srv/root", "-b", "/proc", in},
		{"setpriv", "--reuid=1000", "--regid", "1000", "--clear-groups", in},
		{"dbus-run-session", in},
		{"dbus-run-session", "--config-file=/etc/x.conf", "--", in},
		{"xvfb-run", in},
		{"xvfb-run", "-a", "-s", "-screen 0 1024x768x24", in},
		{"chpst", "-u", "bob", in},
		{"cgexec", "-g", "cpu:jobs", in},
		{"torsocks", in},
		{"proxychains4", "-q", "-f", "/etc/p.conf", in},
		{"tsocks", in},
		{"trickle", "-d", "10", in},
		{"cpulimit", "-l", "10", "--", in},
		{"caffeinate", "-i", in},
		{"entr", "-r", in},
		{"ltrace", "-o", "/tmp/t", in},
		{"valgrind", "--leak-check=full", in},
		{"sudo", "-u", "bob", "firejail", "--quiet", "timeout", "5", in},
		{"sh", "-c", "firejail --quiet " + in + " -a"},
		{"sh", "-c", "xvfb-run -a " + in},
		{"sh", "-c", "bwrap --ro-bind / / " + in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// The program's arguments, and the wrappers' own values, are data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"in.png", []string{"firejail", "--quiet", "--net=none", "convert", "in.png", "out.png"}},
		{"in.png", []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "convert", "in.png", "out.png"}},
		{"in.png", []string{"bwrap", "--bind", "/srv", "in.png", "convert", "x.png"}},
		{"https://example.com/", []string{"xvfb-run", "-a", "wkhtmltopdf", "https://example.com/", "out.pdf"}},
		{"pkg", []string{"fakeroot", "dpkg-deb", "--build", "pkg"}},
		{"in.png", []string{"valgrind", "--leak-check=full", "./prog", "in.png"}},
		{"bob", []string{"chpst", "-u", "bob", "convert", "x.png"}},
		{"in.png", []string{"sh", "-c", "firejail --quiet convert in.png out.png"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_ConfigInScript: git's -c NAME=VALUE and ssh's -F FILE are
// checked in a script as in the arguments (found by a review: sh -c "git
// -c core.sshCommand='<input>' fetch" and sh -c "ssh -F <input> host" let
// the input choose the command git runs, or ssh's configuration file).
func TestCheckCmd_ConfigInScript(t *testing.T) {
	for _, c := range []struct{ in, script string }{
		{"sh -x", "git -c core.sshCommand='sh -x' fetch"},
		{"sh -x", `git -c "core.pager=sh -x" log`},
		{"sh -x", "cd /srv/repo && timeout 5 git -c 'alias.st=!sh -x' st"},
		{"sh -x", "sudo -u git git -C /srv/repo -c core.hooksPath='sh -x' pull"},
		{"sh -x", "git --config-env='core.editor=sh -x' commit"},
		{"sshCommand", "git -c core.sshCommand=ssh fetch"},
		{"uploads/x.conf", "ssh -F uploads/x.conf host"},
		{"uploads/x.conf", "ssh -F 'uploads/x.conf' host ls"},
		{"uploads/x.conf", "timeout 5 ssh -qFuploads/x.conf host"},
		{"uploads/x.conf", "ssh host -F uploads/x.conf ls"},
		{"uploads/x.conf", "bash -c 'ssh -F uploads/x.conf host'"},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, c.in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", c.script))
			require.Error(t, err, "%v %q", src, c.script)
			assertBlocked(t, err, rc, src, c.in, "shell")
		}
	}
	// A variable that runs nothing, an argument, the remote command's own
	// -F: data.
	for _, c := range []struct{ in, script string }{
		{"sh -x", "git -c user.name='sh -x' commit -m x"},
		{"sh -x", "git log --grep 'sh -x'"},
		{"sh -x", "git -c core.pager=less log -- 'sh -x'"},
		{"uploads/x.conf", "ssh -F /etc/ssh/x.conf host ls -F uploads/x.conf"},
		{"uploads/x.conf", "scp -F /etc/ssh/x.conf uploads/x.conf host:"},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", c.script)), "%q", c.script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_SystemdRunProperty: systemd-run's -p NAME=VALUE
// (--property, --path-property, --socket-property, --timer-property) sets
// a property of the unit it makes, and ExecStartPre= and the other Exec
// properties run their command line (found by a review: systemd-run -p
// ExecStartPre=<input> true let the input choose a command).
func TestCheckCmd_SystemdRunProperty(t *testing.T) {
	const in = "/srv/uploads/x.sh"
	for _, argv := range [][]string{
		{"systemd-run", "-p", "ExecStartPre=" + in, "true"},
		{"systemd-run", "-pExecStopPost=" + in, "true"},
		{"systemd-run", "--wait", "-qp", "ExecStartPost=/bin/sh " + in, "true"},
		{"systemd-run", "--property=ExecCondition=" + in, "true"},
		{"systemd-run", "--property", "EnvironmentFile=" + in, "true"},
		{"systemd-run", "--prop=ExecStartPre=" + in, "true"},
		{"systemd-run", "--socket-property=ExecStartPre=" + in, "true"},
		{"systemd-run", "-p", "Environment=A=1 LD_PRELOAD=" + in, "true"},
		{"sudo", "systemd-run", "-p", "ExecStartPre=" + in, "true"},
		{"sh", "-c", "systemd-run -p ExecStartPre=" + in + " true"},
		{"sh", "-c", "systemd-run -p 'ExecStartPre=/bin/sh " + in + "' true"},
		{"sh", "-c", "systemd-run --property=Environment=LD_PRELOAD=" + in + " true"},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// Another property, or a variable that runs nothing, is data.
	for _, argv := range [][]string{
		{"systemd-run", "-p", "Description=" + in, "true"},
		{"systemd-run", "-p", "WorkingDirectory=" + in, "true"},
		{"systemd-run", "-p", "Environment=DATA=" + in, "true"},
		{"sh", "-c", "systemd-run -p Description=" + in + " true"},
		{"systemd-run", "--wait", "convert", in},
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_FunctionKeyword: the body of a function defined with the
// function keyword (bash, ksh, zsh) starts with a command (found by a
// review: sh -c 'function f { <input>; }' let the input be the program: the
// word after the function's name was read as an argument).
func TestCheckCmd_FunctionKeyword(t *testing.T) {
	const in = "id"
	for _, script := range []string{
		"function f { id; }; f",
		"function f {\n id -a\n}",
		"function f { timeout 5 id; }",
		"function f() { id; }",
		"f() { id; }",
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("bash", "-c", script))
			require.Error(t, err, "%v %q", src, script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// The function's name, and its body's arguments, are no program.
	for _, script := range []string{"function id { echo x; }", "function f { echo id; }"} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("bash", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
	out, err := exec.Command("bash", "-c", "function f { echo ran; }; f").Output()
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(out))
}

// TestCheckCmd_ScriptParameters: a shell's -c script that runs one of its
// positional parameters ("$@", "$1" in command position: sh -c 'exec
// "$@"' sh PROGRAM) makes that argument a program, and one that reads a
// parameter as a script (eval "$1", sh -c "$1") makes it a script (found
// by a review: sh -c 'exec "$@"' sh <input> and sh -c 'eval "$1"' sh
// <input> let the input choose the program, or a script).
func TestCheckCmd_ScriptParameters(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"sh", "-c", `exec "$@"`, "sh", "id"}},
		{"id", []string{"sh", "-c", `"$@"`, "sh", "id", "-a"}},
		{"id", []string{"bash", "-c", `cd /srv && "$1" x`, "bash", "id"}},
		{"id", []string{"sh", "-c", `$0 x`, "id"}},
		{"id", []string{"sh", "-c", `"${2}" x`, "sh", "a", "id"}},
		{"id", []string{"sh", "-c", `exec "$@"`, "sh", "timeout", "5", "id"}},
		{"id", []string{"sudo", "sh", "-c", `"$@"`, "sh", "id"}},
		{"x;id", []string{"sh", "-c", `eval "$1"`, "sh", "echo x;id"}},
		{"x;id", []string{"sh", "-c", `eval "echo $1"`, "sh", "x;id"}},
		{"x;id", []string{"sh", "-c", `bash -c "$1"`, "sh", "echo x;id"}},
		{"x;id", []string{"sh", "-c", `bash -c "$0" 'echo x;id'`}},
		{"x;id", []string{"sh", "-c", `sh -c "$1" sh 'echo x;id'`}},
	} {
		for _, src := range sources {
			if !carries(src, c.in) {
				continue
			}
			r, rc := inputAt(t, src, c.in)
			err := CheckCmd(ctxOf(r), cmdOf(c.argv...))
			require.Error(t, err, "%v %q", src, c.argv)
			assertBlocked(t, err, rc, src, c.in, "shell")
		}
	}
	// A parameter the script reads as data, and an unquoted one whose
	// first field alone is the program: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"sh", "-c", `echo "$1"`, "sh", "id"}},
		{"x;id", []string{"sh", "-c", `$1`, "sh", "echo x;id"}},
		{"my file.png", []string{"sh", "-c", `exec "$@"`, "sh", "convert", "my file.png", "out.png"}},
		{"x;id", []string{"sh", "-c", `printf '%s\n' "$@"`, "sh", "x;id"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
	// The shell runs the parameter.
	out, err := exec.Command("sh", "-c", `exec "$@"`, "sh", "echo", "ran").Output()
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(out))
}

// TestCheckCmd_MoreShells: the C shells, other Korn and Bourne shells,
// and a shell named with its version (bash5, bash-5.2, ksh93) run their -c
// script, read as a POSIX one (found by a review: tcsh -c 'echo x;id' and
// /usr/local/bin/bash-5.2 -c 'echo x;id', with the input x;id, were let
// through).
func TestCheckCmd_MoreShells(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"tcsh", "-c", "echo " + in},
		{"csh", "-fc", "echo " + in},
		{"oksh", "-c", "echo " + in},
		{"ksh93", "-c", "echo " + in},
		{"bash5", "-c", "echo " + in},
		{"/usr/local/bin/bash-5.2", "-c", "echo " + in},
		{"zsh-5.9", "-c", "echo " + in},
		{"sudo", "tcsh", "-c", "echo " + in},
		{"sh", "-c", "tcsh -c 'echo " + in + "'"},
		{"sh", "-c", "echo 'echo " + in + "' | tcsh"},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// Other names that end in digits are no shell; a word of the script is
	// data.
	for _, argv := range [][]string{
		{"sha256sum", "in.png"},
		{"convert", "bash5", "in.png"},
		{"tcsh", "-c", "ls -l 'in.png'"},
	} {
		r, rc := inputAt(t, taint.Query, "in.png")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_CoprocNameBody: bash's coproc NAME { …; } runs its body's
// commands: the word after { is a program, as after coproc (found by a
// review: bash -c "coproc N { id; }" with the input id, and eval's,
// trap's and ssh's scripts in such a body, were let through: NAME was
// taken for the program and the body for its arguments).
func TestCheckCmd_CoprocNameBody(t *testing.T) {
	for _, c := range []struct{ in, script string }{
		{"id", "coproc N { id; }"},
		{"id", "coproc N { timeout 5 id; }"},
		{"id", "coproc N  {  id x; }"},
		{"x;id", "coproc N { eval 'echo x;id'; }"},
		{"x;id", "coproc N { ssh h 'echo x;id'; }"},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		err := CheckCmd(ctxOf(r), cmdOf("bash", "-c", c.script))
		require.Error(t, err, "%q", c.script)
		assertBlocked(t, err, rc, taint.Query, c.in, "shell")
	}
	out, err := exec.Command("bash", "-c", "coproc N { echo ran; }; read -r l <&\"${N[0]}\"; echo \"$l\"").Output()
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(out))
	// coproc NAME with a simple command runs NAME; the body's arguments
	// are data.
	for _, c := range []struct{ in, script string }{
		{"in.png", "coproc N in.png"},
		{"in.png", "coproc N { convert in.png out.png; }"},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("bash", "-c", c.script)), "%q", c.script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_FindDashDash: find's "--" ends only its leading options
// (-H, -L, -P, -D, -O); what follows is still its expression, and -exec's
// program reads its own options (found by a review: `find -- <input>`
// with the input -delete deleted the folder, `find -- . -exec git clone
// <input> …` ran --upload-pack, both let through as after a "--").
func TestCheckCmd_FindDashDash(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"-delete", []string{"find", "--", "-delete"}},
		{"-fprint", []string{"find", "--", "-fprint", "/srv/x"}},
		{"--upload-pack=touch /tmp/x", []string{"find", "--", ".", "-exec", "git", "clone", "--upload-pack=touch /tmp/x", "repo", "dst", ";"}},
		{"--upload-pack=touch /tmp/x", []string{"find", ".", "-exec", "grep", "--", "x", "{}", ";", "-exec", "git", "clone", "--upload-pack=touch /tmp/x", ";"}},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, c.in)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), rc, src, c.in, "shell")
		}
	}
	// Still an operand: after the program's own "--" where the program is
	// no wrapper.
	r, _ := inputAt(t, taint.Query, "--x")
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("grep", "--", "--x", "file")))
}

// TestCheckCmd_WrapperDashDashInScript: in a script, as in the arguments,
// a wrapper's "--" ends its own options, not its program's, and find's
// only its leading ones (found by a review: `sh -c "timeout -- 5 git
// clone '<input>' …"` with --upload-pack=CMD ran CMD, let through as an
// operand after "--").
func TestCheckCmd_WrapperDashDashInScript(t *testing.T) {
	const in = "--upload-pack=touch /tmp/x"
	for _, script := range []string{
		"timeout -- 5 git clone '" + in + "' repo dst",
		"sudo -- git clone '" + in + "' repo dst",
		"env -- git clone \"" + in + "\" repo dst",
		"nice -- git clone '" + in + "'",
		"x=1 'timeout' -- 5 git clone '" + in + "'",
		"cd /srv && find -- . -exec git clone '" + in + "' {} \\;",
		"find -- '-delete'",
	} {
		v := in
		if strings.Contains(script, "-delete") {
			v = "-delete"
		}
		for _, src := range sources {
			r, rc := inputAt(t, src, v)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), rc, src, v, "shell")
		}
	}
	// The program's own "--", where the program is no wrapper: an operand.
	for _, script := range []string{
		"git clone -- repo '" + in + "'",
		"timeout 5 true; git clone -- repo '" + in + "'",
	} {
		r, _ := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), script)
	}
}

// TestCheckCmd_DashDashAroundAShellScript: the words after a shell's -c
// script are its $0 and positional parameters, a "--" among them too,
// and a "--" before the script ends only the shell's options: an input
// after either is a parameter the script may pass as an option, blocked
// as one without the "--" is (found by a review: `sh -c 'git clone "$1"
// dst' -- <input>`, where $0 is "--", ran --upload-pack=CMD).
func TestCheckCmd_DashDashAroundAShellScript(t *testing.T) {
	const in = "--upload-pack=touch /tmp/x"
	for _, argv := range [][]string{
		{"sh", "-c", `git clone "$1" dst`, "--", in},
		{"bash", "-c", `git clone "$@"`, "--", in},
		{"sh", "-c", "--", `git clone "$1"`, "sh", in},
		{"dash", "-ec", `git clone $1`, "sh", "--", in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, src, in, "shell")
		}
	}
	// Another program's "--" still ends its options.
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("git", "clone", "--", "repo", in)))
}

// TestCheckCmd_DashDashAroundAShellScriptInAScript: as in the arguments
// (TestCheckCmd_DashDashAroundAShellScript), a "--" among a nested
// shell's words is no end of its parameters' options (found by a review:
// `bash -c "sh -c 'git clone \"$1\"' -- '<input>'"` was let through).
func TestCheckCmd_DashDashAroundAShellScriptInAScript(t *testing.T) {
	const in = "--upload-pack=touch /tmp/x"
	for _, script := range []string{
		`sh -c 'git clone "$1"' -- '` + in + `'`,
		`sh -c -- 'git clone "$1"' sh '` + in + `'`,
		`bash ./clone.sh -- '` + in + `'`,
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf("bash", "-c", script)), rc, src, in, "shell")
		}
	}
}

// TestCheckCmd_PathNamesAnotherProgram: the program that runs is
// cmd.Path; an Args[0] that names another (a process name for ps) is no
// reason to read the command as that program's (found by a review:
// Path /bin/sh with Args[0] "worker" ran `-c 'echo <input>'` unchecked as
// a script, and a wrapper's or interpreter's arguments likewise).
func TestCheckCmd_PathNamesAnotherProgram(t *testing.T) {
	for _, c := range []struct {
		in   string
		path string
		args []string
	}{
		{"x; id", "/bin/sh", []string{"worker", "-c", "echo x; id"}},
		{"x y", "/usr/bin/timeout", []string{"t", "5", "x y"}},
		{"x');import os;os.system('id');('", "/usr/bin/python3", []string{"py", "-c", "print('x');import os;os.system('id');('')"}},
	} {
		for _, src := range sources {
			if !carries(src, c.in) {
				continue
			}
			r, rc := inputAt(t, src, c.in)
			cmd := &exec.Cmd{Path: c.path, Args: c.args}
			assertBlocked(t, CheckCmd(ctxOf(r), cmd), rc, src, c.in, "shell")
		}
	}
	// Args[0] is read too: busybox runs the applet it names.
	r, _ := inputAt(t, taint.Query, "x; id")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: []string{"sh", "-c", "echo x; id"}}), ErrBlocked)
	// The same program, named as the application wrote it: one reading.
	r, _ = inputAt(t, taint.Query, "x y")
	assert.NoError(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/usr/bin/convert", Args: []string{"convert", "x y", "out.png"}}))
}

// TestCheckCmd_MultiCallPathRunsItsApplet: a multi-call binary (busybox,
// toybox) run by its path with an applet's name as Args[0] runs that
// applet, not its first argument: the command is read by Args[0] only
// (found by a review: Path /bin/busybox, Args ["cat", <input>] was read
// as `busybox <input>`, the input choosing the applet, and blocked).
func TestCheckCmd_MultiCallPathRunsItsApplet(t *testing.T) {
	for _, c := range []struct {
		in   string
		path string
		args []string
	}{
		{"hello.txt", "/bin/busybox", []string{"cat", "hello.txt"}},
		{"hello.txt", "/bin/busybox", []string{"gzip", "hello.txt"}},
		{"https://example.com/a.tgz", "/bin/busybox", []string{"wget", "https://example.com/a.tgz"}},
		{"hello.txt", "/usr/bin/toybox", []string{"cat", "hello.txt"}},
	} {
		r, _ := inputAt(t, taint.Query, c.in)
		assert.NoError(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: c.path, Args: c.args}), "%q", c.args)
	}
	// Args[0] still decides: input as the applet's script or program.
	r, _ := inputAt(t, taint.Query, "x; id")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: []string{"sh", "-c", "echo x; id"}}), ErrBlocked)
	r, _ = inputAt(t, taint.Query, "hello")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: []string{"timeout", "5", "hello"}}), ErrBlocked)
	// Named busybox itself (or busybox.static), its first argument is the applet.
	r, _ = inputAt(t, taint.Query, "hello")
	assert.ErrorIs(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: []string{"busybox.static", "hello"}}), ErrBlocked)
}

// TestCheckCmd_DashDashBeforeAShellsScriptFile: a "--" before a shell's
// script file (or -s, the script read from stdin) ends only the shell's
// options: the words after the file are the script's parameters, as they
// are without the "--", where an input that starts with "-" is blocked
// (found by a review: `bash -- deploy.sh <input>` and `sh -s -- <input>`
// were let through in the arguments, though blocked without the "--",
// and `bash -- deploy.sh <input>` in a script is blocked).
func TestCheckCmd_DashDashBeforeAShellsScriptFile(t *testing.T) {
	const in = "--upload-pack=touch /tmp/x"
	for _, argv := range [][]string{
		{"bash", "--", "deploy.sh", in},
		{"sh", "-e", "--", "deploy.sh", in},
		{"sh", "-s", "--", in},
		{"/bin/dash", "--", "deploy.sh", "repo", in},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, src, in, "shell")
		}
		// As in a script.
		r, _ := inputAt(t, taint.Query, in)
		script := strings.Join(argv[:len(argv)-1], " ") + " '" + in + "'"
		assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), ErrBlocked, script)
	}
	// A wrapper's program's "--" still ends its options, another
	// program's too.
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("git", "clone", "--", "repo", in)))
}

// TestCheckCmd_DashDashAfterAShellsScriptFile: a "--" after a shell's
// script file is the script's, and ends its options as another
// program's does (bash deploy.sh -- <input>).
func TestCheckCmd_DashDashAfterAShellsScriptFile(t *testing.T) {
	const in = "-photo.jpg"
	for _, argv := range [][]string{
		{"bash", "deploy.sh", "--", in},
		{"sh", "-e", "--", "deploy.sh", "--", in},
		{"bash", "-o", "pipefail", "deploy.sh", "--", in},
		{"/bin/dash", "--norc", "-", "deploy.sh", "repo", "--", in},
	} {
		r, _ := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
	}
	// Of a script read from -c or stdin, or of fish, "--" is a parameter.
	for _, argv := range [][]string{
		{"sh", "-s", "--", "--", in},
		{"sh", "-c", `rm "$@"`, "sh", "--", in},
		{"fish", "deploy.fish", "--", in},
		{"bash", "--rcfile", "deploy.sh", "--", in},
	} {
		r, _ := inputAt(t, taint.Query, in)
		assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf(argv...)), ErrBlocked, "%q", argv)
	}
}

// TestCheckCmd_FishOptionsWithAValue: fish's options that take a value
// (-d CATS, -p FILE, --features F, …) before -c left its script unread,
// the value taken for a script file, and its -C (--init-command) commands,
// which run before the script, were never read (found by a review:
// `fish -d all -c 'echo <input>'` and `fish -C 'echo <input>'` ran
// `x; id`).
func TestCheckCmd_FishOptionsWithAValue(t *testing.T) {
	const in = "x; id"
	for _, argv := range [][]string{
		{"fish", "-d", "all", "-c", "echo x; id"},
		{"fish", "-p", "/tmp/prof", "-c", "echo x; id"},
		{"fish", "--features", "qmark-noglob", "-c", "echo x; id"},
		{"fish", "--feat", "qmark-noglob", "-c", "echo x; id"},
		{"fish", "-id", "all", "-c", "echo x; id"},
		{"fish", "-C", "echo x; id"},
		{"fish", "-Cecho x; id"},
		{"fish", "--init-command", "echo x; id", "-c", "true"},
		{"fish", "--init-command=echo x; id", "deploy.fish"},
		{"fish", "-c", "true", "-C", "echo x; id"},
		{"env", "fish", "-N", "-C", "echo x; id"},
		{"sh", "-c", `fish -C "echo x; id"`},
		{"sh", "-c", `fish "-Cecho x; id"`},
		{"sh", "-c", `fish --init-command="echo x; id"`},
		{"sh", "-c", `fish -d all -C 'set a 1' -c "echo x; id"`},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, src, in, "shell")
		}
	}
	// Quoted, the input is data, as in any fish script.
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "-d", "all", "-C", "set -g a 1", "-c", "echo 'x; id'")))
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "-C", "echo 'x; id'")))
}

// TestCheckCmd_FishCommandAbbreviated: fish reads its long options with
// getopt_long, which takes any abbreviation of one: --comm, --co, even
// --c are --command (no other long option of fish starts with "c"), and
// the script after them was taken for an option's value, never read
// (`fish --comm "echo <input>"` with x; id ran id, let through).
func TestCheckCmd_FishCommandAbbreviated(t *testing.T) {
	const in = "x; id"
	for _, argv := range [][]string{
		{"fish", "--comm", "echo x; id"},
		{"fish", "--co", "echo x; id"},
		{"fish", "--c", "echo x; id"},
		{"fish", "--comm=echo x; id"},
		{"fish", "-d", "all", "--comma", "echo x; id"},
		{"sh", "-c", `fish --comm 'echo x; id'`},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "--comm", "echo 'x; id'")))
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "--comm", "echo $argv", in)))
}

// TestCheckCmd_FishCommandAttached: fish's -c takes its script as the
// rest of its word too (getopt's "c:"), as -C does: `fish "-cecho
// <input>"` ran the script, which was never read (the next word, none,
// was taken for it).
func TestCheckCmd_FishCommandAttached(t *testing.T) {
	const in = "x; id"
	for _, argv := range [][]string{
		{"fish", "-cecho x; id"},
		{"fish", "-icecho x; id"},
		{"fish", "-cecho x; id", "y"},
		{"sh", "-c", `fish -c'echo x; id'`},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "-cecho 'x; id'")))
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("fish", "-cecho $argv", in)))
}

// TestCheckCmd_MultiCallLoginName: busybox drops a leading "-" from its
// name before it looks up the applet (a login shell's "-sh"), then reads
// it as Args[0] says: exec.Cmd{Path: "/bin/busybox", Args: ["-sh", "-c",
// "echo <input>"]} runs sh, and was read by Args[0] only (be8b44a) as a
// program "-sh" no check knows: let through with x; id.
func TestCheckCmd_MultiCallLoginName(t *testing.T) {
	for _, args := range [][]string{
		{"-sh", "-c", "echo x; id"},
		{"-ash", "-c", "echo x; id"},
		{"-/bin/sh", "-c", "echo x; id"},
		{"-busybox", "sh", "-c", "echo x; id"},
	} {
		r, _ := inputAt(t, taint.Query, "x; id")
		assert.ErrorIs(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: args}), ErrBlocked, "%q", args)
	}
	r, _ := inputAt(t, taint.Query, "hello.txt")
	assert.NoError(t, CheckCmd(ctxOf(r), &exec.Cmd{Path: "/bin/busybox", Args: []string{"-cat", "hello.txt"}}))
}

// TestCheckCmd_FishInitCommandAfterAnUnknownWord: in a script, a word
// whose value is not known ($FLAGS) ended the scan for fish's -C
// commands, though it may be an option (-N, -d all): `fish $F -C "echo
// <input>"` with x; id, F=-N, ran id, let through (posix() skips -C's
// value as an option's, and found no script).
func TestCheckCmd_FishInitCommandAfterAnUnknownWord(t *testing.T) {
	const in = "x; id"
	for _, script := range []string{
		`fish $F -C "echo x; id"`,
		`fish -N $X -C "echo x; id"`,
		`fish $F --init-command="echo x; id"`,
		`fish "$@" -C "echo x; id"`,
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), rc, taint.Query, in, "shell")
	}
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", `fish $F -C "echo 'x; id'"`)))
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", `fish $F deploy.fish "$1"`, "sh", in)))
}

// TestCheckCmd_AttachedOptionName: zsh and the Korn shells read the rest
// of an -o word as the option's name (-oerrexit), not the next word, and
// their -O takes none: `zsh -oerrexit -c "echo <input>"` with x; id ran
// id, let through, as the check took "-c" for -o's value and never read
// the script (so did zsh -O -c, ksh -oerrexit -c).
func TestCheckCmd_AttachedOptionName(t *testing.T) {
	const in = "x; id"
	for _, argv := range [][]string{
		{"zsh", "-oerrexit", "-c", "echo x; id"},
		{"zsh", "+oerrexit", "-c", "echo x; id"},
		{"zsh", "-O", "-c", "echo x; id"},
		{"ksh", "-oerrexit", "-c", "echo x; id"},
		{"mksh", "-oerrexit", "-c", "echo x; id"},
		{"sh", "-c", `zsh -oerrexit -c 'echo x; id'`},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
	// The next word, where -o ends its word, and in bash wherever it is.
	for _, argv := range [][]string{
		{"zsh", "-o", "errexit", "-c", "echo x; id"},
		{"zsh", "-eo", "errexit", "-c", "echo x; id"},
		{"zsh", "-co", "errexit", "echo x; id"},
		{"bash", "-eo", "pipefail", "-c", "echo x; id"},
		{"bash", "-O", "extglob", "-c", "echo x; id"},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("zsh", "-oerrexit", "-c", "echo 'x; id'")))
}

// TestCheckCmd_AttachedOptionNameBeforeAScriptFile: shellScriptFile read
// zsh's and the Korn shells' -oNAME (and -O) as taking the next word, as
// bash's -o does, where posix() reads them as those shells do: the
// script file was skipped as -o's value, and its "--" taken for the
// shell's. `zsh -oerrexit deploy.zsh -- -photo.jpg` was blocked (the
// "--" is the script's, as without -oerrexit), and `zsh -O -s -- x --
// <input>` let an input starting with "-" through as an operand, blocked
// without -O (the "--" after x is a parameter of the stdin script).
func TestCheckCmd_AttachedOptionNameBeforeAScriptFile(t *testing.T) {
	const in = "-photo.jpg"
	for _, argv := range [][]string{
		{"zsh", "-oerrexit", "deploy.zsh", "--", in},
		{"ksh", "-O", "deploy.ksh", "--", in},
		{"zsh", "-o", "errexit", "deploy.zsh", "--", in},
		{"bash", "-eo", "pipefail", "deploy.sh", "--", in},
	} {
		r, _ := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
	}
	for _, argv := range [][]string{
		{"zsh", "-s", "--", "x", "--", in},
		{"zsh", "-O", "-s", "--", "x", "--", in},
		{"zsh", "-oerrexit", "-s", "--", "x", "--", in},
		{"mksh", "-oerrexit", "-s", "--", "x", "--", in},
		{"bash", "-O", "extglob", "-s", "--", "x", "--", in},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
}
