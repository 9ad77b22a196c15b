package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store/sqlite"
)

const cliToken = "v^1.1#i^1#f^0#r^1#I^3#p^3#t^Ul4xMF8zOkQ0" // shaped like eBay's

// runCLI runs sniped with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := Run(args, &out, &out)
	if strings.Contains(out.String(), cliToken) {
		t.Errorf("sniped %q printed the refresh token:\n%s", args, out.String())
	}
	return code, out.String()
}

func TestAccountLink(t *testing.T) {
	t.Setenv(secret.EnvVar, "")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(cliToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "account", "add", "--data", data, "--name", "alice"); code != 0 {
		t.Fatalf("account add = %d: %s", code, out)
	}
	code, out := runCLI(t, "account", "link", "--data", data, "--name", "alice", "--refresh-token-file", tokenFile,
		"--market-user", "alice_ebay", "--token-expires", "2028-05-01")
	if code != 0 || !strings.Contains(out, "linked to eBay user alice_ebay") || !strings.Contains(out, "created the secret key") {
		t.Fatalf("account link = %d: %s", code, out)
	}
	keyFile := filepath.Join(data, secret.DefaultFile)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret key file = %v, %v; want mode 0600", fi, err)
	}

	// What serve would do: the same key, the sandbox (the default).
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(data, storeFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, _, err := secret.Load(secret.Config{File: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	links, err := marketlink.New(marketlink.Config{Store: st, Key: k, Market: ebay.SandboxAPIURL, MarketName: "eBay"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := links.RefreshToken(ctx, "alice"); err != nil || got != cliToken {
		t.Errorf("RefreshToken after account link = %q, %v; want the file's token", got, err)
	}
	acct, _ := st.AccountByName(ctx, "alice")
	row, err := st.MarketLink(ctx, acct.ID)
	if err != nil || bytes.Contains(row.SealedToken, []byte(cliToken)) || row.User != "alice_ebay" ||
		!row.TokenExpires.Equal(time.Date(2028, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("stored link = %+v, %v", row, err)
	}
	db, _ := os.ReadFile(filepath.Join(data, storeFile))
	wal, _ := os.ReadFile(filepath.Join(data, storeFile+"-wal"))
	if bytes.Contains(db, []byte(cliToken)) || bytes.Contains(wal, []byte(cliToken)) {
		t.Errorf("the database file holds the plaintext token")
	}

	if code, out := runCLI(t, "account", "list", "--data", data); code != 0 || !strings.Contains(out, "alice_ebay until 2028-05-01") {
		t.Errorf("account list = %d:\n%s\nwant alice's eBay link", code, out)
	}

	// A second link reuses the key (no new one is announced).
	if code, out := runCLI(t, "account", "link", "--data", data, "--name", "alice", "--refresh-token-file", tokenFile); code != 0 || strings.Contains(out, "created the secret key") {
		t.Errorf("second account link = %d: %s", code, out)
	}

	if code, out := runCLI(t, "account", "unlink", "--data", data, "--name", "alice"); code != 0 || !strings.Contains(out, "unlinked") {
		t.Errorf("account unlink = %d: %s", code, out)
	}
	if code, out := runCLI(t, "account", "unlink", "--data", data, "--name", "alice"); code != 1 || !strings.Contains(out, "has no linked") {
		t.Errorf("account unlink (again) = %d: %s", code, out)
	}
	if code, out := runCLI(t, "account", "list", "--data", data); code != 0 || !strings.Contains(out, "EBAY LINK") || strings.Contains(out, "alice_ebay") {
		t.Errorf("account list after unlink = %d:\n%s", code, out)
	}
}

func TestAccountLinkErrors(t *testing.T) {
	t.Setenv(secret.EnvVar, "")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if code, out := runCLI(t, "account", "add", "--data", data, "--name", "alice"); code != 0 {
		t.Fatalf("account add = %d: %s", code, out)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("token", cliToken)
	empty := write("empty", "\n")
	twoWords := write("two", "abc def")
	shortKey := write("short.key", base64.StdEncoding.EncodeToString(make([]byte, 16)))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"no token file", []string{"--name", "alice"}, 2, "--refresh-token-file is required"},
		{"missing token file", []string{"--name", "alice", "--refresh-token-file", filepath.Join(dir, "nope")}, 1, "read --refresh-token-file"},
		{"empty token file", []string{"--name", "alice", "--refresh-token-file", empty}, 1, "is empty"},
		{"not one token", []string{"--name", "alice", "--refresh-token-file", twoWords}, 1, "only the refresh token"},
		{"bad expiry", []string{"--name", "alice", "--refresh-token-file", good, "--token-expires", "next year"}, 2, "--token-expires"},
		{"bad env", []string{"--name", "alice", "--refresh-token-file", good, "--ebay-env", "live"}, 2, "--ebay-env"},
		{"bad name", []string{"--name", "Alice!", "--refresh-token-file", good}, 2, "--name"},
		{"unknown account", []string{"--name", "bob", "--refresh-token-file", good}, 1, `no account named "bob"`},
		{"wrong-size key", []string{"--name", "alice", "--refresh-token-file", good, "--secret-key-file", shortKey}, 1, "16 bytes, want 32"},
		{"unreadable key", []string{"--name", "alice", "--refresh-token-file", good, "--secret-key-file", filepath.Join(dir, "nokey")}, 1, "read secret key file"},
	}
	for _, tt := range tests {
		code, out := runCLI(t, append([]string{"account", "link", "--data", data}, tt.args...)...)
		if code != tt.wantCode || !strings.Contains(out, tt.want) {
			t.Errorf("%s: account link = %d %q; want %d and %q", tt.name, code, out, tt.wantCode, tt.want)
		}
	}
	if code, out := runCLI(t, "account", "unlink", "--data", data, "--name", "bob"); code != 1 || !strings.Contains(out, `no account named "bob"`) {
		t.Errorf("unlink unknown account = %d %q", code, out)
	}
}

func TestAccountLinkSecretKeyFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	k := secret.Generate()
	t.Setenv(secret.EnvVar, strings.TrimSpace(k.Encode()))
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte(cliToken), 0o600)
	runCLI(t, "account", "add", "--data", data, "--name", "alice")
	if code, out := runCLI(t, "account", "link", "--data", data, "--name", "alice", "--refresh-token-file", token, "--ebay-env", "production"); code != 0 {
		t.Fatalf("account link = %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, secret.DefaultFile)); err == nil {
		t.Errorf("a key file was created although %s is set", secret.EnvVar)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(data, storeFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	links, _ := marketlink.New(marketlink.Config{Store: st, Key: k, Market: ebay.ProductionAPIURL})
	if got, err := links.RefreshToken(context.Background(), "alice"); err != nil || got != cliToken {
		t.Errorf("RefreshToken with the environment's key = %q, %v", got, err)
	}
}

// TestServeEBaySecretKey: serve --market ebay makes the secret key on first
// start, and stops with a clear message on a bad one.
func TestServeEBaySecretKey(t *testing.T) {
	t.Setenv(secret.EnvVar, "")
	t.Setenv(envEBaySecret, "sim-secret")
	dir := t.TempDir()
	short := filepath.Join(dir, "short.key")
	os.WriteFile(short, []byte(base64.StdEncoding.EncodeToString(make([]byte, 20))), 0o600)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"created on first start", nil, ""},
		{"wrong size", []string{"--secret-key-file", short}, "20 bytes, want 32"},
		{"missing", []string{"--secret-key-file", filepath.Join(dir, "none.key")}, "read secret key file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			c, err := parseServe(append([]string{"--market", "ebay", "--ebay-client-id", "app", "--data", data}, tt.args...), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(context.Background(), filepath.Join(data, storeFile))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var logs bytes.Buffer
			m, err := openEBay(c, slog.New(slog.NewTextHandler(&logs, nil)), st)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("openMarket = %v, want an error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || m.links == nil {
				t.Fatalf("openMarket = %v", err)
			}
			if fi, err := os.Stat(filepath.Join(data, secret.DefaultFile)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("key file = %v, %v; want it made with mode 0600", fi, err)
			}
			if !strings.Contains(logs.String(), "created the secret key") {
				t.Errorf("the log does not announce the new key:\n%s", logs.String())
			}
		})
	}
}

// TestLinkFlags: the command the link messages name makes a link for the
// environment serve runs on.
func TestLinkFlags(t *testing.T) {
	tests := []struct {
		env, apiURL, want string
	}{
		{"sandbox", "", ""},
		{"production", "", "--ebay-env production"},
		{"sandbox", "http://127.0.0.1:9090", "--ebay-api-url URL"},
	}
	for _, tt := range tests {
		api, err := ebayMarketID(tt.env, tt.apiURL)
		if err != nil {
			t.Fatal(err)
		}
		if got := linkFlags(api); got != tt.want {
			t.Errorf("linkFlags(%q) = %q, want %q", api, got, tt.want)
		}
	}
}
