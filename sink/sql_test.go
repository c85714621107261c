package sink

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

var dialects = []Dialect{SQLite, PostgreSQL, MySQL}

// quote writes s as a string literal the way a careful application (or
// its driver's escaping) would.
func quote(d Dialect, s string) string {
	if d == MySQL {
		s = strings.ReplaceAll(s, `\`, `\\`)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

type sqlCase struct {
	dialects []Dialect // nil: all
	tmpl     string    // %s is where the input is concatenated
	input    string
}

func (c sqlCase) in(d Dialect) bool {
	if c.dialects == nil {
		return true
	}
	for _, x := range c.dialects {
		if x == d {
			return true
		}
	}
	return false
}

const (
	strSlot   = "SELECT id, name FROM users WHERE name = '%s' AND active = 1"
	strSlot2  = "SELECT * FROM users WHERE name = '%s' AND password = 'secret'"
	insSlot   = "INSERT INTO comments (author, body) VALUES ('%s', 'hello')"
	updSlot   = "UPDATE users SET bio = '%s' WHERE id = 7"
	likeSlot  = "SELECT * FROM products WHERE name LIKE '%%%s%%' ORDER BY price"
	numSlot   = "SELECT * FROM users WHERE id = %s"
	numSlot2  = "SELECT * FROM orders WHERE id = %s AND owner_id = 3"
	orderSlot = "SELECT * FROM users ORDER BY %s LIMIT 10"
	limitSlot = "SELECT * FROM users LIMIT %s"
	inSlot    = "SELECT * FROM users WHERE id IN (%s)"
)

// sqlAttacks are classic injections through string concatenation, each
// into the slot it is written for.
var sqlAttacks = []sqlCase{
	{nil, strSlot, "' OR '1'='1"},
	{nil, strSlot, "' OR 1=1 -- "},
	{nil, strSlot2, "admin'--"},
	{nil, strSlot2, "admin' --"},
	{[]Dialect{MySQL}, strSlot2, "admin'#"},
	{[]Dialect{MySQL}, strSlot2, "admin' #"},
	{nil, strSlot, "' UNION SELECT username, password FROM users --"},
	{nil, strSlot, "x' UNION ALL SELECT NULL, NULL; --"},
	{nil, strSlot, "'; DROP TABLE users; --"},
	{nil, strSlot, "'; INSERT INTO users (name, admin) VALUES ('eve', 1); --"},
	{nil, strSlot, "' AND SLEEP(5) AND '1'='1"},
	{nil, strSlot, "x' || (SELECT password FROM users LIMIT 1) || '"},
	{nil, strSlot, "' OR ''='"},
	{nil, strSlot, "' /*"},
	{nil, strSlot, "1' ORDER BY 3--+"},
	{nil, strSlot, "') OR ('1'='1"},
	{nil, strSlot, "%' OR 1=1 --"},
	{nil, strSlot, `\' OR 1=1 -- `}, // MySQL's backslash, the other way round elsewhere
	{nil, strSlot, "' AND 1=CAST((SELECT version()) AS int) --"},
	{nil, insSlot, "x', (SELECT password FROM users WHERE id=1)) --"},
	{nil, insSlot, "eve', 'hi'), ('mallory"},
	{nil, updSlot, "x', admin = 1 WHERE name = 'eve' --"},
	{nil, likeSlot, "%' UNION SELECT password FROM users --"},
	{nil, numSlot, "1 OR 1=1"},
	{nil, numSlot, "1 OR 1=1 --"},
	{nil, numSlot, "0 OR 1"},
	{nil, numSlot, "1; DROP TABLE users"},
	{nil, numSlot, "1 UNION SELECT username, password FROM users"},
	{nil, numSlot, "-1 UNION ALL SELECT NULL, NULL"},
	{nil, numSlot, "1 AND SLEEP(5)"},
	{nil, numSlot, "(SELECT 1)"},
	{nil, numSlot, "1/**/OR/**/1=1"},
	{[]Dialect{MySQL}, numSlot2, "1#"},
	{nil, numSlot2, "1--"},
	{nil, numSlot2, "1 OR 1=1) --"},
	{[]Dialect{MySQL}, numSlot, "1 /*!UNION*/ SELECT 1"},
	{[]Dialect{MySQL}, numSlot, "1 /*!50000UNION SELECT*/ 1"},
	{nil, orderSlot, "name; DROP TABLE users"},
	{nil, orderSlot, "(CASE WHEN (SELECT 1)=1 THEN name ELSE id END)"},
	{nil, orderSlot, "name, (SELECT password FROM users)"},
	{nil, orderSlot, "name -- "},
	{nil, limitSlot, "1 UNION SELECT 1, 2"},
	{nil, limitSlot, "10; DELETE FROM users"},
	{nil, inSlot, "1) OR (1=1"},
	{nil, inSlot, "id, 0"},
	{[]Dialect{SQLite, PostgreSQL}, `SELECT "%s" FROM users`, `name", password, "x`},
	{[]Dialect{SQLite, MySQL}, "SELECT `%s` FROM users", "name`, password, `x"},
	{[]Dialect{SQLite}, "SELECT [%s] FROM users", "name], password, [x"},
	{[]Dialect{PostgreSQL}, "SELECT * FROM notes WHERE body = $$%s$$", "$$ OR 1=1 --"},
	{[]Dialect{PostgreSQL}, "SELECT * FROM notes WHERE body = $q$%s$q$", "$q$ OR 1=1 --"},
	{[]Dialect{PostgreSQL}, "SELECT * FROM notes WHERE body = E'%s'", "' OR 1=1 --"},
	{[]Dialect{PostgreSQL}, "SELECT * FROM t /* note: %s */ WHERE owner = 1", "x */ OR 1=1 /*"},
}

// sqlBenign are values an application concatenates correctly: quoted as a
// literal (quote), or where only a number, a list of numbers or a column
// goes; and values that turn up in the query's own text by chance.
var sqlBenign = []struct {
	tmpl   string
	input  string
	quoted bool // the application quotes the input itself (quote)
}{
	{"SELECT * FROM users WHERE name = %s", "O'Brien", true},
	{"SELECT * FROM users WHERE name = %s", "d'Artagnan", true},
	{"SELECT * FROM users WHERE name = %s", "Robert'); DROP TABLE Students;--", true},
	{"SELECT * FROM users WHERE name = %s", "' OR '1'='1", true},
	{"SELECT * FROM users WHERE name = %s", `C:\Users\x`, true},
	{"SELECT * FROM users WHERE name = %s", `ends with \`, true},
	{"SELECT * FROM users WHERE email = %s", "ada@example.com", true},
	{"SELECT * FROM files WHERE name = %s", "report.v2.pdf", true},
	{"SELECT * FROM posts WHERE body = %s", "it's 100% /* not a comment */ -- nor this #tag", true},
	{"SELECT * FROM posts WHERE title = %s", "SELECT is a word; so is UNION", true},
	{"SELECT * FROM posts WHERE title = %s", "naïve café ☕", true},
	{"INSERT INTO comments (author, body) VALUES (%s, 'hello')", "Mary-Jane O'Neil", true},
	{"SELECT * FROM users WHERE id = %s", "42", false},
	{"SELECT * FROM users WHERE id = %s", "-7", false},
	{"SELECT * FROM prices WHERE amount > %s", "3.14", false},
	{"SELECT * FROM prices WHERE amount > %s", "1e-5", false},
	{"SELECT * FROM users WHERE id IN (%s)", "1, 2, 3", false},
	{"SELECT * FROM users WHERE id IN (%s)", "10,-20,30", false},
	{"SELECT * FROM users ORDER BY %s", "created_at", false},
	{"SELECT * FROM users ORDER BY %s", "name DESC", false},
	{"SELECT * FROM users ORDER BY %s", "last_name ASC, first_name", false},
	{"SELECT * FROM users u ORDER BY %s", "u.id", false},
	{"SELECT %s FROM users", "id, name, email", false},
	{"SELECT * FROM users LIMIT %s", "10", false},
}

// chance pairs an input with a query that contains it without the
// application having put it there.
var sqlChance = []struct{ query, input string }{
	{"SELECT id, name FROM users WHERE user_id = 10 LIMIT 10", "id"},
	{"SELECT id, name FROM users WHERE user_id = 10 LIMIT 10", "10"},
	{"SELECT id, name FROM users WHERE user_id = 10 LIMIT 10", "users"},
	{"SELECT id, name FROM users WHERE user_id = 10 LIMIT 10", "name"},
	{"SELECT * FROM users WHERE name = 'ada' AND city = 'London'", "London"},
	{"SELECT * FROM users WHERE name = 'ada' AND city = 'London'", "ada"},
	{"SELECT * FROM users WHERE created > '2024-01-15'", "2024-01-15"},
	{"/* traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' */ SELECT 1", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	{"SELECT * FROM users WHERE id = ?", "' OR 1=1 --"}, // a parameter: not in the text
	{"SELECT * FROM users WHERE id = $1", "1; DROP TABLE users"},
	{"SELECT * FROM users ORDER BY name DESC", "DESC"},
	{"SELECT * FROM t WHERE a >= 10", ">="},
	{"SELECT * FROM users u JOIN orders o ON o.user_id = u.id", "u.id"},
}

func TestCheckSQL_Attacks(t *testing.T) {
	for _, d := range dialects {
		for _, c := range sqlAttacks {
			if !c.in(d) {
				continue
			}
			query := fmt.Sprintf(c.tmpl, c.input)
			for _, src := range sources {
				if !carries(src, c.input) {
					continue
				}
				t.Run(fmt.Sprintf("%v/%v/%s", d, src, c.input), func(t *testing.T) {
					r, rc := inputAt(t, src, c.input)
					err := CheckSQL(ctxOf(r), query, d)
					assertBlocked(t, err, rc, src, c.input, "sql")
				})
			}
		}
	}
}

func TestCheckSQL_Benign(t *testing.T) {
	for _, d := range dialects {
		for _, c := range sqlBenign {
			v := c.input
			if c.quoted {
				v = quote(d, v)
			}
			query := fmt.Sprintf(c.tmpl, v)
			for _, src := range sources {
				if !carries(src, c.input) {
					continue
				}
				r, rc := inputAt(t, src, c.input)
				assert.NoError(t, CheckSQL(ctxOf(r), query, d), "%v %v %q", d, src, query)
				assert.Empty(t, rc.all())
			}
		}
		for _, c := range sqlChance {
			for _, src := range sources {
				if !carries(src, c.input) {
					continue
				}
				r, _ := inputAt(t, src, c.input)
				assert.NoError(t, CheckSQL(ctxOf(r), c.query, d), "%v %v %q in %q", d, src, c.input, c.query)
			}
		}
	}
}

// The figures of docs/sink-protection.md: every attack of the corpus is
// blocked in every dialect it is written for and from every source, and
// no benign value is.
func TestCheckSQL_Rates(t *testing.T) {
	attacks, blocked, benign, falseBlocks := 0, 0, 0, 0
	for _, d := range dialects {
		for _, c := range sqlAttacks {
			if !c.in(d) {
				continue
			}
			r, _ := inputAt(t, taint.Query, c.input)
			attacks++
			if CheckSQL(ctxOf(r), fmt.Sprintf(c.tmpl, c.input), d) != nil {
				blocked++
			}
		}
		for _, c := range sqlBenign {
			v := c.input
			if c.quoted {
				v = quote(d, v)
			}
			r, _ := inputAt(t, taint.Query, c.input)
			benign++
			if CheckSQL(ctxOf(r), fmt.Sprintf(c.tmpl, v), d) != nil {
				falseBlocks++
			}
		}
		for _, c := range sqlChance {
			r, _ := inputAt(t, taint.Query, c.input)
			benign++
			if CheckSQL(ctxOf(r), c.query, d) != nil {
				falseBlocks++
			}
		}
	}
	t.Logf("sql: %d/%d attacks blocked, %d/%d benign calls blocked", blocked, attacks, falseBlocks, benign)
	assert.Equal(t, attacks, blocked)
	assert.Zero(t, falseBlocks)
}

// What the check cannot see, pinned so that a change to it is a decision:
// one identifier where a number was meant is one token, as a number
// would have been.
func TestCheckSQL_KnownLimits(t *testing.T) {
	r, _ := inputAt(t, taint.Query, "owner_id")
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT * FROM orders WHERE owner_id = owner_id", SQLite),
		"a column name for a value (a tautology) is one token: not seen")
	r, _ = inputAt(t, taint.Query, "X' OR 1=1 --")
	assert.Error(t, CheckSQL(ctxOf(r), "SELECT * FROM t WHERE a = 'x' or 1=1 --'", SQLite),
		"an input lower-cased by the application is still found")
	r, _ = inputAt(t, taint.Query, "x' OR 1=1 --")
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT * FROM t WHERE a = 'x'' OR 1=1 --'", SQLite),
		"an input escaped by the application no longer occurs, and needs not")
}

func TestCheckSQL_NoRequest(t *testing.T) {
	assert.NoError(t, CheckSQL(context.Background(), "SELECT 1 OR 1=1", SQLite))
}

func TestCheckSQL_ReportOnly(t *testing.T) {
	r, rc := inputAt(t, taint.Query, "1 OR 1=1")
	r.ReportOnly = true
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT * FROM users WHERE id = 1 OR 1=1", SQLite))
	require.Len(t, rc.all(), 1)
	assert.Equal(t, taint.Block{Sink: "sql", Source: taint.Query, Name: "field", Reason: "spans 7 tokens of the query"}, rc.all()[0])
}

// Every occurrence counts, not only the first: a benign one in a literal
// does not hide the injected one after it.
func TestCheckSQL_EveryOccurrence(t *testing.T) {
	in := "x' OR 'a'='a"
	r, _ := inputAt(t, taint.Query, in)
	q := "SELECT * FROM t WHERE note = " + quote(SQLite, in) + " AND name = '" + in + "'"
	assert.ErrorIs(t, CheckSQL(ctxOf(r), q, SQLite), ErrBlocked)
}

func TestCheckSQL_Reasons(t *testing.T) {
	cases := []struct{ query, input, reason string }{
		{"SELECT 1 WHERE a = 'x' --'", "x' --", "adds a comment"},
		{"SELECT 1 WHERE a = 1; DROP TABLE t", "1; DROP TABLE t", "ends the statement"},
		{"SELECT 1 WHERE a = 'x' OR 'y'", "x' OR 'y", "opens or closes a string literal"},
		{"SELECT 1 WHERE a = 1 OR 2", "1 OR 2", "spans 5 tokens of the query"},
	}
	for _, c := range cases {
		r, _ := inputAt(t, taint.Query, c.input)
		err := CheckSQL(ctxOf(r), c.query, SQLite)
		require.Error(t, err, c.query)
		assert.Contains(t, err.Error(), c.reason)
	}
}

// The tokenizer never fails: each byte is in one token, in order.
func TestLexer_Covers(t *testing.T) {
	for _, d := range dialects {
		for _, q := range []string{
			"", "'", "SELECT 'unterminated", "/* open", "$$ open", "$a$ x $b$", "--", "#", "`x", "[x", "/*!50000 SELECT */ 1", "/*M!100100 SELECT */ 1", "/*M", "/*M!",
			"E'\\'' x", "U&'d\\0061t\\+000061'", "x'41' + b'01' + N'n'", "a$b $1 ?1 :n @v @@g #p", "1.5e+10 .5 0x1F 1..2",
			"\x00\xff\xfe", "/* a /* nested */ still */ x",
		} {
			for _, alt := range []bool{false, true} {
				lx := newLexer(q, d, alt)
				pos := 0
				for {
					var tk token
					ok := lx.next(&tk)
					if !ok {
						break
					}
					require.Equal(t, pos, tk.start, "%v %q", d, q)
					require.Greater(t, tk.end, tk.start, "%v %q", d, q)
					require.LessOrEqual(t, tk.in0, tk.in1)
					require.GreaterOrEqual(t, tk.in0, tk.start)
					require.LessOrEqual(t, tk.in1, tk.end)
					pos = tk.end
				}
				require.Equal(t, len(q), pos)
			}
		}
	}
}

func TestLexer_Kinds(t *testing.T) {
	kinds := func(d Dialect, q string) []string {
		lx := newLexer(q, d, false)
		var out []string
		for {
			var tk token
			ok := lx.next(&tk)
			if !ok {
				return out
			}
			if tk.kind != tSpace {
				out = append(out, fmt.Sprintf("%d:%s", tk.kind, q[tk.start:tk.end]))
			}
		}
	}
	k := func(kind tokKind, s string) string { return fmt.Sprintf("%d:%s", kind, s) }
	assert.Equal(t, []string{k(tWord, "a"), k(tOp, "-"), k(tOp, "-"), k(tNumber, "1")}, kinds(MySQL, "a--1"), "MySQL's -- needs a space")
	assert.Equal(t, []string{k(tWord, "a"), k(tComment, "--1")}, kinds(SQLite, "a--1"))
	assert.Equal(t, []string{k(tWord, "a"), k(tComment, "# x")}, kinds(MySQL, "a# x"))
	assert.Equal(t, []string{k(tWord, "a"), k(tOp, "#"), k(tWord, "x")}, kinds(PostgreSQL, "a# x"))
	assert.Equal(t, []string{k(tString, `'a\'b'`)}, kinds(MySQL, `'a\'b'`))
	assert.Equal(t, []string{k(tString, `'a\'`), k(tWord, "b"), k(tString, "'")}, kinds(SQLite, `'a\'b'`))
	assert.Equal(t, []string{k(tString, "$t$ 'x' $t$")}, kinds(PostgreSQL, "$t$ 'x' $t$"))
	assert.Equal(t, []string{k(tComment, "/* a /* b */ c */")}, kinds(PostgreSQL, "/* a /* b */ c */"))
	assert.Equal(t, []string{k(tComment, "/* a /* b */"), k(tWord, "c"), k(tOp, "*"), k(tOp, "/")}, kinds(SQLite, "/* a /* b */ c */"))
	assert.Equal(t, []string{k(tExecOpen, "/*!50000"), k(tWord, "UNION"), k(tExecClose, "*/")}, kinds(MySQL, "/*!50000 UNION */"))
	assert.Equal(t, []string{k(tExecOpen, "/*M!100100"), k(tWord, "UNION"), k(tExecClose, "*/")}, kinds(MySQL, "/*M!100100 UNION */"))
	assert.Equal(t, []string{k(tComment, "/*M!100100 UNION */")}, kinds(PostgreSQL, "/*M!100100 UNION */"))
	assert.Equal(t, []string{k(tParam, "?1"), k(tParam, ":name"), k(tParam, "@v"), k(tParam, "$x")}, kinds(SQLite, "?1 :name @v $x"))
	assert.Equal(t, []string{k(tParam, "$1"), k(tOp, "?|")}, kinds(PostgreSQL, "$1 ?|"))
}

// Two inputs that make one injection together (the first swallows the
// application's closing quote, the second is the payload): the second is
// outside any literal, and is blocked on its own.
func TestCheckSQL_TwoInputs(t *testing.T) {
	r, _ := inputAt(t, taint.Query, `x\`)
	r.Params = paramList{{"pw", " OR 1=1 -- "}}
	q := `SELECT * FROM users WHERE name = 'x\' AND password = ' OR 1=1 -- '`
	err := CheckSQL(ctxOf(r), q, MySQL)
	require.ErrorIs(t, err, ErrBlocked)
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "path parameter", be.Source)
}

// A bulk statement holds the same short input thousands of times, each in
// a literal: checked within the bounds, not blocked for its size.
func TestCheckSQL_Bulk(t *testing.T) {
	var b strings.Builder
	b.WriteString("INSERT INTO tags (name) VALUES ")
	for i := range 20000 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("('a-b')")
	}
	r, _ := inputAt(t, taint.Query, "a-b")
	assert.NoError(t, CheckSQL(ctxOf(r), b.String(), PostgreSQL))
	r, _ = inputAt(t, taint.Query, "a-b') ; DROP TABLE tags; --")
	q := b.String() + ", ('a-b') ; DROP TABLE tags; --')"
	assert.ErrorIs(t, CheckSQL(ctxOf(r), q, PostgreSQL), ErrBlocked)
}

// Past the bounds, the check fails closed: the call is blocked, not let
// through unchecked, and not left to run long.
func TestCheckSQL_Bounds(t *testing.T) {
	q := "SELECT 1 WHERE a IN (" + strings.Repeat("'a-', ", maxOccurrences) + "'a-')"
	r, rc := inputAt(t, taint.Query, "a-")
	err := CheckSQL(ctxOf(r), q, SQLite)
	require.ErrorIs(t, err, ErrBlocked)
	assert.Contains(t, err.Error(), "too much input")
	require.Len(t, rc.all(), 1)
	assert.Equal(t, taint.Source(0), rc.all()[0].Source)
}

// TestCheckSQL_CaseMappedInput: an input is found after the application
// upper- or lower-cases it, also where Go's case mapping takes one of its
// letters to ASCII (ı to I, ſ to S, the Kelvin sign to k), which folding
// ASCII case alone does not follow (found by a review: `ı' OR 1=1 --`,
// upper-cased, was let through). So mapped inside a literal, it is a value
// as before.
func TestCheckSQL_CaseMappedInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		fold func(string) string
	}{
		{"x' OR 1=1 --", strings.ToUpper}, // ASCII, as before
		{"\u0131' OR 1=1 --", strings.ToUpper},
		{"x' OR 1=1 --\u017f", strings.ToUpper},
		{"x' OR 1=1 --\u212a", strings.ToLower},
		{"\u017f' OR 'a'='a", strings.ToUpper},
	} {
		for _, d := range dialects {
			r, rc := inputAt(t, taint.Query, c.in)
			q := "SELECT * FROM users WHERE name = '" + c.fold(c.in) + "'"
			assertBlocked(t, CheckSQL(ctxOf(r), q, d), rc, taint.Query, c.in, "sql")
		}
	}
	for _, in := range []string{"Zoë", "\u0131stanbul", "Stra\u017fe 5", "300 \u212a", "O'Br\u0131en"} {
		for _, fold := range []func(string) string{strings.ToUpper, strings.ToLower} {
			for _, d := range dialects {
				r, _ := inputAt(t, taint.Query, in)
				q := "SELECT * FROM users WHERE name = " + quote(d, fold(in)) + " ORDER BY id"
				assert.NoError(t, CheckSQL(ctxOf(r), q, d), "%v %s", d, q)
			}
		}
	}
}

// TestCheckSQL_CarriageReturnEndsAPostgreSQLComment: PostgreSQL's scanner
// ends a -- comment at a carriage return as at a newline (non_newline is
// [^\n\r]), so an input inside the application's line comment that holds
// a \r puts what follows it in the query (found by a review: `x\r; DROP
// TABLE t` after `-- note: ` was judged inside the comment and let
// through). MySQL and SQLite read on to the \n.
func TestCheckSQL_CarriageReturnEndsAPostgreSQLComment(t *testing.T) {
	for _, in := range []string{"x\r; DROP TABLE t", "x\rOR 1=1", "a\r\rUNION SELECT password FROM users"} {
		for _, src := range sources {
			if !carries(src, in) {
				continue
			}
			r, rc := inputAt(t, src, in)
			q := "SELECT * FROM t WHERE owner = 1 -- note: " + in + "\n"
			assertBlocked(t, CheckSQL(ctxOf(r), q, PostgreSQL), rc, src, in, "sql")
		}
		for _, d := range []Dialect{SQLite, MySQL} {
			r, _ := inputAt(t, taint.Query, in)
			q := "SELECT * FROM t WHERE owner = 1 -- note: " + in + "\n"
			assert.NoError(t, CheckSQL(ctxOf(r), q, d), "%v: inside the comment to its newline", d)
		}
	}
	r, _ := inputAt(t, taint.Query, "a note\r\n")
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT 1 -- a note\r\n", PostgreSQL), "a comment that ends at its \\r")
}

// TestCheckSQL_MariaDBCodeComment: MariaDB, reached through the MySQL
// driver and dialect, runs the text of /*M! … */ (and /*M!100100 … */,
// with a version) as code, as MySQL runs /*! … */, so input inside it is
// judged as code (found by a review: `M! OR 1=1` made the application's
// comment /*M! OR 1=1 */ and was judged inside a comment and let through).
func TestCheckSQL_MariaDBCodeComment(t *testing.T) {
	for _, c := range []struct{ query, in string }{
		{"SELECT * FROM t /*M! OR 1=1 */ WHERE a=0", "M! OR 1=1"},
		{"SELECT * FROM t /*M!100100 OR 1=1 */ WHERE a=0", "M!100100 OR 1=1"},
		{"SELECT * FROM t WHERE a=0 /*M! %s */", "OR 1=1"},
		{"SELECT * FROM t WHERE a=0 /*m!%s */", "UNION SELECT 1"},
		{"SELECT * FROM t WHERE a=0 /*%s */", "M! OR 1=1"},
	} {
		q := strings.ReplaceAll(c.query, "%s", c.in)
		for _, src := range sources {
			if !carries(src, c.in) {
				continue
			}
			r, rc := inputAt(t, src, c.in)
			assertBlocked(t, CheckSQL(ctxOf(r), q, MySQL), rc, src, c.in, "sql")
		}
		for _, d := range []Dialect{SQLite, PostgreSQL} {
			r, _ := inputAt(t, taint.Query, c.in)
			assert.NoError(t, CheckSQL(ctxOf(r), q, d), "%v %q: a comment", d, q)
		}
	}
	// An ordinary comment stays one.
	r, _ := inputAt(t, taint.Query, "a note, M! x")
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT 1 /* a note, M! x */", MySQL))
}

// TestCheckSQL_FormNames: a form body's names are input, as a JSON body's
// member names and the query's names are: handlers range over
// r.PostForm's keys (found by a review: the form's values were inputs,
// its names were not, so a name that ends the application's literal and
// sets another column went through).
func TestCheckSQL_FormNames(t *testing.T) {
	for _, ct := range []string{"application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8"} {
		rc := &recorder{}
		r := &taint.Request{Method: "POST", Route: "/users/:id", Reporter: rc, Raw: []byte("name%3D%27x%27%2C+admin=1&note=hello"),
			Header: http.Header{"Content-Type": {ct}}}
		err := CheckSQL(ctxOf(r), "UPDATE users SET name='x', admin = ? WHERE id = 7", SQLite)
		require.ErrorIs(t, err, ErrBlocked)
		var be *BlockedError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, "body key", be.Source)
		assert.Equal(t, "", be.Input)
		require.Len(t, rc.all(), 1)
		// Its names as columns, one word each, are what they were.
		assert.NoError(t, CheckSQL(ctxOf(r), "UPDATE users SET note = ? WHERE id = 7", SQLite))
	}
}

// TestCheckSQL_BackslashBeforeInput: a backslash the application wrote
// just before the input escapes the input's quote with MySQL's backslash
// escapes, and does not on a server with NO_BACKSLASH_ESCAPES, where the
// application's `'C:\uploads\` is a whole literal (PostgreSQL's standard
// strings read it so already).
func TestCheckSQL_BackslashBeforeInput(t *testing.T) {
	in := "' OR 1=1 -- "
	q := `SELECT * FROM files WHERE path = 'C:\uploads\` + in + `'`
	for _, d := range []Dialect{MySQL, PostgreSQL} {
		r, _ := inputAt(t, taint.Query, in)
		assert.ErrorIs(t, CheckSQL(ctxOf(r), q, d), ErrBlocked, d.String())
	}
	// A name in the same place is a name either way.
	r, _ := inputAt(t, taint.Query, "report v2.pdf")
	assert.NoError(t, CheckSQL(ctxOf(r), `SELECT * FROM files WHERE path = 'C:\uploads\report v2.pdf'`, MySQL))
}

// TestCheckSQL_MySQLBlankA0: MySQL over a single-byte character set
// (latin1, its default before 8.0) reads the byte 0xA0 as white space,
// as sqlmap's space2mysqlblank knows: `1\xa0OR\xa0true` is four tokens
// to it, not one word.
func TestCheckSQL_MySQLBlankA0(t *testing.T) {
	for _, in := range []string{"1\xa0OR\xa0true", "0\xa0UNION\xa0SELECT\xa0password\xa0FROM\xa0users", "x\xa0OR\xa0id"} {
		r, _ := inputAt(t, taint.Query, in)
		err := CheckSQL(ctxOf(r), fmt.Sprintf(numSlot, in), MySQL)
		assert.ErrorIs(t, err, ErrBlocked, "%q", in)
	}
	r, _ := inputAt(t, taint.Query, "1\xa0--\xa0x")
	assert.ErrorIs(t, CheckSQL(ctxOf(r), fmt.Sprintf(numSlot2, "1\xa0--\xa0x"), MySQL), ErrBlocked)
	// In a literal it is a byte of the literal; elsewhere in PostgreSQL
	// and SQLite, one of a name.
	r, _ = inputAt(t, taint.Query, "caf\u00e0 cr\u00e8me")
	assert.NoError(t, CheckSQL(ctxOf(r), fmt.Sprintf(strSlot, "caf\u00e0 cr\u00e8me"), MySQL))
	for _, d := range []Dialect{PostgreSQL, SQLite} {
		r, _ := inputAt(t, taint.Query, "col\xa0x")
		assert.NoError(t, CheckSQL(ctxOf(r), fmt.Sprintf(orderSlot, "col\xa0x"), d), d.String())
	}
}

// TestCheckSQL_SQLiteNUL: SQLite compiles a query up to its first NUL
// byte, so an input that puts one in a comment cuts off the rest of the
// query, its WHERE too (sink/sqlitetest runs it).
func TestCheckSQL_SQLiteNUL(t *testing.T) {
	in := "x\x00"
	for _, q := range []string{
		"SELECT * FROM docs /* search: " + in + " */ WHERE owner = 5",
		"SELECT * FROM docs -- search: " + in + "\n WHERE owner = 5",
	} {
		r, rc := inputAt(t, taint.Query, in)
		assertBlocked(t, CheckSQL(ctxOf(r), q, SQLite), rc, taint.Query, in, "sql")
	}
	// Quoted, the cut leaves a literal or a name unclosed, which SQLite
	// refuses (sqlitetest's TestWrappers_NULCutsTheQuery): no attack, and
	// FuzzSQL's quoted inputs pass.
	for _, q := range []string{
		"SELECT * FROM docs WHERE name = '" + in + "' AND owner = 5",
		`SELECT * FROM docs WHERE "` + in + `" = 1 AND owner = 5`,
		"SELECT * FROM docs WHERE [" + in + "] = 1 AND owner = 5",
	} {
		r, _ := inputAt(t, taint.Query, in)
		assert.NoError(t, CheckSQL(ctxOf(r), q, SQLite), q)
	}
}
