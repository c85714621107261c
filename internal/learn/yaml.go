package learn

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The contracts are written by a small YAML emitter of their own, not a
// general one: the output is the same bytes for the same contract, every
// string that YAML could read as anything else is double-quoted, and
// nothing a body sent (a member name, an enum value) can leave its scalar.

// schemaKeyOrder is the order keys of a schema are written in; others
// follow, sorted.
var schemaKeyOrder = []string{"type", "format", "enum", "minimum", "required", "properties", "additionalProperties", "items"}

// appendContract appends a contract's YAML: endpoint, method, schema.
func appendContract(b []byte, l Learned) []byte {
	b = append(b, "endpoint: "...)
	b = appendScalar(b, l.Endpoint)
	b = append(b, "\nmethod: "...)
	b = appendScalar(b, l.Method)
	b = append(b, '\n')
	if l.Schema != nil {
		b = append(b, "schema:"...)
		b = appendValue(b, l.Schema, 1, false)
	}
	return b
}

// appendValue appends v after a key (the ": " or newline is its to write):
// a map as an indented block, a list of scalars as a flow list, a scalar
// on the key's line. properties says v is a properties map, whose keys are
// sorted.
func appendValue(b []byte, v any, depth int, properties bool) []byte {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return append(b, " {}\n"...)
		}
		b = append(b, '\n')
		keys := slices.Sorted(maps.Keys(v))
		if !properties {
			keys = slices.SortedFunc(slices.Values(keys), func(a, c string) int {
				ia, ic := slices.Index(schemaKeyOrder, a), slices.Index(schemaKeyOrder, c)
				switch {
				case ia >= 0 && ic >= 0:
					return ia - ic
				case ia >= 0:
					return -1
				case ic >= 0:
					return 1
				}
				return strings.Compare(a, c)
			})
		}
		for _, k := range keys {
			b = appendIndent(b, depth)
			b = appendScalar(b, k)
			b = append(b, ':')
			b = appendValue(b, v[k], depth+1, !properties && k == "properties")
		}
		return b
	case []any:
		b = append(b, " ["...)
		for i, e := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendScalar(b, e)
		}
		return append(b, "]\n"...)
	default:
		b = append(b, ' ')
		b = appendScalar(b, v)
		return append(b, '\n')
	}
}

func appendIndent(b []byte, depth int) []byte {
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

// appendScalar appends a scalar: a string plain when it can be read only
// as that string, else double-quoted; numbers, booleans and null as such.
func appendScalar(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		if plainSafe(v) {
			return append(b, v...)
		}
		return appendQuoted(b, v)
	case json.Number:
		return append(b, v...)
	case bool:
		return strconv.AppendBool(b, v)
	case nil:
		return append(b, "null"...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	default:
		// Only maps and lists of the shapes above are ever written.
		return appendQuoted(b, fmt.Sprint(v))
	}
}

// plainSafe reports a string YAML reads back, unquoted, as that string in
// every context the emitter writes it (keys, values, flow lists): a letter
// or _ then letters, digits, _ . -, and none of YAML 1.1's booleans and
// nulls.
func plainSafe(s string) bool {
	if s == "" || !(isLower(s[0]) || isUpper(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
		return false
	}
	return true
}

// appendQuoted appends s as a YAML double-quoted scalar: ", \ and every
// character YAML does not allow printed (C0 and C1 controls, DEL, line and
// paragraph separators, BOM, noncharacters) escaped.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case !printable(r):
			b = fmt.Appendf(b, "\\u%04x", r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func printable(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, 0x80 <= r && r <= 0x9f:
		return false
	case r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff, r == utf8.RuneError:
		return false
	}
	return true
}

// commentSafe makes a line of text fit in a # comment: every character
// that could end the line, or that YAML would not print, escaped.
func commentSafe(s string) string {
	ok := true
	for _, r := range s {
		if !printable(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b []byte
	for _, r := range s {
		if !printable(r) {
			b = fmt.Appendf(b, "\\u%04x", r)
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}
