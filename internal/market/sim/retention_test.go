package sim_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
)

// TestRetentionDropsEndedAuctions: Run keeps an ended auction (and its
// result) for Config.Retention, then drops it from memory, the watch list
// and the file, so that lookups answer not found, also after a restart;
// live auctions stay.
func TestRetentionDropsEndedAuctions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sim.db")
	synctest.Test(t, func(t *testing.T) {
		cfg := sim.Config{Path: path, Seed: 2, Items: 5, Bidders: sim.BiddersOff, Clock: clock.Real{}, Retention: 2 * time.Minute}
		s, err := sim.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		b := &bundle{ctx: t.Context(), sim: s}
		ended := b.create(t, sim.NewItem{EndsIn: time.Minute})
		b.mustBid(t, "ann", ended, 5_00)
		if err := s.Watch(b.ctx, "ann", ended); err != nil {
			t.Fatal(err)
		}
		cancelled := b.create(t, sim.NewItem{EndsIn: time.Hour})
		if err := s.EndEarly(b.ctx, cancelled, false); err != nil {
			t.Fatal(err)
		}
		live := b.create(t, sim.NewItem{EndsIn: 10 * time.Minute})

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()

		// Within retention the result is still there.
		time.Sleep(time.Minute + 90*time.Second)
		synctest.Wait()
		if st := b.state(t, "ann", ended); !st.Won {
			t.Errorf("BidState 90 s after the end = %+v, want won", st)
		}
		// Past it (and a relisting round), the ended auctions are gone.
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, no := range []int64{ended, cancelled} {
			if _, err := s.Item(b.ctx, no); !errors.Is(err, market.ErrNotFound) {
				t.Errorf("Item(%d) after retention = %v, want ErrNotFound", no, err)
			}
			if _, err := s.BidState(b.ctx, "ann", no); !errors.Is(err, market.ErrNotFound) {
				t.Errorf("BidState(%d) after retention = %v, want ErrNotFound", no, err)
			}
		}
		watch, _ := s.WatchList(b.ctx, "ann")
		if slices.ContainsFunc(watch, func(it market.Item) bool { return it.ItemNo == ended }) {
			t.Errorf("watch list still has dropped item %d", ended)
		}
		if _, err := s.Item(b.ctx, live); err != nil {
			t.Errorf("Item(%d) of a live auction = %v, want found", live, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s2, err := sim.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if _, err := s2.ItemState(t.Context(), ended); !errors.Is(err, market.ErrNotFound) {
			t.Errorf("after restart ItemState(%d) = %v, want ErrNotFound", ended, err)
		}
		if st, err := s2.ItemState(t.Context(), live); err != nil || st.Item.ItemNo != live {
			t.Errorf("after restart ItemState(%d) = %+v, %v, want the live item", live, st.Item, err)
		}
	})
}
