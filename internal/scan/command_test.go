package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCommandWordSets: the word commands that need less than an argument
// are word commands.
func TestCommandWordSets(t *testing.T) {
	for _, set := range []*foldSet{aloneCommands, numberCommands, netTools, interpreters, netWord} {
		for _, w := range set.slots {
			if w != "" {
				assert.True(t, wordCommands.hasFold(w), w)
			}
		}
	}
}

// TestCommandInjectionLinear: a run of metacharacters is read once. Each
// was followed by a walk over the lead of blanks, quotes and more
// metacharacters after it, the rest of the run: 100 KB of ";" took
// seven seconds, a body of them minutes.
func TestCommandInjectionLinear(t *testing.T) {
	const n = 256 << 10
	for _, s := range []string{
		strings.Repeat(";", n), strings.Repeat("|", n), strings.Repeat("&", n), strings.Repeat("`", n),
		strings.Repeat("\n", n), strings.Repeat("\r", n), strings.Repeat("$(", n/2), strings.Repeat(`{"$`, n/3),
		strings.Repeat("; ", n/2), strings.Repeat("${IFS}", n/6), strings.Repeat(";$1", n/3),
	} {
		assert.Equal(t, None, String(s), s[:8]) // not timed (unit tests assert no times): quadratic, this test takes minutes
	}
	assert.Equal(t, CommandInjection, String(strings.Repeat(";", n)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat("$(", n/2)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat(";$IFS", n/5)+"whoami"))
}
