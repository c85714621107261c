package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/licence"
)

var binary string

// TestMain builds the real command once; the tests run it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "contractguard-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "contractguard")
	if out, err := build(binary).CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return result{exitCode(t, cmd), out.String(), errb.String()}
}

// exitCode runs cmd and returns its exit status; a command that cannot
// be run fails the test.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

func writeFiles(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

func TestLint_RepositoryContracts(t *testing.T) {
	dirs := []string{"../../examples/quickstart/contracts", "../../examples/typed/contracts", "../../testdata/contracts", "../../testdata/typed"}
	r := cli(t, "", append([]string{"lint"}, dirs...)...)
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	for _, d := range dirs {
		assert.Contains(t, r.stdout, "ok: "+d)
	}
}

func TestLint_BrokenContracts(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": "endpoint: /a\nmethod: POST\ninvariant:\n  - expr: 'true'\n    message: m\n",
		"b.yaml": "endpoint: /b\nmethod: POST\nschema:\n  type: object\n  properties:\n    n: {type: integr}\ninvariants:\n  - expr: request.body.m > 1\n    message: m\n",
		"c.json": "[{\"endpoint\": \"/c\", \"method\": \"GET\"},\n {\"endpoint\": \"/c\", \"method\": \"get\"}]",
		"d.yml":  "endpoint: /d\nmethod: [POST\n",
		"e.yaml": "endpoint: /e\nmethod: PUT\nschema: {type: object, properties: {n: {type: integer}}}\ninvariants:\n  - expr: request.body.nn > 1\n    message: m\n  - expr: request.body.n > 'x'\n    message: m\n",
	})
	r := cli(t, "", "lint", dir)
	assert.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	assert.Equal(t, []string{
		dir + "/a.yaml:3: POST /a: unknown key \"invariant\"",
		dir + `/b.yaml:6: POST /b: schema/properties/n/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`,
		dir + "/c.json:2: GET /c: a contract for GET /c is already defined at " + dir + "/c.json:1",
		dir + "/d.yml:2: sequence end token ']' not found",
		dir + "/e.yaml:5: PUT /e: invariants[0]: 1:13: undefined field 'nn'",
		dir + "/e.yaml:7: PUT /e: invariants[1]: 1:16: found no matching overload for '_>_' applied to '(int, string)'",
	}, lines)

	r = cli(t, "", "lint", "--format", "json", dir)
	assert.Equal(t, 1, r.code)
	var problems []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &problems), r.stdout)
	assert.Len(t, problems, 6)
	assert.Equal(t, map[string]any{"file": dir + "/a.yaml", "line": 3.0, "contract": "POST /a", "message": `unknown key "invariant"`}, problems[0])

	r = cli(t, "", "lint", "--format", "json", "../../testdata/contracts")
	assert.Equal(t, 0, r.code)
	assert.Equal(t, "[]\n", r.stdout)
}

// TestLint_LearningContractReadsTheLicenceKey: a contract in mode learn
// needs a licence key, and the error without one says to set
// CONTRACTGUARD_LICENSE_KEY, which lint and check did not read: every such
// contract failed them whatever was set.
func TestLint_LearningContractReadsTheLicenceKey(t *testing.T) {
	key := trustedKey(t, "test-lint", licence.FeatureLearningMode)
	dir := writeFiles(t, map[string]string{"a.yaml": "endpoint: /a\nmethod: POST\nmode: learn\nschema: {type: object}\n"})

	// In process: the key is trusted in this process alone (its binary
	// trusts the built-in keys only).
	run := func(cmd string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := 0
		switch cmd {
		case "lint":
			code = lint(args, &out, &errb)
		case "check":
			code = check(args, strings.NewReader(""), &out, &errb)
		}
		return code, out.String() + errb.String()
	}
	t.Setenv("CONTRACTGUARD_LICENSE_KEY", "")
	code, out := run("lint", dir)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "CONTRACTGUARD_LICENSE_KEY")
	code, out = run("check", "--contracts", dir, "/a", `[]`)
	assert.Equal(t, 2, code, out)

	t.Setenv("CONTRACTGUARD_LICENSE_KEY", key)
	code, out = run("lint", dir)
	assert.Equal(t, 0, code, out)
	code, out = run("check", "--contracts", dir, "/a", `[]`)
	assert.Equal(t, 0, code, out) // learning: reported, passed
	assert.Equal(t, "pass (mode learn would reject: SCHEMA_INVALID)\n", out, "what it would have been, not a bare pass")
}

// TestCheck_LearningModeUnmatched: with learning-mode and
// require-contract (--config), a request no contract matches is reported
// as NO_CONTRACT would block it, and passes; check printed "pass (mode
// learn would reject: NO_CONTRACT)", --expect pass held and --expect
// unmatched failed, though no contract matched: a typo in a contract's
// endpoint passed CI.
func TestCheck_LearningModeUnmatched(t *testing.T) {
	key := trustedKey(t, "test-check-learn", licence.FeatureLearningMode)
	t.Setenv("CONTRACTGUARD_LICENSE_KEY", key)
	dir := writeFiles(t, map[string]string{
		"contracts/c.yaml":   "endpoint: /a\nmethod: POST\n",
		"contractguard.yaml": "contractguard:\n  contracts-dir: contracts\n  require-contract: true\n  learning-mode: true\n",
	})
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := check(append([]string{"--config", filepath.Join(dir, "contractguard.yaml")}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	code, out := run("--expect", "unmatched", "/b", `{}`)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "pass (no contract matches POST /b)\n", out)
	code, out = run("--expect", "pass", "/b", `{}`)
	assert.Equal(t, 1, code, "no contract matched: not a pass: %s", out)
	code, out = run("--expect", "pass", "/a", `{}`)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "pass\n", out)
}

// TestCheck_Config: check ran with the library's defaults whatever the
// service sets, so --expect VULNERABILITY_DETECTED or NO_CONTRACT could
// never hold (the help says "exactly as its middleware would"). With
// --config it has the service's settings, from the file and the
// environment; --contracts wins over the file's contracts-dir; a file
// that disables the guard, or names no contracts, is an error.
func TestCheck_Config(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"contracts/c.yaml":   "endpoint: /notes\nmethod: POST\nschema: {type: object, properties: {text: {type: string}}}\n",
		"other/c.yaml":       "endpoint: /other\nmethod: POST\n",
		"contractguard.yaml": "contractguard:\n  contracts-dir: contracts\n  vulnerability-scan: true\n  require-contract: true\n",
		"off.yaml":           "contractguard:\n  enabled: false\n  contracts-dir: contracts\n",
		"nodir.yaml":         "contractguard:\n  vulnerability-scan: true\n",
		"nl\noff.yaml":       "contractguard:\n  enabled: false\n  contracts-dir: contracts\n",
	})
	conf := filepath.Join(dir, "contractguard.yaml")
	xss := `{"text":"<script>alert(1)</script>"}`
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"the scan, by the file", []string{"--config", conf, "--expect", "VULNERABILITY_DETECTED", "/notes", xss}, 0, "403 Forbidden\n"},
		{"the defaults: no scan", []string{"--contracts", filepath.Join(dir, "contracts"), "--expect", "VULNERABILITY_DETECTED", "/notes", xss}, 1, "pass\n"},
		{"require-contract, by the file", []string{"--config", conf, "--expect", "NO_CONTRACT", "/elsewhere", `{}`}, 0, "403 Forbidden\n"},
		{"a clean body", []string{"--config", conf, "--expect", "pass", "/notes", `{"text":"hello"}`}, 0, "pass\n"},
		{"--contracts wins", []string{"--config", conf, "--contracts", filepath.Join(dir, "other"), "--expect", "NO_CONTRACT", "/notes", `{}`}, 0, "403 Forbidden\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", append([]string{"check"}, tt.args...)...)
			assert.Equal(t, tt.code, r.code, r.stdout+r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, tt.stdout), "got %q", r.stdout)
		})
	}
	t.Setenv("CONTRACTGUARD_VULNERABILITY_SCAN", "false")
	r := cli(t, "", "check", "--config", conf, "--expect", "pass", "/notes", xss)
	assert.Equal(t, 0, r.code, "the environment wins over the file, as in the service: %s%s", r.stdout, r.stderr)

	for file, want := range map[string]string{
		"off.yaml":   "disables the guard",
		"nodir.yaml": "give --contracts DIR",
		"none.yaml":  "none.yaml",
	} {
		r := cli(t, "", "check", "--config", filepath.Join(dir, file), "/notes", `{}`)
		assert.Equal(t, 2, r.code, "%s: %s", file, r.stdout)
		assert.Contains(t, r.stderr, want, file)
	}
	r = cli(t, "", "check", "--config", filepath.Join(dir, "nl\noff.yaml"), "/notes", `{}`)
	assert.Equal(t, 2, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line, its file's name quoted: %q", r.stderr)

	// The environment that disables the guard is named, not the file.
	t.Setenv("CONTRACTGUARD_ENABLED", "false")
	r = cli(t, "", "check", "--config", conf, "/notes", `{}`)
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "contractguard check: the environment disables the guard (CONTRACTGUARD_ENABLED=\"false\"): nothing would be checked\n", r.stderr)
}

func TestLint_MissingDirectory(t *testing.T) {
	r := cli(t, "", "lint", "no/such/dir")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "no/such/dir")
}

// TestLint_FolderWithoutContracts: New only warns of a folder that holds
// no contracts, and lint said "ok" of it: a CI job pointed at the wrong
// folder, or at contracts saved as .yml.txt, passed.
func TestLint_FolderWithoutContracts(t *testing.T) {
	dir := writeFiles(t, map[string]string{"README.md": "contracts go here\n", "schemas/a.json": `{"type":"object"}`})
	r := cli(t, "", "lint", dir)
	assert.Equal(t, 1, r.code, r.stdout)
	assert.Equal(t, dir+": no contracts found (*.yaml, *.yml, *.json)\n", r.stdout)
	r = cli(t, "", "lint", "--format", "json", dir)
	assert.Equal(t, 1, r.code)
	assert.JSONEq(t, `[{"file":"`+dir+`","message":"no contracts found (*.yaml, *.yml, *.json)"}]`, r.stdout)
}

func TestCheck(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"c.yaml": `endpoint: /orders/:id
method: PUT
schema:
  type: object
  required: [total]
  properties: {total: {type: number, minimum: 0}}
invariants:
  - expr: request.body.total <= 100
    message: at most 100
  - expr: "!has(request.query.dry) || request.headers['x-tenant'] == 'acme'"
    message: dry runs are for acme
`,
	})
	bodyFile := filepath.Join(t.TempDir(), "order.json")
	require.NoError(t, os.WriteFile(bodyFile, []byte(`{"total":5}`), 0o644))
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
	}{
		{"pass", "", []string{"-X", "PUT", "/orders/1", `{"total":5}`}, 0, "pass\n"},
		{"schema", "", []string{"-X", "put", "/orders/1", `{"total":-5}`}, 1,
			"400 Bad Request\n" + `{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID","details":[{"path":"/total","message":"must be >= 0"}]}` + "\n"},
		{"invariant", "", []string{"-X", "PUT", "/orders/1", `{"total":500}`}, 1,
			"422 Unprocessable Entity\n" + `{"error":"CONTRACT_VIOLATION","code":"INVARIANT_VIOLATED","details":[{"path":"","message":"at most 100"}]}` + "\n"},
		{"a query string", "", []string{"-X", "PUT", "/orders/1?dry=1", `{"total":5}`}, 1,
			"422 Unprocessable Entity\n" + `{"error":"CONTRACT_VIOLATION","code":"INVARIANT_VIOLATED","details":[{"path":"","message":"dry runs are for acme"}]}` + "\n"},
		{"a header", "", []string{"-X", "PUT", "-H", "X-Tenant: acme", "/orders/1?dry=1", `{"total":5}`}, 0, "pass\n"},
		{"a content type", "", []string{"-X", "PUT", "-H", "Content-Type: text/plain", "/orders/1", `{"total":5}`}, 1,
			"415 Unsupported Media Type\n" + `{"error":"CONTRACT_VIOLATION","code":"UNSUPPORTED_MEDIA_TYPE","details":[{"path":"","message":"Content-Type must be application/json"}]}` + "\n"},
		{"a body file", "", []string{"-X", "PUT", "/orders/1", "@" + bodyFile}, 0, "pass\n"},
		{"standard input", `{"total":101}`, []string{"-X", "PUT", "/orders/1", "-"}, 1,
			"422 Unprocessable Entity\n" + `{"error":"CONTRACT_VIOLATION","code":"INVARIANT_VIOLATED","details":[{"path":"","message":"at most 100"}]}` + "\n"},
		{"no body is null", "", []string{"-X", "PUT", "/orders/1"}, 1, "400 Bad Request\n"},
		{"no contract", "", []string{"/elsewhere?x=1#top"}, 0, "pass (no contract matches GET /elsewhere)\n"},
		{"no contract for the method", "", []string{"-X", "POST", "/orders/1", `{"total":5}`}, 0, "pass (no contract matches POST /orders/1)\n"},
		{"malformed", "", []string{"-X", "PUT", "/orders/1", `{"total":1,"total":2}`}, 1, "400 Bad Request\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.stdin, append([]string{"check", "--contracts", dir}, tt.args...)...)
			assert.Equal(t, tt.code, r.code, r.stdout+r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, tt.stdout), "got %q", r.stdout)
			assert.Empty(t, r.stderr)
		})
	}
}

func TestCheck_UsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"check"},
		{"check", "--contracts", "."},
		{"check", "--contracts", ".", "relative/path"},
		{"check", "--contracts", ".", "/a", "b", "c"},
		{"check", "--contracts", ".", "-H", "nocolon", "/a"},
		{"check", "--contracts", ".", "/a", "@/no/such/file"},
		{"check", "--contracts", "/no/such/dir", "/a"},
		{"check", "--bogus"},
	} {
		r := cli(t, "", args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r.stdout)
		assert.NotEmpty(t, r.stderr, "%v: errors go to stderr", args)
	}
}

func TestSchema(t *testing.T) {
	r := cli(t, "", "schema")
	assert.Equal(t, 0, r.code)
	want, err := os.ReadFile("../../schema/policy.v0.1.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), r.stdout)
	assert.Equal(t, 2, cli(t, "", "schema", "extra").code)
}

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"lint", "check", "schema"} {
		r := cli(t, "", cmd, "--help")
		assert.Equal(t, 0, r.code, cmd)
		assert.Contains(t, r.stdout, "Usage: contractguard "+cmd, cmd)
		assert.Contains(t, r.stdout, "Example", cmd)
		assert.Empty(t, r.stderr, cmd)
	}
	r := cli(t, "", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "contractguard lint")
	r = cli(t, "")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "Usage")
	r = cli(t, "", "frobnicate")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unknown command "frobnicate"`)
}

// build builds the command as it ships: one static binary, CGO off.
func build(out string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// TestCheck_Expect: a CI step that pins a rejection down passes only when
// the request is rejected as expected; contracts that do not load, or a
// body file that is missing, fail it (the shell's "! contractguard check"
// passed on those: any exit status but 0 did).
func TestCheck_Expect(t *testing.T) {
	dir := writeFiles(t, map[string]string{"c.yaml": `endpoint: /users
method: POST
schema: {type: object, properties: {age: {type: integer, minimum: 18}, name: {type: string}}}
invariants:
  - expr: "!has(request.body.name) || request.body.name != 'root'"
    message: not root
`})
	broken := writeFiles(t, map[string]string{"c.yaml": "endpoint: /users\n"})
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"a rejection expected", []string{"--expect", "reject", "/users", `{"age":3}`}, 0, "400 Bad Request\n"},
		{"its status", []string{"--expect", "400", "/users", `{"age":3}`}, 0, "400 Bad Request\n"},
		{"its code", []string{"--expect", "SCHEMA_INVALID", "/users", `{"age":3}`}, 0, "400 Bad Request\n"},
		{"another status", []string{"--expect", "422", "/users", `{"age":3}`}, 1, "400 Bad Request\n"},
		{"another code", []string{"--expect", "INVARIANT_VIOLATED", "/users", `{"age":3}`}, 1, "400 Bad Request\n"},
		{"a pass expected", []string{"--expect", "pass", "/users", `{"age":30}`}, 0, "pass\n"},
		{"a rejection expected, a pass", []string{"--expect", "reject", "/users", `{"age":30}`}, 1, "pass\n"},
		{"a pass expected, a rejection", []string{"--expect", "pass", "/users", `{"name":"root"}`}, 1, "422 Unprocessable Entity\n"},
		// A typo in a contract's endpoint leaves the request unchecked: not
		// the pass a CI step pins down.
		{"a pass expected, no contract", []string{"--expect", "pass", "/user", `{"age":30}`}, 1, "pass (no contract matches POST /user)\n"},
		{"no contract expected", []string{"--expect", "unmatched", "/user", `{"age":30}`}, 0, "pass (no contract matches POST /user)\n"},
		{"no contract expected, a pass", []string{"--expect", "unmatched", "/users", `{"age":30}`}, 1, "pass\n"},
		{"no contract expected, a rejection", []string{"--expect", "unmatched", "/users", `{"age":3}`}, 1, "400 Bad Request\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", append([]string{"check", "--contracts", dir}, tt.args...)...)
			assert.Equal(t, tt.code, r.code, r.stdout+r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, tt.stdout), "got %q", r.stdout)
		})
	}
	for _, args := range [][]string{
		{"--contracts", broken, "--expect", "reject", "/users", `{"age":3}`},
		{"--contracts", dir, "--expect", "reject", "/users", "@/no/such/file.json"},
		{"--contracts", dir, "--expect", "rejected", "/users", `{"age":3}`},
		{"--contracts", dir, "--expect", "999", "/users", `{"age":3}`},
	} {
		r := cli(t, "", append([]string{"check"}, args...)...)
		assert.Equal(t, 2, r.code, "%v: %s%s", args, r.stdout, r.stderr)
		assert.NotEmpty(t, r.stderr, "%v", args)
	}
}

// trustedKey is a licence key for features, signed by a key pair of the
// test's own whose public key this process trusts as id until the test
// ends (no private key is ever committed).
func trustedKey(t *testing.T, id string, features ...string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	licence.BuiltIn[id] = pub
	t.Cleanup(func() { delete(licence.BuiltIn, id) })
	key, err := licence.Issue(priv, licence.Licence{KeyID: id, Licensee: "Acme Ltd",
		IssuedAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second), Expires: time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second),
		Features: features})
	require.NoError(t, err)
	return key
}

// TestErrorsNameFilesOnOneLine: a file named with a line break (or a byte
// that is not UTF-8) that check's @FILE or a learn merge SOURCE cannot
// read is quoted, as the library's errors name files: each error is one
// line of the output, which scripts and CI logs read line by line.
func TestErrorsNameFilesOnOneLine(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": "endpoint: /a\nmethod: POST\n"})
	name := filepath.Join(t.TempDir(), "no\nsuch\xff.json")
	for _, tc := range []struct {
		args []string
		want string // the name as the error shows it
	}{
		{[]string{"check", "--contracts", dir, "/a", "@" + name}, strconv.Quote(name)},
		{[]string{"learn", "merge", "--out", filepath.Join(t.TempDir(), "out"), name}, strconv.Quote(name)},
		{[]string{"learn", "merge", "--out", filepath.Join(t.TempDir(), "out"), name + "*"}, strconv.Quote(name + "*")},
		{[]string{"license", "keygen", "--out", filepath.Join(name, "k.pem")}, strconv.Quote(filepath.Join(name, "k.pem"))},
		{[]string{"license", "issue", "--signing-key", name, "--key-id", "cg-test", "--licensee", "Acme", "--features", "learning-mode", "--expires", "2099-12-31"}, strconv.Quote(name)},
		{[]string{"license", "inspect", "--public-key", name, "k"}, strconv.Quote(name)},
	} {
		r := cli(t, "", tc.args...)
		assert.NotZero(t, r.code, "%q", tc.args)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		assert.Len(t, lines, 1, "%q: %s", tc.args, r.stderr)
		assert.Contains(t, r.stderr, tc.want, "%q", tc.args)
	}
}
