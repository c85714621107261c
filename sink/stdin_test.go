package sink

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// TestCheckCmd_StdinScript: a shell that reads its script from its input
// (no -c, no script file) runs what the script feeds it — an earlier
// stage of a pipeline, a here-document, a here-string — so input there is
// blocked wherever it is (found by a review: with the input x;id, echo
// 'echo x;id' | sh, sh <<'EOF' … and sh <<< 'echo x;id' were let through:
// the input was the literal text of one word of the script, which the
// shell at the end of the pipe then ran).
func TestCheckCmd_StdinScript(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"echo 'echo " + in + "' | sh",
		"printf '%s\\n' 'echo " + in + "' | bash",
		"sh <<EOF\necho " + in + "\nEOF",
		"sh <<'EOF'\necho '" + in + "'\nEOF",
		"bash <<\"EOF\"\necho '" + in + "'\nEOF",
		"sh <<< 'echo " + in + "'",
		"cat <<EOF | sh\necho '" + in + "'\nEOF",
		"cat <<'EOF' | sh\necho '" + in + "'\nEOF",
		"echo 'echo " + in + "' | sudo -u bob bash",
		"echo 'echo " + in + "' | timeout 5 sh -s",
		"echo 'echo " + in + "' | sh -s -- arg",
		"echo 'echo " + in + "' | sh -",
		"echo 'echo " + in + "' | bash /dev/stdin",
		"echo 'echo " + in + "' |& bash",
		"echo 'echo " + in + "' |\nbash",
		"(echo 'echo " + in + "') | sh",
		"{ echo 'echo " + in + "'; } | sh",
		"echo 'echo " + in + "' | { sh; }",
		"echo 'echo " + in + "' | sh -c \"$(cat)\"",
		"echo 'echo " + in + "' | sh -c 'sh'",
		"echo 'echo " + in + "' | sh -c 'exec bash -s'",
		"echo \"'echo " + in + "'\" | xargs sh -c",
		"echo 'echo " + in + "' | xargs -I{} sh -c '{}'",
		"echo 'echo " + in + "' | . /dev/stdin",
		"echo 'echo " + in + "' | eval \"$(cat)\"",
		"echo 'echo " + in + "' > /tmp/s; sh < /tmp/s",
		"bash <(echo 'echo " + in + "')",
		"ssh host <<'EOF'\necho '" + in + "'\nEOF",
		"echo 'echo " + in + "' | ssh host bash -s",
		"echo 'echo " + in + "' | su bob",
		"echo 'echo " + in + "' | sh # " + in,
		"sh -c \"echo 'echo " + in + "' | sh\"",
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
	r, _ := inputAt(t, taint.Query, in)
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("sudo", "sh", "-c", "echo 'echo "+in+"' | sh")), ErrBlocked)
	assert.ErrorIs(t, CheckCmd(ctxOf(r), cmdOf("su", "-c", "sh <<< 'echo "+in+"'", "bob")), ErrBlocked)

	// The attack runs when the check is skipped, and is blocked when it is
	// made.
	marker := filepath.Join(t.TempDir(), "pwned")
	in2 := "x;touch " + marker
	for _, script := range []string{
		"echo 'echo " + in2 + "' | sh",
		"printf '%s\\n' 'echo " + in2 + "' | sh",
		"bash <<< 'echo " + in2 + "'",
		"cat <<'EOF' | sh\necho " + in2 + "\nEOF",
		"echo 'echo " + in2 + "' | sh -c 'sh'",
	} {
		r, _ := inputAt(t, taint.Query, in2)
		_, err := Command(ctxOf(r), "sh", "-c", script)
		require.ErrorIs(t, err, ErrBlocked, "%q", script)
		cmd, err := Command(context.Background(), "bash", "-c", script)
		require.NoError(t, err)
		require.NoError(t, cmd.Run(), "%q", script)
		_, statErr := os.Stat(marker)
		require.NoError(t, statErr, "the shell ran the input in %q", script)
		require.NoError(t, os.Remove(marker))
	}
}

// TestCheckCmd_StdinScriptBenign: pipelines and redirections into
// programs that are no shell, a shell's -c script that reads its input as
// data, a script file, and the arguments of a shell that reads its script
// from a file, are let through.
func TestCheckCmd_StdinScriptBenign(t *testing.T) {
	const in = "hello"
	for _, script := range []string{
		"echo hello | grep hello",
		"sh -c 'echo hello | tr a b'",
		"echo hello | tr a b | sh -c 'cat'",
		"printf '%s' hello | sh -c 'cat > /dev/null'",
		"echo hello | xargs sh -c 'echo \"$1\"' sh",
		"cat <<EOF\nsay hello\nEOF",
		"grep hello <<< 'hello world'",
		"echo hello | sh ./script.sh",
		"bash -s -- hello < /dev/null",
		"echo hello | wc -c; sh -c 'echo hi'",
		"echo hello || sh",
	} {
		for _, src := range sources {
			r, rc := inputAt(t, src, in)
			require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%v %q", src, script)
			assert.Empty(t, rc.all())
		}
		if strings.Contains(script, "script.sh") || strings.HasSuffix(script, "|| sh") {
			continue
		}
		_, err := exec.Command("bash", "-c", script).Output()
		require.NoError(t, err, "%q", script)
	}
}

// TestCheckCmd_StdinScriptSudoShell: sudo -s, sudo -i (--shell, --login)
// and doas -s with no command run the target user's shell, which reads
// its script from its input, as sh does (found by a review: echo 'x;id' |
// sudo -s, with the input x;id, was let through: sudo ran no program the
// check took for a shell). With a command, sudo hands it to the shell
// escaped: it is the program, as the wrapper's reading takes it.
func TestCheckCmd_StdinScriptSudoShell(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"echo 'echo " + in + "' | sudo -s",
		"echo 'echo " + in + "' | sudo -i",
		"echo 'echo " + in + "' | sudo --shell",
		"echo 'echo " + in + "' | sudo --login",
		"echo 'echo " + in + "' | sudo --sh",
		"echo 'echo " + in + "' | sudo -u bob -s",
		"echo 'echo " + in + "' | sudo -Eiu bob",
		"echo 'echo " + in + "' | sudo -s -u bob --",
		"echo 'echo " + in + "' | sudo -s HOME=/tmp",
		"echo 'echo " + in + "' | sudo \"$OPT\"",
		"echo 'echo " + in + "' | timeout 5 sudo -i",
		"sudo -s <<'EOF'\necho '" + in + "'\nEOF",
		"sudo -i <<< 'echo " + in + "'",
		"echo 'echo " + in + "' | doas -s",
		"echo 'echo " + in + "' | doas -u bob -s",
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
	// sudo -s COMMAND: the command is the program.
	for _, argv := range [][]string{
		{"sudo", "-s", "id"},
		{"sudo", "-i", "-u", "bob", "id"},
		{"sudo", "--login", "id"},
		{"sh", "-c", "sudo -s id"},
		{"sh", "-c", "sudo -iu bob id -a"},
	} {
		r, rc := inputAt(t, taint.Query, "id")
		err := CheckCmd(ctxOf(r), cmdOf(argv...))
		require.Error(t, err, "%q", argv)
		assertBlocked(t, err, rc, taint.Query, "id", "shell")
	}
	// A command, a list, an edit or a shell not fed: data.
	for _, script := range []string{
		"echo hello | sudo -s tee /tmp/out",
		"echo hello | sudo -i -u bob cat",
		"echo hello | sudo -u bob tee /tmp/out",
		"echo hello | sudo -l",
		"echo hello | sudo -s -- cat",
		"echo hello | doas -u bob cat",
		"echo hello; sudo -s",
		"sudo -s id hello",
		"echo hello | sudo ''",
	} {
		r, rc := inputAt(t, taint.Query, "hello")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_StdinScriptCompound: an input redirection of a compound
// command feeds the commands inside it, and exec's with no program every
// command after it (found by a review: while read l; do eval "$l"; done
// <<< 'echo x;id', with the input x;id, was let through: the here-string
// was taken for done's, which runs nothing).
func TestCheckCmd_StdinScriptCompound(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"while read l; do eval \"$l\"; done <<< 'echo " + in + "'",
		"while read -r l; do eval \"$l\"; done <<'EOF'\necho '" + in + "'\nEOF",
		"echo 'echo " + in + "' > /tmp/s; while read -r l; do eval \"$l\"; done < /tmp/s",
		"{ sh; } <<< 'echo " + in + "'",
		"echo 'echo " + in + "' > /tmp/s; ( sh ) < /tmp/s",
		"if true; then bash; fi <<< 'echo " + in + "'",
		"case x in *) sh;; esac <<< 'echo " + in + "'",
		"echo 'echo " + in + "' > /tmp/s; exec < /tmp/s; sh",
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
	// A compound command fed data, with no shell in it: data.
	for _, script := range []string{
		"while read -r l; do echo \"$l\"; done <<< 'hello'",
		"{ grep hello; } < /srv/log",
		"exec < /srv/log; grep -c hello",
	} {
		r, rc := inputAt(t, taint.Query, "hello")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_ShellPrograms: sg GROUP COMMAND runs COMMAND with sh -c,
// and capsh -- ARGS hands ARGS to bash (capsh -- -c '…'); sg and newgrp
// with no command, capsh -- with no script, and at and batch read a
// script from their input (found by a review: sg grp 'echo x;id', capsh
// -- -c 'echo x;id' and echo 'echo x;id' | at now, with the input x;id,
// were let through).
func TestCheckCmd_ShellPrograms(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"sg", "grp", "echo " + in},
		{"sg", "-", "grp", "-c", "echo " + in},
		{"sudo", "sg", "grp", "echo " + in},
		{"capsh", "--", "-c", "echo " + in},
		{"capsh", "--user=bob", "--", "-c", "echo " + in},
		{"sh", "-c", "sg grp 'echo " + in + "'"},
		{"sh", "-c", "capsh --drop=cap_net_raw -- -c 'echo " + in + "'"},
		{"sh", "-c", "echo 'echo " + in + "' | at now"},
		{"sh", "-c", "echo 'echo " + in + "' | at -m now + 1 hour"},
		{"sh", "-c", "echo 'echo " + in + "' | batch"},
		{"sh", "-c", "at -q b now <<< 'echo " + in + "'"},
		{"sh", "-c", "echo 'echo " + in + "' | newgrp grp"},
		{"sh", "-c", "echo 'echo " + in + "' | sg grp"},
		{"sh", "-c", "echo 'echo " + in + "' | capsh --"},
		{"sh", "-c", "echo 'echo " + in + "' | sudo capsh --user=bob --"},
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
	// A word of their scripts, a job from a file, a listing: data.
	for _, argv := range [][]string{
		{"sg", "grp", "convert 'in.png' out.png"},
		{"capsh", "--", "-c", "convert in.png out.png"},
		{"sh", "-c", "echo in.png | at -f /srv/job.sh now"},
		{"sh", "-c", "echo in.png | atq; at -l"},
		{"sh", "-c", "echo in.png | sg grp 'tee /tmp/out'"},
	} {
		r, rc := inputAt(t, taint.Query, "in.png")
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_SourceProcessSubstitution: . and source of a process
// substitution (. <(…), zsh's source =(…)) run what its command writes,
// as bash <(…) does: input in that script is blocked (found by a review:
// sh -c ". <(echo 'echo x;id')", with the input x;id, was let through,
// the substitution being no word of the . command for the check to read).
func TestCheckCmd_SourceProcessSubstitution(t *testing.T) {
	const in = "x;id"
	for _, argv := range [][]string{
		{"bash", "-c", ". <(echo 'echo " + in + "')"},
		{"bash", "-c", "source <(echo 'echo " + in + "')"},
		{"bash", "-c", "source  <(printf '%s\\n' 'echo " + in + "') arg"},
		{"zsh", "-c", "source =(echo 'echo " + in + "')"},
		{"sh", "-c", "sudo -u bob bash -c \". <(echo 'echo " + in + "')\""},
	} {
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf(argv...))
		require.Error(t, err, "%q", argv)
		assertBlocked(t, err, rc, taint.Query, in, "shell")
	}
	out, err := exec.Command("bash", "-c", ". <(echo 'echo a;echo ran')").Output()
	require.NoError(t, err)
	assert.Equal(t, "a\nran\n", string(out))
	// A file sourced, an array assigned: data.
	for _, argv := range [][]string{
		{"bash", "-c", ". /srv/env.sh; grep -F -- 'x;id' /srv/log"},
		{"bash", "-c", "a=(1 2); echo 'x;id'"},
		{"bash", "-c", "diff <(sort a) <(sort b); echo 'x;id'"},
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%q", argv)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_FeedThroughCoprocAndFunctions: a coprocess's input is a
// pipe the script writes to (coproc sh; echo … >&"${COPROC[1]}"), and an
// input redirection of a call of a function the script defines feeds the
// commands of its body, as a compound command's does (found by a review:
// with the input x;id, bash -c "coproc sh; echo 'echo x;id'
// >&\"${COPROC[1]}\"" and bash -c "f() { sh; }; f <<< 'echo x;id'" ran
// id, and were let through).
func TestCheckCmd_FeedThroughCoprocAndFunctions(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"coproc sh; echo 'echo " + in + "' >&\"${COPROC[1]}\"",
		"coproc S { sh; }; echo 'echo " + in + "' >&\"${S[1]}\"",
		"f() { sh; }; f <<< 'echo " + in + "'",
		"f () { bash -s; }\nf < /tmp/job <<< 'echo " + in + "'",
		"function f { sh; }; f <<< 'echo " + in + "'",
		"function f() { sh; }; f <<< 'echo " + in + "'",
		"f() ( sh ); x=1 f <<< 'echo " + in + "'",
	} {
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf("bash", "-c", script))
		require.Error(t, err, "%q", script)
		assertBlocked(t, err, rc, taint.Query, in, "shell")
	}
	for _, script := range []string{
		"f() { sh; }; f <<< 'echo ran'",
		"coproc sh; echo 'echo ran' >&\"${COPROC[1]}\"; exec {COPROC[1]}>&-; read -r l <&\"${COPROC[0]}\"; echo \"$l\"",
	} {
		out, err := exec.Command("bash", "-c", script).Output()
		require.NoError(t, err, "%q", script)
		assert.Equal(t, "ran\n", string(out), "%q", script)
	}
	// A function that reads its input as data, a redirection of a command
	// that is no function: data.
	for _, script := range []string{
		"f() { cat; }; f <<< 'x;id'",
		"f() { sh -c 'cat > /tmp/out'; }; f <<< 'x;id'",
		"f() { sh; }; grep -F -- 'x;id' < /srv/log",
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("bash", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_AtFileStdin: at -f /dev/stdin (or another descriptor of
// its input) reads the job's script from its input, as at without -f
// does (found by a review: with the input x;id, sh -c "at -f /dev/stdin
// now <<< 'echo x;id'" was let through: -f was taken for a file).
func TestCheckCmd_AtFileStdin(t *testing.T) {
	const in = "x;id"
	for _, script := range []string{
		"at -f /dev/stdin now <<< 'echo " + in + "'",
		"at -m -f/dev/stdin now <<< 'echo " + in + "'",
		"echo 'echo " + in + "' | batch -f /proc/self/fd/0",
		"echo 'echo " + in + "' | at -f \"$F\" now",
	} {
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
		require.Error(t, err, "%q", script)
		assertBlocked(t, err, rc, taint.Query, in, "shell")
	}
	// A job's file: data.
	r, rc := inputAt(t, taint.Query, in)
	require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", "at -f /srv/job.sh now; echo 'x;id' | grep -c x")))
	assert.Empty(t, rc.all())
}

// TestCheckCmd_InterpreterStdin: an interpreter given no code and no
// script file (python3, perl, node, php, ruby, lua, R, osascript; or "-")
// reads its program from its input, as a shell with no script does: any
// input in a script that may feed it is blocked (found by a review: echo
// '__import__(chr(111)+chr(115)).system(chr(105)+chr(100))' | python3, with
// that input, was let through: the input was the literal text of one
// word, and python3 ran it).
func TestCheckCmd_InterpreterStdin(t *testing.T) {
	const in = "__import__(chr(111)+chr(115)).system(chr(105)+chr(100))"
	for _, script := range []string{
		"echo '" + in + "' | python3",
		"echo '" + in + "' | python3 -u -",
		"echo '" + in + "' | sudo -u bob python3 -I",
		"printf '%s\\n' '" + in + "' | perl",
		"echo '" + in + "' | node",
		"echo '" + in + "' | php -n",
		"echo '" + in + "' | ruby -w",
		"echo '" + in + "' | lua",
		"echo '" + in + "' | R --no-save",
		"echo '" + in + "' | perl --",
		"echo '" + in + "' | perl -Mstrict -w",
		"python3 <<< '" + in + "'",
		"python3 - <<'EOF'\n" + in + "\nEOF",
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
	// An interpreter given its code or its script file reads its input as
	// data; one that prints its version reads none.
	for _, script := range []string{
		"echo '" + in + "' | python3 /srv/calc.py",
		"echo '" + in + "' | python3 -c 'import sys; print(sys.stdin.read())'",
		"echo '" + in + "' | python3 -m json.tool",
		"echo '" + in + "' | perl -ne 'print'",
		"echo '" + in + "' | node /srv/render.js",
		"echo '" + in + "' | awk '{ print $1 }'",
		"echo '" + in + "' | php -r 'echo fgets(STDIN);'",
		"python3 --version | grep -q 3 && echo '" + in + "'",
		"echo '" + in + "' | python3 -V",
	} {
		r, rc := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
		assert.Empty(t, rc.all())
	}
}

// TestCheckCmd_ShellStdinAfterItsOptions: whether a shell in a script
// reads its script from its input was decided by a scan that read
// zsh's and the Korn shells' -oNAME as taking the next word (as bash's
// -o does) and knew none of fish's options that take a value, nor fish's
// -cSCRIPT, --command abbreviated or its -C commands: `echo "<input>" |
// zsh -oerrexit -s foo` (-s skipped as -o's value, foo taken for a script
// file), `… | zsh -oerrexit -c sh`, `… | fish -d all -c sh`, `… | fish
// --comm sh`, `… | fish -csh`, `… | fish -C sh` ran the input as a
// script, let through; without the option they were blocked.
func TestCheckCmd_ShellStdinAfterItsOptions(t *testing.T) {
	const in = "x; id"
	for _, shell := range []string{
		"zsh -oerrexit -s foo",
		"zsh -O -s foo",
		"zsh -oerrexit -c sh",
		"ksh -oerrexit -s foo",
		"mksh +oerrexit -s foo",
		"fish -d all -c sh",
		"fish --comm sh",
		"fish --command=sh",
		"fish -csh",
		"fish -C sh",
		"fish -C 'cat | sh' -c true",
		"fish -p /tmp/prof",
		"fish --debug all",
	} {
		script := `echo "` + in + `" | ` + shell
		r, rc := inputAt(t, taint.Query, in)
		err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", script))
		require.Error(t, err, "%q", script)
		assertBlocked(t, err, rc, taint.Query, in, "shell")
	}
	// A shell given its script file, or a script that reads no input,
	// reads its input as data.
	for _, shell := range []string{
		"zsh -oerrexit deploy.zsh",
		"zsh -o errexit deploy.zsh",
		"fish -d all deploy.fish",
		"fish -C 'set -g a 1' deploy.fish",
		"fish -cecho",
		"fish --comm=true",
		"bash -o pipefail deploy.sh",
	} {
		script := `echo "` + in + `" | ` + shell
		r, _ := inputAt(t, taint.Query, in)
		require.NoError(t, CheckCmd(ctxOf(r), cmdOf("sh", "-c", script)), "%q", script)
	}
}
