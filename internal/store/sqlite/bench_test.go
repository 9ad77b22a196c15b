package sqlite_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

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
	stored := 100_000
	if v, err := strconv.Atoi(os.Getenv("SNIPED_BENCH_STORED")); err == nil {
		stored = v
	}
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
