package scan

import "strings"

// Command injection: a shell metacharacter that chains or substitutes a
// command, followed by one.

// Commands that are not English words: one after a chaining or
// substituting metacharacter is enough.
var commands = wordSet(
	"whoami", "uname", "ifconfig", "ipconfig", "netstat", "nslookup", "wget",
	"bash", "sh", "zsh", "ksh", "csh", "tcsh", "busybox", "powershell", "pwsh", "cmd", "cmd.exe",
	"python2", "python3",
	"nc", "ncat", "netcat", "telnet", "socat", "ssh", "scp", "ftp", "tftp",
	"chmod", "chown", "chgrp", "useradd", "usermod", "passwd", "sudo", "su",
	"traceroute", "tracert", "systeminfo", "tasklist", "taskkill", "hostname",
	"base64", "xxd", "xterm", "certutil", "bitsadmin", "rundll32", "regsvr32", "mshta",
	"wmic", "crontab", "nohup", "iex", "pkill", "killall", "shutdown", "reboot",
	"mkfifo", "mknod", "getent", "lsof", "arp", "iptables",
)

// Commands that are also words of ordinary text, names or languages (";
// cat lovers welcome", "Shoes & More", "Java & Python", "Guest & Host"):
// flagged only when they stand as a command (see command).
var wordCommands = wordSet(
	"id", "ls", "cat", "echo", "sleep", "rm", "cp", "mv", "find", "env", "set", "type", "dir",
	"kill", "ps", "who", "w", "more", "less", "head", "tail", "sort", "uniq", "grep", "awk", "sed",
	"touch", "mkdir", "rmdir", "exit", "exec", "eval", "time", "date", "net", "ver", "vol", "tar",
	"zip", "unzip", "gzip", "print", "printf", "read", "export", "source", "alias", "history",
	"timeout", "wait", "pwd", "cd", "df", "du", "free", "top", "uptime", "last", "whereis", "which",
	"file", "stat", "dd", "nl", "od", "tee", "xargs", "yes", "tr", "cut", "wc", "diff", "cmp", "strings",
	"system", "passthru", "popen", "require", "import",
	"python", "perl", "ruby", "php", "node", "lua", "dash",
	"ping", "host", "dig", "curl", "route",
)

// What a word command needs to count (see command): aloneCommands tell
// an attacker something with no argument ("; id", "`ls`"), numberCommands
// take a number ("; sleep 5"), netTools a host with a dot, an address or
// a URL ("; ping 10.0.0.1", "; curl http://x"). These three count so only
// in lower case, as a Unix shell finds them, and attack payloads write
// them: "Photo & ID", "Inicio | Ver", "Eat; Sleep 8 hours" and "Party &
// Host e.g. Tom" are text. interpreters take a script file ("; python
// x.py"). Any of them, in any case, counts with an argument that looks
// like a shell's: a flag, a path, a variable, a quote, a redirection.
var (
	aloneCommands  = wordSet("id", "ls", "ps", "pwd", "env", "who", "w", "uptime", "df", "du", "history", "dir", "ver", "vol")
	numberCommands = wordSet("sleep", "timeout", "kill")
	netTools       = wordSet("ping", "host", "dig", "curl", "route")
	interpreters   = wordSet("python", "perl", "ruby", "php", "node", "lua", "source")
)

// commandInjection reports a shell metacharacter that chains or
// substitutes a command (; | & ` $( ${ a newline or a carriage return)
// followed by a command.
func commandInjection(s string, f uint32) bool {
	for _, m := range metachars {
		if f&m.kind == 0 {
			continue
		}
		led := -1 // where the command after the last metachar starts (see below)
		for i := 0; i < len(s); i++ {
			j := strings.IndexByte(s[i:], m.c)
			if j < 0 {
				break
			}
			i += j
			next := i + 1
			if m.c == '$' {
				if next == len(s) || s[next] != '(' && s[next] != '{' {
					continue
				}
				next++
				if s[next-1] == '{' && wordExpansion(s, next) {
					continue
				}
			}
			// A metachar within the lead of the last command (";;;;", "$(
			// $(") leads to the same command, which is not one: skipping
			// what leads passes through every byte of it, so that looking
			// again would only make a run of metachars quadratic.
			if next <= led {
				continue
			}
			led = commandLeadEnd(s, next)
			if commandAt(s, led) {
				return true
			}
		}
	}
	return false
}

// wordExpansion reports a ${ at s[i-2:i] that is a word's, not a lead
// to a command: ${0}, a variable (${name}, ${x:-default}) but ${IFS}.
// Such a ${ is no metacharacter of its own: "Found ${0} results", "Hello
// ${name} SSH access" and "${SHELL:-sh}" are templates, and only a
// metacharacter before the ${ (";${x}whoami", "echo id|${0}") puts what
// it leaves where a command stands.
func wordExpansion(s string, i int) bool {
	if i == len(s) || strings.HasPrefix(s[i:], "IFS") {
		return false
	}
	return strings.HasPrefix(s[i:], "0}") || isLetter(s[i]) || s[i] == '_'
}

// metachars are the bytes that chain or substitute a command, with their
// kind in byteKinds.
var metachars = []struct {
	c    byte
	kind uint32
}{
	{';', hasSemicolon}, {'|', hasPipe}, {'&', hasAmp}, {'`', hasBacktick},
	{'\n', hasNewline}, {'\r', hasNewline}, {'$', hasDollar},
}

// commandLead are the bytes commandAt skips before a command.
var commandLead = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\"'(){|&;`$!") {
		t[c] = true
	}
	return t
}()

// commandLeadEnd is where a command after a metacharacter at s[i-1]
// starts: after blanks, quotes, more metacharacters, ( or {, a ! (which
// negates the command after it, and runs it), and $IFS,
// ${IFS}, $1, $@, $*, $!, $- or ${1} (empty or a blank to the shell), a
// variable before a blank, a quote or a $ ($x whoami: unset, nothing), and a
// parameter expansion that leaves nothing or its default (see
// expansionEnd). It steps through every byte of what it skips but the F
// and S of IFS, a name and an expansion with no metacharacter in it, and
// where it goes from each depends on s and that byte's index alone:
// started anywhere in the lead of an earlier call, it ends where that
// call did.
func commandLeadEnd(s string, i int) int {
	for i < len(s) {
		if i >= 2 && s[i-2] == '$' && s[i-1] == '{' {
			if end := expansionEnd(s, i); end > i {
				i = end
				continue
			}
		}
		if end := prefixEnd(s, i); end > i {
			i = end // x=1 whoami, 2>/dev/null id
			continue
		}
		if end := nameEnd(s, i); i > 0 && s[i-1] == '$' && end > i {
			if end < len(s) && strings.IndexByte(" \t\"'$", s[end]) >= 0 {
				i = end // $x whoami, $x"id", $x$y whoami: an unset variable is no word
				continue
			}
		}
		switch {
		case commandLead[s[i]]:
			i++
		case i > 0 && (s[i-1] == '$' || s[i-1] == '{') && strings.HasPrefix(s[i:], "IFS"):
			i += len("IFS")
		case s[i] == '}' && i >= 3 && s[i-3:i] == "IFS", i > 0 && s[i-1] == '$' && emptyParameter(s[i]),
			i >= 2 && s[i-2:i] == "${" && emptyParameter(s[i]) && i+1 < len(s) && s[i+1] == '}',
			s[i] == '}' && i >= 3 && s[i-3:i-1] == "${" && emptyParameter(s[i-1]):
			i++
		default:
			return i
		}
	}
	return i
}

// emptyParameter reports a positional parameter, or all of them (@, *),
// after a $: nothing in a command string run with none; or $- (the
// shell's flags: none to dash, a -c string's sh on Debian and Ubuntu).
// Not $0, the shell's own name (see commandAt).
func emptyParameter(c byte) bool { return isDigit(c) && c != '0' || c == '@' || c == '*' || c == '-' }

// prefixEnd is where a variable assignment (x=1) or a redirection
// (2>/dev/null, >x, < x, 2>&1) at s[i] ends, at the blank after it: a
// shell reads them before the command, so ";x=1 whoami" and
// ";2>/dev/null id" run it. It is i where s[i:] is neither, or one
// that ends s or holds a quote or a metacharacter but the & of >&, and
// for an assignment after a &, which a query string's pairs are
// (?a=1&q=print "x").
func prefixEnd(s string, i int) int {
	j := i
	switch {
	case i > 0 && s[i-1] == '$':
		return i // $x=1 is no assignment
	case nameEnd(s, j) > j:
		k := i - 1
		for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
			k--
		}
		if k >= 0 && s[k] == '&' {
			return i // a query string's pair: &q=print "x"
		}
		j = nameEnd(s, j)
		if j == len(s) || s[j] != '=' {
			return i
		}
		j++
	default:
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == len(s) || s[j] != '<' && s[j] != '>' {
			return i
		}
		if j == i && (s[i] == '<' && htmlTag(s[i:]) || s[i] == '>' && quoteMarker(s, i)) {
			return i // <p>Your SSH key, "\n> The SSH key": markup, not redirections
		}
		for j < len(s) && (s[j] == '<' || s[j] == '>') {
			j++
		}
		if j < len(s) && s[j] == '&' {
			j++ // 2>&1
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++ // > x
		}
	}
	value := j
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		if commandLead[s[j]] || s[j] == '\n' || s[j] == '\r' {
			return i
		}
		j++
	}
	if j == len(s) || j == value && (s[i] == '<' || s[i] == '>' || isDigit(s[i])) { // x= whoami sets x to nothing; > whoami is no redirection
		return i
	}
	return j
}

// htmlTag reports an HTML tag at the start of s: <p>, </li>, <br/>. To a
// shell <p>x is two redirections, but an HTML body's line starts so
// ("\n<p>Your SSH key is ready"), and no payload needs them.
func htmlTag(s string) bool {
	j := 1
	if j < len(s) && s[j] == '/' {
		j++
	}
	if j == len(s) || !isLetter(s[j]) {
		return false
	}
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '/' {
		j++
	}
	return j < len(s) && s[j] == '>'
}

// quoteMarker reports a > at s[i] that starts a line and a blank follows,
// as e-mail replies and markdown quote a line ("\n> The SSH key was
// rotated"): to a shell a redirection to the word after it, but text.
func quoteMarker(s string, i int) bool {
	k := i + 1
	for k < len(s) && s[k] == '>' {
		k++
	}
	return i > 0 && (s[i-1] == '\n' || s[i-1] == '\r') && k < len(s) && (s[k] == ' ' || s[k] == '\t')
}

// expansionEnd is where the lead goes on at s[i], just after a ${: past
// a parameter that is nothing in a command string run with no arguments
// and no such variable (${10}, ${@}, ${!}, ${-}, ${x}), past one whose
// test leaves nothing then (${x+y}, ${x#a}, ${1:-}), or at the default
// it gives, which stands where the command does (${x:-whoami},
// ${x=id}). It is i for anything else: ${0} is the shell's name, ${#}
// and ${?} are numbers. An expansion it skips holds no metacharacter.
func expansionEnd(s string, i int) int {
	j := i
	switch {
	case j == len(s):
		return i
	case nameEnd(s, j) > j:
		j = nameEnd(s, j)
	case isDigit(s[j]) && s[j] != '0':
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	case s[j] == '@' || s[j] == '*' || s[j] == '!' || s[j] == '-':
		j++
	default:
		return i
	}
	if j == len(s) {
		return i
	}
	if s[j] == '}' {
		return j + 1
	}
	op := j
	if s[j] == ':' {
		j++
	}
	if j < len(s) && (s[j] == '-' || s[j] == '=') { // the default: ${x:-whoami}
		if j+1 < len(s) && s[j+1] == '}' {
			return j + 2 // ${x:-}
		}
		return j + 1
	}
	// ${x+y}, ${x#a}, ${x/a/b}, ${x:1}: nothing with x unset, up to its
	// }, near and with nothing in it that leads to a command.
	for k := op; k < len(s) && k < op+64; k++ {
		switch s[k] {
		case '}':
			return k + 1
		case ';', '|', '&', '`', '\n', '\r', '$', '{', '?':
			return i // ${x?}, ${x:?msg}: an error, no command
		}
	}
	return i
}

// commandAt reports whether a command starts at s[i], where the lead
// after a metacharacter ends (commandLeadEnd). A command is a word of
// commands or wordCommands (see command), its last path step if it is a
// path (/bin/sh), or the name of a file to run: ./x, or x.exe, x.ps1 and
// their kind. Where the word holds quotes, balanced, or backslashes,
// which the shell drops (w'h'o'a'm'i, c\at, /bin/c'a't), it is read
// without them too. $0 and ${0}, the shell's name, are a shell.
func commandAt(s string, i int) bool {
	if i < len(s) && s[i] == '0' && i > 0 && s[i-1] == '$' {
		// $0 is the shell's own name (sh, bash): "; $0 -c id" runs id.
		// With a shell's argument only, as a word command: "| $0 fee" is
		// a price.
		return command("dash", s, i+1, 0)
	}
	if i >= 2 && s[i-2:i] == "${" && strings.HasPrefix(s[i:], "0}") {
		return command("sh", s, i+2, 0) // echo id|${0}
	}
	begin, start := i, i
	if driveLetter(s[i:]) {
		i += len("C:") // C:\Users\Public\nc.exe
	}
	for i < len(s) && isWordByte(s[i]) {
		if s[i] == '/' || s[i] == '\\' {
			start = i + 1 // /bin/sh, /usr/bin/id
		}
		i++
	}
	var before byte // what opens the word: a quote, or { in {ls,-la}
	if begin > 0 {
		before = s[begin-1]
	}
	if start < i && (command(s[start:i], s, i, before) || executable(s[start:i])) || strings.HasPrefix(s[begin:], "./") {
		return true
	}
	if (i == len(s) || s[i] != '\'' && s[i] != '"' && s[i] != '^' && gluedEmpty(s, i) == i) && strings.IndexByte(s[begin:i], '\\') < 0 {
		return false
	}
	// The word again, through quotes, backslashes, carets (cmd.exe's
	// escape: w^h^o^a^m^i) and parameters that are nothing (wh$@oami,
	// w${x}hoami), without them.
	var buf [64]byte
	n, quotes, doubles, dropped := 0, 0, 0, false
	switch before { // the quote the word opened with
	case '\'':
		quotes++
	case '"':
		doubles++
	}
	for i = begin; i < len(s) && (isWordByte(s[i]) || s[i] == '\'' || s[i] == '"' || s[i] == '^' || s[i] == '$'); i++ {
		switch c := s[i]; {
		case c == '$':
			end := gluedEmpty(s, i)
			if end == i {
				return false
			}
			i, dropped = end-1, true
		case c == '\'':
			quotes++
		case c == '"':
			doubles++
		case c == '\\', c == '^':
			dropped = true
		case c == '/':
			n = 0 // the last step of a path
		case n == len(buf):
			return false
		default:
			buf[n] = c
			n++
		}
	}
	if n == 0 || quotes%2 != 0 || doubles%2 != 0 || quotes+doubles == 0 && !dropped {
		return false // I'd, Q's: an apostrophe, not a quote
	}
	word := string(buf[:n])
	return command(word, s, i, 0) || executable(word)
}

// gluedEmpty is where a parameter at s[i] that is nothing inside a word
// ends: $@, $*, $1 to $9, $- (see emptyParameter), a ${…} that leaves
// nothing (see expansionEnd), or the $ of $'…' and $"…", whose quotes
// the word's reading counts; i where s[i:] is none of them.
func gluedEmpty(s string, i int) int {
	if i+1 >= len(s) || s[i] != '$' {
		return i
	}
	switch c := s[i+1]; {
	case emptyParameter(c):
		return i + 2
	case c == '\'' || c == '"':
		return i + 1
	case c == '{':
		if end := expansionEnd(s, i+2); end > i+2 && s[end-1] == '}' {
			return end
		}
	}
	return i
}

// command reports whether word, which ends at s[i], is a command: one of
// commands whatever follows it, or one of wordCommands with what it needs
// after it (see aloneCommands). before is the byte before the word.
func command(word, s string, i int, before byte) bool {
	h := foldHash(word)
	switch {
	case commands.hasHashed(word, h):
		return i == len(s) || !isWordByte(s[i])
	case !wordCommands.hasHashed(word, h):
		return false
	}
	lower := !hasUpper(word)
	alone := lower && aloneCommands.hasHashed(word, h)
	if i == len(s) {
		return alone
	}
	var next byte
	if i+1 < len(s) {
		next = s[i+1]
	}
	switch c := s[i]; c {
	case '(': // a call: sleep(5), system('id'), exec($x)
		return isDigit(next) || next == '\'' || next == '"' || next == '$' || next == ')'
	case '<', '>':
		return true
	case '$': // a variable, or $@ $* $1, which the shell drops: who$@ami
		return variable(s[i+1:]) || next != 0 && strings.IndexByte("@*#?!0123456789", next) >= 0
	case ',': // brace expansion: {ls,-la}
		return before == '{'
	case '\'', '"':
		if c == before || next == 0 || next == ' ' || next == '\t' {
			return command(word, s, i+1, 0) // the quote ends the word: 'id', "Shoes & More"
		}
		if c == '\'' && contraction(s[i+1:]) {
			return false // who's, who'd: a word; to a shell the quote goes on into it, or is never closed
		}
		return c == '"' || alone || !isLetter(next) // a quoted argument, w'h'o'a'm'i; Ruby's, Time'll are words
	case ';', '|', '&', '`', ')', '}', '\n', '\r':
		return alone
	case ' ', '\t':
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return alone
		}
		return argument(word, h, lower, s[i:], alone)
	}
	return false
}

// argument reports whether arg, what follows word command word (hash h,
// in lower case or not) after a blank, makes it a command.
func argument(word string, h uint32, lower bool, arg string, alone bool) bool {
	var next byte // the byte after arg's first
	if len(arg) > 1 {
		next = arg[1]
	}
	switch c := arg[0]; {
	case c == '-': // a flag: -l, --all; -9 to kill
		return isLetter(next) || next == '-' || isDigit(next) && numberCommands.hasHashed(word, h)
	case c == '|' || c == ';' || c == '&' || c == '`' || c == ')' || c == '}':
		return alone
	case c == '$':
		return variable(arg[1:])
	case c == '~': // a home: ~/.ssh, ~root, not ~15 min
		return next == '/' || isLetter(next) || alone && (next == 0 || next == ' ')
	case c == '.': // .env, ./x, ../x, not an ellipsis
		return isAlnum(next) || next == '_' || next == '/' || next == '.' && len(arg) > 2 && arg[2] == '/'
	case c == '/' || c == '\\':
		return isWordByte(next) || next == '*' || next == '~' || alone && (next == 0 || next == ' ')
	case c == '>' || c == '<' || c == '*': // a redirection or a glob: >/tmp/x, not Home > Sale
		return next != 0 && next != ' ' && next != '\t'
	case c == '\'' || c == '"' || driveLetter(arg):
		return true
	case isDigit(c):
		return next == '>' || next == '<' || // 2>&1
			lower && (numberCommands.hasHashed(word, h) || netTools.hasHashed(word, h) && hostArg(arg))
	}
	return interpreters.hasHashed(word, h) && hasType(firstWord(arg), scriptTypes) ||
		lower && netTools.hasHashed(word, h) && hostArg(arg) ||
		word != "Net" && netWord.hasHashed(word, h) && netCommands.hasFold(firstWord(arg))
}

// contraction reports an English contraction's tail after an apostrophe
// at the start of s: s, d, m, t, ll, ve or re, then no letter (who's,
// who'd, who'll).
func contraction(s string) bool {
	n := 0
	for n < len(s) && n < 3 && isLetter(s[n]) {
		n++
	}
	if n == 3 || n < len(s) && isLetter(s[n]) {
		return false
	}
	return contractions.hasFold(s[:n])
}

var contractions = wordSet("s", "d", "m", "t", "ll", "ve", "re")

// variable reports a shell variable or substitution after a $: $HOME,
// ${x}, $(id), not a price ($30).
func variable(s string) bool {
	return s != "" && (isLetter(s[0]) || s[0] == '_' || s[0] == '{' || s[0] == '(')
}

func hasUpper(s string) bool {
	for i := range len(s) {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// netCommands are the subcommands of Windows' net that tell an attacker
// something or change the machine (net user, net localgroup
// administrators). argument takes "Net", as a title writes it, for a
// word: "Gross & Net User count".
var (
	netWord     = wordSet("net")
	netCommands = wordSet("user", "localgroup", "group", "share", "session", "view", "use", "accounts", "start", "stop")
)

// executable reports the name of a file Windows runs: x.exe, x.bat,
// x.cmd, x.ps1, x.vbs (not x.com or x.sh: domains).
func executable(word string) bool { return hasType(word, executableTypes) }

var executableTypes = wordSet("exe", "bat", "cmd", "ps1", "vbs")

// scriptTypes are the scripts an interpreter runs: x.py, x.rb, x.pl,
// x.php, x.js, x.lua, x.sh.
var scriptTypes = wordSet("py", "rb", "pl", "php", "js", "lua", "sh")

// hasType reports a file name whose extension is one of types.
func hasType(name string, types *foldSet) bool {
	dot := strings.LastIndexByte(name, '.')
	return dot > 0 && types.hasFold(name[dot+1:])
}

// firstWord is the word bytes s starts with.
func firstWord(s string) string {
	end := 0
	for end < len(s) && isWordByte(s[end]) {
		end++
	}
	return s[:end]
}

// hostArg reports an argument that starts with a host name, an address
// or a URL: a word with a dot or a colon (evil.example, 10.0.0.1,
// http://x).
func hostArg(s string) bool {
	for i := 0; i < len(s) && s[i] != ' ' && s[i] != '\t'; i++ {
		if s[i] == '.' || s[i] == ':' {
			return i > 0 && i+1 < len(s) && s[i+1] != ' '
		}
	}
	return false
}

// driveLetter reports a Windows path: C:\ or C:/.
func driveLetter(s string) bool {
	return len(s) >= 3 && isLetter(s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// nameEnd is where a shell variable's name at s[i] ends (a letter or _,
// then letters, digits and _); i where none starts there.
func nameEnd(s string, i int) int {
	if i >= len(s) || !isLetter(s[i]) && s[i] != '_' {
		return i
	}
	for i++; i < len(s) && (isAlnum(s[i]) || s[i] == '_'); i++ {
	}
	return i
}
