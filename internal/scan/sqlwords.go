package scan

// The words libinjection reads as SQL (sqlwords_gen.go), found in a value
// without a copy, for needsSQLi.

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
