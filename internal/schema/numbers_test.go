package schema

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
