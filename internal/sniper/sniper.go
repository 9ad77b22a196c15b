// Package sniper is sniped's engine: it fires every armed snipe exactly once
// at its item's end minus its delay, on the marketplace's clock, and learns
// and stores each snipe's outcome.
package sniper

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// Config wires a Sniper to its store, marketplace, clock and metrics.
type Config struct {
	Store      store.Store
	Market     market.Market
	Clock      clock.Clock
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Sniper schedules and fires snipes.
type Sniper struct {
	cfg Config
}

// New returns a Sniper; call Run to start it.
func New(cfg Config) *Sniper { return &Sniper{cfg: cfg} }

// Run schedules and fires snipes until ctx ends.
func (s *Sniper) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Changed re-arms a snipe at once after an edit. Safe for unknown IDs.
func (s *Sniper) Changed(snipeID int64) {}

// ClockOffset is the measured marketplace clock minus the local clock.
func (s *Sniper) ClockOffset() time.Duration { return 0 }
