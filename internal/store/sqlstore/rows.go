package sqlstore

import (
	"context"
	"fmt"
)

// scanner is a row to scan: *sql.Row or *sql.Rows.
type scanner = interface{ Scan(...any) error }

// queryAll runs a query on the read pool and scans every row with scan;
// what names the operation in errors.
func queryAll[T any](ctx context.Context, s *Store, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
