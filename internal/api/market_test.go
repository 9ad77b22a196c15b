package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

const refreshToken = "v^1.1#i^1#r^1#p^3#I^3#f^0#t^Ul4xMF8xOjE3" // never in a response or log

// fakeConsent is a marketplace consent flow: codes it was given exchange once.
type fakeConsent struct {
	mu    sync.Mutex
	codes map[string]marketlink.Token
}

func (c *fakeConsent) AuthorizeURL(state string) string {
	return "https://auth.sandbox.example/oauth2/authorize?" + url.Values{"client_id": {"app"}, "state": {state}}.Encode()
}

func (c *fakeConsent) ExchangeCode(_ context.Context, code string) (marketlink.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.codes[code]
	if !ok {
		return marketlink.Token{}, errors.New("invalid_grant")
	}
	delete(c.codes, code)
	return t, nil
}

func (c *fakeConsent) give(code string, t marketlink.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.codes[code] = t
}

func newLinks(t *testing.T, st store.Store, clk clock.Clock, c marketlink.Consent) *marketlink.Links {
	t.Helper()
	l, err := marketlink.New(marketlink.Config{Store: st, Key: secret.Generate(), Market: "https://api.sandbox.ebay.com",
		MarketName: "eBay", Consent: c, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func setupEBay(t *testing.T) (*bundle, *fakeConsent) {
	c := &fakeConsent{codes: map[string]marketlink.Token{}}
	return setupWith(t, options{consent: c}), c
}

// callback GETs the consent callback without following its redirect and
// returns the outcome the dashboard is sent.
func (b *bundle) callback(method, query string) (status int, outcome string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+"/market/callback?"+query, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	b.mu.Lock()
	for _, c := range b.flowCookies {
		req.AddCookie(c)
	}
	b.mu.Unlock()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		b.t.Fatalf("callback: %v", err)
	}
	defer res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode == http.StatusFound && loc.Path != "/ui/" {
		b.t.Errorf("callback redirects to %q, want /ui/", loc)
	}
	return res.StatusCode, loc.Query().Get("market")
}

// startFlow calls connectMarketAccount with key k and returns the state;
// the flow's cookie is kept for callback, as a browser keeps it.
func (b *bundle) startFlow(k string) string {
	b.t.Helper()
	r := b.callKey(k, "connectMarketAccount")
	r.wantOK(b.t)
	res := http.Response{Header: r.header}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "sniped_market_flow" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/market/callback" || cookie.MaxAge <= 0 || cookie.Value == "" {
		b.t.Fatalf("connectMarketAccount set the flow cookie %+v, want an HttpOnly, SameSite=Lax cookie for /market/callback only", cookie)
	}
	if strings.Contains(str(b.t, r.body, "authorize_url"), cookie.Value) {
		b.t.Errorf("the consent page's URL holds the flow's binding")
	}
	b.mu.Lock()
	b.flowCookies = append(b.flowCookies, &http.Cookie{Name: cookie.Name, Value: cookie.Value})
	b.mu.Unlock()
	u, err := url.Parse(str(b.t, r.body, "authorize_url"))
	if err != nil || u.Query().Get("state") == "" {
		b.t.Fatalf("authorize_url = %q, want the consent page with a state", r.body["authorize_url"])
	}
	if got, want := str(b.t, r.body, "expires"), clock.FormatUTC(b.clock.Now().Add(marketlink.DefaultStateTTL)); got != want {
		b.t.Errorf("expires = %q, want %q", got, want)
	}
	return u.Query().Get("state")
}

func TestMarketAccountOnSimulator(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("getMarketAccount")
	r.wantOK(t)
	if str(t, r.body, "marketplace") != "simulator" || integer(t, r.body, "link_needed") != 0 || integer(t, r.body, "usable") != 1 ||
		str(t, r.body, "market_user") != "alice" || !strings.Contains(str(t, r.body, "message"), "no linking is needed") {
		t.Errorf("getMarketAccount on the simulator = %s", r.raw)
	}
	for _, op := range []string{"connectMarketAccount", "unlinkMarketAccount"} {
		r := b.call(op)
		r.wantError(t, http.StatusConflict, "conflict", "")
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, "built-in auction simulator") {
			t.Errorf("%s message = %q, want it to name the simulator", op, msg)
		}
	}
	if status, outcome := b.callback(http.MethodGet, "code=c&state=s"); status != http.StatusFound || outcome != "not_needed" {
		t.Errorf("callback on the simulator = %d %q, want 302 not_needed", status, outcome)
	}
}

func TestMarketAccountLinkFlow(t *testing.T) {
	t.Parallel()
	b, consent := setupEBay(t)
	r := b.call("getMarketAccount")
	r.wantOK(t)
	if integer(t, r.body, "link_needed") != 1 || integer(t, r.body, "linked") != 0 || integer(t, r.body, "usable") != 0 ||
		str(t, r.body, "linked_at") != "" || !strings.Contains(str(t, r.body, "message"), "Connect eBay") {
		t.Errorf("getMarketAccount(unlinked) = %s", r.raw)
	}

	state := b.startFlow(b.paidKey)
	expires := b.clock.Now().Add(540 * 24 * time.Hour)
	consent.give("code-1", marketlink.Token{RefreshToken: refreshToken, User: "alice_ebay", Expiry: expires})
	b.clock.Advance(time.Minute) // the user signs in on eBay's page
	if status, outcome := b.callback(http.MethodGet, url.Values{"code": {"code-1"}, "state": {state}, "expires_in": {"299"}}.Encode()); status != http.StatusFound || outcome != "linked" {
		t.Fatalf("callback = %d %q, want 302 linked", status, outcome)
	}

	r = b.call("getMarketAccount")
	r.wantOK(t)
	want := map[string]any{"marketplace": "eBay", "link_needed": 1.0, "linked": 1.0, "usable": 1.0, "market_user": "alice_ebay",
		"linked_at": clock.FormatUTC(b.clock.Now()), "token_expires": clock.FormatUTC(expires)}
	for k, v := range want {
		if r.body[k] != v {
			t.Errorf("getMarketAccount(linked) %s = %#v, want %#v", k, r.body[k], v)
		}
	}
	if msg := str(t, r.body, "message"); !strings.Contains(msg, "alice_ebay") || strings.Contains(msg, "Connect eBay") {
		t.Errorf("getMarketAccount(linked) message = %q", msg)
	}
	// The other account is not linked by alice's flow.
	if r := b.callKey(b.otherKey, "getMarketAccount"); integer(t, r.body, "linked") != 0 {
		t.Errorf("bob's getMarketAccount after alice linked = %s", r.raw)
	}
	if tok, err := b.links.RefreshToken(context.Background(), "alice"); err != nil || tok != refreshToken {
		t.Errorf("RefreshToken(alice) = %q, %v", tok, err)
	}

	r = b.call("unlinkMarketAccount")
	r.wantOK(t)
	if str(t, r.body, "market_user") != "alice_ebay" {
		t.Errorf("unlinkMarketAccount = %s", r.raw)
	}
	b.call("unlinkMarketAccount").wantError(t, http.StatusNotFound, "not_found", "")
	if r := b.call("getMarketAccount"); integer(t, r.body, "linked") != 0 {
		t.Errorf("getMarketAccount after unlink = %s", r.raw)
	}

	secrets := []string{refreshToken, "code-1", state, url.QueryEscape(state)}
	for _, c := range b.flowCookies {
		secrets = append(secrets, c.Value)
	}
	for _, secret := range secrets {
		if strings.Contains(b.logs.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, b.logs.String())
		}
	}
	for _, r := range []resp{b.call("getMarketAccount")} {
		if strings.Contains(string(r.raw), refreshToken) {
			t.Errorf("a response holds the refresh token")
		}
	}
}

func TestMarketCallbackRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// query builds the callback's query; the code "good" is valid.
		query func(b *bundle) string
		want  string
	}{
		{"declined", func(*bundle) string { return "error=access_denied&state=x" }, "declined"},
		{"no code", func(b *bundle) string { return "state=" + url.QueryEscape(b.startFlow(b.paidKey)) }, "invalid"},
		{"no state", func(*bundle) string { return "code=good" }, "invalid"},
		{"forged state", func(*bundle) string { return "code=good&state=AAAAAAAAAAEAAAAAaSMAAAAAAAAAAAFhbGljZQ" }, "invalid"},
		{"repeated code", func(b *bundle) string {
			return "code=good&code=good&state=" + url.QueryEscape(b.startFlow(b.paidKey))
		}, "invalid"},
		{"bad encoding", func(*bundle) string { return "code=%zz&state=x" }, "invalid"},
		{"expired", func(b *bundle) string {
			s := b.startFlow(b.paidKey)
			b.clock.Advance(marketlink.DefaultStateTTL + time.Second)
			return "code=good&state=" + url.QueryEscape(s)
		}, "expired"},
		{"consent page opened in another browser", func(b *bundle) string {
			// Someone starts a flow for their account (bob) and gets
			// alice to agree on its consent page: her browser lacks bob's
			// flow cookie, so nothing is exchanged or linked.
			s := b.startFlow(b.otherKey)
			b.mu.Lock()
			b.flowCookies = nil
			b.mu.Unlock()
			return "code=good&state=" + url.QueryEscape(s)
		}, "other_browser"},
		{"another flow's cookie", func(b *bundle) string {
			s := b.startFlow(b.otherKey)
			b.mu.Lock()
			b.flowCookies = nil
			b.mu.Unlock()
			b.startFlow(b.paidKey) // alice's own flow, in her browser
			return "code=good&state=" + url.QueryEscape(s)
		}, "other_browser"},
		{"exchange refused", func(b *bundle) string {
			return "code=unknown&state=" + url.QueryEscape(b.startFlow(b.paidKey))
		}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, consent := setupEBay(t)
			consent.give("good", marketlink.Token{RefreshToken: refreshToken, User: "alice_ebay"})
			if status, outcome := b.callback(http.MethodGet, tt.query(b)); status != http.StatusFound || outcome != tt.want {
				t.Errorf("callback = %d %q, want 302 %q", status, outcome, tt.want)
			}
			for _, k := range []string{b.paidKey, b.otherKey} {
				if r := b.callKey(k, "getMarketAccount"); integer(t, r.body, "linked") != 0 {
					t.Errorf("an account got linked: %s", r.raw)
				}
			}
		})
	}
}

func TestMarketCallbackMethod(t *testing.T) {
	t.Parallel()
	b, _ := setupEBay(t)
	if status, _ := b.callback(http.MethodPost, "code=c&state=s"); status != http.StatusMethodNotAllowed {
		t.Errorf("POST callback = %d, want 405", status)
	}
	b.raw(http.MethodGet, "/market/other").wantError(t, http.StatusNotFound, "unknown_operation", "")
}

func TestMarketAccountNeedsKey(t *testing.T) {
	t.Parallel()
	b, _ := setupEBay(t)
	for _, op := range []string{"connectMarketAccount", "getMarketAccount", "unlinkMarketAccount"} {
		b.callKey("", op).wantError(t, http.StatusUnauthorized, "missing_key", "key")
		b.callKey(b.freeKey, op).wantError(t, http.StatusForbidden, "upgrade_required", "")
	}
}

func TestMarketAccountWithoutConsentPage(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{operatorLinks: true})
	r := b.call("connectMarketAccount")
	r.wantError(t, http.StatusConflict, "conflict", "")
	if msg, _ := r.body["message"].(string); !strings.Contains(msg, "--ebay-runame") || !strings.Contains(msg, "sniped account link --name alice") {
		t.Errorf("connectMarketAccount message = %q, want the RuName flag and the operator's command", msg)
	}
	if err := b.links.Link(context.Background(), b.paid, marketlink.Token{RefreshToken: refreshToken}); err != nil {
		t.Fatal(err)
	}
	r = b.call("getMarketAccount")
	if integer(t, r.body, "usable") != 1 || str(t, r.body, "market_user") != "" || str(t, r.body, "token_expires") != "" ||
		!strings.Contains(str(t, r.body, "message"), "linked by the operator") {
		t.Errorf("getMarketAccount(operator link, no user, no expiry) = %s", r.raw)
	}
	if status, outcome := b.callback(http.MethodGet, "code=c&state=s"); status != http.StatusFound || outcome != "not_configured" {
		t.Errorf("callback without a consent page = %d %q, want not_configured", status, outcome)
	}
}

// TestImportWatchListNotAuthorized: a watch list the marketplace refuses
// to read for the account (not linked, or the application not approved) is
// a 403 market_auth with the marketplace's explanation, not a 500.
func TestImportWatchListNotAuthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.market.DenyUser("alice", true)
	r := b.call("importWatchList")
	r.wantError(t, http.StatusForbidden, "market_auth", "")
	if msg, _ := r.body["message"].(string); !strings.Contains(msg, "Link your marketplace account") {
		t.Errorf("message = %q, want it to say what to do", msg)
	}
}

// explainedRefusal is a marketplace refusal with an explanation for the
// user (market.Explainer), as eBay's invalid_client is.
type explainedRefusal struct{}

func (explainedRefusal) Error() string   { return "invalid_client: " + market.ErrNotAuthorized.Error() }
func (explainedRefusal) Unwrap() error   { return market.ErrNotAuthorized }
func (explainedRefusal) Explain() string { return "the operator must check the application keys" }

// TestLookupsNotAuthorized: lookups and searches the marketplace refuses
// (eBay refusing this server's application keys) are a 403 market_auth
// with the marketplace's explanation, not a 500 internal error.
func TestLookupsNotAuthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	b.market.refuseLookups(explainedRefusal{})
	for _, r := range []resp{
		b.call("getSearchResults", "query", "camera"),
		b.call("addBid", "item_no", strconv.FormatInt(it.ItemNo, 10), "bid", "500"),
	} {
		r.wantError(t, http.StatusForbidden, "market_auth", "")
		if msg, _ := r.body["message"].(string); msg != "the operator must check the application keys" {
			t.Errorf("message = %q, want the marketplace's explanation", msg)
		}
	}
}

// TestMarketAccountUnusableLinks: a stored link snipes cannot use is shown
// as linked but not usable, with what to do.
func TestMarketAccountUnusableLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		link func(b *bundle) store.MarketLink
		want string
	}{
		{"expired", func(b *bundle) store.MarketLink {
			if err := b.links.Link(context.Background(), b.paid, marketlink.Token{RefreshToken: refreshToken, User: "alice_ebay", Expiry: t0.Add(-time.Hour)}); err != nil {
				b.t.Fatal(err)
			}
			l, _ := b.store.MarketLink(context.Background(), b.paid.ID)
			return l
		}, "expired on 2026-03-14 11:00:00 UTC"},
		{"other environment", func(b *bundle) store.MarketLink {
			return store.MarketLink{AccountID: b.paid.ID, Market: "https://api.ebay.com", User: "alice_ebay", SealedToken: []byte("x"), LinkedAt: t0}
		}, "another eBay environment"},
		{"other secret key", func(b *bundle) store.MarketLink {
			return store.MarketLink{AccountID: b.paid.ID, Market: "https://api.sandbox.ebay.com", User: "alice_ebay", SealedToken: []byte("\x01not sealed by this key"), LinkedAt: t0}
		}, "cannot be decrypted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, _ := setupEBay(t)
			if err := b.store.SetMarketLink(context.Background(), tt.link(b)); err != nil {
				t.Fatal(err)
			}
			r := b.call("getMarketAccount")
			r.wantOK(t)
			msg := str(t, r.body, "message")
			if integer(t, r.body, "linked") != 1 || integer(t, r.body, "usable") != 0 || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "Connect eBay") {
				t.Errorf("getMarketAccount = %s; want linked, not usable, saying %q and how to link", r.raw, tt.want)
			}
		})
	}
}

// TestAddBidWarnsWhenUnlinked: a snipe stored for an account whose snipes
// cannot bid says so at once, not only when it fails at the end.
func TestAddBidWarnsWhenUnlinked(t *testing.T) {
	t.Parallel()
	b, _ := setupEBay(t)
	it := b.item()
	r := b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "25")
	r.wantOK(t)
	if msg := str(t, r.body, "message"); r.body["message_color"] != "orange" || !strings.Contains(msg, "Warning: No eBay account is linked") {
		t.Errorf("addBid while unlinked = %s; want an orange warning saying how to link", r.raw)
	}
	// A watched item (bid 0) will not bid anyway: no warning.
	other := b.item()
	if r := b.call("addBid", "item_no", itoa(other.ItemNo), "bid", "0"); strings.Contains(str(t, r.body, "message"), "Warning") {
		t.Errorf("addBid of a watched item warned: %s", r.raw)
	}
	if err := b.links.Link(context.Background(), b.paid, marketlink.Token{RefreshToken: refreshToken, User: "alice_ebay"}); err != nil {
		t.Fatal(err)
	}
	r = b.call("addBid", "item_no", itoa(it.ItemNo), "bid", "26")
	if r.body["message_color"] != "green" || strings.Contains(str(t, r.body, "message"), "Warning") {
		t.Errorf("addBid once linked = %s; want no warning", r.raw)
	}
}
