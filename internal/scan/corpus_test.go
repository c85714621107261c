package scan

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const corpusDir = "../../testdata/vulnscan"

// corpus is a list of strings from the vendored public data (see
// testdata/vulnscan/PROVENANCE.md), each with where it came from.
type corpus struct {
	name    string
	class   Class // None: benign
	samples []sample
}

type sample struct {
	where string // file:line
	text  string
}

// readLines reads the payload lines of a corpus file: blank lines and #
// comments are not payloads; decode, when set, turns a line into the
// string to scan.
func readLines(t testing.TB, file string, decode func(string) string) []sample {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, file))
	require.NoError(t, err)
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if decode != nil {
			line = decode(line)
		}
		out = append(out, sample{fmt.Sprintf("%s:%d", file, n), line})
	}
	require.NoError(t, sc.Err())
	return out
}

// formDecode reads a line of libinjection's data as its test driver does:
// URL-decoded, + as a space.
// A line that does not decode is scanned as it is.
func formDecode(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

var html5secLabel = regexp.MustCompile(`^test \d+ `)

// blnsSections reads the big list of naughty strings, keeping the
// sections wanted.
func blnsSections(t testing.TB, want func(section string) bool) []sample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, "blns/blns.txt"))
	require.NoError(t, err)
	var out []sample
	section, inHeader := "", false
	for n, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			if !inHeader { // the first line of a block of comments names the section
				section = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			}
			inHeader = true
			continue
		}
		inHeader = false
		if strings.TrimSpace(line) != "" && want(section) {
			out = append(out, sample{fmt.Sprintf("blns/blns.txt:%d", n+1), line})
		}
	}
	return out
}

// blnsAttackSections are the sections of blns that hold attack strings.
var blnsAttackSections = map[string]bool{
	"Script Injection": true, "SQL Injection": true, "Server Code Injection": true,
	"Command Injection (Ruby)": true, "XXE Injection (XML)": true, "File Inclusion": true,
	"Known CVEs and Vulnerabilities": true,
}

// publicCorpora are the vendored public attack lists, by class, and the
// benign lists.
func publicCorpora(t testing.TB) []corpus {
	sqli := append(readLines(t, "libinjection/sqli-phpids.txt", formDecode),
		readLines(t, "libinjection/sqli-rsalgado-bhusa2013.txt", nil)...)
	xss := append(readLines(t, "libinjection/xss-owasp-cheatsheet-20131120.txt", nil),
		readLines(t, "libinjection/xss-html5secorg.txt", func(s string) string {
			return html5secLabel.ReplaceAllString(s, "")
		})...)
	nosql := append(readLines(t, "payloadsallthethings/nosql.txt", nil),
		readLines(t, "payloadsallthethings/nosql-mongodb.txt", nil)...)
	return []corpus{
		{"libinjection sqli-phpids + sqli-rsalgado-bhusa2013", SQLInjection, sqli},
		{"libinjection xss-owasp-cheatsheet + xss-html5secorg", XSS, xss},
		{"PayloadsAllTheThings command-execution-unix", CommandInjection, readLines(t, "payloadsallthethings/command-execution-unix.txt", nil)},
		{"PayloadsAllTheThings directory-traversal", PathTraversal, readLines(t, "payloadsallthethings/directory-traversal.txt", nil)},
		{"PayloadsAllTheThings NoSQL + MongoDB", NoSQLInjection, nosql},
		{"libinjection false_positives", None, readLines(t, "libinjection/false_positives.txt", formDecode)},
		{"blns, all but its attack sections", None, blnsSections(t, func(s string) bool { return !blnsAttackSections[s] })},
	}
}
