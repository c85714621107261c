package expr

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

// TestEval_CostLimitBoundsStringScans: size() of a string and the
// conversions that parse one read it whole. A rule that does so for every
// element of a list, on a long string of the body, is stopped at the cost
// limit (it ran 2,000 × 1 MiB of parsing, seconds, charged a unit a
// call), on both paths; on short strings the same rules hold. So is one
// that reads a long time zone (26 s over 12,000 items of a 500 KB zone).
func TestEval_CostLimitBoundsStringScans(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":2000,"items":{"type":"integer"}},"s":{"type":"string"},"d":{}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 200), ",")
	long := doc(t, `{"items":[`+items+`],"s":"`+strings.Repeat("0", 1_000_000)+`7","d":"`+strings.Repeat("0", 1_000_000)+`7"}`)
	short := doc(t, `{"items":[`+items+`],"s":"7","d":"7"}`)
	for _, src := range []string{
		"request.body.items.all(i, size(request.body.s) > 0)",
		"request.body.items.all(i, request.body.s.size() > 0)",
		"request.body.items.all(i, size(request.body.d) > 0)",
		"request.body.items.all(i, i <= int(request.body.s))",
		"request.body.items.all(i, i <= int(request.body.d))",
		"request.body.items.all(i, uint(i) <= uint(request.body.s))",
		"request.body.items.all(i, double(i) <= double(request.body.s))",
		"request.body.items.all(i, bool(request.body.s) || i > 0)",
		"request.body.items.all(i, duration(request.body.s) != duration('1s') || i > 0)",
		"request.body.items.all(i, timestamp(request.body.s) != timestamp('2020-01-01T00:00:00Z') || i > 0)",
		"request.body.items.all(i, timestamp('2020-01-01T00:00:00Z').getHours(request.body.s) >= 0 || i > 0)",
		"request.body.items.all(i, timestamp('2020-01-01T00:00:00Z').getDayOfWeek(request.body.d) >= 0 || i > 0)",
	} {
		p := stopsAtLimit(t, ce, src, &Activation{Body: long, Shape: s.Numbers()}) // tracked: it may read a string whole
		if p.Native() {
			_, _, done := p.nat.eval(&Activation{Body: long, Shape: s.Numbers()})
			assert.False(t, done, "%s: the native path hands over at the budget", src)
		}
		if !strings.Contains(src, "bool(") && !strings.Contains(src, "duration(") && !strings.Contains(src, "timestamp(") || strings.Contains(src, "|| i > 0") {
			ok, err := p.Eval(&Activation{Body: short, Shape: s.Numbers()})
			require.NoError(t, err, src)
			assert.True(t, ok, src)
		}
	}
	// A conversion of a number, or size() of a list, reads no string: not
	// tracked for it.
	for _, src := range []string{"request.body.items.all(i, double(i) > 0.0)", "size(request.body.items) <= 10"} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		assert.False(t, p.Tracked(), src)
	}
}

// TestEval_CostLimitBoundsFormat: format() writes its arguments whole,
// and cel-go charged it by its format string alone. A rule formatting a
// long value once per element of a list, whether the call succeeds or
// fails, is stopped at the cost limit (it formatted 200 × 200 KB); so is
// a single call on a list map() made of one list N times (2,000² values
// written, where a 5,000-element list allocated 519 MiB); small calls
// still hold.
func TestEval_CostLimitBoundsFormat(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100_000, MaxEstimatedCost: 10_000_000, MaxBodyBytes: 1 << 20}) // the guard's defaults
	require.NoError(t, err)
	s := compileSchema(t, `{"type":"object","properties":{
		"items":{"type":"array","maxItems":2000,"items":{"type":"integer"}},"pad":{},"s":{"type":"string"},"n":{}}}`)
	ce, err := env.ForSchema(s)
	require.NoError(t, err)
	items := strings.TrimSuffix(strings.Repeat("7,", 200), ",")
	pad := `["` + strings.Repeat("a", 200_000) + `"]`
	body := doc(t, `{"items":[`+items+`],"pad":`+pad+`,"s":"a","n":1}`)
	square := doc(t, `{"items":[`+strings.TrimSuffix(strings.Repeat("7,", 2000), ",")+`]}`)
	for src, d := range map[string]*jsonbody.Doc{
		"request.body.items.all(i, '%s'.format([request.body.pad]) != '')":                            body,
		"request.body.items.all(i, '%s%d'.format([request.body.pad, request.body.s]) == '' || i > 0)": body,
		"'%s'.format([request.body.items.map(i, request.body.items)]) != ''":                          square,
	} {
		stopsAtLimit(t, ce, src, &Activation{Body: d, Shape: s.Numbers()})
	}
	for _, src := range []string{
		"'%s-%d'.format([request.body.s, request.body.n]) == 'a-1'",
		"'%s'.format([request.body.items]).size() > 10 && '%s %s'.format(['x', 1]) == 'x 1'",
		"'%d%%'.format([request.body.n, request.body.pad]) == '1%'", // an argument no clause uses is not written
		"request.body.items.all(i, '%s'.format([request.body.s]) == 'a')",
	} {
		p, err := ce.Compile(src)
		require.NoError(t, err, src)
		ok, err := p.Eval(&Activation{Body: body, Shape: s.Numbers()})
		require.NoError(t, err, src)
		assert.True(t, ok, src)
	}
}
