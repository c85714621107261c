package sink

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestIsASCII: one byte of other than ASCII anywhere, in a string of any
// length (whole words of eight, the overlapping last word, the half word,
// the bytes of a short string), is seen.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		s := strings.Repeat("a", n)
		assert.True(t, isASCII(s), n)
		for i := 0; i < n; i++ {
			for _, c := range []byte{0x80, 0xc4, 0xff} {
				b := []byte(s)
				b[i] = c
				assert.False(t, isASCII(string(b)), "%d bytes, %#x at %d", n, c, i)
			}
		}
	}
	assert.True(t, isASCII("\x00\x7f ~"))
	assert.False(t, isASCII("Zoë"))
}

// TestOtherCases: the upper- and lower-case forms of an input of other
// than ASCII that differ from it, and from each other, beyond ASCII case.
func TestOtherCases(t *testing.T) {
	for in, want := range map[string][]string{
		"\u0131' OR 1": {"I' OR 1"},   // ToLower leaves ı as it is
		"x\u017f":      {"XS"},        // ſ is lower-case
		"\u212a1":      {"k1"},        // the Kelvin sign is upper-case: ToUpper leaves it
		"Zoë":          {"ZOË"},       // ë has cases of its own; zoë is Zoë but for ASCII case
		"\u0131":       nil,           // I alone is one byte: too short
		"ÉCOLE":        {"école"},     // ToUpper gives it back
		"\xff'--":      {"\ufffd'--"}, // ToUpper and ToLower replace a bad byte alike
	} {
		forms, n := otherCases(in)
		assert.Equal(t, want, append([]string(nil), forms[:n]...), "%q", in)
	}
}
