package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassMessagesNameTheClassOnly(t *testing.T) {
	for c := SQLInjection; c <= PrototypePollution; c++ {
		assert.Regexp(t, `^possible [a-zA-Z -]+$`, c.Message())
	}
	assert.Empty(t, None.Message())
}
