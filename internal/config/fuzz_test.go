package config

import (
	"errors"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzTable has a property of every kind, nested and not, and the serve
// group.
var fuzzTable = append([]Property{
	{"enabled", Bool}, {"max-body-bytes", Size}, {"license-key", Text}, {"contracts-dir", Path},
	{"metrics.enabled", Bool}, {"learn.sample-rate", Fraction}, {"max-depth", Depth},
}, Serve...)

// The Go type of each kind's values.
var kindTypes = map[Kind]reflect.Type{
	Bool: reflect.TypeFor[bool](), Size: reflect.TypeFor[int64](), Text: reflect.TypeFor[string](),
	Path: reflect.TypeFor[string](), Duration: reflect.TypeFor[time.Duration](), Address: reflect.TypeFor[string](),
	URL: reflect.TypeFor[*url.URL](), Fraction: reflect.TypeFor[float64](), Depth: reflect.TypeFor[int64](),
}

// FuzzRead reads arbitrary configuration files, whole and scoped to serve,
// and holds what Read promises an operator: it never panics; a file it
// cannot read is one *Error that names the file; each problem is an
// *Error that names the file and line and the property, in one line; and
// every value it returns is a property of the table, of its kind's Go
// type, a Path made absolute against the file's folder.
func FuzzRead(f *testing.F) {
	for _, s := range readSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, scoped bool) { checkRead(t, src, scoped) })
}

// TestFuzzRead_Seeds: the seeds give FuzzRead's checks values of every
// kind and problems to look at.
func TestFuzzRead_Seeds(t *testing.T) {
	kinds, problems := map[Kind]bool{}, 0
	for _, s := range readSeeds {
		checkRead(t, []byte(s), true)
		values, ps, _ := checkRead(t, []byte(s), false)
		problems += len(ps)
		for name := range values {
			i := slices.IndexFunc(fuzzTable, func(p Property) bool { return p.Name == name })
			kinds[fuzzTable[i].Kind] = true
		}
	}
	if len(kinds) != len(kindTypes) || problems < 5 {
		t.Errorf("the seeds give values of %d kinds of %d, and %d problems", len(kinds), len(kindTypes), problems)
	}
}

var readSeeds = []string{
	"contractguard:\n  enabled: true\n  max-body-bytes: 4096\n  contracts-dir: ./c\n  metrics: {enabled: false}\n",
	"contractguard:\n  max-depth: 64\n",
	"contractguard:\n  max-depth: 20000\n",
	"contractguard:\n  serve:\n    upstream: http://127.0.0.1:3000\n    listen: :8080\n    read-timeout: 2s\n",
	"contractguard:\n  learn:\n    sample-rate: 0.5\n  license-key: ${CG_FUZZ_UNSET:none}\n",
	"a: &x {enabled: maybe}\ncontractguard: *x\n",
	"contractguard:\n  enabled: [1, 2]\n  nope: 1\n  serve: 3\n",
	"contractguard: null\n---\nother: 1\n",
	"- 1\n- 2\n",
	"contractguard:\n  max-body-bytes: -1\n  serve:\n    upstream: ftp://x\n    admin-listen: off\n",
	"contractguard:\n  \"a\\nb\": 1\n",
	"contractguard:\n  license-key: \"${CG_FUZZ\\nUNSET}\"\n",
	"contractguard:\n  [a]: 1\n",
}

// checkRead is FuzzRead's check of one file.
func checkRead(t *testing.T, src []byte, scoped bool) (Values, []error, error) {
	const path = "/etc/cg/contractguard.yaml"
	table, scope := fuzzTable, ""
	if scoped {
		table, scope = Serve, "serve"
	}
	values, problems, err := Read(path, src, table, scope)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.Where, path) {
			t.Fatalf("a file that cannot be read: %v, not an *Error naming %s", err, path)
		}
		oneLine(t, err)
		return values, problems, err
	}
	for _, p := range problems {
		// The property is "" only where the key is not a plain name.
		var e *Error
		if !errors.As(p, &e) {
			t.Fatalf("a problem that is not an *Error: %#v", p)
		}
		line, ok := strings.CutPrefix(e.Where, path+":")
		if n, err := strconv.Atoi(line); !ok || err != nil || n < 1 || e.Property != "" && !strings.HasPrefix(e.Property, Root) {
			t.Fatalf("a problem that names no line or no property: %#v", p)
		}
		oneLine(t, p)
	}
	for name, v := range values {
		i := slices.IndexFunc(table, func(p Property) bool { return p.Name == name })
		if i < 0 {
			t.Fatalf("a value for %q, which the table does not have", name)
		}
		if got := reflect.TypeOf(v); got != kindTypes[table[i].Kind] {
			t.Fatalf("%s is a %v, not a %v", name, got, kindTypes[table[i].Kind])
		}
		if table[i].Kind == Path && !filepath.IsAbs(v.(string)) {
			t.Fatalf("%s is %q, not made absolute against the file's folder", name, v)
		}
	}
	return values, problems, err
}

func oneLine(t *testing.T, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("an error of more than one line: %q", err)
	}
}
