// Package sniper is sniped's engine: it fires every armed snipe exactly once
// at its item's end minus its delay, on the marketplace's clock, and learns
// and stores each snipe's outcome.
//
// The store is the source of truth. The sniper keeps only the snipes due
// within a short horizon in memory (schedule.go), measures the marketplace
// clock offset (offset.go), refreshes items ahead of the shot (preflight.go),
// moves each snipe scheduled → firing → placed/settled with the store's
// compare-and-set (fire.go), learns results after the end (settle.go),
// enforces Bid Group rules (group.go) and resolves whatever a crash left
// behind (recover.go).
package sniper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// Defaults for the zero values of Config's tuning fields.
const (
	// DefaultHorizon is how far ahead snipes are loaded into memory. It
	// covers the one-minute pre-flight.
	DefaultHorizon = 90 * time.Second
	// DefaultRefresh is how often the horizon is reloaded from the store.
	DefaultRefresh = 10 * time.Second
	// DefaultArmLead is how long before the shot a snipe is durably marked
	// firing and re-read, so that the store write never delays the send.
	// Edits within this window get 409.
	DefaultArmLead = time.Second
	// DefaultArmPerSnipe is added to the arm lead for each other snipe due
	// in the same millisecond (about one store write each), so that a
	// burst is marked firing before its moment, up to MaxArmLead: 2,000 or
	// more at once arm from 2 s ahead.
	DefaultArmPerSnipe = 500 * time.Microsecond
	// MaxArmLead caps how long before its moment a snipe is marked firing,
	// however crowded the moment: users' edits are accepted until then.
	MaxArmLead = 2 * time.Second
	// DefaultMaxInFlight bounds concurrent snipe goroutines (arming,
	// sending, settling), so a burst does not serialize behind marketplace
	// latency yet cannot grow without limit.
	DefaultMaxInFlight = 8192
	// DefaultSettleGrace is how long after an item's end settlement asks
	// the marketplace for the result.
	DefaultSettleGrace = 2 * time.Second
	// DefaultSweep is how often stuck snipes (placed past their end,
	// firing without a live sender) are looked for.
	DefaultSweep = 15 * time.Second
	// DefaultOffsetEvery is how often the clock offset is re-measured.
	DefaultOffsetEvery = time.Minute
	// DefaultRetryCutoff: transient failures are retried until this long
	// before the item's end, and a snipe whose moment passed (late start)
	// is still sent while at least this long remains.
	DefaultRetryCutoff = 500 * time.Millisecond
	// DefaultPreflightFar and DefaultPreflightNear are when the item is
	// refreshed before the shot.
	DefaultPreflightFar  = time.Minute
	DefaultPreflightNear = 5 * time.Second
	// DefaultLoadLimit is the page size of store scans. The horizon is
	// re-read on every refresh (SnipesInState has no cursor), so a crowded
	// horizon is loaded in pages of this size, more often.
	DefaultLoadLimit = 10000
)

// Config wires a Sniper to its store, marketplace, clock and metrics. The
// tuning fields are optional; zero means the Default* constant.
type Config struct {
	Store      store.Store
	Market     market.Market
	Clock      clock.Clock
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Lease, when set, limits the sniper to this instance's partitions of
	// the work; Store must then be the lease's fenced view (lease.go).
	Lease Lease
	// PreciseWake waits for each shot's last clock.PreciseWindow in
	// clock.SleepPrecisely rather than on a Clock timer, so that the
	// runtime's millisecond timer wake-up and a busy core's time slice do
	// not make it late. Only with the real clock: never in a synctest
	// bubble, whose time is not the kernel's.
	PreciseWake bool

	Horizon       time.Duration
	Refresh       time.Duration
	ArmLead       time.Duration
	ArmPerSnipe   time.Duration
	MaxInFlight   int
	SettleGrace   time.Duration
	Sweep         time.Duration
	OffsetEvery   time.Duration
	RetryCutoff   time.Duration
	PreflightFar  time.Duration
	PreflightNear time.Duration
	LoadLimit     int
}

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&c.Horizon, DefaultHorizon)
	set(&c.Refresh, DefaultRefresh)
	set(&c.ArmLead, DefaultArmLead)
	set(&c.ArmPerSnipe, DefaultArmPerSnipe)
	set(&c.SettleGrace, DefaultSettleGrace)
	set(&c.Sweep, DefaultSweep)
	set(&c.OffsetEvery, DefaultOffsetEvery)
	set(&c.RetryCutoff, DefaultRetryCutoff)
	set(&c.PreflightFar, DefaultPreflightFar)
	set(&c.PreflightNear, DefaultPreflightNear)
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.LoadLimit <= 0 {
		c.LoadLimit = DefaultLoadLimit
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Sniper schedules and fires snipes. Create it with New and start it with Run.
type Sniper struct {
	cfg Config
	st  store.Store
	mk  market.Market
	clk clock.Clock
	log *slog.Logger
	met *metrics

	// anchor maps the local clock to the marketplace's (offset.go);
	// measured is set once a measurement succeeded.
	anchor   atomic.Pointer[anchor]
	measured atomic.Bool
	// retimeCh is closed (and replaced) when the offset changes by more
	// than retimeThreshold, waking the shots waiting for their moment.
	retimeMu sync.Mutex
	retimeCh chan struct{}
	// health is the shared backoff of lookups retried after marketplace
	// failures (backoff.go).
	health health
	// resolving holds the firing snipes being resolved, and rechecking the
	// abandoned ones being asked about again (recover.go), so that none is
	// worked on twice at once; unconfirmed lists the abandoned ones.
	resolvingMu sync.Mutex
	resolving   map[int64]store.Snipe
	rechecking  map[int64]struct{}
	unconfirmed map[int64]struct{}

	sched *schedule
	// moments wakes the shots of each crowded moment on one timer.
	moments moments
	// sem bounds the goroutines arming and sending shots; bg bounds the
	// background ones (pre-flight, settlement), so that a backlog of
	// settlements can never keep a shot from starting.
	sem chan struct{}
	bg  chan struct{}
	wg  sync.WaitGroup
	// live counts the goroutines the sniper started that are running.
	live atomic.Int64

	// changed holds IDs passed to Changed until the scheduler handles them.
	changedMu  sync.Mutex
	changedIDs map[int64]struct{}
	changedSig chan struct{}

	accMu    sync.Mutex
	accounts map[int64]string

	groupMu sync.Mutex
	groups  map[int64]*groupLock
}

// New returns a Sniper; call Run to start it.
func New(cfg Config) *Sniper {
	cfg.defaults()
	met := newMetrics(cfg.Registerer)
	s := &Sniper{
		cfg:         cfg,
		st:          &gatedStore{Store: cfg.Store, g: &gate{}},
		mk:          cfg.Market,
		clk:         cfg.Clock,
		log:         cfg.Logger,
		met:         met,
		sem:         make(chan struct{}, cfg.MaxInFlight),
		bg:          make(chan struct{}, max(1, cfg.MaxInFlight/8)),
		changedIDs:  map[int64]struct{}{},
		changedSig:  make(chan struct{}, 1),
		accounts:    map[int64]string{},
		groups:      map[int64]*groupLock{},
		resolving:   map[int64]store.Snipe{},
		rechecking:  map[int64]struct{}{},
		unconfirmed: map[int64]struct{}{},
		retimeCh:    make(chan struct{}),
	}
	promauto.With(cfg.Registerer).NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sniped_sniper_goroutines",
		Help: "Goroutines the sniper runs: its loops, shots and background work (each within its slots).",
	}, func() float64 { return float64(s.live.Load()) })
	now := cfg.Clock.Now()
	s.anchor.Store(&anchor{local: now, market: now.Round(0)})
	s.sched = newSchedule(s)
	return s
}

// Run measures the marketplace clock, then schedules and fires snipes until
// ctx ends, while recovering what a previous run left behind in the
// background. It returns nil when ctx ends, after every goroutine it started
// has stopped.
func (s *Sniper) Run(ctx context.Context) error {
	defer s.wg.Wait()
	// The offset is measured before the first snipe is armed (a wrong one
	// moves every shot); recovery needs it too. A marketplace that does
	// not answer delays arming by at most firstOffsetWait.
	s.firstOffset(ctx)
	// The snipes left firing are listed before anything is armed: once
	// the scheduler runs, this process marks snipes firing too, and those
	// are its own to send, not a crash's leftovers to resolve.
	leftovers, err := s.st.SnipesInState(ctx, store.StateFiring, farFuture, s.cfg.LoadLimit)
	if err != nil && ctx.Err() == nil {
		s.log.Error("recovery: list firing snipes; the sweep finds them later", "err", err)
	}
	s.goBackground(ctx, func(ctx context.Context) {
		if err := s.recover(ctx, leftovers); err != nil && ctx.Err() == nil {
			// What recovery missed, the sweep finds.
			s.log.Error("recovery incomplete; the sweep retries", "err", err)
		}
	})
	s.goBackground(ctx, s.offsetLoop)
	s.goBackground(ctx, s.loadLoop)
	s.goBackground(ctx, s.sweepLoop)
	s.goBackground(ctx, s.changedLoop)
	if s.cfg.Lease != nil {
		s.goBackground(ctx, s.leaseLoop)
	}
	s.sched.run(ctx)
	return nil
}

func (s *Sniper) goBackground(ctx context.Context, f func(context.Context)) {
	s.wg.Add(1)
	s.live.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.live.Add(-1)
		f(ctx)
	}()
}

// spawn runs f on its own goroutine once it holds one of sem's slots (s.sem
// or s.bg): it waits for the slot first, so a backlog never piles up as
// goroutines. It reports false, without running f, when ctx ended first.
func (s *Sniper) spawn(ctx context.Context, sem chan struct{}, f func(context.Context)) bool {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	s.start(ctx, sem, f)
	return true
}

// trySpawn is spawn without waiting: false when every slot is taken.
func (s *Sniper) trySpawn(ctx context.Context, sem chan struct{}, f func(context.Context)) bool {
	select {
	case sem <- struct{}{}:
	default:
		return false
	}
	s.start(ctx, sem, f)
	return true
}

// start runs f on a goroutine that owns a slot of sem already taken.
func (s *Sniper) start(ctx context.Context, sem chan struct{}, f func(context.Context)) {
	s.wg.Add(1)
	s.live.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.live.Add(-1)
		defer func() { <-sem }()
		f(ctx)
	}()
}

// Changed re-arms a snipe at once after an addBid, deleteBid or enabled
// change. It never blocks and is safe for unknown or deleted IDs.
func (s *Sniper) Changed(snipeID int64) {
	s.changedMu.Lock()
	s.changedIDs[snipeID] = struct{}{}
	s.changedMu.Unlock()
	select {
	case s.changedSig <- struct{}{}:
	default:
	}
}

func (s *Sniper) changedLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changedSig:
		}
		s.changedMu.Lock()
		ids := s.changedIDs
		s.changedIDs = map[int64]struct{}{}
		s.changedMu.Unlock()
		for id := range ids {
			if err := s.rearm(ctx, id); err != nil && ctx.Err() == nil {
				s.log.Warn("re-arm after change", "snipe", id, "err", err)
			}
		}
	}
}

// rearm reads one snipe and puts it in (or takes it out of) the schedule.
func (s *Sniper) rearm(ctx context.Context, id int64) error {
	sn, err := s.st.SnipeByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		s.sched.forget(id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read snipe: %w", err)
	}
	s.consider(sn)
	return nil
}

// consider schedules whatever a snipe needs next, from its stored state.
func (s *Sniper) consider(sn store.Snipe) {
	switch {
	case sn.State != store.StateScheduled:
		if sn.State == store.StatePlaced {
			s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), nil)
		}
		s.sched.forget(sn.ID)
	case armed(sn):
		if sn.FireAt.Before(s.marketNow().Add(s.cfg.Horizon)) {
			s.sched.track(sn)
		} else {
			s.sched.forget(sn.ID) // the loader brings it back in time
		}
	case sn.Bid > 0:
		// Disabled, or its item is stored as ended: never sent, settled
		// once the item is over (settleUnsent). An end just stored by
		// pre-flight is pre-flight's to settle first, with its reason.
		s.sched.forget(sn.ID)
		at := s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace)
		if sn.Item.Ended {
			at = s.clk.Now().Add(settleRetry)
		}
		s.sched.unsentAt(sn.ID, at)
	default:
		s.sched.forget(sn.ID)
	}
}

// armed reports whether a scheduled snipe should fire.
func armed(sn store.Snipe) bool {
	return sn.State == store.StateScheduled && sn.Enabled && sn.Bid > 0 && !sn.Item.Ended
}

// userName maps an account to its marketplace user, caching the names.
func (s *Sniper) userName(ctx context.Context, accountID int64) (string, error) {
	s.accMu.Lock()
	defer s.accMu.Unlock()
	if n, ok := s.accounts[accountID]; ok {
		return n, nil
	}
	accs, err := s.st.Accounts(ctx)
	if err != nil {
		return "", fmt.Errorf("list accounts: %w", err)
	}
	for _, a := range accs {
		s.accounts[a.ID] = a.Name
	}
	if n, ok := s.accounts[accountID]; ok {
		return n, nil
	}
	return "", fmt.Errorf("account %d: %w", accountID, store.ErrNotFound)
}
