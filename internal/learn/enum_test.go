package learn

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShares(t *testing.T) {
	for _, v := range []string{"", "a", "active", strings.Repeat("z", maxCandidate), "caf\u00e9 \u2603"} {
		f := fingerprintOf(v)
		s1, s2, s3 := newShare(v), newShare(v), newShare(v)
		got, ok := reveal(f, []share{s1, s2, s3})
		require.True(t, ok, "%q", v)
		assert.Equal(t, v, got)
		_, ok = reveal(f, []share{s1, s2})
		assert.False(t, ok, "two shares reveal nothing")
		_, ok = reveal(fingerprintOf(v+"x"), []share{s1, s2, s3})
		assert.False(t, ok, "the fingerprint must match")
		other := newShare("other")
		_, ok = reveal(f, []share{s1, s2, other})
		assert.False(t, ok, "shares of another value do not combine")
		_, ok = reveal(f, []share{s1, s1, s2})
		assert.False(t, ok, "a share twice is no third point")
	}
}

func TestFieldArithmetic(t *testing.T) {
	for _, a := range []uint64{1, 2, 12345, prime - 1, prime - 2, 1 << 60} {
		assert.Equal(t, uint64(1), mulmod(a, inverse(a)), "%d", a)
		assert.Equal(t, a, addmod(submod(a, 7), 7))
	}
	assert.Equal(t, uint64(prime-1), mulmod(prime-1, 1))
	assert.Equal(t, uint64(1), mulmod(prime-1, prime-1), "(-1)² = 1")
}

// TestEnum_RevealedAcrossReplicas: a value seen once on each of three
// replicas is in none of their exports, and in the clear once merged.
func TestEnum_RevealedAcrossReplicas(t *testing.T) {
	ex := make([]*Observations, 3)
	for i := range ex {
		ex[i] = roundTrip(t, learn(t, Limits{}, posts(`{"s":"zebra"}`)...))
		b, err := ex[i].MarshalJSON()
		require.NoError(t, err)
		assert.NotContains(t, string(b), "zebra")
	}
	two := Merge(ex[0], ex[1])
	b, _ := two.MarshalJSON()
	assert.NotContains(t, string(b), "zebra", "seen twice: still not in the clear")
	all := Merge(two, ex[2])
	b, _ = all.MarshalJSON()
	assert.Contains(t, string(b), `"values":{"zebra":3}`, "seen three times: revealed")
}

// TestEnum_Over: a string that cannot be a candidate, or one distinct
// value past the limit, drops the candidates for good.
func TestEnum_Over(t *testing.T) {
	e := &enum{}
	for _, v := range []string{"a", "b", "c"} {
		e.observe(v, 3)
	}
	assert.False(t, e.over)
	assert.Equal(t, 3, e.held())
	e.observe("d", 3)
	assert.True(t, e.over)
	assert.Nil(t, e.pending)
	e.observe("a", 3)
	assert.True(t, e.over)
}
