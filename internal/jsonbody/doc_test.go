package jsonbody

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNodes: Doc.Node walks every value in the order of the body, each
// container before what it holds and each member name, marked, just
// before its value; both readers mark the same names, and the same names
// as words (ASCII letters and digits only, after unescaping).
func TestNodes(t *testing.T) {
	body := []byte(`{"a":[1,"x"],"b":{"c":"d","e\u0041":null,"e\u002d":0},"f":"g","":"","a_b":1,"é":2,"Zz09":[{"\\":3}]}`)
	type step struct {
		kind Kind
		text string
		name bool
		word bool
	}
	want := []step{{Object, "", false, false}, {String, "a", true, true}, {Array, "", false, false},
		{Number, "1", false, false}, {String, "x", false, false}, {String, "b", true, true},
		{Object, "", false, false}, {String, "c", true, true}, {String, "d", false, false},
		{String, "eA", true, true}, {Null, "", false, false}, {String, "e-", true, false},
		{Number, "0", false, false}, {String, "f", true, true}, {String, "g", false, false},
		{String, "", true, true}, {String, "", false, false}, {String, "a_b", true, false},
		{Number, "1", false, false}, {String, "é", true, false}, {Number, "2", false, false},
		{String, "Zz09", true, true}, {Array, "", false, false}, {Object, "", false, false},
		{String, `\`, true, false}, {Number, "3", false, false}}
	for _, tokens := range []bool{false, true} {
		var d *Doc
		var err error
		if tokens {
			var p parser
			d, err = p.tokens(body, 64)
		} else {
			d, err = Parse(body, 64)
		}
		require.NoError(t, err)
		var got []step
		for i := range d.Nodes() {
			v := d.Node(i)
			s := step{kind: v.Kind(), name: v.IsName(), word: v.IsWord()}
			if s.kind == String || s.kind == Number {
				s.text = v.Str()
			}
			got = append(got, s)
		}
		require.Equal(t, want, got, "tokens reader: %v", tokens)
	}
}
