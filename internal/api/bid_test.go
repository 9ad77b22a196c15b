package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

func TestAddBidCreatesAndUpdates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	no := itoa(it.ItemNo)

	r := b.call("addBid", "item_no", no, "bid", "25.5")
	r.wantOK(t)
	if str(t, r.body, "alert") != "success" || str(t, r.body, "message_color") != "green" {
		t.Errorf("alert/message_color = %v/%v, want success/green", r.body["alert"], r.body["message_color"])
	}
	if got := str(t, r.body, "bid"); got != "25.50" {
		t.Errorf("bid = %q, want %q", got, "25.50")
	}
	if got := str(t, r.body, "item_no"); got != no {
		t.Errorf("item_no = %q, want %q", got, no)
	}
	if got := integer(t, r.body, "delay"); got != store.DefaultDelay {
		t.Errorf("delay = %d, want default %d", got, store.DefaultDelay)
	}
	if got := integer(t, r.body, "group_id"); got != 0 {
		t.Errorf("group_id = %d, want 0", got)
	}
	if got := str(t, r.body, "groupName"); got != "" {
		t.Errorf("groupName = %q, want empty", got)
	}
	if !boolean(t, r.body, "new_snipe") {
		t.Errorf("new_snipe = false on creation")
	}
	if str(t, r.body, "short_message") == "" || !strings.Contains(str(t, r.body, "message"), "25.50 USD") {
		t.Errorf("short_message %q / message %q: want a confirmation naming the amount", r.body["short_message"], r.body["message"])
	}

	// An update changes only what is passed.
	r = b.call("addBid", "item_no", no, "delay", "3", "groupName", "cameras")
	r.wantOK(t)
	if boolean(t, r.body, "new_snipe") {
		t.Errorf("new_snipe = true on update")
	}
	if str(t, r.body, "bid") != "25.50" || integer(t, r.body, "delay") != 3 || str(t, r.body, "groupName") != "cameras" || integer(t, r.body, "group_id") <= 0 {
		t.Errorf("after update: %s", r.raw)
	}
	gid := integer(t, r.body, "group_id")

	// Same group name on another item reuses the group.
	it2 := b.item()
	r = b.call("addBid", "item_no", itoa(it2.ItemNo), "bid", "30", "groupName", "cameras")
	r.wantOK(t)
	if got := integer(t, r.body, "group_id"); got != gid {
		t.Errorf("second snipe group_id = %d, want %d", got, gid)
	}

	// Empty groupName removes the snipe from its group.
	r = b.call("addBid", "item_no", no, "groupName", "")
	r.wantOK(t)
	if integer(t, r.body, "group_id") != 0 || str(t, r.body, "groupName") != "" {
		t.Errorf("after groupName=\"\": %s", r.raw)
	}

	sn, err := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
	if err != nil {
		t.Fatalf("Snipe: %v", err)
	}
	if sn.Bid != 2550 || sn.Delay != 3 || !sn.Enabled || sn.GroupID != 0 || sn.Item.Title != it.Title {
		t.Errorf("stored snipe = %+v", sn)
	}
	if n := b.notified.count(); n != 4 {
		t.Errorf("Notifier.Changed called %d times, want 4", n)
	}
}

func TestAddBidWatchedAndDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	r := b.call("addBid", "item_no", itoa(it.ItemNo))
	r.wantOK(t)
	if str(t, r.body, "bid") != "0.00" || !boolean(t, r.body, "new_snipe") {
		t.Errorf("watched: %s", r.raw)
	}
	r = b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "0.00", "enabled", "0")
	r.wantOK(t)
	sn, _ := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
	if sn.Enabled || sn.Bid != 0 {
		t.Errorf("stored = %+v, want disabled watched item", sn)
	}
	// An empty optional parameter counts as absent.
	r = b.call("addBid", "item_no", itoa(it.ItemNo), "delay", "", "enabled", "", "bid", "")
	r.wantOK(t)
	if integer(t, r.body, "delay") != store.DefaultDelay || str(t, r.body, "bid") != "0.00" {
		t.Errorf("empty optional parameters changed the snipe: %s", r.raw)
	}
}

func TestAddBidMinimumAndForce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item(startPrice(2100))
	no := itoa(it.ItemNo)

	r := b.call("addBid", "item_no", no, "bid", "20.99")
	r.wantError(t, 400, "invalid_parameter", "bid")
	if msg := str(t, r.body, "message"); !strings.Contains(msg, "21.00 USD") {
		t.Errorf("message %q does not give the minimum with currency", msg)
	}
	if _, err := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo); err == nil {
		t.Errorf("a refused bid was stored")
	}

	b.call("addBid", "item_no", no, "bid", "21").wantOK(t)

	r = b.call("addBid", "item_no", no, "bid", "5", "force", "1")
	r.wantOK(t)
	if str(t, r.body, "message_color") != "orange" || !strings.Contains(str(t, r.body, "message"), "Warning") {
		t.Errorf("forced low bid: color %v, message %v; want orange with a warning", r.body["message_color"], r.body["message"])
	}
	if str(t, r.body, "bid") != "5.00" {
		t.Errorf("forced bid = %v, want 5.00", r.body["bid"])
	}
	// force is remembered: a later low bid on the forced snipe is kept too.
	b.call("addBid", "item_no", no, "bid", "6").wantOK(t)
	// force=0 brings the rule back.
	b.call("addBid", "item_no", no, "bid", "6", "force", "0").wantError(t, 400, "invalid_parameter", "bid")
}

func TestAddBidErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	live := itoa(b.item().ItemNo)
	endedNo := itoa(b.item(ended()).ItemNo)
	tests := []struct {
		name   string
		kv     []string
		status int
		code   string
		param  string
	}{
		{"missing item_no", nil, 400, "missing_parameter", "item_no"},
		{"empty item_no", []string{"item_no", ""}, 400, "missing_parameter", "item_no"},
		{"zero item_no", []string{"item_no", "0"}, 400, "invalid_parameter", "item_no"},
		{"negative item_no", []string{"item_no", "-5"}, 400, "invalid_parameter", "item_no"},
		{"plus item_no", []string{"item_no", "+5"}, 400, "invalid_parameter", "item_no"},
		{"text item_no", []string{"item_no", "abc"}, 400, "invalid_parameter", "item_no"},
		{"decimal item_no", []string{"item_no", "1.0"}, 400, "invalid_parameter", "item_no"},
		{"item_no over 2^63-1", []string{"item_no", "9223372036854775808"}, 400, "invalid_parameter", "item_no"},
		{"repeated item_no", []string{"item_no", live, "item_no", live}, 400, "repeated_parameter", "item_no"},
		{"bid 3 decimals", []string{"item_no", live, "bid", "30.001"}, 400, "invalid_parameter", "bid"},
		{"bid negative", []string{"item_no", live, "bid", "-1"}, 400, "invalid_parameter", "bid"},
		{"bid text", []string{"item_no", live, "bid", "lots"}, 400, "invalid_parameter", "bid"},
		{"bid exponent", []string{"item_no", live, "bid", "1e3"}, 400, "invalid_parameter", "bid"},
		{"bid comma", []string{"item_no", live, "bid", "30,50"}, 400, "invalid_parameter", "bid"},
		{"bid huge", []string{"item_no", live, "bid", "99999999999"}, 400, "invalid_parameter", "bid"},
		{"delay 0", []string{"item_no", live, "delay", "0"}, 400, "invalid_parameter", "delay"},
		{"delay 16", []string{"item_no", live, "delay", "16"}, 400, "invalid_parameter", "delay"},
		{"delay text", []string{"item_no", live, "delay", "soon"}, 400, "invalid_parameter", "delay"},
		{"delay decimal", []string{"item_no", live, "delay", "7.5"}, 400, "invalid_parameter", "delay"},
		{"enabled 2", []string{"item_no", live, "enabled", "2"}, 400, "invalid_parameter", "enabled"},
		{"enabled true", []string{"item_no", live, "enabled", "true"}, 400, "invalid_parameter", "enabled"},
		{"force yes", []string{"item_no", live, "force", "yes"}, 400, "invalid_parameter", "force"},
		{"groupName too long", []string{"item_no", live, "groupName", strings.Repeat("g", 101)}, 400, "invalid_parameter", "groupName"},
		{"groupName control", []string{"item_no", live, "groupName", "a\x01b"}, 400, "invalid_parameter", "groupName"},
		{"unknown item", []string{"item_no", "999"}, 404, "not_found", "item_no"},
		{"ended item", []string{"item_no", endedNo, "bid", "30"}, 409, "conflict", "item_no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.call("addBid", tt.kv...)
			r.wantError(t, tt.status, tt.code, tt.param)
			if tt.param != "" && tt.code != "missing_parameter" && !strings.Contains(str(t, r.body, "message"), tt.param) {
				t.Errorf("message %q does not name %s", r.body["message"], tt.param)
			}
		})
	}
	if n := b.notified.count(); n != 0 {
		t.Errorf("Notifier.Changed called %d times for refused requests", n)
	}
}

func TestAddBidAfterBidSentConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	no := itoa(it.ItemNo)
	b.call("addBid", "item_no", no, "bid", "30").wantOK(t)
	sn, _ := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
	if err := b.store.Transition(context.Background(), store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateFiring}); err != nil {
		t.Fatalf("Transition: %v", err)
	}
	r := b.call("addBid", "item_no", no, "bid", "40")
	r.wantError(t, 409, "conflict", "")
	want := "the bid for item " + no + " is being placed or has been sent; it can no longer be changed"
	if got := str(t, r.body, "message"); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	b.call("deleteBid", "item_no", no).wantError(t, 409, "conflict", "")
	if got, _ := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo); got.Bid != 3000 {
		t.Errorf("bid after refused edit = %s, want 30.00", got.Bid)
	}
}

func TestDeleteBid(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	no := itoa(it.ItemNo)
	b.call("addBid", "item_no", no, "bid", "30").wantOK(t)

	// Another account cannot see or delete it: 404, never 403.
	b.callKey(b.otherKey, "deleteBid", "item_no", no).wantError(t, 404, "not_found", "item_no")
	b.call("deleteBid").wantError(t, 400, "missing_parameter", "item_no")
	b.call("deleteBid", "item_no", "x").wantError(t, 400, "invalid_parameter", "item_no")

	r := b.call("deleteBid", "item_no", no)
	r.wantOK(t)
	if str(t, r.body, "item_no") != no || str(t, r.body, "message") == "" {
		t.Errorf("deleteBid body = %s", r.raw)
	}
	if _, err := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo); err == nil {
		t.Errorf("snipe still stored after deleteBid")
	}
	b.call("deleteBid", "item_no", no).wantError(t, 404, "not_found", "item_no")
	if n := b.notified.count(); n != 2 {
		t.Errorf("Notifier.Changed called %d times, want 2 (add, delete)", n)
	}
}

func TestCheckSnipeStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	no := itoa(it.ItemNo)
	b.call("addBid", "item_no", no, "bid", "30").wantOK(t)

	r := b.call("checkSnipeStatus", "item_no", no)
	r.wantOK(t)
	br := obj(t, r.body, "bidResult")
	if integer(t, br, "success") != 0 || str(t, br, "status") != "Pending" || str(t, br, "shorthand") != "pending" || str(t, br, "color") != "gray" || str(t, br, "message") == "" {
		t.Errorf("pending bidResult = %v", br)
	}
	info := obj(t, r.body, "item_info")
	if str(t, info, "title") != it.Title || str(t, info, "status") != "OK" {
		t.Errorf("item_info = %v", info)
	}

	sn, _ := b.store.Snipe(context.Background(), b.paid.ID, it.ItemNo)
	ctx := context.Background()
	if err := b.store.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.IncrementNotMet, Detail: "The minimum next bid was 31.00 USD."}); err != nil {
		t.Fatalf("Transition: %v", err)
	}
	r = b.call("checkSnipeStatus", "item_no", no)
	r.wantOK(t)
	br = obj(t, r.body, "bidResult")
	if integer(t, br, "success") != -7 || str(t, br, "status") != "Minimum Bid Increment Not Met" || str(t, br, "shorthand") != "bid-incr" || str(t, br, "color") != "red" {
		t.Errorf("bid-incr bidResult = %v", br)
	}
	if msg := str(t, br, "message"); !strings.HasPrefix(msg, outcome.Of(outcome.IncrementNotMet).Message) || !strings.HasSuffix(msg, "31.00 USD.") {
		t.Errorf("message = %q, want the outcome message plus the detail", msg)
	}

	b.callKey(b.otherKey, "checkSnipeStatus", "item_no", no).wantError(t, 404, "not_found", "item_no")
	b.call("checkSnipeStatus", "item_no", "12345").wantError(t, 404, "not_found", "item_no")
	b.call("checkSnipeStatus").wantError(t, 400, "missing_parameter", "item_no")
	b.market.FailItem(it.ItemNo, sim.OpAny, true)
	b.call("checkSnipeStatus", "item_no", no).wantError(t, 503, "unavailable", "")
}

// TestPendingMessageSaysWhenNoBidWillCome: Pending's message promises a bid,
// so watched items and disabled snipes say instead that none will come.
func TestPendingMessageSaysWhenNoBidWillCome(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		params []string
		want   string
	}{
		{[]string{"bid", "30"}, "will be placed shortly before the auction ends"},
		{[]string{"bid", "0"}, "watched item"},
		{[]string{"bid", "30", "enabled", "0"}, "disabled"},
	}
	for _, tt := range tests {
		no := itoa(b.item().ItemNo)
		b.call("addBid", append([]string{"item_no", no}, tt.params...)...).wantOK(t)
		br := obj(t, b.call("checkSnipeStatus", "item_no", no).body, "bidResult")
		if msg := str(t, br, "message"); integer(t, br, "success") != 0 || !strings.Contains(msg, tt.want) {
			t.Errorf("addBid %v: bidResult = %v, want Pending with a message containing %q", tt.params, br, tt.want)
		}
	}
}

func TestGetUserItems(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var nos []string
	for i, d := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} {
		it := b.item(endsIn(d), bids(10-i))
		nos = append(nos, itoa(it.ItemNo))
		b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "30", "groupName", "g").wantOK(t)
	}
	watched := b.item()
	b.call("addBid", "item_no", itoa(watched.ItemNo)).wantOK(t)
	b.callKey(b.otherKey, "addBid", "item_no", nos[0], "bid", "50").wantOK(t)

	r := b.call("getUserItems", "filter", "current")
	r.wantOK(t)
	items := arr(t, r.body, "items")
	if integer(t, r.body, "total") != 3 || len(items) != 3 {
		t.Fatalf("current: total %v, %d items; want 3", r.body["total"], len(items))
	}
	if str(t, r.body, "orderby") != "ends" || str(t, r.body, "dir") != "ASC" || integer(t, r.body, "limit") != 20 || integer(t, r.body, "offset") != 0 || integer(t, r.body, "show_won") != 0 {
		t.Errorf("defaults: %s", r.raw)
	}
	first := items[0].(map[string]any)
	if got := str(t, first, "item_no"); got != nos[1] {
		t.Errorf("first by ends ASC = %s, want %s", got, nos[1])
	}
	for _, k := range []string{"bid", "groupName", "title", "currency", "endTime", "startTime", "timeLeft", "fireTime", "galleryUrl", "status", "shorthand", "color", "message"} {
		str(t, first, k)
	}
	for _, k := range []string{"delay", "enabled", "force", "group_id", "bids", "success"} {
		integer(t, first, k)
	}
	num(t, first, "currentPrice")
	if first["bid"] != "30.00" || first["enabled"] != 1.0 || first["status"] != "Pending" || first["timeLeft"] != "1h 0m" {
		t.Errorf("entry = %v", first)
	}
	if want := clock.FormatUTC(t0.Add(time.Hour - store.DefaultDelay*time.Second)); first["fireTime"] != want {
		t.Errorf("fireTime = %v, want %s", first["fireTime"], want)
	}

	r = b.call("getUserItems", "filter", "current", "orderby", "bids", "dir", "DESC", "offset", "1", "limit", "1")
	r.wantOK(t)
	items = arr(t, r.body, "items")
	if integer(t, r.body, "total") != 3 || len(items) != 1 || items[0].(map[string]any)["item_no"] != nos[1] {
		t.Errorf("bids DESC offset 1 limit 1 = %s", r.raw)
	}

	r = b.call("getUserItems", "filter", "watched")
	r.wantOK(t)
	if integer(t, r.body, "total") != 1 {
		t.Errorf("watched total = %v, want 1", r.body["total"])
	}
	r = b.call("getUserItems", "filter", "completed")
	r.wantOK(t)
	if integer(t, r.body, "total") != 0 || len(arr(t, r.body, "items")) != 0 {
		t.Errorf("completed = %s, want empty", r.raw)
	}

	for _, tt := range []struct {
		kv    []string
		code  string
		param string
	}{
		{nil, "missing_parameter", "filter"},
		{[]string{"filter", "all"}, "invalid_parameter", "filter"},
		{[]string{"filter", "Current"}, "invalid_parameter", "filter"},
		{[]string{"filter", "current", "orderby", "price"}, "invalid_parameter", "orderby"},
		{[]string{"filter", "current", "dir", "asc"}, "invalid_parameter", "dir"},
		{[]string{"filter", "current", "offset", "-1"}, "invalid_parameter", "offset"},
		{[]string{"filter", "current", "limit", "0"}, "invalid_parameter", "limit"},
		{[]string{"filter", "current", "limit", "21"}, "invalid_parameter", "limit"},
		{[]string{"filter", "current", "show_won", "yes"}, "invalid_parameter", "show_won"},
		{[]string{"filter", "current", "filter", "watched"}, "repeated_parameter", "filter"},
	} {
		b.call("getUserItems", tt.kv...).wantError(t, 400, tt.code, tt.param)
	}
}

func TestGetUserItemsCompletedAndArchive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item(endsIn(time.Hour))
	b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "30").wantOK(t)
	b.clock.Advance(2 * time.Hour)
	r := b.call("getUserItems", "filter", "completed")
	r.wantOK(t)
	if integer(t, r.body, "total") != 1 || arr(t, r.body, "items")[0].(map[string]any)["timeLeft"] != "ended" {
		t.Errorf("completed after end = %s", r.raw)
	}
	b.clock.Advance(61 * 24 * time.Hour)
	r = b.call("getUserItems", "filter", "archive")
	r.wantOK(t)
	if integer(t, r.body, "total") != 1 {
		t.Errorf("archive after 61 days = %s", r.raw)
	}
}
