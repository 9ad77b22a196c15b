package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// TestDurableWrites: a durable Transition (the sniper's firing mark, a
// placed bid) returns only after an fsync of the WAL that started after it
// committed; other writes do not fsync. Concurrent durable writes share
// fsyncs (group commit).
func TestDurableWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, err := s.CreateAccount(ctx, "a", store.TierPaid, key.Hash("a"), now)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	var ids []int64
	for i := range n {
		bid := money.Amount(500)
		sn, _, err := s.UpsertSnipe(ctx, a.ID, int64(i+1), store.SnipeChange{Bid: &bid, Item: store.ItemSnapshot{End: now.Add(time.Hour)}}, now)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sn.ID)
	}
	fsyncs := func() uint64 {
		s.wal.mu.Lock()
		defer s.wal.mu.Unlock()
		return s.wal.done
	}
	sched := []store.State{store.StateScheduled}
	if err := s.Transition(ctx, store.TransitionParams{ID: ids[0], From: sched, To: store.StateSettled, Outcome: outcome.TooLow}); err != nil {
		t.Fatal(err)
	}
	if got := fsyncs(); got != 0 {
		t.Errorf("fsyncs after an ordinary write = %d, want 0", got)
	}
	if err := s.Transition(ctx, store.TransitionParams{ID: ids[1], From: sched, To: store.StateFiring, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if got := fsyncs(); got != 1 {
		t.Errorf("fsyncs after a durable write = %d, want 1", got)
	}
	var wg sync.WaitGroup
	for _, id := range ids[2:] {
		wg.Go(func() {
			if err := s.Transition(ctx, store.TransitionParams{ID: id, From: sched, To: store.StateFiring, Durable: true}); err != nil {
				t.Errorf("durable Transition(%d) = %v", id, err)
			}
		})
	}
	wg.Wait()
	got := fsyncs() - 1
	t.Logf("%d concurrent durable writes: %d fsyncs", n-2, got)
	if got < 1 || got > n-2 {
		t.Errorf("fsyncs for %d concurrent durable writes = %d, want 1 to %d", n-2, got, n-2)
	}
}
