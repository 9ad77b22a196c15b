package sniper

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

func TestFiresAtEndMinusDelayAndWins(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(10 * time.Second))

		bids := b.ours(no)
		if len(bids) != 1 {
			t.Fatalf("alice's bids = %d, want 1", len(bids))
		}
		if want := sn.Item.End.Add(-3 * time.Second); !bids[0].Time.Equal(want) {
			t.Errorf("bid sent at %v, want %v (end − delay)", bids[0].Time, want)
		}
		got := b.get(sn.ID)
		if got.State != store.StateSettled || got.Outcome != outcome.Won {
			t.Errorf("snipe = %s/%s, want settled/won", got.State, codeName(got.Outcome))
		}
		if !got.Item.Ended {
			t.Errorf("snapshot Ended = false after settlement, want true")
		}
	})
}

// TestAccountLookupFailureRetried: a store error while arming (the
// account's marketplace user could not be read) puts the snipe back and
// arms it again shortly, in time for its moment.
func TestAccountLookupFailureRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		fireAt := sn.Item.End.Add(-3 * time.Second)
		// Just before the arm: forget the cached user, fail the next read.
		sleepTill(fireAt.Add(-DefaultArmLead - 100*time.Millisecond))
		b.sn.accMu.Lock()
		clear(b.sn.accounts)
		b.sn.accMu.Unlock()
		b.st.mu.Lock()
		b.st.failAccounts = 1
		b.st.mu.Unlock()
		sleepTill(sn.Item.End.Add(10 * time.Second))

		b.st.mu.Lock()
		left := b.st.failAccounts
		b.st.mu.Unlock()
		if left != 0 {
			t.Fatalf("the injected failure was not reached")
		}
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(fireAt) {
			t.Fatalf("bids = %+v, want one at %v (end − delay)", bids, fireAt)
		}
		if got := b.get(sn.ID); got.State != store.StateSettled || got.Outcome != outcome.Won {
			t.Errorf("snipe = %s/%s, want settled/won", got.State, codeName(got.Outcome))
		}
	})
}

// leadMarket is a marketplace reached over a network whose one-way time
// is lead (markettest's latency is split evenly between the two ways).
type leadMarket struct {
	market.Market
	lead time.Duration
}

func (m leadMarket) SendLead() time.Duration { return m.lead }

// TestSendLeadArrivesOnTime: over a network, the bid leaves one one-way
// time early so that it arrives at end − delay on the marketplace's clock.
func TestSendLeadArrivesOnTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		mk := markettest.New(clock.Real{})
		mk.SetLatency(400 * time.Millisecond)
		b := setup(t, func(c *Config) { c.Market = leadMarket{Market: mk, lead: 200 * time.Millisecond} })
		b.mk = mk
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(10 * time.Second))
		bids := b.ours(no)
		if len(bids) != 1 {
			t.Fatalf("alice's bids = %d, want 1", len(bids))
		}
		if want := sn.Item.End.Add(-3 * time.Second); !bids[0].Time.Equal(want) {
			t.Errorf("bid arrived at %v, want %v (end − delay)", bids[0].Time, want)
		}
	})
}

// TestClockOffset: the marketplace clock runs 45 s ahead; the bid must still
// land at end − delay on the marketplace's clock.
func TestClockOffset(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{45 * time.Second, -20 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t)
			b.mk.SetOffset(skew)
			b.start()
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
			sn := b.add(no, 500, 5, snipeOpts{})
			time.Sleep(3 * time.Minute)
			if got := b.sn.ClockOffset(); got != skew {
				t.Errorf("ClockOffset() = %v, want %v", got, skew)
			}
			bids := b.ours(no)
			if len(bids) != 1 {
				t.Fatalf("alice's bids = %d, want 1", len(bids))
			}
			if want := sn.Item.End.Add(-5 * time.Second); !bids[0].Time.Equal(want) {
				t.Errorf("skew %v: bid at marketplace time %v, want %v", skew, bids[0].Time, want)
			}
		})
	}
}

// TestOutcomes reaches every outcome a single snipe can end with.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  markettest.ItemSpec
		bid   money.Amount
		opts  snipeOpts
		setup func(b *bundle, no int64)
		// during runs 30 s before the end.
		during   func(b *bundle, no int64)
		want     outcome.Code
		wantBids int // alice's bids the marketplace saw
		// wantDetail must appear in the outcome detail.
		wantDetail string
	}{
		{name: "won", want: outcome.Won, wantBids: 1},
		{name: "outbid", setup: func(b *bundle, no int64) { b.mk.Rival("bob", no, 1000) }, want: outcome.Outbid, wantBids: 1},
		{name: "outbid late", during: func(b *bundle, no int64) {
			// A rival sniper overtakes after our shot.
			b.mk.OnPlaced(func(user string, no int64, _ money.Amount) {
				if user == "alice" {
					b.mk.Rival("carol", no, 2000)
				}
			})
		}, want: outcome.Outbid, wantBids: 1},
		{name: "reserve", spec: markettest.ItemSpec{Reserve: 1000}, want: outcome.ReserveNotMet, wantBids: 1},
		{name: "ended early", during: func(b *bundle, no int64) { b.mk.End(no, market.EndedCancelled) }, want: outcome.EndedEarly},
		{name: "sold early", setup: func(b *bundle, no int64) { b.mk.Rival("bob", no, 150) }, during: func(b *bundle, no int64) { b.mk.End(no, market.EndedSold) }, want: outcome.EndedEarly},
		{name: "bin", spec: markettest.ItemSpec{BuyItNow: 5000}, during: func(b *bundle, no int64) { b.mk.BuyItNow(no, "bob") }, want: outcome.BuyItNow},
		{name: "too low", setup: func(b *bundle, no int64) {
			b.mk.Rival("bob", no, 800)
			b.mk.Rival("carol", no, 900)
		}, want: outcome.TooLow},
		{name: "bid-incr", setup: func(b *bundle, no int64) {
			b.mk.Rival("bob", no, 400)
			b.mk.Rival("carol", no, 500) // price 425, minimum 450
		}, bid: 440, want: outcome.IncrementNotMet},
		{name: "bid-incr forced", opts: snipeOpts{force: true}, setup: func(b *bundle, no int64) {
			b.mk.Rival("bob", no, 400)
			b.mk.Rival("carol", no, 500)
		}, bid: 440, want: outcome.IncrementNotMet, wantBids: 1},
		{name: "too low forced", opts: snipeOpts{force: true}, setup: func(b *bundle, no int64) {
			b.mk.Rival("bob", no, 800)
			b.mk.Rival("carol", no, 900)
		}, want: outcome.TooLow, wantBids: 1},
		{name: "own max", setup: func(b *bundle, no int64) { b.mk.Rival("alice", no, 600) }, want: outcome.OwnMax, wantBids: 2},
		{name: "disabled", opts: snipeOpts{disabled: true}, want: outcome.Disabled},
		{name: "ineligible", setup: func(b *bundle, no int64) { b.mk.Bar(no, "alice") }, want: outcome.Ineligible, wantBids: 1},
		{name: "seller", spec: markettest.ItemSpec{Seller: "alice"}, want: outcome.Ineligible, wantBids: 1},
		{name: "bin price reached", spec: markettest.ItemSpec{BuyItNow: 400}, want: outcome.Ineligible, wantBids: 1},
		{name: "market down", setup: func(b *bundle, no int64) {
			b.mk.SetInjector(func(method, _ string, _ int64) error {
				if method == markettest.MethodPlaceBid {
					return market.ErrUnavailable
				}
				return nil
			})
		}, want: outcome.MarketDown},
		{name: "market auth", setup: func(b *bundle, no int64) {
			b.mk.SetInjector(func(method, _ string, _ int64) error {
				if method == markettest.MethodPlaceBid {
					return &market.BidError{Err: market.ErrNotAuthorized}
				}
				return nil
			})
		}, want: outcome.MarketAuth, wantDetail: "Reconnect your marketplace account"},
		{name: "not found", during: func(b *bundle, no int64) { b.mk.Remove(no) }, want: outcome.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				spec := tt.spec
				spec.StartPrice, spec.EndsIn = 100, 2*time.Minute
				no := b.mk.Add(spec)
				if tt.setup != nil {
					tt.setup(b, no)
				}
				bid := tt.bid
				if bid == 0 {
					bid = 500
				}
				b.start()
				sn := b.add(no, bid, 3, tt.opts)
				if tt.during != nil {
					sleepTill(sn.Item.End.Add(-30 * time.Second))
					tt.during(b, no)
				}
				sleepTill(sn.Item.End.Add(time.Minute))
				got := b.get(sn.ID)
				if got.State != store.StateSettled || got.Outcome != tt.want {
					t.Errorf("snipe = %s/%s (%q), want settled/%s", got.State, codeName(got.Outcome), got.OutcomeDetail, codeName(tt.want))
				}
				if !strings.Contains(got.OutcomeDetail, tt.wantDetail) {
					t.Errorf("detail = %q, want it to say %q", got.OutcomeDetail, tt.wantDetail)
				}
				if n := len(b.ours(no)); n != tt.wantBids {
					t.Errorf("alice's bids at the marketplace = %d, want %d", n, tt.wantBids)
				}
			})
		})
	}
}

// TestRetries: transient failures are retried while time remains, and never
// after the retry cutoff before the end.
func TestRetries(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		fails := 2
		b.mk.SetInjector(func(method, _ string, _ int64) error {
			if method == markettest.MethodPlaceBid && fails > 0 {
				fails--
				return market.ErrUnavailable
			}
			return nil
		})
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("after 2 transient failures: outcome %s, want won", codeName(got.Outcome))
		}
		if got := b.mk.Calls(markettest.MethodPlaceBid); got != 3 {
			t.Errorf("PlaceBid calls = %d, want 3", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		var last time.Time
		b.mk.SetInjector(func(method, _ string, _ int64) error {
			if method == markettest.MethodPlaceBid {
				last = time.Now()
				return market.ErrUnavailable
			}
			return nil
		})
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.Outcome != outcome.MarketDown {
			t.Errorf("always unavailable: outcome %s, want market-down", codeName(got.Outcome))
		}
		n := b.mk.Calls(markettest.MethodPlaceBid)
		if n < 3 || n > 10 {
			t.Errorf("PlaceBid calls = %d, want a bounded number of retries (3–10)", n)
		}
		if cutoff := sn.Item.End.Add(-DefaultRetryCutoff); last.After(cutoff) {
			t.Errorf("last attempt at %v, after the cutoff %v", last, cutoff)
		}
	})
}

// setupLostAnswer is setup with a marketplace that loses the answer to the
// first PlaceBid after the bid has landed.
func setupLostAnswer(t *testing.T) *bundle {
	b := setup(t)
	fm := &faultMarket{Market: b.mk}
	fm.loseAnswers(1, 0)
	b.cfg.Market = fm
	b.restart()
	return b
}

// TestLostAnswerNotResent: a transient error after the bid arrived must not
// lead to a second bid.
func TestLostAnswerNotResent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupLostAnswer(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))
		if n := len(b.ours(no)); n != 1 {
			t.Errorf("alice's bids = %d, want 1", n)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s, want won", codeName(got.Outcome))
		}
	})
}

// TestUnconfirmedBidIsCheckedAfterTheEnd: the bid lands but its answer is
// lost, and the marketplace stays unavailable for every later call until
// the auction ends. The snipe must not be settled as a loss: it stays
// firing and the sweep learns after the end that it was won.
func TestUnconfirmedBidIsCheckedAfterTheEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupLostAnswer(t)
		var endMs atomic.Int64 // set once the item exists; read by the sniper's goroutines
		b.mk.SetInjector(func(method, _ string, _ int64) error {
			// Calls counts the call being made: the first PlaceBid goes
			// through (its answer is lost); after it, both calls fail.
			placed := b.mk.Calls(markettest.MethodPlaceBid)
			down := time.Now().UnixMilli() < endMs.Load() &&
				(method == markettest.MethodPlaceBid && placed > 1 || method == markettest.MethodBidState && placed > 0)
			if down {
				return market.ErrUnavailable
			}
			return nil
		})
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		endMs.Store(sn.Item.End.UnixMilli())
		sleepTill(sn.Item.End.Add(-time.Second))
		if got := b.get(sn.ID); got.State != store.StateFiring || got.Outcome != outcome.MarketDown {
			t.Errorf("before the end: state %s outcome %s, want firing and market-down (unconfirmed)", got.State, codeName(got.Outcome))
		}
		sleepTill(sn.Item.End.Add(time.Minute))
		if n := len(b.ours(no)); n != 1 {
			t.Errorf("our bids = %d, want 1", n)
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("after the end: outcome %s (%s), want won", codeName(got.Outcome), got.State)
		}
	})
}

// TestChangedRearms: an edit of the delay moves the shot; disabling stops it.
func TestChangedRearms(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		no2 := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn2 := b.add(no2, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(-20 * time.Second))
		b.add(no, 700, 12, snipeOpts{})
		b.add(no2, 500, 3, snipeOpts{disabled: true})
		sleepTill(sn.Item.End.Add(time.Minute))

		bids := b.ours(no)
		if len(bids) != 1 || bids[0].Max != 700 || !bids[0].Time.Equal(sn.Item.End.Add(-12*time.Second)) {
			t.Errorf("bids after edit = %+v, want one of 7.00 at end − 12 s", bids)
		}
		if n := len(b.ours(no2)); n != 0 {
			t.Errorf("disabled snipe sent %d bids, want 0", n)
		}
		if got := b.get(sn2.ID); got.Outcome != outcome.Disabled {
			t.Errorf("disabled snipe outcome %s, want disabled", codeName(got.Outcome))
		}
	})
}

// TestEditAfterFiringConflicts: once marked firing, an edit is refused and
// the bid that leaves is the one that was armed.
func TestEditAfterFiringConflicts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(-3*time.Second - DefaultArmLead/2))
		synctest.Wait()
		bid, delay := money.Amount(900), 3
		_, _, err := b.st.UpsertSnipe(b.ctx, b.acct.ID, no, store.SnipeChange{Bid: &bid, Delay: &delay, Item: sn.Item}, time.Now())
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("edit while firing: err %v, want ErrConflict", err)
		}
		sleepTill(sn.Item.End.Add(time.Minute))
		if bids := b.ours(no); len(bids) != 1 || bids[0].Max != 500 {
			t.Errorf("bids = %+v, want exactly one of 5.00", bids)
		}
	})
}

// TestPreflightMovesEnd: pre-flight learns a new end time and the shot
// follows it.
func TestPreflightMovesEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 3 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		newEnd := sn.Item.End.Add(40 * time.Second)
		b.mk.SetEnd(no, newEnd)
		sleepTill(newEnd.Add(time.Minute))
		bids := b.ours(no)
		if len(bids) != 1 || !bids[0].Time.Equal(newEnd.Add(-3*time.Second)) {
			t.Errorf("bids = %+v, want one at the new end − 3 s (%v)", bids, newEnd.Add(-3*time.Second))
		}
		if got := b.get(sn.ID); got.Outcome != outcome.Won {
			t.Errorf("outcome %s, want won", codeName(got.Outcome))
		}
	})
}

func TestCodeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want outcome.Code
	}{
		{market.ErrTooLow, outcome.TooLow},
		{market.ErrIncrementNotMet, outcome.IncrementNotMet},
		{market.ErrCannotLowerMax, outcome.OwnMax},
		{market.ErrIneligible, outcome.Ineligible},
		{market.ErrSellerCannotBid, outcome.Ineligible},
		{market.ErrBINPriceReached, outcome.Ineligible},
		{market.ErrNotAuthorized, outcome.MarketAuth},
		{market.ErrNotFound, outcome.NotFound},
		{market.ErrEnded, outcome.EndedEarly},
		{market.ErrCancelled, outcome.EndedEarly},
		{market.ErrEndedByBuyItNow, outcome.BuyItNow},
		{market.ErrUnavailable, outcome.MarketDown},
		{context.DeadlineExceeded, outcome.MarketDown},
	}
	for _, tt := range tests {
		if got := codeFor(&market.BidError{Err: tt.err}); got != tt.want {
			t.Errorf("codeFor(%v) = %s, want %s", tt.err, codeName(got), codeName(tt.want))
		}
	}
}
