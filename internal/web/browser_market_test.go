package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sniped/sniped/internal/api"
	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/ebaysim"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
	"github.com/sniped/sniped/internal/web"
)

// ebayStack is sniped as `serve --market ebay` runs it, in-process: the
// interface and dashboard on one server, with account links, and the eBay
// adapter talking to the simulator served in eBay's shape (the market
// server, with its consent page) on another.
type ebayStack struct {
	base   string // http://host:port/sniped
	market string // the market server's URL
	key    string
	store  store.Store
	acct   store.Account
}

func newEBayStack(t *testing.T) *ebayStack {
	t.Helper()
	browserCtx(t) // skip early when there is no browser
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + basePath

	sm, err := sim.Open(ctx, sim.Config{Seed: 1, Items: 10, Bidders: sim.BiddersOff, ImageBaseURL: "http://127.0.0.1"})
	if err != nil {
		t.Fatalf("sim.Open: %v", err)
	}
	t.Cleanup(func() { sm.Close() })
	const ruName = "sniped-test-RuName"
	ms, err := ebaysim.New(ebaysim.Config{Sim: sm, RuNames: map[string]string{ruName: base + "/market/callback"}, Logger: quiet})
	if err != nil {
		t.Fatalf("ebaysim.New: %v", err)
	}
	mkt := httptest.NewServer(ms.Handler())
	t.Cleanup(mkt.Close)

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	plain, hash := key.New()
	acct, err := st.CreateAccount(ctx, account, store.TierPaid, hash, time.Now())
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}

	consent := &adapterConsent{}
	links, err := marketlink.New(marketlink.Config{Store: st, Key: secret.Generate(), Market: mkt.URL, MarketName: "eBay", Consent: consent})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := ebay.New(ebay.Config{APIURL: mkt.URL, AuthURL: mkt.URL, ClientID: ebaysim.DefaultClientID, ClientSecret: ebaysim.DefaultClientSecret,
		RuName: ruName, Links: links, Logger: quiet})
	if err != nil {
		t.Fatalf("ebay.New: %v", err)
	}
	consent.a = ad

	mux := http.NewServeMux()
	mux.Handle(basePath+"/", api.New(api.Config{Store: st, Market: ad, Clock: clock.Real{}, Logger: quiet, BasePath: basePath, MarketLinks: links}))
	mux.Handle(basePath+"/ui/", http.StripPrefix(basePath+"/ui", web.Handler()))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &ebayStack{base: base, market: mkt.URL, key: plain, store: st, acct: acct}
}

// adapterConsent runs the consent flow through the eBay adapter, as serve does.
type adapterConsent struct{ a *ebay.Adapter }

func (c *adapterConsent) AuthorizeURL(state string) string { return c.a.AuthorizeURL(state) }

func (c *adapterConsent) ExchangeCode(ctx context.Context, code string) (marketlink.Token, error) {
	t, err := c.a.ExchangeCode(ctx, code)
	return marketlink.Token{RefreshToken: t.RefreshToken, Expiry: t.RefreshExpiry, User: t.User}, err
}

// TestDashboardConnectEBay walks "Connect eBay": the dashboard sends the
// user to the marketplace's consent page, the user signs in and agrees,
// and the dashboard comes back showing the linked eBay user; then Unlink.
func TestDashboardConnectEBay(t *testing.T) {
	t.Parallel()
	s := newEBayStack(t)
	tb := openTab(t, s.base+"/ui/", 1280)
	tb.connect(s.key)

	tb.wait("unlinked shown", `document.getElementById("market-connect") !== null`)
	if got := tb.eval(`document.getElementById("market-user").textContent`); got != "eBay: not linked" {
		t.Errorf("market chip = %q, want %q", got, "eBay: not linked")
	}
	if got := tb.eval(`document.getElementById("market-banner").hidden ? "" : document.getElementById("market-banner").textContent`); !strings.Contains(got, "Connect eBay") {
		t.Errorf("banner = %q, want it to say how to link", got)
	}

	tb.screenshot("dashboard-ebay-unlinked.png")

	tb.do("connect eBay", chromedp.Click(chromedp.ID("market-connect")))
	tb.do("consent page", chromedp.WaitVisible(chromedp.ID("login")))
	if got := tb.eval(`location.href`); !strings.HasPrefix(got, s.market+"/oauth2/authorize?") {
		t.Errorf("consent page at %q, want the market server's /oauth2/authorize", got)
	}
	tb.do("sign in and agree",
		chromedp.SendKeys(chromedp.ID("login"), "alice_ebay"),
		chromedp.Click(`button[name="approve"][value="1"]`))

	// Back on the dashboard: the key was kept in the tab, the link is shown.
	tb.do("back on the dashboard", chromedp.WaitVisible(chromedp.ID("market-unlink")))
	if got := tb.eval(`document.getElementById("market-user").textContent`); got != "eBay: alice_ebay" {
		t.Errorf("market chip after consent = %q, want %q", got, "eBay: alice_ebay")
	}
	if got := tb.eval(`document.getElementById("notices").textContent`); !strings.Contains(got, "eBay account linked") {
		t.Errorf("notices = %q, want the linked notice", got)
	}
	if got := tb.eval(`location.search`); got != "" {
		t.Errorf("address bar query after the callback = %q, want it cleaned", got)
	}
	if got := tb.eval(`String(document.getElementById("market-banner").hidden)`); got != "true" {
		t.Errorf("banner hidden = %s, want true once linked", got)
	}
	link, err := s.store.MarketLink(context.Background(), s.acct.ID)
	if err != nil || link.User != "alice_ebay" || link.TokenExpires.IsZero() {
		t.Errorf("stored link = %+v, %v; want alice_ebay with an expiry", link, err)
	}
	tb.screenshot("dashboard-ebay-linked.png")

	// Unlink takes two clicks, like Delete.
	tb.do("unlink", chromedp.Click(chromedp.ID("market-unlink")))
	if got := tb.eval(`document.getElementById("market-unlink").textContent`); got != "Confirm unlink" {
		t.Errorf("unlink button after one click = %q, want %q", got, "Confirm unlink")
	}
	tb.do("confirm unlink", chromedp.Click(chromedp.ID("market-unlink")))
	tb.wait("unlinked", `document.getElementById("market-connect") !== null`)
	if _, err := s.store.MarketLink(context.Background(), s.acct.ID); err == nil {
		t.Errorf("the link is still stored after Unlink")
	}
	tb.noExceptions()
}

// TestDashboardConnectDeclined: pressing Disagree on the consent page comes
// back to the dashboard, which says nothing changed.
func TestDashboardConnectDeclined(t *testing.T) {
	t.Parallel()
	s := newEBayStack(t)
	tb := openTab(t, s.base+"/ui/", 1280)
	tb.connect(s.key)
	tb.wait("unlinked shown", `document.getElementById("market-connect") !== null`)
	tb.do("connect eBay", chromedp.Click(chromedp.ID("market-connect")))
	tb.do("consent page", chromedp.WaitVisible(`button[name="approve"][value="0"]`))
	tb.do("disagree", chromedp.Click(`button[name="approve"][value="0"]`))
	tb.do("back on the dashboard", chromedp.WaitVisible(chromedp.ID("market-connect")))
	if got := tb.eval(`document.getElementById("notices").textContent`); !strings.Contains(got, "cancelled") {
		t.Errorf("notices = %q, want the declined notice", got)
	}
	tb.noExceptions()
}

// TestDashboardMarketOnSimulator: on the simulator there is nothing to
// connect; the header says which marketplace runs.
func TestDashboardMarketOnSimulator(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	tb := s.open(1280)
	tb.connect(s.key)
	tb.wait("market shown", `document.getElementById("market-user") !== null`)
	if got := tb.eval(`document.getElementById("market-user").textContent`); got != "Simulator" {
		t.Errorf("market chip = %q, want Simulator", got)
	}
	if got := tb.eval(`String(document.getElementById("market-connect") === null && document.getElementById("market-banner").hidden)`); got != "true" {
		t.Errorf("connect control or banner shown on the simulator")
	}
	tb.noExceptions()
}
