package sqlitetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/contractguard/contractguard/internal/taint"
	"github.com/contractguard/contractguard/sink"
)

// The differential test holds the tokenizer's verdict ("the input changes
// the query's structure") to SQLite's own reading of the same query. For a
// template with a slot, the query with the input spliced in and the query
// with a neutral value of the slot's kind are each compiled and run by
// SQLite on a fresh database, and compared by what SQLite saw:
//
//   - whether it accepted the query at all;
//   - what its authorizer was asked while compiling every statement (each
//     statement, table, column and function the query touches, so a
//     stacked statement, a UNION over another table or a new function
//     shows);
//   - the program it compiled for the first statement (EXPLAIN): the
//     opcodes, with their operands, the values of constants left out (a
//     new condition, a comment that hides one, another column or an extra
//     result column shows), or, when the query has several statements,
//     the rows the last one returned.
//
// The verdicts agree when the tokenizer blocks and SQLite's view differs,
// or when it lets the input through and the views are the same. Where they
// disagree, the test sorts the case into what it is:
//
//   - the tokenizer lets it through and SQLite rejects the query: the query
//     fails, nothing runs (harmless, counted);
//   - the tokenizer blocks and SQLite sees the same program: stricter than
//     needed here (a comment at the end that hides nothing, parentheses or
//     spaces around a value, `1--` as a number and a comment) — the views
//     cannot tell a comment that hides nothing in this template from one
//     that hides a condition in another, so these are counted, not failed;
//   - the tokenizer lets it through and SQLite sees another program: a miss,
//     unless it is what the tokenizer allows by design — one word or number
//     where another goes (`id` for a number, another column to ORDER BY),
//     a list of numbers, a list of column names, a whole quoted literal
//     where a number goes. Any other miss fails the test.
//
// What SQLite cannot decide: whether two programs that differ only in the
// values of their constants mean the same (they are taken as the same), and
// anything about the other dialects.

type slot struct {
	tmpl    string // %s is the slot
	neutral string // a value of the slot's kind
	kind    string
}

var slots = []slot{
	{"SELECT id, name FROM users WHERE name = '%s'", "", "string"},
	{"SELECT id FROM users WHERE name = '%s' AND active = 1", "", "string"},
	{"SELECT id FROM users WHERE email LIKE '%%%s%%' ORDER BY id", "", "string"},
	{"UPDATE users SET email = '%s' WHERE id = 1", "", "string"},
	{"INSERT INTO users (name, email) VALUES ('%s', 'x@example.com')", "", "string"},
	{`SELECT id FROM users WHERE name = "%s"`, "", "dquote"},
	{"SELECT name FROM users WHERE id = %s", "1", "number"},
	{"SELECT name FROM users WHERE age > %s AND active = 1", "1", "number"},
	{"SELECT name FROM users ORDER BY id LIMIT %s", "1", "number"},
	{"SELECT id FROM users ORDER BY %s", "id", "name"},
}

// neutralFor is the slot's neutral value for an input: a string of a's as
// long as the input in a string slot (so nothing but the text changes).
func (s slot) neutralFor(input string) string {
	if s.kind == "string" || s.kind == "dquote" {
		return strings.Repeat("a", max(len(input), 1))
	}
	return s.neutral
}

type dbView struct {
	err     string
	auth    string
	program string
}

func (v dbView) same(w dbView) bool {
	return (v.err == "") == (w.err == "") && v.auth == w.auth && v.program == w.program
}

// constOps load a constant: their value operands are left out.
var constOps = map[string]bool{"Integer": true, "Int64": true, "Real": true, "String8": true, "String": true, "Null": true, "Blob": true}

// view runs query on a fresh database and reports what SQLite saw.
func view(t testing.TB, query string) dbView {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, schema); err != nil {
		t.Fatal(err)
	}
	var auth []string
	err = conn.Raw(func(dc any) error {
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(a sqlite.AuthorizerActionCode, a1, a2, _, _ string) sqlite.AuthorizerReturnCode {
			if a == sqlite.AuthAttach || a == sqlite.AuthDetach {
				return sqlite.AuthorizerDeny // no files from a fuzzed query
			}
			auth = append(auth, fmt.Sprintf("%d:%s:%s", a, a1, a2))
			return sqlite.AuthorizerOK
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var v dbView
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+query)
	if err != nil {
		v.err = err.Error()
		return v
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var prog []string
	explain := slices.Equal(cols, []string{"addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"})
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			v.err = err.Error()
			return v
		}
		if !explain {
			prog = append(prog, fmt.Sprint(vals...))
			continue
		}
		op := fmt.Sprint(vals[1])
		if constOps[op] {
			prog = append(prog, "const "+fmt.Sprint(vals[3]))
		} else {
			prog = append(prog, fmt.Sprint(op, " ", vals[2], " ", vals[3], " ", vals[4], " ", vals[6]))
		}
	}
	if err := rows.Err(); err != nil {
		v.err = err.Error()
	}
	v.auth = strings.Join(auth, ",")
	v.program = strings.Join(cols, ",") + "|" + strings.Join(prog, ";")
	return v
}

// tokenizer is the sink's verdict on query with input from the request.
func tokenizer(query, input string) (blocked bool, reason string) {
	r := &taint.Request{RawQuery: "q=" + urlQueryEscape(input)}
	err := sink.CheckSQL(taint.NewContext(context.Background(), r), query, sink.SQLite)
	var be *sink.BlockedError
	if errors.As(err, &be) {
		return true, be.Reason
	}
	return false, ""
}

func urlQueryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == '.' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// The shapes the tokenizer lets through by design, told independently of
// it: a number is a digit or dot, then digits, letters, dots and
// underscores, with an exponent's sign (1.5, 0x1F, 1_000, 0e+0).
const number = `[-+]?\s*[0-9.][0-9A-Za-z_.]*(?:[eE][-+][0-9][0-9A-Za-z_.]*)?`

var (
	numberList = regexp.MustCompile(`^` + number + `(\s*,\s*` + number + `)*$`)
	nameList   = regexp.MustCompile(`^\.?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\.?(\s+(?i:ASC|DESC))?(\s*,\s*[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\s+(?i:ASC|DESC))?)*$`)
	oneWord    = regexp.MustCompile(`^[A-Za-z0-9_.]+$`) // a word, or a qualified name
	oneString  = regexp.MustCompile(`^([xXnNbBeE]?'([^']|'')*'|"([^"]|"")*")$`)
)

// byDesign names the kind of input the tokenizer lets through although it
// may change the program: one word or number, a list of numbers, a list
// of column names, one whole quoted literal (a string where a number
// goes).
func byDesign(input string) string {
	input = strings.TrimSpace(input) // as the sink trims it (\v included)
	switch {
	case oneWord.MatchString(input):
		return "one word or number"
	case numberList.MatchString(input):
		return "a list of numbers"
	case nameList.MatchString(input):
		return "a list of names"
	case oneString.MatchString(input):
		return "one whole string literal"
	}
	return ""
}

type outcome struct {
	agreeBlock, agreePass, failsAnyway, stricter int
	designed                                     map[string]int
	misses                                       []string
	stricterBy                                   map[string]int
	stricterEg                                   map[string]string
	failsEg                                      []string
}

func (o *outcome) judge(t testing.TB, s slot, input string) {
	if strings.TrimSpace(input) == "" || len(strings.TrimSpace(input)) < taint.MinInputLen {
		return
	}
	q := fmt.Sprintf(s.tmpl, input)
	blocked, reason := tokenizer(q, input)
	neutral := view(t, fmt.Sprintf(s.tmpl, s.neutralFor(input)))
	if neutral.err != "" {
		t.Fatalf("the neutral query of %q fails: %s", s.tmpl, neutral.err)
	}
	got := view(t, q)
	changed := !got.same(neutral)
	switch {
	case blocked && changed:
		o.agreeBlock++
	case !blocked && !changed:
		o.agreePass++
	case !blocked && got.err != "":
		o.failsAnyway++
		if len(o.failsEg) < 5 {
			o.failsEg = append(o.failsEg, fmt.Sprintf("%q (%s)", q, got.err))
		}
	case blocked:
		o.stricter++
		o.stricterBy[reason]++
		if _, ok := o.stricterEg[reason]; !ok {
			o.stricterEg[reason] = q
		}
	default:
		if d := byDesign(input); d != "" {
			o.designed[d]++
			return
		}
		o.misses = append(o.misses, fmt.Sprintf("%q (input %q)", q, input))
	}
}

func newOutcome() *outcome {
	return &outcome{designed: map[string]int{}, stricterBy: map[string]int{}, stricterEg: map[string]string{}}
}

func (o *outcome) report(t testing.TB) {
	total := o.agreeBlock + o.agreePass + o.failsAnyway + o.stricter + len(o.misses)
	for _, n := range o.designed {
		total += n
	}
	t.Logf("%d cases: %d agree (blocked, SQLite sees another query), %d agree (let through, same query), "+
		"%d let through and rejected by SQLite, %d blocked though SQLite sees the same program, %d let through by design %v, %d misses",
		total, o.agreeBlock, o.agreePass, o.failsAnyway, o.stricter, sum(o.designed), o.designed, len(o.misses))
	reasons := make([]string, 0, len(o.stricterBy))
	for r := range o.stricterBy {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		t.Logf("  stricter, %q: %d, e.g. %s", r, o.stricterBy[r], o.stricterEg[r])
	}
	for _, eg := range o.failsEg {
		t.Logf("  let through, rejected by SQLite, e.g. %s", eg)
	}
	for _, m := range o.misses {
		t.Errorf("miss: the tokenizer lets through %s, which SQLite reads as another query", m)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// fragments make random inputs: SQL's syntax, keywords, values and noise.
var fragments = []string{
	"'", "''", `"`, "`", "[", "]", "(", ")", ",", ";", "--", "-", "/*", "*/", "*", "/", "#", "=", "<", ">", "!", "|", "||",
	"&", "%", "_", `\`, " ", " ", " ", "\n", "\t", "1", "0", "42", "3.14", "1e5", "0x1F", "a", "x", "id", "name", "OR", "or",
	"AND", "UNION", "SELECT", "FROM", "users", "secrets", "password", "NULL", "LIKE", "ORDER BY", "LIMIT", "$x", "?", ":p", "@v",
	"1=1", "'1'='1", "DROP TABLE users", "COMMIT", "sqlite_master", "CASE WHEN 1 THEN 1 END", "abs(", "char(65)", "X'41'",
	"é", "☃", "O'Brien", "ada", "Ada Lovelace", "ada@example.com",
}

func randomInput(rng *rand.Rand) string {
	var b strings.Builder
	for n := 1 + rng.IntN(6); n > 0; n-- {
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}

// classic are the attacks and benign values of the unit tests, spliced
// raw, each into every slot.
var classic = []string{
	"' OR '1'='1", "' OR 1=1 -- ", "admin'--", "' UNION SELECT password, 1 FROM secrets --", "'; DROP TABLE users; --",
	"x' || (SELECT password FROM secrets) || '", "' /*", "1 OR 1=1", "1; DROP TABLE users", "1 UNION SELECT password FROM secrets",
	"(SELECT 1)", "1/**/OR/**/1=1", "1--", "0 OR 1", "id", "name DESC", "1, 2", "Ada Lovelace", "ada@example.com", "report.v2.pdf",
	"it is 100%", "a_b-c.d", "42", "-7", "3.14", "$x", ":p",
}

func TestDifferential(t *testing.T) {
	n := 1500
	if s := os.Getenv("SQLITE_DIFF_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	o := newOutcome()
	for _, s := range slots {
		for _, in := range classic {
			o.judge(t, s, in)
		}
	}
	rng := rand.New(rand.NewPCG(18, 2026))
	for range n {
		o.judge(t, slots[rng.IntN(len(slots))], randomInput(rng))
	}
	o.report(t)
}

// FuzzDifferential is TestDifferential on the fuzzer's inputs.
func FuzzDifferential(f *testing.F) {
	for _, in := range classic {
		f.Add(uint8(0), in)
		f.Add(uint8(6), in)
	}
	f.Fuzz(func(t *testing.T, si uint8, input string) {
		if len(input) > 200 || !utf8Valid(input) || strings.ContainsRune(input, 0) {
			return
		}
		o := newOutcome()
		o.judge(t, slots[int(si)%len(slots)], input)
		for _, m := range o.misses {
			t.Errorf("miss: %s", m)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
