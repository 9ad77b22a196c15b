package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/postgres"
	"github.com/sniped/sniped/internal/store/storetest"
)

// dsnEnv names the variable that points the tests at a PostgreSQL server.
const dsnEnv = "SNIPED_TEST_POSTGRES_DSN"

// defaultDSN is a local server with trust authentication.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// connectTimeout keeps the skip quick when no server is running.
const connectTimeout = 3 * time.Second

// adminDB connects to the test server or skips the test.
func adminDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		dsn = defaultDSN
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("sql.Open(%s) = %v", dsnEnv, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), connectTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		t.Skipf("PostgreSQL not reachable (%v); set %s to a server's DSN to run these tests", err, dsnEnv)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// withSearchPath returns dsn with its search_path set to schema.
func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parse %s: %v", dsnEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// freshSchema creates an empty schema, dropped when the test ends, and
// returns dsn with its search_path pointing there, so parallel tests never
// see each other's rows.
func freshSchema(t *testing.T, admin *sql.DB, dsn string) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	schema := "sniped_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("CREATE SCHEMA = %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA = %v", err)
		}
	})
	return withSearchPath(t, dsn, schema)
}

// newStore opens a store in a fresh schema.
func newStore(t *testing.T, admin *sql.DB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), freshSchema(t, admin, dsn))
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	admin, dsn := adminDB(t)
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t, admin, dsn) })
}

func TestImportSnipes(t *testing.T) {
	t.Parallel()
	admin, dsn := adminDB(t)
	s := newStore(t, admin, dsn)
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, []byte("hash"), now)
	if err != nil {
		t.Fatal(err)
	}
	snipes := make([]store.Snipe, 1234) // two full batches and a partial one
	for i := range snipes {
		snipes[i] = store.Snipe{AccountID: a.ID, ItemNo: int64(i + 1), Bid: 500, Delay: 7, Enabled: true,
			Item: store.ItemSnapshot{End: now.Add(time.Hour + time.Duration(i)*time.Second)}, CreatedAt: now, UpdatedAt: now}
	}
	if err := s.ImportSnipes(ctx, snipes); err != nil {
		t.Fatalf("ImportSnipes = %v", err)
	}
	due, err := s.SnipesInState(ctx, store.StateScheduled, now.Add(2*time.Hour), 0)
	if err != nil || len(due) != len(snipes) {
		t.Fatalf("SnipesInState after import = %d snipes, %v; want %d", len(due), err, len(snipes))
	}
	if want := now.Add(time.Hour - 7*time.Second); !due[0].FireAt.Equal(want) {
		t.Errorf("first FireAt = %v, want %v", due[0].FireAt, want)
	}
}

// TestConcurrentFirstOpen: instances starting together on an empty schema
// all migrate it successfully (goose's advisory lock serialises them).
func TestConcurrentFirstOpen(t *testing.T) {
	t.Parallel()
	admin, dsn := adminDB(t)
	schemaDSN := freshSchema(t, admin, dsn)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), schemaDSN)
			if err != nil {
				t.Errorf("Open = %v", err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
}

func TestOpenWithoutSchema(t *testing.T) {
	t.Parallel()
	_, dsn := adminDB(t)
	if s, err := postgres.Open(t.Context(), withSearchPath(t, dsn, "sniped_no_such_schema")); err == nil {
		s.Close()
		t.Errorf("Open(search_path of a missing schema) = nil error, want one")
	}
}
