package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDatabaseCallLinear: the method after each db. is read as far as it
// is letters. It was read up to the next (, so that every db. before a
// late ( read the rest of the value again: 100 KB of "db." and a ( took
// ten seconds, a body of them many minutes.
func TestDatabaseCallLinear(t *testing.T) {
	const n = 256 << 10
	for _, s := range []string{strings.Repeat("db.", n/3) + "(", strings.Repeat("db.x", n/4) + "(", strings.Repeat("db.x.", n/5) + "("} {
		assert.Equal(t, None, String(s), s[:8]) // not timed (unit tests assert no times): quadratic, this test takes minutes
	}
	assert.Equal(t, NoSQLInjection, String(strings.Repeat("db.", n/3)+"getCollectionNames()"))
	assert.Equal(t, NoSQLInjection, String(strings.Repeat("db.x", n/4)+".find({})"))
	for _, set := range []*foldSet{databaseMethods, collectionMethods} {
		for _, w := range set.slots {
			assert.True(t, w == "" || !strings.ContainsFunc(w, func(r rune) bool { return r > 0x7f || !isLetter(byte(r)) }), "%q: methodCall reads letters only", w)
		}
	}
}
