// Package sqlstore implements store.Store over database/sql with SQL that
// both SQLite (modernc.org/sqlite) and PostgreSQL (pgx) run unchanged. The
// engine packages (store/sqlite, store/postgres) own the driver, the DSN and
// the migrations; this package owns every query.
//
// Portable SQL rules kept here: $N placeholders, times as BIGINT Unix
// milliseconds, booleans as INTEGER 0/1, INSERT ... ON CONFLICT, RETURNING.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/store"
)

// Store is the shared implementation of store.Store. Writes go through
// w and reads through r; an engine may pass the same *sql.DB for both.
// SQLite passes a one-connection writer pool so that in-process writers
// queue in Go instead of sleeping in SQLite's busy handler.
type Store struct {
	w           *pool
	r           *pool
	importBatch int
	now         string
	clk         clock.Clock
	sync        func(ctx context.Context) error
	commits     *groupCommit[store.TransitionParams]
}

// Options tune a Store to its engine.
type Options struct {
	// ImportBatch is how many rows one INSERT of ImportSnipes carries
	// (default 1). Multi-row statements save a round trip per row on a
	// networked server, but SQLite looks $N parameters up linearly, so there
	// they get slower per row as they grow.
	ImportBatch int
	// Now is the SQL expression of the database's clock in Unix
	// milliseconds, which times the sniper leases. Empty means the
	// process's clock, passed as a parameter: right for SQLite, where one
	// process serves the database, and it lets tests run leases in a
	// testing/synctest bubble.
	Now string
	// Clock stamps events written inside snipe transitions (default clock.Real).
	Clock clock.Clock
	// Sync, when set, is called after a write that must survive power loss
	// (TransitionParams.Durable) has committed, and returns once it is on
	// disk: SQLite fsyncs its WAL, for many such writers at once. Nil when
	// every commit is durable already (PostgreSQL).
	Sync func(ctx context.Context) error
	// CommitsIgnoreCancel runs the group commits of Transition on a
	// context without cancellation. With a cancellable one, database/sql
	// and the driver each start a goroutine per statement to watch it
	// (modernc.org/sqlite's interrupt, database/sql's Rows and Tx), up to
	// eight per transition, which was about a tenth of the sniper's CPU (docs/performance.md, "Seventh look"). Right for a
	// local engine (SQLite): its statements take microseconds, and a lock
	// held by another process is waited for at most busy_timeout. Callers
	// still give up while their write waits in the queue; once a group
	// runs, its outcome decides, as with cancellation. A networked engine
	// keeps it (a statement may hang on the network).
	CommitsIgnoreCancel bool
	// CommitLinger is how long the group commit of Transition gathers
	// writes while the writer is busy (a group has just run and more
	// writes queued meanwhile); a write that finds the writer idle runs at
	// once. On SQLite, where every transaction writes each page it changed
	// to the WAL, 2 ms took a fifth off the sniper's CPU at 2,000 shots/s
	// (docs/performance.md, "Seventh look"). A write marked
	// TransitionParams.Urgent never waits. Zero: no wait.
	CommitLinger time.Duration
}

// NowPostgres is PostgreSQL's clock in Unix milliseconds: clock_timestamp()
// is the time of the statement itself, not of its transaction's start.
const NowPostgres = `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)`

// New returns a Store that writes through w and reads through r.
func New(w, r *sql.DB, o Options) *Store {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	s := &Store{w: newPool(w), importBatch: max(1, o.ImportBatch), now: o.Now, sync: o.Sync, clk: o.Clock}
	s.commits = &groupCommit[store.TransitionParams]{run: s.transitions, detach: o.CommitsIgnoreCancel, linger: o.CommitLinger, clk: o.Clock,
		urgent: func(p store.TransitionParams) bool { return p.Urgent }}
	s.r = s.w
	if r != w {
		s.r = newPool(r)
	}
	return s
}

// Close closes both pools.
func (s *Store) Close() error {
	err := s.w.close()
	if s.r != s.w {
		err = errors.Join(err, s.r.close())
	}
	return err
}

// queryer is what both *sql.DB and *sql.Tx offer for reads.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs fn in a write transaction, committing if it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // the error from fn is the one worth reporting
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// inStmtTx is inTx for transactions on the hot path: their statements come
// from the prepared-statement cache.
func (s *Store) inStmtTx(ctx context.Context, fn func(tx txStmts) error) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error { return fn(txStmts{tx: tx, p: s.w}) })
	s.w.prepareWanted(ctx)
	return err
}

// ms converts a time to stored Unix milliseconds; the zero time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts stored Unix milliseconds back to a UTC time; 0 is zero.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// b2i stores a boolean as 0/1: the column type both engines share.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// noLimit stands for "no limit" where the portable LIMIT needs a number.
const noLimit = math.MaxInt64

func limitOrAll(n int) int64 {
	if n <= 0 {
		return noLimit
	}
	return int64(n)
}

// nullID stores ID 0 as NULL for nullable foreign keys.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
