package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// seenRetention bounds how long a saved search remembers an item: far
// longer than any auction runs, so only ended items are forgotten.
const seenRetention = 90 * 24 * time.Hour

// SearchByID returns one of the account's saved searches.
func (s *Store) SearchByID(ctx context.Context, accountID, id int64) (store.Search, error) {
	q, err := scanSearch(s.r.QueryRowContext(ctx,
		`SELECT `+searchCols+` FROM searches WHERE id = $1 AND account_id = $2`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Search{}, fmt.Errorf("search %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Search{}, fmt.Errorf("search %d: %w", id, err)
	}
	return q, nil
}

// SearchesDue returns saved searches whose next run is due, soonest first.
func (s *Store) SearchesDue(ctx context.Context, now time.Time, limit int) ([]store.Search, error) {
	return queryAll(ctx, s, "searches due", scanSearch,
		`SELECT `+searchCols+` FROM searches WHERE next_run_ms <= $1 ORDER BY next_run_ms, id LIMIT $2`, ms(now), limitOrAll(limit))
}

// RecordSearchRun marks items seen and emits search.match for the new ones.
func (s *Store) RecordSearchRun(ctx context.Context, r store.SearchRun) ([]int64, error) {
	var fresh []int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		fresh = fresh[:0]
		res, err := tx.ExecContext(ctx, `UPDATE searches SET last_run_ms = $3, next_run_ms = $4 WHERE id = $1 AND account_id = $2`,
			r.SearchID, r.AccountID, ms(r.Now), ms(r.NextRun))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		for _, item := range r.Items {
			var got int64
			err := tx.QueryRowContext(ctx, `INSERT INTO search_seen (search_id, item_no, seen_ms, baseline) VALUES ($1, $2, $3, $4)
ON CONFLICT (search_id, item_no) DO NOTHING RETURNING item_no`, r.SearchID, item, ms(r.Now), b2i(r.Baseline)).Scan(&got)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			fresh = append(fresh, got)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_seen WHERE search_id = $1 AND seen_ms < $2`,
			r.SearchID, ms(r.Now.Add(-seenRetention))); err != nil {
			return err
		}
		count := len(fresh)
		if r.Baseline {
			count = 0
		}
		if _, err := tx.ExecContext(ctx, `UPDATE searches SET new_count = $2 WHERE id = $1`, r.SearchID, count); err != nil {
			return err
		}
		if r.Baseline || len(fresh) == 0 {
			return nil
		}
		data, err := r.MatchData(fresh)
		if err != nil {
			return err
		}
		_, _, err = emit(ctx, tx, store.NewEvent{AccountID: r.AccountID, Type: store.EventSearchMatch, Data: data, Now: r.Now})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record run of search %d: %w", r.SearchID, err)
	}
	return fresh, nil
}

// DeferSearch moves a saved search's next run to until.
func (s *Store) DeferSearch(ctx context.Context, accountID, id int64, until time.Time) error {
	return s.affectOne(ctx, fmt.Sprintf("defer search %d", id),
		`UPDATE searches SET next_run_ms = $3 WHERE id = $1 AND account_id = $2`, id, accountID, ms(until))
}

// SearchSeen returns when the search first saw each of items.
func (s *Store) SearchSeen(ctx context.Context, searchID int64, items []int64) (map[int64]store.Seen, error) {
	want := make(map[int64]bool, len(items))
	for _, it := range items {
		want[it] = true
	}
	rows, err := s.r.QueryContext(ctx, `SELECT item_no, seen_ms, baseline FROM search_seen WHERE search_id = $1`, searchID)
	if err != nil {
		return nil, fmt.Errorf("search %d seen: %w", searchID, err)
	}
	defer rows.Close()
	out := map[int64]store.Seen{}
	for rows.Next() {
		var item, seen, baseline int64
		if err := rows.Scan(&item, &seen, &baseline); err != nil {
			return nil, fmt.Errorf("search %d seen: %w", searchID, err)
		}
		if want[item] {
			out[item] = store.Seen{At: fromMS(seen), Baseline: baseline != 0}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %d seen: %w", searchID, err)
	}
	return out, nil
}
