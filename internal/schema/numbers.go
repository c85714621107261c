package schema

import (
	"cmp"
	"math"
	"math/big"
	"strconv"
	"strings"
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
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

// compare orders a number literal against a bound, exactly. Integers that
// fit int64 compare as such; otherwise float64 decides when the two values
// are further apart than its rounding could move them; otherwise big.Rat.
func compare(s string, b *bound) int {
	if b.isInt && isSmallInt(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return cmp.Compare(i, b.i)
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
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0 // not a number literal: jsonbody never produces one
	}
	return r.Cmp(b.rat)
}

func isSmallInt(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) == 0 || len(digits) > 18 {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}
