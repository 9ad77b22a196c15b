package sniper

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// bundle is one test's world: a reference marketplace, the real SQLite
// store (behind a wrapper that can inject store faults), an account and a
// sniper, all on the synctest bubble's virtual clock. setup must be called
// inside synctest.Test: the store is opened inside the bubble and closed
// (by t.Cleanup, still inside it) after the sniper stopped.
type bundle struct {
	t    *testing.T
	ctx  context.Context
	mk   *markettest.Market
	st   *faultStore
	acct store.Account
	cfg  Config
	sn   *Sniper
	reg  *prometheus.Registry
}

func setup(t *testing.T, opts ...func(*Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, ctx: ctx, mk: markettest.New(clock.Real{}), st: newFaultStore(db), reg: prometheus.NewRegistry()}
	if b.acct, err = b.st.CreateAccount(ctx, "alice", store.TierPaid, key.Hash("alice"), time.Now()); err != nil {
		t.Fatal(err)
	}
	b.cfg = Config{
		Store: b.st, Market: b.mk, Clock: clock.Real{}, Registerer: b.reg,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, o := range opts {
		o(&b.cfg)
	}
	b.sn = New(b.cfg)
	return b
}

// restart replaces the sniper with a fresh one on the same store and
// marketplace, as a new process would be (call start afterwards).
func (b *bundle) restart() {
	b.cfg.Registerer = nil
	b.sn = New(b.cfg)
}

// mark moves a stored snipe between states directly, to set up what a
// crash left behind.
func (b *bundle) mark(id int64, from, to store.State, code outcome.Code) {
	b.t.Helper()
	if err := b.st.Store.Transition(b.ctx, store.TransitionParams{ID: id, From: []store.State{from}, To: to, Outcome: code}); err != nil {
		b.t.Fatalf("mark snipe %d %s→%s: %v", id, from, to, err)
	}
}

// start runs the sniper until the test ends.
func (b *bundle) start() {
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.sn.Run(ctx) }()
	b.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.t.Errorf("Run() = %v, want nil", err)
		}
	})
}

// snipeOpts are the optional addBid fields.
type snipeOpts struct {
	disabled bool
	force    bool
	group    string
}

// add stores an addBid for itemNo, as the API does, and notifies the sniper.
func (b *bundle) add(itemNo int64, bid money.Amount, delay int, o snipeOpts) store.Snipe {
	b.t.Helper()
	it, err := b.mk.Item(b.ctx, itemNo)
	if err != nil {
		b.t.Fatalf("market item %d: %v", itemNo, err)
	}
	enabled := !o.disabled
	ch := store.SnipeChange{Bid: &bid, Delay: &delay, Enabled: &enabled, Force: &o.force, GroupName: &o.group, Item: itemSnap(it)}
	sn, _, err := b.st.UpsertSnipe(b.ctx, b.acct.ID, itemNo, ch, time.Now())
	if err != nil {
		b.t.Fatalf("upsert snipe: %v", err)
	}
	b.sn.Changed(sn.ID)
	return sn
}

func itemSnap(it market.Item) store.ItemSnapshot {
	return store.ItemSnapshot{Title: it.Title, Currency: it.Currency, CurrentPrice: it.CurrentPrice, Bids: it.Bids, Start: it.Start, End: it.End, Ended: it.Ended}
}

func (b *bundle) get(id int64) store.Snipe {
	b.t.Helper()
	sn, err := b.st.SnipeByID(b.ctx, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return sn
}

// ours returns alice's bids on itemNo, accepted or not.
func (b *bundle) ours(itemNo int64) []markettest.Bid {
	var out []markettest.Bid
	for _, bid := range b.mk.Bids(itemNo) {
		if bid.Bidder == "alice" {
			out = append(out, bid)
		}
	}
	return out
}

// sleepUntil sleeps (virtually) until t on the local clock.
func sleepTill(t time.Time) { time.Sleep(time.Until(t)) }

func codeName(c outcome.Code) string { return outcome.Of(c).Shorthand }

// TestCrowdFollowsEdits: a snipe whose fire time moves, or that is
// forgotten, no longer counts toward its old millisecond's crowd.
func TestCrowdFollowsEdits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := b.sn.sched
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	q.track(store.Snipe{ID: 1, FireAt: t0})
	q.track(store.Snipe{ID: 2, FireAt: t0})
	q.track(store.Snipe{ID: 1, FireAt: t0.Add(time.Minute)})
	q.forget(2)
	q.mu.Lock()
	defer q.mu.Unlock()
	if got := q.crowd[t0.UnixMilli()]; got != 0 {
		t.Errorf("crowd of the old millisecond = %d, want 0", got)
	}
	if got := q.crowd[t0.Add(time.Minute).UnixMilli()]; got != 1 {
		t.Errorf("crowd of the new millisecond = %d, want 1", got)
	}
}

// TestArmSpread: arming is spread out, never many snipes at one instant
// unless MaxArmLead caps their lead, and each arms at least ArmLead and at
// most MaxArmLead before its moment. Snipes 1/ArmPerSnipe a second apart
// (the steady benchmark's 2,000 a second) once all armed at the same
// instant, every second.
func TestArmSpread(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		n        int
		spacing  time.Duration
		maxPerMS int // arms within one millisecond
	}{
		{name: "2,000 a second", n: 4000, spacing: DefaultArmPerSnipe, maxPerMS: 2},
		{name: "20,000 a second", n: 4000, spacing: 50 * time.Microsecond, maxPerMS: 20},
		{name: "100 in one moment", n: 100, spacing: 0, maxPerMS: 2},
		{name: "1,000 in one moment", n: 1000, spacing: 0, maxPerMS: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			q := b.sn.sched
			fireAt := map[int64]time.Time{}
			for i := range tt.n {
				id := int64(i + 1)
				fireAt[id] = t0.Add(time.Duration(i) * tt.spacing).Truncate(time.Millisecond)
				q.track(store.Snipe{ID: id, FireAt: fireAt[id]})
			}
			q.mu.Lock()
			defer q.mu.Unlock()
			perMS := map[int64]int{}
			arms := 0
			for _, e := range q.q {
				if e.kind != kindArm {
					continue
				}
				arms++
				perMS[e.at.UnixMilli()]++
				lead := fireAt[e.id].Sub(e.at)
				if lead < b.sn.cfg.ArmLead || lead > MaxArmLead {
					t.Errorf("snipe %d arms %v before its moment, want %v to %v", e.id, lead, b.sn.cfg.ArmLead, MaxArmLead)
				}
			}
			if arms != tt.n {
				t.Fatalf("%d arm entries, want %d", arms, tt.n)
			}
			for ms, got := range perMS {
				if got > tt.maxPerMS {
					t.Errorf("%d snipes arm within the millisecond %s, want at most %d", got, time.UnixMilli(ms).UTC().Format("15:04:05.000"), tt.maxPerMS)
				}
			}
		})
	}
}

// TestCrowdedAt: a shot waits precisely only while at most maxAlone
// tracked snipes share its millisecond; edits and forgets leave the count.
func TestCrowdedAt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		at     []time.Time // fire times of snipes 1, 2, …
		moveTo time.Time   // when set, snipe 1 moves here
		forget bool        // snipe 2 is forgotten
		want   bool        // crowdedAt(t0)
	}{
		{name: "alone", at: []time.Time{t0}, want: false},
		{name: "maxAlone share it", at: repeat(t0, maxAlone), want: false},
		{name: "one more", at: repeat(t0, maxAlone+1), want: true},
		{name: "same second, other milliseconds", at: spread(t0, maxAlone+1, time.Millisecond), want: false},
		{name: "one moved away", at: repeat(t0, maxAlone+1), moveTo: t0.Add(time.Second), want: false},
		{name: "one forgotten", at: repeat(t0, maxAlone+1), forget: true, want: false},
		{name: "moved into a crowd", at: append([]time.Time{t0.Add(time.Second)}, repeat(t0, maxAlone)...), moveTo: t0, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := setup(t).sn.sched
			for i, at := range tc.at {
				q.track(store.Snipe{ID: int64(i + 1), FireAt: at})
			}
			if !tc.moveTo.IsZero() {
				q.track(store.Snipe{ID: 1, FireAt: tc.moveTo})
			}
			if tc.forget {
				q.forget(2)
			}
			if got := q.crowdedAt(t0); got != tc.want {
				t.Errorf("crowdedAt(t0) = %v, want %v", got, tc.want)
			}
		})
	}
}

func repeat(t time.Time, n int) []time.Time { return spread(t, n, 0) }

func spread(t time.Time, n int, step time.Duration) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t.Add(time.Duration(i) * step)
	}
	return out
}
