package schema

import (
	"encoding/binary"
	"hash/maphash"
	"strconv"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// uniqueItems on the fast path: the first item equal to an earlier one,
// as santhosh-tekuri/jsonschema finds it (the smallest i with an equal
// j < i, and the smallest such j), with its rule of equality (numbers by
// value, 1 and 1.0 and 1e0 alike; objects whatever their members' order),
// in time linear in the array: items are hashed, and only items of one
// hash are compared.

// duplicate returns the first pair of equal items of arr, j < i; ok is
// false when all are distinct.
func duplicate(arr jsonbody.Value) (j, i int, ok bool) {
	count := arr.Len()
	if count <= 20 { // as the library: pairs, no hashing
		for i := 1; i < count; i++ {
			for j := range i {
				if equalValues(arr.Index(i), arr.Index(j)) {
					return j, i, true
				}
			}
		}
		return 0, 0, false
	}
	// The first item of each hash; the later ones of a hash whose items
	// differ (rare: a 64-bit hash with a random seed) in more.
	first := make(map[uint64]int, count)
	var more map[uint64][]int
	for i := range count {
		item := arr.Index(i)
		h := hashOf(item)
		j, ok := first[h]
		if !ok {
			first[h] = i
			continue
		}
		if equalValues(item, arr.Index(j)) {
			return j, i, true
		}
		for _, j := range more[h] {
			if equalValues(item, arr.Index(j)) {
				return j, i, true
			}
		}
		if more == nil {
			more = map[uint64][]int{}
		}
		more[h] = append(more[h], i)
	}
	return 0, 0, false
}

// hashOf is hashValue; a test makes hashes collide.
var hashOf = hashValue

// hashSeed is the seed of every hash of a value: a value's hash is the
// same within the process, which is all duplicate needs.
var hashSeed = maphash.MakeSeed()

// hashValue is a hash of v under the library's equality: equal values
// hash alike.
func hashValue(v jsonbody.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var b [8]byte
	switch k := v.Kind(); k {
	case jsonbody.String:
		h.WriteByte(4)
		h.WriteString(v.Str())
	case jsonbody.Number:
		h.WriteByte(5)
		n := decimalOf(v.Number())
		if n.zero() {
			break // -0, 0.0, 0e5: zero
		}
		if n.neg {
			h.WriteByte('-')
		}
		h.Write(binary.LittleEndian.AppendUint64(b[:0], uint64(n.exp)))
		for p := n.first; p < n.end; p++ {
			h.WriteByte(n.at(p))
		}
	case jsonbody.Array:
		h.WriteByte(1)
		for i := range v.Len() {
			h.Write(binary.LittleEndian.AppendUint64(b[:0], hashValue(v.Index(i))))
		}
	case jsonbody.Object:
		// The members in any order: their hashes added up.
		var sum uint64
		for i := range v.Len() {
			name, e := v.Member(i)
			var m maphash.Hash
			m.SetSeed(hashSeed)
			m.WriteString(name)
			m.Write(binary.LittleEndian.AppendUint64(b[:0], hashValue(e)))
			sum += m.Sum64()
		}
		h.WriteByte(0)
		h.Write(binary.LittleEndian.AppendUint64(b[:0], sum))
	default: // null, false, true
		h.WriteByte(2 + 8*byte(k))
	}
	return h.Sum64()
}

// decimal is a JSON number literal read as ±0.d₁d₂…dₙ × 10^exp, its
// significant digits d₁…dₙ (d₁ and dₙ not 0) taken from the literal's
// integer and fraction parts without copying: two literals have the same
// value exactly when their decimals are equal.
type decimal struct {
	neg        bool
	int, frac  string // the literal's digits before and after its point
	first, end int    // the significant digits: positions first..end-1 of int+frac
	exp        int64
}

// decimalOf reads a JSON number literal (the body reader has checked its
// grammar and bounded its exponent).
func decimalOf(s string) decimal {
	var d decimal
	if len(s) > 0 && s[0] == '-' {
		d.neg, s = true, s[1:]
	}
	mant, e := s, int64(0)
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == 'E' {
			mant = s[:i]
			e, _ = strconv.ParseInt(s[i+1:], 10, 64) // "+5" too; bounded by the reader
			break
		}
	}
	d.int, d.frac = mant, ""
	for i := 0; i < len(mant); i++ {
		if mant[i] == '.' {
			d.int, d.frac = mant[:i], mant[i+1:]
			break
		}
	}
	n := len(d.int) + len(d.frac)
	d.first, d.end = n, n
	for p := range n {
		if d.at(p) != '0' {
			d.first = p
			break
		}
	}
	for p := n - 1; p >= d.first; p-- {
		if d.at(p) != '0' {
			d.end = p + 1
			break
		}
	}
	// The point sits after len(int) digits; after the first significant
	// digit's position, in the normalized form.
	d.exp = e + int64(len(d.int)) - int64(d.first)
	return d
}

// at is the digit at position p of int+frac.
func (d decimal) at(p int) byte {
	if p < len(d.int) {
		return d.int[p]
	}
	return d.frac[p-len(d.int)]
}

func (d decimal) zero() bool { return d.first == d.end }

func (d decimal) equal(o decimal) bool {
	if d.zero() || o.zero() {
		return d.zero() && o.zero()
	}
	if d.neg != o.neg || d.exp != o.exp || d.end-d.first != o.end-o.first {
		return false
	}
	for i := range d.end - d.first {
		if d.at(d.first+i) != o.at(o.first+i) {
			return false
		}
	}
	return true
}
