package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/licence"
)

// vendor is a signing key pair made by the command itself, in files.
type vendor struct{ dir, priv, pub string }

func keygen(t *testing.T) vendor {
	t.Helper()
	dir := t.TempDir()
	v := vendor{dir, filepath.Join(dir, "vendor.pem"), filepath.Join(dir, "vendor.pub")}
	r := cli(t, "", "license", "keygen", "--out", v.priv)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(v.pub, []byte(r.stdout), 0o644))
	return v
}

func (v vendor) issue(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"license", "issue", "--signing-key", v.priv, "--key-id", "test-1",
		"--licensee", "Acme Ltd", "--features", "learning-mode,sink-protection"}, extra...)
	r := cli(t, "", args...)
	require.Equal(t, 0, r.code, r.stderr)
	key := strings.TrimSuffix(r.stdout, "\n")
	require.NotContains(t, key, "\n", "one line")
	return key
}

// secrets are texts of the private key that must never be printed.
func (v vendor) secrets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(v.priv)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	seed := k.(ed25519.PrivateKey).Seed()
	body := base64.StdEncoding.EncodeToString(block.Bytes)
	return []string{"PRIVATE", body[len(body)-24:],
		base64.StdEncoding.EncodeToString(seed), base64.RawURLEncoding.EncodeToString(seed), string(seed[:8])}
}

// TestLicense_KeygenOutDash: "-" reads as standard output to a user of
// other commands; keygen wrote the private key to a file named "-".
// Refused, and nothing written.
func TestLicense_KeygenOutDash(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r := cli(t, "", "license", "keygen", "--out", "-")
	assert.Equal(t, 2, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "never to standard output")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestLicense_KeygenIssueInspect(t *testing.T) {
	v := keygen(t)
	fi, err := os.Stat(v.priv)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	pubPEM, err := os.ReadFile(v.pub)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(pubPEM), "-----BEGIN PUBLIC KEY-----\n"), string(pubPEM))

	key := v.issue(t, "--expires", "2099-12-31", "--issued", "2026-11-01")
	assert.True(t, strings.HasPrefix(key, "cg1."), key)

	// The key verifies in process with the public key keygen printed.
	block, _ := pem.Decode(pubPEM)
	pk, err := x509.ParsePKIXPublicKey(block.Bytes)
	require.NoError(t, err)
	l, err := licence.Verify(key, licence.Keyring{"test-1": pk.(ed25519.PublicKey)}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC), l.Expires)
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), l.IssuedAt)

	want := func(from string) string {
		return "key from:  " + from + "\n" +
			"checked:   against the public key in " + v.pub + "\n" +
			"licensee:  Acme Ltd\n" +
			"key id:    test-1\n" +
			"issued:    2026-11-01T00:00:00Z\n" +
			"expires:   2099-12-31T23:59:59Z\n" +
			"features:  learning-mode, sink-protection\n" +
			"valid:     yes\n"
	}
	var outputs []result
	r := cli(t, "", "license", "inspect", "--public-key", v.pub, key)
	assert.Equal(t, result{0, want("the argument"), ""}, r)
	outputs = append(outputs, r)

	r = cli(t, key+"\n", "license", "inspect", "--public-key", v.pub, "-")
	assert.Equal(t, result{0, want("standard input"), ""}, r)
	outputs = append(outputs, r)

	t.Setenv("CONTRACTGUARD_LICENSE_KEY", key)
	r = cli(t, "", "license", "inspect", "--public-key", v.pub)
	assert.Equal(t, result{0, want("CONTRACTGUARD_LICENSE_KEY"), ""}, r)
	outputs = append(outputs, r)

	// Against the built-in keys, the test pair's key id is unknown.
	r = cli(t, "", "license", "inspect", key)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "checked:   against the built-in keys (cg-2026-1)\n")
	assert.Contains(t, r.stdout, "licensee:  Acme Ltd\n")
	assert.True(t, strings.HasSuffix(r.stdout, "valid:     no: licence key is signed with key id \"test-1\", which this contractguard does not know (it knows cg-2026-1)\n"), r.stdout)
	outputs = append(outputs, r)

	// Given the private key instead of the public one, inspect refuses it
	// and echoes none of it.
	r = cli(t, "", "license", "inspect", "--public-key", v.priv, key)
	assert.Equal(t, result{2, "", "contractguard license inspect: --public-key: " + v.priv + " holds a private key; give the public key (keygen printed it; openssl pkey -pubout makes it)\n"}, r)
	outputs = append(outputs, r)

	for _, o := range outputs {
		for _, s := range v.secrets(t) {
			if s == "PRIVATE" {
				assert.NotContains(t, o.stdout, s)
				continue
			}
			assert.NotContains(t, o.stdout+o.stderr, s)
		}
	}
}

func TestLicense_InspectInvalid(t *testing.T) {
	v := keygen(t)
	other := keygen(t)
	valid := v.issue(t, "--expires", "2099-12-31")
	parts := strings.Split(valid, ".")
	expired := v.issue(t, "--issued", "2025-01-01", "--expires", "2025-12-31")
	byOther := other.issue(t, "--expires", "2099-12-31")
	tampered := strings.Split(v.issue(t, "--expires", "2098-12-31"), ".")[1]

	tests := []struct {
		name  string
		key   string
		valid string
	}{
		{"expired", expired, "licence key expired on 2025-12-31"},
		{"signed with another key", byOther, `licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"a tampered payload", "cg1." + tampered + "." + parts[2], `licence key signature does not verify with key id "test-1": the key was altered, or not issued by the vendor`},
		{"cut short", parts[0] + "." + parts[1], "licence key is malformed: want cg1.PAYLOAD.SIGNATURE, 3 parts separated by dots, not 2"},
		{"not a key", "hunter2-is-not-a-key", `licence key is malformed: it does not start with "cg1." (it starts with "hunt"…)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", "license", "inspect", "--public-key", v.pub, tt.key)
			assert.Equal(t, 1, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.True(t, strings.HasSuffix(r.stdout, "\nvalid:     no: "+tt.valid+"\n"), r.stdout)
		})
	}

	// A key that expires within 14 days is valid, with a warning.
	soon := time.Now().UTC().AddDate(0, 0, 3).Format(time.DateOnly)
	r := cli(t, "", "license", "inspect", "--public-key", v.pub, v.issue(t, "--expires", soon))
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "valid:     yes\nwarning:   licence key for \"Acme Ltd\" expires on "+soon+", in ")
}

func TestLicense_UsageErrors(t *testing.T) {
	v := keygen(t)
	t.Setenv("CONTRACTGUARD_LICENSE_KEY", "")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", []string{"license"}, 2, "Usage: contractguard license COMMAND"},
		{"an unknown command", []string{"license", "sign"}, 2, `contractguard license: unknown command "sign"`},
		{"keygen without --out", []string{"license", "keygen"}, 2, "contractguard license keygen: need --out FILE and no arguments"},
		{"keygen over a key", []string{"license", "keygen", "--out", v.priv}, 1, "contractguard license keygen: open " + v.priv + ": file exists"},
		{"inspect without a key", []string{"license", "inspect"}, 2, "contractguard license inspect: no key: give KEY, - for standard input, or set CONTRACTGUARD_LICENSE_KEY"},
		{"inspect with two keys", []string{"license", "inspect", "a", "b"}, 2, "contractguard license inspect: takes at most one KEY"},
		{"inspect with an empty key", []string{"license", "inspect", " "}, 2, "contractguard license inspect: no key in the argument"},
		{"inspect with empty standard input", []string{"license", "inspect", "-"}, 2, "contractguard license inspect: no key in standard input"},
		{"inspect with no public key file", []string{"license", "inspect", "--public-key", v.dir + "/none.pub", "cg1.a.b"}, 2, "contractguard license inspect: --public-key: open " + v.dir + "/none.pub: no such file or directory"},
		{"inspect with a key file in another form", []string{"license", "inspect", "--public-key", "license_test.go", "cg1.a.b"}, 2, "license_test.go: not a PEM file; want an Ed25519 public key (BEGIN PUBLIC KEY), as keygen prints it"},
		{"issue without --expires", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode"}, 2, "contractguard license issue: --expires is required"},
		{"issue without --signing-key", []string{"license", "issue", "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode", "--expires", "2027-01-01"}, 2, "contractguard license issue: --signing-key is required"},
		{"issue for an unknown feature", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode,metrics", "--expires", "2027-01-01"}, 2,
			`contractguard license issue: --features: "metrics" is not a paid feature (they are learning-mode, sink-protection)`},
		{"issue with a bad date", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode", "--expires", "31/12/2027"}, 2,
			`contractguard license issue: --expires: "31/12/2027" is not a day like 2027-12-31 or a time like 2027-12-31T23:59:59Z`},
		{"issue expiring before it is issued", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode", "--issued", "2027-01-02", "--expires", "2027-01-01"}, 2,
			"contractguard license issue: it expires before it is issued"},
		{"issue with a bad key id", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "Test 1", "--licensee", "A", "--features", "learning-mode", "--expires", "2027-01-01"}, 2,
			`contractguard license issue: key id "Test 1": want 1 to 32 of a-z 0-9 -`},
		{"issue under a built-in key id with another key", []string{"license", "issue", "--signing-key", v.priv, "--key-id", "cg-2026-1", "--licensee", "A", "--features", "learning-mode", "--expires", "2027-01-01"}, 2,
			`contractguard license issue: key id "cg-2026-1" is built in with another public key: keys signed with ` + v.priv + " would not verify"},
		{"issue with the public key", []string{"license", "issue", "--signing-key", v.pub, "--key-id", "test-1", "--licensee", "A", "--features", "learning-mode", "--expires", "2027-01-01"}, 2,
			"contractguard license issue: " + v.pub + `: its PEM block is "PUBLIC KEY"; want an Ed25519 private key, PKCS#8 PEM (BEGIN PRIVATE KEY)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", tt.args...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tt.stderr)
		})
	}
}

func TestLicense_SigningKeyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	require.NoError(t, err)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	require.NoError(t, err)

	tests := []struct {
		name, file string
		code       int
		stderr     string
	}{
		{"not PEM", write("raw.key", priv, 0o600), 2, "raw.key: not a PEM file; want an Ed25519 private key, PKCS#8 PEM"},
		{"an ECDSA key", write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), 0o600), 2, "ec.pem: an ECDSA key, not an Ed25519 private key"},
		{"encrypted", write("enc.pem", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), 0o600), 2, "enc.pem: the key is encrypted; write a decrypted copy with openssl pkey"},
		{"an OpenSSH key", write("id_ed25519", pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: []byte{1}}), 0o600), 2, `id_ed25519: its PEM block is "OPENSSH PRIVATE KEY"; want an Ed25519 private key, PKCS#8 PEM`},
		{"garbled PKCS#8", write("bad.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2}}), 0o600), 2, "bad.pem: not a PKCS#8 private key"},
		{"readable by others: a warning", write("open.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o644), 0, "open.pem is open to users other than its owner (mode 0644); chmod 600 it"},
		{"writable by its group: a warning", write("group.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o620), 0, "group.pem is open to users other than its owner (mode 0620); chmod 600 it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", "license", "issue", "--signing-key", tt.file, "--key-id", "test-1", "--licensee", "A", "--features", "sink-protection", "--expires", "2099-01-01")
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.stderr)
			assert.Equal(t, tt.code == 0, strings.HasPrefix(r.stdout, "cg1."), r.stdout)
		})
	}
}

// TestLicense_OpenSSLKeys issues with a key openssl made and inspects with
// the public key openssl wrote: the files are the standard ones.
func TestLicense_OpenSSLKeys(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed")
	}
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "k.pem"), filepath.Join(dir, "k.pub")
	for _, args := range [][]string{
		{"genpkey", "-algorithm", "ed25519", "-out", priv},
		{"pkey", "-in", priv, "-pubout", "-out", pub},
	} {
		out, err := exec.Command(openssl, args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	require.NoError(t, os.Chmod(priv, 0o600))
	v := vendor{dir, priv, pub}
	key := v.issue(t, "--expires", "2099-12-31")
	r := cli(t, "", "license", "inspect", "--public-key", pub, key)
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.True(t, strings.HasSuffix(r.stdout, "valid:     yes\n"), r.stdout)
}

func TestLicense_Help(t *testing.T) {
	for _, args := range [][]string{{"license", "--help"}, {"license", "keygen", "--help"}, {"license", "issue", "-h"}, {"license", "inspect", "--help"}} {
		r := cli(t, "", args...)
		assert.Equal(t, 0, r.code, args)
		assert.Contains(t, r.stdout, "Usage: contractguard license", args)
	}
	r := cli(t, "", "--help")
	assert.Contains(t, r.stdout, "contractguard license keygen|issue|inspect")
}

// TestLicense_OutputThatCannotBeWritten: issue's key and keygen's public
// key are their output; when standard output cannot take it (a full disk
// under "> acme.key"), the command says so and exits 1, where it exited 0
// with nothing written. keygen then removes the private key it made, whose
// public key no one has seen, so that the same command can be run again.
func TestLicense_OutputThatCannotBeWritten(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	run := func(args ...string) (int, string) {
		cmd := exec.Command(binary, args...)
		var errb strings.Builder
		cmd.Stdout, cmd.Stderr = full, &errb
		return exitCode(t, cmd), errb.String()
	}
	v := keygen(t)
	code, stderr := run("license", "issue", "--signing-key", v.priv, "--key-id", "test-1",
		"--licensee", "Acme Ltd", "--features", "learning-mode", "--expires", "2099-12-31")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "contractguard license issue: writing the key to standard output: ")

	out := filepath.Join(t.TempDir(), "vendor.pem")
	code, stderr = run("license", "keygen", "--out", out)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "contractguard license keygen: writing the public key to standard output: ")
	assert.NoFileExists(t, out, "removed: its public key was never written")
	assert.NotContains(t, stderr, "wrote the private key")
}

// TestLicense_IssueRefusedSaysOnlyWhy: a refused issue prints its error
// alone, not first the note about keys of a key id not built in ("its keys
// verify where that id is added"), which are never made.
func TestLicense_IssueRefusedSaysOnlyWhy(t *testing.T) {
	v := keygen(t)
	for _, args := range [][]string{
		{"--key-id", "Test_1", "--expires", "2027-01-01"},
		{"--key-id", "test-1", "--expires", "2027-01-01", "--issued", "2027-01-02"},
		{"--key-id", "test-1", "--expires", "2027-01-01", "--licensee", " Acme"},
	} {
		r := cli(t, "", append([]string{"license", "issue", "--signing-key", v.priv, "--licensee", "Acme", "--features", "learning-mode"}, args...)...)
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		assert.NotContains(t, r.stderr, "note:")
	}
	// Issued, the note is there.
	r := cli(t, "", "license", "issue", "--signing-key", v.priv, "--licensee", "Acme", "--features", "learning-mode", "--key-id", "test-1", "--expires", "2099-01-01")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `contractguard license issue: note: key id "test-1" is not built into this contractguard`)
}

// TestLicense_InspectLongStandardInput: inspect reads at most 16 KiB of
// standard input; more is refused as such, where it was cut there and
// reported as a key "16384 bytes" long whatever its length.
func TestLicense_InspectLongStandardInput(t *testing.T) {
	r := cli(t, strings.Repeat("A", 20000), "license", "inspect", "-")
	assert.Equal(t, result{2, "", "contractguard license inspect: standard input holds more than 16384 bytes; a key is at most 4096\n"}, r)
	r = cli(t, strings.Repeat("A", 16384), "license", "inspect", "-") // all of it read: its own length
	assert.Equal(t, 1, r.code, r.stderr)
	assert.True(t, strings.HasSuffix(r.stdout, "valid:     no: licence key is malformed: it is 16384 bytes, more than 4096\n"), r.stdout)
}
