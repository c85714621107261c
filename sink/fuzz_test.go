package sink

import (
	"errors"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contractguard/contractguard/internal/taint"
)

// occursOnce: s is in text once, ignoring ASCII case, and nowhere else,
// nor is what strings.ToUpper or strings.ToLower make of it.
func occursOnce(text, s string) bool {
	f := newFinder(text)
	i, _ := f.index(s, 0)
	if i < 0 {
		return false
	}
	if j, _ := f.index(s, i+1); j >= 0 {
		return false
	}
	for _, w := range [2]string{strings.ToUpper(s), strings.ToLower(s)} {
		if len(w) == len(s) && equalFold(w, s) {
			continue
		}
		if j, _ := f.index(w, 0); j >= 0 {
			return false
		}
	}
	return true
}

// occursAny: s is in text, ignoring ASCII case, or what strings.ToUpper
// or strings.ToLower make of it is.
func occursAny(text, s string) bool {
	f := newFinder(text)
	for _, w := range [3]string{s, strings.ToUpper(s), strings.ToLower(s)} {
		if i, _ := f.index(w, 0); i >= 0 {
			return true
		}
	}
	return false
}

func checkLexer(t *testing.T, q string, d Dialect, alt bool) {
	lx := newLexer(q, d, alt)
	pos := 0
	for n := 0; ; n++ {
		var tk token
		ok := lx.next(&tk)
		if !ok {
			break
		}
		if tk.start != pos || tk.end <= tk.start || tk.in0 < tk.start || tk.in1 > tk.end || tk.in0 > tk.in1 {
			t.Fatalf("%v %q: token %+v after %d", d, q, tk, pos)
		}
		pos = tk.end
		if n > len(q) {
			t.Fatalf("%v %q: more tokens than bytes", d, q)
		}
	}
	if pos != len(q) {
		t.Fatalf("%v %q: tokens end at %d", d, q, pos)
	}
}

// FuzzSQL: the tokenizer covers every query, the check never panics, and
// an input the application quotes as a literal (and that is nowhere else in
// the query, in any case) is never blocked, nor is one that is nowhere in
// it, in any case.
func FuzzSQL(f *testing.F) {
	for _, c := range sqlAttacks {
		f.Add(uint8(0), c.tmpl, c.input)
	}
	for _, c := range sqlBenign {
		f.Add(uint8(1), c.tmpl, c.input)
	}
	f.Add(uint8(2), "SELECT $$ %s $tag$ x $tag$ /* /* */ */ E'\\'' `a` [b] #c\n-- d", "$tag$")
	f.Fuzz(func(t *testing.T, dd uint8, tmpl, input string) {
		if len(tmpl) > 4096 || len(input) > 1024 {
			return
		}
		d := dialects[int(dd)%len(dialects)]
		raw := strings.Replace(tmpl, "%s", input, 1)
		for _, alt := range []bool{false, true} {
			checkLexer(t, raw, d, alt)
		}
		r, _ := inputAt(t, taint.Query, input)
		err := CheckSQL(ctxOf(r), raw, d)
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Fatalf("not a block: %v", err)
		}
		// Blocked only for the input, or the input as runtimes trim it
		// (which the check looks for too: "$q\x00" trimmed is "$q").
		v := trimSpace(input)
		w := trimAnySpace(v)
		if len(v) >= taint.MinInputLen && err != nil && !occursAny(raw, v) && (len(w) < taint.MinInputLen || !occursAny(raw, w)) {
			t.Fatalf("%v %q blocked for %q, which is not in it", d, raw, input)
		}
		// Quoted by the application, in a neutral place: where the literal
		// holds the input as it is (quoting did not escape it away) and
		// nothing else in the query holds it (A' A quoted is 'A'' A', and
		// what holds A' A is its end and the AND after it), nor the input
		// as runtimes trim it, which the check looks for too (two quotes
		// and a control byte: the two quotes are all over its literal).
		lit := quote(d, input)
		q := "SELECT a FROM t WHERE b = " + lit + " AND c = 1"
		if len(v) >= taint.MinInputLen && occursAny(lit, v) && occursOnce(q, v) &&
			(len(w) < taint.MinInputLen || wordOnly(w) || w == v || !occursAny(strings.Replace(q, v, "", 1), w) && occursOnce(q, w)) {
			if err := CheckSQL(ctxOf(r), q, d); err != nil {
				t.Fatalf("%v %q: a quoted input blocked: %v", d, q, err)
			}
		}
	})
}

// FuzzShell: the readers never fail, and an input of letters and digits
// as one argument, once in the script, in single quotes, is never blocked,
// nor in a script nested in shells.
func FuzzShell(f *testing.F) {
	for _, c := range shellAttacks {
		a := c.argv(c.input)
		f.Add(strings.Join(a[1:], " "), c.input)
	}
	f.Add(`a "b $(c 'd' "e") f" ${g:-"h"} `+"`i`", "xyz")
	f.Add("cat <<A <<-'B'\nit's $(x <<C\nC\n) $y\nA\n\tB\nz", "$y")
	f.Add("sudo -Eu $U env -i -S 'nice -n5 x' A=1 timeout -k1 --sig=KILL 5 flock f -c 'id' id", "id")
	f.Add("timeout -Z --x 5 chrt -o busybox xargs -I{} -- command -v id", "id")
	f.Add(`su bob -c 'sh -c "ssh -p 2 h watch -n1 x\;id"' -- -lc "env -S 'flock f -c y'"`, "x;id")
	f.Add(`sudo -u $U bash -c "su - -c 'ssh \"$H\" -- ls'" ; runuser --comm="watch -d $x"`, "ls")
	f.Add(`sh -c "$@" sh timeout 5 $X id; eval "echo $1"; trap 'a;b' EXIT; alias x='y;z'; function f { id; }`, "id")
	f.Add(`parallel -j2 'echo {};id' ::: a :::+ b; wsl -d U echo x;id; sg g -c 'x;id'; capsh -- -c "x;id"`, "x;id")
	f.Add(`tar -cIid --to-command=x --checkpoint-action=exec=y; rsync -avze 'ssh x' a b; zip -TT z; man --html=w -P v`, "id")
	f.Add(`while read l; do eval "$l"; done <<< x; exec < f; at now; git -c core.pager=x log; ssh -F y h; systemd-run -pExecStartPre=z`, "x")
	f.Add(`. <(x id); source =(y); coproc N { id; }; f () { sh; }; f <<< z; at -mf/dev/stdin; tar --inf=id --rm x; git clone --u id; zip --unz=id`, "id")
	f.Add(`su -s id bob; runuser --sh=id; sort --co=id f; strace -fo '|id' ls; split --f 'id' f`, "id")
	f.Add(`python3 -Ic "id" x; perl -lne 'id' -e id; node -r m -pe id; awk -F: -- 'id' f; deno eval id; php -R id; lua -eid; busybox awk id`, "id")
	f.Add(`echo id | python3 -u -; perl -- <<< id; node -r m < f; python3 -V | x; php -n -r id`, "id")
	f.Fuzz(func(t *testing.T, script, input string) {
		if len(script) > 4096 || len(input) > 512 {
			return
		}
		for _, sc := range []*shScript{lexPOSIX(script), lexPOSIXAs(script, shOpts{hereDocs: true, ansiC: true}), lexPOSIXAs(script, shOpts{fishQuotes: true}), lexCmd(script), lexPowerShell(script)} {
			if len(sc.cls) != len(script) || len(sc.word) != len(script) {
				t.Fatal("a class per byte")
			}
			for i, w := range sc.word {
				if w >= 0 {
					ww := sc.words[w]
					if i < ww.start || i >= ww.end {
						t.Fatalf("%q: byte %d outside its word %+v", script, i, ww)
					}
				}
			}
		}
		r, _ := inputAt(t, taint.Query, input)
		for _, shell := range []string{"sh", "cmd", "pwsh"} {
			c := "-c"
			if shell == "cmd" {
				c = "/c"
			}
			if err := CheckCmd(ctxOf(r), cmdOf(shell, c, script)); err != nil && !errors.Is(err, ErrBlocked) {
				t.Fatalf("not a block: %v", err)
			}
		}
		// The words of the script as a command's arguments (wrappers).
		if args := strings.Fields(script); len(args) > 0 {
			if err := CheckCmd(ctxOf(r), cmdOf(args...)); err != nil && !errors.Is(err, ErrBlocked) {
				t.Fatalf("not a block: %v", err)
			}
		}
		alnum := len(input) >= taint.MinInputLen
		for i := 0; i < len(input); i++ {
			if c := input[i]; !isDigit(c) && !('a' <= c|0x20 && c|0x20 <= 'z') {
				alnum = false
			}
		}
		if s := "printf %s '" + input + "'"; alnum && occursOnce("sh -c "+s, input) {
			if err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", s)); err != nil {
				t.Fatalf("%q blocked: %v", s, err)
			}
		}
		// The same, nested in shells.
		if s := `sh -c "sh -c 'printf %s ` + input + `'"`; alnum && occursOnce("sh -c "+s, input) {
			if err := CheckCmd(ctxOf(r), cmdOf("sh", "-c", s)); err != nil {
				t.Fatalf("%q blocked: %v", s, err)
			}
		}
	})
}

// FuzzPath: no input and name make the check panic, and a plain file name
// (no separator, not a climb, nothing sensitive) in a directory is never
// blocked.
func FuzzPath(f *testing.F) {
	for _, in := range append(fileAttacks, fileBenign...) {
		f.Add("/srv/uploads/", in)
	}
	f.Fuzz(func(t *testing.T, dir, input string) {
		if len(dir) > 1024 || len(input) > 1024 {
			return
		}
		r, _ := inputAt(t, taint.Query, input)
		for _, name := range []string{dir + input, filepath.Join(dir, input), input} {
			if err := CheckPath(ctxOf(r), name); err != nil && !errors.Is(err, ErrBlocked) {
				t.Fatalf("not a block: %v", err)
			}
		}
		plain := len(input) >= taint.MinInputLen && !strings.ContainsAny(input, "/\\\x00%") && input != ".." && !sensitiveName(input) && !systemFileName(input)
		if plain {
			if err := CheckPath(ctxOf(r), "/srv/uploads/"+input); err != nil {
				t.Fatalf("%q blocked: %v", input, err)
			}
		}
	})
}

// FuzzHost: any host parses without panicking, the loose IPv4 reading
// agrees with netip on dotted quads, and every address gets a verdict.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f.1", "2130706433", "[::ffff:127.0.0.1]", "[fe80::1%eth0]", "1.2.3", "08", "0x", "..", "1..1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		a, ok := parseHost(host)
		if ok {
			internalReason(a)
		}
		if want, err := netip.ParseAddr(host); err == nil && want.Is4() {
			if !ok || a != want {
				t.Fatalf("%q: %v, want %v", host, a, want)
			}
		}
		if len(host) >= 16 {
			var b [16]byte
			copy(b[:], host)
			internalReason(netip.AddrFrom16(b))
		}
	})
}

func cmdOf(args ...string) *exec.Cmd { return &exec.Cmd{Path: args[0], Args: args} }
