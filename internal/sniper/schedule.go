package sniper

import (
	"container/heap"
	"context"
	"maps"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/store"
)

// kind is what a schedule entry does when it comes due.
type kind uint8

const (
	// kindArm marks the snipe firing ArmLead before the shot, then sends.
	kindArm kind = iota
	// kindPreflight refreshes the item ahead of the shot.
	kindPreflight
	// kindSettle learns a placed snipe's result after its item ended.
	kindSettle
	// kindUnsent settles a scheduled snipe that will not be sent (disabled,
	// or its item stored as ended) once its item is over.
	kindUnsent
	// kindResolve asks the marketplace about a firing snipe no shot owns.
	kindResolve
)

// entry is one timed job. Arm and pre-flight entries carry the version of
// the tracked snipe they were made for; a re-arm bumps the version, so stale
// entries fall through harmlessly instead of being searched for and removed.
//
// Entries are timed on the marketplace clock (as sniped knows it: the
// monotonic local clock through the measured offset, offset.go), so a new
// offset re-times every entry at once: the loop only has to wake up and
// look at the earliest one again.
type entry struct {
	at   time.Time // marketplace clock
	id   int64
	ver  uint32
	kind kind
}

type entryHeap []entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// tracked is the in-memory state of a snipe inside the horizon. It is kept
// small on purpose: the arm step re-reads the snipe from the store anyway.
type tracked struct {
	ver    uint32
	fireAt time.Time // marketplace clock
	// busy is set while an arm/fire goroutine owns the snipe.
	busy bool
	// sn is the snipe as last loaded; pre-flight works from it so that it
	// costs the store nothing unless the item changed.
	sn store.Snipe
}

// schedule is the due queue: a min-heap of entries served by one goroutine
// that sleeps on a single Clock timer until the earliest entry is due.
type schedule struct {
	s *Sniper

	mu      sync.Mutex
	q       entryHeap
	tracked map[int64]*tracked
	// settling holds the placed snipes with a settlement queued, with the
	// snipe as placed when known (it cannot change while placed), which
	// saves settlement a store read.
	settling map[int64]*store.Snipe
	unsent   map[int64]bool
	seq      uint32
	wake     chan struct{}
	// crowd counts the snipes tracked per fire-time millisecond: to arm a
	// crowded moment's snipes one after another, and to tell a shot that
	// has its moment to itself (precisely).
	crowd map[int64]int
}

func newSchedule(s *Sniper) *schedule {
	return &schedule{
		s:        s,
		tracked:  map[int64]*tracked{},
		settling: map[int64]*store.Snipe{},
		unsent:   map[int64]bool{},
		wake:     make(chan struct{}, 1),
		crowd:    map[int64]int{},
	}
}

// pushLocked adds e and wakes the loop when e became the earliest entry.
func (q *schedule) pushLocked(e entry) {
	heap.Push(&q.q, e)
	if q.q[0] == e {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// track arms (or re-arms) a scheduled snipe. A snipe that is already
// tracked with the same fire time, or is being fired, is left alone.
func (q *schedule) track(sn store.Snipe) {
	s := q.s
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tracked[sn.ID]
	if t != nil && (t.busy || t.fireAt.Equal(sn.FireAt)) {
		if !t.busy {
			t.sn = sn
		}
		return
	}
	if t == nil {
		t = &tracked{}
		q.tracked[sn.ID] = t
	} else {
		q.uncountLocked(t.fireAt) // it moved to another moment
	}
	t.fireAt, t.sn = sn.FireAt, sn
	q.crowd[sn.FireAt.UnixMilli()]++
	q.armLocked(t)
	s.met.scheduled.Set(float64(len(q.tracked)))
}

// armLocked queues t's arm and pre-flight entries under a new version, from
// its fire time on the marketplace clock converted with the current offset.
// q.mu must be held.
func (q *schedule) armLocked(t *tracked) {
	s := q.s
	q.seq++
	t.ver = q.seq
	id := t.sn.ID
	now := s.marketNow()
	target := t.fireAt
	// Arming writes to the store one snipe at a time. When many snipes
	// share a moment (a millisecond), the k-th one arms k×ArmPerSnipe
	// earlier so that all are marked firing before the moment instead of
	// queueing after it, but never more than MaxArmLead early: users may
	// edit until then. Snipes of different milliseconds are spread by
	// their moments already; counting by the second armed all 2,000 of a
	// second at one instant (docs/performance.md, "Sixth look").
	lead := s.cfg.ArmLead + time.Duration(q.crowd[t.fireAt.UnixMilli()]-1)*s.cfg.ArmPerSnipe
	arm := target.Add(-min(lead, max(MaxArmLead, s.cfg.ArmLead)))
	if arm.Before(now) {
		arm = now
	}
	q.pushLocked(entry{at: arm, id: id, ver: t.ver, kind: kindArm})
	for _, lead := range []time.Duration{s.cfg.PreflightFar, s.cfg.PreflightNear} {
		// A pre-flight must finish before arming; skip those too close.
		if at := target.Add(-lead); at.After(now) && lead > s.cfg.ArmLead {
			q.pushLocked(entry{at: at, id: id, ver: t.ver, kind: kindPreflight})
		}
	}
}

// retime wakes the loop after the clock offset changed: every entry is on
// the marketplace clock, so the earliest one's local moment moved.
func (q *schedule) retime() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// dueWithin reports whether a tracked snipe fires before m (marketplace clock).
func (q *schedule) dueWithin(m time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, t := range q.tracked {
		if t.fireAt.Before(m) {
			return true
		}
	}
	return false
}

// uncountLocked takes a snipe that leaves fireAt out of its
// millisecond's crowd, forgetting the millisecond at zero. q.mu must be
// held.
func (q *schedule) uncountLocked(fireAt time.Time) {
	k := fireAt.UnixMilli()
	if q.crowd[k] > 1 {
		q.crowd[k]--
	} else {
		delete(q.crowd, k)
	}
}

// crowdedAt reports whether more than maxAlone tracked snipes share
// fireAt's millisecond.
func (q *schedule) crowdedAt(fireAt time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.crowd[fireAt.UnixMilli()] > maxAlone
}

// prune forgets the crowd of moments long past.
func (q *schedule) prune(before time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	maps.DeleteFunc(q.crowd, func(ms int64, _ int) bool { return ms < before.UnixMilli() })
}

// forget drops a snipe from the horizon unless a goroutine is firing it.
func (q *schedule) forget(id int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t := q.tracked[id]; t != nil && !t.busy {
		q.uncountLocked(t.fireAt)
		delete(q.tracked, id)
		q.s.met.scheduled.Set(float64(len(q.tracked)))
	}
}

// done releases a snipe after its arm goroutine finished.
func (q *schedule) done(id int64, ver uint32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t := q.tracked[id]; t != nil && t.ver == ver {
		delete(q.tracked, id)
		q.s.met.scheduled.Set(float64(len(q.tracked)))
	}
}

// current returns the snipe of a tracked, idle snipe whose live version is
// ver.
func (q *schedule) current(id int64, ver uint32) (store.Snipe, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tracked[id]
	if t == nil || t.ver != ver || t.busy {
		return store.Snipe{}, false
	}
	return t.sn, true
}

// inFlight reports whether a goroutine of this process is firing id.
func (q *schedule) inFlight(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tracked[id]
	return t != nil && t.busy
}

// settleAt queues settlement of a placed snipe once, at local time at. sn
// is the placed snipe, or nil to read it from the store when settling.
func (q *schedule) settleAt(id int64, at time.Time, sn *store.Snipe) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.settling[id]; ok {
		return
	}
	q.settling[id] = sn
	q.pushLocked(entry{at: q.s.marketAt(at), id: id, kind: kindSettle})
}

// settleDone clears the settlement mark so that a later settleAt (a retry)
// can queue it again, and returns the snipe passed to settleAt.
func (q *schedule) settleDone(id int64) *store.Snipe {
	q.mu.Lock()
	defer q.mu.Unlock()
	sn := q.settling[id]
	delete(q.settling, id)
	return sn
}

// unsentAt queues the settlement of a snipe that will not be sent (see
// kindUnsent), once.
func (q *schedule) unsentAt(id int64, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.unsent[id] {
		return
	}
	q.unsent[id] = true
	q.pushLocked(entry{at: q.s.marketAt(at), id: id, kind: kindUnsent})
}

// resolveAt queues the next step of a firing snipe's resolution at local
// time at.
func (q *schedule) resolveAt(id int64, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pushLocked(entry{at: q.s.marketAt(at), id: id, kind: kindResolve})
}

func (q *schedule) unsentDone(id int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.unsent, id)
}

// run serves due entries until ctx ends.
func (q *schedule) run(ctx context.Context) {
	s := q.s
	timer := s.clk.NewTimer(time.Hour)
	defer timer.Stop()
	var due []entry
	for {
		now := s.marketNow()
		q.mu.Lock()
		for len(q.q) > 0 && !q.q[0].at.After(now) {
			due = append(due, heap.Pop(&q.q).(entry))
		}
		wait := time.Hour
		if len(q.q) > 0 {
			wait = q.q[0].at.Sub(now)
		}
		q.mu.Unlock()
		for _, e := range due {
			q.dispatch(ctx, e)
		}
		due = due[:0]
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		case <-q.wake:
		}
	}
}

func (q *schedule) dispatch(ctx context.Context, e entry) {
	s := q.s
	switch e.kind {
	case kindArm:
		q.mu.Lock()
		t := q.tracked[e.id]
		if t == nil || t.ver != e.ver || t.busy {
			q.mu.Unlock()
			return
		}
		t.busy = true
		fireAt := t.fireAt
		q.mu.Unlock()
		// Shots wait for a slot: nothing the schedule holds is more urgent.
		if !s.spawn(ctx, s.sem, func(ctx context.Context) { s.fire(ctx, e.id, e.ver, fireAt) }) {
			q.mu.Lock()
			t.busy = false
			q.mu.Unlock()
		}
	case kindPreflight:
		if sn, ok := q.current(e.id, e.ver); ok {
			// A pre-flight that finds no slot is skipped: the shot goes
			// ahead on the last snapshot.
			s.trySpawn(ctx, s.bg, func(ctx context.Context) { s.preflight(ctx, sn) })
		}
	case kindSettle:
		if !s.trySpawn(ctx, s.bg, func(ctx context.Context) { s.settle(ctx, e.id) }) {
			q.requeue(e)
		}
	case kindUnsent:
		if !s.trySpawn(ctx, s.bg, func(ctx context.Context) { s.settleUnsent(ctx, e.id) }) {
			q.requeue(e)
		}
	case kindResolve:
		if !s.trySpawn(ctx, s.bg, func(ctx context.Context) { s.resolveStep(lowPriority(ctx), e.id) }) {
			q.requeue(e)
		}
	}
}

// busyRetry is how soon background work that found every slot taken is
// tried again.
const busyRetry = 100 * time.Millisecond

// requeue puts e back, busyRetry later, without starting a goroutine.
func (q *schedule) requeue(e entry) {
	e.at = q.s.marketNow().Add(busyRetry)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pushLocked(e)
}

// loadLoop keeps the horizon filled from the store.
func (s *Sniper) loadLoop(ctx context.Context) {
	clock.Repeat(ctx, s.clk, 0, func() time.Duration {
		wait := s.cfg.Refresh
		covered, err := s.load(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Error("load scheduled snipes", "err", err)
			wait = time.Second
		case covered < s.cfg.Horizon:
			// More is due within the horizon than one page holds: come
			// back when half of what the page covers has passed.
			wait = min(wait, max(covered/2, minReload))
		}
		return wait
	})
}

// minReload bounds how often a crowded horizon is reloaded.
const minReload = 250 * time.Millisecond

// load reads the armed snipes due within the horizon into the schedule. It
// returns how far ahead the load covers: the horizon, or less when the page
// was full.
func (s *Sniper) load(ctx context.Context) (time.Duration, error) {
	now := s.marketNow()
	sns, err := s.st.SnipesInState(ctx, store.StateScheduled, now.Add(s.cfg.Horizon), s.cfg.LoadLimit)
	if err != nil {
		return 0, err
	}
	for _, sn := range sns {
		// An item already over is settleOverdue's (recovery, sweep): a
		// backlog left by downtime must not crowd out the shots due now.
		if now.Before(sn.Item.End) {
			s.sched.track(sn)
		}
	}
	s.sched.prune(now.Add(-time.Minute))
	if len(sns) == s.cfg.LoadLimit {
		return sns[len(sns)-1].FireAt.Sub(now), nil
	}
	return s.cfg.Horizon, nil
}
