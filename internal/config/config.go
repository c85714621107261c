// Package config reads the contractguard: tree of a configuration file
// (YAML or JSON) and the CONTRACTGUARD_… environment variables against a
// table of properties: each property's kind, ${NAME:default} placeholders,
// and errors that name file:line (or the variable) and the property. It
// knows nothing of what the properties mean: the root package's table sets
// Options, the serve command's table sets the proxy.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/yamljson"
)

// Root is the top-level key whose tree is read; keys beside it are
// another component's and are left alone.
const Root = "contractguard"

// Kind is how a property's text is read.
type Kind int

const (
	Bool     Kind = iota // true or false, any case: a bool
	Size                 // a whole number, 0 or more: an int64
	Text                 // a string; empty is the same as none
	Path                 // a non-empty folder or file, relative to the configuration file: a string
	Duration             // a Go duration (30s, 1m30s, 250ms) or 0, not negative: a time.Duration
	Address              // a listen address, host:port (:8080, 127.0.0.1:9090), or "off": a string
	URL                  // an absolute http or https URL: a *url.URL
	Fraction             // a number from 0 to 1 (0.1, 1): a float64
	Depth                // a nesting depth, 0 to jsonbody.MaxDepthLimit (0: the default): an int64
)

// Property is one property of a table.
type Property struct {
	Name string // under contractguard:, with dots for nesting: metrics.enabled
	Kind Kind
}

// Error is a problem with the configuration: a property that does not
// exist or has a value of the wrong kind, a placeholder with no value, a
// file that cannot be read. Where is "file:line", the file, or
// "environment NAME".
type Error struct {
	Where    string
	Property string // contractguard.max-body-bytes; "" when the problem is the file
	Err      error
}

// Error is "where: property: what", one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Where)
	if e.Property != "" {
		b.WriteString(": " + failure.Printable(e.Property))
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// EnvName is the environment variable of a property:
// metrics.enabled is CONTRACTGUARD_METRICS_ENABLED.
func EnvName(property string) string {
	return "CONTRACTGUARD_" + strings.ToUpper(envSeparators.Replace(property))
}

var envSeparators = strings.NewReplacer(".", "_", "-", "_")

// Values are properties read, by name, converted to their kinds.
type Values map[string]any

// ReadFile reads the contractguard: tree of the file at path against the
// properties of table. A file that cannot be read or does not parse is
// the error (one *Error); a problem with a property is one *Error in
// problems, and reading goes on, so that every problem is reported. A
// Path value is made relative to the file's folder.
//
// With scope set (serve), only that group of the tree is read
// (contractguard.serve.…) and the rest is left alone: it is another
// table's to check.
func ReadFile(path string, table []Property, scope string) (values Values, problems []error, err error) {
	values, _, problems, err = ReadFileWhere(path, table, scope)
	return values, problems, err
}

// ReadFileWhere is ReadFile that also says where each property read was
// set, "file:line", for errors found once the values are read (a setting
// that only makes sense with another) to name the line as the reader's do.
func ReadFileWhere(path string, table []Property, scope string) (values Values, where map[string]string, problems []error, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, &Error{Where: failure.Printable(path), Err: failure.PrintablePath(err)}
	}
	return read(path, src, table, scope)
}

// Read is ReadFile of src, which was read from path.
func Read(path string, src []byte, table []Property, scope string) (values Values, problems []error, err error) {
	values, _, problems, err = read(path, src, table, scope)
	return values, problems, err
}

func read(path string, src []byte, table []Property, scope string) (values Values, where map[string]string, problems []error, err error) {
	shown := failure.Printable(path) // a file name with a line break in it: errors stay one line
	docs, err := yamljson.Parse(src)
	if err != nil {
		where := shown
		line, err := yamljson.Split(err, 0)
		if line > 0 {
			where = fmt.Sprintf("%s:%d", shown, line)
		}
		return nil, nil, nil, &Error{Where: where, Err: err}
	}
	r := reader{path: shown, table: table, scope: scope, values: Values{}, lines: map[string]int{}}
	found := false
	for _, d := range docs {
		top, ok := yamljson.Unwrap(d.Body).(*ast.MappingNode)
		if !ok {
			return nil, nil, nil, &Error{Where: fmt.Sprintf("%s:%d", shown, d.Line), Err: errors.New("a configuration file is a mapping with a contractguard: key")}
		}
		for _, kv := range top.Values {
			k, _ := yamljson.Key(kv.Key)
			if t := strings.TrimPrefix(k, "\ufeff"); t != k && (t == Root || strings.HasPrefix(t, Root+".")) {
				// A later document saved with a byte order mark (files
				// joined with --- between them): YAML allows none inside
				// a document, and the key read so is another component's,
				// its properties left out without a word.
				found = true
				r.fail(kv.Key, "", fmt.Errorf("a byte order mark (U+FEFF) before the key %s: only the file's first byte may be one; remove it", Root))
				continue
			}
			if rest, flat := strings.CutPrefix(k, Root+"."); flat {
				// Spring's flat form (contractguard.vulnerability-scan:)
				// is the guard's, but only the tree is read: an error, not
				// a property left at its default without a word.
				found = true
				r.fail(kv.Key, k, fmt.Errorf("not read at the top of the file; write it under %s: (%s:)", Root, failure.Printable(rest)))
				continue
			}
			if k != Root {
				continue // another component's configuration
			}
			found = true
			r.aliases = yamljson.Aliases(d.Body)
			r.tree("", resolveAlias(kv.Value, r.aliases))
		}
	}
	if !found {
		// A misspelt contractguard: would otherwise leave every property
		// at its default without a word.
		return nil, nil, nil, &Error{Where: shown, Err: errors.New("no contractguard: key; a configuration file holds its properties under contractguard:")}
	}
	where = make(map[string]string, len(r.values))
	for name, v := range r.values {
		if p, _ := find(table, name); p.Kind == Path && !filepath.IsAbs(v.(string)) {
			r.values[name] = filepath.Join(filepath.Dir(path), v.(string))
		}
		where[name] = fmt.Sprintf("%s:%d", shown, r.lines[name])
	}
	return r.values, where, r.problems, nil
}

// Env reads the properties of table whose environment variables are set.
// A relative Path stays relative to the working directory.
func Env(table []Property) (Values, []error) {
	values := Values{}
	var problems []error
	for _, p := range table {
		raw, ok := os.LookupEnv(EnvName(p.Name))
		if !ok {
			continue
		}
		v, err := Parse(p.Kind, raw)
		if err != nil {
			problems = append(problems, &Error{Where: "environment " + EnvName(p.Name), Property: Root + "." + p.Name, Err: err})
			continue
		}
		values[p.Name] = v
	}
	return values, problems
}

type reader struct {
	path     string // the file's name as errors show it
	table    []Property
	scope    string
	aliases  map[*ast.AliasNode]ast.Node
	values   Values
	lines    map[string]int // where each property read was set
	problems []error
}

// fail adds a problem at n, or at the line a YAML error names.
func (r *reader) fail(n ast.Node, property string, err error) {
	line, err := yamljson.Split(err, yamljson.Line(n))
	r.problems = append(r.problems, &Error{Where: fmt.Sprintf("%s:%d", r.path, line), Property: property, Err: err})
}

// tree reads the properties of the mapping n, named under prefix (empty
// for the contractguard: mapping itself).
func (r *reader) tree(prefix string, n ast.Node) {
	m, ok := yamljson.Unwrap(n).(*ast.MappingNode)
	if !ok {
		if _, null := yamljson.Unwrap(n).(*ast.NullNode); !null { // null: contractguard: with nothing under it
			r.fail(n, Root, errors.New("want a mapping of properties")) // nested groups are read only when mappings
		}
		return
	}
	for _, kv := range m.Values {
		value := resolveAlias(kv.Value, r.aliases)
		k, err := yamljson.Key(kv.Key)
		if err != nil {
			r.fail(kv.Key, "", err)
			continue
		}
		name := prefix + k
		if prefix == "" && r.scope != "" && name != r.scope && !strings.HasPrefix(name, r.scope+".") {
			continue // another table's (serve.listen: written flat is the scope's, as serve: {listen:} is)
		}
		under := Under(r.table, name)
		if _, nested := yamljson.Unwrap(value).(*ast.MappingNode); nested && under != "" {
			r.tree(name+".", value)
			continue
		}
		p, ok := find(r.table, name)
		if !ok {
			if under != "" {
				r.fail(kv.Value, Root+"."+name, fmt.Errorf("want a mapping of properties (%s)", under))
			} else {
				r.fail(kv.Key, Root+"."+name, fmt.Errorf("unknown property (known: %s)", knownBeside(r.table, name)))
			}
			continue
		}
		if line, twice := r.lines[name]; twice {
			// metrics: {enabled: …} and metrics.enabled: …, or two
			// documents: the file would say two things.
			r.fail(kv.Key, Root+"."+name, fmt.Errorf("set twice, first at line %d", line))
			continue
		}
		r.lines[name] = yamljson.Line(kv.Key)
		raw, err := scalarText(value)
		if err == nil {
			raw, err = expandPlaceholders(raw)
		}
		var v any
		if err == nil {
			v, err = Parse(p.Kind, raw)
		}
		if err != nil {
			r.fail(kv.Value, Root+"."+name, err)
			continue
		}
		r.values[name] = v
	}
}

func find(table []Property, name string) (Property, bool) {
	for _, p := range table {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// knownBeside lists the properties of table in the group of name
// (metrics.enabeld: metrics.enabled), or, for a name outside any group,
// the ungrouped properties and the groups (serve.*), comma-separated.
func knownBeside(table []Property, name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		if under := Under(table, name[:i]); under != "" {
			return under
		}
	}
	var names []string
	for _, p := range table {
		n := p.Name
		if i := strings.IndexByte(n, '.'); i > 0 {
			n = n[:i] + ".*"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Under lists the properties of table under prefix (metrics:
// metrics.enabled), or all of them for "", comma-separated.
func Under(table []Property, prefix string) string {
	var names []string
	for _, p := range table {
		if prefix == "" || strings.HasPrefix(p.Name, prefix+".") {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ", ")
}

// scalarText is the text of a scalar value, read as contracts are read
// (yamljson.Value): a string's content, a number (0x10 is 16) or a boolean.
func scalarText(n ast.Node) (string, error) {
	v, err := yamljson.Value(n)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return string(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	case nil:
		return "", errors.New("needs a value")
	}
	return "", errors.New("want a single value, not a list or a mapping")
}

// resolveAlias is the node an alias (*name) stands for (see
// yamljson.Aliases), or n.
func resolveAlias(n ast.Node, aliases map[*ast.AliasNode]ast.Node) ast.Node {
	for range 8 { // an alias of an anchor on an alias, at most
		al, ok := yamljson.Unwrap(n).(*ast.AliasNode)
		if !ok {
			return n
		}
		target, ok := aliases[al]
		if !ok {
			return n // yamljson.Value reports the alias with no anchor before it
		}
		n = target
	}
	return n
}

// expandPlaceholders replaces ${NAME} and ${NAME:default} from the
// environment. A ${NAME} without a default whose variable is not set is
// an error: a configuration that silently loses its licence key or its
// contracts folder fails at start-up instead.
func expandPlaceholders(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("placeholder %q has no closing }", failure.Clip(s[i:]))
		}
		b.WriteString(s[:i])
		if k := strings.Index(s[i+2:i+j], "${"); k >= 0 {
			// ${A:${B}}: the first } ends A's default, "${B", and a stray }
			// followed A's value; placeholders do not nest.
			return "", fmt.Errorf("placeholder %q holds another: placeholders do not nest", failure.Clip(s[i:i+j+1]))
		}
		name, def, hasDefault := strings.Cut(s[i+2:i+j], ":")
		if name == "" {
			return "", fmt.Errorf("placeholder %q names no variable", failure.Clip(s[i:i+j+1]))
		}
		if v, ok := os.LookupEnv(name); ok {
			b.WriteString(v)
		} else if hasDefault {
			b.WriteString(def)
		} else {
			name = failure.Printable(name)
			return "", fmt.Errorf("placeholder ${%s}: the environment variable %s is not set and there is no default (${%s:default})", name, name, name)
		}
		s = s[i+j+1:]
	}
}

// redactPassword is s with the password of a URL's user part, if any,
// written "xxxxx" as url.URL.Redacted writes it; s need not parse.
func redactPassword(s string) string {
	start := 0
	if i := strings.Index(s, "//"); i >= 0 {
		start = i + 2
	}
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		return s
	}
	colon := strings.IndexByte(s[start:start+at], ':')
	if colon < 0 {
		return s
	}
	return s[:start+colon+1] + "xxxxx" + s[start+at:]
}

// Parse converts a property's text to its kind: bool, int64, string,
// time.Duration or *url.URL.
func Parse(kind Kind, raw string) (any, error) {
	// A message repeats at most failure.MaxEcho bytes of the value: a
	// licence key pasted into the wrong variable is not logged whole.
	echo := failure.Clip(raw)
	switch kind {
	case Bool:
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, not %q", echo)
	case Size:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("want a whole number, 0 or more, not %q", echo)
		}
		return n, nil
	case Depth:
		// Bounded here, where the file's line is known: New refused
		// 20000 later, with no file:line.
		n, err := Parse(Size, raw)
		if err == nil && n.(int64) > jsonbody.MaxDepthLimit {
			return nil, fmt.Errorf("want at most %d, not %q", jsonbody.MaxDepthLimit, echo)
		}
		return n, err
	case Duration:
		s := strings.TrimSpace(raw)
		if s == "0" {
			return time.Duration(0), nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("want a duration such as 30s, 1m or 250ms, 0 or more, not %q", echo)
		}
		return d, nil
	case Address:
		s := strings.TrimSpace(raw)
		if s == "off" {
			return s, nil
		}
		_, port, err := net.SplitHostPort(s)
		if err == nil {
			_, err = strconv.ParseUint(port, 10, 16)
		}
		if err != nil {
			return nil, fmt.Errorf("want host:port (:8080, 127.0.0.1:9090, [::1]:9090) or off, not %q", echo)
		}
		return s, nil
	case Fraction:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return nil, fmt.Errorf("want a number from 0 to 1 (0.1 is one in ten), not %q", echo)
		}
		return f, nil
	case URL:
		s := strings.TrimSpace(raw)
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// A URL refused for its scheme, its host or its syntax may
			// hold a password too (ftp://u:secret@x, http://u:secret@x:8o).
			return nil, fmt.Errorf("want an absolute http:// or https:// URL, not %q", failure.Clip(redactPassword(s)))
		}
		if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			// Nor is a password in it.
			return nil, fmt.Errorf("want a URL without user, query or fragment, not %q", failure.Clip(u.Redacted()))
		}
		// url.Parse checks only that a port is digits: http://x:99999 (or
		// :0) started a proxy that could never connect, every request 502.
		if p := u.Port(); p != "" {
			if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
				return nil, fmt.Errorf("want a port from 1 to 65535, not %q", echo)
			}
		}
		return u, nil
	}
	if kind == Path && strings.TrimSpace(raw) == "" {
		return nil, errors.New("needs a value")
	}
	return raw, nil
}
