package storetest

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

var sniperTests = []test{
	{"ArmedOnly", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		armed := b.snipe(t, b.alice.ID, 1, 500, end)
		b.snipe(t, b.alice.ID, 2, 0, end) // watched
		b.upsert(t, b.alice.ID, 3, store.SnipeChange{Bid: ptr(money.Amount(500)), Enabled: ptr(false), Item: item(end)})
		ended := item(end)
		ended.Ended = true
		b.upsert(t, b.alice.ID, 4, store.SnipeChange{Bid: ptr(money.Amount(500)), Item: ended})
		firing := b.snipe(t, b.alice.ID, 5, 500, end)
		b.transition(t, firing.ID, store.StateScheduled, store.StateFiring)
		bobs := b.snipe(t, b.bob.ID, 1, 500, end)

		got, err := b.s.SnipesInState(b.ctx, store.StateScheduled, end, 0)
		if want := []int64{armed.ID, bobs.ID}; err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("SnipesInState(scheduled) = %v, %v; want IDs %v (armed only, every account)", ids(got), err, want)
		}
		got, err = b.s.SnipesInState(b.ctx, store.StateFiring, end, 0)
		if want := []int64{firing.ID}; err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("SnipesInState(firing) = %v, %v; want %v", ids(got), err, want)
		}
		got, err = b.s.SnipesInState(b.ctx, store.StateUnsent, end, 0)
		if want := []int64{b.get(t, b.alice.ID, 3).ID, b.get(t, b.alice.ID, 4).ID}; err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("SnipesInState(unsent) = %v, %v; want %v (disabled, item ended)", ids(got), err, want)
		}
		// A disabled firing snipe is still firing: only scheduled is filtered.
		b.upsert(t, b.alice.ID, 6, store.SnipeChange{Enabled: ptr(false), Item: item(end)})
		s6 := b.get(t, b.alice.ID, 6)
		b.transition(t, s6.ID, store.StateScheduled, store.StatePlaced)
		got, err = b.s.SnipesInState(b.ctx, store.StatePlaced, end, 0)
		if want := []int64{s6.ID}; err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("SnipesInState(placed) = %v, %v; want %v", ids(got), err, want)
		}
	}},
	{"Unconfirmed", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		settle := func(itemNo int64, accountID int64, code outcome.Code, detail string) store.Snipe {
			t.Helper()
			sn := b.snipe(t, accountID, itemNo, 500, end)
			b.transition(t, sn.ID, store.StateScheduled, store.StateFiring)
			if err := b.s.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: code, Detail: detail}); err != nil {
				t.Fatalf("settle snipe %d: %v", sn.ID, err)
			}
			return sn
		}
		abandoned := store.UnconfirmedDetail + ": every lookup failed."
		a1 := settle(1, b.alice.ID, outcome.MarketDown, abandoned)
		settle(2, b.alice.ID, outcome.MarketDown, "The marketplace was unavailable and the bid never reached it.")
		settle(3, b.alice.ID, outcome.Missed, abandoned)
		b1 := settle(1, b.bob.ID, outcome.MarketDown, abandoned)
		firing := b.snipe(t, b.alice.ID, 4, 500, end)
		b.transition(t, firing.ID, store.StateScheduled, store.StateFiring)
		tests := []struct {
			name   string
			before time.Time
			want   []int64
		}{
			{"an hour after", end.Add(hour), []int64{a1.ID, b1.ID}},
			{"before their moment", a1.FireAt, nil},
			{"just within a day", a1.FireAt.Add(store.UnconfirmedFor), []int64{a1.ID, b1.ID}},
			{"over a day after", a1.FireAt.Add(store.UnconfirmedFor + time.Second), nil},
		}
		for _, tc := range tests {
			got, err := b.s.SnipesInState(b.ctx, store.StateUnconfirmed, tc.before, 0)
			if err != nil || !slices.Equal(ids(got), tc.want) {
				t.Errorf("%s: SnipesInState(unconfirmed) = %v, %v; want %v (abandoned: market-down with the unconfirmed detail, within a day)", tc.name, ids(got), err, tc.want)
			}
		}
	}},
	{"OrderBeforeAndLimit", func(t *testing.T, b *bundle) {
		// FireAt = end − delay: item 1 fires at +60s−7s, item 2 at +50s−7s,
		// item 3 ties with item 2 (created later: higher ID).
		s1 := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(60*time.Second))
		s2 := b.snipe(t, b.alice.ID, 2, 500, b.now.Add(50*time.Second))
		s3 := b.snipe(t, b.alice.ID, 3, 500, b.now.Add(50*time.Second))
		tests := []struct {
			before time.Time
			limit  int
			want   []int64
		}{
			{b.now.Add(time.Hour), 0, []int64{s2.ID, s3.ID, s1.ID}},
			{b.now.Add(time.Hour), 2, []int64{s2.ID, s3.ID}},
			{s1.FireAt, 0, []int64{s2.ID, s3.ID}}, // strictly before
			{s1.FireAt.Add(time.Millisecond), 0, []int64{s2.ID, s3.ID, s1.ID}},
			{s2.FireAt, 0, nil},
		}
		for _, tc := range tests {
			got, err := b.s.SnipesInState(b.ctx, store.StateScheduled, tc.before, tc.limit)
			if err != nil || !slices.Equal(ids(got), tc.want) {
				t.Errorf("SnipesInState(before %v, limit %d) = %v, %v; want %v", tc.before, tc.limit, ids(got), err, tc.want)
			}
		}
	}},
	{"Transition", func(t *testing.T, b *bundle) {
		s := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(hour))
		sched := []store.State{store.StateScheduled}
		err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: outcome.Placed})
		wantErr(t, "Transition(from firing, is scheduled)", err, store.ErrConflict)
		err = b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, To: store.StatePlaced, Outcome: outcome.Placed})
		wantErr(t, "Transition(from none)", err, store.ErrConflict)
		err = b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID + 1000, From: sched, To: store.StateFiring})
		wantErr(t, "Transition(unknown id)", err, store.ErrNotFound)

		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: sched, To: store.StateFiring}); err != nil {
			t.Fatalf("Transition(scheduled→firing) = %v", err)
		}
		placedAt := b.now.Add(time.Second)
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: outcome.Placed, Detail: "Leading at 5.00.", PlacedAt: placedAt, Durable: true}); err != nil {
			t.Fatalf("Transition(firing→placed) = %v", err)
		}
		got := b.get(t, b.alice.ID, 1)
		if got.State != store.StatePlaced || got.Outcome != outcome.Placed || got.OutcomeDetail != "Leading at 5.00." || !got.PlacedAt.Equal(placedAt) {
			t.Errorf("after firing→placed: %+v, want placed, outcome Placed, detail, PlacedAt %v", got, placedAt)
		}
		// A zero placedAt keeps the stored one.
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateFiring, store.StatePlaced}, To: store.StateSettled, Outcome: outcome.Won}); err != nil {
			t.Fatalf("Transition(placed→settled) = %v", err)
		}
		got = b.get(t, b.alice.ID, 1)
		if got.State != store.StateSettled || got.Outcome != outcome.Won || got.OutcomeDetail != "" || !got.PlacedAt.Equal(placedAt) {
			t.Errorf("after placed→settled: %+v, want settled, Won, no detail, PlacedAt kept %v", got, placedAt)
		}
	}},
	{"TransitionItemEnded", func(t *testing.T, b *bundle) {
		// A settlement stores the item's end and final price with the
		// outcome; a refused move stores neither.
		tests := []struct {
			name      string
			from      store.State
			price     money.Amount
			wantErr   error
			wantEnded bool
			wantPrice money.Amount
		}{
			{"with the final price", store.StatePlaced, 1234, nil, true, 1234},
			{"price unknown keeps the stored one", store.StatePlaced, 0, nil, true, 1250},
			{"refused", store.StateFiring, 999, store.ErrConflict, false, 1250},
		}
		for i, tc := range tests {
			itemNo := int64(10 + i)
			s := b.upsert(t, b.alice.ID, itemNo, store.SnipeChange{Bid: ptr(money.Amount(5000)), Item: item(b.now.Add(hour))})
			for _, to := range []store.State{store.StateFiring, store.StatePlaced} {
				if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{s.State}, To: to}); err != nil {
					t.Fatalf("%s: Transition(→%s) = %v", tc.name, to, err)
				}
				s.State = to
			}
			err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{tc.from}, To: store.StateSettled, Outcome: outcome.Won, ItemEnded: true, FinalPrice: tc.price})
			if tc.wantErr != nil {
				wantErr(t, tc.name, err, tc.wantErr)
			} else if err != nil {
				t.Fatalf("%s: Transition(placed→settled, ItemEnded) = %v", tc.name, err)
			}
			got := b.get(t, b.alice.ID, itemNo)
			if got.Item.Ended != tc.wantEnded || got.Item.CurrentPrice != tc.wantPrice {
				t.Errorf("%s: item ended %v, price %s; want %v, %s", tc.name, got.Item.Ended, got.Item.CurrentPrice, tc.wantEnded, tc.wantPrice)
			}
		}
	}},
	{"TransitionInto", func(t *testing.T, b *bundle) {
		// The firing mark reads the snipe back with the move (the sniper's
		// re-read): Into holds the snipe as SnipeByID returns it, group
		// name included.
		grouped := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(500)), GroupName: ptr("tools"), Item: item(b.now.Add(hour))})
		plain := b.snipe(t, b.alice.ID, 2, 700, b.now.Add(hour))
		for _, sn := range []store.Snipe{grouped, plain} {
			var into store.Snipe
			if err := b.s.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring, Durable: true, Into: &into}); err != nil {
				t.Fatalf("Transition(scheduled→firing, Into) = %v", err)
			}
			if into.ID == 0 {
				t.Fatalf("Into not filled by a successful move")
			}
			want, err := b.s.SnipeByID(b.ctx, sn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(into, want) {
				t.Errorf("Into = %+v\nwant (SnipeByID) %+v", into, want)
			}
		}
		var into store.Snipe
		err := b.s.Transition(b.ctx, store.TransitionParams{ID: plain.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring, Into: &into})
		wantErr(t, "Transition(from scheduled, is firing)", err, store.ErrConflict)
		if into.ID != 0 {
			t.Errorf("Into after a refused move = %+v, want untouched", into)
		}
	}},
	{"TransitionIfBid", func(t *testing.T, b *bundle) {
		// A decision taken on bid 5.00 must not apply after an edit to 9.00.
		s := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(hour))
		b.snipe(t, b.alice.ID, 1, 900, b.now.Add(hour))
		sched := []store.State{store.StateScheduled}
		err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: sched, To: store.StateSettled, Outcome: outcome.TooLow, IfBid: 500})
		wantErr(t, "Transition(IfBid 5.00, bid is 9.00)", err, store.ErrConflict)
		if got := b.get(t, b.alice.ID, 1); got.State != store.StateScheduled || got.Outcome != outcome.Pending {
			t.Errorf("after a refused IfBid: %s/%d, want scheduled/pending", got.State, got.Outcome)
		}
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: sched, To: store.StateSettled, Outcome: outcome.TooLow, IfBid: 900}); err != nil {
			t.Errorf("Transition(IfBid 9.00, bid is 9.00) = %v, want nil", err)
		}
	}},
	{"TransitionRace", func(t *testing.T, b *bundle) {
		s := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(hour))
		const n = 8
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			won, lost int
		)
		for range n {
			wg.Go(func() {
				err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, store.ErrConflict):
					lost++
				default:
					t.Errorf("Transition = %v, want nil or ErrConflict", err)
				}
			})
		}
		wg.Wait()
		if won != 1 || lost != n-1 {
			t.Errorf("%d racing Transitions: %d won, %d conflicted; want 1 and %d", n, won, lost, n-1)
		}
	}},
	{"ConcurrentTransitions", func(t *testing.T, b *bundle) {
		// Many shots at once (a store may commit them together): each
		// write gets its own compare-and-set result, and a refused one
		// does not undo the others.
		const n = 40
		var sns []store.Snipe
		for i := range n {
			sns = append(sns, b.snipe(t, b.alice.ID, int64(i+1), 500, b.now.Add(hour)))
		}
		firing := []store.State{store.StateFiring}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, sn := range sns {
			wg.Go(func() {
				p := store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring, Durable: true}
				switch i % 4 {
				case 1: // refused: not firing yet
					p = store.TransitionParams{ID: sn.ID, From: firing, To: store.StatePlaced, Outcome: outcome.Placed, PlacedAt: b.now, Durable: true}
				case 2: // unknown
					p.ID = sns[n-1].ID + 1000 + int64(i)
				}
				errs[i] = b.s.Transition(b.ctx, p)
			})
		}
		wg.Wait()
		for i, sn := range sns {
			want, wantState := error(nil), store.StateFiring
			switch i % 4 {
			case 1:
				want, wantState = store.ErrConflict, store.StateScheduled
			case 2:
				want, wantState = store.ErrNotFound, store.StateScheduled
			}
			if !errors.Is(errs[i], want) || (want == nil && errs[i] != nil) {
				t.Errorf("write %d: Transition = %v, want %v", i, errs[i], want)
			}
			if got := b.get(t, b.alice.ID, sn.ItemNo); got.State != wantState {
				t.Errorf("write %d: state %s, want %s", i, got.State, wantState)
			}
		}
		// Then the placed records, all at once.
		for i, sn := range sns {
			if i%4 == 0 || i%4 == 3 {
				wg.Go(func() {
					errs[i] = b.s.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: firing, To: store.StatePlaced, Outcome: outcome.Placed, PlacedAt: b.now, Durable: true})
				})
			}
		}
		wg.Wait()
		for i, sn := range sns {
			if i%4 != 0 && i%4 != 3 {
				continue
			}
			if got := b.get(t, b.alice.ID, sn.ItemNo); errs[i] != nil || got.State != store.StatePlaced || got.Outcome != outcome.Placed {
				t.Errorf("write %d: Transition(firing→placed) = %v, then %s/%d; want nil, placed/Placed", i, errs[i], got.State, got.Outcome)
			}
		}
	}},
	{"EditRacesFire", func(t *testing.T, b *bundle) {
		// An addBid and the sniper's fire race: either the edit lands
		// before the fire (and the fired snipe carries it) or it is refused.
		s := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(hour))
		var (
			wg      sync.WaitGroup
			editErr error
			fireErr error
		)
		wg.Go(func() {
			_, _, editErr = b.s.UpsertSnipe(b.ctx, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(900)), Item: item(b.now.Add(hour))}, b.now)
		})
		wg.Go(func() {
			fireErr = b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring})
		})
		wg.Wait()
		if fireErr != nil {
			t.Fatalf("Transition = %v, want the fire to win or go second", fireErr)
		}
		got := b.get(t, b.alice.ID, 1)
		switch {
		case editErr == nil && got.Bid == 900:
		case errors.Is(editErr, store.ErrConflict) && got.Bid == 500:
		default:
			t.Errorf("edit = %v, stored bid %v; want (nil, 9.00) or (ErrConflict, 5.00)", editErr, got.Bid)
		}
	}},
	{"UpdateItem", func(t *testing.T, b *bundle) {
		s := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(500)), Delay: ptr(4), Item: item(b.now.Add(hour))})
		it := item(b.now.Add(2 * hour))
		it.Title, it.CurrentPrice, it.Bids, it.Ended = "new title", 4200, 9, true
		if err := b.s.UpdateItem(b.ctx, s.ID, it); err != nil {
			t.Fatalf("UpdateItem = %v", err)
		}
		got := b.get(t, b.alice.ID, 1)
		want := s
		want.Item = it
		want.FireAt = it.End.Add(-4 * time.Second)
		if !equalSnipe(got, want) {
			t.Errorf("after UpdateItem:\n %+v\nwant\n %+v", got, want)
		}
		wantErr(t, "UpdateItem(unknown id)", b.s.UpdateItem(b.ctx, s.ID+1000, it), store.ErrNotFound)
	}},
}
