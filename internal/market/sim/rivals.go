package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// Background life cadence.
const (
	// tickInterval is how often Run wakes up.
	tickInterval = time.Second
	// churnEvery is how many ticks pass between relisting rounds.
	churnEvery = 10
	// sniperWindowMs is how close to its end an item is considered by the
	// last-second snipers.
	sniperWindowMs = 3_000
	// rivalPool is how many distinct rival bidder names exist.
	rivalPool = 300
)

// rivalLevel is how active the rival bidders are.
type rivalLevel struct {
	earlyPerTick float64 // expected early bids per tick, whole marketplace
	snipeChance  float64 // chance an item ending soon attracts a sniper
}

var rivalLevels = map[string]rivalLevel{
	BiddersOff:    {},
	BiddersLow:    {earlyPerTick: 0.1, snipeChance: 0.1},
	BiddersNormal: {earlyPerTick: 0.5, snipeChance: 0.3},
	BiddersHigh:   {earlyPerTick: 2, snipeChance: 0.6},
}

// soonMs is the horizon within which half of the early bids land, so that
// items about to end (the ones users watch) see visible competition.
const soonMs = 3600_000

// Run runs the marketplace's background life until ctx ends: ended listings
// are replaced by new ones at the tail of the schedule (so something always
// ends soon), auctions ended longer than Config.Retention ago are dropped,
// and rival bidders bid early and at the last second. It returns
// nil when ctx ends. Correctness never depends on Run: auctions end lazily
// on the clock.
func (s *Sim) Run(ctx context.Context) error {
	level := rivalLevels[s.cfg.Bidders]
	r := rng(s.cfg.Seed, "rivals")
	sellers := makeSellers(rng(s.cfg.Seed, "catalogue"))
	relist := rng(s.cfg.Seed, "relist")
	considered := make(map[int64]int64) // items the snipers looked at → end ms
	t := s.cfg.Clock.NewTimer(tickInterval)
	defer t.Stop()
	for tick := 0; ; tick++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		t.Reset(tickInterval)
		if tick%churnEvery == 0 {
			if err := s.purge(ctx); err != nil {
				s.log.Warn("simulator could not drop old auctions", "err", err)
			}
			if err := s.churn(ctx, relist, sellers); err != nil {
				s.log.Warn("simulator relisting failed", "err", err)
			}
		}
		if s.cfg.Bidders != BiddersOff {
			s.rivalTick(ctx, r, level, considered)
		}
	}
}

// churn relists as many items as have ended, keeping Config.Items live,
// each ending one slot after the current last end.
func (s *Sim) churn(ctx context.Context, r *rand.Rand, sellers []seller) error {
	now := s.nowMs()
	live, tail := 0, now
	for _, l := range s.snapshot() {
		l.mu.Lock()
		if !l.removed && l.status(now) == market.Running {
			live++
			tail = max(tail, l.EndMs)
		}
		l.mu.Unlock()
	}
	need := s.cfg.Items - live
	if need <= 0 {
		return nil
	}
	ls := make([]*listing, need)
	for i := range ls {
		l := makeListing(r, sellers)
		l.StartMs = now
		l.EndMs = tail + int64(i)*endSpacingMs + int64(r.IntN(endSpacingMs)) + 1
		ls[i] = &l
	}
	return s.list(ctx, ls)
}

// rivalTick places this tick's rival bids.
func (s *Sim) rivalTick(ctx context.Context, r *rand.Rand, level rivalLevel, considered map[int64]int64) {
	now := s.nowMs()
	// Scripted items are the user's scenario: only /sim/placeBid bids there.
	lots := slices.DeleteFunc(s.snapshot(), func(l *lot) bool { return l.Scripted })
	if len(lots) == 0 {
		return
	}
	// Early bidders: a Poisson-ish number of bids on random live items, at
	// or a little above the minimum, sometimes just under it (which yields
	// increment-not-met and too-low rejections, as real bidders do).
	n := int(level.earlyPerTick)
	if r.Float64() < level.earlyPerTick-float64(n) {
		n++
	}
	var soon []*lot
	for _, l := range lots {
		if l.EndMs > now && l.EndMs-now <= soonMs {
			soon = append(soon, l)
		}
	}
	for range n {
		l := lots[r.IntN(len(lots))]
		if len(soon) > 0 && r.IntN(2) == 0 {
			l = soon[r.IntN(len(soon))]
		}
		s.rivalBid(ctx, r, l, now, 0.5, 1.15)
	}
	// Last-second snipers: items ending within the window get one look each.
	for _, l := range lots {
		if l.EndMs <= now || l.EndMs-now > sniperWindowMs {
			continue
		}
		if _, seen := considered[l.ItemNo]; seen {
			continue
		}
		considered[l.ItemNo] = l.EndMs
		if r.Float64() < level.snipeChance {
			s.rivalBid(ctx, r, l, now, 0.8, 1.3)
		}
	}
	for no, end := range considered {
		if end < now-60_000 {
			delete(considered, no)
		}
	}
}

// value is what rivals think an item is worth: a deterministic multiple of
// its start price, sometimes below the reserve (so reserve-not-met happens).
func (s *Sim) value(l *lot) money.Amount {
	r := rng(s.cfg.Seed, "value:"+strconv.FormatInt(l.ItemNo, 10))
	return money.Amount(float64(l.StartPrice) * (1.2 + 2.8*r.Float64()))
}

// rivalBid places one rival bid on l, a maximum drawn between lo and hi
// times the item's value. A rival whose maximum is under the minimum to
// bid usually walks away, but sometimes bids anyway, or misses the
// increment by half, as real bidders do.
func (s *Sim) rivalBid(ctx context.Context, r *rand.Rand, l *lot, now int64, lo, hi float64) {
	l.mu.Lock()
	if l.removed || l.status(now) != market.Running {
		l.mu.Unlock()
		return
	}
	minimum := l.auction.MinimumToBid()
	price := l.auction.Price()
	l.mu.Unlock()
	bid := money.Amount(float64(s.value(l)) * (lo + (hi-lo)*r.Float64()))
	switch x := r.Float64(); {
	case x < 0.1 && minimum > price: // misses the increment
		bid = price + (minimum-price)/2
	case bid < minimum && x < 0.3: // bids anyway and is refused
	case bid < minimum:
		return
	}
	bid = max(bid, 1)
	name := fmt.Sprintf("rival_%03d", r.IntN(rivalPool))
	if _, err := s.bid(ctx, name, l.ItemNo, bid); err != nil && market.Transient(err) {
		s.log.Debug("rival bid failed", "item_no", l.ItemNo, "err", err)
	}
}
