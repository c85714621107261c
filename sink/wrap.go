package sink

import "strings"

// The wrappers: programs that run a program named in their arguments
// (env, sudo, timeout …). The program finder reads a wrapper's arguments
// as it does — its options, those that take a value, the operands before
// the program — to find the program it runs, which is checked as the
// command's own program is; wrappers nest (sudo env timeout 5 id). Where
// it cannot tell (an option it does not know, a script's word whose value
// is not known), it takes every reading, and every word that may be the
// program is one.

// wrapper is how one wrapper reads its arguments. All stop reading
// options at the first operand (getopt's "+") and after "--".
type wrapper struct {
	value    string // short options that take a value: -u NAME, -uNAME
	optional string // short options whose value is optional, attached only: xargs -i[R]
	either   string // short options read both ways: sudo -h[HOST] (-h HOST, or -h and an operand)
	flags    string // short options without a value
	script   string // short options whose value is a command line: env -S, flock -c
	setenv   string // short options whose value is NAME=VALUE for the program's environment: systemd-run -E
	property string // short options whose value is a unit's NAME=VALUE, which may run a command: systemd-run -p
	// long options, each 'f' (no value), 'v' (a value: --opt=v or --opt
	// v), '2' (two values, in the next words: bwrap --bind SRC DEST), 'o'
	// (an optional value: --opt=v only), 's' (a command line),
	// 'e' (a value that is NAME=VALUE for the program's environment:
	// systemd-run --setenv), 'p' (a value that is a unit's property
	// NAME=VALUE: systemd-run --property) or 'l' (no value, and the
	// operands are not run: sudo --list, --edit);
	// an unambiguous abbreviation is the option, as getopt_long reads it.
	long     map[string]byte
	attached bool   // a long option's value is only ever attached (--opt=v): one not in long takes none (firejail, valgrind)
	operands int    // operands before the program: timeout's duration, flock's file, taskset's mask, chroot's root
	assign   bool   // NAME=VALUE operands before the program (env, sudo)
	number   bool   // -N and -+N are an option (nice -5)
	priority bool   // chrt: a leading operand that is a number is the priority
	dash     bool   // a lone "-" is an option (env -)
	noRun    string // short options after which the operand is not run: command -v, sudo -e (files to edit), sudo -l
	command  bool   // flock: -c/--command and a command line after the operands, instead of a program
	// runuser: it runs a program only when given this short option (or
	// the long option it abbreviates), the user: without, its operands are
	// the user and the arguments of the user's shell (nest.go: suScript).
	needs     byte
	needsLong string
	// find: its operands are paths and an expression, and the word after
	// each -exec, -execdir, -ok and -okdir is a program.
	exec bool
}

var helpVersion = map[string]byte{"help": 'f', "version": 'f'}

func longs(m map[string]byte) map[string]byte {
	for k, v := range helpVersion {
		m[k] = v
	}
	return m
}

var wrapperSpecs = map[string]*wrapper{
	// GNU env ("+C:iS:u:v0"), BSD env's -P -L -U too.
	"env": {value: "uCPLU", flags: "i0v", script: "S", assign: true, dash: true, long: longs(map[string]byte{
		"ignore-environment": 'f', "null": 'f', "unset": 'v', "chdir": 'v', "split-string": 's', "debug": 'f',
		"block-signal": 'o', "default-signal": 'o', "ignore-signal": 'o', "list-signal-handling": 'f',
	})},
	"nice":  {value: "n", number: true, long: longs(map[string]byte{"adjustment": 'v'})},
	"nohup": {long: longs(map[string]byte{})},
	"timeout": {value: "ks", flags: "fpv", operands: 1, long: longs(map[string]byte{
		"kill-after": 'v', "signal": 'v', "foreground": 'f', "preserve-status": 'f', "verbose": 'f',
	})},
	"sudo": {value: "aCcDgpRrtTUu", either: "h", flags: "ABbEHiKkNnPSsVv", noRun: "el", assign: true, long: longs(map[string]byte{
		"user": 'v', "group": 'v', "close-from": 'v', "chdir": 'v', "host": 'v', "prompt": 'v', "role": 'v', "type": 'v',
		"command-timeout": 'v', "other-user": 'v', "chroot": 'v', "auth-type": 'v', "login-class": 'v',
		"askpass": 'f', "background": 'f', "bell": 'f', "preserve-env": 'o', "edit": 'l', "set-home": 'f', "login": 'f',
		"remove-timestamp": 'f', "reset-timestamp": 'f', "list": 'l', "non-interactive": 'f', "preserve-groups": 'f',
		"stdin": 'f', "shell": 'f', "validate": 'f',
	})},
	"doas":   {value: "Cu", flags: "Lns"},
	"stdbuf": {value: "ioe", long: longs(map[string]byte{"input": 'v', "output": 'v', "error": 'v'})},
	"setsid": {flags: "cfwhV", long: longs(map[string]byte{"ctty": 'f', "fork": 'f', "wait": 'f'})},
	"ionice": {value: "cnpPu", flags: "thV", long: longs(map[string]byte{
		"class": 'v', "classdata": 'v', "pid": 'v', "pgid": 'v', "uid": 'v', "ignore": 'f',
	})},
	"chrt": {value: "TPD", flags: "abdefimopRrvhV", operands: 1, priority: true, long: longs(map[string]byte{
		"sched-runtime": 'v', "sched-period": 'v', "sched-deadline": 'v', "all-tasks": 'f', "batch": 'f', "deadline": 'f',
		"ext": 'f', "fifo": 'f', "idle": 'f', "max": 'f', "other": 'f', "pid": 'f', "rr": 'f', "reset-on-fork": 'f', "verbose": 'f',
	})},
	"taskset": {flags: "acphV", operands: 1, long: longs(map[string]byte{"all-tasks": 'f', "cpu-list": 'f', "pid": 'f'})},
	"flock": {value: "wE", flags: "sexnouFhV", script: "c", operands: 1, command: true, long: longs(map[string]byte{
		"shared": 'f', "exclusive": 'f', "unlock": 'f', "nonblock": 'f', "nb": 'f', "close": 'f', "no-fork": 'f',
		"verbose": 'f', "timeout": 'v', "wait": 'v', "conflict-exit-code": 'v', "command": 's',
	})},
	// GNU time; the shell keyword time takes -p alone.
	"time": {value: "fo", flags: "apqvV", long: longs(map[string]byte{
		"format": 'v', "output": 'v', "append": 'f', "portability": 'f', "quiet": 'f', "verbose": 'f',
	})},
	"command": {flags: "p", noRun: "vV"},
	"exec":    {value: "a", flags: "cl"},
	"xargs": {value: "aEILnPsd", optional: "eil", flags: "0oprtx", long: longs(map[string]byte{
		"arg-file": 'v', "delimiter": 'v', "eof": 'o', "replace": 'o', "max-lines": 'o', "max-args": 'v', "max-procs": 'v',
		"max-chars": 'v', "process-slot-var": 'v', "null": 'f', "open-tty": 'f', "interactive": 'f', "no-run-if-empty": 'f',
		"verbose": 'f', "exit": 'f', "show-limits": 'f',
	})},
	"chroot": {operands: 1, long: longs(map[string]byte{"userspec": 'v', "groups": 'v', "skip-chdir": 'f'})},
	"strace": {value: "abeEIoOpPsSuUX", flags: "AcCdDfFhiknNqrtTvVwxyYzZ"},
	// procps watch ("+bCced::fghq:n:prs:tvwx"): its operands, joined with
	// blanks, are a script for sh -c (nest.go, watchScript), or with
	// -x the program and its arguments: it runs a program only with -x.
	"watch": {value: "nqs", optional: "d", flags: "bCcefghprtvwx", needs: 'x', needsLong: "exec", long: longs(map[string]byte{
		"color": 'f', "no-color": 'f', "differences": 'o', "interval": 'v', "beep": 'f', "errexit": 'f', "follow": 'f',
		"chgexit": 'f', "equexit": 'v', "exec": 'f', "precise": 'f', "no-rerun": 'f', "shotsdir": 'v', "no-title": 'f', "no-wrap": 'f',
	})},
	// util-linux runuser ("c:fg:G:lmpPs:u:hVw:", options anywhere):
	// runuser -u USER [--] COMMAND runs COMMAND; runuser USER -c '…' is
	// su's (nest.go).
	"runuser": {value: "cgGsuw", flags: "flmpPhV", dash: true, needs: 'u', needsLong: "user", long: longs(map[string]byte{
		"user": 'v', "group": 'v', "supp-group": 'v', "login": 'f', "preserve-environment": 'f', "shell": 'v', "command": 'v',
		"session-command": 'v', "fast": 'f', "pty": 'f', "whitelist-environment": 'v',
	})},
	// util-linux nsenter ("+aht:m::u::i::n::p::C::U::T::S:G:r::w::W:FZ"):
	// a namespace's file is attached (-n/run/netns/x), or --net=FILE.
	"nsenter": {value: "tSGW", optional: "muinpCUTrw", flags: "aFZhV", long: longs(map[string]byte{
		"all": 'f', "target": 'v', "mount": 'o', "uts": 'o', "ipc": 'o', "net": 'o', "pid": 'o', "cgroup": 'o', "user": 'o',
		"time": 'o', "setuid": 'v', "setgid": 'v', "preserve-credentials": 'f', "root": 'o', "wd": 'o', "wdns": 'v',
		"no-fork": 'f', "follow-context": 'f', "user-parent": 'f', "keep-caps": 'f', "env": 'f', "join-cgroup": 'f',
	})},
	// util-linux unshare ("+fhVmuinpCTUrR:w:S:G:c"): the namespaces' files
	// only as --mount=FILE.
	"unshare": {value: "RwSG", flags: "fhVmuinpCTUrc", long: longs(map[string]byte{
		"fork": 'f', "mount": 'o', "uts": 'o', "ipc": 'o', "net": 'o', "pid": 'o', "cgroup": 'o', "user": 'o', "time": 'o',
		"mount-proc": 'o', "kill-child": 'o', "map-root-user": 'f', "map-current-user": 'f', "map-auto": 'f',
		"map-user": 'v', "map-group": 'v', "map-users": 'v', "map-groups": 'v', "propagation": 'v', "setgroups": 'v',
		"keep-caps": 'f', "root": 'v', "wd": 'v', "setuid": 'v', "setgid": 'v', "monotonic": 'v', "boottime": 'v', "load-interp": 'v',
	})},
	// numactl ("+ai:w:p:P:m:lC:c:N:n:sS:f:L:M:o:DdtTVvbHhu").
	"numactl": {value: "iwpPmCcNnSfLMo", flags: "alsDdtTVvbHhu", long: longs(map[string]byte{
		"all": 'f', "interleave": 'v', "weighted-interleave": 'v', "preferred": 'v', "preferred-many": 'v', "balancing": 'f',
		"localalloc": 'f', "physcpubind": 'v', "cpunodebind": 'v', "cpubind": 'v', "membind": 'v', "show": 'f', "hardware": 'f',
		"shm": 'v', "file": 'v', "shmid": 'v', "length": 'v', "offset": 'v', "mode": 'v', "strict": 'f', "dump": 'f',
		"dump-nodes": 'f', "huge": 'f', "touch": 'f', "verify": 'f',
	})},
	// pkexec [--user USER] [--keep-cwd] [--disable-internal-agent] PROGRAM.
	"pkexec": {value: "u", long: longs(map[string]byte{"user": 'v', "keep-cwd": 'f', "disable-internal-agent": 'f'})},
	// systemd-run ("+hrC:H:M:E:p:tPqGdSu:"); a long option it has that is
	// not here is read both ways.
	"systemd-run": {value: "CHMu", setenv: "E", property: "p", flags: "hrtPqGdS", long: longs(map[string]byte{
		"no-ask-password": 'f', "user": 'f', "system": 'f', "host": 'v', "machine": 'v', "scope": 'f', "unit": 'v',
		"property": 'p', "description": 'v', "slice": 'v', "slice-inherit": 'f', "no-block": 'f', "remain-after-exit": 'f',
		"wait": 'f', "send-sighup": 'f', "service-type": 'v', "uid": 'v', "gid": 'v', "nice": 'v', "working-directory": 'v',
		"same-dir": 'f', "setenv": 'e', "pty": 'f', "pipe": 'f', "quiet": 'f', "collect": 'f', "shell": 'f',
		"path-property": 'p', "socket-property": 'p', "timer-property": 'p', "on-active": 'v', "on-boot": 'v',
		"on-startup": 'v', "on-unit-active": 'v', "on-unit-inactive": 'v', "on-calendar": 'v', "on-timezone-change": 'f',
		"on-clock-change": 'f', "capsule": 'v', "expand-environment": 'v', "json": 'v', "job-mode": 'v', "ignore-failure": 'f',
		"background": 'v',
	})},
	"find": {exec: true},
	// GNU parallel: its operands up to ::: are a command line for the
	// shell (nest.go, parallelScript), whose program is the first.
	"parallel": {value: "aBCdEIjLnNPsSW", optional: "l", flags: "0kqrtuvXmpgH", long: longs(map[string]byte{
		"arg-file": 'v', "basefile": 'v', "colsep": 'v', "delimiter": 'v', "eof": 'o', "replace": 'o', "jobs": 'v',
		"max-lines": 'o', "max-args": 'v', "max-replace-args": 'v', "max-procs": 'v', "max-chars": 'v', "sshlogin": 'v',
		"sshloginfile": 'v', "workdir": 'v', "env": 'v', "halt": 'v', "joblog": 'v', "results": 'v', "timeout": 'v',
		"delay": 'v', "retries": 'v', "nice": 'v', "load": 'v', "memfree": 'v', "tagstring": 'v', "block": 'v',
		"null": 'f', "keep-order": 'f', "quote": 'f', "tag": 'f', "ungroup": 'f', "line-buffer": 'f', "group": 'f',
		"verbose": 'f', "dry-run": 'f', "bar": 'f', "eta": 'f', "progress": 'f', "xargs": 'f', "pipe": 'f', "shuf": 'f',
		"will-cite": 'f', "no-notice": 'f', "silent": 'f', "plus": 'f', "interactive": 'f', "onall": 'f', "nonall": 'f',
	})},
	// Windows's wsl: its operands are a command line for the Linux user's
	// shell (nest.go, wslScript), whose program is the first; with -e
	// (--exec) the program itself, run with no shell.
	"wsl": {value: "du", flags: "e", long: longs(map[string]byte{
		"cd": 'v', "distribution": 'v', "distribution-id": 'v', "user": 'v', "exec": 'f', "shell-type": 'v', "system": 'f',
	})},
	// Sandboxes, tracers and run-time wrappers, read as their getopt
	// strings (or manuals) give their options; an option not here is read
	// both ways.
	"unbuffer":  {flags: "p"},
	"catchsegv": {},
	"fakeroot":  {value: "lisb", flags: "uhv", long: longs(map[string]byte{"lib": 'v', "faked": 'v', "unknown-is-real": 'f'})},
	// firejail's options are --name or --name=value.
	"firejail": {attached: true, long: longs(map[string]byte{})},
	// bubblewrap reads its options by their whole names, some with two
	// values (--bind SRC DEST).
	"bwrap": {long: longs(map[string]byte{
		"bind": '2', "bind-try": '2', "dev-bind": '2', "dev-bind-try": '2', "ro-bind": '2', "ro-bind-try": '2',
		"bind-fd": '2', "ro-bind-fd": '2', "symlink": '2', "setenv": '2', "chmod": '2', "file": '2', "bind-data": '2',
		"ro-bind-data": '2', "args": 'v', "argv0": 'v', "uid": 'v', "gid": 'v', "hostname": 'v', "chdir": 'v',
		"unsetenv": 'v', "lock-file": 'v', "sync-fd": 'v', "userns": 'v', "userns2": 'v', "pidns": 'v', "remount-ro": 'v',
		"exec-label": 'v', "file-label": 'v', "proc": 'v', "dev": 'v', "tmpfs": 'v', "mqueue": 'v', "dir": 'v',
		"overlay-src": 'v', "tmp-overlay": 'v', "ro-overlay": 'v', "seccomp": 'v', "add-seccomp-fd": 'v',
		"block-fd": 'v', "userns-block-fd": 'v', "info-fd": 'v', "json-status-fd": 'v', "cap-add": 'v', "cap-drop": 'v',
		"perms": 'v', "size": 'v', "unshare-all": 'f', "share-net": 'f', "unshare-user": 'f', "unshare-user-try": 'f',
		"unshare-ipc": 'f', "unshare-pid": 'f', "unshare-net": 'f', "unshare-uts": 'f', "unshare-cgroup": 'f',
		"unshare-cgroup-try": 'f', "die-with-parent": 'f', "as-pid-1": 'f', "new-session": 'f', "clearenv": 'f',
		"disable-userns": 'f', "assert-userns-disabled": 'f', "level-prefix": 'f',
	})},
	"proot": {value: "rbmqwkvRS", flags: "0iVhL", long: longs(map[string]byte{
		"rootfs": 'v', "bind": 'v', "mount": 'v', "qemu": 'v', "cwd": 'v', "pwd": 'v', "kernel-release": 'v', "verbose": 'v',
		"root-id": 'f', "link2symlink": 'f', "kill-on-exit": 'f',
	})},
	"setpriv": {flags: "dhV", long: longs(map[string]byte{
		"dump": 'f', "nnp": 'f', "no-new-privs": 'f', "ambient-caps": 'v', "inh-caps": 'v', "bounding-set": 'v',
		"ruid": 'v', "euid": 'v', "rgid": 'v', "egid": 'v', "reuid": 'v', "regid": 'v', "clear-groups": 'f',
		"keep-groups": 'f', "init-groups": 'f', "groups": 'v', "securebits": 'v', "pdeathsig": 'v', "selinux-label": 'v',
		"apparmor-profile": 'v', "landlock-access": 'v', "landlock-rule": 'v', "seccomp-filter": 'v', "reset-env": 'f',
	})},
	"dbus-run-session": {long: longs(map[string]byte{"config-file": 'v', "dbus-daemon": 'v'})},
	// xvfb-run ("ade:f:hln:p:s:w:").
	"xvfb-run": {value: "efnpsw", flags: "adhl", long: longs(map[string]byte{
		"auto-servernum": 'f', "auto-display": 'f', "error-file": 'v', "auth-file": 'v', "listen-tcp": 'f',
		"server-num": 'v', "xauth-protocol": 'v', "server-args": 'v', "wait": 'v',
	})},
	"chpst":  {value: "uUbe/CnlLmdopfcrt", flags: "vP012"},
	"cgexec": {value: "g", long: longs(map[string]byte{"sticky": 'f'})},
	"torsocks": {value: "upaP", flags: "idqh", long: longs(map[string]byte{
		"user": 'v', "pass": 'v', "address": 'v', "port": 'v', "isolate": 'f', "debug": 'f', "quiet": 'f', "shell": 'f',
	})},
	"proxychains":  {value: "f", flags: "q"},
	"proxychains4": {value: "f", flags: "q"},
	"tsocks":       {},
	"trickle":      {value: "wtlnduLP", flags: "hvVs"},
	"cpulimit": {value: "lpePcs", flags: "vzikrfqh", long: longs(map[string]byte{
		"limit": 'v', "pid": 'v', "exe": 'v', "path": 'v', "cpu": 'v', "signal": 'v', "lazy": 'f', "include-children": 'f',
		"kill": 'f', "restore": 'f', "foreground": 'f', "quiet": 'f', "verbose": 'f',
	})},
	"caffeinate": {value: "tw", flags: "dimsu"},
	"entr":       {flags: "acdnprsz"},
	"ltrace":     {value: "aADeFlnopsuwx", flags: "bcCfhiLrStTV"},
	// valgrind's options are --name=value.
	"valgrind": {flags: "qvhd", attached: true, long: longs(map[string]byte{})},
	// busybox and toybox: the first argument is the applet.
	"busybox": {},
	"toybox":  {},
}

// isWrapper: the program (a path, as programName reads it) runs another.
func isWrapper(p string) bool {
	return wrapperSpecs[programName(p)] != nil
}

// maxWrapSteps bounds the finder's work on one command; past it, every
// word left may be the program.
const maxWrapSteps = 4096

// progFinder finds the programs a command runs: its first word and, when
// that is a wrapper, the program it runs.
type progFinder struct {
	n int
	// word is a word's value, and whether it is known (a script's word
	// with an expansion is not).
	word func(j int) (string, bool)
	// prog is called for each word that may be a program, script for a
	// command line: word j from its byte off; split when it is env -S's,
	// which env splits into its own arguments (env -S '-i A=1 id'), not a
	// shell's script (flock -c).
	prog   func(j int)
	script func(j, off int, split bool)
	// assign: word j, from its byte off, is NAME=VALUE for the program's
	// environment: a wrapper's operand (env, sudo) or option's value
	// (systemd-run -E, --setenv=); may be nil.
	assign func(j, off int)
	// property: word j, from its byte off, is a unit's property NAME=VALUE
	// (systemd-run -p ExecStartPre=…); may be nil.
	property func(j, off int)
	// vanish: word j, whose value is not known, may expand to no word at
	// all (an unquoted $NICE that is empty): the word after it is then
	// in its place. May be nil.
	vanish func(j int) bool
	seen   map[[4]int]bool
	steps  int
	all    bool // out of steps: every word from from on was taken for a program
	from   int
}

// find runs the finder from the program at word 0.
func (p *progFinder) find() {
	p.program(0)
}

// program: word j may be the program; if it is a wrapper, the program it
// runs is found too.
func (p *progFinder) program(j int) {
	if j >= p.n || p.all {
		return
	}
	if !p.step(j) {
		return
	}
	p.prog(j)
	if p.vanish != nil && p.vanish(j) {
		p.program(j + 1) // $PRE id: id, when $PRE is empty
	}
	// A word not known whose known text names a wrapper ($BIN/timeout)
	// may be that wrapper: that reading is taken too.
	t, _ := p.word(j)
	name := programName(t)
	w := wrapperSpecs[name]
	if w == nil {
		return
	}
	if multiCall(t) {
		p.program(j + 1) // the applet
		return
	}
	if w.exec {
		p.execs(j)
		return
	}
	if !w.runs(p.n, p.word, j, func() bool { return p.step(j + 1) }) {
		return
	}
	p.args(w, j, j+1, w.operands, true)
}

// execs finds the programs of find's (word i) -exec, -execdir, -ok and
// -okdir: the word after each, or after a word whose value is not known,
// which may be one.
func (p *progFinder) execs(i int) {
	for j := i + 1; j+1 < p.n && !p.all; j++ {
		if !p.step(j) {
			return
		}
		switch t, known := p.word(j); {
		case !known, t == "-exec", t == "-execdir", t == "-ok", t == "-okdir":
			p.program(j + 1)
		}
	}
}

// step counts one step of the finder's, at word j; past maxWrapSteps it
// takes every word from j on for a program and is false. Each word is
// taken once: the readings left unwind through many steps past the
// limit, and taking every word again at each made the bound's cost
// maxWrapSteps times the command's length (a second for 300,000
// arguments).
func (p *progFinder) step(j int) bool {
	if p.steps++; p.steps <= maxWrapSteps {
		return true
	}
	if !p.all {
		p.all, p.from = true, p.n
	}
	for p.from > j {
		p.from--
		p.prog(p.from)
	}
	return false
}

// args reads wrapper w's (at word wj) arguments from word j, with ops
// operands before the program, and options while opts.
func (p *progFinder) args(w *wrapper, wj, j, ops int, opts bool) {
	key := [4]int{wj, j, ops, 0}
	if opts {
		key[3] = 1
	}
	if p.seen == nil {
		p.seen = map[[4]int]bool{}
	}
	if p.seen[key] || p.all {
		return
	}
	p.seen[key] = true
	for ; j < p.n; j++ {
		if !p.step(j) {
			return
		}
		t, known := p.word(j)
		if !known {
			// Any option, an operand or the program: every reading.
			if p.vanish != nil && p.vanish(j) {
				p.args(w, wj, j+1, ops, opts) // no word at all
			}
			if opts {
				p.args(w, wj, j+1, ops, true)
				p.args(w, wj, j+2, ops, true)
			}
			if ops > 0 {
				p.args(w, wj, j+1, ops-1, false)
				return
			}
			if w.assign {
				p.args(w, wj, j+1, 0, false)
			}
			p.program(j)
			return
		}
		if opts {
			if t == "--" {
				opts = false
				continue
			}
			if t == "-" && w.dash {
				continue
			}
			if name, _, _ := strings.Cut(strings.TrimPrefix(t, "--"), "="); len(t) > 2 && t[:2] == "--" && w.longOption(name) == '2' {
				j += 2 // bwrap --bind SRC DEST
				continue
			}
			if len(t) > 1 && t[0] == '-' {
				noNext, next, run := p.option(w, j, t)
				if !run {
					return
				}
				if next {
					if noNext {
						p.args(w, wj, j+1, ops, true)
					}
					j++ // its value
				}
				continue
			}
		}
		if ops > 0 {
			if w.priority && !digitsOnly(t) {
				// chrt's priority is optional for some policies: a word
				// that is no number is the program (or an error).
				p.program(j)
				return
			}
			ops--
			opts = false
			if ops == 0 && w.command && j+1 < p.n {
				// flock FILE -c COMMAND.
				if c, ok := p.word(j + 1); !ok || c == "-c" || c == "--command" {
					p.script(j+2, 0, false)
					if ok {
						return
					}
				}
			}
			continue
		}
		opts = false
		if w.assign && strings.IndexByte(t, '=') > 0 {
			if p.assign != nil {
				p.assign(j, 0)
			}
			continue
		}
		p.program(j)
		return
	}
}

// option reads wrapper w's option t (word j): noNext and next are the
// readings in which the next word is not, and is, its value; run is false
// when the option stops the wrapper running a program (command -v).
func (p *progFinder) option(w *wrapper, j int, t string) (noNext, next, run bool) {
	if strings.HasPrefix(t, "--") {
		name, _, eq := strings.Cut(t[2:], "=")
		kind := w.longOption(name)
		switch kind {
		case 's':
			if eq {
				p.script(j, len(name)+3, !w.command)
				return true, false, true
			}
			p.script(j+1, 0, !w.command)
			return false, true, true
		case 'e':
			if eq {
				p.setenv(j, len(name)+3)
				return true, false, true
			}
			p.setenv(j+1, 0)
			return false, true, true
		case 'p':
			if eq {
				p.setProperty(j, len(name)+3)
				return true, false, true
			}
			p.setProperty(j+1, 0)
			return false, true, true
		case 'v':
			return eq, !eq, true
		case 'f', 'o':
			return true, false, true
		case 'l':
			return false, false, false
		}
		return true, !eq && !w.attached, true // unknown: with a value or without
	}
	if w.number {
		if s := strings.TrimPrefix(t[1:], "+"); digitsOnly(s) {
			return true, false, true // nice -5
		}
	}
	for k := 1; k < len(t); k++ {
		c := t[k]
		rest := k+1 < len(t)
		switch {
		case strings.IndexByte(w.noRun, c) >= 0:
			return false, false, false
		case strings.IndexByte(w.flags, c) >= 0:
		case strings.IndexByte(w.optional, c) >= 0:
			return true, false, true
		case strings.IndexByte(w.script, c) >= 0:
			if rest {
				p.script(j, k+1, !w.command)
				return true, false, true
			}
			p.script(j+1, 0, !w.command)
			return false, true, true
		case strings.IndexByte(w.setenv, c) >= 0:
			if rest {
				p.setenv(j, k+1)
				return true, false, true
			}
			p.setenv(j+1, 0)
			return false, true, true
		case strings.IndexByte(w.property, c) >= 0:
			if rest {
				p.setProperty(j, k+1)
				return true, false, true
			}
			p.setProperty(j+1, 0)
			return false, true, true
		case strings.IndexByte(w.value, c) >= 0:
			return rest, !rest, true
		case strings.IndexByte(w.either, c) >= 0:
			return true, !rest, true
		default:
			// Unknown: a flag (read on), or an option whose value is the
			// rest of the word or the next word.
			if !rest {
				next = true
			}
		}
	}
	return true, next, true
}

// setenv: word j, from byte off, is an option's NAME=VALUE for the
// program's environment (systemd-run -E NAME=VALUE).
func (p *progFinder) setenv(j, off int) {
	if p.assign != nil && j < p.n {
		p.assign(j, off)
	}
}

// setProperty: word j, from byte off, is an option's unit property
// NAME=VALUE (systemd-run -p ExecStartPre=…).
func (p *progFinder) setProperty(j, off int) {
	if p.property != nil && j < p.n {
		p.property(j, off)
	}
}

// propertyInput: input v is in unit property kv (NAME=VALUE) that runs a
// command (ExecStart=, ExecStartPre=, ExecStopPost= …), loads the
// environment from a file (EnvironmentFile=), or sets a variable such as
// LD_PRELOAD (Environment=): in its value, or a whole part of its name.
func propertyInput(kv, v string) string {
	name, value, _ := strings.Cut(kv, "=")
	switch n := strings.ToLower(name); {
	case strings.HasPrefix(n, "exec") || n == "environmentfile":
		if gitConfigInput(kv, len(name), v) {
			return "sets the unit's property " + name
		}
	case n == "environment":
		for _, f := range strings.Fields(value) {
			if why := setsEnv(strings.Trim(f, `"'`), v); why != "" {
				return why
			}
		}
	}
	return ""
}

// runs: wrapper w (word i) runs a program: always, but runuser only with
// -u (or --user, or a word whose value is not known, which may be it),
// read among all its options before "--", as getopt permutes them. step
// is called for each word read, and false ends the reading: it does not.
func (w *wrapper) runs(n int, word func(int) (string, bool), i int, step func() bool) bool {
	if w.needs == 0 {
		return true
	}
	for j := i + 1; j < n; j++ {
		if !step() {
			return false
		}
		a, known := word(j)
		switch {
		case !known:
			return true
		case a == "--":
			return false
		case strings.HasPrefix(a, "--"):
			name, _, eq := strings.Cut(a[2:], "=")
			kind := w.longOption(name)
			if name != "" && kind != 0 && strings.HasPrefix(w.needsLong, name) {
				return true
			}
			if kind == 'v' && !eq {
				j++
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				if a[k] == w.needs {
					return true
				}
				if strings.IndexByte(w.value, a[k]) >= 0 {
					if k+1 == len(a) {
						j++
					}
					break
				}
			}
		}
	}
	return false
}

// longOption is the kind of w's long option name, or 0: an exact name, or
// the one option it abbreviates.
func (w *wrapper) longOption(name string) byte {
	if k, ok := w.long[name]; ok {
		return k
	}
	var kind byte
	n := 0
	for opt, k := range w.long {
		if name != "" && strings.HasPrefix(opt, name) {
			kind = k
			n++
		}
	}
	if n == 1 {
		return kind
	}
	return 0
}
