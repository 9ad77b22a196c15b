// Package key makes and checks account keys. Only a key's SHA-256 hash is
// stored; the plaintext is shown once when it is made.
package key

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Prefix starts every key so that a leaked key is recognisable in scanners.
const Prefix = "snp_"

// randomBytes is the key's entropy: 256 bits, above the 128-bit minimum.
const randomBytes = 32

// New returns a fresh key and its hash.
func New() (plaintext string, hash []byte) {
	b := make([]byte, randomBytes)
	if _, err := rand.Read(b); err != nil {
		panic("key: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	plaintext = Prefix + hex.EncodeToString(b)
	return plaintext, Hash(plaintext)
}

// Hash returns the SHA-256 of a key, as stored.
func Hash(plaintext string) []byte {
	h := sha256.Sum256([]byte(plaintext))
	return h[:]
}

// Equal compares two hashes in constant time.
func Equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
