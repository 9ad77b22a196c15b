package contract

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// wantState compares the fields of a BidState a scenario pins down.
func wantState(t *testing.T, what string, got, want market.BidState) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

var stateTests = []test{
	{"BeforeBidding", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{Start: 3_00, Reserve: 10_00})
		wantState(t, "BidState(no bids)", b.state(t, Ann, no), market.BidState{CurrentPrice: 3_00})
		b.rival(t, "rival1", no, 20_00)
		wantState(t, "BidState(a rival's bid)", b.state(t, Ann, no), market.BidState{ReserveMet: true, CurrentPrice: 10_00})
	}},
	{"WhileRunning", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{})
		b.place(t, Ann, no, 10_00)
		wantState(t, "BidState(high bidder)", b.state(t, Ann, no),
			market.BidState{HasBid: true, MaxBid: 10_00, HighBidder: true, ReserveMet: true, CurrentPrice: 1_00})
		b.rival(t, "rival1", no, 20_00)
		wantState(t, "BidState(outbid)", b.state(t, Ann, no),
			market.BidState{HasBid: true, MaxBid: 10_00, ReserveMet: true, CurrentPrice: 10_50})
		if _, err := b.m.PlaceBid(b.ctx, Ann, no, 10_75); !errors.Is(err, market.ErrIncrementNotMet) {
			t.Fatalf("PlaceBid under the increment = %v, want ErrIncrementNotMet", err)
		}
		wantState(t, "BidState(after a refused bid)", b.state(t, Ann, no),
			market.BidState{HasBid: true, MaxBid: 10_00, ReserveMet: true, CurrentPrice: 10_50})
	}},
	{"AfterTheEnd", func(t *testing.T, b *bundle) {
		type check struct {
			user string
			want market.BidState
		}
		tests := []struct {
			name    string
			listing Listing
			// play bids and ends the auction (after setup the clock moves
			// past every end).
			play   func(t *testing.T, b *bundle, no int64)
			winner string
			checks []check
		}{
			{"won", Listing{}, func(t *testing.T, b *bundle, no int64) {
				b.rival(t, "rival1", no, 4_00)
				b.place(t, Ann, no, 10_00)
			}, Ann, []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 10_00, HighBidder: true, Ended: true, EndReason: market.EndedNormally, Won: true, ReserveMet: true, CurrentPrice: 4_25}},
				{Bob, market.BidState{Ended: true, EndReason: market.EndedNormally, ReserveMet: true, CurrentPrice: 4_25}},
			}},
			{"lost", Listing{}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 4_00)
				b.rival(t, "rival1", no, 10_00)
			}, "rival1", []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 4_00, Ended: true, EndReason: market.EndedNormally, ReserveMet: true, CurrentPrice: 4_25}},
			}},
			{"reserve not met", Listing{Reserve: 20_00}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 10_00)
			}, "", []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 10_00, HighBidder: true, Ended: true, EndReason: market.EndedNormally, CurrentPrice: 1_00}},
			}},
			{"reserve met", Listing{Reserve: 20_00}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 25_00)
			}, Ann, []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 25_00, HighBidder: true, Ended: true, EndReason: market.EndedNormally, Won: true, ReserveMet: true, CurrentPrice: 20_00}},
			}},
			{"cancelled", Listing{}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 10_00)
				must(t, "EndEarly", b.c.EndEarly(b.ctx, no, false))
			}, "", []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 10_00, Ended: true, EndReason: market.EndedCancelled, ReserveMet: true, CurrentPrice: 1_00}},
			}},
			{"sold early", Listing{}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 10_00)
				must(t, "EndEarly", b.c.EndEarly(b.ctx, no, true))
			}, Ann, []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 10_00, HighBidder: true, Ended: true, EndReason: market.EndedSold, Won: true, ReserveMet: true, CurrentPrice: 1_00}},
			}},
			{"bought by a rival", Listing{Reserve: 20_00, BuyItNow: 40_00}, func(t *testing.T, b *bundle, no int64) {
				b.place(t, Ann, no, 10_00)
				must(t, "BuyItNow", b.c.BuyItNow(b.ctx, "rival1", no))
			}, "rival1", []check{
				{Ann, market.BidState{HasBid: true, MaxBid: 10_00, Ended: true, EndReason: market.EndedBuyItNow, CurrentPrice: 40_00}},
			}},
			{"bought by the user", Listing{BuyItNow: 40_00}, func(t *testing.T, b *bundle, no int64) {
				must(t, "BuyItNow", b.c.BuyItNow(b.ctx, Ann, no))
			}, Ann, []check{
				{Ann, market.BidState{Ended: true, EndReason: market.EndedBuyItNow, Won: true, ReserveMet: true, CurrentPrice: 40_00}},
				{Bob, market.BidState{Ended: true, EndReason: market.EndedBuyItNow, ReserveMet: true, CurrentPrice: 40_00}},
			}},
		}
		nos := make([]int64, len(tests))
		for i, tt := range tests {
			tt.listing.EndsIn = time.Hour
			nos[i] = b.create(t, tt.listing)
			if w, err := b.c.Winner(b.ctx, nos[i]); err != nil || w != "" {
				t.Errorf("%s: Control.Winner while running = %q, %v, want none", tt.name, w, err)
			}
			tt.play(t, b, nos[i])
		}
		b.c.Advance(time.Hour)
		for i, tt := range tests {
			for _, c := range tt.checks {
				_, want := b.expect(market.Item{}, c.want)
				wantState(t, fmt.Sprintf("%s: BidState(%s)", tt.name, c.user), b.state(t, c.user, nos[i]), want)
			}
			if w, err := b.c.Winner(b.ctx, nos[i]); err != nil || w != tt.winner {
				t.Errorf("%s: Control.Winner = %q, %v, want %q", tt.name, w, err, tt.winner)
			}
			b.wantItem(t, tt.name, b.item(t, nos[i]))
		}
	}},
	{"TheLastMillisecondCounts", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{EndsIn: time.Minute})
		b.c.Advance(time.Minute - time.Millisecond)
		b.place(t, Ann, no, 5_00)
		if st := b.state(t, Ann, no); st.Ended || !st.HighBidder {
			t.Errorf("BidState a millisecond before the end = %+v, want running, high bidder", st)
		}
		b.c.Advance(time.Millisecond)
		if st := b.state(t, Ann, no); !st.Ended || !st.Won {
			t.Errorf("BidState at the end = %+v, want ended and won (the end is hard)", st)
		}
	}},
}

var historyTests = []test{
	{"AcceptedBidsInOrder", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{})
		if h, err := b.m.History(b.ctx, no); err != nil || len(h) != 0 {
			t.Errorf("History(no bids) = %v, %v, want empty", h, err)
		}
		r1 := b.place(t, Ann, no, 20_00)
		b.c.Advance(time.Second)
		b.rival(t, "rival1", no, 9_00)
		b.c.Advance(time.Second)
		if _, err := b.m.PlaceBid(b.ctx, Bob, no, 9_60); !errors.Is(err, market.ErrIncrementNotMet) {
			t.Fatalf("PlaceBid under the increment = %v, want ErrIncrementNotMet", err)
		}
		r3 := b.place(t, Bob, no, 25_00)
		h, err := b.m.History(b.ctx, no)
		if err != nil {
			t.Fatalf("History = %v", err)
		}
		if b.lacks.History {
			if len(h) != 0 {
				t.Errorf("History = %v, want none from a Market that lacks history", h)
			}
			return
		}
		want := []struct {
			bidder string
			price  money.Amount
			at     time.Time
		}{{Ann, 1_00, r1.Time}, {"rival1", 9_50, r1.Time.Add(time.Second)}, {Bob, 20_50, r3.Time}}
		if len(h) != len(want) {
			t.Fatalf("History = %v, want %d accepted bids", h, len(want))
		}
		for i, w := range want {
			if h[i].Bidder != w.bidder || h[i].Price != w.price || h[i].Time.Sub(w.at).Abs() > time.Second {
				t.Errorf("History[%d] = %+v, want %s, price after it %v, at %v", i, h[i], w.bidder, w.price, w.at)
			}
		}
		for i := 1; i < len(h); i++ {
			if h[i].Time.Before(h[i-1].Time) {
				t.Errorf("History[%d] at %v is before History[%d] at %v: want time order", i, h[i].Time, i-1, h[i-1].Time)
			}
		}
	}},
	{"NotFound", func(t *testing.T, b *bundle) {
		_, err := b.m.History(b.ctx, unknownItem)
		wantIs(t, "History(unknown)", err, market.ErrNotFound)
	}},
}

var nowTests = []test{
	{"FollowsTheMarketplaceClock", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{EndsIn: time.Hour})
		t1, err := b.m.Now(b.ctx)
		if err != nil {
			t.Fatalf("Now() = %v", err)
		}
		it := b.item(t, no)
		if d := it.End.Sub(t1); d < time.Hour-time.Second || d > time.Hour+time.Second {
			t.Errorf("Now() = %v, an hour before the new item's end %v, want within a second", t1, it.End)
		}
		b.c.Advance(10 * time.Minute)
		t2, err := b.m.Now(b.ctx)
		if err != nil {
			t.Fatalf("Now() = %v", err)
		}
		if d := t2.Sub(t1); d < 10*time.Minute-time.Second || d > 10*time.Minute+time.Second {
			t.Errorf("Now() moved %v after the clock advanced 10m, want 10m within a second", d)
		}
	}},
}

// call is a Market call made by the failure tests.
type call struct {
	name string
	user bool // made on behalf of a user
	do   func(ctx context.Context, m market.Market, user string, itemNo int64) error
}

var calls = []call{
	{"Item", false, func(ctx context.Context, m market.Market, _ string, no int64) error {
		_, err := m.Item(ctx, no)
		return err
	}},
	{"Search", false, func(ctx context.Context, m market.Market, _ string, _ int64) error {
		_, err := m.Search(ctx, searchWord, "", 10)
		return err
	}},
	{"WatchList", true, func(ctx context.Context, m market.Market, user string, _ int64) error {
		_, err := m.WatchList(ctx, user)
		return err
	}},
	{"PlaceBid", true, func(ctx context.Context, m market.Market, user string, no int64) error {
		_, err := m.PlaceBid(ctx, user, no, 5_00)
		return err
	}},
	{"BidState", true, func(ctx context.Context, m market.Market, user string, no int64) error {
		_, err := m.BidState(ctx, user, no)
		return err
	}},
	{"History", false, func(ctx context.Context, m market.Market, _ string, no int64) error {
		_, err := m.History(ctx, no)
		return err
	}},
	{"Now", false, func(ctx context.Context, m market.Market, _ string, _ int64) error { _, err := m.Now(ctx); return err }},
}

var failureTests = []test{
	{"NotFound", func(t *testing.T, b *bundle) {
		removed := b.create(t, Listing{})
		must(t, "Remove", b.c.Remove(b.ctx, removed))
		for _, no := range []int64{unknownItem, removed} {
			for _, c := range calls {
				if c.name == "Item" || c.name == "PlaceBid" || c.name == "BidState" || c.name == "History" {
					wantIs(t, fmt.Sprintf("%s(%d)", c.name, no), c.do(b.ctx, b.m, Ann, no), market.ErrNotFound)
				}
			}
		}
	}},
	{"Unavailable", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{})
		must(t, "Unavailable", b.c.Unavailable(b.ctx, true))
		for _, c := range calls {
			if c.name == "Now" && b.lacks.ClockCall {
				continue
			}
			err := c.do(b.ctx, b.m, Ann, no)
			wantIs(t, c.name, err, market.ErrUnavailable)
			if !market.Transient(err) {
				t.Errorf("%s = %v: want market.Transient", c.name, err)
			}
		}
		must(t, "Unavailable(false)", b.c.Unavailable(b.ctx, false))
		for _, c := range calls {
			wantIs(t, c.name+" after recovery", c.do(b.ctx, b.m, Ann, no), nil)
		}
		if bids := b.bids(t, no); len(bids) != 1 {
			t.Errorf("marketplace bids = %+v, want only the bid placed after recovery", bids)
		}
	}},
	{"NotAuthorized", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{})
		must(t, "Deny", b.c.Deny(b.ctx, Ann))
		for _, c := range calls {
			if c.user {
				wantIs(t, c.name+"(denied user)", c.do(b.ctx, b.m, Ann, no), market.ErrNotAuthorized)
				wantIs(t, c.name+"(another user)", c.do(b.ctx, b.m, Bob, no), nil)
			}
		}
		for _, bid := range b.bids(t, no) {
			if bid.Bidder == Ann {
				t.Errorf("marketplace bids = %+v: the denied user's bid reached the item", bid)
			}
		}
	}},
	{"CancelledContext", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{})
		ctx, cancel := context.WithCancel(b.ctx)
		cancel()
		for _, c := range calls {
			wantIs(t, c.name+"(cancelled context)", c.do(ctx, b.m, Ann, no), context.Canceled)
		}
		if bids := b.bids(t, no); len(bids) != 0 {
			t.Errorf("marketplace bids = %+v, want none after a cancelled call", bids)
		}
	}},
}
