package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// envSize is the benchmark size the environment variable name sets, or def.
func envSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func BenchmarkUpsertSnipe(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "sniped.db"))
	ctx := b.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, key.Hash("k"), now)
	if err != nil {
		b.Fatal(err)
	}
	it := store.ItemSnapshot{Title: "item", End: now.Add(time.Hour)}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		bid := money.Amount(100 + i)
		// Half creates, half updates of the same 1000 items.
		if _, _, err := s.UpsertSnipe(ctx, a.ID, int64(i%1000+1), store.SnipeChange{Bid: &bid, Item: it}, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnipesInState scans for the 100 next due snipes among stored
// ones (SNIPED_BENCH_STORED, default 100000).
func BenchmarkSnipesInState(b *testing.B) {
	stored := envSize("SNIPED_BENCH_STORED", 100_000)
	s := open(b, filepath.Join(b.TempDir(), "sniped.db"))
	ctx := b.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, key.Hash("k"), now)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := s.ImportSnipes(ctx, importSet(a.ID, stored, now)); err != nil {
		b.Fatal(err)
	}
	b.Logf("imported %d snipes in %v", stored, time.Since(start))
	before := now.Add(2 * time.Hour)
	for b.Loop() {
		got, err := s.SnipesInState(ctx, store.StateScheduled, before, 100)
		if err != nil || len(got) != 100 {
			b.Fatalf("SnipesInState = %d, %v", len(got), err)
		}
	}
}

// shotBench is a store with n armed snipes, due in order, for the shot-path
// benchmarks.
func shotBench(b *testing.B, n int) (*sqlite.Store, []store.Snipe, time.Time) {
	s := open(b, filepath.Join(b.TempDir(), "sniped.db"))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(b.Context(), "bench", store.TierPaid, key.Hash("k"), now)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.ImportSnipes(b.Context(), importSet(a.ID, n, now)); err != nil {
		b.Fatal(err)
	}
	due, err := s.SnipesInState(b.Context(), store.StateScheduled, now.Add(48*time.Hour), n)
	if err != nil || len(due) != n {
		b.Fatalf("SnipesInState = %d, %v", len(due), err)
	}
	return s, due, now
}

// shot is the store work of one shot: mark firing (durable), re-read,
// record placed (durable), refresh the item snapshot.
func shot(ctx context.Context, s *sqlite.Store, id int64, now time.Time) error {
	if err := s.Transition(ctx, store.TransitionParams{ID: id, From: []store.State{store.StateScheduled}, To: store.StateFiring, Durable: true}); err != nil {
		return err
	}
	sn, err := s.SnipeByID(ctx, id)
	if err != nil {
		return err
	}
	if err := s.Transition(ctx, store.TransitionParams{ID: id, From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: outcome.Placed, PlacedAt: now, Durable: true}); err != nil {
		return err
	}
	return s.UpdateItem(ctx, id, sn.Item)
}

// BenchmarkShotPath is one shot at a time (the sniper's hot path).
func BenchmarkShotPath(b *testing.B) {
	const n = 10_000
	s, due, now := shotBench(b, n)
	ctx := b.Context()
	i := 0
	for b.Loop() {
		if i == n {
			b.StopTimer() // every snipe shot once: put them back
			for _, sn := range due {
				if err := s.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StatePlaced}, To: store.StateScheduled}); err != nil {
					b.Fatal(err)
				}
			}
			i = 0
			b.StartTimer()
		}
		if err := shot(ctx, s, due[i].ID, now); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkShotPathParallel is BenchmarkShotPath for 64 shots at once, as
// in a busy second: concurrent transitions share transactions (group
// commit) and fsyncs. Keep -benchtime at most 20000x (each snipe is shot
// once).
func BenchmarkShotPathParallel(b *testing.B) {
	const n = 20_000
	s, due, now := shotBench(b, n)
	ctx := b.Context()
	var next atomic.Int64
	b.SetParallelism(32) // × GOMAXPROCS goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			if i >= n {
				b.Error("more iterations than snipes: lower -benchtime")
				return
			}
			if err := shot(ctx, s, due[i].ID, now); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkListing is getUserItems' store call as apibench makes it: a
// page of 20 current snipes among 200, with the total (ListEntries).
// SNIPED_BENCH_DB keeps the database at that path (to inspect its plans
// with the sqlite3 shell).
func BenchmarkListing(b *testing.B) {
	path := os.Getenv("SNIPED_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "sniped.db")
	}
	s := open(b, path)
	ctx := b.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "bench", store.TierPaid, key.Hash("k"), now)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		bid := money.Amount(1000 + i)
		it := store.ItemSnapshot{Title: "item " + strconv.Itoa(i), Currency: "USD", CurrentPrice: 500, Bids: i % 7,
			GalleryURL: "http://127.0.0.1/img.png", Start: now.Add(-time.Hour), End: now.Add(time.Duration(i+1) * time.Minute)}
		if _, _, err := s.UpsertSnipe(ctx, a.ID, int64(i+1), store.SnipeChange{Bid: &bid, Item: it}, now); err != nil {
			b.Fatal(err)
		}
	}
	q := store.ListQuery{Filter: store.FilterCurrent, OrderBy: "ends", Limit: 20, Now: now}
	b.Run("ListEntries", func(b *testing.B) {
		for b.Loop() {
			if page, total, err := s.ListEntries(ctx, a.ID, q); err != nil || len(page) != 20 || total != 200 {
				b.Fatalf("ListEntries = %d, %d, %v", len(page), total, err)
			}
		}
	})
}

// BenchmarkEvents reads the newest page of a quiet account's events (the
// getEvents default, 50) while another account has SNIPED_BENCH_EVENTS
// (default 100000) newer ones: the read must not walk the other account's.
func BenchmarkEvents(b *testing.B) {
	n := envSize("SNIPED_BENCH_EVENTS", 100_000)
	s := open(b, filepath.Join(b.TempDir(), "sniped.db"))
	ctx := b.Context()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	quiet, err := s.CreateAccount(ctx, "quiet", store.TierPaid, key.Hash("q"), now)
	if err != nil {
		b.Fatal(err)
	}
	busy, err := s.CreateAccount(ctx, "busy", store.TierPaid, key.Hash("b"), now)
	if err != nil {
		b.Fatal(err)
	}
	emit := func(acct int64, count int) {
		for range count {
			if _, _, err := s.EmitEvent(ctx, store.NewEvent{AccountID: acct, Type: store.EventSnipeWon, Data: []byte(`{}`), Now: now}); err != nil {
				b.Fatal(err)
			}
		}
	}
	emit(quiet.ID, 60)
	emit(busy.ID, n)
	for b.Loop() {
		got, err := s.Events(ctx, quiet.ID, 0, 50)
		if err != nil || len(got) != 50 {
			b.Fatalf("Events = %d, %v", len(got), err)
		}
	}
}
