package licence

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsExample holds docs/licensing.md to the format: its example key
// verifies with its example public key, and its payload is the one shown.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/licensing.md")
	require.NoError(t, err)
	key := regexp.MustCompile(`(?m)^cg1\.[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{80,}$`).FindString(string(doc))
	require.NotEmpty(t, key, "the example key")
	block, _ := pem.Decode(doc)
	require.NotNil(t, block, "the example public key")
	pk, err := x509.ParsePKIXPublicKey(block.Bytes)
	require.NoError(t, err)

	l, err := Verify(key, Keyring{"example-1": pk.(ed25519.PublicKey)}, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, "Acme Ltd", l.Licensee)
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(key, ".")[1])
	require.NoError(t, err)
	assert.Contains(t, string(doc), "```json\n"+string(payload)+"\n```")

	_, err = Verify(key, BuiltIn, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	assert.Equal(t, UnknownKeyID, reasonOf(t, err), "no build trusts the example")
}

func BenchmarkVerify(b *testing.B) {
	pub, priv := newPair(b)
	ring := Keyring{"test-1": pub}
	key := issue(b, priv, acme())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(key, ring, now); err != nil {
			b.Fatal(err)
		}
	}
}
