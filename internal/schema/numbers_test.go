package schema

import (
	"math/big"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

func TestCompare(t *testing.T) {
	b := func(s string) *bound {
		var r = newRat(t, s)
		return newBound(r)
	}
	tests := []struct {
		n, bound string
		want     int
	}{
		{"1", "1", 0}, {"0", "1", -1}, {"2", "1", 1},
		{"1.0", "1", 0}, {"1e0", "1", 0}, {"0.1", "0.1", 0},
		{"0.30000000000000004", "0.3", 1},
		{"9007199254740993", "9007199254740992", 1},
		{"9007199254740993.0", "9007199254740992", 1},
		{"123456789012345678901234567890", "123456789012345678901234567889", 1},
		{"1e400", "1e308", 1}, {"-1e400", "-1e308", -1},
		{"1e-400", "0", 1}, {"-0", "0", 0},
		{"0.01", "0.01", 0}, {"0.009999999999999999", "0.01", -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, compare(tt.n, b(tt.bound)), "%s vs %s", tt.n, tt.bound)
	}
}

func newRat(t *testing.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	require.True(t, ok, s)
	return r
}

// TestCompare_AsRat holds compare, and its decimal shortcut, to big.Rat's
// order over literals of every form (integers, fractions, zeros after the
// point, exponents, 18 and 19 integer digits, signs) against integer and
// fractional bounds.
func TestCompare_AsRat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		if n > 1 && b[0] == '0' {
			b[0] = '1'
		}
		return string(b)
	}
	literal := func() string {
		s := digits(1 + rng.IntN(20))
		if rng.IntN(2) == 0 {
			s += "." + []string{"0", "00", "5", "05", "999", digits(1 + rng.IntN(18))}[rng.IntN(6)]
		}
		if rng.IntN(6) == 0 {
			s += []string{"e0", "e1", "E-2", "e+20"}[rng.IntN(4)]
		}
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		return s
	}
	shortcut := 0
	for range 200000 {
		s := literal()
		var bnd string
		if rng.IntN(4) == 0 {
			bnd = literal()
		} else {
			bnd = []string{"0", "1", "-1", "100", "-100", "9223372036854775807", "-9223372036854775808", digits(1 + rng.IntN(18))}[rng.IntN(8)]
			if rng.IntN(3) == 0 { // near the literal's integer part
				bnd = strings.SplitN(strings.SplitN(s, ".", 2)[0], "e", 2)[0]
				if bnd == "-" || bnd == "" || len(strings.TrimPrefix(bnd, "-")) > 18 {
					bnd = "0"
				}
			}
		}
		b := newBound(newRat(t, bnd))
		want := newRat(t, s).Cmp(b.rat)
		require.Equal(t, want, compare(s, b), "%s vs %s", s, bnd)
		if b.isInt {
			if c, ok := compareDecimal(s, b.i); ok {
				shortcut++
				require.Equal(t, want, c, "compareDecimal(%s, %s)", s, bnd)
			}
		}
	}
	assert.Greater(t, shortcut, 50000, "the shortcut was tried")
}

// FuzzCompareVsRat: compare, its decimal shortcut included, orders every
// JSON number literal against every integer bound as big.Rat does.
func FuzzCompareVsRat(f *testing.F) {
	for _, s := range []string{"19.99", "-0.5", "0", "-0", "1.000", "123456789012345678.5", "1e2", "-1E-2"} {
		f.Add(s, int64(0))
		f.Add(s, int64(-1))
	}
	for _, s := range []string{"1e999", "-1e999", "1e-999", "-0e999", "0.5e311"} { // far outside float64's range (compareFar)
		f.Add(s, int64(0))
		f.Add(s, int64(-7))
	}
	f.Add("19.99", int64(19)) // a bound equal to the integer part, on either side of zero
	f.Add("-19.99", int64(-19))
	f.Fuzz(func(t *testing.T, s string, b int64) {
		if !jsonNumber.MatchString(s) || len(s) > 40 {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok { // an exponent past big.Rat's, far past what the body reader takes (jsonbody.MaxExponent)
			return
		}
		bnd := newBound(new(big.Rat).SetInt64(b))
		require.Equal(t, r.Cmp(bnd.rat), compare(s, bnd), "%s vs %d", s, b)
	})
}

// jsonNumber is JSON's number grammar (RFC 8259).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// FuzzMultipleOfVsRat holds multipleOf, with its remainder of two int64s,
// to the library's exact rule: x / m is an integer.
func FuzzMultipleOfVsRat(f *testing.F) {
	for _, s := range []string{"0", "-0", "6", "-6", "7.5", "0.3", "1e2", "9223372036854775807", "-9223372036854775808", "1.5e-3", "1e999", "-21e40", "0e99", "12.5e1"} {
		f.Add(s, int64(3), int64(1))
		f.Add(s, int64(1), int64(10))
	}
	f.Fuzz(func(t *testing.T, s string, num, den int64) {
		if !jsonNumber.MatchString(s) || len(s) > 40 || num <= 0 || den <= 0 {
			return
		}
		x, ok := new(big.Rat).SetString(s)
		if !ok {
			return
		}
		m := big.NewRat(num, den)
		require.Equal(t, new(big.Rat).Quo(x, m).IsInt(), multipleOf(s, m), "%s multiple of %s", s, m)
	})
}

// FuzzDecimalVsRat holds uniqueItems' equality of numbers to the
// library's, big.Rat's: two literals are equal as decimals exactly when
// their values are, and equal values hash alike.
func FuzzDecimalVsRat(f *testing.F) {
	for _, p := range [][2]string{{"1", "1.0"}, {"1e2", "100"}, {"-0", "0.0e7"}, {"0.1", "1e-1"}, {"12.50", "1.25E1"},
		{"123456789012345678901234567890", "1.2345678901234567890123456789e29"}, {"1", "-1"}, {"10", "1e0"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !jsonNumber.MatchString(a) || !jsonNumber.MatchString(b) || len(a) > 40 || len(b) > 40 {
			return
		}
		da, errA := jsonbody.Parse([]byte(a), 64)
		db, errB := jsonbody.Parse([]byte(b), 64)
		if errA != nil || errB != nil { // an exponent past what the body reader takes
			return
		}
		ra, okA := new(big.Rat).SetString(a)
		rb, okB := new(big.Rat).SetString(b)
		if !okA || !okB {
			return
		}
		eq := ra.Cmp(rb) == 0
		require.Equal(t, eq, decimalOf(a).equal(decimalOf(b)), "%s == %s", a, b)
		if eq {
			require.Equal(t, hashValue(da.Root()), hashValue(db.Root()), "%s and %s hash alike", a, b)
		}
	})
}

// FuzzIsIntegerVsRat holds isInteger, which reads a literal's digits and
// exponent, to big.Rat's IsInt, the library's reading.
func FuzzIsIntegerVsRat(f *testing.F) {
	for _, s := range []string{"1", "1.0", "1.5", "15e-1", "1.50e1", "100e-2", "100e-3", "0.0", "-0e-5", "0.001e3", "1e999", "1e-999", "12.340e2", "12.345e2", "-7E+0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !jsonNumber.MatchString(s) || len(s) > 40 {
			return
		}
		if _, err := jsonbody.Parse([]byte(s), 64); err != nil { // an exponent past what the body reader takes
			return
		}
		r, ok := new(big.Rat).SetString(s)
		require.True(t, ok, s)
		require.Equal(t, r.IsInt(), isInteger(s), s)
	})
}

// TestCompare_FarLiteralsCostNoRat: a literal far outside float64's range
// (1e999, 1e-999 against the bound 0) was ordered as a big.Rat, 10^999
// worked out for each element of a body (a 1 MiB array of 1e999 against
// minimum: 0, 0.29 s); signs and magnitudes order it now, as big.Rat does.
func TestCompare_FarLiteralsCostNoRat(t *testing.T) {
	lits := []string{"1e999", "-1e999", "1e-999", "-1e-999", "0e999", "-0.0e-999", "0.5e311", "9.99e309", "1e310", "1e-330", "12.5e-333", "0." + strings.Repeat("0", 400) + "1", "1" + strings.Repeat("0", 400), "1e308", "1e-323"}
	bounds := []string{"0", "1", "-1", "0.5", "-1e-300", "1e308", "-1.7976931348623157e308", "4.9e-324", "-3e-324", "1e400", "-1e-400", "1e-330"}
	for _, s := range lits {
		for _, bs := range bounds {
			b := newBound(newRat(t, bs))
			assert.Equal(t, newRat(t, s).Cmp(b.rat), compare(s, b), "%s vs %s", s, bs)
		}
	}
	for _, s := range []string{"1e999", "-1e999", "1e-999", "0e999"} {
		for _, bs := range []string{"0", "1", "-0.5"} {
			b := newBound(newRat(t, bs))
			// At most strconv's range error for 1e999; 10^999 as a big.Rat was more.
			assert.LessOrEqual(t, testing.AllocsPerRun(10, func() { compare(s, b) }), 2.0, "%s vs %s", s, bs)
		}
	}
}

// TestMultipleOf_FarIntegersCostNoRat: an integer literal with a large
// exponent (1e999) was divided as a big.Rat, 10^999 worked out for each
// element of a body (a 1 MiB array of them against multipleOf: 0.5,
// 0.3 s); remainders mod the divisor's numerator decide it now, as
// big.Rat does.
func TestMultipleOf_FarIntegersCostNoRat(t *testing.T) {
	lits := []string{"1e999", "-1e999", "0e999", "-0.0e-5", "3e999", "7e998", "12.5e1", "12.5e0", "1.25e2", "4294967291e900", "1e-999", "2.5e-1", "10e-1", "123456789e3"}
	ms := []string{"0.5", "3", "2", "7", "0.1", "1.5", "4294967291", "4294967296", "1e-1000", "2.5", "1", "8e400"}
	for _, s := range lits {
		for _, mm := range ms {
			m := newRat(t, mm)
			want := new(big.Rat).Quo(newRat(t, s), m).IsInt()
			assert.Equal(t, want, multipleOf(s, m), "%s multiple of %s", s, mm)
		}
	}
	for _, s := range []string{"1e999", "-3e999", "0e999"} {
		m := newRat(t, "0.5")
		assert.Zero(t, testing.AllocsPerRun(10, func() { multipleOf(s, m) }), s)
	}
}
