package sink

import "strings"

// Shells that read their script from their input. A shell given no -c and
// no script file (sh, bash -s, sh -, sh /dev/stdin), also behind a wrapper
// (sudo sh), runs what it reads from its standard input: what the script
// writes to it — an earlier stage of a pipeline (echo '…' | sh), a
// here-document (sh <<EOF), a here-string (sh <<< '…'), a file (sh <
// file) — is a script, whose text the check does not follow through the
// programs that write it. So, in a reading of a POSIX script where such a
// shell may be fed (the script has a pipe or a process substitution, or
// the shell's command an input redirection), an input anywhere in the
// script but the words of that shell's own command (its program, options
// and arguments: bash -s -- <input> < job.sh is data) is blocked.
//
// A shell reads its script from its input too when its -c script does
// (sh -c 'sh'), when that script is not known (sh -c "$(cat)"), or behind
// xargs, which makes its input the shell's arguments (xargs sh -c, xargs
// -I{} sh -c '{}'); so do . and source of /dev/stdin or of a process
// substitution (. <(…)), and eval of an expansion (eval "$(cat)").

// feed is what one reading of a script feeds to its shells' input.
type feed struct {
	on     bool           // a shell that reads its script from its input may be fed by the script
	exempt map[int32]bool // the commands of those shells: their own words are not fed to them
}

// fed: bytes [s, e) of the script, not all in a comment, may reach a
// script a shell reads from its input.
func (sc *shScript) fed(s, e int) bool {
	if sc.feed == nil {
		sc.feed = sc.findFeed()
	}
	if !sc.feed.on {
		return false
	}
	for i := s; i < e; i++ {
		if sc.cls[i] == shComment {
			continue
		}
		if k := sc.word[i]; k >= 0 && !sc.words[k].redir && sc.feed.exempt[sc.words[k].command] {
			continue
		}
		return true
	}
	return false
}

// commands are the words of each command of sc but the redirections', in
// order, built once (findPrograms, findFeed, nested and readsAnyInput
// read them): the callers do not change them.
func (sc *shScript) commands() (order []int32, cmds map[int32][]int) {
	if sc.cmdWords != nil {
		return sc.cmdOrder, sc.cmdWords
	}
	cmds = map[int32][]int{}
	for k := range sc.words {
		w := &sc.words[k]
		if w.redir {
			continue
		}
		if _, ok := cmds[w.command]; !ok {
			order = append(order, w.command)
		}
		cmds[w.command] = append(cmds[w.command], k)
	}
	sc.cmdOrder, sc.cmdWords = order, cmds
	return order, cmds
}

// findFeed finds the shells of sc that read their script from their input
// and that the script may feed.
func (sc *shScript) findFeed() *feed {
	f := &feed{}
	redirected := map[int32]bool{}
	for _, w := range sc.words {
		if w.redir && w.stdin {
			redirected[w.command] = true
		}
	}
	coproc := sc.hasCoproc()
	if !sc.pipes && !coproc && len(redirected) == 0 {
		return f
	}
	order, cmds := sc.commands()
	// An input redirection of a compound command (while …; done < f,
	// { …; } <<< '…', ( … ) < f) feeds the commands inside it, exec's
	// (exec < f) every command after it, and a call's of a function the
	// script defines (f <<< '…') the commands of its body; a coprocess
	// reads what the script writes to it (coproc sh; echo … >&"${COPROC[1]}"):
	// any command may be fed, as through a pipe.
	all := sc.pipes || coproc
	var fns map[string]bool
	for c := range redirected {
		ws := cmds[c]
		if len(ws) == 0 || compoundEnds[sc.text[sc.words[ws[0]].start:sc.words[ws[0]].end]] {
			all = true
			continue
		}
		if fns == nil {
			fns = sc.functions()
		}
		for _, k := range ws {
			if t, ok := sc.value(k); ok && sc.words[k].cmd && fns[t] {
				all = true
			}
		}
	}
	for _, c := range order {
		if (all || redirected[c]) && sc.readsInput(cmds[c], maxNestDepth) {
			if f.exempt == nil {
				f.exempt = map[int32]bool{}
			}
			f.on = true
			f.exempt[c] = true
		}
	}
	return f
}

// hasCoproc: the script starts a coprocess (bash's coproc), whose input
// is a pipe any command of the script may write to.
func (sc *shScript) hasCoproc() bool {
	for _, w := range sc.words {
		if w.cmd && sc.text[w.start:w.end] == "coproc" {
			return true
		}
	}
	return false
}

// functions are the names of the functions the script defines: NAME ()
// and function NAME.
func (sc *shScript) functions() map[string]bool {
	fns := map[string]bool{}
	for k, w := range sc.words {
		if !w.cmd {
			continue
		}
		t, ok := sc.value(k)
		if !ok {
			continue
		}
		if t == "function" && k+1 < len(sc.words) && sc.words[k+1].command == w.command {
			if name, ok := sc.value(k + 1); ok {
				fns[strings.TrimSuffix(name, "()")] = true
			}
			continue
		}
		rest := strings.TrimLeft(sc.text[w.end:], " \t")
		if strings.HasPrefix(rest, "(") && strings.HasPrefix(strings.TrimLeft(rest[1:], " \t"), ")") {
			fns[t] = true
		}
	}
	return fns
}

// compoundEnds are the words a command's redirections follow when they
// redirect more than one command: a compound command's end, and exec with
// no program (exec < file), whose redirections last to the script's end.
var compoundEnds = map[string]bool{"done": true, "}": true, "fi": true, "esac": true, "exec": true}

// readsAnyInput: a command of sc reads a script from its input; past
// depth, any script may.
func (sc *shScript) readsAnyInput(depth int) bool {
	order, cmds := sc.commands()
	for _, c := range order {
		if sc.readsInput(cmds[c], depth) {
			return true
		}
	}
	return false
}

// readsInput: the command of words ws runs a script it reads from its
// input: a program of it (the first, or one a wrapper runs) is a shell
// that does, or ., source or eval of it.
func (sc *shScript) readsInput(ws []int, depth int) bool {
	word := sc.wordValues(ws)
	xargs, replace := false, false
	steps := 0
	scan := newWordScan(len(ws), word)
	scripts := map[[2]int]bool{} // the -c scripts read: whether they read their input
	remote, lines := 0, 0        // the words ssh's (and interpreters') scans read, the bytes of its command lines read
	var codeRead []bool          // the words interpreters' scans read (interpreterCode)
	defer func() { sc.scans += scan.steps + remote }()
	for j := range ws {
		if !sc.words[ws[j]].cmd {
			continue
		}
		t, known := word(j)
		name := shellName(programName(t))
		if !known {
			if name, _ = sc.shellVar(ws[j]); name == "" {
				continue
			}
		}
		switch {
		case name == "xargs":
			xargs = true
			replace = replace || xargsReplaces(len(ws), word, j, func(k int) bool { return sc.words[ws[k]].cmd })
		case name == "." || name == "source":
			if sc.procSubAfter(ws[j]) {
				return true // . <(…): what its command writes
			}
			if j+1 < len(ws) {
				if a, ok := word(j + 1); !ok || stdinPath(a) {
					return true
				}
			}
		case name == "eval":
			for k := j + 1; k < len(ws); k++ {
				if _, ok := word(k); !ok {
					return true
				}
			}
		case name == "parallel":
			// No command, and no arguments: its input's lines are the
			// command lines (echo 'cmd' | parallel).
			none := true
			parallelScript(len(ws), word, j, &remote, func(k int) {
				if k < len(ws) {
					none = false
				}
			})
			if none {
				return true
			}
		case name == "newgrp":
			return true // a shell for the group, which reads its input
		case name == "sg":
			// sg GROUP with no command: a shell, as newgrp's.
			runs := false
			sgScript(len(ws), word, j, func(int) { runs = true })
			if !runs {
				return true
			}
		case name == "capsh":
			// capsh -- ARGS: bash's arguments; with none that is a script,
			// bash reads its script from its input.
			for k := j + 1; k < len(ws) && !sc.words[ws[k]].cmd; k++ {
				if a, ok := word(k); ok && a == "--" {
					if stdin, _, _ := scan.source(k, "bash"); stdin {
						return true
					}
					break
				}
			}
		case interpreterName(programName(t)) != "" && known:
			// python3, perl, node … with no code and no script file:
			// their program is their input (echo '…' | python3).
			if codeRead == nil {
				codeRead = make([]bool, len(ws))
			}
			counted := func(k int) (string, bool) { remote++; return word(k) }
			if interpreterCode(len(ws), counted, j, codeRead, func(k int) bool { return sc.words[ws[k]].cmd }, func(int, int) {}) {
				return true
			}
		case name == "at" || name == "batch":
			if atReadsInput(len(ws), word, j, func(k int) bool { return sc.words[ws[k]].cmd }) {
				return true
			}
		case name == "sudo" || name == "doas":
			// sudo -s, sudo -i, doas -s with no command: the user's shell,
			// which reads its script from its input.
			if runsShell(len(ws), word, j, name, func() bool { steps++; return steps <= maxWrapSteps }) {
				return true
			}
		case name == "runuser" && wrapperSpecs[name].runs(len(ws), word, j, func() bool { steps++; return steps <= maxWrapSteps }):
			// runuser -u bob cmd runs cmd, a program of the command.
			if steps > maxWrapSteps {
				return true
			}
		case name == "ssh" || name == "su" || name == "runuser":
			// The remote command (the remote user's shell reads ssh's
			// input when there is none: ssh host <<EOF), su's -c command
			// line (the user's shell reads its input when there is none).
			var texts []string
			known := true
			collect := func(k, off int, joined bool) {
				last := k + 1
				if joined {
					last = len(ws)
				}
				var b strings.Builder
				for m := k; m < last; m++ {
					v, ok := word(m)
					known = known && ok
					if m > k {
						b.WriteByte(' ')
					}
					b.WriteString(v)
				}
				if t := b.String(); off <= len(t) {
					texts = append(texts, t[off:])
					lines += len(t)
				}
			}
			if name == "ssh" {
				var starts []int
				sshScript(len(ws), word, j, &remote, func(k int) {
					if k < len(ws) {
						starts = append(starts, k)
					}
				}, func(int, int) {})
				if len(starts) > maxJoined || remote > maxWrapSteps {
					return true
				}
				for _, k := range starts {
					if lines > maxNestBytes {
						return true // past what one check reads: it may
					}
					collect(k, 0, true)
				}
			} else if !scan.su(j, func(k, off int) { collect(k, off, false) }, nil) && len(texts) == 0 {
				// Its scan stopped where an earlier su's read on, whose
				// command lines are judged: without its own, it may have
				// none (runuser ×N in a command of many programs).
				return true
			}
			if len(texts) == 0 || !known || depth <= 0 {
				return true
			}
			for _, t := range texts {
				if lexPOSIX(t).readsAnyInput(depth - 1) {
					return true
				}
			}
		case posixShells[name]:
			stdin, k, off := scan.source(j, name)
			if k > 0 {
				if v, ok := word(k); !ok || depth <= 0 || off > len(v) {
					stdin = true
				} else if r, ok := scripts[[2]int{k, off}]; ok {
					stdin = r // read once: many shells may have the same
				} else {
					stdin = lexPOSIX(v[off:]).readsAnyInput(depth - 1)
					scripts[[2]int{k, off}] = stdin
				}
			}
			if name == "fish" && !stdin {
				// Its -C commands run before its script, and may read
				// the input too (fish -C sh).
				for _, c := range scan.fishInits(j) {
					if v, ok := word(c[0]); !ok || depth <= 0 || c[1] > len(v) || lexPOSIX(v[c[1]:]).readsAnyInput(depth-1) {
						stdin = true
						break
					}
				}
			}
			if stdin || xargs && (k == 0 || replace) {
				return true
			}
		}
	}
	return false
}

// procSubAfter: a process substitution (<(…), zsh's =(…)) comes right
// after word k. It is no word of k's command (its command is read as a
// subshell's): . <(…) would otherwise be read as . with no file.
func (sc *shScript) procSubAfter(k int) bool {
	i := sc.words[k].end
	for i < len(sc.text) && (sc.text[i] == ' ' || sc.text[i] == '\t') {
		i++
	}
	rest := sc.text[i:]
	return strings.HasPrefix(rest, "<(") || strings.HasPrefix(rest, "=(")
}

// atReadsInput: at or batch (word i) reads the job's script from its
// input: not given a file (-f FILE) other than its input, nor listing, printing or removing
// jobs (-l, -c, -d, -r). Its options are read up to the next word prog
// tells is a program; a word whose value is not known may be anything,
// and it may read its input.
func atReadsInput(n int, word func(int) (string, bool), i int, prog func(int) bool) bool {
	for j := i + 1; j < n && !prog(j); j++ {
		a, known := word(j)
		switch {
		case !known:
			return true
		case a == "--":
			return true
		case len(a) > 1 && a[0] == '-':
		cluster:
			for k := 1; k < len(a); k++ {
				switch c := a[k]; {
				case c == 'f':
					// -f FILE: the job's script, which may be its input
					// (-f /dev/stdin), or a value not known.
					if k+1 < len(a) {
						return stdinPath(a[k+1:])
					}
					if j+1 < n {
						v, ok := word(j + 1)
						return !ok || stdinPath(v)
					}
					return false
				case strings.IndexByte("lcdr", c) >= 0:
					return false
				case c == 'q' || c == 't':
					if k+1 == len(a) {
						j++
					}
					break cluster
				}
			}
		}
	}
	return true
}

// shellFlags are the short options of sudo and doas that run the user's
// shell (sudo -s, sudo -i, doas -s), and sudo's long ones.
var shellFlags = map[string]string{"sudo": "is", "doas": "s"}

// runsShell: sudo or doas (word i) runs the target user's shell with no
// command (sudo -s, sudo -i, sudo --shell, sudo --login, doas -s), which
// reads its script from its input. With a command, sudo hands the shell
// the command and its arguments with every character but letters,
// digits, _, - and $ escaped: that is the program and its arguments, as
// the program finder reads them. A word whose value is not known may be
// -s; an option the check does not know is read as a flag, and one that
// may take a value (sudo -h) as taking the next word (a command there
// or not: the reading without one is taken). step is called for each word
// read, and false ends the reading: it does.
func runsShell(n int, word func(int) (string, bool), i int, name string, step func() bool) bool {
	w := wrapperSpecs[name]
	flags := shellFlags[name]
	shell := false
	dd := false
	for j := i + 1; j < n; j++ {
		if !step() {
			return true
		}
		a, known := word(j)
		switch {
		case !known:
			shell = true
		case dd || len(a) < 2 || a[0] != '-':
			if w.assign && strings.IndexByte(a, '=') > 0 {
				continue // sudo NAME=VALUE
			}
			return false // the command
		case a == "--":
			dd = true
		case strings.HasPrefix(a, "--"):
			opt, _, eq := strings.Cut(a[2:], "=")
			switch kind := w.longOption(opt); {
			case kind == 'l':
				return false
			case kind != 0 && (strings.HasPrefix("shell", opt) || strings.HasPrefix("login", opt)):
				shell = true
			case kind == 'v' && !eq:
				j++
			}
		default:
		cluster:
			for k := 1; k < len(a); k++ {
				c := a[k]
				switch {
				case strings.IndexByte(w.noRun, c) >= 0:
					return false
				case strings.IndexByte(flags, c) >= 0:
					shell = true
				case strings.IndexByte(w.value, c) >= 0 || strings.IndexByte(w.either, c) >= 0:
					if k+1 == len(a) {
						j++
					}
					break cluster
				}
			}
		}
	}
	return shell
}

// shellSource reads the arguments of the shell at word i as posixScriptIn
// does: its script is word script (its -c operand), or it reads its
// script from its input (stdin: no operand, -s, -, /dev/stdin), or from a
// file. A word whose value is not known may be -s or /dev/stdin before
// the script. off is the byte of word script its text starts at (fish's
// -cSCRIPT, --command=SCRIPT), 0 for a whole word.
func shellSource(n int, word func(int) (string, bool), i int, name string) (stdin bool, script, off int) {
	return newWordScan(n, word).source(i, name)
}

// source is shellSource on ws's words: a scan that reaches a position
// another one read from, in the same state, takes its result.
func (ws *wordScan) source(i int, name string) (stdin bool, script, off int) {
	n, word := ws.n, ws.read
	var path []scanKey // the positions read, and the states
	doneAt := func(stdin bool, script, off int) (bool, int, int) {
		for _, k := range path {
			ws.sources[k] = sourceScan{stdin, script, off}
		}
		return stdin, script, off
	}
	done := func(stdin bool, script int) (bool, int, int) {
		return doneAt(stdin, script, 0)
	}
	c, s := false, false
	for j := i + 1; j < n; j++ {
		if name != "busybox" { // busybox reads its first word as the applet
			k := scanKey{j: j, fish: name == "fish", korn: kornOptions(name), c: c, s: s}
			if r, ok := ws.sources[k]; ok {
				return doneAt(r.stdin, r.script, r.off)
			}
			if ws.sources == nil {
				ws.sources = map[scanKey]sourceScan{}
			}
			path = append(path, k)
		}
		a, known := word(j)
		switch {
		case !known:
			if c {
				return done(false, j)
			}
			return done(true, 0)
		case a == "--" || a == "-":
			if c {
				if j+1 < n {
					return done(false, j+1)
				}
				return done(false, 0)
			}
			if a == "-" || j+1 == n {
				return done(true, 0)
			}
			b, ok := word(j + 1)
			return done(s || !ok || stdinPath(b), 0)
		case strings.HasPrefix(a, "--"):
			// fish's --command, or any abbreviation of it, as posix()
			// reads it.
			if lo, v, eq := strings.Cut(a[2:], "="); name == "fish" && lo != "" && strings.HasPrefix("command", lo) {
				if eq && v != "" {
					return doneAt(false, j, len(a)-len(v))
				}
				c = true
				continue
			}
			if a == "--init-file" || a == "--rcfile" {
				j++
			}
			if name == "fish" && !strings.Contains(a, "=") && fishLongValue(a[2:]) {
				j++ // fish --features F, --debug CATS, --init-command CMD
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if name == "busybox" {
				continue
			}
			if name == "fish" && a[0] == '-' {
				// fish's options that take a value (-d CATS, -C CMD), as
				// posix() reads them: -cSCRIPT is the script.
				if k := strings.IndexAny(a[1:], fishValueOpts); k >= 0 {
					if a[1+k] == 'c' && 1+k < len(a)-1 {
						return doneAt(false, j, 2+k)
					} else if a[1+k] == 'c' {
						c = true
					} else if 1+k == len(a)-1 {
						j++
					}
				}
				continue
			}
			if a[0] == '-' {
				c = c || strings.IndexByte(a[1:], 'c') >= 0
				s = s || strings.IndexByte(a[1:], 's') >= 0
			}
			if optionTakesNext(name, a) {
				j++ // -o option, -O shopt
			}
		default:
			if name == "busybox" && j == i+1 {
				if !posixShells[a] {
					return done(false, 0)
				}
				name = a
				continue
			}
			if c {
				return done(false, j)
			}
			return done(s || stdinPath(a), 0)
		}
	}
	return done(!c, 0)
}

// stdinPath: a file that is the reader's standard input, or another
// descriptor of it (a process substitution's /dev/fd/63).
func stdinPath(p string) bool {
	return p == "/dev/stdin" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/")
}

// xargsReplaces: xargs (word i) has an option that puts its input into
// the command's words (-I, -i, --replace, BSD -J), or one that may be
// (a word whose value is not known), before its program (the next word
// prog tells that is no option).
func xargsReplaces(n int, word func(int) (string, bool), i int, prog func(int) bool) bool {
	for j := i + 1; j < n; j++ {
		a, known := word(j)
		if prog(j) && known && !strings.HasPrefix(a, "-") {
			return false
		}
		switch {
		case !known:
			return true
		case a == "--":
			return false
		case strings.HasPrefix(a, "--"):
			if name, _, _ := strings.Cut(a[2:], "="); name != "" && strings.HasPrefix("replace", name) {
				return true
			}
		case len(a) > 1 && a[0] == '-':
		cluster:
			for k := 1; k < len(a); k++ {
				switch c := a[k]; {
				case c == 'I' || c == 'i' || c == 'J':
					return true
				case strings.IndexByte("aELnPsde", c) >= 0:
					break cluster // its value
				}
			}
		}
	}
	return false
}
