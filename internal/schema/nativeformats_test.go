package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/formats"
)

// referenceFormats are the formats of the fast path as the library checks
// them once registered by NewCompiler: the reference of the native checks.
func referenceFormats(t testing.TB) map[string]func(string) bool {
	t.Helper()
	c := NewCompiler(nil, nil)
	refs := map[string]func(string) bool{}
	for name := range nativeFormats {
		s, err := c.Compile("format-"+name+".json", map[string]any{"format": name})
		require.NoError(t, err)
		require.NotNil(t, s.s.Format, name)
		f := s.s.Format
		refs[name] = func(v string) bool { return f.Validate(v) == nil }
	}
	return refs
}

// formatSamples are the strings of the suite's format tests (every
// format's, so each check also sees the others' values) and edge cases of
// the checks' own arithmetic and of the library's leniency.
func formatSamples(t testing.TB) []string {
	t.Helper()
	var samples []string
	for _, g := range loadSuite(t) {
		if !strings.HasPrefix(g.File, "optional/format/") {
			continue
		}
		for _, tc := range g.Tests {
			var s string
			if json.Unmarshal(tc.Data, &s) == nil {
				samples = append(samples, s)
			}
		}
	}
	samples = append(samples,
		"", "Z", "2026-11-21", "2026-11-21T10:15:00Z", "2026-11-21t10:15:00z",
		"2026-11-21T10:15:00.123456789+05:30", "2026-11-21T10:15:00.Z",
		"2026-11-21T23:59:60Z", "2026-11-21T23:59:60+00:00", "2026-11-21T22:59:60-01:00",
		"2026-11-21T23:59:60-01:00", "2026-11-21T00:59:60+01:00", "2026-11-21T00:00:60+00:01",
		"2026-11-21T+1:00:00Z", "2026-11-21T10:-0:00Z", "2026-11-21T10:15:00+-0:00",
		"2026-11-21T10:15:00+01:-0", "2026-11-21T10:15:00+24:00", "2026-11-21T10:15:00+01:60",
		"2026-11-21T10:15:00+0100", "2026-11-21T24:00:00Z", "2026-11-21T10:60:00Z",
		"2026-11-21T10:15:61Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z",
		"2026-11-21X10:15:00Z", "2026-11-21T10:15:00Z ", "+026-11-21", "2026-1-021",
		"ada@example.com", "@example.com", "a@b", "a.@b.co", ".a@b.co", "a..b@c.co", `"a b"@c.co`, `"a\\b"@c.co`,
		`""@c.co`, "a@[127.0.0.1]", "a@[IPv6:::1]", "a@[1.2.3]", "a@-b.co", "a@b-.co", "a@b..co", "a@b.co.",
		"é@b.co", "a@bé.co", "a@"+strings.Repeat("x", 64)+".co", strings.Repeat("a", 65)+"@b.co", "a@b@c.co",
		"0.0.0.0", "255.255.255.255", "256.0.0.0", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1..2.3",
		"+1.2.3.4", "1.2.3.4.", ".1.2.3", "1000.1.1.1", "1.2.3.0x1",
		"::", "::1", "::ffff:1.2.3.4", "fe80::1%eth0", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1.2.3.4",
		"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "6F1C2A9E-8D3B-4C5A-9E7F-1A2B3C4D5E6F",
		"6f1c2a9e8d3b-4c5a-9e7f-1a2b3c4d5e6f-", "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6g",
		"6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6", "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f0",
	)
	return samples
}

func TestNativeFormats(t *testing.T) {
	refs := referenceFormats(t)
	samples := formatSamples(t)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range nativeFormats {
			if !yield(n) {
				return
			}
		}
	}) {
		valid := 0
		for _, s := range samples {
			want := refs[name](s)
			assert.Equal(t, want, nativeFormats[name](s), "format %s on %q", name, s)
			if want {
				valid++
			}
		}
		assert.Positive(t, valid, "%s: some samples are valid", name)
	}
}

// TestNativeFormats_Stricter pins what the registered formats reject that
// the library alone takes.
func TestNativeFormats_Stricter(t *testing.T) {
	for _, s := range []string{"2026-11-21T+1:00:00Z", "2026-11-21T10:-0:00Z", "2026-11-21T10:15:00+-0:00"} {
		assert.NoError(t, libraryFormat("date-time")(s), s)
		assert.False(t, referenceFormats(t)["date-time"](s), s)
		assert.False(t, formats.DateTime(s), s)
	}
}

// TestFormats_ReferencesStricter: the library's iri-reference took any
// text Go's url.Parse does (`"><script>`, "a b"), its iri spaces and "<"
// in a path, its uri-template those and any text in braces; the
// registered checks allow the characters of RFC 3987 (RFC 3986's, and
// beyond ASCII its own), as uri's does, and RFC 6570's grammar, and
// still take the references and templates the RFCs allow. A body
// validates as the registered check says, on the fast path and in the
// library.
func TestFormats_ReferencesStricter(t *testing.T) {
	bad := map[string][]string{
		"iri": {"http://a.com/a b", "http://a.com/<x>", "http://a.com/\\u0085", "http://a.com/\\ufffe", "http://a.com/\\ue000"},
		"uri-template": {`\"><script>alert(1)</script>`, "a b", "x'y", "/x\\\\y", "{a..b}", "{}", "{+}", "{a b}", "{a*b}", "/{a:0}",
			"/{a:10000}", "/a/{a<b}"},
		"iri-reference": {`\"><script>alert(1)</script>`, "a b", "/<x>", "#\\\"", "/\\u00a0\\u0085", "/\\ue000", "\\ue000?x", "a/b://[::1]/", "/a[b]", "/a]"},
	}
	good := map[string][]string{
		"iri": {"http://ƒøø.ßår/?∂éœ=πîx#πîüx", "http://➡.ws/䨹", "http://a.com/?\\ue000", "urn:a:b"},
		"uri-template": {"", "http://example.com/dictionary/{term:1}/{term}", "dictionary/{term:1}/{term}", "http://x/{var:30}",
			"{+path}/here", "X{.list*}", "{%41b}", "/ä{a,b:9999}{;x*}", "http://[::1]/{+a}"},
		"iri-reference": {"//ƒøø.ßår/?∂éœ=πîx#πîüx", "/âππ", "âππ", "#ƒrägmênt", "?\\ue000", "//[::1]/é", "\\ud83d\\ude00", "//[::1]:80/x", "//u@[::1]/", "http://[::1]/x", "../a;b=c", "#%41"},
	}
	c := NewCompiler(nil, nil)
	for _, name := range []string{"iri", "iri-reference", "uri-template"} {
		check := FormatCheck(name)
		s, err := c.Compile("refs-"+name+".json", map[string]any{"format": name})
		require.NoError(t, err)
		require.True(t, s.Native())
		var bodies []string
		for _, v := range bad[name] {
			var str string
			require.NoError(t, json.Unmarshal([]byte(`"`+v+`"`), &str), v)
			assert.NoError(t, libraryFormat(name)(str), "%s: the library alone takes %q", name, str)
			assert.False(t, check(str), "%s %q", name, str)
			bodies = append(bodies, `"`+v+`"`)
		}
		for _, v := range good[name] {
			var str string
			require.NoError(t, json.Unmarshal([]byte(`"`+v+`"`), &str), v)
			assert.True(t, check(str), "%s %q", name, str)
			bodies = append(bodies, `"`+v+`"`)
		}
		matchesReference(t, s, name, bodies)
	}
	// uri-reference stays the library's: the meta-schema holds $ref and
	// $id to it, and a $ref names a schema file as written.
	for _, ref := range []string{"schemas/été.json", "schemas/l oop.json"} {
		assert.True(t, FormatCheck("uri-reference")(ref), ref)
	}
}

func FuzzNativeFormats(f *testing.F) {
	refs := referenceFormats(f)
	for _, s := range formatSamples(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, check := range nativeFormats {
			if got, want := check(s), refs[name](s); got != want {
				t.Fatalf("format %s on %q: native %v, reference %v", name, s, got, want)
			}
		}
	})
}

func BenchmarkFormats(b *testing.B) {
	refs := referenceFormats(b)
	samples := map[string]string{
		"uuid": "6f1c2a9e-8d3b-4c5a-9e7f-1a2b3c4d5e6f", "date": "2026-11-21",
		"date-time": "2026-11-21T10:15:00.123+05:30", "ipv4": "192.168.10.1", "ipv6": "2001:db8::1",
	}
	for name, s := range samples {
		b.Run(fmt.Sprintf("format=%s/check=native", name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nativeFormats[name](s)
			}
		})
		b.Run(fmt.Sprintf("format=%s/check=library", name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				refs[name](s)
			}
		})
	}
}

// TestFormats_IRITagCharacters: RFC 3987's ucschar takes plane 14 from
// U+E1000 only; its first 4,096 code points (the invisible tag characters
// U+E0001, U+E0020-E007F, and the variation selectors U+E0100-E01EF) are
// no IRI characters, in a path or in a template's literals.
func TestFormats_IRITagCharacters(t *testing.T) {
	for _, name := range []string{"iri", "iri-reference", "uri-template"} {
		check := FormatCheck(name)
		for _, v := range []string{"http://a.com/x\U000E0001", "http://a.com/x\U000E0041", "http://a.com/x\U000E0100", "http://a.com/x\U000E0FFF"} {
			assert.NoError(t, libraryFormat(name)(v), "%s: the library alone takes %q", name, v)
			assert.False(t, check(v), "%s %q", name, v)
		}
		assert.True(t, check("http://a.com/x\U000E1000"), name)
		assert.True(t, check("http://a.com/x\U000EFFFD"), name)
	}
}
