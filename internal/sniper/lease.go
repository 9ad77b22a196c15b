package sniper

import (
	"context"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// Lease is this instance's share of the work when several instances share
// one database (package lease implements it). With a Lease, the store the
// sniper is given must be the lease's fenced view (lease.Manager.Store),
// which limits scans to the held partitions and fences every state change.
type Lease interface {
	// Partition maps an account to its partition.
	Partition(accountID int64) int
	// Valid reports whether a shot of the partition may be sent now.
	Valid(partition int) (epoch int64, ok bool)
	// Fence reports whether the partition is held at all.
	Fence(partition int) (epoch int64, ok bool)
	// Keeps reports whether the partition stays held until at least t
	// (it is held, and not being handed over before t).
	Keeps(partition int, t time.Time) bool
	// Window bounds one bid attempt.
	Window() time.Duration
	// Changed is signalled when the held partitions change.
	Changed() <-chan struct{}
	// RecoverAt is when the firing snipes of every held partition may be
	// resolved (the previous holders' sends are over).
	RecoverAt() time.Time
	// SetShots tells the lease where this instance's shots are (the keep
	// times it passes to Keeps), so that a partition is handed over
	// between them.
	SetShots(f func(partition int, from, to time.Time) []time.Time)
}

// leaseWait is how often a shot whose lease is short looks again.
const leaseWait = 50 * time.Millisecond

// leaseLoop takes on newly held partitions: their due snipes are loaded at
// once rather than at the next refresh, and what a previous holder left
// (firing, placed, overdue) is recovered once its sends are over.
func (s *Sniper) leaseLoop(ctx context.Context) {
	l := s.cfg.Lease
	l.SetShots(s.keepTimes)
	defer l.SetShots(nil)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Changed():
		}
		if _, err := s.load(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("load snipes of new partitions", "err", err)
		}
		at := l.RecoverAt()
		s.trySpawn(ctx, s.bg, func(ctx context.Context) {
			if !sleepUntil(ctx, s.clk, at) {
				return
			}
			// Firing snipes of the held partitions, except this process's
			// own shots in flight: the previous holders' leftovers.
			firing, err := s.st.SnipesInState(ctx, store.StateFiring, farFuture, s.cfg.LoadLimit)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("recovery of new partitions: list firing snipes; the sweep finds them later", "err", err)
				}
				return
			}
			left := firing[:0]
			for _, sn := range firing {
				if !s.sched.inFlight(sn.ID) {
					left = append(left, sn)
				}
			}
			if err := s.recover(ctx, left); err != nil && ctx.Err() == nil {
				s.log.Error("recovery of new partitions incomplete; the sweep retries", "err", err)
			}
		})
	}
}

// awaitLease holds a shot until its partition's lease is valid for the
// send window. It gives up (false) when the lease is lost, ctx ends or the
// deadline passes: the snipe stays firing and the partition's next holder
// resolves it by asking the marketplace.
func (s *Sniper) awaitLease(ctx context.Context, accountID int64, deadline time.Time) bool {
	l := s.cfg.Lease
	if l == nil {
		return true
	}
	p := l.Partition(accountID)
	var start time.Time // set once the shot waits
	for {
		if _, ok := l.Valid(p); ok {
			if !start.IsZero() {
				// Renewals were slow or failing: the shot goes out late.
				s.log.Warn("shot held until its partition's lease was renewed", "partition", p, "waited", s.clk.Now().Sub(start))
			}
			return true
		}
		if start.IsZero() {
			start = s.clk.Now()
		}
		if _, held := l.Fence(p); !held || !s.clk.Now().Add(leaseWait).Before(deadline) {
			return false
		}
		if !sleepUntil(ctx, s.clk, s.clk.Now().Add(leaseWait)) {
			return false
		}
	}
}

// attemptContext bounds one bid attempt by the lease's send window, so that
// no attempt outlives the lease it was started under.
func (s *Sniper) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.Lease == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.cfg.Lease.Window())
}

// armable reports whether this instance should arm a snipe for its shot:
// it must still hold the snipe's partition a little after the moment. A
// partition being handed over is not armed for a shot after the hand-over;
// its next holder loads the snipe instead.
func (s *Sniper) armable(id int64, ver uint32, fireAt time.Time) bool {
	l := s.cfg.Lease
	if l == nil {
		return true
	}
	account, ok := s.sched.account(id, ver)
	if !ok {
		return true // moved on meanwhile: markFiring decides
	}
	return l.Keeps(l.Partition(account), s.toLocal(fireAt).Add(handoverMargin))
}

// keepTimes lists the keep times (moment plus handoverMargin, local clock)
// in [from, to) of the shots of partition p this instance tracks, armed or
// not: a hand-over of p between them delays none of them.
func (s *Sniper) keepTimes(p int, from, to time.Time) []time.Time {
	l := s.cfg.Lease
	var out []time.Time
	for _, at := range s.sched.fireTimes(func(accountID int64) bool { return l.Partition(accountID) == p }) {
		if k := s.toLocal(at).Add(handoverMargin); !k.Before(from) && k.Before(to) {
			out = append(out, k)
		}
	}
	return out
}

// fireTimes lists the moments (marketplace clock) of the tracked snipes of
// the accounts that match.
func (q *schedule) fireTimes(match func(accountID int64) bool) []time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []time.Time
	for _, t := range q.tracked {
		if match(t.sn.AccountID) {
			out = append(out, t.fireAt)
		}
	}
	return out
}

// handoverMargin: a shot is armed on a partition being handed over only if
// it starts this long before the hand-over. Its send may end after it: the
// next holder resolves firing snipes only a send window after taking over.
const handoverMargin = 250 * time.Millisecond

// account is the account of a tracked snipe, busy or not.
func (q *schedule) account(id int64, ver uint32) (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tracked[id]
	if t == nil || t.ver != ver {
		return 0, false
	}
	return t.sn.AccountID, true
}
