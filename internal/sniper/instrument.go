package sniper

import (
	"context"
	"errors"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// instrumented is a market.Market that records call latency and errors.
type instrumented struct {
	m   market.Market
	met *metrics
	clk clock.Clock
}

func instrument(m market.Market, met *metrics, clk clock.Clock) market.Market {
	if m == nil {
		return nil
	}
	return &instrumented{m: m, met: met, clk: clk}
}

func (i *instrumented) observe(method string, start time.Time, err error) {
	i.met.calls.WithLabelValues(method).Observe(i.clk.Now().Sub(start).Seconds())
	if err == nil {
		return
	}
	kind := "other"
	var be *market.BidError
	switch {
	case market.Transient(err):
		kind = "transient"
	case errors.As(err, &be), errors.Is(err, market.ErrNotFound):
		kind = "rejected"
	}
	i.met.callErrors.WithLabelValues(method, kind).Inc()
}

func (i *instrumented) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	start := i.clk.Now()
	it, err := i.m.Item(ctx, itemNo)
	i.observe("Item", start, err)
	return it, err
}

func (i *instrumented) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	start := i.clk.Now()
	its, err := i.m.Search(ctx, query, country, limit)
	i.observe("Search", start, err)
	return its, err
}

func (i *instrumented) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	start := i.clk.Now()
	its, err := i.m.WatchList(ctx, user)
	i.observe("WatchList", start, err)
	return its, err
}

func (i *instrumented) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	start := i.clk.Now()
	r, err := i.m.PlaceBid(ctx, user, itemNo, max)
	i.observe("PlaceBid", start, err)
	return r, err
}

func (i *instrumented) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	start := i.clk.Now()
	bs, err := i.m.BidState(ctx, user, itemNo)
	i.observe("BidState", start, err)
	return bs, err
}

func (i *instrumented) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	start := i.clk.Now()
	h, err := i.m.History(ctx, itemNo)
	i.observe("History", start, err)
	return h, err
}

func (i *instrumented) Now(ctx context.Context) (time.Time, error) {
	start := i.clk.Now()
	t, err := i.m.Now(ctx)
	i.observe("Now", start, err)
	return t, err
}
