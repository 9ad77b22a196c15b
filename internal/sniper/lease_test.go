package sniper

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/lease"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// Several instances on one database: each test runs two snipers, each with
// its own lease manager, on one store and one marketplace, as separate
// processes sharing PostgreSQL would (the store is SQLite here, so that
// the lease clock is the bubble's virtual one).

const testPartitions = 4

// lostDB is the store with the lease calls cut off on demand: an instance
// that lost its database connection (or is paused) renews nothing.
type lostDB struct {
	store.Store
	cut atomic.Bool
}

var errCut = errors.New("connection to the database lost")

func (l *lostDB) Heartbeat(ctx context.Context, p store.HeartbeatParams) error {
	if l.cut.Load() {
		return errCut
	}
	return l.Store.Heartbeat(ctx, p)
}

func (l *lostDB) RenewLeases(ctx context.Context, p store.RenewParams) ([]store.Lease, error) {
	if l.cut.Load() {
		return nil, errCut
	}
	return l.Store.RenewLeases(ctx, p)
}

// sentBy counts the bids one instance sends.
type sentBy struct {
	market.Market
	n atomic.Int64
}

func (s *sentBy) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	s.n.Add(1)
	return s.Market.PlaceBid(ctx, user, itemNo, max)
}

// instance is one sniped process: a lease manager and a sniper.
type instance struct {
	mk   *sentBy
	db   *lostDB
	m    *lease.Manager
	sn   *Sniper
	once sync.Once
	stop func(release bool)
}

func (b *bundle) instance(id string) *instance {
	b.t.Helper()
	in := &instance{db: &lostDB{Store: b.st}, mk: &sentBy{Market: b.mk}}
	log := slog.New(slog.NewTextHandler(b.t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := lease.New(lease.Config{Store: in.db, Clock: clock.Real{}, Instance: id, Partitions: testPartitions, Logger: log})
	if err != nil {
		b.t.Fatal(err)
	}
	in.m = m
	in.sn = New(Config{Store: m.Store(in.db), Market: in.mk, Clock: clock.Real{}, Lease: m, Logger: log})
	lctx, lcancel := context.WithCancel(b.ctx)
	sctx, scancel := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(lctx) })
	sdone := make(chan struct{})
	go func() { defer close(sdone); in.sn.Run(sctx) }()
	in.stop = func(release bool) {
		in.once.Do(func() {
			scancel()
			<-sdone
			if release {
				if err := m.Release(context.Background()); err != nil {
					b.t.Errorf("%s: Release = %v", id, err)
				}
			}
			lcancel()
			wg.Wait()
		})
	}
	b.t.Cleanup(func() { in.stop(false) })
	return in
}

// accounts adds bob, carol and dave beside alice: with 4 partitions, one
// account each.
func (b *bundle) accounts() []store.Account {
	b.t.Helper()
	out := []store.Account{b.acct}
	for _, name := range []string{"bob", "carol", "dave"} {
		a, err := b.st.CreateAccount(b.ctx, name, store.TierPaid, key.Hash(name), time.Now())
		if err != nil {
			b.t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// addFor stores an armed snipe of acct on a new item, without notifying
// any sniper (the instance whose API took it may not own its partition).
func (b *bundle) addFor(acct store.Account, endsIn time.Duration, delay int) store.Snipe {
	b.t.Helper()
	no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: endsIn})
	it, err := b.mk.Item(b.ctx, no)
	if err != nil {
		b.t.Fatal(err)
	}
	bid := money.Amount(500)
	sn, _, err := b.st.UpsertSnipe(b.ctx, acct.ID, no, store.SnipeChange{Bid: &bid, Delay: &delay, Item: itemSnap(it)}, time.Now())
	if err != nil {
		b.t.Fatal(err)
	}
	return sn
}

// bidsBy returns the bids user placed on itemNo.
func (b *bundle) bidsBy(user string, itemNo int64) []markettest.Bid {
	var out []markettest.Bid
	for _, bid := range b.mk.Bids(itemNo) {
		if bid.Bidder == user {
			out = append(out, bid)
		}
	}
	return out
}

type due struct {
	sn   store.Snipe
	user string
}

// checkOnce: every snipe's bid went out exactly once and won; those due
// after onTimeFrom went out at their moment.
func (b *bundle) checkOnce(snipes []due, onTimeFrom time.Time) {
	b.t.Helper()
	for _, d := range snipes {
		bids := b.bidsBy(d.user, d.sn.ItemNo)
		got := b.get(d.sn.ID)
		if len(bids) != 1 || got.State != store.StateSettled || got.Outcome != outcome.Won {
			b.t.Errorf("%s's snipe on %d: %d bids, %s/%s; want 1 bid, settled/won", d.user, d.sn.ItemNo, len(bids), got.State, codeName(got.Outcome))
			continue
		}
		if d.sn.FireAt.After(onTimeFrom) {
			if late := bids[0].Time.Sub(d.sn.FireAt); late < 0 || late > 50*time.Millisecond {
				b.t.Errorf("%s's snipe on %d sent %v after its moment, want on time", d.user, d.sn.ItemNo, late)
			}
		}
	}
}

// converge lets the instances share the partitions out (drains included).
func converge() { time.Sleep(20 * time.Second) }

// TestInstancesShareTheWork: two instances split the partitions, and every
// snipe fires once, on time, from the one instance that holds it.
func TestInstancesShareTheWork(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		accts := b.accounts()
		a, c := b.instance("a"), b.instance("c")
		converge()
		if na, nc := len(a.m.Held()), len(c.m.Held()); na != 2 || nc != 2 {
			t.Fatalf("partitions held = %d and %d, want 2 each", na, nc)
		}
		var snipes []due
		for i := range 3 {
			for _, acct := range accts {
				snipes = append(snipes, due{b.addFor(acct, time.Minute+time.Duration(i)*7*time.Second, 5), acct.Name})
			}
		}
		time.Sleep(2 * time.Minute)
		b.checkOnce(snipes, time.Time{})
		if !a.m.Status().Firing || !c.m.Status().Firing {
			t.Errorf("Status firing = %v, %v; want both", a.m.Status().Firing, c.m.Status().Firing)
		}
	})
}

// TestKilledInstance: one instance dies without a word (kill -9); the other
// takes its partitions and fires every snipe due more than 15 s after the
// death on time, and the others before their end.
func TestKilledInstance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		accts := b.accounts()
		a, c := b.instance("a"), b.instance("c")
		converge()
		var snipes []due
		for i := range 6 {
			for _, acct := range accts {
				snipes = append(snipes, due{b.addFor(acct, 10*time.Second+time.Duration(i)*5*time.Second, 15), acct.Name})
			}
		}
		time.Sleep(3 * time.Second)
		death := time.Now()
		a.stop(false) // no Release: its leases run out
		time.Sleep(2 * time.Minute)
		b.checkOnce(snipes, death.Add(15*time.Second))
		if n := len(c.m.Held()); n != testPartitions {
			t.Errorf("survivor holds %d partitions, want all %d", n, testPartitions)
		}
	})
}

// TestGracefulHandover: SIGTERM hands the partitions over at once: snipes
// due right after the shutdown fire on time from the other instance.
func TestGracefulHandover(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		accts := b.accounts()
		a, c := b.instance("a"), b.instance("c")
		converge()
		var snipes []due
		for i := range 4 {
			for _, acct := range accts {
				snipes = append(snipes, due{b.addFor(acct, 20*time.Second+time.Duration(i)*2*time.Second, 15), acct.Name})
			}
		}
		time.Sleep(time.Second)
		a.stop(true)
		time.Sleep(2 * time.Minute)
		// The first moment is 5 s after the shutdown: all on time.
		b.checkOnce(snipes, time.Time{})
		if n := len(c.m.Held()); n != testPartitions {
			t.Errorf("the other instance holds %d partitions, want all %d", n, testPartitions)
		}
	})
}

// TestCutOffInstanceNeverFires: an instance that loses the database just
// before a shot (network, or paused past its lease) does not send it; the
// instance that takes the partition over resolves the snipe with the
// marketplace and sends it once, late but before the end.
func TestCutOffInstanceNeverFires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		accts := b.accounts()
		a, c := b.instance("a"), b.instance("c")
		converge()
		// A snipe of each account, all due at one moment 30 s from now.
		var snipes []due
		for _, acct := range accts {
			snipes = append(snipes, due{b.addFor(acct, 45*time.Second, 15), acct.Name})
		}
		fireAt := snipes[0].sn.FireAt
		sleepTill(fireAt.Add(-6 * time.Second))
		a.db.cut.Store(true) // a's leases run out around the moment
		time.Sleep(2 * time.Minute)
		for _, d := range snipes {
			bids := b.bidsBy(d.user, d.sn.ItemNo)
			got := b.get(d.sn.ID)
			if len(bids) != 1 || got.Outcome != outcome.Won {
				t.Errorf("%s: %d bids, outcome %s; want 1 bid, won", d.user, len(bids), codeName(got.Outcome))
				continue
			}
			if bids[0].Time.After(d.sn.Item.End) {
				t.Errorf("%s: sent at %v, after the end %v", d.user, bids[0].Time, d.sn.Item.End)
			}
		}
		if a.m.Status().Firing {
			t.Errorf("cut-off instance still reports firing")
		}
		// Its lease was valid until at most 2 s before the moment.
		if n := a.mk.n.Load(); n != 0 {
			t.Errorf("the cut-off instance sent %d bids, want none", n)
		}
		if n := c.mk.n.Load(); n != int64(len(snipes)) {
			t.Errorf("the other instance sent %d bids, want %d", n, len(snipes))
		}
		if n := len(c.m.Held()); n != testPartitions {
			t.Errorf("the other instance holds %d partitions, want all %d", n, testPartitions)
		}
	})
}

// TestFencedWriteRefused: a sniper write under a lease that moved on is
// refused by the database, even if the instance has not noticed yet.
func TestFencedWriteRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		a := b.instance("a")
		time.Sleep(time.Second)
		sn := b.addFor(b.acct, time.Hour, 5)
		view := a.m.Store(b.st)
		// Another instance forces the partition away (as after an expiry
		// that a has not noticed yet).
		part := a.m.Partition(b.acct.ID)
		if _, err := b.st.AcquireLease(b.ctx, store.AcquireParams{Partition: part, Holder: "thief", TTL: time.Minute, Force: true}); err != nil {
			t.Fatal(err)
		}
		err := view.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring})
		if !errors.Is(err, store.ErrFenced) {
			t.Errorf("Transition after the lease moved = %v, want ErrFenced", err)
		}
		if got := b.get(sn.ID); got.State != store.StateScheduled {
			t.Errorf("snipe is %s, want still scheduled", got.State)
		}
	})
}

// TestRebalanceKeepsShotsOnTime: an instance joining takes partitions over
// from the others (a drain, then a release and an acquire), and no shot of
// a partition that moves is delayed by the hand-over: snipes due every
// 100 ms from the join on all go out at their moment, whatever the phase
// of the joining instance's renewals against the others'.
func TestRebalanceKeepsShotsOnTime(t *testing.T) {
	t.Parallel()
	for _, phase := range []time.Duration{0, 100 * time.Millisecond, 250 * time.Millisecond, 450 * time.Millisecond} {
		t.Run(phase.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				accts := b.accounts()
				b.instance("a")
				b.instance("c")
				// Shots every 100 ms from 20 s to 50 s, but none from 32 s
				// to 36 s: the hand-over falls there.
				var snipes []due
				for i := range 300 {
					if i >= 120 && i < 160 {
						continue
					}
					acct := accts[i%len(accts)]
					snipes = append(snipes, due{b.addFor(acct, 25*time.Second+time.Duration(i)*100*time.Millisecond, 5), acct.Name})
				}
				converge()
				time.Sleep(phase)
				d := b.instance("d") // a, c, d share 2, 1, 1: c hands one over
				time.Sleep(time.Minute)
				b.checkOnce(snipes, time.Time{})
				if n := len(d.m.Held()); n != 1 {
					t.Errorf("the joining instance holds %d partitions, want 1", n)
				}
				if n := d.mk.n.Load(); n == 0 {
					t.Errorf("the joining instance sent no bid: the hand-over waited for the last shot")
				}
			})
		})
	}
}
