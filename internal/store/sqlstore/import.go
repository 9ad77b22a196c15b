package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sniped/sniped/internal/store"
)

// ImportSnipes bulk-inserts snipes in one transaction through one prepared
// statement: the benchmarks' way to load a million rows quickly. Each
// snipe's AccountID must exist and GroupID must be 0 or an existing group
// of that account; ID, GroupName and FireAt are ignored (FireAt is derived
// from Item.End and Delay as everywhere else). An empty State means
// scheduled. A duplicate (account, item) fails the whole import.
//
// One row per statement is deliberate: with $N placeholders, SQLite looks
// each parameter's name up linearly, so multi-row VALUES lists get slower
// per row as they grow (measured: 10 rows per INSERT is already slower).
func (s *Store) ImportSnipes(ctx context.Context, snipes []store.Snipe) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, insertSnipe)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer stmt.Close()
		for i := range snipes {
			sn := snipes[i]
			if sn.State == "" {
				sn.State = store.StateScheduled
			}
			if _, err := stmt.ExecContext(ctx, snipeArgs(sn)...); err != nil {
				return fmt.Errorf("snipe %d (item %d): %w", i, sn.ItemNo, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("import snipes: %w", err)
	}
	return nil
}
