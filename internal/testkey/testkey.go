// Package testkey gives tests signing keys that cost nothing to make: an
// Ed25519 key derived from a name, the same key for the same name in every
// test and every process (a helper binary a test starts signs with the key
// the test trusts). They sign test fixtures only: anyone who knows the name
// can sign with the key.
package testkey

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"

	"github.com/mkrelease/mkrelease/provenance"
)

// Signer returns the signer of the key named name.
func Signer(name string) provenance.Signer {
	seed := sha256.Sum256([]byte("mkrelease test key " + name))
	return signer{ed25519.NewKeyFromSeed(seed[:])}
}

// signer signs with an Ed25519 key (pure Ed25519, as provenance verifies
// it).
type signer struct{ key ed25519.PrivateKey }

// Public returns the public key.
func (s signer) Public() crypto.PublicKey { return s.key.Public() }

// SignMessage signs message.
func (s signer) SignMessage(_ context.Context, message []byte) ([]byte, error) {
	return ed25519.Sign(s.key, message), nil
}
