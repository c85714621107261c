package learn

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRouteTemplates(t *testing.T) {
	tests := []struct {
		name, method, pattern, path string
		want                        string
		router                      bool
	}{
		{"chi pattern", "post", "/users/{id}/orders", "/users/42/orders", "POST /users/{id}/orders", true},
		{"chi regexp parameter", "GET", "/users/{id:[0-9]+}", "/users/42", "GET /users/{id}", true},
		{"chi wildcard: the rest inferred", "GET", "/files/*", "/files/2024/report", "GET /files/{fileId}/report", true},
		{"ServeMux pattern with method and host", "GET", "GET example.com/items/{item}", "/items/x1", "GET /items/{item}", true},
		{"ServeMux remainder wildcard", "GET", "/static/{path...}", "/static/css/site.css", "GET /static/css/site.css", true},
		{"chi wildcard after a parameter, whose value names nothing", "POST", "/users/{name}/*", "/users/alice/42", "POST /users/{name}/{id}", true},
		{"ServeMux remainder after a parameter", "POST", "POST /users/{name}/{rest...}", "/users/alice/42/x", "POST /users/{name}/{id}/x", true},
		{"ServeMux end anchor", "GET", "/{$}", "/", "GET /", true},
		{"a segment mixing text and parameters", "GET", "/files/{name}.{ext}", "/files/a.txt", "GET /files/{name}", true},
		{"parameter names made valid", "GET", "/a/{user-id}/{9x}", "/a/1/2", "GET /a/{userid}/{p9x}", true},
		{"a pattern that does not fit the path is ignored", "GET", "/other/{id}", "/users/42", "GET /users/{userId}", false},
		{"numbers", "GET", "", "/users/42", "GET /users/{userId}", false},
		{"uuids", "DELETE", "", "/things/3e4666bf-d5e5-4aa7-b8ce-cefe41c7568a", "DELETE /things/{thingId}", false},
		{"hex with a digit", "GET", "", "/commits/9fceb02d0ae598e95dc970b74767f19372d61af8", "GET /commits/{commitId}", false},
		{"hex words stay", "GET", "", "/api/facade/added", "GET /api/facade/added", false},
		{"dates and versions", "GET", "", "/reports/2026-01-02", "GET /reports/{reportId}", false},
		{"emails", "GET", "", "/users/ada@example.com/settings", "GET /users/{userId}/settings", false},
		{"long tokens", "GET", "", "/invites/AbCdEfGhIjKlMnOpQrStUv", "GET /invites/{inviteId}", false},
		{"words stay", "GET", "", "/api/v1/users", "GET /api/v1/users", false},
		{"two parameters in a row", "GET", "", "/a/1/2", "GET /a/{aId}/{id}", false},
		{"names kept unique", "GET", "", "/users/1/users/2", "GET /users/{userId}/users/{userId2}", false},
		{"plural forms", "GET", "", "/categories/1/addresses/2/boxes/3", "GET /categories/{categoryId}/addresses/{addressId}/boxes/{boxId}", false},
		{"root", "GET", "", "/", "GET /", false},
		{"path read as the guard reads it", "GET", "", "//users/./42/../43/", "GET /users/{userId}", false},
		{"a static segment with an encoded slash stays one segment", "GET", "", "/a%2Fb/c", "GET /a%2Fb/c", false},
		{"a colon makes a segment data", "GET", "", "/x/:y", "GET /x/{xId}", false},
		{"non-ASCII is data", "GET", "", "/tags/caf%C3%A9", "GET /tags/{tagId}", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tp templater
			got, router, ok := tp.appendRoute(nil, tc.method, tc.pattern, tc.path)
			assert.True(t, ok)
			assert.Equal(t, tc.want, string(got))
			assert.Equal(t, tc.router, router)
		})
	}
}

// TestRouteTemplates_WildcardAfterParameter: a wildcard's first segment
// that looks like a value was named after the segment before it, the value
// of the pattern's parameter ("/users/{name}/*" and /users/alice/42 gave
// /users/{name}/{aliceId}): a value the router had said was one kept in
// the template, the export and the contract file, and one route per value,
// filling the routes cap.
func TestRouteTemplates_WildcardAfterParameter(t *testing.T) {
	l := New(Limits{SampleRate: 1})
	for _, user := range []string{"alice", "bob", "carol"} {
		l.Observe("POST", "/users/{name}/*", "/users/"+user+"/42", parse(t, `{"a":1}`), epoch)
	}
	o := l.Export()
	assert.Equal(t, 1, o.Routes(), "one route for every value of {name}")
	b, err := json.Marshal(o)
	require.NoError(t, err)
	for _, user := range []string{"alice", "bob", "carol"} {
		assert.NotContains(t, string(b), user, "a parameter's value kept in the export")
	}
}

func TestRouteTemplates_Refused(t *testing.T) {
	var tp templater
	_, _, ok := tp.appendRoute(nil, "GE T", "", "/x")
	assert.False(t, ok, "a method that is not a token")
	for _, m := range []string{"*", "any", "ANY"} {
		_, _, ok = tp.appendRoute(nil, m, "", "/x")
		assert.False(t, ok, "%s: a contract of it does not load", m)
	}
	long := "/"
	for range 100 {
		long += "segment/"
	}
	_, _, ok = tp.appendRoute(nil, "GET", "", long)
	assert.False(t, ok, "a template over maxTemplate")
}

// TestRouteTemplates_Parse: every template the learner writes is a valid
// contract endpoint that reads back to itself.
func TestRouteTemplates_Parse(t *testing.T) {
	for _, p := range []string{"/a%2Fb/c", "/%3Ax", "/a/{b}/%7Bc%7D", "/", "/100%25", "/files/%2A", "/a%3Fb%23c", "/a*"} {
		segs, ok := parseTemplate(p)
		assert.True(t, ok, p)
		assert.Equal(t, p, joinTemplate(segs))
	}
}

// FuzzRouteTemplate: any method, router pattern and path give a route the
// learner can keep, or none; a template kept is a contract endpoint that
// loads (valid, parameter names unique) and reads back to itself.
func FuzzRouteTemplate(f *testing.F) {
	f.Add("GET", "/users/{id}", "/users/42")
	f.Add("post", "GET example.com/a/{b...}", "/a/b/c%2Fd")
	f.Add("PUT", "/{x:[0-9]+}/{x}/*", "//x/./../1/2/3")
	f.Add("GET", "{", "/{/}/:a/%zz")
	f.Add("DELETE", "/{$}", "/")
	f.Add("GET", "", "/files/*/a%3Fb%23c")
	f.Fuzz(func(t *testing.T, method, pattern, path string) {
		var tp templater
		name, _, ok := tp.appendRoute(nil, method, pattern, path)
		if !ok {
			return
		}
		_, template, found := strings.Cut(string(name), " ")
		if !found {
			t.Fatalf("no method in %q", name)
		}
		segs, ok := parseTemplate(template)
		if !ok {
			t.Fatalf("%q %q %q: template %q is not an endpoint", method, pattern, path, template)
		}
		if got := joinTemplate(segs); got != template {
			t.Fatalf("template %q reads back as %q", template, got)
		}
	})
}

// TestRouteTemplates_LongPathIsCheap: a path of thousands of segments that
// look like values is refused as soon as its template passes maxTemplate.
// Built whole, each parameter's name was made unique by scanning the
// template so far once per name tried: cubic in the segments, about 30 s
// for an 8 KB path, all under the learner's lock.
func TestRouteTemplates_LongPathIsCheap(t *testing.T) {
	path := strings.Repeat("/1", 20_000)
	done := make(chan bool, 1)
	go func() {
		l := New(Limits{SampleRate: 1})
		l.Observe("GET", "", path, parse(t, ""), epoch)
		l.Observe("GET", "/files/*", "/files"+path, parse(t, ""), epoch)
		done <- l.Export().Dropped() == 2
	}()
	select {
	case dropped := <-done:
		assert.True(t, dropped, "a template over maxTemplate is not learned from")
	case <-time.After(5 * time.Second):
		t.Fatal("a path of 20,000 segments took more than 5 s to refuse")
	}
}
