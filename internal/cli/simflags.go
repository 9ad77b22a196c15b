package cli

import (
	"flag"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/sim"
)

// simFlags are the built-in simulator's flags, shared by serve (where the
// simulator is the default marketplace) and market serve.
type simFlags struct {
	seed      int64
	items     int
	bidders   string
	skew      time.Duration
	retention time.Duration
	control   string
}

// register adds the flags to fs; prefix opens each help text, and
// controlHelp describes --sim-control (the two commands serve different
// control surfaces).
func (f *simFlags) register(fs *flag.FlagSet, prefix, controlHelp string) {
	fs.Int64Var(&f.seed, "market-seed", sim.DefaultSeed, prefix+"seed of the generated catalogue (used on first start)")
	fs.IntVar(&f.items, "sim-items", sim.DefaultItems, prefix+"live auctions to generate on first start")
	fs.StringVar(&f.bidders, "sim-bidders", sim.DefaultBidders, prefix+"rival bidding activity: off, low, normal or high")
	fs.DurationVar(&f.skew, "sim-clock-skew", 0, prefix+"offset of the marketplace clock (and its Date headers) from this machine's, e.g. 3s or -1.5s")
	fs.DurationVar(&f.retention, "sim-retention", sim.DefaultRetention, prefix+"how long an ended auction stays on the marketplace before it is dropped (at least 1m)")
	fs.StringVar(&f.control, "sim-control", "auto", prefix+controlHelp)
}

// check validates the flags, naming the one at fault.
func (f *simFlags) check() error {
	switch f.bidders {
	case "off", "low", "normal", "high":
	default:
		return usageErr("--sim-bidders must be off, low, normal or high, not %q", f.bidders)
	}
	switch f.control {
	case "auto", "on", "off":
	default:
		return usageErr("--sim-control must be auto, on or off, not %q", f.control)
	}
	if f.items < 1 {
		return usageErr("--sim-items must be at least 1")
	}
	if f.retention < time.Minute {
		return usageErr("--sim-retention must be at least 1m, not %v", f.retention)
	}
	return nil
}

// config is the simulator's configuration for a data folder.
func (f *simFlags) config(data string, clk clock.Clock, log *slog.Logger, imageBase string) sim.Config {
	return sim.Config{
		Path: filepath.Join(data, "sim.db"), Seed: f.seed, Items: f.items, Bidders: f.bidders,
		Clock: clk, Logger: log.With("component", "sim"), ImageBaseURL: imageBase,
		ClockSkew: f.skew, Retention: f.retention,
	}
}
