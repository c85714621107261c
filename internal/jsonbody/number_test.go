package jsonbody

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShortDecimal_AsParseFloat holds ShortDecimal to strconv.ParseFloat,
// bit for bit (-0 included), over literals of 1 to 17 digits with the
// point anywhere, and to declining exponents and longer literals.
func TestShortDecimal_AsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	taken := 0
	for range 300000 {
		n := 1 + rng.IntN(17)
		b := make([]byte, 0, n+3)
		if rng.IntN(2) == 0 {
			b = append(b, '-')
		}
		for i := range n {
			b = append(b, byte('0'+rng.IntN(10)))
			if i < n-1 && rng.IntN(n) == 0 && bytes.IndexByte(b, '.') < 0 {
				b = append(b, '.')
			}
		}
		s := string(b)
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		if got, ok := ShortDecimal(s); ok {
			taken++
			require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s: %v, want %v", s, got, want)
		}
	}
	assert.Greater(t, taken, 100000)
	for _, s := range []string{"1e5", "1E-2", "-2.5e+3", "1234567890123456", "0.0000000000000001", "", "-"} {
		_, ok := ShortDecimal(s)
		assert.False(t, ok, s)
	}
	for _, s := range []string{".5", "1.", "-.5", "-0", "007.50"} { // not JSON, read as ParseFloat reads them
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		got, ok := ShortDecimal(s)
		require.True(t, ok, s)
		assert.Equal(t, math.Float64bits(want), math.Float64bits(got), s)
	}
	f, ok := ShortDecimal("-0.0")
	assert.True(t, ok)
	assert.True(t, math.Signbit(f), "-0.0 is negative zero, as ParseFloat reads it")
}

// FuzzShortNumbersVsStrconv: whatever ShortDecimal reads, it reads as
// strconv.ParseFloat does, bit for bit; whatever ShortInt reads, as
// strconv.ParseInt does.
func FuzzShortNumbersVsStrconv(f *testing.F) {
	for _, s := range []string{"19.99", "-0.0", "0.1", "999999999999999", "123456.789012345", "1e5",
		"2", "-15", "007", "-0", "999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, ok := ShortDecimal(s); ok {
			want, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err, "ShortDecimal read %q, which ParseFloat refuses", s)
			require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%q: %v, want %v", s, got, want)
		}
		if got, ok := ShortInt(s); ok {
			want, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err, "ShortInt read %q, which ParseInt refuses", s)
			require.Equal(t, want, got, s)
		}
	})
}

// TestShortInt_AsParseInt holds ShortInt to strconv.ParseInt over integer
// literals of 1 to 20 digits, signed or not, and to declining the rest.
func TestShortInt_AsParseInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	taken := 0
	for range 200000 {
		b := make([]byte, 0, 21)
		if rng.IntN(2) == 0 {
			b = append(b, '-')
		}
		for range 1 + rng.IntN(20) {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		s := string(b)
		got, ok := ShortInt(s)
		if !ok {
			continue
		}
		taken++
		want, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	assert.Greater(t, taken, 100000)
	for _, s := range []string{"", "-", "1.5", "1e3", "+1", "1_000", "1234567890123456789", " 1"} {
		_, ok := ShortInt(s)
		assert.False(t, ok, s)
	}
}
