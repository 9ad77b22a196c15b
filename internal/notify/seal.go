package notify

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of the notify key: AES-256.
const KeySize = 32

// Key seals what a notification target needs in clear at delivery time
// (its URL, which may carry credentials, and its webhook signing secret).
// A hash would not do: the secret must stay usable for signing. The key
// lives in a file outside the database (LoadOrCreateKey), so a copy of the
// database alone reveals neither.
type Key struct{ aead cipher.AEAD }

// NewKey returns a Key from KeySize raw bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("notify key: want %d bytes, got %d", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("notify key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("notify key: %w", err)
	}
	return &Key{aead: aead}, nil
}

// LoadOrCreateKey reads the hex key at path, creating it (mode 0600) with
// fresh random bytes when it does not exist. Several instances on one
// database must share the file.
func LoadOrCreateKey(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, KeySize)
		rand.Read(raw)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("notify key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreateKey(path) // another process created it first
		}
		if err != nil {
			return nil, fmt.Errorf("notify key: %w", err)
		}
		_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
		if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
			return nil, fmt.Errorf("notify key %s: %w", path, err)
		}
		return NewKey(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("notify key: %w", err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("notify key %s: not hex: %w", path, err)
	}
	return NewKey(raw)
}

// seal encrypts plain, bound to aad (the owning account and the field), so
// a sealed value copied to another account's row does not open.
func (k *Key) seal(plain []byte, aad string) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	return k.aead.Seal(nonce, nonce, plain, []byte(aad))
}

// open decrypts a sealed value.
func (k *Key) open(sealed []byte, aad string) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], []byte(aad))
	if err != nil {
		return nil, errors.New("sealed value does not open with this server's notify key")
	}
	return plain, nil
}

func aad(accountID int64, field string) string {
	return fmt.Sprintf("sniped notifier %d %s", accountID, field)
}
