package jsonbody

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// nameSet records the names of one object and reports a name that equals an
// earlier one under Unicode simple case folding (strings.EqualFold, the rule
// encoding/json uses to match object names to struct fields). An exact
// duplicate is a special case of that.
//
// Small objects are checked pairwise without allocating; past smallNames
// names the set switches to a map keyed by the folded form.
type nameSet struct {
	small [smallNames]string
	n     int
	big   map[string]string // folded name -> first name seen
}

const smallNames = 8

// add records name. When an earlier name folds to the same key, it returns
// that name and true.
func (s *nameSet) add(name string) (string, bool) {
	if s.big == nil {
		for _, prev := range s.small[:s.n] {
			if strings.EqualFold(prev, name) {
				return prev, true
			}
		}
		if s.n < smallNames {
			s.small[s.n] = name
			s.n++
			return "", false
		}
		s.big = make(map[string]string, 2*smallNames)
		for _, prev := range s.small[:s.n] {
			s.big[foldKey(prev)] = prev
		}
	}
	k := foldKey(name)
	if prev, ok := s.big[k]; ok {
		return prev, true
	}
	s.big[k] = name
	return "", false
}

// foldKey maps every rune of s to the smallest rune of its simple-folding
// orbit, so that foldKey(a) == foldKey(b) exactly when strings.EqualFold(a, b).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// In ASCII the smallest member of a letter's orbit is its upper case;
		// the non-ASCII members (ſ for s, the Kelvin sign for k) are larger.
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(minFold(r))
	}
	return b.String()
}

func minFold(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}
