// Package metered wraps a market.Market with Prometheus metrics: every
// call's latency and every failure, by method. The command line wraps the
// marketplace once and hands the same wrapper to the API and the sniper,
// so /metrics counts all marketplace calls the process makes.
package metered

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// latencyBuckets are fine around 0–100 ms, where marketplace calls should
// live, with a tail for the bad days (the sniper's lateness histogram uses
// the same buckets).
var latencyBuckets = []float64{.0005, .001, .002, .003, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5}

// Market is a market.Market that records call latency and errors. It is
// safe for concurrent use when the wrapped Market is.
type Market struct {
	m          market.Market
	clk        clock.Clock
	calls      *prometheus.HistogramVec
	callErrors *prometheus.CounterVec
}

var _ market.Market = (*Market)(nil)

// New wraps m, timing calls on clk (default clock.Real) and registering
// the collectors on reg (none when nil):
//   - sniped_market_call_duration_seconds{method}
//   - sniped_market_call_errors_total{method,kind}, kind one of transient,
//     rejected (a refused bid or an unknown item) and other.
func New(m market.Market, clk clock.Clock, reg prometheus.Registerer) *Market {
	if clk == nil {
		clk = clock.Real{}
	}
	f := promauto.With(reg)
	return &Market{
		m:   m,
		clk: clk,
		calls: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sniped_market_call_duration_seconds",
			Help:    "Marketplace call latency, by method.",
			Buckets: latencyBuckets,
		}, []string{"method"}),
		callErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sniped_market_call_errors_total",
			Help: "Failed marketplace calls, by method and kind (transient, rejected, other).",
		}, []string{"method", "kind"}),
	}
}

// Unwrap returns the wrapped marketplace.
func (i *Market) Unwrap() market.Market { return i.m }

func (i *Market) observe(method string, start time.Time, err error) {
	i.calls.WithLabelValues(method).Observe(i.clk.Now().Sub(start).Seconds())
	if err == nil {
		return
	}
	i.callErrors.WithLabelValues(method, Kind(err)).Inc()
}

// Kind classifies a failed call for the errors counter: transient (worth
// retrying), rejected (the marketplace refused a bid or does not know the
// item) or other.
func Kind(err error) string {
	var be *market.BidError
	switch {
	case market.Transient(err):
		return "transient"
	case errors.As(err, &be), errors.Is(err, market.ErrNotFound):
		return "rejected"
	}
	return "other"
}

// Item implements market.Market.
func (i *Market) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	start := i.clk.Now()
	it, err := i.m.Item(ctx, itemNo)
	i.observe("Item", start, err)
	return it, err
}

// Search implements market.Market.
func (i *Market) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	start := i.clk.Now()
	its, err := i.m.Search(ctx, query, country, limit)
	i.observe("Search", start, err)
	return its, err
}

// WatchList implements market.Market.
func (i *Market) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	start := i.clk.Now()
	its, err := i.m.WatchList(ctx, user)
	i.observe("WatchList", start, err)
	return its, err
}

// PlaceBid implements market.Market.
func (i *Market) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	start := i.clk.Now()
	r, err := i.m.PlaceBid(ctx, user, itemNo, max)
	i.observe("PlaceBid", start, err)
	return r, err
}

// BidState implements market.Market.
func (i *Market) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	start := i.clk.Now()
	bs, err := i.m.BidState(ctx, user, itemNo)
	i.observe("BidState", start, err)
	return bs, err
}

// History implements market.Market.
func (i *Market) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	start := i.clk.Now()
	h, err := i.m.History(ctx, itemNo)
	i.observe("History", start, err)
	return h, err
}

// Now implements market.Market.
func (i *Market) Now(ctx context.Context) (time.Time, error) {
	start := i.clk.Now()
	t, err := i.m.Now(ctx)
	i.observe("Now", start, err)
	return t, err
}
