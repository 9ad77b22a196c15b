package sim

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// refBid is an accepted bid in the reference model.
type refBid struct {
	bidder string
	max    money.Amount
}

// refAuction is an independent, brute-force model of proxy bidding. Bids
// are processed in arrival order; each new challenger fights the leader in
// a step-by-step proxy war, its proxy raising one increment at a time and
// the leader's proxy answering, until one side is exhausted (a losing proxy
// always ends at its full maximum). It shares no code with auction except
// market.Increment, which is tested on its own.
type refAuction struct {
	currency            string
	start, reserve, bin money.Amount
	accepted            []refBid

	leader    string
	leaderMax money.Amount
	price     money.Amount
	// bestLoser is the highest maximum a beaten proxy has bid.
	bestLoser    money.Amount
	hasBestLoser bool
}

type refState struct {
	leader    string
	leaderMax money.Amount
	price     money.Amount
}

func (r *refAuction) state() refState {
	if r.leader == "" {
		return refState{price: r.start}
	}
	return refState{leader: r.leader, leaderMax: r.leaderMax, price: r.price}
}

func (r *refAuction) inc(a money.Amount) money.Amount { return market.Increment(r.currency, a) }

func (r *refAuction) lose(a money.Amount) {
	if !r.hasBestLoser || a > r.bestLoser {
		r.bestLoser, r.hasBestLoser = a, true
	}
}

// war runs the challenger's proxy (maximum m) against the leader's. The
// challenger bid later, so it loses ties.
func (r *refAuction) war(challenger string, m money.Amount) {
	for {
		b := min(m, r.price+r.inc(r.price)) // challenger's next proxy bid
		if b > r.leaderMax {
			// The leader's proxy bids its full maximum and is beaten.
			r.lose(r.leaderMax)
			r.price = min(m, r.leaderMax+r.inc(r.leaderMax))
			r.leader, r.leaderMax = challenger, m
			return
		}
		r.price = min(r.leaderMax, b+r.inc(b)) // the leader's proxy answers
		if b == m {
			r.lose(m)
			return
		}
	}
}

// place judges and (when accepted) applies a bid.
func (r *refAuction) place(bidder string, max money.Amount) error {
	st := r.state()
	reserveMet := r.reserve == 0 || (st.leader != "" && st.leaderMax >= r.reserve)
	binOffered := r.bin > 0 && ((r.reserve > 0 && !reserveMet) || (r.reserve == 0 && len(r.accepted) == 0))
	switch {
	case binOffered && max >= r.bin:
		return market.ErrBINPriceReached
	case bidder == st.leader && max <= st.leaderMax:
		return market.ErrCannotLowerMax
	case bidder == st.leader:
	case len(r.accepted) == 0 && max < r.start:
		return market.ErrTooLow
	case len(r.accepted) == 0:
	case max < st.price:
		return market.ErrTooLow
	case max < st.price+r.inc(st.price):
		return market.ErrIncrementNotMet
	}
	r.accepted = append(r.accepted, refBid{bidder, max})
	switch {
	case r.leader == "":
		r.leader, r.leaderMax, r.price = bidder, max, r.start
	case bidder == r.leader:
		// Raising one's own maximum: the leader's proxy answers the best
		// beaten bid again, now with more room.
		r.leaderMax = max
		if r.hasBestLoser {
			r.price = min(max, r.bestLoser+r.inc(r.bestLoser))
		}
	default:
		r.war(bidder, max)
	}
	if r.reserve > 0 && r.leaderMax >= r.reserve && r.price < r.reserve {
		r.price = r.reserve
	}
	return nil
}

// TestProxyBiddingMatchesReference drives the auction engine and the
// brute-force reference with the same random bid sequences and compares
// every decision, the price, the leader, the reserve flag and the minimum.
func TestProxyBiddingMatchesReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	bidders := []string{"ann", "bob", "cat", "dan"}
	const sequences = 3000
	for seq := range sequences {
		cur := market.Currencies[r.IntN(len(market.Currencies))]
		start := money.Amount(1 + r.IntN(20_000))
		var reserve, bin money.Amount
		if r.IntN(3) == 0 {
			reserve = start + money.Amount(r.IntN(30_000))
		}
		if r.IntN(4) == 0 {
			bin = max(start, reserve) + 1 + money.Amount(r.IntN(40_000))
		}
		got := newAuction(cur, start, reserve, bin)
		ref := &refAuction{currency: cur, start: start, reserve: reserve, bin: bin}
		var maxima []money.Amount
		for step := range 1 + r.IntN(25) {
			who := bidders[r.IntN(len(bidders))]
			price := got.price
			inc := market.Increment(cur, price)
			var bid money.Amount
			switch k := r.IntN(10); {
			case k == 0 && len(maxima) > 0: // tie with an earlier maximum
				bid = maxima[r.IntN(len(maxima))]
			case k == 1 && reserve > 0: // exactly the reserve, or a cent off
				bid = reserve + money.Amount(r.IntN(3)-1)
			case k == 2: // exactly the minimum, or a cent under
				bid = got.minimumToBid() - money.Amount(r.IntN(2))
			case k == 3 && bin > 0:
				bid = bin + money.Amount(r.IntN(3)-1)
			default: // around the price, up to a few increments above
				bid = price + money.Amount(r.IntN(int(5*inc))) - inc
			}
			bid = max(bid, 1)
			wantErr := ref.place(who, bid)
			gotErr := got.check(who, bid)
			if gotErr == nil {
				got.accept(who, bid)
				maxima = append(maxima, bid)
			}
			if !errors.Is(gotErr, wantErr) || (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("seq %d step %d (%s start %v reserve %v bin %v): %s bids %v: got %v, want %v",
					seq, step, cur, start, reserve, bin, who, bid, gotErr, wantErr)
			}
			want := ref.state()
			if got.price != want.price || got.leader != want.leader || got.leaderMax != want.leaderMax {
				t.Fatalf("seq %d step %d (%s start %v reserve %v bin %v) after %s bids %v: price %v leader %q (max %v), want price %v leader %q (max %v); bids %v",
					seq, step, cur, start, reserve, bin, who, bid, got.price, got.leader, got.leaderMax, want.price, want.leader, want.leaderMax, ref.accepted)
			}
			wantMet := reserve == 0 || (want.leader != "" && want.leaderMax >= reserve)
			if got.reserveMet() != wantMet {
				t.Fatalf("seq %d step %d: reserveMet = %v, want %v", seq, step, got.reserveMet(), wantMet)
			}
			if got.price > got.leaderMax && got.leader != "" {
				t.Fatalf("seq %d step %d: price %v above the leading maximum %v", seq, step, got.price, got.leaderMax)
			}
		}
	}
}

func TestAuctionExamples(t *testing.T) {
	t.Parallel()
	type bid struct {
		who     string
		max     money.Amount
		wantErr error
		price   money.Amount
		leader  string
	}
	tests := []struct {
		name                string
		cur                 string
		start, reserve, bin money.Amount
		bids                []bid
	}{
		{"single bid stays at start", "USD", 1_00, 0, 0, []bid{
			{"a", 20_00, nil, 1_00, "a"},
		}},
		{"second bid raises by one increment", "USD", 1_00, 0, 0, []bid{
			{"a", 20_00, nil, 1_00, "a"},
			{"b", 9_00, nil, 9_50, "a"},
			{"c", 9_60, market.ErrIncrementNotMet, 9_50, "a"},
			{"c", 9_40, market.ErrTooLow, 9_50, "a"},
			{"c", 20_01, nil, 20_01, "c"}, // capped by the new leader's max
		}},
		{"GBP help page example", "GBP", 1_00, 0, 0, []bid{
			{"first", 20_00, nil, 1_00, "first"},
			{"second", 9_00, nil, 9_50, "first"},
			{"third", 20_01, nil, 20_01, "third"},
		}},
		{"tie goes to the earlier bid", "USD", 1_00, 0, 0, []bid{
			{"a", 10_00, nil, 1_00, "a"},
			{"b", 10_00, nil, 10_00, "a"},
		}},
		{"own max: raise without increment, never lower", "USD", 1_00, 0, 0, []bid{
			{"a", 10_00, nil, 1_00, "a"},
			{"a", 10_01, nil, 1_00, "a"},
			{"a", 10_01, market.ErrCannotLowerMax, 1_00, "a"},
			{"a", 5_00, market.ErrCannotLowerMax, 1_00, "a"},
		}},
		{"reserve: raised to the reserve once a max reaches it", "USD", 1_00, 50_00, 0, []bid{
			{"a", 30_00, nil, 1_00, "a"},
			{"b", 60_00, nil, 50_00, "b"},
			{"a", 50_50, market.ErrIncrementNotMet, 50_00, "b"},
			{"a", 56_00, nil, 57_00, "b"},
		}},
		{"reserve: never above the max", "USD", 1_00, 50_00, 0, []bid{
			{"a", 40_00, nil, 1_00, "a"},
			{"b", 45_00, nil, 41_00, "b"},
		}},
		{"BIN gone with the first bid", "USD", 1_00, 0, 100_00, []bid{
			{"a", 100_00, market.ErrBINPriceReached, 1_00, ""},
			{"a", 99_99, nil, 1_00, "a"},
			{"b", 150_00, nil, 100_99, "b"},
		}},
		{"BIN with reserve stays until the reserve is met", "USD", 1_00, 50_00, 100_00, []bid{
			{"a", 20_00, nil, 1_00, "a"},
			{"b", 100_00, market.ErrBINPriceReached, 1_00, "a"},
			{"b", 60_00, nil, 50_00, "b"},
			{"c", 100_00, nil, 61_00, "c"}, // BIN gone: min(100, 60 + 1.00)
		}},
		{"first bid below start", "EUR", 5_00, 0, 0, []bid{
			{"a", 4_99, market.ErrTooLow, 5_00, ""},
			{"a", 5_00, nil, 5_00, "a"},
		}},
	}
	for _, tt := range tests {
		a := newAuction(tt.cur, tt.start, tt.reserve, tt.bin)
		for i, b := range tt.bids {
			err := a.check(b.who, b.max)
			if err == nil {
				a.accept(b.who, b.max)
			}
			if !errors.Is(err, b.wantErr) || (err == nil) != (b.wantErr == nil) {
				t.Errorf("%s: bid %d (%s %v) = %v, want %v", tt.name, i, b.who, b.max, err, b.wantErr)
			}
			if a.price != b.price || a.leader != b.leader {
				t.Errorf("%s: after bid %d: price %v leader %q, want %v %q", tt.name, i, a.price, a.leader, b.price, b.leader)
			}
		}
	}
}
