package sniper

import (
	"context"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// Store access is gated by priority. The store has one writer; when
// thousands of goroutines queue for it, database/sql serves them in no
// particular order and a time-critical firing mark can wait behind a
// settlement. The gate keeps only a couple of sniper calls at the store at
// once, lets low-priority work (loading, pre-flight, settlement) hold at
// most one of them, and hands freed slots to high-priority work (arming and
// recording a shot) first.
const (
	storeSlots    = 2
	storeLowSlots = 1
)

type highKey struct{}

// highPriority marks ctx's store calls as time-critical.
func highPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, highKey{}, true)
}

// lowPriority undoes highPriority for work a shot hands off.
func lowPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, highKey{}, false)
}

func isHigh(ctx context.Context) bool { v, _ := ctx.Value(highKey{}).(bool); return v }

// gate is a two-level priority semaphore.
type gate struct {
	mu        sync.Mutex
	used, low int
	highQ     []chan struct{}
	lowQ      []chan struct{}
}

func (g *gate) canLocked(high bool) bool {
	return g.used < storeSlots && (high || g.low < storeLowSlots)
}

func (g *gate) takeLocked(high bool) {
	g.used++
	if !high {
		g.low++
	}
}

// acquire waits for a slot; on a ctx error it holds none.
func (g *gate) acquire(ctx context.Context, high bool) error {
	g.mu.Lock()
	if g.canLocked(high) && (high || len(g.highQ) == 0) {
		g.takeLocked(high)
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if high {
		g.highQ = append(g.highQ, ch)
	} else {
		g.lowQ = append(g.lowQ, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-ch: // granted meanwhile: give it back
			g.releaseLocked(high)
		default:
			g.highQ = removeChan(g.highQ, ch)
			g.lowQ = removeChan(g.lowQ, ch)
		}
		return ctx.Err()
	}
}

func removeChan(q []chan struct{}, ch chan struct{}) []chan struct{} {
	for i, c := range q {
		if c == ch {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

func (g *gate) release(high bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked(high)
}

func (g *gate) releaseLocked(high bool) {
	g.used--
	if !high {
		g.low--
	}
	for len(g.highQ) > 0 && g.canLocked(true) {
		g.takeLocked(true)
		close(g.highQ[0])
		g.highQ = g.highQ[1:]
	}
	for len(g.lowQ) > 0 && len(g.highQ) == 0 && g.canLocked(false) {
		g.takeLocked(false)
		close(g.lowQ[0])
		g.lowQ = g.lowQ[1:]
	}
}

// gatedStore is the sniper's view of the store, behind the gate. Transition
// passes by the gate: the store commits concurrent transitions together
// (one transaction and one sync for every shot queued meanwhile, package
// sqlstore's group commit), which a gate of two slots would cut to groups
// of two; and a group is served in arrival order, so a firing mark waits
// for at most the group ahead, not for an unordered queue.
type gatedStore struct {
	store.Store
	g *gate
}

func (s *gatedStore) enter(ctx context.Context) (func(), error) {
	high := isHigh(ctx)
	if err := s.g.acquire(ctx, high); err != nil {
		return nil, err
	}
	return func() { s.g.release(high) }, nil
}

func (s *gatedStore) Accounts(ctx context.Context) ([]store.Account, error) {
	done, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Store.Accounts(ctx)
}

func (s *gatedStore) GroupSnipes(ctx context.Context, accountID, groupID int64) ([]store.Snipe, error) {
	done, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Store.GroupSnipes(ctx, accountID, groupID)
}

func (s *gatedStore) SnipeByID(ctx context.Context, id int64) (store.Snipe, error) {
	done, err := s.enter(ctx)
	if err != nil {
		return store.Snipe{}, err
	}
	defer done()
	return s.Store.SnipeByID(ctx, id)
}

func (s *gatedStore) SnipesInState(ctx context.Context, state store.State, before time.Time, limit int) ([]store.Snipe, error) {
	done, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Store.SnipesInState(ctx, state, before, limit)
}

func (s *gatedStore) UpdateItem(ctx context.Context, id int64, item store.ItemSnapshot) error {
	done, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	return s.Store.UpdateItem(ctx, id, item)
}
