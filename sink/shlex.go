package sink

import (
	"math/bits"
	"slices"
	"strings"
)

// The shell readers: for a script given to sh -c, cmd /c or powershell
// -Command, each byte's class (literal text of a word, a comment, or
// syntax: quotes, blanks, operators, expansions, globs), and the words:
// where each begins and ends, where its literal text begins and ends, and
// whether it is in command position (the program) or after "--" (an
// operand, never an option).

type shFamily uint8

const (
	posixShell shFamily = iota + 1 // sh, bash, dash, zsh, ksh, ash, fish
	cmdShell                       // cmd.exe
	powerShell                     // powershell, pwsh
)

const (
	shOther   byte = iota // syntax
	shLit                 // a byte that ends up as itself in a word
	shComment             // inside a comment
)

type shWord struct {
	start, end        int
	firstLit, lastLit int // -1 when the word has no literal byte
	cmd               bool
	operand           bool
	redir             bool  // a redirection's target (>file, <file) or descriptor (2>)
	stdin             bool  // an input redirection's target (<file, <<EOF, <<<word)
	code              bool  // a command line a wrapper runs (env -S '…', flock f -c '…')
	command           int32 // the command the word is in, numbered from 1
	// A code word's command line: from byte codeOff of its value (-1 when
	// the readings differ), split when env splits it into its arguments;
	// nested when it is read as a nested script (nest.go), not blocked
	// whole.
	codeOff   int
	codeSplit bool
	nested    bool
	// setenv: NAME=VALUE for the environment of the program a wrapper
	// runs (env A=1, systemd-run -E A=1), from byte envOff of its value
	// (-1 when the readings differ).
	setenv bool
	envOff int
	// conf: 'g' for git's -c NAME=VALUE (--config-env), 's' for ssh's -F
	// FILE, of a git or ssh the script runs, 'p' for a unit's property
	// NAME=VALUE a wrapper sets (systemd-run -p), from byte confOff of its
	// value (-1 when the readings differ).
	conf    byte
	confOff int
	// interp: the word of the interpreter whose code the word is, from
	// byte interpOff of its value (-1 when the readings differ), or -1
	// (python3 -c CODE, awk 'PROGRAM': findCode).
	interp    int
	interpOff int
}

// shScript is a lexed script.
type shScript struct {
	family shFamily
	text   string
	cls    []byte
	word   []int32 // each byte's word, or -1
	words  []shWord
	// pipes: the script has a pipe (|, |&) or a process substitution
	// (<(…), >(…)), through which a command may feed another's input.
	pipes bool
	feed  *feed // the shells that read their script from their input (stdin.go)
	// steps counts what reading the here-documents looked at (bytes of
	// lines indexed, lines searched, frames left), for the test that holds
	// that reading linear in the script's length.
	steps int
	scans int // the words the scans of its su and shell words read (wordScan)
	// assigns: the words that assign a variable (assignment), built on
	// first use.
	assigns []bool
	// shAssigns: the words the shell itself reads as NAME=VALUE
	// (shellAssignment), built on first use.
	shAssigns []bool
	// cmdOrder and cmdWords: commands(), built on first use (once the
	// script is lexed: its words' commands do not change after).
	cmdOrder []int32
	cmdWords map[int32][]int
}

// declarations are the commands whose NAME=VALUE arguments assign the
// variable: export's, and declare's, typeset's, local's and readonly's
// with -x or without (a variable already exported, such as PATH, stays
// exported).
var declarations = map[string]bool{"export": true, "declare": true, "typeset": true, "local": true, "readonly": true}

// assignment is the variable word k assigns, when it is NAME=VALUE in
// command position (a statement, or before the program: LD_PRELOAD=x ls)
// or an argument of a declaration (export LD_PRELOAD=x), whose value the
// programs the script runs after it may get in their environment.
func (sc *shScript) assignment(k int32) (string, bool) {
	if sc.assigns == nil {
		// Once, in one pass: a script may have many words.
		sc.assigns = make([]bool, len(sc.words))
		decl := map[int32]bool{} // the commands that are declarations
		for j := range sc.words {
			w := &sc.words[j]
			if w.redir {
				continue
			}
			t, _ := sc.value(j)
			switch {
			case w.cmd && declarations[t]:
				decl[w.command] = true
			case (w.cmd || decl[w.command]) && isAssignment(t):
				sc.assigns[j] = true
			}
		}
	}
	if k < 0 || int(k) >= len(sc.assigns) || !sc.assigns[k] {
		return "", false
	}
	t, _ := sc.value(int(k))
	name, _, _ := strings.Cut(t, "=")
	return name, true
}

// assignKeywords are the reserved words that may come before a command's
// assignments (if A=1 cmd). Not time, which dash runs as a program.
var assignKeywords = map[string]bool{
	"then": true, "do": true, "else": true, "elif": true, "if": true, "while": true, "until": true, "!": true, "{": true,
}

// shellAssignment reports whether byte i of word k is in the value of an
// assignment the shell makes: the word is NAME=VALUE as written (its name
// and = literal: a quoted 'A=b' is a program's name) and only
// assignments, reserved words and redirections come before it in its
// command (after a wrapper, nohup A=b cmd runs A=b). Such a word is never
// the program.
func (sc *shScript) shellAssignment(k int32, i int) bool {
	if sc.shAssigns == nil {
		// Once, in one pass: a script may have many words.
		sc.shAssigns = make([]bool, len(sc.words))
		past := map[int32]bool{} // the commands whose program has come
		for j := range sc.words {
			w := &sc.words[j]
			if w.redir || past[w.command] {
				continue
			}
			switch raw := sc.text[w.start:w.end]; {
			case w.cmd && isAssignment(raw):
				sc.shAssigns[j] = true
			case !assignKeywords[raw]:
				past[w.command] = true
			}
		}
	}
	if k < 0 || int(k) >= len(sc.shAssigns) || !sc.shAssigns[k] {
		return false
	}
	w := sc.words[k]
	return i > w.start+strings.IndexByte(sc.text[w.start:w.end], '=')
}

// The words after which the next word is again a command.
var commandPrefixes = map[string]bool{
	"then": true, "do": true, "else": true, "elif": true, "if": true, "while": true, "until": true,
	"!": true, "{": true, "time": true, "exec": true, "command": true, "builtin": true, "nohup": true,
	"sudo": true, "doas": true, "env": true, "nice": true, "xargs": true, "eval": true,
	"coproc": true, // bash's coproc: the word after it is the program (coproc NAME is for a compound command)
}

// frame is one level of nesting of a POSIX script.
type frame struct {
	kind  byte // 'c' code, 's' single quotes, 'a' $'…', 'd' double quotes, 'b' ${…}, '`' backquotes, '(' $(…), 'h' and 'H' a here-document's body (its delimiter unquoted, quoted)
	depth int  // parentheses open in a $(…) frame, braces in a ${…} frame
	end   int  // a here-document's body: where its delimiter line starts
	// For code frames: the word being read, and the state of the command.
	cur     int
	cmdPos  bool
	afterDD bool
	wrapper bool  // the command's program, or one before it, is a wrapper: its "--" makes no operands
	redir   bool  // the next word is a redirection's target
	redirIn bool  // … of an input redirection (<, <<, <<<)
	fnName  bool  // the word is the name after the function keyword: a command follows it
	coproc  bool  // the word is the one after coproc: NAME when a { follows it (coproc NAME { …; })
	command int32 // the command being read, or 0 before its first word
}

type shLexer struct {
	sc     *shScript
	frames []frame
	// A reading's options (lexPOSIXAs), and the here-documents whose
	// bodies start after the next newline of code.
	opts     shOpts
	pending  []hereDoc
	commands int32 // the commands numbered so far
	// The starts of the script's lines by what they hold, as written and
	// without leading tabs (<<-): where a here-document's delimiter line
	// is, built on first use.
	lines, tabLines map[string][]int32
	bodies          []int // the frames of the here-documents' bodies being read, innermost last
}

// shOpts are the ways of reading a POSIX script where shells differ: each
// reading is judged, and an input that is syntax in any of them is
// blocked (script.readings).
type shOpts struct {
	// hereDocs: a body after <<WORD (and <<-WORD) is a here-document's,
	// read to the line that is WORD: with expansions unless WORD was
	// quoted, and quotes and # as text.
	hereDocs bool
	// ansiC: $'…' is bash's, zsh's and ksh's ANSI-C string, in which a
	// backslash escapes (\' is a quote inside it), not dash's $ and '…'.
	ansiC bool
	// fishQuotes: fish's '…', in which \' and \\ are escapes.
	fishQuotes bool
}

// hereDoc is a here-document announced by << and not read yet.
type hereDoc struct {
	delim  string // the delimiter, its quotes removed
	quoted bool   // part of the delimiter was quoted: the body is text
	tabs   bool   // <<-: leading tabs are stripped from its lines
}

func (l *shLexer) code() *frame {
	for i := len(l.frames) - 1; i >= 0; i-- {
		if k := l.frames[i].kind; k == 'c' || k == '(' || k == '`' || k == 'h' || k == 'H' {
			return &l.frames[i]
		}
	}
	return &l.frames[0]
}

// inWord marks byte i as part of the current word of the nearest code
// frame, starting one if needed, with class c.
func (l *shLexer) inWord(i int, c byte) {
	f := l.code()
	sc := l.sc
	if f.cur < 0 {
		if f.command == 0 {
			l.commands++
			f.command = l.commands
		}
		f.cur = len(sc.words)
		sc.words = append(sc.words, shWord{start: i, end: i + 1, firstLit: -1, lastLit: -1, cmd: f.cmdPos && !f.redir, operand: f.afterDD, redir: f.redir, stdin: f.redir && f.redirIn, command: f.command, interp: -1})
		f.redir, f.redirIn = false, false
	}
	w := &sc.words[f.cur]
	w.end = i + 1
	if c == shLit {
		if w.firstLit < 0 {
			w.firstLit = i
		}
		w.lastLit = i
	}
	sc.cls[i] = c
	sc.word[i] = int32(f.cur)
}

// endWord ends the word of code frame f: the next word is still a
// command after an assignment or a prefix such as sudo; after "--" the
// words are operands.
func (l *shLexer) endWord(f *frame) {
	if f.cur < 0 {
		return
	}
	w := l.sc.words[f.cur]
	text := l.sc.text[w.start:w.end]
	f.cur = -1
	if w.redir {
		return // a redirection's target leaves the command as it was
	}
	if text == "--" && !f.wrapper {
		f.afterDD = true
	}
	if w.cmd {
		// A wrapper's "--" ends its own options, not its program's
		// (sudo -- git clone --upload-pack=…), and find's only its
		// leading options (find -- -delete): as in the arguments. A
		// shell's ends its own, and after its script a "--" is its $0 or
		// a parameter (sh -c 'git clone "$1"' -- <input>).
		if p := unquoteWord(text); isWrapper(p) || posixShells[shellName(programName(p))] {
			f.wrapper = true
		}
	}
	if f.fnName {
		// function NAME { …; }: the body, a command, follows the name.
		f.fnName, f.cmdPos = false, true
		return
	}
	if f.coproc {
		// coproc NAME { …; }: the body, a command, follows the name.
		f.coproc = false
		if w.cmd && strings.HasPrefix(strings.TrimLeft(l.sc.text[w.end:], " \t"), "{") {
			return
		}
	}
	if w.cmd && (commandPrefixes[text] || isAssignment(text)) {
		f.coproc = text == "coproc"
		return
	}
	f.fnName = w.cmd && text == "function"
	f.cmdPos = false
}

// unquoteWord is a word's raw text without its quotes and backslashes,
// enough to tell a program's name written quoted ('sudo', s\udo).
func unquoteWord(text string) string {
	if !strings.ContainsAny(text, "'\"\\") {
		return text
	}
	return strings.NewReplacer("'", "", "\"", "", "\\", "").Replace(text)
}

// newCommand ends the word and starts a command (after ; & | ( newline).
func (l *shLexer) newCommand(f *frame) {
	l.endWord(f)
	f.cmdPos, f.afterDD, f.wrapper, f.redir, f.redirIn, f.fnName, f.coproc = true, false, false, false, false, false, false
	f.command = 0
}

// redirect reads a redirection operator (< or >) in code frame f: a
// number just before it is the descriptor it redirects (2>), not a word
// of the command, and the word after it is its target, which is not the
// command either (`>/dev/null cmd` runs cmd). So is bash's {name} just
// before it (`{fd}>/dev/null cmd` runs cmd), which other shells run as
// the program: it stays one to the check.
func (l *shLexer) redirect(f *frame, in bool) {
	if f.cur >= 0 {
		w := &l.sc.words[f.cur]
		switch text := l.sc.text[w.start:w.end]; {
		case digitsOnly(text):
			w.cmd, w.redir = false, true
			f.cur = -1
		case fdVariable(text):
			w.redir = true
			f.cur = -1
		}
	}
	l.endWord(f)
	f.redir = true
	f.redirIn = f.redirIn || in
}

// fdVariable: s is bash's {varname} before a redirection, the variable
// that gets the descriptor it opens.
func fdVariable(s string) bool {
	if len(s) < 3 || s[0] != '{' || s[len(s)-1] != '}' || isDigit(s[1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; c != '_' && !isDigit(c) && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		if c := w[i]; !(c == '_' || isDigit(c) && i > 0 || ('a' <= c|0x20 && c|0x20 <= 'z')) {
			return false
		}
	}
	return true
}

func newScript(text string) *shScript {
	sc := &shScript{text: text, cls: make([]byte, len(text)), word: make([]int32, len(text))}
	for i := range sc.word {
		sc.word[i] = -1
	}
	return sc
}

// lexPOSIX reads a script as sh, bash, dash, zsh and ksh do, leaning to
// "syntax" where they differ (a glob, brace or tilde that one shell would
// keep as text).
func lexPOSIX(text string) *shScript { return lexPOSIXAs(text, shOpts{}) }

// lexPOSIXAs is lexPOSIX with the options of one reading.
func lexPOSIXAs(text string, opts shOpts) *shScript {
	sc := newScript(text)
	l := &shLexer{sc: sc, frames: []frame{{kind: 'c', cur: -1, cmdPos: true}}, opts: opts}
	here := -1 // the frame of the here-document being read, or -1
	for i := 0; i < len(text); i++ {
		if here >= 0 && i >= l.frames[here].end {
			// The body's end: what it left open ends with it; its
			// delimiter line is syntax, and its newline ends a command
			// (and starts the next body announced on the same line).
			l.frames = l.frames[:here]
			here = l.innerBody()
			for i < len(text) && text[i] != '\n' {
				sc.cls[i] = shOther
				i++
			}
			if i == len(text) {
				break
			}
		}
		c := text[i]
		top := &l.frames[len(l.frames)-1]
		switch top.kind {
		case 'H':
			l.inWord(i, shLit)
			continue
		case 'h', 'd':
			// A here-document's body, or "…": \ escapes $ ` \ and a
			// newline in both, and " in "…" only.
			escapes := "$`\\\n"
			if top.kind == 'd' {
				escapes = "$`\"\\\n"
			}
			switch {
			case c == '"' && top.kind == 'd':
				l.inWord(i, shOther)
				l.frames = l.frames[:len(l.frames)-1]
			case c == '\\' && i+1 < len(text) && strings.IndexByte(escapes, text[i+1]) >= 0:
				l.inWord(i, shOther)
				i++
				l.inWord(i, shLit)
			case c == '$' || c == '`':
				i = l.expansion(i)
			default:
				l.inWord(i, shLit)
			}
			continue
		case 's', 'a':
			if c == '\\' && i+1 < len(text) && (top.kind == 'a' || l.opts.fishQuotes && (text[i+1] == '\'' || text[i+1] == '\\')) {
				// An escape: in $'…' the byte after it need not be itself
				// (\n, \x41), and is syntax too.
				l.inWord(i, shOther)
				i++
				if top.kind == 'a' {
					l.inWord(i, shOther)
				} else {
					l.inWord(i, shLit)
				}
				continue
			}
			if c == '\'' {
				l.inWord(i, shOther)
				l.frames = l.frames[:len(l.frames)-1]
			} else {
				l.inWord(i, shLit)
			}
			continue
		case 'b':
			l.inWord(i, shOther)
			switch c {
			case '{':
				top.depth++
			case '}':
				top.depth--
				if top.depth < 0 {
					l.frames = l.frames[:len(l.frames)-1]
				}
			}
			continue
		}
		// A code frame: the top level, $(…) or `…`.
		f := top
		switch {
		case c == '`' && f.kind == '`':
			l.endWord(f)
			l.frames = l.frames[:len(l.frames)-1]
			l.inWord(i, shOther)
		case c == ')' && f.kind == '(' && f.depth == 0:
			l.endWord(f)
			l.frames = l.frames[:len(l.frames)-1]
			l.inWord(i, shOther)
		case c == ' ' || c == '\t':
			l.endWord(f)
		case i > 0 && (c == '&' && (text[i-1] == '<' || text[i-1] == '>') || c == '|' && text[i-1] == '>'):
			// >&2, <&0, >| : part of the redirection.
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			if f.kind == '(' {
				if c == '(' {
					f.depth++
				} else if c == ')' {
					f.depth--
				}
			}
			if c == '|' && (i+1 == len(text) || text[i+1] != '|') && (i == 0 || text[i-1] != '|') {
				sc.pipes = true // not ||
			}
			l.newCommand(f)
			if c == '\n' && len(l.pending) > 0 {
				here = l.hereBody(i + 1)
			}
		case c == '<' || c == '>':
			l.redirect(f, c == '<')
			if i+1 < len(text) && text[i+1] == '(' {
				sc.pipes = true // <(…), >(…)
			}
			if c == '<' && l.opts.hereDocs && i+2 < len(text) && text[i+1] == '<' && text[i+2] != '<' && (i == 0 || text[i-1] != '<') {
				l.announce(i + 2)
			}
		case c == '#' && f.cur < 0:
			for i < len(text) && text[i] != '\n' {
				sc.cls[i] = shComment
				i++
			}
			i-- // the newline ends a command: read it next
		case c == '\'':
			l.inWord(i, shOther)
			l.frames = append(l.frames, frame{kind: 's', cur: -1})
		case c == '"':
			l.inWord(i, shOther)
			l.frames = append(l.frames, frame{kind: 'd', cur: -1})
		case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
			// A line continuation, which the shell removes: the word and
			// the command go on after it (`timeout \<newline> 5 cmd` runs
			// cmd). Its bytes are syntax, of no word.
			i++
		case c == '\\':
			l.inWord(i, shOther)
			if i+1 < len(text) {
				i++
				l.inWord(i, shLit)
			}
		case c == '$' && l.opts.ansiC && i+1 < len(text) && text[i+1] == '\'':
			l.inWord(i, shOther)
			l.inWord(i+1, shOther)
			l.frames = append(l.frames, frame{kind: 'a', cur: -1})
			i++
		case c == '$' || c == '`':
			i = l.expansion(i)
		case c == '=' && f.cur < 0 && i+1 < len(text) && text[i+1] == '(':
			// zsh's =(…), a process substitution (as a file's name):
			// its command's output may feed a shell (source =(…)).
			sc.pipes = true
			l.inWord(i, shOther)
		case strings.IndexByte("*?[]{}~!^", c) >= 0, c == '=' && f.cur < 0, c < ' ', c == 0x7f:
			l.inWord(i, shOther)
		default:
			l.inWord(i, shLit)
		}
	}
	sc.findPrograms()
	return sc
}

// announce reads the delimiter word of the here-document whose << ends
// before i, and adds it to those whose bodies start at the next newline.
// The word itself is read as the rest of the script is.
func (l *shLexer) announce(i int) {
	text := l.sc.text
	h := hereDoc{}
	if i < len(text) && text[i] == '-' {
		h.tabs = true
		i++
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	var b strings.Builder
word:
	for ; i < len(text); i++ {
		switch c := text[i]; c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			break word
		case '\\':
			h.quoted = true
			if i+1 < len(text) {
				i++
				b.WriteByte(text[i])
			}
		case '\'', '"':
			h.quoted = true
			j := i + 1
			for j < len(text) && text[j] != c {
				if c == '"' && text[j] == '\\' && j+1 < len(text) {
					j++
				}
				b.WriteByte(text[j])
				j++
			}
			i = j
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 0 || h.quoted {
		h.delim = b.String()
		l.pending = append(l.pending, h)
	}
}

// innerBody is the index of the innermost here-document body's frame, or
// -1: the last of bodies still among the frames. (Looking down the frames
// for it went through every $( a body left open: "$(cat <<B", B on each
// pair of lines, read 1 MB in seconds.)
func (l *shLexer) innerBody() int {
	for len(l.bodies) > 0 && l.bodies[len(l.bodies)-1] >= len(l.frames) {
		l.bodies = l.bodies[:len(l.bodies)-1]
		l.sc.steps++
	}
	if len(l.bodies) == 0 {
		return -1
	}
	return l.bodies[len(l.bodies)-1]
}

// hereBody starts the body of the first pending here-document at i: it
// pushes the body's frame, which ends where the line that is its delimiter
// starts (or at the end of the script), and returns the frame's index.
func (l *shLexer) hereBody(i int) int {
	text := l.sc.text
	h := l.pending[0]
	l.pending = l.pending[1:]
	// The first line at or after i that is the delimiter, found in an
	// index of the lines: looking through the rest of the script for each
	// here-document read it again for every one announced inside another's
	// body ("$(cat <<B" on each line: a second for 100 kB).
	if l.lines == nil {
		l.lines, l.tabLines = map[string][]int32{}, map[string][]int32{}
		for p := 0; p < len(text); {
			n := strings.IndexByte(text[p:], '\n')
			line := text[p:]
			if n >= 0 {
				line = text[p : p+n]
			}
			l.lines[line] = append(l.lines[line], int32(p))
			l.sc.steps += len(line) + 1
			if t := strings.TrimLeft(line, "\t"); len(t) < len(line) {
				l.tabLines[t] = append(l.tabLines[t], int32(p))
			}
			if n < 0 {
				break
			}
			p += n + 1
		}
	}
	end := len(text)
	starts := l.lines[h.delim]
	l.sc.steps += bits.Len(uint(len(starts))) + 1
	if k, _ := slices.BinarySearch(starts, int32(i)); k < len(starts) {
		end = int(starts[k])
	}
	if h.tabs {
		// A line with leading tabs is the delimiter too.
		tabbed := l.tabLines[h.delim]
		if k, _ := slices.BinarySearch(tabbed, int32(i)); k < len(tabbed) {
			end = min(end, int(tabbed[k]))
		}
	}
	kind := byte('h')
	if h.quoted {
		kind = 'H'
	}
	// One word, an operand: a body is data, never a program or an option.
	l.frames = append(l.frames, frame{kind: kind, cur: -1, afterDD: true, end: end})
	l.bodies = append(l.bodies, len(l.frames)-1)
	return len(l.frames) - 1
}

// expansion reads the $ or ` at i (code or double quotes): it pushes a
// frame for $(…), ${…} and `…`, and marks a parameter ($name, $1, $@) as
// syntax. It returns the index of the last byte it read.
func (l *shLexer) expansion(i int) int {
	text := l.sc.text
	l.inWord(i, shOther)
	if text[i] == '`' {
		l.frames = append(l.frames, frame{kind: '`', cur: -1, cmdPos: true})
		return i
	}
	if i+1 >= len(text) {
		return i
	}
	switch n := text[i+1]; {
	case n == '(':
		l.inWord(i+1, shOther)
		l.frames = append(l.frames, frame{kind: '(', cur: -1, cmdPos: true})
		return i + 1
	case n == '{':
		l.inWord(i+1, shOther)
		l.frames = append(l.frames, frame{kind: 'b', cur: -1})
		return i + 1
	case n == '\'' || n == '"':
		return i // $'…' and $"…": the quote is read next
	case n == '_' || ('a' <= n|0x20 && n|0x20 <= 'z'):
		j := i + 1
		for j < len(text) && (text[j] == '_' || isDigit(text[j]) || ('a' <= text[j]|0x20 && text[j]|0x20 <= 'z')) {
			l.inWord(j, shOther)
			j++
		}
		return j - 1
	case isDigit(n) || strings.IndexByte("@*#?$!-", n) >= 0:
		l.inWord(i+1, shOther)
		return i + 1
	}
	return i
}

// lexCmd reads a script as cmd.exe does: "…" quotes (in which % and !
// still expand), ^ escapes, & | ( ) and line ends between commands, blanks
// , ; = between words.
func lexCmd(text string) *shScript {
	sc := newScript(text)
	l := &shLexer{sc: sc, frames: []frame{{kind: 'c', cur: -1, cmdPos: true}}}
	f := &l.frames[0]
	quoted := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"':
			l.inWord(i, shOther)
			quoted = !quoted
		case quoted && (c == '%' || c == '!' || c < ' '):
			l.inWord(i, shOther)
		case quoted:
			l.inWord(i, shLit)
		case c == '&' && i > 0 && (text[i-1] == '<' || text[i-1] == '>'):
			// 2>&1: part of the redirection.
		case c == '\n' || c == '\r' || c == '&' || c == '|' || c == '(' || c == ')':
			l.newCommand(f)
		case c == ' ' || c == '\t' || c == ',' || c == ';' || c == '=' && f.cur < 0:
			l.endWord(f)
		case c == '<' || c == '>':
			l.redirect(f, false)
			sc.cls[i] = shOther
		case c == '%' || c == '!' || c == '^' || c < ' ' || c == 0x7f:
			l.inWord(i, shOther)
		default:
			l.inWord(i, shLit)
		}
	}
	sc.findCode()
	return sc
}

// PowerShell's quotes and dashes beyond ASCII, in UTF-8: ‘ ’ ‚ ‛ are
// single quotes, “ ” „ double, – — ― dashes.
func psQuote(text string, i int) (kind byte, n int) {
	switch text[i] {
	case '\'':
		return 's', 1
	case '"':
		return 'd', 1
	}
	if i+2 < len(text) && text[i] == 0xE2 && text[i+1] == 0x80 {
		switch text[i+2] {
		case 0x98, 0x99, 0x9A, 0x9B:
			return 's', 3
		case 0x9C, 0x9D, 0x9E:
			return 'd', 3
		case 0x93, 0x94, 0x95:
			return '-', 3
		}
	}
	return 0, 1
}

// lexPowerShell reads a script as PowerShell does: '…' (quotes doubled
// inside), "…" (where $ and the backtick expand, and $(…) is code), and,
// outside quotes, only letters, digits and _ . / \ : - + % as literal text.
func lexPowerShell(text string) *shScript {
	sc := newScript(text)
	l := &shLexer{sc: sc, frames: []frame{{kind: 'c', cur: -1, cmdPos: true}}}
	for i := 0; i < len(text); i++ {
		c := text[i]
		top := &l.frames[len(l.frames)-1]
		q, n := psQuote(text, i)
		if top.kind == 's' || top.kind == 'd' {
			switch {
			case q == top.kind:
				if i+n < len(text) {
					if q2, n2 := psQuote(text, i+n); q2 == q {
						// A doubled quote is one quote, literally.
						l.mark(i, i+n, shOther)
						l.mark(i+n, i+n+n2, shLit)
						i += n + n2 - 1
						continue
					}
				}
				l.mark(i, i+n, shOther)
				l.frames = l.frames[:len(l.frames)-1]
				i += n - 1
			case top.kind == 'd' && c == '$' && i+1 < len(text) && text[i+1] == '(':
				l.mark(i, i+2, shOther)
				l.frames = append(l.frames, frame{kind: '(', cur: -1, cmdPos: true})
				i++
			case top.kind == 'd' && (c == '$' || c == '`'):
				l.inWord(i, shOther)
			default:
				l.mark(i, i+n, shLit)
				i += n - 1
			}
			continue
		}
		f := top
		switch {
		case c == ')' && f.kind == '(' && f.depth == 0:
			l.endWord(f)
			l.frames = l.frames[:len(l.frames)-1]
			l.inWord(i, shOther)
		case q == 's' || q == 'd':
			l.mark(i, i+n, shOther)
			l.frames = append(l.frames, frame{kind: q, cur: -1})
			i += n - 1
		case q == '-':
			l.mark(i, i+n, shOther) // a dash that starts a parameter
			i += n - 1
		case c == ' ' || c == '\t':
			l.endWord(f)
		case c == ';' || c == '|' || c == '&' || c == '\n' || c == '\r' || c == '{' || c == '(' || c == ')' || c == '}':
			if f.kind == '(' {
				if c == '(' {
					f.depth++
				} else if c == ')' {
					f.depth--
				}
			}
			l.newCommand(f)
		case c == '#' && f.cur < 0:
			for i < len(text) && text[i] != '\n' {
				sc.cls[i] = shComment
				i++
			}
			i--
		case c == '_' || c == '.' || c == '/' || c == '\\' || c == ':' || c == '-' || c == '+' || c == '%' || isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') || c >= 0x80:
			l.inWord(i, shLit)
		default:
			l.inWord(i, shOther)
		}
	}
	sc.findCode()
	return sc
}

// mark puts bytes [i, j) in the current word with class c.
func (l *shLexer) mark(i, j int, c byte) {
	for ; i < j && i < len(l.sc.text); i++ {
		l.inWord(i, c)
	}
}

// findPrograms marks, in each command of a POSIX script, the programs
// that wrappers run (sudo -u bob id, timeout 5 id) as the command's
// program, and the command lines in their options (env -S '…') as code.
func (sc *shScript) findPrograms() {
	order, cmds := sc.commands()
	for _, c := range order {
		ws := cmds[c]
		// Past the keywords and assignments before the program.
		k := 0
		for k < len(ws) && sc.words[ws[k]].cmd {
			text := sc.text[sc.words[ws[k]].start:sc.words[ws[k]].end]
			if text == "function" && k+1 < len(ws) {
				k += 2 // function NAME { …: the body's command after it
				continue
			}
			if text == "coproc" && k+2 < len(ws) && sc.words[ws[k+2]].cmd && sc.text[sc.words[ws[k+2]].start:sc.words[ws[k+2]].end] == "{" {
				k += 2 // coproc NAME { …: the body's command after it
				continue
			}
			if !isAssignment(text) && !(commandPrefixes[text] && !isWrapper(text)) {
				break
			}
			k++
		}
		if k == len(ws) || !sc.words[ws[k]].cmd {
			continue
		}
		ws = ws[k:]
		word := sc.wordValues(ws)
		vanish := func(j int) bool { return sc.mayVanish(ws[j]) }
		if t, _ := word(0); !isWrapper(t) && !vanish(0) {
			sc.suPrograms(ws, word) // su bob FILE: the user's shell runs FILE
			continue
		}
		p := progFinder{
			n:      len(ws),
			word:   word,
			vanish: vanish,
			prog:   func(j int) { sc.words[ws[j]].cmd = true },
			property: func(j, off int) {
				if w := &sc.words[ws[j]]; w.conf == 0 {
					w.conf, w.confOff = 'p', off
				} else if w.conf != 'p' || w.confOff != off {
					w.confOff = -1
				}
			},
			assign: func(j, off int) {
				if w := &sc.words[ws[j]]; !w.setenv {
					w.setenv, w.envOff = true, off
				} else if w.envOff != off {
					w.envOff = -1
				}
			},
			script: func(j, off int, split bool) {
				if j >= len(ws) {
					return
				}
				if w := &sc.words[ws[j]]; !w.code {
					w.code, w.codeOff, w.codeSplit = true, off, split
				} else if w.codeOff != off || w.codeSplit != split {
					w.codeOff = -1
				}
			},
		}
		p.find()
		sc.suPrograms(ws, word)
	}
	sc.findConfigs()
	sc.findCode()
}

// findCode marks the code arguments of the interpreters each command of
// the script runs (its program, or one a wrapper runs: python3 -c CODE,
// awk 'PROGRAM'), in a POSIX, cmd or PowerShell script.
func (sc *shScript) findCode() {
	order, cmds := sc.commands()
	for _, c := range order {
		ws := cmds[c]
		var word func(int) (string, bool)
		var read []bool // the words the interpreters' scans read (interpreterCode)
		isCmd := func(j int) bool { return sc.words[ws[j]].cmd }
		for j := range ws {
			if !isCmd(j) {
				continue
			}
			// Only an interpreter's words are read (a command's values
			// are made for it alone).
			w := sc.words[ws[j]]
			name := sc.text[w.start:w.end]
			if strings.ContainsAny(name, `'"\`) {
				if word == nil {
					word = sc.wordValues(ws)
				}
				name, _ = word(j)
			}
			if interpreterName(programName(name)) == "" {
				continue
			}
			if word == nil {
				word = sc.wordValues(ws)
			}
			if read == nil {
				read = make([]bool, len(ws))
			}
			counted := func(k int) (string, bool) { sc.scans++; return word(k) }
			interpreterCode(len(ws), counted, j, read, isCmd, func(k, off int) {
				if k >= len(ws) {
					return
				}
				if w := &sc.words[ws[k]]; w.interp < 0 {
					w.interp, w.interpOff = ws[j], off
				} else if w.interpOff != off {
					w.interpOff = -1
				}
			})
		}
	}
}

// findConfigs marks the configuration given to each git (-c NAME=VALUE,
// --config-env) and ssh (-F FILE) a POSIX script runs, up to the
// command's next program, as they are marked in the arguments.
func (sc *shScript) findConfigs() {
	order, cmds := sc.commands()
	for _, c := range order {
		ws := cmds[c]
		var word func(int) (string, bool)
		var capRead []bool // the words capsh's scans read (capshShell)
		isCmd := func(j int) bool { return sc.words[ws[j]].cmd }
		for j := range ws {
			if !isCmd(j) {
				continue
			}
			if word == nil {
				word = sc.wordValues(ws)
			}
			mark := func(kind byte) func(k, off int) {
				return func(k, off int) { sc.markConf(ws[k], kind, off) }
			}
			gitConfigWords(len(ws), word, j, isCmd, mark('g'))
			switch t, known := word(j); {
			case !known:
			case programName(t) == "ssh":
				sshConfigWords(len(ws), word, j, isCmd, mark('s'))
			case programName(t) == "capsh":
				if capRead == nil {
					capRead = make([]bool, len(ws))
				}
				capshShell(len(ws), word, j, capRead, isCmd, mark('S'))
			case programName(t) == "scp" || programName(t) == "sftp":
				scpOptions(len(ws), word, j, isCmd, func(k, off int, kind byte) {
					switch kind {
					case 'F':
						mark('s')(k, off)
					case 'S':
						if off == 0 {
							sc.words[ws[k]].cmd = true // scp -S PROGRAM
						} else {
							mark('S')(k, off)
						}
					}
				})
			}
		}
	}
}

// markConf marks word k as configuration of kind (findConfigs), from
// byte off of its value; where marks differ, from byte 0.
func (sc *shScript) markConf(k int, kind byte, off int) {
	if w := &sc.words[k]; w.conf == 0 {
		w.conf, w.confOff = kind, off
	} else if w.conf != kind || w.confOff != off {
		w.confOff = -1
	}
}

// confInput: input v, at byte s of word k, chooses the configuration of
// git or ssh the word gives (findConfigs).
func (sc *shScript) confInput(k int32, s int, v string) string {
	w := sc.words[k]
	t, _ := sc.value(int(k))
	off := w.confOff
	if off < 0 || off > len(t) {
		off = 0
	}
	switch w.conf {
	case 'g':
		kv := t[off:]
		name, _, _ := strings.Cut(kv, "=")
		if dangerousGitConfig(name) && gitConfigInput(kv, len(name), v) {
			return "sets git's configuration " + strings.ToLower(name)
		}
	case 's':
		if sc.litBefore(k, s)+len(v) > off {
			return "chooses ssh's configuration file"
		}
	case 'p':
		return propertyInput(t[off:], v)
	case 'S':
		if p := sc.litBefore(k, s); p >= off && (p == off || p+len(v) == len(t) || strings.ContainsAny(v, `/\`)) {
			return "chooses the script's program"
		}
	}
	return ""
}

// mayVanish: word k may expand to no word at all, so that the word after
// it takes its place ($NICE id runs id when NICE is empty): it has no
// literal byte and no quote of its own (an unquoted $X, ${X}, $(cmd),
// `cmd`), or it is "$@" or "${name[@]}", which are no word when the list
// is empty.
func (sc *shScript) mayVanish(k int) bool {
	w := sc.words[k]
	if w.firstLit >= 0 {
		return false
	}
	switch t := sc.text[w.start:w.end]; {
	case t == `"$@"`, t == `"${@}"`:
		return true
	case strings.HasPrefix(t, `"${`) && strings.HasSuffix(t, `[@]}"`):
		return true
	}
	for i := w.start; i < w.end; i++ {
		if sc.word[i] == int32(k) && (sc.text[i] == '"' || sc.text[i] == '\'') {
			return false
		}
	}
	return true
}

// params calls found with each positional parameter of the script (0 for
// $0, 1 for $1, "$@" and "$*") that a command runs as its program (a word
// in command position that is the parameter alone, quoted or not), and,
// code true, each one that a command reads as a script: in eval's
// arguments (eval "$1", eval "echo $1"), or a shell's -c script (sh -c
// "$1").
func (sc *shScript) params(found func(p int, code bool)) {
	order, cmds := sc.commands()
	for _, c := range order {
		ws := cmds[c]
		word := sc.wordValues(ws)
		scan := newWordScan(len(ws), word)
		eval := false
		for j, k := range ws {
			w := sc.words[k]
			raw := sc.text[w.start:w.end]
			if eval {
				positionals(raw, func(p int) { found(p, true) })
			}
			if !w.cmd {
				continue
			}
			if p, ok := positional(raw); ok {
				found(p, false)
			}
			t, known := word(j)
			switch name := shellName(programName(t)); {
			case !known:
			case name == "eval":
				eval = true
			case posixShells[name]:
				if s := scan.posix(j, name); s > 0 {
					w := sc.words[ws[s]]
					positionals(sc.text[w.start:w.end], func(p int) { found(p, true) })
				}
			}
		}
		sc.scans += scan.steps
	}
}

// positional is the positional parameter word raw is, alone: $1, ${1},
// "$1", "${12}", $0; 1 for $@, "$@", $* and "$*".
func positional(raw string) (int, bool) {
	t := raw
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		t = t[1 : len(t)-1]
	}
	braced := strings.HasPrefix(t, "${") && strings.HasSuffix(t, "}")
	switch {
	case braced:
		t = t[2 : len(t)-1]
	case strings.HasPrefix(t, "$"):
		t = t[1:]
	default:
		return 0, false
	}
	switch {
	case t == "@" || t == "*":
		return 1, true
	case len(t) == 1 && isDigit(t[0]):
		return int(t[0] - '0'), true
	case braced && digitsOnly(t) && len(t) <= 4:
		n := 0
		for i := 0; i < len(t); i++ {
			n = n*10 + int(t[i]-'0')
		}
		return n, true
	}
	return 0, false
}

// positionals calls found with each positional parameter raw expands, as
// positional reads them, anywhere in it ("echo $1", "${2}x").
func positionals(raw string, found func(p int)) {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '$' {
			continue
		}
		switch c := raw[i+1]; {
		case c == '@' || c == '*':
			found(1)
		case isDigit(c):
			found(int(c - '0'))
		case c == '{':
			e := strings.IndexByte(raw[i:], '}')
			if e < 0 {
				continue
			}
			if p, ok := positional(raw[i : i+e+1]); ok {
				found(p)
			}
		}
	}
}

// suPrograms marks the script files of the su and runuser programs of
// the command of words ws (su bob FILE) as its programs.
func (sc *shScript) suPrograms(ws []int, word func(int) (string, bool)) {
	steps, all := 0, len(ws)
	for j := range ws {
		if !sc.words[ws[j]].cmd || !suRuns(len(ws), word, j, &steps) {
			continue
		}
		suProgram(len(ws), word, j, &steps, &all, func(k int) {
			if k < len(ws) {
				sc.words[ws[k]].cmd = true
			}
		})
	}
}

// wordValues is sc.value on the words ws by position, each read once.
func (sc *shScript) wordValues(ws []int) func(j int) (string, bool) {
	type value struct {
		text        string
		known, read bool
	}
	values := make([]value, len(ws))
	return func(j int) (string, bool) {
		if v := &values[j]; !v.read {
			v.text, v.known = sc.value(ws[j])
			v.read = true
		}
		return values[j].text, values[j].known
	}
}

// value is word k's value, as far as its literal text tells: known when
// nothing but quotes and backslashes is syntax in it.
func (sc *shScript) value(k int) (string, bool) {
	w := sc.words[k]
	var b strings.Builder
	known := true
	for i := w.start; i < w.end; i++ {
		if sc.word[i] != int32(k) {
			continue
		}
		switch c := sc.text[i]; {
		case sc.cls[i] == shLit:
			b.WriteByte(c)
		case c != '\'' && c != '"' && c != '\\':
			known = false
		}
	}
	return b.String(), known
}

// litBefore is the number of literal bytes of word k before byte i: where
// byte i is in the word's value.
func (sc *shScript) litBefore(k int32, i int) int {
	n := 0
	for j := sc.words[k].start; j < i; j++ {
		if sc.word[j] == k && sc.cls[j] == shLit {
			n++
		}
	}
	return n
}
