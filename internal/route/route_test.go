package route

import (
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
)

func TestSegments(t *testing.T) {
	tests := []struct {
		raw  string
		want []string
	}{
		{"/", nil},
		{"", nil},
		{"/a/b", []string{"a", "b"}},
		{"/a/b/", []string{"a", "b"}},
		{"//a//b//", []string{"a", "b"}},
		{"/a/./b", []string{"a", "b"}},
		{"/a/x/../b", []string{"a", "b"}},
		{"/../../a", []string{"a"}},
		{"/a/%2e%2E/b", []string{"b"}},
		{"/a/%2e/b", []string{"a", "b"}},
		{"/a/%62", []string{"a", "b"}},
		{"/users/a%2Fb", []string{"users", "a/b"}},
		{"/a/%zz/%4", []string{"a", "%zz", "%4"}},
		{"/a%20b", []string{"a b"}},
		{"/a+b", []string{"a+b"}},
		{"/a;x/b", []string{"a;x", "b"}},
		{"/a/..%2Fb", []string{"a", "../b"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			assert.Equal(t, tt.want, Segments(tt.raw, nil))
		})
	}
}

func TestParsePattern(t *testing.T) {
	p, err := ParsePattern("/api/orders/:orderId/items/{sku}/")
	require.NoError(t, err)
	assert.Equal(t, Pattern{{Static: "api"}, {Static: "orders"}, {Param: "orderId"}, {Static: "items"}, {Param: "sku"}}, p)
	assert.Equal(t, "/api/orders/{}/items/{}", p.Shape())

	q, err := ParsePattern("/api//orders/{x}/items/:y")
	require.NoError(t, err)
	assert.Equal(t, p.Shape(), q.Shape(), "parameter names do not change the shape")

	root, err := ParsePattern("/")
	require.NoError(t, err)
	assert.Equal(t, "/", root.Shape())

	for _, bad := range []string{"", "a/b", "/a/:", "/a/{}", "/a/{x", "/a/x{y}", "/a/:x/:x", "/a/:1x", "/a/:x-y", "/a/../b", "/a/./b",
		// A wildcard (chi's /files/*, Express's /files/*splat), a query or
		// a fragment: no request path holds them as such, so the contract
		// was never enforced (/files/b passed a /files/* contract).
		"/files/*", "/files/*splat", "/a?x=1", "/a/b#top"} {
		_, err := ParsePattern(bad)
		assert.Error(t, err, bad)
	}
	// As path text they are static: escaped, or not a whole segment's
	// start.
	for _, good := range []string{"/a%3Fx=1", "/files/%2A", "/a/b*c"} {
		_, err := ParsePattern(good)
		assert.NoError(t, err, good)
	}
	// Express's optional parameter is a parameter's error: the query's
	// advice (escape it as %3F) would give :id%3F, no parameter either.
	for _, p := range []string{"/users/:id?", "/users/:id?/orders", "/a/:x#"} {
		_, err := ParsePattern(p)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "parameter names are letters, digits and _", p)
		assert.NotContains(t, err.Error(), "escape it", p)
	}
}

func build(t *testing.T, routes ...string) *Tree[string] {
	t.Helper()
	var tr Tree[string]
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		p, err := ParsePattern(path)
		require.NoError(t, err)
		_, ok := tr.Add(method, p, r)
		require.True(t, ok, r)
	}
	return &tr
}

func TestMatch(t *testing.T) {
	tr := build(t,
		"GET /users/me",
		"GET /users/:id",
		"POST /users/:id",
		"GET /users/:id/orders/:orderId",
		"GET /users/me/orders/latest",
		"POST /a/b",
		"GET /",
		"HEAD /only-head",
		"GET /only-head",
		"GET /x/:p/c",
		"GET /:q/b/d",
	)
	tests := []struct {
		method, path, want string
		segs               []string
	}{
		{"GET", "/users/me", "GET /users/me", []string{"users", "me"}},
		{"GET", "/users/42", "GET /users/:id", []string{"users", "42"}},
		{"POST", "/users/me", "POST /users/:id", nil},
		{"GET", "/users/me/orders/7", "GET /users/:id/orders/:orderId", nil},
		{"GET", "/users/me/orders/latest", "GET /users/me/orders/latest", nil},
		{"GET", "/users/7/orders/latest", "GET /users/:id/orders/:orderId", nil},
		{"POST", "/a/b/", "POST /a/b", nil},
		{"POST", "//a//b", "POST /a/b", nil},
		{"POST", "/a/./b", "POST /a/b", nil},
		{"POST", "/a/x/../b", "POST /a/b", nil},
		{"POST", "/a/%62", "POST /a/b", nil},
		{"POST", "/a;x/b", "POST /a/b", nil},
		{"GET", "/users/a%2Fb", "GET /users/:id", []string{"users", "a/b"}},
		{"GET", "/users/a%2Fb/orders", "", nil},
		{"GET", "/users/x%2Forders%2F9", "GET /users/:id", []string{"users", "x/orders/9"}},
		{"GET", "/users/x%2Forders/9", "GET /users/:id/orders/:orderId", []string{"users", "x", "orders", "9"}},
		{"GET", "/users/x%252Forders/9", "", nil},
		{"HEAD", "/users/me", "GET /users/me", nil},
		{"HEAD", "/only-head", "HEAD /only-head", nil},
		{"GET", "/", "GET /", nil},
		{"GET", "", "GET /", nil},
		{"GET", "/x/b/d", "GET /:q/b/d", nil},
		{"GET", "/x/y/c", "GET /x/:p/c", nil},
		{"DELETE", "/users/1", "", nil},
		{"GET", "/users", "", nil},
		{"GET", "/users/1/2", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			v, segs, ok := tr.Match(tt.method, tt.path, nil)
			if tt.want == "" {
				assert.False(t, ok, "matched %q", v)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, v)
			if tt.segs != nil {
				assert.Equal(t, tt.segs, segs)
			}
		})
	}
}

func TestAddConflict(t *testing.T) {
	var tr Tree[string]
	p1, _ := ParsePattern("/a/:x")
	p2, _ := ParsePattern("/a/{y}")
	_, ok := tr.Add("GET", p1, "first")
	require.True(t, ok)
	old, ok := tr.Add("GET", p2, "second")
	assert.False(t, ok)
	assert.Equal(t, "first", old)
	_, ok = tr.Add("POST", p2, "third")
	assert.True(t, ok, "another method is another contract")
	assert.Equal(t, 2, tr.Len())
}

func TestParams(t *testing.T) {
	p, _ := ParsePattern("/users/:id/orders/{orderId}")
	assert.Equal(t, map[string]string{"id": "a/b", "orderId": "7"}, p.Params([]string{"users", "a/b", "orders", "7"}))
}

func TestUpperMethod(t *testing.T) {
	assert.Equal(t, "POST", UpperMethod("post"))
	assert.Equal(t, "POST", UpperMethod("PoSt"))
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { _ = UpperMethod("POST") }))
}

func TestMatch_NoAllocationsOnAMiss(t *testing.T) {
	tr := build(t, "GET /users/:id", "POST /orders")
	var buf [16]string
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, ok := tr.Match("GET", "/static/app.js", buf[:0]); ok {
			t.Fatal("matched")
		}
	})
	assert.Equal(t, 0.0, allocs)
}

// TestMatch_LongPathReadsNoDeeperThanThePatterns: a path is read no
// deeper than one segment past the longest pattern, whatever its
// length, in every reading: a path of a megabyte of segments costs its
// bytes to scan, not a decoded string and a slot for each of its
// segments in each reading (found by review: 85 MB allocated and 170 ms
// for /a repeated to 1 MiB, 170 MB for //%41. repeated). The segments
// past the limit are still counted, so that ".." segments that take
// them away again leave the path as it was.
func TestMatch_LongPathReadsNoDeeperThanThePatterns(t *testing.T) {
	tr := build(t, "GET /a/b", "GET /Users/:id", "GET /files/:name")
	var buf [16]string
	var hits [4]Hit[string]
	for _, unit := range []string{"/a", "/%41", "//x", "/A/.", "/%2e%2e/;x=1", "/x%2F;"} {
		path := strings.Repeat(unit, 20000)
		allocs := testing.AllocsPerRun(5, func() {
			v, segs, ok := tr.Match("GET", path, buf[:0])
			tr.Hits("GET", path, v, segs, ok, hits[:0])
		})
		assert.Less(t, allocs, 25.0, unit) // the readings that rewrite the path (%2F decoded, ";..." cut) build it anew
	}
	for path, want := range map[string]string{
		"/x/x/x/x/x/x/../../../../../../a/b":                              "GET /a/b",
		"/a/b/x/y/z/../../..":                                             "GET /a/b",
		"/a/b/x/y/z/%2e%2e/../.%2E":                                       "GET /a/b",
		"/users/7/x/y/z/../../../":                                        "GET /Users/:id",
		"/files/x/y/z/w/%2E%2E/../..;v=1":                                 "GET /files/:name",
		strings.Repeat("/x", 5000) + strings.Repeat("/..", 5000) + "/a/b": "GET /a/b",
	} {
		v, _, ok := tr.Match("GET", path, buf[:0])
		assert.True(t, ok, path)
		assert.Equal(t, want, v, path)
	}
	for _, path := range []string{"/a/b/x/y/z/../..", "/a/b/x/y/z/%2e%2e/..", strings.Repeat("/x", 5000) + strings.Repeat("/..", 4999) + "/a/b"} {
		_, _, ok := tr.Match("GET", path, buf[:0])
		assert.False(t, ok, path)
	}
}

func TestMatch_ManyContractsStaysPerSegment(t *testing.T) {
	var tr Tree[int]
	for i := range 10000 {
		p, err := ParsePattern(fmt.Sprintf("/svc%d/items/:id/parts/%d", i%100, i))
		require.NoError(t, err)
		_, ok := tr.Add("POST", p, i)
		require.True(t, ok)
	}
	v, _, ok := tr.Match("POST", "/svc42/items/9/parts/9942", nil)
	require.True(t, ok)
	assert.Equal(t, 9942, v)
}

func FuzzMatch(f *testing.F) {
	for _, s := range []string{"/users/me", "//a//b/", "/a/%2e%2e/b", "/users/a%2Fb", "/a;x/b", "/%zz", "/..", ""} {
		f.Add("GET", s)
	}
	f.Add("HEAD", "/users/x")
	var tr Tree[string]
	routes := map[string]Pattern{}
	for _, r := range []string{"/users/me", "/users/:id", "/users/:id/orders/:o", "/a/b", "/", "/a/:x", "/:y/b"} {
		p, _ := ParsePattern(r)
		tr.Add("GET", p, r)
		routes[r] = p
	}
	// linear is the reference: every pattern tried against the path's
	// main reading, the most specific kept (static beats a parameter at
	// the first segment where two differ).
	linear := func(segs []string) (string, bool) {
		best, found := "", false
		for r, p := range routes {
			if len(p) != len(segs) {
				continue
			}
			fits := true
			for i, s := range p {
				fits = fits && (s.Param != "" || s.Static == segs[i])
			}
			if !fits {
				continue
			}
			if found {
				for i := range p {
					if a, b := p[i].Param == "", routes[best][i].Param == ""; a != b {
						if !a {
							fits = false
						}
						break
					}
				}
			}
			if fits {
				best, found = r, true
			}
		}
		return best, found
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		v, segs, ok := tr.Match(UpperMethod(method), path, nil)
		if m := UpperMethod(method); m == "GET" || m == "HEAD" {
			if want, found := linear(Segments(path, nil)); found && (!ok || v != want) {
				t.Fatalf("%s %q: matched %q (%v), a scan of the patterns finds %q", method, path, v, ok, want)
			}
		}
		if !ok {
			return
		}
		p, err := ParsePattern(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) != len(p) {
			t.Fatalf("%q matched %q with %d segments", path, v, len(segs))
		}
		for i, s := range p {
			// A static segment is the path's, or the same in another letter
			// case when no reading matched as written.
			if s.Param == "" && segs[i] != s.Static {
				if _, exact := tr.Lookup(UpperMethod(method), segs); exact || !strings.EqualFold(segs[i], s.Static) {
					t.Fatalf("%q matched %q: segment %d is %q", path, v, i, segs[i])
				}
			}
			// A dot segment is a parameter's value only in the reading that
			// keeps dot segments (as chi does, also of the path with its %2F
			// decoded: /.%2FB is /./B to chi on r.URL.Path), an empty one only in the
			// readings that keep empty segments (as chi does, also of the
			// path with its %2F decoded; and a trailing one, up to the
			// first ';' too, as find-my-way does).
			cut, _, _ := strings.Cut(path, ";")
			if segs[i] == "" && !hasEmptySegment(path) && !hasEmptySegment(decodeSlashes(path)) && !hasTrailingSlash(path) && !hasTrailingSlash(cut) && !hasEmptySegment(cut) || (segs[i] == "." || segs[i] == "..") && !hasDotSegment(path) && !hasDotSegment(decodeSlashes(path)) {
				t.Fatalf("%q matched %q with segment %q", path, v, segs[i])
			}
		}
	})
}

func BenchmarkMatch_10000(b *testing.B) {
	var tr Tree[int]
	for i := range 10000 {
		p, _ := ParsePattern(fmt.Sprintf("/svc%d/items/:id/parts/%d", i%100, i))
		tr.Add("POST", p, i)
	}
	var buf [16]string
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := tr.Match("POST", "/svc42/items/9/parts/9942", buf[:0]); !ok {
			b.Fatal("no match")
		}
	}
}

// TestMatch_AnyLetterCase: a path that matches nothing as written is
// matched again with static segments in any case, as Express routes.
func TestMatch_AnyLetterCase(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "POST /Api/Orders")
	for path, want := range map[string]string{
		"/USERS/me":   "GET /users/me",
		"/Users/ME":   "GET /users/me",
		"/users/Me":   "GET /users/:id", // as written, Me is an id
		"/USERS/42":   "GET /users/:id",
		"/api/orders": "",
	} {
		v, _, ok := tr.Match("GET", path, nil)
		if want == "" {
			assert.False(t, ok, path)
			continue
		}
		require.True(t, ok, path)
		assert.Equal(t, want, v, path)
	}
	v, _, ok := tr.Match("POST", "/api/ORDERS", nil)
	require.True(t, ok)
	assert.Equal(t, "POST /Api/Orders", v)
	var buf [16]string
	assert.Zero(t, testing.AllocsPerRun(100, func() { tr.Match("GET", "/STATIC/App.js", buf[:0]) }), "an unmatched path in capitals")
}

// TestOthers: the other readings of a path that match something else.
func TestOthers(t *testing.T) {
	tr := build(t, "GET /files/:name", "GET /", "GET /a/b", "GET /a/:x")
	for path, want := range map[string][]string{
		"/files/..":     {"GET /files/:name"}, // Match finds GET / (the dots resolved)
		"/files/%2e%2E": {"GET /files/:name"},
		"/files/.":      nil, // /files is nothing: Match itself finds /files/:name
		"/files/x":      nil,
		"/a/b%2Fc":      nil, // a/b/c matches nothing
		"/a/x%2Fb":      nil,
		"/a;v=1/b":      nil, // the same as the main reading
	} {
		v, _, ok := tr.Match("GET", path, nil)
		got := tr.Others("GET", path, v, ok, nil)
		assert.Equal(t, want, got, path)
	}
	v, _, ok := tr.Match("GET", "/files/.", nil)
	assert.True(t, ok)
	assert.Equal(t, "GET /files/:name", v)
	var dst [2]string
	assert.Zero(t, testing.AllocsPerRun(100, func() { tr.Others("GET", "/files/report.v2.pdf", "x", true, dst[:0]) }))
}

// TestReadsOneWay: a path readsOneWay lets through has none of the signs
// of another reading, so alternateReadings may stop there.
func TestReadsOneWay(t *testing.T) {
	alphabet := []string{"/", "a", ".", "..", "%", "%2f", "%2F", "%2e", ";", ";x=1", "b", "//"}
	for seed := range 20000 {
		x, path := seed, ""
		for range 1 + seed%9 {
			x = x*1103515245 + 12345
			path += alphabet[(x>>8&0x7fffffff)%len(alphabet)]
		}
		if readsOneWay(path) {
			assert.False(t, hasEncodedSlash(path) || strings.IndexByte(path, ';') >= 0 || hasDotSegment(path) || hasEmptySegment(path), path)
		}
	}
	assert.True(t, readsOneWay("/orders/12/lines"))
	for _, p := range []string{"/a%2fb", "/a;v=1", "/a/../b", "/a/%2e", "/a//b"} {
		assert.False(t, readsOneWay(p), p)
		assert.NotEmpty(t, alternateReadings(p), p)
	}
}

// TestHits: each other reading that matches is a hit with its own
// segments, those its contracts are checked with; a reading that
// matches Match's value with other segments is a hit too, and two that
// match one value with the same segments are one.
func TestHits(t *testing.T) {
	tr := build(t, "GET /users/:id", "GET /users/:id/:sub", "GET /", "GET /files/:name")
	for path, want := range map[string][]Hit[string]{
		"/users/admin%2Fb": {{V: "GET /users/:id/:sub", Segs: []string{"users", "admin", "b"}}},
		"/users/7;v=1": { // Match: id "7;v=1"
			{V: "GET /users/:id", Segs: []string{"users", "7"}},                               // ";v=1" cut
			{V: "GET /users/:id", Segs: []string{"users", "7"}, OwnQuery: true, Query: "v=1"}, // the path ended at ";"
		},
		"/files/%2e%2E":    {{V: "GET /files/:name", Segs: []string{"files", ".."}}}, // Match: GET /
		"/users/7":         nil,
		"/users/a%2Fb%2Fc": nil, // users/a/b/c matches nothing
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
	var buf [16]string
	var dst [2]Hit[string]
	v, segs, _ := tr.Match("GET", "/users/report.v2.pdf", buf[:0])
	assert.Zero(t, testing.AllocsPerRun(100, func() { tr.Hits("GET", "/users/report.v2.pdf", v, segs, true, dst[:0]) }))
}

// TestHitsOf: another form of a path (the path as Go encodes it afresh)
// counts with its main reading too, beside what the first form matched:
// /users/7%3Bv=1{ is /users/:id with id "7;v=1{" as sent, and
// /users/7;v=1%7B, as a Go proxy forwards it, is also /users/:id with id
// "7", ";v=1{" cut or read as the query.
func TestHitsOf(t *testing.T) {
	tr := build(t, "GET /users/:id", "GET /users/:id/:sub", "GET /api/users")
	v, segs, ok := tr.Match("GET", "/users/7%3Bv=1{", nil)
	require.True(t, ok)
	hits := tr.Hits("GET", "/users/7%3Bv=1{", v, segs, ok, nil)
	assert.Equal(t, []Hit[string]{
		{V: "GET /users/:id", Segs: []string{"users", "7"}},
		{V: "GET /users/:id", Segs: []string{"users", "7"}, OwnQuery: true, Query: "v=1%7B"},
	}, tr.HitsOf("GET", "/users/7;v=1%7B", v, segs, hits))
	// Its main reading as written, where it differs.
	assert.Equal(t, []Hit[string]{{V: "GET /users/:id/:sub", Segs: []string{"users", "a", "b{"}}},
		tr.HitsOf("GET", "/users/a/b%7B", "GET /users/:id", []string{"users", "a/b{"}, nil))
	// What the first form found, or dst holds, is no hit again.
	assert.Empty(t, tr.HitsOf("GET", "/users/7%7B", v, []string{"users", "7{"}, nil))
}

// TestHits_AsSent: the reading of the path as sent (chi's of
// r.URL.RawPath, Express's) matches static segments without decoding
// them, and gives its contracts the segments decoded, so that it adds a
// hit only where it matches another pattern.
func TestHits_AsSent(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "GET /cities/:name")
	for path, want := range map[string][]Hit[string]{
		"/users/m%65":          {{V: "GET /users/:id", Segs: []string{"users", "me"}}}, // Match: GET /users/me
		"/users/4%32":          nil,                                                    // 42 either way
		"/cities/M%C3%BCnchen": nil,
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
}

// TestHits_AsSentCleaned: the reading of the path as sent with its dot
// segments, as sent, resolved (chi behind CleanPath, which cleans
// r.URL.RawPath with path.Clean) matches static segments without
// decoding them, resolves "." and ".." but not %2e, and gives its
// contracts the segments decoded.
func TestHits_AsSentCleaned(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "GET /users/:id/:sub")
	for path, want := range map[string][]Hit[string]{
		"/users/m%65/x/..": { // Match: GET /users/me
			{V: "GET /users/:id/:sub", Segs: []string{"users", "me", "x"}}, // ".." cut to nothing by two URLFormat passes
			{V: "GET /users/:id", Segs: []string{"users", "me"}},
		},
		"/users/x/../m%65": {{V: "GET /users/:id", Segs: []string{"users", "me"}}},
		"/users/m%65/.": {
			{V: "GET /users/:id/:sub", Segs: []string{"users", "me", "."}}, // dot segments kept (chi)
			{V: "GET /users/:id", Segs: []string{"users", "me"}},
		},
		"/users/m%65/%2e": { // Match: GET /users/me; %2e is a segment as sent
			{V: "GET /users/:id/:sub", Segs: []string{"users", "me", "."}},
		},
		"/users/4%32/x/..": { // 42 either way
			{V: "GET /users/:id/:sub", Segs: []string{"users", "42", "x"}}, // ".." cut to nothing by two URLFormat passes
		},
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
}

// TestHits_EmptySegment: chi matches a parameter to an empty segment
// between two slashes; the reading that keeps it (decoded, and as sent
// where the path has escapes) gives that parameter "".
func TestHits_EmptySegment(t *testing.T) {
	tr := build(t, "GET /users/:id/orders", "GET /users/:id/orders/:oid", "GET /users/orders/:x", "GET /:a/:b")
	for path, want := range map[string][]Hit[string]{
		"/users//orders": { // Match: GET /:a/:b
			{V: "GET /users/:id/orders", Segs: []string{"users", "", "orders"}},
		},
		"/users//orders/7": { // Match: GET /users/orders/:x
			{V: "GET /users/:id/orders/:oid", Segs: []string{"users", "", "orders", "7"}},
		},
		"/users//%6Frders/": { // as sent: no static "orders"
			{V: "GET /users/:id/orders", Segs: []string{"users", "", "orders"}},
			{V: "GET /users/:id/orders/:oid", Segs: []string{"users", "", "orders", ""}}, // the trailing slash too, as find-my-way reads it
		},
		// The trailing slash is an empty segment to find-my-way: oid "".
		"/users/7/orders/": {{V: "GET /users/:id/orders/:oid", Segs: []string{"users", "7", "orders", ""}}},
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
	v, segs, ok := tr.Match("GET", "//users", nil) // only the reading with the empty segment matches
	assert.True(t, ok)
	assert.Equal(t, "GET /:a/:b", v)
	assert.Equal(t, []string{"", "users"}, segs)
}

// TestMatch_TrailingSlashesStripSlashesCuts: chi behind StripSlashes
// routes /articles/// as /articles//, and a Mount at /articles/{id}
// matches id "" to it and hands "/" on to its router: the path is also
// read with its trailing slashes cut to two, as ending in one empty
// segment (also where they are %2F).
func TestMatch_TrailingSlashesStripSlashesCuts(t *testing.T) {
	tr := build(t, "PUT /articles/:id")
	for _, path := range []string{"/articles///", "/articles////"} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "PUT /articles/:id", v, path)
		assert.Equal(t, []string{"articles", ""}, segs, path)
	}
	// Read as one segment, "/", too (chi on RawPath).
	for _, path := range []string{"/articles/%2F/", "/articles//%2F"} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, []string{"articles", "/"}, segs, path)
		assert.Contains(t, tr.Hits("PUT", path, v, segs, ok, nil), Hit[string]{V: "PUT /articles/:id", Segs: []string{"articles", ""}}, path)
	}
	_, _, ok := tr.Match("PUT", "/articles", nil)
	assert.False(t, ok)
}

// TestMatch_TrailingSlashesCutToOne: chi behind StripSlashes routes
// /articles//comments// as /articles//comments/, and a Mount at
// /articles/{id}/comments takes it, id "", and hands "/" on to its
// router: the path is also read with its trailing slashes cut to one,
// its empty segment before them kept (also where they are %2F).
func TestMatch_TrailingSlashesCutToOne(t *testing.T) {
	tr := build(t, "PUT /articles/:id/comments")
	for _, path := range []string{"/articles//comments//", "/articles//comments///", "/articles//comments/%2F", "//articles/x/comments//"[1:]} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "PUT /articles/:id/comments", v, path)
		if path != "/articles/x/comments//" {
			assert.Equal(t, []string{"articles", "", "comments"}, segs, path)
		}
	}
	_, _, ok := tr.Match("PUT", "/articles///comments//", nil)
	assert.False(t, ok, "two empty segments are no one parameter")
}

// TestMatch_FormatCutToTrailingSlashes: chi behind URLFormat and
// StripSlashes routes /articles//comments//.json as /articles//comments/
// (URLFormat cuts the ".json", StripSlashes a slash), which a Mount at
// /articles/{id}/comments takes with id "": a last segment that is its
// format alone leaves the path ending in its slashes, read cut as they
// are (".." and ".x.json" are cut to nothing by two URLFormat passes, in
// a router and in the one it mounts).
func TestMatch_FormatCutToTrailingSlashes(t *testing.T) {
	tr := build(t, "PUT /articles/:id/comments")
	for _, path := range []string{"/articles//comments//.json", "/articles//comments//.", "/articles//comments/%2F.json", "/articles//comments//%2Ejson", "/articles//comments//..", "/articles//comments//.x.json"} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "PUT /articles/:id/comments", v, path)
		assert.Equal(t, []string{"articles", "", "comments"}, segs, path)
	}
	for _, path := range []string{"/articles//comments//a.json", "/articles//comments//a.x.json", "/articles//comments//.w.x.y.z"} {
		_, _, ok := tr.Match("PUT", path, nil)
		assert.False(t, ok, "the cut leaves a segment: %s", path)
	}
}

// TestHits_TrailingSlashAsEmptySegment: find-my-way (Fastify's router,
// without ignoreTrailingSlash) reads a trailing slash as an empty last
// segment and matches a parameter to it, /files/ as /files/:name with
// name "" (also where useSemicolonDelimiter ends the path at a ';'):
// those readings are hits too, as find-my-way 9 routes them.
func TestHits_TrailingSlashAsEmptySegment(t *testing.T) {
	tr := build(t, "PUT /files/:name", "PUT /files", "PUT /users/:id/orders/:oid")
	for path, want := range map[string]Hit[string]{
		"/files/":            {V: "PUT /files/:name", Segs: []string{"files", ""}},
		"/files/;x=1":        {V: "PUT /files/:name", Segs: []string{"files", ""}, OwnQuery: true, Query: "x=1"},
		"/users//orders/":    {V: "PUT /users/:id/orders/:oid", Segs: []string{"users", "", "orders", ""}},
		"/users//orders/;x=": {V: "PUT /users/:id/orders/:oid", Segs: []string{"users", "", "orders", ""}, OwnQuery: true, Query: "x="},
	} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		all := append([]Hit[string]{{V: v, Segs: segs}}, tr.Hits("PUT", path, v, segs, ok, nil)...)
		assert.Contains(t, all, want, path)
	}
	tr = build(t, "PUT /files/:name")
	v, segs, ok := tr.Match("PUT", "/files/", nil)
	assert.True(t, ok, "only the trailing slash's empty segment matches")
	assert.Equal(t, "PUT /files/:name", v)
	assert.Equal(t, []string{"files", ""}, segs)
}

// TestMatch_AnyLetterCaseOfEveryReading: when nothing matches as written,
// every reading is matched again in any letter case, not the main one
// alone.
func TestMatch_AnyLetterCaseOfEveryReading(t *testing.T) {
	tr := build(t, "GET /api/users", "GET /api/users/:id")
	for path, want := range map[string]string{
		"/API/USERS;x=1":    "GET /api/users",     // ";x=1" cut
		"/Api;v=1/Users":    "GET /api/users",     // ";v=1" cut
		"/API/USERS/..":     "GET /api/users/:id", // ".." kept
		"/Api/Users/%2e%2e": "GET /api/users/:id",
		"/API%2FUSERS":      "GET /api/users", // %2F read as /
	} {
		v, _, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, v, path)
	}
}

// TestHits_AnyLetterCase: a reading that matches another pattern in any
// letter case is a hit even where the path matched as written: Express
// routes /users/ME to the /users/me handler, which /users/:id matched.
func TestHits_AnyLetterCase(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "GET /users", "GET /Api/GetUser", "GET /:section/getuser")
	for path, want := range map[string][]Hit[string]{
		"/users/ME":    {{V: "GET /users/me", Segs: []string{"users", "ME"}}},       // Match: GET /users/:id
		"/api/getuser": {{V: "GET /Api/GetUser", Segs: []string{"api", "getuser"}}}, // a pattern in capitals; Match: /:section/getuser
		"/USERS/ME;x=1": { // Match: GET /users/:id ("ME;x=1")
			{V: "GET /users/me", Segs: []string{"USERS", "ME"}},
			{V: "GET /users/me", Segs: []string{"USERS", "ME"}, OwnQuery: true, Query: "x=1"},
		},
		"/users/me": nil,
		"/users/42": nil,
		"/USERS/42": nil, // GET /users/:id either way
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
	var dst [2]Hit[string]
	v, segs, _ := tr.Match("GET", "/users/AB12CD", nil)
	assert.Zero(t, testing.AllocsPerRun(100, func() { tr.Hits("GET", "/users/AB12CD", v, segs, true, dst[:0]) }), "an id in capitals")
}

// TestHits_LongSegmentInCapitalsAllocatesNothing: the folded lookup of
// a path with a capital reads each segment in lower case without an
// allocation of its own, as the case-blind walk did: an id in capitals
// as long as a UUID costs nothing where it matches nothing else.
func TestHits_LongSegmentInCapitalsAllocatesNothing(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "GET /users/:id/orders", "GET /Api/GetUser")
	var dst [2]Hit[string]
	for _, path := range []string{
		"/users/550E8400-E29B-41D4-A716-446655440000",
		"/users/550E8400-E29B-41D4-A716-446655440000/orders",
		"/users/" + strings.Repeat("AB12", 16), // 64 bytes
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Zero(t, testing.AllocsPerRun(100, func() { tr.Hits("GET", path, v, segs, true, dst[:0]) }), path)
	}
}

// TestHits_PatternsThatFoldAlike: in any letter case, the most specific
// patterns a path matches are hits, every one of those that differ only
// by case, as find-my-way (caseSensitive: false) routes the path and the
// patterns in lower case: /Api/GetUser and /API/GETUSER beat
// /api/:action for /api/getuser, though the tree meets /api first.
func TestHits_PatternsThatFoldAlike(t *testing.T) {
	tr := build(t, "GET /api/:action", "GET /Api/GetUser", "GET /API/GETUSER", "GET /api/users/:id")
	for path, want := range map[string][]string{
		"/api/getuser":      {"GET /Api/GetUser", "GET /API/GETUSER"}, // Match: GET /api/:action
		"/API/GETUSER":      {"GET /Api/GetUser"},                     // Match: itself
		"/aPi/gEtUsEr":      {"GET /Api/GetUser", "GET /API/GETUSER"}, // Match: GET /api/:action, the first the case-blind walk meets
		"/api/other":        nil,
		"/API/USERS/7":      nil, // GET /api/users/:id either way
		"/Api/GetUser/x":    nil,
		"/api/x/../getuser": {"GET /Api/GetUser", "GET /API/GETUSER"}, // Match: GET /api/:action, the dots resolved
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok || path == "/Api/GetUser/x", path)
		var got []string
		for _, h := range tr.Hits("GET", path, v, segs, ok, nil) {
			if !slices.Contains(got, h.V) {
				got = append(got, h.V)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		assert.Equal(t, want, got, path)
	}
}

// TestMatch_EndedAtSemicolon: Fastify with useSemicolonDelimiter ends the
// path at its first ';' (what follows is the query string) and keeps dot
// segments: that reading is matched too, with a query of its own.
func TestMatch_EndedAtSemicolon(t *testing.T) {
	tr := build(t, "GET /api/users", "GET /files/:name")
	for path, want := range map[string]string{
		"/api/users;x=1/more": "GET /api/users",   // ";x=1" cut from its segment: /api/users/more
		"/files/..;x/y/z":     "GET /files/:name", // name ".."
		"/API/Users;":         "GET /api/users",
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, v, path)
		assert.Contains(t, tr.Hits("GET", path, v, segs, ok, nil), Hit[string]{V: want, Segs: segs, OwnQuery: true, Query: path[strings.IndexByte(path, ';')+1:]}, path)
	}
}

// TestQueryAsFastify: the query as Fastify reads it, where url.ParseQuery
// drops pairs (a ';', a malformed escape).
func TestQueryAsFastify(t *testing.T) {
	for s, want := range map[string]url.Values{
		"debug=1":           {"debug": {"1"}},
		"debug=1;x=2":       {"debug": {"1;x=2"}},
		"x=1?debug=1":       {"x": {"1?debug=1"}},
		"a=1&a=2&&b":        {"a": {"1", "2"}, "b": {""}},
		"a+b=c+d%2B":        {"a b": {"c d+"}},
		"x=a=b":             {"x": {"a=b"}},
		"=v":                {"": {"v"}},
		"x=%zz&y=%ff&z=%C3": {"x": {"%zz"}, "y": {"%ff"}, "z": {"%C3"}},
		"n=M%C3%BCnchen":    {"n": {"München"}},
		"":                  {},
	} {
		assert.Equal(t, want, QueryAsFastify(s), s)
	}
}

// TestNodePairs: the query as Node's querystring reads it: a malformed
// escape kept, every other escape decoded; NodeOnlyPairs, the pairs it
// reads otherwise than fast-querystring may.
func TestNodePairs(t *testing.T) {
	type pair struct{ k, v string }
	read := func(seq func(func(string, string) bool)) []pair {
		var out []pair
		for k, v := range seq {
			out = append(out, pair{k, v})
		}
		return out
	}
	const s = "q=%3Cb%3E%zz&a+b=c+d%2B&x=1;y=%41&t=100%&u=%ff%3C&%3C%z=1&&n=M%C3%BCnchen"
	assert.Equal(t, []pair{{"q", "<b>%zz"}, {"a b", "c d+"}, {"x", "1;y=A"}, {"t", "100%"}, {"u", "\ufffd<"}, {"<%z", "1"}, {"n", "München"}}, read(NodePairs(s)))
	assert.Equal(t, []pair{{"q", "<b>%zz"}, {"t", "100%"}, {"u", "\ufffd<"}, {"<%z", "1"}, {"n", "München"}}, read(NodeOnlyPairs(s)))
}

// TestClean_LongPath: the path a message names is read no further than
// the message repeats of it (failure.MaxEcho bytes): a request of a
// megabyte of segments that matches no contract, under RequireContract,
// costs no slot and no string per segment (found by review: 44 MB and
// 110 ms for /a repeated to 1 MiB).
func TestClean_LongPath(t *testing.T) {
	for _, path := range []string{strings.Repeat("/a", 1<<16), strings.Repeat("/%41%42/x/..", 1<<14), strings.Repeat("/x", 70) + strings.Repeat("/..", 69)} {
		full := Join(Segments(path, nil))
		got := Clean(nil, path)
		n := min(len(full), failure.MaxEcho)
		assert.Equal(t, full[:n], got[:n], path[:20])
		assert.Less(t, testing.AllocsPerRun(5, func() { Clean(nil, path) }), 100.0) // a string for each of the segments it keeps
	}
	assert.Equal(t, "/a/b", Clean(nil, "/a/x/../b"))
}

// TestNodePairs_AsBuffer: the query (or form) as node:querystring reads it
// (Express 5's default query parser): where an escape is malformed or the
// bytes are not UTF-8, the well-formed escapes are still decoded, the
// others kept, and each maximal invalid sequence is one U+FFFD, as Node
// gives them (querystring.parse, then Buffer's toString).
func TestNodePairs_AsBuffer(t *testing.T) {
	for s, want := range map[string][][2]string{
		"debug=1;x=2":              {{"debug", "1;x=2"}},
		"a=1&a=2&&b":               {{"a", "1"}, {"a", "2"}, {"b", ""}},
		"a+b=c+d%2B":               {{"a b", "c d+"}},
		"q=%zz1%27%20OR%201%3D1--": {{"q", "%zz1' OR 1=1--"}},
		"q=1%27%20OR%201%3D1--%":   {{"q", "1' OR 1=1--%"}},
		"q=%2":                     {{"q", "%2"}},
		"%zz%71=%27":               {{"%zzq", "'"}},
		"y=%ff%27":                 {{"y", "\ufffd'"}},
		"z=%C3":                    {{"z", "\ufffd"}},
		"z=%E1%80%41":              {{"z", "\ufffdA"}},
		"z=%F0%90%80":              {{"z", "\ufffd"}},
		"z=%ED%A0%80":              {{"z", "\ufffd\ufffd\ufffd"}},
		"z=%C0%AF":                 {{"z", "\ufffd\ufffd"}},
		"z=%EF%BF%BD%zz":           {{"z", "\ufffd%zz"}},
		"n=M%C3%BCnchen":           {{"n", "München"}},
		"n=M%C3%BCnchen%":          {{"n", "München%"}},
		"":                         nil,
	} {
		var got [][2]string
		for k, v := range NodePairs(s) {
			got = append(got, [2]string{k, v})
		}
		assert.Equal(t, want, got, s)
	}
}

// TestMatch_FormatCut: chi's URLFormat middleware cuts the path chi
// routes on at the last '.' of its last segment: the readings are looked
// up so too, where that matches another pattern than the path as read.
func TestMatch_FormatCut(t *testing.T) {
	tr := build(t, "GET /users/me", "GET /users/:id", "GET /", "GET /a/b/c")
	for path, want := range map[string]string{"/.json": "GET /", "/a/b/c.json": "GET /a/b/c", "/a/b/c%2Ejson": "GET /a/b/c", "/a/b/c.x;v=1": "GET /a/b/c"} {
		v, _, ok := tr.Match("GET", path, nil)
		assert.True(t, ok, path)
		assert.Equal(t, want, v, path)
	}
	for path, want := range map[string][]Hit[string]{
		"/users/me.json":     {{V: "GET /users/me", Segs: []string{"users", "me"}}},
		"/users/m%65.json":   {{V: "GET /users/me", Segs: []string{"users", "me"}}},
		"/users/x.json":      nil, // /users/:id either way
		"/users/me%2Ejson/.": {{V: "GET /users/me", Segs: []string{"users", "me"}}},
	} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "GET /users/:id", v, path)
		assert.Equal(t, want, tr.Hits("GET", path, v, segs, ok, nil), path)
	}
	// /users/../. is /users/.. behind URLFormat and StripSlashes, chi's
	// /users/{id} with id "..": a "." last segment, kept by the readings
	// that keep dot segments, is cut to nothing.
	for _, path := range []string{"/users/../.", "/users/%2e%2e/%2e"} {
		v, segs, ok := tr.Match("GET", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "GET /", v, path)
		assert.Contains(t, tr.Hits("GET", path, v, segs, ok, nil), Hit[string]{V: "GET /users/:id", Segs: []string{"users", ".."}}, path)
	}
	v, _, ok := build(t, "GET /users/:id").Match("GET", "/users/../.", nil)
	assert.True(t, ok)
	assert.Equal(t, "GET /users/:id", v)
}

// TestMatch_TrailingSlashesCutToEveryCount: chi behind StripSlashes
// routes /a//// as /a///, which a Mount at /a/{x}/{y} takes with x and y
// "" (and /a///// as /a////, one at /a/{x}/{y}/{z}, each ""): the
// trailing slashes are read cut to each count, as ending in each count
// of empty segments (also where they are %2F, or left by a format cut).
func TestMatch_TrailingSlashesCutToEveryCount(t *testing.T) {
	tr := build(t, "PUT /a/:x/:y", "PUT /a/:x/:y/:z", "PUT /b/:x/c/:y/:z")
	two, three := Hit[string]{V: "PUT /a/:x/:y", Segs: []string{"a", "", ""}}, Hit[string]{V: "PUT /a/:x/:y/:z", Segs: []string{"a", "", "", ""}}
	for _, path := range []string{"/a////", "/a/////", "/a//////", "/a/%2F%2F%2F", "/a////.json", "/a%2F%2F%2F%2F%2F%2F.json"} {
		hits, ok := allHits(tr, "PUT", path)
		require.True(t, ok, path)
		assert.Contains(t, hits, two, path)
		if path != "/a////" && path != "/a/%2F%2F%2F" {
			assert.Contains(t, hits, three, path)
		}
	}
	for _, path := range []string{"/b//c//////", "/b//c/%2F%2F%2F%2F%2F"} {
		v, segs, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "PUT /b/:x/c/:y/:z", v, path)
		assert.Equal(t, []string{"b", "", "c", "", ""}, segs, path)
	}
	for _, path := range []string{"/c////", "/b/c//////", "/a/x/y/z/w//"} {
		_, _, ok := tr.Match("PUT", path, nil)
		assert.False(t, ok, path)
	}
}

// TestMatch_FormatCutTwice: URLFormat in a router and in a router it
// mounts cuts the last segment at its last '.' in each: /a/b.json.json
// is /a/b.json, then /b to the mounted router, its /b route; ".." is "."
// then "", dropped. At most maxFormatCuts passes are read.
func TestMatch_FormatCutTwice(t *testing.T) {
	tr := build(t, "PUT /a/b", "PUT /orders", "PUT /c/:x")
	for path, want := range map[string]string{"/a/b.json.json": "PUT /a/b", "/a/b.x.y": "PUT /a/b", "/a/b.w.x.y": "PUT /a/b", "/orders/..": "PUT /orders", "/orders/.x.json": "PUT /orders"} {
		v, _, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, want, v, path)
	}
	_, _, ok := tr.Match("PUT", "/a/b.v.w.x.y", nil)
	assert.False(t, ok, "more cuts than maxFormatCuts")
	// A path that matches as read gets the contract of its cuts too.
	v, segs, ok := tr.Match("PUT", "/c/b.json.json", nil)
	require.True(t, ok)
	assert.Empty(t, tr.Hits("PUT", "/c/b.json.json", v, segs, ok, nil))
	tr = build(t, "PUT /a/b", "PUT /a/:id")
	v, segs, ok = tr.Match("PUT", "/a/b.json.json", nil)
	require.True(t, ok)
	assert.Equal(t, "PUT /a/:id", v)
	assert.Equal(t, []Hit[string]{{V: "PUT /a/b", Segs: []string{"a", "b"}}}, tr.Hits("PUT", "/a/b.json.json", v, segs, ok, nil))
}

// TestMatch_FormatAloneThenCut: URLFormat cuts /a/b.json/.json to
// /a/b.json/, StripSlashes to /a/b.json, and URLFormat in a router
// mounted at /a its /b.json to /b: a path ending in segments that are a
// format alone is read without them, its last segment then cut.
func TestMatch_FormatAloneThenCut(t *testing.T) {
	tr := build(t, "PUT /a/b")
	for _, path := range []string{"/a/b.json/.json", "/a/b.json//.json", "/a/b.json/.x/.y", "/a%2Fb.json%2F.json", "/a/b.json/%2Ejson"} {
		v, _, ok := tr.Match("PUT", path, nil)
		require.True(t, ok, path)
		assert.Equal(t, "PUT /a/b", v, path)
	}
	for _, path := range []string{"/a/b.json/x.json", "/a/b.json/.w.x.y.z", "/a/c.json/.json"} {
		_, _, ok := tr.Match("PUT", path, nil)
		assert.False(t, ok, path)
	}
	// A path ending in slashes keeps its own readings of them: /a//.json//
	// is /a//.json to StripSlashes twice, /a/{x}/{y} with y ".json".
	tr = build(t, "PUT /a/:x/:y")
	v, segs, ok := tr.Match("PUT", "/a//.json//", nil)
	require.True(t, ok)
	assert.Equal(t, []string{"a", "", ".json"}, segs, v)
}

// TestMatch_FormatAloneBeforeATrailingSlash: StripSlashes cuts
// /a/////.json/ to /a/////.json, URLFormat to /a/////, and StripSlashes
// in a mounted router leaves /a/{x}/{y}/{z} with each "": a format alone
// before trailing slashes is cut as one at the end is, the slashes it
// leaves read cut to each count, and the path's own trailing slashes
// still are (/a//.json// is /a/{x}/{y}, y ".json").
func TestMatch_FormatAloneBeforeATrailingSlash(t *testing.T) {
	tr := build(t, "PUT /a/:x/:y/:z")
	for _, path := range []string{"/a/////.json/", "/a/////.json//", "/a/%2F%2F%2F%2F.json/"} {
		hits, ok := allHits(tr, "PUT", path)
		require.True(t, ok, path)
		assert.Contains(t, hits, Hit[string]{V: "PUT /a/:x/:y/:z", Segs: []string{"a", "", "", ""}}, path)
	}
	tr = build(t, "PUT /a/:x/:y")
	v, segs, ok := tr.Match("PUT", "/a//.json//", nil)
	require.True(t, ok)
	assert.Equal(t, []string{"a", "", ".json"}, segs, v)
	for _, path := range []string{"/a/%2F;x=1/.json%2F%2F/.json//", "/a%2F%2F.x/.json;y%2F%2E/.json//%2e"} {
		assert.LessOrEqual(t, len(alternateReadings(path)), maxAlternates, path)
	}
}

// TestMatch_FormatsAloneCutByFewerPasses: URLFormat twice (and
// StripSlashes) cut /a/.b/.json/.json to /a/.b/, x ".b" to a router
// mounted at /a/{x}: the path is also read without its first format
// alone only, then its last segment cut, not only without all of them.
func TestMatch_FormatsAloneCutByFewerPasses(t *testing.T) {
	tr := build(t, "PUT /a/:x")
	for _, path := range []string{"/a/.b/.json/.json", "/a/.b/.json/.json/", "/a%2F.b%2F.json%2F.json"} {
		hits, ok := allHits(tr, "PUT", path)
		require.True(t, ok, path)
		assert.Contains(t, hits, Hit[string]{V: "PUT /a/:x", Segs: []string{"a", ".b"}}, path)
	}
	for _, path := range []string{"/a/%2F;x=1/.y/.json%2F%2F/.json//", "/a%2F%2F.x/.j/.json;y%2F%2E/.json//%2e"} {
		assert.LessOrEqual(t, len(alternateReadings(path)), maxAlternates, path)
	}
}

// TestMatch_LongPathEndingInSlashesCostsItsLength: a stripped reading
// stands for a cut per count of trailing slashes up to the tree's depth;
// reading a long (escaped) segment again, and folding it, for each count
// cost about a hundred times the path's length in memory (eight
// parameters deep). The counts past the first reuse its segments, and a
// segment longer than any static one is not folded.
func TestMatch_LongPathEndingInSlashesCostsItsLength(t *testing.T) {
	tr := build(t, "PUT /r1/:a/:b/:c/:d/:e/:f/:g/:h", "PUT /r2/x/y")
	path := "/r1/" + strings.Repeat("%41", 1<<16) + strings.Repeat("/", 64)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	v, segs, ok := tr.Match("PUT", path, nil)
	tr.Hits("PUT", path, v, segs, ok, nil)
	runtime.ReadMemStats(&m1)
	assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(32*len(path)))
	// The counts are still read: /r1/A/// is /r1/:a/:b/:c with b, c "".
	tr = build(t, "PUT /r1/:a/:b/:c", "PUT /R1/x")
	for _, path := range []string{"/r1/%41////", "/R1/%41////", "/r1/%41%2F%2F%2F/"} {
		hits, _ := allHits(tr, "PUT", path)
		assert.Contains(t, hits, Hit[string]{V: "PUT /r1/:a/:b/:c", Segs: []string{path[1:3], "A", "", ""}}, path)
	}
}

// TestMatch_FormatAloneDotsCountedAsSent: behind CleanPath chi's
// RoutePath is as sent, where URLFormat sees one "." in .j%2e%2e%2e%2e:
// one pass cuts it, not five.
func TestMatch_FormatAloneDotsCountedAsSent(t *testing.T) {
	tr := build(t, "PUT /a/:x")
	for _, path := range []string{"/a/x/.json/.j%2e%2e%2e%2e", "/a/x//.json/.%2E%2E%2E"} {
		hits, ok := allHits(tr, "PUT", path)
		require.True(t, ok, path)
		assert.Contains(t, hits, Hit[string]{V: "PUT /a/:x", Segs: []string{"a", "x"}}, path)
	}
}

// allHits is what tr finds for method and path in every reading: its
// match (ok) and the hits beside it.
func allHits(tr *Tree[string], method, path string) (hits []Hit[string], ok bool) {
	v, segs, ok := tr.Match(method, path, nil)
	return append(tr.Hits(method, path, v, segs, ok, nil), Hit[string]{V: v, Segs: segs}), ok
}
