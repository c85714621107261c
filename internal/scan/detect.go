package scan

import "unsafe"

// The checks of one value or name: one pass over its bytes (kinds.go) picks
// the detectors that can apply, and the first that matches gives the class.

// String checks a string value (or an object key, after Key's own checks).
// One pass over the bytes says which checks can apply; a value of letters,
// digits and spaces only, the most common kind, goes to none but the SQL
// check, which hands it to libinjection only if it holds a SQL word (see
// needsSQLi), and an identifier to none at all.
func String(s string) Class { return check(s, nil) }

// Bytes is String of b, without copying it: a body the guard does not
// parse is scanned as one string. Nothing of b is kept.
func Bytes(b []byte) Class { return String(unsafe.String(unsafe.SliceData(b), len(b))) }

// check is String, with a buffer to reuse for the copy libinjection is
// given (see sqlInjection); nil allocates one.
func check(s string, buf *[]byte) Class {
	if s == "" {
		return None
	}
	f := bytesIn(s)
	if f&(hasLT|hasEQ|hasColon|hasAmp) != 0 && xss(s, f) {
		return XSS
	}
	if f&notToken != 0 && needsSQLi(s, f) && sqlInjection(s, f, buf) {
		return SQLInjection
	}
	if f&(hasChain|hasDollar) != 0 && commandInjection(s, f) {
		return CommandInjection
	}
	if f&hasPath != 0 && pathTraversal(s, f) {
		return PathTraversal
	}
	if f&(hasDollar|hasQuote|hasChain|hasDot) != 0 && noSQLOperator(s, f) {
		return NoSQLInjection
	}
	if f&(hasUnderscore|hasY) != 0 && protoPath(s, f) {
		return PrototypePollution
	}
	return None
}

// Key checks an object member name: operator names ($where, $ne, …),
// then everything String checks (__proto__ among them).
func Key(k string) Class { return checkKey(k, nil) }

// checkKey is Key, with check's buffer.
func checkKey(k string, buf *[]byte) Class {
	if len(k) > 1 && k[0] == '$' && isLetter(k[1]) {
		return NoSQLInjection
	}
	return check(k, buf)
}

// identifier reports a name of letters and digits only, shorter than
// "constructor.prototype": nothing Key looks for, whatever the letters (a
// token to libinjection, no metacharacter, separator, $ or _, too short to
// spell a prototype path).
func identifier(s string) bool {
	return shortName(s) && bytesIn(s)&(notToken|hasUnderscore) == 0
}

// shortName is identifier's bound on length: a name of letters and digits
// shorter than "constructor.prototype" is one (jsonbody's Value.IsWord
// tells the bytes of a name in a body as it is read).
func shortName(s string) bool { return len(s) < len("constructor.prototype") }
