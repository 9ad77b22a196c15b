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

// The bidding rules are package auction's and the Market behaviour is the
// contract suite's (contract_test.go); these tests cover what only the
// fake offers.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestSetEndReplays moves an end time: the bids stay, and the auction ends
// at the new time.
func TestSetEndReplays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clock.NewFake(t0)
	m := New(clk)
	no := m.Add(ItemSpec{StartPrice: 1_00, EndsIn: time.Minute})
	for _, b := range []struct {
		user string
		max  money.Amount
	}{{"a", 5_00}, {"b", 3_00}} {
		if err := m.Rival(b.user, no, b.max); err != nil {
			t.Fatal(err)
		}
	}
	m.SetEnd(no, t0.Add(2*time.Minute))
	clk.Advance(time.Minute)
	it, err := m.Item(ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	if it.Ended || !it.End.Equal(t0.Add(2*time.Minute)) || it.CurrentPrice != 3_25 || it.Bids != 2 {
		t.Errorf("after SetEnd: ended %v end %v price %v bids %d, want running until %v at 3.25 with 2 bids", it.Ended, it.End, it.CurrentPrice, it.Bids, t0.Add(2*time.Minute))
	}
	clk.Advance(time.Minute)
	if w := m.Winner(no); w != "a" {
		t.Errorf("Winner = %q, want a", w)
	}
}

// TestCallsOffsetInjectionAndHook covers the fake's test hooks.
func TestCallsOffsetInjectionAndHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := New(clock.NewFake(t0))
	m.SetOffset(5 * time.Second)
	if now, err := m.Now(ctx); err != nil || !now.Equal(t0.Add(5*time.Second)) {
		t.Errorf("Now() = %v, %v, want the clock plus the offset %v", now, err, t0.Add(5*time.Second))
	}
	no := m.Add(ItemSpec{StartPrice: 1_00, EndsIn: time.Hour})
	var placed []money.Amount
	m.OnPlaced(func(user string, itemNo int64, max money.Amount) { placed = append(placed, max) })
	m.SetInjector(func(method, user string, _ int64) error {
		if method == MethodPlaceBid && user == "down" {
			return market.ErrUnavailable
		}
		return nil
	})
	if _, err := m.PlaceBid(ctx, "down", no, 2_00); !errors.Is(err, market.ErrUnavailable) {
		t.Errorf("injected PlaceBid = %v, want ErrUnavailable", err)
	}
	if _, err := m.PlaceBid(ctx, "a", no, 50); !errors.Is(err, market.ErrTooLow) {
		t.Errorf("PlaceBid under the start = %v, want ErrTooLow", err)
	}
	if _, err := m.PlaceBid(ctx, "a", no, 2_00); err != nil {
		t.Fatal(err)
	}
	if len(placed) != 1 || placed[0] != 2_00 {
		t.Errorf("OnPlaced saw %v, want only the accepted 2.00", placed)
	}
	if got := m.Calls(MethodPlaceBid); got != 3 {
		t.Errorf("Calls(PlaceBid) = %d, want 3 (injected failures count)", got)
	}
	bids := m.Bids(no)
	if len(bids) != 2 || bids[0].Accepted || !errors.Is(bids[0].Err, market.ErrTooLow) || !bids[1].Accepted || !bids[1].Time.Equal(t0.Add(5*time.Second)) {
		t.Errorf("Bids = %+v, want the refused and the accepted bid, on the marketplace clock", bids)
	}
}
