package licence

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzVerify reads any text as a key, and any bytes as a payload signed with
// a trusted key: Verify never panics, refuses with one line of an *Error
// that does not echo the key, and any licence it accepts is one that Parse
// reads the same and that Issue re-issues to an identical licence.
func FuzzVerify(f *testing.F) {
	pub, priv := newPair(f)
	ring := Keyring{"test-1": pub}
	f.Add(issue(f, priv, acme()), []byte(good))
	f.Add("cg1.e30.AAAA", []byte(`{}`))
	f.Add("key/eyJ9.sig", []byte(`{"kid":"test-1","kid":"test-1"}`))
	f.Add("cg2.x.y", []byte(strings.Replace(good, `"features"`, `"hosts":[],"features"`, 1)))
	f.Add(" cg1..\n", []byte(strings.Replace(good, `"Acme Ltd"`, `"Acme\u2028Ltd"`, 1)))
	f.Add("cg1.ab.cd.ef", []byte(strings.Replace(good, `Z"`, `.5Z"`, 1)))
	f.Add("", []byte(strings.Replace(good, `"sink-protection"`, `"sink-protection","later-feature"`, 1)))
	f.Fuzz(func(t *testing.T, key string, payload []byte) {
		for _, k := range []string{key, signed(priv, string(payload))} {
			at := now
			if p, err := Parse(k); err == nil {
				at = p.IssuedAt // inside its validity, so a good signature is accepted
			}
			l, err := Verify(k, ring, at)
			if err != nil {
				require.Nil(t, l)
				var e *Error
				require.True(t, errors.As(err, &e), "%T %v", err, err)
				require.True(t, e.Reason >= Missing && e.Reason <= NotYetValid, "%v", e.Reason)
				msg := err.Error()
				require.NotContains(t, msg, "\n")
				if k = strings.TrimSpace(k); len(k) >= 33 {
					require.NotContains(t, msg, k[:33])
					require.NotContains(t, msg, k[len(k)-33:])
				}
				continue
			}
			p, err := Parse(k)
			require.NoError(t, err)
			assert.Equal(t, l, p)
			again, err := Issue(priv, *l)
			require.NoError(t, err, "Verify accepted %+v", l)
			l2, err := Verify(again, ring, at)
			require.NoError(t, err)
			require.Equal(t, l, l2)
			require.Equal(t, time.UTC, l.Expires.Location())
		}
	})
}
