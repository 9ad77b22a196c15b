package sniper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// The tests in this file each reproduce one sequence the randomized fault
// test (internal/e2e, TestFaultStorm) found, deterministically, and failed
// before its fix.

// staleMarket is a marketplace whose BidState for one item shows, until a
// local time, the state it had when the staleness began: the "stale"
// simulator fault, a lookup served from a lagging replica or cache.
type staleMarket struct {
	market.Market
	mu     sync.Mutex
	itemNo int64
	until  time.Time
	view   market.BidState
}

// freeze makes BidState(user, itemNo) answer as it does now until until.
func (m *staleMarket) freeze(user string, itemNo int64, until time.Time) error {
	bs, err := m.Market.BidState(context.Background(), user, itemNo)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.itemNo, m.until, m.view = itemNo, until, bs
	return nil
}

func (m *staleMarket) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	m.mu.Lock()
	stale, view := itemNo == m.itemNo && time.Now().Before(m.until), m.view
	m.mu.Unlock()
	if stale {
		return view, nil
	}
	return m.Market.BidState(ctx, user, itemNo)
}

// TestGroupStaleLookupHoldsGroup (storm B): the group's first item was
// placed and leads, but the lookup of it is stale and does not show our
// bid yet when the second item's moment comes. A placed bid is proven to
// have landed, so the stale lookup proves nothing: the second item is
// held back, and settled group-won once the first is won. It must not
// fire and win a second item.
func TestGroupStaleLookupHoldsGroup(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		sm := &staleMarket{Market: b.mk}
		b.cfg.Market = sm
		b.restart()
		first := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		second := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2*time.Minute + 2*time.Second})
		b.start()
		a := b.add(first, 500, 3, snipeOpts{group: "g"})
		c := b.add(second, 500, 3, snipeOpts{group: "g"})
		// Lookups of the first item lag until its end: they show the state
		// before our bid.
		if err := sm.freeze("alice", first, a.Item.End); err != nil {
			t.Fatal(err)
		}
		sleepTill(c.Item.End.Add(time.Minute))
		if got := b.get(a.ID); got.Outcome != outcome.Won {
			t.Errorf("first item: %s/%s (%q), want won", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if got := b.get(c.ID); got.State != store.StateSettled || got.Outcome != outcome.GroupWon {
			t.Errorf("second item: %s/%s (%q), want settled/group-won", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if n := len(b.ours(second)); n != 0 {
			t.Errorf("bids on the second item = %d, want 0 (the first leads)", n)
		}
		if b.mk.Winner(first) == "alice" && b.mk.Winner(second) == "alice" {
			t.Errorf("the group won both items")
		}
	})
}

// TestOffsetStepBackSoonAfterStart (storm A): the marketplace clock steps
// 5 s back 10 s after the start, and a snipe is due 37 s after the start.
// The offset loop must notice the shot is near and measure again before
// it, so that the bid lands at its moment on the marketplace's clock, not
// 5 s early (the loop used to wait a full OffsetEvery after the start).
func TestOffsetStepBackSoonAfterStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 40 * time.Second})
		sn := b.add(no, 500, 3, snipeOpts{})
		time.Sleep(10 * time.Second)
		b.mk.SetOffset(-5 * time.Second)
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(sn.FireAt) {
			t.Fatalf("bids = %+v, want one at marketplace time %v", bids, sn.FireAt)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s (%q), want won", codeName(got.Outcome), got.OutcomeDetail)
		}
	})
}

// slowRequestMarket stalls PlaceBid before it reaches the marketplace and
// answers at once: the asymmetric slow call of the "slow" simulator fault,
// where the middle of the call is not when the marketplace judged the bid.
type slowRequestMarket struct {
	market.Market
	stall time.Duration
}

func (m *slowRequestMarket) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	time.Sleep(m.stall)
	return m.Market.PlaceBid(ctx, user, itemNo, max)
}

// TestSlowSendAfterEndIsMissed (storm C): the bid leaves 1 s before a
// normal end, stalls 1.5 s on the way and is refused as ended. The middle
// of the call is before the end, but the answer came back after it, so
// nothing proves an early end: the outcome is Missed, saying that the slow
// call made it late (not a negative lateness blamed on the clock), and not
// Ended Early.
func TestSlowSendAfterEndIsMissed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.cfg.Market = &slowRequestMarket{Market: b.mk, stall: 1500 * time.Millisecond}
		b.restart()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		b.start()
		sn := b.add(no, 500, 1, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || bids[0].Accepted || !bids[0].Time.Equal(sn.Item.End.Add(500*time.Millisecond)) {
			t.Fatalf("bids = %+v, want one refused at %v (0.5 s after the end)", bids, sn.Item.End.Add(500*time.Millisecond))
		}
		got := b.get(sn.ID)
		if got.State != store.StateSettled || got.Outcome != outcome.Missed {
			t.Errorf("outcome %s/%s (%q), want settled/missed", got.State, codeName(got.Outcome), got.OutcomeDetail)
		}
		if !strings.Contains(got.OutcomeDetail, "sent 1.0 s before the end") || !strings.Contains(got.OutcomeDetail, "took 1.5 s to answer") {
			t.Errorf("detail %q, want why the bid was late (sent 1.0 s before the end, answered after 1.5 s)", got.OutcomeDetail)
		}
	})
}

// TestLostTooLowAnswerIsTooLow (storm E): our 5.00 is sent while the
// marketplace fails, and two rivals push the price to 7.25. After the end
// no bid of ours is there. When the price had passed our maximum before
// the moment (the rivals bid after pre-flight looked), the first bid
// reached the marketplace and was refused as too low, its answer lost:
// the outcome is too-low, not "Marketplace Unavailable … the bid never
// reached it". When the price passed it only after the moment and no
// attempt got through, market-down stays the truth.
func TestLostTooLowAnswerIsTooLow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// rivalsAt is when the rivals bid, relative to the moment.
		rivalsAt time.Duration
		// firstLost: the first bid reaches the marketplace and its answer
		// is lost; otherwise no attempt gets through.
		firstLost bool
		want      outcome.Code
	}{
		{name: "price passed before the moment, answer lost", rivalsAt: -500 * time.Millisecond, firstLost: true, want: outcome.TooLow},
		{name: "price passed after the moment, nothing got through", rivalsAt: time.Second, want: outcome.MarketDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				fm := &faultMarket{Market: b.mk}
				through := 0
				if tt.firstLost {
					fm.loseAnswers(1, 0)
					through = 1
				}
				b.cfg.Market = fm
				b.restart()
				no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
				b.mk.SetInjector(failWhile(markettest.MethodPlaceBid, no, func() bool { return b.mk.Calls(markettest.MethodPlaceBid) > through }))
				b.start()
				sn := b.add(no, 500, 3, snipeOpts{})
				sleepTill(sn.FireAt.Add(tt.rivalsAt))
				for _, r := range []struct {
					who string
					max money.Amount
				}{{"bob", 700}, {"carol", 800}} {
					if err := b.mk.Rival(r.who, no, r.max); err != nil {
						t.Fatal(err)
					}
				}
				sleepTill(sn.Item.End.Add(time.Minute))
				if bids := b.ours(no); len(bids) != through || len(acceptedOf(bids)) != 0 {
					t.Fatalf("bids = %+v, want %d, none accepted", bids, through)
				}
				got := b.get(sn.ID)
				if got.State != store.StateSettled || got.Outcome != tt.want {
					t.Errorf("outcome %s/%s (%q), want settled/%s", got.State, codeName(got.Outcome), got.OutcomeDetail, codeName(tt.want))
				}
			})
		})
	}
}

// TestEndedSnapshotLeftScheduled (storm F): pre-flight saw the auction
// over and stored the item as ended, and the process died before it
// settled the snipe (or the settling writes failed). A snipe whose item is
// stored as ended is no longer armed, so neither the loader nor the
// overdue scan looked at it: it stayed Pending. It must be settled with
// the marketplace's reason within a minute of the end, and no bid sent.
func TestEndedSnapshotLeftScheduled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// cancel ends the auction early (at half its time) rather than
		// letting it run to its end.
		cancel bool
		// crash: the process is down from the end until restartAfter past
		// it; otherwise it runs throughout and the settling writes fail
		// for failFor.
		crash        bool
		restartAfter time.Duration
		failFor      time.Duration
		// crowd is how many other snipes of the account end just after
		// this one (a busy account: the settling scan must not look only
		// at the most recent ones).
		crowd int
		want  outcome.Code
	}{
		{name: "cancelled, crash after pre-flight", cancel: true, crash: true, restartAfter: 5 * time.Second, want: outcome.EndedEarly},
		{name: "cancelled, restart long after", cancel: true, crash: true, restartAfter: 10 * time.Minute, want: outcome.EndedEarly},
		{name: "ended, crash after pre-flight", crash: true, restartAfter: 2 * time.Second, want: outcome.Missed},
		{name: "cancelled, settling writes fail", cancel: true, failFor: 20 * time.Second, want: outcome.EndedEarly},
		{name: "ended, crash, busy account", crash: true, restartAfter: 2 * time.Second, crowd: 150, want: outcome.Missed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
				sn := b.add(no, 500, 3, snipeOpts{})
				for i := range tt.crowd {
					other := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2*time.Minute + time.Duration(i+1)*10*time.Millisecond})
					b.add(other, 0, 3, snipeOpts{}) // watched
				}
				if !tt.crash {
					b.start()
				}
				end := sn.Item.End
				if tt.cancel {
					time.Sleep(time.Minute)
					end = time.Now()
					if err := b.mk.End(no, market.EndedCancelled); err != nil {
						t.Fatal(err)
					}
				} else {
					sleepTill(end)
				}
				if tt.failFor > 0 {
					until := time.Now().Add(tt.failFor)
					b.st.onTransition(func(p store.TransitionParams) error {
						if p.ID == sn.ID && p.To == store.StateSettled && time.Now().Before(until) {
							return errors.New("database is locked")
						}
						return nil
					})
				}
				if tt.crash {
					// What pre-flight stored before the process died.
					it, err := b.mk.Item(b.ctx, no)
					if err != nil {
						t.Fatal(err)
					}
					if err := b.st.UpdateItem(b.ctx, sn.ID, snapshotOf(sn.Item, it)); err != nil {
						t.Fatal(err)
					}
					time.Sleep(tt.restartAfter)
					b.restart()
					b.start()
				}
				sleepTill(maxTime(end, time.Now()).Add(time.Minute))
				if got := b.get(sn.ID); got.State != store.StateSettled || got.Outcome != tt.want {
					t.Errorf("snipe = %s/%s (%q) a minute after the end, want settled/%s", got.State, codeName(got.Outcome), got.OutcomeDetail, codeName(tt.want))
				}
				if n := len(b.ours(no)); n != 0 {
					t.Errorf("bids sent = %d, want 0", n)
				}
			})
		})
	}
}

// TestGroupFreedLateIsNotMissed (storm G): a group item is held back at its
// moment because its sibling's bid may have landed (lost answer, lookups
// failing), and the sibling is proven outbid only seconds before this
// item's end, on a slow store (a busy disk). Re-arming it then sent it
// into the late-start check, which settled it Missed, "reached it late (not
// running, or busy)": untrue, it was held for the group. Whenever the
// sibling is freed, the item either fires (freed with time to prepare the
// shot: ArmLead + RetryCutoff) or stays held; it is never Missed.
func TestGroupFreedLateIsNotMissed(t *testing.T) {
	t.Parallel()
	for left := 500 * time.Millisecond; left <= 5*time.Second; left += 500 * time.Millisecond {
		t.Run(fmt.Sprintf("freed %v before the end", left), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setupLostAnswer(t)
				first := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
				second := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2*time.Minute + 8*time.Second})
				b.start()
				a := b.add(first, 500, 3, snipeOpts{group: "g"})
				c := b.add(second, 500, 5, snipeOpts{group: "g"})
				// The first item's bid lands but its answer is lost, and
				// nothing about it can be learned until left before the
				// second's end; a rival outbids us on it.
				b.mk.SetInjector(silentAfterFirstSend(first, c.Item.End.Add(-left), markettest.MethodBidState))
				// A busy disk: every durable firing mark takes 600 ms.
				b.st.onTransition(func(p store.TransitionParams) error {
					if p.To == store.StateFiring {
						time.Sleep(600 * time.Millisecond)
					}
					return nil
				})
				sleepTill(a.FireAt.Add(time.Second))
				if err := b.mk.Rival("bob", first, 900); err != nil {
					t.Fatal(err)
				}
				if err := b.mk.Rival("bob", second, 900); err != nil {
					t.Fatal(err)
				}
				sleepTill(c.Item.End.Add(time.Minute))
				if got := b.get(a.ID); got.Outcome != outcome.Outbid {
					t.Errorf("first item: %s (%q), want outbid", codeName(got.Outcome), got.OutcomeDetail)
				}
				got, n := b.get(c.ID), len(b.ours(second))
				switch {
				case got.Outcome == outcome.GroupLead && n == 0:
					if !strings.Contains(got.OutcomeDetail, "ruled out only") {
						t.Errorf("second item: group-lead detail %q, want it to say the group was decided too late", got.OutcomeDetail)
					}
				case got.Outcome == outcome.Outbid && n == 1:
				default:
					t.Errorf("second item: %s (%q) with %d bids, want group-lead with none or outbid with one", codeName(got.Outcome), got.OutcomeDetail, n)
				}
			})
		})
	}
}

// TestLateStartTooLowIsTooLow: sniped reaches a forced snipe too late to
// send it, and the price had passed its maximum before its moment. After a
// crash the bid may even have been sent and refused as too low. Either
// way "too low" is the true reason it could not win, not Missed.
func TestLateStartTooLowIsTooLow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 150, 3, snipeOpts{force: true})
		if err := b.mk.Rival("bob", no, 900); err != nil {
			t.Fatal(err)
		}
		if err := b.mk.Rival("carol", no, 400); err != nil {
			t.Fatal(err)
		}
		sleepTill(sn.Item.End.Add(-300 * time.Millisecond)) // down until then
		b.restart()
		b.start()
		sleepTill(sn.Item.End.Add(time.Minute))
		got := b.get(sn.ID)
		if got.Outcome != outcome.TooLow || !strings.Contains(got.OutcomeDetail, "reached it") {
			t.Errorf("outcome %s (%q), want too-low saying sniped reached it late", codeName(got.Outcome), got.OutcomeDetail)
		}
		if n := len(b.ours(no)); n != 0 {
			t.Errorf("bids sent = %d, want 0", n)
		}
	})
}
