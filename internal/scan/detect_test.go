package scan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIdentifier: the names walker.key lets skip Key are ones Key flags
// nothing in: every SQL word, JavaScript's and MongoDB's names, and the
// longest identifier that may hold "constructor" and "prototype".
func TestIdentifier(t *testing.T) {
	names := []string{"orderId", "x", "A1", "constructor", "prototype", "constructorprototype", "constructorprototypeX", "where", "ne", "script", "onload"}
	names = append(names, keywordSamples...)
	skipped := 0
	for _, n := range names {
		if identifier(n) {
			skipped++
			require.Equal(t, None, Key(n), n)
		}
	}
	require.Greater(t, skipped, len(names)/2)
	for _, n := range []string{"__proto__", "$where", "constructorXprototypeX", "a_b", "a-b", "é"} {
		require.False(t, identifier(n), n)
	}
}
