package sniper

import (
	"context"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

// BenchmarkTrack measures arming one snipe in the in-memory schedule (heap
// push plus bookkeeping), the loader's per-snipe cost.
func BenchmarkTrack(b *testing.B) {
	s := New(Config{Store: newMemStore(), Market: markettest.New(clock.Real{})})
	base := time.Now().Add(time.Hour)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.sched.track(store.Snipe{ID: int64(i), FireAt: base.Add(time.Duration(i) * time.Millisecond)})
	}
}

// BenchmarkFire measures the executor's CPU per snipe: mark firing, re-read,
// send, record, against the in-memory store and a zero-latency marketplace.
// The real store's write cost is measured by cmd/snipebench.
func BenchmarkFire(b *testing.B) {
	ctx := context.Background()
	st := newMemStore()
	mk := markettest.New(clock.Real{})
	acct, _ := st.CreateAccount(ctx, "bench", store.TierPaid, nil, time.Now())
	s := New(Config{Store: st, Market: mk})
	bid, delay := money.Amount(500), 1
	var ids []int64
	var fires []time.Time
	for range b.N {
		no := mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: time.Hour})
		it, _ := mk.Item(ctx, no)
		sn, _, _ := st.UpsertSnipe(ctx, acct.ID, no, store.SnipeChange{Bid: &bid, Delay: &delay, Item: itemSnap(it)}, time.Now())
		ids = append(ids, sn.ID)
		fires = append(fires, time.Now().Add(-time.Second)) // due: no wait
		st.set(sn.ID, func(s *store.Snipe) { s.FireAt = fires[len(fires)-1] })
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
