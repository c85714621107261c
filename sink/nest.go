package sink

import (
	"maps"
	"sort"
	"strings"
)

// Nested scripts. A word of a POSIX script may itself be a script that a
// program the script runs reads as one: a shell's (sh -c "sh -c '…'",
// behind sudo or timeout too), su's and runuser's -c command line (run
// with the user's shell), watch's operands (joined with blanks, for sh
// -c), ssh's remote command (its operands after the destination, joined,
// for the remote user's shell), and a wrapper's command line (env -S,
// flock -c). Such a word's value — the outer shell's quoting removed — is
// read as a script with the same checks (its readings, and the scripts
// nested in it), and the input is looked for in it: an input that is the
// literal text of one word outside is judged where the inner shell puts
// it. The blocks of the nested reading add to the outer one's.
//
// The reading stops at maxNestDepth; a word that holds a script past it,
// or whose value the check cannot know (an expansion of the outer shell in
// it: sh -c "sh -c \"echo $X …\""), is not read: any input in its text is
// blocked.

const (
	// maxNestDepth is how deep scripts are read below the command's own.
	maxNestDepth = 4
	// maxNestBytes bounds the text of the scripts one check reads nested
	// in the command's (each is lexed, once per reading): past it, the
	// check is over budget.
	maxNestBytes = 4 << 20
	// maxJoined bounds the readings of one joined script (ssh's, watch's)
	// that are read: past it, the first is blocked whole.
	maxJoined = 8
)

// nestBudget is one check's budget for nested scripts.
type nestBudget struct {
	bytes int // the text of the nested scripts made
	work  int // the bytes their finders scanned
}

// findKids finds the scripts nested in s, in each of its readings.
func (s *script) findKids() {
	if s.budget == nil {
		s.budget = &nestBudget{}
	}
	type key struct {
		text         string
		family       shFamily
		fish, opaque bool
	}
	seen := map[key]bool{}
	add := func(text string, known bool, family shFamily, fish, opaque bool) bool {
		opaque = opaque || !known || s.depth >= maxNestDepth
		if kk := (key{text, family, fish, opaque}); !seen[kk] {
			seen[kk] = true
			s.budget.bytes += len(text)
			s.kids = append(s.kids, &script{text: text, family: family, fish: fish, opaque: opaque,
				depth: s.depth + 1, budget: s.budget, f: newFinder(text)})
		}
		return !opaque
	}
	for _, rd := range append([]*shScript{s.sc}, s.alts...) {
		rd.nested(func(ws []int, off int, fish, split, opaque bool) bool {
			if s.over {
				return false
			}
			n := len(ws) - 1
			for _, k := range ws {
				w := rd.words[k]
				n += w.end - w.start // at least the value's length
			}
			if s.budget.bytes+n > maxNestBytes {
				s.over = true
				return false
			}
			var b strings.Builder
			known := true
			for i, k := range ws {
				if i > 0 {
					b.WriteByte(' ')
				}
				t, ok := rd.value(k)
				b.WriteString(t)
				known = known && ok
			}
			text := b.String()
			if off < 0 || off > len(text) {
				known, off = false, 0
			}
			text = text[off:]
			if split {
				// env -S's string is env's arguments: env -S '-i id' runs id.
				text = "env " + text
			}
			return add(text, known, posixShell, fish, opaque)
		})
		rd.nestedWindows(func(text string, known bool, family shFamily) {
			if s.over {
				return
			}
			if s.budget.bytes+len(text) > maxNestBytes {
				s.over = true
				return
			}
			add(text, known, family, false, false)
		})
	}
}

// nestedWindows calls found with each script of cmd or PowerShell that
// words of sc hold: cmd's /c (/k, /r) and the words after it, joined;
// powershell's -Command (and the words after it, joined) or
// -EncodedCommand (decoded); in a PowerShell script, the arguments of
// Invoke-Expression (iex), joined. known is false when a word of it has
// an expansion of sc's shell.
func (sc *shScript) nestedWindows(found func(text string, known bool, family shFamily)) {
	order, cmds := sc.commands()
	for _, c := range order {
		ws := cmds[c]
		vals := make([]string, len(ws))
		knowns := make([]bool, len(ws))
		for j, k := range ws {
			vals[j], knowns[j] = sc.value(k)
			if !knowns[j] {
				// An option's word (PowerShell's -c, whose dash is
				// syntax), as written.
				vals[j] = sc.text[sc.words[k].start:sc.words[k].end]
			}
		}
		joined := func(from int) (string, bool) {
			known := true
			for _, ok := range knowns[from:] {
				known = known && ok
			}
			return strings.Join(vals[from:], " "), known
		}
		noCmd := false // a cmd's scan found no /c: nor will a later one's
		for j := range ws {
			switch name := programName(vals[j]); {
			case name == "cmd" && !noCmd:
				noCmd = true
				for m := j + 1; m+1 < len(ws); m++ {
					if a := strings.ToLower(vals[m]); a == "/c" || a == "/k" || a == "/r" {
						text, known := joined(m + 1)
						found(text, known, cmdShell)
						break
					}
				}
			case name == "powershell" || name == "pwsh":
				if m, text := powerShellScript(vals, j); m > 0 {
					_, known := joined(m)
					found(text, known, powerShell)
				} else {
					continue
				}
			case sc.family == powerShell && sc.words[ws[j]].cmd && (name == "iex" || name == "invoke-expression"):
				from := j + 1
				if from < len(ws) && strings.EqualFold(strings.TrimLeft(vals[from], "-"), "command") {
					from++
				}
				if from < len(ws) {
					text, known := joined(from)
					found(text, known, powerShell)
				}
			default:
				continue
			}
			break // the rest of the command is in the script found
		}
	}
}

// checkKids checks v in the scripts nested in s.
func (s *script) checkKids(v string, c Commands) (string, bool) {
	for _, kid := range s.kids {
		if s.budget.work > maxWork {
			return "", false
		}
		before := kid.f.work
		why, ok := kid.check(v, c)
		s.budget.work += kid.f.work - before
		if !ok || why != "" {
			return why, ok
		}
	}
	return "", true
}

// checkOpaque: any occurrence of v in a script the check does not read is
// blocked.
func (s *script) checkOpaque(v string) (string, bool) {
	if !s.f.mayContain(v) {
		return "", true
	}
	i, ok := s.f.index(v, 0)
	if !ok {
		return "", false
	}
	if i >= 0 {
		return "reaches a nested script the check does not read", true
	}
	return "", true
}

// shellVars are the variables that name a shell (the user's: $SHELL,
// which may be fish; the running one's: $BASH, $ZSH_NAME), and how it is
// read.
var shellVars = map[string]string{"SHELL": "sh", "BASH": "bash", "ZSH_NAME": "zsh"}

// shellVar is the shell word k of sc names when it is one of shellVars'
// expansions, alone in the word ($SHELL, ${SHELL}, "$BASH",
// ${SHELL:-/bin/sh}), or "": any when it may be any shell, fish too.
func (sc *shScript) shellVar(k int) (name string, any bool) {
	w := sc.words[k]
	t := sc.text[w.start:w.end]
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		t = t[1 : len(t)-1]
	}
	var v string
	switch {
	case strings.HasPrefix(t, "${") && strings.HasSuffix(t, "}"):
		v = t[2 : len(t)-1]
		if i := strings.IndexAny(v, ":-=+?#%/}"); i >= 0 {
			v = v[:i]
		}
	case strings.HasPrefix(t, "$"):
		v = t[1:]
	}
	name = shellVars[v]
	return name, v == "SHELL"
}

// nested calls found for each script that words of sc hold: the words ws,
// joined with blanks, from byte off of the first's value (-1: not known);
// fish when the shell that reads it may be fish, split for env -S's
// string, opaque when it is not to be read. A code word (env -S, flock -c)
// for which found is true is read as a script, and marked nested: judge
// does not block it whole.
func (sc *shScript) nested(found func(ws []int, off int, fish, split, opaque bool) bool) {
	order, cmds := sc.commands()
	remote := 0 // the words the scans of ssh, watch and wsl read (sshScript)
	for _, c := range order {
		ws := cmds[c]
		word := sc.wordValues(ws)
		scan := newWordScan(len(ws), word)
		var scriptRead []bool
		var dashes []int              // nextDashes, for capsh
		var optRead map[string][]bool // the words optionScripts' scans read, by program
		var markers []int             // nextMarkers, for parallel
		evalRead := false             // an eval's arguments were read
		last := -1                    // the last word whose value is not known
		for j := range ws {
			if _, known := word(j); !known {
				last = j
			}
		}
		for j := range ws {
			w := &sc.words[ws[j]]
			if w.code && found(ws[j:j+1], w.codeOff, false, w.codeSplit, false) {
				w.nested = true
			}
			t, known := word(j)
			name, anyShell := shellName(programName(t)), false
			if !known {
				// $SHELL -c '…': a variable that names a shell.
				if name, anyShell = sc.shellVar(ws[j]); name == "" {
					continue
				}
			}
			var starts []int
			fish := false
			switch {
			case posixShells[name]:
				if name == "fish" {
					// Its -C commands run before its script.
					for _, c := range scan.fishInits(j) {
						found(ws[c[0]:c[0]+1], c[1], true, false, false)
					}
				}
				if k := scan.posix(j, name); k > 0 {
					found(ws[k:k+1], 0, name == "fish" || anyShell, false, false)
					// sh -c "$1" sh '…': the script is a word after it.
					w := sc.words[ws[k]]
					if p, ok := positional(sc.text[w.start:w.end]); ok && k+1+p < len(ws) {
						found(ws[k+1+p:k+2+p], 0, name == "fish" || anyShell, false, false)
					}
				}
				continue
			case name == "su" || name == "runuser":
				scan.su(j, func(k, off int) { found(ws[k:k+1], off, true, false, false) }, func(k, off int) {
					if k < len(ws) {
						sc.markConf(ws[k], 'S', off) // su -s SHELL: a program
					}
				})
				continue
			case name == "script" && w.cmd:
				if scriptRead == nil {
					scriptRead = make([]bool, len(ws))
				}
				scriptScript(len(ws), word, j, scriptRead, func(k, off int) { found(ws[k:k+1], off, true, false, false) })
				continue
			case name == "ssh" && w.cmd:
				sshScript(len(ws), word, j, &remote, func(k int) { starts = append(starts, k) },
					func(k, off int) { found(ws[k:k+1], off, true, false, false) })
				fish = true
			case name == "watch" && w.cmd:
				watchScript(len(ws), word, j, &remote, func(k int) { starts = append(starts, k) })
			case name == "capsh":
				// capsh … -- ARGS: ARGS are bash's (capsh -- -c '…').
				if dashes == nil {
					dashes = nextDashes(len(ws), word)
				}
				if d := dashes[j]; d < len(ws) {
					if k := scan.posix(d, "bash"); k > 0 {
						found(ws[k:k+1], 0, false, false, false)
					}
				}
				continue
			case optionScripts[name] != nil && w.cmd:
				if optRead == nil {
					optRead = map[string][]bool{}
				}
				if optRead[name] == nil {
					optRead[name] = make([]bool, len(ws))
				}
				getoptScript(len(ws), word, j, optRead[name], optionScripts[name], func(k, off int) {
					if k < len(ws) {
						found(ws[k:k+1], off, name == "split", false, false)
					}
				}, func(k, off int) {
					if k < len(ws) {
						sc.markConf(ws[k], 'S', off) // sort --compress-program=PROG
					}
				})
				continue
			case (name == "scp" || name == "sftp") && w.cmd:
				scpOptions(len(ws), word, j, func(k int) bool { return sc.words[ws[k]].cmd }, func(k, off int, kind byte) {
					if kind == 'o' {
						found(ws[k:k+1], off, true, false, false)
					}
				})
				continue
			case name == "zip" && w.cmd:
				zipScript(len(ws), word, j, func(k int) bool { return sc.words[ws[k]].cmd }, func(k, off int) {
					found(ws[k:k+1], off, false, false, false)
				})
				continue
			case name == "eval" && w.cmd && !evalRead:
				// eval's arguments, joined with blanks, are a script of
				// the same shell. Once in a command: a later eval is in
				// the first one's text, and read there.
				evalRead = true
				if j+1 < len(ws) {
					found(ws[j+1:], 0, false, false, false)
				}
				continue
			case name == "trap" && w.cmd:
				// trap ACTION SIGNAL…: the action is a script (not trap
				// SIGNAL, nor trap - SIGNAL, which reset it).
				k := j + 1
				if k < len(ws) {
					if a, ok := word(k); ok && a == "--" {
						k++
					}
				}
				if k+1 < len(ws) {
					if a, ok := word(k); !ok || !strings.HasPrefix(a, "-") {
						found(ws[k:k+1], 0, false, false, false)
					}
				}
				continue
			case name == "alias" && w.cmd:
				// alias NAME=VALUE: the value is a command line, where the
				// alias is used.
				for k := j + 1; k < len(ws) && !sc.words[ws[k]].cmd; k++ {
					remote++ // counted with the scans' words
					if a, ok := word(k); !ok {
						found(ws[k:k+1], 0, false, false, false)
					} else if e := strings.IndexByte(a, '='); e > 0 {
						found(ws[k:k+1], e+1, false, false, false)
					}
				}
				continue
			case name == "parallel" && w.cmd:
				var ps []int
				parallelScript(len(ws), word, j, &remote, func(k int) { ps = append(ps, k) })
				if markers == nil {
					markers = nextMarkers(len(ws), word)
				}
				pk, opaque := joinedStarts(ps, last)
				for _, k := range pk {
					parallelScripts(k, markers, func(k, e int) { found(ws[k:e], 0, false, false, opaque) })
				}
				continue
			case name == "sg" && w.cmd:
				sgScript(len(ws), word, j, func(k int) { starts = append(starts, k) })
			case name == "wsl" && w.cmd:
				wslScript(len(ws), word, j, &remote, func(k int) { starts = append(starts, k) })
				fish = true // the Linux user's shell
			default:
				continue
			}
			keep, opaque := joinedStarts(starts, last)
			for _, k := range keep {
				if k < len(ws) {
					found(ws[k:], 0, fish, false, opaque)
				}
			}
		}
		sc.scans += scan.steps
	}
	sc.scans += remote
}

// joinedStarts reduces the first words found for one joined script
// (ssh's, watch's), sorted and without repeats: a start at or before
// last, the last word whose value is not known (or -1), makes a text that
// is not read and that holds any later start's, so only the first of those
// is kept; past maxJoined starts, the first alone is kept, not to be read
// (opaque).
func joinedStarts(starts []int, last int) (keep []int, opaque bool) {
	if len(starts) == 0 {
		return nil, false
	}
	sort.Ints(starts)
	for i, j := range starts {
		if i > 0 && (j == starts[i-1] || starts[i-1] <= last) {
			continue
		}
		keep = append(keep, j)
	}
	if len(keep) > maxJoined {
		return keep[:1], true
	}
	return keep, false
}

// wordScan reads the words of one command (or the arguments), for the
// scripts of its su, runuser and shell words. A scan goes on from each
// position the same way, whichever word it started from: a su scan that
// reaches a position another su scan read from stops there, whose finds
// from there on are made already, and a shell's scan that reaches a
// position another's read from, in the same state, takes its result. So a
// command of many such words is read in linear time (su ×100,000, or sh
// -o sh -o … -c, took seconds: each word's scan read to the end).
type wordScan struct {
	n        int
	word     func(int) (string, bool)
	suRead   []bool                 // the positions a su scan read from
	shell    map[scanKey]int        // posixScriptIn's result from a position, before -c
	sources  map[scanKey]sourceScan // shellSource's, before -c and -s
	fishRead []bool                 // the positions a fish -C scan read from (fishInits)
	steps    int                    // the words read
}

// scanKey is a shell's scan at a position, in a state: the shell is fish,
// reads its options as zsh and the Korn shells do (kornOptions), -c came,
// -s came (shellSource).
type scanKey struct {
	j                int
	fish, korn, c, s bool
}

type sourceScan struct {
	stdin       bool
	script, off int
}

func newWordScan(n int, word func(int) (string, bool)) *wordScan {
	return &wordScan{n: n, word: word}
}

func (ws *wordScan) read(j int) (string, bool) {
	ws.steps++
	return ws.word(j)
}

// su is suScript on ws's words, each position read by one su scan: whole
// is false when the scan stopped at a position another one read from,
// whose finds from there on it does not make again.
func (ws *wordScan) su(i int, found, shell func(j, off int)) (whole bool) {
	if ws.suRead == nil {
		ws.suRead = make([]bool, ws.n)
	}
	dashes, whole := getoptScript(ws.n, ws.read, i, ws.suRead, &suOptions, found, shell)
	if dashes >= 0 {
		// The user, if not named yet, and the shell's arguments. The
		// user's shell is not known: it may read its options as bash
		// does, as zsh and the Korn shells do (zsh -oerrexit -c …), or as
		// fish does (fish -d all -c …, and its -C commands).
		seen := map[[2]int]bool{}
		once := func(j, off int) {
			if !seen[[2]int{j, off}] {
				seen[[2]int{j, off}] = true
				found(j, off)
			}
		}
		for _, k := range [2]int{dashes, dashes + 1} {
			for _, name := range [...]string{"sh", "zsh", "fish"} {
				if s := ws.posix(k, name); s > 0 {
					once(s, 0)
				}
			}
			if k < ws.n {
				for _, c := range ws.fishInits(k) {
					once(c[0], c[1])
				}
			}
		}
	}
	return whole
}

// suScript calls found with each word that may hold su's or runuser's
// (word i) command line, and the byte of its value where it starts: the
// value of -c, --command and --session-command (su reads its options
// anywhere before "--": su bob -c '…'), and after "--" the shell's own -c
// (su bob -- -c '…' hands -c '…' to the user's shell). A word whose value
// is not known may be -c or --command=…: it, and the word after it, may be
// the command line.
func suScript(n int, word func(int) (string, bool), i int, found func(j, off int)) {
	newWordScan(n, word).su(i, found, nil)
}

// sshValue are ssh's options that take a value.
const sshValue = "BbcDEeFIiJLlmOoPpQRSWw"

// sshCommands are ssh's configuration options whose value is a command
// line, run with the user's shell (the remote one for RemoteCommand).
var sshCommands = map[string]bool{"proxycommand": true, "localcommand": true, "remotecommand": true, "knownhostscommand": true}

// sshCommandOption: v is an -o option of ssh's (KEY=VALUE, KEY VALUE, KEY
// = VALUE; KEY in any case, as ssh reads it) whose value, from byte off, is
// a command line.
func sshCommandOption(v string) (off int, ok bool) {
	blank := func(i int) int {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		return i
	}
	i := blank(0)
	k := i
	for i < len(v) && v[i] != ' ' && v[i] != '\t' && v[i] != '=' {
		i++
	}
	if !sshCommands[strings.ToLower(v[k:i])] {
		return 0, false
	}
	if i = blank(i); i < len(v) && v[i] == '=' {
		i++
	}
	return blank(i), true
}

// sshScript calls found with the first word of ssh's (word i) remote
// command: its operands after the destination, which ssh joins with blanks
// for the remote shell. ssh reads options after the destination too
// (ssh host -l bob cmd), until "--" or its first operand. A word whose
// value is not known may be an option, the destination or the command:
// each reading is taken. It calls option with each word that holds an -o
// option whose value is a command line (-o ProxyCommand=…, -oLocalCommand
// …), and the byte of its value where the command line starts; a word
// that may be the value of -o, whose value is not known, from byte 0.
//
// steps counts the words read, over all the scans of one command: past
// maxWrapSteps the rest may be the command (found), and a scan that
// starts past it reads nothing.
func sshScript(n int, word func(int) (string, bool), i int, steps *int, found func(j int), option func(j, off int)) {
	if *steps >= maxWrapSteps {
		found(i + 1)
		return
	}
	// value: word j, from byte from, is the value of -o.
	value := func(j, from int) {
		v, known := word(j)
		if !known || from > len(v) {
			option(j, 0)
			return
		}
		if off, ok := sshCommandOption(v[from:]); ok {
			option(j, from+off)
		}
	}
	type state struct{ j, phase int }
	seen := map[state]bool{}
	// phase 0: before the destination; 1: after it; 2: after "--", at the
	// destination, after which the command starts.
	var from func(j, phase int)
	from = func(j, phase int) {
		for j < n {
			if seen[state{j, phase}] {
				return
			}
			seen[state{j, phase}] = true
			if *steps++; *steps > maxWrapSteps {
				found(j) // out of steps: the rest may be the command
				return
			}
			a, known := word(j)
			switch {
			case phase == 2:
				found(j + 1)
				return
			case !known:
				if phase == 1 {
					found(j) // it and all after it, not read
					return
				}
				from(j+1, 0) // a flag
				if j+1 < n {
					if v, ok := word(j + 1); ok {
						if off, ok := sshCommandOption(v); ok {
							option(j+1, off) // -o and its value
						}
					}
				}
				from(j+2, 0)      // an option and its value
				j, phase = j+1, 1 // the destination
			case a == "--":
				if phase == 1 {
					found(j + 1)
					return
				}
				j, phase = j+1, 2
			case len(a) > 1 && a[0] == '-':
				next := j + 1
				for k := 1; k < len(a); k++ {
					if strings.IndexByte(sshValue, a[k]) >= 0 {
						if k+1 == len(a) {
							next++
							if a[k] == 'o' && j+1 < n {
								value(j+1, 0)
							}
						} else if a[k] == 'o' {
							value(j, k+1)
						}
						break
					}
				}
				j = next
			case phase == 0:
				j, phase = j+1, 1
			default:
				found(j)
				return
			}
		}
	}
	from(i+1, 0)
}

// watchScript calls found with the first word of watch's (word i)
// command: its first operand, as the program finder reads watch's
// options, with -x or without (the program finder takes it for a program
// only with -x: without, it is the first word of sh -c's script).
func watchScript(n int, word func(int) (string, bool), i int, steps *int, found func(j int)) {
	operandScript(watchOperands, n, word, i, steps, found)
}

// wslScript calls found with the first word of wsl's (word i) command
// line: its operands, which wsl joins with blanks for the Linux user's
// shell, unless -e or --exec (or a word whose value is not known, which
// may be one) runs them with no shell.
func wslScript(n int, word func(int) (string, bool), i int, steps *int, found func(j int)) {
	operandScript(wslOperands, n, word, i, steps, found)
}

// watchOperands is watch's options as watchScript reads them: -x not
// needed for an operand to be found.
var watchOperands = func() *wrapper {
	w := *wrapperSpecs["watch"]
	w.needs, w.needsLong = 0, ""
	return &w
}()

// wslOperands is wsl's options as wslScript reads them: with -e or
// --exec no operand is a command line's.
var wslOperands = func() *wrapper {
	w := *wrapperSpecs["wsl"]
	w.noRun, w.flags = "e", ""
	w.long = maps.Clone(w.long)
	w.long["exec"] = 'l'
	return &w
}()

// operandScript calls found with the first operand of the program at
// word i, its options read by w as the program finder reads a wrapper's,
// within the steps left of the command's budget (sshScript's).
func operandScript(w *wrapper, n int, word func(int) (string, bool), i int, steps *int, found func(j int)) {
	if *steps >= maxWrapSteps {
		found(i + 1)
		return
	}
	p := progFinder{
		steps: *steps,
		n:     n - i,
		word:  func(j int) (string, bool) { return word(i + j) },
		prog: func(j int) {
			if j > 0 {
				found(i + j)
			}
		},
		script: func(int, int, bool) {},
	}
	p.args(w, 0, 1, w.operands, true)
	*steps = p.steps
}

// parallelScript calls found with the first word of GNU parallel's (word
// i) command line: its first operand, as the program finder reads its
// options (an option it does not know, either way). The command line runs
// to the next :::-like word (parallelMarker), after which the arguments
// are data; a first operand that is such a word means no command: each
// argument after it is a command line of its own (parallel ::: 'cmd1'
// 'cmd2').
func parallelScript(n int, word func(int) (string, bool), i int, steps *int, found func(j int)) {
	if *steps >= maxWrapSteps {
		found(i + 1) // sshScript's steps
		return
	}
	p := progFinder{
		n:     n - i,
		steps: *steps,
		word:  func(j int) (string, bool) { return word(i + j) },
		prog: func(j int) {
			if j > 0 {
				found(i + j)
			}
		},
		script: func(int, int, bool) {},
	}
	w := wrapperSpecs["parallel"]
	p.args(w, 0, 1, w.operands, true)
	*steps = p.steps
}

// parallelMarker: a word of GNU parallel's that starts its arguments
// (:::, :::+) or files of them (::::, ::::+).
func parallelMarker(a string) bool {
	return a == ":::" || a == ":::+" || a == "::::" || a == "::::+"
}

// parallelScripts calls script with the words [j, e) of each command line
// of parallel whose first word is j (parallelScript): up to the next
// marker, or, when j is a marker (:::, no command), each argument after it
// alone, up to the next. next is nextMarkers'.
func parallelScripts(j int, next []int, script func(j, e int)) {
	n := len(next) - 1
	if j >= n {
		return
	}
	e := next[j]
	if e != j {
		script(j, e)
		return
	}
	for k := j + 1; k < next[j+1]; k++ {
		script(k, k+1)
	}
}

// nextMarkers is, for each word j of n, the first parallel marker at or
// after it (n if none), built in one pass.
func nextMarkers(n int, word func(int) (string, bool)) []int {
	next := make([]int, n+1)
	next[n] = n
	for j := n - 1; j >= 0; j-- {
		next[j] = next[j+1]
		if a, ok := word(j); ok && parallelMarker(a) {
			next[j] = j
		}
	}
	return next
}

// sgScript calls found with the first word of sg's (word i) command: sg
// [-] GROUP [-c] COMMAND runs COMMAND with /bin/sh -c. A word whose value
// is not known may be "-".
func sgScript(n int, word func(int) (string, bool), i int, found func(j int)) {
	from := func(g int) { // g: the group
		k := g + 1
		if k < n {
			if a, ok := word(k); ok && a == "-c" {
				k++
			}
		}
		if k < n {
			found(k)
		}
	}
	j := i + 1
	if j >= n {
		return
	}
	a, known := word(j)
	switch {
	case !known:
		from(j + 1)
	case a == "-":
		j++
	}
	from(j)
}

// nextDashes is, for each word j of n, the first "--" at or after it (n
// if none), built in one pass: capsh's scans read from it.
func nextDashes(n int, word func(int) (string, bool)) []int {
	next := make([]int, n+1)
	next[n] = n
	for j := n - 1; j >= 0; j-- {
		next[j] = next[j+1]
		if a, ok := word(j); ok && a == "--" {
			next[j] = j
		}
	}
	return next
}

// scriptScript calls found with each word that may hold the command line
// of util-linux script (word i), which it runs with the user's shell, and
// the byte of its value where it starts: the value of -c and --command
// (or an abbreviation), read among all its options before "--", as getopt
// permutes them. A word whose value is not known may be -c or
// --command=…: it, and the word after it, may be the command line. read
// marks the positions read: a scan that reaches one an earlier scan of
// the same words read from stops, its finds made (a command of many
// script words is read in linear time).
func scriptScript(n int, word func(int) (string, bool), i int, read []bool, found func(j, off int)) {
	getoptScript(n, word, i, read, &scriptOptions, found, nil)
}

// getoptLong is a long option of a program that reads its options with
// getopt_long: its name, the shortest abbreviation of it the program
// takes (shorter ones are ambiguous), and whether its value is the
// command line (else it takes a value, which is skipped).
type getoptLong struct {
	name    string
	min     int
	command bool
	// prefix: the command line is the value after it, and a value without
	// it is none (tar --checkpoint-action=exec=…); attached: the value is
	// only ever attached (man --html=BROWSER).
	prefix   string
	attached bool
	// rc: the value is a line of the program's startup file (wget
	// --execute='use_askpass = PROG'), see getoptOptions.rc.
	rc bool
	// program: the value is a program the program runs (su --shell=…,
	// sort --compress-program=…), not a command line.
	program bool
}

// getoptOptions are the options of a program with a -c COMMAND option
// (su, runuser, script), or another option whose value is a command line
// (tar -I, rsync -e), that getoptScript reads.
type getoptOptions struct {
	long     []getoptLong
	commands string // the short options whose value is the command line
	value    string // the short options that take a value
	optional string // the short options whose value, if any, is attached
	programs string // the short options whose value is a program it runs (su -s SHELL)
	// pipe: a command option's value is a command line only when it
	// starts with "|" or "!" (strace -o '|gzip >t.gz'), else a file; the
	// command line is read with that byte, which the input may not
	// choose.
	pipe bool
	// stop: the options end at the first operand (getopt's "+": strace
	// PROGRAM -o …, whose -o is the program's).
	stop bool
	// knownOnly: a word whose value is not known is not read as the
	// command's option (tar -czf "$OUT" uploads/a.png: the file is no
	// command line).
	knownOnly bool
	// rc: the short options whose value is a line of the program's
	// startup file, "NAME = VALUE" (wget -e); rcProgram: the NAME, in
	// lower case without '-' and '_' (as wget reads it), whose VALUE is a
	// program it runs: the line, from NAME on, is read as the program's
	// name (an input there chooses it).
	rc, rcProgram string
}

// rcNameSeps drops the '-' and '_' wget ignores in a startup file's
// NAME: built once, not for each line read.
var rcNameSeps = strings.NewReplacer("-", "", "_", "")

// rcLine calls program with word j from byte off, a line of o's startup
// file (getoptOptions.rc), when it sets the program o.rcProgram names.
func (o *getoptOptions) rcLine(word func(int) (string, bool), j, off int, program func(j, off int)) {
	v, known := word(j)
	if !known || off > len(v) {
		return
	}
	name, _, ok := strings.Cut(v[off:], "=")
	if !ok {
		return
	}
	name = strings.ToLower(rcNameSeps.Replace(strings.TrimSpace(name)))
	if name == o.rcProgram {
		program(j, off)
	}
}

// suOptions are su's and runuser's (-u USER is runuser's): -s SHELL and
// --shell=SHELL name the program that runs in place of the user's shell.
var suOptions = getoptOptions{
	long: []getoptLong{
		{name: "command", min: 1, command: true}, {name: "session-command", min: 2, command: true},
		{name: "group", min: 1, command: false}, {name: "whitelist-environment", min: 1, command: false}, {name: "user", min: 1, command: false},
		{name: "supp-group", min: 2, command: false}, {name: "shell", min: 2, program: true},
	},
	commands: "c",
	programs: "s",    // -s SHELL
	value:    "gGwu", // -g GROUP, -G GROUP, -w VARS, -u USER
}

// scriptOptions are util-linux script's.
var scriptOptions = getoptOptions{
	long: []getoptLong{
		{name: "command", min: 1, command: true},
		{name: "log-in", min: 5, command: false}, {name: "log-out", min: 5, command: false}, {name: "log-io", min: 5, command: false}, {name: "log-timing", min: 5, command: false},
		{name: "logging-format", min: 5, command: false}, {name: "echo", min: 1, command: false}, {name: "output-limit", min: 1, command: false},
	},
	commands: "c",
	value:    "IOBTmEo",
	optional: "t", // -t[FILE]
}

// optionScripts are the programs with an option whose value is a command
// line they run (with sh -c, or split as a shell would): GNU tar's -I,
// --use-compress-program, --to-command, --checkpoint-action=exec=, -F,
// --info-script, --new-volume-script, --rsh-command, --rmt-command;
// rsync's -e, --rsh, --rsync-path (the remote shell runs it); man's -P,
// --pager, --html=; GNU split's --filter; strace's -o '|…' (--output);
// and GNU sort's --compress-program, a program (not a command line). A
// long option's min is the shortest abbreviation the program takes (GNU
// tar 1.34's: --inf, --rs, --checkpoint-).
var optionScripts = map[string]*getoptOptions{
	"tar": {
		long: []getoptLong{
			{name: "to-command", min: 4, command: true}, {name: "use-compress-program", min: 3, command: true},
			{name: "rsh-command", min: 2, command: true}, {name: "info-script", min: 3, command: true},
			{name: "new-volume-script", min: 4, command: true},
			{name: "checkpoint-action", min: 11, command: true, prefix: "exec="},
			// The remote host's rmt, a command line for the remote shell.
			{name: "rmt-command", min: 2, command: true},
			{name: "file", min: 4}, {name: "directory", min: 3},
		},
		commands: "IF", value: "bCfgHKLNTVX", knownOnly: true,
	},
	"rsync": {
		long:     []getoptLong{{name: "rsh", min: 3, command: true}, {name: "rsync-path", min: 7, command: true}},
		commands: "e", value: "BfMT", knownOnly: true,
	},
	// git's commands on the other side: clone, fetch, ls-remote
	// --upload-pack, push --receive-pack and --exec, archive --exec (not
	// the short -u, another option in most subcommands). The shortest
	// abbreviation any subcommand takes: clone's --u, push's and
	// archive's --e, send-pack's --rec.
	"git": {
		long: []getoptLong{
			{name: "upload-pack", min: 1, command: true}, {name: "receive-pack", min: 3, command: true},
			{name: "exec", min: 1, command: true},
		},
		knownOnly: true,
	},
	"man": {
		long: []getoptLong{
			{name: "pager", min: 3, command: true}, {name: "html", min: 2, command: true, attached: true},
		},
		commands: "P", value: "CeLmMprRsSE", knownOnly: true,
	},
	// GNU split's --filter (run with $SHELL -c; --f: no other option
	// starts with f).
	"split": {
		long:  []getoptLong{{name: "filter", min: 1, command: true}},
		value: "abClnt", knownOnly: true,
	},
	// strace's -o and --output (--outp and shorter are ambiguous) whose
	// value starts with "|" or "!": the rest is a command line for sh -c.
	// Its options end at the program it runs.
	"strace": {
		long:     []getoptLong{{name: "output", min: 6, command: true}},
		commands: "o", value: "abeEIOpPsSuUX", knownOnly: true, pipe: true, stop: true,
	},
	// GNU sort's --compress-program=PROG (--co: --c is ambiguous), the
	// program it runs for its temporary files.
	"sort": {
		long:  []getoptLong{{name: "compress-program", min: 2, program: true}},
		value: "koStT", knownOnly: true,
	},
	// GNU wget's --use-askpass=PROG (--use-a: --use- is ambiguous), the
	// program it runs for a user and password, also set by -e and
	// --execute (--exe: --e is ambiguous) 'use_askpass = PROG'.
	"wget": {
		long:  []getoptLong{{name: "use-askpass", min: 5, program: true}, {name: "execute", min: 3, rc: true}},
		value: "aABDiIlnoOPQRtTUwX", knownOnly: true, rc: "e", rcProgram: "useaskpass",
	},
}

// capshShell calls found with each word of capsh's (word i) options
// that names the shell its "--" and "==" run instead of /bin/bash:
// --shell=PROGRAM (capsh reads it attached only), and the byte PROGRAM
// starts at. Its options end at "--" or "==" (the shell's arguments
// follow), at the next word prog tells is a program, or at a word read
// already (read: another capsh's scan, so that many are read in linear
// time).
func capshShell(n int, word func(int) (string, bool), i int, read []bool, prog func(int) bool, found func(j, off int)) {
	for j := i + 1; j < n && !read[j] && !prog(j); j++ {
		read[j] = true
		switch a, known := word(j); {
		case !known:
		case a == "--" || a == "==":
			return
		case strings.HasPrefix(a, "--shell="):
			found(j, len("--shell="))
		}
	}
}

// scpValue are the options of scp and sftp that take a value.
const scpValue = "BbcDFiJlLoPRsSX"

// scpOptions calls found with each word that holds an option of scp or
// sftp (word i) that chooses what they run: -o with a command line
// (ProxyCommand, as sshCommandOption reads it: kind 'o'), -S and sftp's -D
// (the program they run for the connection, or the server: 'S'), -F
// (ssh's configuration file: 'F'); and the byte of its value where it
// starts. They read their options up to their first operand or "--", or
// the next word prog tells is a program.
func scpOptions(n int, word func(int) (string, bool), i int, prog func(int) bool, found func(j, off int, kind byte)) {
	for j := i + 1; j < n && !prog(j); j++ {
		a, known := word(j)
		if !known || a == "--" || len(a) < 2 || a[0] != '-' {
			return
		}
		for k := 1; k < len(a); k++ {
			c := a[k]
			if strings.IndexByte(scpValue, c) < 0 {
				continue
			}
			vj, off := j, k+1
			if k+1 == len(a) {
				vj, off = j+1, 0
				if vj >= n || prog(vj) {
					return // no value, or the next program's name
				}
				j++
			}
			switch c {
			case 'o':
				if v, ok := word(vj); !ok {
					found(vj, 0, 'o')
				} else if o, ok := sshCommandOption(v[off:]); ok {
					found(vj, off+o, 'o')
				}
			case 'S', 'D':
				found(vj, off, 'S')
			case 'F':
				found(vj, off, 'F')
			}
			break
		}
	}
}

// zipScript calls found with each word that holds zip's (word i) command
// line for testing the archive (-TT CMD, --unzip-command CMD or =CMD,
// which it runs with sh -c), and the byte of its value where it starts,
// up to "--" or the next word prog tells is a program.
func zipScript(n int, word func(int) (string, bool), i int, prog func(int) bool, found func(j, off int)) {
	for j := i + 1; j < n && !prog(j); j++ {
		a, known := word(j)
		switch {
		case !known:
		case a == "--":
			return
		case strings.HasPrefix(a, "--"):
			// --unzip-command CMD, =CMD, or an abbreviation zip takes.
			name, _, eq := strings.Cut(a[2:], "=")
			switch {
			case !zipUnzipCommand(name):
			case eq:
				found(j, len(name)+3)
			default:
				if j+1 < n {
					found(j+1, 0)
				}
				j++
			}
		case a == "-TT":
			if j+1 < n {
				found(j+1, 0)
			}
			j++
		case strings.HasPrefix(a, "-TT"):
			found(j, 3)
		}
	}
}

// zipUnzipCommand: name is zip's --unzip-command or an abbreviation of it
// that zip takes (--unz: --u and --un are other options' too).
func zipUnzipCommand(name string) bool {
	return len(name) >= 3 && strings.HasPrefix("unzip-command", name)
}

// lookup is the long option name (without "--" and "=…") abbreviates.
func (o *getoptOptions) lookup(name string) (getoptLong, bool) {
	for _, l := range o.long {
		if len(name) >= l.min && strings.HasPrefix(l.name, name) {
			return l, true
		}
	}
	return getoptLong{}, false
}

// getoptScript calls found with each word after word i that may hold the
// command line of the program whose options o are, and the byte of its
// value where it starts: the value of -c and of a long option that is
// the command, read among all the options before "--", as getopt
// permutes them. A word whose value is not known may be -c or
// --command=…: it, and the word after it, may be the command line. read
// marks the positions read: a scan that reaches one an earlier scan of
// the same words read from stops (whole is false), its finds made from
// there on not made again. dashes is the position of the "--" the scan
// stopped at, or -1. program, if not nil, is called the same way with
// each value of an option that names a program (su -s SHELL).
func getoptScript(n int, word func(int) (string, bool), i int, read []bool, o *getoptOptions, found, program func(j, off int)) (dashes int, whole bool) {
	if o.pipe {
		// The value is a command line only from a "|" or "!" (strace -o
		// '|cmd'); a value not known may be one.
		command := found
		found = func(j, off int) {
			if v, known := word(j); !known || off < len(v) && (v[off] == '|' || v[off] == '!') {
				command(j, off)
			}
		}
	}
	if program == nil {
		program = func(int, int) {}
	}
	for j := i + 1; j < n; j++ {
		if read[j] {
			return -1, false
		}
		read[j] = true
		a, known := word(j)
		switch {
		case !known:
			if o.knownOnly {
				continue
			}
			found(j, 0)
			if j+1 < n {
				found(j+1, 0)
				program(j+1, 0)
			}
		case a == "--":
			return j, true
		case o.stop && (len(a) < 2 || a[0] != '-'):
			return -1, true // the program it runs, or a lone "-"
		case strings.HasPrefix(a, "--"):
			name, value, eq := strings.Cut(a[2:], "=")
			l, ok := o.lookup(name)
			switch {
			case name == "" || !ok:
			case l.program && eq:
				program(j, len(name)+3)
			case l.program:
				if j+1 < n {
					program(j+1, 0)
				}
				j++
			case l.rc && eq:
				o.rcLine(word, j, len(name)+3, program)
			case l.rc:
				if j+1 < n {
					o.rcLine(word, j+1, 0, program)
				}
				j++
			case l.command && eq:
				if strings.HasPrefix(value, l.prefix) {
					found(j, len(name)+3+len(l.prefix))
				}
			case l.attached:
			case l.command || !eq: // the command line, or a value, in the next word
				if l.command && j+1 < n {
					if v, known := word(j + 1); !known || strings.HasPrefix(v, l.prefix) {
						found(j+1, len(l.prefix))
					}
				}
				j++
			}
		case len(a) > 1 && a[0] == '-':
			j = getoptCluster(n, word, a, j, o, found, program)
		}
	}
	return -1, true
}

// getoptCluster reads the short options of word j, a: -c's value is the
// command line (found), the rest of the word or the next one, and the
// value of an option that names a program (program) likewise. It returns
// the last position read (j, or j+1 if the next word is an option's
// value).
func getoptCluster(n int, word func(int) (string, bool), a string, j int, o *getoptOptions, found, program func(j, off int)) int {
	for k := 1; k < len(a); k++ {
		switch c := a[k]; {
		case strings.IndexByte(o.rc, c) >= 0:
			if k+1 < len(a) {
				o.rcLine(word, j, k+1, program)
			} else if j+1 < n {
				o.rcLine(word, j+1, 0, program)
				return j + 1
			}
			return j
		case strings.IndexByte(o.commands, c) >= 0 || strings.IndexByte(o.programs, c) >= 0:
			f := found
			if strings.IndexByte(o.programs, c) >= 0 {
				f = program
			}
			if k+1 < len(a) {
				f(j, k+1)
			} else if j+1 < n {
				f(j+1, 0)
				return j + 1
			}
			return j
		case strings.IndexByte(o.optional, c) >= 0:
			return j
		case strings.IndexByte(o.value, c) >= 0:
			if k+1 == len(a) {
				return j + 1
			}
			return j
		}
	}
	return j
}

// suProgram calls prog with the word su's or runuser's (word i) user's
// shell runs as its script file: the first operand after the user (su
// [options] [-] USER FILE …; options anywhere before "--", as getopt
// permutes them), or after "--" the shell's first operand past its own
// options (none with -c or -s: suScript reads -c). An option su does not
// know may take the next word or not, and a word whose value is not known
// may be any option or operand: each reading is taken. steps bounds the
// work over all the calls on one command's words: past it, every word
// from where the reading is on may be the file; all is the first word
// taken so, over those calls (n before any), and each is taken once
// (find -exec su -exec su … took each word again, for each su).
func suProgram(n int, word func(int) (string, bool), i int, steps, all *int, prog func(j int)) {
	type state struct{ j, phase int }
	seen := map[state]bool{}
	// phase 0: before the user; 1: after "-", before the user; 2: after
	// the user; 3: the next operand is the script file (after the shell's
	// "-" or "--"). +4: after su's "--".
	var from func(j, phase int)
	from = func(j, phase int) {
		for ; j < n; j++ {
			if seen[state{j, phase}] {
				return
			}
			seen[state{j, phase}] = true
			if *steps++; *steps > maxWrapSteps {
				for k := j; k < *all; k++ {
					prog(k)
				}
				*all = min(*all, j)
				return
			}
			dd, p := phase >= 4, phase%4
			a, known := word(j)
			if !known {
				if p >= 2 {
					prog(j)
				}
				if !dd {
					from(j+1, phase)   // a flag
					from(j+2, phase)   // an option and its value
					from(j+1, phase+4) // "--"
				}
				if p >= 2 && dd {
					from(j+1, phase) // a shell's option
					from(j+2, phase)
					from(j+1, 7)
					return
				}
				if p < 2 {
					from(j+1, 4*b2i(dd)+1) // "-"
					phase = 4*b2i(dd) + 2  // the user
				}
				if p >= 2 {
					return
				}
				continue
			}
			switch {
			case !dd && a == "--":
				phase += 4
			case !dd && strings.HasPrefix(a, "--"):
				name, _, eq := strings.Cut(a[2:], "=")
				kind := suLongs.longOption(name)
				if kind == 'v' && !eq {
					j++
				} else if kind == 0 && !eq {
					from(j+2, phase) // not known: with a value, or without
				}
			case !dd && len(a) > 1 && a[0] == '-':
			cluster:
				for k := 1; k < len(a); k++ {
					switch c := a[k]; {
					case strings.IndexByte("cgGsuw", c) >= 0:
						if k+1 == len(a) {
							j++
						}
						break cluster
					case strings.IndexByte("flmpPhV", c) < 0:
						// Not known: a flag, or an option with a value.
						if k+1 == len(a) {
							from(j+2, phase)
						}
					}
				}
			case p == 0 && a == "-":
				phase++
			case p < 2:
				phase += 2 - p
			case p == 3 || !dd && a != "-":
				prog(j)
				return
			case !dd: // su bob - FILE: the shell's "-"
				phase++
			case a == "-" || a == "--":
				phase++
			case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
				if a[0] == '-' && strings.ContainsAny(a[1:], "cs") {
					return // a -c command line (suScript), or stdin
				}
				// The user's shell is not known: bash takes -o's value
				// from the next word, zsh and the Korn shells only for an
				// -o that ends the word, fish for its options with a
				// value (-d CATS). Each reading is taken.
				bash := strings.ContainsAny(a[1:], "oO") || a == "--rcfile" || a == "--init-file"
				korn := optionTakesNext("zsh", a)
				fish := fishTakesNext(a)
				if bash || korn || fish {
					if !(bash && korn && fish) {
						from(j+1, phase) // no value
					}
					j++
				}
			default:
				prog(j)
				return
			}
		}
	}
	from(i+1, 0)
}

// suRuns: word i is su, or runuser without -u (runuser -u USER COMMAND
// runs COMMAND, a wrapper's program), whose user's shell takes its
// operands after the user.
func suRuns(n int, word func(int) (string, bool), i int, steps *int) bool {
	t, known := word(i)
	switch name := programName(t); {
	case !known:
		return false
	case name == "su":
		return true
	case name != "runuser":
		return false
	}
	known1 := func(j int) (string, bool) {
		if v, ok := word(j); ok {
			return v, true
		}
		return "x", true // not known: it may not be -u
	}
	return !wrapperSpecs["runuser"].runs(n, known1, i, func() bool { *steps++; return *steps <= maxWrapSteps })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// suLongs are su's and runuser's long options ('v': it takes a value,
// 'f': none); suLongs.longOption is the kind of one by its name or an
// abbreviation, or 0.
var suLongs = &wrapper{long: map[string]byte{
	"command": 'v', "session-command": 'v', "group": 'v', "supp-group": 'v', "shell": 'v', "whitelist-environment": 'v',
	"user": 'v', "fast": 'f', "login": 'f', "preserve-environment": 'f', "pty": 'f', "help": 'f', "version": 'f',
}}
