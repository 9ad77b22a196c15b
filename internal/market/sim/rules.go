package sim

import (
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// auction is the bidding state of one listing: the proxy engine. It knows
// nothing of time, sellers or persistence; lot wraps it with those. Its
// price is always a function of the bidders' maxima, so replaying the
// accepted bids in order rebuilds it exactly (that is how a restart loads).
type auction struct {
	currency string
	start    money.Amount
	reserve  money.Amount // 0: no reserve
	bin      money.Amount // 0: no Buy It Now

	// maxima holds every bidder's highest accepted maximum and the sequence
	// number of the bid that set it (ties go to the lower sequence).
	maxima map[string]proxy
	seq    int // accepted bids so far; also the next bid's sequence

	leader    string
	leaderMax money.Amount
	price     money.Amount
}

type proxy struct {
	max money.Amount
	seq int
}

func newAuction(currency string, start, reserve, bin money.Amount) *auction {
	return &auction{currency: currency, start: start, reserve: reserve, bin: bin,
		maxima: make(map[string]proxy), price: start}
}

// bids is the number of accepted bids.
func (a *auction) bids() int { return a.seq }

// reserveMet reports whether the leading maximum reaches the reserve (always
// true without a reserve, even before the first bid).
func (a *auction) reserveMet() bool {
	return a.reserve == 0 || (a.leader != "" && a.leaderMax >= a.reserve)
}

// binOffered reports whether Buy It Now is still available. As on the real
// site, it disappears with the first bid; on a listing with a reserve it
// stays until a bid meets the reserve.
func (a *auction) binOffered() bool {
	if a.bin == 0 {
		return false
	}
	if a.reserve > 0 {
		return !a.reserveMet()
	}
	return a.seq == 0
}

// minimumToBid is the lowest maximum a bidder other than the leader may place.
func (a *auction) minimumToBid() money.Amount {
	return market.MinimumToBid(a.currency, a.start, a.price, a.seq)
}

// check decides whether bidder may place max now. It returns nil or one of
// the market sentinels.
func (a *auction) check(bidder string, max money.Amount) error {
	if a.binOffered() && max >= a.bin {
		return market.ErrBINPriceReached
	}
	if bidder == a.leader {
		// The high bidder raising their own maximum needs no increment.
		if max <= a.leaderMax {
			return market.ErrCannotLowerMax
		}
		return nil
	}
	if a.seq == 0 {
		if max < a.start {
			return market.ErrTooLow
		}
		return nil
	}
	if max < a.price {
		return market.ErrTooLow
	}
	if max < a.minimumToBid() {
		return market.ErrIncrementNotMet
	}
	return nil
}

// accept records an accepted bid (check must have passed) and recomputes
// the leader and price.
func (a *auction) accept(bidder string, max money.Amount) {
	if p, ok := a.maxima[bidder]; !ok || max > p.max {
		a.maxima[bidder] = proxy{max: max, seq: a.seq}
	}
	a.seq++
	a.settle()
}

// settle recomputes leader and price from the maxima:
// price = min(highest max, second max + increment(second max)), never below
// the start price, raised to the reserve once the leading maximum reaches it.
func (a *auction) settle() {
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
	price := a.start
	if hasSecond {
		price = min(best.max, second+market.Increment(a.currency, second))
		price = max(price, a.start)
	}
	if a.reserve > 0 && best.max >= a.reserve && price < a.reserve {
		price = a.reserve
	}
	if leader == "" {
		price = a.start
	}
	a.price = price
}

// maxOf returns bidder's highest accepted maximum (0 when none).
func (a *auction) maxOf(bidder string) (money.Amount, bool) {
	p, ok := a.maxima[bidder]
	return p.max, ok
}
