package cli

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store/sqlite"
)

func TestLeaseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		parts   int
		ttl     time.Duration
	}{
		{nil, false, 32, 6 * time.Second},
		{[]string{"--partitions", "8", "--lease-ttl", "10s"}, false, 8, 10 * time.Second},
		{[]string{"--partitions", "0"}, true, 0, 0},
		{[]string{"--lease-ttl", "2s"}, true, 0, 0},
	}
	for _, tt := range tests {
		c, err := parseServe(tt.args, io.Discard)
		if tt.wantErr {
			if !errors.Is(err, errUsage) {
				t.Errorf("parseServe(%q) error = %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil || c.lease.partitions != tt.parts || c.lease.ttl != tt.ttl {
			t.Errorf("parseServe(%q) = %+v, %v; want %d partitions, TTL %v", tt.args, c.lease, err, tt.parts, tt.ttl)
		}
	}
}

// TestSQLiteHoldsEverything: on SQLite the one instance takes every
// partition at once, and /healthz says it fires.
func TestSQLiteHoldsEverything(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := newLease(storeFlags{}, leaseFlags{partitions: 32, ttl: 6 * time.Second}, st, "127.0.0.1:8080", slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sniperHealth(m, true); !strings.HasPrefix(got, "sniper: standby (0 of 32") {
		t.Errorf("health before the first round = %q, want standby", got)
	}
	m.Tick(t.Context())
	if got := sniperHealth(m, true); !strings.HasPrefix(got, "sniper: firing (32 of 32 partitions valid, 32 held") {
		t.Errorf("health = %q, want firing with all 32", got)
	}
	if got := sniperHealth(m, false); got != "sniper: off\n" {
		t.Errorf("health with --sniper=false = %q", got)
	}
}
