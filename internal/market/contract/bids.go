package contract

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// bidCase is one PlaceBid scenario: an item, what happens to it first,
// Ann's bid and the answer wanted.
type bidCase struct {
	name    string
	listing Listing
	// setup prepares the item; it may return another item number to bid on.
	setup func(t *testing.T, b *bundle, no int64) int64
	user  string // default Ann
	max   money.Amount
	// want is the refusal (nil: accepted).
	want error
	// wantHigh and wantPrice check an accepted bid's receipt.
	wantHigh  bool
	wantPrice money.Amount
	// wantMinimum checks a refusal's minimum to bid (0: not checked);
	// wantPrice then checks its current price.
	wantMinimum money.Amount
	// recorded is true when a refusal reaches the item (the rules refused
	// it) and so is among its bids.
	recorded bool
}

// rivals returns a setup placing rival bids of the given maxima in order.
func rivals(maxima ...money.Amount) func(t *testing.T, b *bundle, no int64) int64 {
	return func(t *testing.T, b *bundle, no int64) int64 {
		for i, m := range maxima {
			b.rival(t, fmt.Sprintf("rival%d", i+1), no, m)
		}
		return no
	}
}

var bidCases = []bidCase{
	{name: "FirstBidAtStart", listing: Listing{Start: 5_00}, max: 5_00, wantHigh: true, wantPrice: 5_00},
	{name: "FirstBidAboveStart", listing: Listing{Start: 5_00}, max: 20_00, wantHigh: true, wantPrice: 5_00},
	{name: "OutbidByProxy", setup: rivals(20_00), max: 9_00, wantPrice: 9_50},
	{name: "OverRival", setup: rivals(5_00), max: 20_00, wantHigh: true, wantPrice: 5_50},
	{name: "OverRivalCappedByOwnMax", setup: rivals(9_90), max: 10_00, wantHigh: true, wantPrice: 10_00},
	{name: "TieGoesToEarlier", setup: rivals(10_00), max: 10_00, wantPrice: 10_00},
	{name: "GBPIncrements", listing: Listing{Currency: "GBP", Country: "GB"}, setup: rivals(20_00), max: 15_00, wantPrice: 16_00},
	{name: "EURIncrements", listing: Listing{Currency: "EUR", Country: "DE"}, setup: rivals(20_00), max: 10_00, wantPrice: 10_50},
	{name: "ReserveLiftsPrice", listing: Listing{Reserve: 50_00}, setup: rivals(30_00), max: 60_00, wantHigh: true, wantPrice: 50_00},
	{name: "ReserveNeverAboveMax", listing: Listing{Reserve: 50_00}, setup: rivals(30_00), max: 40_00, wantHigh: true, wantPrice: 31_00},
	{name: "RaiseOwnMaxWithoutIncrement", setup: func(t *testing.T, b *bundle, no int64) int64 {
		b.rival(t, "rival1", no, 5_00)
		b.place(t, Ann, no, 10_00) // price 5.50
		return no
	}, max: 10_01, wantHigh: true, wantPrice: 5_50},
	{name: "BuyItNowGoneAfterBid", listing: Listing{Start: 10_00, BuyItNow: 50_00}, setup: rivals(12_00), max: 70_00, wantHigh: true, wantPrice: 12_50},
	{name: "BuyItNowWithReserveStaysUntilMet", listing: Listing{Reserve: 50_00, BuyItNow: 100_00}, setup: rivals(20_00), max: 100_00,
		want: market.ErrBINPriceReached, recorded: true},

	{name: "TooLowUnderStart", listing: Listing{Start: 5_00}, max: 4_99, want: market.ErrTooLow, wantMinimum: 5_00, wantPrice: 5_00, recorded: true},
	{name: "TooLowUnderPrice", setup: rivals(20_00, 9_00), max: 9_49, want: market.ErrTooLow, wantMinimum: 10_00, wantPrice: 9_50, recorded: true},
	{name: "IncrementNotMet", setup: rivals(20_00, 9_00), max: 9_75, want: market.ErrIncrementNotMet, wantMinimum: 10_00, wantPrice: 9_50, recorded: true},
	{name: "IncrementNotMetAtPrice", setup: rivals(20_00, 9_00), max: 9_50, want: market.ErrIncrementNotMet, wantMinimum: 10_00, wantPrice: 9_50, recorded: true},
	{name: "Ended", listing: Listing{EndsIn: time.Hour}, setup: func(t *testing.T, b *bundle, no int64) int64 {
		b.c.Advance(time.Hour)
		return no
	}, max: 5_00, want: market.ErrEnded, recorded: true},
	{name: "EndedByBuyItNow", listing: Listing{BuyItNow: 50_00}, setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "BuyItNow", b.c.BuyItNow(b.ctx, "rival1", no))
		return no
	}, max: 5_00, want: market.ErrEndedByBuyItNow, recorded: true},
	{name: "Cancelled", setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "EndEarly", b.c.EndEarly(b.ctx, no, false))
		return no
	}, max: 5_00, want: market.ErrCancelled, recorded: true},
	{name: "SoldEarly", setup: func(t *testing.T, b *bundle, no int64) int64 {
		b.rival(t, "rival1", no, 2_00)
		must(t, "EndEarly", b.c.EndEarly(b.ctx, no, true))
		return no
	}, max: 5_00, want: market.ErrCancelled, recorded: true},
	{name: "SellerCannotBid", user: Seller, max: 5_00, want: market.ErrSellerCannotBid, recorded: true},
	{name: "CannotRepeatOwnMax", setup: func(t *testing.T, b *bundle, no int64) int64 {
		b.place(t, Ann, no, 10_00)
		return no
	}, max: 10_00, want: market.ErrCannotLowerMax, recorded: true},
	{name: "CannotLowerOwnMax", setup: func(t *testing.T, b *bundle, no int64) int64 {
		b.place(t, Ann, no, 10_00)
		return no
	}, max: 5_00, want: market.ErrCannotLowerMax, recorded: true},
	{name: "Ineligible", setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "Ineligible", b.c.Ineligible(b.ctx, Ann, no))
		return no
	}, max: 5_00, want: market.ErrIneligible, recorded: true},
	{name: "BuyItNowPriceReached", listing: Listing{BuyItNow: 50_00}, max: 50_00, want: market.ErrBINPriceReached, recorded: true},
	{name: "AboveBuyItNowPrice", listing: Listing{BuyItNow: 50_00}, max: 60_00, want: market.ErrBINPriceReached, recorded: true},
	{name: "NotFound", setup: func(t *testing.T, b *bundle, no int64) int64 { return unknownItem }, max: 5_00, want: market.ErrNotFound},
	{name: "Removed", setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "Remove", b.c.Remove(b.ctx, no))
		return no
	}, max: 5_00, want: market.ErrNotFound},
	{name: "Unavailable", setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "Unavailable", b.c.Unavailable(b.ctx, true))
		t.Cleanup(func() { b.c.Unavailable(b.ctx, false) })
		return no
	}, max: 5_00, want: market.ErrUnavailable},
	{name: "NotAuthorized", setup: func(t *testing.T, b *bundle, no int64) int64 {
		must(t, "Deny", b.c.Deny(b.ctx, Ann))
		return no
	}, max: 5_00, want: market.ErrNotAuthorized},
}

var bidTests = func() []test {
	var ts []test
	for _, bc := range bidCases {
		ts = append(ts, test{bc.name, func(t *testing.T, b *bundle) { runBidCase(t, b, bc) }})
	}
	return ts
}()

func runBidCase(t *testing.T, b *bundle, bc bidCase) {
	no := b.create(t, bc.listing)
	target := no
	if bc.setup != nil {
		target = bc.setup(t, b, no)
	}
	user := bc.user
	if user == "" {
		user = Ann
	}
	var before market.Item
	if target != unknownItem && !errors.Is(bc.want, market.ErrNotFound) {
		before = b.truth(t, target)
	}
	nBefore := 0
	if before.ItemNo != 0 {
		nBefore = len(b.bids(t, target))
	}
	r, err := b.m.PlaceBid(b.ctx, user, target, bc.max)
	if bc.want == nil {
		if err != nil {
			t.Fatalf("PlaceBid(%s, %v) = %v, want accepted", user, bc.max, err)
		}
		if r.HighBidder != bc.wantHigh || r.CurrentPrice != bc.wantPrice {
			t.Errorf("PlaceBid(%s, %v) = high bidder %v at %v, want %v at %v", user, bc.max, r.HighBidder, r.CurrentPrice, bc.wantHigh, bc.wantPrice)
		}
		if now, err := b.m.Now(b.ctx); err != nil || r.Time.IsZero() || r.Time.Sub(now).Abs() > time.Second {
			t.Errorf("receipt time %v, want the marketplace's now %v (%v)", r.Time, now, err)
		}
		bids := b.bids(t, target)
		if len(bids) != nBefore+1 || bids[len(bids)-1] != (Bid{Bidder: user, Max: bc.max, Accepted: true}) {
			t.Errorf("marketplace bids = %+v, want %d before and then %s's accepted %v", bids, nBefore, user, bc.max)
		}
		it := b.truth(t, target)
		if it.CurrentPrice != bc.wantPrice || it.Bids != before.Bids+1 {
			t.Errorf("item after the bid: price %v bids %d, want %v and %d", it.CurrentPrice, it.Bids, bc.wantPrice, before.Bids+1)
		}
		return
	}
	if !errors.Is(err, bc.want) {
		t.Fatalf("PlaceBid(%s, %v) = %v, want %v", user, bc.max, err, bc.want)
	}
	if bc.wantMinimum != 0 {
		var be *market.BidError
		if !errors.As(err, &be) || be.Minimum != bc.wantMinimum || be.CurrentPrice != bc.wantPrice {
			t.Errorf("refusal %v = %+v, want a *market.BidError with minimum %v and price %v", err, be, bc.wantMinimum, bc.wantPrice)
		}
	}
	if before.ItemNo == 0 {
		return
	}
	must(t, "Unavailable(false)", ignoreUnsupported(b.c.Unavailable(b.ctx, false)))
	bids := b.bids(t, target)
	wantN := nBefore
	if bc.recorded {
		wantN++
	}
	if len(bids) != wantN {
		t.Errorf("marketplace bids = %+v, want %d (the refusal %s)", bids, wantN, map[bool]string{true: "recorded", false: "never reached the item"}[bc.recorded])
	}
	for _, bid := range bids[nBefore:] {
		if bid.Accepted {
			t.Errorf("marketplace bids = %+v: a refused bid was accepted", bids)
		}
	}
	after := b.truth(t, target)
	if after.CurrentPrice != before.CurrentPrice || after.Bids != before.Bids || after.MinimumToBid != before.MinimumToBid {
		t.Errorf("item after the refusal: price %v bids %d minimum %v, want unchanged %v %d %v",
			after.CurrentPrice, after.Bids, after.MinimumToBid, before.CurrentPrice, before.Bids, before.MinimumToBid)
	}
}

// ignoreUnsupported drops errors.ErrUnsupported.
func ignoreUnsupported(err error) error {
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
