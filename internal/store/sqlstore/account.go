package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/store"
)

const accountCols = `id, name, tier, key_hash, created_ms`

func scanAccount(row interface{ Scan(...any) error }) (store.Account, error) {
	var (
		a       store.Account
		tier    string
		created int64
	)
	if err := row.Scan(&a.ID, &a.Name, &tier, &a.KeyHash, &created); err != nil {
		return store.Account{}, err
	}
	a.Tier = store.Tier(tier)
	a.CreatedAt = fromMS(created)
	return a, nil
}

// CreateAccount adds an account; a taken name is store.ErrConflict.
func (s *Store) CreateAccount(ctx context.Context, name string, tier store.Tier, keyHash []byte, now time.Time) (store.Account, error) {
	// ON CONFLICT without a target covers both the name and the key hash,
	// so a duplicate is detected the same way on every engine.
	row := s.w.QueryRowContext(ctx,
		`INSERT INTO accounts (name, tier, key_hash, created_ms) VALUES ($1, $2, $3, $4)
		 ON CONFLICT DO NOTHING RETURNING `+accountCols,
		name, string(tier), keyHash, ms(now))
	a, err := scanAccount(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Account{}, fmt.Errorf("create account %q: name taken: %w", name, store.ErrConflict)
	}
	if err != nil {
		return store.Account{}, fmt.Errorf("create account %q: %w", name, err)
	}
	return a, nil
}

// AccountByKeyHash finds the account whose key hashes to keyHash.
func (s *Store) AccountByKeyHash(ctx context.Context, keyHash []byte) (store.Account, error) {
	a, err := scanAccount(s.r.QueryRowContext(ctx,
		`SELECT `+accountCols+` FROM accounts WHERE key_hash = $1`, keyHash))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Account{}, fmt.Errorf("account by key: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Account{}, fmt.Errorf("account by key: %w", err)
	}
	// The index lookup found it; confirm in constant time anyway so the
	// comparison that grants access never depends on the engine's collation.
	if !key.Equal(a.KeyHash, keyHash) {
		return store.Account{}, fmt.Errorf("account by key: %w", store.ErrNotFound)
	}
	return a, nil
}

// AccountByName finds an account by name.
func (s *Store) AccountByName(ctx context.Context, name string) (store.Account, error) {
	a, err := scanAccount(s.r.QueryRowContext(ctx,
		`SELECT `+accountCols+` FROM accounts WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Account{}, fmt.Errorf("account %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return store.Account{}, fmt.Errorf("account %q: %w", name, err)
	}
	return a, nil
}

// Accounts lists all accounts by name.
func (s *Store) Accounts(ctx context.Context) ([]store.Account, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+accountCols+` FROM accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	defer rows.Close()
	var out []store.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("accounts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	return out, nil
}

// SetKeyHash replaces an account's key hash (key rotation).
func (s *Store) SetKeyHash(ctx context.Context, name string, keyHash []byte) error {
	return s.updateAccount(ctx, "set key", name, `UPDATE accounts SET key_hash = $1 WHERE name = $2`, keyHash, name)
}

// SetTier changes an account's tier.
func (s *Store) SetTier(ctx context.Context, name string, tier store.Tier) error {
	return s.updateAccount(ctx, "set tier", name, `UPDATE accounts SET tier = $1 WHERE name = $2`, string(tier), name)
}

// DeleteAccount removes an account; foreign keys cascade to its snipes,
// groups and searches.
func (s *Store) DeleteAccount(ctx context.Context, name string) error {
	return s.updateAccount(ctx, "delete account", name, `DELETE FROM accounts WHERE name = $1`, name)
}

func (s *Store) updateAccount(ctx context.Context, op, name, query string, args ...any) error {
	res, err := s.w.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s %q: %w", op, name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s %q: %w", op, name, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", op, name, store.ErrNotFound)
	}
	return nil
}

// CountAccounts returns how many accounts exist.
func (s *Store) CountAccounts(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count accounts: %w", err)
	}
	return n, nil
}
