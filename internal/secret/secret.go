// Package secret encrypts small secrets at rest (eBay refresh tokens) with
// AES-256-GCM under one server key, and derives purpose-bound sub-keys from
// it (e.g. the HMAC key that signs account-link states).
//
// The key is 32 random bytes, written as standard base64 (44 characters) in
// a file or in the environment. Load finds it: an explicit file, then the
// environment variable, then a file in the data folder, created (mode 0600)
// on first use. Every instance that shares a database must share the key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Size is the key length in bytes (AES-256).
const Size = 32

// EnvVar is the environment variable that may hold the key.
const EnvVar = "SNIPED_SECRET_KEY"

// DefaultFile is the key's file name inside the data folder.
const DefaultFile = "secret.key"

// version is the first byte of every sealed value, so that a later format
// (or key rotation) can tell old values apart.
const version byte = 1

// ErrDecrypt means a sealed value does not open under this key: it was
// sealed with another key, for another purpose, or it was altered.
var ErrDecrypt = errors.New("cannot decrypt: the value was sealed with a different secret key or was altered")

// Key is the server's secret key. Its methods are safe for concurrent use.
type Key struct {
	raw  []byte
	aead cipher.AEAD
}

// New makes a Key from 32 raw bytes.
func New(raw []byte) (*Key, error) {
	if len(raw) != Size {
		return nil, fmt.Errorf("the secret key is %d bytes, want %d", len(raw), Size)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Key{raw: append([]byte(nil), raw...), aead: aead}, nil
}

// Parse reads a key written as base64 of 32 bytes (surrounding white space
// ignored). Errors never repeat the text, which may be a real key.
func Parse(text string) (*Key, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil {
		return nil, errors.New("the secret key is not valid base64; make one with: head -c 32 /dev/urandom | base64")
	}
	if len(raw) != Size {
		return nil, fmt.Errorf("the secret key is %d bytes, want %d; make one with: head -c 32 /dev/urandom | base64", len(raw), Size)
	}
	return New(raw)
}

// Generate returns a new random key.
func Generate() *Key {
	raw := make([]byte, Size)
	if _, err := rand.Read(raw); err != nil {
		panic("secret: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	k, _ := New(raw) // the size is right by construction
	return k
}

// Encode writes the key as it is stored: base64 and a newline.
func (k *Key) Encode() string { return base64.StdEncoding.EncodeToString(k.raw) + "\n" }

// Source says where Load found (or put) the key.
type Source struct {
	// File is the key file's path; "" when the key came from the environment.
	File string
	// Created is true when Load generated the key just now.
	Created bool
	// Exposed is true when the key file is readable or writable by users
	// other than its owner.
	Exposed bool
}

// Config tells Load where to look.
type Config struct {
	// File is an explicit key file (--secret-key-file). When set it must
	// exist and hold a valid key; it is never created.
	File string
	// Env is the environment variable's value (SNIPED_SECRET_KEY), "" if unset.
	Env string
	// DataDir is the data folder: DefaultFile there is used, and created
	// when absent, if neither File nor Env is set.
	DataDir string
}

// Load finds the key: Config.File, then Config.Env, then the data folder's
// file, generating that on first use.
func Load(c Config) (*Key, Source, error) {
	switch {
	case c.File != "":
		k, exposed, err := readFile(c.File)
		return k, Source{File: c.File, Exposed: exposed}, err
	case c.Env != "":
		k, err := Parse(c.Env)
		if err != nil {
			return nil, Source{}, fmt.Errorf("%s: %w", EnvVar, err)
		}
		return k, Source{}, nil
	}
	if c.DataDir == "" {
		return nil, Source{}, errors.New("no secret key: pass --secret-key-file or set " + EnvVar)
	}
	path := filepath.Join(c.DataDir, DefaultFile)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, Source{}, fmt.Errorf("create data folder for the secret key: %w", err)
	}
	k := Generate()
	if err := createExclusive(path, []byte(k.Encode())); errors.Is(err, fs.ErrExist) {
		// Another process created it first: use that one.
		k, exposed, err := readFile(path)
		return k, Source{File: path, Exposed: exposed}, err
	} else if err != nil {
		return nil, Source{}, fmt.Errorf("create secret key file %s: %w", path, err)
	}
	return k, Source{File: path, Created: true}, nil
}

// createExclusive writes body to path only if path does not exist, so that
// two processes starting at once agree on one key and no reader ever sees
// a half-written file: the body goes to a temporary file that is then
// hard-linked into place (link fails if path exists).
func createExclusive(path string, body []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".secret-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.Write(body)
	err = errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close())
	if err != nil {
		return err
	}
	return os.Link(tmp, path)
}

// ReadFile reads a secret kept in a file, such as a key or a client
// secret, without surrounding white space, and reports whether users other
// than the file's owner may read or write it.
func ReadFile(path string) (text string, exposed bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(b)), fi.Mode().Perm()&0o077 != 0, nil
}

// readFile reads a key file; exposed as ReadFile's.
func readFile(path string) (k *Key, exposed bool, err error) {
	text, exposed, err := ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("read secret key file: %w", err)
	}
	if text == "" {
		return nil, exposed, fmt.Errorf("secret key file %s is empty", path)
	}
	if k, err = Parse(text); err != nil {
		return nil, exposed, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return k, exposed, nil
}

// Seal encrypts plaintext. aad (additional data) binds the result to its
// purpose and owner: Open succeeds only with the same aad.
func (k *Key) Seal(plaintext, aad []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: crypto/rand failed: " + err.Error())
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+k.aead.Overhead())
	out = append(out, version)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, plaintext, append([]byte{version}, aad...))
}

// Open decrypts a value from Seal with the same aad. Any mismatch is ErrDecrypt.
func (k *Key) Open(sealed, aad []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < 1+n+k.aead.Overhead() || sealed[0] != version {
		return nil, ErrDecrypt
	}
	out, err := k.aead.Open(nil, sealed[1:1+n], sealed[1+n:], append([]byte{version}, aad...))
	if err != nil {
		return nil, ErrDecrypt
	}
	return out, nil
}

// Derive returns a 32-byte sub-key for one purpose (HKDF-SHA256 with the
// purpose as info), so that no two uses ever share key material.
func (k *Key) Derive(purpose string) []byte {
	sub, err := hkdf.Key(sha256.New, k.raw, nil, purpose, Size)
	if err != nil {
		panic("secret: hkdf: " + err.Error()) // only for lengths above 255*32
	}
	return sub
}

// String never shows the key.
func (k *Key) String() string { return "secret.Key(REDACTED)" }

// GoString never shows the key.
func (k *Key) GoString() string { return k.String() }

// LogValue keeps the key out of structured logs.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.String()) }
