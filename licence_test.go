package contractguard

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/licence"
)

// licenceNow is the time the licence tests run at.
var licenceNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// testVendor is a key pair the tests trust in place of the vendor's: made
// at run time, never written anywhere.
type testVendor struct {
	priv ed25519.PrivateKey
}

// trustTestVendor makes a key pair, trusts it under the key id "test-1"
// (and the clock at licenceNow) for the test, and returns it.
func trustTestVendor(t testing.TB) *testVendor {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	keys, clock := licenceKeys, licenceClock
	licenceKeys = licence.Keyring{"test-1": pub}
	licenceClock = func() time.Time { return licenceNow }
	t.Cleanup(func() { licenceKeys, licenceClock = keys, clock })
	return &testVendor{priv}
}

// key issues a licence key; edit changes the licence first.
func (v *testVendor) key(t testing.TB, edit ...func(*licence.Licence)) string {
	t.Helper()
	l := licence.Licence{KeyID: "test-1", Licensee: "Acme Ltd",
		IssuedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Expires:  time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC),
		Features: []string{licence.FeatureLearningMode, licence.FeatureSinkProtection}}
	for _, e := range edit {
		e(&l)
	}
	k, err := licence.Issue(v.priv, l)
	require.NoError(t, err)
	return k
}

// tamper changes the licensee inside a signed key, keeping its signature.
func tamper(t *testing.T, key string) string {
	t.Helper()
	parts := strings.Split(strings.TrimPrefix(key, licence.Prefix), ".")
	require.Len(t, parts, 2)
	payload, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	changed := bytes.Replace(payload, []byte("Acme Ltd"), []byte("Acme Inc"), 1)
	return licence.Prefix + base64.RawURLEncoding.EncodeToString(changed) + "." + parts[1]
}

// licenceOutcomes are the keys of every outcome, and New's one line for
// each with learning mode on.
func licenceOutcomes(t *testing.T) map[string]struct{ key, err string } {
	v := trustTestVendor(t)
	_, other, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	otherVendor := &testVendor{other}
	return map[string]struct{ key, err string }{
		"valid":   {v.key(t), ""},
		"missing": {"", "contractguard: learning-mode is a paid feature: no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)"},
		"malformed": {"cg1.not a key",
			"contractguard: learning-mode is a paid feature: licence key is malformed: it has ' ' at byte 7; a key is only A-Z a-z 0-9 - _ ."},
		"tampered payload": {tamper(t, v.key(t)),
			`contractguard: learning-mode is a paid feature: licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		"wrong signature": {otherVendor.key(t),
			`contractguard: learning-mode is a paid feature: licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		"unknown key id": {v.key(t, func(l *licence.Licence) { l.KeyID = "test-9" }),
			`contractguard: learning-mode is a paid feature: licence key is signed with key id "test-9", which this contractguard does not know (it knows test-1)`},
		"expired": {v.key(t, func(l *licence.Licence) {
			l.IssuedAt, l.Expires = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
		}),
			"contractguard: learning-mode is a paid feature: licence key expired on 2026-01-31"},
		"not entitled": {v.key(t, func(l *licence.Licence) { l.Features = []string{licence.FeatureSinkProtection} }),
			`contractguard: learning-mode is a paid feature: licence key for "Acme Ltd" covers sink-protection, not learning-mode`},
	}
}

// TestLicence_New: each outcome of a licence key, with learning mode on,
// through New: one line that names the feature and says why.
func TestLicence_New(t *testing.T) {
	for name, tc := range licenceOutcomes(t) {
		t.Run(name, func(t *testing.T) {
			g, err := New(Options{LearningMode: true, LicenseKey: tc.key, Logger: discard})
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, &LicenseState{Licensee: "Acme Ltd", KeyID: "test-1", Expires: "2027-12-31T23:59:59Z",
					Features: []string{"learning-mode", "sink-protection"}}, g.Metrics().License)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.err, err.Error())
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestLicence_LoadConfig: the same outcomes through the configuration
// file and the environment, as the Spring starter is set up.
func TestLicence_LoadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "contractguard.yaml")
	require.NoError(t, os.WriteFile(file, []byte("contractguard:\n  license-key: ${CONTRACTGUARD_TEST_KEY:}\n  learning-mode: ${CONTRACTGUARD_TEST_LEARN:false}\n"), 0o644))
	for name, tc := range licenceOutcomes(t) {
		t.Run(name, func(t *testing.T) {
			t.Setenv("CONTRACTGUARD_TEST_KEY", tc.key)
			t.Setenv("CONTRACTGUARD_TEST_LEARN", "true")
			o, err := LoadConfig(file)
			require.NoError(t, err)
			o.Logger = discard
			_, err = New(o)
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.err)
			}

			// The environment alone, as a container sets it.
			t.Setenv("CONTRACTGUARD_LICENSE_KEY", tc.key)
			t.Setenv("CONTRACTGUARD_LEARNING_MODE", "true")
			o, err = ConfigFromEnv()
			require.NoError(t, err)
			o.Logger = discard
			_, err = New(o)
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.err)
			}
		})
	}
}

// TestLicence_EveryFeatureNamed: both paid features on, a key for
// neither: a line each.
func TestLicence_EveryFeatureNamed(t *testing.T) {
	trustTestVendor(t)
	_, err := New(Options{LearningMode: true, SinkProtection: true, Logger: discard})
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "contractguard: learning-mode is a paid feature: no licence key given"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "contractguard: sink-protection is a paid feature: no licence key given"), lines[1])
}

// TestLicence_KeyWithoutPaidFeaturesIsChecked: a key given with no paid
// feature on is checked, and a broken one is a warning, not an error; a
// good one is in the metrics document, the key never is.
func TestLicence_KeyWithoutPaidFeaturesIsChecked(t *testing.T) {
	v := trustTestVendor(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	expired := v.key(t, func(l *licence.Licence) {
		l.IssuedAt, l.Expires = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
	})
	g, err := New(Options{LicenseKey: expired, Logger: log})
	require.NoError(t, err)
	assert.Contains(t, logs.String(), `level=WARN msg="contractguard: licence key expired on 2026-01-31 (no paid feature is on)"`)
	assert.Nil(t, g.Metrics().License)

	good := v.key(t)
	g, err = New(Options{LicenseKey: good, Metrics: true, Logger: log})
	require.NoError(t, err)
	w := send(g.MetricsHandler(), "GET", "/metrics", "")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	assert.Equal(t, map[string]any{"licensee": "Acme Ltd", "key_id": "test-1", "expires": "2027-12-31T23:59:59Z",
		"features": []any{"learning-mode", "sink-protection"}, "expired": false}, doc["license"])
	assert.NotContains(t, w.Body.String(), strings.Split(good, ".")[1][:16], "never the key")
}

// TestLicence_ExpiryWarning: from 14 days before its expiry, a key is
// warned about at start (and the guard starts); a key that expires while
// the service runs keeps its features.
func TestLicence_ExpiryWarning(t *testing.T) {
	v := trustTestVendor(t)
	for name, tc := range map[string]struct {
		expires time.Time
		warn    string
	}{
		"15 days": {licenceNow.Add(15 * 24 * time.Hour), ""},
		"14 days": {licenceNow.Add(14 * 24 * time.Hour),
			`level=WARN msg="contractguard: licence key for \"Acme Ltd\" expires on 2026-12-09, in 14 days: renew it, or a start after that fails for learning-mode, sink-protection"`},
		"1 day": {licenceNow.Add(24 * time.Hour),
			`level=WARN msg="contractguard: licence key for \"Acme Ltd\" expires on 2026-11-26, in 1 day: renew it, or a start after that fails for learning-mode, sink-protection"`},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			g, err := New(Options{LearningMode: true, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				LicenseKey: v.key(t, func(l *licence.Licence) { l.Expires = tc.expires.Truncate(time.Second) })})
			require.NoError(t, err)
			if tc.warn == "" {
				assert.NotContains(t, logs.String(), "WARN")
			} else {
				assert.Contains(t, logs.String(), tc.warn)
			}

			// Later, past the expiry: the features stay, a warning says so.
			logs.Reset()
			licenceClock = func() time.Time { return tc.expires.Add(time.Hour) }
			g.warnExpiry(licenceClock())
			assert.Contains(t, logs.String(), `expired on `+tc.expires.Format("2006-01-02")+`: learning-mode, sink-protection stay on until this service restarts`)
			assert.True(t, g.Metrics().License.Expired)
			assert.Nil(t, g.Check("POST", "/none", nil), "still running")
			licenceClock = func() time.Time { return licenceNow }
		})
	}
}

// TestLicence_GuardWithAKeyIsCollected: the timer of the expiry warnings
// does not keep a guard alive, nor all it loaded, until its key is about to
// expire: a service that builds a new guard on each configuration change
// must not keep every old one, and have each warn again.
func TestLicence_GuardWithAKeyIsCollected(t *testing.T) {
	v := trustTestVendor(t)
	g, err := New(Options{LicenseKey: v.key(t), Logger: discard})
	require.NoError(t, err)
	require.NotNil(t, g.Metrics().License)
	w := weak.Make(g)
	g = nil
	for i := 0; i < 10 && w.Value() != nil; i++ {
		runtime.GC()
	}
	assert.Nil(t, w.Value(), "a guard no longer used is collected")
}

// TestLicence_LearnContractNeedsTheLicence: a contract in mode learn is
// learning mode too: without a key that entitles it, it is a load error
// at the contract, in a file, in code and on a type.
func TestLicence_LearnContractNeedsTheLicence(t *testing.T) {
	v := trustTestVendor(t)
	files := mapFS(map[string]string{"a.yaml": "endpoint: /a\nmethod: POST\nmode: learn\n"})
	_, err := New(Options{ContractsFS: files, Logger: discard})
	require.Error(t, err)
	assert.Equal(t, "a.yaml:3: POST /a: mode: learn: learning-mode is a paid feature: no licence key given (set Options.LicenseKey, which LoadConfig and ConfigFromEnv read from CONTRACTGUARD_LICENSE_KEY)", err.Error())

	_, err = New(Options{Contracts: []Contract{{Endpoint: "/a", Method: "POST", Mode: "learn"}}, Logger: discard,
		LicenseKey: v.key(t, func(l *licence.Licence) { l.Features = []string{licence.FeatureSinkProtection} })})
	require.Error(t, err)
	assert.Equal(t, `Options.Contracts[0]: POST /a: mode: learn: learning-mode is a paid feature: licence key for "Acme Ltd" covers sink-protection, not learning-mode`, err.Error())

	g := mustNew(t, Options{Logger: discard})
	type Learnt struct {
		_ struct{} `cg:"mode=learn"`
		N int      `json:"n"`
	}
	_, err = NewHandler(g, func(w http.ResponseWriter, r *http.Request, in Learnt) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `contractguard.Learnt: cg:"mode=learn": learning-mode is a paid feature: no licence key given`)

	g, err = New(Options{ContractsFS: files, LicenseKey: v.key(t), Logger: discard})
	require.NoError(t, err)
	assert.Equal(t, []ContractInfo{{Method: "POST", Endpoint: "/a", Source: "a.yaml:1", Mode: ModeLearn}}, g.Contracts())
}

// TestLicence_DisabledChecksNoKey: a guard that is off runs no paid
// feature and checks no key, so that a service whose key expired starts
// with the guard off; on again, the same options fail.
func TestLicence_DisabledChecksNoKey(t *testing.T) {
	o := Options{LearningMode: true, SinkProtection: true, Disabled: true, Logger: discard}
	g, err := New(o)
	require.NoError(t, err)
	// Nor does it learn, or serve what it learned: learning is off.
	assert.Nil(t, g.Learned())
	w := httptest.NewRecorder()
	g.LearnedHandler().ServeHTTP(w, httptest.NewRequest("GET", "/learned", nil))
	assert.Equal(t, http.StatusNotFound, w.Code)
	o.Disabled = false
	_, err = New(o)
	assert.ErrorContains(t, err, "learning-mode is a paid feature")
}
