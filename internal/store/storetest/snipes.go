package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

var snipeTests = []test{
	{"CreateDefaults", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		it := item(end)
		s, created, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, 42, store.SnipeChange{Item: it}, b.now)
		if err != nil || !created {
			t.Fatalf("UpsertSnipe(new) = %v, created %v, want created", err, created)
		}
		want := store.Snipe{
			ID: s.ID, AccountID: b.alice.ID, ItemNo: 42, Bid: 0, Delay: store.DefaultDelay, Enabled: true,
			State: store.StateScheduled, Outcome: outcome.Pending, FireAt: end.Add(-store.DefaultDelay * time.Second),
			Item: it, CreatedAt: b.now, UpdatedAt: b.now,
		}
		if s.ID == 0 || !equalSnipe(s, want) {
			t.Errorf("UpsertSnipe(new) =\n %+v\nwant\n %+v", s, want)
		}
		if got := b.get(t, b.alice.ID, 42); !equalSnipe(got, want) {
			t.Errorf("Snipe(42) =\n %+v\nwant\n %+v", got, want)
		}
		if got, err := b.s.SnipeByID(b.ctx, s.ID); err != nil || !equalSnipe(got, want) {
			t.Errorf("SnipeByID(%d) = %+v, %v, want %+v", s.ID, got, err, want)
		}
		_, err = b.s.SnipeByID(b.ctx, s.ID+1000)
		wantErr(t, "SnipeByID(unknown)", err, store.ErrNotFound)
	}},
	{"ExistsIsOnlyAHint", func(t *testing.T, b *bundle) {
		// A wrong hint either way gives the same result as a right one.
		it := item(b.now.Add(hour))
		s, created, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, 8, store.SnipeChange{Bid: ptr(money.Amount(100)), Item: it, Exists: true}, b.now)
		if err != nil || !created || s.Bid != 100 {
			t.Fatalf("UpsertSnipe(new, Exists) = %+v, created %v, %v; want created with bid 1.00", s, created, err)
		}
		s2, created, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, 8, store.SnipeChange{Bid: ptr(money.Amount(200)), Item: it}, b.now)
		if err != nil || created || s2.ID != s.ID || s2.Bid != 200 {
			t.Fatalf("UpsertSnipe(existing, not Exists) = %+v, created %v, %v; want snipe %d updated to 2.00", s2, created, err, s.ID)
		}
		s3, created, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, 8, store.SnipeChange{Bid: ptr(money.Amount(300)), Item: it, Exists: true}, b.now)
		if err != nil || created || s3.ID != s.ID || s3.Bid != 300 {
			t.Fatalf("UpsertSnipe(existing, Exists) = %+v, created %v, %v; want snipe %d updated to 3.00", s3, created, err, s.ID)
		}
	}},
	{"CreateWithFields", func(t *testing.T, b *bundle) {
		ch := store.SnipeChange{Bid: ptr(money.Amount(4550)), Delay: ptr(3), Enabled: ptr(false), Force: ptr(true), GroupName: ptr("lenses"), Item: item(b.now.Add(hour))}
		s := b.upsert(t, b.alice.ID, 7, ch)
		if s.Bid != 4550 || s.Delay != 3 || s.Enabled || !s.Force || s.GroupID == 0 || s.GroupName != "lenses" {
			t.Errorf("UpsertSnipe(all fields) = %+v, want bid 45.50, delay 3, disabled, forced, group lenses", s)
		}
		if want := b.now.Add(hour - 3*time.Second); !s.FireAt.Equal(want) {
			t.Errorf("FireAt = %v, want %v", s.FireAt, want)
		}
	}},
	{"PatchOnlyPassedFields", func(t *testing.T, b *bundle) {
		initial := store.SnipeChange{Bid: ptr(money.Amount(1000)), Delay: ptr(5), Enabled: ptr(true), Force: ptr(false), GroupName: ptr("g1")}
		tests := []struct {
			name  string
			ch    store.SnipeChange
			check func(s store.Snipe) bool
		}{
			{"bid", store.SnipeChange{Bid: ptr(money.Amount(2000))}, func(s store.Snipe) bool {
				return s.Bid == 2000 && s.Delay == 5 && s.Enabled && !s.Force && s.GroupName == "g1"
			}},
			{"delay", store.SnipeChange{Delay: ptr(12)}, func(s store.Snipe) bool {
				return s.Bid == 1000 && s.Delay == 12 && s.Enabled && !s.Force && s.GroupName == "g1"
			}},
			{"enabled", store.SnipeChange{Enabled: ptr(false)}, func(s store.Snipe) bool {
				return s.Bid == 1000 && s.Delay == 5 && !s.Enabled && !s.Force && s.GroupName == "g1"
			}},
			{"force", store.SnipeChange{Force: ptr(true)}, func(s store.Snipe) bool {
				return s.Bid == 1000 && s.Delay == 5 && s.Enabled && s.Force && s.GroupName == "g1"
			}},
			{"group", store.SnipeChange{GroupName: ptr("g2")}, func(s store.Snipe) bool {
				return s.Bid == 1000 && s.Delay == 5 && s.Enabled && !s.Force && s.GroupName == "g2"
			}},
			{"nothing", store.SnipeChange{}, func(s store.Snipe) bool {
				return s.Bid == 1000 && s.Delay == 5 && s.Enabled && !s.Force && s.GroupName == "g1"
			}},
		}
		for i, tc := range tests {
			itemNo := int64(100 + i)
			initial.Item = item(b.now.Add(hour))
			first := b.upsert(t, b.alice.ID, itemNo, initial)
			later := b.now.Add(time.Minute)
			tc.ch.Item = item(b.now.Add(2 * hour))
			tc.ch.Item.Title = "renamed"
			s, created, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, itemNo, tc.ch, later)
			if err != nil || created {
				t.Fatalf("%s: UpsertSnipe(update) = %v, created %v, want updated", tc.name, err, created)
			}
			if s.ID != first.ID || !tc.check(s) {
				t.Errorf("%s: UpsertSnipe(update) = %+v, want only %s changed", tc.name, s, tc.name)
			}
			if s.Item.Title != "renamed" || !s.Item.End.Equal(b.now.Add(2*hour)) {
				t.Errorf("%s: item = %+v, want the new snapshot stored", tc.name, s.Item)
			}
			if !s.CreatedAt.Equal(b.now) || !s.UpdatedAt.Equal(later) {
				t.Errorf("%s: CreatedAt, UpdatedAt = %v, %v, want %v, %v", tc.name, s.CreatedAt, s.UpdatedAt, b.now, later)
			}
			if want := s.Item.End.Add(-time.Duration(s.Delay) * time.Second); !s.FireAt.Equal(want) {
				t.Errorf("%s: FireAt = %v, want end − delay = %v", tc.name, s.FireAt, want)
			}
		}
	}},
	{"Scoping", func(t *testing.T, b *bundle) {
		s := b.snipe(t, b.alice.ID, 5, 700, b.now.Add(hour))
		_, err := b.s.Snipe(b.ctx, b.bob.ID, 5)
		wantErr(t, "Snipe(bob, alice's item)", err, store.ErrNotFound)
		wantErr(t, "DeleteSnipe(bob, alice's item)", b.s.DeleteSnipe(b.ctx, b.bob.ID, 5), store.ErrNotFound)
		if _, n, _ := b.list(t, b.bob.ID, store.ListQuery{Now: b.now}); n != 0 {
			t.Errorf("ListEntries(bob) total = %d, want 0", n)
		}
		// Bob's addBid on the same item number is his own snipe.
		bs, created, err := b.s.UpsertSnipe(b.ctx, b.bob.ID, 5, store.SnipeChange{Item: item(b.now.Add(hour))}, b.now)
		if err != nil || !created || bs.ID == s.ID {
			t.Errorf("UpsertSnipe(bob, 5) = %+v, %v, created %v, want a new snipe", bs, err, created)
		}
		if got := b.get(t, b.alice.ID, 5); got.Bid != 700 {
			t.Errorf("alice's bid = %v after bob's addBid, want 7.00", got.Bid)
		}
	}},
	{"Delete", func(t *testing.T, b *bundle) {
		b.snipe(t, b.alice.ID, 5, 700, b.now.Add(hour))
		if err := b.s.DeleteSnipe(b.ctx, b.alice.ID, 5); err != nil {
			t.Fatalf("DeleteSnipe = %v", err)
		}
		_, err := b.s.Snipe(b.ctx, b.alice.ID, 5)
		wantErr(t, "Snipe(deleted)", err, store.ErrNotFound)
		wantErr(t, "DeleteSnipe(again)", b.s.DeleteSnipe(b.ctx, b.alice.ID, 5), store.ErrNotFound)
	}},
	{"BidSentConflicts", func(t *testing.T, b *bundle) {
		for i, st := range []store.State{store.StateFiring, store.StatePlaced} {
			itemNo := int64(i + 1)
			s := b.snipe(t, b.alice.ID, itemNo, 900, b.now.Add(hour))
			if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: st}); err != nil {
				t.Fatal(err)
			}
			_, _, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, itemNo, store.SnipeChange{Bid: ptr(money.Amount(5000)), Item: item(b.now.Add(2 * hour))}, b.now)
			wantErr(t, fmt.Sprintf("UpsertSnipe(%s)", st), err, store.ErrConflict)
			got := b.get(t, b.alice.ID, itemNo)
			if got.Bid != 900 || got.State != st || !got.Item.End.Equal(b.now.Add(hour)) {
				t.Errorf("%s snipe after refused edit = %+v, want unchanged", st, got)
			}
			wantErr(t, fmt.Sprintf("DeleteSnipe(%s)", st), b.s.DeleteSnipe(b.ctx, b.alice.ID, itemNo), store.ErrConflict)
			if _, err := b.s.Snipe(b.ctx, b.alice.ID, itemNo); err != nil {
				t.Errorf("Snipe(%s) after refused delete = %v, want it kept", st, err)
			}
		}
	}},
	{"SettledRearms", func(t *testing.T, b *bundle) {
		s := b.snipe(t, b.alice.ID, 1, 900, b.now.Add(hour))
		placed := b.now.Add(-time.Minute)
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.TooLow, Detail: "Price was 12.00.", PlacedAt: placed}); err != nil {
			t.Fatal(err)
		}
		got := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(2000)), Item: item(b.now.Add(hour))})
		if got.State != store.StateScheduled || got.Outcome != outcome.Pending || got.OutcomeDetail != "" || !got.PlacedAt.IsZero() || got.Bid != 2000 {
			t.Errorf("edited settled snipe on a live item = %+v, want scheduled, pending, no detail, bid 20.00", got)
		}
	}},
	{"SettledEndedStaysSettled", func(t *testing.T, b *bundle) {
		tests := []struct {
			name string
			it   store.ItemSnapshot
		}{
			{"end passed", item(b.now.Add(-time.Minute))},
			{"end is now", item(b.now)},
			{"ended early", func() store.ItemSnapshot { it := item(b.now.Add(hour)); it.Ended = true; return it }()},
		}
		for i, tc := range tests {
			s := b.snipe(t, b.alice.ID, int64(i+1), 900, b.now.Add(hour))
			if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.Outbid, Detail: "detail"}); err != nil {
				t.Fatal(err)
			}
			got := b.upsert(t, b.alice.ID, int64(i+1), store.SnipeChange{Bid: ptr(money.Amount(2000)), Item: tc.it})
			if got.State != store.StateSettled || got.Outcome != outcome.Outbid || got.OutcomeDetail != "detail" {
				t.Errorf("%s: edited settled snipe = %+v, want still settled Outbid", tc.name, got)
			}
		}
	}},
	{"ConcurrentCreate", func(t *testing.T, b *bundle) {
		const n = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
			idSet   = map[int64]bool{}
		)
		for i := range n {
			wg.Go(func() {
				bid := money.Amount(100 * (i + 1))
				s, c, err := b.s.UpsertSnipe(b.ctx, b.alice.ID, 77, store.SnipeChange{Bid: &bid, Item: item(b.now.Add(hour))}, b.now)
				if err != nil {
					t.Errorf("UpsertSnipe #%d = %v", i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if c {
					created++
				}
				idSet[s.ID] = true
			})
		}
		wg.Wait()
		if created != 1 || len(idSet) != 1 {
			t.Errorf("%d concurrent first addBids: %d created, %d distinct IDs; want 1 and 1", n, created, len(idSet))
		}
	}},
}

// equalSnipe compares snipes field by field, times with Equal.
func equalSnipe(a, b store.Snipe) bool {
	ta, tb := a, b
	for _, p := range []*store.Snipe{&ta, &tb} {
		p.FireAt, p.PlacedAt, p.CreatedAt, p.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		p.Item.Start, p.Item.End = time.Time{}, time.Time{}
	}
	return ta == tb &&
		a.FireAt.Equal(b.FireAt) && a.PlacedAt.Equal(b.PlacedAt) &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Item.Start.Equal(b.Item.Start) && a.Item.End.Equal(b.Item.End)
}
