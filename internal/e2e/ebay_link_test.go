package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The market server's default application credentials (ebaysim).
const (
	simClientID     = "sniped-sim"
	simClientSecret = "sim-secret"
	e2eRuName       = "sniped-e2e-RuName"
)

// TestEBayLinkedAccounts plays issue 9's "done means" with linked accounts:
// the real `sniped serve --market ebay` against a real `sniped market
// serve`. Account admin links eBay user alice_ebay through the consent
// flow, imports its watch list, searches, and snipes one item to Won and
// one to Outbid, each bid arriving at end − delay on the market server's
// clock; after an Unlink its next snipe settles market-auth saying how to
// link. Account bob, linked by the operator (`sniped account link` with a
// token from /sim/token), meets an application without Offer API
// approval (/sim/fail?kind=unauthorized) and settles market-auth with that
// message.
func TestEBayLinkedAccounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "client-secret")
	if err := os.WriteFile(secretFile, []byte(simClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := startMarket(t, filepath.Join(dir, "market"))
	data := filepath.Join(dir, "sniped")
	s := startServer(t, data, "--market", "ebay", "--ebay-api-url", mk.URL, "--ebay-auth-url", mk.URL,
		"--ebay-client-id", simClientID, "--ebay-client-secret-file", secretFile, "--ebay-runame", e2eRuName)
	if fi, err := os.Stat(filepath.Join(data, "secret.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret key file = %v, %v; want one made on first start, mode 0600", fi, err)
	}
	// The RuName's accept URL is sniped's /market/callback; the port is
	// known only now, as an operator knows it before registering it.
	if status, body := mk.simApp(t, "/sim/runame", url.Values{"name": {e2eRuName}, "accept_url": {s.URL + "/market/callback"}}); status != http.StatusOK {
		t.Fatalf("/sim/runame = %d %s", status, body)
	}

	t.Run("linked through the consent flow", func(t *testing.T) {
		t.Parallel()
		admin := s.Key()
		_, acct := s.Get("/getMarketAccount", url.Values{"key": {admin}})
		if acct["linked"] != 0.0 || !strings.Contains(acct["message"].(string), "Connect eBay") {
			t.Errorf("getMarketAccount before linking = %v", acct)
		}
		if got := s.consent(t, admin, "alice_ebay"); got != "linked" {
			t.Fatalf("consent flow ended with market=%q, want linked", got)
		}
		_, acct = s.Get("/getMarketAccount", url.Values{"key": {admin}})
		if acct["linked"] != 1.0 || acct["usable"] != 1.0 || acct["market_user"] != "alice_ebay" || acct["token_expires"] == "" {
			t.Errorf("getMarketAccount after linking = %v", acct)
		}

		// Watch list: two items watched on the market by alice_ebay (whose
		// watch list the market also seeds with items of its own).
		w1, _ := mk.createItem(t, "Pomelo watched radio", "5", "3600")
		w2, _ := mk.createItem(t, "Pomelo watched clock", "5", "3600")
		for _, no := range []string{w1, w2} {
			if status, body := mk.Get("/sim/watch", url.Values{"user": {"alice_ebay"}, "item_no": {no}}); status != http.StatusOK {
				t.Fatalf("/sim/watch %s = %d %v", no, status, body)
			}
		}
		status, imported := s.Get("/importWatchList", url.Values{"key": {admin}})
		_, watched := s.Get("/getUserItems", url.Values{"key": {admin}, "filter": {"watched"}})
		if n, _ := imported["items_imported"].(float64); status != http.StatusOK || n < 2 || watched["total"] != n {
			t.Errorf("importWatchList = %d %v; want at least 2 imported, all now watched (%v)", status, imported, watched["total"])
		}
		for _, no := range []string{w1, w2} {
			if status, res := s.Get("/checkSnipeStatus", url.Values{"key": {admin}, "item_no": {no}}); status != http.StatusOK {
				t.Errorf("watched item %s after the import: checkSnipeStatus = %d %v", no, status, res)
			}
		}

		// Search through Browse.
		won, wonEnd := mk.createItem(t, "Quokka e2e lens", "10", "9")
		lost, lostEnd := mk.createItem(t, "Quokka e2e body", "10", "10")
		_, res := s.Get("/getSearchResults", url.Values{"key": {admin}, "query": {"quokka e2e"}, "country_code": {"US"}})
		for _, no := range []string{won, lost} {
			if !strings.Contains(jsonString(t, res), `"`+no+`"`) {
				t.Errorf("getSearchResults lacks %s: %v", no, res)
			}
		}

		// Won and Outbid, as alice_ebay, on time by the market's clock.
		mk.rival(t, lost, "rival", "30")
		s.addBid(t, url.Values{"item_no": {won}, "bid": {"20"}, "delay": {"3"}})
		s.addBid(t, url.Values{"item_no": {lost}, "bid": {"20"}, "delay": {"2"}})
		wantOutcome(t, s.settled(t, won, wonEnd), 1, "won")
		wantOutcome(t, s.settled(t, lost, lostEnd), -1, "outbid")
		for _, c := range []struct {
			item  string
			end   int64
			delay int64
		}{{won, wonEnd, 3}, {lost, lostEnd, 2}} {
			bids := mk.bidsBy(t, c.item, "alice_ebay")
			if len(bids) != 1 {
				t.Fatalf("alice_ebay's bids on %s = %v, want exactly one", c.item, bids)
			}
			at := int64(bids[0]["time_ms"].(float64))
			if target := c.end - c.delay*1000; at < target || at >= c.end {
				t.Errorf("item %s: bid arrived at end%+dms on the market's clock, want from end-%dms to the end", c.item, at-c.end, c.delay*1000)
			}
		}

		// Unlinked, the next snipe settles market-auth saying how to link,
		// although the adapter held a valid access token for alice_ebay.
		if status, res := s.Get("/unlinkMarketAccount", url.Values{"key": {admin}}); status != http.StatusOK {
			t.Fatalf("unlinkMarketAccount = %d %v", status, res)
		}
		after, afterEnd := mk.createItem(t, "Quokka e2e flash", "10", "6")
		s.addBid(t, url.Values{"item_no": {after}, "bid": {"20"}, "delay": {"2"}})
		res = s.settled(t, after, afterEnd)
		wantOutcome(t, res, -12, "market-auth")
		if msg, _ := res["message"].(string); !strings.Contains(msg, "Connect eBay") || !strings.Contains(msg, "sniped account link") {
			t.Errorf("market-auth message = %q, want it to say how to link", msg)
		}
		if n := len(mk.bidsBy(t, after, "alice_ebay")); n != 0 {
			t.Errorf("bids after unlinking = %d, want 0", n)
		}
	})

	t.Run("linked by the operator, application not approved", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "account", "add", "--data", data, "--name", "bob")
		if code != 0 {
			t.Fatalf("account add bob = %d: %s", code, errOut)
		}
		bobKey := strings.TrimSpace(out)
		status, body := mk.simApp(t, "/sim/token", url.Values{"user": {"bob_ebay"}})
		if status != http.StatusOK {
			t.Fatalf("/sim/token = %d %s", status, body)
		}
		var tok struct {
			RefreshToken string `json:"refresh_token"`
			ExpiresAt    string `json:"expires_at"`
		}
		if err := json.Unmarshal(body, &tok); err != nil || tok.RefreshToken == "" {
			t.Fatalf("/sim/token body = %s (%v)", body, err)
		}
		tokenFile := filepath.Join(dir, "bob.token")
		if err := os.WriteFile(tokenFile, []byte(tok.RefreshToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut, code = runCLI(t, "account", "link", "--data", data, "--name", "bob", "--refresh-token-file", tokenFile,
			"--market-user", "bob_ebay", "--token-expires", tok.ExpiresAt, "--ebay-api-url", mk.URL)
		if code != 0 || strings.Contains(errOut, tok.RefreshToken) {
			t.Fatalf("account link bob = %d: %s", code, errOut)
		}
		for _, f := range []string{"sniped.db", "sniped.db-wal"} {
			if b, _ := os.ReadFile(filepath.Join(data, f)); strings.Contains(string(b), tok.RefreshToken) {
				t.Errorf("%s holds bob's refresh token in plain text", f)
			}
		}
		_, acct := s.Get("/getMarketAccount", url.Values{"key": {bobKey}})
		if acct["usable"] != 1.0 || acct["market_user"] != "bob_ebay" || acct["token_expires"] != tok.ExpiresAt {
			t.Errorf("bob's getMarketAccount = %v", acct)
		}

		if status, res := mk.Get("/sim/fail", url.Values{"kind": {"unauthorized"}, "user": {"bob_ebay"}}); status != http.StatusOK {
			t.Fatalf("/sim/fail = %d %v", status, res)
		}
		item, end := mk.createItem(t, "Quokka e2e tripod", "10", "6")
		if status, res := s.Get("/addBid", url.Values{"key": {bobKey}, "item_no": {item}, "bid": {"20"}, "delay": {"2"}}); status != http.StatusOK {
			t.Fatalf("bob's addBid = %d %v", status, res)
		}
		res := settledFor(t, s, bobKey, item, end)
		wantOutcome(t, res, -12, "market-auth")
		if msg, _ := res["message"].(string); !strings.Contains(msg, "Offer API approval") {
			t.Errorf("market-auth message = %q, want it to name the missing Offer API approval", msg)
		}
		if n := len(mk.bidsBy(t, item, "bob_ebay")); n != 0 {
			t.Errorf("bob_ebay's bids = %d, want 0", n)
		}
	})

	t.Cleanup(func() {
		for _, l := range []string{s.Log(), mk.Log()} {
			for _, secret := range []string{simClientSecret + "\n", "sim-code-", "refresh_token="} {
				if strings.Contains(l, secret) {
					t.Errorf("a log holds %q", secret)
				}
			}
		}
	})
}

// consent runs the consent flow for the account with key k as a browser
// would, keeping the flow's cookie, signing in on the market's page as
// login and agreeing, and returns the outcome the dashboard is sent to
// (/ui/?market=OUTCOME).
func (s *server) consent(t *testing.T, k, login string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(s.URL + "/connectMarketAccount?" + url.Values{"key": {k}}.Encode())
	if err != nil {
		t.Fatalf("connectMarketAccount: %v", err)
	}
	var res map[string]any
	err = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	authorize, _ := res["authorize_url"].(string)
	if err != nil || authorize == "" {
		t.Fatalf("connectMarketAccount = %v, %v", res, err)
	}
	// Pressing Agree submits the consent form with login and approve=1;
	// the market then redirects to /market/callback, which redirects to
	// the dashboard.
	resp, err = browser.Get(authorize + "&" + url.Values{"login": {login}, "approve": {"1"}}.Encode())
	if err != nil {
		t.Fatalf("consent: %v", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	final := resp.Request.URL
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(final.String(), s.URL+"/ui/") {
		t.Fatalf("consent flow ended at %s with %d, want the dashboard", final, resp.StatusCode)
	}
	return final.Query().Get("market")
}

// simApp calls a market server endpoint that takes the application's
// credentials (HTTP Basic), as /sim/token and /sim/runame do.
func (s *server) simApp(t *testing.T, path string, q url.Values) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path+"?"+q.Encode(), nil)
	req.SetBasicAuth(simClientID, simClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// bidsBy returns user's bids on item in the market's records.
func (s *server) bidsBy(t *testing.T, item, user string) []map[string]any {
	t.Helper()
	_, info := s.Get("/sim/item", url.Values{"item_no": {item}})
	var out []map[string]any
	for _, b := range info["bids"].([]any) {
		if bm := b.(map[string]any); bm["bidder"] == user {
			out = append(out, bm)
		}
	}
	return out
}

// settledFor polls checkSnipeStatus with account key k until the outcome
// is final, as settled does for the admin key.
func settledFor(t *testing.T, s *server, k, item string, endMs int64) map[string]any {
	t.Helper()
	deadline := time.UnixMilli(endMs).Add(outcomeTimeout)
	for {
		_, body := s.Get("/checkSnipeStatus", url.Values{"key": {k}, "item_no": {item}})
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
