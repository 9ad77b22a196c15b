package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// listFixture stores one snipe per listing rule edge and returns nothing;
// item numbers name the case:
//
//	1 watched, live           2 current, live          3 current, ends exactly now (ended)
//	4 current, ended early    5 completed, ended 60d−1ms ago
//	6 archive, ended exactly 60d ago                   7 archive, older
//	8 current, won (hidden unless ShowWon)             9 completed, won
//	10 watched, ends 1 ms from now
func listFixture(t *testing.T, b *bundle) {
	t.Helper()
	b.snipe(t, b.alice.ID, 1, 0, b.now.Add(hour))
	b.snipe(t, b.alice.ID, 2, 500, b.now.Add(2*hour))
	b.snipe(t, b.alice.ID, 3, 500, b.now)
	early := item(b.now.Add(3 * hour))
	early.Ended = true
	b.upsert(t, b.alice.ID, 4, store.SnipeChange{Bid: ptr(money.Amount(500)), Item: early})
	b.snipe(t, b.alice.ID, 5, 500, b.now.Add(-store.ArchiveAge+time.Millisecond))
	b.snipe(t, b.alice.ID, 6, 500, b.now.Add(-store.ArchiveAge))
	b.snipe(t, b.alice.ID, 7, 0, b.now.Add(-store.ArchiveAge-day))
	won := b.snipe(t, b.alice.ID, 8, 500, b.now.Add(4*hour))
	wonDone := b.snipe(t, b.alice.ID, 9, 500, b.now.Add(-day))
	b.snipe(t, b.alice.ID, 10, 0, b.now.Add(time.Millisecond))
	for _, id := range []int64{won.ID, wonDone.ID} {
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: id, From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.Won}); err != nil {
			t.Fatal(err)
		}
	}
	b.snipe(t, b.bob.ID, 2, 500, b.now.Add(2*hour)) // never in alice's lists
}

var listTests = []test{
	{"Property", testListProperty},
	{"Filters", func(t *testing.T, b *bundle) {
		listFixture(t, b)
		tests := []struct {
			filter  store.Filter
			showWon bool
			want    []int64 // by end ascending
		}{
			{store.FilterWatched, false, []int64{10, 1}},
			{store.FilterCurrent, false, []int64{2}},
			{store.FilterCurrent, true, []int64{2, 8}},
			{store.FilterCompleted, false, []int64{5, 3, 4}},
			{store.FilterCompleted, true, []int64{5, 9, 3, 4}},
			{store.FilterArchive, false, []int64{7, 6}},
			{"", false, []int64{7, 6, 5, 3, 10, 1, 2, 4}},
		}
		for _, tc := range tests {
			q := store.ListQuery{Filter: tc.filter, ShowWon: tc.showWon, OrderBy: "ends", Limit: 20, Now: b.now}
			got, total, err := b.list(t, b.alice.ID, q)
			if err != nil || !slices.Equal(entryItemNos(got), tc.want) || total != len(tc.want) {
				t.Errorf("ListEntries(%q, show_won=%v) = %v, total %d, %v; want %v, total %d",
					tc.filter, tc.showWon, entryItemNos(got), total, err, tc.want, len(tc.want))
			}
		}
	}},
	{"OrderAndTies", func(t *testing.T, b *bundle) {
		// ends: 3 and 1 tie, 2 later; bids: 1 and 2 tie, 3 more.
		bids := map[int64]int{1: 5, 2: 5, 3: 9}
		ends := map[int64]time.Duration{1: hour, 2: 2 * hour, 3: hour}
		for _, no := range []int64{2, 3, 1} {
			it := item(b.now.Add(ends[no]))
			it.Bids = bids[no]
			b.upsert(t, b.alice.ID, no, store.SnipeChange{Bid: ptr(money.Amount(100)), Item: it})
		}
		tests := []struct {
			orderBy string
			desc    bool
			want    []int64
		}{
			{"ends", false, []int64{1, 3, 2}},
			{"ends", true, []int64{2, 3, 1}},
			{"bids", false, []int64{1, 2, 3}},
			{"bids", true, []int64{3, 2, 1}},
		}
		for _, tc := range tests {
			q := store.ListQuery{Filter: store.FilterCurrent, OrderBy: tc.orderBy, Desc: tc.desc, Limit: 20, Now: b.now}
			got, _, err := b.list(t, b.alice.ID, q)
			if err != nil || !slices.Equal(entryItemNos(got), tc.want) {
				t.Errorf("ListEntries(orderby %s, desc %v) = %v, %v; want %v", tc.orderBy, tc.desc, entryItemNos(got), err, tc.want)
			}
		}
	}},
	{"Paging", func(t *testing.T, b *bundle) {
		for no := int64(1); no <= 7; no++ {
			b.snipe(t, b.alice.ID, no, 100, b.now.Add(time.Duration(no)*hour))
		}
		tests := []struct {
			offset, limit int
			want          []int64
		}{
			{0, 3, []int64{1, 2, 3}},
			{3, 3, []int64{4, 5, 6}},
			{6, 3, []int64{7}},
			{7, 3, nil},
			{2, 0, []int64{3, 4, 5, 6, 7}}, // limit 0: no limit
		}
		for _, tc := range tests {
			q := store.ListQuery{Filter: store.FilterCurrent, OrderBy: "ends", Offset: tc.offset, Limit: tc.limit, Now: b.now}
			got, total, err := b.list(t, b.alice.ID, q)
			if err != nil || !slices.Equal(entryItemNos(got), tc.want) || total != 7 {
				t.Errorf("ListEntries(offset %d, limit %d) = %v, total %d, %v; want %v, total 7", tc.offset, tc.limit, entryItemNos(got), total, err, tc.want)
			}
		}
	}},
	{"EntryFields", func(t *testing.T, b *bundle) {
		s := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(1234)), Delay: ptr(4), GroupName: ptr("g"), Item: item(b.now.Add(hour))})
		got, _, err := b.list(t, b.alice.ID, store.ListQuery{Filter: store.FilterCurrent, Limit: 20, Now: b.now})
		if want := s.ListEntry(); err != nil || len(got) != 1 || !equalEntry(got[0], want) {
			t.Errorf("ListEntries = %+v, %v; want exactly [%+v]", got, err, want)
		}
		// Every field of an entry, the flags and the outcome's detail
		// included.
		ended := item(b.now.Add(-hour))
		ended.Ended, ended.Title, ended.GalleryURL = true, `"Ünïcode" <&> \ 🎉`, ""
		off := b.upsert(t, b.alice.ID, 2, store.SnipeChange{Bid: ptr(money.Amount(99)), Enabled: ptr(false), Force: ptr(true), Item: ended})
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: off.ID, From: []store.State{store.StateScheduled},
			To: store.StateSettled, Outcome: outcome.Disabled, Detail: "switched off"}); err != nil {
			t.Fatal(err)
		}
		offEntry := off.ListEntry()
		offEntry.Outcome, offEntry.OutcomeDetail = outcome.Disabled, "switched off"
		want := []store.ListEntry{offEntry, s.ListEntry()} // by end ascending
		got, total, err := b.list(t, b.alice.ID, store.ListQuery{ShowWon: true, Now: b.now})
		if err != nil || total != 2 || !slices.EqualFunc(got, want, equalEntry) {
			t.Errorf("ListEntries = %+v, total %d, %v; want exactly %+v, total 2", got, total, err, want)
		}
	}},
	{"EntriesUnknownFilter", func(t *testing.T, b *bundle) {
		if _, _, err := b.s.ListEntries(b.ctx, b.alice.ID, store.ListQuery{Filter: "nope", Now: b.now}); err == nil {
			t.Error("ListEntries(filter nope) = nil error, want one")
		}
	}},
}

// list is ListEntries, each entry checked against its snipe as Snipe
// reads it: equal to the snipe's ListEntry.
func (b *bundle) list(t *testing.T, accountID int64, q store.ListQuery) ([]store.ListEntry, int, error) {
	t.Helper()
	page, total, err := b.s.ListEntries(b.ctx, accountID, q)
	for i, e := range page {
		if want := b.get(t, accountID, e.ItemNo).ListEntry(); !equalEntry(e, want) {
			t.Errorf("ListEntries(%+v)[%d] = %+v, want %+v", q, i, e, want)
		}
	}
	return page, total, err
}

// entryItemNos is the item numbers of entries, in order.
func entryItemNos(es []store.ListEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.ItemNo
	}
	return out
}

// equalEntry compares entries, their times by Equal.
func equalEntry(a, b store.ListEntry) bool {
	ta, tb := a, b
	for _, p := range []*store.ListEntry{&ta, &tb} {
		p.FireAt, p.Item.Start, p.Item.End = time.Time{}, time.Time{}, time.Time{}
	}
	return ta == tb && a.FireAt.Equal(b.FireAt) && a.Item.Start.Equal(b.Item.Start) && a.Item.End.Equal(b.Item.End)
}
