package postgres_test

import (
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/postgres"
	"github.com/sniped/sniped/internal/store/postgres/pgtest"
	"github.com/sniped/sniped/internal/store/storetest"
)

// newStore opens a store in a fresh schema.
func newStore(t *testing.T, admin *sql.DB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.FreshSchema(t, admin, dsn))
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	admin, dsn := pgtest.Admin(t)
	storetest.Run(t, func(t *testing.T) store.Store { return newStore(t, admin, dsn) })
}

func TestImportSnipes(t *testing.T) {
	t.Parallel()
	admin, dsn := pgtest.Admin(t)
	s := newStore(t, admin, dsn)
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, []byte("hash"), now)
	if err != nil {
		t.Fatal(err)
	}
	snipes := make([]store.Snipe, 1234) // two full batches and a partial one
	for i := range snipes {
		snipes[i] = store.Snipe{AccountID: a.ID, ItemNo: int64(i + 1), Bid: 500, Delay: 7, Enabled: true,
			Item: store.ItemSnapshot{End: now.Add(time.Hour + time.Duration(i)*time.Second)}, CreatedAt: now, UpdatedAt: now}
	}
	if err := s.ImportSnipes(ctx, snipes); err != nil {
		t.Fatalf("ImportSnipes = %v", err)
	}
	due, err := s.SnipesInState(ctx, store.StateScheduled, now.Add(2*time.Hour), 0)
	if err != nil || len(due) != len(snipes) {
		t.Fatalf("SnipesInState after import = %d snipes, %v; want %d", len(due), err, len(snipes))
	}
	if want := now.Add(time.Hour - 7*time.Second); !due[0].FireAt.Equal(want) {
		t.Errorf("first FireAt = %v, want %v", due[0].FireAt, want)
	}
}

// TestConcurrentFirstOpen: instances starting together on an empty schema
// all migrate it successfully (goose's advisory lock serialises them).
func TestConcurrentFirstOpen(t *testing.T) {
	t.Parallel()
	admin, dsn := pgtest.Admin(t)
	schemaDSN := pgtest.FreshSchema(t, admin, dsn)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), schemaDSN)
			if err != nil {
				t.Errorf("Open = %v", err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
}

func TestOpenWithoutSchema(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.Admin(t)
	if s, err := postgres.Open(t.Context(), pgtest.WithSearchPath(t, dsn, "sniped_no_such_schema")); err == nil {
		s.Close()
		t.Errorf("Open(search_path of a missing schema) = nil error, want one")
	}
}
