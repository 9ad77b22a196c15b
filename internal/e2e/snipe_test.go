package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store/postgres/pgtest"
)

// outcomeTimeout bounds how long a scenario waits for a settled outcome
// after its item's end. Settlement must happen well within a minute.
const outcomeTimeout = 45 * time.Second

// TestSnipeScenarios plays issue 4's "done means" against the real binary and
// its simulator: a win, an outbid, a bid that misses the increment, and a
// two-item Bid Group that must win only one item. The scenarios share one
// server and run concurrently; each waits only for its own item to end.
func TestSnipeScenarios(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())

	t.Run("won, placed delay seconds before the end", func(t *testing.T) {
		t.Parallel()
		item, end := s.createItem(t, "Test lens", "10", "5")
		s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"3"}})
		wantOutcome(t, s.settled(t, item, end), 1, "won")
		bids := s.ourBids(t, item)
		if len(bids) != 1 {
			t.Fatalf("our bids = %v, want exactly one", bids)
		}
		at := int64(bids[0]["time_ms"].(float64))
		if target := end - 3000; at < target || at >= end {
			t.Errorf("bid sent at end%+dms, want at or after end-3000ms and before the end", at-end)
		}
	})
	t.Run("outbid by a higher rival", func(t *testing.T) {
		t.Parallel()
		item, end := s.createItem(t, "Contested lens", "10", "5")
		s.rival(t, item, "rival", "30")
		s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
		wantOutcome(t, s.settled(t, item, end), -1, "outbid")
	})
	t.Run("minimum increment not met", func(t *testing.T) {
		t.Parallel()
		item, end := s.createItem(t, "Busy lens", "10", "5")
		s.rival(t, item, "rival1", "20")
		s.rival(t, item, "rival2", "30") // price now 20.50, minimum 21.00
		s.addBid(t, url.Values{"item_no": {item}, "bid": {"20.75"}, "delay": {"2"}, "force": {"1"}})
		wantOutcome(t, s.settled(t, item, end), -7, "bid-incr")
	})
	t.Run("a Bid Group wins only one item", func(t *testing.T) {
		t.Parallel()
		first, end1 := s.createItem(t, "Group lens A", "10", "6")
		second, end2 := s.createItem(t, "Group lens B", "10", "7")
		s.addBid(t, url.Values{"item_no": {first}, "bid": {"20"}, "delay": {"2"}, "groupName": {"lenses"}})
		s.addBid(t, url.Values{"item_no": {second}, "bid": {"20"}, "delay": {"2"}, "groupName": {"lenses"}})
		wantOutcome(t, s.settled(t, first, end1), 1, "won")
		wantOutcome(t, s.settled(t, second, end2), -5, "group-won")
		if n := len(s.ourBids(t, second)); n != 0 {
			t.Errorf("bids on the second group item = %d, want 0", n)
		}
	})
}

// TestServeOnPostgres runs the service on PostgreSQL (--database-url): the
// first start creates admin there, account commands reach the same
// database, and a snipe fires and settles. Skips without a server.
func TestServeOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	s := startServer(t, t.TempDir(), "--database-url", dsn)
	if s.Key() == "" {
		t.Fatalf("first start on an empty database printed no admin key:\n%s", s.Log())
	}
	if out, _, code := runCLI(t, "account", "list", "--database-url", dsn); code != 0 || !strings.Contains(out, "admin") {
		t.Errorf("account list --database-url = %q exit %d, want admin listed", out, code)
	}
	item, end := s.createItem(t, "Postgres lens", "10", "4")
	s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
	wantOutcome(t, s.settled(t, item, end), 1, "won")
}

// createItem makes a simulator item and returns its number and end (epoch ms).
func (s *server) createItem(t *testing.T, title, start, endsIn string) (string, int64) {
	t.Helper()
	status, body := s.Get("/sim/createItem", url.Values{"title": {title}, "start_price": {start}, "ends_in": {endsIn}})
	if status != http.StatusOK {
		t.Fatalf("createItem = %d %v", status, body)
	}
	item := body["item_no"].(string)
	_, info := s.Get("/sim/item", url.Values{"item_no": {item}})
	return item, int64(info["end_ms"].(float64))
}

// rival places a simulator bid for another marketplace user.
func (s *server) rival(t *testing.T, item, bidder, max string) {
	t.Helper()
	if status, body := s.Get("/sim/placeBid", url.Values{"item_no": {item}, "bidder": {bidder}, "max": {max}}); status != http.StatusOK {
		t.Fatalf("placeBid %s %s = %d %v", bidder, max, status, body)
	}
}

// addBid calls addBid with the admin key.
func (s *server) addBid(t *testing.T, params url.Values) {
	t.Helper()
	params.Set("key", s.Key())
	if status, body := s.Get("/addBid", params); status != http.StatusOK {
		t.Fatalf("addBid %v = %d %v", params, status, body)
	}
}

// settled polls checkSnipeStatus until the outcome is final.
func (s *server) settled(t *testing.T, item string, endMs int64) map[string]any {
	t.Helper()
	deadline := time.UnixMilli(endMs).Add(outcomeTimeout)
	for {
		_, body := s.Get("/checkSnipeStatus", url.Values{"key": {s.Key()}, "item_no": {item}})
		res, _ := body["bidResult"].(map[string]any)
		if code, _ := res["success"].(float64); code != 0 && code != 2 && code != -15 {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("item %s: no final outcome %v after its end; last %v", item, outcomeTimeout, body)
		}
		time.Sleep(200 * time.Millisecond) // polling a real server; no timing assertion rides on it
	}
}

// ourBids returns the admin account's bids in the simulator's records.
func (s *server) ourBids(t *testing.T, item string) []map[string]any {
	t.Helper()
	_, info := s.Get("/sim/item", url.Values{"item_no": {item}})
	var out []map[string]any
	for _, b := range info["bids"].([]any) {
		if bm := b.(map[string]any); bm["bidder"] == "admin" {
			out = append(out, bm)
		}
	}
	return out
}

func wantOutcome(t *testing.T, res map[string]any, code float64, shorthand string) {
	t.Helper()
	if res["success"] != code || res["shorthand"] != shorthand || res["message"] == "" {
		t.Errorf("bidResult = %v, want success %v shorthand %q with a message", res, code, shorthand)
	}
}
