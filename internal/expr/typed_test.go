package expr

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type Line struct {
	SKU string `json:"sku"`
	Qty int32  `json:"quantity"`
}

type Transfer struct {
	From   string            `json:"from"`
	To     string            `json:"to"`
	Amount float64           `json:"amount"`
	Note   string            `json:"note,omitempty"`
	At     time.Time         `json:"at"`
	Lines  []Line            `json:"lines"`
	Meta   map[string]string `json:"meta"`
	Ptr    *Line             `json:"ptr"`
	Hidden string            `json:"-"`
}

func TestTypedRules(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	te, err := env.ForType(reflect.TypeFor[Transfer](), nil)
	require.NoError(t, err)
	tr := &Transfer{From: "a", To: "b", Amount: 50, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Lines: []Line{{"X", 2}}, Meta: map[string]string{"k": "v"}}
	ttype := reflect.TypeFor[Transfer]()
	tests := []struct {
		field, src string
		self       any
		want       bool
	}{
		{"", "data.from != data.to", nil, true},
		{"", "data.amount <= context.user.limit", nil, true},
		{"", "data.lines.all(l, l.quantity > 0) && data.lines[0].sku == 'X'", nil, true},
		{"", "data.meta.k == 'v' && data.at < timestamp('2027-01-01T00:00:00Z')", nil, true},
		{"", "!has(data.note) && has(data.from)", nil, true},
		{"", "!has(data.ptr)", nil, true},
		{"amount", "self <= 10000.0 && self > 0.0", 50.0, true},
		{"amount", "self <= 10000", 50.0, true},
		{"lines", "size(self) == 1", tr.Lines, true},
		{"ptr", "self == null", (*Line)(nil), true},
		{"from", "self.startsWith('a')", "a", true},
		{"", "request.body.amount == 50", nil, true},
		// The same reads, false: the values come from the struct, not a constant verdict.
		{"", "data.from == data.to", nil, false},
		{"", "data.amount > context.user.limit", nil, false},
		{"", "data.lines.exists(l, l.quantity > 2)", nil, false},
		{"", "data.meta.k == 'w'", nil, false},
		{"", "has(data.note)", nil, false},
		{"amount", "self > 50.0", 50.0, false},
		{"lines", "size(self) == 2", tr.Lines, false},
		{"from", "self.startsWith('b')", "a", false},
		{"", "request.body.amount == 51", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := te.Rule(ttype, tt.field, tt.src)
			require.NoError(t, err)
			a := &Activation{Data: tr, Self: tt.self, Body: doc(t, `{"amount":50}`), Src: &src{user: map[string]any{"limit": 100}}}
			ok, err := p.Eval(a)
			require.NoError(t, err)
			assert.Equal(t, tt.want, ok)
		})
	}
	lt := reflect.TypeFor[Line]()
	p, err := te.Rule(lt, "quantity", "self > 0 && data.sku != ''")
	require.NoError(t, err)
	ok, err := p.Eval(&Activation{Data: &tr.Lines[0], Self: tr.Lines[0].Qty})
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = p.Eval(&Activation{Data: &Line{SKU: "X"}, Self: int32(0)})
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestTypedRules_Errors(t *testing.T) {
	env, err := NewEnv(Config{CostLimit: 100000, MaxEstimatedCost: math.MaxUint64})
	require.NoError(t, err)
	te, err := env.ForType(reflect.TypeFor[Transfer](), nil)
	require.NoError(t, err)
	ttype := reflect.TypeFor[Transfer]()
	for _, tt := range []struct{ field, src, msg string }{
		{"", "data.amuont > 1", "undefined field 'amuont'"},
		{"", "data.Amount > 1", "undefined field 'Amount'"},
		{"amount", `self > "x"`, "no matching overload"},
		{"", "data.lines.all(l, l.qty > 0)", "undefined field 'qty'"},
		{"", "data.from", "must evaluate to a bool"},
		{"hidden", "self == ''", "not visible"},
		{"", "self > 1", "undeclared reference to 'self'"},
	} {
		_, err := te.Rule(ttype, tt.field, tt.src)
		require.Error(t, err, tt.src)
		assert.Contains(t, err.Error(), tt.msg, tt.src)
	}
	anon := reflect.TypeFor[struct{ A struct{ B int } }]()
	ate, err := env.ForType(anon, nil)
	require.NoError(t, err, "types without rules need no name")
	_, err = ate.Rule(anon, "", "true")
	assert.ErrorContains(t, err, "rules need a named struct type")
}
