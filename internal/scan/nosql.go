package scan

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NoSQL operator injection: query operators, and JavaScript meant for a
// $where clause.

var operators = wordSet(
	"where", "ne", "eq", "gt", "gte", "lt", "lte", "in", "nin", "regex", "exists", "or", "and",
	"not", "nor", "expr", "elemmatch", "all", "size", "type", "mod", "text", "jsonschema",
	"function", "accumulator", "lookup", "merge", "out", "comment",
)

// noSQLOperator reports a query operator ($where, $ne, …) inside a string
// at the start of a key: after {, [, a quote, a comma, a blank or at the
// start ({"$gt": ""}, user[$ne]=1); or JavaScript meant for a $where
// clause: a string closed early to append a statement or a || or &&
// condition, a call on the database or a collection (db.users.find(),
// db.getCollectionNames()), a climb to the Function constructor.
func noSQLOperator(s string, f uint32) bool {
	return f&hasDollar != 0 && operatorKey(s) ||
		f&(hasQuote|hasSemicolon) != 0 && jsAfterQuote(s, f) ||
		f&(hasDot|hasParen) == hasDot|hasParen && (databaseCall(s) || strings.Contains(s, "constructor.constructor("))
}

func operatorKey(s string) bool {
	for i := strings.IndexByte(s, '$'); i >= 0; {
		if i == 0 || strings.IndexByte("{[\"', \t\n", s[i-1]) >= 0 {
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			if operators.hasFold(s[i+1:j]) && (j == len(s) || !isWordByte(s[j])) {
				return true
			}
		}
		k := strings.IndexByte(s[i+1:], '$')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// jsStatements are the words a statement injected into a $where clause
// starts with.
var jsStatements = wordSet("return", "while", "for", "do", "var", "let", "const", "function", "sleep",
	"this", "throw", "if", "new", "emit", "db", "try")

// jsAfterQuote reports a quote closed early and followed by || or &&, or
// a ; and a statement: after a quote any statement, after anything else
// only one that reads as code (sleep(…), return this…, return 1). What
// JavaScript reads as blank may come between them (see jsBlanks).
func jsAfterQuote(s string, f uint32) bool {
	b := jsBlanks{s: s, block: notLooked, line: notLooked}
	for _, c := range [...]byte{'\'', '"', ';'} {
		if c == ';' && f&hasSemicolon == 0 || c != ';' && f&hasQuote == 0 {
			continue
		}
		for i := 0; i < len(s); i++ {
			j := strings.IndexByte(s[i:], c)
			if j < 0 {
				break
			}
			i += j
			if jsAt(s, i, &b) {
				return true
			}
		}
	}
	return false
}

// jsAt reports jsAfterQuote's finding at the quote or ; at s[i]: after a
// quote, || or &&, or a ; and a statement; after a ;, a statement.
func jsAt(s string, i int, b *jsBlanks) bool {
	if s[i] == ';' {
		return jsStatement(s, i, b, i == 0 || s[i-1] == '\'' || s[i-1] == '"') // '; while…
	}
	j := b.skip(i + 1)
	if j+1 < len(s) && (s[j:j+2] == "||" || s[j:j+2] == "&&") {
		return true
	}
	return j < len(s) && s[j] == ';' && jsStatement(s, j, b, true) // ' ; while…, '/**/;…
}

// jsStatement reports a statement after the ; at s[i]: after a quote
// (afterQuote) any, after anything else only what reads as code.
func jsStatement(s string, i int, b *jsBlanks, afterQuote bool) bool {
	j := b.skip(i + 1)
	k := j
	for k < len(s) && isLetter(s[k]) {
		k++
	}
	word := s[j:k]
	if !jsStatements.hasFold(word) {
		return false
	}
	if afterQuote {
		return k == len(s) || !isWordByte(s[k]) || s[k] == '.'
	}
	// After anything else, only what reads as code: a call (sleep(…),
	// or return with a value that is not a word of prose.
	if k < len(s) && s[k] == '(' {
		return true
	}
	if strings.EqualFold(word, "return") {
		rest := s[b.skip(k):]
		return rest != "" && (rest[0] == '(' || rest[0] == '\'' || rest[0] == '"' || isDigit(rest[0]) ||
			strings.HasPrefix(rest, "this") || strings.HasPrefix(rest, "true") || strings.HasPrefix(rest, "false"))
	}
	return false
}

// jsBlanks skips what JavaScript reads as blank between two tokens: white
// space (U+0020, tabs, U+000B, U+000C, U+00A0, U+FEFF and the other
// spaces of Unicode's Zs), line terminators (\n, \r, U+2028, U+2029) and
// comments, /*…*/, //… to a line's end, and the HTML-like ones of
// scripts (<!--… to a line's end, and -->… at a line's start, see
// lineStart). "admin'\n|| 'a'=='a" is
// this.user == 'admin' || 'a'=='a' in a $where clause as a blank is.
// Where the next comment ends is remembered: a value of a quote and an
// unclosed comment, again and again, looks for the end once, not once a
// quote. Once a skip has crossed a comment, where each skip ends is
// remembered at every place it stepped on (ends): a skip started inside
// comments an earlier one crossed ("//;\n" again and again) stops where
// it meets that one's steps, not at the end of the run again.
type jsBlanks struct {
	s           string
	block, line found   // the next */, and the next line terminator
	ends        []int32 // 1 + where a skip through s[i] ends, 0 if none has been through
}

// found is where the first of something in jsBlanks.s at or after from
// is: at, or -1 for nowhere.
type found struct{ from, at int }

// notLooked is a found that knows nothing.
var notLooked = found{from: -1}

// maxBlanksMemo is the longest value whose skips jsBlanks remembers: its
// ends are int32 (4 bytes a byte of the value, not 8). A longer value
// (2 GiB, a body over MaxBodyBytes' default many times) is skipped
// through without them, as it was before they were kept, rather than
// wrapping an end to a negative place. A variable for the test.
var maxBlanksMemo = math.MaxInt32 - 1

// skip is where the first token at or after s[j] starts.
func (b *jsBlanks) skip(j int) int {
	start, end := j, len(b.s)
	for j < len(b.s) {
		if b.ends != nil && b.ends[j] != 0 {
			end = int(b.ends[j]) - 1
			break
		}
		next, comment := b.step(j)
		if next == j {
			end = j
			break
		}
		if comment && b.ends == nil && len(b.s) <= maxBlanksMemo {
			b.ends = make([]int32, len(b.s))
		}
		j = next
	}
	if b.ends != nil { // every place this skip stepped on ends where it did
		for j := start; j < end && b.ends[j] == 0; j, _ = b.step(j) {
			b.ends[j] = int32(end + 1)
		}
		if end < len(b.s) {
			// So does one from the token it ends at: a later skip that
			// lands there (from another /* before the same */) does not
			// step on it again (lineStart reads back over comments).
			b.ends[end] = int32(end + 1)
		}
	}
	return end
}

// step is where the blank or comment at s[j] ends (j if a token starts
// there) and whether it is a comment.
func (b *jsBlanks) step(j int) (int, bool) {
	s := b.s
	switch c := s[j]; {
	case c < utf8.RuneSelf && (jsWhiteSpace(rune(c)) || jsLineTerminator(rune(c))):
		return j + 1, false
	case c == '/' && j+1 < len(s) && s[j+1] == '*':
		e := b.next(&b.block, j+2, func(s string) int { return strings.Index(s, "*/") })
		if e < 0 {
			return j, false // the rest is a comment: no token
		}
		return e + len("*/"), true
	case c == '/' && j+1 < len(s) && s[j+1] == '/', c == '<' && strings.HasPrefix(s[j:], "<!--"),
		c == '-' && strings.HasPrefix(s[j:], "-->") && lineStart(s[:j]):
		// //…, and the HTML-like comments of scripts: <!-- anywhere,
		// --> at a line's start
		e := b.next(&b.line, j+2, func(s string) int { return strings.IndexAny(s, jsLineTerminators) })
		if e < 0 {
			return j, false
		}
		return e, true
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRuneInString(s[j:])
		if !jsWhiteSpace(r) && !jsLineTerminator(r) {
			return j, false
		}
		return j + n, false
	}
	return j, false
}

// jsLineTerminators are JavaScript's line terminators.
const jsLineTerminators = "\n\r\u2028\u2029"

// jsLineTerminator reports one of jsLineTerminators.
func jsLineTerminator(r rune) bool { return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' }

// jsWhiteSpace reports what JavaScript reads as white space: U+0020, tabs,
// U+000B, U+000C, U+FEFF and Unicode's Zs (U+00A0 among them).
func jsWhiteSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\v' || r == '\f' || r == '\ufeff' || r >= utf8.RuneSelf && unicode.Is(unicode.Zs, r)
}

// lineStart reports where a script reads --> as a comment (Annex B's
// SingleLineHTMLCloseComment, and the HTMLCloseComment after a
// MultiLineComment): s ends with a line terminator, or a /*…*/ that holds
// one, but for white space (tabs, U+000B, U+000C, U+FEFF, Unicode's Zs)
// and /*…*/ comments on one line after it. Each comment is read back to
// where it opens (commentOpen).
func lineStart(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		switch {
		case jsLineTerminator(r):
			return true
		case jsWhiteSpace(r):
			s = s[:len(s)-n]
		case strings.HasSuffix(s, "*/"):
			open := commentOpen(s[:len(s)-2])
			if open < 0 {
				return false
			}
			if strings.ContainsAny(s[open+2:len(s)-2], jsLineTerminators) {
				return true // a MultiLineComment
			}
			s = s[:open]
		default:
			return false
		}
	}
	return false
}

// commentOpen is where the /*…*/ whose */ follows s opens: the first /*
// after the */ before it (a comment ends at its first */, so "/* a /* b */"
// is one comment, opened at its first /*), or the /* whose star that */
// starts ("/*/ a */"); -1 for none.
func commentOpen(s string) int {
	from := 0
	p := strings.LastIndex(s, "*/")
	if p >= 0 {
		from = p + len("*/")
	}
	if open := strings.Index(s[from:], "/*"); open >= 0 {
		return from + open
	}
	if p >= 1 && s[p-1] == '/' && (p < 2 || s[p-2] != '*') {
		return p - 1
	}
	return -1
}

// next is where find, which gives the index of the first match in a
// string or -1, finds the first match at or after s[p], as f remembers
// it when it can: each search starts past the match of the one before.
func (b *jsBlanks) next(f *found, p int, find func(string) int) int {
	if f.from >= 0 && f.from <= p && (f.at < 0 || f.at >= p) {
		return f.at
	}
	at := find(b.s[p:])
	if at >= 0 {
		at += p
	}
	*f = found{from: p, at: at}
	return at
}

var collectionMethods = wordSet("find", "findone", "insert", "insertone", "insertmany", "update", "updateone",
	"updatemany", "remove", "deleteone", "deletemany", "drop", "mapreduce", "aggregate", "count", "distinct")

var databaseMethods = wordSet("getcollectionnames", "getcollection", "dropdatabase", "eval", "runcommand",
	"admincommand", "createuser", "getusers", "getname", "stats", "getsiblingdb", "currentop", "killop")

// databaseCall reports db.<method>( or db.<collection>.<method>( . A
// method is letters, read up to the first byte that is not one: reading
// up to the next ( instead, as this once did, read the rest of the value
// again at each db. before it ("db.db.db.…(").
func databaseCall(s string) bool {
	for i := strings.Index(s, "db."); i >= 0; {
		rest := s[i+3:]
		if methodCall(rest, databaseMethods) {
			return true
		}
		// The next . is at most that of the next db.: what this reads is
		// read once.
		if dot := strings.IndexByte(rest, '.'); dot > 0 && methodCall(rest[dot+1:], collectionMethods) {
			return true
		}
		k := strings.Index(rest, "db.")
		if k < 0 {
			break
		}
		i += 3 + k
	}
	return false
}

// methodCall reports a method of methods (words of letters) called at the
// start of s: its name, then (.
func methodCall(s string, methods *foldSet) bool {
	n := 0
	for n < len(s) && isLetter(s[n]) {
		n++
	}
	return n > 0 && n < len(s) && s[n] == '(' && methods.hasFold(s[:n])
}
