package scan

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBytesIn: bytesIn, which reads a value in overlapping windows, gives
// the kinds of every byte of it, for every length up to 40.
func TestBytesIn(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 41 {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				const alphabet = "aZ09 _-.@<$'\x00\xff"
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			want := uint32(0)
			for _, c := range b {
				want |= byteKinds[c]
			}
			require.Equal(t, want, bytesIn(string(b)), "%q", b)
		}
		// One odd byte in each place.
		for i := range n {
			b := []byte(strings.Repeat("A", n))
			b[i] = '<'
			require.Equal(t, uint32(hasLT|notToken|notURL|notProse|notEmail|notCode), bytesIn(string(b)), "%q", b)
		}
	}
}
