package scan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	libinjection "github.com/corazawaf/libinjection-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// curatedEntry is a line of testdata/vulnscan/curated/*.jsonl.
type curatedEntry struct {
	Class string          `json:"class"`
	Body  json.RawMessage `json:"body"`
	Note  string          `json:"note"`
	where string
}

var classNames = map[string]Class{
	"sqli": SQLInjection, "xss": XSS, "command": CommandInjection, "traversal": PathTraversal,
	"nosql": NoSQLInjection, "proto": PrototypePollution,
}

func readCurated(t testing.TB, name string) []curatedEntry {
	t.Helper()
	var out []curatedEntry
	for _, line := range readLines(t, filepath.Join("curated", name), nil) {
		var e curatedEntry
		require.NoError(t, json.Unmarshal([]byte(line.text), &e), line.where)
		e.where = strings.TrimPrefix(line.where, "curated/")
		out = append(out, e)
	}
	return out
}

// findings scans a body and lists its findings.
func findings(t testing.TB, body []byte) map[string]Class {
	t.Helper()
	doc, err := jsonbody.Parse(body, 64)
	require.NoError(t, err, "%s", body)
	got := map[string]Class{}
	Body(doc.Root(), nil, failure.ReportFunc(func(path, m string) { got[path] = classOf(m) }))
	return got
}

// detectors are the checks of String one by one, to tell whether a value
// matches a class whatever the class it is reported with (a "; cat
// /etc/passwd" is command injection and path traversal).
var detectors = map[Class]func(string) bool{
	SQLInjection: func(s string) bool {
		sqli, _ := libinjection.IsSQLi(s)
		return sqli && needsSQLi(s, bytesIn(s))
	},
	XSS:                func(s string) bool { return xss(s, bytesIn(s)) },
	CommandInjection:   func(s string) bool { return commandInjection(s, bytesIn(s)) },
	PathTraversal:      func(s string) bool { return pathTraversal(s, bytesIn(s)) },
	NoSQLInjection:     func(s string) bool { return noSQLOperator(s, bytesIn(s)) },
	PrototypePollution: func(s string) bool { return protoPath(s, bytesIn(s)) },
}

// classesIn lists the classes a body matches: every detector on every
// string and key, and the classes of its findings (for keys: $ operators,
// __proto__, constructor.prototype).
func classesIn(t testing.TB, body []byte, findings map[string]Class) map[Class]bool {
	found := map[Class]bool{}
	for _, c := range findings {
		found[c] = true
	}
	doc, err := jsonbody.Parse(body, 64)
	require.NoError(t, err)
	check := func(s string) {
		for c, d := range detectors {
			if d(s) {
				found[c] = true
			}
		}
	}
	eachString(doc.Any(), check, func(k string, _ any) bool { check(k); return true })
	return found
}

// eachString calls value with every string of a decoded JSON value and
// key with every member name and its value, depth first, going into the
// value unless key returns false.
func eachString(v any, value func(string), key func(string, any) bool) {
	switch v := v.(type) {
	case string:
		value(v)
	case []any:
		for _, e := range v {
			eachString(e, value, key)
		}
	case map[string]any:
		for k, e := range v {
			if key(k, e) {
				eachString(e, value, key)
			}
		}
	}
}

// curatedMisses are the attacks of attacks.jsonl the scan does not catch
// as their class, each with the reason. TestCurated fails when one of
// them is caught (remove it) or another is missed.
var curatedMisses = map[string]string{
	"attacks.jsonl:5":   "libinjection: a quote then a MySQL # comment, nothing between, has no fingerprint",
	"attacks.jsonl:55":  "libinjection: COPY … TO PROGRAM has no fingerprint",
	"attacks.jsonl:60":  "body values are read as the application receives them, not URL-decoded",
	"attacks.jsonl:76":  "libinjection's HTML5 tokenizer reads img/src=x/onerror as one tag name",
	"attacks.jsonl:112": "libinjection's HTML5 tokenizer reads scr<script as the tag name",
	"attacks.jsonl:162": "commands are known by name; a globbed name (c?t) is not",
	"attacks.jsonl:165": "id then # reads as prose (\"cancelled; id #4411\")",
	"attacks.jsonl:178": "body values are read as the application receives them, not URL-decoded",
	"attacks.jsonl:231": "a UNC path names another host, not the server's files: out of the traversal check's scope",
}

// TestCurated runs the project's own attack and benign bodies: every
// attack found as its class but the listed misses; no benign body flagged.
func TestCurated(t *testing.T) {
	perClass, caught := map[Class]int{}, map[Class]int{}
	for _, e := range readCurated(t, "attacks.jsonl") {
		want, ok := classNames[e.Class]
		require.True(t, ok, "%s: class %q", e.where, e.Class)
		perClass[want]++
		// Caught: the scan reports the body, and the class is one of the
		// body's, reported or matched by a detector on one of its strings
		// or keys (the scan names only the first class it finds per value).
		found := findings(t, e.Body)
		hit := len(found) > 0 && classesIn(t, e.Body, found)[want]
		if hit {
			caught[want]++
		}
		_, expectMiss := curatedMisses[e.where]
		assert.Equal(t, !expectMiss, hit, "%s (%s): %s", e.where, e.Note, e.Body)
	}
	// docs/vulnerability-scan.md's table, row by row.
	var got [][]string
	for c := SQLInjection; c <= PrototypePollution; c++ {
		assert.GreaterOrEqual(t, perClass[c], 40, "attacks of class %v", c)
		t.Logf("%-34s %d of %d", c.Message(), caught[c], perClass[c])
		got = append(got, []string{strings.TrimPrefix(c.Message(), "possible "), fmt.Sprint(perClass[c]), fmt.Sprint(caught[c])})
	}
	benign := readCurated(t, "benign.jsonl")
	assert.GreaterOrEqual(t, len(benign), 200)
	flagged := 0
	for _, e := range benign {
		if !assert.Empty(t, findings(t, e.Body), "%s (%s): %s", e.where, e.Note, e.Body) {
			flagged++
		}
	}
	t.Logf("benign: %d bodies, %d flagged", len(benign), flagged)
	got = append(got, []string{"**benign bodies flagged**", fmt.Sprint(len(benign)), fmt.Sprintf("**%d**", flagged)})
	assert.Equal(t, got, docsTable(t, "| class | attacks | found as the class |"))
}
