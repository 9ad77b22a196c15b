package sim_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/sim"
)

// allBids returns every bid the simulator recorded on items numbered from
// first up to the first unknown number.
func allBids(t *testing.T, s *sim.Sim, first int64) (items int, bids []sim.BidView, ends map[int64]int64) {
	t.Helper()
	ends = map[int64]int64{}
	for no := first; ; no++ {
		st, err := s.ItemState(context.Background(), no)
		if err != nil {
			return items, bids, ends
		}
		items++
		ends[no] = st.Item.End.UnixMilli()
		for _, b := range st.Bids {
			bids = append(bids, b)
			ends[-int64(len(bids))] = st.Item.End.UnixMilli() // keyed by -index
		}
	}
}

// running opens an in-memory simulator inside a synctest bubble, starts its
// Run, and returns it with its lowest catalogue item number and a stop
// function that cancels Run and returns its error.
func running(t *testing.T, cfg sim.Config) (s *sim.Sim, first int64, stop func() error) {
	t.Helper()
	s, err := sim.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	items, _ := s.Search(t.Context(), "", "", 100)
	first = items[0].ItemNo
	for _, it := range items {
		first = min(first, it.ItemNo)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return s, first, func() error { cancel(); return <-done }
}

func TestRunRelistsAndRivalsBid(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, first, stop := running(t, sim.Config{Seed: 5, Items: 30, Bidders: sim.BiddersHigh, Clock: clock.Real{}})

		for range 20 {
			time.Sleep(time.Minute)
			synctest.Wait()
			live, _ := s.Search(t.Context(), "", "", 100)
			if len(live) < 28 {
				t.Errorf("%d live items, want about 30 kept listed", len(live))
			}
			if len(live) > 0 && time.Until(live[0].End) > 2*time.Minute {
				t.Errorf("nothing ends within 2 minutes (next in %v)", time.Until(live[0].End))
			}
		}
		if err := stop(); err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}

		n, bids, ends := allBids(t, s, first)
		if n <= 30 {
			t.Errorf("%d items listed in 20 minutes, want new listings", n)
		}
		reasons := map[string]int{}
		late := 0
		for i, b := range bids {
			reasons[b.Reason]++
			if end := ends[-int64(i+1)]; end-b.TimeMs <= 3000 && end > b.TimeMs {
				late++
			}
		}
		for _, r := range []string{"high-bidder", "outbid", "bid-incr"} {
			if reasons[r] == 0 {
				t.Errorf("no rival bid with reason %q in %v", r, reasons)
			}
		}
		t.Logf("%d items, %d bids, %d last-second, reasons %v", n, len(bids), late, reasons)
		if late == 0 {
			t.Errorf("no last-second rival bids")
		}
	})
}

func TestRunBiddersOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, first, stop := running(t, sim.Config{Seed: 5, Items: 10, Bidders: sim.BiddersOff, Clock: clock.Real{}})
		time.Sleep(5 * time.Minute)
		stop()
		if _, bids, _ := allBids(t, s, first); len(bids) != 0 {
			t.Errorf("bidders off, yet %d bids", len(bids))
		}
	})
}

// TestRivalsLeaveScriptedItemsAlone: items made with /sim/createItem are the
// user's scenario, so even busy rivals never bid on them, and the flag
// survives a restart.
func TestRivalsLeaveScriptedItemsAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		path := t.TempDir() + "/sim.db"
		cfg := sim.Config{Path: path, Seed: 7, Items: 20, Bidders: sim.BiddersHigh, Clock: clock.Real{}}
		s, err := sim.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		no, _, err := s.CreateItem(t.Context(), sim.NewItem{Title: "My scenario", StartPrice: 1000, EndsIn: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, first, stop := running(t, cfg) // reopened: the flag must survive
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		stop()

		st, err := s.ItemState(t.Context(), no)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Bids) != 0 {
			t.Errorf("scripted item got %d rival bids, want none: %+v", len(st.Bids), st.Bids)
		}
		if _, bids, _ := allBids(t, s, first); len(bids) == 0 {
			t.Errorf("no rival bids on the catalogue at all; the test proves nothing")
		}
	})
}
