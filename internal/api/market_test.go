package api_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// fakeMarket is a small in-memory marketplace for the conformance tests.
type fakeMarket struct {
	mu      sync.Mutex
	items   map[int64]market.Item
	history map[int64][]market.HistoryEntry
	watch   map[string][]int64
	down    bool
	// gate, when set, blocks WatchList until closed.
	gate    chan struct{}
	entered chan struct{}
}

func newFakeMarket() *fakeMarket {
	return &fakeMarket{items: map[int64]market.Item{}, history: map[int64][]market.HistoryEntry{}, watch: map[string][]int64{}}
}

func (m *fakeMarket) put(it market.Item) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[it.ItemNo] = it
}

func (m *fakeMarket) setDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
}

func (m *fakeMarket) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return market.Item{}, market.ErrUnavailable
	}
	it, ok := m.items[itemNo]
	if !ok {
		return market.Item{}, market.ErrNotFound
	}
	return it, nil
}

func (m *fakeMarket) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []market.Item
	for _, it := range m.items {
		if !it.Ended && it.Country == country && strings.Contains(strings.ToLower(it.Title), strings.ToLower(query)) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b market.Item) int { return a.End.Compare(b.End) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *fakeMarket) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	m.mu.Lock()
	gate, entered := m.gate, m.entered
	m.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []market.Item
	for _, no := range m.watch[user] {
		out = append(out, m.items[no])
	}
	return out, nil
}

func (m *fakeMarket) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	return market.BidReceipt{}, market.ErrUnavailable
}

func (m *fakeMarket) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	return market.BidState{}, nil
}

func (m *fakeMarket) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[itemNo]; !ok {
		return nil, market.ErrNotFound
	}
	return m.history[itemNo], nil
}

func (m *fakeMarket) Now(ctx context.Context) (time.Time, error) { return time.Now(), nil }
