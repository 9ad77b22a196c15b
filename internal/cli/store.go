package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// storeFile is the SQLite database inside the data folder.
const storeFile = "sniped.db"

// openStore opens the store the flags choose: PostgreSQL when a database URL
// is set, otherwise SQLite in the data folder.
func openStore(ctx context.Context, sf storeFlags) (store.Store, error) {
	if sf.databaseURL != "" {
		return openPostgres(ctx, sf.databaseURL)
	}
	if err := os.MkdirAll(sf.data, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	path := filepath.Join(sf.data, storeFile)
	st, err := sqlite.OpenWith(ctx, path, sqlite.Options{CacheMiB: sf.cacheMiB})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return st, nil
}
