package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// addNotifier saves a webhook target of accountID subscribed to events.
func (b *bundle) addNotifier(t *testing.T, accountID int64, events ...store.EventType) store.Notifier {
	t.Helper()
	n, err := b.s.AddNotifier(b.ctx, store.NewNotifier{AccountID: accountID, Kind: store.KindWebhook,
		SealedURL: []byte("sealed-url"), SealedSecret: []byte("sealed-secret"), MaskedURL: "https://example.test/hook",
		Events: events, Now: b.now})
	if err != nil {
		t.Fatalf("AddNotifier = %v", err)
	}
	return n
}

// due returns the pending deliveries due at b.now as "eventType→notifierID".
func (b *bundle) due(t *testing.T) []store.Delivery {
	t.Helper()
	d, err := b.s.DueDeliveries(b.ctx, b.now, 0, 0)
	if err != nil {
		t.Fatalf("DueDeliveries = %v", err)
	}
	return d
}

// eventTypes lists an account's events, oldest first.
func (b *bundle) eventTypes(t *testing.T, accountID int64) []store.EventType {
	t.Helper()
	evs, err := b.s.Events(b.ctx, accountID, 0, 0)
	if err != nil {
		t.Fatalf("Events = %v", err)
	}
	var out []store.EventType
	for _, e := range slices.Backward(evs) {
		out = append(out, e.Type)
	}
	return out
}

func (b *bundle) lastEvent(t *testing.T, accountID int64) (store.Event, store.SnipeEventData) {
	t.Helper()
	evs, err := b.s.Events(b.ctx, accountID, 0, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Events(limit 1) = %d events, %v; want 1", len(evs), err)
	}
	var d store.SnipeEventData
	if err := json.Unmarshal(evs[0].Data, &d); err != nil {
		t.Fatalf("event data %s: %v", evs[0].Data, err)
	}
	return evs[0], d
}

func (b *bundle) settle(t *testing.T, id int64, from store.State, o outcome.Code) {
	t.Helper()
	if err := b.s.Transition(b.ctx, store.TransitionParams{ID: id, From: []store.State{from}, To: store.StateSettled, Outcome: o, Detail: "detail"}); err != nil {
		t.Fatalf("Transition(%d → settled %d) = %v", id, o, err)
	}
}

var notifyTests = []test{
	{"NotifiersScoped", func(t *testing.T, b *bundle) {
		n := b.addNotifier(t, b.alice.ID, store.EventSnipeWon, store.EventSnipeLost)
		if n.ID == 0 || n.AccountID != b.alice.ID || n.Kind != store.KindWebhook || string(n.SealedSecret) != "sealed-secret" ||
			!slices.Equal(n.Events, []store.EventType{store.EventSnipeWon, store.EventSnipeLost}) || n.Disabled || !n.CreatedAt.Equal(b.now) {
			t.Errorf("AddNotifier = %+v", n)
		}
		all := b.addNotifier(t, b.alice.ID)
		if all.Events != nil {
			t.Errorf("AddNotifier(no events).Events = %v, want nil (all)", all.Events)
		}
		list, err := b.s.Notifiers(b.ctx, b.alice.ID)
		if err != nil || len(list) != 2 || list[0].ID != n.ID || list[1].ID != all.ID {
			t.Errorf("Notifiers(alice) = %+v, %v; want both, oldest first", list, err)
		}
		if list, _ := b.s.Notifiers(b.ctx, b.bob.ID); len(list) != 0 {
			t.Errorf("Notifiers(bob) = %+v, want none", list)
		}
		_, err = b.s.NotifierByID(b.ctx, b.bob.ID, n.ID)
		wantErr(t, "NotifierByID(bob, alice's)", err, store.ErrNotFound)
		wantErr(t, "DeleteNotifier(bob, alice's)", b.s.DeleteNotifier(b.ctx, b.bob.ID, n.ID), store.ErrNotFound)
		wantErr(t, "EnableNotifier(bob, alice's)", b.s.EnableNotifier(b.ctx, b.bob.ID, n.ID), store.ErrNotFound)
		if err := b.s.DeleteNotifier(b.ctx, b.alice.ID, n.ID); err != nil {
			t.Errorf("DeleteNotifier = %v", err)
		}
		_, err = b.s.NotifierByID(b.ctx, b.alice.ID, n.ID)
		wantErr(t, "NotifierByID(deleted)", err, store.ErrNotFound)
	}},
	{"EmitFansOutBySubscription", func(t *testing.T, b *bundle) {
		won := b.addNotifier(t, b.alice.ID, store.EventSnipeWon)
		all := b.addNotifier(t, b.alice.ID)
		b.addNotifier(t, b.bob.ID)
		ev, emitted, err := b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSearchMatch, Data: []byte(`{}`), Now: b.now})
		if err != nil || !emitted || ev.ID == 0 {
			t.Fatalf("EmitEvent = %+v, %v, %v", ev, emitted, err)
		}
		d := b.due(t)
		if len(d) != 1 || d[0].Notifier.ID != all.ID || d[0].Event.ID != ev.ID || string(d[0].Event.Data) != `{}` {
			t.Fatalf("due after search.match = %+v; want one delivery to the all-events target", d)
		}
		// Dedup: the same key emits nothing the second time.
		for i, want := range []bool{true, false} {
			_, emitted, err := b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSnipeWon, Data: []byte(`{}`), Dedup: "k", Now: b.now})
			if err != nil || emitted != want {
				t.Errorf("EmitEvent(dedup k) #%d = %v, %v; want emitted %v", i+1, emitted, err, want)
			}
		}
		// The same key in another account is another event.
		if _, emitted, _ := b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.bob.ID, Type: store.EventSnipeWon, Data: []byte(`{}`), Dedup: "k", Now: b.now}); !emitted {
			t.Error("EmitEvent(bob, dedup k) emitted = false, want true")
		}
		if got := len(b.due(t)); got != 1+2+1 {
			t.Errorf("due deliveries = %d, want 4 (search.match to one, snipe.won to two, bob's)", got)
		}
		// A test event goes to the addressed target only.
		b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventTest, Data: []byte(`{}`), NotifierID: won.ID, Now: b.now})
		// ... and never to another account's target.
		b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.bob.ID, Type: store.EventTest, Data: []byte(`{}`), NotifierID: won.ID, Now: b.now})
		var tests []int64
		for _, d := range b.due(t) {
			if d.Event.Type == store.EventTest {
				tests = append(tests, d.Notifier.ID)
			}
		}
		if !slices.Equal(tests, []int64{won.ID}) {
			t.Errorf("test deliveries to %v, want only %d", tests, won.ID)
		}
		if got := b.eventTypes(t, b.alice.ID); !slices.Equal(got, []store.EventType{store.EventSearchMatch, store.EventSnipeWon}) {
			t.Errorf("Events(alice) = %v; want search.match, snipe.won (test events are not listed)", got)
		}
	}},
	{"TransitionsEmit", func(t *testing.T, b *bundle) {
		b.addNotifier(t, b.alice.ID)
		end := b.now.Add(hour)
		s := b.snipe(t, b.alice.ID, 7, 2500, end)
		b.transition(t, s.ID, store.StateScheduled, store.StateFiring)
		if got := b.eventTypes(t, b.alice.ID); len(got) != 0 {
			t.Fatalf("events after firing = %v, want none", got)
		}
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: s.ID, From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: outcome.Placed, PlacedAt: b.now}); err != nil {
			t.Fatal(err)
		}
		b.settle(t, s.ID, store.StatePlaced, outcome.Won)
		ev, d := b.lastEvent(t, b.alice.ID)
		want := store.SnipeEventData{ItemNo: "7", Title: "Vintage camera", Bid: 25, Currency: "USD", CurrentPrice: 12.5,
			EndTime: end.Format("2006-01-02 15:04:05"), Outcome: 1, Status: "Won", Message: outcome.Of(outcome.Won).Message, Detail: "detail"}
		if ev.Type != store.EventSnipeWon || d != want {
			t.Errorf("last event = %s %+v, want snipe.won %+v", ev.Type, d, want)
		}
		lost := b.snipe(t, b.alice.ID, 8, 2500, end)
		b.settle(t, lost.ID, store.StateScheduled, outcome.Outbid)
		if ev, d := b.lastEvent(t, b.alice.ID); ev.Type != store.EventSnipeLost || d.Outcome != -1 || d.Status != "Outbid" {
			t.Errorf("last event = %s %+v, want snipe.lost -1 Outbid", ev.Type, d)
		}
		// The user's own choices and group follow-ups tell nobody.
		for i, o := range []outcome.Code{outcome.Disabled, outcome.GroupWon} {
			sn := b.snipe(t, b.alice.ID, int64(20+i), 2500, end)
			b.settle(t, sn.ID, store.StateScheduled, o)
		}
		// A failed compare-and-set writes nothing.
		if err := b.s.Transition(b.ctx, store.TransitionParams{ID: lost.ID, From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: outcome.Won}); err == nil {
			t.Error("Transition from the wrong state = nil, want ErrConflict")
		}
		want2 := []store.EventType{store.EventSnipePlaced, store.EventSnipeWon, store.EventSnipeLost}
		if got := b.eventTypes(t, b.alice.ID); !slices.Equal(got, want2) {
			t.Errorf("events = %v, want %v", got, want2)
		}
		if got := len(b.due(t)); got != 3 {
			t.Errorf("due deliveries = %d, want 3", got)
		}
	}},
	{"LinkBrokenOncePerBreak", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		for i := range 3 {
			sn := b.snipe(t, b.alice.ID, int64(i+1), 2500, end)
			b.settle(t, sn.ID, store.StateScheduled, outcome.MarketAuth)
		}
		want := []store.EventType{store.EventSnipeLost, store.EventMarketLinkBroken, store.EventSnipeLost, store.EventSnipeLost}
		if got := b.eventTypes(t, b.alice.ID); !slices.Equal(got, want) {
			t.Errorf("events after three market-auth settlements = %v, want %v", got, want)
		}
		// An accepted bid proves the link works; the next break is news.
		ok := b.snipe(t, b.alice.ID, 10, 2500, end)
		b.transition(t, ok.ID, store.StateScheduled, store.StatePlaced)
		again := b.snipe(t, b.alice.ID, 11, 2500, end)
		b.settle(t, again.ID, store.StateScheduled, outcome.MarketAuth)
		if ev, _ := b.lastEvent(t, b.alice.ID); ev.Type != store.EventMarketLinkBroken {
			t.Errorf("last event after placed then market-auth = %s, want market.link_broken", ev.Type)
		}
		// Linking the account again makes the next break news too.
		if err := b.s.SetMarketLink(b.ctx, store.MarketLink{AccountID: b.alice.ID, Market: "https://api.ebay.com", SealedToken: []byte("t"), LinkedAt: b.now}); err != nil {
			t.Fatal(err)
		}
		relinked := b.snipe(t, b.alice.ID, 12, 2500, end)
		b.settle(t, relinked.ID, store.StateScheduled, outcome.MarketAuth)
		if ev, _ := b.lastEvent(t, b.alice.ID); ev.Type != store.EventMarketLinkBroken {
			t.Errorf("last event after relinking then market-auth = %s, want market.link_broken", ev.Type)
		}
		// Bob's link is his own.
		bobs := b.snipe(t, b.bob.ID, 1, 2500, end)
		b.settle(t, bobs.ID, store.StateScheduled, outcome.MarketAuth)
		if got := b.eventTypes(t, b.bob.ID); !slices.Equal(got, []store.EventType{store.EventSnipeLost, store.EventMarketLinkBroken}) {
			t.Errorf("bob's events = %v", got)
		}
	}},
	{"WarningOncePerMaximum", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		sn := b.snipe(t, b.alice.ID, 1, 2500, end)
		it := item(end)
		update := func(price money.Amount) {
			t.Helper()
			it.CurrentPrice = price
			if err := b.s.UpdateItem(b.ctx, sn.ID, it); err != nil {
				t.Fatalf("UpdateItem(price %s) = %v", price, err)
			}
		}
		update(2499)
		if got := b.eventTypes(t, b.alice.ID); len(got) != 0 {
			t.Fatalf("events below the maximum = %v, want none", got)
		}
		update(2500)
		update(2600)
		if got := b.eventTypes(t, b.alice.ID); !slices.Equal(got, []store.EventType{store.EventSnipeWarning}) {
			t.Fatalf("events at and above the maximum = %v, want one snipe.warning", got)
		}
		ev, d := b.lastEvent(t, b.alice.ID)
		if d.ItemNo != "1" || d.Bid != 25 || d.CurrentPrice != 25 || d.Message == "" {
			t.Errorf("warning %d data = %+v", ev.ID, d)
		}
		// A raised maximum that is passed again warns again.
		b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(3000)), Item: it})
		update(3100)
		// Not for a watched item, a disabled snipe, or a snipe whose bid left.
		b.snipe(t, b.alice.ID, 2, 0, end)
		w := b.get(t, b.alice.ID, 2)
		dis := b.upsert(t, b.alice.ID, 3, store.SnipeChange{Bid: ptr(money.Amount(100)), Enabled: ptr(false), Item: item(end)})
		fired := b.snipe(t, b.alice.ID, 4, 100, end)
		b.transition(t, fired.ID, store.StateScheduled, store.StateFiring)
		for _, id := range []int64{w.ID, dis.ID, fired.ID} {
			if err := b.s.UpdateItem(b.ctx, id, item(end)); err != nil {
				t.Fatal(err)
			}
		}
		if got := b.eventTypes(t, b.alice.ID); !slices.Equal(got, []store.EventType{store.EventSnipeWarning, store.EventSnipeWarning}) {
			t.Errorf("events = %v, want two warnings (one per maximum)", got)
		}
		wantErr(t, "UpdateItem(missing)", b.s.UpdateItem(b.ctx, 99999, it), store.ErrNotFound)
	}},
	{"DeliveryLifecycle", func(t *testing.T, b *bundle) {
		n := b.addNotifier(t, b.alice.ID)
		other := b.addNotifier(t, b.alice.ID)
		b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSnipeWon, Data: []byte(`{}`), Now: b.now})
		d := b.due(t)
		if len(d) != 2 || d[0].Notifier.ID != n.ID || d[0].Attempts != 0 {
			t.Fatalf("due = %+v", d)
		}
		lease := b.now.Add(time.Minute)
		if ok, err := b.s.ClaimDelivery(b.ctx, d[0], lease); !ok || err != nil {
			t.Fatalf("ClaimDelivery = %v, %v; want claimed", ok, err)
		}
		if ok, err := b.s.ClaimDelivery(b.ctx, d[0], lease); ok || err != nil {
			t.Errorf("second ClaimDelivery = %v, %v; want not claimed", ok, err)
		}
		if got := b.due(t); len(got) != 1 || got[0].Notifier.ID != other.ID {
			t.Errorf("due while leased = %+v, want only the other target's", got)
		}
		retry := b.now.Add(30 * time.Second)
		if err := b.s.FinishDelivery(b.ctx, store.DeliveryResult{EventID: d[0].Event.ID, NotifierID: n.ID, Error: "HTTP 500", RetryAt: retry, Now: b.now}); err != nil {
			t.Fatal(err)
		}
		got, _ := b.s.DueDeliveries(b.ctx, retry, 0, 0)
		if len(got) != 2 || got[1].Notifier.ID != n.ID || got[1].Attempts != 1 || !got[1].NextAt.Equal(retry) {
			t.Errorf("due at the retry time = %+v; want the retried delivery with 1 attempt", got)
		}
		nn, _ := b.s.NotifierByID(b.ctx, b.alice.ID, n.ID)
		if nn.LastStatus != "retrying" || nn.LastError != "HTTP 500" || nn.Failures != 1 || !nn.LastAt.Equal(b.now) {
			t.Errorf("notifier after a failure = %+v", nn)
		}
		b.s.ClaimDelivery(b.ctx, got[1], retry.Add(time.Minute))
		if err := b.s.FinishDelivery(b.ctx, store.DeliveryResult{EventID: d[0].Event.ID, NotifierID: n.ID, Delivered: true, Now: retry}); err != nil {
			t.Fatal(err)
		}
		nn, _ = b.s.NotifierByID(b.ctx, b.alice.ID, n.ID)
		if nn.LastStatus != "delivered" || nn.Failures != 0 || nn.LastError != "" {
			t.Errorf("notifier after delivery = %+v", nn)
		}
		// Disabling fails the target's other pending deliveries and stops new ones.
		b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSnipeLost, Data: []byte(`{}`), Now: b.now})
		if err := b.s.FinishDelivery(b.ctx, store.DeliveryResult{EventID: d[1].Event.ID, NotifierID: other.ID, Error: "kept failing", Disable: true, Now: b.now}); err != nil {
			t.Fatal(err)
		}
		oo, _ := b.s.NotifierByID(b.ctx, b.alice.ID, other.ID)
		if !oo.Disabled || oo.DisabledReason != "kept failing" || oo.LastStatus != "failed" {
			t.Errorf("disabled notifier = %+v", oo)
		}
		b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSnipeLost, Data: []byte(`{}`), Now: b.now})
		for _, d := range b.due(t) {
			if d.Notifier.ID == other.ID {
				t.Errorf("disabled target still has a due delivery: %+v", d)
			}
		}
		if err := b.s.EnableNotifier(b.ctx, b.alice.ID, other.ID); err != nil {
			t.Fatal(err)
		}
		if oo, _ := b.s.NotifierByID(b.ctx, b.alice.ID, other.ID); oo.Disabled || oo.Failures != 0 {
			t.Errorf("re-enabled notifier = %+v", oo)
		}
		// Pruning keeps events with pending deliveries.
		n2, err := b.s.PruneEvents(b.ctx, b.now.Add(time.Second))
		if err != nil || n2 != 1 {
			t.Errorf("PruneEvents = %d, %v; want 1 (the delivered event)", n2, err)
		}
	}},
	{"SearchRuns", func(t *testing.T, b *bundle) {
		b.addNotifier(t, b.alice.ID)
		sr, _, _ := b.s.AddSearch(b.ctx, b.alice.ID, "camera", b.now)
		if !sr.LastRun.IsZero() || !sr.NextRun.IsZero() || sr.NewCount != 0 {
			t.Errorf("new search = %+v; want never run and due at once", sr)
		}
		b.s.AddSearch(b.ctx, b.bob.ID, "lens", b.now)
		due, err := b.s.SearchesDue(b.ctx, b.now, 0)
		if err != nil || len(due) != 2 {
			t.Fatalf("SearchesDue = %+v, %v; want both new searches", due, err)
		}
		data := func(items []int64) ([]byte, error) { return json.Marshal(items) }
		next := b.now.Add(15 * time.Minute)
		fresh, err := b.s.RecordSearchRun(b.ctx, store.SearchRun{AccountID: b.alice.ID, SearchID: sr.ID, Items: []int64{1, 2}, Baseline: true, MatchData: data, Now: b.now, NextRun: next})
		if err != nil || !slices.Equal(fresh, []int64{1, 2}) {
			t.Errorf("baseline run = %v, %v; want both items new", fresh, err)
		}
		if got := b.eventTypes(t, b.alice.ID); len(got) != 0 {
			t.Errorf("events after the baseline = %v, want none", got)
		}
		got, _ := b.s.SearchByID(b.ctx, b.alice.ID, sr.ID)
		if !got.LastRun.Equal(b.now) || !got.NextRun.Equal(next) || got.NewCount != 0 {
			t.Errorf("search after baseline = %+v", got)
		}
		if due, _ := b.s.SearchesDue(b.ctx, b.now, 0); len(due) != 1 {
			t.Errorf("SearchesDue after the run = %d, want 1 (bob's)", len(due))
		}
		fresh, err = b.s.RecordSearchRun(b.ctx, store.SearchRun{AccountID: b.alice.ID, SearchID: sr.ID, Items: []int64{3, 2, 1}, MatchData: data, Now: next, NextRun: next.Add(time.Hour)})
		if err != nil || !slices.Equal(fresh, []int64{3}) {
			t.Errorf("second run = %v, %v; want [3]", fresh, err)
		}
		evs, _ := b.s.Events(b.ctx, b.alice.ID, 0, 0)
		if len(evs) != 1 || evs[0].Type != store.EventSearchMatch || string(evs[0].Data) != "[3]" {
			t.Errorf("events = %+v; want one search.match with [3]", evs)
		}
		if got, _ := b.s.SearchByID(b.ctx, b.alice.ID, sr.ID); got.NewCount != 1 {
			t.Errorf("NewCount = %d, want 1", got.NewCount)
		}
		seen, err := b.s.SearchSeen(b.ctx, sr.ID, []int64{1, 3, 4})
		if err != nil || len(seen) != 2 || seen[1] != (store.Seen{At: b.now, Baseline: true}) || seen[3] != (store.Seen{At: next}) {
			t.Errorf("SearchSeen = %v, %v", seen, err)
		}
		// Nothing new: no event, count back to 0.
		if fresh, _ := b.s.RecordSearchRun(b.ctx, store.SearchRun{AccountID: b.alice.ID, SearchID: sr.ID, Items: []int64{1, 3}, MatchData: data, Now: next, NextRun: next}); len(fresh) != 0 {
			t.Errorf("third run new = %v, want none", fresh)
		}
		if n := len(b.eventTypes(t, b.alice.ID)); n != 1 {
			t.Errorf("events after a run with nothing new = %d, want 1", n)
		}
		_, err = b.s.RecordSearchRun(b.ctx, store.SearchRun{AccountID: b.bob.ID, SearchID: sr.ID, Items: []int64{9}, MatchData: data, Now: next, NextRun: next})
		wantErr(t, "RecordSearchRun(bob, alice's search)", err, store.ErrNotFound)
		_, err = b.s.SearchByID(b.ctx, b.bob.ID, sr.ID)
		wantErr(t, "SearchByID(bob, alice's)", err, store.ErrNotFound)
	}},
	{"DueDeliveriesPerNotifier", func(t *testing.T, b *bundle) {
		busy := b.addNotifier(t, b.alice.ID, store.EventSnipeLost)
		other := b.addNotifier(t, b.alice.ID, store.EventSnipeWon)
		for _, typ := range []store.EventType{store.EventSnipeLost, store.EventSnipeLost, store.EventSnipeLost, store.EventSnipeWon} {
			if _, _, err := b.s.EmitEvent(b.ctx, store.NewEvent{AccountID: b.alice.ID, Type: typ, Data: []byte(`{}`), Now: b.now}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.s.DueDeliveries(b.ctx, b.now, 3, 2)
		var targets []int64
		for _, d := range got {
			targets = append(targets, d.Notifier.ID)
		}
		if want := []int64{busy.ID, busy.ID, other.ID}; err != nil || !slices.Equal(targets, want) {
			t.Errorf("DueDeliveries(limit 3, 2 per target) targets = %v, %v; want %v (the third of target %d left out)", targets, err, want, busy.ID)
		}
		if all, _ := b.s.DueDeliveries(b.ctx, b.now, 0, 0); len(all) != 4 {
			t.Errorf("DueDeliveries without limits = %d deliveries, want 4", len(all))
		}
	}},
	{"DeferSearch", func(t *testing.T, b *bundle) {
		first, _, _ := b.s.AddSearch(b.ctx, b.alice.ID, "camera", b.now)
		second, _, _ := b.s.AddSearch(b.ctx, b.alice.ID, "lens", b.now)
		later := b.now.Add(time.Minute)
		if err := b.s.DeferSearch(b.ctx, b.alice.ID, first.ID, later); err != nil {
			t.Fatalf("DeferSearch = %v", err)
		}
		due, err := b.s.SearchesDue(b.ctx, b.now, 1)
		if err != nil || len(due) != 1 || due[0].ID != second.ID {
			t.Errorf("SearchesDue(limit 1) after deferring search %d = %+v, %v; want search %d", first.ID, due, err, second.ID)
		}
		got, _ := b.s.SearchByID(b.ctx, b.alice.ID, first.ID)
		if !got.NextRun.Equal(later) || !got.LastRun.IsZero() {
			t.Errorf("deferred search = %+v; want next run %s and still never run", got, later)
		}
		if due, _ := b.s.SearchesDue(b.ctx, later, 0); len(due) != 2 {
			t.Errorf("SearchesDue at the deferred time = %d searches, want 2", len(due))
		}
		wantErr(t, "DeferSearch(bob, alice's search)", b.s.DeferSearch(b.ctx, b.bob.ID, first.ID, later), store.ErrNotFound)
	}},
}

// concurrencyTests run the event-writing paths from many goroutines on a
// fresh store (empty statement caches): every call must return, and the
// events must match the transitions that won.
var concurrencyTests = []test{
	{"EventsUnderConcurrentWrites", func(t *testing.T, b *bundle) {
		b.addNotifier(t, b.alice.ID)
		end := b.now.Add(hour)
		const workers, per = 8, 12
		ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var won atomic.Int64
		errs := make(chan error, workers*per*4)
		for w := range workers {
			wg.Go(func() {
				for i := range per {
					no := int64(1000*w + i + 1)
					bid := money.Amount(2000)
					sn, _, err := b.s.UpsertSnipe(ctx, b.alice.ID, no, store.SnipeChange{Bid: &bid, Item: item(end)}, b.now)
					if err != nil {
						errs <- err
						return
					}
					it := item(end)
					it.CurrentPrice = 2500
					if err := b.s.UpdateItem(ctx, sn.ID, it); err != nil {
						errs <- err
					}
					if err := b.s.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring, Outcome: outcome.Pending}); err != nil {
						errs <- err
						continue
					}
					if err := b.s.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: outcome.Placed, PlacedAt: b.now, Durable: true}); err != nil {
						errs <- err
						continue
					}
					if err := b.s.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StatePlaced}, To: store.StateSettled, Outcome: outcome.Won}); err == nil {
						won.Add(1)
					} else {
						errs <- err
					}
					if _, _, err := b.s.EmitEvent(ctx, store.NewEvent{AccountID: b.alice.ID, Type: store.EventSearchMatch, Data: []byte(`{}`), Now: b.now}); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent write: %v", err)
		}
		evs, err := b.s.Events(b.ctx, b.alice.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		count := map[store.EventType]int{}
		for _, e := range evs {
			count[e.Type]++
		}
		n := workers * per
		if count[store.EventSnipeWon] != int(won.Load()) || count[store.EventSnipePlaced] != n || count[store.EventSnipeWarning] != n || count[store.EventSearchMatch] != n {
			t.Errorf("events = %v; want %d placed, %d won, %d warnings, %d search.match", count, n, won.Load(), n, n)
		}
	}},
}
