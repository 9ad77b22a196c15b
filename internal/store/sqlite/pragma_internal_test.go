package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestPragmasDurable: every connection commits with synchronous=FULL, so a
// committed firing mark or placed bid survives power loss (in WAL mode,
// NORMAL survives only a process crash: the WAL is not fsynced per commit).
func TestPragmasDurable(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "p.db")+"?"+pragmas)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"foreign_keys", "1"},
	}
	for _, tt := range tests {
		var got string
		if err := db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", tt.pragma, err)
		}
		if got != tt.want {
			t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
}
