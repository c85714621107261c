package schema

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractguard/contractguard/internal/scan"
)

// ScanKeyword is the annotation that takes a value out of the
// vulnerability scan: x-contractguard-scan: false on the schema of a
// property (or of items, or of the whole body) for fields that
// legitimately hold code or markup.
const ScanKeyword = "x-contractguard-scan"

// scanVocab compiles the annotation, so that a typo in its value (a
// string, a number) fails at load like any schema error. It asserts
// nothing about bodies.
var scanVocab = &jsonschema.Vocabulary{
	URL: "urn:contractguard:vocab:scan",
	Compile: func(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
		v, ok := obj[ScanKeyword]
		if !ok {
			return nil, nil
		}
		on, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s must be true or false, not %v", ScanKeyword, v)
		}
		return scanAnnotation{on: on}, nil
	},
}

type scanAnnotation struct{ on bool }

func (scanAnnotation) Validate(*jsonschema.ValidatorContext, any) {}

// ScanSkip is what the schema takes out of the vulnerability scan: nil
// when it has no x-contractguard-scan: false anywhere. It follows
// properties, additionalProperties (without patternProperties), items,
// $ref and allOf. Below the first level of a recursive schema, where a
// $ref comes back to a schema being read, nothing is skipped: scanned.
func (s *Schema) ScanSkip() *scan.Skip {
	return skipOf(s.s, map[*jsonschema.Schema]bool{})
}

func skipOf(sch *jsonschema.Schema, visiting map[*jsonschema.Schema]bool) *scan.Skip {
	if sch == nil || visiting[sch] {
		return nil
	}
	for _, e := range sch.Extensions {
		if a, ok := e.(scanAnnotation); ok && !a.on {
			return &scan.Skip{Off: true}
		}
	}
	visiting[sch] = true
	defer delete(visiting, sch)
	var out *scan.Skip
	add := func(o *scan.Skip) { out = unionSkip(out, o) }
	for name, p := range sch.Properties {
		if c := skipOf(p, visiting); c != nil {
			if out == nil {
				out = &scan.Skip{Props: map[string]*scan.Skip{}}
			}
			out.Props[name] = c
		}
	}
	if it, ok := sch.Items.(*jsonschema.Schema); ok {
		if c := skipOf(it, visiting); c != nil {
			add(&scan.Skip{Items: c})
		}
	}
	if c := skipOf(sch.Items2020, visiting); c != nil {
		add(&scan.Skip{Items: c})
	}
	if a, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok && len(sch.PatternProperties) == 0 {
		// (A name that matches a pattern is not additional; with patterns
		// the opt-out is not followed: scanned, not skipped.)
		if c := skipOf(a, visiting); c != nil {
			// Declared properties are not additional: listed, as scanned.
			declared := &scan.Skip{Props: map[string]*scan.Skip{}, Additional: c}
			for name := range sch.Properties {
				declared.Props[name] = nil
			}
			add(declared)
		}
	}
	add(skipOf(sch.Ref, visiting))
	for _, a := range sch.AllOf {
		add(skipOf(a, visiting))
	}
	return out
}

// unionSkip is what either a or b takes out of the scan.
func unionSkip(a, b *scan.Skip) *scan.Skip {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Off || b.Off:
		return &scan.Skip{Off: true}
	}
	u := &scan.Skip{Items: unionSkip(a.Items, b.Items), Additional: unionSkip(a.Additional, b.Additional)}
	for _, m := range []map[string]*scan.Skip{a.Props, b.Props} {
		for name := range m {
			if u.Props == nil {
				u.Props = map[string]*scan.Skip{}
			}
			// A name one side does not list is additional to it.
			u.Props[name] = unionSkip(a.Member(name), b.Member(name))
		}
	}
	return u
}
