package expr

import "github.com/santhosh-tekuri/jsonschema/v6"

// NumKind is how a JSON number at some place in a body becomes a CEL value.
type NumKind uint8

const (
	// NumAuto: an int when the number is integral and fits, else a double.
	NumAuto NumKind = iota
	// NumInt: the schema says integer.
	NumInt
	// NumDouble: the schema says number.
	NumDouble
)

// Shape is what a schema says about the numbers in a body, place by place.
// A nil *Shape knows nothing: every number there is NumAuto.
type Shape struct {
	Num        NumKind
	Props      map[string]*Shape
	Additional *Shape
	Items      *Shape
}

func (s *Shape) num() NumKind {
	if s == nil {
		return NumAuto
	}
	return s.Num
}

func (s *Shape) prop(name string) *Shape {
	if s == nil {
		return nil
	}
	if p, ok := s.Props[name]; ok {
		return p
	}
	return s.Additional
}

func (s *Shape) items() *Shape {
	if s == nil {
		return nil
	}
	return s.Items
}

// ShapeOf derives the shape of a compiled schema. It follows $ref (whose
// siblings draft-07 ignores) and merges the properties of allOf branches.
func ShapeOf(s *jsonschema.Schema) *Shape {
	if s == nil {
		return nil
	}
	return shapeOf(s, map[*jsonschema.Schema]*Shape{})
}

func shapeOf(s *jsonschema.Schema, seen map[*jsonschema.Schema]*Shape) *Shape {
	if s == nil {
		return nil
	}
	if sh, ok := seen[s]; ok {
		return sh // a recursive schema: the node being built
	}
	s = deref(s)
	sh := &Shape{}
	seen[s] = sh
	if s.Types != nil {
		switch types := s.Types.ToStrings(); {
		case contains(types, "number"):
			sh.Num = NumDouble
		case contains(types, "integer"):
			sh.Num = NumInt
		}
	}
	merge := func(from *jsonschema.Schema) {
		from = deref(from)
		for name, p := range from.Properties {
			if sh.Props == nil {
				sh.Props = map[string]*Shape{}
			}
			if _, dup := sh.Props[name]; !dup {
				sh.Props[name] = shapeOf(p, seen)
			}
		}
		if a, ok := from.AdditionalProperties.(*jsonschema.Schema); ok && sh.Additional == nil {
			sh.Additional = shapeOf(a, seen)
		}
		if it, ok := from.Items.(*jsonschema.Schema); ok && sh.Items == nil {
			sh.Items = shapeOf(it, seen)
		}
		if from.Items2020 != nil && sh.Items == nil {
			sh.Items = shapeOf(from.Items2020, seen)
		}
	}
	merge(s)
	for _, a := range s.AllOf {
		merge(a)
	}
	return sh
}

func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s.Ref != nil && s.DraftVersion < 2019 && i < 100; i++ {
		s = s.Ref
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
