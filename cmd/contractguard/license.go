package main

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/contractguard/contractguard/internal/failure"
	"github.com/contractguard/contractguard/internal/licence"
)

const licenseHelp = `Usage: contractguard license COMMAND [options]

Makes and reads contractguard licence keys (docs/licensing.md): offline,
Ed25519-signed lines of text that switch on the paid features.

Commands:
  keygen --out FILE        a new signing key pair (the vendor's)
  issue --signing-key FILE --key-id ID --licensee NAME --features LIST --expires DATE [--issued DATE]
                           a licence key, on standard output
  inspect [--public-key FILE] [KEY|-]
                           what a key holds, and whether it is valid here

Run "contractguard license COMMAND --help" for a command's options.
`

func license(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, licenseHelp)
		return 2
	}
	switch args[0] {
	case "keygen":
		return licenseKeygen(args[1:], stdout, stderr)
	case "issue":
		return licenseIssue(args[1:], stdout, stderr)
	case "inspect":
		return licenseInspect(args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, licenseHelp)
		return 0
	}
	fmt.Fprintf(stderr, "contractguard license: unknown command %q\n\n%s", args[0], licenseHelp)
	return 2
}

const keygenHelp = `Usage: contractguard license keygen --out FILE

Makes a new Ed25519 signing key pair. The private key goes to FILE (PKCS#8
PEM, mode 0600, never overwriting a file), the form
"openssl genpkey -algorithm ed25519" writes; the public key goes to standard
output (PEM), and a key id suggestion and the line to add to the built-in
keys to standard error. Keep the private key offline: whoever holds it can
issue keys.

Example:
  contractguard license keygen --out vendor-2027.pem > vendor-2027.pub

Options:
`

func licenseKeygen(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("license keygen", keygenHelp, stderr)
	out := fs.String("out", "", "the private key `FILE` to write (required)")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "contractguard license keygen: need --out FILE and no arguments")
		fs.Usage()
		return 2
	}
	if *out == "-" {
		// Read as standard output elsewhere; here it made a file named -.
		fmt.Fprintln(stderr, "contractguard license keygen: --out -: the private key goes to a file (mode 0600), never to standard output")
		return 2
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		fmt.Fprintf(stderr, "contractguard license keygen: %v\n", err)
		return 1
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		fmt.Fprintf(stderr, "contractguard license keygen: %v\n", err)
		return 1
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "contractguard license keygen: %v\n", failure.PrintablePath(err))
		return 1
	}
	err = pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		fmt.Fprintf(stderr, "contractguard license keygen: %v\n", failure.PrintablePath(err))
		return 1
	}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		fmt.Fprintf(stderr, "contractguard license keygen: %v\n", err)
		return 1
	}
	if err := pem.Encode(stdout, &pem.Block{Type: "PUBLIC KEY", Bytes: spki}); err != nil {
		// No one has the public key: the pair is unusable as made, and the
		// file would stop the same command from running again.
		os.Remove(*out)
		fmt.Fprintf(stderr, "contractguard license keygen: writing the public key to standard output: %v; %s removed\n", err, failure.Printable(*out))
		return 1
	}
	sum := sha256.Sum256(pub)
	id := fmt.Sprintf("cg-%d-%s", time.Now().UTC().Year(), hex.EncodeToString(sum[:3]))
	fmt.Fprintf(stderr, "contractguard license keygen: wrote the private key to %s (mode 0600); keep it offline\n", failure.Printable(*out))
	fmt.Fprintf(stderr, "key id suggestion: %s\n", id)
	fmt.Fprintf(stderr, "built-in entry (internal/licence/builtin.go): %q: publicKey(%q),\n", id, base64.StdEncoding.EncodeToString(pub))
	return 0
}

const issueHelp = `Usage: contractguard license issue --signing-key FILE --key-id ID --licensee NAME --features LIST --expires DATE [--issued DATE]

Signs a licence key and prints it on standard output, one line.

FILE is an Ed25519 private key, PKCS#8 PEM: "contractguard license keygen"
or "openssl genpkey -algorithm ed25519" makes one. ID names its public key
in the built-in keys; an ID that is built in with another public key is
refused. LIST is a comma-separated list of learning-mode, sink-protection.
DATE is a day (2027-12-31: --expires means its end, 23:59:59 UTC, --issued
its start) or an RFC 3339 time. --issued defaults to now.

It exits 0 when it printed a key, 2 when an option or the key file is
wrong, 1 when the key it made does not verify or cannot be written.

Example:
  contractguard license issue --signing-key vendor-2027.pem --key-id cg-2027-1 \
    --licensee 'Acme Ltd' --features learning-mode,sink-protection --expires 2027-12-31

Options:
`

func licenseIssue(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("license issue", issueHelp, stderr)
	keyFile := fs.String("signing-key", "", "the private key `FILE`, PKCS#8 PEM (required)")
	keyID := fs.String("key-id", "", "the key `ID` of its public key (required)")
	licensee := fs.String("licensee", "", "who the key is for (required)")
	features := fs.String("features", "", "the paid features, comma-separated `LIST` (required)")
	expires := fs.String("expires", "", "the last `DATE` the key is valid (required)")
	issued := fs.String("issued", "", "the `DATE` the key starts to be valid (default now)")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "contractguard license issue: "+format+"\n", args...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("takes no arguments, only options (see --help)")
	}
	for _, f := range []struct{ name, value string }{
		{"signing-key", *keyFile}, {"key-id", *keyID}, {"licensee", *licensee}, {"features", *features}, {"expires", *expires},
	} {
		if f.value == "" {
			return usage("--%s is required", f.name)
		}
	}
	l := licence.Licence{KeyID: *keyID, Licensee: *licensee}
	for _, f := range strings.Split(*features, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(licence.Features, f) {
			return usage("--features: %q is not a paid feature (they are %s)", f, strings.Join(licence.Features, ", "))
		}
		l.Features = append(l.Features, f)
	}
	var err error
	if l.Expires, err = parseDay(*expires, true); err != nil {
		return usage("--expires: %v", err)
	}
	l.IssuedAt = time.Now()
	if *issued != "" {
		if l.IssuedAt, err = parseDay(*issued, false); err != nil {
			return usage("--issued: %v", err)
		}
	}
	priv, err := readSigningKey(*keyFile, stderr)
	if err != nil {
		return usage("%v", err)
	}
	pub := priv.Public().(ed25519.PublicKey)
	builtIn, isBuiltIn := licence.BuiltIn[*keyID]
	if isBuiltIn && !builtIn.Equal(pub) {
		return usage("key id %q is built in with another public key: keys signed with %s would not verify", *keyID, failure.Printable(*keyFile))
	}
	key, err := licence.Issue(priv, l) // its errors are the options' (a date, a name)
	if err != nil {
		return usage("%s", strings.TrimPrefix(err.Error(), "licence: "))
	}
	// The key verifies with the signing key's own public key, or nothing is
	// printed.
	check, err := licence.Parse(key)
	if err == nil {
		_, err = licence.Verify(key, licence.Keyring{*keyID: pub}, check.IssuedAt)
	}
	if err != nil {
		fmt.Fprintf(stderr, "contractguard license issue: the key made does not verify: %v\n", err)
		return 1
	}
	if !isBuiltIn { // said of a key made, not before a refusal
		fmt.Fprintf(stderr, "contractguard license issue: note: key id %q is not built into this contractguard (it has %s): its keys verify where that id is added, or with inspect --public-key\n", *keyID, strings.Join(licence.BuiltIn.IDs(), ", "))
	}
	if _, err := fmt.Fprintln(stdout, key); err != nil {
		fmt.Fprintf(stderr, "contractguard license issue: writing the key to standard output: %v\n", err)
		return 1
	}
	return 0
}

// parseDay reads a day (2027-12-31: its end when end is set, else its
// start, in UTC) or an RFC 3339 time.
func parseDay(s string, end bool) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			return d.Add(24*time.Hour - time.Second), nil
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a day like 2027-12-31 or a time like 2027-12-31T23:59:59Z", s)
	}
	return t.UTC(), nil
}

// readSigningKey reads an Ed25519 private key from a PKCS#8 PEM file, and
// warns when others can read the file.
func readSigningKey(file string, stderr io.Writer) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, failure.PrintablePath(err)
	}
	name := failure.Printable(file) // as messages name it: one line
	if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "contractguard license issue: warning: %s is open to users other than its owner (mode %04o); chmod 600 it\n", name, fi.Mode().Perm())
	}
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return nil, fmt.Errorf("%s: not a PEM file; want an Ed25519 private key, PKCS#8 PEM (contractguard license keygen or openssl genpkey -algorithm ed25519 makes one)", name)
	case block.Type == "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("%s: the key is encrypted; write a decrypted copy with openssl pkey, and keep it offline", name)
	case block.Type != "PRIVATE KEY":
		return nil, fmt.Errorf("%s: its PEM block is %q; want an Ed25519 private key, PKCS#8 PEM (BEGIN PRIVATE KEY)", name, block.Type)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKCS#8 private key", name)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: %s, not an Ed25519 private key", name, kind(key))
	}
	return priv, nil
}

const inspectHelp = `Usage: contractguard license inspect [--public-key FILE] [KEY|-]

Prints what a licence key holds (licensee, key id, dates, features) and
whether it is valid here and now: against the public keys built into this
contractguard, or with --public-key against the Ed25519 public key in FILE
(PEM, as keygen prints it). It needs no private key and prints none.

KEY is the key itself, - standard input; without it, the environment
variable CONTRACTGUARD_LICENSE_KEY. It exits 0 if the key is valid, 1 if
not, 2 for a usage error.

Examples:
  contractguard license inspect
  contractguard license inspect --public-key vendor-2027.pub - < acme.key

Options:
`

func licenseInspect(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("license inspect", inspectHelp, stderr)
	pubFile := fs.String("public-key", "", "check against the public key in `FILE` instead of the built-in keys")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "contractguard license inspect: "+format+"\n", args...)
		return 2
	}
	var key, from string
	switch fs.NArg() {
	case 0:
		key, from = os.Getenv("CONTRACTGUARD_LICENSE_KEY"), "CONTRACTGUARD_LICENSE_KEY"
		if strings.TrimSpace(key) == "" {
			return usage("no key: give KEY, - for standard input, or set CONTRACTGUARD_LICENSE_KEY")
		}
	case 1:
		key, from = fs.Arg(0), "the argument"
		if key == "-" {
			const most = 4 * licence.MaxKeyLen // room for line breaks and spaces around a key
			b, err := io.ReadAll(io.LimitReader(stdin, most+1))
			if err != nil {
				return usage("reading standard input: %v", err)
			}
			if len(b) > most {
				// Read no further: its length is not known, only that no
				// key is that long.
				return usage("standard input holds more than %d bytes; a key is at most %d", most, licence.MaxKeyLen)
			}
			key, from = string(b), "standard input"
		}
	default:
		return usage("takes at most one KEY")
	}
	if strings.TrimSpace(key) == "" { // as for an empty CONTRACTGUARD_LICENSE_KEY
		return usage("no key in %s", from)
	}
	keys, against := licence.BuiltIn, "the built-in keys ("+strings.Join(licence.BuiltIn.IDs(), ", ")+")"
	var pub ed25519.PublicKey
	if *pubFile != "" {
		var err error
		if pub, err = readPublicKey(*pubFile); err != nil {
			return usage("--public-key: %v", err)
		}
		against = "the public key in " + failure.Printable(*pubFile)
	}

	fmt.Fprintf(stdout, "key from:  %s\n", from)
	fmt.Fprintf(stdout, "checked:   against %s\n", against)
	l, err := licence.Parse(key)
	if err == nil {
		fmt.Fprintf(stdout, "licensee:  %s\n", l.Licensee)
		fmt.Fprintf(stdout, "key id:    %s\n", l.KeyID)
		fmt.Fprintf(stdout, "issued:    %s\n", l.IssuedAt.Format(time.RFC3339))
		fmt.Fprintf(stdout, "expires:   %s\n", l.Expires.Format(time.RFC3339))
		var names []string
		for _, f := range l.Features {
			if !slices.Contains(licence.Features, f) {
				f += " (unknown to this version)"
			}
			names = append(names, f)
		}
		fmt.Fprintf(stdout, "features:  %s\n", strings.Join(names, ", "))
		if pub != nil {
			keys = licence.Keyring{l.KeyID: pub}
		}
	}
	now := time.Now()
	l, err = licence.Verify(key, keys, now)
	if err != nil {
		fmt.Fprintf(stdout, "valid:     no: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "valid:     yes")
	if w := licence.ExpiryWarning(l, now); w != "" {
		fmt.Fprintf(stdout, "warning:   %s\n", w)
	}
	return 0
}

// readPublicKey reads an Ed25519 public key from a PEM file (SPKI, "BEGIN
// PUBLIC KEY", as keygen and "openssl pkey -pubout" write it). A private
// key is refused, and never echoed.
func readPublicKey(file string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, failure.PrintablePath(err)
	}
	name := failure.Printable(file) // as messages name it: one line
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return nil, fmt.Errorf("%s: not a PEM file; want an Ed25519 public key (BEGIN PUBLIC KEY), as keygen prints it", name)
	case strings.Contains(block.Type, "PRIVATE"):
		return nil, fmt.Errorf("%s holds a private key; give the public key (keygen printed it; openssl pkey -pubout makes it)", name)
	case block.Type != "PUBLIC KEY":
		return nil, fmt.Errorf("%s: its PEM block is %q; want an Ed25519 public key (BEGIN PUBLIC KEY)", name, block.Type)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKIX public key", name)
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: %s, not an Ed25519 public key", name, kind(key))
	}
	return pub, nil
}

// kind names the kind of a key that is not Ed25519, for a message.
func kind(key any) string {
	switch key.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "an RSA key"
	case *ecdsa.PrivateKey, *ecdsa.PublicKey:
		return "an ECDSA key"
	case *ecdh.PrivateKey, *ecdh.PublicKey:
		return "an X25519 key"
	}
	return "another kind of key"
}
