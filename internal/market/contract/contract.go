// Package contract is the marketplace contract suite: the behaviour every
// market.Market implementation must share, so that the sniper and the API
// see the same marketplace whether it is the built-in simulator, the
// in-process test fake or the eBay adapter talking to the simulator served
// in eBay's shape.
//
// An implementation's test calls Run with a function that makes a fresh
// Harness: the Market under test and a Control that sets up scenarios and
// reads the ground truth behind the Market's back. Ready-made controls are
// Sim (for a *sim.Sim, also behind an HTTP server) and Fake (for a
// *markettest.Market).
//
// The Market is called on behalf of the users in Users only; the eBay
// adapter's harness links those users before the suite runs. Rival bids
// go through the Control and need no link.
//
// Item fields, prices and end times must match the marketplace's truth
// exactly. Times an implementation may only learn to the second (Now, a
// receipt's time, history times) are compared within a second. The suite
// moves the marketplace clock with Control.Advance and never sleeps; a
// fault the marketplace cannot produce is skipped, never faked.
package contract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// The marketplace users the suite calls the Market for. Seller lists the
// suite's items unless a listing says otherwise; it is also a user, to
// show that a seller cannot bid.
const (
	Ann    = "ann"
	Bob    = "bob"
	Seller = "sally"
)

// Users are every user the suite calls the Market on behalf of.
var Users = []string{Ann, Bob, Seller}

// Listing is an item for Control.Create. Zero fields take the defaults
// noted.
type Listing struct {
	Title    string       // default "Contract item"
	Category string       // default: the implementation's
	Seller   string       // default Seller
	Currency string       // default: the country's
	Country  string       // default US
	Start    money.Amount // default 1.00
	Reserve  money.Amount // 0: none
	BuyItNow money.Amount // 0: none
	EndsIn   time.Duration
}

// Bid is one bid as the marketplace recorded it (ground truth).
type Bid struct {
	Bidder   string
	Max      money.Amount
	Accepted bool
}

// Control drives a marketplace behind the Market under test. Every method
// acts at once, without the failures it injects. A fault the marketplace
// cannot produce returns an error wrapping errors.ErrUnsupported, and the
// subtests that need it are skipped.
type Control interface {
	// Create lists an item ending l.EndsIn from now (marketplace clock).
	Create(ctx context.Context, l Listing) (int64, error)
	// Rival places a bid for user as a rival bidder would.
	Rival(ctx context.Context, user string, itemNo int64, max money.Amount) error
	// EndEarly ends an auction as its seller: cancelled, or sold to the
	// high bidder.
	EndEarly(ctx context.Context, itemNo int64, sell bool) error
	// BuyItNow buys an item outright for buyer.
	BuyItNow(ctx context.Context, buyer string, itemNo int64) error
	// Watch puts an item on user's watch list.
	Watch(ctx context.Context, user string, itemNo int64) error
	// Remove deletes an item: every call on it is then not found.
	Remove(ctx context.Context, itemNo int64) error
	// Advance moves the marketplace clock forward by d.
	Advance(d time.Duration)

	// Ineligible makes user's bids on itemNo refused as ineligible.
	Ineligible(ctx context.Context, user string, itemNo int64) error
	// Unavailable makes every Market call fail with market.ErrUnavailable
	// while on (an implementation that retries sees every retry fail).
	Unavailable(ctx context.Context, on bool) error
	// Deny makes every Market call on behalf of user fail with
	// market.ErrNotAuthorized.
	Deny(ctx context.Context, user string) error

	// Truth returns the item as the marketplace holds it.
	Truth(ctx context.Context, itemNo int64) (market.Item, error)
	// Bids returns every bid the item received, accepted or refused by the
	// rules, in arrival order.
	Bids(ctx context.Context, itemNo int64) ([]Bid, error)
	// Winner returns who bought the item ("" while running or when nobody
	// did).
	Winner(ctx context.Context, itemNo int64) (string, error)
}

// Harness is one marketplace under test.
type Harness struct {
	Market  market.Market
	Control Control
	// Lacks lists what the Market cannot tell through its marketplace's
	// API; the suite leaves exactly those checks out.
	Lacks Lacks
}

// Lacks names what a marketplace's API does not offer. The simulator and
// the test fake lack nothing; the eBay adapter lacks all four (docs/ebay.md,
// "What eBay's APIs cannot tell").
type Lacks struct {
	// History: History returns no entries (no public bid history).
	History bool
	// EndReasons: an auction that ended early (cancelled, sold, Buy It
	// Now) reads as ended normally, and a Buy It Now buyer without a bid
	// is not reported as the winner.
	EndReasons bool
	// StartPriceAfterBids: Item.StartPrice is not known once the item has
	// bids or has ended.
	StartPriceAfterBids bool
	// ClockCall: Now reads a local clock, so it answers while the
	// marketplace is unavailable.
	ClockCall bool
}

// test is one subtest of the suite.
type test struct {
	name string
	run  func(t *testing.T, b *bundle)
}

// Run runs the suite. newHarness makes a fresh marketplace for each
// subtest (they run in parallel) and registers its cleanup with t.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Item", itemTests},
		{"Search", searchTests},
		{"WatchList", watchTests},
		{"PlaceBid", bidTests},
		{"BidState", stateTests},
		{"History", historyTests},
		{"Now", nowTests},
		{"Failures", failureTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					h := newHarness(t)
					tt.run(t, &bundle{ctx: t.Context(), m: h.Market, c: h.Control, lacks: h.Lacks})
				})
			}
		})
	}
}

// bundle is what a subtest works with.
type bundle struct {
	ctx   context.Context
	m     market.Market
	c     Control
	lacks Lacks
}

// expect turns what the marketplace holds into what a Market lacking
// b.lacks can report.
func (b *bundle) expect(it market.Item, st market.BidState) (market.Item, market.BidState) {
	if b.lacks.EndReasons {
		if it.Ended {
			it.EndReason = market.EndedNormally
		}
		if st.Ended {
			if st.EndReason == market.EndedBuyItNow && !st.HasBid {
				st.Won = false
			}
			st.EndReason = market.EndedNormally
		}
	}
	return it, st
}

// unknownItem is a number no harness lists.
const unknownItem int64 = 1

// create lists l with the suite's defaults and fails the test on error.
func (b *bundle) create(t *testing.T, l Listing) int64 {
	t.Helper()
	if l.Title == "" {
		l.Title = "Contract item"
	}
	if l.Seller == "" {
		l.Seller = Seller
	}
	if l.Start == 0 {
		l.Start = 1_00
	}
	if l.EndsIn == 0 {
		l.EndsIn = time.Hour
	}
	no, err := b.c.Create(b.ctx, l)
	if err != nil {
		t.Fatalf("Control.Create(%+v) = %v", l, err)
	}
	return no
}

// rival places a rival bid and fails the test on error.
func (b *bundle) rival(t *testing.T, user string, itemNo int64, max money.Amount) {
	t.Helper()
	if err := b.c.Rival(b.ctx, user, itemNo, max); err != nil {
		t.Fatalf("Control.Rival(%s, %d, %v) = %v", user, itemNo, max, err)
	}
}

// must fails the test when a Control call fails, and skips it when the
// marketplace cannot produce the fault.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s: %v", what, err)
	}
	if err != nil {
		t.Fatalf("%s = %v", what, err)
	}
}

// truth returns the marketplace's own view of an item.
func (b *bundle) truth(t *testing.T, itemNo int64) market.Item {
	t.Helper()
	it, err := b.c.Truth(b.ctx, itemNo)
	if err != nil {
		t.Fatalf("Control.Truth(%d) = %v", itemNo, err)
	}
	return it
}

// bids returns the marketplace's record of an item's bids.
func (b *bundle) bids(t *testing.T, itemNo int64) []Bid {
	t.Helper()
	bs, err := b.c.Bids(b.ctx, itemNo)
	if err != nil {
		t.Fatalf("Control.Bids(%d) = %v", itemNo, err)
	}
	return bs
}

// item calls Market.Item and fails the test on error.
func (b *bundle) item(t *testing.T, itemNo int64) market.Item {
	t.Helper()
	it, err := b.m.Item(b.ctx, itemNo)
	if err != nil {
		t.Fatalf("Item(%d) = %v", itemNo, err)
	}
	return it
}

// state calls Market.BidState and fails the test on error.
func (b *bundle) state(t *testing.T, user string, itemNo int64) market.BidState {
	t.Helper()
	st, err := b.m.BidState(b.ctx, user, itemNo)
	if err != nil {
		t.Fatalf("BidState(%s, %d) = %v", user, itemNo, err)
	}
	return st
}

// place calls Market.PlaceBid and fails the test unless it is accepted.
func (b *bundle) place(t *testing.T, user string, itemNo int64, max money.Amount) market.BidReceipt {
	t.Helper()
	r, err := b.m.PlaceBid(b.ctx, user, itemNo, max)
	if err != nil {
		t.Fatalf("PlaceBid(%s, %d, %v) = %v", user, itemNo, max, err)
	}
	return r
}

// wantIs fails the test unless err matches want (nil: no error).
func wantIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s = %v, want no error", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", what, err, want)
	}
}
