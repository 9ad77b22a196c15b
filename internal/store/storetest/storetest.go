// Package storetest is the contract suite every store.Store implementation
// must pass. An engine's test calls Run with a constructor that returns a
// fresh, empty store for each subtest.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

// Run runs the contract suite. newStore must return a new, empty, migrated
// store for every call; the suite closes it when the subtest ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Accounts", accountTests},
		{"Snipes", snipeTests},
		{"Groups", groupTests},
		{"List", listTests},
		{"Sniper", sniperTests},
		{"Searches", searchTests},
		{"Notify", notifyTests},
		{"NotifyConcurrency", concurrencyTests},
		{"MarketLinks", marketLinkTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t, setup(t, newStore))
				})
			}
		})
	}
}

// test is one contract subtest; it gets its own fresh store.
type test struct {
	name string
	fn   func(t *testing.T, b *bundle)
}

// base is the suite's "now": whole milliseconds, since stores keep ms.
var base = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// bundle is what every subtest starts from: a fresh store with two
// accounts, so that scoping can be checked everywhere.
type bundle struct {
	ctx   context.Context
	s     store.Store
	alice store.Account
	bob   store.Account
	now   time.Time
}

func setup(t *testing.T, newStore func(t *testing.T) store.Store) *bundle {
	t.Helper()
	s := newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	b := &bundle{ctx: t.Context(), s: s, now: base}
	b.alice = b.account(t, "alice", store.TierPaid)
	b.bob = b.account(t, "bob", store.TierPaid)
	return b
}

func (b *bundle) account(t *testing.T, name string, tier store.Tier) store.Account {
	t.Helper()
	a, err := b.s.CreateAccount(b.ctx, name, tier, key.Hash("key-"+name), b.now)
	if err != nil {
		t.Fatalf("CreateAccount(%q) = %v", name, err)
	}
	return a
}

// item is a live item ending at end.
func item(end time.Time) store.ItemSnapshot {
	return store.ItemSnapshot{
		Title:        "Vintage camera",
		Currency:     "USD",
		CurrentPrice: 1250,
		Bids:         3,
		GalleryURL:   "http://127.0.0.1:8080/sim/img/1.png",
		Start:        end.Add(-7 * 24 * time.Hour),
		End:          end,
	}
}

// upsert applies ch to (account, itemNo) and fails the test on error.
func (b *bundle) upsert(t *testing.T, accountID, itemNo int64, ch store.SnipeChange) store.Snipe {
	t.Helper()
	s, _, err := b.s.UpsertSnipe(b.ctx, accountID, itemNo, ch, b.now)
	if err != nil {
		t.Fatalf("UpsertSnipe(%d, %d) = %v", accountID, itemNo, err)
	}
	return s
}

// snipe creates a snipe with bid (cents) on an item ending at end.
func (b *bundle) snipe(t *testing.T, accountID, itemNo int64, bid money.Amount, end time.Time) store.Snipe {
	t.Helper()
	return b.upsert(t, accountID, itemNo, store.SnipeChange{Bid: &bid, Item: item(end)})
}

func (b *bundle) get(t *testing.T, accountID, itemNo int64) store.Snipe {
	t.Helper()
	s, err := b.s.Snipe(b.ctx, accountID, itemNo)
	if err != nil {
		t.Fatalf("Snipe(%d, %d) = %v", accountID, itemNo, err)
	}
	return s
}

func (b *bundle) transition(t *testing.T, id int64, from store.State, to store.State) {
	t.Helper()
	if err := b.s.Transition(b.ctx, store.TransitionParams{ID: id, From: []store.State{from}, To: to}); err != nil {
		t.Fatalf("Transition(%d, %s→%s) = %v", id, from, to, err)
	}
}

func ptr[T any](v T) *T { return &v }

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func itemNos(ss []store.Snipe) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = s.ItemNo
	}
	return out
}

func ids(ss []store.Snipe) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

const (
	hour = time.Hour
	day  = 24 * time.Hour
)
