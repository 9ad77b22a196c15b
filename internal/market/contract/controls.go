package contract

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/money"
)

// Sim returns a Control for a simulator running on clk (its Config.Clock).
// It drives the simulator directly, so it also serves a harness whose
// Market reaches the same simulator over HTTP.
func Sim(s *sim.Sim, clk *clock.Fake) Control { return &simControl{s: s, clk: clk} }

type simControl struct {
	s   *sim.Sim
	clk *clock.Fake
}

func (c *simControl) Create(ctx context.Context, l Listing) (int64, error) {
	no, _, err := c.s.CreateItem(ctx, sim.NewItem{Title: l.Title, StartPrice: l.Start, EndsIn: l.EndsIn, Reserve: l.Reserve,
		BINPrice: l.BuyItNow, Currency: l.Currency, Country: l.Country, Seller: l.Seller, Category: l.Category})
	return no, err
}

func (c *simControl) Rival(ctx context.Context, user string, itemNo int64, max money.Amount) error {
	_, err := c.s.RivalBid(ctx, user, itemNo, max)
	return err
}

func (c *simControl) EndEarly(ctx context.Context, itemNo int64, sell bool) error {
	return c.s.EndEarly(ctx, itemNo, sell)
}

func (c *simControl) BuyItNow(ctx context.Context, buyer string, itemNo int64) error {
	_, err := c.s.BuyItNow(ctx, buyer, itemNo)
	return err
}

func (c *simControl) Watch(ctx context.Context, user string, itemNo int64) error {
	return c.s.Watch(ctx, user, itemNo)
}

func (c *simControl) Remove(ctx context.Context, itemNo int64) error {
	return c.s.RemoveItem(ctx, itemNo, true)
}

func (c *simControl) Advance(d time.Duration) { c.clk.Advance(d) }

func (c *simControl) Ineligible(_ context.Context, user string, itemNo int64) error {
	c.s.SetIneligible(user, itemNo, true)
	return nil
}

// unavailableCalls stands for "every call from now on".
const unavailableCalls = 1 << 30

func (c *simControl) Unavailable(_ context.Context, on bool) error {
	n := 0
	if on {
		n = unavailableCalls
	}
	c.s.FailNext(sim.OpAny, n)
	return nil
}

func (c *simControl) Deny(_ context.Context, user string) error {
	c.s.DenyUser(user, true)
	return nil
}

func (c *simControl) Truth(ctx context.Context, itemNo int64) (market.Item, error) {
	st, err := c.s.ItemState(ctx, itemNo)
	return st.Item, err
}

func (c *simControl) Bids(ctx context.Context, itemNo int64) ([]Bid, error) {
	st, err := c.s.ItemState(ctx, itemNo)
	if err != nil {
		return nil, err
	}
	out := make([]Bid, len(st.Bids))
	for i, b := range st.Bids {
		out[i] = Bid{Bidder: b.Bidder, Max: b.Max, Accepted: b.Accepted}
	}
	return out, nil
}

func (c *simControl) Winner(ctx context.Context, itemNo int64) (string, error) {
	st, err := c.s.ItemState(ctx, itemNo)
	return st.Winner, err
}

// Fake returns a Control for a test fake running on clk. It installs the
// fake's failure injector (SetInjector), which it needs for Unavailable
// and Deny.
func Fake(m *markettest.Market, clk *clock.Fake) Control {
	c := &fakeControl{m: m, clk: clk, denied: map[string]bool{}}
	m.SetInjector(c.inject)
	return c
}

type fakeControl struct {
	m   *markettest.Market
	clk *clock.Fake

	mu          sync.Mutex
	unavailable bool
	denied      map[string]bool
}

func (c *fakeControl) inject(_, user string, _ int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.unavailable:
		return fmt.Errorf("injected: %w", market.ErrUnavailable)
	case user != "" && c.denied[user]:
		return fmt.Errorf("injected for %s: %w", user, market.ErrNotAuthorized)
	}
	return nil
}

func (c *fakeControl) Create(_ context.Context, l Listing) (int64, error) {
	if l.Currency == "" {
		l.Currency = sim.CurrencyOf(l.Country)
	}
	return c.m.Add(markettest.ItemSpec{Title: l.Title, Category: l.Category, Seller: l.Seller, Currency: l.Currency,
		Country: l.Country, StartPrice: l.Start, Reserve: l.Reserve, BuyItNow: l.BuyItNow, EndsIn: l.EndsIn}), nil
}

func (c *fakeControl) Rival(_ context.Context, user string, itemNo int64, max money.Amount) error {
	return c.m.Rival(user, itemNo, max)
}

func (c *fakeControl) EndEarly(_ context.Context, itemNo int64, sell bool) error {
	reason := market.EndedCancelled
	if sell {
		reason = market.EndedSold
	}
	return c.m.End(itemNo, reason)
}

func (c *fakeControl) BuyItNow(_ context.Context, buyer string, itemNo int64) error {
	return c.m.BuyItNow(itemNo, buyer)
}

func (c *fakeControl) Watch(_ context.Context, user string, itemNo int64) error {
	if _, err := c.m.Peek(itemNo); err != nil {
		return err
	}
	c.m.AddToWatchList(user, itemNo)
	return nil
}

func (c *fakeControl) Remove(_ context.Context, itemNo int64) error {
	c.m.Remove(itemNo)
	return nil
}

func (c *fakeControl) Advance(d time.Duration) { c.clk.Advance(d) }

func (c *fakeControl) Ineligible(_ context.Context, user string, itemNo int64) error {
	c.m.Bar(itemNo, user)
	return nil
}

func (c *fakeControl) Unavailable(_ context.Context, on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unavailable = on
	return nil
}

func (c *fakeControl) Deny(_ context.Context, user string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.denied[user] = true
	return nil
}

func (c *fakeControl) Truth(_ context.Context, itemNo int64) (market.Item, error) {
	return c.m.Peek(itemNo)
}

func (c *fakeControl) Bids(_ context.Context, itemNo int64) ([]Bid, error) {
	if _, err := c.m.Peek(itemNo); err != nil {
		return nil, err
	}
	var out []Bid
	for _, b := range c.m.Bids(itemNo) {
		out = append(out, Bid{Bidder: b.Bidder, Max: b.Max, Accepted: b.Accepted})
	}
	return out, nil
}

func (c *fakeControl) Winner(_ context.Context, itemNo int64) (string, error) {
	if _, err := c.m.Peek(itemNo); err != nil {
		return "", err
	}
	return c.m.Winner(itemNo), nil
}
