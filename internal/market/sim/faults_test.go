package sim_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
)

// TestLostAnswer: the bid is judged and recorded, but the caller gets a
// timeout it cannot tell from one where nothing happened.
func TestLostAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	other := b.create(t, sim.NewItem{})

	b.sim.LoseAnswers(no, 2)
	err := b.bid(t, "ann", no, 2_00)
	if !errors.Is(err, sim.ErrLostAnswer) || !errors.Is(err, context.DeadlineExceeded) || !market.Transient(err) {
		t.Fatalf("bid with a lost answer = %v, want ErrLostAnswer, a transient deadline error", err)
	}
	if st := b.state(t, "ann", no); !st.HasBid || st.MaxBid != 2_00 || !st.HighBidder {
		t.Errorf("BidState after the lost answer = %+v, want ann's 2.00 in and leading", st)
	}
	// A refused bid is recorded too, and its answer lost as well.
	if err := b.bid(t, "ann", no, 1_50); !errors.Is(err, sim.ErrLostAnswer) {
		t.Errorf("second bid = %v, want ErrLostAnswer", err)
	}
	// The count is spent: the same refusal now comes back.
	if err := b.bid(t, "ann", no, 1_50); !errors.Is(err, market.ErrCannotLowerMax) {
		t.Errorf("third bid = %v, want ErrCannotLowerMax", err)
	}
	// Another item is not affected by an item's count.
	b.sim.LoseAnswers(no, 1)
	b.mustBid(t, "bob", other, 2_00)

	// Calls failed by other injections reach nothing and spend no count.
	b.sim.LoseAnswers(no, 0)
	b.sim.LoseAnswers(0, 1)
	b.sim.FailNext(sim.OpPlaceBid, 1)
	if err := b.bid(t, "bob", other, 3_00); !errors.Is(err, market.ErrUnavailable) || errors.Is(err, sim.ErrLostAnswer) {
		t.Errorf("unavailable bid = %v, want ErrUnavailable", err)
	}
	if err := b.bid(t, "bob", other, 3_00); !errors.Is(err, sim.ErrLostAnswer) {
		t.Errorf("bid after the unavailable one = %v, want the global lost answer", err)
	}
	b.mustBid(t, "bob", other, 4_00)

	st, err := b.sim.ItemState(b.ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, bv := range st.Bids {
		got = append(got, bv.Reason)
	}
	if want := []string{"high-bidder", "own-max", "own-max"}; !equal(got, want) {
		t.Errorf("recorded bids on the item = %v, want %v", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSlow: matching calls stall before the marketplace handles them; a
// caller that gives up during the stall reached nothing.
func TestSlow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sim.Open(ctx, sim.Config{Seed: 7, Items: 5, Bidders: sim.BiddersOff, Clock: clock.Real{}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		no, _, err := s.CreateItem(ctx, sim.NewItem{Title: "Slow lens", StartPrice: 1_00, EndsIn: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		s.SetSlow(sim.Slow{Op: sim.OpBidState, ItemNo: no, Delay: 2 * time.Second, Count: 1})

		// Another operation on the item is not stalled.
		start := time.Now()
		if _, err := s.Item(ctx, no); err != nil || time.Since(start) != 0 {
			t.Errorf("Item took %v (%v), want no stall", time.Since(start), err)
		}
		done := make(chan error, 1)
		go func() { _, err := s.BidState(ctx, "ann", no); done <- err }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("BidState answered before the stall: %v", err)
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stalled BidState = %v, want an answer", err)
			}
		default:
			t.Fatal("BidState still stalled after 2 s")
		}
		// The count is spent.
		start = time.Now()
		if _, err := s.BidState(ctx, "ann", no); err != nil || time.Since(start) != 0 {
			t.Errorf("second BidState took %v (%v), want no stall", time.Since(start), err)
		}

		// A bid whose caller gives up during the stall is not handled.
		s.SetSlow(sim.Slow{Op: sim.OpAny, Delay: time.Minute, Count: 5})
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		start = time.Now()
		_, err = s.PlaceBid(cctx, "ann", no, 2_00)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 3*time.Second {
			t.Errorf("bid cancelled during the stall = %v after %v, want DeadlineExceeded after 3s", err, time.Since(start))
		}
		if st, _ := s.ItemState(ctx, no); len(st.Bids) != 0 {
			t.Errorf("a bid given up during its stall was recorded: %+v", st.Bids)
		}
		// Calls without an item (Now) match a rule for any item.
		start = time.Now()
		if _, err := s.Now(ctx); err != nil || time.Since(start) != time.Minute {
			t.Errorf("Now took %v (%v), want the 1 min stall", time.Since(start), err)
		}
		s.SetSlow(sim.Slow{Count: 0})
		start = time.Now()
		if _, err := s.Now(ctx); err != nil || time.Since(start) != 0 {
			t.Errorf("Now after removing the rule took %v (%v), want no stall", time.Since(start), err)
		}
	})
}

// TestStale: Item and BidState show the item as it was, bids and ends
// included, while bids are judged on the truth.
func TestStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{EndsIn: time.Minute})
	b.mustBid(t, "ann", no, 2_00)
	b.clock.Advance(10 * time.Second)
	b.sim.SetStale(no, 5*time.Second)
	b.mustBid(t, "bob", no, 5_00)

	if st := b.state(t, "bob", no); st.HasBid || st.HighBidder {
		t.Errorf("stale BidState shows bob's bid of 0 s ago: %+v", st)
	}
	if st := b.state(t, "ann", no); !st.HasBid || !st.HighBidder || st.CurrentPrice != 1_00 {
		t.Errorf("stale BidState for ann = %+v, want her 10 s old lead at 1.00", st)
	}
	it, err := b.sim.Item(b.ctx, no)
	if err != nil || it.Bids != 1 || it.CurrentPrice != 1_00 {
		t.Errorf("stale Item = %d bids at %v (%v), want 1 bid at 1.00", it.Bids, it.CurrentPrice, err)
	}
	// Bids are judged on the truth: ann is outbid, whatever she sees.
	// In her stale view she leads at 1.00 and could raise freely; in truth
	// bob leads at 2.25 and the minimum is 2.50.
	if err := b.bid(t, "ann", no, 2_30); !errors.Is(err, market.ErrIncrementNotMet) {
		t.Errorf("ann's bid under the real minimum = %v, want ErrIncrementNotMet", err)
	}

	b.clock.Advance(5 * time.Second)
	if st := b.state(t, "bob", no); !st.HasBid || !st.HighBidder || st.CurrentPrice != 2_25 {
		t.Errorf("BidState 5 s later = %+v, want bob leading at 2.25", st)
	}

	// The end shows 5 s late.
	b.clock.Advance(46 * time.Second) // 1 s after the end
	if st := b.state(t, "bob", no); st.Ended || st.Won {
		t.Errorf("stale BidState 1 s after the end = %+v, want still running", st)
	}
	if truth, _ := b.sim.ItemState(b.ctx, no); truth.Winner != "bob" || !truth.Item.Ended {
		t.Errorf("ItemState = winner %q ended %v, want the truth: bob won", truth.Winner, truth.Item.Ended)
	}
	b.clock.Advance(4 * time.Second)
	if st := b.state(t, "bob", no); !st.Ended || !st.Won {
		t.Errorf("BidState 5 s after the end = %+v, want won", st)
	}

	// An early end shows late too; the global setting covers other items,
	// and an item's own setting wins over it.
	b.sim.SetStale(no, 0)
	b.sim.SetStale(0, 3*time.Second)
	early := b.create(t, sim.NewItem{EndsIn: time.Minute})
	b.clock.Advance(10 * time.Second)
	if err := b.sim.EndEarly(b.ctx, early, false); err != nil {
		t.Fatal(err)
	}
	if it, _ := b.sim.Item(b.ctx, early); it.Ended {
		t.Errorf("stale Item right after a cancel = ended %v %s, want running", it.Ended, it.EndReason)
	}
	b.sim.SetStale(early, time.Millisecond)
	b.clock.Advance(time.Millisecond)
	if it, _ := b.sim.Item(b.ctx, early); !it.Ended || it.EndReason != market.EndedCancelled {
		t.Errorf("Item 1 ms after a cancel with its own 1 ms setting = ended %v %s, want cancelled", it.Ended, it.EndReason)
	}
	b.sim.ClearFailures()
	if st := b.state(t, "bob", no); !st.Won {
		t.Errorf("after ClearFailures BidState = %+v, want the truth", st)
	}
}

// TestSetClockSkew: the marketplace clock jumps; end times stay put on it.
func TestSetClockSkew(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *sim.Config) { c.ClockSkew = time.Second })
	no, end, err := b.sim.CreateItem(b.ctx, sim.NewItem{Title: "x", StartPrice: 1_00, EndsIn: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.sim.ClockSkew(); got != time.Second {
		t.Errorf("ClockSkew = %v, want the configured 1s", got)
	}
	b.sim.SetClockSkew(6 * time.Second)
	if now, _ := b.sim.Now(b.ctx); !now.Equal(t0.Add(6 * time.Second)) {
		t.Errorf("Now after the jump = %v, want local + 6s", now)
	}
	if it, _ := b.sim.Item(b.ctx, no); !it.End.Equal(end) {
		t.Errorf("end moved with the clock: %v, want %v", it.End, end)
	}
	b.clock.Advance(4900 * time.Millisecond)
	b.mustBid(t, "ann", no, 2_00)
	b.clock.Advance(100 * time.Millisecond)
	if err := b.bid(t, "bob", no, 3_00); !errors.Is(err, market.ErrEnded) {
		t.Errorf("bid at local t0+5s after a +5s jump = %v, want ErrEnded", err)
	}
	st, _ := b.sim.ItemState(b.ctx, no)
	if got, want := st.Bids[0].TimeMs, t0.Add(10900*time.Millisecond).UnixMilli(); got != want {
		t.Errorf("bid time %d, want %d (on the jumped clock)", got, want)
	}
	b.sim.SetClockSkew(-2 * time.Second)
	if now, _ := b.sim.Now(b.ctx); !now.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Now after a jump back = %v, want local − 2s", now)
	}
}
