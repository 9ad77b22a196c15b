// Package sim is sniped's built-in auction marketplace: a deterministic
// catalogue of live auctions that follows the real marketplace's bidding
// rules (increments, proxy bidding, reserve, Buy It Now, hard end times,
// early ends), with rival bidders, generated pictures, failure injection and
// a /sim/... HTTP control surface for scripting scenarios. Its state lives in
// a SQLite file of its own (DATA/sim.db), and every bid is committed before
// PlaceBid returns, so a bid never vanishes across a crash.
package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
)

// Defaults for Config fields left zero.
const (
	// DefaultItems is the size of the generated catalogue.
	DefaultItems = 5000
	// DefaultBidders is the rival bidder level.
	DefaultBidders = BiddersNormal
	// DefaultSeed is the catalogue seed when none is chosen (--market-seed).
	DefaultSeed int64 = 1
	// DefaultRetention is how long an ended auction stays on the
	// marketplace before Run drops it (--sim-retention): a day, so that a
	// sniped that was down for hours still settles its snipes from the
	// real result, while memory stays bounded (~0.9 KB per auction).
	DefaultRetention = 24 * time.Hour
)

// Rival bidder levels for Config.Bidders.
const (
	BiddersOff    = "off"
	BiddersLow    = "low"
	BiddersNormal = "normal"
	BiddersHigh   = "high"
)

// Config configures a simulator.
type Config struct {
	// Path is the SQLite file holding the simulator's state; "" keeps
	// everything in memory (tests, benchmarks).
	Path string
	// Seed makes the catalogue, watch lists and rival bidders deterministic.
	Seed int64
	// Items is the number of live auctions to generate and keep listed
	// (default DefaultItems).
	Items int
	// Bidders is the rival bidder level: off, low, normal or high
	// (default normal).
	Bidders string
	// Clock is the local clock (default clock.Real).
	Clock clock.Clock
	// Logger receives the simulator's log (default: discarded).
	Logger *slog.Logger
	// ImageBaseURL prefixes picture URLs so that they are absolute, e.g.
	// "http://127.0.0.1:8080" or, behind a base path, "http://host/base".
	ImageBaseURL string
	// ClockSkew is how far the marketplace's clock runs ahead of Clock
	// (negative: behind) at start; SetClockSkew changes it at run time. All
	// marketplace time, including end times and bid times, is on the skewed
	// clock.
	ClockSkew time.Duration
	// Retention is how long an auction stays after it ended (default
	// DefaultRetention). Run then drops it with its bids and watch-list
	// entries, from memory and from Path: every lookup of it answers
	// market.ErrNotFound, as the real marketplace does for a purged item.
	Retention time.Duration
}

// Sim is the simulated marketplace. It implements market.Market; every
// method is safe for concurrent use.
type Sim struct {
	cfg Config
	log *slog.Logger
	db  *sql.DB // nil when in memory

	mu     sync.RWMutex
	lots   map[int64]*lot
	order  []*lot // by item number, for deterministic scans
	nextNo int64
	// watch holds each marketplace user's watch list (item numbers in the
	// order added); seeded marks users whose list was seeded.
	watch  map[string][]int64
	seeded map[string]bool

	fail failures
	skew atomic.Int64 // the marketplace clock's offset (a time.Duration)
}

var _ market.Market = (*Sim)(nil)

// firstItemNo is the first generated item number: twelve digits, like the
// real marketplace's.
const firstItemNo int64 = 310_000_000_001

// Open loads the simulator's state from cfg.Path, generating the catalogue
// from cfg.Seed on first start. A restart loads and never regenerates.
func Open(ctx context.Context, cfg Config) (*Sim, error) {
	if cfg.Items <= 0 {
		cfg.Items = DefaultItems
	}
	if cfg.Bidders == "" {
		cfg.Bidders = DefaultBidders
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	switch cfg.Bidders {
	case BiddersOff, BiddersLow, BiddersNormal, BiddersHigh:
	default:
		return nil, fmt.Errorf("sim: bidders must be one of off, low, normal, high, not %q", cfg.Bidders)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Sim{
		cfg:    cfg,
		log:    cfg.Logger,
		lots:   make(map[int64]*lot),
		nextNo: firstItemNo,
		watch:  make(map[string][]int64),
		seeded: make(map[string]bool),
	}
	s.skew.Store(int64(cfg.ClockSkew))
	if cfg.Path != "" {
		db, err := openDB(ctx, cfg.Path)
		if err != nil {
			return nil, err
		}
		s.db = db
		loaded, err := s.load(ctx)
		if err != nil {
			db.Close()
			return nil, err
		}
		if loaded {
			s.log.Info("simulator loaded", "path", cfg.Path, "items", len(s.lots))
			return s, nil
		}
	}
	if err := s.generate(ctx); err != nil {
		if s.db != nil {
			s.db.Close()
		}
		return nil, err
	}
	s.log.Info("simulator catalogue generated", "seed", cfg.Seed, "items", len(s.lots), "path", cfg.Path)
	return s, nil
}

// Close releases the database. It does not stop Run; cancel its context.
func (s *Sim) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// now is the marketplace's current time.
func (s *Sim) now() time.Time { return s.cfg.Clock.Now().Add(s.ClockSkew()) }

// MarketNow is the marketplace's clock, as Now reads it but without the
// injected failures: for a server that stamps its answers with it.
func (s *Sim) MarketNow() time.Time { return s.now() }

func (s *Sim) nowMs() int64 { return s.now().UnixMilli() }

// lot returns a listed item; removed items are not found.
func (s *Sim) lot(itemNo int64) (*lot, error) {
	s.mu.RLock()
	l := s.lots[itemNo]
	s.mu.RUnlock()
	if l == nil {
		return nil, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	l.mu.Lock()
	removed := l.removed
	l.mu.Unlock()
	if removed {
		return nil, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	return l, nil
}

// add lists a new lot in memory; the caller has persisted it.
func (s *Sim) addLocked(l *lot) {
	s.lots[l.ItemNo] = l
	s.order = append(s.order, l)
	if l.ItemNo >= s.nextNo {
		s.nextNo = l.ItemNo + 1
	}
}

// snapshot returns the lots in item-number order.
func (s *Sim) snapshot() []*lot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.order)
}

// errClosed is returned by persistence after Close.
var errClosed = errors.New("sim: closed")
