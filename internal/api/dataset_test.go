package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestBidHistoryDataset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item(titled("Leica M3"), endsIn(5*time.Hour))
	no := itoa(it.ItemNo)
	h1 := t0
	b.rivalBid(it.ItemNo, "rival1")
	b.clock.Advance(2 * time.Hour)
	h2 := h1.Add(2 * time.Hour)
	b.rivalBid(it.ItemNo, "rival2")
	hist, _ := b.market.History(context.Background(), it.ItemNo)
	if len(hist) != 2 {
		t.Fatalf("simulator history = %v, want 2 bids", hist)
	}

	b.call("getBidHistoryDataset", "item_no", no).wantError(t, 404, "not_found", "item_no")
	b.call("addBid", "item_no", no, "bid", "45.5").wantOK(t)
	b.callKey(b.otherKey, "getBidHistoryDataset", "item_no", no).wantError(t, 404, "not_found", "item_no")

	r := b.call("getBidHistoryDataset", "item_no", no)
	if r.status != 200 {
		t.Fatalf("status = %d: %s", r.status, r.raw)
	}
	var sets []map[string]any
	if err := json.Unmarshal(r.raw, &sets); err != nil || len(sets) != 2 {
		t.Fatalf("body = %s, want an array of 2 datasets (%v)", r.raw, err)
	}
	hds, line := sets[0], sets[1]
	if hds["label"] != "Leica M3" {
		t.Errorf("history label = %v", hds["label"])
	}
	pts := hds["data"].([]any)
	if len(pts) != 2 || pts[0].(map[string]any)["x"] != float64(h1.UnixMilli()) || pts[1].(map[string]any)["y"] != hist[1].Price.Float() {
		t.Errorf("history data = %v", pts)
	}
	lp := line["data"].([]any)
	if len(lp) != 2 || lp[0].(map[string]any)["x"] != float64(h1.UnixMilli()) || lp[1].(map[string]any)["x"] != float64(h2.UnixMilli()) ||
		lp[0].(map[string]any)["y"] != 45.5 || lp[1].(map[string]any)["y"] != 45.5 {
		t.Errorf("snipe line = %v", lp)
	}
	if line["label"] != "Your snipe: 45.50 USD" {
		t.Errorf("snipe label = %v", line["label"])
	}

	r = b.call("getBidderDataset", "item_no", no)
	r.wantOK(t)
	labels := arr(t, r.body, "labels")
	ds := arr(t, r.body, "datasets")
	if len(labels) != 2 || labels[0] != "2026-03-14 12:00:00" || len(ds) != 2 {
		t.Fatalf("getBidderDataset = %s", r.raw)
	}
	d0 := ds[0].(map[string]any)
	for _, k := range []string{"label", "fillColor", "strokeColor", "pointColor", "pointStrokeColor"} {
		str(t, d0, k)
	}
	if data := arr(t, d0, "data"); len(data) != 2 || data[1] != hist[1].Price.Float() {
		t.Errorf("bidder data = %v", data)
	}
	b.callKey(b.otherKey, "getBidderDataset", "item_no", no).wantError(t, 404, "not_found", "item_no")
	b.call("getBidderDataset", "item_no", "0").wantError(t, 400, "invalid_parameter", "item_no")
}

func TestBidHistoryDatasetNoBids(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	b.call("addBid", "item_no", itoa(it.ItemNo)).wantOK(t)
	r := b.call("getBidHistoryDataset", "item_no", itoa(it.ItemNo))
	var sets []map[string]any
	if err := json.Unmarshal(r.raw, &sets); err != nil || len(sets) != 2 {
		t.Fatalf("body = %s (%v)", r.raw, err)
	}
	if d := sets[0]["data"].([]any); len(d) != 0 {
		t.Errorf("history = %v, want empty", d)
	}
	lp := sets[1]["data"].([]any)
	if lp[0].(map[string]any)["x"] != float64(it.Start.UnixMilli()) || lp[1].(map[string]any)["x"] != float64(it.End.UnixMilli()) {
		t.Errorf("snipe line = %v, want the listing's start and end", lp)
	}
}
