package scan

import (
	"encoding/binary"
	"strings"
	"unsafe"

	libinjection "github.com/corazawaf/libinjection-go"
)

// SQL injection: libinjection's check, handed the value in ASCII upper case.

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
