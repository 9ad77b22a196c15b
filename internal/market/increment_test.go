package market_test

import (
	"testing"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// boundary is one edge of an increment table: below is the last price of a
// band and its increment; at is the first price of the next band.
type boundary struct {
	below, at       money.Amount
	incBelow, incAt money.Amount
}

// Written out by hand from each site's help page (not derived from the
// tables under test).
var boundaries = map[string][]boundary{
	"USD": {
		{99, 1_00, 5, 25},
		{4_99, 5_00, 25, 50},
		{24_99, 25_00, 50, 1_00},
		{99_99, 100_00, 1_00, 2_50},
		{249_99, 250_00, 2_50, 5_00},
		{499_99, 500_00, 5_00, 10_00},
		{999_99, 1000_00, 10_00, 25_00},
		{2499_99, 2500_00, 25_00, 50_00},
		{4999_99, 5000_00, 50_00, 100_00},
	},
	"GBP": {
		{99, 1_00, 5, 20},
		{4_99, 5_00, 20, 50},
		{14_99, 15_00, 50, 1_00},
		{59_99, 60_00, 1_00, 2_00},
		{149_99, 150_00, 2_00, 5_00},
		{299_99, 300_00, 5_00, 10_00},
		{599_99, 600_00, 10_00, 20_00},
		{1499_99, 1500_00, 20_00, 50_00},
		{2999_99, 3000_00, 50_00, 100_00},
	},
	"EUR": {
		{49_99, 50_00, 50, 1_00},
		{499_99, 500_00, 1_00, 5_00},
		{999_99, 1000_00, 5_00, 10_00},
		{4999_99, 5000_00, 10_00, 50_00},
	},
	"CAD": {
		{99, 1_00, 5, 25},
		{4_99, 5_00, 25, 50},
		{24_99, 25_00, 50, 1_00},
		{99_99, 100_00, 1_00, 2_50},
		{249_99, 250_00, 2_50, 5_00},
		{499_99, 500_00, 5_00, 10_00},
		{999_99, 1000_00, 10_00, 25_00},
		{2499_99, 2500_00, 25_00, 50_00},
		{4999_99, 5000_00, 50_00, 100_00},
	},
	"AUD": {
		{99, 1_00, 5, 25},
		{4_99, 5_00, 25, 50},
		{24_99, 25_00, 50, 1_00},
		{99_99, 100_00, 1_00, 2_50},
		{249_99, 250_00, 2_50, 5_00},
		{499_99, 500_00, 5_00, 10_00},
		{999_99, 1000_00, 10_00, 25_00},
		{2499_99, 2500_00, 25_00, 50_00},
		{4999_99, 5000_00, 50_00, 100_00},
	},
}

func TestIncrementBoundaries(t *testing.T) {
	t.Parallel()
	for _, cur := range market.Currencies {
		bs, ok := boundaries[cur]
		if !ok {
			t.Errorf("no boundary cases for %s", cur)
			continue
		}
		for _, b := range bs {
			if got := market.Increment(cur, b.below); got != b.incBelow {
				t.Errorf("Increment(%s, %v) = %v, want %v", cur, b.below, got, b.incBelow)
			}
			if got := market.Increment(cur, b.at); got != b.incAt {
				t.Errorf("Increment(%s, %v) = %v, want %v", cur, b.at, got, b.incAt)
			}
		}
		// The lowest price and far above the top band.
		first, last := bs[0], bs[len(bs)-1]
		if got := market.Increment(cur, 1); got != first.incBelow {
			t.Errorf("Increment(%s, 0.01) = %v, want %v", cur, got, first.incBelow)
		}
		if got := market.Increment(cur, money.MaxAmount); got != last.incAt {
			t.Errorf("Increment(%s, max) = %v, want %v", cur, got, last.incAt)
		}
	}
}

func TestIncrementUnknownCurrencyUsesUSD(t *testing.T) {
	t.Parallel()
	for _, p := range []money.Amount{1, 1_00, 250_00, 9999_00} {
		if got, want := market.Increment("XXX", p), market.Increment("USD", p); got != want {
			t.Errorf("Increment(XXX, %v) = %v, want the USD %v", p, got, want)
		}
	}
}

func TestMinimumToBid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cur            string
		start, current money.Amount
		bids           int
		want           money.Amount
	}{
		{"USD", 9_99, 9_99, 0, 9_99},          // no bids: the start price
		{"USD", 9_99, 9_99, 1, 10_49},         // 9.99 + 0.50
		{"USD", 1_00, 24_99, 3, 25_49},        // last cent of the 0.50 band
		{"USD", 1_00, 25_00, 3, 26_00},        // first cent of the 1.00 band
		{"GBP", 1_00, 15_00, 2, 16_00},        // GBP 1.00 band starts at 15
		{"GBP", 1_00, 14_99, 2, 15_49},        // GBP 0.50 band
		{"EUR", 1_00, 49_99, 2, 50_49},        // EUR 0.50 band
		{"EUR", 1_00, 50_00, 2, 51_00},        // EUR 1.00 band
		{"AUD", 50, 99, 1, 1_04},              // 0.99 + 0.05
		{"CAD", 50, 1_00, 1, 1_25},            // 1.00 + 0.25
		{"USD", 5000_00, 5000_00, 0, 5000_00}, // start price even at the top
	}
	for _, tt := range tests {
		if got := market.MinimumToBid(tt.cur, tt.start, tt.current, tt.bids); got != tt.want {
			t.Errorf("MinimumToBid(%s, %v, %v, %d) = %v, want %v", tt.cur, tt.start, tt.current, tt.bids, got, tt.want)
		}
	}
}
