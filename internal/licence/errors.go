package licence

import (
	"fmt"
	"strings"
)

// Reason says why a licence key was refused; callers switch on it.
type Reason int

const (
	// Missing: no key was given.
	Missing Reason = iota + 1
	// Malformed: the text is not a key of a version this package reads
	// (prefix, characters, base64url, JSON, a missing, unknown or bad field).
	Malformed
	// UnknownKeyID: the key names a key id the keyring does not hold.
	UnknownKeyID
	// BadSignature: the signature does not verify with the key id's public
	// key: the key was altered, or signed with another private key.
	BadSignature
	// Expired: the key's expiry has passed.
	Expired
	// NotYetValid: the key was issued more than [ClockSkew] in the future.
	NotYetValid
	// NotEntitled: the key is valid but does not name the feature asked for
	// (only [Require] returns it).
	NotEntitled
)

var reasonNames = [...]string{
	Missing:      "missing",
	Malformed:    "malformed",
	UnknownKeyID: "unknown key id",
	BadSignature: "bad signature",
	Expired:      "expired",
	NotYetValid:  "not yet valid",
	NotEntitled:  "not entitled",
}

// String returns the reason in a few lower-case words ("bad signature"),
// for a log attribute or a metric label.
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Error is why a licence key was refused, by [Parse], [Verify] or [Require].
// Its message is one lower-case line and never holds more of the key than
// its first four characters, or the one character that does not belong.
type Error struct {
	// Reason is what went wrong.
	Reason Reason
	// Feature is the paid feature that was asked for, set by [Require] only.
	Feature string
	// KeyID is the key id the key names, when it was readable.
	KeyID string
	// msg says what went wrong, starting with "licence key" or "no licence key".
	msg string
}

// Error returns the message: "licence key expired on 2026-01-31", and from
// [Require] "learning-mode is a paid feature: licence key expired on
// 2026-01-31".
func (e *Error) Error() string {
	if e.Feature != "" {
		return e.Feature + " is a paid feature: " + e.msg
	}
	return e.msg
}

// malformed is a Malformed error saying what is wrong with the key.
func malformed(format string, args ...any) *Error {
	return &Error{Reason: Malformed, msg: "licence key is malformed: " + fmt.Sprintf(format, args...)}
}

// clip quotes at most n bytes of untrusted text, with "…" when cut, so a
// message never carries a whole key or a long field.
func clip(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	i := n
	for i > 0 && !startsRune(s[i]) {
		i--
	}
	return fmt.Sprintf("%q…", s[:i])
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// list joins names for a message: "a, b", or "none".
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
