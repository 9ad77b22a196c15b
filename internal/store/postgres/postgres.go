// Package postgres is store.Store on PostgreSQL through pgx's database/sql
// driver, with the queries of package sqlstore and goose migrations run on
// open. It is for operators who already run PostgreSQL; the embedded SQLite
// store remains the default.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/crc64"
	"io/fs"
	"sync"

	_ "github.com/jackc/pgx/v5/stdlib" // registers driver "pgx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// maxConns bounds the pool; PostgreSQL's default max_connections is 100
// and every sniped process shares it.
const maxConns = 16

// The migration lock is polled every lockPollSeconds, lockPolls times.
const (
	lockPollSeconds = 1
	lockPolls       = 120
)

// importBatch rows per INSERT keep ImportSnipes off the per-row round trip
// (500 × 22 parameters stays under PostgreSQL's 65535).
const importBatch = 500

// Store is store.Store on PostgreSQL.
type Store struct {
	*sqlstore.Store
	db *sql.DB

	// The NOTIFY channel of snipe changes (changes.go), named once.
	chanOnce sync.Once
	chanName string
	chanErr  error
}

var _ store.Store = (*Store)(nil)

// Open connects with a pgx DSN (URL or key=value form) and migrates the
// database (in the DSN's search_path schema) to the latest schema.
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// PostgreSQL handles concurrent writers itself: one pool for both.
	return &Store{Store: sqlstore.New(db, db, sqlstore.Options{ImportBatch: importBatch, Now: sqlstore.NowPostgres}), db: db}, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	// A session advisory lock serialises instances migrating one schema at
	// once; keyed by the schema so that different schemas (tests, tenants)
	// never wait for each other.
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("current schema: %w", err)
	}
	if !schema.Valid {
		return errors.New("no schema to create tables in: check the search_path")
	}
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(crc64.Checksum([]byte("sniped migrations "+schema.String), crc64.MakeTable(crc64.ECMA))>>1)),
		lock.WithLockTimeout(lockPollSeconds, lockPolls))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker),
		// A missing lower-numbered migration (features landing out of
		// order) is applied rather than refused, as on SQLite.
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
