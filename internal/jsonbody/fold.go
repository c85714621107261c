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
// Small objects are checked pairwise, skipping pairs of ASCII names whose
// signatures differ; larger ones by a hash of the folded name, confirmed
// with EqualFold, in a map the parser lends and reuses, so that checking
// allocates nothing.
type nameSet struct {
	small [smallNames]string
	sigs  [smallNames]uint32
	n     int
	big   map[uint64]string // folded-name hash -> first name with it
	exact map[string]string // folded name -> first name, after a hash collision
}

const smallNames = 16

// asciiSig is, for a name of ASCII characters only, its length and its
// upper-cased first and last bytes; 0 for any other name. Two ASCII names
// with different signatures are not equal under EqualFold (in ASCII,
// folding keeps the length); a non-ASCII name may equal one of another
// length (the Kelvin sign and "k"), so it is always compared. kinds is
// kindsOf(s), which the builder tells as it reads the name.
func asciiSig(s string, kinds byte) uint32 {
	if len(s) == 0 || len(s) > 0xFFFF || kinds&nonASCII != 0 {
		return 0
	}
	return uint32(len(s))<<16 | uint32(upper(s[0]))<<8 | uint32(upper(s[len(s)-1]))
}

// The kinds of bytes of a name: an ASCII letter or digit is none of them.
const (
	notWord  = 1 << iota // not an ASCII letter or digit
	nonASCII             // of a multi-byte character
	quoted               // ", \ or a control character, where the builder's name loop stops (see builder.name)
)

var nameBytes = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = notWord | nonASCII
		case '0' <= c && c <= '9', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		default:
			t[c] = notWord
		}
	}
	t['"'] |= quoted
	t['\\'] |= quoted
	for c := range ' ' {
		t[c] |= quoted
	}
	return t
}()

// kindsOf is the kinds of the bytes of s, or-ed.
func kindsOf(s string) byte {
	var kinds byte
	for i := 0; i < len(s); i++ {
		kinds |= nameBytes[s[i]]
	}
	return kinds
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// add records name, whose kinds of bytes are kinds (see kindsOf). When an
// earlier name folds to the same key, it returns that name and true. When
// the set grows past smallNames, it borrows an empty map from the parser,
// for its depth.
func (s *nameSet) add(name string, kinds byte, p *parser, depth int) (string, bool) {
	if s.big == nil {
		sig := asciiSig(name, kinds)
		for i, prev := range s.small[:s.n] {
			if sig != 0 && s.sigs[i] != 0 && sig != s.sigs[i] {
				continue
			}
			if strings.EqualFold(prev, name) {
				return prev, true
			}
		}
		if s.n < smallNames {
			s.small[s.n], s.sigs[s.n] = name, sig
			s.n++
			return "", false
		}
		s.big = p.fold(depth)
		for _, prev := range s.small[:s.n] {
			s.insert(prev)
		}
	}
	return s.insert(name)
}

func (s *nameSet) insert(name string) (string, bool) {
	if s.exact != nil {
		k := FoldKey(name)
		if prev, ok := s.exact[k]; ok {
			return prev, true
		}
		s.exact[k] = name
		return "", false
	}
	h := foldHash(name)
	prev, ok := s.big[h]
	switch {
	case !ok:
		s.big[h] = name
		return "", false
	case strings.EqualFold(prev, name):
		return prev, true
	}
	// Two names that do not fold alike share a hash: from here on, keep
	// the folded names themselves.
	s.exact = make(map[string]string, 2*len(s.big))
	for _, n := range s.big {
		s.exact[FoldKey(n)] = n
	}
	return s.insert(name)
}

// foldHash hashes the folded form of s (FNV-1a over foldRune of every
// rune): names equal under strings.EqualFold hash alike.
func foldHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		if c < utf8.RuneSelf {
			r = rune(upper(c))
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			r = minFold(r)
			i += size
		}
		h ^= uint64(r)
		h *= 1099511628211
	}
	return h
}

// FoldKey maps every rune of s to the smallest rune of its simple-folding
// orbit, so that FoldKey(a) == FoldKey(b) exactly when strings.EqualFold(a, b)
// (the rule encoding/json uses to match object names to struct fields).
func FoldKey(s string) string {
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
	return string(AppendFoldKey(make([]byte, 0, len(s)), s))
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

// AppendFoldKey appends FoldKey(s) to dst: the schema check looks a member
// up by it in a map with a buffer it reuses, so the lookup allocates
// nothing.
func AppendFoldKey(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, upper(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, minFold(r))
		i += size
	}
	return dst
}
