package jsonbody

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzBuildMatchesTokens holds Parse's fast path to the token-by-token
// reader: for every body, the same tape (nodes, children, unescaped text,
// root) or the same error. The fast path is run on its own, so that a body
// it declines is not compared with tokens' reading of itself: it must take
// exactly the bodies tokens accepts.
func FuzzBuildMatchesTokens(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":1.5e3}}`, `{"a":1,"A":2}`, `{"a":1,"a":2}`,
		`"\ud800"`, `[[[[[]]]]]`, `{"r\u006fle":"x"}`, `123456789012345678901234567890`,
		"\xef\xbb\xbf{}", `{} {}`, `{"ſ":1,"s":2}`, `""`, `-0.0e-0`, ` [ 1 , "a\"b\\" , {} ] `,
		`{"k\"":"v\n","x":[1e999999]}`, `[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]`, `{"a":{"b":{"c":[]}},"a\u0041":0}`,
		"{\"é\":\"\\u00e9\",\"\\u00c9\":1}", `[1,2,3,]`, `{"a" 1}`, `tru`, `nul`, `1.`, `"\u12"`,
		// What the fast path checks itself since jsontext no longer reads
		// the body first: control characters, UTF-8 (raw surrogates,
		// overlong forms, truncated sequences) in values and names, and
		// the number grammar.
		"\"a\x01b\"", "{\"a\x1fb\":1}", "[\"\x7f\"]", "{\"\x00\":0}", "\"\xed\xa0\x80\"", "{\"\xed\xa0\x80\":1}",
		"\"\xc0\xaf\"", "{\"k\xc3\":1}", "[\"\xe2\x82\"]", "\"é\\n\xff\"", "{\"é\":\"ü\"}", "\"\\ud83d\\ude00\"",
		`01`, `-`, `-0`, `.5`, `1e`, `1e+`, `1E5`, `+1`, `0x1`, `1.5e+03`, `[1.0E-2,-0.0]`, `[00]`, `[-01]`,
		`1 2`, "1\x00", `[1e1000]`, `[1e1001]`, `[truex]`, `{"a":nulls}`, "\t[\r\n]\f",
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../../testdata/bodies/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := Parse(data, 16)
		p := new(parser)
		want, wantErr := p.tokens(data, 16)
		if gotErr != nil || wantErr != nil {
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%q: Parse: %v; tokens: %v", data, gotErr, wantErr)
			}
			if _, ok := new(parser).build(data, 16); ok {
				t.Fatalf("%q: tokens refuses it (%v), the fast path builds it", data, wantErr)
			}
			return
		}
		fast, ok := new(parser).build(data, 16)
		if !ok {
			t.Fatalf("%q: tokens reads it, the fast path declines it", data)
		}
		for name, got := range map[string]*Doc{"Parse": got, "fast path": fast} {
			if !slices.Equal(got.nodes, want.nodes) || !slices.Equal(got.kids, want.kids) ||
				!bytes.Equal(got.text, want.text) || got.root != want.root {
				t.Fatalf("%q: tapes differ:\n%s %v %v %q %d\ntokens %v %v %q %d", data, name,
					got.nodes, got.kids, got.text, got.root, want.nodes, want.kids, want.text, want.root)
			}
		}
	})
}

// TestParse_BuildsOnTheFastPath checks that the fast path, not the
// fallback, reads ordinary bodies, and that the fallback reads the others.
func TestParse_BuildsOnTheFastPath(t *testing.T) {
	for body, fast := range map[string]bool{
		`{"a":[1,"x\n",{"b":null}],"c":true}`: true,
		`{"a":1,"A":2}`:                       false, // a case clash: reported by tokens
		`{"a":1e1001}`:                        false,
		`{"a":1,}`:                            false,
	} {
		p := new(parser)
		_, ok := p.build([]byte(body), 16)
		assert.Equal(t, fast, ok, body)
	}
}

// TestBuild_DepthAsJSONText: jsontext nests no deeper than MaxDepthLimit
// whatever maxDepth asks, and the fast path no deeper either: 10,000
// levels are read by both, 10,001 by neither (FuzzBuildMatchesTokens
// reads at depth 16 only).
func TestBuild_DepthAsJSONText(t *testing.T) {
	for _, maxDepth := range []int{MaxDepthLimit, 2 * MaxDepthLimit} {
		for depth, ok := range map[int]bool{MaxDepthLimit: true, MaxDepthLimit + 1: false} {
			arrays := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
			objects := []byte(strings.Repeat(`{"":`, depth-1) + `{}` + strings.Repeat("}", depth-1))
			for _, body := range [][]byte{arrays, objects} {
				_, built := new(parser).build(body, maxDepth)
				_, err := new(parser).tokens(body, maxDepth)
				assert.Equal(t, ok, built, "build, depth %d, maxDepth %d", depth, maxDepth)
				assert.Equal(t, ok, err == nil, "tokens, depth %d, maxDepth %d: %v", depth, maxDepth, err)
			}
		}
	}
}
