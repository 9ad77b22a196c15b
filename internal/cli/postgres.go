package cli

import (
	"context"
	"fmt"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/postgres"
)

// openPostgres opens the PostgreSQL store, so that several sniped instances
// can share one database.
func openPostgres(ctx context.Context, url string) (store.Store, error) {
	st, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL store: %w", err)
	}
	return st, nil
}
