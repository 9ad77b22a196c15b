package sqlstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sniped/sniped/internal/clock"
)

// maxGroup bounds how many writes one group commit carries, so that a
// write that joins a long queue waits for at most two such transactions.
const maxGroup = 256

// groupCommit runs concurrent writes together: one transaction (and so one
// commit, and on PostgreSQL one WAL flush) for every write that queued
// while the previous transaction ran. The sniper's shots make three store
// writes each, from thousands of goroutines at once; on SQLite's single
// writer one transaction per write was the shot path's cost (issue 12).
//
// A write that finds nobody writing runs at once, alone. Writes that
// queue meanwhile form the next group, run by the first of them (the
// leader), which hands the lead on after its own group so that no caller
// serves others' writes for longer than one transaction. A leader handed
// the lead (the writer is busy) first waits linger for more writes: each
// transaction writes every page it changed to the WAL, and the rows of
// consecutive shots share their pages.
type groupCommit[T any] struct {
	// run executes a group in order and returns one result per write.
	run func(ctx context.Context, ops []T) []error
	// detach runs groups on a context without cancellation
	// (Options.CommitsIgnoreCancel).
	detach bool
	// linger is how long a leader handed the lead waits before taking
	// its group (Options.CommitLinger); clk times it. No group waits
	// while an urgent write is queued.
	linger time.Duration
	clk    clock.Clock
	urgent func(T) bool

	mu    sync.Mutex
	queue []*groupOp[T]
	busy  bool          // a leader runs a group or was handed the lead
	hurry chan struct{} // closed to end a leader's linger early
}

type groupOp[T any] struct {
	ctx context.Context
	op  T
	res chan groupResult // buffered: the sender never waits
}

// groupResult is either a write's result or the lead.
type groupResult struct {
	err  error
	lead bool
}

// do queues op and returns its result once its group has committed. A
// caller whose ctx ends while its write still waits in the queue gets
// ctx.Err() and the write is dropped; once its group runs, it waits for
// the result (which the group's transaction decides).
func (g *groupCommit[T]) do(ctx context.Context, op T) error {
	me := &groupOp[T]{ctx: ctx, op: op, res: make(chan groupResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	if g.hurry != nil && g.isUrgent(op) {
		close(g.hurry)
		g.hurry = nil
	}
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		r := g.wait(me)
		if !r.lead {
			return r.err
		}
		g.gather()
	}
	return g.lead(me)
}

func (g *groupCommit[T]) isUrgent(op T) bool { return g.urgent != nil && g.urgent(op) }

// gather waits linger before a handed-on lead takes its group, or less
// when an urgent write is or gets queued.
func (g *groupCommit[T]) gather() {
	if g.linger <= 0 {
		return
	}
	g.mu.Lock()
	if slices.ContainsFunc(g.queue, func(o *groupOp[T]) bool { return g.isUrgent(o.op) }) {
		g.mu.Unlock()
		return
	}
	hurry := make(chan struct{})
	g.hurry = hurry
	g.mu.Unlock()
	t := g.clk.NewTimer(g.linger)
	select {
	case <-t.C():
	case <-hurry:
	}
	t.Stop()
	g.mu.Lock()
	if g.hurry == hurry {
		g.hurry = nil
	}
	g.mu.Unlock()
}

// wait waits for me's result or the lead.
func (g *groupCommit[T]) wait(me *groupOp[T]) groupResult {
	select {
	case r := <-me.res:
		return r
	case <-me.ctx.Done():
	}
	g.mu.Lock()
	select {
	case r := <-me.res: // decided meanwhile (a lead must be taken)
		g.mu.Unlock()
		return r
	default:
	}
	if i := slices.Index(g.queue, me); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
		g.mu.Unlock()
		return groupResult{err: me.ctx.Err()}
	}
	g.mu.Unlock()
	return <-me.res // in a running group: its outcome decides
}

// lead runs the next group (which holds me unless me gave up), hands the
// lead on, delivers the results and returns me's.
func (g *groupCommit[T]) lead(me *groupOp[T]) error {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()
	var errs []error
	if len(group) > 0 {
		ops := make([]T, len(group))
		for i, o := range group {
			ops[i] = o.op
		}
		if g.detach {
			errs = g.run(context.WithoutCancel(group[0].ctx), ops)
		} else {
			ctx, stop := groupContext(group)
			errs = g.run(ctx, ops)
			stop()
		}
	}
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.busy = false
	} else {
		g.queue[0].res <- groupResult{lead: true}
	}
	g.mu.Unlock()
	mine := me.ctx.Err() // me gave up before its group was taken
	for i, o := range group {
		if o == me {
			mine = errs[i]
			continue
		}
		o.res <- groupResult{err: errs[i]}
	}
	return mine
}

// groupContext is the context of a group's transaction: it ends when every
// caller's context has ended, not when the leader's does (the others'
// writes ride on it). Values come from the first caller.
func groupContext[T any](group []*groupOp[T]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	var live atomic.Int64
	live.Store(int64(len(group)))
	stops := make([]func() bool, len(group))
	for i, o := range group {
		stops[i] = context.AfterFunc(o.ctx, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
