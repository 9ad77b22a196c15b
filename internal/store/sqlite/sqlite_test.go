package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"path/filepath"
	"testing"

	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
	"github.com/sniped/sniped/internal/store/storetest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sniped.db"))
		if err != nil {
			t.Fatalf("Open() = %v", err)
		}
		return s
	})
}

func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTwoHandles is `sniped account add` running beside `sniped serve`:
// two Stores (two pools, as two processes would have) on one file write
// at the same time without SQLITE_BUSY failures or lost writes.
func TestTwoHandles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sniped.db")
	serve, cli := open(t, path), open(t, path)
	ctx := t.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	admin, err := serve.CreateAccount(ctx, "admin", store.TierPaid, key.Hash("admin"), now)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			it := store.ItemSnapshot{End: now.Add(time.Hour)}
			bid := money.Amount(100 + i)
			if _, _, err := serve.UpsertSnipe(ctx, admin.ID, int64(i+1), store.SnipeChange{Bid: &bid, Item: it}, now); err != nil {
				t.Errorf("serve: UpsertSnipe #%d = %v", i, err)
			}
		}
	})
	wg.Go(func() {
		for i := range n {
			name := fmt.Sprintf("user%02d", i)
			if _, err := cli.CreateAccount(ctx, name, store.TierFree, key.Hash(name), now); err != nil {
				t.Errorf("cli: CreateAccount(%s) = %v", name, err)
			}
			if err := cli.SetTier(ctx, name, store.TierPaid); err != nil {
				t.Errorf("cli: SetTier(%s) = %v", name, err)
			}
		}
	})
	wg.Wait()
	if got, err := serve.CountAccounts(ctx); got != n+1 || err != nil {
		t.Errorf("serve sees %d accounts, %v; want %d", got, err, n+1)
	}
	if _, total, err := cli.ListEntries(ctx, admin.ID, store.ListQuery{Now: now}); total != n || err != nil {
		t.Errorf("cli sees %d snipes, %v; want %d", total, err, n)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sniped.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAccount(t.Context(), "admin", store.TierPaid, key.Hash("k"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	s = open(t, path) // migrations already applied: a no-op
	if n, err := s.CountAccounts(t.Context()); n != 1 || err != nil {
		t.Errorf("CountAccounts() after reopen = %d, %v; want 1", n, err)
	}
}

func TestOpenNeedsFile(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", ":memory:"} {
		if s, err := sqlite.Open(t.Context(), path); err == nil {
			s.Close()
			t.Errorf("Open(%q) = nil error, want one", path)
		}
	}
	if _, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "missing-dir", "x.db")); err == nil {
		t.Errorf("Open(in a missing directory) = nil error, want one")
	}
}

func TestImportSnipes(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "sniped.db"))
	ctx := t.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, key.Hash("k"), now)
	if err != nil {
		t.Fatal(err)
	}
	snipes := importSet(a.ID, 100, now)
	if err := s.ImportSnipes(ctx, snipes); err != nil {
		t.Fatalf("ImportSnipes = %v", err)
	}
	due, err := s.SnipesInState(ctx, store.StateScheduled, now.Add(24*time.Hour), 0)
	if err != nil || len(due) != 100 {
		t.Fatalf("SnipesInState after import = %d snipes, %v; want 100", len(due), err)
	}
	if want := snipes[0].Item.End.Add(-7 * time.Second); !due[0].FireAt.Equal(want) || due[0].Bid != 500 {
		t.Errorf("first imported snipe = %+v, want FireAt %v and bid 5.00", due[0], want)
	}
	// A duplicate fails the whole import.
	if err := s.ImportSnipes(ctx, importSet(a.ID, 1, now)); err == nil {
		t.Errorf("ImportSnipes(duplicate) = nil, want an error")
	}
}

// importSet makes n armed snipes ending one second apart from now+1h.
func importSet(accountID int64, n int, now time.Time) []store.Snipe {
	out := make([]store.Snipe, n)
	for i := range out {
		out[i] = store.Snipe{
			AccountID: accountID, ItemNo: int64(i + 1), Bid: 500, Delay: 7, Enabled: true,
			Item:      store.ItemSnapshot{Title: "item", Currency: "USD", End: now.Add(time.Hour + time.Duration(i)*time.Second)},
			CreatedAt: now, UpdatedAt: now,
		}
	}
	return out
}

// TestConcurrentFirstOpen is `sniped serve` and `sniped account add`
// starting together on a fresh data folder: both migrate, both succeed.
func TestConcurrentFirstOpen(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "sniped.db")
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				s, err := sqlite.Open(t.Context(), path)
				if err != nil {
					t.Errorf("round %d: Open = %v", round, err)
					return
				}
				s.Close()
			})
		}
		wg.Wait()
	}
}
