package licence

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// now is the time every test verifies at.
var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func newPair(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return pub, priv
}

func acme() Licence {
	return Licence{
		KeyID:    "test-1",
		Licensee: "Acme Ltd",
		IssuedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Expires:  time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC),
		Features: []string{FeatureLearningMode, FeatureSinkProtection},
	}
}

func issue(t testing.TB, priv ed25519.PrivateKey, l Licence) string {
	t.Helper()
	key, err := Issue(priv, l)
	require.NoError(t, err)
	return key
}

// signed makes a key of any payload text, signed as Issue signs.
func signed(priv ed25519.PrivateKey, payload string) string {
	s := Prefix + base64.RawURLEncoding.EncodeToString([]byte(payload))
	return s + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(s)))
}

// good is the payload Issue writes for acme(), as text to edit.
const good = `{"kid":"test-1","licensee":"Acme Ltd","issued":"2026-11-01T00:00:00Z","expires":"2027-12-31T23:59:59Z","features":["learning-mode","sink-protection"]}`

func reasonOf(t *testing.T, err error) Reason {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "%T %v", err, err)
	return e.Reason
}

func TestIssue_WritesThePayloadAsDocumented(t *testing.T) {
	_, priv := newPair(t)
	key := issue(t, priv, acme())
	assert.Equal(t, signed(priv, good), key, "Ed25519 is deterministic: same payload bytes, same key")
	assert.True(t, strings.HasPrefix(key, "cg1."))
	for _, c := range key {
		assert.True(t, isKeyByte(byte(c)), "%q", c)
	}
}

func TestVerify_RoundTrip(t *testing.T) {
	pub, priv := newPair(t)
	ring := Keyring{"test-1": pub}
	in := acme()
	// Local zone and nanoseconds: Issue writes UTC to the second.
	in.IssuedAt = time.Date(2026, 11, 1, 1, 0, 0, 999, time.FixedZone("CET", 3600))
	key := issue(t, priv, in)

	l, err := Verify(key, ring, now)
	require.NoError(t, err)
	assert.Equal(t, &Licence{
		KeyID:    "test-1",
		Licensee: "Acme Ltd",
		IssuedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Expires:  time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC),
		Features: []string{"learning-mode", "sink-protection"},
	}, l)
	assert.True(t, l.Entitles(FeatureLearningMode))
	assert.True(t, l.Entitles(FeatureSinkProtection))
	assert.False(t, l.Entitles("metrics"))

	parsed, err := Parse(key)
	require.NoError(t, err)
	assert.Equal(t, l, parsed)

	again, err := Verify(" \n"+key+"\r\n", ring, now)
	require.NoError(t, err, "a key read from a file keeps its line break")
	assert.Equal(t, l, again)

	other := acme()
	other.Licensee = "Zoë & Søn <Ltd> \"quoted\""
	other.Features = []string{"sink-protection", "a-feature-of-a-later-version"}
	l, err = Verify(issue(t, priv, other), ring, now)
	require.NoError(t, err)
	assert.Equal(t, other.Licensee, l.Licensee)
	assert.Equal(t, other.Features, l.Features, "a feature this version does not know is kept and grants nothing")
}

func TestVerify_Boundaries(t *testing.T) {
	pub, priv := newPair(t)
	ring := Keyring{"test-1": pub}
	key := issue(t, priv, acme())
	exp := acme().Expires

	_, err := Verify(key, ring, exp)
	assert.NoError(t, err, "valid at its expiry instant")
	_, err = Verify(key, ring, exp.Add(time.Second))
	assert.EqualError(t, err, "licence key expired on 2027-12-31")

	future := acme()
	future.IssuedAt = now.Add(ClockSkew)
	_, err = Verify(issue(t, priv, future), ring, now)
	assert.NoError(t, err, "issued exactly the clock skew ahead")
	future.IssuedAt = now.Add(ClockSkew + time.Second)
	_, err = Verify(issue(t, priv, future), ring, now)
	assert.EqualError(t, err, "licence key is not valid before 2026-11-25T13:00:01Z (check this host's clock)")
}

func TestVerify_Refusals(t *testing.T) {
	pub, priv := newPair(t)
	_, otherPriv := newPair(t)
	ring := Keyring{"test-1": pub, "test-2": pub}
	valid := issue(t, priv, acme())
	payloadOf := func(key string) string { return strings.Split(key, ".")[1] }
	sigOf := func(key string) string { return strings.Split(key, ".")[2] }
	edit := func(old, new string) string { return signed(priv, strings.Replace(good, old, new, 1)) }
	expired := acme()
	expired.IssuedAt = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	expired.Expires = time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
	early := acme()
	early.IssuedAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	stranger := acme()
	stranger.KeyID = "cg-2031-1"
	tampered := acme()
	tampered.Licensee = "Mallory Ltd"

	tests := []struct {
		name   string
		key    string
		reason Reason
		msg    string
	}{
		{"empty", "", Missing, "no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)"},
		{"only white space", " \n\t", Missing, "no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)"},
		{"too long", "cg1." + strings.Repeat("A", MaxKeyLen), Malformed, "licence key is malformed: it is 4100 bytes, more than 4096"},
		{"a Keygen key", "key/eyJhY2NvdW50Ijp7fX0=.Z_fDBaVq", Malformed, `licence key is malformed: it does not start with "cg1." (it starts with "key/"…)`},
		{"a JWT", "eyJhbGciOiJFZERTQSJ9.e30.sig", Malformed, `licence key is malformed: it does not start with "cg1." (it starts with "eyJh"…)`},
		{"short and wrong", "cg", Malformed, `licence key is malformed: it does not start with "cg1." (it starts with "cg")`},
		{"upper case prefix", "CG1." + valid[4:], Malformed, `licence key is malformed: it does not start with "cg1." (it starts with "CG1."…)`},
		{"a later version", "cg2." + valid[4:], Malformed, "licence key is malformed: version cg2 is not read by this contractguard, which reads cg1 keys; upgrade it"},
		{"padding", valid + "==", Malformed, fmtAt("'='", len(valid))},
		{"standard base64", "cg1.ab+/." + sigOf(valid), Malformed, fmtAt("'+'", 6)},
		{"a line break inside", valid[:10] + "\n" + valid[10:], Malformed, fmtAt("'\\n'", 10)},
		{"a space inside", valid[:10] + " " + valid[10:], Malformed, fmtAt("' '", 10)},
		{"not UTF-8", valid[:10] + "\xff" + valid[10:], Malformed, "licence key is malformed: it has the byte 0xff at byte 10; a key is only A-Z a-z 0-9 - _ ."},
		{"a letter outside ASCII", valid[:10] + "é" + valid[10:], Malformed, fmtAt("'é'", 10)},
		{"no signature", "cg1." + payloadOf(valid), Malformed, "licence key is malformed: want cg1.PAYLOAD.SIGNATURE, 3 parts separated by dots, not 2"},
		{"four parts", valid + ".x", Malformed, "licence key is malformed: want cg1.PAYLOAD.SIGNATURE, 3 parts separated by dots, not 4"},
		{"empty payload", "cg1.." + sigOf(valid), Malformed, "licence key is malformed: the payload is empty"},
		{"payload not base64", "cg1.a." + sigOf(valid), Malformed, "licence key is malformed: the payload is not base64url without padding"},
		{"payload with stray bits", "cg1.ab." + sigOf(valid), Malformed, "licence key is malformed: the payload is not base64url without padding"},
		{"signature not base64", "cg1." + payloadOf(valid) + ".a", Malformed, "licence key is malformed: the signature is not base64url without padding"},
		{"empty signature", "cg1." + payloadOf(valid) + ".", Malformed, "licence key is malformed: the signature is 0 bytes, want 64"},
		{"short signature", "cg1." + payloadOf(valid) + "." + sigOf(valid)[:40], Malformed, "licence key is malformed: the signature is 30 bytes, want 64"},
		{"payload not JSON", signed(priv, `{"kid":`), Malformed, "licence key is malformed: the payload is not valid JSON (at byte 7)"},
		{"payload with trailing data", signed(priv, good+`{}`), Malformed, "licence key is malformed: the payload is not valid JSON (at byte 150)"},
		{"payload an array", signed(priv, `["test-1"]`), Malformed, "licence key is malformed: the payload is not a JSON object"},
		{"payload null", signed(priv, `null`), Malformed, "licence key is malformed: the payload is not a JSON object"},
		{"payload a string", signed(priv, `"cg1"`), Malformed, "licence key is malformed: the payload is not a JSON object"},
		{"payload not UTF-8", edit("Acme", "Acm\xe9"), Malformed, "licence key is malformed: the payload is not valid JSON (at byte 31)"},
		{"a field twice", edit(`{"kid":"test-1"`, `{"kid":"test-1","kid":"test-2"`), Malformed, `licence key is malformed: the payload has "kid" twice`},
		{"an unknown field", edit(`"features"`, `"hosts":["a.example"],"features"`), Malformed, `licence key is malformed: the payload has the unknown field "hosts" (a cg1 key has kid, licensee, issued, expires, features)`},
		{"a field in another case", edit(`"kid"`, `"KID"`), Malformed, `licence key is malformed: the payload has the unknown field "KID" (a cg1 key has kid, licensee, issued, expires, features)`},
		{"no expiry", edit(`"expires":"2027-12-31T23:59:59Z",`, ``), Malformed, `licence key is malformed: the payload has no "expires"`},
		{"no key id", edit(`"kid":"test-1",`, ``), Malformed, `licence key is malformed: the payload has no "kid"`},
		{"key id a number", edit(`"test-1"`, `1`), Malformed, `licence key is malformed: the payload's "kid" is not a string`},
		{"licensee null", edit(`"Acme Ltd"`, `null`), Malformed, `licence key is malformed: the payload's "licensee" is not a string`},
		{"features a string", edit(`["learning-mode","sink-protection"]`, `"learning-mode"`), Malformed, `licence key is malformed: the payload's "features" is not a list of strings`},
		{"features of numbers", edit(`["learning-mode","sink-protection"]`, `[1]`), Malformed, `licence key is malformed: the payload's "features" is not a list of strings`},
		{"features null", edit(`["learning-mode","sink-protection"]`, `null`), Malformed, `licence key is malformed: the payload's "features" is not a list of strings`},
		{"no features", edit(`["learning-mode","sink-protection"]`, `[]`), Malformed, "licence key is malformed: it names no feature"},
		{"a feature twice", edit(`"sink-protection"`, `"learning-mode"`), Malformed, "licence key is malformed: it names feature learning-mode twice"},
		{"a bad feature name", edit(`"sink-protection"`, `"Sink Protection"`), Malformed, `licence key is malformed: feature "Sink Protection": want 1 to 32 of a-z 0-9 -`},
		{"too many features", edit(`"sink-protection"`, `"a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p"`), Malformed, "licence key is malformed: it names 17 features, more than 16"},
		{"a date without a time", edit(`2027-12-31T23:59:59Z`, `2027-12-31`), Malformed, `licence key is malformed: the payload's "expires" is "2027-12-31", want a UTC time to the second like 2027-12-31T23:59:59Z`},
		{"fractional seconds", edit(`2027-12-31T23:59:59Z`, `2027-12-31T23:59:59.5Z`), Malformed, `licence key is malformed: the payload's "expires" is "2027-12-31T23:59:59.5Z", want a UTC time to the second like 2027-12-31T23:59:59Z`},
		{"an offset", edit(`2026-11-01T00:00:00Z`, `2026-11-01T01:00:00+01:00`), Malformed, `licence key is malformed: the payload's "issued" is "2026-11-01T01:00:00+01:00", want a UTC time to the second like 2027-12-31T23:59:59Z`},
		{"a long bad time", edit(`2026-11-01T00:00:00Z`, strings.Repeat("9", 100)), Malformed, `licence key is malformed: the payload's "issued" is "99999999999999999999999999999999"…, want a UTC time to the second like 2027-12-31T23:59:59Z`},
		{"year one", edit(`2026-11-01T00:00:00Z`, `0001-01-01T00:00:00Z`), Malformed, "licence key is malformed: the year 1 is not between 2000 and 9999"},
		{"expires before issued", edit(`2027-12-31T23:59:59Z`, `2026-10-31T00:00:00Z`), Malformed, "licence key is malformed: it expires before it is issued"},
		{"expires when issued", edit(`2027-12-31T23:59:59Z`, `2026-11-01T00:00:00Z`), Malformed, "licence key is malformed: it expires before it is issued"},
		{"a bad key id", edit(`"test-1"`, `"Test_1"`), Malformed, `licence key is malformed: key id "Test_1": want 1 to 32 of a-z 0-9 -`},
		{"an empty key id", edit(`"test-1"`, `""`), Malformed, `licence key is malformed: key id "": want 1 to 32 of a-z 0-9 -`},
		{"an empty licensee", edit(`"Acme Ltd"`, `""`), Malformed, "licence key is malformed: the licensee is empty"},
		{"a licensee on two lines", edit(`"Acme Ltd"`, `"Acme\nLtd"`), Malformed, "licence key is malformed: the licensee has the unprintable character U+000A"},
		{"a licensee with a line separator", edit(`"Acme Ltd"`, `"Acme\u2028Ltd"`), Malformed, "licence key is malformed: the licensee has the unprintable character U+2028"},
		{"a licensee padded", edit(`"Acme Ltd"`, `" Acme Ltd"`), Malformed, "licence key is malformed: the licensee starts or ends with white space"},
		{"a licensee too long", edit(`"Acme Ltd"`, `"`+strings.Repeat("A", 201)+`"`), Malformed, "licence key is malformed: the licensee is 201 bytes, more than 200"},
		{"an unknown key id", issue(t, priv, stranger), UnknownKeyID, `licence key is signed with key id "cg-2031-1", which this contractguard does not know (it knows test-1, test-2)`},
		{"a tampered payload", "cg1." + payloadOf(issue(t, priv, tampered)) + "." + sigOf(valid), BadSignature, `licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"a tampered signature", "cg1." + payloadOf(valid) + "." + flip(sigOf(valid)), BadSignature, `licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"signed with another private key", issue(t, otherPriv, acme()), BadSignature, `licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"expired", issue(t, priv, expired), Expired, "licence key expired on 2026-01-31"},
		{"not yet valid", issue(t, priv, early), NotYetValid, "licence key is not valid before 2026-12-01T00:00:00Z (check this host's clock)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Verify(tt.key, ring, now)
			require.Error(t, err)
			assert.Nil(t, l)
			assert.Equal(t, tt.reason, reasonOf(t, err))
			assert.Equal(t, tt.msg, err.Error())
			assert.NotContains(t, err.Error(), "\n")
			if len(tt.key) > 8 {
				assert.NotContains(t, err.Error(), strings.TrimSpace(tt.key)[:8], "a message never echoes more than 4 bytes of the key")
			}
			if tt.reason == Missing || tt.reason == Malformed {
				_, perr := Parse(tt.key)
				assert.Equal(t, err, perr, "Parse refuses what is malformed, as Verify does")
			}
		})
	}
}

// fmtAt is the message for a character outside the key's alphabet.
func fmtAt(char string, at int) string {
	return "licence key is malformed: it has " + char + " at byte " + strconv.Itoa(at) + "; a key is only A-Z a-z 0-9 - _ ."
}

// flip changes the first character of a base64url text to another.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestVerify_KeyringWithABadPublicKey(t *testing.T) {
	_, priv := newPair(t)
	_, err := Verify(issue(t, priv, acme()), Keyring{"test-1": ed25519.PublicKey{1, 2, 3}}, now)
	assert.Equal(t, UnknownKeyID, reasonOf(t, err))
	assert.EqualError(t, err, `licence key is signed with key id "test-1", whose public key is 3 bytes, not 32`)

	_, err = Verify(issue(t, priv, acme()), nil, now)
	assert.EqualError(t, err, `licence key is signed with key id "test-1", which this contractguard does not know (it knows none)`)
}

func TestParse_DoesNotCheckTheSignature(t *testing.T) {
	_, priv := newPair(t)
	_, stranger := newPair(t)
	key := issue(t, stranger, acme())
	l, err := Parse(key)
	require.NoError(t, err)
	assert.Equal(t, "Acme Ltd", l.Licensee)
	_, err = Verify(key, Keyring{"test-1": priv.Public().(ed25519.PublicKey)}, now)
	assert.Equal(t, BadSignature, reasonOf(t, err))
}

func TestIssue_Refusals(t *testing.T) {
	_, priv := newPair(t)
	tests := []struct {
		name string
		priv ed25519.PrivateKey
		edit func(*Licence)
		msg  string
	}{
		{"no signing key", nil, func(*Licence) {}, "licence: the signing key is 0 bytes, want an Ed25519 private key of 64"},
		{"a seed, not a private key", priv.Seed(), func(*Licence) {}, "licence: the signing key is 32 bytes, want an Ed25519 private key of 64"},
		{"no expiry", priv, func(l *Licence) { l.Expires = time.Time{} }, "licence: a key needs both an issued-at and an expiry time"},
		{"no issued-at", priv, func(l *Licence) { l.IssuedAt = time.Time{} }, "licence: a key needs both an issued-at and an expiry time"},
		{"year 10000", priv, func(l *Licence) { l.Expires = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "licence: the year 10000 is not between 2000 and 9999"},
		{"expires first", priv, func(l *Licence) { l.Expires = l.IssuedAt.Add(-time.Hour) }, "licence: it expires before it is issued"},
		{"a bad key id", priv, func(l *Licence) { l.KeyID = "cg 2026" }, `licence: key id "cg 2026": want 1 to 32 of a-z 0-9 -`},
		{"no licensee", priv, func(l *Licence) { l.Licensee = "" }, "licence: the licensee is empty"},
		{"a tab in the licensee", priv, func(l *Licence) { l.Licensee = "Acme\tLtd" }, "licence: the licensee has the unprintable character U+0009"},
		{"a licensee not UTF-8", priv, func(l *Licence) { l.Licensee = "Acm\xe9" }, "licence: the licensee is not UTF-8"},
		{"no features", priv, func(l *Licence) { l.Features = nil }, "licence: it names no feature"},
		{"a feature in capitals", priv, func(l *Licence) { l.Features = []string{"LEARNING-MODE"} }, `licence: feature "LEARNING-MODE": want 1 to 32 of a-z 0-9 -`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := acme()
			tt.edit(&l)
			key, err := Issue(tt.priv, l)
			assert.EqualError(t, err, tt.msg)
			assert.Empty(t, key)
		})
	}
}

func TestRequire(t *testing.T) {
	pub, priv := newPair(t)
	ring := Keyring{"test-1": pub}
	both := []string{FeatureLearningMode, FeatureSinkProtection}
	learningOnly := acme()
	learningOnly.Features = []string{FeatureLearningMode}
	expired := acme()
	expired.IssuedAt = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	expired.Expires = time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
	stranger := acme()
	stranger.KeyID = "cg-2031-1"
	_, otherPriv := newPair(t)

	tests := []struct {
		name     string
		key      string
		features []string
		licensed bool // a licence comes back
		reason   Reason
		msg      string
	}{
		{"valid, both wanted", issue(t, priv, acme()), both, true, 0, ""},
		{"valid, none wanted", issue(t, priv, acme()), nil, true, 0, ""},
		{"no key, none wanted", "", nil, false, 0, ""},
		{"no key", "", both, false, Missing,
			"learning-mode is a paid feature: no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)\n" +
				"sink-protection is a paid feature: no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)"},
		{"malformed", "cg1.abc", []string{FeatureSinkProtection}, false, Malformed,
			"sink-protection is a paid feature: licence key is malformed: want cg1.PAYLOAD.SIGNATURE, 3 parts separated by dots, not 2"},
		{"wrong signature", issue(t, otherPriv, acme()), []string{FeatureLearningMode}, false, BadSignature,
			`learning-mode is a paid feature: licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"unknown key id", issue(t, priv, stranger), []string{FeatureLearningMode}, false, UnknownKeyID,
			`learning-mode is a paid feature: licence key is signed with key id "cg-2031-1", which this contractguard does not know (it knows test-1)`},
		{"expired", issue(t, priv, expired), []string{FeatureLearningMode}, false, Expired,
			"learning-mode is a paid feature: licence key expired on 2026-01-31"},
		{"not entitled", issue(t, priv, learningOnly), both, true, NotEntitled,
			`sink-protection is a paid feature: licence key for "Acme Ltd" covers learning-mode, not sink-protection`},
		{"broken, none wanted: Verify's error, for a warning", issue(t, priv, expired), nil, false, Expired,
			"licence key expired on 2026-01-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Require(tt.key, ring, now, tt.features)
			assert.Equal(t, tt.licensed, l != nil)
			if tt.msg == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.msg, err.Error())
			assert.Equal(t, tt.reason, reasonOf(t, err))
			var e *Error
			require.ErrorAs(t, err, &e)
			if len(tt.features) > 0 {
				assert.Contains(t, tt.features, e.Feature)
			} else {
				assert.Empty(t, e.Feature)
			}
		})
	}
}

func TestExpiryWarning(t *testing.T) {
	l := acme()
	exp := l.Expires
	tests := []struct {
		name string
		now  time.Time
		want string
	}{
		{"a year left", exp.AddDate(-1, 0, 0), ""},
		{"15 days left", exp.Add(-15 * 24 * time.Hour), ""},
		{"a second more than 14 days", exp.Add(-WarnBefore - time.Second), ""},
		{"14 days left", exp.Add(-WarnBefore), `licence key for "Acme Ltd" expires on 2027-12-31, in 14 days: renew it, or a start after that fails for learning-mode, sink-protection`},
		{"13 days and an hour", exp.Add(-13*24*time.Hour - time.Hour), `licence key for "Acme Ltd" expires on 2027-12-31, in 14 days: renew it, or a start after that fails for learning-mode, sink-protection`},
		{"1 day left", exp.Add(-24 * time.Hour), `licence key for "Acme Ltd" expires on 2027-12-31, in 1 day: renew it, or a start after that fails for learning-mode, sink-protection`},
		{"a second left", exp.Add(-time.Second), `licence key for "Acme Ltd" expires on 2027-12-31, in 1 day: renew it, or a start after that fails for learning-mode, sink-protection`},
		{"its last instant", exp, `licence key for "Acme Ltd" expires on 2027-12-31, today: renew it, or a start after that fails for learning-mode, sink-protection`},
		{"expired while running", exp.Add(time.Second), `licence key for "Acme Ltd" expired on 2027-12-31: learning-mode, sink-protection stay on until this service restarts, and a start after that fails`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ExpiryWarning(&l, tt.now))
		})
	}
	assert.Empty(t, ExpiryWarning(nil, now))
}

func TestBuiltIn(t *testing.T) {
	require.NotEmpty(t, BuiltIn)
	for id, pub := range BuiltIn {
		assert.True(t, validName(id), id)
		assert.Len(t, pub, ed25519.PublicKeySize, id)
	}
	// The built-in ids are trusted only for keys their own private key signed.
	_, priv := newPair(t)
	l := acme()
	l.KeyID = "cg-2026-1"
	_, err := Verify(issue(t, priv, l), BuiltIn, now)
	assert.Equal(t, BadSignature, reasonOf(t, err))
	assert.Panics(t, func() { publicKey("AAAA") })
}

func TestReason_String(t *testing.T) {
	assert.Equal(t, "bad signature", BadSignature.String())
	assert.Equal(t, "not entitled", NotEntitled.String())
	assert.Equal(t, "reason(0)", Reason(0).String())
	assert.Equal(t, "reason(99)", Reason(99).String())
}

func TestEntitles_Nil(t *testing.T) {
	var l *Licence
	assert.False(t, l.Entitles(FeatureLearningMode))
}
