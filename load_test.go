package contractguard

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/schema"
	"github.com/contractguard/contractguard/internal/yamljson"
)

func loadErrors(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var le *LoadError
		require.ErrorAs(t, err, &le, "every problem is a *LoadError: %v", err)
		assert.NotContains(t, le.Error(), "\n", "one line")
		out = append(out, le.Error())
	}
	walk(err)
	return out
}

// loadErrorCases are contract files with one problem each.
var loadErrorCases = []struct {
	name, file, src string
	want            string // one error, exactly
}{
	{"unknown key", "a.yaml", "endpoint: /a\nmethod: POST\ninvariant:\n  - expr: 'true'\n    message: m\n",
		`a.yaml:3: POST /a: unknown key "invariant"`},
	{"missing endpoint", "a.yaml", "method: POST\nschema: {type: object}\n",
		`a.yaml:1: POST: missing "endpoint"`},
	{"missing method", "a.yaml", "endpoint: /a\n",
		`a.yaml:1: /a: missing "method"`},
	{"every method, as *", "a.yaml", "endpoint: /a\nschema: {}\nmethod: '*'\n",
		`a.yaml:3: * /a: method: * is not a method requests use: a contract covers one method; write one for each`},
	{"every method, as any", "a.yaml", "endpoint: /a\nmethod: any\n",
		`a.yaml:2: ANY /a: method: any is not a method requests use: a contract covers one method; write one for each`},
	{"invariant without message", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: request.body.a > 1\n",
		`a.yaml:4: POST /a: missing "message" in invariants/0`},
	{"empty message", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: request.body.a > 1\n    message: ''\n",
		`a.yaml:5: POST /a: invariants/0/message: must be at least 1 character long`},
	{"unknown key in invariant", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: 'true'\n    message: m\n    msg: x\n",
		`a.yaml:6: POST /a: unknown key "msg" in invariants/0`},
	{"schema does not compile", "a.yaml", "endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n    age:\n      type: intger\n",
		`a.yaml:7: POST /a: schema/properties/age/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`},
	// request.headers' names are lower case and request.method upper case:
	// a constant of the other case never matches, and the rule would
	// check nothing.
	{"an upper-case header name", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers['X-Admin'] != 'yes'\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:17: request.headers has no "X-Admin": its names are lower case; write "x-admin"`},
	{"an upper-case header name in", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!('Authorization' in request.headers)\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:3: request.headers has no "Authorization": its names are lower case; write "authorization"`},
	{"an upper-case header name in has", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!has(request.headers.Authorization)\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:5: request.headers has no "Authorization": its names are lower case; write "authorization"`},
	{"an upper-case header name in an optional field", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers.?Authorization.orValue('') != ''\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:18: request.headers has no "Authorization": its names are lower case; write "authorization"`},
	{"an upper-case header name after an optional headers", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.?headers.?Authorization.orValue('') != ''\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:19: request.headers has no "Authorization": its names are lower case; write "authorization"`},
	{"an upper-case header name in has after an optional headers", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!has(request.?headers.Authorization)\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:5: request.headers has no "Authorization": its names are lower case; write "authorization"`},
	{"a lower-case method", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.method != 'delete' || request.body.a > 1\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:19: request.method is never "delete": it is upper case; write "DELETE"`},
	{"a lower-case method in a list", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.method in ['POST', 'put']\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:28: request.method is never "put": it is upper case; write "PUT"`},
	// The same constants met as a name request.headers.exists(k, …) and
	// its kin iterate over, after lowerAscii() or upperAscii(), through
	// request.?method.orValue(…) or as a map literal's key after in.
	{"an upper-case header name in exists", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers.exists(k, k == 'X-Admin')\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:32: request.headers has no "X-Admin": its names are lower case; write "x-admin"`},
	{"an upper-case header name in all, on the left", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers.all(k, 'X-Admin' != k)\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:24: request.headers has no "X-Admin": its names are lower case; write "x-admin"`},
	{"an upper-case header name in exists_one, in a list", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers.exists_one(k, k in ['x-a', 'X-B'])\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:44: request.headers has no "X-B": its names are lower case; write "x-b"`},
	{"an upper-case header name in filter", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers.filter(k, k == 'X-Admin').size() == 0\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:32: request.headers has no "X-Admin": its names are lower case; write "x-admin"`},
	{"an upper-case header name in map", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!request.headers.map(k, k == 'X-Admin').exists(b, b)\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:30: request.headers has no "X-Admin": its names are lower case; write "x-admin"`},
	{"an upper-case header prefix", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!request.headers.exists(k, k.startsWith('X-Debug'))\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:41: request.headers' names are lower case: startsWith("X-Debug") is never true; write "x-debug"`},
	{"a lower-case method, after optional", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.?method.orValue('') != 'post'\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:32: request.method is never "post": it is upper case; write "POST"`},
	{"a lower-case method in a map", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.method in {'POST': 1, 'put': 2}\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:31: request.method is never "put": it is upper case; write "PUT"`},
	{"an upper-case constant after lowerAscii", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.method.lowerAscii() != 'DELETE'\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:32: lowerAscii() is never "DELETE": it gives lower case; write "delete"`},
	{"a lower-case constant after upperAscii", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.headers['x-mode'].upperAscii() in ['SAFE', 'dry']\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:52: upperAscii() is never "dry": it gives upper case; write "DRY"`},
	{"a lower-case method through dyn", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"string(dyn(request.method)) == 'post'\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:32: request.method is never "post": it is upper case; write "POST"`},
	{"a path without its slash", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"request.path != 'admin/users'\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:17: request.path is never "admin/users": it starts with "/"; write "/admin/users"`},
	{"a path prefix without its slash", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: \"!request.path.startsWith('admin')\"\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: 1:26: request.path starts with "/": startsWith("admin") is never true; write "/admin"`},
	{"CEL does not compile", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: 'true'\n    message: ok\n  - expr: reqest.body.a > 1\n    message: m\n",
		`a.yaml:6: POST /a: invariants[1]: 1:1: undeclared reference to 'reqest' (did you mean 'request'?)`},
	{"CEL type error names the path", "a.yaml", "endpoint: /a\nmethod: POST\nschema:\n  properties:\n    customer:\n      properties: {id: {type: integer}}\ninvariants:\n  - expr: request.body.customer > 1\n    message: m\n",
		`a.yaml:8: POST /a: invariants[0]: 1:23: found no matching overload for '_>_' applied to '(object request.body.customer, int)'`},
	{"CEL not a bool", "a.yaml", "endpoint: /a\nmethod: POST\ninvariants:\n  - expr: 1 + 1\n    message: m\n",
		`a.yaml:4: POST /a: invariants[0]: must evaluate to a bool, not int`},
	{"YAML syntax error", "a.yaml", "endpoint: /a\nmethod: [POST\nschema: {}\n",
		`a.yaml:3: ',' or ']' must be specified`},
	{"YAML duplicate key", "a.yaml", "endpoint: /a\nmethod: POST\nmethod: GET\n",
		`a.yaml:3: mapping key "method" already defined at [2:1]`},
	{"JSON syntax error", "a.json", "{\"endpoint\": \"/a\",\n \"method\": \"POST\",,}",
		`a.json:2:`},
	{"endpoint without slash", "a.yaml", "endpoint: a/b\nmethod: POST\n",
		`a.yaml:1: POST a/b: endpoint: must match the pattern ^/`},
	{"bad parameter", "a.yaml", "endpoint: /a/{x\nmethod: POST\n",
		`a.yaml:1: POST /a/{x: endpoint: segment "{x": a parameter must be a whole segment, :name or {name}`},
	{"wildcard endpoint", "a.yaml", "endpoint: /files/*\nmethod: GET\n",
		`a.yaml:1: GET /files/*: endpoint: segment "*": wildcards are not supported: a contract covers one route shape, its parameters :name or {name} (escape it as %2A to mean the character)`},
	{"endpoint with a query", "a.yaml", "endpoint: /a?x=1\nmethod: GET\n",
		`a.yaml:1: GET /a?x=1: endpoint: "?" starts a query or a fragment: an endpoint is a path alone (escape it as %3F to mean the character)`},
	{"bad method", "a.yaml", "endpoint: /a\nmethod: PO ST\n",
		"a.yaml:2: PO ST /a: method: must match the pattern"},
	{"method with a line break", "a.yaml", "endpoint: /a\nmethod: \"POST\\n\"\n",
		`a.yaml:2: "POST\n /a": method: must match the pattern`},
	{"method not a string", "a.yaml", "endpoint: /a\nmethod: 12\n",
		"a.yaml:2: /a: method: must be a string, not a number"},
	{"not a mapping", "a.yaml", "- endpoint\n",
		"a.yaml:1: a contract must be an object, not a string"},
	{"remote ref", "a.yaml", "endpoint: /a\nmethod: POST\nschema:\n  $ref: https://example.com/schema.json\n",
		"a.yaml:4: POST /a: schema: $ref to https://example.com/schema.json: schemas are never fetched over the network"},
	{"ref outside the folder", "a.yaml", "endpoint: /a\nmethod: POST\nschema:\n  properties:\n    x: {$ref: ../outside.json}\n",
		"a.yaml:5: POST /a: schema: $ref to /outside.json leaves the contracts folder"},
	{"ref to a missing file", "a.yaml", "endpoint: /a\nmethod: POST\nschema: {$ref: schemas/none.json}\n",
		"a.yaml:3: POST /a: schema: $ref to schemas/none.json: open schemas/none.json: file does not exist"},
}

func TestLoad_Errors(t *testing.T) {
	for _, tt := range loadErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{ContractsFS: fstest.MapFS{tt.file: {Data: []byte(tt.src)}}})
			errs := loadErrors(t, err)
			require.Len(t, errs, 1, "%q", errs)
			assert.True(t, strings.HasPrefix(errs[0], tt.want) || strings.Contains(errs[0], tt.want), "got  %s\nwant %s", errs[0], tt.want)
		})
	}
}

// TestLoad_CaseCheckShadowedRequest: a comprehension variable named
// request is not the request, so the letter-case check of its method and
// headers does not apply to it (such a rule loaded and ran before the
// check); a request read beside it still is checked.
func TestLoad_CaseCheckShadowedRequest(t *testing.T) {
	contract := func(rule string) []byte {
		return []byte("endpoint: /a\nmethod: POST\nschema: {type: array, maxItems: 10, items: {type: object, maxProperties: 4}}\ninvariants:\n  - expr: " + quoteYAML(rule) + "\n    message: m\n")
	}
	g, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: contract(
		"request.body.all(request, request.method != 'delete' && !has(request.headers.X))")}}})
	require.NoError(t, err)
	assert.Nil(t, g.Check("POST", "/a", []byte(`[{"method":"get","headers":{}}]`)))
	assert.NotNil(t, g.Check("POST", "/a", []byte(`[{"method":"delete","headers":{}}]`)))
	assert.NotNil(t, g.Check("POST", "/a", []byte(`[{"method":"get","headers":{"X":1}}]`)))

	_, err = New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: contract(
		"request.body.all(request, request.method != 'delete') && request.method != 'delete'")}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `1:76: request.method is never "delete"`)
}

// TestLoad_CaseCheckLoadsWhatCanBeTrue: the letter-case check refuses
// only constants that can never match: these rules each hold for some
// request, and load.
func TestLoad_CaseCheckLoadsWhatCanBeTrue(t *testing.T) {
	for _, rule := range []string{
		"request.method.lowerAscii() == 'post'",
		"request.method.lowerAscii() in ['post', 'put', 'É']",
		"request.headers['x-mode'].upperAscii() == 'SAFE-1'",
		"request.path.upperAscii() == '/A'",
		"request.headers.exists(k, k == 'x-admin' && request.headers[k] == 'Yes')",
		"request.headers.all(k, ['X-A'].exists(k, k == 'X-A'))",        // the inner k is the list's
		"request.headers.exists(k, [k].exists(j, j.startsWith('x-')))", // j is not known to be a name
		"request.query.exists(k, k == 'Mode')",
		"request.headers.filter(k, true).size() >= 0 && [{'A': 1}].exists(m, 'A' in m)",
		"request.?method.orValue('') != 'POST'",
		"request.method in {'POST': 1}",
		"request.body.all(k, k == 'X-A')",
		"request.headers['x-a'].lowerAscii().contains('É')",
		"dyn(request.method) == 'POST' && string(request.path) != '/A'",
		"request.path.startsWith('/') && request.path.endsWith('a') && request.path.contains('b/') && !request.path.startsWith('')",
		"request.path in ['/', '/a/b']",
	} {
		_, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\ninvariants:\n  - expr: " + quoteYAML(rule) + "\n    message: m\n")}}})
		assert.NoError(t, err, rule)
	}
}

func TestLoad_DuplicateRouteNamesBothSources(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte("endpoint: /users/:id\nmethod: GET\n")},
		"b.yaml": {Data: []byte("# another\n\nendpoint: /users/{userId}\nmethod: get\n")},
		"c.yaml": {Data: []byte("endpoint: /users/:id\nmethod: PUT\n")},
	}
	_, err := New(Options{ContractsFS: fsys})
	errs := loadErrors(t, err)
	assert.Equal(t, []string{"b.yaml:3: GET /users/{userId}: a contract for GET /users/:id is already defined at a.yaml:1"}, errs)

	_, err = New(Options{ContractsFS: fstest.MapFS{"a.yaml": fsys["a.yaml"]},
		Contracts: []Contract{{Endpoint: "/users/{x}/", Method: "GET"}}})
	errs = loadErrors(t, err)
	assert.Equal(t, []string{"Options.Contracts[0]: GET /users/{x}/: a contract for GET /users/:id is already defined at a.yaml:1"}, errs)
}

func TestLoad_ReportsEveryProblem(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\nextra: 1\n---\nendpoint: /b\n")},
		"b.json": {Data: []byte(`[{"endpoint": "/c", "method": "GET", "invariants": [{"expr": "x >", "message": "m"}]}]`)},
	}
	_, err := New(Options{ContractsFS: fsys, Contracts: []Contract{{Method: "GET"}}})
	errs := loadErrors(t, err)
	require.Len(t, errs, 4, "%q", errs)
	for i, want := range []string{
		`a.yaml:3: POST /a: unknown key "extra"`,
		`a.yaml:5: /b: missing "method"`,
		`b.json:1: GET /c: invariants[0]: 1:4: Syntax error`,
		`Options.Contracts[0]: GET: missing "endpoint"`,
	} {
		assert.True(t, strings.HasPrefix(errs[i], want), "%q, want %q", errs[i], want)
	}
}

func TestLoad_Sources(t *testing.T) {
	multi := "endpoint: /a\nmethod: POST\n---\n---\nendpoint: /b\nmethod: POST\n...\n---\nendpoint: /c\nmethod: GET\n"
	fsys := fstest.MapFS{
		"1.yaml":      {Data: []byte(multi)},
		"2.yml":       {Data: []byte("endpoint: /d\nmethod: DELETE\n")},
		"3.json":      {Data: []byte(`{"endpoint":"/e","method":"PATCH"}`)},
		"4.json":      {Data: []byte(`[{"endpoint":"/f","method":"PUT"},{"endpoint":"/g","method":"PUT"}]`)},
		"README.md":   {Data: []byte("not a contract")},
		"sub/x.yaml":  {Data: []byte("endpoint: /not-loaded\nmethod: GET\n")},
		"schemas.txt": {Data: []byte("{")},
	}
	g, err := New(Options{ContractsFS: fsys, Contracts: []Contract{{Endpoint: "/h", Method: "get"}}})
	require.NoError(t, err)
	assert.Equal(t, int64(8), g.Metrics().ContractsLoaded, "goccy alone would lose /b, the document after an empty one")
	for _, c := range []struct{ m, p string }{{"POST", "/a"}, {"POST", "/b"}, {"GET", "/c"}, {"DELETE", "/d"}, {"PATCH", "/e"}, {"PUT", "/f"}, {"PUT", "/g"}, {"GET", "/h"}} {
		_, _, ok := g.set.Load().tree.Match(c.m, c.p, nil)
		assert.True(t, ok, "%s %s", c.m, c.p)
	}
	_, _, ok := g.set.Load().tree.Match("GET", "/not-loaded", nil)
	assert.False(t, ok, "subfolders are not loaded")
}

func TestLoad_ContractsDirOnDiskWithRefs(t *testing.T) {
	g := testdataGuard(t)
	assert.Equal(t, int64(5), g.Metrics().ContractsLoaded)
	v := g.Check("POST", "/api/orders", []byte(strings.Replace(readFile(t, "testdata/bodies/order.json"), `"country":"GB"`, `"country":"XX"`, 1)))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/customer/address/country", `must be one of "GB", "FR", "DE", "NL", "US"`}}, v.Details, "via the $ref to schemas/address.json")
}

func TestLoad_ContractsFSSubfolder(t *testing.T) {
	fsys := fstest.MapFS{
		"contracts/a.yaml":              {Data: []byte("endpoint: /a\nmethod: POST\nschema: {$ref: 'schemas/s.yaml'}\n")},
		"contracts/schemas/s.yaml":      {Data: []byte("type: object\nrequired: [x]\n")},
		"contracts/schemas/unused.json": {Data: []byte("{")},
	}
	g, err := New(Options{ContractsFS: fsys, ContractsDir: "./contracts/"})
	require.NoError(t, err)
	v := g.Check("POST", "/a", []byte(`{}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/x", "is required"}}, v.Details)
}

func TestLoad_SymlinkCannotLeaveTheFolder(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside.json")
	require.NoError(t, os.WriteFile(outside, []byte(`{"type":"object"}`), 0o644))
	contracts := filepath.Join(dir, "contracts")
	require.NoError(t, os.Mkdir(contracts, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(contracts, "link.json.schema")))
	require.NoError(t, os.WriteFile(filepath.Join(contracts, "a.yaml"), []byte("endpoint: /a\nmethod: POST\nschema: {$ref: link.json.schema}\n"), 0o644))
	_, err := New(Options{ContractsDir: contracts})
	errs := loadErrors(t, err)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "link.json.schema")
}

func TestLoad_MissingDir(t *testing.T) {
	_, err := New(Options{ContractsDir: "testdata/nope"})
	errs := loadErrors(t, err)
	assert.Contains(t, errs[0], "testdata/nope")
}

func TestLoad_InCodeSchemaFromGoValues(t *testing.T) {
	g := mustNew(t, Options{Contracts: []Contract{{
		Endpoint: "/a", Method: "POST",
		Schema: map[string]any{
			"type":     "object",
			"required": []string{"n"},
			"properties": map[string]any{
				"n": map[string]any{"type": "integer", "minimum": 3, "maximum": uint64(10)},
				"f": map[string]any{"type": "number", "minimum": 0.5},
			},
		},
	}}})
	assert.Nil(t, g.Check("POST", "/a", []byte(`{"n":3,"f":0.5}`)))
	v := g.Check("POST", "/a", []byte(`{"n":11,"f":0.4}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/f", "must be >= 0.5"}, {"/n", "must be <= 10"}}, v.Details)
}

func TestPolicySchemaIsEmbeddedFile(t *testing.T) {
	b, err := os.ReadFile("schema/policy.v0.1.json")
	require.NoError(t, err)
	assert.Equal(t, b, PolicySchema())
	_, err = policy()
	require.NoError(t, err)
}

func FuzzLoadContract(f *testing.F) {
	for _, s := range []string{
		"endpoint: /a\nmethod: POST\nschema: {type: object}\ninvariants: [{expr: 'request.body.a > 1', message: m}]\n",
		"endpoint: /a/:x/{y}\nmethod: get\n---\n---\nendpoint: /b\nmethod: put\n",
		"a: &x [1]\nb: *x\n",
		"{\"endpoint\": \"/a\", \"method\": \"POST\", \"schema\": {\"$ref\": \"#/definitions/x\", \"definitions\": {\"x\": {}}}}",
		"endpoint: /a\nmethod: POST\nschema: {$ref: 'http://x/y'}\n",
		"- 1\n- {endpoint: /x}\n",
		"%YAML 1.2\n---\nendpoint: /a\nmethod: POST\n...\n# c\n%YAML 1.2\n---\nendpoint: /b\nmethod: GET\n",
		"endpoint: /a\nmethod: POST\nschema: {properties: {\"a\\nb\": {pattern: \"(\"}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: data}}, Logger: discard})
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			// Each problem is one line (errors.Join puts one per line).
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				if strings.Contains(e.Error(), "\n") {
					t.Fatalf("a problem on more than one line: %q", e.Error())
				}
			}
			return
		}
		g.Check("POST", "/a", []byte(`{"a":2}`))
	})
}

// TestRepositoryContractsFollowThePolicySchema validates every contract of
// the repository — examples, test data, conformance files — against
// schema/policy.v0.1.json with the JSON Schema library directly, document
// by document, as an editor would.
func TestRepositoryContractsFollowThePolicySchema(t *testing.T) {
	doc, err := decodeSchemaFile("policy.v0.1.json", PolicySchema())
	require.NoError(t, err)
	policyFile, err := schema.NewCompiler(nil, nil).Compile("policy.v0.1.json", doc)
	require.NoError(t, err)

	sources := map[string][]byte{}
	for _, pattern := range []string{"examples/*/contracts/*", "testdata/contracts/*", "testdata/typed/*", "bench/testdata/contracts/*"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, f := range files {
			if ext := filepath.Ext(f); ext == ".yaml" || ext == ".yml" || ext == ".json" {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				sources[f] = b
			}
		}
	}
	for name, cf := range loadConformance(t) {
		sources["testdata/conformance/"+name+" (contracts)"] = []byte(cf.Contracts)
	}
	require.Greater(t, len(sources), 8)
	docs := 0
	for name, src := range sources {
		ds, err := yamljson.Parse(src)
		require.NoError(t, err, name)
		for _, d := range ds {
			v, err := yamljson.Value(d.Body)
			require.NoError(t, err, name)
			docs++
			valid := policyFile.Reference(v, failure.ReportFunc(func(path, message string) {
				t.Errorf("%s:%d: %s: %s", name, d.Line, path, message)
			}))
			assert.True(t, valid, "%s:%d", name, d.Line)
		}
	}
	t.Logf("%d contract documents in %d sources follow policy.v0.1.json", docs, len(sources))
}

// TestLoad_InCodeErrorsInIndexOrder: the problems of contracts in code come
// in the order of Options.Contracts, [2] before [10].
func TestLoad_InCodeErrorsInIndexOrder(t *testing.T) {
	cs := make([]Contract, 12)
	for i := range cs {
		cs[i] = Contract{Method: "GET"}
	}
	_, err := New(Options{Contracts: cs})
	errs := loadErrors(t, err)
	require.Len(t, errs, len(cs))
	for i, e := range errs {
		assert.True(t, strings.HasPrefix(e, fmt.Sprintf("Options.Contracts[%d]: ", i)), "%d: %q", i, e)
	}
}

// TestLoad_InParallelAsInOrder: the loader reads, compiles and checks
// contracts on every core; what it reports must not depend on that. A
// set with every kind of problem, $refs to shared files and conflicts
// gives the same errors in the same order on one core and on four, and a
// set without problems the same contracts.
func TestLoad_InParallelAsInOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"schemas/line.yaml": {Data: []byte("type: object\nproperties:\n  qty: {type: integer, minimum: 1}\n")},
		"schemas/none.yaml": {Data: []byte("type: [\n")},
	}
	var good []Contract
	for i := range 40 {
		src := fmt.Sprintf("endpoint: /g%d/lines\nmethod: POST\nschema:\n  type: object\n  properties:\n    line: {$ref: schemas/line.yaml}\n    n%d: {type: string, maxLength: %d}\n"+
			"invariants:\n  - expr: request.body.line.qty < %d\n    message: m\n---\nendpoint: /g%d/same\nmethod: PUT\nschema: {type: object}\n", i, i%3, 10+i%5, 100+i, i)
		fsys[fmt.Sprintf("good%02d.yaml", i)] = &fstest.MapFile{Data: []byte(src)}
		good = append(good, Contract{Endpoint: fmt.Sprintf("/c%d", i), Method: "POST",
			Schema:     map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer", "maximum": i}}},
			Invariants: []Invariant{{Expr: fmt.Sprintf("request.body.a != %d", i%4), Message: "m"}}})
	}
	load := func(procs int, o Options) ([]string, []ContractInfo) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g, err := New(o)
		if err != nil {
			return loadErrors(t, err), nil
		}
		return nil, g.Contracts()
	}

	errs1, cs1 := load(1, Options{ContractsFS: fsys, Contracts: good})
	require.Empty(t, errs1)
	_, cs4 := load(4, Options{ContractsFS: fsys, Contracts: good})
	assert.Equal(t, cs1, cs4)

	bad := maps.Clone(fsys)
	var wants []string
	for i, tt := range loadErrorCases {
		name := fmt.Sprintf("bad%02d%s", i, path.Ext(tt.file))
		bad[name] = &fstest.MapFile{Data: []byte(tt.src)}
		wants = append(wants, strings.Replace(tt.want, tt.file, name, 1))
	}
	bad["good03.yaml"] = &fstest.MapFile{Data: append(slices.Clone(fsys["good03.yaml"].Data), "---\nendpoint: /g1/same\nmethod: put\n"...)}
	bad["ref.yaml"] = &fstest.MapFile{Data: []byte("endpoint: /r\nmethod: POST\nschema:\n  properties:\n    x: {$ref: schemas/none.yaml}\n")}
	inCode := append(slices.Clone(good), Contract{Method: "GET"}, Contract{Endpoint: "/c1", Method: "post"},
		Contract{Endpoint: "/d", Method: "POST", Schema: map[string]any{"$ref": "schemas/missing.json"}, Invariants: []Invariant{{Expr: "x", Message: "m"}}})
	errs1, _ = load(1, Options{ContractsFS: bad, Contracts: inCode})
	errs4, _ := load(4, Options{ContractsFS: bad, Contracts: inCode})
	assert.Equal(t, errs1, errs4)
	require.Len(t, errs1, len(wants)+6, "%q", errs1)
	for i, want := range wants {
		assert.Contains(t, errs1[i], want)
	}
	for i, want := range []string{
		"good03.yaml:16: PUT /g1/same: a contract for PUT /g1/same is already defined at good01.yaml:",
		"ref.yaml:5: POST /r: schema: schemas/none.yaml: 1:7: ",
		"Options.Contracts[40]: GET: missing \"endpoint\"",
		"Options.Contracts[41]: POST /c1: a contract for POST /c1 is already defined at Options.Contracts[1]",
		"Options.Contracts[42]: POST /d: schema: $ref to schemas/missing.json: ",
		"Options.Contracts[42]: POST /d: invariants[0]: 1:1: undeclared reference to 'x'",
	} {
		assert.Contains(t, errs1[len(wants)+i], want)
	}
}

// TestInParallel: every index is called once, and a panic in one call is
// raised again in the caller.
func TestInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	calls := make([]atomic.Int32, 1000)
	inParallel(len(calls), func(i int) { calls[i].Add(1) })
	for i := range calls {
		assert.EqualValues(t, 1, calls[i].Load(), "index %d", i)
	}
	assert.PanicsWithValue(t, "boom 7", func() {
		inParallel(100, func(i int) {
			if i == 7 {
				panic("boom 7")
			}
		})
	})
}

// TestLoad_RefIntoAContract: a $ref cannot point at another contract's
// schema (file?contract=n, ?code=n). What it found would depend on which
// contracts the compiler had compiled before (before the loader used every
// core, an earlier contract's schema; a later one's file read whole, which
// is no schema and accepted anything), so it is an error at load, the same
// on one core and on four.
func TestLoad_RefIntoAContract(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml":         {Data: []byte("endpoint: /a\nmethod: POST\nschema: {type: object, required: [x]}\n")},
		"b.yaml":         {Data: []byte("endpoint: /b\nmethod: POST\nschema:\n  $ref: a.yaml?contract=0\n")},
		"c.yaml":         {Data: []byte("endpoint: /c\nmethod: POST\nschema:\n  properties:\n    own: {$ref: '#/definitions/x'}\n  definitions:\n    x: {type: integer}\n")},
		"f.yaml":         {Data: []byte("endpoint: /f\nmethod: POST\nschema:\n  properties:\n    x: {$ref: schemas/s.yaml}\n")},
		"g.yaml":         {Data: []byte("endpoint: /g\nmethod: POST\nschema:\n  $id: 'a.yaml?contract=0'\n  $ref: '#'\n")},
		"h.yaml":         {Data: []byte("endpoint: /h\nmethod: POST\nschema:\n  $schema: 'file:///contracts/a.yaml?contract=0'\n  type: object\n")},
		"schemas/s.yaml": {Data: []byte("properties:\n  y: {$ref: '../a.yaml?contract=0'}\n")},
	}
	inCode := []Contract{
		{Endpoint: "/d", Method: "POST", Schema: map[string]any{"type": "object", "required": []string{"x"}}},
		{Endpoint: "/e", Method: "POST", Schema: map[string]any{"$ref": "?code=0"}},
	}
	for _, procs := range []int{1, 4, 4, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			_, err := New(Options{ContractsFS: fsys, Contracts: inCode})
			assert.Equal(t, []string{
				"b.yaml:4: POST /b: schema: $ref to a.yaml?contract=0: a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that",
				"f.yaml:5: POST /f: schema: schemas/s.yaml: $ref to a.yaml?contract=0: a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that",
				"g.yaml:3: POST /g: schema: $id a.yaml?contract=0: an $id cannot hold a query: a contract's schema is named by one",
				"h.yaml:3: POST /h: schema: $schema file:///contracts/a.yaml?contract=0: a $schema cannot hold a query: a contract's schema is named by one",
				"Options.Contracts[1]: POST /e: schema: $ref to ?code=0: a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that",
			}, loadErrors(t, err), "GOMAXPROCS=%d", procs)
		}()
	}
	// A contract's own definitions are still its to refer to.
	g, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": fsys["c.yaml"]}})
	require.NoError(t, err)
	require.NotNil(t, g.Check("POST", "/c", []byte(`{"own":"x"}`)))
	require.Nil(t, g.Check("POST", "/c", []byte(`{"own":1}`)))
}

// TestLoad_RefToAContractsFile: a $ref to a contracts file (a *.yaml,
// *.yml or *.json at the top of the folder), with no query, read that
// file whole as a schema: a contract document, whose endpoint, method and
// schema are no keywords, so a contract that meant to share another's
// schema accepted any body. It points into a contract, and is refused
// like the $refs with a query; a schema file in a subfolder, or a hidden
// one beside the contracts, is still a schema to refer to.
func TestLoad_RefToAContractsFile(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml":          {Data: []byte("endpoint: /a\nmethod: POST\nschema: {type: object, required: [x]}\n")},
		"b.yaml":          {Data: []byte("endpoint: /b\nmethod: POST\nschema:\n  $ref: a.yaml\n")},
		"c.json":          {Data: []byte(`{"endpoint": "/c", "method": "POST", "schema": {"$ref": "a.yaml#/schema"}}`)},
		"d.yml":           {Data: []byte("endpoint: /d\nmethod: POST\nschema:\n  properties:\n    x: {$ref: schemas/s.yaml}\n")},
		"schemas/s.yaml":  {Data: []byte("$ref: '../c.json'\n")},
		"e.yaml":          {Data: []byte("endpoint: /e\nmethod: POST\nschema:\n  properties:\n    x: {$ref: .shared.json}\n    y: {$ref: schemas/t.json}\n")},
		".shared.json":    {Data: []byte(`{"type":"integer"}`)},
		"schemas/t.json":  {Data: []byte(`{"type":"string"}`)},
		"schemas/u.yaml":  {Data: []byte("type: object\n")},
		"f.yaml":          {Data: []byte("endpoint: /f\nmethod: POST\nschema: {$ref: ./schemas/../d.yml}\n")},
		"g.yaml":          {Data: []byte("endpoint: /g\nmethod: POST\nschema: {$ref: schemas/u.yaml}\n")},
		"schemas/x.json/": {Mode: fs.ModeDir},
	}
	_, err := New(Options{ContractsFS: fsys})
	const why = ": a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that"
	assert.Equal(t, []string{
		"b.yaml:4: POST /b: schema: $ref to a.yaml" + why,
		"c.json:1: POST /c: schema: $ref to a.yaml" + why,
		"d.yml:3: POST /d: schema: $ref to c.json" + why, // the $ref is in schemas/s.yaml
		"f.yaml:3: POST /f: schema: $ref to d.yml" + why,
	}, loadErrors(t, err))

	delete(fsys, "b.yaml")
	delete(fsys, "c.json")
	delete(fsys, "d.yml")
	delete(fsys, "f.yaml")
	g, err := New(Options{ContractsFS: fsys})
	require.NoError(t, err)
	assert.Nil(t, g.Check("POST", "/e", []byte(`{"x":1,"y":"s"}`)))
	assert.NotNil(t, g.Check("POST", "/e", []byte(`{"x":"s"}`)))
	assert.NotNil(t, g.Check("POST", "/g", []byte(`"not an object"`)))
}

// foldFS is a file system that ignores letter case, as macOS's and
// Windows' do: every name is opened in lower case.
type foldFS struct{ fstest.MapFS }

func (f foldFS) Open(name string) (fs.File, error)     { return f.MapFS.Open(strings.ToLower(name)) }
func (f foldFS) ReadFile(name string) ([]byte, error)  { return f.MapFS.ReadFile(strings.ToLower(name)) }
func (f foldFS) Stat(name string) (fs.FileInfo, error) { return f.MapFS.Stat(strings.ToLower(name)) }

// TestLoad_RefToAContractsFileInAnyCase: on a file system that ignores
// letter case, $ref: A.YAML reads the contract a.yaml; it is refused as
// $ref: a.yaml is.
func TestLoad_RefToAContractsFileInAnyCase(t *testing.T) {
	fsys := foldFS{fstest.MapFS{
		"a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\nschema: {type: object, required: [x]}\n")},
		"b.yaml": {Data: []byte("endpoint: /b\nmethod: POST\nschema:\n  $ref: A.YAML\n")},
	}}
	_, err := New(Options{ContractsFS: fsys})
	assert.Equal(t, []string{
		"b.yaml:4: POST /b: schema: $ref to A.YAML: a $ref cannot point into a contract; put the shared schema in a file of its own and refer to that",
	}, loadErrors(t, err))
}

// TestLoad_AnchorsAcrossListItems: the contracts of a YAML list are read
// one by one, and an alias in one of them stood for no anchor at all when
// the anchor was in an item before it: a valid file was refused with
// "alias *s refers to no anchor before it", which is not so. An alias
// still stands for no anchor of another document.
func TestLoad_AnchorsAcrossListItems(t *testing.T) {
	list := "- endpoint: /a\n  method: POST\n  schema: &s\n    type: object\n    required: [x]\n" +
		"- endpoint: /b\n  method: POST\n  schema: *s\n"
	g, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(list)}}})
	require.NoError(t, err)
	for _, p := range []string{"/a", "/b"} {
		assert.NotNil(t, g.Check("POST", p, []byte(`{}`)), p)
		assert.Nil(t, g.Check("POST", p, []byte(`{"x":1}`)), p)
	}
	docs := "endpoint: /a\nmethod: POST\nschema: &s {type: object}\n---\nendpoint: /b\nmethod: POST\nschema: *s\n"
	_, err = New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(docs)}}})
	assert.Equal(t, []string{"a.yaml:7: alias *s refers to no anchor before it"}, loadErrors(t, err))
}

// TestLoad_TaggedOrAnchoredList: a list of contracts with an anchor or a
// !!seq tag before it is the same list in YAML, and was refused as one
// contract: "a contract must be an object, not an array".
func TestLoad_TaggedOrAnchoredList(t *testing.T) {
	const items = "- endpoint: /a\n  method: POST\n- endpoint: /b\n  method: POST\n"
	for _, head := range []string{"--- !!seq\n", "&all\n", "--- &all !!seq\n"} {
		g, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(head + items)}}})
		require.NoError(t, err, head)
		assert.Len(t, g.Contracts(), 2, head)
	}
	// A tag of another type is still an error.
	_, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte("--- !!map\n" + items)}}})
	assert.Error(t, err)
}

// TestLoad_RefToANameWithALineBreak: a $ref names its file
// percent-encoded (a%0Ab.json), and the file's name, decoded, went into the
// message as it is: a load error of three lines where each is one.
func TestLoad_RefToANameWithALineBreak(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml":      {Data: []byte("endpoint: /a\nmethod: POST\nschema:\n  $ref: 'a%0Ab.json'\n")},
		"b.yaml":      {Data: []byte("endpoint: /b\nmethod: POST\nschema:\n  $ref: 's/a%0Ab.yaml'\n")},
		"s/a\nb.yaml": {Data: []byte("type: [\n")},
	}
	_, err := New(Options{ContractsFS: fsys})
	assert.Equal(t, []string{
		`a.yaml:4: POST /a: schema: $ref to "a\nb.json": open "a\nb.json": file does not exist`,
		`b.yaml:4: POST /b: schema: "s/a\nb.yaml": 1:7: sequence end token ']' not found`,
	}, loadErrors(t, err))
}

// TestLoad_FileNamesOfURLCharacters: a contract's schema is compiled under
// its file's name as a URL, and a name with a # or a % in it was read as
// one: x#a.yaml and x#b.yaml were both the resource /contracts/x, and
// failed with "anchor in … not found" and "resource … already exists",
// %zz.yaml with "invalid URL escape". A name with a space or a letter
// that is not ASCII (a b.yaml, été.yaml), which the schema library
// escapes when it resolves a $ref, failed at its first '#/definitions/x':
// "$ref to a%20b.yaml?contract=0: a $ref cannot point into a contract".
// The name is escaped: each file's contracts load with their own schemas,
// and their $refs resolve and fail at their lines as any file's do.
func TestLoad_FileNamesOfURLCharacters(t *testing.T) {
	fsys := fstest.MapFS{
		"x#a.yaml":       {Data: []byte("endpoint: /a\nmethod: POST\nschema: {type: integer}\n")},
		"x#b.yaml":       {Data: []byte("endpoint: /b\nmethod: POST\nschema: {type: string}\n")},
		"%zz.yaml":       {Data: []byte("endpoint: /c\nmethod: POST\nschema:\n  $ref: '#/definitions/x'\n  definitions:\n    x: {$ref: schemas/s.json}\n")},
		"a?b.yaml":       {Data: []byte("endpoint: /d\nmethod: POST\nschema: {type: boolean}\n")},
		"a b.yaml":       {Data: []byte("endpoint: /e\nmethod: POST\nschema: {$ref: '#/definitions/x', definitions: {x: {type: object, maxProperties: 0}}}\n")},
		"été.yaml":       {Data: []byte("endpoint: /f\nmethod: POST\nschema: {type: object, required: [x], properties: {x: {$ref: '#/definitions/x'}}, definitions: {x: {type: object}}}\n")},
		"schemas/s.json": {Data: []byte(`{"type": "null"}`)},
	}
	for _, procs := range []int{1, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			g, err := New(Options{ContractsFS: fsys})
			require.NoError(t, err)
			for path, valid := range map[string]string{"/a": `1`, "/b": `"s"`, "/c": `null`, "/d": `true`, "/e": `{}`, "/f": `{"x":{}}`} {
				for _, body := range []string{`1`, `"s"`, `null`, `true`, `{}`, `{"x":{}}`} {
					assert.Equal(t, body == valid, g.Check("POST", path, []byte(body)) == nil, "GOMAXPROCS=%d POST %s %s", procs, path, body)
				}
			}
		}()
	}
	_, err := New(Options{ContractsFS: fstest.MapFS{
		"x#a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n    a: {$ref: none.json}\n")},
	}})
	assert.Equal(t, []string{"x#a.yaml:6: POST /a: schema: $ref to none.json: open none.json: file does not exist"}, loadErrors(t, err))
}

// TestLoad_SchemaFileNamesUnescaped: an error in a schema file a $ref
// reads names the file as it is named, not as the URL the library holds
// (schemas/%C3%A9t%C3%A9.json, schemas/l%20oop.json).
func TestLoad_SchemaFileNamesUnescaped(t *testing.T) {
	const contract = "endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n    q: {$ref: '%s'}\n"
	for _, tt := range []struct{ file, schema, ref, want string }{
		{"schemas/été.json", `{"type": 5}`, "schemas/été.json",
			`a.yaml:6: POST /a: schema: schemas/été.json: type: invalid schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`},
		{"schemas/l oop.json", `{"not": {"$ref": "#"}}`, "schemas/l oop.json",
			"a.yaml:6: POST /a: schema: schemas/l oop.json: $ref loop: the schema applies itself to the value it checks, and never ends"},
		{"schemas/été.json", `{}`, "schemas/%C3%A9t%C3%A9.json#/nope",
			"a.yaml:6: POST /a: schema: $ref to schemas/été.json#/nope: not found"},
		{"schemas/a\nb.json", `{"type": 5}`, "schemas/a%0Ab.json",
			`a.yaml:6: POST /a: schema: "schemas/a\nb.json": type: invalid schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`},
	} {
		_, err := New(Options{ContractsFS: fstest.MapFS{
			tt.file:  {Data: []byte(tt.schema)},
			"a.yaml": {Data: []byte(fmt.Sprintf(contract, tt.ref))},
		}})
		assert.Equal(t, []string{tt.want}, loadErrors(t, err), tt.file)
	}
}

// TestLoad_RefToNoPlace: a $ref to a place its schema does not have (a
// misspelt definition, an anchor, a pointer into a schema file) was
// reported at the line of the contract's schema, not of the $ref, with
// the name the loader gives the schema: json-pointer in
// "/contracts/a.yaml?contract=0#/definitions/adress" not found.
func TestLoad_RefToNoPlace(t *testing.T) {
	const head = "endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n    a: {$ref: '#/definitions/address'}\n"
	const tail = "  definitions:\n    address: {type: object}\n"
	for ref, want := range map[string]string{
		"'#/definitions/adress'":          "a.yaml:7: POST /a: schema: $ref to #/definitions/adress: not found",
		"'#/definitions/a%20b'":           "a.yaml:7: POST /a: schema: $ref to #/definitions/a b: not found",
		"'#address'":                      "a.yaml:7: POST /a: schema: $ref to #address: not found",
		"'schemas/s.json#/definitions/x'": "a.yaml:7: POST /a: schema: $ref to schemas/s.json#/definitions/x: not found",
	} {
		fsys := fstest.MapFS{
			"a.yaml":         {Data: []byte(head + "    b: {$ref: " + ref + "}\n" + tail)},
			"schemas/s.json": {Data: []byte(`{"definitions": {}}`)},
		}
		_, err := New(Options{ContractsFS: fsys})
		assert.Equal(t, []string{want}, loadErrors(t, err), ref)
	}
	_, err := New(Options{Contracts: []Contract{{Endpoint: "/a", Method: "POST", Schema: map[string]any{"$ref": "#/definitions/x"}}}})
	assert.Equal(t, []string{"Options.Contracts[0]: POST /a: schema: $ref to #/definitions/x: not found"}, loadErrors(t, err))
}

// TestLoad_RefLoop: a schema that applies itself to the value it checks
// ({$ref: '#'}, definitions whose $refs lead back to themselves) loaded,
// and the library failed every value reaching it at request time with
// " is invalid" and no reason, which under not or if passed every value:
// {not: {$ref: '#'}} accepted any body. It is a load error at its place.
// A schema that refers to itself for a value inside the one it checks
// (a tree) loads as before.
func TestLoad_RefLoop(t *testing.T) {
	const head = "endpoint: /a\nmethod: POST\nschema:\n"
	const loop = ": $ref loop: the schema applies itself to the value it checks, and never ends"
	for sch, want := range map[string]string{
		"  $ref: '#'\n":                      "a.yaml:3: POST /a: schema" + loop,
		"  not: {$ref: '#'}\n":               "a.yaml:3: POST /a: schema" + loop,
		"  if: {allOf: [{$ref: '#'}]}\n":     "a.yaml:3: POST /a: schema" + loop,
		"  dependencies: {x: {$ref: '#'}}\n": "a.yaml:3: POST /a: schema" + loop,
		"  type: object\n  properties:\n    a:\n      not: {$ref: '#/definitions/b'}\n  definitions:\n    b: {anyOf: [{type: string}, {$ref: '#/definitions/c'}]}\n    c: {oneOf: [{$ref: '#/definitions/b'}]}\n": "a.yaml:9: POST /a: schema/definitions/b" + loop,
		"  properties:\n    a: {$ref: 'schemas/a.json'}\n": "a.yaml:5: POST /a: schema: schemas/a.json" + loop,
	} {
		fsys := fstest.MapFS{
			"a.yaml":         {Data: []byte(head + sch)},
			"schemas/a.json": {Data: []byte(`{"$ref": "b.json"}`)},
			"schemas/b.json": {Data: []byte(`{"allOf": [{"$ref": "a.json"}]}`)},
		}
		_, err := New(Options{ContractsFS: fsys})
		assert.Equal(t, []string{want}, loadErrors(t, err), sch)
	}
	_, err := New(Options{Contracts: []Contract{{Endpoint: "/a", Method: "POST", Schema: map[string]any{"not": map[string]any{"$ref": "#"}}}}})
	assert.Equal(t, []string{"Options.Contracts[0]: POST /a: schema" + loop}, loadErrors(t, err))

	tree := head + "  type: object\n  properties:\n    children: {type: array, items: {$ref: '#'}}\n    not: {not: {$ref: '#'}}\n"
	g, err := New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(tree)}}})
	require.NoError(t, err)
	assert.Nil(t, g.Check("POST", "/a", []byte(`{"children":[{"children":[]}]}`)))
	assert.NotNil(t, g.Check("POST", "/a", []byte(`{"children":[{"children":1}]}`)))
	assert.NotNil(t, g.Check("POST", "/a", []byte(`{"not":{}}`)))
}

// TestLoad_SyntaxTreesDropped: the first step lets a file's syntax tree go
// once its contracts are read (a folder's trees at once were 40 times its
// size), and a problem found later reads the file again for its line.
func TestLoad_SyntaxTreesDropped(t *testing.T) {
	fsys := fstest.MapFS{"a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\n---\nendpoint: /b\nmethod: POST\ninvariants:\n  - {expr: x, message: m}\n")}}
	l := &loader{opts: &Options{}, files: fsys, folder: newSharedFS(fsys, false)}
	u := &unit{name: "a.yaml"}
	l.read(u)
	require.Len(t, u.jobs, 2)
	for _, j := range u.jobs {
		assert.Nil(t, j.node, j.name)
		assert.True(t, j.read, j.name)
	}
	assert.Equal(t, 7, yamljson.KeyLine(u.jobs[1].nodeOf(), []string{"invariants", "0", "expr"}))
}

// TestLoad_SchemaFormatOnce holds the loader that checks a contract's
// schema against draft-07's meta-schema once (by the schema compiler,
// explained only when it does not compile) to the contract format checked
// whole, as it was before: for each contract whose schema breaks the
// format, the errors are exactly those of the whole format (so nothing
// found after the format check, an endpoint or an invariant, is reported),
// at the same lines; in a file and in code alike.
func TestLoad_SchemaFormatOnce(t *testing.T) {
	const head = "endpoint: /a\nmethod: POST\n"
	contracts := []string{
		head + "schema:\n  type: object\n  properties:\n    age: {type: intger}\n",
		"method: POST\nschema: {minimum: x}\nendpoint: '/a/:'\ninvariants: [{expr: 'request.body.a >', message: m}]\n",
		head + "schema: {required: a}\ninvariants: [{expr: 'request.body.a > 1', message: m}]\n",
		head + "schema: {type: object, properties: {s: {type: string, pattern: '('}}}\n",
		head + "schema: {properties: 5, items: [1], enum: []}\n",
		head + "schema:\n  properties:\n    a: {type: [string, strin]}\n    b: {maxLength: -1}\n  additionalProperties: no\n",
		head + "schema: {$schema: 'http://json-schema.org/draft-07/schema#', type: 5}\n",
		head + "schema: {$schema: 'http://json-schema.org/draft-04/schema#', minimum: 1, exclusiveMinimum: true}\n",
		head + "schema: {$schema: 'http://json-schema.org/draft-07/schema', definitions: {x: {$schema: 'http://x/a b'}}}\n",
		head + "schema: {$ref: 'a.yaml?contract=0', type: 5}\n",
		head + "schema: {$ref: 'https://example.com/s.json', minLength: 1.5}\n",
		"endpoint: /a\nschema: {$id: 5}\nmethod: 7\n",
		head + "schema: {dependencies: {a: 5}, if: 1}\nunknown: x\n",
		// Keys the body parser refuses: the schema is still explained.
		head + "schema: {type: 5, properties: {a: {}, A: {}}}\ninvariants: [{expr: 'request.body.a >', message: m}]\n",
		"method: POST\nschema: {type: 5, minimum: 1e1001}\nendpoint: '/a/:'\n",
		head + "schema: {allOf: [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {type: 5}, {}, {type: 6}]}\n",
	}
	f, err := policy()
	require.NoError(t, err)
	// Schemas that follow the format load, deferred or not.
	_, err = New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(head +
		"schema: {$schema: 'http://json-schema.org/draft-07/schema#', properties: {a: {type: integer, minimum: 1}}, definitions: {x: {pattern: '^a'}}}\n" +
		"---\nendpoint: /b\nmethod: POST\nschema: {$schema: 'http://json-schema.org/draft-06/schema#', type: object}\n")}}})
	require.NoError(t, err)
	for i, c := range contracts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			// Twice, so that two contracts share the schema.
			src := c + "---\n" + strings.Replace(c, "/a", "/b", 1)
			docs, err := yamljson.Parse([]byte(src))
			require.NoError(t, err)
			var want []*LoadError // in a file: by line, as the loader sorts them
			var wantCode []string
			var code []Contract
			for _, node := range contractNodes(docs) {
				v, err := yamljson.Value(node)
				require.NoError(t, err)
				doc := v.(map[string]any)
				name := contractName(doc)
				n := len(code)
				ps := formatProblems(f.whole, v, nil)
				require.NotEmpty(t, ps, "the case must break the format")
				for _, p := range ps {
					want = append(want, &LoadError{File: "a.yaml", Line: yamljson.KeyLine(node, p.loc), Contract: name, Err: errors.New(p.msg)})
					wantCode = append(wantCode, (&LoadError{File: fmt.Sprintf("Options.Contracts[%d]", n), Contract: name, Err: errors.New(p.msg)}).Error())
				}
				var ct Contract
				ct.Endpoint, _ = doc["endpoint"].(string)
				ct.Method, _ = doc["method"].(string)
				ct.Schema, _ = doc["schema"].(map[string]any)
				invs, _ := doc["invariants"].([]any)
				for _, iv := range invs {
					m := iv.(map[string]any)
					ct.Invariants = append(ct.Invariants, Invariant{Expr: m["expr"].(string), Message: m["message"].(string)})
				}
				code = append(code, ct)
			}
			slices.SortStableFunc(want, func(a, b *LoadError) int { return a.Line - b.Line })
			var wantFile []string
			for _, e := range want {
				wantFile = append(wantFile, e.Error())
			}
			_, err = New(Options{ContractsFS: fstest.MapFS{"a.yaml": {Data: []byte(src)}}})
			assert.Equal(t, wantFile, loadErrors(t, err), "in a file")
			if strings.Contains(c, "unknown:") || strings.Contains(c, "method: 7") {
				return // no Contract has these
			}
			if strings.Contains(c, "A: {}") || strings.Contains(c, "1e1001") {
				return // in code, read through the body parser: refused before the format
			}
			_, err = New(Options{Contracts: code})
			assert.Equal(t, wantCode, loadErrors(t, err), "in code")
		})
	}
}

// TestLoad_ByteOrderMark: a contract file saved with a byte order mark
// loads, JSON or YAML; its first key was "\ufeffendpoint", an unknown key.
func TestLoad_ByteOrderMark(t *testing.T) {
	g, err := New(Options{ContractsFS: fstest.MapFS{
		"a.yaml": {Data: []byte("\ufeffendpoint: /a\nmethod: POST\nschema: {type: object}\n")},
		"b.json": {Data: []byte("\ufeff{\"endpoint\": \"/b\", \"method\": \"POST\"}")},
	}})
	require.NoError(t, err)
	assert.Equal(t, int64(2), g.Metrics().ContractsLoaded)
}

// countingFS counts the opens of each file.
type countingFS struct {
	fs.FS
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens[name]++
	return c.FS.Open(name)
}

// TestLoad_ProblemsOfAFileParseItOnce: the problems found after the first
// step read and parse their file again for their lines once for the file,
// not once each: a file of 2,000 contracts with a broken invariant took
// almost three minutes to report.
func TestLoad_ProblemsOfAFileParseItOnce(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "---\nendpoint: /a%d\nmethod: POST\ninvariants:\n  - {expr: nope > 1, message: m}\n", i)
	}
	fsys := &countingFS{FS: fstest.MapFS{"a.yaml": {Data: []byte(b.String())}}, opens: map[string]int{}}
	_, err := New(Options{ContractsFS: fsys})
	errs := loadErrors(t, err)
	require.Len(t, errs, 50)
	assert.True(t, strings.HasPrefix(errs[49], "a.yaml:250: POST /a49: invariants[0]: "), errs[49])
	assert.Equal(t, 2, fsys.opens["a.yaml"], "read for its contracts, then once for the lines of its problems")
}

// TestLoad_HiddenFilesSkipped: names that start with "." are not contract
// files (the glob *.yaml leaves them out). Emacs's lock file .#a.yaml, a
// link to nowhere while a.yaml is being edited, failed New and every
// reload; a hidden copy of a contract was a duplicate route.
func TestLoad_HiddenFilesSkipped(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("endpoint: /a\nmethod: POST\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".a.yaml"), []byte("endpoint: /a\nmethod: POST\n"), 0o644))
	require.NoError(t, os.Symlink("someone@host.1234:1700000000", filepath.Join(dir, ".#a.yaml")))
	g, err := New(Options{ContractsDir: dir})
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Metrics().ContractsLoaded)
}

// TestLoad_ContractsFileNamedInUpperCase: orders.YAML was left out as
// README.md is, without a word, and its route ran unguarded. A name that
// is a contracts file's but for the letter case of its extension is a
// load error; a hidden one, or a subfolder, is still none.
func TestLoad_ContractsFileNamedInUpperCase(t *testing.T) {
	for _, name := range []string{"orders.YAML", "orders.Json", "orders.YML"} {
		_, err := New(Options{ContractsFS: fstest.MapFS{
			"a.yaml": {Data: []byte("endpoint: /a\nmethod: POST\n")},
			name:     {Data: []byte("endpoint: /orders\nmethod: POST\n")},
		}})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name+": a contracts file's name ends in .yaml, .yml or .json, in lower case", name)
	}
	g, err := New(Options{ContractsFS: fstest.MapFS{
		"a.yaml":         {Data: []byte("endpoint: /a\nmethod: POST\n")},
		".b.YAML":        {Data: []byte("x")},
		"README.md":      {Data: []byte("x")},
		"schemas/c.JSON": {Data: []byte("{}")},
	}})
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Metrics().ContractsLoaded)
}

// TestLoad_MisnamedFileHidesNoOtherProblem: a file named as a contracts
// file but for the letter case of its extension (orders.YAML) stopped the
// load of the folder there, so New (and lint) reported it alone: the
// problems of the folder's other contracts, and of a second such file,
// were not reported. Every one is, each at its file.
func TestLoad_MisnamedFileHidesNoOtherProblem(t *testing.T) {
	_, err := New(Options{ContractsDir: "c", ContractsFS: fstest.MapFS{
		"c/a.yaml":      {Data: []byte("endpoint: /a\nmethod: POST\ninvariant: []\n")},
		"c/orders.YAML": {Data: []byte("endpoint: /orders\nmethod: POST\n")},
		"c/users.Json":  {Data: []byte(`{"endpoint": "/users", "method": "POST"}`)},
	}})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, filepath.Join("c", "orders.YAML")+": a contracts file's name ends in .yaml, .yml or .json, in lower case")
	assert.Contains(t, msg, filepath.Join("c", "users.Json")+": a contracts file's name ends in .yaml, .yml or .json, in lower case")
	assert.Contains(t, msg, filepath.Join("c", "a.yaml")+`:3: POST /a: unknown key "invariant"`)
}

// TestLoad_YAMLNumbersAreExact: a schema's number in YAML is the number
// YAML 1.2 reads, exactly, as in JSON: minimum: .30000000000000000001 was
// rounded to 0.3, which let 0.3 through, and enum: [+12345678901234567890123]
// was the string "+12345678901234567890123".
func TestLoad_YAMLNumbersAreExact(t *testing.T) {
	g := mustNew(t, Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(
		"endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n" +
			"    x: {minimum: .30000000000000000001}\n    y: {enum: [+12345678901234567890123]}\n")}}})
	v := g.Check("POST", "/a", []byte(`{"x":0.3}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/x", "must be >= 0.30000000000000000001"}}, v.Details)
	assert.Nil(t, g.Check("POST", "/a", []byte(`{"x":0.30000000000000000001,"y":12345678901234567890123}`)))
}

// TestLoad_CRLFFileAsLF: a contracts file saved with CR LF line breaks
// checks requests as its LF twin does; a quoted pattern over two lines
// was "^a\nb$" in the CR LF file and "^a b$" in the LF one.
func TestLoad_CRLFFileAsLF(t *testing.T) {
	lf := "endpoint: /a\nmethod: POST\nschema:\n  properties:\n    x: {pattern: \"^a\n      b$\"}\n"
	for _, src := range []string{lf, strings.ReplaceAll(lf, "\n", "\r\n")} {
		g := mustNew(t, Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
		assert.Nil(t, g.Check("POST", "/a", []byte(`{"x":"a b"}`)), "%q", src)
		assert.NotNil(t, g.Check("POST", "/a", []byte(`{"x":"a\nb"}`)), "%q", src)
	}
}

// TestLoad_ErrorsAreOneLine: a problem at a key holding a line break is
// reported on one line, the place quoted; it was
// "schema/properties/a" and "b/pattern: …" on the next line.
func TestLoad_ErrorsAreOneLine(t *testing.T) {
	for src, want := range map[string]string{
		"endpoint: /a\nmethod: POST\nschema: {properties: {\"a\\nb\": {pattern: \"(\"}}}\n":                                              `c.yaml:3: POST /a: "schema/properties/a\nb/pattern": must be a valid regex`,
		"endpoint: /a\nmethod: POST\nschema: {$schema: 'http://json-schema.org/draft-06/schema#', properties: {\"a\\nb\": {type: 5}}}\n": `c.yaml:3: POST /a: "schema/properties/a\nb/type":`,
	} {
		_, err := New(Options{ContractsFS: fstest.MapFS{"c.yaml": {Data: []byte(src)}}})
		errs := loadErrors(t, err)
		require.NotEmpty(t, errs, src)
		for _, e := range errs {
			assert.NotContains(t, e, "\n", src)
		}
		assert.Contains(t, errs[0], want, src)
	}
}

// TestLoad_CodeTextsUTF8: a contract in code whose endpoint, method, mode
// or invariant is not UTF-8 is a load error naming it; its format was
// checked on its JSON form, where each such byte is U+FFFD, and the bytes
// kept (found by review: the endpoint "/caf\xe9" loaded, and its route
// label panicked the Prometheus collector on each request).
func TestLoad_CodeTextsUTF8(t *testing.T) {
	for _, c := range []struct {
		contract Contract
		want     string
	}{
		{Contract{Method: "GET", Endpoint: "/caf\xe9"}, `Options.Contracts[0]: "GET /caf\xe9": endpoint: "/caf\xe9" is not valid UTF-8`},
		{Contract{Method: "GET", Endpoint: "/c", Invariants: []Invariant{{Expr: "true", Message: "ok"}, {Expr: "true", Message: "bad \xff"}}},
			`invariants/1/message: "bad \xff" is not valid UTF-8`},
		{Contract{Method: "GET", Endpoint: "/c", Invariants: []Invariant{{Expr: "'\xff' == ''", Message: "m"}}},
			`invariants/0/expr: "'\xff' == ''" is not valid UTF-8`},
	} {
		_, err := New(Options{Logger: discard, Contracts: []Contract{c.contract}})
		assert.ErrorContains(t, err, c.want)
	}
	_, err := New(Options{Logger: discard, Contracts: []Contract{{Method: "GET", Endpoint: "/café"}}})
	assert.NoError(t, err)
}

// A schema file a $ref leads to that is no valid schema: the problem is
// in that file, at a pointer into it, not at that pointer in the
// contract's own schema (which has no properties/a at all): the error is
// at the $ref and names the file.
func TestLoad_InvalidSchemaInAFileReferredTo(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml":         {Data: []byte("endpoint: /a\nmethod: POST\nschema:\n  type: object\n  properties:\n    b: {$ref: schemas/b.json}\n")},
		"schemas/b.json": {Data: []byte("{\"type\": \"object\",\n \"properties\": {\"a\": {\"type\": \"strin\"}}}")},
	}
	_, err := New(Options{ContractsFS: fsys})
	assert.Equal(t, []string{
		`a.yaml:6: POST /a: schema: schemas/b.json: properties/a/type: invalid schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`,
	}, loadErrors(t, err))
	// In a contract in code alike.
	_, err = New(Options{ContractsFS: fsys, Contracts: []Contract{{Endpoint: "/c", Method: "POST", Schema: map[string]any{"$ref": "schemas/b.json"}}}})
	assert.Contains(t, loadErrors(t, err),
		`Options.Contracts[0]: POST /c: schema: schemas/b.json: properties/a/type: invalid schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`)
}
