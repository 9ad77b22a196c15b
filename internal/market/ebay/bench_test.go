package ebay_test

import (
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/money"
)

// BenchmarkFreshItem is one uncached Browse lookup against ebaysim over
// loopback HTTP; it reports the adapter's send lead (half the smoothed
// round trip).
func BenchmarkFreshItem(b *testing.B) {
	bb := setup(b, func(o *options) { o.clock = clock.Real{} })
	no := bb.create(b, sim.NewItem{EndsIn: time.Hour})
	ctx := market.WithFresh(bb.ctx)
	if _, err := bb.ad.Item(ctx, no); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := bb.ad.Item(ctx, no); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bb.ad.SendLead().Microseconds()), "lead-µs")
}

// BenchmarkPlaceBid is one place_proxy_bid plus the getBidding that tells
// whether it leads, rising by a dollar each time.
func BenchmarkPlaceBid(b *testing.B) {
	bb := setup(b, func(o *options) { o.clock = clock.Real{} })
	no := bb.create(b, sim.NewItem{EndsIn: time.Hour, StartPrice: 1_00})
	max := money.Amount(10_00)
	for b.Loop() {
		max += 1_00
		if _, err := bb.ad.PlaceBid(bb.ctx, "alice", no, max); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bb.ad.SendLead().Microseconds()), "lead-µs")
}
