package cli

import (
	"context"
	"errors"

	"github.com/sniped/sniped/internal/store"
)

// openPostgres opens the PostgreSQL store.
func openPostgres(ctx context.Context, url string) (store.Store, error) {
	return nil, errors.New("--database-url: PostgreSQL support is not in this build yet")
}
