package jsonbody

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFoldKeyAgreesWithEqualFold(t *testing.T) {
	words := []string{"sku", "SKU", "ſku", "Kind", "\u212aind", "kind", "straße", "STRASSE", "ǅ", "ǆ", "Ǆ", "σ", "ς", "Σ", "İ", "i", "ı", "I", "", "a-b", "A_B"}
	for _, a := range words {
		for _, b := range words {
			assert.Equal(t, strings.EqualFold(a, b), FoldKey(a) == FoldKey(b), "%q vs %q", a, b)
			if strings.EqualFold(a, b) {
				assert.Equal(t, foldHash(a), foldHash(b), "%q vs %q hash alike", a, b)
			}
		}
	}
}

func TestNameSet_HashCollisionFallsBackToFoldedNames(t *testing.T) {
	p := new(parser)
	var s nameSet
	for i := range smallNames + 1 {
		_, clash := s.addName(strings.Repeat("x", i+1), p)
		require.False(t, clash)
	}
	s.big[foldHash("abc")] = "zzz" // a different name under abc's hash
	_, clash := s.addName("abc", p)
	assert.False(t, clash, "a hash collision is not a clash")
	prev, clash := s.addName("ABC", p)
	assert.True(t, clash)
	assert.Equal(t, "abc", prev)
	prev, clash = s.addName("XX", p)
	assert.True(t, clash, "names seen before the collision are still known")
	assert.Equal(t, "xx", prev)
	assert.NotNil(t, s.exact)
}

// TestNameSet_AgreesWithEqualFold adds every pair of words to a set, at
// every size up to past the small set (after fillers that clash with
// nothing): a clash exactly when strings.EqualFold says so, whatever the
// signatures of the two names.
func TestNameSet_AgreesWithEqualFold(t *testing.T) {
	words := []string{"sku", "SKU", "ſku", "skU", "Kind", "\u212aind", "kind", "KIND", "straße", "STRASSE", "ǅ", "ǆ",
		"σ", "ς", "Σ", "İ", "i", "I", "", "a", "A", "ab", "aB", "ba", "\x7f", "k\u212a", "KK"}
	for _, fillers := range []int{0, 5, smallNames - 2, smallNames, smallNames + 3} {
		for _, a := range words {
			for _, b := range words {
				p := new(parser)
				var s nameSet
				for i := range fillers {
					_, clash := s.addName("0filler"+strings.Repeat("-", i), p)
					require.False(t, clash)
				}
				_, clash := s.addName(a, p)
				require.False(t, clash)
				prev, clash := s.addName(b, p)
				assert.Equal(t, strings.EqualFold(a, b), clash, "%d fillers: %q then %q", fillers, a, b)
				if clash {
					assert.Equal(t, a, prev)
				}
			}
		}
	}
}

// addName is add as the readers call it, for a name of any bytes, at depth 0.
func (s *nameSet) addName(name string, p *parser) (string, bool) {
	return s.add(name, kindsOf(name), p, 0)
}

// TestNameBytes: a name is a word exactly when it holds ASCII letters and
// digits only; asciiSig is told of a name with a byte of a multi-byte
// character, and the builder stops at ", \ and control characters.
func TestNameBytes(t *testing.T) {
	for c := range 256 {
		k := kindsOf(string([]byte{byte(c)}))
		alnum := '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
		require.Equal(t, alnum, k == 0, "%#x", c)
		require.Equal(t, c >= 0x80, k&nonASCII != 0, "%#x", c)
		require.Equal(t, c == '"' || c == '\\' || c < ' ', k&quoted != 0, "%#x", c)
	}
	require.Zero(t, kindsOf(""))
	require.Zero(t, kindsOf("orderId42"))
	require.Equal(t, byte(notWord), kindsOf("order_id"))
}
