package jsonbody

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNodes: Doc.Node walks every value in the order of the body, each
// container before what it holds and each member name, marked, just
// before its value; both readers mark the same names.
func TestNodes(t *testing.T) {
	body := []byte(`{"a":[1,"x"],"b":{"c":"d","e\u0041":null},"f":"g","":""}`)
	type step struct {
		kind Kind
		text string
		name bool
	}
	want := []step{{Object, "", false}, {String, "a", true}, {Array, "", false}, {Number, "1", false},
		{String, "x", false}, {String, "b", true}, {Object, "", false}, {String, "c", true}, {String, "d", false},
		{String, "eA", true}, {Null, "", false}, {String, "f", true}, {String, "g", false}, {String, "", true}, {String, "", false}}
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
			s := step{kind: v.Kind(), name: v.IsName()}
			if s.kind == String || s.kind == Number {
				s.text = v.Str()
			}
			got = append(got, s)
		}
		require.Equal(t, want, got, "tokens reader: %v", tokens)
	}
}
