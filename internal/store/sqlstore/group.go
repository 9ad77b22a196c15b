package sqlstore

import (
	"context"
	"fmt"

	"github.com/sniped/sniped/internal/store"
)

// groupID returns the ID of the account's Bid Group called name, creating
// the group on first use. Concurrent first uses agree on one row thanks to
// UNIQUE(account_id, name).
func groupID(ctx context.Context, tx execQueryer, accountID int64, name string) (int64, error) {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO bid_groups (account_id, name) VALUES ($1, $2) ON CONFLICT (account_id, name) DO NOTHING`,
		accountID, name); err != nil {
		return 0, fmt.Errorf("create group %q: %w", name, err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx,
		`SELECT id FROM bid_groups WHERE account_id = $1 AND name = $2`, accountID, name).Scan(&id); err != nil {
		return 0, fmt.Errorf("group %q: %w", name, err)
	}
	return id, nil
}

// GroupSnipes returns every snipe of a group, by Item.End then item_no.
func (s *Store) GroupSnipes(ctx context.Context, accountID, groupID int64) ([]store.Snipe, error) {
	out, err := querySnipes(ctx, s.r,
		selectSnipes+` WHERE s.account_id = $1 AND s.group_id = $2 ORDER BY s.item_end_ms, s.item_no`,
		accountID, groupID)
	if err != nil {
		return nil, fmt.Errorf("group %d snipes: %w", groupID, err)
	}
	return out, nil
}
