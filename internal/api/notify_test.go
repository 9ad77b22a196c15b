package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/store"
)

// hookReceiver records webhook requests.
type hookReceiver struct {
	mu     sync.Mutex
	sigs   []string
	bodies []string
}

func newHookReceiver(t *testing.T) (*hookReceiver, string) {
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.sigs = append(h.sigs, r.Header.Get(notify.SignatureHeader))
		h.bodies = append(h.bodies, string(body))
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func TestNotifiers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc, base := newHookReceiver(t)
	r := b.call("addNotifier", "url", base+"/hooks/secret-token", "events", "snipe.won, snipe.lost,snipe.won")
	r.wantOK(t)
	id := integer(t, r.body, "id")
	secret := str(t, r.body, "secret")
	if !strings.HasPrefix(secret, "whsec_") || str(t, r.body, "kind") != "webhook" || strings.Contains(str(t, r.body, "url"), "secret-token") {
		t.Errorf("addNotifier = %s", r.raw)
	}
	if ev := arr(t, r.body, "events"); len(ev) != 2 || ev[0] != "snipe.won" || ev[1] != "snipe.lost" {
		t.Errorf("events = %v, want [snipe.won snipe.lost]", ev)
	}
	r = b.call("getNotifiers")
	r.wantOK(t)
	list := arr(t, r.body, "notifiers")
	if len(list) != 1 {
		t.Fatalf("getNotifiers = %s", r.raw)
	}
	n := list[0].(map[string]any)
	if integer(t, n, "id") != id || str(t, n, "last_status") != "never" || integer(t, n, "enabled") != 1 || strings.Contains(string(r.raw), "whsec_") {
		t.Errorf("getNotifiers entry = %v (secrets must never be listed)", n)
	}
	if r := b.callKey(b.otherKey, "getNotifiers"); len(arr(t, r.body, "notifiers")) != 0 {
		t.Errorf("another account sees targets: %s", r.raw)
	}
	b.callKey(b.otherKey, "testNotifier", "id", itoa(id)).wantError(t, 404, "not_found", "id")
	b.callKey(b.otherKey, "deleteNotifier", "id", itoa(id)).wantError(t, 404, "not_found", "id")

	r = b.call("testNotifier", "id", itoa(id))
	r.wantOK(t)
	if integer(t, r.body, "delivered") != 1 || str(t, r.body, "alert") != "success" {
		t.Errorf("testNotifier = %s", r.raw)
	}
	rc.mu.Lock()
	if len(rc.bodies) != 1 || rc.sigs[0] != notify.Sign(secret, b.clock.Now(), []byte(rc.bodies[0])) || !strings.Contains(rc.bodies[0], `"type":"test"`) {
		t.Errorf("receiver got %q with signatures %q", rc.bodies, rc.sigs)
	}
	rc.mu.Unlock()
	r = b.call("getNotifiers")
	if n := arr(t, r.body, "notifiers")[0].(map[string]any); str(t, n, "last_status") != "delivered" || !dateTimeRE.MatchString(str(t, n, "last_attempt_at")) {
		t.Errorf("after a test: %v", n)
	}

	// Shoutrrr URLs have no secret.
	r = b.call("addNotifier", "url", "ntfy://ntfy.example.com/sniped-topic")
	r.wantOK(t)
	if _, has := r.body["secret"]; has || str(t, r.body, "kind") != "shoutrrr" || len(arr(t, r.body, "events")) != len(store.EventTypes) {
		t.Errorf("addNotifier(ntfy) = %s", r.raw)
	}

	// A target whose deliveries kept failing is disabled, and the list
	// says so without assuming how long the retries ran.
	ntfy := integer(t, r.body, "id")
	ev, _, err := b.store.EmitEvent(context.Background(), store.NewEvent{AccountID: b.paid.ID, Type: store.EventSnipeWon, Data: []byte(`{}`), Now: b.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.FinishDelivery(context.Background(), store.DeliveryResult{EventID: ev.ID, NotifierID: ntfy, Disable: true,
		Error: "gave up after 1m0s of retries (4 attempts); last error: the target answered HTTP 500", Now: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	r = b.call("getNotifiers")
	if msg := str(t, r.body, "message"); !strings.HasSuffix(msg, "1 target is disabled because deliveries kept failing (see disabled_reason): fix the receiver, then a delivered testNotifier enables a target again") {
		t.Errorf("getNotifiers message with a disabled target = %q", msg)
	}
	if n := arr(t, r.body, "notifiers")[1].(map[string]any); integer(t, n, "enabled") != 0 || !strings.HasPrefix(str(t, n, "disabled_reason"), "gave up after 1m0s") {
		t.Errorf("disabled target = %v", n)
	}

	r = b.call("deleteNotifier", "id", itoa(id))
	r.wantOK(t)
	b.call("deleteNotifier", "id", itoa(id)).wantError(t, 404, "not_found", "id")
	b.call("testNotifier", "id", itoa(id)).wantError(t, 404, "not_found", "id")

	for _, tt := range []struct {
		op, raw     string
		code, param string
	}{
		{"addNotifier", "", "missing_parameter", "url"},
		{"addNotifier", "url=example.com", "invalid_parameter", "url"},
		{"addNotifier", "url=nosuch%3A%2F%2Fx%2Fy", "invalid_parameter", "url"},
		{"addNotifier", "url=https%3A%2F%2Fa.example&url=https%3A%2F%2Fb.example", "repeated_parameter", "url"},
		{"addNotifier", "url=https%3A%2F%2Fa.example&events=snipe.wonn", "invalid_parameter", "events"},
		{"addNotifier", "url=https%3A%2F%2Fa.example&events=snipe.won,", "invalid_parameter", "events"},
		{"addNotifier", "url=https%3A%2F%2Fa.example&events=test", "invalid_parameter", "events"},
		{"deleteNotifier", "", "missing_parameter", "id"},
		{"deleteNotifier", "id=0", "invalid_parameter", "id"},
		{"testNotifier", "id=x", "invalid_parameter", "id"},
	} {
		r := b.raw(http.MethodGet, "/"+tt.op+"?key="+b.paidKey+"&"+tt.raw)
		r.wantError(t, 400, tt.code, tt.param)
		if msg := str(t, r.body, "message"); !strings.Contains(msg, tt.param) {
			t.Errorf("%s?%s message %q does not name %s", tt.op, tt.raw, msg, tt.param)
		}
	}
	if strings.Contains(b.logs.String(), "secret-token") {
		t.Error("the service log holds a target URL's token")
	}
}

func TestNotifierLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range notify.MaxNotifiers {
		b.call("addNotifier", "url", "https://example.com/hook/"+itoa(int64(i))).wantOK(t)
	}
	r := b.call("addNotifier", "url", "https://example.com/one-too-many")
	r.wantError(t, 400, "invalid_parameter", "url")
	if !strings.Contains(str(t, r.body, "message"), "delete one first") {
		t.Errorf("limit message = %s", r.raw)
	}
	b.callKey(b.otherKey, "addNotifier", "url", "https://example.com/hook").wantOK(t) // per account
}

func TestNotifyOff(t *testing.T) {
	t.Parallel()
	// A server without the service answers 503 for what needs it, and
	// still lists targets and runs saved searches as plain searches.
	off := setupWith(t, options{notifyOff: true})
	off.call("addNotifier", "url", "https://example.com/hook").wantError(t, 503, "unavailable", "")
	off.call("testNotifier", "id", "1").wantError(t, 503, "unavailable", "")
	off.call("getNotifiers").wantOK(t)
	off.item(titled("Offcam"))
	id := itoa(integer(t, off.call("addSearch", "query", "offcam").body, "id"))
	r := off.call("getSearchResults", "id", id)
	r.wantOK(t)
	if integer(t, r.body, "count") != 1 {
		t.Errorf("saved search without the service = %s", r.raw)
	}
}

func TestSavedSearchRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.item(titled("Quuxcam alpha"))
	r := b.call("addSearch", "query", "quuxcam")
	r.wantOK(t)
	id := itoa(integer(t, r.body, "id"))
	e := arr(t, b.call("getUserSearches").body, "searches")[0].(map[string]any)
	if str(t, e, "last_run") != "" || str(t, e, "next_run") != "" || integer(t, e, "new_count") != 0 {
		t.Errorf("a search never run = %v", e)
	}
	// The first run remembers what is listed without notifying.
	r = b.call("getSearchResults", "id", id)
	r.wantOK(t)
	if integer(t, r.body, "count") != 1 || integer(t, r.body, "new_count") != 0 || str(t, r.body, "query") != "quuxcam" {
		t.Errorf("first run = %s", r.raw)
	}
	b.clock.Advance(30 * time.Minute)
	fresh := b.item(titled("Quuxcam beta"))
	r = b.call("getSearchResults", "id", id)
	r.wantOK(t)
	if integer(t, r.body, "new_count") != 1 || integer(t, r.body, "count") != 2 {
		t.Errorf("second run = %s", r.raw)
	}
	for _, it := range arr(t, r.body, "items") {
		m := it.(map[string]any)
		wantNew := int64(0)
		if m["item_no"] == itoa(fresh.ItemNo) {
			wantNew = 1
		}
		if integer(t, m, "new") != wantNew || !dateTimeRE.MatchString(str(t, m, "first_seen")) {
			t.Errorf("item %v: new = %v, want %d", m["item_no"], m["new"], wantNew)
		}
	}
	evs, err := b.store.Events(context.Background(), b.paid.ID, 0, 0)
	if err != nil || len(evs) != 1 || evs[0].Type != store.EventSearchMatch || !strings.Contains(string(evs[0].Data), itoa(fresh.ItemNo)) {
		t.Errorf("events = %+v, %v; want one search.match naming item %d", evs, err, fresh.ItemNo)
	}
	e = arr(t, b.call("getUserSearches").body, "searches")[0].(map[string]any)
	if !dateTimeRE.MatchString(str(t, e, "last_run")) || !dateTimeRE.MatchString(str(t, e, "next_run")) || integer(t, e, "new_count") != 1 {
		t.Errorf("after runs = %v", e)
	}
	b.callKey(b.otherKey, "getSearchResults", "id", id).wantError(t, 404, "not_found", "id")
	b.call("getSearchResults", "id", id, "query", "x").wantError(t, 400, "invalid_parameter", "id")
	b.call("getSearchResults", "id", "0").wantError(t, 400, "invalid_parameter", "id")
}

func TestSearchOffset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 105 {
		b.item(titled("Pagetest lens"))
	}
	r := b.call("getSearchResults", "query", "pagetest")
	r.wantOK(t)
	if integer(t, r.body, "count") != 100 || integer(t, r.body, "more") != 1 || !strings.Contains(str(t, r.body, "message"), "offset=100") {
		t.Errorf("first page: count %v more %v message %v", r.body["count"], r.body["more"], r.body["message"])
	}
	first := arr(t, r.body, "items")
	r = b.call("getSearchResults", "query", "pagetest", "offset", "100")
	r.wantOK(t)
	second := arr(t, r.body, "items")
	if integer(t, r.body, "count") != 5 || integer(t, r.body, "more") != 0 || integer(t, r.body, "offset") != 100 {
		t.Errorf("second page: %v %v", r.body["count"], r.body["more"])
	}
	seen := map[any]bool{}
	for _, it := range append(first, second...) {
		seen[it.(map[string]any)["item_no"]] = true
	}
	if len(seen) != 105 {
		t.Errorf("pages hold %d distinct items, want 105", len(seen))
	}
	for _, v := range []string{"-1", "901", "x"} {
		b.call("getSearchResults", "query", "pagetest", "offset", v).wantError(t, 400, "invalid_parameter", "offset")
	}
}

func TestLookupItem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item(titled("Lookup lens"), bids(2))
	r := b.call("lookupItem", "item_no", itoa(it.ItemNo))
	r.wantOK(t)
	if str(t, r.body, "title") != "Lookup lens" || num(t, r.body, "minimumToBid") != it.MinimumToBid.Float() ||
		integer(t, r.body, "ended") != 0 || str(t, r.body, "bid") != "" || integer(t, r.body, "bids") != 2 {
		t.Errorf("lookupItem = %s", r.raw)
	}
	b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "99").wantOK(t)
	if r := b.call("lookupItem", "item_no", itoa(it.ItemNo)); str(t, r.body, "bid") != "99.00" {
		t.Errorf("lookupItem after addBid: bid = %v, want 99.00", r.body["bid"])
	}
	// Another account sees the listing, not alice's bid.
	if r := b.callKey(b.otherKey, "lookupItem", "item_no", itoa(it.ItemNo)); str(t, r.body, "bid") != "" {
		t.Errorf("another account's lookup shows bid %v", r.body["bid"])
	}
	gone := b.item(ended())
	if r := b.call("lookupItem", "item_no", itoa(gone.ItemNo)); integer(t, r.body, "ended") != 1 {
		t.Errorf("lookupItem(ended) = %s", r.raw)
	}
	b.call("lookupItem", "item_no", "999999999").wantError(t, 404, "not_found", "item_no")
	b.call("lookupItem").wantError(t, 400, "missing_parameter", "item_no")
	b.call("lookupItem", "item_no", "12x").wantError(t, 400, "invalid_parameter", "item_no")
}

func TestBearerKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	get := func(query string, auth ...string) resp {
		t.Helper()
		sep := "?"
		if query != "" {
			sep = "&"
		}
		req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/justTesting"+query+sep+"arg1=x", nil)
		for _, a := range auth {
			req.Header.Add("Authorization", a)
		}
		res, err := b.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		r := resp{status: res.StatusCode, header: res.Header, raw: raw}
		json.Unmarshal(raw, &r.body)
		return r
	}
	get("", "Bearer "+b.paidKey).wantOK(t)
	get("", "bearer  "+b.paidKey+" ").wantOK(t)
	get("?key="+b.paidKey, "Bearer "+b.paidKey).wantOK(t)
	get("?key="+b.otherKey, "Bearer "+b.paidKey).wantError(t, 400, "invalid_parameter", "key")
	get("", "Basic "+b.paidKey).wantError(t, 400, "invalid_parameter", "Authorization")
	get("", "Bearer").wantError(t, 400, "invalid_parameter", "Authorization")
	get("", "Bearer "+b.paidKey, "Bearer "+b.paidKey).wantError(t, 400, "invalid_parameter", "Authorization")
	get("", "Bearer snp_wrong").wantError(t, 401, "invalid_key", "key")
	get("").wantError(t, 401, "missing_key", "key")
	// The header's key is never logged (the log holds paths and queries only).
	if strings.Contains(b.logs.String(), b.paidKey) {
		t.Error("a key reached the log")
	}
}

func TestGetEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for i := range 3 {
		if _, _, err := b.store.EmitEvent(ctx, store.NewEvent{AccountID: b.paid.ID, Type: store.EventSnipeWon,
			Data: []byte(`{"item_no":"` + itoa(int64(i+1)) + `"}`), Now: b.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	b.store.EmitEvent(ctx, store.NewEvent{AccountID: b.other.ID, Type: store.EventSnipeLost, Data: []byte(`{}`), Now: b.clock.Now()})
	r := b.call("getEvents", "limit", "2")
	r.wantOK(t)
	page := arr(t, r.body, "events")
	if len(page) != 2 {
		t.Fatalf("getEvents(limit 2) = %s", r.raw)
	}
	first := page[0].(map[string]any)
	if str(t, first, "type") != "snipe.won" || first["data"].(map[string]any)["item_no"] != "3" || !dateTimeRE.MatchString(str(t, first, "created_at")) {
		t.Errorf("newest event = %v", first)
	}
	last := integer(t, page[1].(map[string]any), "id")
	r = b.call("getEvents", "before", itoa(last))
	if rest := arr(t, r.body, "events"); len(rest) != 1 || rest[0].(map[string]any)["data"].(map[string]any)["item_no"] != "1" {
		t.Errorf("next page = %s", r.raw)
	}
	if r := b.callKey(b.otherKey, "getEvents"); len(arr(t, r.body, "events")) != 1 {
		t.Errorf("bob's events = %s, want only his own", r.raw)
	}
	for _, kv := range [][]string{{"limit", "0"}, {"limit", "101"}, {"before", "0"}, {"before", "x"}} {
		b.call("getEvents", kv...).wantError(t, 400, "invalid_parameter", kv[0])
	}
}
