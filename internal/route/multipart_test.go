package route

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultipartFields_ContentsKeepNoSpare: each content is a copy of its
// own, kept by the caller as long as the request (the sink's inputs). It
// was io.ReadAll's buffer, 512 bytes at least whatever the content: a
// 1 MiB body of parts of one byte each held 50 MiB.
func TestMultipartFields_ContentsKeepNoSpare(t *testing.T) {
	const parts = 20_000
	body := []byte(strings.Repeat("--b\r\n\r\nx\r\n", parts))
	values := make([]string, 0, parts)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, v := range MultipartFields(body, "b") {
		values = append(values, v)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, values, parts)
	assert.Equal(t, "x", values[0])
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, held, int64(64*parts), "the contents of %d parts of one byte hold %d bytes", parts, held)
	runtime.KeepAlive(values)
}
