package sink

import (
	"context"
	"encoding/base64"
	"net/http"
	"os/exec"
	"strings"
	"unicode/utf16"

	"github.com/contractguard/contractguard/internal/taint"
)

// Commands checks commands before they run. The zero Commands is what
// Command and CheckCmd use.
type Commands struct {
	// AllowPrograms are programs that input may choose, as the application
	// writes them: a name looked up in PATH ("git", which allows exactly
	// exec.Command("git", …) and "git" in a script) or a full path
	// ("/usr/bin/git"). A handler that picks one of a few tools by a request
	// value lists them here, and the check lets that choice through.
	AllowPrograms []string
}

// Command is exec.CommandContext(ctx, name, arg...) checked by CheckCmd:
// the command, or an error wrapping ErrBlocked, when request input would
// change what it runs.
func Command(ctx context.Context, name string, arg ...string) (*exec.Cmd, error) {
	return Commands{}.Command(ctx, name, arg...)
}

// CheckCmd checks cmd (its Path, Args and Env) against the request input
// ctx carries, before it runs. It returns an error wrapping ErrBlocked when
// an input
//   - is the program, or a path to it (exec.Command(input)), also the
//     program a wrapper runs (timeout 5 input, sudo -u bob input, env A=1
//     input, in the arguments and in a script);
//   - starts an argument with "-" (argument injection: `--upload-pack=…`,
//     `-oProxyCommand=…`), unless a "--" argument came before it or it is
//     a negative number;
//   - reaches a shell script (sh -c, bash -c, zsh -c, cmd /c, powershell
//     -Command, also behind env, sudo or timeout) anywhere but in the
//     literal text of one word: outside quotes with blanks or shell
//     syntax (`; id`, `$(id)`, backquotes, `|`, globs), breaking out of
//     quotes, adding an expansion inside double quotes, or as the
//     script's program or an option; also in a script nested in the
//     script or the arguments (sh -c "sh -c '…'", su -c '…', watch '…',
//     ssh host '…', env -S '…', flock -c '…'), read the same way, four
//     levels deep (deeper, any input in it is blocked);
//   - is in an interpreter's code (python3 -c, perl -e, node -e, php -r,
//     awk's program, …), in the arguments or in a script;
//   - is in a variable such as LD_PRELOAD, PATH or BASH_ENV of cmd.Env,
//     or of a wrapper's NAME=VALUE (env BASH_ENV=input bash …), or one a
//     script assigns or exports (export LD_PRELOAD=input, declare -x,
//     readonly, PATH=input; …).
//
// With no input in ctx it does nothing.
func CheckCmd(ctx context.Context, cmd *exec.Cmd) error {
	return Commands{}.Check(ctx, cmd)
}

// Command is Command with c's allow-list.
func (c Commands) Command(ctx context.Context, name string, arg ...string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, name, arg...)
	if err := c.Check(ctx, cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// Check is CheckCmd with c's allow-list.
func (c Commands) Check(ctx context.Context, cmd *exec.Cmd) error {
	r := request(ctx)
	if r == nil || cmd == nil {
		return nil
	}
	if ok, err := tooLarge(r, sinkShell); ok {
		return err
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	} else if multiCall(cmd.Path) && strings.HasPrefix(args[0], "-") {
		// A multi-call binary drops a leading "-" from its name (a login
		// shell's "-sh") before it looks the applet up.
		args = append([]string{args[0][1:]}, args[1:]...)
	}
	ck := shellCheck{c: c, args: args, path: cmd.Path, env: cmd.Env}
	ck.findScripts()
	// The program that runs is cmd.Path; Args[0] is only what it is told
	// its name is (a multi-call binary such as busybox goes by it). Where
	// the two name different programs (Path /bin/sh, Args[0] "worker"),
	// the command is read both ways, but for a multi-call binary run under
	// an applet's name (Path /bin/busybox, Args[0] "cat"): that runs the
	// applet Args[0] names, its first argument no applet.
	var byPath *shellCheck
	if cmd.Path != "" && len(cmd.Args) > 0 && programName(cmd.Path) != programName(args[0]) && !runsApplet(cmd.Path, args[0]) {
		byPath = &shellCheck{c: c, args: append([]string{cmd.Path}, cmd.Args[1:]...), path: cmd.Path, env: cmd.Env}
		byPath.findScripts()
	}
	input := func(v string) (why string, ok bool) {
		if why, ok = ck.input(v); ok && why == "" && byPath != nil {
			why, ok = byPath.input(v)
		}
		return why, ok
	}
	var failed error
	reported := false // report-only: the call is reported for each input
	// One byte is enough for a shell pattern: * or ? (rm -f uploads/*)
	// and ~ expand outside quotes; the checks below tell where it lands.
	r.InputsFrom(1, func(in taint.Input) bool {
		check := func(v string) (why string, ok bool) {
			if len(v) < taint.MinInputLen && !(len(v) == 1 && strings.IndexByte("*?~", v[0]) >= 0 && !protocolWildcard(in)) {
				return "", true
			}
			why, ok = input(v)
			if ok && why == "" && !isASCII(v) {
				why, ok = checkOtherCases(v, input)
			}
			return why, ok
		}
		v := trimSpace(in.Value)
		why, ok := check(v)
		if w := trimAnySpace(v); ok && why == "" && len(w) < len(v) {
			why, ok = check(w) // trimmed as most runtimes trim ("\u00a0; id")
		}
		if !ok {
			failed = overBudgetAgain(r, sinkShell, reported)
			return false
		}
		if why != "" {
			failed = blockAgain(r, sinkShell, in, why, reported)
			reported = true
			return failed == nil // report-only: go on reporting
		}
		return true
	})
	return failed
}

// runsApplet reports whether path is a multi-call binary (busybox,
// toybox) that, run with arg0 as its name, runs the applet arg0 names:
// one not named after the binary (busybox, busybox.static read their
// first argument as the applet).
func runsApplet(path, arg0 string) bool {
	return multiCall(path) && !strings.HasPrefix(programName(arg0), programName(path))
}

// multiCall reports whether path is a multi-call binary (busybox,
// toybox), which runs the applet its name (Args[0]) names.
func multiCall(path string) bool {
	name := programName(path)
	return name == "busybox" || name == "toybox"
}

type shellCheck struct {
	c      Commands
	args   []string
	path   string
	env    []string
	dd     int         // the index of the first "--" argument, or len(args)
	progs  []int       // the arguments that may be a program a wrapper runs
	progAt []bool      // progs, by argument (isProg)
	pf     *progFinder // the finder of progs (findPrograms, findParams)
	// optProgs: the programs options name (scp -S PROGRAM): the
	// argument, and the byte the program starts at.
	optProgs [][2]int
	sets     [][2]int  // a wrapper's NAME=VALUE (env A=1 id, systemd-run -E A=1 id): the argument, and the byte NAME starts at
	props    [][2]int  // a unit's property NAME=VALUE (systemd-run -p ExecStartPre=…): the argument, and the byte NAME starts at
	gitConf  [][2]int  // git's -c NAME=VALUE and --config-env: the argument, and the byte NAME starts at
	sshConf  [][2]int  // ssh's -F FILE: the argument, and the byte FILE starts at
	codes    []codeArg // interpreters' code (python3 -c CODE, awk 'PROGRAM'): findCode
	scripts  []script
	coded    map[[2]int]bool // the wrapped scripts found: their argument and byte
	inScr    []bool          // the arguments in a script (inScript)
	work     int
	over     bool       // the command's scripts are more than a check reads: every input is over budget
	nest     nestBudget // for the scripts nested in the command's
	scan     *wordScan  // the arguments' su and shell words (findScripts)
	reads    int        // the arguments the finders read (word), and su's found (findSuPrograms)
}

// script is a shell script in the command: args[arg] (or args[arg:]
// joined, for cmd and PowerShell), and, once an input is found in it, its
// reading.
type script struct {
	arg, last int  // args[arg:last+1] make it
	off       int  // from this byte of args[arg] (env --split-string=…)
	wrapped   bool // a wrapper's command line (env -S, flock -c): its argument is checked as an option too
	text      string
	family    shFamily
	fish      bool // the shell is fish
	f         finder
	sc        *shScript
	alts      []*shScript // other readings of a POSIX script (readings)
	// Nested scripts (nest.go): the scripts words of this one hold, read
	// at depth+1; an opaque script is not read, and any input in its text
	// is blocked.
	depth  int
	opaque bool
	over   bool // the budget for nested scripts is spent
	kids   []*script
	budget *nestBudget
}

var posixShells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"rbash": true, "rksh": true, "yash": true, "busybox": true, "fish": true,
	// Other Korn and Bourne shells, and the C shells, whose -c script is
	// read as a POSIX one: their quotes, separators, substitutions and
	// expansions are those, or fewer.
	"oksh": true, "loksh": true, "pdksh": true, "lksh": true, "posh": true, "bosh": true, "csh": true, "tcsh": true,
}

// shellName is a program's name (programName) without a version after a
// shell's name (bash5, bash-5.2, ksh93, zsh-5.9): the shell's; any other
// name as it is.
func shellName(name string) string {
	if posixShells[name] {
		return name
	}
	if stem := strings.TrimRight(name, "0123456789.-_"); strings.ContainsAny(name[len(stem):], "0123456789") && posixShells[stem] && stem != "busybox" {
		return stem
	}
	return name
}

// programName is a program's base name, lower-case and without .exe on
// any system (a Windows path is read on Linux too).
func programName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	p = strings.ToLower(p)
	return strings.TrimSuffix(p, ".exe")
}

// findScripts finds the shell scripts among the arguments: after any
// argument naming a shell (so behind env, sudo, timeout or nice too).
func (ck *shellCheck) findScripts() {
	args := ck.args
	ck.dd = len(args)
	// A wrapper's "--" ends its own options, not the program's. find's
	// ends only its leading options (-H, -L, -P, -D, -O): what follows is
	// still its expression (find -- -delete deletes, find -- -fprint FILE
	// writes FILE), and -exec's program reads its own options. A shell's
	// ends its own options: the words after it are its script file and
	// the script's parameters (bash -- deploy.sh <input>), or those of a
	// script read from -c or stdin (sh -s -- <input>); a "--" after a
	// script file is the script's (bash deploy.sh -- <input>).
	from := 1
	if posixShells[shellName(programName(args[0]))] && !isWrapper(args[0]) {
		from = len(args)
		if f := shellScriptFile(args); f > 0 {
			from = f + 1
		}
	}
	if !isWrapper(args[0]) {
		for i := from; i < len(args); i++ {
			if args[i] == "--" {
				ck.dd = i
				break
			}
		}
	}
	ck.scan = newWordScan(len(args), ck.word)
	shells := map[int]bool{} // the arguments that are a shell's script
	noCmdScript := false     // a cmd's scan found no /c
	var dashes []int         // nextDashes, for capsh
	for i := 0; i < len(args); i++ {
		name := shellName(programName(args[i]))
		switch {
		case posixShells[name]:
			if name == "fish" {
				// Its -C commands run before its script.
				for _, c := range ck.scan.fishInits(i) {
					if c[1] == 0 && shells[c[0]] || !ck.newCode(c[0], c[1]) {
						continue
					}
					ck.scripts = append(ck.scripts, script{arg: c[0], last: c[0], off: c[1], text: args[c[0]][c[1]:], family: posixShell, fish: true, wrapped: c[1] > 0})
					if c[1] == 0 {
						shells[c[0]] = true
					}
				}
			}
			if j := ck.scan.posix(i, name); j > 0 {
				if i == 0 {
					// The words after a shell's script are its $0 and
					// positional parameters, a "--" among them too (sh -c
					// 'git clone "$1"' -- <input>: $0 is "--"), and one
					// before it ends the shell's options only: what the
					// script does with "$1" is not known.
					ck.dd = len(args)
				}
				ck.scripts = append(ck.scripts, script{arg: j, last: j, text: args[j], family: posixShell, fish: name == "fish"})
				shells[j] = true
				i = j
			}
		case name == "su" || name == "runuser":
			ck.scan.su(i, func(j, off int) {
				// Once (a map: a command of many su or -c is read in
				// linear time), and not where a shell's script is.
				if off == 0 && shells[j] || !ck.newCode(j, off) {
					return
				}
				// The user's shell, which may be fish. The argument is
				// checked as an option too, as before it was read.
				ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: args[j][off:], family: posixShell, fish: true, wrapped: true})
			}, func(j, off int) {
				// -s SHELL, --shell=SHELL: the program that runs in place
				// of the user's shell.
				if j < len(args) && off <= len(args[j]) {
					ck.optProgs = append(ck.optProgs, [2]int{j, off})
				}
			})
		case name == "capsh":
			// capsh … -- ARGS: ARGS are bash's (capsh -- -c '…').
			if dashes == nil {
				dashes = nextDashes(len(args), ck.word)
			}
			if d := dashes[i]; d < len(args) {
				if j := ck.scan.posix(d, "bash"); j > 0 && !shells[j] {
					ck.scripts = append(ck.scripts, script{arg: j, last: j, text: args[j], family: posixShell})
					shells[j] = true
				}
			}
		case name == "cmd" && !noCmdScript:
			// The first /c after it, once: a cmd with none has none after
			// it either (cmd cmd cmd … read the rest of the arguments for
			// each).
			noCmdScript = true
			for j := i + 1; j < len(args); j++ {
				if a, _ := ck.word(j); strings.EqualFold(a, "/c") || strings.EqualFold(a, "/k") || strings.EqualFold(a, "/r") {
					if j+1 < len(args) {
						ck.scripts = append(ck.scripts, script{arg: j + 1, last: len(args) - 1, text: strings.Join(args[j+1:], " "), family: cmdShell})
					}
					i = len(args)
					break
				}
			}
		case name == "powershell" || name == "pwsh":
			if j, text := powerShellScript(args, i); j > 0 {
				ck.scripts = append(ck.scripts, script{arg: j, last: len(args) - 1, text: text, family: powerShell})
				i = len(args)
			}
		}
	}
	ck.findPrograms()
	ck.findParams()
	ck.findSuPrograms()
	ck.findRemote()
	ck.findGitConfig()
	ck.findCode()
	for k := range ck.scripts {
		ck.scripts[k].f = newFinder(ck.scripts[k].text)
		ck.scripts[k].budget = &ck.nest
	}
}

// isProg: argument j is a program a wrapper runs (findPrograms).
func (ck *shellCheck) isProg(j int) bool {
	if ck.progAt == nil {
		ck.progAt = make([]bool, len(ck.args))
		for _, p := range ck.progs {
			ck.progAt[p] = true
		}
	}
	return ck.progAt[j]
}

// newCode: the wrapped script at byte off of argument j is not found yet
// (a map: a command of many -S or -o options is read in linear time).
func (ck *shellCheck) newCode(j, off int) bool {
	if ck.coded == nil {
		ck.coded = map[[2]int]bool{}
	}
	k := [2]int{j, off}
	if ck.coded[k] {
		return false
	}
	ck.coded[k] = true
	return true
}

// word is argument j, for the finders that read words (counted).
func (ck *shellCheck) word(j int) (string, bool) {
	ck.reads++
	return ck.args[j], true
}

// findRemote finds the scripts of watch (its operands, joined) and of ssh
// (the remote command: its operands after the destination, joined), where
// they are the program or the program a wrapper runs.
func (ck *shellCheck) findRemote() {
	args := ck.args
	steps := 0                    // the words the scans of ssh, watch and wsl read (sshScript)
	var read []bool               // the words script's scans read (scriptScript)
	var optRead map[string][]bool // the words optionScripts' scans read, by program
	var suffix []int              // suffix[j]: the bytes of args[j:] joined
	joined := 0                   // the bytes of the joined scripts made
	var markers []int             // nextMarkers, for parallel
	var capRead []bool            // the words capsh's scans read (capshShell)
	for _, p := range append([]int{0}, ck.progs...) {
		var starts []int
		fish, parallel := false, false
		switch programName(args[p]) {
		case "script":
			// script -c '…': a command line for the user's shell.
			if read == nil {
				read = make([]bool, len(args))
			}
			scriptScript(len(args), ck.word, p, read, func(j, off int) {
				if j < len(args) && off <= len(args[j]) && ck.newCode(j, off) {
					ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: args[j][off:], family: posixShell, fish: true, wrapped: true})
				}
			})
			continue
		case "watch":
			watchScript(len(args), ck.word, p, &steps, func(j int) { starts = append(starts, j) })
		case "capsh":
			// capsh --shell=PROGRAM … --: PROGRAM runs the arguments.
			if capRead == nil {
				capRead = make([]bool, len(args))
			}
			capshShell(len(args), ck.word, p, capRead, ck.isProg, func(j, off int) {
				ck.optProgs = append(ck.optProgs, [2]int{j, off})
			})
			continue
		case "scp", "sftp":
			scpOptions(len(args), ck.word, p, ck.isProg, func(j, off int, kind byte) {
				switch {
				case off > len(args[j]):
				case kind == 'o':
					if ck.newCode(j, off) {
						ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: args[j][off:], family: posixShell, fish: true, wrapped: true})
					}
				case kind == 'S':
					ck.optProgs = append(ck.optProgs, [2]int{j, off})
				case kind == 'F':
					ck.sshConf = append(ck.sshConf, [2]int{j, off})
				}
			})
			continue
		case "tar", "rsync", "man", "zip", "git", "split", "strace", "sort", "wget":
			// An option's command line (tar --to-command=…, rsync -e …),
			// or program (sort --compress-program=…).
			name := programName(args[p])
			add := func(j, off int) {
				if j < len(args) && off <= len(args[j]) && ck.newCode(j, off) {
					// split runs its --filter with $SHELL: it may be fish.
					ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: args[j][off:], family: posixShell, fish: name == "split", wrapped: true})
				}
			}
			prog := func(j, off int) {
				if j < len(args) && off <= len(args[j]) {
					ck.optProgs = append(ck.optProgs, [2]int{j, off})
				}
			}
			if name == "zip" {
				zipScript(len(args), ck.word, p, ck.isProg, add)
			} else {
				if optRead == nil {
					optRead = map[string][]bool{}
				}
				if optRead[name] == nil {
					optRead[name] = make([]bool, len(args))
				}
				getoptScript(len(args), ck.word, p, optRead[name], optionScripts[name], add, prog)
			}
			continue
		case "sg":
			sgScript(len(args), ck.word, p, func(j int) { starts = append(starts, j) })
		case "parallel":
			parallelScript(len(args), ck.word, p, &steps, func(j int) { starts = append(starts, j) })
			parallel = true
		case "wsl":
			wslScript(len(args), ck.word, p, &steps, func(j int) { starts = append(starts, j) })
			fish = true // the Linux user's shell
		case "ssh":
			ck.sshConfigFiles(p)
			sshScript(len(args), ck.word, p, &steps, func(j int) { starts = append(starts, j) }, func(j, off int) {
				// -o ProxyCommand=…: a command line for the user's shell.
				if ck.newCode(j, off) {
					ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: args[j][off:], family: posixShell, fish: true, wrapped: true})
				}
			})
			fish = true // the remote user's shell
		default:
			continue
		}
		keep, opaque := joinedStarts(starts, -1)
		for _, j := range keep {
			// Once for each start (many programs may find it), and within
			// the budget of the nested scripts' text: the text from each
			// start is the rest of the command (find -exec ssh -exec ssh …
			// made one for each), or parallel's command line.
			if j >= len(args) || !ck.newCode(j, -1) {
				continue
			}
			if suffix == nil {
				suffix = make([]int, len(args)+1)
				for k := len(args) - 1; k >= 0; k-- {
					suffix[k] = suffix[k+1] + len(args[k]) + 1
				}
			}
			add := func(j, e int) {
				if joined += suffix[j] - suffix[e]; joined > maxNestBytes {
					ck.over = true
					return
				}
				// Its arguments are checked as options too, as before they
				// were read.
				ck.scripts = append(ck.scripts, script{arg: j, last: e - 1, text: strings.Join(args[j:e], " "), family: posixShell, fish: fish, opaque: opaque, wrapped: true})
			}
			if parallel {
				if markers == nil {
					markers = nextMarkers(len(args), ck.word)
				}
				parallelScripts(j, markers, add)
			} else {
				add(j, len(args))
			}
			if ck.over {
				return
			}
		}
	}
}

// findPrograms finds the programs that wrappers run (sudo -u bob id,
// timeout 5 id, env A=1 id), and the command lines in their options
// (env -S, flock -c), which are read as scripts.
func (ck *shellCheck) findPrograms() {
	args := ck.args
	seen := make([]bool, len(args))
	set := map[[2]int]bool{}
	ck.pf = &progFinder{
		n:    len(args),
		word: func(j int) (string, bool) { return args[j], true },
		prog: func(j int) {
			if j > 0 && !seen[j] {
				seen[j] = true
				ck.progs = append(ck.progs, j)
			}
		},
		assign: func(j, off int) {
			if k := [2]int{j, off}; !set[k] && off <= len(args[j]) {
				set[k] = true
				ck.sets = append(ck.sets, k)
			}
		},
		property: func(j, off int) {
			if k := [2]int{j, -1 - off}; !set[k] && off <= len(args[j]) {
				set[k] = true
				ck.props = append(ck.props, [2]int{j, off})
			}
		},
		script: func(j, off int, split bool) {
			if j >= len(args) || off > len(args[j]) || !ck.newCode(j, off) {
				return
			}
			text := args[j][off:]
			if split {
				// env -S's string is env's arguments: env -S '-i id' runs id.
				text = "env " + text
			}
			ck.scripts = append(ck.scripts, script{arg: j, last: j, off: off, text: text, family: posixShell, wrapped: true})
		},
	}
	if isWrapper(args[0]) {
		ck.pf.find()
	}
}

// findParams finds the arguments a shell's -c script runs as a program
// ("$@" or "$1" in command position: sh -c 'exec "$@"' sh PROGRAM, which
// may be a wrapper too) or as a script (eval "$1", sh -c "$1"): the
// script's positional parameters, the arguments after it ($0 first).
func (ck *shellCheck) findParams() {
	for i, n := 0, len(ck.scripts); i < n; i++ {
		s := &ck.scripts[i]
		if s.wrapped || s.family != posixShell || s.last+1 >= len(ck.args) {
			continue
		}
		s.budget = &ck.nest
		s.lex()
		zero, fish := s.last+1, s.fish
		s.sc.params(func(p int, code bool) {
			k := zero + p
			switch {
			case k >= len(ck.args):
			case code:
				if ck.newCode(k, -2) {
					ck.scripts = append(ck.scripts, script{arg: k, last: k, text: ck.args[k], family: posixShell, fish: fish, wrapped: true})
				}
			default:
				ck.pf.program(k)
			}
		})
	}
}

// findSuPrograms finds the script files of su and runuser (the program,
// or one a wrapper runs): su bob FILE runs FILE with the user's shell.
func (ck *shellCheck) findSuPrograms() {
	seen := map[int]bool{}
	for _, j := range ck.progs {
		seen[j] = true
	}
	steps, all := 0, len(ck.args)
	for _, p := range append([]int{0}, ck.progs...) {
		if !suRuns(len(ck.args), ck.word, p, &steps) {
			continue
		}
		suProgram(len(ck.args), ck.word, p, &steps, &all, func(j int) {
			ck.reads++
			if j > 0 && !seen[j] {
				seen[j] = true
				ck.progs = append(ck.progs, j)
			}
		})
	}
}

// shellScriptFile is the index of the script file a POSIX shell args[0]
// runs (bash -e -- deploy.sh: 3), or 0 when it runs none (-c, -s, or
// stdin) or its options are not all known (fish's, a long option other
// than those below): the words after it are the script's parameters.
func shellScriptFile(args []string) int {
	name := shellName(programName(args[0]))
	if name == "fish" {
		return 0
	}
	for j := 1; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--" || a == "-":
			if j+1 < len(args) {
				return j + 1
			}
			return 0
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--norc", "--noprofile", "--login", "--posix", "--restricted", "--verbose", "--noediting":
				continue
			}
			return 0
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if a[0] == '-' && strings.ContainsAny(a[1:], "cs") {
				return 0 // the script is -c's, or read from stdin
			}
			if optionTakesNext(name, a) {
				j++ // -o option, -O shopt
			}
		default:
			return j
		}
	}
	return 0
}

// optionTakesNext reports whether the option word a (-…, +…) of the
// POSIX shell name takes the next word as its value. bash, dash and ash
// read -o NAME (and bash's -O NAME) from the next word wherever the
// letter is in the word (-eo pipefail). zsh and the Korn shells read the
// rest of the word as -o's name (-oerrexit) and the next word only for an
// -o that ends the word (zsh -co errexit CMD); their -O takes no value.
func optionTakesNext(name, a string) bool {
	if kornOptions(name) {
		k := strings.IndexByte(a[1:], 'o')
		return k >= 0 && 1+k == len(a)-1
	}
	return strings.ContainsAny(a[1:], "oO")
}

// kornOptions: the POSIX shell name reads -o as zsh and the Korn shells
// do (optionTakesNext).
func kornOptions(name string) bool {
	switch name {
	case "zsh", "ksh", "mksh", "rksh", "oksh", "loksh", "pdksh", "lksh":
		return true
	}
	return false
}

// fishValueOpts are fish's short options that take a value (its
// getopt string "+hPilNnvc:C:p:d:f:D:o:").
const fishValueOpts = "cCpdfDo"

// fishLongValue reports whether the long option name (without its "--")
// is one of fish's that take a value, or an abbreviation only of those
// (getopt_long reads "--feat" as --features).
func fishLongValue(name string) bool {
	if name == "" {
		return false
	}
	value := false
	for _, o := range [...]string{"command", "init-command", "features", "debug", "debug-output", "debug-stack-frames", "profile", "profile-startup"} {
		if o == name {
			return true
		}
		value = value || strings.HasPrefix(o, name)
	}
	for _, o := range [...]string{"help", "interactive", "login", "no-config", "no-execute", "print-rusage-self", "print-debug-categories", "private", "version"} {
		if strings.HasPrefix(o, name) {
			return false
		}
	}
	return value
}

// fishTakesNext reports whether the option word a of fish takes the next
// word as its value (-d CATS, -id CATS, --debug CATS), as posix() reads
// it.
func fishTakesNext(a string) bool {
	if long, ok := strings.CutPrefix(a, "--"); ok {
		return !strings.Contains(long, "=") && fishLongValue(long)
	}
	k := strings.IndexAny(a[1:], fishValueOpts)
	return a[0] == '-' && k >= 0 && 1+k == len(a)-1
}

// fishInits are the commands of fish word i's -C options (fishInitCommands
// on ws's words).
func (ws *wordScan) fishInits(i int) [][2]int {
	if ws.fishRead == nil {
		ws.fishRead = make([]bool, ws.n)
	}
	return fishInitCommands(ws.n, ws.read, i, ws.fishRead)
}

// fishInitCommands are the commands of fish word i's -C options
// (--init-command, run before its -c script or its file), on n words as
// word gives them: the word, and the byte the command starts at. A word
// whose value is not known may be an option (fish $FLAGS -C CMD runs CMD
// when $FLAGS is -N): the scan goes on past it (were it the script file
// or an option's value, what follows is read as more, never as less).
// Each position is read by one such scan (read marks them): a scan that
// reaches a position another one read from stops there, whose commands
// from there on that one found (fish -d fish -d fish … was read to the
// end for each fish, in quadratic time).
func fishInitCommands(n int, word func(int) (string, bool), i int, read []bool) [][2]int {
	var cmds [][2]int
	for k := i + 1; k < n; k++ {
		if read[k] {
			break // read on from here already
		}
		read[k] = true
		a, known := word(k)
		if !known {
			continue
		}
		if len(a) < 2 || a[0] != '-' || a == "--" {
			break // getopt's "+": options end at the first operand
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, _, eq := strings.Cut(long, "=")
			if !fishLongValue(name) {
				continue
			}
			init := len(name) >= 2 && strings.HasPrefix("init-command", name)
			switch {
			case eq && init:
				cmds = append(cmds, [2]int{k, 2 + len(name) + 1})
			case !eq && init && k+1 < n:
				cmds = append(cmds, [2]int{k + 1, 0})
			}
			if !eq {
				k++
			}
			continue
		}
		if p := strings.IndexAny(a[1:], fishValueOpts); p >= 0 {
			p++
			switch {
			case a[p] == 'C' && p+1 < len(a):
				cmds = append(cmds, [2]int{k, p + 1})
			case a[p] == 'C' && k+1 < n:
				cmds = append(cmds, [2]int{k + 1, 0})
			}
			if p+1 == len(a) {
				k++
			}
		}
	}
	return cmds
}

// posixScriptIn is the index of the script of the shell word i (its -c
// option's operand: the first word that is not an option), or 0, on n
// words as word gives them: a word whose value is not known may be any
// option (-c too) before the script, and is the script after -c.
func posixScriptIn(n int, word func(int) (string, bool), i int, name string) int {
	return newWordScan(n, word).posix(i, name)
}

// posix is posixScriptIn on ws's words: a scan that reaches a position
// another one read from, in the same state, takes its result.
func (ws *wordScan) posix(i int, name string) int {
	n, word := ws.n, ws.read
	var path []scanKey // the positions read, and the states
	done := func(r int) int {
		for _, k := range path {
			ws.shell[k] = r
		}
		return r
	}
	c := false
	for j := i + 1; j < n; j++ {
		if name != "busybox" { // busybox reads its first word as the applet
			k := scanKey{j: j, fish: name == "fish", korn: kornOptions(name), c: c}
			if r, ok := ws.shell[k]; ok {
				return done(r)
			}
			if ws.shell == nil {
				ws.shell = map[scanKey]int{}
			}
			path = append(path, k)
		}
		a, known := word(j)
		switch {
		case !known:
			if c {
				return done(j)
			}
			c = true
		case a == "--" || a == "-":
			if c && j+1 < n {
				return done(j + 1)
			}
			return done(0)
		case strings.HasPrefix(a, "--"):
			// fish's --command, or any abbreviation of it (--comm): no
			// other long option of fish starts with "c".
			if lo, v, eq := strings.Cut(a[2:], "="); name == "fish" && lo != "" && strings.HasPrefix("command", lo) {
				if eq && v != "" {
					return done(j)
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
				// fish's options that take a value (-d CATS, -p FILE,
				// -C CMD): the rest of the word, or the next one.
				if k := strings.IndexAny(a[1:], fishValueOpts); k >= 0 {
					if a[1+k] == 'c' && 1+k < len(a)-1 {
						return done(j) // -cSCRIPT: the rest of the word
					} else if a[1+k] == 'c' {
						c = true
					} else if 1+k == len(a)-1 {
						j++
					}
				}
				continue
			}
			if strings.IndexByte(a[1:], 'c') >= 0 && a[0] == '-' {
				c = true
			}
			if optionTakesNext(name, a) {
				j++ // -o option, -O shopt
			}
		default:
			if name == "busybox" && j == i+1 {
				if !posixShells[a] {
					return done(0)
				}
				name = a
				continue
			}
			if c {
				return done(j)
			}
			return done(0) // a script file
		}
	}
	return done(0)
}

// powerShellScript is the script of powershell args[i]: -Command (or any
// abbreviation of it, -c included) and the arguments after it, joined, or
// -EncodedCommand's, decoded.
func powerShellScript(args []string, i int) (int, string) {
	for j := i + 1; j < len(args); j++ {
		a := strings.ToLower(args[j])
		if len(a) < 2 || (a[0] != '-' && a[0] != '/') {
			return 0, "" // a script file and its arguments
		}
		opt := strings.TrimLeft(a[1:], "-")
		switch {
		case opt == "c" || opt == "commandwithargs" || opt == "cwa" || (len(opt) >= 1 && strings.HasPrefix("command", opt)):
			if j+1 < len(args) {
				return j + 1, strings.Join(args[j+1:], " ")
			}
			return 0, ""
		case opt == "e" || opt == "ec" || (len(opt) >= 2 && strings.HasPrefix("encodedcommand", opt)):
			if j+1 < len(args) {
				if text, ok := decodeUTF16(args[j+1]); ok {
					return j + 1, text
				}
			}
			return 0, ""
		case opt == "file" || opt == "f":
			return 0, ""
		case opt == "executionpolicy" || opt == "ep" || opt == "ex" || opt == "workingdirectory" || opt == "wd" || opt == "windowstyle" || opt == "w" ||
			opt == "version" || opt == "v" || opt == "inputformat" || opt == "if" || opt == "outputformat" || opt == "of" || opt == "psconsolefile" ||
			opt == "configurationname" || opt == "settingsfile" || opt == "custompipename":
			j++ // an option with a value
		}
	}
	return 0, ""
}

// decodeUTF16 decodes -EncodedCommand's base64 of UTF-16LE.
func decodeUTF16(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%2 != 0 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

// The environment variables that make a program load, run or trust what
// they name.
var dangerousEnv = map[string]bool{
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
	"DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true, "PATH": true, "PS4": true,
	"PROMPT_COMMAND": true, "SHELLOPTS": true, "IFS": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
	"GIT_EXEC_PATH": true, "GIT_ASKPASS": true, "GIT_CONFIG_PARAMETERS": true, "GIT_PROXY_COMMAND": true,
	"SSH_ASKPASS": true, "PYTHONPATH": true, "PYTHONSTARTUP": true, "NODE_OPTIONS": true, "PERL5OPT": true,
	"PERL5LIB": true, "RUBYOPT": true, "GCONV_PATH": true, "EDITOR": true, "VISUAL": true, "PAGER": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_COUNT": true, "GIT_TEMPLATE_DIR": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "PYTHONHOME": true,
	"PERL5DB": true, "RUBYLIB": true, "NODE_PATH": true, "LESSOPEN": true, "LESSCLOSE": true, "BROWSER": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "CURL_CA_BUNDLE": true, "GIT_SSL_NO_VERIFY": true, "NODE_TLS_REJECT_UNAUTHORIZED": true,
	// Python imports the module a warning filter names (PYTHONWARNINGS=
	// ignore::x.y:: imports x); PHP loads the configuration they name
	// (auto_prepend_file runs code); glibc's tunables have been a way in
	// to set-user-ID programs (CVE-2023-4911).
	"PYTHONWARNINGS": true, "PHPRC": true, "PHP_INI_SCAN_DIR": true, "GLIBC_TUNABLES": true,
	// Options and commands programs read from the environment: tar's
	// (TAR_OPTIONS=--to-command=…), rsync's remote shell and connection
	// program, sudo -A's askpass, man's pager, go's flags (-toolexec=…),
	// zsh's startup directory (its .zshenv runs for zsh -c), vi's and
	// vim's startup commands, Lua's init code, Perl's library path, the
	// JVM's class path, .NET's startup hooks, OpenSSL's configuration
	// (which loads engines).
	"TAR_OPTIONS": true, "RSYNC_RSH": true, "RSYNC_CONNECT_PROG": true, "SUDO_ASKPASS": true, "MANPAGER": true,
	"GOFLAGS": true, "ZDOTDIR": true, "EXINIT": true, "VIMINIT": true, "LUA_INIT": true, "PERLLIB": true,
	"CLASSPATH": true, "DOTNET_STARTUP_HOOKS": true, "OPENSSL_CONF": true, "OPENSSL_ENGINES": true,
	// The remote shells of Subversion (svn+ssh://) and CVS (:ext:), the
	// editors and pagers of sudoedit, systemctl and kubectl, the options
	// man and zip read before their own (man's -P PAGER, zip's -TT
	// COMMAND), cargo's compiler wrapper, and the startup files of wget
	// (use_askpass), psql (\!) and Mercurial (hooks).
	"SVN_SSH": true, "CVS_RSH": true, "SUDO_EDITOR": true, "SYSTEMD_EDITOR": true, "SYSTEMD_PAGER": true,
	"KUBE_EDITOR": true, "MANOPT": true, "ZIPOPT": true, "RUSTC_WRAPPER": true, "WGETRC": true, "PSQLRC": true,
	"HGRCPATH": true,
}

// dangerousEnvName: a variable of dangerousEnv, or of a family of them:
// git's configuration from the environment (GIT_CONFIG_KEY_0,
// GIT_CONFIG_VALUE_0: core.sshCommand and the like) and bash's exported
// functions (BASH_FUNC_name%%, which define a command the script runs).
func dangerousEnvName(name string) bool {
	name = strings.ToUpper(name)
	return dangerousEnv[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") ||
		strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "LUA_INIT_")
}

// input checks one input; ok is false when the check's work is spent.
func (ck *shellCheck) input(v string) (why string, ok bool) {
	ck.work += len(v) * (len(ck.args) + len(ck.env) + 2)
	if ck.work > maxWork || ck.over {
		return "", false
	}
	if !ck.c.allowed(ck.args[0]) { // an allowed program as written: its lookup in PATH too
		for _, name := range [2]string{ck.args[0], ck.path} {
			if why := ck.program(name, v); why != "" {
				return why, true
			}
		}
	}
	for _, j := range ck.progs {
		if !ck.c.allowed(ck.args[j]) {
			if why := ck.program(ck.args[j], v); why != "" {
				return why, true
			}
		}
	}
	for _, pp := range ck.optProgs {
		if why := ck.program(ck.args[pp[0]][pp[1]:], v); why != "" {
			return why, true
		}
	}
	for i := 1; i < len(ck.args) && i < ck.dd; i++ {
		if ck.inScript(i) {
			continue
		}
		if a := ck.args[i]; len(a) >= len(v) && equalFold(a[:len(v)], v) && isOption(v) {
			return "becomes an option of " + programName(ck.args[0]), true
		}
	}
	for k := range ck.scripts {
		why, ok := ck.scripts[k].check(v, ck.c)
		if !ok {
			return "", false
		}
		if why != "" {
			return why, true
		}
	}
	for _, kv := range ck.env {
		if why := setsEnv(kv, v); why != "" {
			return why, true
		}
	}
	for _, kv := range ck.sets {
		if why := setsEnv(ck.args[kv[0]][kv[1]:], v); why != "" {
			return why, true
		}
	}
	for _, kv := range ck.props {
		if why := propertyInput(ck.args[kv[0]][kv[1]:], v); why != "" {
			return why, true
		}
	}
	for _, c := range ck.sshConf {
		if i, ok := (&finder{text: ck.args[c[0]][c[1]:]}).index(v, 0); i >= 0 || !ok {
			return "chooses ssh's configuration file", true
		}
	}
	for _, c := range ck.codes {
		// Any input in the code, or reaching into it from the option
		// it is attached to (-cCODE).
		f := &finder{text: ck.args[c.arg]}
		if i, ok := f.index(v, max(0, c.off-len(v)+1)); i >= 0 || !ok {
			return codeWhy(programName(ck.args[c.interp]), v), true
		}
	}
	for _, c := range ck.gitConf {
		kv := ck.args[c[0]][c[1]:]
		name, _, _ := strings.Cut(kv, "=")
		if dangerousGitConfig(name) && gitConfigInput(kv, len(name), v) {
			return "sets git's configuration " + strings.ToLower(name), true
		}
	}
	return "", true
}

// codeArg is an interpreter's code: argument arg from byte off, which the
// interpreter at argument interp runs.
type codeArg struct{ arg, off, interp int }

// findCode finds the code arguments of the interpreters (the program, or
// one a wrapper runs): python3 -c CODE, perl -e CODE, awk 'PROGRAM'.
func (ck *shellCheck) findCode() {
	var read []bool // the words the interpreters' scans read
	for _, p := range append([]int{0}, ck.progs...) {
		if interpreterName(programName(ck.args[p])) == "" {
			continue
		}
		if read == nil {
			read = make([]bool, len(ck.args))
		}
		interpreterCode(len(ck.args), ck.word, p, read, ck.isProg, func(j, off int) {
			if j < len(ck.args) && off <= len(ck.args[j]) {
				ck.codes = append(ck.codes, codeArg{j, off, p})
			}
		})
	}
}

// sshConfigFiles finds the values of -F (its configuration file, which
// may hold a ProxyCommand) of ssh at argument p, among its options: before
// the destination and after it, up to the command or "--".
func (ck *shellCheck) sshConfigFiles(p int) {
	sshConfigWords(len(ck.args), ck.word, p, ck.isProg, func(j, off int) {
		ck.sshConf = append(ck.sshConf, [2]int{j, off})
	})
}

// sshConfigWords calls found with each word, of n as word gives them,
// that holds the value of -F of ssh at word p, and the byte of its value
// where the file's name starts, up to the next word prog tells is a
// program (find -exec ssh … -exec ssh). A word whose value is not known is
// read as an operand.
func sshConfigWords(n int, word func(int) (string, bool), p int, prog func(int) bool, found func(j, off int)) {
	operands := 0
	for j := p + 1; j < n && operands < 2 && !prog(j); j++ {
		a, known := word(j)
		if a == "--" && known {
			break
		}
		if !known || len(a) < 2 || a[0] != '-' {
			operands++
			continue
		}
		for k := 1; k < len(a); k++ {
			if strings.IndexByte(sshValue, a[k]) < 0 {
				continue
			}
			switch {
			case k+1 < len(a):
				if a[k] == 'F' {
					found(j, k+1)
				}
			case j+1 < n:
				if a[k] == 'F' {
					found(j+1, 0)
				}
				j++
			}
			break
		}
	}
}

// findGitConfig finds the configuration git (the program, or one a
// wrapper runs) is given in its arguments.
func (ck *shellCheck) findGitConfig() {
	for _, p := range append([]int{0}, ck.progs...) {
		gitConfigWords(len(ck.args), ck.word, p, ck.isProg, func(j, off int) {
			ck.gitConf = append(ck.gitConf, [2]int{j, off})
		})
	}
}

// gitConfigWords calls found with each word, of n as word gives them,
// that holds a configuration given to git at word p (if it is git), and
// the byte of its value where NAME=VALUE starts: -c NAME=VALUE and
// --config-env NAME=ENVVAR (--config-env=NAME=ENVVAR), anywhere before
// "--" (a subcommand's -c takes a value that is no configuration, and is
// read as one all the same) and the next word prog tells is a program.
func gitConfigWords(n int, word func(int) (string, bool), p int, prog func(int) bool, found func(j, off int)) {
	if t, known := word(p); !known || programName(t) != "git" {
		return
	}
	for j := p + 1; j < n && !prog(j); j++ {
		switch a, _ := word(j); {
		case a == "--":
			return
		case a == "-c" || a == "--config-env":
			if j+1 < n {
				found(j+1, 0)
				j++
			}
		case strings.HasPrefix(a, "--config-env="):
			found(j, len("--config-env="))
		}
	}
}

// gitConfigInput: input v is in the value of git's NAME=VALUE kv (its
// name n bytes long), or is a part of its name a dot or the "=" ends at
// both sides (core.sshCommand, sshCommand): it chooses the value or the
// variable. Inside a part of the name (page in core.pager) it chooses
// neither.
func gitConfigInput(kv string, n int, v string) bool {
	f := &finder{text: kv}
	for from := 0; from <= len(kv); {
		i, ok := f.index(v, from)
		if !ok {
			return true // its work spent: fail closed
		}
		if i < 0 {
			return false
		}
		e := i + len(v)
		if e > n || (i == 0 || kv[i-1] == '.') && (e == n || kv[e] == '.') {
			return true
		}
		from = i + 1
	}
	return false
}

// dangerousGitConfig: git's configuration variable name (section.key or
// section.subsection.key, in any case) makes git run a command or a
// program, load a file or trust a transport, as GIT_CONFIG_* variables do
// (core.sshCommand, core.pager, alias.*, filter.*.smudge, …).
func dangerousGitConfig(name string) bool {
	name = strings.ToLower(name)
	section, _, _ := strings.Cut(name, ".")
	key := name[strings.LastIndexByte(name, '.')+1:]
	switch section {
	case "alias", "filter", "include", "includeif", "pager", "browser", "difftool", "mergetool", "man", "sendemail", "gpg":
		return true
	}
	switch key {
	case "sshcommand", "pager", "editor", "fsmonitor", "hookspath", "gitproxy", "askpass", "external", "textconv",
		"command", "cmd", "driver", "helper", "program", "uploadpack", "receivepack", "proxy", "allow", "path",
		"packobjectshook", "insteadof", "pushinsteadof", "variant", "worktree", "attributesfile", "excludesfile",
		"templatedir", "exec", "tool", "clean", "smudge", "process", "sslcainfo", "sslverify", "sslcapath":
		return true
	}
	return false
}

// setsEnv: input v is in the value kv (NAME=VALUE) gives a variable that
// makes a program run or load what it names.
func setsEnv(kv, v string) string {
	name, _, _ := strings.Cut(kv, "=")
	if dangerousEnvName(name) {
		if v != "" && len(v) <= len(kv) && indexFold(kv, v) >= 0 {
			return "sets the environment variable " + name
		}
	}
	return ""
}

// inScript: argument i is in a script (not a wrapper's command line,
// which is checked as an argument too).
func (ck *shellCheck) inScript(i int) bool {
	if ck.inScr == nil {
		// Once, in linear time: a command may have many scripts.
		ck.inScr = make([]bool, len(ck.args))
		open := make([]int, len(ck.args)+1)
		for _, s := range ck.scripts {
			if !s.wrapped && s.arg <= s.last && s.last < len(ck.args) {
				open[s.arg]++
				open[s.last+1]--
			}
		}
		n := 0
		for j := range ck.inScr {
			n += open[j]
			ck.inScr[j] = n > 0
		}
	}
	return ck.inScr[i]
}

// program: the input is the program, the end of its path (the file it
// names), or a path into it.
func (ck *shellCheck) program(name, v string) string {
	if name == "" || len(v) > len(name) {
		return ""
	}
	f := finder{text: name}
	i, _ := f.index(v, 0)
	if i < 0 {
		return ""
	}
	base := strings.LastIndexAny(name, `/\`) + 1
	if i+len(v) == len(name) && i <= base || strings.ContainsAny(v, `/\`) {
		return "chooses the program"
	}
	return ""
}

// allowed: program, as the application wrote it, is in AllowPrograms.
func (c Commands) allowed(program string) bool {
	for _, p := range c.AllowPrograms {
		if p == program {
			return true
		}
	}
	return false
}

// isOption: an argument that starts with a dash is an option to most
// programs, unless it is a negative number.
func isOption(v string) bool {
	if len(v) < 2 || v[0] != '-' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && c != '.' {
			return true
		}
	}
	return false
}

// check judges every occurrence of v in the script: only the literal text
// of one word, not starting an option and not the program, is data; and
// then v in the scripts nested in it (nest.go).
func (s *script) check(v string, c Commands) (string, bool) {
	if s.opaque {
		return s.checkOpaque(v)
	}
	s.lex()
	if s.over {
		return "", false
	}
	if why, ok := s.occurrences(v, c); !ok || why != "" {
		return why, ok
	}
	return s.checkKids(v, c)
}

// lex reads the script, once: a POSIX script's readings and the scripts
// nested in it too.
func (s *script) lex() {
	if s.sc != nil {
		return
	}
	switch s.family {
	case cmdShell:
		s.sc = lexCmd(s.text)
	case powerShell:
		s.sc = lexPowerShell(s.text)
	default:
		s.sc = lexPOSIX(s.text)
		s.alts = s.readings()
	}
	s.sc.family = s.family
	s.findKids() // cmd /c "bash -c '…'", wsl bash -c …, iex "…"

}

// occurrences judges each occurrence of v in the script's text.
func (s *script) occurrences(v string, c Commands) (string, bool) {
	for from := 0; ; {
		if from == 0 && !s.f.mayContain(v) {
			return "", true
		}
		i, ok := s.f.index(v, from)
		if !ok {
			return "", false
		}
		if i < 0 {
			return "", true
		}
		s.lex()
		if why := s.sc.judge(i, i+len(v), v, c); why != "" {
			return why, true
		}
		for _, sc := range s.alts {
			if why := sc.judge(i, i+len(v), v, c); why != "" {
				return why, true
			}
		}
		from = i + 1
	}
}

// readings are the other ways POSIX shells read s's script, where they
// differ from lexPOSIX's: each is judged as well, and an input that is
// syntax in any of them is blocked. A script with << is also read with
// here-documents, whose bodies are text with expansions, where a quote or
// a # is no syntax (`cat <<EOF` then `it's $(id)`); one with $' as bash,
// zsh and ksh read $'…', where \' does not end it (`echo $'it\'s' x;id`);
// fish's, with \' as fish reads '…'.
func (s *script) readings() []*shScript {
	var alts []*shScript
	here := strings.Contains(s.text, "<<")
	if here {
		alts = append(alts, lexPOSIXAs(s.text, shOpts{hereDocs: true}))
	}
	if strings.Contains(s.text, "$'") {
		alts = append(alts, lexPOSIXAs(s.text, shOpts{hereDocs: here, ansiC: true}))
	}
	if s.fish && strings.Contains(s.text, `\`) {
		alts = append(alts, lexPOSIXAs(s.text, shOpts{fishQuotes: true}))
	}
	for _, sc := range alts {
		sc.family = s.family
	}
	return alts
}

func (sc *shScript) judge(s, e int, v string, c Commands) string {
	lit, comment := true, true
	for i := s; i < e; i++ {
		switch sc.cls[i] {
		case shLit:
			comment = false
		case shComment:
			lit = false
		default:
			lit, comment = false, false
		}
	}
	if comment {
		return ""
	}
	if sc.family == posixShell && sc.fed(s, e) {
		return "reaches a script a shell reads from its input"
	}
	if !lit {
		return "adds shell syntax to the script"
	}
	w := sc.words[sc.word[s]]
	if name, ok := sc.assignment(sc.word[s]); ok && dangerousEnvName(name) {
		return "sets the environment variable " + name
	}
	if w.conf != 0 {
		if why := sc.confInput(sc.word[s], s, v); why != "" {
			return why
		}
	}
	if w.setenv {
		name, ok := sc.setenvName(sc.word[s])
		if !ok {
			return "sets an environment variable"
		}
		if dangerousEnvName(name) {
			return "sets the environment variable " + name
		}
	}
	if w.interp >= 0 {
		// An interpreter's code (python3 -c 'print("…")'): any input in
		// it, or reaching into it from the option it is attached to
		// (-c'…').
		if off := w.interpOff; sc.litBefore(sc.word[s], s)+len(v) > max(off, 0) {
			name, _ := sc.value(w.interp)
			return codeWhy(programName(name), v)
		}
	}
	if w.code && (!w.nested || sc.litBefore(sc.word[s], s) < w.codeOff) {
		// A command line not read as a nested script, or the input in
		// the option before it (--split-string=…).
		return "reaches a command line in the script"
	}
	if w.cmd && !sc.shellAssignment(sc.word[s], s) && (s == w.firstLit || e-1 == w.lastLit || strings.ContainsAny(v, `/\`)) {
		if !c.allowed(sc.text[w.firstLit : w.lastLit+1]) {
			return "chooses the script's program"
		}
	}
	if !w.operand && s == w.firstLit && (isOption(v) || (v[0] == '/' && sc.family == cmdShell)) {
		return "becomes an option in the script"
	}
	return ""
}

// setenvName is the variable a wrapper's NAME=VALUE word k sets (env A=1,
// systemd-run -E A=1); not ok when it is not known, the word's readings
// differing on where it starts.
func (sc *shScript) setenvName(k int32) (string, bool) {
	w := sc.words[k]
	t, _ := sc.value(int(k))
	if w.envOff < 0 || w.envOff > len(t) {
		return "", false
	}
	name, _, _ := strings.Cut(t[w.envOff:], "=")
	return name, true
}

// protocolWildcard reports whether in is the "*" of a request header
// whose value HTTP defines, where it is a wildcard of the protocol
// (If-Match: *, If-None-Match: *, and Accept-Charset, -Encoding and
// -Language: *, RFC 9110), not data an application passes on:
// counted as one-byte input, it would block every script with a * of its
// own whenever a client sent a conditional request.
func protocolWildcard(in taint.Input) bool {
	if in.Source != taint.Header || in.Value != "*" {
		return false
	}
	switch http.CanonicalHeaderKey(in.Name) {
	case "If-Match", "If-None-Match", "Accept-Charset", "Accept-Encoding", "Accept-Language":
		return true
	}
	return false
}
