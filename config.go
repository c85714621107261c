package contractguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/contractguard/contractguard/internal/yamljson"
)

// A configuration property: its name under contractguard:, its kind, and
// where it goes in Options.
type configProperty struct {
	name string
	kind configKind
	set  func(o *Options, v any)
}

type configKind int

const (
	boolProperty configKind = iota // true or false
	sizeProperty                   // a whole number, 0 or more
	textProperty                   // a string; empty is the same as none
	pathProperty                   // a folder; relative to the configuration file
)

// configProperties are the properties of the contractguard: tree, the
// Spring starter's and the Go library's own. Each can also be set by the
// environment variable envName(name), which wins over the file.
var configProperties = []configProperty{
	{"enabled", boolProperty, func(o *Options, v any) { o.Disabled = !v.(bool) }},
	{"contracts-dir", pathProperty, func(o *Options, v any) { o.ContractsDir = v.(string) }},
	{"vulnerability-scan", boolProperty, func(o *Options, v any) { o.VulnerabilityScan = v.(bool) }},
	{"license-key", textProperty, func(o *Options, v any) { o.LicenseKey = v.(string) }},
	{"learning-mode", boolProperty, func(o *Options, v any) { o.LearningMode = v.(bool) }},
	{"sink-protection", boolProperty, func(o *Options, v any) { o.SinkProtection = v.(bool) }},
	{"metrics.enabled", boolProperty, func(o *Options, v any) { o.Metrics = v.(bool) }},
	{"max-body-bytes", sizeProperty, func(o *Options, v any) { o.MaxBodyBytes = v.(int64) }},
	{"require-contract", boolProperty, func(o *Options, v any) { o.RequireContract = v.(bool) }},
	{"max-depth", sizeProperty, func(o *Options, v any) { o.MaxDepth = int(v.(int64)) }},
}

// envName is the environment variable of a property:
// metrics.enabled is CONTRACTGUARD_METRICS_ENABLED.
func envName(property string) string {
	return "CONTRACTGUARD_" + strings.ToUpper(envSeparators.Replace(property))
}

var envSeparators = strings.NewReplacer(".", "_", "-", "_")

// ConfigError is a problem with the configuration: a property that does
// not exist or has a value of the wrong kind, a placeholder with no value,
// a file that cannot be read. Where is "file:line" or the environment
// variable.
type ConfigError struct {
	Where    string
	Property string // contractguard.max-body-bytes; "" when the problem is the file
	Err      error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.Where)
	if e.Property != "" {
		b.WriteString(": " + e.Property)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads the contractguard: tree of a YAML (or JSON) file into
// Options, as the Spring starter reads its properties:
//
//	contractguard:
//	  enabled: true                    # false: Middleware and Handle pass everything through
//	  contracts-dir: ./contracts/      # relative to this file
//	  vulnerability-scan: true
//	  license-key: ${CONTRACTGUARD_LICENSE_KEY:}   # empty when unset
//	  learning-mode: false
//	  sink-protection: false
//	  metrics:
//	    enabled: true
//	  max-body-bytes: 1048576
//	  require-contract: false
//	  max-depth: 64
//
// ${NAME} and ${NAME:default} in a value are replaced from the
// environment; every property can also be set by an environment variable
// (CONTRACTGUARD_CONTRACTS_DIR, CONTRACTGUARD_METRICS_ENABLED, …), which
// wins over the file. Keys outside contractguard: are left alone (the file
// may be an application's whole configuration); an unknown key inside it,
// a value of the wrong kind, or a placeholder without a value is an error,
// a [*ConfigError] naming the file, line and property. Every problem is
// reported, joined with errors.Join. The Options returned are ready for
// [New]; set Logger, User and the like on them first.
func LoadConfig(path string) (Options, error) {
	var o Options
	src, err := os.ReadFile(path)
	if err != nil {
		return o, &ConfigError{Where: path, Err: err}
	}
	var errs []error
	values, err := readConfigFile(path, src, &errs)
	if err != nil {
		return o, err
	}
	for _, p := range configProperties {
		v, ok := values[p.name]
		if !ok {
			continue
		}
		if p.kind == pathProperty && !filepath.IsAbs(v.(string)) {
			v = filepath.Join(filepath.Dir(path), v.(string))
		}
		p.set(&o, v)
	}
	errs = append(errs, applyEnv(&o)...)
	return o, errors.Join(errs...)
}

// ConfigFromEnv is [LoadConfig] without a file: Options from the
// CONTRACTGUARD_… environment variables alone. A relative
// CONTRACTGUARD_CONTRACTS_DIR is relative to the working directory.
func ConfigFromEnv() (Options, error) {
	var o Options
	return o, errors.Join(applyEnv(&o)...)
}

// applyEnv sets the properties whose environment variables are set.
func applyEnv(o *Options) []error {
	var errs []error
	for _, p := range configProperties {
		raw, ok := os.LookupEnv(envName(p.name))
		if !ok {
			continue
		}
		v, err := parseProperty(p.kind, raw)
		if err != nil {
			errs = append(errs, &ConfigError{Where: "environment " + envName(p.name), Property: "contractguard." + p.name, Err: err})
			continue
		}
		p.set(o, v)
	}
	return errs
}

// readConfigFile returns the properties of the file's contractguard: tree
// by name (metrics.enabled), converted to their kinds. A file that does not
// parse is returned as the error; problems with properties are appended to
// errs.
func readConfigFile(path string, src []byte, errs *[]error) (map[string]any, error) {
	docs, err := yamljson.Parse(src)
	if err != nil {
		where := path
		line, err := yamljson.Split(err, 0)
		if line > 0 {
			where = fmt.Sprintf("%s:%d", path, line)
		}
		return nil, &ConfigError{Where: where, Err: err}
	}
	values := map[string]any{}
	for _, d := range docs {
		top, ok := yamljson.Unwrap(d.Body).(*ast.MappingNode)
		if !ok {
			return nil, &ConfigError{Where: fmt.Sprintf("%s:%d", path, d.Line), Err: errors.New("a configuration file is a mapping with a contractguard: key")}
		}
		for _, kv := range top.Values {
			if k, _ := yamljson.Key(kv.Key); k != "contractguard" {
				continue // another component's configuration
			}
			aliases := yamljson.Aliases(d.Body)
			readConfigTree(path, "", resolveAlias(kv.Value, aliases), aliases, values, errs)
		}
	}
	return values, nil
}

// readConfigTree reads the properties of the mapping n, named under
// prefix (empty for the contractguard: mapping itself), into values.
func readConfigTree(path, prefix string, n ast.Node, aliases map[*ast.AliasNode]ast.Node, values map[string]any, errs *[]error) {
	// fail adds a problem at n, or at the line a YAML error names.
	fail := func(n ast.Node, property string, err error) {
		line, err := yamljson.Split(err, yamljson.Line(n))
		*errs = append(*errs, &ConfigError{Where: fmt.Sprintf("%s:%d", path, line), Property: property, Err: err})
	}
	m, ok := yamljson.Unwrap(n).(*ast.MappingNode)
	if !ok {
		if _, null := yamljson.Unwrap(n).(*ast.NullNode); !null { // null: contractguard: with nothing under it
			fail(n, "contractguard", errors.New("want a mapping of properties")) // nested groups are read only when mappings
		}
		return
	}
	for _, kv := range m.Values {
		value := resolveAlias(kv.Value, aliases)
		k, err := yamljson.Key(kv.Key)
		if err != nil {
			fail(kv.Key, "", err)
			continue
		}
		name := prefix + k
		under := propertiesUnder(name)
		if _, nested := yamljson.Unwrap(value).(*ast.MappingNode); nested && under != "" {
			readConfigTree(path, name+".", value, aliases, values, errs)
			continue
		}
		p, ok := findProperty(name)
		if !ok {
			if under != "" {
				fail(kv.Value, "contractguard."+name, fmt.Errorf("want a mapping of properties (%s)", under))
			} else {
				fail(kv.Key, "contractguard."+name, fmt.Errorf("unknown property (known: %s)", propertiesUnder("")))
			}
			continue
		}
		raw, err := scalarText(value)
		if err == nil {
			raw, err = expandPlaceholders(raw)
		}
		var v any
		if err == nil {
			v, err = parseProperty(p.kind, raw)
		}
		if err != nil {
			fail(kv.Value, "contractguard."+name, err)
			continue
		}
		values[name] = v
	}
}

func findProperty(name string) (configProperty, bool) {
	for _, p := range configProperties {
		if p.name == name {
			return p, true
		}
	}
	return configProperty{}, false
}

// propertiesUnder lists the properties under prefix (metrics: metrics.enabled),
// or all of them for "".
func propertiesUnder(prefix string) string {
	var names []string
	for _, p := range configProperties {
		if prefix == "" || strings.HasPrefix(p.name, prefix+".") {
			names = append(names, p.name)
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
			return "", fmt.Errorf("placeholder %q has no closing }", s[i:])
		}
		b.WriteString(s[:i])
		name, def, hasDefault := strings.Cut(s[i+2:i+j], ":")
		if name == "" {
			return "", fmt.Errorf("placeholder %q names no variable", s[i:i+j+1])
		}
		if v, ok := os.LookupEnv(name); ok {
			b.WriteString(v)
		} else if hasDefault {
			b.WriteString(def)
		} else {
			return "", fmt.Errorf("placeholder ${%s}: the environment variable %s is not set and there is no default (${%s:default})", name, name, name)
		}
		s = s[i+j+1:]
	}
}

// parseProperty converts a property's text to its kind.
func parseProperty(kind configKind, raw string) (any, error) {
	switch kind {
	case boolProperty:
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, not %q", raw)
	case sizeProperty:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("want a whole number, 0 or more, not %q", raw)
		}
		return n, nil
	}
	if kind == pathProperty && strings.TrimSpace(raw) == "" {
		return nil, errors.New("needs a value")
	}
	return raw, nil
}
