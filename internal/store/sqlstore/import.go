package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/sniped/sniped/internal/store"
)

// snipeColumns is the number of values insertSnipe binds per row.
const snipeColumns = 22

// ImportSnipes bulk-inserts snipes in one transaction through one prepared
// statement of Options.ImportBatch rows: the benchmarks' way to load a
// million rows quickly. Pass all rows in one call: each call is one
// transaction. Each snipe's AccountID must exist and GroupID must be 0 or
// an existing group of that account; ID, GroupName and FireAt are ignored
// (FireAt is derived from Item.End and Delay as everywhere else). An empty
// State means scheduled. A duplicate (account, item) fails the whole import.
func (s *Store) ImportSnipes(ctx context.Context, snipes []store.Snipe) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n := s.importBatch
		var full *sql.Stmt
		if len(snipes) >= n {
			var err error
			if full, err = tx.PrepareContext(ctx, insertRows(n)); err != nil {
				return fmt.Errorf("prepare: %w", err)
			}
			defer full.Close()
		}
		args := make([]any, 0, n*snipeColumns)
		for start := 0; start < len(snipes); start += n {
			batch := snipes[start:min(start+n, len(snipes))]
			args = args[:0]
			for _, sn := range batch {
				if sn.State == "" {
					sn.State = store.StateScheduled
				}
				args = append(args, snipeArgs(sn)...)
			}
			var err error
			if len(batch) == n {
				_, err = full.ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, insertRows(len(batch)), args...)
			}
			if err != nil {
				return fmt.Errorf("snipes %d to %d: %w", start, start+len(batch)-1, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("import snipes: %w", err)
	}
	return nil
}

// insertRows is insertSnipe with n rows of placeholders.
func insertRows(n int) string {
	if n == 1 {
		return insertSnipe
	}
	head, _, _ := strings.Cut(insertSnipe, "VALUES")
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("VALUES ")
	p := 1
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range snipeColumns {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(p))
			p++
		}
		b.WriteByte(')')
	}
	return b.String()
}
