package learn

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/jsonbody"
	"github.com/contractguard/contractguard/internal/schema"
)

func repeat(n int, f func(i int) string) []string {
	var out []string
	for i := range n {
		out = append(out, f(i))
	}
	return out
}

func TestInfer(t *testing.T) {
	statuses := func(i int) string { return []string{"open", "held", "closed"}[i%3] }
	tests := []struct {
		name   string
		lim    Limits
		bodies []string
		want   string // the schema, as JSON
		notes  []string
	}{
		{
			name:   "union only where samples disagree; integer and number; minimum 0 when never negative",
			bodies: []string{`{"a":1,"b":"x","c":3,"d":0}`, `{"a":2.5,"b":null,"c":1e2,"d":-0}`, `{"a":-1,"c":4.0,"d":7}`},
			want:   `{"properties":{"a":{"type":"number"},"b":{"type":["string","null"]},"c":{"minimum":0,"type":"integer"},"d":{"minimum":0,"type":"integer"}},"required":["a","c","d"],"type":"object"}`,
			notes:  []string{"/b: type string or null — the samples disagree (string in 1, null in 1)", "body: required a, c, d — present in all 3 samples", "body: left open (no additionalProperties: false) — only 3 samples (fewer than 10)"},
		},
		{
			name:   "a format only where every string matches",
			bodies: []string{`{"e":"a@example.com","u":"https://x.test/a","i":"10.0.0.1","w":"2026-01-02T03:04:05Z"}`, `{"e":"b@example.com","u":"not a uri","i":"::1","w":"2026-01-02"}`},
			want:   `{"properties":{"e":{"format":"email","type":"string"},"i":{"type":"string"},"u":{"type":"string"},"w":{"type":"string"}},"required":["e","i","u","w"],"type":"object"}`,
		},
		{
			name:   "every format",
			bodies: []string{`["3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a","2026-01-02T03:04:05Z","2026-01-02","10.1.2.3","fe80::1","ada@example.com","urn:isbn:0451450523"]`},
			want:   `{"items":{"type":"string"},"type":"array"}`,
		},
		{
			name:   "an enum: few values, each seen three times, over enough strings",
			bodies: repeat(21, func(i int) string { return fmt.Sprintf(`{"s":%q}`, statuses(i)) }),
			want:   `{"additionalProperties":false,"properties":{"s":{"enum":["closed","held","open"],"type":"string"}},"required":["s"],"type":"object"}`,
			notes:  []string{"body: required s — present in all 21 samples", "body: additionalProperties: false — the shape is stable: 21 samples, 0 of its 1 members seen in only one", "/s: enum of 3 values — 21 strings, each value seen at least 3 times"},
		},
		{
			name:   "no enum under EnumMinSamples strings",
			bodies: repeat(19, func(i int) string { return fmt.Sprintf(`{"s":%q}`, statuses(i)) }),
			want:   `{"additionalProperties":false,"properties":{"s":{"type":"string"}},"required":["s"],"type":"object"}`,
		},
		{
			name:   "no enum when a value was seen fewer than three times",
			bodies: append(repeat(21, func(i int) string { return fmt.Sprintf(`{"s":%q}`, statuses(i)) }), `{"s":"rare"}`, `{"s":"rare"}`),
			want:   `{"additionalProperties":false,"properties":{"s":{"type":"string"}},"required":["s"],"type":"object"}`,
		},
		{
			name:   "no enum past EnumValues distinct values",
			lim:    Limits{EnumValues: 2},
			bodies: repeat(21, func(i int) string { return fmt.Sprintf(`{"s":%q}`, statuses(i)) }),
			want:   `{"additionalProperties":false,"properties":{"s":{"type":"string"}},"required":["s"],"type":"object"}`,
		},
		{
			name: "no enum under a secret name, nor where other types mix in",
			bodies: repeat(21, func(i int) string {
				return fmt.Sprintf(`{"pin":%q,"m":%s}`, statuses(i), []string{`"a"`, `"b"`, "null"}[i%3])
			}),
			want: `{"additionalProperties":false,"properties":{"m":{"type":["string","null"]},"pin":{"type":"string"}},"required":["m","pin"],"type":"object"}`,
		},
		{
			name: "no enum of tokens, nor of formatted strings",
			bodies: repeat(21, func(i int) string {
				return fmt.Sprintf(`{"t":%q,"d":%q}`, []string{"ab12cd34ef56gh78", "zz12cd34ef56gh78"}[i%2], "2026-01-02")
			}),
			want: `{"additionalProperties":false,"properties":{"d":{"format":"date","type":"string"},"t":{"type":"string"}},"required":["d","t"],"type":"object"}`,
		},
		{
			name:   "open with fewer than StableSamples samples",
			bodies: repeat(9, func(i int) string { return `{"a":1}` }),
			want:   `{"properties":{"a":{"minimum":0,"type":"integer"}},"required":["a"],"type":"object"}`,
		},
		{
			name:   "open when a member was seen once in 10",
			bodies: append(repeat(9, func(i int) string { return `{"a":1}` }), `{"a":1,"b":2}`),
			want:   `{"properties":{"a":{"minimum":0,"type":"integer"},"b":{"minimum":0,"type":"integer"}},"required":["a"],"type":"object"}`,
		},
		{
			name:   "closed when a member was seen once in 100, and optional members listed",
			bodies: append(repeat(99, func(i int) string { return []string{`{"a":1}`, `{"a":1,"c":true}`}[i%2] }), `{"a":1,"b":2}`),
			want:   `{"additionalProperties":false,"properties":{"a":{"minimum":0,"type":"integer"},"b":{"minimum":0,"type":"integer"},"c":{"type":"boolean"}},"required":["a"],"type":"object"}`,
		},
		{
			name:   "members named like data share one schema",
			bodies: []string{`{"12345":{"n":1},"3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a":{"n":2}}`, `{"ada@example.com":{"n":3}}`},
			want:   `{"additionalProperties":{"properties":{"n":{"minimum":0,"type":"integer"}},"required":["n"],"type":"object"},"type":"object"}`,
		},
		{
			// c is not written (over Properties): the schema of the members
			// named like data, as additionalProperties, would hold it too.
			name:   "members named like data leave the object open where a member was not written",
			lim:    Limits{Properties: 4},
			bodies: []string{`{"a":"x","123456":1}`, `{"b":"x","c":"y","d":"z","e":"w"}`},
			want:   `{"properties":{"a":{"type":"string"},"b":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"}},"type":"object"}`,
			notes:  []string{"body: left open (no additionalProperties) — members named like data (ids, emails…) seen 1 times, but 1 members not written (over 4 per object)"},
		},
		{
			// m3's name hashes after those of the data-named members: it
			// was skipped beside them, and written with the type it had
			// elsewhere only.
			name:   "members named like data are observed after the others in an object over Properties",
			lim:    Limits{Properties: 4},
			bodies: []string{`{"m3":1}`, `{"m3":"x","100001":1,"100002":1,"100003":1,"100004":1,"100005":1}`},
			want:   `{"properties":{"m3":{"minimum":0,"type":["string","integer"]}},"required":["m3"],"type":"object"}`,
		},
		{
			name:   "items of every element; arrays always empty have none",
			bodies: []string{`{"a":[1,"x",{"k":true}],"e":[]}`, `{"a":[],"e":[]}`},
			want:   `{"properties":{"a":{"items":{"minimum":0,"properties":{"k":{"type":"boolean"}},"required":["k"],"type":["object","string","integer"]},"type":"array"},"e":{"type":"array"}},"required":["a","e"],"type":"object"}`,
		},
		{
			name:   "not looked into past Depth",
			lim:    Limits{Depth: 1},
			bodies: []string{`{"a":{"b":1},"c":[1]}`},
			want:   `{"properties":{"a":{"type":"object"},"c":{"type":"array"}},"required":["a","c"],"type":"object"}`,
		},
		{
			name:   "members past Properties skipped, the object left open",
			lim:    Limits{Properties: 2},
			bodies: repeat(12, func(i int) string { return `{"a":1,"b":2,"c":3}` }),
			want:   `{"properties":{"a":{"minimum":0,"type":"integer"},"b":{"minimum":0,"type":"integer"}},"required":["a","b"],"type":"object"}`,
		},
		{
			name:   "a top-level scalar",
			bodies: []string{`"x"`, `"y"`},
			want:   `{"type":"string"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := only(t, tc.lim, posts(tc.bodies...)...)
			assert.JSONEq(t, tc.want, jsonOf(t, c.Schema))
			for _, n := range tc.notes {
				assert.Contains(t, c.Notes, n)
			}
			assert.EqualValues(t, len(tc.bodies), c.Samples)
		})
	}
}

func TestInfer_NoSchemaForEmptyBodies(t *testing.T) {
	c := only(t, Limits{}, posts("", "", "null")...)
	assert.Nil(t, c.Schema)
	assert.Contains(t, c.Notes, "body: empty (or null) in all 3 samples: no schema")
}

func TestInfer_SecretNote(t *testing.T) {
	c := only(t, Limits{}, posts(`{"password":"x"}`)...)
	assert.Contains(t, c.Notes, "/password: its name, or an ancestor's, looks secret — no value recorded")
}

// TestInfer_CollapseOnlyWhatVaries: once the identifiers of /teams/alice/
// settings/members were collapsed, the routes, alike now but not yet
// merged, counted as many at the next segments, which were collapsed too:
// /teams/{teamId}/{id}/{id2}, "12 distinct values" of one word, a contract
// for every route of that shape.
func TestInfer_CollapseOnlyWhatVaries(t *testing.T) {
	var reqs []request
	for i, n := range strings.Fields("alice bob carol dave erin frank grace heidi ivan judy mallory") {
		reqs = append(reqs, request{method: "PUT", path: "/teams/" + n + "/settings/members", body: `{"x":1}`, at: epoch.Add(time.Duration(i))})
	}
	cs := learn(t, Limits{}, reqs...).Contracts()
	require.Len(t, cs, 1)
	assert.Equal(t, "/teams/{teamId}/settings/members", cs[0].Endpoint)
	assert.EqualValues(t, 11, cs[0].Samples)
}

// TestInfer_CollapseIdentifiersBeforeAValue: identifiers that do not look
// like values, followed by a segment that does (/users/alice/42), were
// never collapsed: the parameter inferred for 42 is named after the
// segment before it ({aliceId}, {bobId}), so the routes differed in two
// segments, and each user's name stayed in a contract of its own.
func TestInfer_CollapseIdentifiersBeforeAValue(t *testing.T) {
	var reqs []request
	names := strings.Fields("alice bob carol dave erin frank grace heidi ivan judy mallory")
	for i, n := range names {
		reqs = append(reqs, request{method: "PUT", path: "/users/" + n + "/42", body: `{"x":1}`, at: epoch.Add(time.Duration(i))})
		reqs = append(reqs, request{method: "PUT", path: "/teams/" + n + "/7/members/9", body: `{"x":1}`, at: epoch.Add(time.Duration(i))})
	}
	cs := learn(t, Limits{}, reqs...).Contracts()
	var got []string
	for _, c := range cs {
		got = append(got, c.Method+" "+c.Endpoint)
	}
	assert.ElementsMatch(t, []string{"PUT /users/{userId}/{id}", "PUT /teams/{teamId}/{id}/members/{memberId}"}, got)
	for _, c := range cs {
		assert.EqualValues(t, len(names), c.Samples)
	}
}

// TestInfer_CollapseIdentifiers: paths that differ in one segment at many
// values, each seen a few times, become one route with a parameter;
// resources seen often stay apart.
func TestInfer_CollapseIdentifiers(t *testing.T) {
	var reqs []request
	names := strings.Fields("alice bob carol dave erin frank grace heidi ivan judy mallory")
	for i, n := range names {
		reqs = append(reqs, request{method: "PATCH", path: "/accounts/" + n, body: `{"x":1}`, at: epoch.Add(time.Duration(i))})
	}
	resources := strings.Fields("users orders items carts invoices payments refunds shipments returns reviews coupons")
	for i, r := range resources {
		for j := range 5 {
			reqs = append(reqs, request{method: "GET", path: "/api/" + r, at: epoch.Add(time.Duration(i*10 + j))})
		}
	}
	cs := learn(t, Limits{}, reqs...).Contracts()
	var got []string
	for _, c := range cs {
		got = append(got, c.Method+" "+c.Endpoint)
	}
	assert.Contains(t, got, "PATCH /accounts/{accountId}")
	assert.NotContains(t, got, "PATCH /accounts/alice")
	assert.Contains(t, got, "GET /api/users")
	assert.Len(t, got, 1+len(resources))
	for _, c := range cs {
		if c.Method == "PATCH" {
			assert.EqualValues(t, len(names), c.Samples)
			assert.Contains(t, c.Notes, "path: {accountId} (segment 2) stands for 11 distinct values seen in 11 samples, taken for identifiers")
		}
	}
}

// TestInfer_RoutesOfOneShapeMerge: a router pattern and an inferred
// template of the same shape are one contract (two would not load).
func TestInfer_RoutesOfOneShapeMerge(t *testing.T) {
	cs := learn(t, Limits{},
		request{method: "PUT", pattern: "/users/{id}", path: "/users/7", body: `{"a":1}`, at: epoch},
		request{method: "PUT", path: "/users/8", body: `{"b":1}`, at: epoch},
	).Contracts()
	require.Len(t, cs, 1)
	assert.Equal(t, "/users/{id}", cs[0].Endpoint)
	assert.EqualValues(t, 2, cs[0].Samples)
	assert.JSONEq(t, `{"properties":{"a":{"minimum":0,"type":"integer"},"b":{"minimum":0,"type":"integer"}},"type":"object"}`, jsonOf(t, cs[0].Schema))
}

// TestInfer_MergedRoutesAcceptTheirBodies: routes merged into one contract
// (identifiers collapsed) each applied the memory cap and Properties by the
// keys of their own nodes, so a member one route dropped or skipped another
// kept: the contract is not written from the others' samples alone, and
// accepts every body.
func TestInfer_MergedRoutesAcceptTheirBodies(t *testing.T) {
	names := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"}
	traffic := func(members int, value func(i int) string) ([]request, []string) {
		var reqs []request
		var bodies []string
		for i, n := range names {
			var ms []string
			for k := range members {
				ms = append(ms, fmt.Sprintf(`"q0p%d":%s`, k, value(i)))
			}
			b := `{"o":{` + strings.Join(ms, ",") + `}}`
			bodies = append(bodies, b)
			reqs = append(reqs, request{method: "PATCH", path: "/accounts/" + n, body: b, at: epoch})
		}
		return reqs, bodies
	}
	t.Run("memory cap", func(t *testing.T) {
		reqs, bodies := traffic(20, func(i int) string { return []string{`"s"`, "1"}[i%2] })
		c := only(t, Limits{StableSamples: 1, Routes: 16, MaxBytes: 16 * 8 << 10}, reqs...)
		require.Equal(t, "/accounts/{accountId}", c.Endpoint)
		assertAccepts(t, c, bodies...)
		assert.Contains(t, c.Notes, "/o: left open (no additionalProperties: false) — members may have been dropped at the memory cap")
	})
	t.Run("properties", func(t *testing.T) {
		reqs, bodies := traffic(6, func(i int) string {
			if i == 3 { // dave's route skipped other members than the rest
				return `"s"`
			}
			return "1"
		})
		c := only(t, Limits{StableSamples: 1, Properties: 4}, reqs...)
		require.Equal(t, "/accounts/{accountId}", c.Endpoint)
		assertAccepts(t, c, bodies...)
	})
}

// assertAccepts checks that c's schema accepts every body.
func assertAccepts(t *testing.T, c Learned, bodies ...string) {
	t.Helper()
	require.NotNil(t, c.Schema)
	s, err := schema.NewCompiler(nil, nil).Compile("learned.json", c.Schema)
	require.NoError(t, err)
	for _, b := range bodies {
		doc, err := jsonbody.Parse([]byte(b), 64)
		require.NoError(t, err)
		var problems []string
		rep := failure.ReportFunc(func(path, msg string) { problems = append(problems, path+": "+msg) })
		assert.True(t, s.Validate(doc, rep), "the learned schema rejects a body it was learned from: %v\nbody %s\nschema %s", problems, b, jsonOf(t, c.Schema))
	}
}

// TestInfer_CollapsedNamesNewToEveryRoute: the parameters after a
// collapsed segment are alike in shape, not in name: after a word they are
// named after it, after "~" they number an id (/alice/{aliceId}/{id},
// /~/{id}/{id2}). The names were made unique in the first route only, so
// /~/1/1's became /{id2}/{id3}/{id2}, the contract kept for all of them: an
// endpoint that does not load, on which learn merge failed (eleven
// unmatched requests were enough).
func TestInfer_CollapsedNamesNewToEveryRoute(t *testing.T) {
	var reqs []request
	for i, n := range append(strings.Fields("alice bob carol dave erin frank grace heidi ivan judy"), "~") {
		reqs = append(reqs, request{method: "PUT", path: "/" + n + "/1/1", body: `{"x":1}`, at: epoch.Add(time.Duration(i))})
	}
	cs := learn(t, Limits{}, reqs...).Contracts()
	require.Len(t, cs, 1)
	assert.EqualValues(t, 11, cs[0].Samples)
	_, ok := parseTemplate(cs[0].Endpoint)
	assert.True(t, ok, "%s: an endpoint", cs[0].Endpoint)
	_, err := WriteContracts(t.TempDir(), cs, WriteOptions{})
	assert.NoError(t, err)
}
