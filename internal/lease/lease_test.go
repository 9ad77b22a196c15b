package lease

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// The tests run in testing/synctest bubbles on the real SQLite store, whose
// lease clock is the process clock: virtual here, so expiry, renewal and
// drains are deterministic. Tick is called directly: each call is one round.

const (
	k      = 8
	ttl    = 6 * time.Second
	window = 2 * time.Second
	drain  = 5 * time.Second
)

// faulty is the real store with lease calls that can fail or be slow.
type faulty struct {
	store.Store
	mu         sync.Mutex
	renewErr   error
	renewDelay time.Duration
}

func (f *faulty) RenewLeases(ctx context.Context, p store.RenewParams) ([]store.Lease, error) {
	f.mu.Lock()
	err, delay := f.renewErr, f.renewDelay
	f.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if err != nil {
		return nil, err
	}
	return f.Store.RenewLeases(ctx, p)
}

func (f *faulty) set(err error, delay time.Duration) {
	f.mu.Lock()
	f.renewErr, f.renewDelay = err, delay
	f.mu.Unlock()
}

type world struct {
	t   *testing.T
	ctx context.Context
	st  *faulty
	log *bytes.Buffer
	mu  sync.Mutex
}

// newWorld opens the store; call it inside the bubble.
func newWorld(t *testing.T) *world {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return &world{t: t, ctx: t.Context(), st: &faulty{Store: db}, log: &bytes.Buffer{}}
}

type syncWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// manager makes an instance named id; opts adjust its config.
func (w *world) manager(id string, opts ...func(*Config)) (*Manager, *prometheus.Registry) {
	w.t.Helper()
	reg := prometheus.NewRegistry()
	cfg := Config{
		Store: w.st, Clock: clock.Real{}, Registerer: reg, Instance: id,
		Logger:     slog.New(slog.NewTextHandler(syncWriter{&w.mu, w.log}, nil)),
		Partitions: k, TTL: ttl, Renew: time.Second, Window: window, Drain: drain,
	}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		w.t.Fatalf("New(%s) = %v", id, err)
	}
	return m, reg
}

func (w *world) logs() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

func partitionsOf(hs []Held) []int {
	var out []int
	for _, h := range hs {
		out = append(out, h.Partition)
	}
	return out
}

func TestSingleInstanceTakesAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, reg := w.manager("a")
		if _, ok := m.Valid(0); ok || m.Status().Firing {
			t.Fatalf("before the first round: Valid(0) = true or firing, want nothing held")
		}
		m.Tick(w.ctx)
		held := m.Held()
		if got := partitionsOf(held); len(got) != k {
			t.Fatalf("held = %v, want all %d", got, k)
		}
		for _, h := range held {
			if e, ok := m.Valid(h.Partition); !ok || e != 1 || h.Draining {
				t.Errorf("partition %d: Valid = %d, %v, draining %v; want epoch 1, valid, not draining", h.Partition, e, ok, h.Draining)
			}
			if h.RecoverAt.After(time.Now()) {
				t.Errorf("partition %d never held before: RecoverAt %v is in the future", h.Partition, h.RecoverAt)
			}
		}
		if st := m.Status(); !st.Firing || st.Held != k || st.Valid != k {
			t.Errorf("Status = %+v, want firing with %d held and valid", st, k)
		}
		for name, want := range map[string]float64{
			"sniped_sniper_partitions_held":          k,
			"sniped_sniper_lease_renewals_total":     1,
			"sniped_sniper_lease_losses_total":       0,
			"sniped_sniper_lease_acquisitions_total": k,
		} {
			if got, ok := gathered(t, reg, name); !ok || got != want {
				t.Errorf("%s = %v (registered %v), want %v", name, got, ok, want)
			}
		}
		if !strings.Contains(w.logs(), "partitions acquired") {
			t.Errorf("logs = %q, want the acquisition logged", w.logs())
		}
	})
}

// TestValidCountsFromSend: validity runs from when the renewal was sent, so
// a slow database answer shortens it, and it ends a window before the TTL.
func TestValidCountsFromSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, _ := w.manager("a")
		m.Tick(w.ctx)
		w.st.set(nil, 1500*time.Millisecond) // the renewal takes 1.5 s to answer
		sent := time.Now()
		m.Tick(w.ctx)
		end := sent.Add(ttl - window) // the last moment a shot may start
		time.Sleep(end.Add(-time.Millisecond).Sub(time.Now()))
		if _, ok := m.Valid(3); !ok {
			t.Errorf("Valid 1 ms before TTL − window from the renewal's send = false, want true")
		}
		time.Sleep(time.Millisecond)
		if _, ok := m.Valid(3); ok {
			t.Errorf("Valid at TTL − window from the renewal's send = true, want false (the answer came 1.5 s later)")
		}
	})
}

func TestRenewFailuresStopFiring(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, reg := w.manager("a")
		m.Tick(w.ctx)
		start := time.Now()
		w.st.set(errors.New("database unreachable"), 0)
		for time.Since(start) < ttl {
			time.Sleep(time.Second)
			m.Tick(w.ctx)
		}
		if _, ok := m.Valid(0); ok || m.Status().Firing {
			t.Errorf("after a TTL of failed renewals: Valid = true or firing, want neither")
		}
		if got := value(t, reg, "sniped_sniper_lease_renewal_errors_total"); got < 5 {
			t.Errorf("renewal errors = %v, want one per failed round", got)
		}
		// The database comes back and no one took the leases: same epochs.
		w.st.set(nil, 0)
		m.Tick(w.ctx)
		if e, ok := m.Valid(0); !ok || e != 1 {
			t.Errorf("after the database came back: Valid(0) = %d, %v; want epoch 1 again", e, ok)
		}
	})
}

// TestShareEvenly: instances joining converge on K/n partitions each,
// disjoint and covering all, with surplus handed back after a drain.
func TestShareEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		a, _ := w.manager("a")
		b, _ := w.manager("b")
		c, _ := w.manager("c")
		a.Tick(w.ctx)
		b.Tick(w.ctx) // joins: its share is 4, nothing is free yet
		if got := b.Held(); len(got) != 0 {
			t.Fatalf("b took %v while a holds everything, want nothing", partitionsOf(got))
		}
		a.Tick(w.ctx) // sees b: drains its surplus
		var draining []int
		for _, h := range a.Held() {
			if h.Draining {
				draining = append(draining, h.Partition)
			}
		}
		if len(draining) != k/2 {
			t.Fatalf("a drains %v, want %d partitions", draining, k/2)
		}
		p := draining[0]
		if _, ok := a.Valid(p); !ok {
			t.Errorf("a draining partition %d: Valid = false, want true (armed shots still go out)", p)
		}
		if _, ok := a.Owns(p); ok {
			t.Errorf("a draining partition %d: Owns = true, want false (no new snipes)", p)
		}
		if !a.Keeps(p, time.Now().Add(drain-time.Millisecond)) || a.Keeps(p, time.Now().Add(drain)) {
			t.Errorf("draining partition %d: Keeps until the drain's end = false or past it = true", p)
		}
		if !a.Keeps(0, time.Now().Add(time.Hour)) { // the highest-numbered drain
			t.Errorf("partition 0, not draining: Keeps(an hour from now) = false, want true")
		}
		select {
		case <-a.Changed():
		default:
			t.Errorf("draining did not signal Changed")
		}
		time.Sleep(drain)
		a.Tick(w.ctx) // hands them over
		b.Tick(w.ctx)
		c.Tick(w.ctx) // joins
		for range 3 { // drains, hand-overs, acquisitions
			time.Sleep(drain)
			for _, m := range []*Manager{a, b, c} {
				m.Tick(w.ctx)
			}
		}
		var all []int
		for _, m := range []*Manager{a, b, c} {
			got := m.Held()
			if n := len(got); n < k/3 || n > k/3+1 {
				t.Errorf("%s holds %v, want %d or %d", m.Instance(), partitionsOf(got), k/3, k/3+1)
			}
			for _, h := range got {
				if _, ok := m.Owns(h.Partition); !ok {
					t.Errorf("%s: partition %d held but not owned after convergence", m.Instance(), h.Partition)
				}
			}
			all = append(all, partitionsOf(got)...)
		}
		slices.Sort(all)
		if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(all, want) {
			t.Errorf("partitions held overall = %v, want each once: %v", all, want)
		}
		// A partition that moved has a higher epoch and its new holder
		// waits a send window before resolving its firing snipes.
		for _, h := range b.Held() {
			if h.Epoch < 2 {
				t.Errorf("b's partition %d has epoch %d, want ≥ 2 (it moved from a)", h.Partition, h.Epoch)
			}
		}
		if !strings.Contains(w.logs(), "partitions handed over") || !strings.Contains(w.logs(), "partitions draining") {
			t.Errorf("logs do not show the hand-over:\n%s", w.logs())
		}
	})
}

// TestDeadInstance: a silent instance's partitions move after its lease
// expires; its own Valid ends first, and on resume it learns the loss.
func TestDeadInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		a, regA := w.manager("a")
		b, _ := w.manager("b")
		a.Tick(w.ctx)
		b.Tick(w.ctx)
		lastRenew := time.Now()
		a.Tick(w.ctx)                               // drains half
		b.Tick(w.ctx)                               // nothing free yet
		time.Sleep(ttl - window - time.Millisecond) // a is paused (SIGSTOP) from here
		if _, ok := a.Valid(0); !ok {
			t.Fatalf("a: Valid just before TTL − window = false, want true")
		}
		time.Sleep(time.Millisecond)
		if _, ok := a.Valid(0); ok {
			t.Fatalf("a: Valid at TTL − window after its last renewal = true, want false")
		}
		// b's rounds each second; at TTL after a's last renewal, a's
		// heartbeat and leases have expired: b's share is everything.
		for time.Since(lastRenew) < ttl {
			time.Sleep(time.Second)
			b.Tick(w.ctx)
		}
		held := b.Held()
		if len(held) != k {
			t.Fatalf("b holds %v after a died, want all %d", partitionsOf(held), k)
		}
		for _, h := range held {
			if wait := h.RecoverAt.Sub(time.Now()); wait < window || wait > window+time.Second {
				t.Errorf("partition %d: firing snipes resolved in %v, want after the send window %v", h.Partition, wait, window)
			}
		}
		// a resumes: nothing is valid, and its first round learns the loss.
		if st := a.Status(); st.Firing {
			t.Errorf("resumed a: Status = %+v, want not firing", st)
		}
		a.Tick(w.ctx)
		if got := a.Held(); len(got) != 0 {
			t.Errorf("resumed a still holds %v", partitionsOf(got))
		}
		if got := value(t, regA, "sniped_sniper_lease_losses_total"); got != k {
			t.Errorf("a's lease losses = %v, want %d", got, k)
		}
		if !strings.Contains(w.logs(), "partitions lost") {
			t.Errorf("logs do not show the loss")
		}
	})
}

// TestRelease: a graceful shutdown hands everything over at once.
func TestRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		a, _ := w.manager("a")
		b, _ := w.manager("b")
		a.Tick(w.ctx)
		b.Tick(w.ctx)
		if err := a.Release(w.ctx); err != nil {
			t.Fatalf("Release = %v", err)
		}
		if _, ok := a.Valid(0); ok || len(a.Held()) != 0 {
			t.Errorf("after Release: a still valid or holding")
		}
		a.Tick(w.ctx) // a round after Release takes nothing back
		b.Tick(w.ctx)
		if got := b.Held(); len(got) != k {
			t.Fatalf("b holds %v right after a's release, want all %d", partitionsOf(got), k)
		}
		for _, h := range b.Held() {
			if h.Epoch != 2 || h.RecoverAt.Sub(time.Now()) != window {
				t.Errorf("partition %d: epoch %d, resolve in %v; want epoch 2, in %v", h.Partition, h.Epoch, h.RecoverAt.Sub(time.Now()), window)
			}
		}
	})
}

// TestExclusive: on a single-process database the instance takes every
// partition at once, even from a previous process's unexpired leases.
func TestExclusive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		old, _ := w.manager("old")
		old.Tick(w.ctx) // then killed
		m, _ := w.manager("new", func(c *Config) { c.Exclusive = true })
		m.Tick(w.ctx)
		held := m.Held()
		if len(held) != k {
			t.Fatalf("exclusive instance holds %v, want all %d", partitionsOf(held), k)
		}
		for _, h := range held {
			if h.Epoch != 2 || h.RecoverAt.After(time.Now()) {
				t.Errorf("partition %d: epoch %d, RecoverAt in %v; want 2 and now", h.Partition, h.Epoch, h.RecoverAt.Sub(time.Now()))
			}
		}
		// The folder lock is the exclusion: the leases stay valid without
		// renewal, and no round writes to the database.
		w.st.set(errors.New("renewal must not be called"), 0)
		time.Sleep(time.Minute)
		m.Tick(w.ctx)
		if _, ok := m.Valid(3); !ok {
			t.Errorf("exclusive lease a minute later: Valid = false, want true")
		}
	})
}

// TestPartitionCountMismatch: an instance never shares work with one that
// splits accounts differently.
func TestPartitionCountMismatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		other, _ := w.manager("other", func(c *Config) { c.Partitions = 16 })
		other.Tick(w.ctx)
		m, _ := w.manager("m")
		m.Tick(w.ctx)
		m.Tick(w.ctx)
		if got := m.Held(); len(got) != 0 {
			t.Errorf("held %v beside an instance with another K, want nothing", partitionsOf(got))
		}
		if n := strings.Count(w.logs(), "different partition count"); n != 1 {
			t.Errorf("mismatch logged %d times, want once", n)
		}
	})
}

// TestStrayLease: a lease the database gives this instance without its
// knowing (an acquire whose answer was lost) is handed back, not used.
func TestStrayLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, _ := w.manager("m", func(c *Config) { c.Partitions = 1 })
		if _, err := w.st.AcquireLease(w.ctx, store.AcquireParams{Partition: 0, Holder: "m", TTL: ttl}); err != nil {
			t.Fatal(err)
		}
		m.Tick(w.ctx) // releases the stray, then takes it properly
		got := m.Held()
		if len(got) != 1 || got[0].Epoch != 2 {
			t.Errorf("held = %+v, want partition 0 re-acquired at epoch 2", got)
		}
	})
}

func TestRunRenewsUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, reg := w.manager("m")
		ctx, cancel := context.WithCancel(w.ctx)
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(time.Minute)
		if _, ok := m.Valid(0); !ok {
			t.Errorf("Valid after a minute of Run = false, want renewed")
		}
		if got := value(t, reg, "sniped_sniper_lease_renewals_total"); got < 55 {
			t.Errorf("renewal rounds in a minute = %v, want about 60", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no store", Config{}},
		{"negative partitions", Config{Store: &faulty{}, Partitions: -1}},
		{"TTL shorter than two renewals and a window", Config{Store: &faulty{}, TTL: 3 * time.Second, Renew: time.Second, Window: 2 * time.Second}},
	}
	for _, tc := range tests {
		if _, err := New(tc.cfg); err == nil {
			t.Errorf("New(%s) = nil error, want one", tc.name)
		}
	}
	m, err := New(Config{Store: &faulty{}})
	if err != nil {
		t.Fatalf("New(defaults) = %v", err)
	}
	for _, c := range []struct {
		account int64
		want    int
	}{{0, 0}, {1, 1}, {32, 0}, {33, 1}, {-1, 31}} {
		if got := m.Partition(c.account); got != c.want {
			t.Errorf("Partition(%d) = %d, want %d", c.account, got, c.want)
		}
	}
	if a, b := NewInstanceID(), NewInstanceID(); a == b {
		t.Errorf("NewInstanceID twice = %q, want unique", a)
	}
}

// gathered reads a registered counter or gauge.
func gathered(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather = %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name || len(f.GetMetric()) != 1 {
			continue
		}
		mt := f.GetMetric()[0]
		if c := mt.GetCounter(); c != nil {
			return c.GetValue(), true
		}
		return mt.GetGauge().GetValue(), true
	}
	return 0, false
}

func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	v, ok := gathered(t, reg, name)
	if !ok {
		t.Fatalf("metric %s not registered", name)
	}
	return v
}

// TestHandoverBetweenShots: a drain ends at the first moment from Drain on
// that is after each shot's keep time or at least Renew + takeoverSlack
// before it, within maxHandoverWait; without a shots callback, after Drain.
func TestHandoverBetweenShots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		m, _ := w.manager("a") // Renew 1 s: the next holder needs 3.5 s
		earliest := time.Now().Add(drain)
		at := func(d time.Duration) time.Time { return earliest.Add(d) }
		if got := m.handoverAt(0, earliest); !got.Equal(earliest) {
			t.Errorf("no shots callback: hand-over at %v, want at %v", got.Sub(earliest), time.Duration(0))
		}
		for _, tc := range []struct {
			name  string
			keeps []time.Duration // after earliest
			want  time.Duration
		}{
			{"no shots", nil, 0},
			{"shots long after", []time.Duration{3500 * time.Millisecond, time.Minute}, 0},
			{"a shot just after", []time.Duration{time.Second}, time.Second + handoverStep},
			{"a shot at the moment", []time.Duration{0}, handoverStep},
			{"shots too close together", []time.Duration{time.Second, 3 * time.Second, 6 * time.Second, 10 * time.Second}, 6*time.Second + handoverStep},
			{"shots in any order", []time.Duration{10 * time.Second, 3 * time.Second, 6 * time.Second, time.Second}, 6*time.Second + handoverStep},
			{"no gap within the limit", func() []time.Duration {
				var out []time.Duration
				for d := time.Duration(0); d < maxHandoverWait+10*time.Second; d += time.Second {
					out = append(out, d)
				}
				return out
			}(), 0},
		} {
			m.SetShots(func(p int, from, to time.Time) []time.Time {
				var out []time.Time
				for _, k := range tc.keeps {
					if k := at(k); p == 0 && !k.Before(from) && k.Before(to) {
						out = append(out, k)
					}
				}
				return out
			})
			if got := m.handoverAt(0, earliest); !got.Equal(at(tc.want)) {
				t.Errorf("%s: hand-over %v after the earliest, want %v", tc.name, got.Sub(earliest), tc.want)
			}
			if got := m.handoverAt(1, earliest); !got.Equal(earliest) {
				t.Errorf("%s: another partition's hand-over %v after the earliest, want 0", tc.name, got.Sub(earliest))
			}
		}
	})
}
