package names

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIndex(t *testing.T) {
	list := []string{"sku", "title", "quantity", "unitPrice", "", "a", "ab", "ba", "a1b", "a2b", "a3b", "sku", "ünï"}
	x := New(list)
	assert.Equal(t, len(list), x.Len())
	for i, n := range list {
		want := i
		if n == "sku" {
			want = 0 // listed twice: the first position
		}
		assert.Equal(t, want, x.Find(n), "%q", n)
	}
	for _, n := range []string{"SKU", "skus", "b", "a4b", "unitprice", "ü"} {
		assert.Equal(t, -1, x.Find(n), "%q", n)
	}
}

func TestIndex_Empty(t *testing.T) {
	assert.Equal(t, -1, New(nil).Find("x"))
}

// TestIndex_ManyCollisions fills a table with names that hash alike.
func TestIndex_ManyCollisions(t *testing.T) {
	var list []string
	for i := range 300 {
		list = append(list, fmt.Sprintf("a%c%03db", 'x', i))
	}
	x := New(list)
	assert.NotNil(t, x.byName, "a long cluster gives way to a map")
	for i, n := range list {
		assert.Equal(t, i, x.Find(n))
	}
	assert.Equal(t, -1, x.Find("ax999b"))
}

func BenchmarkFind(b *testing.B) {
	list := []string{"orderId", "customer", "items", "currency", "total", "placedAt", "deliveryDate", "channel", "callbackUrl", "clientIp", "notes", "couponCode"}
	x := New(list)
	m := map[string]int{}
	for i, n := range list {
		m[n] = i
	}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			for _, n := range list {
				if x.Find(n) < 0 {
					b.Fatal(n)
				}
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			for _, n := range list {
				if _, ok := m[n]; !ok {
					b.Fatal(n)
				}
			}
		}
	})
}

// TestIndex_AgreesWithMap builds indexes of generated name sets of every
// size up to 200 and looks up every name and many that are not there.
func TestIndex_AgreesWithMap(t *testing.T) {
	word := func(i int) string {
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"
		var b []byte
		for n := i*7919 + 13; len(b) < 1+i%9; n /= len(letters) {
			b = append(b, letters[n%len(letters)])
			n += i
		}
		return string(b)
	}
	for size := range 200 {
		var list []string
		m := map[string]int{}
		for i := range size {
			w := word(i * 31)
			list = append(list, w)
			if _, ok := m[w]; !ok {
				m[w] = i
			}
		}
		x := New(list)
		for i := range 3 * size {
			w := word(i * 17)
			want, ok := m[w]
			if !ok {
				want = -1
			}
			assert.Equal(t, want, x.Find(w), "size %d: %q", size, w)
		}
	}
}

func TestIndex_OrderFieldsNeedNoMap(t *testing.T) {
	x := New([]string{"orderId", "customer", "items", "currency", "total", "placedAt", "deliveryDate", "channel", "callbackUrl", "clientIp", "notes", "couponCode"})
	assert.Nil(t, x.byName)
}

func TestIndex_NilFindsNothing(t *testing.T) {
	var x *Index
	assert.Equal(t, -1, x.Find("a"))
}
