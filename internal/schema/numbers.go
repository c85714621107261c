package schema

import (
	"cmp"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// Numbers: a schema's bounds, exact and as float64, and the exact comparison
// of a number literal with one.

// bound is a numeric limit of a schema, exact and as float64.
type bound struct {
	rat   *big.Rat
	f     float64
	isInt bool // rat is an integer that fits int64
	i     int64
}

func newBound(r *big.Rat) *bound {
	if r == nil {
		return nil
	}
	b := &bound{rat: r}
	b.f, _ = r.Float64()
	if r.IsInt() && r.Num().IsInt64() {
		b.isInt, b.i = true, r.Num().Int64()
	}
	return b
}

// isInteger reports whether a number literal has an integral value: any
// literal without fraction or exponent, else by exact arithmetic (1.0, 1e2).
func isInteger(s string) bool {
	if !strings.ContainsAny(s, ".eE") {
		return true
	}
	// 0.d₁…dₙ × 10^exp is an integer when exp ≥ n, or it is 0; read as a
	// big.Rat (FuzzIsIntegerVsRat), 1e999 was 10^999 worked out for each
	// such element of a body (a 1 MiB array of them: 0.27 s).
	d := decimalOf(s)
	n := int64(d.end - d.first)
	return n == 0 || d.exp >= n
}

// compare orders a number literal against a bound, exactly. Integers that
// fit int64 compare as such; otherwise float64 decides when the two values
// are further apart than its rounding could move them; otherwise big.Rat.
func compare(s string, b *bound) int {
	if b.isInt {
		if c, ok := compareDecimal(s, b.i); ok {
			return c
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f != b.f {
		m := math.Max(math.Abs(f), math.Abs(b.f))
		if math.Abs(f-b.f) > 4*(math.Nextafter(m, math.Inf(1))-m) {
			if f < b.f {
				return -1
			}
			return 1
		}
	}
	if c, ok := compareFar(s, b); ok {
		return c
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0 // not a number literal: jsonbody never produces one
	}
	return r.Cmp(b.rat)
}

// compareFar orders a literal that is 0, or far outside float64's range
// (1e999, 1e-999), against a bound that is 0 or within it, by signs and
// magnitudes: read as a big.Rat, 1e999 was 10^999 worked out for each
// such element of a body (a 1 MiB array of them against minimum: 0,
// 0.29 s; of 1e-999, 0.2 s, where float64 reads it as the bound 0). ok
// is false for any other pair.
func compareFar(s string, b *bound) (int, bool) {
	d := decimalOf(s)
	bs := b.rat.Sign()
	switch {
	case d.zero():
		return -bs, true
	case bs == 0:
		if d.neg {
			return -1, true
		}
		return 1, true
	case b.f == 0 || math.IsInf(b.f, 0):
		return 0, false // a bound past float64's range: no margin known
	case d.exp > 310: // |x| ≥ 10^310 > |b|, which is at most 1.8e308
		if d.neg {
			return -1, true
		}
		return 1, true
	case d.exp < -330: // |x| < 10^-331 < |b|, which is at least 4.9e-324 (rounded)
		return -bs, true
	}
	return 0, false
}

// compareDecimal orders a number literal without exponent, whose integer
// part has at most 18 digits, against the integer b, from its digits: a
// literal with a fraction that is not all zeros lies strictly between two
// integers, so its integer part decides (19.99 > 0 without parsing a
// float). ok is false for any other literal.
func compareDecimal(s string, b int64) (c int, ok bool) {
	intPart, frac, point := strings.Cut(s, ".")
	whole, ok := jsonbody.ShortInt(intPart)
	if !ok || point && frac == "" {
		return 0, false
	}
	fraction := false // a non-zero digit after the point
	for i := 0; i < len(frac); i++ {
		switch c := frac[i]; {
		case c < '0' || c > '9':
			return 0, false // an exponent
		case c != '0':
			fraction = true
		}
	}
	switch {
	case !fraction:
		return cmp.Compare(whole, b), true
	case s[0] != '-': // whole < value < whole+1
		if b <= whole {
			return 1, true
		}
		return -1, true
	default: // whole-1 < value < whole
		if b >= whole {
			return -1, true
		}
		return 1, true
	}
}

// multipleOf reports whether the number literal x is a multiple of m, as
// the library decides it: x / m, in exact arithmetic, is an integer. Two
// integers that fit int64 take a remainder instead.
func multipleOf(x string, m *big.Rat) bool {
	if m.IsInt() && m.Num().IsInt64() {
		if i, err := strconv.ParseInt(x, 10, 64); err == nil {
			return i%m.Num().Int64() == 0
		}
	}
	if strings.ContainsAny(x, "eE") {
		if is, ok := multipleOfByRemainder(x, m); ok {
			return is
		}
	}
	r, ok := new(big.Rat).SetString(x)
	if !ok {
		return false // not a JSON number: the parser lets none through
	}
	return r.Quo(r, m).IsInt()
}

// multipleOfByRemainder decides multipleOf for a literal that is 0 or an
// integer N × 10^k (k ≥ 0), and m = p/q in lowest terms with p < 2^32:
// x / m = N × 10^k × q / p is an integer exactly when p divides N × 10^k
// (p and q share no factor), which remainders mod p tell. Read as a
// big.Rat, 1e999 was 10^999 worked out for each such element of a body
// (a 1 MiB array of them against multipleOf: 0.5, 0.3 s). ok is false
// for any other pair.
func multipleOfByRemainder(x string, m *big.Rat) (is, ok bool) {
	d := decimalOf(x)
	if d.zero() {
		return true, true
	}
	k := d.exp - int64(d.end-d.first)
	if k < 0 || !m.Num().IsUint64() || m.Num().Uint64() > math.MaxUint32 {
		return false, false
	}
	p := m.Num().Uint64()
	var n uint64 // N mod p
	for i := d.first; i < d.end; i++ {
		n = (n*10 + uint64(d.at(i)-'0')) % p
	}
	pow, base := uint64(1)%p, uint64(10)%p // 10^k mod p
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			pow = pow * base % p
		}
		base = base * base % p
	}
	return n*pow%p == 0, true
}
