package shape

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNumbers_IndexedAsMap: Member after IndexProps finds what Props says,
// and Additional for any other name, for sets of names of every size and
// likeness (names alike in length and ends fall back to a map inside the
// index).
func TestNumbers_IndexedAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	additional := &Numbers{Num: NumDouble}
	word := func() string {
		return []string{"", "a", "ab", "qty", "quantity", "quantitx", "Quantity", "x/y", "é"}[rng.IntN(9)] + fmt.Sprint(rng.IntN(40))
	}
	for range 2000 {
		s := &Numbers{Props: map[string]*Numbers{}, Additional: additional}
		for range rng.IntN(50) {
			s.Props[word()] = &Numbers{Num: NumKind(rng.IntN(3))}
		}
		plain := &Numbers{Props: s.Props, Additional: additional} // Member reads the map
		s.IndexProps()
		for range 60 {
			name := word()
			require.Same(t, plain.Member(name), s.Member(name), "%q among %d names", name, len(s.Props))
		}
		for name, p := range s.Props {
			require.Same(t, p, s.Member(name), name)
		}
	}
	var none *Numbers
	require.Nil(t, none.Member("x"))
	empty := &Numbers{Additional: additional}
	empty.IndexProps()
	require.Same(t, additional, empty.Member("x"))
}
