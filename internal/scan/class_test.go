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

func TestClassNames(t *testing.T) {
	for c := SQLInjection; int(c) < Classes; c++ {
		assert.NotEmpty(t, c.Name())
		assert.Equal(t, c, ClassOf(c.Message()), c.Name())
	}
	assert.Equal(t, None, ClassOf("is required"))
	assert.Empty(t, None.Name())
}
