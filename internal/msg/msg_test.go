package msg

import (
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
