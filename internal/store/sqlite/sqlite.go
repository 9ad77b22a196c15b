// Package sqlite is sniped's embedded store: store.Store on a SQLite file
// through the pure-Go modernc.org/sqlite driver, with the queries of
// package sqlstore and goose migrations run on open.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers driver "sqlite"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// commitLinger is sqlstore.Options.CommitLinger for SQLite. The sniper's
// transitions are written ahead of their shots (the firing mark, a second
// or more before the moment) or after them, so a wait of 2 ms under load
// delays no bid.
const commitLinger = 2 * time.Millisecond

// pragmas apply to every connection. WAL lets readers run beside the one
// writer; busy_timeout makes a second process (sniped account ... while
// sniped serve runs) wait instead of failing; foreign_keys enables the
// cascades; synchronous(NORMAL) is durable across process crashes in WAL
// mode, not across power loss: the writes that must survive that too are
// made durable by walSync (durable.go).
const pragmas = "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_pragma=synchronous(NORMAL)"

// DefaultCacheMiB is the writer connection's page cache limit when
// Options.CacheMiB is 0.
const DefaultCacheMiB = 64

// readerCacheKiB caps each reader connection's page cache. A reader's
// cache is discarded whenever it starts a read after a write (WAL mode),
// so under writes it holds one query's pages at most, and 256 KiB (about 60
// pages) holds the interior pages a query revisits. The cap matters beyond
// the reader: SQLite as modernc builds it keeps one page cache for the
// whole process (pcache1's unified group), bounded by the sum of every
// open connection's cache_size, not by each one's: a connection at its
// own cap takes the least recently used page of the group, often another
// connection's, so the busy writer's cache grows past its cap into the
// others' unused share. With SQLite's default 2 MB a reader it did so by
// about 400 KiB a minute for minutes 2–8 of the soak (docs/performance.md).
const readerCacheKiB = 256

// Options tune Open.
type Options struct {
	// CacheMiB caps the writer connection's page cache (default
	// DefaultCacheMiB); each reader connection keeps at most
	// readerCacheKiB. The cache is allocated as pages are touched and
	// kept up to the caps, outside the Go heap: it is most of the resident
	// memory a large store adds. The process's SQLite pages are bounded by
	// the sum of its connections' caps (see readerCacheKiB).
	CacheMiB int
}

// Store is store.Store on a SQLite file.
type Store struct {
	*sqlstore.Store
	wal *walSync
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path and migrates
// it to the latest schema. path must name a file: the writer and reader
// pools need to see one database.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opt Options) (*Store, error) {
	if opt.CacheMiB <= 0 {
		opt.CacheMiB = DefaultCacheMiB
	}
	if path == "" || path == ":memory:" {
		return nil, errors.New("sqlite: open: path must name a database file")
	}
	// Write transactions take the lock at BEGIN (immediate), so two writers
	// never deadlock upgrading read locks; within the process one writer
	// connection queues them in Go instead of in SQLite's busy sleeps. The
	// writer's page cache is raised from 2 MB to at most 64 MB (by default): index
	// maintenance on a large snipes table otherwise rereads pages from the
	// OS (measured: importing 200,000 snipes took 7.7 s with 2 MB, 3.7 s with 64 MB).
	w, err := sql.Open("sqlite", path+"?"+pragmas+"&_txlock=immediate&_pragma=cache_size(-"+strconv.Itoa(opt.CacheMiB*1024)+")")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)&_pragma=cache_size(-"+strconv.Itoa(readerCacheKiB)+")")
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	r.SetConnMaxIdleTime(0)
	wal := &walSync{path: path + "-wal"}
	return &Store{Store: sqlstore.New(w, r, sqlstore.Options{Sync: wal.sync, CommitsIgnoreCancel: true, CommitLinger: commitLinger}), wal: wal}, nil
}

// Sync returns once every write committed before the call survives power
// loss (store.Syncer): an fsync of the WAL, shared by concurrent callers.
func (s *Store) Sync(ctx context.Context) error { return s.wal.sync(ctx) }

var _ store.Syncer = (*Store)(nil)

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true),
		// Migrations are numbered by feature and may land out of order (a
		// database at 00004 later gets 00002): apply a missing lower one
		// rather than refuse. Each migration touches only its own tables.
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	// goose has no lock for SQLite: two processes opening a fresh file at
	// once may both see version 0, and the loser's CREATE TABLE fails once
	// the winner's migration has committed. Each migration commits with its
	// version row, so trying again finds it applied.
	for attempt := 1; ; attempt++ {
		_, err := p.Up(ctx)
		if err == nil {
			return nil
		}
		if attempt == migrateAttempts {
			return fmt.Errorf("migrate: %w", err)
		}
	}
}

// migrateAttempts bounds the retries of a migration that raced another
// process's.
const migrateAttempts = 3
