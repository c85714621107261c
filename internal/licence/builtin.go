package licence

import (
	"crypto/ed25519"
	"encoding/base64"
)

// BuiltIn holds the vendor's public keys, by key id: the keys a guard
// trusts. The vendor rotates its signing key by adding an id (keys signed
// with the old one stay valid until they expire) and retires one by
// removing it. Nothing changes it at run time; tests trust their own key
// pairs by passing their own [Keyring].
//
// Each entry is the standard base64 of the 32-byte Ed25519 public key, as
// "contractguard license keygen" prints it.
var BuiltIn = Keyring{
	// Generated on 2026-11-25 outside the repository; its private key was
	// discarded unused. A vendor issuing real keys adds its own pair's public
	// key under a new id.
	"cg-2026-1": publicKey("KQ3/elt4ULbg0utRHZVV0XkAfhSs5DxcJIjWbAM/wvw="),
}

// publicKey decodes a built-in key; a bad one is a build mistake, caught by
// the package's tests and by the first import.
func publicKey(s string) ed25519.PublicKey {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		panic("licence: built-in public key " + s + " is not 32 bytes of standard base64")
	}
	return b
}
