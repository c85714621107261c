package taint

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/jsonbody"
)

type params [][2]string

func (p params) EachParam(yield func(name, value string) bool) {
	for _, kv := range p {
		if !yield(kv[0], kv[1]) {
			return
		}
	}
}

func parse(t testing.TB, body string) *jsonbody.Doc {
	t.Helper()
	d, err := jsonbody.Parse([]byte(body), 64)
	require.NoError(t, err)
	return d
}

type seen struct {
	Source Source
	Name   string
	Value  string
	Where  string
}

func collect(r *Request) []seen {
	var out []seen
	r.Inputs(func(in Input) bool {
		out = append(out, seen{in.Source, in.Name, in.Value, r.Where(in)})
		return true
	})
	return out
}

func TestInputs_EverySource(t *testing.T) {
	r := &Request{
		Method: "POST", Route: "/users/:id",
		Body:     parse(t, `{"name":"O'Brien","tags":["ab","x"],"n":12345,"nested":{"k~/y":"v1 v2"},"ok":true}`),
		RawQuery: "q=1+OR+1%3D1&q=second&x=y&sort=name%20DESC&bad=%zz&semi=a;b",
		Host:     "api.example",
		Header: http.Header{
			"User-Agent": {"curl/8.0"},
			"X-Id":       {"7"}, // too short
			"Cookie":     {`session=abc123; theme="dark mode"`, "pref=zz"},
		},
		Params: params{{"id", "42"}, {"slug", "a"}},
	}
	got := collect(r)
	want := []seen{
		{BodyKey, "", "name", ""},
		{BodyValue, "", "O'Brien", "/name"},
		{BodyKey, "", "tags", ""},
		{BodyValue, "", "ab", "/tags/0"},
		{BodyKey, "", "nested", ""},
		{BodyKey, "", "ok", ""},
		{BodyKey, "", "k~/y", "/nested"},
		{BodyValue, "", "v1 v2", "/nested/k~0~1y"},
		{Query, "q", "1 OR 1=1", "q"},
		{Query, "q", "second", "q"},
		{Query, "sort", "name DESC", "sort"},
		{QueryName, "", "sort", ""},
		{Param, "id", "42", "id"},
		{Header, "Host", "api.example", "Host"},
		{Header, "User-Agent", "curl/8.0", "User-Agent"},
		{Cookie, "session", "abc123", "session"},
		{Cookie, "theme", "dark mode", "theme"},
		{Cookie, "pref", "zz", "pref"},
	}
	assert.ElementsMatch(t, want, got)
	for _, s := range got {
		assert.GreaterOrEqual(t, len(s.Value), MinInputLen, s)
		if s.Source == BodyKey || s.Source == QueryName {
			assert.NotContains(t, s.Where, s.Value, "a name input's place must not repeat it")
		}
	}
}

// The query is read as Go's server reads it for r.URL.Query().
func TestInputs_QueryAsURLParseQuery(t *testing.T) {
	for _, q := range []string{
		"a=1&b=2", "a=%41%42&a=cd", "x=1+2&y=%2B", "k=v;w&z=zz", "=empty&noval", "a=%zz&b=ok", "&&a=bb&", "%E2%9C%93=yes",
	} {
		want, _ := url.ParseQuery(q)
		got := url.Values{}
		for _, p := range queryPairs(q) {
			got[p.name] = append(got[p.name], p.value)
		}
		if len(want) == 0 {
			want = url.Values{}
		}
		assert.Equal(t, want, got, q)
	}
}

// mpBody is a multipart form: a field, a quoted-printable one (the
// multipart reader decodes it), a file with a path for its name (the
// reader keeps its base).
const mpBody = "--XX\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nx' OR 1\r\n" +
	"--XX\r\nContent-Disposition: form-data; name=\"note\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na=3Db\r\n" +
	"--XX\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"../../.env\"\r\nContent-Type: text/csv\r\n\r\nid,name\n1,x\r\n" +
	"--XX--\r\n"

// mpEmpty is a multipart form of one field, empty, named for SQL.
const mpEmpty = "--XX\r\nContent-Disposition: form-data; name=\"name='x', admin\"\r\n\r\n\r\n--XX--\r\n"

func TestInputs_RawBodies(t *testing.T) {
	cases := []struct {
		name, ct, body string
		want           []seen
	}{
		{"json by media type", "application/json", `{"a":"xyz"}`, []seen{{BodyValue, "", "xyz", "/a"}}},
		{"json without type", "", ` ["one","two"]`, []seen{{BodyValue, "", "one", "/0"}, {BodyValue, "", "two", "/1"}}},
		{"form", "application/x-www-form-urlencoded; charset=utf-8", "user=x%27+OR+1&pw=secret", []seen{{BodyValue, "user", "x' OR 1", "/user"}, {BodyValue, "pw", "secret", "/pw"}, {BodyKey, "", "user", ""}, {BodyKey, "", "pw", ""}}},
		{"form names", "application/x-www-form-urlencoded", "name%3D%27x%27%2C+admin=1&a=b&name%3D%27x%27%2C+admin=2", []seen{{BodyKey, "", "name='x', admin", ""}}},
		{"multipart", "multipart/form-data; boundary=XX", mpBody, []seen{
			{BodyValue, "", mpBody, ""},
			{BodyValue, "user", "x' OR 1", "/user"}, {BodyValue, "note", "a=b", "/note"},
			{BodyValue, "doc", "id,name\n1,x", "/doc"}, {BodyValue, "doc", ".env", "/doc"},
			{BodyKey, "", "user", ""}, {BodyKey, "", "note", ""}, {BodyKey, "", "doc", ""}}},
		{"multipart cut short", "multipart/form-data; boundary=XX", mpBody[:60], []seen{
			{BodyValue, "", mpBody[:60], ""}, {BodyValue, "user", "x' OR 1", "/user"}, {BodyKey, "", "user", ""}}},
		{"multipart without a boundary", "multipart/form-data", mpBody, []seen{{BodyValue, "", mpBody, ""}}},
		// A field sent empty has a name all the same (r.MultipartForm.Value's keys).
		{"multipart names of empty fields", "multipart/form-data; boundary=XX", mpEmpty, []seen{
			{BodyValue, "", mpEmpty, ""}, {BodyKey, "", "name='x', admin", ""}}},
		{"text", "text/plain", "hello; id", []seen{{BodyValue, "", "hello; id", ""}}},
		{"json as text", "text/plain", `{"sku":"x' OR '1'='1"}`, []seen{{BodyValue, "", "x' OR '1'='1", "/sku"}, {BodyKey, "", "sku", ""}}},
		{"text that only starts as json", "text/plain", `{ not json`, []seen{{BodyValue, "", "{ not json", ""}}},
		{"broken json", "application/json", `{"a":`, []seen{{BodyValue, "", `{"a":`, ""}}},
		{"json cut short", "", `{"sku":"x' OR 1","items":[{"note":"ok then"},"tw`, []seen{
			{BodyValue, "", `{"sku":"x' OR 1","items":[{"note":"ok then"},"tw`, ""},
			{BodyKey, "", "sku", ""}, {BodyValue, "", "x' OR 1", "/sku"}, {BodyKey, "", "items", ""},
			{BodyKey, "", "note", "/items/0"}, {BodyValue, "", "ok then", "/items/0/note"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.ct != "" {
				h.Set("Content-Type", c.ct)
			}
			r := &Request{Raw: []byte(c.body), Header: h}
			var got []seen
			for _, s := range collect(r) {
				if s.Source == BodyValue || s.Source == BodyKey {
					got = append(got, s)
				}
			}
			assert.ElementsMatch(t, c.want, got)
		})
	}
}

// Pointer finds every node: each string value's pointer leads back to it.
func TestPointer_EveryNode(t *testing.T) {
	body := `{"a":{"b":["x1",{"c":"x2","d/e":["x3","x4"]}],"~":"x5"},"f":[[["x6"]]],"g":"x7","":"x8"}`
	d := parse(t, body)
	r := &Request{Body: d}
	var generic any
	require.NoError(t, json.Unmarshal([]byte(body), &generic))
	n := 0
	r.Inputs(func(in Input) bool {
		if in.Source != BodyValue {
			return true
		}
		n++
		v, ok := follow(generic, r.Pointer(in))
		require.True(t, ok, r.Pointer(in))
		assert.Equal(t, in.Value, v)
		return true
	})
	assert.Equal(t, 8, n)
}

func follow(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i := 0
			for _, ch := range tok {
				i = i*10 + int(ch-'0')
			}
			if i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func TestFromContext(t *testing.T) {
	assert.Nil(t, FromContext(context.Background()))
	var none context.Context
	assert.Nil(t, FromContext(none))
	r := &Request{}
	assert.Same(t, r, FromContext(NewContext(context.Background(), r)))
	assert.Equal(t, "path parameter", Param.String())
	assert.Equal(t, "unknown", Source(0).String())
}

// Sinks in several goroutines read one Request: what it computes lazily is
// computed once (run with -race).
func TestInputs_Concurrent(t *testing.T) {
	r := &Request{Body: parse(t, `{"a":"xx"}`), RawQuery: "q=yy", Header: http.Header{"Cookie": {"c=zz"}}, Raw: nil}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Len(t, collect(r), 3)
		}()
	}
	wg.Wait()
}

func TestFromContext_NoAlloc(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "x")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if FromContext(ctx) != nil {
			t.Fatal("a request from nowhere")
		}
	}))
}

func TestInputs_NoAllocAfterFirst(t *testing.T) {
	r := &Request{Body: parse(t, `{"a":"xx","b":["yy","zz"]}`), RawQuery: "q=yy&r=ss", Header: http.Header{"User-Agent": {"ua/1"}, "Cookie": {"c=zz"}}, Params: params{{"id", "42"}}}
	collect(r)
	n := 0
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		r.Inputs(func(Input) bool { n++; return true })
	}))
}

func BenchmarkInputs(b *testing.B) {
	body := `{"customer":{"name":"Ada Lovelace","email":"ada@example.com","address":{"street":"12 Analytical Row","city":"London","zip":"NW1 6XE"}},` +
		`"items":[{"sku":"SKU-1001","qty":2,"note":"gift wrap"},{"sku":"SKU-2002","qty":1,"note":"fragile"}],"coupon":"SPRING24","comment":"please ring twice"}`
	h := http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64)"}, "Accept": {"application/json"}, "Accept-Language": {"en-GB,en;q=0.9"},
		"Content-Type": {"application/json"}, "Cookie": {"session=3f9a0c; theme=dark"}}
	b.Run("order", func(b *testing.B) {
		d := parse(b, body)
		r := &Request{Body: d, RawQuery: "page=2&sort=created_at%20desc", Header: h, Host: "shop.example", Params: params{{"id", "123456"}}}
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			r.Inputs(func(Input) bool { n++; return true })
		}
	})
	b.Run("first use", func(b *testing.B) {
		d := parse(b, body)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			r := &Request{Body: d, RawQuery: "page=2&sort=created_at%20desc", Header: h, Host: "shop.example", Params: params{{"id", "123456"}}}
			r.Inputs(func(Input) bool { n++; return true })
		}
	})
}

// TestInputsFrom_OneByte: InputsFrom(1) yields what Inputs does and the
// one-byte inputs besides, from every source (the shell's one-byte
// patterns); a minLen below 1 is 1, not the empty values too.
func TestInputsFrom_OneByte(t *testing.T) {
	r := &Request{
		Method: "POST", Route: "/users/:id",
		Body:     parse(t, `{"name":"O'Brien","tags":["ab","*",""]}`),
		RawQuery: "q=%3F&long=value&e=",
		Host:     "api.example",
		Header:   http.Header{"X-Id": {"~"}, "Cookie": {"c=*; d=zz"}},
		Params:   params{{"id", "42"}, {"slug", "a"}},
	}
	short := map[seen]bool{}
	for _, s := range []seen{
		{BodyValue, "", "*", "/tags/1"},
		{Query, "q", "?", "q"},
		{QueryName, "", "q", ""},
		{QueryName, "", "e", ""},
		{Param, "slug", "a", "slug"},
		{Header, "X-Id", "~", "X-Id"},
		{Cookie, "c", "*", "c"},
	} {
		short[s] = true
	}
	want := collect(r)
	for s := range short {
		want = append(want, s)
	}
	for _, minLen := range []int{1, 0, -1} {
		var got []seen
		r.InputsFrom(minLen, func(in Input) bool {
			got = append(got, seen{in.Source, in.Name, in.Value, r.Where(in)})
			return true
		})
		assert.ElementsMatch(t, want, got, "minLen %d", minLen)
	}
	// The bodies the guard leaves unparsed: a form's fields, a body that is
	// one input.
	for _, c := range []struct {
		ct, body string
		short    []seen
	}{
		{"application/x-www-form-urlencoded", "a=*&bb=long", []seen{{BodyValue, "a", "*", "/a"}, {BodyKey, "", "a", ""}}},
		{"text/plain", "*", []seen{{BodyValue, "", "*", ""}}},
	} {
		r := &Request{Method: "POST", Route: "/r", Raw: []byte(c.body), Header: http.Header{"Content-Type": {c.ct}}}
		want := append(collect(r), c.short...)
		for _, minLen := range []int{1, 0, -1} {
			var got []seen
			r.InputsFrom(minLen, func(in Input) bool {
				got = append(got, seen{in.Source, in.Name, in.Value, r.Where(in)})
				return true
			})
			assert.ElementsMatch(t, want, got, "%s, minLen %d", c.ct, minLen)
		}
	}
}

// TestInputs_ManyQueryNames: each query name is an input once, found in
// time linear in their number (found by a review: each name was looked
// for among the names before it, on every walk of the inputs, so 80,000
// names in a 700 kB query took 19 s per sink call).
func TestInputs_ManyQueryNames(t *testing.T) {
	var b strings.Builder
	const n = 60000
	for i := range n {
		fmt.Fprintf(&b, "n%d=1&", i)
	}
	b.WriteString("n7=2&n59999=3")
	r := &Request{RawQuery: b.String()}
	names := 0
	seen := map[string]bool{}
	r.Inputs(func(in Input) bool {
		if in.Source == QueryName {
			require.False(t, seen[in.Value], "%s twice", in.Value)
			seen[in.Value] = true
			names++
		}
		return true
	})
	assert.Equal(t, n, names) // not timed (unit tests assert no times): quadratic, this walk takes seconds
}

// TestTooLarge_FormsPastGoBounds: a form body past what Go's readers read
// (url.ParseQuery: 10,000 pairs; ReadForm: 1,000 parts) is read no
// further and said to be so, for the sinks to fail closed on. Every pair
// of a megabyte of '&' was read (with a slice of a million pairs made
// first, 32 MiB), and every part of a megabyte of empty ones (47 ms).
func TestTooLarge_FormsPastGoBounds(t *testing.T) {
	const form, multi = "application/x-www-form-urlencoded", "multipart/form-data; boundary=b"
	for _, tc := range []struct {
		ct, body string
		pairs    int
		tooLarge bool
	}{
		{form, strings.Repeat("&", 1<<20), 0, true},
		{form, strings.Repeat("a=b&", 10000) + "a=b", 0, true},
		{form, strings.Repeat("a=b&", 9999) + "a=b", 10000, false},
		{multi, strings.Repeat("--b\r\n\r\n\r\n", 100_000), 1000, true},
		{multi, strings.Repeat("--b\r\n\r\n\r\n", 1000), 1000, false},
	} {
		r := &Request{Raw: []byte(tc.body), Header: http.Header{"Content-Type": {tc.ct}}}
		assert.Equal(t, tc.tooLarge, r.TooLarge(), tc.ct)
		assert.Len(t, r.form, tc.pairs, tc.ct)
	}
	assert.False(t, (&Request{RawQuery: strings.Repeat("a=b&", 20000)}).TooLarge(), "the query is read whole")
}

// TestInputs_EmptyQueryPairsHoldNothing: the pairs of a query are held as
// they are read; a megabyte of '&' (within Go's header limit) is no pair,
// and a slice of a million was made for it first (32 MiB a request).
func TestInputs_EmptyQueryPairsHoldNothing(t *testing.T) {
	r := &Request{RawQuery: strings.Repeat("&", 1<<20) + "a=1"}
	assert.False(t, r.TooLarge())
	assert.Equal(t, []pair{{"a", "1"}}, r.query)
	assert.Less(t, cap(r.query), 16)
}

// TestInputs_JSONSentAsAForm: a body that parses as JSON is input as JSON
// whatever its media type says, a form's too (found by a review: sent as
// application/x-www-form-urlencoded, or as multipart/form-data, the JSON
// text was read only as a form, whose field held the string escaped:
// `x\u0027; id` reached a handler that decodes JSON as `x'; id`, which
// no input held).
func TestInputs_JSONSentAsAForm(t *testing.T) {
	const body = `{"cmd":"x\u0027; id"}`
	for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=XX", "multipart/form-data"} {
		t.Run(ct, func(t *testing.T) {
			h := http.Header{}
			h.Set("Content-Type", ct)
			r := &Request{Raw: []byte(body), Header: h}
			got := collect(r)
			assert.Contains(t, got, seen{BodyValue, "", "x'; id", "/cmd"})
			assert.Contains(t, got, seen{BodyKey, "", "cmd", ""})
		})
	}
	// And the form's fields as before.
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	r := &Request{Raw: []byte(`{"a":"b"}&x=%27y`), Header: h}
	assert.Contains(t, collect(r), seen{BodyValue, "x", "'y", "/x"})
}
