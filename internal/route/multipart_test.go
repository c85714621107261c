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
// 1 MiB body of parts of one byte each held 50 MiB. (As many parts as
// are read: MultipartMaxParts.)
func TestMultipartFields_ContentsKeepNoSpare(t *testing.T) {
	const parts = MultipartMaxParts
	body := []byte(strings.Repeat("--b\r\n\r\nx\r\n", parts))
	values := make([]string, 0, parts)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, v := range MultipartFields(body, "b", nil) {
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

// TestMultipartFields_ReadFormBounds: the reading stops where
// multipart.Reader.ReadForm fails, and says so: at the part one over
// MultipartMaxParts (it read every part of a megabyte, 84 ms for 100,000
// empty ones), at a part of more header lines than are left.
func TestMultipartFields_ReadFormBounds(t *testing.T) {
	file := "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n" + strings.Repeat("A: 1\r\n", 2000) + "\r\nx\r\n"
	for _, tc := range []struct {
		body    string
		fields  int
		tooMany bool
	}{
		{strings.Repeat("--b\r\n\r\n\r\n", 100_000), MultipartMaxParts, true},
		{strings.Repeat("--b\r\n\r\n\r\n", MultipartMaxParts), MultipartMaxParts, false},
		{"--b\r\n\r\n\r\n--b\r\n" + strings.Repeat("A: 1\r\n", MultipartMaxHeaders+1) + "\r\n\r\n", 1, true},
		{strings.Repeat(file, 5), 8, true}, // 2,001 lines a file part: the fifth is over
	} {
		tooLarge := false
		n := 0
		for range MultipartFields([]byte(tc.body), "b", &tooLarge) {
			n++
		}
		assert.Equal(t, tc.fields, n)
		assert.Equal(t, tc.tooMany, tooLarge)
	}
}
