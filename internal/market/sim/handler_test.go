package sim_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/store"
)

// resolveTestKey maps "key-ann" to ann; anything else is an unknown key.
func resolveTestKey(_ *http.Request, k string) (string, error) {
	if name, ok := strings.CutPrefix(k, "key-"); ok && name != "" {
		return name, nil
	}
	return "", store.ErrNotFound
}

// get calls the control surface and decodes the JSON body.
func (b *bundle) get(t *testing.T, target string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.sim.Handler(resolveTestKey).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("GET %s: status %d, body %q is not JSON: %v", target, rec.Code, rec.Body.String(), err)
	}
	return rec.Code, body
}

// ok calls target and requires a 200 with status OK.
func (b *bundle) ok(t *testing.T, target string) map[string]any {
	t.Helper()
	code, body := b.get(t, target)
	if code != http.StatusOK || body["status"] != "OK" {
		t.Fatalf("GET %s = %d %v, want 200 OK", target, code, body)
	}
	return body
}

func TestHandlerScenario(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := b.ok(t, "/sim/createItem?title=Leica+M6&start_price=100&ends_in=30.5&reserve=150&currency=GBP&country=GB&seller=sally&category=Cameras:Film")
	no, _ := body["item_no"].(string)
	if no == "" || strings.Trim(no, "0123456789") != "" {
		t.Fatalf("item_no = %v, want digits", body["item_no"])
	}
	if want := t0.Add(30500 * time.Millisecond).Format("2006-01-02 15:04:05"); body["endTime"] != want {
		t.Errorf("endTime = %v, want %s", body["endTime"], want)
	}

	bid := b.ok(t, "/sim/placeBid?item_no="+no+"&bidder=rival1&max=120")
	if bid["accepted"] != true || bid["high_bidder"] != "rival1" || bid["current_price"] != 100.0 || bid["reserve_met"] != false {
		t.Errorf("first rival bid = %v", bid)
	}
	bid = b.ok(t, "/sim/placeBid?item_no="+no+"&bidder=rival2&max=101")
	if bid["accepted"] != false || bid["reason"] != "bid-incr" || bid["current_price"] != 100.0 || bid["minimum_to_bid"] != 102.0 {
		t.Errorf("bid under the increment = %v, want rejected bid-incr, price 100, minimum 102", bid)
	}
	if msg, _ := bid["message"].(string); !strings.Contains(msg, "increment") {
		t.Errorf("rejection message %q does not explain", msg)
	}
	bid = b.ok(t, "/sim/placeBid?item_no="+no+"&bidder=sally&max=500")
	if bid["accepted"] != false || bid["reason"] != "seller" {
		t.Errorf("seller's bid = %v", bid)
	}
	b.ok(t, "/sim/placeBid?item_no="+no+"&bidder=rival2&max=200")

	item := b.ok(t, "/sim/item?item_no="+no)
	if item["title"] != "Leica M6" || item["currency"] != "GBP" || item["country"] != "GB" || item["seller"] != "sally" || item["category"] != "Cameras:Film" {
		t.Errorf("item listing fields = %v", item)
	}
	if item["current_price"] != 150.0 || item["reserve"] != 150.0 || item["reserve_met"] != true || item["high_bidder"] != "rival2" || item["ended"] != false || item["winner"] != "" {
		t.Errorf("item state = %v, want rival2 leading at the 150 reserve", item)
	}
	if item["start_ms"] != float64(t0.UnixMilli()) || item["end_ms"] != float64(t0.Add(30500*time.Millisecond).UnixMilli()) {
		t.Errorf("start_ms %v end_ms %v", item["start_ms"], item["end_ms"])
	}
	bids, _ := item["bids"].([]any)
	if len(bids) != 4 {
		t.Fatalf("bids = %v, want 4 in arrival order", item["bids"])
	}
	first, _ := bids[0].(map[string]any)
	if first["bidder"] != "rival1" || first["max"] != 120.0 || first["accepted"] != true || first["time_ms"] != float64(t0.UnixMilli()) || first["reason"] != "high-bidder" {
		t.Errorf("first bid = %v", first)
	}
	second, _ := bids[1].(map[string]any)
	if second["accepted"] != false || second["reason"] != "bid-incr" {
		t.Errorf("second bid = %v", second)
	}

	b.clock.Advance(31 * time.Second)
	item = b.ok(t, "/sim/item?item_no="+no)
	if item["ended"] != true || item["end_reason"] != "ended" || item["winner"] != "rival2" {
		t.Errorf("after the end: %v, want ended, won by rival2", item)
	}
	if bid := b.ok(t, "/sim/placeBid?item_no="+no+"&bidder=late&max=900"); bid["accepted"] != false || bid["reason"] != "ended" {
		t.Errorf("late bid = %v", bid)
	}
}

func TestHandlerEndAndBuy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := itoa(b.create(t, sim.NewItem{BINPrice: 50_00}))
	body := b.ok(t, "/sim/buyItNow?item_no="+no+"&bidder=ann")
	if body["winner"] != "ann" || body["price"] != 50.0 || body["end_reason"] != "bin" {
		t.Errorf("buyItNow = %v", body)
	}
	if code, body := b.get(t, "/sim/buyItNow?item_no="+no+"&bidder=bob"); code != http.StatusConflict || body["error"] != httperr.CodeConflict {
		t.Errorf("second buyItNow = %d %v, want 409", code, body)
	}
	if code, _ := b.get(t, "/sim/endItem?item_no="+no+"&reason=cancel"); code != http.StatusConflict {
		t.Errorf("ending an ended item = %d, want 409", code)
	}

	sold := itoa(b.create(t, sim.NewItem{}))
	b.ok(t, "/sim/placeBid?item_no="+sold+"&bidder=ann&max=3")
	body = b.ok(t, "/sim/endItem?item_no="+sold+"&reason=sell")
	if body["end_reason"] != "sold-early" || body["winner"] != "ann" {
		t.Errorf("endItem sell = %v", body)
	}
	cancel := itoa(b.create(t, sim.NewItem{}))
	b.ok(t, "/sim/placeBid?item_no="+cancel+"&bidder=ann&max=3")
	body = b.ok(t, "/sim/endItem?item_no="+cancel+"&reason=cancel")
	if body["end_reason"] != "cancelled" || body["winner"] != "" {
		t.Errorf("endItem cancel = %v", body)
	}
	if bid := b.ok(t, "/sim/placeBid?item_no="+cancel+"&bidder=bob&max=9"); bid["reason"] != "ended-early" {
		t.Errorf("bid on a cancelled item = %v", bid)
	}
}

func TestHandlerWatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{EndsIn: time.Hour})
	body := b.ok(t, "/sim/watch?key=key-ann&item_no="+itoa(no))
	if body["user"] != "ann" {
		t.Errorf("watch = %v", body)
	}
	w, _ := b.sim.WatchList(b.ctx, "ann")
	found := false
	for _, it := range w {
		found = found || it.ItemNo == no
	}
	if !found {
		t.Errorf("item %d not on ann's watch list", no)
	}
	if code, body := b.get(t, "/sim/watch?key=nope&item_no="+itoa(no)); code != http.StatusUnauthorized || body["error"] != httperr.CodeInvalidKey {
		t.Errorf("bad key = %d %v, want 401 invalid_key", code, body)
	}
	if code, body := b.get(t, "/sim/watch?item_no="+itoa(no)); code != http.StatusUnauthorized || body["error"] != httperr.CodeMissingKey {
		t.Errorf("no key = %d %v, want 401 missing_key", code, body)
	}
	if code, _ := b.get(t, "/sim/watch?key=key-ann&item_no=5"); code != http.StatusNotFound {
		t.Errorf("unknown item = %d, want 404", code)
	}
}

func TestHandlerFail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	n := itoa(no)
	b.ok(t, "/sim/fail?kind=unavailable&count=1&op=placeBid")
	if _, err := b.sim.PlaceBid(b.ctx, "ann", no, 2_00); !market.Transient(err) {
		t.Errorf("after fail count=1: %v, want unavailable", err)
	}
	b.ok(t, "/sim/fail?kind=unavailable&item_no="+n)
	if _, err := b.sim.Item(b.ctx, no); !market.Transient(err) {
		t.Errorf("after fail item: %v, want unavailable", err)
	}
	b.ok(t, "/sim/fail?kind=unavailable&item_no="+n+"&off=1")
	b.ok(t, "/sim/fail?kind=unauthorized&user=ann")
	if _, err := b.sim.PlaceBid(b.ctx, "ann", no, 2_00); err == nil || market.Transient(err) {
		t.Errorf("unauthorized: %v", err)
	}
	b.ok(t, "/sim/fail?kind=ineligible&user=bob&item_no="+n)
	if _, err := b.sim.PlaceBid(b.ctx, "bob", no, 2_00); err == nil {
		t.Errorf("ineligible bob could bid")
	}
	b.ok(t, "/sim/fail?kind=clear")
	if _, err := b.sim.PlaceBid(b.ctx, "ann", no, 2_00); err != nil {
		t.Errorf("after clear: %v", err)
	}
	b.ok(t, "/sim/fail?kind=remove&item_no="+n)
	if code, _ := b.get(t, "/sim/item?item_no="+n); code != http.StatusNotFound {
		t.Errorf("removed item = %d, want 404", code)
	}
	b.ok(t, "/sim/fail?kind=remove&item_no="+n+"&off=1")
	b.ok(t, "/sim/item?item_no="+n)

	// lost-answer: recorded, answered with a timeout.
	if body := b.ok(t, "/sim/fail?kind=lost-answer&count=1&item_no="+n); body["count"] != 1.0 || body["item_no"] != n {
		t.Errorf("lost-answer = %v", body)
	}
	if _, err := b.sim.PlaceBid(b.ctx, "ann", no, 3_00); !errors.Is(err, sim.ErrLostAnswer) || !market.Transient(err) {
		t.Errorf("bid after lost-answer = %v, want a transient lost answer", err)
	}
	if st, _ := b.sim.BidState(b.ctx, "ann", no); st.MaxBid != 3_00 {
		t.Errorf("the lost answer's bid is not in: %+v", st)
	}
	b.ok(t, "/sim/fail?kind=lost-answer&count=5")
	b.ok(t, "/sim/fail?kind=lost-answer&off=1")
	if _, err := b.sim.PlaceBid(b.ctx, "ann", no, 4_00); err != nil {
		t.Errorf("bid after lost-answer off = %v", err)
	}

	// stale: BidState shows the past; the control surface the truth.
	b.clock.Advance(time.Second)
	if body := b.ok(t, "/sim/fail?kind=stale&ms=500&item_no="+n); body["ms"] != 500.0 {
		t.Errorf("stale = %v", body)
	}
	b.ok(t, "/sim/placeBid?item_no="+n+"&bidder=ann&max=9")
	if st, _ := b.sim.BidState(b.ctx, "ann", no); st.MaxBid != 4_00 {
		t.Errorf("stale BidState max = %v, want the 4.00 of 1 s ago", st.MaxBid)
	}
	if item := b.ok(t, "/sim/item?item_no="+n); item["bid_count"] != 4.0 {
		t.Errorf("/sim/item under stale shows %v bids, want the true 4", item["bid_count"])
	}
	b.ok(t, "/sim/fail?kind=stale&item_no="+n+"&off=1")
	if st, _ := b.sim.BidState(b.ctx, "ann", no); st.MaxBid != 9_00 {
		t.Errorf("BidState after stale off = %v, want 9.00", st.MaxBid)
	}

	// slow: answered after the stall (checked in TestSlow); here the rule
	// is set and cleared.
	if body := b.ok(t, "/sim/fail?kind=slow&ms=250&count=2&op=bidState"); body["ms"] != 250.0 || body["count"] != 2.0 || body["op"] != "bidState" {
		t.Errorf("slow = %v", body)
	}
	b.ok(t, "/sim/fail?kind=slow&off=1")
	if _, err := b.sim.BidState(b.ctx, "ann", no); err != nil {
		t.Errorf("BidState after slow off = %v (a fake clock would hang a stall)", err)
	}

	// clock: read, jump, read.
	body := b.ok(t, "/sim/clock")
	if body["skew_ms"] != 0.0 || body["market_now_ms"] != float64(b.clock.Now().UnixMilli()) {
		t.Errorf("clock = %v, want skew 0 at the local time", body)
	}
	body = b.ok(t, "/sim/clock?skew=-2.5s")
	if body["skew_ms"] != -2500.0 || body["skew"] != "-2.5s" || body["market_now_ms"] != float64(b.clock.Now().Add(-2500*time.Millisecond).UnixMilli()) {
		t.Errorf("clock?skew=-2.5s = %v", body)
	}
	if item := b.ok(t, "/sim/item?item_no="+n); item["market_now_ms"] != body["market_now_ms"] {
		t.Errorf("/sim/item market_now_ms = %v, want %v", item["market_now_ms"], body["market_now_ms"])
	}
}

func TestHandlerBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := itoa(b.create(t, sim.NewItem{}))
	listed, _ := b.sim.Search(b.ctx, "", "", 1000)
	tests := []struct {
		target string
		status int
		code   string
		param  string
	}{
		{"/sim/createItem?start_price=1&ends_in=30", 400, httperr.CodeMissingParameter, "title"},
		{"/sim/createItem?title=x&ends_in=30", 400, httperr.CodeMissingParameter, "start_price"},
		{"/sim/createItem?title=x&start_price=1", 400, httperr.CodeMissingParameter, "ends_in"},
		{"/sim/createItem?title=x&start_price=1.234&ends_in=30", 400, httperr.CodeInvalidParameter, "start_price"},
		{"/sim/createItem?title=x&start_price=-1&ends_in=30", 400, httperr.CodeInvalidParameter, "start_price"},
		{"/sim/createItem?title=x&start_price=0&ends_in=30", 400, httperr.CodeInvalidParameter, "start_price"},
		{"/sim/createItem?title=x&start_price=1&ends_in=0.5", 400, httperr.CodeInvalidParameter, "ends_in"},
		{"/sim/createItem?title=x&start_price=1&ends_in=NaN", 400, httperr.CodeInvalidParameter, "ends_in"},
		{"/sim/createItem?title=x&start_price=1&ends_in=abc", 400, httperr.CodeInvalidParameter, "ends_in"},
		{"/sim/createItem?title=x&start_price=1&ends_in=99999999", 400, httperr.CodeInvalidParameter, "ends_in"},
		{"/sim/createItem?title=x&start_price=10&ends_in=30&reserve=5", 400, httperr.CodeInvalidParameter, "reserve"},
		{"/sim/createItem?title=x&start_price=10&ends_in=30&bin_price=10", 400, httperr.CodeInvalidParameter, "bin_price"},
		{"/sim/createItem?title=x&start_price=10&ends_in=30&reserve=50&bin_price=40", 400, httperr.CodeInvalidParameter, "bin_price"},
		{"/sim/createItem?title=x&start_price=1&ends_in=30&currency=JPY", 400, httperr.CodeInvalidParameter, "currency"},
		{"/sim/createItem?title=x&start_price=1&ends_in=30&country=FR", 400, httperr.CodeInvalidParameter, "country"},
		{"/sim/createItem?title=x&start_price=1&ends_in=30&seller=a+b", 400, httperr.CodeInvalidParameter, "seller"},
		{"/sim/createItem?title=" + strings.Repeat("x", 81) + "&start_price=1&ends_in=30", 400, httperr.CodeInvalidParameter, "title"},
		{"/sim/createItem?title=a%00b&start_price=1&ends_in=30", 400, httperr.CodeInvalidParameter, "title"},
		{"/sim/createItem?title=x&title=y&start_price=1&ends_in=30", 400, httperr.CodeRepeatedParameter, "title"},
		{"/sim/placeBid?bidder=a&max=1", 400, httperr.CodeMissingParameter, "item_no"},
		{"/sim/placeBid?item_no=abc&bidder=a&max=1", 400, httperr.CodeInvalidParameter, "item_no"},
		{"/sim/placeBid?item_no=-4&bidder=a&max=1", 400, httperr.CodeInvalidParameter, "item_no"},
		{"/sim/placeBid?item_no=" + no + "&max=1", 400, httperr.CodeMissingParameter, "bidder"},
		{"/sim/placeBid?item_no=" + no + "&bidder=" + strings.Repeat("a", 65) + "&max=1", 400, httperr.CodeInvalidParameter, "bidder"},
		{"/sim/placeBid?item_no=" + no + "&bidder=a", 400, httperr.CodeMissingParameter, "max"},
		{"/sim/placeBid?item_no=" + no + "&bidder=a&max=1e3", 400, httperr.CodeInvalidParameter, "max"},
		{"/sim/placeBid?item_no=999&bidder=a&max=1", 404, httperr.CodeNotFound, ""},
		{"/sim/endItem?item_no=" + no, 400, httperr.CodeMissingParameter, "reason"},
		{"/sim/endItem?item_no=" + no + "&reason=later", 400, httperr.CodeInvalidParameter, "reason"},
		{"/sim/endItem?item_no=999&reason=cancel", 404, httperr.CodeNotFound, ""},
		{"/sim/buyItNow?item_no=" + no, 400, httperr.CodeMissingParameter, "bidder"},
		{"/sim/buyItNow?item_no=" + no + "&bidder=ann", 409, httperr.CodeConflict, ""},
		{"/sim/item", 400, httperr.CodeMissingParameter, "item_no"},
		{"/sim/item?item_no=999", 404, httperr.CodeNotFound, ""},
		{"/sim/fail", 400, httperr.CodeMissingParameter, "kind"},
		{"/sim/fail?kind=explode", 400, httperr.CodeInvalidParameter, "kind"},
		{"/sim/fail?kind=unavailable", 400, httperr.CodeMissingParameter, "count"},
		{"/sim/fail?kind=unavailable&count=-1", 400, httperr.CodeInvalidParameter, "count"},
		{"/sim/fail?kind=unavailable&count=1&op=fly", 400, httperr.CodeInvalidParameter, "op"},
		{"/sim/fail?kind=clear&off=2", 400, httperr.CodeInvalidParameter, "off"},
		{"/sim/fail?kind=unauthorized", 400, httperr.CodeMissingParameter, "user"},
		{"/sim/fail?kind=lost-answer", 400, httperr.CodeMissingParameter, "count"},
		{"/sim/fail?kind=lost-answer&count=1.5", 400, httperr.CodeInvalidParameter, "count"},
		{"/sim/fail?kind=lost-answer&count=+1", 400, httperr.CodeInvalidParameter, "count"},
		{"/sim/fail?kind=lost-answer&count=1000001", 400, httperr.CodeInvalidParameter, "count"},
		{"/sim/fail?kind=lost-answer&count=1&op=item", 400, httperr.CodeInvalidParameter, "op"},
		{"/sim/fail?kind=lost-answer&count=1&item_no=0", 400, httperr.CodeInvalidParameter, "item_no"},
		{"/sim/fail?kind=lost-answer&count=1&item_no=999", 404, httperr.CodeNotFound, ""},
		{"/sim/fail?kind=slow&count=1", 400, httperr.CodeMissingParameter, "ms"},
		{"/sim/fail?kind=slow&ms=100", 400, httperr.CodeMissingParameter, "count"},
		{"/sim/fail?kind=slow&ms=-1&count=1", 400, httperr.CodeInvalidParameter, "ms"},
		{"/sim/fail?kind=slow&ms=1e3&count=1", 400, httperr.CodeInvalidParameter, "ms"},
		{"/sim/fail?kind=slow&ms=600001&count=1", 400, httperr.CodeInvalidParameter, "ms"},
		{"/sim/fail?kind=slow&ms=100&count=1&op=fly", 400, httperr.CodeInvalidParameter, "op"},
		{"/sim/fail?kind=slow&ms=100&count=1&item_no=x", 400, httperr.CodeInvalidParameter, "item_no"},
		{"/sim/fail?kind=slow&ms=100&ms=200&count=1", 400, httperr.CodeRepeatedParameter, "ms"},
		{"/sim/fail?kind=stale", 400, httperr.CodeMissingParameter, "ms"},
		{"/sim/fail?kind=stale&ms=3600001", 400, httperr.CodeInvalidParameter, "ms"},
		{"/sim/fail?kind=stale&ms=100&op=bidState", 400, httperr.CodeInvalidParameter, "op"},
		{"/sim/fail?kind=stale&ms=100&item_no=999", 404, httperr.CodeNotFound, ""},
		{"/sim/clock?skew=5", 400, httperr.CodeInvalidParameter, "skew"},
		{"/sim/clock?skew=soon", 400, httperr.CodeInvalidParameter, "skew"},
		{"/sim/clock?skew=25h", 400, httperr.CodeInvalidParameter, "skew"},
		{"/sim/clock?skew=-25h", 400, httperr.CodeInvalidParameter, "skew"},
		{"/sim/clock?skew=1s&skew=2s", 400, httperr.CodeRepeatedParameter, "skew"},
		{"/sim/nothing", 404, httperr.CodeUnknownOperation, ""},
		{"/sim/createItem?title=%zz", 400, httperr.CodeInvalidParameter, ""},
	}
	for _, tt := range tests {
		code, body := b.get(t, tt.target)
		if code != tt.status || body["status"] != "ERROR" || body["error"] != tt.code || (tt.param != "" && body["param"] != tt.param) {
			t.Errorf("GET %s = %d %v, want %d %s param %q", tt.target, code, body, tt.status, tt.code, tt.param)
		}
		if msg, _ := body["message"].(string); msg == "" {
			t.Errorf("GET %s: empty message", tt.target)
		}
	}
	// Nothing was listed by the failed creates.
	if items, _ := b.sim.Search(b.ctx, "", "", 1000); len(items) != len(listed) {
		t.Errorf("bad createItem calls listed %d items", len(items)-len(listed))
	}
}

func TestHandlerMethodAndMount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := httptest.NewRecorder()
	b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sim/createItem", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d, want 405", rec.Code)
	}
	// Mounted under a base path without StripPrefix.
	no := itoa(b.create(t, sim.NewItem{}))
	rec = httptest.NewRecorder()
	b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/base/sim/item?item_no="+no, nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /base/sim/item = %d, want 200", rec.Code)
	}
	// Without a resolver, /sim/watch is unavailable, not a crash.
	rec = httptest.NewRecorder()
	b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sim/watch?key=k&item_no="+no, nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("watch without resolver = %d, want 503", rec.Code)
	}
}

func TestHandlerImages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	items, _ := b.sim.Search(b.ctx, "", "", 1)
	it := items[0]
	for _, u := range append([]string{it.PictureURL}, it.Images...) {
		path := strings.TrimPrefix(u, "http://sim.test")
		rec := httptest.NewRecorder()
		b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(rec.Body.String(), "<svg") {
			t.Errorf("GET %s = %d %s %.40q", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	for _, path := range []string{"/sim/img/1.svg", "/sim/img/abc.svg", "/sim/img/" + itoa(it.ItemNo) + ".png", "/sim/img/" + itoa(it.ItemNo) + "-9.svg"} {
		rec := httptest.NewRecorder()
		b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, rec.Code)
		}
	}
	// Titles are escaped in the SVG.
	no := itoa(b.create(t, sim.NewItem{Title: `<script>alert("x")</script> & more`}))
	rec := httptest.NewRecorder()
	b.sim.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sim/img/"+no+".svg", nil))
	if strings.Contains(rec.Body.String(), "<script>") {
		t.Errorf("SVG contains an unescaped title: %s", rec.Body.String())
	}
}
