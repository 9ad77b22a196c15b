package storetest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// model is the listing rule of spec section 3, written independently of
// any SQL, for the property test to compare against.
type model struct {
	itemNo int64
	bid    money.Amount
	end    time.Time
	ended  bool
	bids   int
	won    bool
}

func (m model) in(f store.Filter, now time.Time) bool {
	ended := m.ended || !m.end.After(now)
	recent := m.end.After(now.Add(-store.ArchiveAge))
	switch f {
	case store.FilterWatched:
		return m.bid == 0 && !ended
	case store.FilterCurrent:
		return m.bid > 0 && !ended
	case store.FilterCompleted:
		return ended && recent
	case store.FilterArchive:
		return ended && !recent
	}
	return true
}

var filters = []store.Filter{store.FilterWatched, store.FilterCurrent, store.FilterCompleted, store.FilterArchive}

// testListProperty stores random snipes, edge times included, and checks
// every filter, order and page against the model: the four filters
// partition the account's snipes, orders are total with item_no breaking
// ties, and pages concatenate to the whole list.
func testListProperty(t *testing.T, b *bundle) {
	rng := rand.New(rand.NewPCG(1, 2))
	edges := []time.Duration{0, time.Millisecond, -time.Millisecond, -store.ArchiveAge, -store.ArchiveAge + time.Millisecond, -store.ArchiveAge - time.Millisecond}
	var all []model
	for no := int64(1); no <= 40; no++ {
		var off time.Duration
		if rng.IntN(3) == 0 {
			off = edges[rng.IntN(len(edges))]
		} else {
			off = time.Duration(rng.Int64N(int64(180*day))) - 90*day
		}
		m := model{itemNo: no, end: b.now.Add(off).Truncate(time.Millisecond), ended: rng.IntN(5) == 0, bids: rng.IntN(3), won: rng.IntN(6) == 0}
		if rng.IntN(3) > 0 {
			m.bid = money.Amount(1 + rng.IntN(10000))
		}
		it := item(m.end)
		it.Ended, it.Bids = m.ended, m.bids
		s := b.upsert(t, b.alice.ID, no, store.SnipeChange{Bid: &m.bid, Item: it})
		if m.won {
			if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.Won}); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, m)
	}

	seen := map[int64]int{}
	for _, f := range filters {
		for _, showWon := range []bool{false, true} {
			for _, orderBy := range []string{"ends", "bids"} {
				for _, desc := range []bool{false, true} {
					var want []int64
					sorted := slices.Clone(all)
					slices.SortFunc(sorted, func(x, y model) int {
						c := cmp.Compare(x.end.UnixMilli(), y.end.UnixMilli())
						if orderBy == "bids" {
							c = cmp.Compare(x.bids, y.bids)
						}
						if c == 0 {
							c = cmp.Compare(x.itemNo, y.itemNo)
						}
						if desc {
							c = -c
						}
						return c
					})
					for _, m := range sorted {
						if m.in(f, b.now) && (showWon || !m.won) {
							want = append(want, m.itemNo)
						}
					}
					q := store.ListQuery{Filter: f, OrderBy: orderBy, Desc: desc, ShowWon: showWon, Limit: 3, Now: b.now}
					var got []int64
					for q.Offset = 0; q.Offset <= len(all); q.Offset += q.Limit {
						page, total, err := b.list(t, b.alice.ID, q)
						if err != nil || total != len(want) {
							t.Fatalf("ListEntries(%+v) total = %d, %v; want %d", q, total, err, len(want))
						}
						got = append(got, entryItemNos(page)...)
					}
					if !slices.Equal(got, want) {
						t.Errorf("ListEntries(%s, show_won %v, %s, desc %v) pages = %v, want %v", f, showWon, orderBy, desc, got, want)
					}
					if showWon && orderBy == "ends" && !desc {
						for _, no := range got {
							seen[no]++
						}
					}
				}
			}
		}
	}
	for _, m := range all {
		if seen[m.itemNo] != 1 {
			t.Errorf("item %d (%+v) is in %d filters, want exactly 1", m.itemNo, m, seen[m.itemNo])
		}
	}
}
