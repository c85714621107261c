package contractguard

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/contractguard/contractguard/internal/failure"
)

// The cg struct tag: comma-separated key=value pairs with the keys cel, msg,
// schema and mode.
//
//	_      struct{} `cg:"cel=data.from != data.to,msg=cannot transfer to the same account"`
//	_      struct{} `cg:"schema=schemas/transfer.json"`
//	_      struct{} `cg:"mode=learn"`
//	Amount float64  `cg:"cel=self <= 10000,msg=at most 10000 per transfer"`
//
// A value runs until the next ",cel=", ",msg=", ",schema=" or ",mode=", so CEL with
// commas needs no quoting (cel=data.items.all(i, i.qty > 0)); or it is
// wrapped in single quotes, a quote inside doubled ('can''t'). Every cel is
// followed by its msg; a tag may hold several such pairs.

// tagRule is one cel/msg pair of a tag.
type tagRule struct {
	expr, msg string
}

// parsedTag is a cg tag.
type parsedTag struct {
	rules  []tagRule
	schema string
	mode   string // "", ModeEnforce or ModeLearn
}

var tagKeys = []string{"cel", "msg", "schema", "mode"}

// parseTag parses the value of a cg tag.
func parseTag(tag string) (parsedTag, error) {
	var p parsedTag
	pairs, err := splitTag(tag)
	if err != nil {
		return p, err
	}
	for i := 0; i < len(pairs); i++ {
		kv := pairs[i]
		switch kv.key {
		case "schema":
			if p.schema != "" {
				return p, errors.New("schema given twice")
			}
			p.schema = kv.value
		case "mode":
			if p.mode != "" {
				return p, errors.New("mode given twice")
			}
			if kv.value != ModeEnforce && kv.value != ModeLearn {
				return p, fmt.Errorf("mode=%s: want enforce or learn", failure.Printable(failure.Clip(kv.value)))
			}
			p.mode = kv.value
		case "msg":
			return p, fmt.Errorf("msg=%s without a cel= before it", failure.Printable(failure.Clip(kv.value)))
		case "cel":
			if i+1 >= len(pairs) || pairs[i+1].key != "msg" {
				return p, fmt.Errorf("cel=%s needs a msg= after it", failure.Printable(failure.Clip(kv.value)))
			}
			p.rules = append(p.rules, tagRule{expr: kv.value, msg: pairs[i+1].value})
			i++
		}
	}
	return p, nil
}

// tagKeyProblem is what keeps reflect's StructTag.Get, which the rules
// (and invopop/jsonschema) read tags by, from reading all of key in a
// struct tag, "" if nothing: key given twice (Get reads the first, and
// go vet says nothing: cg:"cel=self > 0,msg=…" cg:"cel=self <= 100,msg=…"
// ran the first rule alone), or written after where Get stops reading a
// malformed tag (json:"b" cg: "cel=…", json:"b",cg:"…": go vet's
// structtag check, which go test does not run, is all that said so; the
// rules never ran). The tag is read as StructTag.Lookup reads it.
func tagKeyProblem(tag reflect.StructTag, key string) (problem string, twice bool) {
	n := 0
	for tag != "" {
		at := tag // the rest, from the pair read next
		i := 0
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		tag = tag[i:]
		if tag == "" {
			break
		}
		i = 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			return stopsBefore(at, key), false
		}
		name := string(tag[:i])
		tag = tag[i+1:]
		i = 1
		for i < len(tag) && tag[i] != '"' {
			if tag[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(tag) {
			return stopsBefore(at, key), false
		}
		qvalue := string(tag[:i+1])
		tag = tag[i+1:]
		if name != key {
			if p := len(name) - len(key) - 1; p >= 0 && strings.HasSuffix(name, key) && !isKeyByte(name[p]) {
				// json:"b",cg:"…": Lookup reads the key ",cg".
				return fmt.Sprintf("%s tag not read: Go's reflect reads the key %q (pairs are key:\"value\", separated by spaces)", key, name), false
			}
			continue
		}
		if _, err := strconv.Unquote(qvalue); err != nil {
			return stopsBefore(at, key), false // where Lookup stops
		}
		if n++; n > 1 {
			return key + " tag given twice in the field's tag, of which Go's reflect reads only the first", true
		}
	}
	return "", false
}

// isKeyByte reports whether c may be part of a struct tag key as keys
// are written (json, cg, jsonschema_extras).
func isKeyByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// stopsBefore is tagKeyProblem's message for a tag that reflect stops
// reading at rest, when key is written there: followed by its colon, or
// by "=" in its place (cg="cel=…", the pairs' own syntax).
func stopsBefore(rest reflect.StructTag, key string) string {
	if !slices.ContainsFunc([]string{":", " :", "=", " ="}, func(sep string) bool { return strings.Contains(string(rest), key+sep) }) {
		return ""
	}
	return fmt.Sprintf("%s tag not read: Go's reflect stops reading the field's tag at %s (pairs are key:\"value\", separated by spaces)",
		key, failure.Clip(strconv.Quote(strings.TrimLeft(string(rest), " "))))
}

// cgTagProblem is the error of a field whose struct tag holds cg where
// reflect does not read it all (tagKeyProblem), nil if none.
func cgTagProblem(tag reflect.StructTag) error {
	switch problem, twice := tagKeyProblem(tag, "cg"); {
	case problem == "":
		return nil
	case twice:
		return errors.New(problem + ": write all the pairs in one cg tag (cel=…,msg=…,cel=…,msg=…)")
	default:
		return errors.New(problem)
	}
}

type tagPair struct{ key, value string }

func splitTag(tag string) ([]tagPair, error) {
	if strings.TrimSpace(tag) == "" {
		return nil, errors.New("empty tag")
	}
	var pairs []tagPair
	rest := tag
	for {
		key, after, ok := strings.Cut(rest, "=")
		if k := strings.TrimSpace(key); ok && k != key && isTagKey(k) {
			return nil, fmt.Errorf("key %q: a key is written with no space around it (%s=)", key, k)
		}
		if !ok || !isTagKey(key) {
			return nil, fmt.Errorf("unknown key %q (want cel, msg, schema or mode)", failure.Clip(strings.TrimSpace(key)))
		}
		var value string
		if strings.HasPrefix(after, "'") {
			v, n, err := quotedValue(after)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			value, rest = v, after[n:]
			if rest != "" {
				next, ok := strings.CutPrefix(rest, ",")
				if !ok || !startsWithKey(next) {
					return nil, fmt.Errorf("%s: text after the closing quote", key)
				}
				rest = next
			}
		} else {
			end := nextKey(after)
			value = after
			rest = ""
			if end >= 0 {
				value, rest = after[:end], after[end+1:]
			}
			if k := spacedKey(value); k != "" {
				return nil, fmt.Errorf("%s=%s: \"%s=\" after a comma and a space is part of the value (a key starts right after its comma): write \",%s=\", or quote the value ('…')",
					key, failure.Clip(value), k, k)
			}
			if k := otherCaseKey(value); k != "" {
				return nil, fmt.Errorf("%s=%s: \"%s=\" after a comma is no key (keys are lower case): write \",%s=\", or quote the value ('…')",
					key, failure.Clip(value), k, strings.ToLower(k))
			}
		}
		if strings.TrimSpace(value) == "" {
			return nil, fmt.Errorf("%s: empty value", key)
		}
		pairs = append(pairs, tagPair{key, value})
		if rest == "" {
			return pairs, nil
		}
	}
}

func isTagKey(k string) bool {
	for _, t := range tagKeys {
		if k == t {
			return true
		}
	}
	return false
}

// nextKey is the index of the comma that starts the next ",key=", or -1.
func nextKey(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && startsWithKey(s[i+1:]) {
			return i
		}
	}
	return -1
}

// spacedKey is the key that follows a comma and white space in an
// unquoted value ("x, msg=y"): to a reader the start of a pair, which
// the grammar makes part of the value, so that a schema= or mode= would
// be dropped into a message without a word. "" if there is none.
func spacedKey(value string) string {
	for i := 0; i < len(value); i++ {
		if value[i] != ',' {
			continue
		}
		next := value[i+1:]
		if trimmed := strings.TrimLeft(next, " \t"); trimmed != next {
			for _, k := range tagKeys {
				if strings.HasPrefix(trimmed, k+"=") {
					return k
				}
			}
		}
	}
	return ""
}

// otherCaseKey is a key in another letter case that follows a comma (and
// perhaps white space) in an unquoted value ("x,Schema=t.json"): refused
// at the start of a tag as unknown, it was part of the value after a
// comma, so that the schema file or learning mode it meant was dropped
// into a message without a word. "==" is no key's "=". "" if there is
// none.
func otherCaseKey(value string) string {
	for i := 0; i < len(value); i++ {
		if value[i] != ',' {
			continue
		}
		next := strings.TrimLeft(value[i+1:], " \t")
		for _, k := range tagKeys {
			if len(next) > len(k) && next[len(k)] == '=' && !strings.HasPrefix(next[len(k)+1:], "=") &&
				strings.EqualFold(next[:len(k)], k) && next[:len(k)] != k {
				return next[:len(k)]
			}
		}
	}
	return ""
}

func startsWithKey(s string) bool {
	for _, k := range tagKeys {
		if strings.HasPrefix(s, k+"=") {
			return true
		}
	}
	return false
}

// quotedValue reads a single-quoted value at the start of s (” is a
// quote) and returns it and the bytes it took.
func quotedValue(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, nil
	}
	return "", 0, errors.New("unterminated quote")
}
