// Package auction is the one set of auction rules every marketplace
// implementation in sniped follows: the simulator (market/sim), the test
// fake (market/markettest) and, through the simulator's HTTP server, the
// eBay adapter's test double.
//
// An Auction is one listing's bidding state: proxy bidding with the
// marketplace's increments, the earlier bid winning ties, the reserve, Buy
// It Now (offered until the first bid, or on a listing with a reserve until
// a bid meets it), the hard end time, early ends and a purchase by Buy It
// Now. It does no I/O and has no clock: every time is passed in, so the
// same calls always give the same answers, and replaying the accepted bids
// in order rebuilds an auction exactly. It is not safe for concurrent use;
// the caller holds a lock per listing.
package auction

import (
	"errors"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// Terms are what a seller sets when listing; they never change.
type Terms struct {
	Currency string // ISO 4217; selects the increment table (market.Increment)
	Seller   string
	Start    money.Amount // the start price, > 0
	Reserve  money.Amount // 0: no reserve
	BuyItNow money.Amount // 0: no Buy It Now
	End      time.Time    // the scheduled (hard) end
}

// Ending is how an auction was ended before its end time: early by its
// seller, or by a Buy It Now purchase. The zero Ending means none; a normal
// end is derived from the clock and never stored.
type Ending struct {
	Reason market.EndReason // EndedCancelled, EndedSold or EndedBuyItNow
	At     time.Time
	Buyer  string // the Buy It Now buyer
}

// Bid is one bid to judge.
type Bid struct {
	Bidder string
	Max    money.Amount
	Time   time.Time
	// Ineligible is the marketplace's own verdict that Bidder may not bid on
	// this listing (buyer requirements, a blocked bidder). The rules decide
	// where it ranks among the other refusals.
	Ineligible bool
}

// Errors of the seller's and buyer's operations, beside the market
// sentinels (which report an auction that has already ended).
var (
	// ErrNotOffered: Buy It Now is not (or no longer) offered.
	ErrNotOffered = errors.New("Buy It Now is not offered")
	// ErrNothingToSell: selling early needs a high bidder at or above the
	// reserve.
	ErrNothingToSell = errors.New("no high bidder at or above the reserve to sell to")
)

// proxy is a bidder's highest accepted maximum and the sequence number of
// the bid that set it (ties go to the lower sequence).
type proxy struct {
	max money.Amount
	seq int
}

// Auction is one listing's bidding state. Create it with New.
type Auction struct {
	terms  Terms
	ending Ending

	maxima  map[string]proxy
	history []market.HistoryEntry // accepted bids, each with the price after it

	leader    string
	leaderMax money.Amount
	price     money.Amount
}

// New opens an auction on terms, with no bids.
func New(t Terms) *Auction {
	return &Auction{terms: t, maxima: make(map[string]proxy), price: t.Start}
}

// Terms returns the listing's terms.
func (a *Auction) Terms() Terms { return a.terms }

// Ending returns the early end or Buy It Now purchase, if any.
func (a *Auction) Ending() Ending { return a.ending }

// Restore sets an ending loaded from storage (no checks: it was checked
// when it happened).
func (a *Auction) Restore(e Ending) { a.ending = e }

// Status is how the auction stands at now: Running until the end time (the
// end is hard: at End it is over), or how it ended.
func (a *Auction) Status(now time.Time) market.EndReason {
	if a.ending.Reason != market.Running {
		return a.ending.Reason
	}
	if !now.Before(a.terms.End) {
		return market.EndedNormally
	}
	return market.Running
}

// EndTime is when the auction ended early, or else its scheduled end.
func (a *Auction) EndTime() time.Time {
	if a.ending.Reason != market.Running {
		return a.ending.At
	}
	return a.terms.End
}

// Bids is the number of accepted bids.
func (a *Auction) Bids() int { return len(a.history) }

// Leader is the high bidder and their maximum ("" and 0 before any bid).
func (a *Auction) Leader() (string, money.Amount) { return a.leader, a.leaderMax }

// MaxOf returns bidder's highest accepted maximum, and whether they bid.
func (a *Auction) MaxOf(bidder string) (money.Amount, bool) {
	p, ok := a.maxima[bidder]
	return p.max, ok
}

// ReserveMet reports whether the leading maximum reaches the reserve (always
// true without a reserve, even before the first bid).
func (a *Auction) ReserveMet() bool {
	return a.terms.Reserve == 0 || (a.leader != "" && a.leaderMax >= a.terms.Reserve)
}

// BuyItNowOffered reports whether Buy It Now is available to bidders, as on
// the real site: it disappears with the first bid, except that on a listing
// with a reserve it stays until a bid meets the reserve. It says nothing
// about whether the auction is still running.
func (a *Auction) BuyItNowOffered() bool {
	if a.terms.BuyItNow == 0 {
		return false
	}
	if a.terms.Reserve > 0 {
		return !a.ReserveMet()
	}
	return len(a.history) == 0
}

// Price is the visible price: the Buy It Now price once bought that way,
// otherwise the proxy price.
func (a *Auction) Price() money.Amount {
	if a.ending.Reason == market.EndedBuyItNow {
		return a.terms.BuyItNow
	}
	return a.price
}

// MinimumToBid is the lowest maximum a bidder other than the leader may
// place: the start price before any bid, then the price plus its increment.
func (a *Auction) MinimumToBid() money.Amount {
	return market.MinimumToBid(a.terms.Currency, a.terms.Start, a.price, len(a.history))
}

// Winner is who bought the item at now: the Buy It Now buyer, the high
// bidder of an auction sold early, or of one that ended normally with its
// reserve met; "" while running and when nobody did.
func (a *Auction) Winner(now time.Time) string {
	switch a.Status(now) {
	case market.EndedBuyItNow:
		return a.ending.Buyer
	case market.EndedSold:
		return a.leader
	case market.EndedNormally:
		if a.ReserveMet() {
			return a.leader
		}
	}
	return ""
}

// Check judges b against the rules at b.Time and returns nil (the bid
// would be accepted) or the market sentinel of the first rule it breaks, in
// this order: the auction has ended (by Buy It Now, early by its seller, or
// at its end time); the bidder is the seller; the bidder is ineligible; the
// maximum is not positive, or reaches a Buy It Now price still offered; the
// high bidder does not raise their maximum (raising needs no increment);
// the maximum is under the start price (first bid) or the price (too low),
// or under the price plus its increment (increment not met).
func (a *Auction) Check(b Bid) error {
	switch a.Status(b.Time) {
	case market.Running:
	case market.EndedBuyItNow:
		return market.ErrEndedByBuyItNow
	case market.EndedCancelled, market.EndedSold:
		return market.ErrCancelled
	default:
		return market.ErrEnded
	}
	switch {
	case b.Bidder == a.terms.Seller:
		return market.ErrSellerCannotBid
	case b.Ineligible:
		return market.ErrIneligible
	case b.Max <= 0:
		return market.ErrTooLow
	case a.BuyItNowOffered() && b.Max >= a.terms.BuyItNow:
		return market.ErrBINPriceReached
	case b.Bidder == a.leader:
		if b.Max <= a.leaderMax {
			return market.ErrCannotLowerMax
		}
		return nil
	case len(a.history) == 0:
		if b.Max < a.terms.Start {
			return market.ErrTooLow
		}
		return nil
	case b.Max < a.price:
		return market.ErrTooLow
	case b.Max < a.MinimumToBid():
		return market.ErrIncrementNotMet
	}
	return nil
}

// Place judges b and, when it passes, accepts it. A refusal is a
// *market.BidError carrying the minimum to bid and the price at the time.
func (a *Auction) Place(b Bid) (market.BidReceipt, error) {
	if err := a.Check(b); err != nil {
		return market.BidReceipt{}, a.Refusal(err)
	}
	a.Accept(b.Bidder, b.Max, b.Time)
	return market.BidReceipt{HighBidder: a.leader == b.Bidder, CurrentPrice: a.price, Time: b.Time}, nil
}

// Refusal wraps a rejection in the *market.BidError a bidder is shown.
func (a *Auction) Refusal(err error) *market.BidError {
	return &market.BidError{Err: err, Minimum: a.MinimumToBid(), CurrentPrice: a.Price()}
}

// Accept records an accepted bid without judging it: Check passed when it
// was placed (or it is being replayed from storage). It recomputes the
// leader and the price.
func (a *Auction) Accept(bidder string, max money.Amount, at time.Time) {
	if p, ok := a.maxima[bidder]; !ok || max > p.max {
		a.maxima[bidder] = proxy{max: max, seq: len(a.history)}
	}
	a.settle()
	a.history = append(a.history, market.HistoryEntry{Time: at, Price: a.price, Bidder: bidder})
}

// settle recomputes leader and price from the maxima:
// price = min(highest max, second max + increment(second max)), never below
// the start price, raised to the reserve once the leading maximum reaches it.
func (a *Auction) settle() {
	var (
		leader    string
		best      proxy
		second    money.Amount
		hasSecond bool
	)
	for name, p := range a.maxima {
		switch {
		case leader == "":
			leader, best = name, p
		case p.max > best.max || (p.max == best.max && p.seq < best.seq):
			second, hasSecond = best.max, true
			leader, best = name, p
		case !hasSecond || p.max > second:
			second, hasSecond = p.max, true
		}
	}
	a.leader, a.leaderMax = leader, best.max
	price := a.terms.Start
	if hasSecond {
		price = min(best.max, second+market.Increment(a.terms.Currency, second))
		price = max(price, a.terms.Start)
	}
	if a.terms.Reserve > 0 && best.max >= a.terms.Reserve && price < a.terms.Reserve {
		price = a.terms.Reserve
	}
	a.price = price
}

// History returns the accepted bids in order, each with the visible price
// right after it.
func (a *Auction) History() []market.HistoryEntry {
	return append([]market.HistoryEntry(nil), a.history...)
}

// EndEarly ends a running auction at now, as its seller: sell=false
// cancels it (all bids void, nobody wins); sell=true sells to the high
// bidder at the current price, which needs a high bidder at or above the
// reserve (ErrNothingToSell). An auction that has ended gives the market
// sentinel saying how.
func (a *Auction) EndEarly(now time.Time, sell bool) error {
	if err := a.running(now); err != nil {
		return err
	}
	reason := market.EndedCancelled
	if sell {
		if a.leader == "" || !a.ReserveMet() {
			return ErrNothingToSell
		}
		reason = market.EndedSold
	}
	a.ending = Ending{Reason: reason, At: now}
	return nil
}

// BuyItNow ends a running auction at now with a purchase by buyer at the
// Buy It Now price. The seller cannot buy (market.ErrSellerCannotBid); Buy
// It Now must still be offered (ErrNotOffered).
func (a *Auction) BuyItNow(buyer string, now time.Time) error {
	if err := a.running(now); err != nil {
		return err
	}
	switch {
	case buyer == a.terms.Seller:
		return market.ErrSellerCannotBid
	case !a.BuyItNowOffered():
		return ErrNotOffered
	}
	a.ending = Ending{Reason: market.EndedBuyItNow, At: now, Buyer: buyer}
	return nil
}

// running returns nil while the auction runs, else the sentinel for how it
// ended.
func (a *Auction) running(now time.Time) error {
	switch a.Status(now) {
	case market.Running:
		return nil
	case market.EndedBuyItNow:
		return market.ErrEndedByBuyItNow
	case market.EndedCancelled, market.EndedSold:
		return market.ErrCancelled
	}
	return market.ErrEnded
}

// Standing is user's standing at now, as market.Market.BidState reports
// it. After a cancellation or a Buy It Now nobody is the high bidder.
func (a *Auction) Standing(user string, now time.Time) market.BidState {
	st := a.Status(now)
	mx, has := a.maxima[user]
	return market.BidState{
		HasBid:       has,
		MaxBid:       mx.max,
		HighBidder:   has && a.leader == user && st != market.EndedCancelled && st != market.EndedBuyItNow,
		Ended:        st != market.Running,
		EndReason:    st,
		Won:          st != market.Running && user != "" && a.Winner(now) == user,
		ReserveMet:   a.ReserveMet(),
		CurrentPrice: a.Price(),
	}
}

// Fill sets the fields of it that the auction decides: currency, seller,
// start, current price, minimum to bid, bids, reserve flags, the Buy It Now
// price while offered, end time and status. The caller fills the rest of
// the listing (title, category, pictures, shipping, ...).
func (a *Auction) Fill(it *market.Item, now time.Time) {
	st := a.Status(now)
	it.Currency = a.terms.Currency
	it.SellerID = a.terms.Seller
	it.StartPrice = a.terms.Start
	it.CurrentPrice = a.Price()
	it.MinimumToBid = a.MinimumToBid()
	it.Bids = len(a.history)
	it.HasReserve = a.terms.Reserve > 0
	it.ReserveMet = a.ReserveMet()
	it.BuyItNow = 0
	if st == market.Running && a.BuyItNowOffered() {
		it.BuyItNow = a.terms.BuyItNow
	}
	it.End = a.EndTime()
	it.Ended = st != market.Running
	it.EndReason = st
}
