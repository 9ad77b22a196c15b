package markettest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// TestProxyBidding checks the reference marketplace's rules the sniper's
// tests rely on: proxy price, earlier bid wins ties, increments, reserve and
// the high bidder's own maximum.
func TestProxyBidding(t *testing.T) {
	t.Parallel()
	type bid struct {
		user string
		max  money.Amount
		err  error
	}
	tests := []struct {
		name       string
		spec       ItemSpec
		bids       []bid
		wantPrice  money.Amount
		wantLeader string
	}{
		{"single bid stays at start", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}}, 100, "a"},
		{"second sets price plus increment", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 400, nil}}, 425, "a"},
		{"price capped by leader's max", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 490, nil}}, 500, "a"},
		{"tie goes to the earlier", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 500, nil}}, 500, "a"},
		{"below price is too low", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 400, nil}, {"c", 420, market.ErrTooLow}}, 425, "a"},
		{"increment not met", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 400, nil}, {"c", 440, market.ErrIncrementNotMet}}, 425, "a"},
		{"below start is too low", ItemSpec{StartPrice: 100}, []bid{{"a", 99, market.ErrTooLow}}, 100, ""},
		{"leader may not lower", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"a", 400, market.ErrCannotLowerMax}}, 100, "a"},
		{"leader may raise without increment", ItemSpec{StartPrice: 100}, []bid{{"a", 500, nil}, {"b", 400, nil}, {"a", 501, nil}}, 425, "a"},
		{"reserve lifts the price", ItemSpec{StartPrice: 100, Reserve: 1000}, []bid{{"a", 1200, nil}}, 1000, "a"},
		{"reserve never above the max", ItemSpec{StartPrice: 100, Reserve: 1000}, []bid{{"a", 800, nil}}, 100, "a"},
		{"seller cannot bid", ItemSpec{StartPrice: 100, Seller: "s"}, []bid{{"s", 500, market.ErrSellerCannotBid}}, 100, ""},
		{"at BIN price", ItemSpec{StartPrice: 100, BuyItNow: 500}, []bid{{"a", 500, market.ErrBINPriceReached}}, 100, ""},
	}
	for _, tt := range tests {
		m := New(clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		tt.spec.EndsIn = time.Hour
		no := m.Add(tt.spec)
		for _, b := range tt.bids {
			if err := m.Rival(b.user, no, b.max); !errors.Is(err, b.err) {
				t.Errorf("%s: bid %s %s: err %v, want %v", tt.name, b.user, b.max, err, b.err)
			}
		}
		it, err := m.Item(context.Background(), no)
		if err != nil {
			t.Fatal(err)
		}
		if it.CurrentPrice != tt.wantPrice {
			t.Errorf("%s: price %s, want %s", tt.name, it.CurrentPrice, tt.wantPrice)
		}
		if tt.wantLeader != "" {
			if bs, _ := m.BidState(context.Background(), tt.wantLeader, no); !bs.HighBidder {
				t.Errorf("%s: %s is not the high bidder", tt.name, tt.wantLeader)
			}
		}
	}
}

// TestEndAndWinner covers ends: normal end, reserve not met, cancel, Buy It Now.
func TestEndAndWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(clk)
	won := m.Add(ItemSpec{EndsIn: time.Minute})
	reserve := m.Add(ItemSpec{EndsIn: time.Minute, Reserve: 1000})
	cancelled := m.Add(ItemSpec{EndsIn: time.Minute})
	bin := m.Add(ItemSpec{EndsIn: time.Minute, BuyItNow: 2000})
	// Buy It Now is offered only until the first bid, so nobody bids on bin.
	for _, no := range []int64{won, reserve, cancelled} {
		if err := m.Rival("a", no, 500); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.End(cancelled, market.EndedCancelled); err != nil {
		t.Fatal(err)
	}
	if err := m.BuyItNow(bin, "b"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	tests := []struct {
		no     int64
		winner string
		reason market.EndReason
	}{{won, "a", market.EndedNormally}, {reserve, "", market.EndedNormally}, {cancelled, "", market.EndedCancelled}, {bin, "b", market.EndedBuyItNow}}
	for _, tt := range tests {
		if got := m.Winner(tt.no); got != tt.winner {
			t.Errorf("item %d: winner %q, want %q", tt.no, got, tt.winner)
		}
		bs, _ := m.BidState(ctx, "a", tt.no)
		if !bs.Ended || bs.EndReason != tt.reason || bs.Won != (tt.winner == "a") {
			t.Errorf("item %d: BidState %+v, want ended %q won %v", tt.no, bs, tt.reason, tt.winner == "a")
		}
	}
	if err := m.Rival("c", won, 900); !errors.Is(err, market.ErrEnded) {
		t.Errorf("bid after the end: %v, want ErrEnded", err)
	}
}
