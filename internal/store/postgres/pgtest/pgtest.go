// Package pgtest gives tests an isolated PostgreSQL schema, or skips them
// when no server is reachable. Point it at a server with
// SNIPED_TEST_POSTGRES_DSN (default: a local server with trust auth).
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// DSNEnv names the variable that points the tests at a PostgreSQL server.
const DSNEnv = "SNIPED_TEST_POSTGRES_DSN"

// DefaultDSN is a local server with trust authentication.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// connectTimeout keeps the skip quick when no server is running.
const connectTimeout = 3 * time.Second

// Admin connects to the test server, or skips the test. It returns the
// connection (closed at cleanup) and the server's DSN.
func Admin(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := os.Getenv(DSNEnv)
	if dsn == "" {
		dsn = DefaultDSN
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("sql.Open(%s) = %v", DSNEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		t.Skipf("PostgreSQL not reachable (%v); set %s to a server's DSN to run these tests", err, DSNEnv)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// WithSearchPath returns dsn with its search_path set to schema.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parse %s: %v", DSNEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// FreshSchema creates an empty schema, dropped when the test ends, and
// returns dsn with its search_path pointing there, so parallel tests never
// see each other's rows.
func FreshSchema(t testing.TB, admin *sql.DB, dsn string) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	schema := "sniped_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("CREATE SCHEMA = %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA = %v", err)
		}
	})
	return WithSearchPath(t, dsn, schema)
}

// DSN returns the DSN of a fresh schema, or skips the test.
func DSN(t testing.TB) string {
	t.Helper()
	admin, dsn := Admin(t)
	return FreshSchema(t, admin, dsn)
}
