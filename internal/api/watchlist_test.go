package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/store"
)

func TestImportWatchList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a, c, ended := b.item(), b.item(), b.item()
	for _, it := range []int64{a.ItemNo, c.ItemNo, ended.ItemNo} {
		if err := b.market.Watch(ctx, "alice", it); err != nil {
			t.Fatalf("Watch: %v", err)
		}
	}
	if err := b.market.EndEarly(ctx, ended.ItemNo, false); err != nil {
		t.Fatalf("EndEarly: %v", err)
	}
	list, err := b.market.Sim.WatchList(ctx, "alice")
	if err != nil || len(list) < 2 {
		t.Fatalf("simulator watch list = %d items, %v", len(list), err)
	}
	b.call("addBid", "item_no", itoa(c.ItemNo), "bid", "30").wantOK(t)

	r := b.call("importWatchList")
	r.wantOK(t)
	// The sniped item and the ended one are skipped.
	if integer(t, r.body, "items_imported") != int64(len(list)-2) || integer(t, r.body, "items_skipped") != 2 || str(t, r.body, "message") == "" {
		t.Errorf("importWatchList = %s, want %d imported, 2 skipped", r.raw, len(list)-2)
	}
	if _, err := b.store.Snipe(ctx, b.paid.ID, ended.ItemNo); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ended item imported: Snipe = %v, want ErrNotFound", err)
	}
	sn, err := b.store.Snipe(ctx, b.paid.ID, a.ItemNo)
	if err != nil || sn.Bid != 0 || sn.Item.Title != a.Title {
		t.Errorf("imported snipe = %+v, %v; want a watched item with its snapshot", sn, err)
	}
	if sn, _ := b.store.Snipe(ctx, b.paid.ID, c.ItemNo); sn.Bid != 3000 {
		t.Errorf("existing snipe bid = %s, want 30.00 untouched", sn.Bid)
	}
	r = b.call("importWatchList")
	r.wantOK(t)
	if integer(t, r.body, "items_imported") != 0 || integer(t, r.body, "items_skipped") != int64(len(list)) {
		t.Errorf("second import = %s, want 0 imported, %d skipped", r.raw, len(list))
	}
	// Other accounts are untouched.
	if r := b.callKey(b.otherKey, "getUserItems", "filter", "watched"); integer(t, r.body, "total") != 0 {
		t.Errorf("bob's watched = %s", r.raw)
	}
	b.market.FailNext(sim.OpWatchList, 1)
	b.call("importWatchList").wantError(t, 503, "unavailable", "")
}

func TestImportWatchListJoinsRunningImport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gate, entered := b.market.hold()

	var wg sync.WaitGroup
	results := make([]resp, 2)
	wg.Add(1)
	go func() { defer wg.Done(); results[0] = b.call("importWatchList") }()
	<-entered // the first import is inside WatchList
	wg.Add(1)
	go func() { defer wg.Done(); results[1] = b.call("importWatchList") }()
	// The second request logs that it joined before it waits.
	waitFor(t, func() bool { return strings.Contains(b.logs.String(), "watch list import joined") })
	close(gate)
	wg.Wait()
	joined := 0
	for _, r := range results {
		r.wantOK(t)
		if n := integer(t, r.body, "items_imported"); n == 0 || n != integer(t, results[0].body, "items_imported") {
			t.Errorf("result = %s, want the shared run's count", r.raw)
		}
		if boolean(t, r.body, "joined") {
			joined++
		}
	}
	if joined != 1 {
		t.Errorf("%d responses joined, want 1", joined)
	}
	if len(entered) != 0 {
		t.Errorf("WatchList called %d extra times, want once in all", len(entered))
	}
}

func TestImportWatchListSurvivesDisconnect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gate, entered := b.market.hold()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/importWatchList?key="+b.paidKey, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := b.srv.Client().Do(req); err == nil {
			res.Body.Close()
		}
	}()
	<-entered
	cancel()
	<-done
	close(gate)
	waitFor(t, func() bool { return strings.Contains(b.logs.String(), "watch list imported") })
	page, total, err := b.store.ListEntries(context.Background(), b.paid.ID, store.ListQuery{Filter: store.FilterWatched, OrderBy: "ends", Limit: 20, Now: t0})
	if err != nil || total == 0 || len(page) == 0 {
		t.Errorf("after a disconnected import: %d watched, %v; want the import finished", total, err)
	}
}

// waitFor polls cond: it checks effects of goroutines the test does not
// own (the server's), never timing itself.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
