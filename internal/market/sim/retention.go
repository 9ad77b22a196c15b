package sim

import (
	"context"
	"fmt"
	"slices"
)

// purgeBatch bounds the items dropped in one transaction, so that a
// restart after a long pause does not hold the simulator's database for
// long.
const purgeBatch = 500

// purge drops the auctions that ended more than Config.Retention ago (an
// early end counts from when it happened): their rows, bids and watch-list
// entries go from the database first, then from memory, so a crash between
// the two only drops them a little early on the next start. Removed
// (failure-injected) items are dropped like the others once over.
func (s *Sim) purge(ctx context.Context) error {
	cutoff := s.nowMs() - s.cfg.Retention.Milliseconds()
	var old []int64
	for _, l := range s.snapshot() {
		l.mu.Lock()
		over := l.auction.EndTime().UnixMilli() < cutoff
		l.mu.Unlock()
		if over {
			old = append(old, l.ItemNo)
		}
	}
	for len(old) > 0 {
		n := min(len(old), purgeBatch)
		if err := s.drop(ctx, old[:n]); err != nil {
			return err
		}
		old = old[n:]
	}
	return nil
}

// drop deletes items (ended, past retention) from the database and memory.
func (s *Sim) drop(ctx context.Context, items []int64) error {
	if err := s.deleteItems(ctx, items); err != nil {
		return err
	}
	gone := make(map[int64]bool, len(items))
	for _, no := range items {
		gone[no] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, no := range items {
		delete(s.lots, no)
	}
	s.order = slices.DeleteFunc(s.order, func(l *lot) bool { return gone[l.ItemNo] })
	for user, list := range s.watch {
		s.watch[user] = slices.DeleteFunc(list, func(no int64) bool { return gone[no] })
	}
	return nil
}

// deleteItems removes items with their bids and watch-list entries in one
// transaction. A no-op in memory.
func (s *Sim) deleteItems(ctx context.Context, items []int64) error {
	if s.db == nil {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sim: drop old items: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{"DELETE FROM bids WHERE item_no = ?", "DELETE FROM watch WHERE item_no = ?", "DELETE FROM items WHERE item_no = ?"} {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sim: drop old items: %w", err)
		}
		for _, no := range items {
			if _, err := st.ExecContext(ctx, no); err != nil {
				st.Close()
				return fmt.Errorf("sim: drop item %d: %w", no, err)
			}
		}
		st.Close()
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sim: drop old items: %w", err)
	}
	return nil
}
