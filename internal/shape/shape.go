// Package shape holds what a contract's compiled schema says about a body,
// place by place, for the parts of the guard that read a body without
// validating it: how CEL reads its numbers ([Numbers]) and what the
// vulnerability scan leaves out ([Skip]). internal/schema derives both
// when it compiles a schema; internal/expr and internal/scan read them.
package shape

import "github.com/contractguard/contractguard/internal/names"

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

// Numbers is what a schema says about the numbers in a body. A nil
// *Numbers knows nothing: every number there is NumAuto.
type Numbers struct {
	Num   NumKind
	Props map[string]*Numbers
	// Patterns are the places of the members patternProperties describes,
	// in the order they are tried: a member Props does not name is the
	// first matching pattern's, and additional only when none matches.
	Patterns   []Pattern
	Additional *Numbers
	Items      *Numbers

	// Props by a names.Index (IndexProps), which Member reads for every
	// member a rule reads: a Go map hashes the whole name each time.
	propNames *names.Index
	propList  []*Numbers // by position in propNames
}

// Pattern is a pattern of patternProperties and the place of the members
// it matches.
type Pattern struct {
	Re interface{ MatchString(string) bool }
	N  *Numbers
}

// IndexProps indexes Props for Member; call it once Props is complete.
// Without it, Member reads Props itself.
func (s *Numbers) IndexProps() {
	if len(s.Props) == 0 {
		s.propNames, s.propList = nil, nil
		return
	}
	list := make([]string, 0, len(s.Props))
	for name := range s.Props {
		list = append(list, name)
	}
	s.propList = make([]*Numbers, len(list))
	for i, name := range list {
		s.propList[i] = s.Props[name]
	}
	s.propNames = names.New(list)
}

// Kind is how a number at this place is read.
func (s *Numbers) Kind() NumKind {
	if s == nil {
		return NumAuto
	}
	return s.Num
}

// Member is the place of member name in an object at this place.
func (s *Numbers) Member(name string) *Numbers {
	if s == nil {
		return nil
	}
	if s.propNames != nil {
		if i := s.propNames.Find(name); i >= 0 {
			return s.propList[i]
		}
	} else if p, ok := s.Props[name]; ok {
		return p
	}
	for _, p := range s.Patterns {
		if p.Re.MatchString(name) {
			return p.N
		}
	}
	return s.Additional
}

// Elements is the place of every element of an array at this place.
func (s *Numbers) Elements() *Numbers {
	if s == nil {
		return nil
	}
	return s.Items
}

// Skip says which parts of a body are not scanned: the values whose
// schema carries x-contractguard-scan: false. A nil *Skip scans
// everything; Off skips the value and everything in it.
type Skip struct {
	Off        bool
	Props      map[string]*Skip // by member name
	Items      *Skip            // every element of an array
	Additional *Skip            // members not in Props
}

// Member is what s takes out of member name: its own entry, or, for a
// name it does not list, what it takes out of additional members.
func (s *Skip) Member(name string) *Skip {
	if s == nil {
		return nil
	}
	if c, ok := s.Props[name]; ok {
		return c
	}
	return s.Additional
}

// Elements is what s takes out of every element of an array.
func (s *Skip) Elements() *Skip {
	if s == nil {
		return nil
	}
	return s.Items
}
