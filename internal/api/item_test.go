package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
)

// itemFields are spec 2.3's fields by JSON type.
var (
	itemStrings = []string{"status", "alert", "item_no", "currency", "country", "ends", "endTime", "startTime", "timeLeft",
		"sellerUserId", "shippingType", "category", "title", "message", "pictureURL", "galleryUrl"}
	itemInts    = []string{"bids", "marketplaceItemId"}
	itemNumbers = []string{"cost", "currentPrice", "sellerPercent", "sellerScore"}
)

func checkItemInfo(t *testing.T, got map[string]any, it market.Item, now time.Time) {
	t.Helper()
	for _, k := range itemStrings {
		str(t, got, k)
	}
	for _, k := range itemInts {
		integer(t, got, k)
	}
	for _, k := range itemNumbers {
		num(t, got, k)
	}
	want := map[string]any{
		"status": "OK", "alert": "success", "item_no": itoa(it.ItemNo), "bids": float64(it.Bids), "cost": it.ShippingCost.Float(),
		"currentPrice": it.CurrentPrice.Float(), "currency": it.Currency, "country": it.Country,
		"ends": clock.FormatUTC(it.End), "endTime": clock.FormatUTC(it.End), "startTime": clock.FormatUTC(it.Start),
		"marketplaceItemId": float64(it.ItemNo), "sellerPercent": it.SellerPercent, "sellerScore": float64(it.SellerScore),
		"sellerUserId": it.SellerID, "shippingType": it.ShippingType, "category": it.Category, "title": it.Title,
		"message": "", "pictureURL": it.PictureURL, "galleryUrl": it.PictureURL,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if imgs := arr(t, got, "images"); len(imgs) != len(it.Images) {
		t.Errorf("images = %v, want %v", imgs, it.Images)
	}
}

func TestFetchItem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item(endsIn(2*time.Hour + 5*time.Minute))
	no := itoa(it.ItemNo)

	b.call("fetchItem", "item_no", no).wantError(t, 404, "not_found", "item_no")
	b.call("addBid", "item_no", no).wantOK(t)
	r := b.call("fetchItem", "item_no", no)
	r.wantOK(t)
	checkItemInfo(t, r.body, it, t0)
	if r.body["timeLeft"] != "2h 5m" {
		t.Errorf("timeLeft = %v, want 2h 5m", r.body["timeLeft"])
	}
	b.callKey(b.otherKey, "fetchItem", "item_no", no).wantError(t, 404, "not_found", "item_no")

	// The fetch refreshes the stored snapshot.
	b.rivalBid(it.ItemNo, "rival1")
	b.rivalBid(it.ItemNo, "rival2")
	fresh, _ := b.market.Item(context.Background(), it.ItemNo)
	b.call("fetchItem", "item_no", no).wantOK(t)
	sn, _ := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
	if sn.Item.CurrentPrice != fresh.CurrentPrice || sn.Item.Bids != 2 {
		t.Errorf("snapshot after fetch = %+v, want price %s and 2 bids", sn.Item, fresh.CurrentPrice)
	}

	b.market.FailItem(it.ItemNo, sim.OpItem, true)
	b.call("fetchItem", "item_no", no).wantError(t, 503, "unavailable", "")
}

func TestFetchItemGoneFromMarketplace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	b.call("addBid", "item_no", itoa(it.ItemNo)).wantOK(t)
	if err := b.market.RemoveItem(context.Background(), it.ItemNo, true); err != nil {
		t.Fatal(err)
	}
	r := b.call("fetchItem", "item_no", itoa(it.ItemNo))
	r.wantOK(t)
	if r.body["title"] != it.Title || r.body["message"] == "" || r.body["timeLeft"] != "ended" {
		t.Errorf("fetchItem of a vanished item = %s", r.raw)
	}
	// The chart operations fall back to the snapshot the same way.
	b.call("getBidHistoryDataset", "item_no", itoa(it.ItemNo)).wantOK(t)
	b.call("getBidderDataset", "item_no", itoa(it.ItemNo)).wantOK(t)
}

func TestFetchAnyItem(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{fetchAny: true})
	it := b.item()
	r := b.call("fetchItem", "item_no", itoa(it.ItemNo))
	r.wantOK(t)
	checkItemInfo(t, r.body, it, t0)
	b.call("fetchItem", "item_no", "77").wantError(t, 404, "not_found", "item_no")
}

// TestMarketClockOffset: item end times are marketplace times. With the
// local clock 5 minutes behind, timeLeft and the current/completed filters
// follow the marketplace's clock (local + the sniper's measured offset).
func TestMarketClockOffset(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{localBehind: 5 * time.Minute})
	it := b.item(endsIn(2*time.Hour + 5*time.Minute))
	no := itoa(it.ItemNo)
	b.call("addBid", "item_no", no, "bid", "30").wantOK(t)
	r := b.call("fetchItem", "item_no", no)
	r.wantOK(t)
	if r.body["timeLeft"] != "2h 5m" {
		t.Errorf("timeLeft = %v, want 2h 5m (marketplace clock)", r.body["timeLeft"])
	}
	// Ended on the marketplace 1 minute ago; locally 4 minutes to go.
	b.clock.Advance(2*time.Hour + 6*time.Minute)
	for _, tt := range []struct {
		filter string
		want   int64
	}{{"current", 0}, {"completed", 1}} {
		r := b.call("getUserItems", "filter", tt.filter)
		r.wantOK(t)
		if got := integer(t, r.body, "total"); got != tt.want {
			t.Errorf("getUserItems(filter=%s) total = %d, want %d", tt.filter, got, tt.want)
		}
	}
}
