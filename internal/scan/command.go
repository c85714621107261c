package scan

import (
	"strings"

	"github.com/contractguard/contractguard/internal/formats"
)

// --- command injection

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

// wordSet is a set of words looked up without regard to ASCII case and
// without a copy (see foldSet).
func wordSet(words ...string) *foldSet {
	upper := make([]string, len(words))
	for i, w := range words {
		upper[i] = strings.ToUpper(w)
	}
	return newFoldSet(upper)
}

// commandInjection reports a shell metacharacter that chains or
// substitutes a command (; | & ` $( ${ a newline or a carriage return)
// followed by a command.
func commandInjection(s string, f uint32) bool {
	for _, m := range metachars {
		if f&m.kind == 0 {
			continue
		}
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
			}
			if commandAt(s, next) {
				return true
			}
		}
	}
	return false
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
	for _, c := range []byte(" \t\n\r\"'(){|&;`$") {
		t[c] = true
	}
	return t
}()

// commandAt reports whether a command starts at s[i], after blanks,
// quotes, more metacharacters, ( or {, and $IFS, ${IFS} or $1 (empty or a
// blank to the shell). A command is a word of commands or wordCommands
// (see command), its last path step if it is a path (/bin/sh), or the
// name of a file to run: ./x, or x.exe, x.ps1 and their kind. Where the
// word holds quotes, balanced, or backslashes, which the shell drops
// (w'h'o'a'm'i, c\at, /bin/c'a't), it is read without them too.
func commandAt(s string, i int) bool {
lead:
	for i < len(s) {
		switch {
		case commandLead[s[i]]:
			i++
		case i > 0 && (s[i-1] == '$' || s[i-1] == '{') && strings.HasPrefix(s[i:], "IFS"):
			i += len("IFS")
		case s[i] == '}' && i >= 3 && s[i-3:i] == "IFS", i > 0 && s[i-1] == '$' && isDigit(s[i]):
			i++
		default:
			break lead
		}
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
	if (i == len(s) || s[i] != '\'' && s[i] != '"') && strings.IndexByte(s[begin:i], '\\') < 0 {
		return false
	}
	// The word again, through quotes and backslashes, without them.
	var buf [64]byte
	n, quotes, doubles, dropped := 0, 0, 0, false
	switch before { // the quote the word opened with
	case '\'':
		quotes++
	case '"':
		doubles++
	}
	for i = begin; i < len(s) && (isWordByte(s[i]) || s[i] == '\'' || s[i] == '"'); i++ {
		switch c := s[i]; {
		case c == '\'':
			quotes++
		case c == '"':
			doubles++
		case c == '\\':
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

func isWordByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '\\'
}

// --- path traversal

// sensitivePaths are files and folders a request value has no business
// naming, matched without regard to case after decoding, with \ read as
// /, at the start of the value or after a /. A name that does not end in /
// must end there or before a byte that is not a letter or digit (.env,
// not .envelope).
var sensitivePaths = []string{
	"etc/passwd", "etc/shadow", "etc/group", "etc/hosts", "etc/issue", "etc/sudoers",
	"proc/self/", "proc/version", "proc/cmdline", ".ssh/", "id_rsa", "id_dsa", "id_ed25519",
	".bash_history", ".htpasswd", ".htaccess", ".env", ".git/", "var/log/", ".aws/", ".kube/",
	"etc/ssh/", "web-inf/", "c:/windows/", "windows/system32", "win.ini", "boot.ini", "system.ini",
	"web.config", "ntuser.dat", "wp-config.php", "inetpub/", "global.asa",
}

// pathTraversal reports a .. segment (../ or ..\ and their percent-,
// double- and overlong-encoded forms; see dotDotSegment), a NUL byte, or
// a sensitive path.
func pathTraversal(s string, f uint32) bool {
	if f&hasPath == 0 {
		return false // a bare name (id_rsa) is a file name, not a path
	}
	if f&hasNUL != 0 {
		return true
	}
	if f&hasSep == 0 {
		// Nothing to decode and no separator: a .. segment is the whole
		// value, a sensitive name without a / its start. (The general path
		// gives the same answer, for ~1.5k more instructions on the order
		// body's dotted values.)
		return s == ".." || sensitiveStart(s, &sensitiveNamesByFirst)
	}
	d, encoded := s, f&(hasPercent|hasOverlong) != 0 // else decodePath(s) is s
	if encoded {
		d = decodePath(s)
		if strings.IndexByte(d, 0) >= 0 {
			return true
		}
	}
	if encoded || f&hasBackslash != 0 {
		d = strings.ReplaceAll(d, `\`, "/")
	}
	return dotDotSegment(d) && !openInterval(d) || sensitivePath(d)
}

// sensitiveByFirst are sensitivePaths by their first byte, lower case,
// and sensitiveNamesByFirst those without a /: all a value without one can
// hold.
var sensitiveByFirst, sensitiveNamesByFirst = func() (all, names [256][]string) {
	for _, p := range sensitivePaths {
		all[p[0]] = append(all[p[0]], p)
		if !strings.Contains(p, "/") {
			names[p[0]] = append(names[p[0]], p)
		}
	}
	return all, names
}()

// sensitivePath reports one of sensitivePaths at the start of d or after
// a /.
func sensitivePath(d string) bool {
	for i := -1; i < len(d)-1; {
		rest := d[i+1:]
		if sensitiveStart(rest, &sensitiveByFirst) {
			return true
		}
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// sensitiveStart reports one of the paths of byFirst (by their first
// byte) at the start of d.
func sensitiveStart(d string, byFirst *[256][]string) bool {
	if d == "" {
		return false
	}
	c := d[0]
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	for _, p := range byFirst[c] {
		n, ok := pathPrefixFold(d, p)
		if ok && (p[len(p)-1] == '/' || len(d) == n || !isAlnum(d[n])) {
			return true
		}
	}
	return false
}

// pathPrefixFold reports whether d starts with the path p (lower case),
// without regard to case, and how much of d that is. Where p has a /, d
// may have more, and ./ steps: etc//passwd and etc/./passwd name
// etc/passwd.
func pathPrefixFold(d, p string) (int, bool) {
	i := 0
	for j := range len(p) {
		if i == len(d) {
			return 0, false
		}
		c := d[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[j] {
			return 0, false
		}
		i++
		for c == '/' && i < len(d) && (d[i] == '/' || d[i] == '.' && i+1 < len(d) && d[i+1] == '/') {
			if d[i] == '.' {
				i++
			}
			i++
		}
	}
	return i, true
}

func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

// dotDotSegment reports a path segment that is "..", or, before a /,
// ".." with a ;parameter (..;/ is ../ to Tomcat and Spring), "...."
// before an empty segment or "..." before a "." one (....// and ..././,
// which are ../ once a filter has taken ../ out of them), or dots before
// more dots (/.../.../, which old Windows read as ../../): Home/.../x and
// an ellipsis are not.
func dotDotSegment(d string) bool {
	if !strings.Contains(d, "..") {
		return false
	}
	for {
		seg, rest, more := strings.Cut(d, "/")
		if seg == ".." {
			return true
		}
		if !more {
			return false
		}
		if strings.HasPrefix(seg, "..") && stepUp(seg, rest) {
			return true
		}
		d = rest
	}
}

// stepUp reports whether seg, a segment that starts with .. and that rest
// follows after a /, is one of the other forms dotDotSegment names.
func stepUp(seg, rest string) bool {
	next, _, _ := strings.Cut(rest, "/")
	switch dots, _, param := strings.Cut(seg, ";"); {
	case param:
		return dots == ".." // ..;/
	case seg == "...." && strings.HasPrefix(rest, "/"), // ....//
		seg == "..." && next == ".": // ..././
		return true
	}
	return strings.Trim(seg, ".") == "" && len(next) >= 2 && strings.Trim(next, ".") == "" // /.../.../
}

// openInterval reports an ISO 8601 time interval open at one end, as the
// datetime parameter of OGC API Features writes one: 2018-02-12/.. or
// ../2018-03-18T12:31:12Z.
func openInterval(d string) bool {
	t, ok := strings.CutSuffix(d, "/..")
	if !ok {
		t, ok = strings.CutPrefix(d, "../")
	}
	return ok && (formats.Date(t) || formats.DateTime(t))
}

// decodePath undoes up to three rounds of percent-encoding, with the
// overlong UTF-8 forms of . / \ and IIS's %uXXXX, as a server that decodes
// too often would; and overlong forms already decoded to raw bytes, as a
// query value arrives.
func decodePath(s string) string {
	s = undoRawOverlongs(s)
	for range 3 {
		if strings.IndexByte(s, '%') < 0 {
			break
		}
		next := percentDecode(s)
		if next == s {
			break
		}
		s = next
	}
	return undoRawOverlongs(s) // %c0%ae half encoded: \xc0%ae
}

var overlong = map[string]byte{
	"%c0%ae": '.', "%c0%2e": '.', "%e0%80%ae": '.', "%c0%af": '/', "%e0%80%af": '/', "%c0%2f": '/',
	"%c1%9c": '\\', "%c1%1c": '\\', "%c0%5c": '\\', "%c1%af": '/',
	"%u002e": '.', "%u002f": '/', "%u005c": '\\', "%u2215": '/', "%u2216": '\\', "%uff0e": '.', "%uff0f": '/',
	"%uff3c": '\\',
}

// undoRawOverlongs is s with the raw overlong forms of overlong replaced
// (and itself when it has none: 0xE0 leads real UTF-8 too, in Thai or
// Hindi).
func undoRawOverlongs(s string) string {
	if strings.IndexByte(s, 0xc0) < 0 && strings.IndexByte(s, 0xc1) < 0 && !strings.Contains(s, "\xe0\x80") {
		return s
	}
	return rawOverlongs.Replace(s)
}

// rawOverlongs replaces the overlong UTF-8 forms of overlong, decoded to
// raw bytes, with what they stand for.
var rawOverlongs = func() *strings.Replacer {
	var pairs []string
	for form, c := range overlong {
		if form[1] == 'u' {
			continue
		}
		var raw []byte
		for i := 0; i < len(form); i += 3 { // %xx%xx…
			raw = append(raw, formats.Unhex(form[i+1])<<4|formats.Unhex(form[i+2]))
		}
		pairs = append(pairs, string(raw), string(c))
	}
	return strings.NewReplacer(pairs...)
}()

// overlongAt is the byte an overlong form at the start of s stands for,
// and its length; n is 0 when s starts with none.
func overlongAt(s string) (c byte, n int) {
	if len(s) < 6 || strings.IndexByte("cCeEuU", s[1]) < 0 {
		return 0, 0
	}
	var lower [9]byte
	for _, n := range [...]int{9, 6} {
		if n <= len(s) {
			for i := range n {
				lower[i] = s[i]
				if 'A' <= s[i] && s[i] <= 'Z' {
					lower[i] += 'a' - 'A'
				}
			}
			if c, ok := overlong[string(lower[:n])]; ok { // a lookup that does not copy
				return c, n
			}
		}
	}
	return 0, 0
}

func percentDecode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if c, n := overlongAt(s[i:]); n > 0 {
			b.WriteByte(c)
			i += n - 1
			continue
		}
		if i+2 < len(s) && formats.IsHex(s[i+1]) && formats.IsHex(s[i+2]) {
			b.WriteByte(formats.Unhex(s[i+1])<<4 | formats.Unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte('%')
	}
	return b.String()
}

// --- NoSQL operators

var operators = wordSet(
	"where", "ne", "eq", "gt", "gte", "lt", "lte", "in", "nin", "regex", "exists", "or", "and",
	"not", "nor", "expr", "elemmatch", "all", "size", "type", "mod", "text", "jsonschema",
	"function", "accumulator", "lookup", "merge", "out", "comment",
)

// noSQLOperator reports a query operator ($where, $ne, …) inside a string
// at the start of a key: after {, [, a quote, a comma, a blank or at the
// start ({"$gt": ""}, user[$ne]=1); or JavaScript meant for a $where
// clause: a string closed early to append a statement or a || or &&
// condition, a call on the database or a collection (db.users.find(),
// db.getCollectionNames()), a climb to the Function constructor.
func noSQLOperator(s string, f uint32) bool {
	return f&hasDollar != 0 && operatorKey(s) ||
		f&(hasQuote|hasSemicolon) != 0 && jsAfterQuote(s, f) ||
		f&(hasDot|hasParen) == hasDot|hasParen && (databaseCall(s) || strings.Contains(s, "constructor.constructor("))
}

func operatorKey(s string) bool {
	for i := strings.IndexByte(s, '$'); i >= 0; {
		if i == 0 || strings.IndexByte("{[\"', \t\n", s[i-1]) >= 0 {
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			if operators.hasFold(s[i+1:j]) && (j == len(s) || !isWordByte(s[j])) {
				return true
			}
		}
		k := strings.IndexByte(s[i+1:], '$')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// jsStatements are the words a statement injected into a $where clause
// starts with.
var jsStatements = wordSet("return", "while", "for", "do", "var", "let", "const", "function", "sleep",
	"this", "throw", "if", "new", "emit", "db", "try")

// jsAfterQuote reports a quote closed early and followed by || or &&, or
// a ; and a statement: after a quote any statement, after anything else
// only one that reads as code (sleep(…), return this…, return 1).
func jsAfterQuote(s string, f uint32) bool {
	for _, c := range [...]byte{'\'', '"', ';'} {
		if c == ';' && f&hasSemicolon == 0 || c != ';' && f&hasQuote == 0 {
			continue
		}
		for i := 0; i < len(s); i++ {
			j := strings.IndexByte(s[i:], c)
			if j < 0 {
				break
			}
			i += j
			if jsAt(s, i) {
				return true
			}
		}
	}
	return false
}

// jsAt reports jsAfterQuote's finding at the quote or ; at s[i].
func jsAt(s string, i int) bool {
	j := i + 1
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if s[i] != ';' && j+1 < len(s) && (s[j:j+2] == "||" || s[j:j+2] == "&&") {
		return true
	}
	if s[i] != ';' {
		return false
	}
	k := j
	for k < len(s) && isLetter(s[k]) {
		k++
	}
	word := s[j:k]
	if !jsStatements.hasFold(word) {
		return false
	}
	if i == 0 || s[i-1] == '\'' || s[i-1] == '"' { // '; while…
		return k == len(s) || !isWordByte(s[k]) || s[k] == '.'
	}
	// After anything else, only what reads as code: a call (sleep(…),
	// or return with a value that is not a word of prose.
	if k < len(s) && s[k] == '(' {
		return true
	}
	if strings.EqualFold(word, "return") {
		rest := strings.TrimLeft(s[k:], " \t")
		return rest != "" && (rest[0] == '(' || rest[0] == '\'' || rest[0] == '"' || isDigit(rest[0]) ||
			strings.HasPrefix(rest, "this") || strings.HasPrefix(rest, "true") || strings.HasPrefix(rest, "false"))
	}
	return false
}

var collectionMethods = wordSet("find", "findone", "insert", "insertone", "insertmany", "update", "updateone",
	"updatemany", "remove", "deleteone", "deletemany", "drop", "mapreduce", "aggregate", "count", "distinct")

var databaseMethods = wordSet("getcollectionnames", "getcollection", "dropdatabase", "eval", "runcommand",
	"admincommand", "createuser", "getusers", "getname", "stats", "getsiblingdb", "currentop", "killop")

// databaseCall reports db.<method>( or db.<collection>.<method>( .
func databaseCall(s string) bool {
	for i := strings.Index(s, "db."); i >= 0; {
		rest := s[i+3:]
		if paren := strings.IndexByte(rest, '('); paren > 0 && databaseMethods.hasFold(rest[:paren]) {
			return true
		}
		dot := strings.IndexByte(rest, '.')
		if dot > 0 {
			m := rest[dot+1:]
			paren := strings.IndexByte(m, '(')
			if paren > 0 && collectionMethods.hasFold(m[:paren]) {
				return true
			}
		}
		k := strings.Index(rest, "db.")
		if k < 0 {
			break
		}
		i += 3 + k
	}
	return false
}

// --- prototype pollution

// protoPath reports a property path through __proto__ or
// constructor.prototype, as merge and set helpers read them
// (a.__proto__.x, constructor[prototype][x]), and as JSON pointers and
// patches write them (/constructor/prototype/x). Any constructor may be
// the one: constructor.constructor.prototype reaches Function's. f is
// bytesIn(s): __proto__ needs an _, and a path to prototype a y and the
// length of "constructor.prototype".
func protoPath(s string, f uint32) bool {
	if f&hasUnderscore != 0 && strings.Contains(s, "__proto__") {
		return true
	}
	if f&hasY == 0 || len(s) < len("constructor.prototype") || !strings.Contains(s, "prototype") {
		return false
	}
	for i := strings.Index(s, "constructor"); i >= 0; {
		rest := s[i+len("constructor"):]
		step := strings.TrimLeft(rest, `./[]"' :{`)
		if len(step) < len(rest) && strings.HasPrefix(step, "prototype") && // a step between them
			(len(step) == len("prototype") || !isWordByte(step[len("prototype")]) || step[len("prototype")] == '.' || step[len("prototype")] == '/') {
			return true
		}
		j := strings.Index(rest, "constructor")
		if j < 0 {
			return false
		}
		i += len("constructor") + j
	}
	return false
}
