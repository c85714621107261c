package sink

import "strings"

// Interpreters' code arguments. python3 -c CODE, perl -e CODE, node -e
// CODE, awk 'PROGRAM' … run their code argument as a program of their
// language, which the check does not lex: an input anywhere in it may be
// code (python3 -c "print('<input>')" with the input
// ');__import__('os').system('id');(' runs id), and is blocked. Their
// other arguments (python3 -c CODE ARG, awk -v n=VALUE 'PROGRAM' FILE)
// are data.

// interpreter is how one reads its options (up to its first operand,
// the script file, or "--"): which hold code, which take a value.
type interpreter struct {
	code  string // short options whose value is code: the rest of the word, or the next word (python -c, perl -e)
	value string // short options that take a value: the rest of the word, or the next word
	rest  string // short options whose value, if any, is the rest of the word (perl -i.bak, -l0)
	// module: short options whose value, the rest of the word, is code
	// too, though not the program (perl -MMOD is "use MOD;": -M'strict;
	// system("id")' runs id).
	module string
	// digits: short options whose value, if any, is the digits after
	// them (perl -l0, -0777: -lne is -l -n -e); colon: those whose value
	// is the rest of the word if it starts with ":" (perl -d:Trace; -de
	// is -d -e).
	digits, colon string
	file          string // short options whose value is the program's file: no operand is code (awk -f)
	stop          string // short options after whose value the rest are the program's arguments (python -m MODULE)
	// long options (without "--"), and, for an interpreter that takes no
	// clusters (node), whole words ("-pe"): 'c' (its value is code), 'v'
	// (a value: --opt=v or --opt v), 'f' (the program's file), 's' (the
	// rest are the program's arguments: R --args), 'x' (it prints and
	// exits: node -v); others take no value, or an attached one
	// (--opt=v).
	long map[string]byte
	// words: the options are whole words, read in long (node -pe is not
	// -p -e, and node -e1 is no option).
	words bool
	// abbrev: long options may be abbreviated (getopt_long: gawk --so).
	abbrev bool
	// longW: short options whose value, the rest of the word or the next
	// word, is a long option without its "--" (getopt's "W;": gawk -W
	// source=CODE, -Wsource=CODE and -W source CODE are --source=CODE).
	longW string
	ends  bool // the code option ends the options: the rest are the code's arguments (python -c)
	// stdin: with no code and no script file, it reads its program from
	// its input (python3, perl, node, php, lua, R, osascript); exits: the
	// short options after which it prints and exits (python -V; long
	// --help and --version for all), reading none.
	stdin bool
	exits string
	first bool   // the first operand is the code, without a code or file option (awk 'PROGRAM')
	sub   string // the subcommand before the code (deno eval CODE)
}

var awkOptions = &interpreter{
	// gawk's -e/--source, -f/--file, -E/--exec, -i, -l; busybox awk's -e;
	// mawk's -W. -v NAME=VALUE is data.
	code: "e", file: "fE", value: "Fvil", longW: "W", rest: "dDLop",
	long: map[string]byte{
		"source": 'c', "file": 'f', "exec": 'f', "assign": 'v', "field-separator": 'v', "include": 'v', "load": 'v',
		"lint": 'o', "dump-variables": 'o', "debug": 'o', "pretty-print": 'o', "profile": 'o',
		"bignum": 'o', "characters-as-bytes": 'o', "copyright": 'o', "gen-pot": 'o', "help": 'o', "lint-old": 'o',
		"no-optimize": 'o', "non-decimal-data": 'o', "optimize": 'o', "posix": 'o', "re-interval": 'o', "sandbox": 'o',
		"traditional": 'o', "trace": 'o', "use-lc-numeric": 'o', "version": 'o', "csv": 'o',
	},
	abbrev: true, first: true,
}

var pythonOptions = &interpreter{code: "c", value: "WX", stop: "m", exits: "hV", long: map[string]byte{"check-hash-based-pycs": 'v'}, ends: true, stdin: true}

var nodeOptions = &interpreter{
	long: map[string]byte{
		"-e": 'c', "--eval": 'c', "-p": 'c', "--print": 'c', "-pe": 'c',
		"-r": 'v', "--require": 'v', "--import": 'v', "--loader": 'v', "--experimental-loader": 'v', "-C": 'v',
		"--conditions": 'v', "--input-type": 'v', "--title": 'v', "--env-file": 'v', "--inspect-port": 'v',
		"--redirect-warnings": 'v', "--icu-data-dir": 'v', "--openssl-config": 'v', "--disable-warning": 'v',
		"--watch-path": 'v', "--stack-trace-limit": 'v', "--unhandled-rejections": 'v',
		"--max-http-header-size": 'v', "--tls-cipher-list": 'v', "--dns-result-order": 'v', "--report-dir": 'v',
		"--report-directory": 'v', "--report-filename": 'v', "--report-signal": 'v', "--diagnostic-dir": 'v',
		"--cpu-prof-dir": 'v', "--cpu-prof-name": 'v', "--cpu-prof-interval": 'v', "--heap-prof-dir": 'v',
		"--heap-prof-name": 'v', "--heap-prof-interval": 'v', "--heapsnapshot-signal": 'v',
		"--heapsnapshot-near-heap-limit": 'v', "--secure-heap": 'v', "--secure-heap-min": 'v', "--test-reporter": 'v',
		"--test-reporter-destination": 'v', "--test-name-pattern": 'v', "--test-concurrency": 'v', "--test-timeout": 'v',
		"--trace-event-categories": 'v', "--trace-event-file-pattern": 'v', "--tls-keylog": 'v', "--use-largepages": 'v',
		"--experimental-policy": 'v', "--policy-integrity": 'v', "--experimental-sea-config": 'v',
		"--max-old-space-size": 'v', "--max-semi-space-size": 'v', "--stack-size": 'v',
		"-v": 'x', "-h": 'x',
	},
	words: true, stdin: true,
}

// interpreters are read by the name of the program, lower-case, without
// a version (python3.12, perl5.36, lua5.4).
var interpreters = map[string]*interpreter{
	// CPython's and PyPy's -c ends the options; -m MODULE too.
	"python":  pythonOptions,
	"pythonw": pythonOptions,
	"pypy":    pythonOptions,
	// perl -e and -E, any number, in clusters (-lne); -I DIR or -IDIR;
	// -Mstrict and -mMOD (code: "use strict;"), -i.bak, -l0, -F: …, -x,
	// -0777, -C, -d:Mod, -D attached.
	"perl": {code: "eE", value: "I", rest: "CDFix", module: "mM", digits: "0l", colon: "d", exits: "hvV", stdin: true},
	// ruby -e, any number, in clusters (-ne); -r LIB, -I DIR, -C DIR, -E
	// ENC attached or not.
	"ruby": {code: "e", value: "CEIr", rest: "FiKx", digits: "0TW", colon: "W", exits: "hv", stdin: true, long: map[string]byte{
		"encoding": 'v', "external-encoding": 'v', "internal-encoding": 'v', "enable": 'v', "disable": 'v', "dump": 'v',
	}},
	"node":   nodeOptions,
	"nodejs": nodeOptions,
	"bun": {long: map[string]byte{
		"-e": 'c', "--eval": 'c', "-p": 'c', "--print": 'c',
		"-r": 'v', "--preload": 'v', "--require": 'v', "--import": 'v', "--cwd": 'v', "--env-file": 'v', "-c": 'v', "--config": 'v',
	}, words: true},
	// deno eval [OPTIONS] CODE.
	"deno": {long: map[string]byte{
		"--ext": 'v', "--import-map": 'v', "--config": 'v', "-c": 'v', "--cert": 'v', "--seed": 'v', "--location": 'v',
		"--env-file": 'v', "--v8-flags": 'v',
	}, words: true, first: true, sub: "eval"},
	// php -r CODE, and -B, -R, -E (the code run before, for each line,
	// after); -f FILE and -F FILE name the file.
	"php": {code: "rBRE", file: "fF", value: "cdztS", exits: "hvimls", stdin: true, long: map[string]byte{
		"run": 'c', "process-begin": 'c', "process-code": 'c', "process-end": 'c', "process-file": 'f', "file": 'f',
		"php-ini": 'v', "define": 'v', "docroot": 'v', "server": 'v', "zend-extension": 'v',
		"rf": 'v', "rfunction": 'v', "rc": 'v', "rclass": 'v', "re": 'v', "rextension": 'v', "rz": 'v', "rzendextension": 'v',
		"ri": 'v', "rextinfo": 'v',
	}},
	// lua -e STAT (-eSTAT), -l MOD; LuaJIT's -j CMD, -O…, and -b, whose
	// arguments are its own.
	"lua":    {code: "e", value: "l", exits: "v", stdin: true},
	"luajit": {code: "e", value: "lj", rest: "O", stop: "b", exits: "v", stdin: true},
	// Rscript -e EXPR and R -e EXPR; R -f FILE; R --args ends them.
	"rscript": {long: map[string]byte{"-e": 'c', "--args": 's'}, words: true},
	"r":       {long: map[string]byte{"-e": 'c', "-f": 'f', "--file": 'f', "-d": 'v', "-g": 'v', "--args": 's', "-h": 'x'}, words: true, stdin: true},
	// osascript -e STATEMENT, any number; -l LANGUAGE, -s FLAGS.
	"osascript": {code: "e", value: "ls", stdin: true},
	// awk's program, the first operand (busybox awk: its applet, a
	// program of busybox).
	"awk": awkOptions, "gawk": awkOptions, "mawk": awkOptions, "nawk": awkOptions, "original-awk": awkOptions,
}

// interpreterName is the key of interpreters a program's name (lower
// case) has, without a version after it (python3.12, perl5.36, lua5.4,
// pypy3); or "".
func interpreterName(name string) string {
	if interpreters[name] != nil {
		return name
	}
	if stem := strings.TrimRight(name, "0123456789.-_"); strings.ContainsAny(name[len(stem):], "0123456789") && interpreters[stem] != nil {
		return stem
	}
	return ""
}

// interpreterCode calls found with each word, of n as word gives them,
// that holds code the interpreter at word i (if it is one) runs, and the
// byte of its value where the code starts, up to the next word prog
// tells is a program (find -exec python3 … -exec …). A word whose value
// is not known is read as an operand (the script file, or awk's program:
// its text is not the input). read marks the positions read as an
// option: a scan that reaches one an earlier scan of the same words read
// from stops there, its finds made (a command of many interpreter words
// is read in linear time). stdin: the interpreter reads its program from
// its input (python3 with no -c and no script file, or "-"), as a shell
// with no script does (stdin.go), as far as the words tell.
func interpreterCode(n int, word func(int) (string, bool), i int, read []bool, prog func(int) bool, found func(j, off int)) (stdin bool) {
	t, known := word(i)
	if !known {
		return false
	}
	in := interpreters[interpreterName(programName(t))]
	if in == nil {
		return false
	}
	j := i + 1
	if in.sub != "" {
		// Its options before the subcommand take no value.
		for ; j < n && !prog(j); j++ {
			if a, known := word(j); !known || len(a) < 2 || a[0] != '-' {
				break
			}
		}
		if j >= n {
			return false
		}
		if a, known := word(j); !known || a != in.sub {
			return false
		}
		j++
	}
	code, file := false, false
	none := func() bool { return in.stdin && !code && !file }
	kindOf := func(name string) byte {
		kind := in.long[name]
		if kind == 0 && in.abbrev {
			kind = (&wrapper{long: in.long}).longOption(name)
		}
		return kind
	}
	// long reads the long option of word j of this kind, whose value,
	// with eq, starts at byte off of the word; else it is the next word,
	// if the option takes one. stop: its options end.
	long := func(kind byte, eq bool, off int) (stop bool) {
		switch kind {
		case 'c':
			code = true
			if eq {
				found(j, off)
			} else if j+1 < n {
				found(j+1, 0)
				j++
			}
			return in.ends
		case 'f', 'v':
			file = file || kind == 'f'
			if !eq {
				j++
			}
		case 's', 'x':
			return true
		}
		return false
	}
	for ; j < n && !prog(j) && !read[j]; j++ {
		read[j] = true
		a, known := word(j)
		switch {
		case !known || a == "-" || len(a) < 2 || a[0] != '-':
			if known && in.first && !code && !file {
				found(j, 0) // awk 'PROGRAM'
			}
			return known && a == "-" && none()
		case a == "--":
			if in.first && !code && !file && j+1 < n {
				found(j+1, 0)
			}
			return none() && (j+1 >= n || prog(j+1))
		case a == "--help" || a == "--version":
			return false
		case in.words || strings.HasPrefix(a, "--"):
			name, _, eq := strings.Cut(a, "=")
			off := len(name) + 1
			if !in.words {
				name = name[2:]
			}
			kind := kindOf(name)
			if long(kind, eq, off) {
				return false
			}
			if kind == 0 {
				if in.words && !in.first && !eq && strings.HasPrefix(a, "--") && j+1 < n && !prog(j+1) {
					// An option not known (node's V8 flags take a value
					// in the next word: --max-semi-space-size 64) may
					// take the next word, or that word is the script:
					// the options after it are read as the
					// interpreter's, and it takes no program from its
					// input.
					if v, known := word(j + 1); known && (len(v) < 2 || v[0] != '-') {
						file = true
						j++
					}
				}
			}
		default:
		cluster:
			for k := 1; k < len(a); k++ {
				switch c := a[k]; {
				case strings.IndexByte(in.code, c) >= 0:
					code = true
					if k+1 < len(a) {
						found(j, k+1)
					} else if j+1 < n {
						found(j+1, 0)
						j++
					}
					if in.ends {
						return false
					}
					break cluster
				case strings.IndexByte(in.stop, c) >= 0 || strings.IndexByte(in.exits, c) >= 0:
					return false
				case strings.IndexByte(in.longW, c) >= 0:
					w, off := a, k+1
					if off == len(a) {
						if j+1 >= n || prog(j+1) {
							break cluster
						}
						j++
						if w, known = word(j); !known {
							break cluster
						}
						off = 0
					}
					name, _, eq := strings.Cut(w[off:], "=")
					if long(kindOf(name), eq, off+len(name)+1) {
						return false
					}
					break cluster
				case strings.IndexByte(in.file, c) >= 0 || strings.IndexByte(in.value, c) >= 0:
					file = file || strings.IndexByte(in.file, c) >= 0
					if k+1 == len(a) {
						j++
					}
					break cluster
				case strings.IndexByte(in.module, c) >= 0:
					if k+1 < len(a) {
						found(j, k+1)
					}
					break cluster
				case strings.IndexByte(in.rest, c) >= 0:
					break cluster
				case strings.IndexByte(in.colon, c) >= 0 && k+1 < len(a) && a[k+1] == ':':
					break cluster
				case strings.IndexByte(in.digits, c) >= 0:
					for k+1 < len(a) && isDigit(a[k+1]) {
						k++
					}
				}
			}
		}
	}
	// The end of its words: no script file.
	return none()
}

// codeWhy is the reason an input in the code of the interpreter name is
// blocked, naming it (unless its name holds the input: a reason never
// tells the input).
func codeWhy(name, v string) string {
	if strings.Contains(name, v) {
		return "reaches an interpreter's code"
	}
	return "reaches the code " + name + " runs"
}
