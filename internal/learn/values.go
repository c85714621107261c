package learn

import (
	"strings"

	"github.com/contractguard/contractguard/internal/schema"
)

// The formats inferred, in the order they are preferred when every string
// of a place matches more than one. Each is checked with the check the
// guard itself runs (schema.FormatCheck), so that a learned format never
// rejects a string it was learned from.
var formatNames = [...]string{"uuid", "date-time", "date", "ipv4", "ipv6", "email", "uri"}

const allFormats = 1<<len(formatNames) - 1

var formatChecks = func() (c [len(formatNames)]func(string) bool) {
	for i, name := range formatNames {
		c[i] = schema.FormatCheck(name)
		if c[i] == nil {
			panic("learn: the schema package has no format " + name)
		}
	}
	return c
}()

// mayMatch is a cheap test that a string can be of format i, before its
// check (the checks of email and uri box the string).
func mayMatch(i int, s string) bool {
	switch formatNames[i] {
	case "uuid":
		return len(s) == 36
	case "date-time":
		return len(s) >= 20 && '0' <= s[0] && s[0] <= '9'
	case "date":
		return len(s) == 10
	case "ipv4":
		return len(s) >= 7 && len(s) <= 15 && '0' <= s[0] && s[0] <= '9'
	case "ipv6":
		return strings.IndexByte(s, ':') >= 0
	case "email":
		return strings.IndexByte(s, '@') > 0
	default: // uri
		return strings.IndexByte(s, ':') > 0
	}
}

// formatsOf is the formats among mask that s matches.
func formatsOf(s string, mask uint8) uint8 {
	var m uint8
	for i := range formatNames {
		if bit := uint8(1) << i; mask&bit != 0 && mayMatch(i, s) && formatChecks[i](s) {
			m |= bit
		}
	}
	return m
}

// number reads a JSON number literal (valid, as the strict parser passed
// it): whether its value is integral, as draft-07's integer means it (1.0
// and 1e2 are), and whether it is below zero (-0 is not).
func number(lit string) (integral, negative bool) {
	i := 0
	neg := lit[0] == '-'
	if neg {
		i++
	}
	intStart := i
	for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
		i++
	}
	intDigits := lit[intStart:i]
	fracDigits := ""
	if i < len(lit) && lit[i] == '.' {
		i++
		start := i
		for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
			i++
		}
		fracDigits = lit[start:i]
	}
	exp := 0
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		sign := 1
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			if lit[i] == '-' {
				sign = -1
			}
			i++
		}
		for ; i < len(lit); i++ {
			if exp < 1_000_000 {
				exp = exp*10 + int(lit[i]-'0')
			}
		}
		exp *= sign
	}
	digit := func(k int) byte { // digit k of intDigits+fracDigits
		if k < len(intDigits) {
			return intDigits[k]
		}
		return fracDigits[k-len(intDigits)]
	}
	total := len(intDigits) + len(fracDigits)
	point := len(intDigits) + exp // the digits from here on are the fraction
	integral, nonzero := true, false
	for k := range total {
		if digit(k) != '0' {
			nonzero = true
			if k >= point {
				integral = false
			}
		}
	}
	return integral, neg && nonzero
}

// Member names that look secret: their values are never recorded (no enum
// candidates), at that place or anywhere below it. A name is secret if,
// lower-cased and with every byte but letters and digits read as _, it
// contains one of secretParts, or one of its words (split
// at anything but letters and digits, and at camelCase: see camelBreak
// and acronymBreak) is one of secretWords: short words that as substrings
// would match too much ("key" in "monkey", "pin" in "shipping").
var (
	secretParts = []string{"passw", "pwd", "secret", "token", "apikey", "api_key", "auth",
		"cookie", "session", "credential", "card", "cvv", "cvc", "private", "signature",
		"csrf", "xsrf", "iban", "bearer", "jwt", "passphrase", "passcode", "totp", "hotp", "passport",
		"securitycode", "security_code", "verificationcode", "verification_code", "recoverycode",
		"recovery_code", "mnemonic", "onetimecode", "one_time_code", "verifycode", "verify_code", "smscode", "sms_code",
		"twofactor", "two_factor", "backupcode", "backup_code", "seedphrase", "seed_phrase", "recoveryphrase",
		"recovery_phrase"}
	secretWords = []string{"key", "pin", "pincode", "pass", "pw", "sig", "otp", "ssn", "sid", "salt", "nonce", "mfa", "2fa"}
)

// secretName reports a member name that looks secret.
func secretName(name string) bool {
	var low [128]byte
	if len(name) > len(low) {
		return true // no field name is this long
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case !alnum(c):
			c = '_' // security-code and security.code are security_code
		}
		low[i] = c
	}
	l := string(low[:len(name)])
	for _, p := range secretParts {
		if strings.Contains(l, p) {
			return true
		}
	}
	// An acronym before a word in lower case ("PINcode", "PINs") ends at
	// its last capital or before it: both are tried.
	return secretWord(name, l, camelBreak) || secretWord(name, l, acronymBreak)
}

// secretWord reports whether a word of name (l is name in lower case),
// split at anything but letters and digits and where split says, is one
// of secretWords.
func secretWord(name, l string, split func(name string, i int) bool) bool {
	for start := 0; start < len(name); {
		if !alnum(name[start]) {
			start++
			continue
		}
		end := start + 1
		for end < len(name) && alnum(name[end]) && !split(name, end) {
			end++
		}
		for _, w := range secretWords {
			if l[start:end] == w {
				return true
			}
		}
		start = end
	}
	return false
}

// acronymBreak reports whether a word starts at name[i] when an acronym
// is read to its last capital: an upper-case letter after a lower-case
// one ("userPin"), or a lower-case letter after two capitals ("PINcode",
// "PINs").
func acronymBreak(name string, i int) bool {
	if isUpper(name[i]) {
		return isLower(name[i-1])
	}
	return isLower(name[i]) && i >= 2 && isUpper(name[i-1]) && isUpper(name[i-2])
}

// camelBreak reports whether a camelCase word starts at name[i]: an
// upper-case letter after a lower-case one ("userPin"), or after an
// acronym, before a lower-case one ("PINCode").
func camelBreak(name string, i int) bool {
	if !isUpper(name[i]) {
		return false
	}
	return isLower(name[i-1]) || isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1])
}

func alnum(c byte) bool   { return isLower(c) || isUpper(c) || '0' <= c && c <= '9' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// dataName reports a member name that looks like data rather than a field
// (an id, a uuid, an email, a hash): the members of an object keyed by
// data are learned as one schema, additionalProperties, and their names
// are not recorded.
func dataName(name string) bool {
	return len(name) > 64 || looksLikeData(name, false)
}

// looksLikeData reports a path segment or member name that looks like a
// value: a number; digits with . _ - (dates, versions) of 3 bytes or more;
// hex digits, or hex with . _ - (uuids), of 6 bytes or more with a decimal
// digit; anything with one of % & ' ( ) * + , : = @ or a space; anything
// but printable ASCII; and, for a path segment, 20 bytes or more. (After
// the endpoint inference of Datadog's tracers, which classify segments
// the same way.)
func looksLikeData(s string, segment bool) bool {
	if s == "" {
		return false
	}
	digits, hexLetters, delims, other := 0, 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			hexLetters++
		case c == '.' || c == '_' || c == '-':
			delims++
		case c < 0x21 || c > 0x7e || strings.IndexByte("%&'()*+,:=@", c) >= 0:
			return true
		default:
			other++
		}
	}
	switch {
	case digits == len(s):
		return true
	case other == 0 && hexLetters == 0 && digits > 0 && len(s) >= 3:
		return true
	case other == 0 && digits > 0 && len(s) >= 6:
		return true
	}
	return segment && len(s) >= 20
}
