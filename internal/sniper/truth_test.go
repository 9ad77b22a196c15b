package sniper

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// The tests in this file each reproduce one defect of issue #8 ("Truth
// under faults") with an ordinary fault, and failed before its fix.

// TestCannotLowerOnRetryProvesOurBid (defect 1): the first bid lands but
// its answer is lost, the lookup fails, and the retry is refused with
// "cannot lower your maximum". That refusal proves our bid is in: the
// snipe is won, not own-max, and the group's next item is not sent.
func TestCannotLowerOnRetryProvesOurBid(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		fm := &faultMarket{Market: b.mk}
		fm.loseAnswers(1, 0)
		b.cfg.Market = fm
		b.restart()
		first := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		second := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		end, _ := b.mk.Item(b.ctx, first)
		b.mk.SetInjector(failWhile(markettest.MethodBidState, first, before(end.End)))
		b.start()
		a := b.add(first, 500, 3, snipeOpts{group: "g"})
		c := b.add(second, 500, 3, snipeOpts{group: "g"})
		sleepTill(c.Item.End.Add(time.Minute))
		if got := b.get(a.ID); got.State != store.StateSettled || got.Outcome != outcome.Won {
			t.Errorf("first item: %s/%s (%q), want settled/won", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if got := b.get(c.ID); got.Outcome != outcome.GroupWon {
			t.Errorf("second item: %s (%q), want group-won", codeName(got.Outcome), got.OutcomeDetail)
		}
		if n := len(b.ours(second)); n != 0 {
			t.Errorf("bids on the second item = %d, want 0 (the group had won the first)", n)
		}
		if w := b.mk.Winner(second); w == "alice" {
			t.Errorf("the group won two items")
		}
	})
}

// TestLateLandingBidIsNotMarketDown (defect 2): the first attempt times out
// and its bid lands 2.7 s later; meanwhile the lookups do not show it and
// every retry is refused as unavailable. The snipe must not be settled
// market-down: it stays unresolved and settlement finds the win.
func TestLateLandingBidIsNotMarketDown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		fm := &faultMarket{Market: b.mk}
		b.cfg.Market = fm
		b.restart()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		b.start()
		sn := b.add(no, 500, 3, snipeOpts{})
		land := sn.FireAt.Add(2700 * time.Millisecond)
		fm.loseAnswers(1, 2700*time.Millisecond)
		// The first attempt's bid arrives at land; every other attempt
		// before then is refused as unavailable.
		b.mk.SetInjector(failWhile(markettest.MethodPlaceBid, no, before(land)))
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s/%s (%q), want won", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if n := len(acceptedOf(b.ours(no))); n != 1 {
			t.Errorf("accepted bids = %d, want 1", n)
		}
	})
}

func acceptedOf(bids []markettest.Bid) []markettest.Bid {
	var out []markettest.Bid
	for _, b := range bids {
		if b.Accepted {
			out = append(out, b)
		}
	}
	return out
}

// TestOffsetJumpRetimesArmedSnipes (defect 3): the marketplace clock jumps
// 5 s ahead 25 s before an armed shot. The next measurement must move the
// shot, which then lands at end − delay on the marketplace's clock.
func TestOffsetJumpRetimesArmedSnipes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(-25 * time.Second))
		b.mk.SetOffset(5 * time.Second)
		time.Sleep(time.Minute)
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(sn.FireAt) {
			t.Fatalf("bids = %+v, want one at marketplace time %v", bids, sn.FireAt)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}

// TestOffsetJumpWhileArmed (defect 3): the marketplace clock jumps 3.2 s
// ahead while the snipe is already armed (marked firing, waiting for its
// moment). The shot must move too, and land before the end, not 0.2 s
// after it.
func TestOffsetJumpWhileArmed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, func(c *Config) { c.OffsetEvery = 100 * time.Millisecond })
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.FireAt.Add(-900 * time.Millisecond))
		if got := b.get(sn.ID); got.State != store.StateFiring {
			t.Fatalf("900 ms before the moment: state %s, want firing (armed)", got.State)
		}
		b.mk.SetOffset(3200 * time.Millisecond)
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}

// TestFirstOffsetFailureRetried (defect 3): the first clock measurement
// fails; the marketplace runs 5 s ahead. The sniper must measure again
// quickly, not fire a shot 30 s later on an offset of 0.
func TestFirstOffsetFailureRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.mk.SetOffset(5 * time.Second)
		b.mk.SetInjector(failWhile(markettest.MethodNow, 0, func() bool { return b.mk.Calls(markettest.MethodNow) <= offsetSamples }))
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 30 * time.Second})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(sn.FireAt) {
			t.Fatalf("bids = %+v, want one at marketplace time %v", bids, sn.FireAt)
		}
	})
}

// TestSendAfterEndIsMissed (defect 3): the marketplace clock jumps 5 s
// ahead after the snipe was armed, so the bid arrives 2 s after the end.
// That is Missed, saying how late and why, not ended-early.
func TestSendAfterEndIsMissed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.FireAt.Add(-500 * time.Millisecond))
		b.mk.SetOffset(5 * time.Second)
		sleepTill(sn.Item.End.Add(time.Minute))
		got := b.get(sn.ID)
		if got.Outcome != outcome.Missed {
			t.Errorf("outcome %s (%q), want missed", codeName(got.Outcome), got.OutcomeDetail)
		}
		if !strings.Contains(got.OutcomeDetail, "2.0 s after") || !strings.Contains(got.OutcomeDetail, "clock") {
			t.Errorf("detail %q, want how late (2.0 s after the end) and why (the clock)", got.OutcomeDetail)
		}
	})
}

// TestDeadlinesAreMonotonic (defect 3): shot times derive from a monotonic
// clock reading, so a wall-clock step (NTP, VM resume) does not move them.
// Outside a synctest bubble: only the real clock has monotonic readings.
func TestDeadlinesAreMonotonic(t *testing.T) {
	t.Parallel()
	s := New(Config{Market: markettest.New(clock.Real{}), Clock: clock.Real{}})
	if err := s.measureOffset(t.Context()); err != nil {
		t.Fatal(err)
	}
	at := s.toLocal(time.Now().Round(0).Add(time.Minute))
	if !strings.Contains(at.String(), " m=") {
		t.Errorf("toLocal(marketplace time) = %s, want a monotonic reading (m=…)", at)
	}
}

// TestFiringMarkStoreErrorRetried (defect 4): one store error while marking
// the snipe firing must not drop the shot.
func TestFiringMarkStoreErrorRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		var failed atomic.Bool
		b.st.onTransition(func(p store.TransitionParams) error {
			if p.To == store.StateFiring && failed.CompareAndSwap(false, true) {
				return errors.New("database is locked")
			}
			return nil
		})
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(sn.FireAt) {
			t.Errorf("bids = %+v, want one at %v", bids, sn.FireAt)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}

// TestRecoveryDoesNotBlockScheduler (defect 5): 400 snipes left firing by a
// crash, each lookup 50 ms: resolving them one by one takes 20 s. A snipe
// due 5 s after the restart must still fire on time.
func TestRecoveryDoesNotBlockScheduler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		for range 400 {
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: time.Hour})
			sn := b.add(no, 500, 3, snipeOpts{})
			b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
		}
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 8 * time.Second})
		sn := b.add(no, 500, 3, snipeOpts{})
		b.restart()
		b.mk.SetLatency(50 * time.Millisecond)
		b.start()
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || bids[0].Time.Sub(sn.FireAt) > 100*time.Millisecond {
			t.Errorf("bids = %+v, want one within 100 ms of %v", bids, sn.FireAt)
		}
	})
}

// TestRecoveryLookupRetried (defect 5): a snipe left firing (never sent),
// its moment ahead; the first lookups fail. They must be retried in time
// for the shot, not after the auction.
func TestRecoveryLookupRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
		b.restart()
		b.mk.SetInjector(failWhile(markettest.MethodBidState, no, func() bool { return b.mk.Calls(markettest.MethodBidState) <= 3 }))
		b.start()
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(sn.FireAt) {
			t.Errorf("bids = %+v, want one at %v", bids, sn.FireAt)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}

// TestNothingPendingAfterEnd (defect 5): lookups of a snipe left firing
// never succeed. It still gets a final, explained outcome within 60 s of
// its item's end, and can then be deleted.
func TestNothingPendingAfterEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
		b.restart()
		b.mk.SetInjector(failWhile(markettest.MethodBidState, 0, func() bool { return true }))
		b.start()
		sleepTill(sn.Item.End.Add(60 * time.Second))
		got := b.get(sn.ID)
		if got.State != store.StateSettled || !got.Outcome.Final() || got.OutcomeDetail == "" {
			t.Errorf("60 s after the end: %s/%s (%q), want settled with a final outcome and an explanation", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if err := b.st.DeleteSnipe(b.ctx, b.acct.ID, no); err != nil {
			t.Errorf("DeleteSnipe after settlement = %v, want nil", err)
		}
	})
}

// TestEditLockoutCapped (defect 6): however crowded a second, edits are
// accepted until 2 s before the moment.
func TestEditLockoutCapped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// 20 snipes in one second at 500 ms each would arm from 10.5 s ahead.
		b := setup(t, func(c *Config) { c.ArmPerSnipe = 500 * time.Millisecond })
		b.start()
		end := time.Now().Add(2 * time.Minute).Truncate(time.Second)
		var sns []store.Snipe
		for range 20 {
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndAt: end})
			sns = append(sns, b.add(no, 500, 3, snipeOpts{}))
		}
		sleepTill(sns[0].FireAt.Add(-MaxArmLead - 100*time.Millisecond))
		synctest.Wait()
		for i, sn := range sns {
			bid, delay := money.Amount(600), 3
			if _, _, err := b.st.UpsertSnipe(b.ctx, b.acct.ID, sn.ItemNo, store.SnipeChange{Bid: &bid, Delay: &delay, Item: sn.Item}, time.Now()); err != nil {
				t.Errorf("snipe %d: edit %v before the moment = %v, want accepted", i, MaxArmLead+100*time.Millisecond, err)
			}
		}
	})
}

// TestSpawnTakesSlotFirst (defect 7): with every background slot busy, new
// background work does not start goroutines that wait for a slot.
func TestSpawnTakesSlotFirst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, func(c *Config) { c.MaxInFlight = 16 }) // 2 background slots
		var sns []store.Snipe
		for range 50 {
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 30 * time.Second})
			sn := b.add(no, 500, 3, snipeOpts{})
			b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
			b.mark(sn.ID, store.StateFiring, store.StatePlaced, outcome.Placed)
			sns = append(sns, sn)
		}
		b.restart()
		b.mk.SetLatency(20 * time.Second) // a marketplace that hangs
		b.start()
		peak := 0
		for range 120 {
			time.Sleep(time.Second)
			peak = max(peak, int(b.sn.live.Load()))
		}
		if limit := 2 + 4; peak > limit {
			t.Errorf("peak sniper goroutines = %d, want at most %d (2 background slots and 4 loops)", peak, limit)
		}
	})
}

// TestResolutionsNotDuplicated (defect 7): a snipe left firing whose first
// lookup failed and whose later lookups take 40 s: every sweep must not
// start another lookup while one runs.
func TestResolutionsNotDuplicated(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 10 * time.Second})
		sn := b.add(no, 500, 3, snipeOpts{})
		b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
		sleepTill(sn.Item.End.Add(time.Second))
		fm := &faultMarket{Market: b.mk, slowBidState: 40 * time.Second}
		b.cfg.Market = fm
		b.restart()
		b.mk.SetInjector(failWhile(markettest.MethodBidState, no, func() bool { return b.mk.Calls(markettest.MethodBidState) == 1 }))
		b.start()
		time.Sleep(2 * time.Minute)
		if peak := fm.peakBidState(); peak > 1 {
			t.Errorf("concurrent lookups of one snipe = %d, want 1 (no duplicates)", peak)
		}
	})
}

// TestOutageRetriesBackOffGlobally (defect 7): 100 placed snipes whose
// items ended while the marketplace is down: their settlement retries share
// one backoff instead of each asking every few seconds.
func TestOutageRetriesBackOffGlobally(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		var sns []store.Snipe
		for range 100 {
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 30 * time.Second})
			sn := b.add(no, 500, 3, snipeOpts{})
			b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
			b.mark(sn.ID, store.StateFiring, store.StatePlaced, outcome.Placed)
			if err := b.mk.Rival("alice", no, 500); err != nil {
				t.Fatal(err)
			}
			sns = append(sns, sn)
		}
		b.restart()
		up := sns[0].Item.End.Add(3 * time.Minute)
		b.mk.SetInjector(failWhile(markettest.MethodBidState, 0, before(up)))
		b.start()
		sleepTill(up)
		if n := b.mk.Calls(markettest.MethodBidState); n > 200 {
			t.Errorf("BidState calls during a 3.5 min outage = %d, want at most 200 for 100 snipes", n)
		}
		sleepTill(up.Add(30 * time.Second))
		for _, sn := range sns {
			if got := b.get(sn.ID); got.Outcome != outcome.Won {
				t.Fatalf("snipe %d after the outage: %s, want won", sn.ID, codeName(got.Outcome))
			}
		}
	})
}

// TestPreflightKeepsRaisedBid (defect 8): pre-flight finds the bid too low,
// but the user raises it between pre-flight's re-read and its write. The
// raised bid must stand and fire.
func TestPreflightKeepsRaisedBid(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		if err := b.mk.Rival("bob", no, 700); err != nil {
			t.Fatal(err)
		}
		if err := b.mk.Rival("carol", no, 800); err != nil { // price 7.25
			t.Fatal(err)
		}
		var raised atomic.Bool
		b.st.onTransition(func(p store.TransitionParams) error {
			if p.Outcome == outcome.TooLow && raised.CompareAndSwap(false, true) {
				bid := money.Amount(2000)
				if _, _, err := b.st.UpsertSnipe(b.ctx, b.acct.ID, no, store.SnipeChange{Bid: &bid, Item: sn.Item}, time.Now()); err != nil {
					return fmt.Errorf("raise: %w", err)
				}
			}
			return nil
		})
		sleepTill(sn.Item.End.Add(time.Minute))
		if !raised.Load() {
			t.Fatal("pre-flight never tried to settle the snipe too-low")
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won || got.Bid != 2000 {
			t.Errorf("snipe %s bid %s (%q), want won with the raised 20.00", codeName(got.Outcome), got.Bid, got.OutcomeDetail)
		}
	})
}

// TestLateStartSamePolicy (defect 8): after a restart, a snipe whose moment
// passed 2 s ago with 3 s left fires at once, whether it was found
// scheduled or firing (never sent).
func TestLateStartSamePolicy(t *testing.T) {
	t.Parallel()
	for _, state := range []store.State{store.StateScheduled, store.StateFiring} {
		t.Run(string(state), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: time.Minute})
				sn := b.add(no, 500, 5, snipeOpts{})
				if state == store.StateFiring {
					b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
				}
				b.restart()
				sleepTill(sn.FireAt.Add(2 * time.Second))
				restart := time.Now()
				b.start()
				sleepTill(sn.Item.End.Add(time.Minute))
				bids := b.ours(no)
				if len(bids) != 1 || !bids[0].Time.Equal(restart) {
					t.Errorf("bids = %+v, want one at the restart %v", bids, restart)
				}
				if got := b.get(sn.ID); got.Outcome != outcome.Won {
					t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
				}
			})
		})
	}
}

// TestAbandonedOutcomeCorrected: the bid lands but its answer is lost, and
// every lookup fails until two minutes after the end. The snipe must be
// final a minute after the end (MarketDown, saying the bid could not be
// confirmed), and once the marketplace answers again the outcome is
// corrected to the truth: here, won.
func TestAbandonedOutcomeCorrected(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupLostAnswer(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		b.start()
		sn := b.add(no, 500, 3, snipeOpts{})
		down := sn.Item.End.Add(2 * time.Minute)
		b.mk.SetInjector(silentAfterFirstSend(no, down, markettest.MethodBidState, markettest.MethodItem, markettest.MethodHistory))
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.State != store.StateSettled || got.Outcome != outcome.MarketDown {
			t.Errorf("a minute after the end: %s/%s (%q), want settled/market-down", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		sleepTill(down.Add(2 * time.Minute))
		got := b.get(sn.ID)
		if got.Outcome != outcome.Won || !strings.Contains(got.OutcomeDetail, "Corrected") {
			t.Errorf("after the marketplace answered: %s (%q), want won, saying it was corrected", codeName(got.Outcome), got.OutcomeDetail)
		}
		if n := len(acceptedOf(b.ours(no))); n != 1 {
			t.Errorf("accepted bids = %d, want 1", n)
		}
	})
}

// TestAbandonedOutcomeCorrectedAfterRestart: a snipe abandoned by an
// earlier process (its bid landed, the marketplace never confirmed it) is
// corrected by the next one, which never had it in memory.
func TestAbandonedOutcomeCorrectedAfterRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		// What the earlier process left: the bid at the marketplace, the
		// snipe settled as abandon does.
		if _, err := b.mk.PlaceBid(b.ctx, "alice", no, 500); err != nil {
			t.Fatal(err)
		}
		b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
		if err := b.st.Store.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateFiring}, To: store.StateSettled,
			Outcome: outcome.MarketDown, Detail: store.UnconfirmedDetail + ": every lookup failed."}); err != nil {
			t.Fatal(err)
		}
		sleepTill(sn.Item.End.Add(time.Minute))
		b.restart()
		b.start()
		sleepTill(sn.Item.End.Add(time.Minute + 3*DefaultSweep))
		got := b.get(sn.ID)
		if got.Outcome != outcome.Won || !strings.Contains(got.OutcomeDetail, "Corrected") {
			t.Errorf("after a restart: %s (%q), want won, saying it was corrected", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}
