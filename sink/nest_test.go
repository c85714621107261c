package sink

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// sq quotes s for a POSIX shell, in single quotes.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestCheckCmd_Nested: a shell started inside a script (sh -c "sh -c
// '…'"), behind a wrapper (sudo, timeout), or a program that runs an
// argument as a shell script (su -c, runuser -c, watch, ssh's remote
// command, env -S, flock -c), in a script or as argv, has its script read
// again with the same checks (found by a review: with the input x;id,
// sh -c "sh -c 'echo x;id'", su -c 'echo x;id' bob, watch 'echo x;id' and
// ssh host 'echo x;id' were let through: the input was the literal text of
// one word of the outer script, or no script was read at all).
func TestCheckCmd_Nested(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"sh", "-c", "sh -c 'echo " + in + "'"},
		{"sh", "-c", `bash -c "echo ` + in + `"`},
		{"sh", "-c", "sudo sh -c 'echo " + in + "'"},
		{"sh", "-c", "sudo -u bob bash -c 'echo " + in + "'"},
		{"sh", "-c", "timeout 5 sh -c 'echo " + in + "'"},
		{"sh", "-c", "echo \"$(sh -c 'echo " + in + "')\""},
		{"sh", "-c", "sh -ec 'echo " + in + "' name"},
		{"bash", "-c", "dash -c $'echo " + in + "'"},
		{"sh", "-c", `sh -c echo\ x\;id`}, // escaped for the outer shell only
		{"sh", "-c", "busybox sh -c 'echo " + in + "'"},
		{"sudo", "sh", "-c", "sh -c 'echo " + in + "'"},
		{"sh", "-c", "sh -c \"sh -c 'echo " + in + "'\""},
		{"su", "-c", "echo " + in, "bob"},
		{"su", "bob", "-c", "echo " + in},
		{"su", "-l", "bob", "--command", "echo " + in},
		{"su", "--command=echo " + in, "bob"},
		{"su", "-lc", "echo " + in, "bob"},
		{"su", "-s", "/bin/sh", "-c", "echo " + in, "bob"},
		{"su", "bob", "--", "-c", "echo " + in},
		{"sudo", "su", "-c", "echo " + in},
		{"runuser", "-c", "echo " + in, "bob"},
		{"runuser", "-l", "bob", "-c", "echo " + in},
		{"sh", "-c", "su -c 'echo " + in + "' bob"},
		{"sh", "-c", "su bob -c 'echo " + in + "'"},
		{"sh", "-c", "sudo su - bob -c 'echo " + in + "'"},
		{"sh", "-c", "runuser -u root -- sh -c 'echo " + in + "'"},
		{"watch", "echo " + in},
		{"watch", "-n", "5", "echo", in},
		{"watch", "-d", "-n5", "--", "echo " + in},
		{"timeout", "60", "watch", "echo " + in},
		{"sh", "-c", "watch 'echo " + in + "'"},
		{"sh", "-c", "watch -n 1 echo '" + in + "'"},
		{"ssh", "host", "echo " + in},
		{"ssh", "host", "echo", in},
		{"ssh", "-p", "22", "-i", "key", "bob@host", "echo " + in},
		{"ssh", "host", "-l", "bob", "echo " + in},
		{"ssh", "-T", "host", "--", "echo " + in},
		{"timeout", "5", "ssh", "host", "echo " + in},
		{"sh", "-c", "ssh host 'echo " + in + "'"},
		{"sh", "-c", "ssh -o BatchMode=yes host echo '" + in + "'"},
		{"sh", "-c", "sudo -u deploy ssh \"$HOST\" 'echo " + in + "'"},
		{"sh", "-c", "env -S 'echo " + in + "'"},
		{"sh", "-c", "flock /tmp/lock -c 'echo " + in + "'"},
		{"env", "-S", "sh -c 'echo " + in + "'"},
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
	// What was blocked before the nested reading still is: a wrapper's
	// command line read as env reads it (-i, then the program), the
	// option before it, an argument that is an option.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"sh", "-c", "env -S '-i id'"}},
		{"id", []string{"sh", "-c", "env -S '-u HOME A=1 id x'"}},
		{"id", []string{"sh", "-c", "env --split-string='-i id'"}},
		{"split-string=id", []string{"sh", "-c", "env --split-string=id"}},
		{"-la", []string{"ssh", "host", "echo -- x", "-la"}},
		{"-la", []string{"watch", "ls", "'", "-la"}},
		{"-x", []string{"su", "bob", "-c", "-x"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		err := CheckCmd(ctxOf(r), cmdOf(c.argv...))
		require.Error(t, err, "%q", c.argv)
		assertBlocked(t, err, rc, taint.Query, c.in, "shell")
	}
	// The attack runs when the check is skipped, and is blocked when it is
	// made.
	marker := filepath.Join(t.TempDir(), "pwned")
	in2 := "x;touch " + marker
	for _, argv := range [][]string{
		{"sh", "-c", "sh -c 'echo " + in2 + "'"},
		{"sh", "-c", `bash -c "echo ` + in2 + `"`},
		{"sh", "-c", "timeout 5 sh -c 'echo " + in2 + "'"},
		{"sh", "-c", "sh -c echo\\ " + strings.ReplaceAll(strings.ReplaceAll(in2, ";", `\;`), " ", `\ `)},
		{"sh", "-c", "flock " + filepath.Join(t.TempDir(), "lock") + " -c 'echo " + in2 + "'"},
	} {
		r, _ := inputAt(t, taint.Query, in2)
		_, err := Command(ctxOf(r), argv[0], argv[1:]...)
		require.ErrorIs(t, err, ErrBlocked, "%q", argv)
		cmd, err := Command(context.Background(), argv[0], argv[1:]...)
		require.NoError(t, err)
		require.NoError(t, cmd.Run(), "%q", argv)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "the shell ran the input in %q", argv)
		require.NoError(t, os.Remove(marker))
	}
}

// TestCheckCmd_NestedBenign: an input that is the literal text of one
// word of the nested script, as the check reads it at one level, is data
// there too: it is let through, and the command runs.
func TestCheckCmd_NestedBenign(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"hello", []string{"sh", "-c", "sh -c 'echo hello'"}},
		{"hello", []string{"sh", "-c", `bash -c "echo hello"`}},
		{"my file.txt", []string{"sh", "-c", `bash -c "echo 'my file.txt'"`}},
		{"a b; c", []string{"sh", "-c", `sh -c "printf '%s\n' 'a b; c'"`}},
		{"hello", []string{"sh", "-c", "timeout 5 sh -c 'echo hello'"}},
		{"hello", []string{"sh", "-c", "env -S 'echo hello'"}},
		{"hello", []string{"sh", "-c", "flock " + filepath.Join(t.TempDir(), "lock") + " -c 'echo hello'"}},
		{"hello", []string{"sh", "-c", "sh -c \"sh -c 'echo hello'\""}},
		{"hello", []string{"sh", "-c", "echo sh; echo hello"}},
		{"in.png", []string{"su", "-c", "convert in.png out.png", "bob"}},
		{"in.png", []string{"sh", "-c", "su bob -c 'convert in.png out.png'"}},
		{"in.png", []string{"watch", "-n", "5", "ls", "in.png"}},
		{"in.png", []string{"ssh", "-p", "22", "host", "ls", "in.png"}},
		{"in.png", []string{"sh", "-c", "ssh \"$HOST\" 'ls in.png'"}},
		{"bob", []string{"su", "-c", "id", "bob"}},
		{"host.example.com", []string{"ssh", "host.example.com", "uptime"}},
	} {
		for _, src := range sources {
			if !carries(src, c.in) {
				continue
			}
			r, rc := inputAt(t, src, c.in)
			require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%v %q", src, c.argv)
			assert.Empty(t, rc.all())
		}
		if c.argv[0] != "sh" || strings.ContainsAny(c.argv[2], "$") || strings.Contains(c.argv[2], "su ") || strings.Contains(c.argv[2], "ssh ") {
			continue
		}
		out, err := exec.Command(c.argv[0], c.argv[1:]...).Output()
		require.NoError(t, err, "%q", c.argv)
		assert.Contains(t, string(out), c.in, "%q", c.argv)
	}
}

// nestSh is script nested in depth shells: sh -c '… sh -c '"'"'echo …'.
func nestSh(script string, depth int) string {
	for i := 0; i < depth; i++ {
		script = "sh -c " + sq(script)
	}
	return script
}

// TestCheckCmd_NestedDepth: scripts are read to maxNestDepth levels below
// the command's own; past it, any input in the word is blocked.
func TestCheckCmd_NestedDepth(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "hello")
	for d := 1; d <= maxNestDepth; d++ {
		script := nestSh("echo hello", d)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%d: %s", d, script)
		out, err := exec.Command("sh", "-c", script).Output()
		require.NoError(t, err)
		assert.Equal(t, "hello\n", string(out))
	}
	script := nestSh("echo hello", maxNestDepth+1)
	err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
	require.ErrorIs(t, err, ErrBlocked, script)
	assert.Contains(t, err.Error(), "nested")
	r, _ = inputAt(t, taint.Query, "x;id")
	for d := 1; d <= maxNestDepth+2; d++ {
		assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", nestSh("echo x;id", d))), ErrBlocked, d)
	}
	// An input not in the nested script is not blocked at any depth.
	r, _ = inputAt(t, taint.Query, "other")
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", nestSh("echo hello", maxNestDepth+3))))
}

// TestCheckCmd_NestedUnknown: a nested script whose value the check
// cannot know (an expansion of the outer shell's in it) is not read: any
// input in it is blocked.
func TestCheckCmd_NestedUnknown(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "hello")
	for _, script := range []string{
		`sh -c "echo $X hello"`,
		`su -c "echo $X hello" bob`,
		`ssh host "$CMD" hello`,
		`env -S "echo $X hello"`,
	} {
		err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
		require.ErrorIs(t, err, ErrBlocked, script)
	}
}

// TestCheckCmd_NestedBounded: a script of many nested shells, each
// holding the input, is read within the check's budgets: past the depth,
// and past maxNestBytes of nested text, the input is blocked.
func TestCheckCmd_NestedBounded(t *testing.T) {
	// Each level holds the one below twice: 2 MB of text.
	script := "echo hello"
	for i := 0; i < 8; i++ {
		script = "sh -c " + sq(script) + " ; bash -c " + sq(script)
	}
	r, _ := inputAt(t, taint.Query, "hello")
	err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
	require.ErrorIs(t, err, ErrBlocked)
	assert.Contains(t, err.Error(), "nested")
	// The same nested script many times is read once.
	words := strings.Repeat("sh -c 'echo hello' ; ", 20000)
	assert.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", words)))
	// Many different ones: past maxNestBytes, over budget.
	var b strings.Builder
	for i := 0; b.Len() < maxNestBytes+maxNestBytes/4; i++ {
		fmt.Fprintf(&b, "sh -c 'echo hello %d %s';", i, strings.Repeat("x", 100))
	}
	err = CheckCmd(ctxOf(r), cmdOf("sh", "-c", b.String()))
	require.ErrorIs(t, err, ErrBlocked)
	assert.Contains(t, err.Error(), "too much input")
}

// TestCheckCmd_NestedShellVariable: a shell named by a variable that
// names one ($SHELL, $BASH, $ZSH_NAME) is a shell: its -c script is read
// (found by a review: with the input x;id, $SHELL -c 'echo x;id' and
// ${SHELL} -c … were let through: the program's name was an expansion,
// not known, and its script was not read). Other variables ($CC -c
// file.c) are not.
func TestCheckCmd_NestedShellVariable(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"$SHELL -c 'echo " + in + "'",
		"${SHELL} -c 'echo " + in + "'",
		`"$SHELL" -c 'echo ` + in + `'`,
		`"${SHELL}" -lc 'echo ` + in + `'`,
		"${SHELL:-/bin/sh} -c 'echo " + in + "'",
		"$BASH -c 'echo " + in + "'",
		"${ZSH_NAME} -c 'echo " + in + "'",
		"sudo -u bob $SHELL -c 'echo " + in + "'",
		"exec $SHELL -c 'echo " + in + "'",
		"x=$($SHELL -c 'echo " + in + "')",
		"echo 'echo " + in + "' | $SHELL",
		"$SHELL <<< 'echo " + in + "'",
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%v %q", src, script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// The attack runs when the check is skipped.
	marker := filepath.Join(t.TempDir(), "pwned")
	script := "SHELL=/bin/sh; $SHELL -c 'echo x;touch " + marker + "'"
	r, _ := inputAt(t, taint.Query, "x;touch "+marker)
	require.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), ErrBlocked)
	require.NoError(t, exec.Command("sh", "-c", script).Run())
	_, err := os.Stat(marker)
	require.NoError(t, err)

	for _, c := range [][2]string{
		{"file.c", "$CC -c file.c -o file.o"},
		{"x;id", "$CC -c 'x;id'"},
		{"hello", "$SHELL -c 'echo hello'"},
		{"hello", `"$SHELL" ./script.sh hello`},
		{"hello", "$EDITOR -c 'hello'"},
	} {
		r, rc := inputAt(t, taint.Query, c[0])
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", c[1])), "%q", c[1])
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_NestedSSHOptions: ssh's -o options whose value is a
// command line (ProxyCommand, LocalCommand, RemoteCommand,
// KnownHostsCommand; -o KEY=VALUE, -oKEY=VALUE, KEY VALUE, KEY in any
// case, as ssh reads them) are read as scripts (found by a review: with
// the input x;id, ssh -o ProxyCommand='echo x;id' host was let through:
// the input was data of an option's value; ssh ran it with the shell).
func TestCheckCmd_NestedSSHOptions(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"ssh", "-o", "ProxyCommand=echo " + in, "host"},
		{"ssh", "-oProxyCommand=echo " + in, "host"},
		{"ssh", "-oProxyCommand echo " + in, "host"},
		{"ssh", "-o", "proxycommand = echo " + in, "host"},
		{"ssh", "-o", "LocalCommand=echo " + in, "-o", "PermitLocalCommand=yes", "host"},
		{"ssh", "-o", "RemoteCommand=echo " + in, "host"},
		{"ssh", "-o", "KnownHostsCommand=echo " + in, "host"},
		{"ssh", "-vo", "ProxyCommand=echo " + in, "host"},
		{"ssh", "-TvoProxyCommand=echo " + in, "host"},
		{"ssh", "host", "-o", "ProxyCommand=echo " + in, "uptime"},
		{"timeout", "5", "ssh", "-o", "ProxyCommand=echo " + in, "host"},
		{"sh", "-c", "ssh -o 'ProxyCommand echo " + in + "' host"},
		{"sh", "-c", "ssh -o 'localcommand=echo " + in + "' host"},
		{"sh", "-c", "ssh -oProxyCommand='nc " + in + " 22' host"},
		{"sh", "-c", "sudo ssh -o \"ProxyCommand=echo " + in + "\" host uptime"},
		{"sh", "-c", "ssh \"$OPT\" 'ProxyCommand=echo " + in + "' host"},
		{"sh", "-c", "ssh -o \"ProxyCommand=$P " + in + "\" host"},
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
	// The attack runs when the check is skipped (ssh runs the proxy
	// command before it fails to connect).
	if _, err := exec.LookPath("ssh"); err == nil {
		marker := filepath.Join(t.TempDir(), "pwned")
		in2 := "$(touch " + marker + ")" // ssh runs "exec echo …"
		argv := []string{"ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "ProxyCommand=echo " + in2, "host.invalid", "true"}
		r, _ := inputAt(t, taint.Query, in2)
		_, err := Command(ctxOf(r), argv[0], argv[1:]...)
		require.ErrorIs(t, err, ErrBlocked)
		_ = exec.Command(argv[0], argv[1:]...).Run()
		_, err = os.Stat(marker)
		require.NoError(t, err, "ssh ran the proxy command")
	}
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"bastion.example.com", []string{"ssh", "-o", "ProxyCommand=ssh -W %h:%p bastion.example.com", "host"}},
		{"bastion.example.com", []string{"sh", "-c", "ssh -o 'ProxyCommand ssh -W %h:%p bastion.example.com' host uptime"}},
		{"in.png", []string{"ssh", "-o", "BatchMode=yes", "host", "ls", "in.png"}},
		{"yes;no", []string{"ssh", "-o", "StrictHostKeyChecking=yes;no", "host"}},
		{"hello.example.com", []string{"ssh", "-o", "ProxyJump=hello.example.com", "host"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_NestedWindows: a POSIX shell's script in a cmd /c or
// PowerShell script (bash -c, wsl bash -c) is read as a nested script
// (found by a review: with the input x;id, cmd /c bash -c "echo x;id" was
// let through: the input was the literal text of one word of cmd's
// script, whose words were not read as scripts).
func TestCheckCmd_NestedWindows(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"cmd", "/c", `bash -c "echo ` + in + `"`},
		{"cmd.exe", "/C", `wsl bash -c "echo ` + in + `"`},
		{"cmd", "/c", `wsl -e sh -c "echo ` + in + `"`},
		{"powershell", "-Command", "bash -c 'echo " + in + "'"},
		{"pwsh", "-c", `wsl bash -c "echo ` + in + `"`},
		{"powershell", "-EncodedCommand", encodePS("wsl sh -c 'echo " + in + "'")},
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
	for _, argv := range [][]string{
		{"cmd", "/c", `bash -c "ls in.png"`},
		{"cmd", "/c", `wsl bash -c "convert 'in.png' out.png"`},
		{"powershell", "-Command", "wsl bash -c 'ls in.png'"},
		{"pwsh", "-c", "Get-Item in.png"},
	} {
		r, rc := inputAt(t, taint.Query, "in.png")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_ScansLinear: the scans of a command's su, runuser and
// shell words read each word a bounded number of times, in the arguments,
// in a script and where a piped shell may read its input: each word's scan
// read on to the end (su ×100,000 as argv took 7 s; sh -c 'sh -o sh -o …
// -c hello' 10 s; runuser ×200,000 -u x in a script 33 s). The words read
// are counted, not the time taken.
func TestCheckCmd_ScansLinear(t *testing.T) {
	const n = 20000
	rep := func(w string, k int) string { return strings.Repeat(w, k) }
	argvs := map[string]string{
		"su":            rep("su ", n) + "hello",
		"runuser":       rep("runuser ", n) + "-u x hello",
		"sh -o sh":      "sh " + rep("-o sh ", n) + "hello",
		"sh -c -o sh":   "sh " + rep("-c -o sh ", n) + "hello",
		"su -- -o su":   "su -- " + rep("-o su ", n) + "-c hello",
		"runuser -c su": "runuser " + rep("-c su ", n),
		"su -s su":      rep("su -s su ", n) + "hello",
		"perl -e perl":  "perl " + rep("-w -e perl ", n) + "hello",
		"fish -d fish":  "fish " + rep("-d fish ", n) + "hello",
	}
	for name, argv := range argvs {
		words := strings.Fields(argv)
		ck := shellCheck{args: words}
		ck.findScripts()
		assert.LessOrEqual(t, ck.scan.steps+ck.reads, 8*len(words), "argv %s", name)
	}
	scripts := map[string]string{
		"su":           "su " + rep("su ", n) + "-c hello",
		"runuser":      rep("runuser ", n) + "-u x",
		"sh -o sh":     "sh" + rep(" -o sh", n) + " -c hello",
		"sh -c -o sh":  "sh" + rep(" -c -o sh", n) + " hello",
		"su -s su":     rep("su -s su ", n) + "-c hello",
		"perl -e":      "perl" + rep(" -w -e perl", n) + " hello",
		"fish -d fish": "fish" + rep(" -d fish", n) + " hello",
		// A command of many programs (past the program finder's steps,
		// every word is one), piped: each is asked whether it reads its
		// input.
		"piped su":      "echo x | " + rep("sudo ", maxWrapSteps) + rep("su ", n) + "-c hello",
		"piped sh":      "echo x | " + rep("sudo ", maxWrapSteps) + "sh" + rep(" -o sh", n) + " -c hello",
		"piped python3": "echo x | " + rep("sudo ", maxWrapSteps) + rep("python3 -B ", n),
		"piped fish":    "echo x | " + rep("sudo ", maxWrapSteps) + "fish" + rep(" -d fish", n) + " -c hello",
	}
	for name, text := range scripts {
		sc := lexPOSIX(text)
		sc.nested(func([]int, int, bool, bool, bool) bool { return true })
		sc.fed(0, len(text))
		assert.LessOrEqual(t, sc.scans, 16*len(sc.words), "script %s", name)
	}
	// The verdicts are those of the scans one by one.
	r, _ := inputAt(t, taint.Query, "hello")
	for _, argv := range [][]string{
		{"sh", "-c", "su " + rep("su ", 100) + "-c 'echo x;hello'"},
		{"sh", "-c", "sh" + rep(" -o sh", 100) + " -c 'echo x;hello'"},
		strings.Fields(rep("su ", 100) + "-c x;hello"),
		strings.Fields("sh " + rep("-o sh ", 100) + "-c x;hello"),
		{"sh", "-c", "fish" + rep(" -d fish", 100) + " -C 'echo x;hello'"},
		append(strings.Fields("fish"+rep(" -d fish", 100)+" -C"), "echo x;hello"),
	} {
		assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf(argv...)), ErrBlocked, "%q", argv)
	}
}

// TestCheckCmd_WatchScriptNotProgram: watch runs its operands, joined, as
// sh -c's script; only with -x (--exec) is its first operand the program.
// A quoted command line given to watch was taken for the program, so an
// input with a slash in it, or at its end, was blocked as choosing the
// program (watch -n 5 "ls -l 'uploads/a.png'"); its script reads it as an
// argument. The program is still the script's first word, and with -x
// (or an option the check cannot know) the operand itself.
func TestCheckCmd_WatchScriptNotProgram(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"uploads/a.png", []string{"watch", "-n", "5", "ls -l 'uploads/a.png'"}},
		{"uploads/a.png", []string{"watch", "-n", "5", "ls -l uploads/a.png"}},
		{"a.png", []string{"watch", "-d", "--", "ls -l a.png"}},
		{"uploads/a.png", []string{"sh", "-c", `watch -n 5 "ls -l 'uploads/a.png'"`}},
		{"a.png", []string{"sh", "-c", "watch -n 5 'ls -l a.png'"}},
		{"uploads/a.png", []string{"sudo", "-u", "bob", "watch", "ls -l uploads/a.png"}},
		{"uploads/a.png", []string{"sh", "-c", "timeout 60 watch 'ls -l uploads/a.png'"}},
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, c.in)
			require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%v %q", src, c.argv)
			assert.Empty(t, rc.all())
		}
	}
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"watch", "id"}},
		{"/bin/sh", []string{"watch", "-n", "5", "/bin/sh"}},
		{"id", []string{"watch", "-x", "id"}},
		{"/tmp/x", []string{"watch", "-bx", "/tmp/x", "a"}},
		{"/tmp/x", []string{"watch", "--exec", "/tmp/x"}},
		{"/tmp/x", []string{"watch", "--ex", "/tmp/x"}},
		{"/tmp/x", []string{"watch", "-x", "/tmp/x y"}},
		{"/tmp/x y", []string{"watch", "-x", "/tmp/x y"}},
		{"/tmp/x", []string{"sudo", "watch", "-x", "/tmp/x"}},
		{"/tmp/x", []string{"sh", "-c", "watch -x /tmp/x"}},
		{"/tmp/x", []string{"sh", "-c", "watch $OPTS '/tmp/x y'"}},
		{"/tmp/x", []string{"sh", "-c", "watch -n 1 '/tmp/x y'"}},
		{"id", []string{"sh", "-c", "timeout 5 watch 'id; ls'"}},
		{"x;id", []string{"watch", "echo x;id"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), rc, taint.Query, c.in, "shell")
	}
}

// TestCheckCmd_SuScriptFile: su USER FILE (runuser USER FILE) hands FILE
// to the user's shell, which runs it as its script: it is the program
// (found by a review: exec.Command("su", "bob", input) was let through).
func TestCheckCmd_SuScriptFile(t *testing.T) {
	const in = "x.sh"
	for _, argv := range [][]string{
		{"su", "bob", in},
		{"su", "-", "bob", in},
		{"su", "-l", "bob", in, "arg"},
		{"su", "bob", "-s", "/bin/sh", in},
		{"su", "bob", "-", in},
		{"su", "--", "bob", in},
		{"su", "bob", "--", "-x", in},
		{"su", "-Z", "bob", in}, // an option su does not know: either reading
		{"runuser", "bob", in},
		{"runuser", "-l", "bob", in},
		{"sudo", "su", "bob", in},
		{"sh", "-c", "su bob " + in},
		{"sh", "-c", "su - bob " + in},
		{"sh", "-c", "sudo runuser bob " + in},
		{"sh", "-c", "su \"$U\" " + in},
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
	for _, argv := range [][]string{
		{"su", in},
		{"su", "-", in},
		{"su", "bob", "--", "-c", "cat " + in},
		{"runuser", "-u", "bob", "--", "cat", in},
		{"sh", "-c", "su bob -c 'cat " + in + "'"},
		{"grep", "su", in},
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_WSL: Windows's wsl joins its operands with blanks into a
// command line for the Linux user's shell, and with -e or --exec runs them
// as a program and its arguments (found by a review: wsl echo x;id, with
// the input x;id, and wsl -e <input> were let through).
func TestCheckCmd_WSL(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"wsl", "echo", in},
		{"wsl.exe", "echo " + in},
		{"wsl", "-d", "Ubuntu", "-u", "bob", "--cd", "/srv", "echo", in},
		{"wsl", "--", "echo", in},
		{"wsl", "--distribution=Ubuntu", "ls", "-l", in},
		{"timeout", "5", "wsl", "echo", in},
		{"cmd", "/c", "wsl echo " + in},
		{"powershell", "-Command", "wsl echo '" + in + "'"},
		{"sh", "-c", "wsl echo '" + in + "'"},
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
	for _, argv := range [][]string{
		{"wsl", "id"},
		{"wsl", "-e", "id"},
		{"wsl", "--exec", "id", "-a"},
		{"wsl", "-d", "Ubuntu", "--exec", "id"},
		{"sh", "-c", "wsl -e id"},
	} {
		r, rc := inputAt(t, taint.Query, "id")
		err := CheckCmd(ctxOf(r), cmdOf(argv...))
		require.Error(t, err, "%q", argv)
		assertBlocked(t, err, rc, taint.Query, "id", "shell")
	}
	// The arguments of a program run with -e take no shell; a file name
	// as a word of the command line is data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"x;id", []string{"wsl", "-e", "echo", "x;id"}},
		{"my file.png", []string{"wsl", "--exec", "convert", "my file.png", "out.png"}},
		{"a.png", []string{"wsl", "-d", "Ubuntu", "convert", "a.png", "b.png"}},
		{"a.png", []string{"cmd", "/c", "wsl convert a.png b.png"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_ManyProgramsLinear: a command of many programs (find -exec
// ssh -exec ssh …, or cmd cmd cmd …) is read in linear time and memory:
// each ssh, watch and wsl made the rest of the arguments into a script of
// its own, each script a table the length of the arguments, each su,
// git and ssh read on to the end, and each cmd looked for its /c there
// (40,000 programs took 7 s for git, 36 s for su, 60 s for ssh; 64,000
// cmd 47 s). The words read, and the bytes of the scripts made, are
// counted, not the time taken.
func TestCheckCmd_ManyProgramsLinear(t *testing.T) {
	const n = 20000
	r, _ := inputAt(t, taint.Query, "hello")
	for _, prog := range []string{"ssh", "watch", "wsl", "script", "git", "su", "runuser", "cmd", "sh", "sg", "capsh", "at", "tar", "zip", "rsync", "parallel", "eval", "trap", "alias", "scp", "sftp",
		"sort", "split", "strace", "wget", "python3", "perl", "node", "awk", "deno", "php"} {
		argv := append([]string{"find", "."}, strings.Fields(strings.Repeat(" -exec "+prog, n))...)
		argv = append(argv, "hello")
		size := 0
		for _, a := range argv {
			size += len(a) + 1
		}
		ck := shellCheck{args: argv}
		ck.findScripts()
		assert.LessOrEqual(t, ck.reads+ck.scan.steps, 16*len(argv), "argv %s", prog)
		text := 0
		for _, s := range ck.scripts {
			text += len(s.text)
		}
		assert.LessOrEqual(t, text, maxNestBytes+2*size, "argv %s", prog)
		_ = CheckCmd(ctxOf(r), cmdOf(argv...))

		script := "find ." + strings.Repeat(" -exec "+prog, n) + " hello"
		for _, text := range []string{script, "echo x | " + script} {
			sc := lexPOSIX(text)
			sc.nested(func([]int, int, bool, bool, bool) bool { return true })
			sc.fed(0, len(text))
			assert.LessOrEqual(t, sc.scans, 16*len(sc.words), "script %s", prog)
			_ = CheckCmd(ctxOf(r), cmdOf("sh", "-c", text))
		}
	}
}

// TestCheckCmd_OptionCommandLines: an option of tar, rsync, zip or man
// whose value is a command line the program runs is read as a nested
// script (found by a review: tar --to-command=<input>, tar
// --checkpoint-action=exec=<input>, rsync -e <input>, zip -TT <input> and
// man -P <input> let the input choose a command).
func TestCheckCmd_OptionCommandLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"tar", "-xf", "a.tar", "--to-command=id"}},
		{"id", []string{"tar", "-x", "--to-command", "id", "-f", "a.tar"}},
		{"id", []string{"tar", "-cf", "a.tar", "--checkpoint=1", "--checkpoint-action=exec=id", "x"}},
		{"id", []string{"tar", "-cf", "a.tar", "-I", "id", "x"}},
		{"id", []string{"tar", "-cIid", "-f", "a.tar", "x"}},
		{"id", []string{"tar", "--use-compress-program=id", "-cf", "a.tar", "x"}},
		{"x;id", []string{"tar", "-cf", "a.tar", "--use-compress-program", "zstd -19 x;id", "x"}},
		{"id", []string{"tar", "-cf", "a.tar", "-F", "id", "x"}},
		{"id", []string{"rsync", "-e", "id", "a", "host:b"}},
		{"id", []string{"rsync", "-avze", "id", "a", "host:b"}},
		{"x;id", []string{"rsync", "--rsh=ssh -p 22 x;id", "a", "host:b"}},
		{"id", []string{"rsync", "--rsync-path", "id", "a", "host:b"}},
		{"id", []string{"zip", "-T", "-TT", "id", "a.zip", "x"}},
		{"id", []string{"zip", "--unzip-command=id", "-T", "a.zip", "x"}},
		{"id", []string{"man", "-P", "id", "ls"}},
		{"id", []string{"man", "--pager=id", "ls"}},
		{"id", []string{"man", "--html=id", "ls"}},
		{"id", []string{"timeout", "5", "tar", "-xf", "a.tar", "--to-command=id"}},
		{"id", []string{"sh", "-c", "tar -xf a.tar --to-command=id"}},
		{"x;id", []string{"sh", "-c", "rsync -e 'ssh x;id' a host:b"}},
		{"id", []string{"sh", "-c", "zip -TT id a.zip x"}},
		{"id", []string{"sh", "-c", "man -P id ls"}},
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
	// The archive's and the files' names, a pager's argument, an option
	// the application wrote whose value is not known: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"uploads/a.png", []string{"tar", "-czf", "out.tgz", "uploads/a.png"}},
		{"uploads/a.png", []string{"tar", "-cf", "out.tar", "--checkpoint-action=echo=x", "uploads/a.png"}},
		{"uploads/a.png", []string{"rsync", "-e", "ssh -p 2222", "-av", "uploads/a.png", "host:/srv/"}},
		{"uploads/a.png", []string{"zip", "-T", "out.zip", "uploads/a.png"}},
		{"ls", []string{"man", "--html", "ls"}},
		{"ls", []string{"man", "-P", "cat", "ls"}},
		{"2222", []string{"rsync", "-e", "ssh -p 2222", "a", "host:b"}},
		{"uploads/a.png", []string{"sh", "-c", `tar -czf "$OUT" uploads/a.png`}},
		{"uploads/a.png", []string{"sh", "-c", `rsync -e "$RSH" uploads/a.png host:/srv/`}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_Parallel: GNU parallel runs its command line (its operands
// up to :::) with the shell, and with no command each argument after :::
// is a command line, or, with no arguments either, each line of its input
// (found by a review: parallel 'echo x;id' ::: a, parallel ::: 'echo
// x;id' and echo 'echo x;id' | parallel, with the input x;id, were let
// through).
func TestCheckCmd_Parallel(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"parallel", "echo " + in, ":::", "a"},
		{"parallel", "-j", "4", "--tag", "echo", in, ":::", "a"},
		{"parallel", ":::", "echo " + in},
		{"parallel", "-k", ":::", "true", "echo " + in, ":::", "b"},
		{"nice", "parallel", "echo " + in, ":::", "a"},
		{"sh", "-c", "parallel 'echo " + in + "' ::: a"},
		{"sh", "-c", "parallel ::: 'echo " + in + "'"},
		{"sh", "-c", "echo 'echo " + in + "' | parallel"},
		{"sh", "-c", "echo 'echo " + in + "' | parallel -j 2"},
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
	r, rc := inputAt(t, taint.Query, "id")
	assertBlocked(t, CheckCmd(ctxOf(r), cmdOf("parallel", "id", ":::", "a")), rc, taint.Query, "id", "shell")
	// The arguments after ::: (parallel quotes them), and a word of the
	// command line: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"x;id", []string{"parallel", "echo", ":::", "x;id"}},
		{"my file.png", []string{"parallel", "convert", "{}", "{.}.jpg", ":::", "my file.png"}},
		{"my file.png", []string{"parallel", "--tag", "-j", "2", "convert", "{}", "{.}.jpg", ":::", "my file.png"}},
		{"in.png", []string{"parallel", "convert", "in.png", "{}", ":::", "a", "b"}},
		{"x;id", []string{"sh", "-c", "echo 'x;id' | parallel echo"}},
		{"my file.png", []string{"sh", "-c", "parallel convert {} {.}.jpg ::: 'my file.png'"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_EvalTrapAlias: eval's arguments (joined with blanks),
// trap's action and alias's value are scripts of the shell, read as
// nested scripts (found by a review: sh -c "eval 'echo x;id; ls'", with
// the input x;id, was let through, blocked only where the input happened
// to end eval's first word).
func TestCheckCmd_EvalTrapAlias(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"eval \"echo " + in + "; ls\"",
		"eval echo '" + in + "' ls",
		"eval 'echo' '" + in + "'",
		"command eval 'echo " + in + "; ls'",
		"if true; then eval \"echo " + in + " >/dev/null\"; fi",
		"trap 'echo " + in + "; ls' EXIT",
		"trap -- 'echo " + in + "; ls' EXIT INT",
		"alias x='echo " + in + "; ls'",
		"alias a=ls x='echo " + in + "; ls'",
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
			require.Error(t, err, "%v %q", src, script)
			assertBlocked(t, err, rc, src, in, "shell")
		}
	}
	// A word of their scripts, quoted there, and trap's signals: data.
	for _, script := range []string{
		`eval "convert 'in.png' out.png"`,
		"trap 'rm -f in.png' EXIT",
		"alias conv='convert in.png'",
		"trap - in.png",
		"echo in.png; trap",
		"echo in.png; trap --",
		"echo in.png; eval",
		"echo in.png; alias",
	} {
		r, rc := inputAt(t, taint.Query, "in.png")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
	// The shell runs them so.
	out, err := exec.Command("bash", "-c", "eval echo 'a;echo' ran").Output()
	require.NoError(t, err)
	assert.Equal(t, "a\nran\n", string(out))
}

// TestCheckCmd_GitScpCommandOptions: git's --upload-pack, --receive-pack
// and --exec are command lines git runs, scp's and sftp's -o
// ProxyCommand=… a command line, their -S (and sftp's -D) the program
// they run, their -F ssh's configuration file (found by a review: git
// clone --upload-pack=<input>, scp -o ProxyCommand=<input>, scp -S
// <input> and scp -F <input> were let through; ssh's own were read).
func TestCheckCmd_GitScpCommandOptions(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"id", []string{"git", "clone", "--upload-pack=id", "https://example.com/r.git"}},
		{"touch x", []string{"git", "clone", "--upload-pack", "touch x", "r"}},
		{"touch x", []string{"git", "ls-remote", "--upl=touch x", "r"}},
		{"touch x", []string{"git", "push", "--receive-pack=touch x", "origin"}},
		{"touch x", []string{"git", "archive", "--exec=touch x", "--remote=r"}},
		{"touch x", []string{"scp", "-o", "ProxyCommand=touch x", "a", "h:b"}},
		{"touch x", []string{"scp", "-oProxyCommand touch x", "a", "h:b"}},
		{"touch x", []string{"sftp", "-P", "22", "-o", "ProxyCommand=touch x", "h"}},
		{"id", []string{"scp", "-S", "id", "a", "h:b"}},
		{"id", []string{"scp", "-qSid", "a", "h:b"}},
		{"id", []string{"sftp", "-D", "id", "h"}},
		{"uploads/x.conf", []string{"scp", "-F", "uploads/x.conf", "a", "h:b"}},
		{"touch x", []string{"sh", "-c", "git clone --upload-pack='touch x' r"}},
		{"touch x", []string{"sh", "-c", "scp -o 'ProxyCommand=touch x' a h:b"}},
		{"id", []string{"sh", "-c", "scp -S id a h:b"}},
		{"uploads/x.conf", []string{"sh", "-c", "sftp -F uploads/x.conf h"}},
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
	// The files copied, a branch pushed, git push -u, another -o: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"uploads/a.png", []string{"scp", "-P", "2222", "-o", "BatchMode=yes", "uploads/a.png", "h:/srv/"}},
		{"uploads/a.png", []string{"sftp", "-b", "/srv/batch", "h"}},
		{"feature-x", []string{"git", "push", "-u", "origin", "feature-x"}},
		{"feature-x", []string{"git", "push", "--receive-pack=git-receive-pack", "origin", "feature-x"}},
		{"uploads/a.png", []string{"sh", "-c", "scp -o BatchMode=yes uploads/a.png h:/srv/"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_CapshShell: capsh --shell=PROGRAM runs PROGRAM for its
// "--" and "==" in place of /bin/bash: the input there is the program
// (found by review: capsh --shell=<input> -- -c id ran the input).
func TestCheckCmd_CapshShell(t *testing.T) {
	for _, argv := range [][]string{
		{"capsh", "--shell=id", "--", "-c", "true"},
		{"capsh", "--user=bob", "--shell=id", "=="},
		{"sudo", "capsh", "--shell=id", "--"},
		{"sh", "-c", "capsh --shell=id -- -c true"},
		{"sh", "-c", "sh -c 'capsh --shell=id --'"},
	} {
		for _, src := range sources {
			if !carries(src, "id") {
				continue
			}
			r, rc := inputAt(t, src, "id")
			err := CheckCmd(ctxOf(r), cmdOf(argv...))
			require.Error(t, err, "%v %q", src, argv)
			assertBlocked(t, err, rc, src, "id", "shell")
		}
	}
	// Its other options' values, and bash's arguments after "--": data.
	for _, argv := range [][]string{
		{"capsh", "--user=id", "--", "-c", "true"},
		{"capsh", "--shell=/bin/bash", "--", "-c", "echo \"$1\"", "sh", "id"},
		{"sh", "-c", "capsh --shell=/bin/sh -- -c 'echo \"$1\"' sh id"},
	} {
		r, rc := inputAt(t, taint.Query, "id")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_NestedWindowsShells: cmd's and PowerShell's own scripts in
// a script (cmd /c "cmd /c …", powershell -c "…" in cmd or PowerShell,
// PowerShell's Invoke-Expression of a string) are read as nested scripts
// of their shell (found by a review: pwsh -c "iex 'echo x;whoami'" and
// cmd /c 'cmd /c "echo x & whoami"', with the input the inner shell runs,
// were let through: only POSIX shells were read in them).
func TestCheckCmd_NestedWindowsShells(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"x;whoami", []string{"pwsh", "-c", "Invoke-Expression 'echo x;whoami'"}},
		{"x;whoami", []string{"pwsh", "-c", "iex 'echo x;whoami'"}},
		{"x;whoami", []string{"powershell", "-Command", `Write-Host a; iex "echo x;whoami"`}},
		{"x;whoami", []string{"pwsh", "-c", "iex -Command 'echo x;whoami'"}},
		{"x & whoami", []string{"pwsh", "-c", "cmd /c 'echo x & whoami'"}},
		{"x;whoami", []string{"pwsh", "-c", "powershell -c 'echo x;whoami'"}},
		{"x & whoami", []string{"cmd", "/c", `cmd /c "echo x & whoami"`}},
		{"x;whoami", []string{"cmd", "/c", `powershell -c "echo x;whoami"`}},
		{"x;whoami", []string{"cmd", "/c", "powershell -EncodedCommand " + encodePS("echo x;whoami")}},
		{"x & whoami", []string{"cmd", "/c", `start cmd /c "echo x & whoami"`}},
		{"x & whoami", []string{"sh", "-c", `cmd.exe /c 'echo x & whoami'`}},
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
	for _, argv := range [][]string{
		{"pwsh", "-c", "iex 'Get-Item in.png'"},
		{"cmd", "/c", `cmd /c "type in.png"`},
		{"cmd", "/c", `powershell -c "Get-Item in.png"`},
		{"pwsh", "-c", "Write-Host iex in.png"},
	} {
		r, rc := inputAt(t, taint.Query, "in.png")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_OptionCommandLineAbbreviations: an option whose value is a
// command line is found by every abbreviation the real program takes
// (getopt_long, git's parse-options, zip's reader: the shortest one that
// no other option of it starts with), not only by the longer ones (found
// by a review: GNU tar 1.34 runs --checkpoint-=exec=<input>, --inf=,
// --new-= and --rs=, and --rmt-command= on the remote host; git clone and
// ls-remote run --u=<input>, git push and archive --e=<input>, git
// send-pack --rec=<input>; zip --unz=<input>: all were let through).
func TestCheckCmd_OptionCommandLineAbbreviations(t *testing.T) {
	const in = "touch x"
	for _, argv := range [][]string{
		{"tar", "-cf", "a.tar", "--checkpoint=1", "--checkpoint-=exec=" + in, "x"},
		{"tar", "-cf", "a.tar", "--checkpoint-", "exec=" + in, "x"},
		{"tar", "-xf", "a.tar", "--inf=" + in},
		{"tar", "-xf", "a.tar", "--new-=" + in},
		{"tar", "-xf", "h:a.tar", "--rs=" + in},
		{"tar", "-xf", "h:a.tar", "--rm=" + in},
		{"tar", "-xf", "h:a.tar", "--rmt-command", in},
		{"git", "clone", "--u=" + in, "https://example.com/r.git"},
		{"git", "clone", "--up", in, "https://example.com/r.git"},
		{"git", "ls-remote", "--u=" + in, "r"},
		{"git", "push", "--e=" + in, "origin"},
		{"git", "archive", "--remote=r", "--e=" + in},
		{"git", "send-pack", "--rec=" + in, "r"},
		{"zip", "-T", "--unz=" + in, "a.zip", "x"},
		{"zip", "-T", "--unzip-c", in, "a.zip", "x"},
		{"sh", "-c", "tar -xf a.tar '--inf=" + in + "'"},
		{"sh", "-c", "git clone --u='" + in + "' r"},
		{"sh", "-c", "zip -T --unz '" + in + "' a.zip x"},
	} {
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf(argv...))
		require.Error(t, err, "%q", argv)
		assertBlocked(t, err, rc, taint.Query, in, "shell")
	}
	// Other options those abbreviations are not: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"uploads/a.png", []string{"tar", "-czf", "out.tgz", "--remove-files", "uploads/a.png"}},
		{"feature-x", []string{"git", "push", "-u", "origin", "feature-x"}},
		{"uploads/a.png", []string{"zip", "-u", "out.zip", "uploads/a.png"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_OptionPrograms: an option whose value is a program the
// tool runs, or a command line it runs, is read so (found by a review: su
// -s <input> bob and su --shell=<input> bob, runuser -s <input>, GNU sort
// --compress-program=<input>, strace -o '|<input>' and GNU split
// --filter=<input> let the input choose what runs, in the arguments and
// in scripts).
func TestCheckCmd_OptionPrograms(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"/tmp/x", []string{"su", "-s", "/tmp/x", "bob"}},
		{"/tmp/x", []string{"su", "-s/tmp/x", "bob"}},
		{"/tmp/x", []string{"su", "-ls", "/tmp/x", "bob"}},
		{"/tmp/x", []string{"su", "--shell=/tmp/x", "bob"}},
		{"/tmp/x", []string{"su", "bob", "--sh", "/tmp/x"}},
		{"/tmp/x", []string{"sudo", "su", "-s", "/tmp/x", "-", "bob"}},
		{"/tmp/x", []string{"runuser", "-s", "/tmp/x", "bob"}},
		{"/tmp/x", []string{"runuser", "-u", "bob", "--shell=/tmp/x", "--", "ls"}},
		{"/tmp/x", []string{"sort", "--compress-program=/tmp/x", "-o", "out", "f"}},
		{"/tmp/x", []string{"sort", "-S", "1M", "--co", "/tmp/x", "f"}},
		{"|touch x", []string{"strace", "-o", "|touch x", "ls"}},
		{"touch x", []string{"strace", "-f", "-o|touch x", "ls"}},
		{"touch x", []string{"strace", "--output=!touch x", "ls"}},
		{"touch x", []string{"timeout", "5", "strace", "-o", "|touch x", "ls"}},
		{"touch x", []string{"split", "-l", "10", "--filter=touch x", "f"}},
		{"touch x", []string{"split", "--f", "touch x", "f"}},
		{"/tmp/x", []string{"sh", "-c", "su -s /tmp/x bob"}},
		{"/tmp/x", []string{"sh", "-c", "sudo su --shell='/tmp/x' - bob"}},
		{"/tmp/x", []string{"sh", "-c", "runuser -l bob -s /tmp/x"}},
		{"/tmp/x", []string{"sh", "-c", "sort --compress-program=/tmp/x f"}},
		{"/tmp/x", []string{"sh", "-c", "sh -c 'sort --co /tmp/x f'"}},
		{"touch x", []string{"sh", "-c", "strace -f -o '|touch x' ls"}},
		{"|touch x", []string{"sh", "-c", "strace -o '|touch x' ls"}},
		{"touch x", []string{"sh", "-c", "split -l 10 --filter 'touch x' f"}},
		{"/tmp/x", []string{"wget", "--use-askpass=/tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"wget", "-q", "-O", "out", "--use-a", "/tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"sh", "-c", "wget -nv --use-askpass=/tmp/x https://example.com/f"}},
		{"/tmp/x", []string{"wget", "-e", "use_askpass=/tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"wget", "-qe", "UseAskPass = /tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"wget", "--execute=use-askpass=/tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"wget", "--exec", "useaskpass=/tmp/x", "https://example.com/f"}},
		{"use_askpass=/tmp/x", []string{"wget", "-e", "use_askpass=/tmp/x", "https://example.com/f"}},
		{"/tmp/x", []string{"sh", "-c", "wget -e 'use_askpass = /tmp/x' https://example.com/f"}},
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
	// The user, su's command line's words, an output file, a file sorted
	// or split, another program's -o, a filter's file: data.
	for _, c := range []struct {
		in   string
		argv []string
	}{
		{"bob", []string{"su", "-s", "/bin/sh", "bob", "-c", "/srv/bin/job"}},
		{"alice_smith", []string{"runuser", "-s", "/bin/bash", "-u", "alice_smith", "--", "/srv/bin/job"}},
		{"uploads/a.png", []string{"sh", "-c", "su -s /bin/sh app -c 'convert uploads/a.png /tmp/o.png'"}},
		{"report.txt", []string{"sort", "--compress-program=gzip", "-o", "/tmp/out", "report.txt"}},
		{"trace.log", []string{"strace", "-f", "-o", "trace.log", "ls"}},
		{"uploads/a.png", []string{"strace", "-o", "|gzip > /tmp/t.gz", "convert", "uploads/a.png", "/tmp/o.png"}},
		{"uploads/a.png", []string{"strace", "convert", "-o", "|x", "uploads/a.png"}},
		{"report.txt", []string{"split", "-l", "100", "--filter=gzip > $FILE.gz", "report.txt", "/tmp/part-"}},
		{"report.txt", []string{"sh", "-c", "strace -o /tmp/t.log sort -o /tmp/out report.txt"}},
		{"https://example.com/f", []string{"wget", "--use-askpass=/usr/bin/ksshaskpass", "-O", "/tmp/out", "https://example.com/f"}},
		{"https://example.com/f", []string{"wget", "-e", "robots=off", "-e", "use_askpass=/usr/bin/ksshaskpass", "https://example.com/f"}},
		{"https://example.com/f", []string{"wget", "-e", "https_proxy=http://proxy:3128", "https://example.com/f"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), "%q", c.argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_InterpreterCode: an input anywhere in an interpreter's code
// argument (python3 -c, perl -e, node -e, php -r, awk's program, …) is
// blocked, naming the interpreter: the check does not read their
// languages, where the input may end a string and add code (found by a
// review: python3 -c "print('<input>')" with the input
// ');__import__('os').system('id');(' ran id, as did perl -e, node -e,
// ruby -e, php -r, lua -e, Rscript -e, deno eval, bun -e, osascript -e
// and awk 'PROGRAM', in the arguments and in scripts).
func TestCheckCmd_InterpreterCode(t *testing.T) {
	const in = `x');system('id');('`
	code := func(pre string) string { return pre + `('` + in + `')` }
	for _, c := range []struct {
		why  string
		argv []string
	}{
		{"python3", []string{"python3", "-c", code("print")}},
		{"python", []string{"python", "-I", "-c", code("print")}},
		{"python3.12", []string{"python3.12", "-Bc", code("print")}},
		{"python3", []string{"python3", "-c" + code("print")}},
		{"pypy3", []string{"pypy3", "-W", "ignore", "-c", code("print")}},
		{"python3", []string{"sudo", "-u", "bob", "python3", "-c", code("print")}},
		{"python3", []string{"timeout", "5", "env", "-i", "python3", "-c", code("print")}},
		{"perl", []string{"perl", "-e", code("print")}},
		{"perl", []string{"perl", "-lne", code("print")}},
		{"perl", []string{"perl", "-Mstrict", "-I", "lib", "-E", code("say")}},
		{"perl", []string{"perl", "-e", "1", "-e", code("print")}},
		{"perl", []string{"perl", "-de", code("print")}},
		{"perl", []string{"perl", "-M" + code("strict;print"), "-e", "1"}},
		{"perl", []string{"sh", "-c", `perl -wM"` + code("strict;print") + `" -e 1`}},
		{"ruby", []string{"ruby", "-rjson", "-e", code("puts")}},
		{"node", []string{"node", "-e", code("console.log")}},
		{"node", []string{"node", "-r", "dotenv/config", "--eval", code("console.log")}},
		{"node", []string{"node", "--print=" + code("String")}},
		{"node", []string{"node", "--max-http-header-size", "80000", "-e", code("console.log")}},
		{"node", []string{"node", "--v8-pool-size", "4", "-e", code("console.log")}},
		{"nodejs", []string{"nodejs", "-pe", code("String")}},
		{"bun", []string{"bun", "-e", code("console.log")}},
		{"deno", []string{"deno", "eval", "--ext=ts", code("console.log")}},
		{"php", []string{"php", "-r", code("echo") + ";"}},
		{"php", []string{"php", "-n", "-d", "x=1", "-R", code("echo") + ";"}},
		{"lua", []string{"lua", "-e", code("print")}},
		{"lua5.4", []string{"lua5.4", "-e" + code("print")}},
		{"rscript", []string{"Rscript", "--vanilla", "-e", code("print")}},
		{"r", []string{"R", "--no-echo", "-e", code("print")}},
		{"osascript", []string{"osascript", "-e", code("say")}},
		{"awk", []string{"awk", "BEGIN { print" + code("") + " }"}},
		{"awk", []string{"awk", "-F:", "-v", "n=1", "{ print" + code("") + " }", "f"}},
		{"awk", []string{"awk", "--", "{ print" + code("") + " }", "f"}},
		{"gawk", []string{"gawk", "-e", "{ print" + code("") + " }", "f"}},
		{"gawk", []string{"gawk", "--source={ print" + code("") + " }", "f"}},
		{"mawk", []string{"mawk", "-W", "interactive", "{ print" + code("") + " }"}},
		{"gawk", []string{"gawk", "-W", "source={ print" + code("") + " }", "f"}},
		{"gawk", []string{"gawk", "-Wsource={ print" + code("") + " }", "f"}},
		{"gawk", []string{"gawk", "-W", "sou", "{ print" + code("") + " }", "f"}},
		{"gawk", []string{"gawk", "-W", "lint", "-W", "so={ print" + code("") + " }", "f"}},
		{"awk", []string{"busybox", "awk", "{ print" + code("") + " }"}},
		{"awk", []string{"find", ".", "-exec", "awk", "{ print" + code("") + " }", "{}", ";"}},
		{"python3", []string{"sh", "-c", `python3 -c "print('` + in + `')"`}},
		{"python3", []string{"sh", "-c", `cd /srv && python3 -c "print('` + in + `')"`}},
		{"perl", []string{"sh", "-c", `sudo -u app perl -ne "print('` + in + `')" f`}},
		{"node", []string{"bash", "-c", `node -e "console.log('` + in + `')"`}},
		{"awk", []string{"sh", "-c", `awk -F, "{ print('` + in + `') }" f`}},
		{"python3", []string{"sh", "-c", `sh -c "python3 -c \"print('` + in + `')\""`}},
		{"python3", []string{"ssh", "host", `python3 -c "print('` + in + `')"`}},
		{"python3", []string{"su", "bob", "-c", `python3 -c "print('` + in + `')"`}},
		{"python", []string{"cmd", "/c", `python.exe -c "print('` + in + `')"`}},
		{"node", []string{"pwsh", "-c", `node -e "console.log('` + in + `')"`}},
		{"perl", []string{"powershell", "-Command", `& perl -e "print('` + in + `')"`}},
	} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			err := CheckCmd(ctxOf(r), cmdOf(c.argv...))
			require.Error(t, err, "%v %q", src, c.argv)
			assertBlocked(t, err, rc, src, in, "shell")
			assert.Equal(t, "reaches the code "+c.why+" runs", rc.all()[0].Reason, "%q", c.argv)
		}
	}
	// The input as the code's arguments, an awk variable's value, a file
	// awk reads, an option's value before the code, a script's argument
	// named -c: data.
	for _, argv := range [][]string{
		{"python3", "-c", "import sys; print(sys.argv[1])", in},
		{"python3", "-c", "import sys; print(sys.argv[1:])", "-c", in},
		{"python3", "/srv/report.py", "-c", in},
		{"perl", "-le", "print $ARGV[0]", "--", in},
		{"node", "-e", "console.log(process.argv[1])", "--", in},
		{"node", "/srv/app.js", "-e", in},
		{"awk", "-v", "n=" + in, "BEGIN { print n }"},
		{"awk", "{ print }", in},
		{"awk", "-f", "/srv/prog.awk", in},
		{"gawk", "-W", "exec", "/srv/prog.awk", in},
		{"gawk", "-Wexec=/srv/prog.awk", in},
		{"php", "-f", "/srv/x.php", "--", in},
		{"deno", "eval", "console.log(Deno.args)", in},
		{"sh", "-c", `python3 -c 'import sys; print(sys.argv[1])' "$1"`, "sh", in},
		{"sh", "-c", `awk -v n="$1" 'BEGIN { print n }'`, "sh", in},
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_SuUserShellsOptions: su hands the words after "--" to the
// user's shell, which may read its options as bash does, as zsh and the
// Korn shells do or as fish does; they were read as bash's only: `su --
// bob -oerrexit -c "echo <input>"` (-c taken for -o's value), `su -- bob
// -d all -c …`, `su -- bob -C …` and `su -- bob -oerrexit <input>` (the
// script file skipped as -o's value) ran the input for a zsh or fish
// user, let through. Each reading is taken.
func TestCheckCmd_SuUserShellsOptions(t *testing.T) {
	const in = "x; id"
	for _, argv := range [][]string{
		{"su", "--", "bob", "-oerrexit", "-c", "echo x; id"},
		{"su", "--", "bob", "-O", "-c", "echo x; id"},
		{"su", "--", "bob", "-d", "all", "-c", "echo x; id"},
		{"su", "--", "bob", "-C", "echo x; id"},
		{"su", "--", "bob", "--init-command=echo x; id"},
		{"su", "--", "bob", "--comm", "echo x; id"},
		{"runuser", "--", "bob", "-oerrexit", "-c", "echo x; id"},
		{"sh", "-c", `su -- bob -d all -c "echo x; id"`},
		{"sh", "-c", `su -- bob -C "echo x; id"`},
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, in, "shell")
	}
	const file = "x.sh"
	for _, argv := range [][]string{
		{"su", "--", "bob", "-oerrexit", file},
		{"su", "--", "bob", "-O", file},
		{"su", "--", "bob", "-d", "all", file},
		{"su", "bob", "--", "-oerrexit", file},
		{"sh", "-c", "su -- bob -oerrexit " + file},
	} {
		r, rc := inputAt(t, taint.Query, file)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(argv...)), rc, taint.Query, file, "shell")
	}
	// Quoted in the command line, or an argument of the script, it is data.
	r, _ := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("su", "--", "bob", "-oerrexit", "-c", "echo 'x; id'")))
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("su", "--", "bob", "-d", "all", "-c", `echo "$1"`, "sh", in)))
	r, _ = inputAt(t, taint.Query, file)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("su", "--", "bob", "-o", "errexit", "deploy.sh", file)))
}
