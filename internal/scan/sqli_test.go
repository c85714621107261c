package scan

import (
	"math/rand/v2"
	"strings"
	"testing"

	libinjection "github.com/corazawaf/libinjection-go"
	"github.com/stretchr/testify/require"
)

// sameSQLiVerdict fails t when sqlInjection, which may hand libinjection
// the value in upper case, and libinjection on the value as it is
// disagree.
func sameSQLiVerdict(t testing.TB, s string) {
	want, fp := libinjection.IsSQLi(s)
	var buf []byte
	for _, b := range []*[]byte{nil, &buf} {
		if got := sqlInjection(s, bytesIn(s), b); got != want {
			t.Fatalf("%q: libinjection says %v (%s), upper-cased %v", s, want, fp, got)
		}
	}
}

// TestSQLiUpper holds sqlInjection to libinjection on every sample of the
// corpora, in lower case, in upper case and with the case of each letter
// drawn at random, and on what libinjection reads by case: \N, $tag$
// strings, q'x…x' strings with a letter for delimiter, sp_password.
func TestSQLiUpper(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	for _, c := range publicCorpora(t) {
		for _, s := range c.samples {
			mixed := []byte(s.text)
			for i, ch := range mixed {
				if isLetter(ch) && r.IntN(2) == 0 {
					mixed[i] = ch ^ 0x20
				}
			}
			for _, v := range []string{s.text, strings.ToLower(s.text), strings.ToUpper(s.text), string(mixed)} {
				sameSQLiVerdict(t, v)
				n++
			}
		}
	}
	require.Greater(t, n, 5_000)
	for _, s := range []string{
		`1 \N union select 1`, `\n or 1=1`, `1 or \n`, `\n--)`, `$abc$ x $ABC$ or 1=1`, `$a$ union select $A$`,
		`1;exec sp_password--`, `1;exec SP_PASSWORD--`, `admin'-- sp_password`, `1' or 1=1 -- sp_Password`,
		`0x1f union select 1`, `0X1F UNION SELECT 1`, `1e1 or 1`, `1E1 OR 1`, `n'x' or 1=1`, `q'[x]' or 1=1`,
		`q'a A' a' or 1=1 --`, `q'a A' a' union select password from users --`, `admin' and q'a A' a' or 1=1--`,
		`q'zZ' z' union select null--`, `q'a x A' or 1=1 --`, `nq'a A' or 1=1--`, `Q'b B' b' or 1=1 --`,
		`x'41' union select 1`, `b'01' or 1`, `e'x' or 1`, `u&'x' or 1`, "\u00e0 or 1=1", "s\u00e9lect 1 from t",
	} {
		sameSQLiVerdict(t, s)
	}
}

// FuzzSQLiUpper holds sqlInjection to libinjection on random input.
func FuzzSQLiUpper(f *testing.F) {
	for _, s := range []string{"1 or 1=1", "select * from users where id=1", `$x$ or $X$`, `\n`, "sp_password", "Ünion select", `q'a A' a' or 1=1 --`, `\n--)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameSQLiVerdict(t, s)
		sameSQLiVerdict(t, strings.ToLower(s))
	})
}

// TestUpperASCII: the eight-bytes-at-a-time copy upper-cases a-z and
// nothing else, at every length and alignment.
func TestUpperASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20_000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		s := string(b)
		want := []byte(s)
		for i, c := range want {
			if 'a' <= c && c <= 'z' {
				want[i] = c - 32
			}
		}
		got := make([]byte, len(s))
		upperASCII(got, s)
		require.Equal(t, want, got, "%q", s)
	}
}
