package jsonbody

import (
	"fmt"
	"slices"
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

// TestSortedNames: an object's member names in sorted order, escapes
// read; a large object's are sorted once and kept beside Get's index.
func TestSortedNames(t *testing.T) {
	for _, n := range []int{0, 1, bigObject, bigObject + 1, 200} {
		var b []byte
		b = append(b, '{')
		var want []string
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			name := fmt.Sprintf("k%03d", (i*37)%n)
			if i == 0 && n > 0 {
				b = append(b, `"\u006b`+name[1:]+`":1`...) // an escape: k…
			} else {
				b = append(b, `"`+name+`":1`...)
			}
			want = append(want, name)
		}
		b = append(b, '}')
		d, err := Parse(b, 64)
		require.NoError(t, err)
		slices.Sort(want)
		got := d.Root().SortedNames()
		require.Equal(t, len(want), len(got), n)
		if n > 0 {
			require.Equal(t, want, got, n)
		}
		again := d.Root().SortedNames()
		if n > bigObject {
			require.Same(t, &got[0], &again[0], "kept: %d members", n)
			v, ok := d.Root().Get(want[n-1])
			require.True(t, ok)
			require.Equal(t, Number, v.Kind())
		} else if n > 0 {
			require.NotSame(t, &got[0], &again[0], "not kept: %d members", n)
		}
	}
}
