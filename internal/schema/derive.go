package schema

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/shape"
)

// The two things a compiled schema says about a body that the guard reads
// outside validation, derived once when the schema compiles: how CEL
// reads its numbers, and what the vulnerability scan leaves out.

// numbersOf derives how the numbers of a body read in CEL. It follows $ref
// (whose siblings draft-07 ignores) and merges the properties of allOf
// branches, the first branch to name a property winning.
func numbersOf(s *jsonschema.Schema) *shape.Numbers {
	if s == nil {
		return nil
	}
	return numbersIn(s, map[*jsonschema.Schema]*shape.Numbers{})
}

func numbersIn(s *jsonschema.Schema, seen map[*jsonschema.Schema]*shape.Numbers) *shape.Numbers {
	if s == nil {
		return nil
	}
	if sh, ok := seen[s]; ok {
		return sh // a recursive schema: the node being built
	}
	at := s
	if s = Deref(s); seen[s] != nil {
		seen[at] = seen[s] // another $ref to a schema already met
		return seen[s]
	}
	sh := &shape.Numbers{}
	seen[at], seen[s] = sh, sh
	if s.Types != nil {
		switch types := s.Types.ToStrings(); {
		case slices.Contains(types, "number"):
			sh.Num = shape.NumDouble
		case slices.Contains(types, "integer"):
			sh.Num = shape.NumInt
		}
	}
	merge := func(from *jsonschema.Schema) {
		from = Deref(from)
		for name, p := range from.Properties {
			if sh.Props == nil {
				sh.Props = map[string]*shape.Numbers{}
			}
			if _, dup := sh.Props[name]; !dup {
				sh.Props[name] = numbersIn(p, seen)
			}
		}
		for _, re := range SortedPatterns(from.PatternProperties) {
			sh.Patterns = append(sh.Patterns, shape.Pattern{Re: re, N: numbersIn(from.PatternProperties[re], seen)})
		}
		if a, ok := from.AdditionalProperties.(*jsonschema.Schema); ok && sh.Additional == nil {
			sh.Additional = numbersIn(a, seen)
		}
		if it := ItemsOf(from); it != nil && sh.Items == nil {
			sh.Items = numbersIn(it, seen)
		}
	}
	merge(s)
	for _, a := range s.AllOf {
		merge(a)
	}
	sh.IndexProps()
	return sh
}

// SortedPatterns are the patterns of patternProperties in the order of
// their sources: the same on every load, for a member two patterns match.
func SortedPatterns(pp map[jsonschema.Regexp]*jsonschema.Schema) []jsonschema.Regexp {
	if len(pp) == 0 {
		return nil
	}
	return slices.SortedFunc(maps.Keys(pp), func(a, b jsonschema.Regexp) int { return strings.Compare(a.String(), b.String()) })
}

// Deref follows a draft-07 $ref, whose siblings are ignored: the schema
// that describes a value where s stands. A $ref of a later draft applies
// beside its siblings: it is followed where they say nothing of the
// value's shape (the usual {$ref: '#/$defs/order', $defs: …} of a
// 2020-12 root), and every value s accepts its target accepts.
func Deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s.Ref != nil && (s.DraftVersion < 2019 || !shapes(s)) && i < 100; i++ {
		s = s.Ref
	}
	return s
}

// shapes reports whether s has a keyword of its own that the readers of
// Deref's schemas read (the CEL types and numbers, the sizes of cost
// estimates): a later draft's $ref is followed only without one.
func shapes(s *jsonschema.Schema) bool {
	return s.Bool != nil || s.Types != nil || s.Enum != nil || s.Const != nil || s.Not != nil ||
		len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.If != nil ||
		s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.MaxProperties != nil || s.MinProperties != nil || len(s.Required) > 0 ||
		len(s.Properties) > 0 || len(s.PatternProperties) > 0 || s.AdditionalProperties != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.Items != nil || len(s.PrefixItems) > 0 || s.Items2020 != nil ||
		s.MinLength != nil || s.MaxLength != nil
}

// ItemsOf is the schema of every element of an array: items in draft-07,
// items in 2020-12 when it has no prefixItems (beside prefixItems it
// describes only the elements after theirs); nil for none or a tuple.
func ItemsOf(s *jsonschema.Schema) *jsonschema.Schema {
	if it, ok := s.Items.(*jsonschema.Schema); ok {
		return it
	}
	if len(s.PrefixItems) > 0 {
		return nil
	}
	return s.Items2020
}

// skipOf derives what the schema takes out of the vulnerability scan: nil
// when it has no x-contractguard-scan: false anywhere. It follows
// properties, additionalProperties (without patternProperties), items
// (a schema of every element: not beside prefixItems), $ref and allOf,
// taking the union of what each takes out. Below the first level of a
// recursive schema, where a $ref comes back to a schema being read,
// nothing is skipped: scanned.
//
// It reads each path to an opt-out that comes back to no schema on it,
// and no other: a schema of many definitions that refer to one another
// has exponentially many such paths, of which it reads maxSkipReads
// schemas at most, and is refused beyond.
func skipOf(sch *jsonschema.Schema) (*shape.Skip, error) {
	r := skipReader{reaches: reachesOptOut(sch), left: maxSkipReads}
	skip := r.skipOf(sch, map[*jsonschema.Schema]bool{})
	if r.left < 0 {
		return nil, errSkipPaths
	}
	return skip, nil
}

// maxSkipReads bounds the schemas skipOf reads, counted along each path.
const maxSkipReads = 100_000

var errSkipPaths = errors.New("x-contractguard-scan: false: its definitions refer to one another in too many ways (over 100,000 paths) to find the values it takes out of the scan: put it on fewer of them")

type skipReader struct {
	reaches map[*jsonschema.Schema]bool // schemas from which an opt-out can be reached
	left    int                         // reads left; below 0, too many
}

// skipEdges calls f with each schema skipOf follows from sch.
func skipEdges(sch *jsonschema.Schema, f func(*jsonschema.Schema)) {
	for _, p := range sch.Properties {
		f(p)
	}
	f(ItemsOf(sch))
	if a, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok && len(sch.PatternProperties) == 0 {
		f(a)
	}
	f(sch.Ref)
	for _, a := range sch.AllOf {
		f(a)
	}
}

func optedOut(sch *jsonschema.Schema) bool {
	for _, e := range sch.Extensions {
		if a, ok := e.(scanAnnotation); ok && !a.on {
			return true
		}
	}
	return false
}

// reachesOptOut is the set of schemas under sch (sch included) from which
// skipOf's edges lead to an x-contractguard-scan: false.
func reachesOptOut(sch *jsonschema.Schema) map[*jsonschema.Schema]bool {
	from := map[*jsonschema.Schema][]*jsonschema.Schema{} // reversed edges
	seen := map[*jsonschema.Schema]bool{}
	var marked []*jsonschema.Schema
	for stack := []*jsonschema.Schema{sch}; len(stack) > 0; {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		if optedOut(s) {
			marked = append(marked, s)
			continue // skipOf stops there
		}
		skipEdges(s, func(c *jsonschema.Schema) {
			if c != nil {
				from[c] = append(from[c], s)
				stack = append(stack, c)
			}
		})
	}
	reaches := map[*jsonschema.Schema]bool{}
	for len(marked) > 0 {
		s := marked[len(marked)-1]
		marked = marked[:len(marked)-1]
		if reaches[s] {
			continue
		}
		reaches[s] = true
		marked = append(marked, from[s]...)
	}
	return reaches
}

func (r *skipReader) skipOf(sch *jsonschema.Schema, visiting map[*jsonschema.Schema]bool) *shape.Skip {
	if sch == nil || visiting[sch] || !r.reaches[sch] || r.left < 0 {
		return nil
	}
	if r.left--; r.left < 0 {
		return nil
	}
	if optedOut(sch) {
		return &shape.Skip{Off: true}
	}
	visiting[sch] = true
	defer delete(visiting, sch)
	var out *shape.Skip
	add := func(o *shape.Skip) { out = unionSkip(out, o) }
	for name, p := range sch.Properties {
		if c := r.skipOf(p, visiting); c != nil {
			if out == nil {
				out = &shape.Skip{Props: map[string]*shape.Skip{}}
			}
			out.Props[name] = c
		}
	}
	if c := r.skipOf(ItemsOf(sch), visiting); c != nil {
		add(&shape.Skip{Items: c})
	}
	if a, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok && len(sch.PatternProperties) == 0 {
		// (A name that matches a pattern is not additional; with patterns
		// the opt-out is not followed: scanned, not skipped.)
		if c := r.skipOf(a, visiting); c != nil {
			// Declared properties are not additional: listed, as scanned.
			declared := &shape.Skip{Props: map[string]*shape.Skip{}, Additional: c}
			for name := range sch.Properties {
				declared.Props[name] = nil
			}
			add(declared)
		}
	}
	add(r.skipOf(sch.Ref, visiting))
	for _, a := range sch.AllOf {
		add(r.skipOf(a, visiting))
	}
	return out
}

// unionSkip is what either a or b takes out of the scan.
func unionSkip(a, b *shape.Skip) *shape.Skip {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Off || b.Off:
		return &shape.Skip{Off: true}
	}
	u := &shape.Skip{Items: unionSkip(a.Items, b.Items), Additional: unionSkip(a.Additional, b.Additional)}
	for _, m := range []map[string]*shape.Skip{a.Props, b.Props} {
		for name := range m {
			if u.Props == nil {
				u.Props = map[string]*shape.Skip{}
			}
			// A name one side does not list is additional to it.
			u.Props[name] = unionSkip(a.Member(name), b.Member(name))
		}
	}
	return u
}
