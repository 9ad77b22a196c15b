package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/store"
)

const searchCols = `id, account_id, query, created_ms, last_run_ms, next_run_ms, new_count`

func scanSearch(row scanner) (store.Search, error) {
	var (
		q                      store.Search
		created, lastRun, next int64
	)
	if err := row.Scan(&q.ID, &q.AccountID, &q.Query, &created, &lastRun, &next, &q.NewCount); err != nil {
		return store.Search{}, err
	}
	q.CreatedAt = fromMS(created)
	q.LastRun = fromMS(lastRun)
	q.NextRun = fromMS(next)
	return q, nil
}

// AddSearch saves query; an existing query is returned with created=false.
func (s *Store) AddSearch(ctx context.Context, accountID int64, query string, now time.Time) (store.Search, bool, error) {
	var (
		out     store.Search
		created bool
	)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q, err := scanSearch(tx.QueryRowContext(ctx,
			`INSERT INTO searches (account_id, query, created_ms) VALUES ($1, $2, $3)
			 ON CONFLICT (account_id, query) DO NOTHING RETURNING `+searchCols,
			accountID, query, ms(now)))
		if err == nil {
			out, created = q, true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out, err = scanSearch(tx.QueryRowContext(ctx,
			`SELECT `+searchCols+` FROM searches WHERE account_id = $1 AND query = $2`, accountID, query))
		return err
	})
	if err != nil {
		return store.Search{}, false, fmt.Errorf("add search: %w", err)
	}
	return out, created, nil
}

// Searches lists the account's saved searches, oldest first.
func (s *Store) Searches(ctx context.Context, accountID int64) ([]store.Search, error) {
	return queryAll(ctx, s, "searches", scanSearch,
		`SELECT `+searchCols+` FROM searches WHERE account_id = $1 ORDER BY created_ms, id`, accountID)
}

// DeleteSearch removes one of the account's saved searches.
func (s *Store) DeleteSearch(ctx context.Context, accountID, id int64) error {
	return s.affectOne(ctx, fmt.Sprintf("delete search %d", id),
		`DELETE FROM searches WHERE id = $1 AND account_id = $2`, id, accountID)
}
