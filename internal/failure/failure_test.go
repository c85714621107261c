package failure

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPointer(t *testing.T) {
	assert.Equal(t, "", Pointer(nil))
	assert.Equal(t, "/a/0/b~1c/d~0e", Pointer([]string{"a", "0", "b/c", "d~e"}))
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", Clip("short"))
	long := ""
	for range 70 {
		long += "é"
	}
	c := Clip(long)
	assert.LessOrEqual(t, len(c), MaxEcho+len("…"))
	assert.Equal(t, "…", c[len(c)-len("…"):])
}

func TestPath(t *testing.T) {
	var p Path
	assert.Equal(t, "", p.Pointer())
	assert.Equal(t, "/", p.Pointer(""), "the empty member name")
	p.Member("items")
	p.Index(0)
	p.SetIndex(2)
	p.Member("a/b~c")
	assert.Equal(t, "/items/2/a~1b~0c", p.Pointer())
	assert.Equal(t, "/items/2/a~1b~0c/sku", p.Pointer("sku"))
	p.Pop()
	p.Pop()
	assert.Equal(t, "/items", p.Pointer())
	for i := range 40 { // past the 16 levels kept without allocating
		p.Index(i)
	}
	assert.Equal(t, 41, strings.Count(p.Pointer(), "/"))
	p.Reset()
	assert.Equal(t, "", p.Pointer())
}
