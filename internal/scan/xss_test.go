package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScriptURL: every scheme that runs script, in any case, with the
// blanks and control characters browsers drop before and inside it, and
// the data: media types that hold markup.
func TestScriptURL(t *testing.T) {
	for s, want := range map[string]bool{
		"javascript:alert(1)":           true,
		"  JavaScript:alert(1)":         true,
		"java\tscript:alert(1)":         true,
		"java\nscript:alert(1)":         true,
		"\x01javascript:alert(1)":       true,
		"vbscript:msgbox(1)":            true,
		"LiveScript:alert(1)":           true,
		"data:text/html,<b>":            true,
		"data: \tTEXT/HTML;base64,PGI+": true,
		"data:image/svg+xml,<svg>":      true,
		"data:application/xhtml+xml,":   true,
		"data:image/png;base64,iVBO":    false,
		"data:text/plain,hello":         false,
		"java script:alert(1)x":         true, // a blank is dropped as well
		"java-script:alert(1)":          false,
		"https://example.com/a:b":       false,
		"mailto:ada@example.com":        false,
		"javascript":                    false,
		"note: javascript:alert(1)":     false,
	} {
		assert.Equal(t, want, scriptURL(s), "%q", s)
	}
}
