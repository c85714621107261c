package scan

import (
	"strings"
	"testing"
	"time"

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
		inTime(t, 2*time.Second, s[:8], func() { assert.Equal(t, None, String(s)) })
	}
	assert.Equal(t, CommandInjection, String(strings.Repeat(";", n)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat("$(", n/2)+"id"))
	assert.Equal(t, CommandInjection, String(strings.Repeat(";$IFS", n/5)+"whoami"))
}

// inTime fails t when f takes longer than limit (leaving it to run).
func inTime(t *testing.T, limit time.Duration, name string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%q…: not done in %v", name, limit)
	}
}
