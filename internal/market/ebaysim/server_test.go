package ebaysim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/ebaysim"
	"github.com/sniped/sniped/internal/market/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type bundle struct {
	sim  *sim.Sim
	srv  *ebaysim.Server
	http *httptest.Server
	clk  *clock.Fake
}

func setup(t *testing.T, tokenFile string, skew time.Duration) *bundle {
	t.Helper()
	clk := clock.NewFake(t0)
	s, err := sim.Open(context.Background(), sim.Config{Seed: 1, Items: 20, Bidders: sim.BiddersOff, Clock: clk, ClockSkew: skew})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv, err := ebaysim.New(ebaysim.Config{Sim: s, Clock: clk, TokenFile: tokenFile,
		RuNames: map[string]string{"ru": "http://app.test/market/callback?x=1"}})
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv.Handler())
	t.Cleanup(h.Close)
	return &bundle{sim: s, srv: srv, http: h, clk: clk}
}

// token posts a form to the token endpoint with the given credentials.
func (b *bundle) token(t *testing.T, id, secret string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.http.URL+"/identity/v1/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := b.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, "", 0)
	rt, _, err := b.srv.MintRefreshToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	id, sec := ebaysim.DefaultClientID, ebaysim.DefaultClientSecret
	cases := []struct {
		name       string
		id, secret string
		form       url.Values
		status     int
		errCode    string
	}{
		{"app token", id, sec, url.Values{"grant_type": {"client_credentials"}, "scope": {ebay.ScopeAPI}}, 200, ""},
		{"app token, default scope", id, sec, url.Values{"grant_type": {"client_credentials"}}, 200, ""},
		{"wrong secret", id, "nope", url.Values{"grant_type": {"client_credentials"}}, 401, "invalid_client"},
		{"wrong client", "other", sec, url.Values{"grant_type": {"client_credentials"}}, 401, "invalid_client"},
		{"app asks for offer scope", id, sec, url.Values{"grant_type": {"client_credentials"}, "scope": {ebay.ScopeOffer}}, 400, "invalid_scope"},
		{"refresh", id, sec, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "scope": {ebay.ScopeOffer}}, 200, ""},
		{"refresh, unknown token", id, sec, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}}, 400, "invalid_grant"},
		{"refresh, extra scope", id, sec, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "scope": {"https://api.ebay.com/oauth/api_scope/sell.inventory"}}, 400, "invalid_scope"},
		{"bad code", id, sec, url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "redirect_uri": {"ru"}}, 400, "invalid_grant"},
		{"unknown grant", id, sec, url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type"},
	}
	for _, c := range cases {
		status, body := b.token(t, c.id, c.secret, c.form)
		if status != c.status || (c.errCode != "" && body["error"] != c.errCode) || (c.errCode == "" && (body["access_token"] == "" || body["expires_in"] != float64(7200))) {
			t.Errorf("%s: %d %v, want %d %q", c.name, status, body, c.status, c.errCode)
		}
	}
}

func TestConsentPage(t *testing.T) {
	t.Parallel()
	b := setup(t, "", 0)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := b.http.URL + "/oauth2/authorize?" + url.Values{"client_id": {ebaysim.DefaultClientID}, "redirect_uri": {"ru"},
		"response_type": {"code"}, "scope": {strings.Join(ebay.UserScopes, " ")}, "state": {`"><script>x</script>`}}.Encode()
	get := func(u string) (*http.Response, string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, page := get(base)
	if resp.StatusCode != 200 || strings.Contains(page, "<script>x") || !strings.Contains(page, `name="login"`) || !strings.Contains(page, "Agree") {
		t.Errorf("consent page %d, unescaped or without the form:\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(csp, "form-action 'self' http://app.test") {
		t.Errorf("consent page CSP = %q, want nothing loaded, no framing, and forms only to itself and the accept URL", csp)
	}
	resp, _ = get(base + "&login=alice&approve=0")
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != 302 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("x") != "1" {
		t.Errorf("Disagree: %d to %q, want a redirect with error=access_denied keeping the accept URL's query", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page = get(base + "&login=bad%20name&approve=1")
	if resp.StatusCode != 200 || !strings.Contains(page, "Type a user name") {
		t.Errorf("a bad login: %d, want the form again with a message", resp.StatusCode)
	}
	// An unregistered redirect_uri is refused, a URL too: the consent page
	// is no open redirect, whichever button is pressed.
	for _, bad := range []string{"client_id=other", "redirect_uri=unknown-ru", "redirect_uri=https://evil.test/", "response_type=token", "scope=x"} {
		k, v, _ := strings.Cut(bad, "=")
		u, _ := url.Parse(base)
		q := u.Query()
		q.Set(k, v)
		u.RawQuery = q.Encode()
		for _, press := range []string{"", "&login=alice&approve=0", "&login=alice&approve=1"} {
			if resp, _ := get(u.String() + press); resp.StatusCode != 400 {
				t.Errorf("authorize with %s%s = %d to %q, want 400", bad, press, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	}
}

func TestRefreshTokensSurviveRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	b := setup(t, file, 0)
	rt, _, err := b.srv.MintRefreshToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	b2 := setup(t, file, 0)
	if status, body := b2.token(t, ebaysim.DefaultClientID, ebaysim.DefaultClientSecret, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}); status != 200 {
		t.Errorf("refresh after a restart: %d %v, want 200", status, body)
	}
}

func TestDateHeaderAndSearchRules(t *testing.T) {
	t.Parallel()
	b := setup(t, "", 4*time.Second)
	_, body := b.token(t, ebaysim.DefaultClientID, ebaysim.DefaultClientSecret, url.Values{"grant_type": {"client_credentials"}})
	tok, _ := body["access_token"].(string)
	no, _, err := b.sim.CreateItem(context.Background(), sim.NewItem{Title: "quokka print", StartPrice: 100, EndsIn: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b.sim.PlaceBid(context.Background(), "rival", no, 500)
	search := func(q string) (int, ebay.SearchPage, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, b.http.URL+"/buy/browse/v1/item_summary/search?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := b.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p ebay.SearchPage
		json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, p, resp.Header
	}
	status, p, h := search("q=quokka&filter=" + url.QueryEscape("buyingOptions:{AUCTION}"))
	if status != 200 || len(p.ItemSummaries) != 1 {
		t.Errorf("search with the AUCTION filter: %d, %d items; want the bid-on auction", status, len(p.ItemSummaries))
	}
	if d, _ := http.ParseTime(h.Get("Date")); !d.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("Date = %q, want the marketplace clock %v", h.Get("Date"), t0.Add(4*time.Second))
	}
	if _, p, _ := search("q=quokka"); len(p.ItemSummaries) != 0 {
		t.Errorf("search without the filter found %d items, want none (an auction with bids is left out, as on eBay)", len(p.ItemSummaries))
	}
	if status, _, _ := search("q=quokka&limit=201"); status != 400 {
		t.Errorf("limit=201: %d, want 400", status)
	}
	req, _ := http.NewRequest(http.MethodGet, b.http.URL+"/buy/browse/v1/item_summary/search?q=x", nil)
	resp, err := b.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("search without a token: %d, want 401", resp.StatusCode)
	}
}

func TestSimRuName(t *testing.T) {
	t.Parallel()
	b := setup(t, "", 0)
	reg := b.http.URL + "/sim/runame?" + url.Values{"name": {"late-ru"}, "accept_url": {"http://127.0.0.1:4321/market/callback"}}.Encode()
	resp, err := http.Get(reg)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/sim/runame without credentials = %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, reg, nil)
	req.SetBasicAuth(ebaysim.DefaultClientID, ebaysim.DefaultClientSecret)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/sim/runame = %d, want 200", resp.StatusCode)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = c.Get(b.http.URL + "/oauth2/authorize?" + url.Values{"client_id": {ebaysim.DefaultClientID}, "redirect_uri": {"late-ru"},
		"response_type": {"code"}, "scope": {ebay.ScopeOffer}, "state": {"s"}, "login": {"ann"}, "approve": {"1"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "http://127.0.0.1:4321/market/callback?") {
		t.Errorf("consent redirected to %q, want the registered accept URL", loc)
	}
}
