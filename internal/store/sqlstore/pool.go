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

	mu     sync.RWMutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool // asked for inside transactions, not prepared yet
}

func newPool(db *sql.DB) *pool { return &pool{db: db, stmts: map[string]*sql.Stmt{}} }

// stmt returns the cached statement for query, preparing it on first use.
// It returns nil when the cache is full or preparing fails, and the caller
// falls back to the unprepared call (which reports any real error).
func (p *pool) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.RLock()
	st, ok := p.stmts[query]
	p.mu.RUnlock()
	if ok {
		return st
	}
	if full := func() bool { p.mu.RLock(); defer p.mu.RUnlock(); return len(p.stmts) >= maxCachedStmts }(); full {
		return nil
	}
	// Prepare without holding mu: preparing waits for a connection, and a
	// transaction holding the only one (SQLite's writer) may itself need
	// mu to look its statements up (txStmts).
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if have, ok := p.stmts[query]; ok { // another caller prepared it meanwhile
		st.Close()
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

// txStmts is a transaction that reuses the pool's prepared statements
// (sql.Tx.StmtContext binds them to the transaction's connection), so
// statements run inside transactions are not parsed again each time. A
// statement not cached yet runs unprepared and is prepared after the
// transaction (preparing needs a connection, and SQLite's writer pool has
// only the one the transaction holds).
type txStmts struct {
	tx *sql.Tx
	p  *pool
}

// ExecContext runs a statement in the transaction.
func (t txStmts) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.p.cached(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query in the transaction.
func (t txStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.p.cached(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// cached returns query's prepared statement, or nil after noting that it
// is wanted (prepareWanted prepares it).
func (p *pool) cached(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.stmts[query]; ok {
		return st
	}
	if p.wanted == nil {
		p.wanted = map[string]bool{}
	}
	p.wanted[query] = true
	return nil
}

// prepareWanted prepares the statements transactions asked for; call it
// with no transaction open on this goroutine.
func (p *pool) prepareWanted(ctx context.Context) {
	p.mu.Lock()
	var qs []string
	for q := range p.wanted {
		qs = append(qs, q)
	}
	clear(p.wanted)
	p.mu.Unlock()
	for _, q := range qs {
		p.stmt(ctx, q)
	}
}
