package scan

import "strings"

// The kinds of bytes a value holds, read in one pass, which tell check the
// detectors that can apply; and the byte classes the detectors share.

// The kinds of bytes the checks look for; bytesIn reports which occur.
const (
	hasLT         = 1 << iota // <
	hasEQ                     // =
	hasColon                  // :
	hasSemicolon              // ;
	hasPipe                   // |
	hasAmp                    // &
	hasBacktick               // `
	hasNewline                // \n \r
	hasDollar                 // $
	hasDot                    // .
	hasSep                    // / \ %: a path separator, or an encoding of one
	hasNUL                    // NUL
	hasQuote                  // ' "
	notToken                  // anything but a letter, digit or _
	notURL                    // anything a plain URL does not hold (see plainURL)
	notProse                  // anything but letters, digits, blanks and _ . , -
	hasUnderscore             // _
	hasDash                   // -
	hasParen                  // (
	notEmail                  // anything but a letter, digit or _ . @ (see plainEmail)
	notCode                   // anything but a letter, digit or - (see productCode)
	hasBackslash              // \
	hasLower                  // a-z
	hasY                      // y: "prototype" has one, and "__proto__" an _
	hasPercent                // %
	hasOverlong               // the lead bytes of overlong UTF-8 forms of . / \, and of ．／＼∕∖ (see undoRawOverlongs)

	hasChain = hasSemicolon | hasPipe | hasAmp | hasBacktick | hasNewline // chaining commands
	hasPath  = hasDot | hasSep | hasNUL | hasOverlong
)

var byteKinds = func() (t [256]uint32) {
	for c := range 256 {
		if !(isAlnum(byte(c)) || c == '_') {
			t[c] |= notToken
		}
		if !(isAlnum(byte(c)) || strings.IndexByte("._~/?=&#:%-", byte(c)) >= 0) {
			t[c] |= notURL
		}
		if !(isAlnum(byte(c)) || strings.IndexByte(" _.,-", byte(c)) >= 0) {
			t[c] |= notProse
		}
		if !(isAlnum(byte(c)) || strings.IndexByte("_.@", byte(c)) >= 0) {
			t[c] |= notEmail
		}
		if !(isAlnum(byte(c)) || c == '-') {
			t[c] |= notCode
		}
	}
	t['<'] |= hasLT
	t['='] |= hasEQ
	t[':'] |= hasColon
	t[';'] |= hasSemicolon
	t['|'] |= hasPipe
	t['&'] |= hasAmp
	t['`'] |= hasBacktick
	t['\n'] |= hasNewline
	t['\r'] |= hasNewline
	t['$'] |= hasDollar
	t['.'] |= hasDot
	t['/'] |= hasSep
	t['\\'] |= hasSep
	t['%'] |= hasSep | hasPercent
	for _, c := range []byte{0xc0, 0xc1, 0xe0, 0xe2, 0xef} {
		t[c] |= hasOverlong // a separator only where pathTraversal finds the form itself
	}
	t[0] |= hasNUL
	t['\''] |= hasQuote
	t['"'] |= hasQuote
	t['_'] |= hasUnderscore
	t['-'] |= hasDash
	t['('] |= hasParen
	t['\\'] |= hasBackslash
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= hasLower
	}
	t['y'] |= hasY
	return t
}()

func bytesIn(s string) uint32 {
	// Kinds are or-ed, so windows may overlap: a value of up to 16 bytes
	// is read in two windows, or three bytes, whatever its length, with
	// no loop whose end depends on it.
	n := len(s)
	switch {
	case n > 16:
		f := kinds8(s[n-8:])
		for i := 0; i < n-8; i += 8 {
			f |= kinds8(s[i : i+8])
		}
		return f
	case n >= 8:
		return kinds8(s[:8]) | kinds8(s[n-8:])
	case n >= 4:
		return kinds4(s[:4]) | kinds4(s[n-4:])
	case n > 0:
		return byteKinds[s[0]] | byteKinds[s[n/2]] | byteKinds[s[n-1]]
	}
	return 0
}

// kinds8 is bytesIn of 8 bytes.
func kinds8(b string) uint32 {
	b = b[:8]
	return byteKinds[b[0]] | byteKinds[b[1]] | byteKinds[b[2]] | byteKinds[b[3]] |
		byteKinds[b[4]] | byteKinds[b[5]] | byteKinds[b[6]] | byteKinds[b[7]]
}

// kinds4 is bytesIn of 4 bytes.
func kinds4(b string) uint32 {
	b = b[:4]
	return byteKinds[b[0]] | byteKinds[b[1]] | byteKinds[b[2]] | byteKinds[b[3]]
}

func isLetter(c byte) bool { return 'A' <= c&^0x20 && c&^0x20 <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

func isWordByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '\\'
}
