package schema

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// TestDuplicate_HashesThatCollide: an array over 20 items is searched by
// hash; items whose hashes collide but differ must not hide a later
// equal pair. With hashes made to collide (all alike, or in three
// classes), duplicate still finds the library's pair: the smallest i
// with an equal j < i, the smallest such j.
func TestDuplicate_HashesThatCollide(t *testing.T) {
	defer func(h func(jsonbody.Value) uint64) { hashOf = h }(hashOf)
	pool := []string{`1`, `1.0`, `2`, `"1"`, `[1]`, `[1.0]`, `{"a":1,"b":2}`, `{"b":2,"a":1e0}`, `null`, `true`, `3`, `"x"`}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, hash := range []func(jsonbody.Value) uint64{
		func(jsonbody.Value) uint64 { return 7 },
		func(v jsonbody.Value) uint64 { return uint64(v.Kind()) % 3 },
		hashValue,
	} {
		hashOf = hash
		for range 300 {
			n := 21 + rng.IntN(30)
			items := make([]string, n)
			for k := range items { // mostly distinct numbers, with a few from the pool
				items[k] = fmt.Sprint(100 + rng.IntN(1000))
				if rng.IntN(8) == 0 {
					items[k] = pool[rng.IntN(len(pool))]
				}
			}
			doc, err := jsonbody.Parse([]byte("["+strings.Join(items, ",")+"]"), 64)
			require.NoError(t, err)
			arr := doc.Root()
			wantJ, wantI, want := pairwise(arr)
			j, i, ok := duplicate(arr)
			require.Equal(t, want, ok, items)
			if ok {
				assert.Equal(t, [2]int{wantJ, wantI}, [2]int{j, i}, items)
			}
		}
	}
}

// pairwise is the library's search over all pairs.
func pairwise(arr jsonbody.Value) (j, i int, ok bool) {
	for i := 1; i < arr.Len(); i++ {
		for j := range i {
			if equalValues(arr.Index(i), arr.Index(j)) {
				return j, i, true
			}
		}
	}
	return 0, 0, false
}
