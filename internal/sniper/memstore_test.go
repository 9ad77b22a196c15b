package sniper

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// memStore is a small in-memory store.Store with the snipe state machine of
// the real stores, so scheduler tests run inside a synctest bubble. The
// SQLite store is exercised by the store contract suite and cmd/snipebench.
type memStore struct {
	// NotifyStore is nil: the scheduler tests never reach notifications.
	store.NotifyStore
	mu       sync.Mutex
	accounts []store.Account
	snipes   map[int64]*store.Snipe
	byItem   map[[2]int64]int64 // (account, item) → snipe ID
	groups   map[string]int64   // "account/name" -> id
	next     int64
	// transitions counts Transition calls per target state, for tests.
	transitions map[store.State]int
	// recorded counts Transition calls per outcome, for tests.
	recorded map[outcome.Code]int
}

func newMemStore() *memStore {
	return &memStore{snipes: map[int64]*store.Snipe{}, byItem: map[[2]int64]int64{}, groups: map[string]int64{}, transitions: map[store.State]int{}, recorded: map[outcome.Code]int{}}
}

func (m *memStore) Close() error { return nil }

func (m *memStore) CreateAccount(_ context.Context, name string, tier store.Tier, keyHash []byte, now time.Time) (store.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	a := store.Account{ID: m.next, Name: name, Tier: tier, KeyHash: keyHash, CreatedAt: now}
	m.accounts = append(m.accounts, a)
	return a, nil
}
func (m *memStore) AccountByKeyHash(context.Context, []byte) (store.Account, error) {
	return store.Account{}, store.ErrNotFound
}
func (m *memStore) AccountByName(_ context.Context, name string) (store.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.Name == name {
			return a, nil
		}
	}
	return store.Account{}, store.ErrNotFound
}
func (m *memStore) Accounts(context.Context) ([]store.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.accounts), nil
}
func (m *memStore) SetKeyHash(context.Context, string, []byte) error        { return nil }
func (m *memStore) SetTier(context.Context, string, store.Tier) error       { return nil }
func (m *memStore) DeleteAccount(context.Context, string) error             { return nil }
func (m *memStore) CountAccounts(context.Context) (int, error)              { return len(m.accounts), nil }
func (m *memStore) Searches(context.Context, int64) ([]store.Search, error) { return nil, nil }
func (m *memStore) DeleteSearch(context.Context, int64, int64) error        { return nil }
func (m *memStore) SetMarketLink(context.Context, store.MarketLink) error   { return nil }
func (m *memStore) MarketLink(context.Context, int64) (store.MarketLink, error) {
	return store.MarketLink{}, store.ErrNotFound
}
func (m *memStore) DeleteMarketLink(context.Context, int64) error { return store.ErrNotFound }
func (m *memStore) AddSearch(context.Context, int64, string, time.Time) (store.Search, bool, error) {
	return store.Search{}, false, nil
}

func (m *memStore) find(accountID, itemNo int64) *store.Snipe {
	return m.snipes[m.byItem[[2]int64{accountID, itemNo}]]
}

func (m *memStore) UpsertSnipe(_ context.Context, accountID, itemNo int64, ch store.SnipeChange, now time.Time) (store.Snipe, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.find(accountID, itemNo)
	created := s == nil
	if created {
		m.next++
		s = &store.Snipe{ID: m.next, AccountID: accountID, ItemNo: itemNo, Delay: store.DefaultDelay, Enabled: true, State: store.StateScheduled, CreatedAt: now}
		m.snipes[s.ID] = s
		m.byItem[[2]int64{accountID, itemNo}] = s.ID
	} else if s.State == store.StateFiring || s.State == store.StatePlaced {
		return store.Snipe{}, false, fmt.Errorf("snipe %d: the bid has been sent: %w", itemNo, store.ErrConflict)
	}
	if ch.Bid != nil {
		s.Bid = *ch.Bid
	}
	if ch.Delay != nil {
		s.Delay = *ch.Delay
	}
	if ch.Enabled != nil {
		s.Enabled = *ch.Enabled
	}
	if ch.Force != nil {
		s.Force = *ch.Force
	}
	if ch.GroupName != nil {
		s.GroupName = *ch.GroupName
		s.GroupID = 0
		if s.GroupName != "" {
			k := fmt.Sprint(accountID, "/", s.GroupName)
			if m.groups[k] == 0 {
				m.next++
				m.groups[k] = m.next
			}
			s.GroupID = m.groups[k]
		}
	}
	s.Item = ch.Item
	if s.State == store.StateSettled && !s.Item.Ended {
		s.State, s.Outcome, s.OutcomeDetail = store.StateScheduled, outcome.Pending, ""
	}
	s.FireAt = s.Item.End.Add(-time.Duration(s.Delay) * time.Second)
	s.UpdatedAt = now
	return *s, created, nil
}

func (m *memStore) Snipe(_ context.Context, accountID, itemNo int64) (store.Snipe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.find(accountID, itemNo); s != nil {
		return *s, nil
	}
	return store.Snipe{}, store.ErrNotFound
}

func (m *memStore) DeleteSnipe(_ context.Context, accountID, itemNo int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.find(accountID, itemNo)
	switch {
	case s == nil:
		return store.ErrNotFound
	case s.State == store.StateFiring || s.State == store.StatePlaced:
		return store.ErrConflict
	}
	delete(m.snipes, s.ID)
	delete(m.byItem, [2]int64{accountID, itemNo})
	return nil
}

// ListSnipes supports what the sniper uses: completed, newest end first.
func (m *memStore) ListSnipes(_ context.Context, accountID int64, q store.ListQuery) ([]store.Snipe, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Snipe
	for _, s := range m.snipes {
		ended := s.Item.Ended || !s.Item.End.After(q.Now)
		if s.AccountID == accountID && q.Filter == store.FilterCompleted && ended && s.Item.End.After(q.Now.Add(-store.ArchiveAge)) &&
			(q.ShowWon || s.Outcome != outcome.Won) {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b store.Snipe) int { return b.Item.End.Compare(a.Item.End) })
	total := len(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total, nil
}

func (m *memStore) GroupSnipes(_ context.Context, accountID, groupID int64) ([]store.Snipe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Snipe
	for _, s := range m.snipes {
		if s.AccountID == accountID && s.GroupID == groupID {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b store.Snipe) int {
		return cmp.Or(a.Item.End.Compare(b.Item.End), cmp.Compare(a.ItemNo, b.ItemNo))
	})
	return out, nil
}

func (m *memStore) SnipeByID(_ context.Context, id int64) (store.Snipe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.snipes[id]; s != nil {
		return *s, nil
	}
	return store.Snipe{}, store.ErrNotFound
}

func (m *memStore) SnipesInState(_ context.Context, state store.State, before time.Time, limit int) ([]store.Snipe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Snipe
	for _, s := range m.snipes {
		if s.State != state || !s.FireAt.Before(before) {
			continue
		}
		if state == store.StateScheduled && !(s.Enabled && s.Bid > 0 && !s.Item.Ended) {
			continue
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b store.Snipe) int { return cmp.Or(a.FireAt.Compare(b.FireAt), cmp.Compare(a.ID, b.ID)) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memStore) Transition(_ context.Context, id int64, from []store.State, to store.State, o outcome.Code, detail string, placedAt time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.snipes[id]
	if s == nil {
		return store.ErrNotFound
	}
	if !slices.Contains(from, s.State) {
		return fmt.Errorf("snipe %d is %s: %w", id, s.State, store.ErrConflict)
	}
	s.State, s.Outcome, s.OutcomeDetail = to, o, detail
	if !placedAt.IsZero() {
		s.PlacedAt = placedAt
	}
	m.transitions[to]++
	m.recorded[o]++
	return nil
}

func (m *memStore) UpdateItem(_ context.Context, id int64, item store.ItemSnapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.snipes[id]
	if s == nil {
		return store.ErrNotFound
	}
	s.Item = item
	s.FireAt = item.End.Add(-time.Duration(s.Delay) * time.Second)
	return nil
}

// set changes a stored snipe directly, for setting up crash scenarios.
func (m *memStore) set(id int64, f func(*store.Snipe)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m.snipes[id])
}
