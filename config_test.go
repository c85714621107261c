package contractguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clearConfigEnv unsets every CONTRACTGUARD_… variable for the test, so
// that the machine's environment cannot change its outcome.
func clearConfigEnv(t *testing.T) {
	t.Helper()
	for _, p := range configProperties {
		t.Setenv(envName(p.name), "") // restored after the test
		os.Unsetenv(envName(p.name))
	}
}

// writeConfig writes a configuration file into a new folder and returns
// its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "contractguard.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestLoadConfig_EveryProperty(t *testing.T) {
	clearConfigEnv(t)
	path := writeConfig(t, `
server:
  port: 8080            # another component's: left alone
contractguard:
  enabled: false
  contracts-dir: ./contracts/
  vulnerability-scan: true
  license-key: key-1
  learning-mode: true
  sink-protection: true
  metrics:
    enabled: true
  max-body-bytes: 4096
  require-contract: true
  max-depth: 12
`)
	o, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, Options{
		Disabled:          true,
		ContractsDir:      filepath.Join(filepath.Dir(path), "contracts"),
		VulnerabilityScan: true,
		LicenseKey:        "key-1",
		LearningMode:      true,
		SinkProtection:    true,
		Metrics:           true,
		MaxBodyBytes:      4096,
		RequireContract:   true,
		MaxDepth:          12,
	}, o)
}

func TestLoadConfig_Values(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		yaml string
		want Options
	}{
		{name: "enabled true leaves the guard on", yaml: "enabled: true", want: Options{}},
		{name: "booleans in any case", yaml: "vulnerability-scan: TRUE\nrequire-contract: 'false'", want: Options{VulnerabilityScan: true}},
		{name: "quoted number", yaml: `max-body-bytes: "2048"`, want: Options{MaxBodyBytes: 2048}},
		{name: "absolute contracts-dir kept", yaml: "contracts-dir: " + dir, want: Options{ContractsDir: dir}},
		{name: "empty tree", yaml: "", want: Options{}},
		{name: "a folded block", yaml: "license-key: >-\n    key\n    one", want: Options{LicenseKey: "key one"}},
		{name: "an anchor on a value", yaml: "max-depth: &depth 12", want: Options{MaxDepth: 12}},
		{name: "an alias of a value", yaml: "max-body-bytes: &n 64\nmax-depth: *n", want: Options{MaxBodyBytes: 64, MaxDepth: 64}},
		{name: "a hexadecimal number", yaml: "max-body-bytes: 0x800", want: Options{MaxBodyBytes: 2048}},
		{
			name: "placeholder from the environment",
			env:  map[string]string{"CG_TEST_KEY": "secret"},
			yaml: "license-key: ${CG_TEST_KEY}",
			want: Options{LicenseKey: "secret"},
		},
		{
			name: "placeholder default when the variable is not set",
			yaml: "max-body-bytes: ${CG_TEST_UNSET:8192}\nmetrics:\n  enabled: ${CG_TEST_UNSET:true}",
			want: Options{MaxBodyBytes: 8192, Metrics: true},
		},
		{
			name: "placeholder variable beats its default",
			env:  map[string]string{"CG_TEST_LIMIT": "100"},
			yaml: "max-body-bytes: ${CG_TEST_LIMIT:8192}",
			want: Options{MaxBodyBytes: 100},
		},
		{
			name: "placeholder inside a value, an empty default",
			env:  map[string]string{"CG_TEST_ENV": "prod"},
			yaml: "license-key: key-${CG_TEST_ENV}-${CG_TEST_UNSET:}1",
			want: Options{LicenseKey: "key-prod-1"},
		},
		{
			name: "an empty default: no licence key",
			yaml: "license-key: ${CONTRACTGUARD_LICENSE_KEY:}",
			want: Options{},
		},
		{
			name: "environment variable wins over the file",
			env:  map[string]string{"CONTRACTGUARD_MAX_BODY_BYTES": "200", "CONTRACTGUARD_METRICS_ENABLED": "false", "CONTRACTGUARD_ENABLED": "false"},
			yaml: "max-body-bytes: 100\nmetrics: {enabled: true}",
			want: Options{MaxBodyBytes: 200, Disabled: true},
		},
		{
			name: "environment variable for a property the file lacks",
			env:  map[string]string{"CONTRACTGUARD_LICENSE_KEY": "from-env", "CONTRACTGUARD_CONTRACTS_DIR": dir},
			yaml: "",
			want: Options{LicenseKey: "from-env", ContractsDir: dir},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearConfigEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			o, err := LoadConfig(writeConfig(t, "contractguard:\n"+indent(tc.yaml)))
			require.NoError(t, err)
			assert.Equal(t, tc.want, o)
		})
	}
}

// TestLoadConfig_AliasesFromElsewhere: a property may be an alias of an
// anchor set in another component's part of the file, a value or a
// mapping of properties.
func TestLoadConfig_AliasesFromElsewhere(t *testing.T) {
	clearConfigEnv(t)
	o, err := LoadConfig(writeConfig(t, "defaults:\n  on: &m {enabled: true}\n  depth: &d 12\n"+
		"contractguard:\n  metrics: *m\n  max-depth: *d\n"))
	require.NoError(t, err)
	assert.Equal(t, Options{Metrics: true, MaxDepth: 12}, o)

	// The whole tree an alias.
	o, err = LoadConfig(writeConfig(t, "shared: &cfg\n  max-depth: 7\ncontractguard: *cfg\n"))
	require.NoError(t, err)
	assert.Equal(t, Options{MaxDepth: 7}, o)

	// An alias is the last anchor of its name before it, as YAML reads it.
	o, err = LoadConfig(writeConfig(t, "a: &d 5\ncontractguard:\n  max-depth: *d\nb: &d 12\n"))
	require.NoError(t, err)
	assert.Equal(t, Options{MaxDepth: 5}, o)
	_, err = LoadConfig(writeConfig(t, "contractguard:\n  max-depth: *d\nb: &d 12\n"))
	require.ErrorContains(t, err, "contractguard.yaml:2")
	require.ErrorContains(t, err, "refers to no anchor before it")
}

func TestLoadConfig_Errors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		yaml string // the whole file
		want []string
	}{
		{
			name: "unknown property",
			yaml: "contractguard:\n  enabled: true\n  vulnerabilty-scan: true\n",
			want: []string{"contractguard.yaml:3: contractguard.vulnerabilty-scan: unknown property (known: enabled, contracts-dir, "},
		},
		{
			name: "unknown nested property",
			yaml: "contractguard:\n  metrics:\n    enable: true\n",
			want: []string{"contractguard.yaml:3: contractguard.metrics.enable: unknown property"},
		},
		{
			name: "a group given a value",
			yaml: "contractguard:\n  metrics: true\n",
			want: []string{"contractguard.yaml:2: contractguard.metrics: want a mapping of properties (metrics.enabled)"},
		},
		{
			name: "not a boolean",
			yaml: "contractguard:\n  enabled: yes please\n",
			want: []string{`contractguard.yaml:2: contractguard.enabled: want true or false, not "yes please"`},
		},
		{
			name: "not a number",
			yaml: "contractguard:\n  max-body-bytes: 1MB\n",
			want: []string{`contractguard.yaml:2: contractguard.max-body-bytes: want a whole number, 0 or more, not "1MB"`},
		},
		{
			name: "negative number",
			yaml: "contractguard:\n  max-depth: -1\n",
			want: []string{`contractguard.yaml:2: contractguard.max-depth: want a whole number, 0 or more, not "-1"`},
		},
		{
			// New refused it later, with no file:line (found by review).
			name: "a depth past the parser's",
			yaml: "contractguard:\n  max-depth: 20000\n",
			want: []string{`contractguard.yaml:2: contractguard.max-depth: want at most 10000, not "20000"`},
		},
		{
			name: "list for a value",
			yaml: "contractguard:\n  contracts-dir: [a, b]\n",
			want: []string{"contractguard.yaml:2: contractguard.contracts-dir: want a single value, not a list or a mapping"},
		},
		{
			name: "no value",
			yaml: "contractguard:\n  license-key:\n",
			want: []string{"contractguard.yaml:2: contractguard.license-key: needs a value"},
		},
		{
			name: "empty folder",
			yaml: "contractguard:\n  contracts-dir: ''\n",
			want: []string{"contractguard.yaml:2: contractguard.contracts-dir: needs a value"},
		},
		{
			name: "placeholder without a value or default",
			yaml: "contractguard:\n  license-key: ${CG_TEST_UNSET}\n",
			want: []string{"contractguard.yaml:2: contractguard.license-key: placeholder ${CG_TEST_UNSET}: the environment variable CG_TEST_UNSET is not set and there is no default"},
		},
		{
			name: "placeholder not closed",
			yaml: "contractguard:\n  license-key: ${CG_TEST\n",
			want: []string{`contractguard.yaml:2: contractguard.license-key: placeholder "${CG_TEST" has no closing }`},
		},
		{
			// ${A:${B}}: with A set, A's value and a stray } were the key
			// (found by review); with A unset, the text ${B}.
			name: "placeholder in a placeholder",
			env:  map[string]string{"CG_TEST_A": "k"},
			yaml: "contractguard:\n  license-key: ${CG_TEST_A:${CG_TEST_B}}\n",
			want: []string{`contractguard.yaml:2: contractguard.license-key: placeholder "${CG_TEST_A:${CG_TEST_B}" holds another: placeholders do not nest`},
		},
		{
			name: "placeholder default of the wrong kind",
			yaml: "contractguard:\n  max-depth: ${CG_TEST_UNSET:deep}\n",
			want: []string{`contractguard.yaml:2: contractguard.max-depth: want a whole number, 0 or more, not "deep"`},
		},
		{
			name: "bad environment value",
			env:  map[string]string{"CONTRACTGUARD_REQUIRE_CONTRACT": "sometimes"},
			yaml: "contractguard:\n  enabled: true\n",
			want: []string{`environment CONTRACTGUARD_REQUIRE_CONTRACT: contractguard.require-contract: want true or false, not "sometimes"`},
		},
		{
			name: "every problem reported",
			yaml: "contractguard:\n  enabled: 1\n  max-depth: x\n  extra: 2\n",
			want: []string{
				"contractguard.yaml:2: contractguard.enabled:",
				"contractguard.yaml:3: contractguard.max-depth:",
				"contractguard.yaml:4: contractguard.extra: unknown property",
			},
		},
		{
			// Spring's flat form at the top of the file, beside the tree:
			// not read, so the scan stayed off without a word.
			name: "a property written flat at the top",
			yaml: "contractguard:\n  enabled: true\ncontractguard.vulnerability-scan: true\n",
			want: []string{"contractguard.yaml:3: contractguard.vulnerability-scan: not read at the top of the file; write it under contractguard: (vulnerability-scan:)"},
		},
		{
			name: "only properties written flat",
			yaml: "contractguard.enabled: false\ncontractguard.metrics.enabled: true\n",
			want: []string{
				"contractguard.yaml:1: contractguard.enabled: not read at the top of the file; write it under contractguard: (enabled:)",
				"contractguard.yaml:2: contractguard.metrics.enabled: not read at the top of the file; write it under contractguard: (metrics.enabled:)",
			},
		},
		{
			name: "contractguard is not a mapping",
			yaml: "contractguard: on\n",
			want: []string{"contractguard.yaml:1: contractguard: want a mapping of properties"},
		},
		{
			name: "file is not a mapping",
			yaml: "- contractguard\n",
			want: []string{"contractguard.yaml:1: a configuration file is a mapping with a contractguard: key"},
		},
		{
			name: "a YAML error names its line once",
			yaml: "contractguard:\n  max-depth: .inf\n  max-body-bytes: *nope\n",
			want: []string{
				"contractguard.yaml:2: contractguard.max-depth: .inf is not a JSON number",
				"contractguard.yaml:3: contractguard.max-body-bytes: alias *nope refers to no anchor before it",
			},
		},
		{
			name: "YAML syntax error",
			yaml: "contractguard:\n  enabled: true\n    max-depth: 3\n",
			want: []string{"contractguard.yaml:2: mapping value is not allowed in this context"}, // the line goccy/go-yaml names
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearConfigEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			path := writeConfig(t, tc.yaml)
			_, err := LoadConfig(path)
			require.Error(t, err)
			var errs []string
			for _, e := range unjoin(err) {
				var ce *ConfigError
				require.ErrorAs(t, e, &ce)
				errs = append(errs, e.Error())
			}
			require.Len(t, errs, len(tc.want), "%v", errs)
			for i, want := range tc.want {
				// Where is the file as given (or the environment variable).
				rel := strings.TrimPrefix(errs[i], filepath.Dir(path)+string(filepath.Separator))
				assert.True(t, strings.HasPrefix(rel, want), "%q does not start with %q", errs[i], want)
			}
		})
	}
}

func TestLoadConfig_MissingFile(t *testing.T) {
	clearConfigEnv(t)
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadConfig(path)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, path, ce.Where)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)
}

func TestLoadConfig_JSON(t *testing.T) {
	clearConfigEnv(t)
	path := writeConfig(t, `{"contractguard": {"enabled": true, "metrics": {"enabled": true}, "max-depth": 9}}`)
	o, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, Options{Metrics: true, MaxDepth: 9}, o)
}

func TestConfigFromEnv(t *testing.T) {
	clearConfigEnv(t)
	t.Setenv("CONTRACTGUARD_CONTRACTS_DIR", "testdata/contracts")
	t.Setenv("CONTRACTGUARD_VULNERABILITY_SCAN", "true")
	t.Setenv("CONTRACTGUARD_MAX_DEPTH", "20")
	o, err := ConfigFromEnv()
	require.NoError(t, err)
	assert.Equal(t, Options{ContractsDir: "testdata/contracts", VulnerabilityScan: true, MaxDepth: 20}, o)
	mustNew(t, o) // ready for New

	t.Setenv("CONTRACTGUARD_MAX_DEPTH", "twenty")
	_, err = ConfigFromEnv()
	assert.EqualError(t, err, `environment CONTRACTGUARD_MAX_DEPTH: contractguard.max-depth: want a whole number, 0 or more, not "twenty"`)
}

// The options LoadConfig returns start a guard over the contracts folder
// named relative to the configuration file, wherever the process runs.
func TestLoadConfig_StartsAGuard(t *testing.T) {
	clearConfigEnv(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "contracts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contracts", "a.yaml"),
		[]byte("endpoint: /a\nmethod: POST\nschema: {type: object, required: [x]}\n"), 0o644))
	path := filepath.Join(dir, "contractguard.yaml")
	require.NoError(t, os.WriteFile(path, []byte("contractguard:\n  contracts-dir: contracts\n  metrics: {enabled: true}\n"), 0o644))
	o, err := LoadConfig(path)
	require.NoError(t, err)
	g := mustNew(t, o)
	v := g.Check("POST", "/a", []byte(`{}`))
	require.NotNil(t, v)
	assert.Equal(t, []Detail{{"/x", "is required"}}, v.Details)
}

// indent puts two spaces before every line.
func indent(s string) string {
	if s == "" {
		return ""
	}
	out := "  "
	for _, c := range s {
		out += string(c)
		if c == '\n' {
			out += "  "
		}
	}
	return out + "\n"
}

// unjoin is the list of errors joined by errors.Join, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestLoadConfig_ServeProperties: the serve command's properties belong
// in the same file; LoadConfig checks them and keeps them out of Options.
func TestLoadConfig_ServeProperties(t *testing.T) {
	clearConfigEnv(t)
	o, err := LoadConfig(writeConfig(t, `
contractguard:
  max-depth: 9
  serve:
    upstream: http://127.0.0.1:3000
    listen: ":8080"
    admin-listen: off
    read-timeout: 30s
    max-header-bytes: 65536
    user-header: X-User
    watch: false
`))
	require.NoError(t, err)
	assert.Equal(t, Options{MaxDepth: 9}, o)

	_, err = LoadConfig(writeConfig(t, "contractguard:\n  serve:\n    upstrem: http://x\n    read-timeout: soon\n    upstream: ftp://x\n"))
	var msgs []string
	for _, e := range unjoin(err) {
		var ce *ConfigError
		require.ErrorAs(t, e, &ce)
		msgs = append(msgs, e.Error()[strings.LastIndex(e.Error(), "contractguard.yaml"):])
	}
	require.Len(t, msgs, 3, "%v", msgs)
	assert.True(t, strings.HasPrefix(msgs[0], "contractguard.yaml:3: contractguard.serve.upstrem: unknown property (known: "), msgs[0])
	assert.Equal(t, `contractguard.yaml:4: contractguard.serve.read-timeout: want a duration such as 30s, 1m or 250ms, 0 or more, not "soon"`, msgs[1])
	assert.Equal(t, `contractguard.yaml:5: contractguard.serve.upstream: want an absolute http:// or https:// URL, not "ftp://x"`, msgs[2])
}
