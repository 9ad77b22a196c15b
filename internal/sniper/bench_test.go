package sniper

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/lease"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// BenchmarkTrack measures arming one snipe in the in-memory schedule (heap
// push plus bookkeeping), the loader's per-snipe cost.
func BenchmarkTrack(b *testing.B) {
	s := New(Config{Market: markettest.New(clock.Real{})})
	base := time.Now().Add(time.Hour)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.sched.track(store.Snipe{ID: int64(i), FireAt: base.Add(time.Duration(i) * time.Millisecond)})
	}
}

// BenchmarkFire measures the executor per snipe: mark firing (reading the
// snipe back), send, record, against the SQLite store (the mark and the
// placed record fsynced: two fsyncs per shot, one shot at a time) and a
// zero-latency marketplace.
func BenchmarkFire(b *testing.B) { benchFire(b, false) }

// BenchmarkFireLeased is BenchmarkFire as serve runs it: on a lease (all
// partitions, as on SQLite) through the fenced store view.
func BenchmarkFireLeased(b *testing.B) { benchFire(b, true) }

func benchFire(b *testing.B, leased bool) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sniped.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mk := markettest.New(clock.Real{})
	acct, err := st.CreateAccount(ctx, "bench", store.TierPaid, key.Hash("bench"), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Store: st, Market: mk}
	if leased {
		m, err := lease.New(lease.Config{Store: st, Exclusive: true})
		if err != nil {
			b.Fatal(err)
		}
		m.Tick(ctx)
		cfg.Store, cfg.Lease = m.Store(st), m
	}
	s := New(cfg)
	bid, delay := money.Amount(500), 15
	var ids []int64
	var fires []time.Time
	for range b.N {
		// Ends in 14 s with a 15 s delay: due a second ago with time left,
		// so fire sends at once (keep -benchtime short enough for that).
		no := mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 14 * time.Second})
		it, _ := mk.Item(ctx, no)
		sn, _, err := st.UpsertSnipe(ctx, acct.ID, no, store.SnipeChange{Bid: &bid, Delay: &delay, Item: itemSnap(it)}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, sn.ID)
		fires = append(fires, sn.FireAt)
	}
	if leased { // the loader's scan fills the view's snipe → account map
		if _, err := cfg.Store.SnipesInState(ctx, store.StateScheduled, time.Now().Add(time.Hour), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.sched.mu.Lock()
		s.sched.tracked[ids[i]] = &tracked{ver: 1, fireAt: fires[i], busy: true}
		s.sched.mu.Unlock()
		s.fire(ctx, ids[i], 1, fires[i])
	}
}
