package scan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	libinjection "github.com/corazawaf/libinjection-go"
	"github.com/stretchr/testify/require"
)

// FuzzPrefilters holds the two prefilters to libinjection: a value they
// let skip a check is one libinjection finds nothing in.
func FuzzPrefilters(f *testing.F) {
	for _, c := range publicCorpora(f) {
		for _, s := range c.samples {
			f.Add(s.text)
		}
	}
	for _, s := range []string{"onerror=alert(1)", "x/style=x", "x\vhref=javascript:alert(1)", "ada.lovelace@example.com", "select@x.org", "1--", "@@version", "1:1", "a-1", "1.e1", "x.y.z", "--", "#", "1e1-1", "admin--", "1@a", "::", "0x1", "1_2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []string{s, "https://shop.example.com/" + s, "http://" + s} {
			f := bytesIn(v)
			if !needsSQLi(v, f) {
				if sqli, fp := libinjection.IsSQLi(v); sqli {
					t.Fatalf("%q skipped, but libinjection finds SQL injection (%s)", v, fp)
				}
			}
			if !needsXSS(v, f) && libinjection.IsXSS(v) {
				t.Fatalf("%q skipped, but libinjection finds XSS", v)
			}
		}
	})
}

// TestXSSPrefilter puts every attribute name libinjection's XSS check
// holds black (its xss_decls.go: event handlers with "on", the others by
// name, xmlns and xlink) where a value may put one: at the start, after a
// blank, a slash, a quote or a backtick, and, in values of URL bytes only,
// after each of them and in a URL's path and query; with a value that is
// script or not, in upper and lower case. Every value libinjection flags
// must go to it, and be reported. The prefilter once let through values
// without a blank, a quote or > ("onerror=alert(1)").
func TestXSSPrefilter(t *testing.T) {
	src, _ := libinjectionSource(t, "xss_decls.go")
	var names []string
	for _, m := range regexp.MustCompile(`\{"([A-Z0-9:_-]+)", attributeType`).FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	require.Greater(t, len(names), 400)
	befores := []string{"", "x ", "x/", "x\v", "x' ", "x\" ", "x` ", "a=b ", "/", "//", "x//", "=", "a=", "==",
		"https://x.org/", "https://x.org/a/", "https://x.org/a?", "https://x.org/a?b=1&", "https://x.org/a#", "a.", "a-", "1", "%2f", "a:", "a~", "a_"}
	flagged, skipped := 0, 0
	for _, n := range names {
		for _, name := range []string{n, "ON" + n, strings.ToLower("on" + n), "XMLNS", "xlink"} {
			for _, before := range befores {
				for _, value := range []string{"alert(1)", "javascript:alert(1)", "javascript:x", "x", "onerror", "data:x", ""} {
					v := before + name + "=" + value
					if !needsXSS(v, bytesIn(v)) {
						skipped++
					}
					if !libinjection.IsXSS(v) {
						continue
					}
					flagged++
					require.True(t, needsXSS(v, bytesIn(v)), "%q skipped, but libinjection finds XSS", v)
					require.Equal(t, XSS, String(v), "%q", v)
				}
			}
		}
	}
	require.Greater(t, flagged, 20_000)
	require.Greater(t, skipped, 20_000) // the names a URL's query and path hold
	for _, v := range []string{"https://shop.example.com/hooks/orders?id=42", "a?onerror=x", "x.style=1", "1src=x", "https://x.org/?q=a=b"} {
		require.False(t, needsXSS(v, bytesIn(v)), v)
	}
}

// keywordSamples are libinjection's SQL words (sqlwords_gen.go), for the
// tests to put where words go.
var keywordSamples = slices.Sorted(maps.Keys(sqlWords))

// TestPrefilterShapes tries the shapes needsSQLi lets skip libinjection
// beyond plain tokens: IP addresses and product codes, random and with
// every SQL word: libinjection never finds SQL injection in one.
func TestPrefilterShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		if r.IntN(2) == 0 {
			w := keywordSamples[r.IntN(len(keywordSamples))]
			if len(w) <= 8 && !strings.Contains(w, "_") {
				if r.IntN(2) == 0 {
					return strings.ToLower(w)
				}
				return w
			}
		}
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[r.IntN(52)]
		}
		return string(b)
	}
	var samples []string
	for _, w := range keywordSamples {
		if len(w) <= 8 && !strings.Contains(w, "_") {
			for _, n := range []string{"1", "0", "01", "001", "1234567", "999999999999"} {
				samples = append(samples, w+n, w+"-"+n, strings.ToLower(w)+"-"+n)
			}
		}
	}
	for range 50_000 {
		sep := ""
		if r.IntN(2) == 0 {
			sep = "-"
		}
		samples = append(samples, word()+sep+strconv.Itoa(r.IntN(1_000_000_000)))
		samples = append(samples, fmt.Sprintf("%d.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256)))
		var a [16]byte
		for i := range a {
			if r.IntN(3) > 0 {
				a[i] = byte(r.IntN(256))
			}
		}
		ip := netip.AddrFrom16(a)
		s := ip.String()
		if r.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		mapped := netip.AddrFrom4([4]byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))})
		samples = append(samples, s, netip.AddrFrom16(mapped.As16()).String()) // ::ffff:a.b.c.d
		samples = append(samples, randomURL(r, word))
	}
	emails := emailSamples(r, word)
	samples = append(samples, emails...)
	checked := 0
	for _, s := range samples {
		if needsSQLi(s, bytesIn(s)) {
			continue
		}
		checked++
		if sqli, fp := libinjection.IsSQLi(s); sqli {
			t.Fatalf("%q skipped, but libinjection finds SQL injection (%s)", s, fp)
		}
	}
	require.Greater(t, checked, 100_000)
	skipped := 0
	for _, e := range emails {
		if !needsSQLi(e, bytesIn(e)) {
			skipped++
		}
	}
	require.Greater(t, skipped, 3*len(keywordSamples), "the e-mail shapes must reach the prefilter")
}

// emailSamples are e-mail addresses of the plain kind with every SQL word,
// in both cases, as the whole local part, its last part after a dot, a
// part before a dot (which the prefilter leaves to libinjection) and in
// the domain; then random ones.
func emailSamples(r *rand.Rand, word func() string) []string {
	var out []string
	for _, w := range keywordSamples {
		if !isLetter(w[0]) {
			continue
		}
		for _, local := range []string{w, strings.ToLower(w), w + "1", w + "_x", "ada." + w, "ada.b." + strings.ToLower(w), w + ".ada", w + "..x"} {
			out = append(out, local+"@example.com", local+"@"+w+".org", local+"@x")
		}
		out = append(out, "ada@"+w, "ada@"+strings.ToLower(w)+"."+w)
	}
	for range 20_000 {
		var b strings.Builder
		b.WriteString(word())
		for range r.IntN(3) {
			b.WriteString([]string{".", "_", "", "."}[r.IntN(4)])
			if r.IntN(3) == 0 {
				b.WriteString(strconv.Itoa(r.IntN(100)))
			} else {
				b.WriteString(word())
			}
		}
		b.WriteByte('@')
		for i := range 1 + r.IntN(3) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(word())
		}
		out = append(out, b.String())
	}
	return out
}

// randomURL is an http(s) URL of the plain kind, with SQL words, numbers
// and the URL's own punctuation in its host, path, query and fragment.
func randomURL(r *rand.Rand, word func() string) string {
	part := func() string {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			switch r.IntN(4) {
			case 0:
				b.WriteString(word())
			case 1:
				b.WriteString(strconv.Itoa(r.IntN(100)))
			default:
				b.WriteByte("._~-%:=&/?#"[r.IntN(11)])
			}
		}
		return b.String()
	}
	scheme := "https://"
	if r.IntN(2) == 0 {
		scheme = "http://"
	}
	u := scheme + part() + "/" + part()
	if r.IntN(2) == 0 {
		u += "?" + part() + "=" + part() + "&" + part() + "=" + part()
	}
	if r.IntN(3) == 0 {
		u += "#" + part()
	}
	return u
}
