package scan

import (
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
