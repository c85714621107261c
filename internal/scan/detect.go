// Package scan looks for attack payloads in request values: SQL injection
// and cross-site scripting (with libinjection, as OWASP Coraza uses it),
// path traversal, shell command injection, NoSQL operator injection and
// prototype pollution. It reports a class, never the payload.
package scan

import (
	"encoding/binary"
	"strings"
	"unsafe"

	libinjection "github.com/corazawaf/libinjection-go"

	"github.com/contractguard/contractguard/internal/formats"
)

// Class is what a finding looks like.
type Class uint8

// The classes. A value is reported once, with the first class it matches
// in the order String checks them: XSS (markup is the most specific), SQL
// injection, command injection, path traversal, NoSQL operators,
// prototype pollution.
const (
	None Class = iota
	SQLInjection
	XSS
	CommandInjection
	PathTraversal
	NoSQLInjection
	PrototypePollution
)

// Message is the detail message of a finding of class c.
func (c Class) Message() string {
	switch c {
	case SQLInjection:
		return "possible SQL injection"
	case XSS:
		return "possible cross-site scripting"
	case CommandInjection:
		return "possible command injection"
	case PathTraversal:
		return "possible path traversal"
	case NoSQLInjection:
		return "possible NoSQL operator injection"
	case PrototypePollution:
		return "possible prototype pollution"
	}
	return ""
}

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
	if f&(hasLT|hasEQ|hasColon) != 0 && xss(s, f) {
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
	hasSep                    // / \ % and the lead bytes of overlong UTF-8: a path separator, or an encoding of one
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
	hasOverlong               // the lead bytes of overlong UTF-8 forms of . / \ (see undoRawOverlongs)

	hasChain = hasSemicolon | hasPipe | hasAmp | hasBacktick | hasNewline // chaining commands
	hasPath  = hasDot | hasSep | hasNUL
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
	for _, c := range []byte{0xc0, 0xc1, 0xe0} {
		t[c] |= hasSep | hasOverlong
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

func isLetter(c byte) bool { return 'A' <= c&^0x20 && c&^0x20 <= 'Z' }

// needsSQLi reports whether libinjection's SQL check must run on s. It
// never calls SQL injection a value of letters, digits and _ only (one or
// two words to its tokenizer, and no fingerprint of its list is that
// short), nor a plain URL or e-mail address, a UUID, a date or a date-time
// (their letters, a-f, T and Z, spell no keyword), an IP address, a product
// code, or prose without a SQL word. Any other byte opens a way: "0AND-0"
// is a tautology, "0::@" a cast and a variable, "0OR.OR.OR.0" a chain of
// ORs. The cheap shape tests come first. FuzzPrefilters holds the claim to
// libinjection's verdicts, on the corpora and on random input, and
// TestPrefilterShapes on every SQL word in every shape.
func needsSQLi(s string, f uint32) bool {
	if f&notToken == 0 {
		return false
	}
	digit := isDigit(s[0])
	switch {
	case f&notURL == 0 && plainURL(s),
		f&notEmail == 0 && plainEmail(s),
		len(s) == 36 && formats.UUID(s),
		len(s) == 10 && digit && formats.Date(s),
		len(s) >= 20 && digit && s[4] == '-' && formats.DateTime(s),
		!digit && f&notCode == 0 && productCode(s),
		len(s) <= 15 && digit && f&hasColon == 0 && formats.IPv4(s),
		len(s) <= 45 && f&hasColon != 0 && formats.IPv6(s):
		return false
	case f&notProse == 0 && (f&hasDash == 0 || !strings.Contains(s, "--")) && !hasSQLWord(s):
		return false
	}
	return true
}

// sqlInjection is libinjection's SQL check of s. libinjection looks every
// word and every pair of words up in upper case, through strings.ToUpper,
// which copies a word that has a lower-case letter: five to ten
// allocations for a sentence. Handed s with its ASCII letters in upper
// case, it makes none of them, and its verdict is the same: its tokenizer
// treats both cases of a letter alike, but for four things s must not
// hold, which keep s as it is: a $tag$ string (its tags are matched as
// written), an Oracle q'x…x' string (its delimiter may be a letter,
// matched as written), \N (MySQL's NULL, upper case only) and
// "sp_password" (looked for in lower case). Only ASCII changes: Unicode
// upper case would move the 0xA0 bytes libinjection reads as blanks.
// FuzzSQLiUpper and TestSQLiUpper hold the two verdicts equal.
func sqlInjection(s string, f uint32, buf *[]byte) bool {
	if f&hasLower != 0 && f&(hasDollar|hasBackslash) == 0 && (f&hasUnderscore == 0 || !strings.Contains(s, "sp_password")) &&
		(f&hasQuote == 0 || !strings.Contains(s, "q'") && !strings.Contains(s, "Q'")) {
		var b []byte
		if buf != nil && cap(*buf) >= len(s) {
			b = (*buf)[:len(s)]
		} else {
			b = make([]byte, len(s))
			if buf != nil && len(s) <= maxReused {
				*buf = b
			}
		}
		upperASCII(b, s)
		s = unsafe.String(unsafe.SliceData(b), len(b)) // libinjection keeps no part of it
	}
	sqli, _ := libinjection.IsSQLi(s)
	return sqli
}

// maxReused bounds the buffer a walk keeps for sqlInjection's copies.
const maxReused = 4 << 10

// upperASCII copies s into b (as long as s) with a-z in upper case, eight
// bytes at a time.
func upperASCII(b []byte, s string) {
	copy(b, s)
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		h := x & (0x7f * ones)                 // each byte without its high bit
		ge := h + (0x80-'a')*ones              // high bit set where h >= 'a'
		gt := h + (0x80-'z'-1)*ones            // high bit set where h > 'z'
		lower := ge &^ gt &^ x & (0x80 * ones) // ASCII a-z: 0x80 in their byte
		binary.LittleEndian.PutUint64(b[i:], x-lower>>2)
	}
	for ; i < len(b); i++ {
		b[i] = upperASCIIOf[b[i]]
	}
}

// hasSQLWord reports a word (a run of letters, digits and _ with a letter
// or _ in it, or, in a run with digits, a tail of it that starts with a
// letter) that libinjection's tokenizer reads as SQL: a keyword, an
// operator, a function, a type (sqlwords_gen.go holds its table's words).
// Prose without one is words and numbers to it, and, with no quote,
// comment or operator but . , - between them, no fingerprint of its list.
// (An @ would be one too many: "0-@" is a number, an operator and a
// variable.)
func hasSQLWord(s string) bool {
	for i := 0; i < len(s); {
		if wordBytes[s[i]] == 0 {
			i++
			continue
		}
		// The word's kinds of bytes and the hash of its upper case, in one
		// pass.
		start, kinds, h := i, uint8(0), uint32(fnvOffset)
		for ; i < len(s); i++ {
			k := wordBytes[s[i]]
			if k == 0 {
				break
			}
			kinds |= k
			h = (h ^ uint32(upperASCIIOf[s[i]])) * fnvPrime
		}
		if kinds&wordLetter == 0 {
			continue // a number
		}
		if i-start <= maxSQLWord && sqlWordIndex.hasHashed(s[start:i], h) {
			return true
		}
		if kinds&wordDigit == 0 {
			continue
		}
		// A number may end where a word starts (0AND, 0BOR: 0B and OR):
		// every tail that starts with a letter may be a word of its own.
		for p := max(start+1, i-maxSQLWord); p < i; p++ {
			if !isDigit(s[p]) && sqlWordIndex.hasFold(s[p:i]) {
				return true
			}
		}
	}
	return false
}

// The bytes of a word, for hasSQLWord: a letter or _, or a digit.
const (
	wordLetter = 1 << iota
	wordDigit
)

var wordBytes = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case isDigit(byte(c)):
			t[c] = wordDigit
		case isLetter(byte(c)) || c == '_':
			t[c] = wordLetter
		}
	}
	return t
}()

// upperASCIIOf is each byte with a-z in upper case.
var upperASCIIOf = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
		if 'a' <= c && c <= 'z' {
			t[c] -= 'a' - 'A'
		}
	}
	return t
}()

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// maxSQLWord is the length of the longest SQL word.
var maxSQLWord = func() (n int) {
	for w := range sqlWords {
		n = max(n, len(w))
	}
	return n
}()

// sqlWordIndex is sqlWords as an open-addressed table hashed on the upper
// case of a word, so that a word of a value is looked up without copying
// it into upper case first.
var sqlWordIndex = func() *foldSet {
	words := make([]string, 0, len(sqlWords))
	for w := range sqlWords {
		words = append(words, w)
	}
	return newFoldSet(words)
}()

// foldSet is a set of upper-case ASCII words. Most words looked up are
// not in it, and a 2 KB bitmap of their hashes, which stays in cache, says
// so without a probe of the table.
type foldSet struct {
	slots []string
	mask  uint32
	seen  [256]uint64 // bit h%16384 set for the hash h of every word
}

func newFoldSet(words []string) *foldSet {
	size := 16
	for size < 4*len(words) {
		size *= 2
	}
	f := &foldSet{slots: make([]string, size), mask: uint32(size - 1)}
	for _, w := range words {
		h := foldHash(w)
		i := h & f.mask
		for f.slots[i] != "" {
			i = (i + 1) & f.mask
		}
		f.slots[i] = w
		f.seen[h>>6&255] |= 1 << (h & 63)
	}
	return f
}

// hasFold reports whether the set holds s in upper case.
func (f *foldSet) hasFold(s string) bool { return f.hasHashed(s, foldHash(s)) }

// hasHashed is hasFold of s, whose foldHash is h.
func (f *foldSet) hasHashed(s string, h uint32) bool {
	if f.seen[h>>6&255]&(1<<(h&63)) == 0 {
		return false
	}
	for i := h & f.mask; ; i = (i + 1) & f.mask {
		w := f.slots[i]
		if w == "" {
			return false
		}
		if len(w) == len(s) && equalUpper(w, s) {
			return true
		}
	}
}

// foldHash is FNV-1a of the ASCII upper case of s.
func foldHash(s string) uint32 {
	h := uint32(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(upperASCIIOf[s[i]])) * fnvPrime
	}
	return h
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// equalUpper reports whether s in ASCII upper case is upper.
func equalUpper(upper, s string) bool {
	for i := 0; i < len(s); i++ {
		if upperASCIIOf[s[i]] != upper[i] {
			return false
		}
	}
	return true
}

// plainURL reports a value that starts http:// or https://. needsSQLi
// asks it only of a value whose bytes are letters, digits and ._~/?=&#:%-
// (no notURL byte): its scheme, colon and slashes are the first tokens
// libinjection reads, and no fingerprint that starts so is in its list
// (TestPrefilterShapes and FuzzPrefilters try SQL in every part).
func plainURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// plainEmail reports an address local@domain whose local part starts
// with a letter and holds letters, digits, _ and dots, and whose domain
// holds letters, digits and dots, where no part of the local part that a
// dot follows is a SQL word. libinjection reads it as two tokens: the
// local part as one word (its tokenizer splits a word at a dot only after
// a keyword), and @domain as one variable, which runs to the end. No
// fingerprint of its list is a token and a variable, or a variable alone
// (what is left when the word is one it skips, such as a type), whatever
// the word reads as: TestPrefilterShapes tries every SQL word there.
func plainEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || !isLetter(s[0]) || strings.IndexByte(s[at+1:], '@') >= 0 ||
		strings.IndexByte(s[at+1:], '_') >= 0 {
		return false
	}
	start := 0
	for i := range at {
		if s[i] == '.' {
			if sqlWordIndex.hasFold(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// productCode reports a code of up to 8 letters, an optional hyphen and
// up to 12 digits (BK-001, SKU12345): a word and a number to libinjection,
// whatever the word (TestPrefilterShapes tries every SQL keyword).
func productCode(s string) bool {
	i := 0
	for i < len(s) && i < 8 && isLetter(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	return i == len(s) && 0 < digits && digits <= 12
}

// xss reports markup libinjection calls cross-site scripting, or a value
// that is a script URL (javascript:, vbscript:, data:text/html), which
// libinjection judges only inside an href or src attribute, while the
// value of a "website" or "avatar" field ends up in one.
func xss(s string, f uint32) bool {
	return f&hasColon != 0 && scriptURL(s) || needsXSS(s, f) && libinjection.IsXSS(s)
}

// scriptURL reports a URL whose scheme runs script, ignoring leading
// blanks and control characters and tabs or newlines within the scheme,
// as browsers do.
func scriptURL(s string) bool {
	var scheme [16]byte
	n := 0
	for i := 0; i < len(s) && n < len(scheme); i++ {
		c := s[i]
		switch {
		case c <= ' ':
			continue // browsers drop them
		case c == ':':
			switch string(scheme[:n]) {
			case "javascript", "vbscript", "livescript":
				return true
			case "data":
				rest := strings.TrimLeft(s[i+1:], " \t")
				return hasPrefixFold(rest, "text/html") || hasPrefixFold(rest, "image/svg") ||
					hasPrefixFold(rest, "application/xhtml")
			}
			return false
		case isLetter(c):
			scheme[n] = c | 0x20
			n++
		default:
			return false
		}
	}
	return false
}

// hasPrefixFold is strings.HasPrefix without regard to case, for a lower
// case prefix, without a copy of s.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// needsXSS reports whether libinjection's XSS check must run on s, with
// the bytes f. Its checks fire on a tag, a comment or a doctype, which
// need <, or on an attribute value after a black attribute name, which
// needs =. libinjection reads a value in five contexts, and in the
// unquoted one it starts before an attribute name, so "onerror=alert(1)"
// is a name and a value to it. A value of URL bytes only (no notURL byte:
// no blank, quote or >) is narrower: see blackNameBefore.
// TestXSSPrefilter and FuzzPrefilters hold this to libinjection.
func needsXSS(s string, f uint32) bool {
	switch {
	case f&hasLT != 0:
		return true
	case f&hasEQ == 0:
		return false
	case f&notURL == 0:
		return blackNameBefore(s)
	}
	return true
}

// blackNameBefore reports whether some = of s follows a run of letters
// and colons that starts s or a / does. libinjection may find XSS in a
// value of URL bytes only there: quoted, it is one attribute value, with
// no name; unquoted, it is attribute names split by / up to the first =
// that ends one, and the rest one value, and the name before that value
// is black only if it is such a run (every name it holds black is letters
// and colons: on* events, xmlns, xlink, style, src, href, …), which starts
// the name, so s or a / comes before it. "https://x.org/a?id=1" holds
// none: its one name is "a?id".
func blackNameBefore(s string) bool {
	for i := 0; i < len(s); i++ {
		k := strings.IndexByte(s[i:], '=')
		if k < 0 {
			return false
		}
		i += k
		j := i
		for j > 0 && (isLetter(s[j-1]) || s[j-1] == ':') {
			j--
		}
		if j < i && (j == 0 || s[j-1] == '/') {
			return true
		}
	}
	return false
}
