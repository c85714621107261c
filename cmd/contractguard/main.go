// Command contractguard checks contracts where they are written: on an
// author's machine and in CI, before a guard ever loads them; and guards
// a service in any language as a validating reverse proxy (serve,
// docs/proxy.md).
//
//	contractguard lint [--format text|json] [DIR ...]
//	contractguard check --contracts DIR [-X METHOD] [-H 'Name: value'] [--expect WHAT] PATH [BODY|@FILE|-]
//	contractguard schema
//	contractguard license keygen|issue|inspect ...
//	contractguard serve --upstream URL [--config FILE] [--contracts DIR] [options]
//	contractguard learn merge --out DIR SOURCE ...
//
// Install it with
//
//	go install github.com/contractguard/contractguard/cmd/contractguard@latest
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/failure"
)

const usage = `contractguard checks contracts before a guard loads them, and guards a
service as a validating reverse proxy.

Usage:
  contractguard lint [--format text|json] [DIR ...]
  contractguard check --contracts DIR [-X METHOD] [-H 'Name: value'] [--expect WHAT] PATH [BODY|@FILE|-]
  contractguard schema
  contractguard license keygen|issue|inspect ...   (licence keys, docs/licensing.md)
  contractguard serve --upstream URL [--config FILE] [--contracts DIR] [options]
  contractguard learn merge --out DIR [--force] [-H 'Name: value'] [--timeout D] SOURCE ...

Run "contractguard COMMAND --help" for a command's options and examples.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program, for tests: exit status 0 when all is well, 1
// for problems found or a rejected request, 2 for a usage error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "lint":
		return lint(args[1:], stdout, stderr)
	case "check":
		return check(args[1:], stdin, stdout, stderr)
	case "schema":
		return schema(args[1:], stdout, stderr)
	case "license":
		return license(args[1:], stdin, stdout, stderr)
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "learn":
		return learnCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "contractguard: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func newFlags(name, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; --help prints to stdout and exits 0.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (int, bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0, false
		}
	}
	if err := fs.Parse(args); err != nil {
		return 2, false
	}
	return 0, true
}

const lintHelp = `Usage: contractguard lint [--format text|json] [DIR ...]

Loads every contract in each DIR (default: the current directory) as
contractguard.New would, and prints each problem on a line:

  FILE:LINE: METHOD ENDPOINT: MESSAGE

A folder without contracts is a problem too (the wrong folder, or the
files not where they should be). It exits 1 if there is any problem, 0
otherwise. A contract in mode learn needs a licence key, read from
CONTRACTGUARD_LICENSE_KEY as the service reads it.

Examples:
  contractguard lint contracts
  contractguard lint --format json services/*/contracts > lint.json

Options:
`

// contractsOptions are the Options lint and check load dir with: the
// licence key from CONTRACTGUARD_LICENSE_KEY too, which a contract in mode
// learn needs (the error without one tells the user to set it: a lint
// that did not read it failed every such contract, whatever was set).
func contractsOptions(dir string) contractguard.Options {
	return contractguard.Options{ContractsDir: dir, Logger: slog.New(slog.DiscardHandler), LicenseKey: os.Getenv("CONTRACTGUARD_LICENSE_KEY")}
}

// problem is one line of lint's output.
type problem struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Contract string `json:"contract,omitempty"`
	Message  string `json:"message"`
}

func lint(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lint", lintHelp, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "contractguard lint: --format must be text or json, not %q\n", *format)
		return 2
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	problems := []problem{}
	for _, dir := range dirs {
		g, err := contractguard.New(contractsOptions(dir))
		if err == nil && len(g.Contracts()) == 0 {
			// New only warns (a service may start before its contracts
			// exist); to a check in CI it is the wrong folder, or the
			// contracts' files not where they should be.
			err = &contractguard.LoadError{File: dir, Err: errors.New("no contracts found (*.yaml, *.yml, *.json)")}
		}
		if err == nil {
			if *format == "text" {
				fmt.Fprintf(stdout, "ok: %s (%d contracts)\n", dir, len(g.Contracts()))
			}
			continue
		}
		for _, e := range flatten(err) {
			p := problem{File: dir, Message: e.Error()}
			var le *contractguard.LoadError
			if errors.As(e, &le) {
				p = problem{File: le.File, Line: le.Line, Contract: le.Contract, Message: le.Err.Error()}
			}
			problems = append(problems, p)
			if *format == "text" {
				fmt.Fprintln(stdout, e)
			}
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(problems)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

const checkHelp = `Usage: contractguard check [--config FILE] [--contracts DIR] [-X METHOD] [-H 'Name: value'] [--expect WHAT] PATH [BODY|@FILE|-]

Runs one request through a guard built from the contracts in DIR, exactly
as its middleware would, and prints "pass", or the status and the error
body a client would get. A request no contract matches passes through
unchecked, as it would in the service: it prints "pass (no contract
matches METHOD PATH)"; one that a contract in mode learn would reject
passes too, and prints what it would have been ("pass (mode learn would
reject: INVARIANT_VIOLATED)"). It exits 1 if the request is rejected.

Without --config the guard has the library's defaults (no vulnerability
scan, no require-contract, the default body and depth limits); with it,
the service's settings, read from its configuration file and the
CONTRACTGUARD_* environment as the service reads them (--contracts, if
given, wins over the file's contracts-dir).

With --expect it exits 0 when the outcome is WHAT, 1 when it is not: WHAT
is pass (a contract matched and passed the request), unmatched (no
contract matches it), reject (any rejection), a status (422) or a code
(INVARIANT_VIOLATED). Pin outcomes down with it in CI: --expect pass fails
when a typo in a contract's endpoint leaves the request unchecked, and
--expect reject, unlike the shell's "! contractguard check", fails when the
contracts do not load or the body file is missing (exit status 2).

PATH may carry a query string. BODY is the body itself, @FILE a file to
read it from, - standard input. With a body the method defaults to POST and
the Content-Type to application/json; without one, to GET. A contract in
mode learn needs a licence key, read from CONTRACTGUARD_LICENSE_KEY.

Examples:
  contractguard check --config contractguard.yaml --expect VULNERABILITY_DETECTED /api/search @xss.json
  contractguard check --contracts contracts --expect pass /api/users '{"email":"ada@example.com","age":36}'
  contractguard check --contracts contracts -X PUT /api/orders/7 @order.json
  contractguard check --contracts contracts -H 'X-Tenant: acme' '/api/orders?dry=1' - < order.json
  contractguard check --contracts contracts --expect 422 /api/users @underage-user.json

Options:
`

type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func check(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("check", checkHelp, stderr)
	dir := fs.String("contracts", "", "the contracts `DIR`ectory (required without --config)")
	configPath := fs.String("config", "", "the service's configuration `FILE` (contractguard.yaml): its settings, not the defaults")
	method := fs.String("X", "", "the request `METHOD`")
	var headers headerFlags
	fs.Var(&headers, "H", "a request `header`, 'Name: value' (repeatable)")
	expect := fs.String("expect", "", "exit 0 if the outcome is `WHAT` (pass, unmatched, reject, a status or a code), 1 if not")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if *expect != "" && !validExpectation(*expect) {
		fmt.Fprintf(stderr, "contractguard check: --expect %q: want pass, unmatched, reject, a status such as 422, or a code such as INVARIANT_VIOLATED\n", *expect)
		return 2
	}
	rest := fs.Args()
	if *dir == "" && *configPath == "" || len(rest) < 1 || len(rest) > 2 {
		fmt.Fprintln(stderr, "contractguard check: need --contracts DIR or --config FILE, a PATH, and at most one BODY")
		fs.Usage()
		return 2
	}
	path := rest[0]
	if !strings.HasPrefix(path, "/") {
		fmt.Fprintf(stderr, "contractguard check: PATH must start with /, not %q\n", path)
		return 2
	}
	var body []byte
	if len(rest) == 2 {
		var err error
		switch b := rest[1]; {
		case b == "-":
			body, err = io.ReadAll(stdin)
		case strings.HasPrefix(b, "@"):
			body, err = os.ReadFile(b[1:])
		default:
			body = []byte(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "contractguard check: %v\n", failure.PrintablePath(err))
			return 2
		}
	}
	if *method == "" {
		*method = http.MethodGet
		if body != nil {
			*method = http.MethodPost
		}
	}
	opts, err := checkOptions(*configPath, *dir)
	if err != nil {
		for _, e := range flatten(err) {
			fmt.Fprintln(stderr, e)
		}
		return 2
	}
	g, err := contractguard.New(opts)
	if err != nil {
		for _, e := range flatten(err) {
			fmt.Fprintln(stderr, e)
		}
		return 2
	}
	r, err := http.NewRequest(*method, "http://contractguard.invalid"+path, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "contractguard check: %v\n", err)
		return 2
	}
	r.Method = *method // as given: the guard compares methods case-insensitively
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			fmt.Fprintf(stderr, "contractguard check: -H %q: want 'Name: value'\n", h)
			return 2
		}
		r.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	// A request no contract matches passes unread: said so, not a bare
	// "pass" that a typo in a contract's endpoint would give too.
	unmatched, would := false, ""
	g.Observe(func(e contractguard.Event) {
		// Under learning-mode and require-contract, a request no contract
		// matches is reported as one NO_CONTRACT would block, and passes:
		// unmatched all the same, not a contract's pass.
		unmatched = unmatched || e.Outcome == contractguard.OutcomeUnmatched ||
			e.Outcome == contractguard.OutcomeWouldBlock && e.Code == contractguard.CodeNoContract
		if e.Outcome == contractguard.OutcomeWouldBlock && would == "" {
			would = e.Code
		}
	})
	v := g.CheckRequest(r)
	switch {
	case v == nil && unmatched:
		fmt.Fprintf(stdout, "pass (no contract matches %s %s)\n", r.Method, r.URL.EscapedPath()) // as the guard read it
	case v == nil && would != "":
		fmt.Fprintf(stdout, "pass (mode learn would reject: %s)\n", would)
	case v == nil:
		fmt.Fprintln(stdout, "pass")
	default:
		b, _ := v.MarshalJSON()
		fmt.Fprintf(stdout, "%d %s\n%s\n", v.Status, http.StatusText(v.Status), b)
	}
	if *expect != "" {
		if meets(v, unmatched, *expect) {
			return 0
		}
		return 1
	}
	if v != nil {
		return 1
	}
	return 0
}

// checkOptions are the Options check builds its guard with: the
// library's defaults and the contracts in dir, or, with a configuration
// file, the service's settings from it and the environment (dir, when
// given, wins over its contracts-dir). A configuration that disables the
// guard is an error: nothing would be checked.
func checkOptions(configPath, dir string) (contractguard.Options, error) {
	if configPath == "" {
		return contractsOptions(dir), nil
	}
	o, err := contractguard.LoadConfig(configPath)
	if err != nil {
		return o, err
	}
	if dir != "" {
		o.ContractsDir = dir
	}
	switch {
	case o.Disabled:
		by := failure.Printable(configPath) + " disables the guard (contractguard.enabled: false)"
		if v, ok := os.LookupEnv("CONTRACTGUARD_ENABLED"); ok { // the environment wins over the file
			by = "the environment disables the guard (CONTRACTGUARD_ENABLED=" + strconv.Quote(v) + ")"
		}
		return o, fmt.Errorf("contractguard check: %s: nothing would be checked", by)
	case o.ContractsDir == "":
		return o, fmt.Errorf("contractguard check: %s sets no contractguard.contracts-dir: give --contracts DIR", failure.Printable(configPath))
	}
	o.Logger = slog.New(slog.DiscardHandler)
	return o, nil
}

// The codes a rejection may have, for --expect.
var codes = []string{
	contractguard.CodeSchemaInvalid, contractguard.CodeMalformedJSON, contractguard.CodeInvariantViolated,
	contractguard.CodePayloadTooLarge, contractguard.CodeUnsupportedMediaType,
	contractguard.CodeVulnerabilityDetected, contractguard.CodeNoContract,
}

// validExpectation reports whether want is an outcome check can have:
// pass, unmatched, reject, a code, or the status of one.
func validExpectation(want string) bool {
	if want == "pass" || want == "unmatched" || want == "reject" || slices.Contains(codes, want) {
		return true
	}
	switch want {
	case "400", "403", "413", "415", "422":
		return true
	}
	return false
}

// meets reports whether v, nil for a pass, is the outcome want;
// unmatched is a pass no contract checked, which pass is not.
func meets(v *contractguard.Violation, unmatched bool, want string) bool {
	switch {
	case want == "pass":
		return v == nil && !unmatched
	case want == "unmatched":
		return v == nil && unmatched
	case v == nil:
		return false
	case want == "reject":
		return true
	}
	return want == v.Code || want == strconv.Itoa(v.Status)
}

const schemaHelp = `Usage: contractguard schema

Prints the contract format, policy v0.1, as a JSON Schema. Point an editor
at it for completion and checking as you type, with a first line such as

  # yaml-language-server: $schema=../schema/policy.v0.1.json

Example:
  contractguard schema > policy.v0.1.json
`

func schema(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("schema", schemaHelp, stderr)
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "contractguard schema: takes no arguments")
		return 2
	}
	stdout.Write(contractguard.PolicySchema())
	return 0
}
