package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// Store returns the sniper's view of st: it sees only the snipes of the
// partitions this instance takes on, and every state change it makes
// carries the fence of the snipe's partition (store.TransitionParams.Fence),
// so that the database refuses it once the lease has moved on.
//
//   - scans (SnipesInState) cover the owned partitions (held, valid, not
//     draining); firing snipes only once the partition's RecoverAt has
//     passed, so that a new holder waits out the old one's sends;
//   - SnipeByID hides snipes of partitions not held (ErrNotFound), so a
//     change notified for another instance's snipe is dropped here;
//   - Transition on a partition not held is ErrFenced without a query.
//
// Everything else passes through.
func (m *Manager) Store(st store.Store) store.Store {
	return &fenced{Store: st, m: m, accounts: map[int64]int64{}}
}

type fenced struct {
	store.Store
	m *Manager

	// accounts maps the snipes seen to their accounts, to find the
	// partition of a Transition (which carries only the snipe ID). A
	// snipe is forgotten when it is settled or gone.
	mu       sync.Mutex
	accounts map[int64]int64
}

func (f *fenced) remember(sns ...store.Snipe) {
	f.mu.Lock()
	for _, sn := range sns {
		f.accounts[sn.ID] = sn.AccountID
	}
	f.mu.Unlock()
}

func (f *fenced) forget(id int64) {
	f.mu.Lock()
	delete(f.accounts, id)
	f.mu.Unlock()
}

// owned lists the partitions whose snipes in state the sniper takes on now.
func (f *fenced) owned(state store.State) []int {
	now := f.m.clk.Now()
	var out []int
	for _, h := range f.m.Held() {
		if _, ok := f.m.Owns(h.Partition); !ok {
			continue
		}
		if state == store.StateFiring && now.Before(h.RecoverAt) {
			continue
		}
		out = append(out, h.Partition)
	}
	return out
}

// SnipesInState scans the owned partitions only.
func (f *fenced) SnipesInState(ctx context.Context, state store.State, before time.Time, limit int) ([]store.Snipe, error) {
	sns, err := f.Store.SnipesInPartitions(ctx, store.PartitionQuery{
		State: state, Before: before, Limit: limit, Partitions: f.m.Partitions(), Only: f.owned(state),
	})
	f.remember(sns...)
	return sns, err
}

// SnipeByID hides the snipes of partitions not held.
func (f *fenced) SnipeByID(ctx context.Context, id int64) (store.Snipe, error) {
	sn, err := f.Store.SnipeByID(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			f.forget(id)
		}
		return sn, err
	}
	if _, ok := f.m.Fence(f.m.Partition(sn.AccountID)); !ok {
		return store.Snipe{}, fmt.Errorf("snipe id %d: another instance's partition: %w", id, store.ErrNotFound)
	}
	f.remember(sn)
	return sn, nil
}

// GroupSnipes passes through (a group's snipes share its account, hence
// its partition) and remembers the snipes' accounts.
func (f *fenced) GroupSnipes(ctx context.Context, accountID, groupID int64) ([]store.Snipe, error) {
	sns, err := f.Store.GroupSnipes(ctx, accountID, groupID)
	f.remember(sns...)
	return sns, err
}

// Transition adds the fence of the snipe's partition.
func (f *fenced) Transition(ctx context.Context, p store.TransitionParams) error {
	f.mu.Lock()
	account, ok := f.accounts[p.ID]
	f.mu.Unlock()
	if !ok {
		sn, err := f.Store.SnipeByID(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("transition snipe id %d: %w", p.ID, err)
		}
		account = sn.AccountID
		f.remember(sn)
	}
	part := f.m.Partition(account)
	epoch, held := f.m.Fence(part)
	if !held {
		return fmt.Errorf("transition snipe id %d: partition %d is not held here: %w", p.ID, part, store.ErrFenced)
	}
	p.Fence = &store.Fence{Holder: f.m.Instance(), Partitions: f.m.Partitions(), Partition: part, Epoch: epoch}
	err := f.Store.Transition(ctx, p)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil && p.To == store.StateSettled:
		f.forget(p.ID)
	case errors.Is(err, store.ErrFenced):
		f.m.log.Warn("sniper write refused: the partition's lease moved on", "snipe", p.ID, "partition", part, "epoch", epoch)
	}
	return err
}
