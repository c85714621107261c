package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
)

// A member whose name is not one of the names a schema declares but
// equals one of them under Unicode simple case folding ("Role" for "role",
// "\u212aey" for "key") fails: encoding/json fills the property's struct
// field from it, which the schema never checked. (Two such members in one
// object the parser refuses.) Where additionalProperties: false refuses
// the member, its "is not allowed" is the one failure.
//
// The names a schema declares (foldNames) are its properties' and its
// dependencies', and those of every schema it applies to the same value
// where a failure may let the value pass (not, if, oneOf: a failing not
// passes), all the way down in place, their required names included: the
// member fails at the schema that applies them. Where a
// failure only fails (allOf, anyOf, then, else, dependencies, $ref), the
// schema inside checks its own names, and its failure is the value's.
//
// Both engines check it: the fast path in nativeRun.object, for a member
// not found among the names; the library by this vocabulary's keyword,
// which the compiler adds to every schema that may declare names.
var foldVocab = &jsonschema.Vocabulary{
	URL: "urn:contractguard:vocab:fold",
	Compile: func(ctx *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
		for _, k := range foldKeywords {
			if _, ok := obj[k]; ok {
				return &foldCheck{self: ctx.Enqueue(nil)}, nil
			}
		}
		return nil, nil
	},
}

// foldKeywords are those that lead to names foldNames takes.
var foldKeywords = [...]string{"properties", "not", "if", "oneOf", "dependencies", "dependentRequired", "dependentSchemas"}

// foldNames are the names s checks members' letter case against (see
// foldVocab), sorted; nil for none: those of its properties and of its
// dependencies (a member of the name brings more checks), and under not,
// if and oneOf also those it requires (there a missing name can let the
// value pass: if: {required: [role]} takes the else branch for "Role").
func foldNames(s *jsonschema.Schema) []string {
	if refOnly(s) || underFlip(s.Location) {
		return nil
	}
	if s.Not == nil && s.If == nil && len(s.OneOf) == 0 && !hasDependencies(s) { // the common case: at most properties
		if len(s.Properties) == 0 {
			return nil
		}
		return slices.Sorted(maps.Keys(s.Properties))
	}
	set := map[string]bool{}
	declared(s, set)
	seen := map[*jsonschema.Schema]bool{}
	var all func(c *jsonschema.Schema)
	all = func(c *jsonschema.Schema) {
		if seen[c] {
			return
		}
		seen[c] = true
		if !refOnly(c) {
			declared(c, set)
			for _, k := range c.Required {
				set[k] = true
			}
		}
		for _, d := range sameValue(c) {
			all(d)
		}
	}
	cond := []*jsonschema.Schema{s.Not, s.If}
	cond = append(cond, s.OneOf...)
	for _, c := range cond {
		if c != nil {
			all(c)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

func hasDependencies(s *jsonschema.Schema) bool {
	return len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0
}

// declared adds to set the names of s's properties and dependencies.
func declared(s *jsonschema.Schema, set map[string]bool) {
	for k := range s.Properties {
		set[k] = true
	}
	for k := range s.Dependencies {
		set[k] = true
	}
	for k := range s.DependentRequired {
		set[k] = true
	}
	for k := range s.DependentSchemas {
		set[k] = true
	}
}

// foldSet is what a schema checks letter case by: its declared names, and
// each fold key's name (the first in sorted order where several share one).
type foldSet struct {
	exact    map[string]bool
	folds    map[string]string
	maxRunes int // the most runes of a name: EqualFold matches rune by rune
}

func newFoldSet(names []string) *foldSet {
	if len(names) == 0 {
		return nil
	}
	f := &foldSet{exact: make(map[string]bool, len(names)), folds: make(map[string]string, len(names))}
	for _, name := range names { // sorted
		f.exact[name] = true
		f.maxRunes = max(f.maxRunes, utf8.RuneCountInString(name))
		k := jsonbody.FoldKey(name)
		if _, ok := f.folds[k]; !ok {
			f.folds[k] = name
		}
	}
	return f
}

// find reports the declared name the member name equals under Unicode
// simple folding, with buf (grown) holding its fold key. A name of more
// runes than any declared one equals none: it is not folded, so that a
// long name costs one count of its runes, not a fold of each (about 20 ns
// a rune outside ASCII) at every schema that declares names.
func (f *foldSet) find(buf []byte, name string) ([]byte, string, bool) {
	if len(name) > utf8.UTFMax*f.maxRunes || utf8.RuneCountInString(name) > f.maxRunes {
		return buf[:0], "", false
	}
	buf = jsonbody.AppendFoldKey(buf[:0], name)
	prop, ok := f.folds[string(buf)]
	return buf, prop, ok
}

// msgFoldCase is the failure of a member that differs from the declared
// property prop only in letter case.
func msgFoldCase(prop string) string {
	return fmt.Sprintf("is not allowed: it differs only in letter case from the property %q, whose field encoding/json would fill from it", failure.Clip(prop))
}

// foldCheck is the library's side of the check. Its names are found at
// the first validation, when every schema it may lead to is compiled.
type foldCheck struct {
	self *jsonschema.Schema
	once sync.Once
	set  *foldSet
}

func (f *foldCheck) Validate(ctx *jsonschema.ValidatorContext, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	f.once.Do(func() { f.set = newFoldSet(foldNames(f.self)) })
	if f.set == nil {
		return
	}
	var a [64]byte
	for name := range obj {
		if f.set.exact[name] {
			continue
		}
		var prop string
		var ok bool
		if _, prop, ok = f.set.find(a[:0], name); !ok || f.refusedAnyway(name) {
			continue
		}
		ctx.AddError(&foldKind{AdditionalProperties: kind.AdditionalProperties{Properties: []string{name}}, name: name, prop: prop})
	}
}

// refusedAnyway reports whether additionalProperties: false refuses the
// member name: no property or pattern takes it.
func (f *foldCheck) refusedAnyway(name string) bool {
	if a, ok := f.self.AdditionalProperties.(bool); !ok || a {
		return false
	}
	if _, ok := f.self.Properties[name]; ok {
		return false
	}
	for re := range f.self.PatternProperties {
		if re.MatchString(name) {
			return false
		}
	}
	return true
}

// foldKind is foldCheck's error (an additional property, to the library's
// own formatting).
type foldKind struct {
	kind.AdditionalProperties
	name, prop string
}

// underFlip reports whether the schema at loc is written inside a not, an
// if or a oneOf (found by review: there its own letter-case failure made
// not pass, if take its else branch, and oneOf count one match fewer, so
// that not: {properties: {user: {properties: {role: {const: admin}}}}}
// took {"user":{"Role":"admin"}}, which it refused before the check
// existed). Such a schema checks no letter case itself; the names it
// declares at the value it applies to are the enclosing schema's
// (foldNames). A schema a $ref there leads to is written elsewhere, and
// checks its own (docs/security.md says so).
func underFlip(loc string) bool {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return false
	}
	segs := strings.Split(strings.TrimPrefix(frag, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas":
			i++ // the name after it
		case "not", "if", "oneOf":
			return true
		}
	}
	return false
}
