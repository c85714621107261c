package scan

import "strings"

// Sets of ASCII words looked up without regard to case and without a copy.

// foldSet is a set of upper-case ASCII words. Most words looked up are
// not in it, and a 2 KB bitmap of their hashes, which stays in cache, says
// so without a probe of the table.
type foldSet struct {
	slots []string
	mask  uint32
	seen  [256]uint64 // bit h%16384 set for the hash h of every word
}

func newFoldSet(words []string) *foldSet {
	size := 16
	for size < 4*len(words) {
		size *= 2
	}
	f := &foldSet{slots: make([]string, size), mask: uint32(size - 1)}
	for _, w := range words {
		h := foldHash(w)
		i := h & f.mask
		for f.slots[i] != "" {
			i = (i + 1) & f.mask
		}
		f.slots[i] = w
		f.seen[h>>6&255] |= 1 << (h & 63)
	}
	return f
}

// hasFold reports whether the set holds s in upper case.
func (f *foldSet) hasFold(s string) bool { return f.hasHashed(s, foldHash(s)) }

// hasHashed is hasFold of s, whose foldHash is h.
func (f *foldSet) hasHashed(s string, h uint32) bool {
	if f.seen[h>>6&255]&(1<<(h&63)) == 0 {
		return false
	}
	for i := h & f.mask; ; i = (i + 1) & f.mask {
		w := f.slots[i]
		if w == "" {
			return false
		}
		if len(w) == len(s) && equalUpper(w, s) {
			return true
		}
	}
}

// foldHash is FNV-1a of the ASCII upper case of s.
func foldHash(s string) uint32 {
	h := uint32(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(upperASCIIOf[s[i]])) * fnvPrime
	}
	return h
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// equalUpper reports whether s in ASCII upper case is upper.
func equalUpper(upper, s string) bool {
	for i := 0; i < len(s); i++ {
		if upperASCIIOf[s[i]] != upper[i] {
			return false
		}
	}
	return true
}

// upperASCIIOf is each byte with a-z in upper case.
var upperASCIIOf = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
		if 'a' <= c && c <= 'z' {
			t[c] -= 'a' - 'A'
		}
	}
	return t
}()

// wordSet is a set of words looked up without regard to ASCII case and
// without a copy (see foldSet).
func wordSet(words ...string) *foldSet {
	upper := make([]string, len(words))
	for i, w := range words {
		upper[i] = strings.ToUpper(w)
	}
	return newFoldSet(upper)
}
