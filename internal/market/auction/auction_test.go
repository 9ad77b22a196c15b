package auction_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
	"github.com/sniped/sniped/internal/money"
)

// t0 is when the test bids are placed; tEnd is long after.
var (
	t0   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tEnd = t0.Add(time.Hour)
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
// always ends at its full maximum). It shares no code with package auction
// except market.Increment, which is tested on its own.
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
		got := auction.New(auction.Terms{Currency: cur, Start: start, Reserve: reserve, BuyItNow: bin, End: tEnd})
		ref := &refAuction{currency: cur, start: start, reserve: reserve, bin: bin}
		var maxima []money.Amount
		for step := range 1 + r.IntN(25) {
			who := bidders[r.IntN(len(bidders))]
			price := got.Price()
			inc := market.Increment(cur, price)
			var bid money.Amount
			switch k := r.IntN(10); {
			case k == 0 && len(maxima) > 0: // tie with an earlier maximum
				bid = maxima[r.IntN(len(maxima))]
			case k == 1 && reserve > 0: // exactly the reserve, or a cent off
				bid = reserve + money.Amount(r.IntN(3)-1)
			case k == 2: // exactly the minimum, or a cent under
				bid = got.MinimumToBid() - money.Amount(r.IntN(2))
			case k == 3 && bin > 0:
				bid = bin + money.Amount(r.IntN(3)-1)
			default: // around the price, up to a few increments above
				bid = price + money.Amount(r.IntN(int(5*inc))) - inc
			}
			bid = max(bid, 1)
			wantErr := ref.place(who, bid)
			gotErr := got.Check(auction.Bid{Bidder: who, Max: bid, Time: t0})
			if gotErr == nil {
				got.Accept(who, bid, t0)
				maxima = append(maxima, bid)
			}
			if !errors.Is(gotErr, wantErr) || (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("seq %d step %d (%s start %v reserve %v bin %v): %s bids %v: got %v, want %v",
					seq, step, cur, start, reserve, bin, who, bid, gotErr, wantErr)
			}
			want := ref.state()
			leader, leaderMax := got.Leader()
			if got.Price() != want.price || leader != want.leader || leaderMax != want.leaderMax {
				t.Fatalf("seq %d step %d (%s start %v reserve %v bin %v) after %s bids %v: price %v leader %q (max %v), want price %v leader %q (max %v); bids %v",
					seq, step, cur, start, reserve, bin, who, bid, got.Price(), leader, leaderMax, want.price, want.leader, want.leaderMax, ref.accepted)
			}
			wantMet := reserve == 0 || (want.leader != "" && want.leaderMax >= reserve)
			if got.ReserveMet() != wantMet {
				t.Fatalf("seq %d step %d: ReserveMet() = %v, want %v", seq, step, got.ReserveMet(), wantMet)
			}
			if got.Price() > leaderMax && leader != "" {
				t.Fatalf("seq %d step %d: price %v above the leading maximum %v", seq, step, got.Price(), leaderMax)
			}
			wantMin := start
			if len(ref.accepted) > 0 {
				wantMin = want.price + market.Increment(cur, want.price)
			}
			if got.MinimumToBid() != wantMin {
				t.Fatalf("seq %d step %d: MinimumToBid() = %v, want %v", seq, step, got.MinimumToBid(), wantMin)
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
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := auction.New(auction.Terms{Currency: tt.cur, Start: tt.start, Reserve: tt.reserve, BuyItNow: tt.bin, End: tEnd})
			for i, b := range tt.bids {
				_, err := a.Place(auction.Bid{Bidder: b.who, Max: b.max, Time: t0})
				if !errors.Is(err, b.wantErr) || (err == nil) != (b.wantErr == nil) {
					t.Errorf("bid %d (%s %v) = %v, want %v", i, b.who, b.max, err, b.wantErr)
				}
				if leader, _ := a.Leader(); a.Price() != b.price || leader != b.leader {
					t.Errorf("after bid %d: price %v leader %q, want %v %q", i, a.Price(), leader, b.price, b.leader)
				}
			}
		})
	}
}

// TestCheckOrder checks which refusal wins when a bid breaks several rules.
func TestCheckOrder(t *testing.T) {
	t.Parallel()
	terms := auction.Terms{Currency: "USD", Seller: "sally", Start: 10_00, BuyItNow: 50_00, End: tEnd}
	tests := []struct {
		name   string
		ending func(a *auction.Auction)
		bid    auction.Bid
		want   error
	}{
		{"ended beats seller", nil, auction.Bid{Bidder: "sally", Max: 1, Time: tEnd}, market.ErrEnded},
		{"cancelled beats seller", func(a *auction.Auction) { a.EndEarly(t0, false) }, auction.Bid{Bidder: "sally", Max: 1, Time: t0}, market.ErrCancelled},
		{"ended by BIN", func(a *auction.Auction) { a.BuyItNow("bob", t0) }, auction.Bid{Bidder: "ann", Max: 20_00, Time: t0}, market.ErrEndedByBuyItNow},
		{"seller beats ineligible", nil, auction.Bid{Bidder: "sally", Max: 20_00, Time: t0, Ineligible: true}, market.ErrSellerCannotBid},
		{"ineligible beats too low", nil, auction.Bid{Bidder: "ann", Max: 1, Time: t0, Ineligible: true}, market.ErrIneligible},
		{"zero is too low", nil, auction.Bid{Bidder: "ann", Max: 0, Time: t0}, market.ErrTooLow},
		{"BIN price reached", nil, auction.Bid{Bidder: "ann", Max: 50_00, Time: t0}, market.ErrBINPriceReached},
		{"under the start", nil, auction.Bid{Bidder: "ann", Max: 9_99, Time: t0}, market.ErrTooLow},
		{"the last millisecond counts", nil, auction.Bid{Bidder: "ann", Max: 10_00, Time: tEnd.Add(-time.Millisecond)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := auction.New(terms)
			if tt.ending != nil {
				tt.ending(a)
			}
			if err := a.Check(tt.bid); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("Check(%+v) = %v, want %v", tt.bid, err, tt.want)
			}
		})
	}
}

// TestEndings covers every way an auction ends: who wins, the price, the
// standing of the bidders and what the seller's and buyer's operations say.
func TestEndings(t *testing.T) {
	t.Parallel()
	mid := t0.Add(time.Minute)
	tests := []struct {
		name       string
		terms      auction.Terms
		bids       []auction.Bid
		end        func(a *auction.Auction) error
		at         time.Time // when the result is read
		wantErr    error
		wantReason market.EndReason
		wantWinner string
		wantPrice  money.Amount
		wantEnd    time.Time
	}{
		{name: "running", terms: auction.Terms{Start: 1_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			at: mid, wantReason: market.Running, wantPrice: 1_00, wantEnd: tEnd},
		{name: "normal end", terms: auction.Terms{Start: 1_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}, {Bidder: "bob", Max: 3_00}},
			at: tEnd, wantReason: market.EndedNormally, wantWinner: "ann", wantPrice: 3_25, wantEnd: tEnd},
		{name: "reserve not met", terms: auction.Terms{Start: 1_00, Reserve: 10_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			at: tEnd, wantReason: market.EndedNormally, wantPrice: 1_00, wantEnd: tEnd},
		{name: "no bids", terms: auction.Terms{Start: 1_00},
			at: tEnd, wantReason: market.EndedNormally, wantPrice: 1_00, wantEnd: tEnd},
		{name: "cancelled", terms: auction.Terms{Start: 1_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			end: func(a *auction.Auction) error { return a.EndEarly(mid, false) },
			at:  tEnd, wantReason: market.EndedCancelled, wantPrice: 1_00, wantEnd: mid},
		{name: "sold early", terms: auction.Terms{Start: 1_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			end: func(a *auction.Auction) error { return a.EndEarly(mid, true) },
			at:  mid, wantReason: market.EndedSold, wantWinner: "ann", wantPrice: 1_00, wantEnd: mid},
		{name: "sold without bids", terms: auction.Terms{Start: 1_00},
			end: func(a *auction.Auction) error { return a.EndEarly(mid, true) }, wantErr: auction.ErrNothingToSell,
			at: mid, wantReason: market.Running, wantPrice: 1_00, wantEnd: tEnd},
		{name: "sold below the reserve", terms: auction.Terms{Start: 1_00, Reserve: 10_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			end: func(a *auction.Auction) error { return a.EndEarly(mid, true) }, wantErr: auction.ErrNothingToSell,
			at: mid, wantReason: market.Running, wantPrice: 1_00, wantEnd: tEnd},
		{name: "end early after the end", terms: auction.Terms{Start: 1_00},
			end: func(a *auction.Auction) error { return a.EndEarly(tEnd, false) }, wantErr: market.ErrEnded,
			at: tEnd, wantReason: market.EndedNormally, wantPrice: 1_00, wantEnd: tEnd},
		{name: "Buy It Now", terms: auction.Terms{Start: 1_00, BuyItNow: 20_00},
			end: func(a *auction.Auction) error { return a.BuyItNow("cat", mid) },
			at:  mid, wantReason: market.EndedBuyItNow, wantWinner: "cat", wantPrice: 20_00, wantEnd: mid},
		{name: "Buy It Now gone after a bid", terms: auction.Terms{Start: 1_00, BuyItNow: 20_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			end: func(a *auction.Auction) error { return a.BuyItNow("cat", mid) }, wantErr: auction.ErrNotOffered,
			at: mid, wantReason: market.Running, wantPrice: 1_00, wantEnd: tEnd},
		{name: "Buy It Now with reserve not met", terms: auction.Terms{Start: 1_00, Reserve: 10_00, BuyItNow: 20_00}, bids: []auction.Bid{{Bidder: "ann", Max: 5_00}},
			end: func(a *auction.Auction) error { return a.BuyItNow("cat", mid) },
			at:  tEnd, wantReason: market.EndedBuyItNow, wantWinner: "cat", wantPrice: 20_00, wantEnd: mid},
		{name: "Buy It Now by the seller", terms: auction.Terms{Start: 1_00, BuyItNow: 20_00},
			end: func(a *auction.Auction) error { return a.BuyItNow("sally", mid) }, wantErr: market.ErrSellerCannotBid,
			at: mid, wantReason: market.Running, wantPrice: 1_00, wantEnd: tEnd},
		{name: "Buy It Now twice", terms: auction.Terms{Start: 1_00, BuyItNow: 20_00},
			end: func(a *auction.Auction) error {
				a.BuyItNow("cat", mid)
				return a.BuyItNow("dan", mid)
			}, wantErr: market.ErrEndedByBuyItNow,
			at: mid, wantReason: market.EndedBuyItNow, wantWinner: "cat", wantPrice: 20_00, wantEnd: mid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.terms.Currency, tt.terms.Seller, tt.terms.End = "USD", "sally", tEnd
			a := auction.New(tt.terms)
			for _, b := range tt.bids {
				b.Time = t0
				if _, err := a.Place(b); err != nil {
					t.Fatalf("Place(%+v) = %v", b, err)
				}
			}
			var err error
			if tt.end != nil {
				err = tt.end(a)
			}
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("end = %v, want %v", err, tt.wantErr)
			}
			if got := a.Status(tt.at); got != tt.wantReason {
				t.Errorf("Status = %q, want %q", got, tt.wantReason)
			}
			if got := a.Winner(tt.at); got != tt.wantWinner {
				t.Errorf("Winner = %q, want %q", got, tt.wantWinner)
			}
			if got := a.Price(); got != tt.wantPrice {
				t.Errorf("Price = %v, want %v", got, tt.wantPrice)
			}
			if got := a.EndTime(); !got.Equal(tt.wantEnd) {
				t.Errorf("EndTime = %v, want %v", got, tt.wantEnd)
			}
			var it market.Item
			a.Fill(&it, tt.at)
			if it.Ended != (tt.wantReason != market.Running) || it.EndReason != tt.wantReason || it.CurrentPrice != tt.wantPrice || !it.End.Equal(tt.wantEnd) {
				t.Errorf("Fill = ended %v %q price %v end %v, want %q %v %v", it.Ended, it.EndReason, it.CurrentPrice, it.End, tt.wantReason, tt.wantPrice, tt.wantEnd)
			}
			for _, user := range []string{"ann", "bob", "cat"} {
				st := a.Standing(user, tt.at)
				if want := user == tt.wantWinner; st.Won != want {
					t.Errorf("Standing(%s).Won = %v, want %v", user, st.Won, want)
				}
				if st.Ended != (tt.wantReason != market.Running) || st.EndReason != tt.wantReason || st.CurrentPrice != tt.wantPrice {
					t.Errorf("Standing(%s) = %+v, want ended %q at %v", user, st, tt.wantReason, tt.wantPrice)
				}
				leader, _ := a.Leader()
				wantHigh := leader == user && tt.wantReason != market.EndedCancelled && tt.wantReason != market.EndedBuyItNow
				if st.HighBidder != wantHigh {
					t.Errorf("Standing(%s).HighBidder = %v, want %v", user, st.HighBidder, wantHigh)
				}
			}
		})
	}
}

// TestBuyItNowOffered follows the Buy It Now price through the bids and the
// end: shown while offered and running, gone with the first bid or, with
// a reserve, once a bid meets it.
func TestBuyItNowOffered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reserve money.Amount
		bids    []money.Amount
		at      time.Time
		want    money.Amount
	}{
		{"no bids", 0, nil, t0, 50_00},
		{"after a bid", 0, []money.Amount{20_00}, t0, 0},
		{"reserve not met", 30_00, []money.Amount{20_00}, t0, 50_00},
		{"reserve met", 30_00, []money.Amount{30_00}, t0, 0},
		{"ended", 0, nil, tEnd, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := auction.New(auction.Terms{Currency: "USD", Start: 10_00, Reserve: tt.reserve, BuyItNow: 50_00, End: tEnd})
			for i, m := range tt.bids {
				if _, err := a.Place(auction.Bid{Bidder: string(rune('a' + i)), Max: m, Time: t0}); err != nil {
					t.Fatal(err)
				}
			}
			var it market.Item
			a.Fill(&it, tt.at)
			if it.BuyItNow != tt.want {
				t.Errorf("Item.BuyItNow = %v, want %v", it.BuyItNow, tt.want)
			}
		})
	}
}

// TestHistoryAndRefusal checks the price recorded after each accepted bid
// and what a refusal carries.
func TestHistoryAndRefusal(t *testing.T) {
	t.Parallel()
	a := auction.New(auction.Terms{Currency: "GBP", Start: 1_00, End: tEnd})
	t1 := t0.Add(time.Second)
	a.Place(auction.Bid{Bidder: "ann", Max: 20_00, Time: t0})
	a.Place(auction.Bid{Bidder: "bob", Max: 9_00, Time: t1})
	want := []market.HistoryEntry{{Time: t0, Price: 1_00, Bidder: "ann"}, {Time: t1, Price: 9_50, Bidder: "bob"}}
	if got := a.History(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("History = %v, want %v", got, want)
	}
	_, err := a.Place(auction.Bid{Bidder: "cat", Max: 9_60, Time: t1})
	var be *market.BidError
	if !errors.As(err, &be) || !errors.Is(err, market.ErrIncrementNotMet) || be.Minimum != 10_00 || be.CurrentPrice != 9_50 {
		t.Errorf("Place under the increment = %v (%+v), want ErrIncrementNotMet, minimum 10.00, price 9.50", err, be)
	}
	if a.Bids() != 2 {
		t.Errorf("Bids = %d after a refusal, want 2", a.Bids())
	}
}
