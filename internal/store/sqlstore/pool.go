package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the statement cache. Every query text here comes
// from a small fixed set (the variable ones vary only by filter, order and
// batch shape), so the bound is a safety net, not a working limit.
const maxCachedStmts = 512

// pool is a *sql.DB that prepares each query text once and reuses the
// statement. Re-parsing SQL on every call was about a fifth of the
// sniper's CPU at 2,000 shots/s (docs/performance.md).
type pool struct {
	db *sql.DB

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newPool(db *sql.DB) *pool { return &pool{db: db, stmts: map[string]*sql.Stmt{}} }

// stmt returns the cached statement for query, preparing it on first use.
// It returns nil when the cache is full or preparing fails, and the caller
// falls back to the unprepared call (which reports any real error). The
// lock is not held while preparing: preparing may wait for a connection,
// and a transaction holding one (cachedTx) looks the cache up.
func (p *pool) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.RLock()
	st, ok := p.stmts[query]
	full := len(p.stmts) >= maxCachedStmts
	p.mu.RUnlock()
	if ok {
		return st
	}
	if full {
		return nil
	}
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if have, ok := p.stmts[query]; ok {
		st.Close() // another caller prepared it first
		return have
	}
	if len(p.stmts) >= maxCachedStmts {
		st.Close()
		return nil
	}
	p.stmts[query] = st
	return st
}

// ExecContext runs a statement through the cache.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.db.ExecContext(ctx, query, args...)
}

// QueryContext runs a query through the cache.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query through the cache.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// close closes the cached statements and the database.
func (p *pool) close() error {
	p.mu.Lock()
	for q, st := range p.stmts {
		st.Close()
		delete(p.stmts, q)
	}
	p.mu.Unlock()
	return p.db.Close()
}

// execQueryer is what a transaction offers; *sql.Tx and cachedTx both
// satisfy it.
type execQueryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// cached returns query's statement if it is already prepared, without
// preparing it.
func (p *pool) cached(query string) *sql.Stmt {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.stmts[query]
}

// cachedTx runs a transaction's statements through the pool's statement
// cache: database/sql binds a prepared statement to the transaction's
// connection (preparing it there only once), so the SQL is not parsed
// again on every call; parsing was about 30% of addBid's CPU. A statement
// not cached yet runs unprepared and is noted in missed: preparing it
// through the pool now could wait for the connection this transaction
// holds (SQLite's writer pool has one), so prepareMissed does it after.
type cachedTx struct {
	tx     *sql.Tx
	p      *pool
	missed *[]string
}

func (t cachedTx) stmt(query string) *sql.Stmt {
	st := t.p.cached(query)
	if st == nil {
		*t.missed = append(*t.missed, query)
	}
	return st
}

func (t cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// inCachedTx is inTx with the statement cache (cachedTx); the statements
// it missed are prepared once the transaction has ended.
func (s *Store) inCachedTx(ctx context.Context, fn func(tx execQueryer) error) error {
	var missed []string
	err := s.inTx(ctx, func(tx *sql.Tx) error { return fn(cachedTx{tx: tx, p: s.w, missed: &missed}) })
	for _, q := range missed {
		s.w.stmt(ctx, q)
	}
	return err
}
