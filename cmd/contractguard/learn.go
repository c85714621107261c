package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/learn"
)

const learnHelp = `Usage: contractguard learn merge --out DIR [--force] [-H 'Name: value'] [--timeout D] SOURCE ...

Merges what guards in learning mode learned from traffic, and writes one
YAML contract per route into DIR, each with a header that says what was
inferred and why, then prints what changed.

Each SOURCE is the JSON export of a guard's learner: a file (or a glob of
files, quoted or expanded by the shell), or the http:// or https:// URL of
a running service's learning handler. The exports of several replicas
merge exactly: in any order, the contracts are those of one guard that
saw all their traffic.

In DIR, a route with no contract gets a new file. A file this command
wrote earlier and no one edited since is rewritten. A contract someone
wrote or edited is never overwritten: when what was learned differs, it
is written beside it as NAME.yaml.learned (which a guard does not load)
for review; --force overwrites files this command wrote and someone
edited, never others. Nothing is deleted.

If any SOURCE cannot be read, nothing is written and the exit status is 1.

Examples:
  contractguard learn merge replica-*.json --out contracts
  contractguard learn merge --out contracts -H "Authorization: Bearer $TOKEN" \
      https://api-1.internal/debug/contractguard/learned https://api-2.internal/debug/contractguard/learned

Options:
`

// maxExport bounds the bytes read from one SOURCE: an export of a learner
// at the largest MaxBytes is well within it.
const maxExport = 256 << 20

func learnCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "merge" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, learnHelp)
			return 0
		}
		fmt.Fprint(stderr, "contractguard learn: want a subcommand: merge\n\n"+learnHelp)
		return 2
	}
	fs := newFlags("learn merge", learnHelp, stderr)
	out := fs.String("out", "", "the contracts `DIR`ectory to write (required)")
	force := fs.Bool("force", false, "overwrite files this command wrote that were edited since")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for each URL")
	var headers headerFlags
	fs.Var(&headers, "H", "a header for URL sources, 'Name: value' (repeatable)")
	sources, code, ok := parseInterspersed(fs, args[1:], stdout)
	if !ok {
		return code
	}
	if *out == "" || len(sources) == 0 {
		fmt.Fprintln(stderr, "contractguard learn merge: need --out DIR and at least one SOURCE")
		fs.Usage()
		return 2
	}
	if *timeout <= 0 {
		// context.WithTimeout would end every URL's request before it
		// starts: "context deadline exceeded", exit 1, as if the service
		// had not answered.
		fmt.Fprintf(stderr, "contractguard learn merge: --timeout %v: want a time more than 0, such as 30s\n", *timeout)
		return 2
	}
	hdr := http.Header{}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			fmt.Fprintf(stderr, "contractguard learn merge: -H %q: want 'Name: value'\n", h)
			return 2
		}
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}

	var merged *learn.Observations
	n := 0
	for _, src := range sources {
		names, err := expand(src)
		if err != nil {
			fmt.Fprintf(stderr, "contractguard learn merge: %v\n", failure.PrintablePath(err))
			return 1
		}
		for _, name := range names {
			o, err := readExport(name, hdr, *timeout)
			if err != nil {
				sep := ": "
				if _, ok := err.(*jsonAt); ok {
					sep = ":" // FILE:LINE:COLUMN: message
				}
				fmt.Fprintf(stderr, "contractguard learn merge: %s%s%v\n", failure.Printable(name), sep, failure.PrintablePath(err))
				return 1
			}
			if merged != nil && merged.Limits() != o.Limits() {
				fmt.Fprintf(stderr, "contractguard learn merge: warning: %s was learned with other limits (%s); merged under the stricter of each\n", name, o.Limits())
			}
			if merged == nil {
				merged = o
			} else {
				merged = learn.Merge(merged, o)
			}
			n++
		}
	}
	contracts := merged.Contracts()
	fmt.Fprintf(stdout, "merged %d exports: %d requests observed, %d dropped at the caps, %d routes, %d contracts\n",
		n, merged.Samples(), merged.Dropped(), merged.Routes(), len(contracts))
	sum, err := learn.WriteContracts(*out, contracts, learn.WriteOptions{Force: *force})
	if err != nil {
		for _, e := range flatten(err) {
			fmt.Fprintf(stderr, "contractguard learn merge: %v\n", failure.PrintablePath(e))
		}
		return 1
	}
	fmt.Fprint(stdout, sum.String())
	return 0
}

// parseInterspersed parses flags wherever they are among the arguments
// ("a.json --out dir b.json"), everything after "--" being arguments.
// --help prints to stdout and stops, as parse does.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) (rest []string, code int, ok bool) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	if code, ok := parse(fs, args, stdout); !ok {
		return nil, code, false
	}
	for args = fs.Args(); len(args) > 0; args = fs.Args() {
		rest = append(rest, args[0])
		if err := fs.Parse(args[1:]); err != nil {
			return nil, 2, false
		}
	}
	return append(rest, tail...), 0, true
}

// expand is a SOURCE's names: a URL or a file as it is, a glob's matches.
func expand(src string) ([]string, error) {
	if isURL(src) {
		return []string{src}, nil
	}
	if _, err := os.Stat(src); err == nil || !strings.ContainsAny(src, "*?[") {
		return []string{src}, nil
	}
	names, err := filepath.Glob(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", failure.Printable(src), err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no file matches", failure.Printable(src))
	}
	return names, nil
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// readExport reads one export from a file or a URL.
func readExport(name string, hdr http.Header, timeout time.Duration) (*learn.Observations, error) {
	var data []byte
	if isURL(name) {
		var err error
		if data, err = fetch(name, hdr, timeout); err != nil {
			return nil, err
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if data, err = readLimited(f); err != nil {
			return nil, err
		}
	}
	var o learn.Observations
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, positioned(data, err)
	}
	return &o, nil
}

// jsonAt is an export's JSON error at a line and column of it.
type jsonAt struct {
	line, col int
	err       error
}

func (e *jsonAt) Error() string { return fmt.Sprintf("%d:%d: %v", e.line, e.col, e.err) }
func (e *jsonAt) Unwrap() error { return e.err }

// positioned is err with the line and column of data it is at, when it
// says where: a syntax error, a value of the wrong type or a name twice in
// an object or unknown, the end of data too soon.
func positioned(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	// Found by Observations.UnmarshalJSON, which is given the document
	// from its first byte that is not white space.
	lead := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
	switch {
	case errors.As(err, &se):
		off = se.Offset
		if se.Offset > 0 && se.Error() != "unexpected end of JSON input" {
			off-- // the offset is just past the offending byte
		}
	case errors.As(err, &syn):
		off = syn.ByteOffset + lead
	case errors.As(err, &sem):
		off = sem.ByteOffset + lead
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return &jsonAt{line, col, err}
}

func fetch(url string, hdr http.Header, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = hdr.Clone()
	req.Header.Set("Accept", "application/json")
	resp, err := (&http.Client{CheckRedirect: sameHostHeaders(hdr)}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET: %s", resp.Status)
	}
	return readLimited(resp.Body)
}

// sameHostHeaders is a CheckRedirect that sends the -H headers (a token,
// an API key) only to the host they were given for, and never in clear
// when they were given for https: Go's client drops Authorization and
// Cookie on a redirect to another host, copies every other header,
// X-Api-Key with them, and copies them all to the same host over http.
func sameHostHeaders(hdr http.Header) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		first := via[0].URL
		if req.URL.Host != first.Host || req.URL.Scheme != first.Scheme && req.URL.Scheme != "https" {
			for name := range hdr {
				req.Header.Del(name)
			}
		}
		return nil
	}
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxExport+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxExport {
		return nil, errors.New("over 256 MiB: not an export")
	}
	return data, nil
}
