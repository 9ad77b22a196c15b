package sim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
)

// BenchmarkPlaceBid measures the bid path: two bidders outbidding each
// other, each bid judged, applied and (file-backed) committed to SQLite
// before PlaceBid returns.
func BenchmarkPlaceBid(b *testing.B) {
	for _, mode := range []string{"memory", "file"} {
		b.Run(mode, func(b *testing.B) {
			cfg := sim.Config{Seed: 1, Items: 10, Bidders: sim.BiddersOff, Clock: clock.NewFake(t0)}
			if mode == "file" {
				cfg.Path = filepath.Join(b.TempDir(), "sim.db")
			}
			ctx := context.Background()
			s, err := sim.Open(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			newItem := func() int64 {
				no, _, err := s.CreateItem(ctx, sim.NewItem{Title: "bench", StartPrice: 1_00, EndsIn: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				return no
			}
			no := newItem()
			bidders := [2]string{"ann", "bob"}
			next := market.MinimumToBid("USD", 1_00, 1_00, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%5000 == 4999 { // keep prices and histories realistic
					no, next = newItem(), 1_00
				}
				rc, err := s.PlaceBid(ctx, bidders[i%2], no, next+100)
				if err != nil {
					b.Fatalf("bid %d: %v", i, err)
				}
				next = market.MinimumToBid("USD", 1_00, rc.CurrentPrice, 1) + 100
			}
		})
	}
}
