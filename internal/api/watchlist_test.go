package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestImportWatchList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, c, d := b.item(), b.item(), b.item()
	b.market.mu.Lock()
	b.market.watch["alice"] = []int64{a.ItemNo, c.ItemNo, d.ItemNo}
	b.market.mu.Unlock()
	b.call("addBid", "item_no", itoa(c.ItemNo), "bid", "30").wantOK(t)

	r := b.call("importWatchList")
	r.wantOK(t)
	if integer(t, r.body, "items_imported") != 2 || integer(t, r.body, "items_skipped") != 1 || str(t, r.body, "message") == "" {
		t.Errorf("importWatchList = %s, want 2 imported, 1 skipped", r.raw)
	}
	sn, err := b.store.Snipe(context.Background(), b.paid.ID, a.ItemNo)
	if err != nil || sn.Bid != 0 {
		t.Errorf("imported snipe = %+v, %v; want a watched item", sn, err)
	}
	if sn, _ := b.store.Snipe(context.Background(), b.paid.ID, c.ItemNo); sn.Bid != 3000 {
		t.Errorf("existing snipe bid = %s, want 30.00 untouched", sn.Bid)
	}
	r = b.call("importWatchList")
	r.wantOK(t)
	if integer(t, r.body, "items_imported") != 0 || integer(t, r.body, "items_skipped") != 3 {
		t.Errorf("second import = %s, want 0 imported, 3 skipped", r.raw)
	}
	// Other accounts are untouched.
	if r := b.callKey(b.otherKey, "getUserItems", "filter", "watched"); integer(t, r.body, "total") != 0 {
		t.Errorf("bob's watched = %s", r.raw)
	}
}

func TestImportWatchListJoinsRunningImport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	gate, entered := make(chan struct{}), make(chan struct{}, 4)
	b.market.mu.Lock()
	b.market.watch["alice"] = []int64{it.ItemNo}
	b.market.gate, b.market.entered = gate, entered
	b.market.mu.Unlock()

	var wg sync.WaitGroup
	results := make([]resp, 2)
	wg.Add(1)
	go func() { defer wg.Done(); results[0] = b.call("importWatchList") }()
	<-entered // the first import is inside WatchList
	wg.Add(1)
	go func() { defer wg.Done(); results[1] = b.call("importWatchList") }()
	// Wait until the second request is parked on the running import.
	waitFor(t, func() bool { return strings.Contains(b.logs.String(), "watch list import joined") })
	close(gate)
	wg.Wait()
	joined := 0
	for _, r := range results {
		r.wantOK(t)
		if integer(t, r.body, "items_imported") != 1 {
			t.Errorf("result = %s, want the shared run's 1 imported", r.raw)
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
	it := b.item()
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	b.market.mu.Lock()
	b.market.watch["alice"] = []int64{it.ItemNo}
	b.market.gate, b.market.entered = gate, entered
	b.market.mu.Unlock()

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
	waitFor(t, func() bool {
		_, err := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
		return err == nil
	})
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
