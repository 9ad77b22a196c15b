package secret_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sniped/sniped/internal/secret"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	k := secret.Generate()
	other := secret.Generate()
	plain := []byte("v^1.1#i^1#r^1#refresh-token")
	sealed := k.Seal(plain, []byte("account:1"))
	if bytes.Contains(sealed, plain) {
		t.Fatalf("sealed value contains the plaintext")
	}
	if again := k.Seal(plain, []byte("account:1")); bytes.Equal(again, sealed) {
		t.Errorf("two seals of one value are equal; want a fresh nonce each time")
	}
	got, err := k.Open(sealed, []byte("account:1"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v; want %q", got, err, plain)
	}
	flipped := append([]byte(nil), sealed...)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		name   string
		k      *secret.Key
		sealed []byte
		aad    string
	}{
		{"other key", other, sealed, "account:1"},
		{"other aad", k, sealed, "account:2"},
		{"altered", k, flipped, "account:1"},
		{"truncated", k, sealed[:10], "account:1"},
		{"empty", k, nil, "account:1"},
		{"unknown version", k, append([]byte{9}, sealed[1:]...), "account:1"},
	}
	for _, tt := range tests {
		if got, err := tt.k.Open(tt.sealed, []byte(tt.aad)); !errors.Is(err, secret.ErrDecrypt) {
			t.Errorf("%s: Open = %q, %v; want ErrDecrypt", tt.name, got, err)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	tests := []struct {
		in      string
		wantErr string
	}{
		{good, ""},
		{" " + good + "\n", ""},
		{base64.StdEncoding.EncodeToString(make([]byte, 16)), "16 bytes, want 32"},
		{base64.StdEncoding.EncodeToString(make([]byte, 33)), "33 bytes, want 32"},
		{"not base64!", "not valid base64"},
		{"", "0 bytes, want 32"},
	}
	for _, tt := range tests {
		_, err := secret.Parse(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Parse(%q) = %v, want a key", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.in, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), tt.in) && tt.in != "":
			t.Errorf("Parse error %q repeats the input", err)
		}
	}
}

func TestLoadCreatesThenReuses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	k1, src, err := secret.Load(secret.Config{DataDir: dir})
	if err != nil || !src.Created || src.File != filepath.Join(dir, secret.DefaultFile) {
		t.Fatalf("Load(empty dir) = %v, %+v; want a created key file", err, src)
	}
	fi, err := os.Stat(src.File)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	k2, src2, err := secret.Load(secret.Config{DataDir: dir})
	if err != nil || src2.Created || src2.Exposed {
		t.Fatalf("second Load = %v, %+v; want the existing key", err, src2)
	}
	if _, err := k2.Open(k1.Seal([]byte("x"), nil), nil); err != nil {
		t.Errorf("second Load returned a different key: %v", err)
	}
}

func TestLoadConcurrentStartsAgree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 8
	keys := make([]*secret.Key, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], _, errs[i] = secret.Load(secret.Config{DataDir: dir}) })
	}
	wg.Wait()
	sealed := keys[0].Seal([]byte("x"), nil)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Load #%d = %v", i, errs[i])
		}
		if _, err := keys[i].Open(sealed, nil); err != nil {
			t.Errorf("Load #%d returned a different key", i)
		}
	}
}

func TestLoadPrecedenceAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fileKey, envKey := secret.Generate(), secret.Generate()
	file := filepath.Join(dir, "k")
	if err := os.WriteFile(file, []byte(fileKey.Encode()), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte(base64.StdEncoding.EncodeToString(make([]byte, 8))), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)

	k, src, err := secret.Load(secret.Config{File: file, Env: strings.TrimSpace(envKey.Encode()), DataDir: dir})
	if err != nil || src.File != file {
		t.Fatalf("Load(file and env) = %v, %+v", err, src)
	}
	if _, err := k.Open(fileKey.Seal(nil, nil), nil); err != nil {
		t.Errorf("Load(file and env) did not use the file")
	}
	k, src, err = secret.Load(secret.Config{Env: envKey.Encode(), DataDir: dir})
	if err != nil || src.File != "" {
		t.Fatalf("Load(env) = %v, %+v", err, src)
	}
	if _, err := k.Open(envKey.Seal(nil, nil), nil); err != nil {
		t.Errorf("Load(env) did not use the environment")
	}
	if _, err := os.Stat(filepath.Join(dir, secret.DefaultFile)); err == nil {
		t.Errorf("Load(env) created a key file")
	}

	tests := []struct {
		name string
		c    secret.Config
		want string
	}{
		{"missing file", secret.Config{File: filepath.Join(dir, "nope")}, "read secret key file"},
		{"wrong size file", secret.Config{File: short}, "8 bytes, want 32"},
		{"empty file", secret.Config{File: empty}, "is empty"},
		{"bad env", secret.Config{Env: "abc"}, secret.EnvVar},
		{"nowhere", secret.Config{}, "--secret-key-file"},
	}
	for _, tt := range tests {
		if _, _, err := secret.Load(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Load = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestDerive(t *testing.T) {
	t.Parallel()
	k := secret.Generate()
	a, b := k.Derive("a"), k.Derive("b")
	if len(a) != 32 || bytes.Equal(a, b) || !bytes.Equal(a, k.Derive("a")) {
		t.Errorf("Derive: want 32 bytes, stable per purpose, distinct across purposes")
	}
	if bytes.Contains([]byte(k.Encode()), []byte(base64.StdEncoding.EncodeToString(a))) {
		t.Errorf("derived key equals the key")
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	k := secret.Generate()
	enc := strings.TrimSpace(k.Encode())
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "key", k)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k), logs.String()} {
		if strings.Contains(s, enc) || !strings.Contains(s, "REDACTED") {
			t.Errorf("printed key = %q, want REDACTED", s)
		}
	}
}

func TestLoadReportsExposedFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(file, []byte(secret.Generate().Encode()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, src, err := secret.Load(secret.Config{File: file}); err != nil || !src.Exposed {
		t.Errorf("Load(0644 file) = %+v, %v; want Exposed", src, err)
	}
	os.Chmod(file, 0o600)
	if _, src, err := secret.Load(secret.Config{File: file}); err != nil || src.Exposed {
		t.Errorf("Load(0600 file) = %+v, %v; want not Exposed", src, err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, body string
		perm       os.FileMode
		want       string
		exposed    bool
	}{
		{"private", " s3cret\n", 0o600, "s3cret", false},
		{"group-readable", "s3cret", 0o640, "s3cret", true},
	}
	for _, tt := range tests {
		file := filepath.Join(dir, tt.name)
		if err := os.WriteFile(file, []byte(tt.body), tt.perm); err != nil {
			t.Fatal(err)
		}
		os.Chmod(file, tt.perm) // past the umask
		if got, exposed, err := secret.ReadFile(file); err != nil || got != tt.want || exposed != tt.exposed {
			t.Errorf("ReadFile(%s) = %q, %v, %v; want %q, %v", tt.name, got, exposed, err, tt.want, tt.exposed)
		}
	}
	if _, _, err := secret.ReadFile(filepath.Join(dir, "none")); err == nil {
		t.Errorf("ReadFile(missing) succeeded")
	}
}
