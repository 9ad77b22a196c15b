package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// startMarket runs `sniped market serve --addr 127.0.0.1:0 --data data
// extra...` and returns it once it listens. Its helpers (createItem, rival,
// Get) work as on a simulator-backed sniped.
func startMarket(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	args := append([]string{"market", "serve", "--addr", "127.0.0.1:0", "--data", data, "--sim-items", "30", "--sim-bidders", "off"}, extra...)
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "SNIPED_MARKET_CLIENT_SECRET=")
	return launch(t, cmd, data, "market serve")
}

// TestServeOnEBayShapedMarket runs the real `sniped serve --market ebay`
// against a real `sniped market serve`: the banner says which marketplace
// runs, the simulator's control surface is gone from sniped, search goes
// through Browse with an application token, a snipe of an account without
// an eBay link settles as market-auth saying how to link, and /metrics
// counts the calls per eBay API. Linked accounts: ebay_link_test.go.
func TestServeOnEBayShapedMarket(t *testing.T) {
	t.Setenv("SNIPED_EBAY_CLIENT_SECRET", "sim-secret")
	mk := startMarket(t, t.TempDir())
	s := startServer(t, t.TempDir(), "--market", "ebay", "--ebay-api-url", mk.URL, "--ebay-auth-url", mk.URL,
		"--ebay-client-id", "sniped-sim", "--ebay-runame", "sniped-RuName")
	if !strings.Contains(s.Log(), "marketplace: the eBay-shaped marketplace at "+mk.URL) {
		t.Errorf("banner does not name the marketplace:\n%s", s.Log())
	}
	if status, _ := s.GetRaw("/sim/createItem", url.Values{"title": {"x"}, "start_price": {"1"}, "ends_in": {"60"}}); status != http.StatusNotFound {
		t.Errorf("sniped's /sim/createItem with --market ebay = %d, want 404", status)
	}

	item, end := mk.createItem(t, "Kiwi e2e camera", "10", "6")
	_, res := s.Get("/getSearchResults", url.Values{"key": {s.Key()}, "query": {"kiwi e2e"}, "country_code": {"US"}})
	if !strings.Contains(jsonString(t, res), item) {
		t.Errorf("getSearchResults lacks item %s: %v", item, res)
	}

	s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
	res = s.settled(t, item, end)
	wantOutcome(t, res, -12, "market-auth")
	if msg, _ := res["message"].(string); !strings.Contains(msg, "Connect eBay") {
		t.Errorf("market-auth message %q does not say how to link", msg)
	}
	if n := len(mk.ourBids(t, item)); n != 0 {
		t.Errorf("bids by admin on the market = %d, want 0 (not linked)", n)
	}

	_, metrics := s.GetRaw("/metrics", nil)
	for _, want := range []string{`sniped_ebay_calls_total{api="browse",status="200"}`, `sniped_ebay_calls_total{api="oauth",status="200"}`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestServeEBayNeedsKeys: --market ebay without keys stops at once with a
// message that names what is missing.
func TestServeEBayNeedsKeys(t *testing.T) {
	t.Setenv("SNIPED_EBAY_CLIENT_SECRET", "")
	_, stderr, code := runCLI(t, "serve", "--market", "ebay", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--ebay-client-id") || !strings.Contains(stderr, "SNIPED_EBAY_CLIENT_SECRET") {
		t.Errorf("serve --market ebay without keys: exit %d, stderr %q; want a failure naming the missing keys", code, stderr)
	}
}

// jsonString renders a decoded body back to JSON text, for containment checks.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMarketServeControlOff: with --sim-control off the keyless control
// endpoints are gone, while /sim/token (which needs the application's
// credentials) still mints tokens and the eBay-shaped API still answers.
func TestMarketServeControlOff(t *testing.T) {
	t.Parallel()
	mk := startMarket(t, t.TempDir(), "--sim-control", "off")
	if status, _ := mk.GetRaw("/sim/createItem", url.Values{"title": {"x"}, "start_price": {"1"}, "ends_in": {"60"}}); status != http.StatusNotFound {
		t.Errorf("/sim/createItem with --sim-control off = %d, want 404", status)
	}
	req, _ := http.NewRequest(http.MethodGet, mk.URL+"/sim/token?user=carol", nil)
	req.SetBasicAuth("sniped-sim", "sim-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/sim/token with --sim-control off = %d, want 200", resp.StatusCode)
	}
	if status, _ := mk.GetRaw("/buy/browse/v1/item_summary/search", url.Values{"q": {"x"}}); status != http.StatusUnauthorized {
		t.Errorf("search without a token = %d, want 401 (the API is served)", status)
	}
}
