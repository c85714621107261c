package sink

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// TestIsASCII: one byte of other than ASCII anywhere, in a string of any
// length (whole words of eight, the overlapping last word, the half word,
// the bytes of a short string), is seen.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		s := strings.Repeat("a", n)
		assert.True(t, isASCII(s), n)
		for i := 0; i < n; i++ {
			for _, c := range []byte{0x80, 0xc4, 0xff} {
				b := []byte(s)
				b[i] = c
				assert.False(t, isASCII(string(b)), "%d bytes, %#x at %d", n, c, i)
			}
		}
	}
	assert.True(t, isASCII("\x00\x7f ~"))
	assert.False(t, isASCII("Zoë"))
}

// TestOtherCases: the upper- and lower-case forms of an input of other
// than ASCII that differ from it, and from each other, beyond ASCII case.
func TestOtherCases(t *testing.T) {
	for in, want := range map[string][]string{
		"\u0131' OR 1": {"I' OR 1"},   // ToLower leaves ı as it is
		"x\u017f":      {"XS"},        // ſ is lower-case
		"\u212a1":      {"k1"},        // the Kelvin sign is upper-case: ToUpper leaves it
		"Zoë":          {"ZOË"},       // ë has cases of its own; zoë is Zoë but for ASCII case
		"\u0131":       nil,           // I alone is one byte: too short
		"ÉCOLE":        {"école"},     // ToUpper gives it back
		"\xff'--":      {"\ufffd'--"}, // ToUpper and ToLower replace a bad byte alike
	} {
		forms, n := otherCases(in)
		assert.Equal(t, want, append([]string(nil), forms[:n]...), "%q", in)
	}
}

// TestCheck_InputTrimmedAsRuntimesTrim: an application that trims its
// input with strings.TrimSpace (or JavaScript's trim, Python's strip)
// takes U+00A0, U+2028 or U+3000 off its ends too, which the SQL, shell
// and host checks did not when they looked for the input without its
// white space (found by a review: "\u00a0x' OR '1'='1" trimmed into a
// query, "\u00a0x; id" into a script and "\u00a0169.254.169.254" into a
// URL were let through).
func TestCheck_InputTrimmedAsRuntimesTrim(t *testing.T) {
	for _, pad := range []string{"\u00a0", "\u2028", "\u3000", " \u00a0"} {
		for _, tc := range []struct {
			in, sink string
			check    func(ctx context.Context, trimmed string) error
		}{
			{"x' OR '1'='1", "sql", func(ctx context.Context, v string) error {
				return CheckSQL(ctx, "SELECT * FROM t WHERE name = '"+v+"'", PostgreSQL)
			}},
			{"x; id", "shell", func(ctx context.Context, v string) error {
				return CheckCmd(ctx, exec.Command("sh", "-c", "echo "+v))
			}},
			{"169.254.169.254", "http", func(ctx context.Context, v string) error {
				return CheckURL(ctx, "http://"+v+"/latest/meta-data/")
			}},
		} {
			for _, in := range []string{pad + tc.in, tc.in + pad} {
				for _, src := range sources {
					if !carries(src, in) {
						continue
					}
					r, rc := inputAt(t, src, in)
					err := tc.check(ctxOf(r), strings.TrimSpace(in))
					assertBlocked(t, err, rc, src, in, tc.sink)
				}
			}
		}
	}
	// Data stays data: the trimmed input inside a string, an argument.
	r, _ := inputAt(t, taint.Query, "\u00a0O'Brien here\u3000")
	assert.NoError(t, CheckSQL(ctxOf(r), "SELECT * FROM t WHERE name = $1 AND note = 'O''Brien here'", PostgreSQL))
	r, _ = inputAt(t, taint.Query, "\u00a0in.png\u00a0")
	assert.NoError(t, CheckCmd(ctxOf(r), exec.Command("convert", "in.png", "out.png")))
}

// TestSinks_FormTooLargeFailsClosed: on a request whose form body is past
// what its inputs are read to (taint.Request.TooLarge), every sink fails
// closed, reported once; in report-only mode the call goes ahead.
func TestSinks_FormTooLargeFailsClosed(t *testing.T) {
	over := func(reportOnly bool) (context.Context, *recorder) {
		rc := &recorder{}
		r := &taint.Request{Method: "POST", Route: "/forms", Reporter: rc, ReportOnly: reportOnly,
			Raw: []byte(strings.Repeat("&", 10000)), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
		return ctxOf(r), rc
	}
	checks := map[string]func(context.Context) error{
		"sql":   func(ctx context.Context) error { return CheckSQL(ctx, "SELECT 1", SQLite) },
		"shell": func(ctx context.Context) error { return CheckCmd(ctx, exec.Command("true")) },
		"file":  func(ctx context.Context) error { return CheckPath(ctx, "notes.txt") },
		"http":  func(ctx context.Context) error { return CheckURL(ctx, "https://example.com/") },
	}
	for name, check := range checks {
		ctx, rc := over(false)
		err := check(ctx)
		require.ErrorIs(t, err, ErrBlocked, name)
		assert.ErrorContains(t, err, "too much input", name)
		require.Len(t, rc.all(), 1, name)
		assert.Equal(t, name, rc.all()[0].Sink)
		ctx, rc = over(true)
		assert.NoError(t, check(ctx), name)
		assert.Len(t, rc.all(), 1, name)
	}
	ctx, rc := over(false)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:1/", nil)
	_, err := (&http.Client{Transport: Transport(nil)}).Do(req)
	require.ErrorIs(t, err, ErrBlocked, "the transport")
	assert.Len(t, rc.all(), 1)
}
