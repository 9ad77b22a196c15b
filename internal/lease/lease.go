// Package lease shares the sniper's work among instances on one database.
// The work is split by account into K partitions (partition = account ID
// mod K); each partition is a lease row in the store (store.LeaseStore)
// with a fencing epoch and an expiry on the database's clock. A Manager
// keeps this instance's heartbeat, renews its leases, takes its fair share
// of the partitions (K / live instances), hands surplus back after a drain,
// and tells the sniper which partitions it may fire and with which epoch.
//
// Safety rests on three rules:
//   - a shot is sent only while Valid: the lease stays valid by the local
//     monotonic clock, counted from when the renewal was SENT, for longer
//     than the send window, so a paused instance never fires on resume;
//   - every sniper state change carries the epoch as a fence, so a write
//     under a lost lease is refused by the database;
//   - a new holder waits out the old lease plus the send window before it
//     resolves the partition's firing snipes (Held.RecoverAt).
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/store"
)

// Defaults for the zero values of Config.
const (
	// DefaultPartitions is K. More partitions spread the work more evenly
	// over instances; each costs a row and a little renewal work.
	DefaultPartitions = 32
	// DefaultTTL is how long a lease lasts without renewal: a dead
	// instance's partitions move after at most this long (plus a tick).
	DefaultTTL = 6 * time.Second
	// DefaultRenew is the renewal interval, well inside the TTL so that
	// a couple of slow or failed renewals do not lose the lease. It is also
	// how often free partitions are looked for: a partition handed over
	// waits at most this long for its next holder.
	DefaultRenew = 500 * time.Millisecond
	// DefaultWindow is the send window: the longest one bid attempt may
	// take (the sniper bounds each attempt by it). A shot starts only
	// while the lease has more than this left.
	DefaultWindow = 2 * time.Second
	// DefaultDrain is how long a partition handed back in a rebalance
	// stays held, renewed but taking no new snipes, so that shots already
	// armed (up to the sniper's 2 s arm lead) go out before it moves.
	DefaultDrain = 5 * time.Second
)

// Hand-over timing (see handoverAt).
const (
	// takeoverSlack, with Renew, is how long the next holder needs between
	// a hand-over and a shot it must send on time: noticing the free
	// partition (up to Renew), acquiring it, loading its snipes, and
	// marking the shot firing ahead of its moment (up to 2 s).
	takeoverSlack = 2500 * time.Millisecond
	// maxHandoverWait bounds how far a drain is stretched to end between
	// shots; a partition busy for that long is handed over after Drain.
	maxHandoverWait = 30 * time.Second
	// handoverStep is how long after a shot's keep time a hand-over moved
	// past it comes, absorbing small clock-offset corrections.
	handoverStep = 50 * time.Millisecond
	// slowRenewal is how long a renewal may take before it is logged: with
	// the defaults, one taking 3.5 s leaves no lease beyond the window.
	slowRenewal = time.Second
)

// Config wires a Manager. Store is required; zero tuning fields take the
// Default* constants.
type Config struct {
	Store      store.LeaseStore
	Clock      clock.Clock
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Instance identifies this process in the lease rows; by default the
	// host name, PID and random bits, unique per start.
	Instance string
	// Addr is where this instance listens, shown to operators.
	Addr string

	Partitions int
	TTL        time.Duration
	Renew      time.Duration
	Window     time.Duration
	Drain      time.Duration
	// Exclusive is for a database one process serves (SQLite, under the
	// data folder's lock): this instance takes every partition at once,
	// forcing out leases a dead previous process left, holds them without
	// renewal, and resolves firing snipes without waiting, since no other
	// process can send.
	Exclusive bool
}

func (c *Config) defaults() error {
	if c.Store == nil {
		return errors.New("lease: a store is required")
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Instance == "" {
		c.Instance = NewInstanceID()
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&c.TTL, DefaultTTL)
	set(&c.Renew, DefaultRenew)
	set(&c.Window, DefaultWindow)
	set(&c.Drain, DefaultDrain)
	switch {
	case c.Partitions < 1:
		return fmt.Errorf("lease: partitions %d: must be at least 1", c.Partitions)
	case c.Renew <= 0 || c.Window < 0 || c.Drain < 0:
		return fmt.Errorf("lease: renew %v, window %v, drain %v: renew must be positive, the others not negative", c.Renew, c.Window, c.Drain)
	case c.TTL < 2*c.Renew+c.Window:
		// A lease must survive one failed renewal and still leave a
		// usable stretch beyond the send window.
		return fmt.Errorf("lease: TTL %v: must be at least twice the renewal interval (%v) plus the send window (%v)", c.TTL, c.Renew, c.Window)
	}
	return nil
}

// NewInstanceID returns host-pid-random: readable in the lease rows and
// unique per process start, so a restarted instance is a new holder.
func NewInstanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Held is one partition this instance holds.
type Held struct {
	Partition int
	Epoch     int64
	// RecoverAt (local clock) is when the partition's firing snipes may be
	// resolved: the previous holder's lease and send window are over.
	RecoverAt time.Time
	// Draining partitions are being handed back: their armed shots may
	// still go out, but no new snipe of theirs is taken on.
	Draining bool
}

// part is a held partition's local state.
type part struct {
	epoch int64
	// validUntil is when the lease ends by the local clock: when the last
	// successful acquire or renewal was sent, plus the TTL. The database
	// computed its expiry later than that, so this errs early.
	validUntil time.Time
	recoverAt  time.Time
	// drainUntil is set while draining: the lease is released then.
	drainUntil time.Time
}

// Manager holds this instance's share of the partitions. Create it with
// New, run it with Run, and call Release on graceful shutdown.
type Manager struct {
	cfg Config
	st  store.LeaseStore
	clk clock.Clock
	log *slog.Logger
	met *metrics

	mu      sync.Mutex
	held    map[int]*part
	closing bool
	// mismatch remembers the last partition-count disagreement logged.
	mismatch string
	// failing counts renewals failed in a row (Tick's goroutine only).
	failing int
	// shots lists the keep times of a partition's scheduled shots (SetShots).
	shots func(partition int, from, to time.Time) []time.Time

	changed chan struct{}
}

// New returns a Manager; it holds nothing until Run's first round.
func New(cfg Config) (*Manager, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Manager{
		cfg:     cfg,
		st:      cfg.Store,
		clk:     cfg.Clock,
		log:     cfg.Logger.With("instance", cfg.Instance),
		met:     newMetrics(cfg.Registerer),
		held:    map[int]*part{},
		changed: make(chan struct{}, 1),
	}, nil
}

// Instance is this instance's ID in the lease rows.
func (m *Manager) Instance() string { return m.cfg.Instance }

// Partitions is K.
func (m *Manager) Partitions() int { return m.cfg.Partitions }

// Window is the send window: the longest a bid attempt may take.
func (m *Manager) Window() time.Duration { return m.cfg.Window }

// Partition maps an account to its partition.
func (m *Manager) Partition(accountID int64) int {
	k := int64(m.cfg.Partitions)
	return int(((accountID % k) + k) % k)
}

// Changed is signalled (without blocking, coalesced) whenever the set of
// held partitions changes: the sniper reloads its work then.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

// Valid reports whether a shot of partition p may be sent now, and the
// epoch to fence its writes with: the lease is held, and by the local
// monotonic clock it stays valid for longer than the send window.
func (m *Manager) Valid(p int) (epoch int64, ok bool) {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[p]
	if h == nil || m.closing || (!m.cfg.Exclusive && !now.Add(m.cfg.Window).Before(h.validUntil)) {
		return 0, false
	}
	return h.epoch, true
}

// Owns reports whether partition p's snipes should be taken on (loaded,
// armed, settled) by this instance: Valid, and not being handed back.
func (m *Manager) Owns(p int) (epoch int64, ok bool) {
	epoch, ok = m.Valid(p)
	if !ok {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[p]; h == nil || !h.drainUntil.IsZero() {
		return 0, false
	}
	return epoch, true
}

// Keeps reports whether partition p stays held until at least t: it is
// held and not being handed over before t. The sniper arms a shot only on
// a partition it keeps past the shot (plus the send window).
func (m *Manager) Keeps(p int, t time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[p]
	return h != nil && !m.closing && (h.drainUntil.IsZero() || t.Before(h.drainUntil))
}

// SetShots tells the manager where this instance's shots are: f lists, for
// a partition, the local moments in [from, to) until which the partition
// must stay held for a shot scheduled here to go out (the times the sniper
// passes to Keeps). A drain then ends between shots, so that no shot of a
// partition handed over waits for its next holder to take it on. Without
// it, a drain ends after Drain.
func (m *Manager) SetShots(f func(partition int, from, to time.Time) []time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shots = f
}

// handoverAt is when a partition starting to drain is handed over: the
// first moment from earliest on that is after each of its shots' keep
// times or far enough before it (Renew + takeoverSlack) for the next
// holder to send the shot on time. A partition without such a moment
// within maxHandoverWait is handed over at earliest.
func (m *Manager) handoverAt(p int, earliest time.Time) time.Time {
	m.mu.Lock()
	f := m.shots
	m.mu.Unlock()
	if f == nil {
		return earliest
	}
	gap := m.cfg.Renew + takeoverSlack
	limit := earliest.Add(maxHandoverWait)
	keeps := f(p, earliest, limit.Add(gap))
	slices.SortFunc(keeps, time.Time.Compare)
	at := earliest
	for _, k := range keeps {
		if at.After(k.Add(-gap)) && !at.After(k) {
			at = k.Add(handoverStep) // after it: this instance sends it
		}
	}
	if at.After(limit) {
		return earliest
	}
	return at
}

// Fence returns the epoch this instance holds partition p under, valid or
// not, for the writes that record what already happened (an answer to a
// bid that left): a lost lease still refuses them at the database.
func (m *Manager) Fence(p int) (epoch int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[p]
	if h == nil {
		return 0, false
	}
	return h.epoch, true
}

// Held lists the held partitions by number.
func (m *Manager) Held() []Held {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Held, 0, len(m.held))
	for p, h := range m.held {
		out = append(out, Held{Partition: p, Epoch: h.epoch, RecoverAt: h.recoverAt, Draining: !h.drainUntil.IsZero()})
	}
	slices.SortFunc(out, func(a, b Held) int { return a.Partition - b.Partition })
	return out
}

// Status is what /healthz reports about the lease.
type Status struct {
	Instance   string `json:"instance"`
	Partitions int    `json:"partitions"`
	// Held counts the partitions held; Valid those whose shots may go out.
	Held  int `json:"held"`
	Valid int `json:"valid"`
	// Firing is true while this instance fires at least one partition.
	Firing bool `json:"firing"`
}

// Status reports the lease state for health checks.
func (m *Manager) Status() Status {
	st := Status{Instance: m.cfg.Instance, Partitions: m.cfg.Partitions}
	for _, h := range m.Held() {
		st.Held++
		if _, ok := m.Valid(h.Partition); ok {
			st.Valid++
		}
	}
	st.Firing = st.Valid > 0
	return st
}

// Run keeps the heartbeat, renews, and rebalances every Renew interval
// until ctx ends. It does not release the leases when ctx ends (a crash
// does not either): call Release first on a graceful shutdown.
func (m *Manager) Run(ctx context.Context) error {
	t := m.clk.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		start := m.clk.Now()
		m.Tick(ctx)
		next := start.Add(m.cfg.Renew)
		if d := m.nextDrain(); !d.IsZero() && d.Before(next) {
			next = d // hand over on time: the next holder is waiting
		}
		t.Reset(max(0, next.Sub(m.clk.Now())))
	}
}

// Tick is one round: heartbeat, renew, finish drains, rebalance. Run calls
// it every Renew interval; tests call it directly.
func (m *Manager) Tick(ctx context.Context) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return
	}
	if m.cfg.Exclusive {
		m.tickExclusive(ctx)
		return
	}
	if err := m.st.Heartbeat(ctx, store.HeartbeatParams{Instance: m.cfg.Instance, Partitions: m.cfg.Partitions, Addr: m.cfg.Addr, TTL: m.cfg.TTL}); err != nil {
		if ctx.Err() != nil {
			return
		}
		m.log.Debug("lease heartbeat failed", "err", err) // the renewal's failure says it
	}
	m.renew(ctx)
	m.finishDrains(ctx)
	m.rebalance(ctx)
	m.met.held.Set(float64(len(m.Held())))
}

// tickExclusive takes every partition not yet held, and nothing more: on a
// database one process serves, the data folder's lock is what excludes
// other processes, so the leases need no renewal (and a renewal queued
// behind a burst of shots on SQLite's one writer could otherwise stall
// them). The rows are kept for their epochs, which fence the writes.
func (m *Manager) tickExclusive(ctx context.Context) {
	m.mu.Lock()
	missing := m.cfg.Partitions - len(m.held)
	m.mu.Unlock()
	if missing > 0 {
		m.acquire(ctx, m.candidates(store.LeaseView{}), missing)
	}
	m.met.held.Set(float64(len(m.Held())))
}

// renew extends every held lease; a lease the database no longer gives
// this instance is lost, and one it holds unknowingly (an acquire whose
// answer was lost) is released.
func (m *Manager) renew(ctx context.Context) {
	sent := m.clk.Now()
	ls, err := m.st.RenewLeases(ctx, store.RenewParams{Holder: m.cfg.Instance, TTL: m.cfg.TTL})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		m.met.renewErrors.Inc()
		// The first failure of a streak, then one in 20 (10 s by default).
		if m.failing%20 == 0 {
			m.log.Warn("lease renewal failed; partitions stop firing when their leases run short", "err", err, "failures_in_a_row", m.failing+1)
		}
		m.failing++
		return
	}
	if m.failing > 0 {
		m.log.Info("lease renewal works again", "failures_in_a_row", m.failing)
		m.failing = 0
	}
	m.met.renewals.Inc()
	if took := m.clk.Now().Sub(sent); took >= slowRenewal {
		// Shots hold while a lease has less than the send window left.
		m.log.Warn("lease renewal slow", "took", took)
	}
	got := map[int]store.Lease{}
	for _, l := range ls {
		got[l.Partition] = l
	}
	var stray, lost []int
	m.mu.Lock()
	for p, h := range m.held {
		if l, ok := got[p]; ok && l.Epoch == h.epoch {
			h.validUntil = sent.Add(m.cfg.TTL)
			continue
		}
		delete(m.held, p)
		lost = append(lost, p)
	}
	for p := range got {
		if m.held[p] == nil && !slices.Contains(lost, p) {
			stray = append(stray, p)
		}
	}
	m.mu.Unlock()
	if len(lost) > 0 {
		slices.Sort(lost)
		m.met.losses.Add(float64(len(lost)))
		m.log.Warn("partitions lost: another instance holds them now", "partitions", lost)
		m.signal()
	}
	if len(stray) > 0 {
		slices.Sort(stray)
		m.release(ctx, stray, "partitions released: held without knowing (a lost answer)")
	}
}

// nextDrain is when the next drain ends (zero: none).
func (m *Manager) nextDrain() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var at time.Time
	for _, h := range m.held {
		if !h.drainUntil.IsZero() && (at.IsZero() || h.drainUntil.Before(at)) {
			at = h.drainUntil
		}
	}
	return at
}

// finishDrains releases the partitions whose drain is over.
func (m *Manager) finishDrains(ctx context.Context) {
	now := m.clk.Now()
	var done []int
	m.mu.Lock()
	for p, h := range m.held {
		if !h.drainUntil.IsZero() && !now.Before(h.drainUntil) {
			done = append(done, p)
			delete(m.held, p)
		}
	}
	m.mu.Unlock()
	if len(done) > 0 {
		slices.Sort(done)
		m.signal()
		m.release(ctx, done, "partitions handed over")
	}
}

func (m *Manager) release(ctx context.Context, parts []int, msg string) {
	if err := m.st.ReleaseLeases(ctx, store.ReleaseParams{Holder: m.cfg.Instance, Partitions: parts}); err != nil {
		// They expire on their own, TTL later.
		m.log.Warn("lease release failed; the leases expire instead", "partitions", parts, "err", err)
		return
	}
	m.log.Info(msg, "partitions", parts)
}

// rebalance works out this instance's fair share from the live instances
// and moves towards it: surplus partitions start draining, missing ones
// are taken from the free and expired leases.
func (m *Manager) rebalance(ctx context.Context) {
	v, err := m.st.LeaseView(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("lease view failed", "err", err)
		}
		return
	}
	target, ok := m.share(v)
	if !ok {
		return
	}
	now := m.clk.Now()
	m.mu.Lock()
	var active []int
	for p, h := range m.held {
		if h.drainUntil.IsZero() {
			active = append(active, p)
		}
	}
	m.mu.Unlock()
	slices.Sort(active)
	var draining []int
	var until []string
	if surplus := len(active) - target; surplus > 0 {
		// Hand back the highest-numbered ones: any choice works, a fixed
		// one keeps the logs readable.
		draining = active[len(active)-surplus:]
		ends := make([]time.Time, len(draining))
		for i, p := range draining {
			ends[i] = m.handoverAt(p, now.Add(m.cfg.Drain)) // not under m.mu: it asks the sniper
			until = append(until, fmt.Sprintf("%d in %v", p, ends[i].Sub(now).Round(time.Millisecond)))
		}
		m.mu.Lock()
		for i, p := range draining {
			// Tick's goroutine is the only one that removes a held
			// partition, except Release.
			if h := m.held[p]; h != nil {
				h.drainUntil = ends[i]
			}
		}
		m.mu.Unlock()
	}
	if len(draining) > 0 {
		m.log.Info("partitions draining: handed over between shots, once armed shots are out", "partitions", draining, "handover", until, "share", target, "instances", len(v.Instances))
		m.signal()
	}
	if need := target - len(active); need > 0 {
		m.acquire(ctx, m.candidates(v), need)
	}
}

// share is this instance's fair share of the K partitions among the live
// instances (sorted by ID; the first K mod n take one more). ok is false
// when a live instance works with a different K: sharing would then fire
// some accounts twice, so nothing new is taken until it is gone.
func (m *Manager) share(v store.LeaseView) (int, bool) {
	if m.cfg.Exclusive {
		return m.cfg.Partitions, true
	}
	ids := []string{m.cfg.Instance}
	var bad []string
	for _, in := range v.Instances {
		if in.Partitions != m.cfg.Partitions {
			bad = append(bad, fmt.Sprintf("%s (%d)", in.ID, in.Partitions))
			continue
		}
		if in.ID != m.cfg.Instance {
			ids = append(ids, in.ID)
		}
	}
	m.mu.Lock()
	key := fmt.Sprint(bad)
	report := key != m.mismatch
	m.mismatch = key
	m.mu.Unlock()
	if len(bad) > 0 {
		if report {
			m.log.Error("live instances use a different partition count; taking no partitions until they stop", "partitions", m.cfg.Partitions, "others", bad)
		}
		return 0, false
	}
	slices.Sort(ids)
	n, k := len(ids), m.cfg.Partitions
	i := slices.Index(ids, m.cfg.Instance)
	share := k / n
	if i < k%n {
		share++
	}
	return share, true
}

// candidates are the partitions this instance could take: never held,
// free or expired (or every other one, when Exclusive). They are ordered
// by a hash of instance and partition, so instances starting together
// mostly reach for different ones.
func (m *Manager) candidates(v store.LeaseView) []int {
	rows := map[int]store.Lease{}
	for _, l := range v.Leases {
		rows[l.Partition] = l
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for p := range m.cfg.Partitions {
		if m.held[p] != nil {
			continue
		}
		l, ok := rows[p]
		if m.cfg.Exclusive || !ok || l.Holder == "" || !l.Expires.After(v.Now) {
			out = append(out, p)
		}
	}
	rank := func(p int) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d", m.cfg.Instance, p)
		return h.Sum64()
	}
	slices.SortFunc(out, func(a, b int) int {
		ra, rb := rank(a), rank(b)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	return out
}

// acquire takes up to n of the candidates; a race lost is not an error.
func (m *Manager) acquire(ctx context.Context, candidates []int, n int) {
	var took []int
	var from []string
	for _, p := range candidates {
		if len(took) == n || ctx.Err() != nil {
			break
		}
		sent := m.clk.Now()
		a, err := m.st.AcquireLease(ctx, store.AcquireParams{Partition: p, Holder: m.cfg.Instance, TTL: m.cfg.TTL, Force: m.cfg.Exclusive})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			m.log.Warn("lease acquire failed", "partition", p, "err", err)
			break
		}
		h := &part{epoch: a.Lease.Epoch, validUntil: sent.Add(m.cfg.TTL), recoverAt: m.recoverAt(a)}
		m.mu.Lock()
		closing := m.closing
		if !closing {
			m.held[p] = h
		}
		m.mu.Unlock()
		if closing {
			// Release ran meanwhile: give this one back too.
			m.release(ctx, []int{p}, "partition released at shutdown")
			break
		}
		m.met.acquired.Inc()
		took = append(took, p)
		if a.PrevHolder != "" && a.PrevHolder != m.cfg.Instance {
			from = append(from, fmt.Sprintf("%d from %s", p, a.PrevHolder))
		}
	}
	if len(took) > 0 {
		if len(from) > 0 {
			m.log.Info("partitions acquired", "partitions", took, "taken_over_after_expiry", from)
		} else {
			m.log.Info("partitions acquired", "partitions", took)
		}
		m.signal()
	}
}

// recoverAt is when a newly taken partition's firing snipes may be
// resolved: once the old lease has run out on the database clock (it
// usually has) and then the send window, measured on the local clock. A
// partition never held, or held by this process, needs no wait; nor does
// an exclusive database, where the previous holder is a dead process.
func (m *Manager) recoverAt(a store.Acquired) time.Time {
	now := m.clk.Now()
	if m.cfg.Exclusive || a.PrevExpires.IsZero() || a.PrevHolder == m.cfg.Instance {
		return now
	}
	return now.Add(max(0, a.PrevExpires.Sub(a.Now)) + m.cfg.Window)
}

// Release hands every partition back at once and removes the heartbeat,
// for a graceful shutdown: call it after the sniper has stopped sending,
// so that the next holders start at once. Valid is false from the start.
func (m *Manager) Release(ctx context.Context) error {
	m.mu.Lock()
	m.closing = true
	parts := make([]int, 0, len(m.held))
	for p := range m.held {
		parts = append(parts, p)
	}
	m.held = map[int]*part{}
	m.mu.Unlock()
	m.signal()
	m.met.held.Set(0)
	slices.Sort(parts)
	err := m.st.ReleaseLeases(ctx, store.ReleaseParams{Holder: m.cfg.Instance, Partitions: parts})
	if err == nil && len(parts) > 0 {
		m.log.Info("partitions released at shutdown", "partitions", parts)
	}
	return errors.Join(err, m.st.Leave(ctx, m.cfg.Instance))
}

func (m *Manager) signal() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// RecoverAt is the latest RecoverAt of the held partitions: from then on,
// every held partition's firing snipes may be resolved.
func (m *Manager) RecoverAt() time.Time {
	at := m.clk.Now()
	for _, h := range m.Held() {
		if h.RecoverAt.After(at) {
			at = h.RecoverAt
		}
	}
	return at
}
