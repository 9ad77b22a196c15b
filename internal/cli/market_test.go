package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

func TestParseServeMarket(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		check   func(serveConfig) bool
	}{
		{nil, false, func(c serveConfig) bool { return c.market.kind == marketSim && c.market.env == "sandbox" }},
		{[]string{"--market", "ebay"}, false, func(c serveConfig) bool {
			api, auth := c.market.hosts()
			return c.market.kind == marketEBay && api == "https://api.sandbox.ebay.com" && auth == "https://auth.sandbox.ebay.com"
		}},
		{[]string{"--market", "ebay", "--ebay-env", "production"}, false, func(c serveConfig) bool {
			api, auth := c.market.hosts()
			return api == "https://api.ebay.com" && auth == "https://auth.ebay.com"
		}},
		{[]string{"--market", "ebay", "--ebay-api-url", "http://127.0.0.1:9090/", "--ebay-auth-url", "http://127.0.0.1:9090"}, false, func(c serveConfig) bool {
			api, auth := c.market.hosts()
			return api == "http://127.0.0.1:9090" && auth == "http://127.0.0.1:9090"
		}},
		{[]string{"--ebay-marketplace", "EBAY_GB"}, false, func(c serveConfig) bool { return c.market.marketplace == "EBAY_GB" }},
		{[]string{"--market", "amazon"}, true, nil},
		{[]string{"--ebay-env", "staging"}, true, nil},
		{[]string{"--ebay-api-url", "api.ebay.com"}, true, nil},
		{[]string{"--ebay-marketplace", "US"}, true, nil},
		{[]string{"--ebay-client-secret", "s3cret"}, true, nil}, // never a flag
	}
	for _, tt := range tests {
		c, err := parseServe(tt.args, io.Discard)
		if tt.wantErr {
			if !errors.Is(err, errUsage) {
				t.Errorf("parseServe(%q) error = %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil || !tt.check(c) {
			t.Errorf("parseServe(%q) = %+v, %v; not what the flags say", tt.args, c.market, err)
		}
	}
}

func TestOpenEBayCredentials(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		env     string
		wantErr string
	}{
		{"no credentials", []string{"--market", "ebay"}, "", "needs the eBay application's keys"},
		{"no client id", []string{"--market", "ebay"}, "s", "--ebay-client-id"},
		{"no secret", []string{"--market", "ebay", "--ebay-client-id", "app"}, "", "SNIPED_EBAY_CLIENT_SECRET"},
		{"secret twice", []string{"--market", "ebay", "--ebay-client-id", "app", "--ebay-client-secret-file", secretFile}, "s", "not both"},
		{"missing file", []string{"--market", "ebay", "--ebay-client-id", "app", "--ebay-client-secret-file", filepath.Join(dir, "none")}, "", "--ebay-client-secret-file"},
		{"env secret", []string{"--market", "ebay", "--ebay-client-id", "app"}, "s", ""},
		{"file secret", []string{"--market", "ebay", "--ebay-client-id", "app", "--ebay-client-secret-file", secretFile}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envEBaySecret, tt.env)
			c, err := parseServe(append(tt.args, "--data", dir), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(secret.EnvVar, "")
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sniped.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m, err := openEBay(c, log, st)
			if tt.wantErr == "" {
				if err != nil || m.ebay == nil || m.links == nil || !strings.Contains(m.describe, "sandbox") {
					t.Fatalf("openMarket = %v, %v; want the eBay sandbox adapter", m, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("openMarket = %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

// openEBay opens serve's marketplace as runServe does: keys first.
func openEBay(c serveConfig, log *slog.Logger, st store.Store) (*servedMarket, error) {
	keys, err := loadMarketKeys(c, log)
	if err != nil {
		return nil, err
	}
	return openMarket(context.Background(), marketParams{cfg: c, keys: keys, base: "http://x", clock: clock.Real{}, log: log, store: st})
}

// TestServeEBayKeysBeforeStore: a start with --market ebay that lacks a key
// stops before it creates the store, so the first start's admin key is
// printed only by a start that goes on to serve.
func TestServeEBayKeysBeforeStore(t *testing.T) {
	t.Setenv(envEBaySecret, "")
	t.Setenv(secret.EnvVar, "")
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"no credentials", nil},
		{"missing secret file", []string{"--ebay-client-id", "app", "--ebay-client-secret-file", filepath.Join(dir, "none")}},
		{"bad secret key", []string{"--ebay-client-id", "app", "--ebay-client-secret-file", writeFile(t, dir, "s", "x"), "--secret-key-file", writeFile(t, dir, "k", "short")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			var stderr strings.Builder
			args := append([]string{"serve", "--market", "ebay", "--addr", "127.0.0.1:0", "--data", data}, tt.args...)
			if code := Run(args, io.Discard, &stderr); code == 0 {
				t.Fatalf("serve %q exited 0, want a failure", args)
			}
			if _, err := os.Stat(filepath.Join(data, storeFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("serve %q made the store (%v) before failing", args, err)
			}
			if strings.Contains(stderr.String(), "created account") {
				t.Errorf("serve %q printed a first-start key before failing:\n%s", args, stderr.String())
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseMarketServe(t *testing.T) {
	c, err := parseMarketServe([]string{"--runame", "sniped-RuName=http://127.0.0.1:8080/market/callback", "--sim-items", "10"}, io.Discard)
	if err != nil || c.addr != DefaultMarketAddr || c.data != DefaultMarketData || c.runames["sniped-RuName"] != "http://127.0.0.1:8080/market/callback" || c.clientID != "sniped-sim" {
		t.Errorf("parseMarketServe = %+v, %v", c, err)
	}
	for _, args := range [][]string{{"--runame", "nourl"}, {"--runame", "x=127.0.0.1:8080/market/callback"}, {"--sim-bidders", "x"}, {"--sim-items", "0"}, {"--client-id", ""}, {"stray"}} {
		if _, err := parseMarketServe(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseMarketServe(%q) = %v, want a usage error", args, err)
		}
	}
	if err := runMarket(nil, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("market without a subcommand = %v, want a usage error", err)
	}
}

// TestEBayWarnsOfSimulatorData: --market ebay on a data folder the
// simulator used says that its snipes are on the simulator's item numbers.
func TestEBayWarnsOfSimulatorData(t *testing.T) {
	t.Setenv(envEBaySecret, "s")
	t.Setenv(secret.EnvVar, "")
	for _, used := range []bool{false, true} {
		data := t.TempDir()
		if used {
			writeFile(t, data, "sim.db", "")
		}
		c, err := parseServe([]string{"--market", "ebay", "--ebay-client-id", "app", "--data", data}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sqlite.Open(context.Background(), filepath.Join(data, storeFile))
		if err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		_, err = openEBay(c, slog.New(slog.NewTextHandler(&logs, nil)), st)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "used with --market sim"); got != used {
			t.Errorf("simulator data present %v: warned %v\n%s", used, got, logs.String())
		}
	}
}
