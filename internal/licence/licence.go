// Package licence reads, verifies and issues contractguard's offline licence
// keys: one line of text,
//
//	cg1.PAYLOAD.SIGNATURE
//
// where PAYLOAD is the base64url (no padding) of a JSON object
//
//	{"kid":"cg-2026-1","licensee":"Acme Ltd","issued":"2026-11-24T00:00:00Z",
//	 "expires":"2027-12-31T23:59:59Z","features":["learning-mode","sink-protection"]}
//
// and SIGNATURE the base64url (no padding) of the Ed25519 signature of the
// exact bytes "cg1.PAYLOAD": the version prefix and the payload as written,
// so there is nothing to canonicalise. The key id is inside the signed
// payload and readable before the signature is checked (the payload is only
// encoded), so a verifier picks the public key by it, as a JWS picks it by
// its header's "kid". Verification is offline: no network call, ever.
//
// docs/licensing.md is the reference for the format, its evolution and the
// messages.
package licence

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The paid features a key can name.
const (
	// FeatureLearningMode is Options.LearningMode.
	FeatureLearningMode = "learning-mode"
	// FeatureSinkProtection is Options.SinkProtection.
	FeatureSinkProtection = "sink-protection"
)

// Features lists the paid features this version knows, in the order
// messages name them.
var Features = []string{FeatureLearningMode, FeatureSinkProtection}

// Prefix starts every key of the format this package reads and issues. A
// change a cg1 verifier could misread gets a new prefix (cg2.); the version
// is part of what is signed.
const Prefix = "cg1."

// Limits of the format: a key longer than MaxKeyLen is refused before
// anything is decoded.
const (
	// MaxKeyLen is the longest key read, in bytes.
	MaxKeyLen = 4096
	// MaxLicensee is the longest licensee, in bytes.
	MaxLicensee = 200
	// MaxFeatures is the most features a key names.
	MaxFeatures = 16
	// MaxName is the longest key id or feature name, in bytes.
	MaxName = 32
)

// ClockSkew is how far in the future a key's issued-at may be and the key
// still be valid: a host's clock that is behind, or a key issued minutes
// ago in another time zone by a host that is ahead, must not stop a service
// from starting. Beyond it the key is [NotYetValid].
const ClockSkew = time.Hour

// timeLayout is the one way a time is written in a payload: UTC, to the
// second. A time written any other way is malformed, so one instant has one
// spelling.
const timeLayout = "2006-01-02T15:04:05Z"

// The years a key's times may be in: an earlier one is a mistake (a zero
// time.Time is in the year 1), and a later one has no spelling in timeLayout.
const minYear, maxYear = 2000, 9999

// dateLayout is how messages give a day.
const dateLayout = "2006-01-02"

// Licence is what a key holds.
type Licence struct {
	// KeyID names the public key that verifies the key.
	KeyID string
	// Licensee is who the key was issued to.
	Licensee string
	// IssuedAt is when the key starts to be valid (UTC, whole seconds).
	IssuedAt time.Time
	// Expires is the last instant the key is valid (UTC, whole seconds).
	Expires time.Time
	// Features are the paid features the key entitles, as issued. A name
	// this version does not know is kept and grants nothing.
	Features []string
}

// Entitles reports whether the licence names feature.
func (l *Licence) Entitles(feature string) bool {
	return l != nil && slices.Contains(l.Features, feature)
}

// Keyring maps a key id to the Ed25519 public key that verifies the keys
// naming it. Several ids let the vendor rotate its signing key.
type Keyring map[string]ed25519.PublicKey

// IDs returns the ring's key ids, sorted.
func (k Keyring) IDs() []string {
	ids := make([]string, 0, len(k))
	for id := range k {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// payload is the JSON of a key, in the order Issue writes it.
type payload struct {
	KeyID    string   `json:"kid"`
	Licensee string   `json:"licensee"`
	Issued   string   `json:"issued"`
	Expires  string   `json:"expires"`
	Features []string `json:"features"`
}

// fields are the payload's members, all required; any other is refused.
var fields = []string{"kid", "licensee", "issued", "expires", "features"}

var b64 = base64.RawURLEncoding.Strict()

// Parse reads a key without checking its signature: for showing what a key
// holds. Surrounding white space is ignored (a key read from a file keeps
// its line break). Its errors are [*Error]s with Reason [Missing] or
// [Malformed]. Never trust a licence from Parse: use [Verify].
func Parse(key string) (*Licence, error) {
	l, _, _, err := split(key)
	return l, err
}

// split parses key and returns its licence, the signed bytes and the
// signature.
func split(key string) (*Licence, string, []byte, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, "", nil, &Error{Reason: Missing, msg: "no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)"}
	}
	if len(key) > MaxKeyLen {
		return nil, "", nil, malformed("it is %d bytes, more than %d", len(key), MaxKeyLen)
	}
	if !strings.HasPrefix(key, Prefix) {
		if v, ok := otherVersion(key); ok {
			return nil, "", nil, malformed("version %s is not read by this contractguard, which reads %s keys; upgrade it", v, strings.TrimSuffix(Prefix, "."))
		}
		return nil, "", nil, malformed("it does not start with %q (it starts with %s)", Prefix, clip(key, 4))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !isKeyByte(c) {
			what := fmt.Sprintf("the byte 0x%02x", c)
			if r, n := utf8.DecodeRuneInString(key[i:]); n > 1 || r < utf8.RuneSelf {
				what = fmt.Sprintf("%q", r)
			}
			return nil, "", nil, malformed("it has %s at byte %d; a key is only A-Z a-z 0-9 - _ .", what, i)
		}
	}
	parts := strings.Split(key[len(Prefix):], ".")
	if len(parts) != 2 {
		return nil, "", nil, malformed("want %sPAYLOAD.SIGNATURE, 3 parts separated by dots, not %d", Prefix, len(parts)+1)
	}
	enc, encSig := parts[0], parts[1]
	if enc == "" {
		return nil, "", nil, malformed("the payload is empty")
	}
	data, err := b64.DecodeString(enc)
	if err != nil {
		return nil, "", nil, malformed("the payload is not base64url without padding")
	}
	sig, err := b64.DecodeString(encSig)
	if err != nil {
		return nil, "", nil, malformed("the signature is not base64url without padding")
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, "", nil, malformed("the signature is %d bytes, want %d", len(sig), ed25519.SignatureSize)
	}
	l, e := decode(data)
	if e != nil {
		return nil, "", nil, e
	}
	return l, key[:len(Prefix)+len(enc)], sig, nil
}

// otherVersion reports whether key starts like a key of another version of
// the format, "cg" digits ".", and returns that version.
func otherVersion(key string) (string, bool) {
	i := strings.IndexByte(key, '.')
	if i < 3 || i > 6 || !strings.HasPrefix(key, "cg") {
		return "", false
	}
	for _, c := range []byte(key[2:i]) {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return key[:i], true
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// decode reads the payload strictly: a JSON object with exactly the five
// fields, each once, of the right type and form.
func decode(data []byte) (*Licence, *Error) {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(data, &m); err != nil {
		var se *jsontext.SyntacticError
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &se):
			return nil, malformed("the payload has %s twice", clip(se.JSONPointer.LastToken(), MaxName))
		case errors.As(err, &se):
			return nil, malformed("the payload is not valid JSON (at byte %d)", se.ByteOffset)
		}
		return nil, malformed("the payload is not a JSON object")
	}
	if m == nil {
		return nil, malformed("the payload is not a JSON object")
	}
	var unknown []string
	for name := range m {
		if !slices.Contains(fields, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		// A field this version does not know could narrow what the key
		// grants (a host, a limit); a verifier that skipped it would grant
		// more than was sold. New fields come with a new prefix.
		sort.Strings(unknown)
		return nil, malformed("the payload has the unknown field %s (a cg1 key has %s)", clip(unknown[0], MaxName), strings.Join(fields, ", "))
	}
	for _, name := range fields {
		if _, ok := m[name]; !ok {
			return nil, malformed("the payload has no %q", name)
		}
	}
	var p payload
	for _, f := range []struct {
		name string
		to   *string
	}{{"kid", &p.KeyID}, {"licensee", &p.Licensee}, {"issued", &p.Issued}, {"expires", &p.Expires}} {
		v := m[f.name]
		if v.Kind() != '"' || json.Unmarshal(v, f.to) != nil {
			return nil, malformed("the payload's %q is not a string", f.name)
		}
	}
	if v := m["features"]; v.Kind() != '[' || json.Unmarshal(v, &p.Features) != nil {
		return nil, malformed("the payload's \"features\" is not a list of strings")
	}
	l := &Licence{KeyID: p.KeyID, Licensee: p.Licensee, Features: p.Features}
	var err error
	if l.IssuedAt, err = parseTime(p.Issued); err != nil {
		return nil, malformed("the payload's \"issued\" %v", err)
	}
	if l.Expires, err = parseTime(p.Expires); err != nil {
		return nil, malformed("the payload's \"expires\" %v", err)
	}
	if problem := l.check(); problem != "" {
		return nil, malformed("%s", problem)
	}
	return l, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil || t.Format(timeLayout) != s {
		return time.Time{}, fmt.Errorf("is %s, want a UTC time to the second like 2027-12-31T23:59:59Z", clip(s, MaxName))
	}
	return t, nil
}

// check says what is wrong with l's fields, or "".
func (l *Licence) check() string {
	if !validName(l.KeyID) {
		return fmt.Sprintf("key id %s: want 1 to %d of a-z 0-9 -", clip(l.KeyID, MaxName), MaxName)
	}
	switch {
	case l.Licensee == "":
		return "the licensee is empty"
	case len(l.Licensee) > MaxLicensee:
		return fmt.Sprintf("the licensee is %d bytes, more than %d", len(l.Licensee), MaxLicensee)
	case !utf8.ValidString(l.Licensee):
		return "the licensee is not UTF-8"
	case strings.TrimSpace(l.Licensee) != l.Licensee:
		return "the licensee starts or ends with white space"
	}
	for _, r := range l.Licensee {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("the licensee has the unprintable character %U", r)
		}
	}
	switch n := len(l.Features); {
	case n == 0:
		return "it names no feature"
	case n > MaxFeatures:
		return fmt.Sprintf("it names %d features, more than %d", n, MaxFeatures)
	}
	for i, f := range l.Features {
		if !validName(f) {
			return fmt.Sprintf("feature %s: want 1 to %d of a-z 0-9 -", clip(f, MaxName), MaxName)
		}
		if slices.Contains(l.Features[:i], f) {
			return fmt.Sprintf("it names feature %s twice", f)
		}
	}
	for _, t := range []time.Time{l.IssuedAt, l.Expires} {
		if y := t.Year(); y < minYear || y > maxYear {
			return fmt.Sprintf("the year %d is not between %d and %d", y, minYear, maxYear)
		}
	}
	if !l.Expires.After(l.IssuedAt) {
		return "it expires before it is issued"
	}
	return ""
}

// validName reports whether s is a key id or feature name: 1 to MaxName
// bytes of a-z, 0-9 and -.
func validName(s string) bool {
	if s == "" || len(s) > MaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Verify checks key against keys at the time now: the format, the key id,
// the signature over the prefix and the payload, then the dates. A key is
// valid from IssuedAt-[ClockSkew] to Expires, both included. Its errors are
// [*Error]s; it never makes a network call.
func Verify(key string, keys Keyring, now time.Time) (*Licence, error) {
	l, signed, sig, err := split(key)
	if err != nil {
		return nil, err
	}
	pub, ok := keys[l.KeyID]
	if !ok {
		return nil, &Error{Reason: UnknownKeyID, KeyID: l.KeyID,
			msg: fmt.Sprintf("licence key is signed with key id %q, which this contractguard does not know (it knows %s)", l.KeyID, list(keys.IDs()))}
	}
	if len(pub) != ed25519.PublicKeySize {
		return nil, &Error{Reason: UnknownKeyID, KeyID: l.KeyID,
			msg: fmt.Sprintf("licence key is signed with key id %q, whose public key is %d bytes, not %d", l.KeyID, len(pub), ed25519.PublicKeySize)}
	}
	if !ed25519.Verify(pub, []byte(signed), sig) {
		return nil, &Error{Reason: BadSignature, KeyID: l.KeyID,
			msg: fmt.Sprintf("licence key signature does not verify with key id %q: the key was altered, or not issued by the vendor", l.KeyID)}
	}
	if l.IssuedAt.After(now.Add(ClockSkew)) {
		return nil, &Error{Reason: NotYetValid, KeyID: l.KeyID,
			msg: fmt.Sprintf("licence key is not valid before %s (check this host's clock)", l.IssuedAt.Format(timeLayout))}
	}
	if now.After(l.Expires) {
		return nil, &Error{Reason: Expired, KeyID: l.KeyID,
			msg: "licence key expired on " + l.Expires.Format(dateLayout)}
	}
	return l, nil
}

// Issue signs l with priv and returns the key. Times are written in UTC,
// to the second (anything finer is dropped). It refuses a licence that
// [Parse] would refuse; it accepts feature names this version does not
// know, so a vendor can issue for a newer version's feature.
func Issue(priv ed25519.PrivateKey, l Licence) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("licence: the signing key is %d bytes, want an Ed25519 private key of %d", len(priv), ed25519.PrivateKeySize)
	}
	if l.IssuedAt.IsZero() || l.Expires.IsZero() {
		return "", errors.New("licence: a key needs both an issued-at and an expiry time")
	}
	l.IssuedAt = l.IssuedAt.UTC().Truncate(time.Second)
	l.Expires = l.Expires.UTC().Truncate(time.Second)
	if problem := l.check(); problem != "" {
		return "", errors.New("licence: " + problem)
	}
	data, err := json.Marshal(payload{
		KeyID:    l.KeyID,
		Licensee: l.Licensee,
		Issued:   l.IssuedAt.Format(timeLayout),
		Expires:  l.Expires.Format(timeLayout),
		Features: l.Features,
	})
	if err != nil {
		return "", fmt.Errorf("licence: %w", err)
	}
	signed := Prefix + b64.EncodeToString(data)
	key := signed + "." + b64.EncodeToString(ed25519.Sign(priv, []byte(signed)))
	if len(key) > MaxKeyLen {
		return "", fmt.Errorf("licence: the key would be %d bytes, more than %d", len(key), MaxKeyLen)
	}
	return key, nil
}
