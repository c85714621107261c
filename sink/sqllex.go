package sink

// The SQL tokenizer: every byte of a query belongs to exactly one token,
// so it never fails; an unterminated string, quoted identifier or comment
// runs to the end of the query, as SQLite reads an unterminated comment.

// Dialect is the SQL a database speaks, as far as where its strings,
// quoted identifiers and comments begin and end.
type Dialect uint8

// The dialects.
const (
	// SQLite: '…' with '' escapes; "…", `…` and […] identifiers; -- and
	// /* */ comments (unterminated ones run to the end); ?, ?NNN, :name,
	// @name, $name and #name parameters.
	SQLite Dialect = iota + 1
	// PostgreSQL: '…' with '' escapes (and backslash escapes in E'…');
	// "…" identifiers; $$…$$ and $tag$…$tag$ strings; -- and nested /* */
	// comments; $1 parameters. A backslash in an ordinary string is also
	// read as an escape (standard_conforming_strings off): see readings.
	PostgreSQL
	// MySQL: '…' and "…" with '' / "" and backslash escapes (and, read a
	// second way, without them: NO_BACKSLASH_ESCAPES); `…` identifiers;
	// #, "-- " and /* */ comments, with /*! … */ (and MariaDB's /*M! … */)
	// read as code; ? parameters.
	MySQL
)

// String is the dialect's name.
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "SQLite"
	case PostgreSQL:
		return "PostgreSQL"
	case MySQL:
		return "MySQL"
	}
	return "Dialect(" + itoa(int(d)) + ")"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

type tokKind uint8

const (
	tSpace tokKind = iota
	tComment
	tString    // a string literal: '…', E'…', $$…$$, X'…'
	tIdent     // a quoted identifier: "…", `…`, […]
	tWord      // a keyword or identifier
	tNumber    // a numeric literal
	tParam     // a placeholder
	tOp        // an operator
	tPunct     // ( ) , ; .
	tExecOpen  // MySQL's /*! or MariaDB's /*M! (and its version number)
	tExecClose // the */ that closes it
	tOther     // a byte that starts nothing
)

// token is [start, end) of a query; for a delimited token (string, quoted
// identifier, comment), [in0, in1) is what lies between the delimiters.
type token struct {
	start, end int
	in0, in1   int
	kind       tokKind
	closed     bool // a delimited token found its closing delimiter
}

// lexer reads a query token by token.
type lexer struct {
	s    string
	pos  int
	d    Dialect
	alt  bool // the second reading of backslashes (see Dialect)
	exec int  // depth of MySQL /*! … */ (MariaDB /*M! … */) code comments
}

func newLexer(s string, d Dialect, alt bool) lexer { return lexer{s: s, d: d, alt: alt} }

func isWordStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c >= 0x80
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (l *lexer) isWordByte(c byte) bool {
	if (isWordStart(c) || isDigit(c)) && !l.isBlank(c) {
		return true
	}
	return c == '$' && l.d != SQLite
}

// isBlank: c is white space to the dialect. MySQL over a single-byte
// character set (latin1, its default before 8.0) reads 0xA0 as white
// space as well (sqlmap's space2mysqlblank): `1\xa0OR\xa0true` is four
// tokens to it. It is read so whatever the connection's character set:
// a letter whose UTF-8 holds the byte (à, Р) splits an unquoted MySQL
// name, which blocks more, never less.
func (l *lexer) isBlank(c byte) bool {
	return isSpace(c) || c == 0xa0 && l.d == MySQL
}

// execOpen is the length of the MySQL code comment's opening at l.pos
// (/*! of MySQL and MariaDB, /*M! of MariaDB, which runs it as code too;
// m in any case: read as code, a comment only blocks more), or 0.
func (l *lexer) execOpen() int {
	if l.d != MySQL {
		return 0
	}
	if l.peek(2) == '!' {
		return 3
	}
	if l.peek(2)|0x20 == 'm' && l.peek(3) == '!' {
		return 4
	}
	return 0
}

func (l *lexer) peek(i int) byte {
	if l.pos+i < len(l.s) {
		return l.s[l.pos+i]
	}
	return 0
}

// next reads the next token into t; it is false at the end of the query.
func (l *lexer) next(t *token) bool {
	if l.pos >= len(l.s) {
		return false
	}
	start := l.pos
	*t = token{start: start, kind: tOther}
	c := l.s[start]
	switch {
	case l.isBlank(c):
		for l.pos < len(l.s) && l.isBlank(l.s[l.pos]) {
			l.pos++
		}
		t.kind = tSpace
	case c == '-' && l.peek(1) == '-' && (l.d != MySQL || l.mysqlDashComment()):
		l.lineComment(t, 2)
	case c == '#' && l.d == MySQL:
		l.lineComment(t, 1)
	case c == '/' && l.peek(1) == '*':
		if n := l.execOpen(); n > 0 && l.exec == 0 {
			l.pos += n
			for l.pos < len(l.s) && isDigit(l.s[l.pos]) {
				l.pos++
			}
			l.exec++
			t.kind = tExecOpen
			break
		}
		l.blockComment(t)
	case c == '*' && l.peek(1) == '/' && l.exec > 0:
		l.pos += 2
		l.exec--
		t.kind = tExecClose
	case c == '\'':
		l.quoted(t, '\'', 1, l.backslashes(false), tString)
	case c == '"':
		if l.d == MySQL {
			l.quoted(t, '"', 1, l.backslashes(false), tString)
		} else {
			l.quoted(t, '"', 1, false, tIdent)
		}
	case c == '`' && l.d != PostgreSQL:
		l.quoted(t, '`', 1, false, tIdent)
	case c == '[' && l.d == SQLite:
		l.pos++
		t.kind, t.in0 = tIdent, l.pos
		for l.pos < len(l.s) && l.s[l.pos] != ']' {
			l.pos++
		}
		t.in1 = l.pos
		if l.pos < len(l.s) {
			l.pos++
			t.closed = true
		}
	case c == '$' && l.d == PostgreSQL:
		l.dollar(t)
	case isDigit(c) || (c == '.' && isDigit(l.peek(1))):
		l.number()
		t.kind = tNumber
	case isWordStart(c) || (c == '$' && l.d == MySQL):
		l.word(t)
	case c == '?':
		l.pos++
		if l.d == PostgreSQL { // a jsonb operator; PostgreSQL's parameters are $1
			for l.pos < len(l.s) && (l.s[l.pos] == '|' || l.s[l.pos] == '&') {
				l.pos++
			}
			t.kind = tOp
			break
		}
		for l.pos < len(l.s) && isDigit(l.s[l.pos]) {
			l.pos++
		}
		t.kind = tParam
	case (c == ':' || c == '@' || c == '$' || c == '#') && l.d == SQLite && l.isWordByte(l.peek(1)):
		l.pos++
		for l.pos < len(l.s) && (l.isWordByte(l.s[l.pos]) || l.s[l.pos] == ':') {
			l.pos++
		}
		t.kind = tParam
	case c == '@' && l.d == MySQL:
		l.pos++
		if l.peek(0) == '@' {
			l.pos++
		}
		for l.pos < len(l.s) && l.isWordByte(l.s[l.pos]) {
			l.pos++
		}
		t.kind = tWord // a user or system variable
	case c == '(' || c == ')' || c == ',' || c == ';' || c == '.':
		l.pos++
		t.kind = tPunct
	case isOpByte(c):
		l.pos += opLen(l.s[l.pos:])
		t.kind = tOp
	default:
		l.pos++
	}
	t.end = l.pos
	if t.kind != tString && t.kind != tIdent && t.kind != tComment {
		t.in0, t.in1 = t.start, t.end
	}
	return true
}

// backslashes reports whether a backslash escapes in a plain string:
// MySQL's default (its second reading: not), PostgreSQL's second reading.
// prefixE is PostgreSQL's E'…', where it always does.
func (l *lexer) backslashes(prefixE bool) bool {
	switch l.d {
	case MySQL:
		return !l.alt
	case PostgreSQL:
		return prefixE || l.alt
	}
	return false
}

// mysqlDashComment: MySQL reads -- as a comment only before white space
// (0xA0 too: isBlank) or a control character, or at the end.
func (l *lexer) mysqlDashComment() bool {
	c := l.peek(2)
	return l.pos+2 >= len(l.s) || c <= ' ' || c == 0x7f || c == 0xa0
}

// lineComment reads -- or # to the end of the line: a newline, or in
// PostgreSQL a carriage return as well (its scanner's non_newline is
// [^\n\r]; MySQL and SQLite read on to a \n).
func (l *lexer) lineComment(t *token, open int) {
	l.pos += open
	t.kind, t.in0 = tComment, l.pos
	for l.pos < len(l.s) && l.s[l.pos] != '\n' && (l.s[l.pos] != '\r' || l.d != PostgreSQL) {
		l.pos++
	}
	t.in1, t.closed = l.pos, true
}

// blockComment reads /* … */, nested in PostgreSQL.
func (l *lexer) blockComment(t *token) {
	l.pos += 2
	t.kind, t.in0 = tComment, l.pos
	depth := 1
	for l.pos < len(l.s) {
		if l.s[l.pos] == '*' && l.peek(1) == '/' {
			depth--
			if depth == 0 {
				t.in1 = l.pos
				l.pos += 2
				t.closed = true
				return
			}
			l.pos += 2
			continue
		}
		if l.d == PostgreSQL && l.s[l.pos] == '/' && l.peek(1) == '*' {
			depth++
			l.pos += 2
			continue
		}
		l.pos++
	}
	t.in1 = l.pos
}

// quoted reads a token delimited by q, which a doubled q escapes, and,
// with backslash, a backslash too. open is the length of what opens it (a
// prefix such as E or N, and q).
func (l *lexer) quoted(t *token, q byte, open int, backslash bool, kind tokKind) {
	l.pos += open
	t.kind, t.in0 = kind, l.pos
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		switch {
		case c == '\\' && backslash:
			l.pos += 2
			continue
		case c == q:
			if l.peek(1) == q {
				l.pos += 2
				continue
			}
			t.in1 = l.pos
			l.pos++
			t.closed = true
			return
		}
		l.pos++
	}
	if l.pos > len(l.s) {
		l.pos = len(l.s)
	}
	t.in1 = l.pos
}

// dollar reads PostgreSQL's $1 parameters and $tag$…$tag$ strings.
func (l *lexer) dollar(t *token) {
	s := l.s
	i := l.pos + 1
	if i < len(s) && isDigit(s[i]) {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		l.pos, t.kind = i, tParam
		return
	}
	for i < len(s) && s[i] != '$' && (isWordStart(s[i]) || (i > l.pos+1 && isDigit(s[i]))) {
		i++
	}
	if i >= len(s) || s[i] != '$' {
		l.pos++ // a lone $: nothing PostgreSQL knows
		return
	}
	tag := s[l.pos : i+1]
	t.kind, t.in0 = tString, i+1
	for j := i + 1; j+len(tag) <= len(s); j++ {
		if s[j] == '$' && s[j:j+len(tag)] == tag {
			t.in1, l.pos, t.closed = j, j+len(tag), true
			return
		}
	}
	t.in1, l.pos = len(s), len(s)
}

func (l *lexer) number() {
	s := l.s
	if s[l.pos] == '0' && l.pos+1 < len(s) && (s[l.pos+1]|0x20 == 'x' || s[l.pos+1]|0x20 == 'b') {
		l.pos += 2
	}
	for l.pos < len(s) {
		c := s[l.pos]
		switch {
		case isDigit(c) || c == '.' || c == '_' || isWordStart(c) && !l.isBlank(c):
			l.pos++
			if (c|0x20 == 'e') && l.pos < len(s) && (s[l.pos] == '+' || s[l.pos] == '-') && l.pos+1 < len(s) && isDigit(s[l.pos+1]) {
				l.pos++
			}
		default:
			return
		}
	}
}

// word reads a keyword or identifier, or a string prefix with its string:
// X'…', N'…', B'…', and PostgreSQL's E'…' and U&'…'.
func (l *lexer) word(t *token) {
	s := l.s
	i := l.pos
	for i < len(s) && l.isWordByte(s[i]) {
		i++
	}
	w := s[l.pos:i]
	if i < len(s) && s[i] == '\'' && len(w) == 1 {
		switch c := w[0] | 0x20; {
		case c == 'x', (c == 'n' || c == 'b') && l.d != SQLite:
			l.quoted(t, '\'', 2, l.backslashes(false), tString)
			return
		case c == 'e' && l.d == PostgreSQL:
			l.quoted(t, '\'', 2, true, tString)
			return
		}
	}
	if l.d == PostgreSQL && len(w) == 1 && w[0]|0x20 == 'u' && i+1 < len(s) && s[i] == '&' && (s[i+1] == '\'' || s[i+1] == '"') {
		kind := tString
		if s[i+1] == '"' {
			kind = tIdent
		}
		l.quoted(t, s[i+1], 3, false, kind)
		return
	}
	l.pos = i
	t.kind = tWord
}

func isOpByte(c byte) bool {
	switch c {
	case '+', '-', '*', '/', '%', '<', '>', '=', '!', '~', '^', '&', '|', '@', '#', ':', '?', '\\', '{', '}', '[', ']', '$', '`':
		return true
	}
	return false
}

// opLen is the length of the operator at the start of s: the longest of
// the usual multi-byte operators, else one byte.
func opLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	c1 := s[1]
	var c2 byte
	if len(s) > 2 {
		c2 = s[2]
	}
	switch s[0] {
	case '-':
		if c1 == '>' {
			if c2 == '>' {
				return 3 // ->>
			}
			return 2
		}
	case '#':
		if c1 == '>' {
			if c2 == '>' {
				return 3 // #>>
			}
			return 2
		}
	case '<':
		switch c1 {
		case '=':
			if c2 == '>' {
				return 3 // <=>
			}
			return 2
		case '>', '<', '@':
			return 2
		}
	case '!':
		switch c1 {
		case '~':
			if c2 == '*' {
				return 3 // !~*
			}
			return 2
		case '=':
			return 2
		}
	case '>':
		if c1 == '=' || c1 == '>' {
			return 2
		}
	case '=':
		if c1 == '=' {
			return 2
		}
	case '|':
		if c1 == '|' {
			return 2
		}
	case '&':
		if c1 == '&' {
			return 2
		}
	case ':':
		if c1 == ':' || c1 == '=' {
			return 2
		}
	case '~':
		if c1 == '*' {
			return 2
		}
	case '@':
		if c1 == '>' {
			return 2
		}
	case '?':
		if c1 == '|' || c1 == '&' {
			return 2
		}
	}
	return 1
}
