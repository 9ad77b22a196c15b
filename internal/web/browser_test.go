package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/sniped/sniped/internal/api"
	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/sniper"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
	"github.com/sniped/sniped/internal/web"
)

// Browser test settings.
const (
	// defaultChromium is where Debian's chromium package puts the browser.
	defaultChromium = "/usr/bin/chromium"
	// basePath mounts everything under a prefix, as serve --base-path
	// does, so the tests prove that the page finds the interface itself.
	basePath = "/sniped"
	// stepTimeout bounds one test's browser work. Generous: in CI the
	// end-to-end package (fault storm, soak, chaos) shares the two cores
	// with Chromium, and one test's steps took over 2 minutes there.
	stepTimeout = 6 * time.Minute
	// actionTimeout bounds one do or wait.
	actionTimeout = 75 * time.Second
	// account is the test account's name (and marketplace user).
	account = "alice"
)

// browser is one headless Chromium shared by the package's tests; each
// test gets its own tab in its own browser context (no shared storage).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
	skip   string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromiumPath returns the browser to drive, or "" when there is none.
func chromiumPath() string {
	p := os.Getenv("SNIPED_CHROMIUM")
	if p == "" {
		p = defaultChromium
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// browserCtx starts the shared browser on first use, or skips the test
// when no Chromium is installed.
func browserCtx(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		path := chromiumPath()
		if path == "" {
			browser.skip = "browser tests need Chromium, and none was found at $SNIPED_CHROMIUM or " + defaultChromium +
				": install Debian's package (apt-get install chromium) or set SNIPED_CHROMIUM to a Chromium or Chrome binary"
			return
		}
		dir, err := os.MkdirTemp("", "sniped-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		// The machine may have no outside network: keep Chromium from
		// reaching for it.
		actx, acancel := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.NoFirstRun,
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 900),
		)
		ctx, cancel := chromedp.NewContext(actx)
		browser.ctx = ctx
		browser.cancel = func() { cancel(); acancel(); os.RemoveAll(dir) }
		if err := chromedp.Do(ctx); err != nil {
			browser.err = fmt.Errorf("start %s: %w", path, err)
		}
	})
	if browser.skip != "" {
		t.Skip(browser.skip)
	}
	if browser.err != nil {
		t.Fatalf("browser: %v", browser.err)
	}
	return browser.ctx
}

// stack is a whole sniped in-process: real SQLite store, real simulator
// (in memory, no rival bidders), the interface and the dashboard.
type stack struct {
	t     *testing.T
	srv   *httptest.Server
	base  string // http://host:port/sniped
	sim   *sim.Sim
	clock *pastClock
	store store.Store
	key   string
}

type stackOptions struct {
	rateLimit float64
	rateBurst int
	// sniper runs the real sniper, so snipes fire.
	sniper bool
}

func newStack(t *testing.T, o stackOptions) *stack {
	t.Helper()
	browserCtx(t) // skip early when there is no browser
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + basePath

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &pastClock{}
	mkt, err := sim.Open(ctx, sim.Config{Seed: 1, Items: 30, Bidders: sim.BiddersOff, Clock: clk, ImageBaseURL: base})
	if err != nil {
		t.Fatalf("sim.Open: %v", err)
	}
	t.Cleanup(func() { mkt.Close() })

	plain, hash := key.New()
	if _, err := st.CreateAccount(ctx, account, store.TierPaid, hash, time.Now()); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	resolve := func(r *http.Request, k string) (string, error) {
		a, err := st.AccountByKeyHash(r.Context(), key.Hash(k))
		return a.Name, err
	}
	var notifier api.Notifier
	if o.sniper {
		snp := sniper.New(sniper.Config{Store: st, Market: mkt, Clock: clock.Real{}, Logger: quiet})
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); snp.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		notifier = snp
	}
	mux := http.NewServeMux()
	mux.Handle(basePath+"/", api.New(api.Config{
		Store: st, Market: mkt, Clock: clock.Real{}, Logger: quiet, Notifier: notifier,
		RateLimit: o.rateLimit, RateBurst: o.rateBurst, BasePath: basePath, Notify: newNotify(t, st, mkt),
	}))
	mux.Handle(basePath+"/ui/", http.StripPrefix(basePath+"/ui", web.Handler()))
	mux.Handle(basePath+"/sim/", http.StripPrefix(basePath, mkt.Handler(resolve)))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &stack{t: t, srv: srv, base: base, sim: mkt, clock: clk, store: st, key: plain}
}

// item lists a simulator item ending in d, with rival bids at the given
// maximums, a quarter of an hour apart, so that it has a bid history.
func (s *stack) item(title string, d time.Duration, rivals ...money.Amount) int64 {
	s.t.Helper()
	ctx := context.Background()
	const gap = 15 * time.Minute
	back := time.Duration(len(rivals))*gap + 5*time.Minute
	s.clock.set(back)
	defer s.clock.set(0)
	no, _, err := s.sim.CreateItem(ctx, sim.NewItem{Title: title, StartPrice: 2500, EndsIn: d + back})
	if err != nil {
		s.t.Fatalf("CreateItem: %v", err)
	}
	for i, m := range rivals {
		back -= gap
		s.clock.set(back)
		if _, err := s.sim.PlaceBid(ctx, fmt.Sprintf("rival_%d", i), no, m); err != nil {
			s.t.Fatalf("rival bid %v on %d: %v", m, no, err)
		}
	}
	return no
}

// marketItem returns an item as the marketplace sees it now.
func (s *stack) marketItem(no int64) market.Item {
	s.t.Helper()
	it, err := s.sim.Item(context.Background(), no)
	if err != nil {
		s.t.Fatalf("Item(%d): %v", no, err)
	}
	return it
}

// pastClock is the simulator's clock: real time, or real time moved back
// while a test lays down an item's history.
type pastClock struct {
	mu   sync.Mutex
	back time.Duration
}

func (c *pastClock) set(back time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.back = back
}

func (c *pastClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(-c.back)
}

func (c *pastClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

// get calls an interface operation directly, for checks behind the page.
func (s *stack) get(op string, kv ...string) map[string]any {
	s.t.Helper()
	v := url.Values{"key": {s.key}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	res, err := http.Get(s.base + "/" + op + "?" + v.Encode())
	if err != nil {
		s.t.Fatalf("%s: %v", op, err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		s.t.Fatalf("%s: decode: %v", op, err)
	}
	return body
}

// tab is one browser tab on the dashboard.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// open starts a tab at the dashboard with the given viewport width.
func (s *stack) open(width int64) *tab {
	s.t.Helper()
	return openTab(s.t, s.base+"/ui/", width)
}

// openTab starts a tab in a fresh browser context at pageURL and records
// what the page logs.
func openTab(t *testing.T, pageURL string, width int64) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	tb := &tab{t: t}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.console = append(tb.console, m)
			tb.mu.Unlock()
		}
	}()
	tctx, tcancel := context.WithTimeout(ctx, stepTimeout)
	t.Cleanup(tcancel)
	tb.ctx = tctx
	if rate, err := strconv.ParseFloat(os.Getenv("SNIPED_WEB_CPU_SLOWDOWN"), 64); err == nil && rate > 1 {
		// Reproduces a loaded CI machine on a quiet one: the page's own
		// work (layout, timers, scripts) runs rate times slower.
		tb.do("slow the page's CPU", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate})
			return err
		}))
	}
	tb.do("open "+pageURL, chromedp.EmulateViewport(width, 900), chromedp.Navigate(pageURL))
	return tb
}

// do runs the actions as one step. A step has the same loose bound as a
// wait: a click waits for its element to be visible, and one that never
// becomes so must fail with the page's state, not hang the whole test.
func (tb *tab) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v%s", step, err, tb.state())
	}
}

// typeItem opens the editor, types an item number and waits for its
// preview.
func (tb *tab) typeItem(itemNo int64) {
	tb.t.Helper()
	tb.do("open the editor and type the item number",
		chromedp.Click(chromedp.ID("add-btn")),
		chromedp.WaitVisible(chromedp.ID("ed-item")),
		chromedp.SendKeys(chromedp.ID("ed-item"), fmt.Sprint(itemNo)))
	tb.previewed(itemNo)
}

// setItem replaces the editor's item number and waits for the lookup it
// starts to answer. The preview keeps its height, but waiting keeps the
// next steps off a page that is still changing.
func (tb *tab) setItem(itemNo int64) {
	tb.t.Helper()
	tb.do("set the item number", chromedp.SetValue(chromedp.ID("ed-item"), fmt.Sprint(itemNo)))
	tb.previewed(itemNo)
}

// previewed waits for the editor's preview to show the item, or to say
// the marketplace has none by that number.
func (tb *tab) previewed(itemNo int64) {
	tb.t.Helper()
	tb.wait("item previewed", fmt.Sprintf(`(p => p.dataset.state === "item" && p.dataset.item === "%[1]d" ||
		p.textContent.includes("no item %[1]d"))(document.getElementById("ed-preview"))`, itemNo))
}

// wait polls a JavaScript predicate until it is true. The bound is loose:
// in CI the end-to-end package (fault storm, soak, chaos) shares the two
// cores with the browser, and a step once took over 30 s there.
func (tb *tab) wait(step, predicate string) {
	tb.t.Helper()
	_, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(actionTimeout)))
	if err != nil {
		tb.t.Fatalf("%s: waiting for %s: %v%s", step, predicate, err, tb.state())
	}
}

func (tb *tab) eval(expr string) string {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// state describes the page for a failure message.
func (tb *tab) state() string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.ctx), 2*time.Second)
	defer cancel()
	v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[
		"alert: " + document.getElementById("alert-text").textContent,
		"connect error: " + document.getElementById("connect-error").textContent,
		"editor error: " + document.getElementById("ed-error").textContent,
		"editor: open " + document.getElementById("editor").open + ", save disabled " + document.getElementById("ed-save").disabled +
			", item " + JSON.stringify(document.getElementById("ed-item").value) + ", bid " + JSON.stringify(document.getElementById("ed-bid").value),
		"advanced open " + document.querySelector("#editor details").open + ", force " + document.getElementById("ed-force").checked +
			", enabled " + document.getElementById("ed-enabled").checked + ", preview " + JSON.stringify(document.getElementById("ed-preview").textContent),
		"detail hidden " + document.getElementById("detail").hidden + ", delete button " + JSON.stringify(document.getElementById("delete-btn").textContent),
		"rows: " + [...document.querySelectorAll("#items tr")].map(r => r.dataset.item).join(",")].join("\n")`))
	return "\npage state:\n" + v
}

// connect pastes the key and waits for the snipe list.
func (tb *tab) connect(k string) {
	tb.t.Helper()
	tb.do("paste key",
		chromedp.WaitVisible(chromedp.ID("key-input")),
		chromedp.SendKeys(chromedp.ID("key-input"), k),
		chromedp.Click(chromedp.ID("connect-btn")),
		chromedp.WaitVisible(chromedp.ID("add-btn")))
	tb.wait("list loaded", `document.getElementById("page-info").textContent !== ""`)
}

// noExceptions fails the test if the page threw.
func (tb *tab) noExceptions() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, m := range tb.console {
		if m.IsException() {
			tb.t.Errorf("page threw: %s:%d %s", m.URL, m.Line+1, m.Text)
		}
	}
}

// screenshot saves the full page into the artifacts folder.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	dir := os.Getenv("SNIPED_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts")
	}
	buf, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatalf("artifacts: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	abs, _ := filepath.Abs(path)
	tb.t.Logf("screenshot: %s", abs)
}

func row(itemNo int64) string { return fmt.Sprintf(`#items tr[data-item="%d"]`, itemNo) }

func TestDashboardSnipeLifecycle(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	itemNo := s.item("Leica M3 rangefinder camera, serviced", 2*time.Hour, 3000, 4200, 4800)
	s.item("Nintendo Game Boy Color, teal", 3*time.Hour)
	tb := s.open(1280)
	tb.connect(s.key)

	// The key lives in this tab's sessionStorage only.
	if got := tb.eval(`sessionStorage.getItem("sniped.key")`); got != s.key {
		t.Errorf("sessionStorage key = %q, want the pasted key", got)
	}
	if got := tb.eval(`document.cookie + "|" + location.href`); strings.Contains(got, s.key) || strings.Contains(got, "key=") {
		t.Errorf("cookie|URL = %q, want no key", got)
	}
	tb.wait("current tab empty", `!document.getElementById("items-empty").hidden`)

	tb.typeItem(itemNo)
	tb.do("add snipe",
		chromedp.SendKeys(chromedp.ID("ed-bid"), "55.00"),
		chromedp.SetValue(chromedp.ID("ed-delay"), "5"),
		chromedp.SendKeys(chromedp.ID("ed-group"), "cameras"),
		chromedp.Click(chromedp.ID("ed-save")),
		chromedp.WaitNotVisible(chromedp.ID("editor")))
	tb.wait("snipe in current tab", fmt.Sprintf(
		`document.querySelector('.tab[aria-selected="true"]').dataset.tab === "current" &&
		 !!document.querySelector(%q) && document.querySelector(%q).textContent.includes("$55.00")`, row(itemNo), row(itemNo)))
	if got := tb.eval(fmt.Sprintf(`document.querySelector(%q).textContent`, row(itemNo))); !strings.Contains(got, "cameras") {
		t.Errorf("row text = %q, want the group name cameras", got)
	}

	// Saving opens the item: details, badge, countdowns and the chart.
	tb.do("open item", chromedp.Click(chromedp.CSS(row(itemNo)+" .open-item")))
	tb.wait("chart drawn", `document.querySelectorAll("#chart svg.chart .hist-point").length === 3 &&
		!!document.querySelector("#chart svg.chart .snipe-line")`)
	if got := tb.eval(`document.getElementById("badge").textContent + "|" + document.getElementById("badge").className`); got != "Pending|badge gray" {
		t.Errorf("badge = %q, want Pending|badge gray", got)
	}
	tb.wait("countdowns tick", `/^1h \d\dm \d\ds$/.test(document.getElementById("end-count").textContent) &&
		/^1h \d\dm \d\ds$/.test(document.getElementById("shot-count").textContent)`)
	if got := tb.eval(`document.querySelector("#chart .snipe-line").getAttribute("stroke-dasharray")`); got == "" {
		t.Errorf("snipe line has no dash pattern")
	}
	if got := tb.eval(`document.querySelector("#chart .snipe-label").textContent`); got != "Snipe $55.00" {
		t.Errorf("snipe label = %q, want Snipe $55.00", got)
	}
	price := "$" + s.marketItem(itemNo).CurrentPrice.String()
	if got := tb.eval(`document.getElementById("facts").textContent`); !strings.Contains(got, "Current price"+price) || !strings.Contains(got, "5 s") {
		t.Errorf("facts = %q, want current price %s and lead time 5 s", got, price)
	}
	tb.do("clear notices", chromedp.Evaluate[chromedp.Void](`document.getElementById("notices").replaceChildren()`))
	tb.screenshot("dashboard-desktop.png")
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.wait("chart redrawn narrow", `document.querySelector("#chart svg.chart").getAttribute("width") < 390`)
	tb.screenshot("dashboard-phone.png")
	tb.do("desktop width", chromedp.EmulateViewport(1280, 900))
	// The chart redraws on the resize and the panel's layout changes with
	// it: a click aimed before that could land beside the button.
	tb.wait("chart redrawn wide", `document.querySelector("#chart svg.chart").getAttribute("width") > 390`)

	// Delete takes a second click, within 4 s, to confirm.
	tb.do("delete snipe", chromedp.Click(chromedp.ID("delete-btn")))
	tb.wait("delete asks to confirm", `document.getElementById("delete-btn").textContent === "Confirm delete"`)
	tb.do("confirm delete", chromedp.Click(chromedp.ID("delete-btn")))
	tb.wait("snipe gone", fmt.Sprintf(`!document.querySelector(%q) && document.getElementById("detail").hidden`, row(itemNo)))
	if total := s.get("getUserItems", "filter", "current")["total"]; total != 0.0 {
		t.Errorf("getUserItems total after delete = %v, want 0", total)
	}
	tb.noExceptions()
}

// TestDashboardFollowsTheShot is the new user's first try: snipe an item
// that ends in seconds and watch the countdown, the shot and the outcome.
func TestDashboardFollowsTheShot(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{sniper: true})
	itemNo := s.item("Rolleiflex 2.8F twin-lens reflex", 15*time.Second, 3000)
	tb := s.open(1280)
	tb.connect(s.key)
	tb.typeItem(itemNo)
	tb.do("add snipe",
		chromedp.SendKeys(chromedp.ID("ed-bid"), "60"),
		chromedp.SetValue(chromedp.ID("ed-delay"), "3"),
		chromedp.Click(chromedp.ID("ed-save")),
		chromedp.WaitNotVisible(chromedp.ID("editor")))
	// Under a loaded machine the shot may come before the first poll, so
	// a countdown or "fired" both count here.
	tb.wait("counting down", `/^(\d+s|fired)$/.test(document.getElementById("shot-count").textContent) &&
		/^(\d+s|ended)$/.test(document.getElementById("end-count").textContent)`)
	tb.wait("shot fired", `document.getElementById("shot-count").textContent === "fired"`)
	_, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](
		`document.getElementById("end-count").textContent === "ended" &&
		 document.getElementById("badge").textContent === "Won" &&
		 document.getElementById("badge").classList.contains("green")`,
		chromedp.WithPollingTimeout(45*time.Second)))
	if err != nil {
		t.Fatalf("waiting for the Won badge: %v%s", err, tb.state())
	}
	tb.wait("chart has our bid", `document.querySelectorAll("#chart .hist-point").length >= 2`)
	tb.do("clear notices", chromedp.Evaluate[chromedp.Void](`document.getElementById("notices").replaceChildren()`))
	tb.screenshot("dashboard-won.png")
	tb.noExceptions()
}

func TestDashboardBadKey(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	tb := s.open(1280)
	tb.do("paste wrong key",
		chromedp.WaitVisible(chromedp.ID("key-input")),
		chromedp.SendKeys(chromedp.ID("key-input"), "not-the-key"),
		chromedp.Click(chromedp.ID("connect-btn")))
	tb.wait("error shown", `document.getElementById("connect-error").textContent.includes("key was not accepted")`)
	tb.screenshot("dashboard-bad-key.png")
	if got := tb.eval(`String(sessionStorage.getItem("sniped.key"))`); got != "null" {
		t.Errorf("sessionStorage key after a refused key = %q, want none", got)
	}
	if got := tb.eval(`String(document.getElementById("view-snipes").hidden)`); got != "true" {
		t.Errorf("snipe view hidden = %s, want true", got)
	}
	tb.noExceptions()
}

func TestDashboardShowsInterfaceErrors(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	itemNo := s.item("Omega Seamaster 300", time.Hour, 3000)
	tb := s.open(1280)
	tb.connect(s.key)

	tb.typeItem(itemNo)
	tb.do("bid below minimum",
		chromedp.SendKeys(chromedp.ID("ed-bid"), "1.00"),
		chromedp.Click(chromedp.ID("ed-save")))
	tb.wait("minimum named", `/minimum/i.test(document.getElementById("ed-error").textContent) &&
		document.getElementById("editor").open`)

	tb.do("bad amount", chromedp.SetValue(chromedp.ID("ed-bid"), "1.005"), chromedp.Click(chromedp.ID("ed-save")))
	tb.wait("amount rule named", `document.getElementById("ed-error").textContent.includes("at most 2 decimals")`)

	tb.setItem(999999999999)
	tb.do("unknown item",
		chromedp.SetValue(chromedp.ID("ed-bid"), "10"),
		chromedp.Click(chromedp.ID("ed-save")))
	tb.wait("not found shown", `/999999999999|not found|no item/i.test(document.getElementById("ed-error").textContent)`)

	// Force stores a bid below the minimum, with a warning.
	tb.setItem(itemNo)
	tb.do("forced bid",
		chromedp.SetValue(chromedp.ID("ed-bid"), "1.00"),
		chromedp.Click(chromedp.CSS("#editor summary")),
		chromedp.Click(chromedp.ID("ed-force")),
		chromedp.Click(chromedp.ID("ed-save")),
		chromedp.WaitNotVisible(chromedp.ID("editor")))
	tb.wait("forced snipe listed", fmt.Sprintf(`!!document.querySelector(%q)`, row(itemNo)))
	tb.noExceptions()
}

func TestDashboardRateLimited(t *testing.T) {
	t.Parallel()
	// Connecting costs five calls (justTesting, getMarketAccount,
	// getNotifiers, getUserItems, getUserSearches); the refresh is the
	// sixth and is refused.
	s := newStack(t, stackOptions{rateLimit: 0.01, rateBurst: 5})
	tb := s.open(1280)
	tb.connect(s.key)
	tb.do("refresh", chromedp.Click(chromedp.ID("refresh-btn")))
	tb.wait("rate limit shown", `!document.getElementById("alert").hidden &&
		/Too many requests for this key\. Try again in \d+ seconds\./.test(document.getElementById("alert-text").textContent)`)
	tb.noExceptions()
}

func TestDashboardSearchSavedSearchesAndImport(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	found := s.item("Zeiss Ikon Contessa folding camera", time.Hour, 3000)
	watched := s.item("Penguin paperbacks, orange spines", 2*time.Hour)
	if err := s.sim.Watch(context.Background(), account, watched); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	tb := s.open(1280)
	tb.connect(s.key)

	tb.do("search",
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="search"]`)),
		chromedp.WaitVisible(chromedp.ID("search-query")),
		chromedp.SendKeys(chromedp.ID("search-query"), "contessa"),
		chromedp.Click(chromedp.ID("search-btn")))
	tb.wait("result listed", fmt.Sprintf(`!!document.querySelector('#results tr[data-item="%d"]')`, found))

	tb.do("save search", chromedp.Click(chromedp.ID("save-search-btn")))
	tb.wait("saved search listed", `[...document.querySelectorAll("#saved-list .chip")].some(c => c.textContent.includes("contessa"))`)
	tb.do("clear notices", chromedp.Evaluate[chromedp.Void](`document.getElementById("notices").replaceChildren()`))
	tb.screenshot("dashboard-search.png")

	tb.do("snipe this",
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#results tr[data-item="%d"] .snipe-this`, found))),
		chromedp.WaitVisible(chromedp.ID("ed-bid")))
	tb.screenshot("dashboard-snipe-this.png")
	// The maximum is left to the user, with the minimum as a hint: the
	// minimum as a maximum almost always loses.
	minimum := s.marketItem(found).MinimumToBid.String()
	if got, want := tb.eval(`document.getElementById("ed-item").value + "|" + document.getElementById("ed-bid").value + "|" + document.getElementById("ed-bid").placeholder`),
		fmt.Sprintf("%d||at least %s", found, minimum); got != want {
		t.Errorf("editor opened with %q, want %q (item, empty maximum, minimum as the hint)", got, want)
	}
	tb.do("type a maximum", chromedp.SendKeys(chromedp.ID("ed-bid"), minimum))
	tb.do("save snipe", chromedp.Click(chromedp.ID("ed-save")), chromedp.WaitNotVisible(chromedp.ID("editor")))
	tb.wait("sniped item in current tab", fmt.Sprintf(`!document.getElementById("view-snipes").hidden && !!document.querySelector(%q)`, row(found)))

	tb.do("delete saved search",
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="search"]`)),
		chromedp.Click(chromedp.CSS("#saved-list .chip-x")))
	tb.wait("saved search gone", `document.querySelectorAll("#saved-list .chip").length === 0`)

	tb.do("import watch list",
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="snipes"]`)),
		chromedp.Click(chromedp.ID("import-btn")))
	tb.wait("imported into watched", fmt.Sprintf(`document.querySelector('.tab[aria-selected="true"]').dataset.tab === "watched" &&
		!!document.querySelector(%q) && document.getElementById("import-status").hidden`, row(watched)))
	tb.noExceptions()
}

// TestChartJSRendersDataset feeds a real getBidHistoryDataset answer to
// Chart.js 2.9.4 (the bundle with moment, for the time axis) as a line and
// as a scatter chart. Chart.js is not in the repo: point SNIPED_CHARTJS at
// its dist/Chart.bundle.min.js.
func TestChartJSRendersDataset(t *testing.T) {
	t.Parallel()
	lib := os.Getenv("SNIPED_CHARTJS")
	if lib == "" {
		t.Skip("set SNIPED_CHARTJS to Chart.js 2.9.4's dist/Chart.bundle.min.js to run this check " +
			"(e.g. npm pack chart.js@2.9.4 && tar xzf chart.js-2.9.4.tgz: package/dist/Chart.bundle.min.js)")
	}
	code, err := os.ReadFile(lib)
	if err != nil {
		t.Fatalf("SNIPED_CHARTJS: %v", err)
	}
	s := newStack(t, stackOptions{})
	itemNo := s.item("Fender Stratocaster 1979", time.Hour, 3000, 4200, 5100)
	if body := s.get("addBid", "item_no", fmt.Sprint(itemNo), "bid", "75.00"); body["status"] != "OK" {
		t.Fatalf("addBid: %v", body)
	}
	res, err := http.Get(s.base + "/getBidHistoryDataset?" + url.Values{"key": {s.key}, "item_no": {fmt.Sprint(itemNo)}}.Encode())
	if err != nil {
		t.Fatalf("getBidHistoryDataset: %v", err)
	}
	dataset, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("getBidHistoryDataset: %d %v", res.StatusCode, err)
	}

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/Chart.bundle.min.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(code)
		case "/dataset.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write(dataset)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, chartJSPage)
		}
	}))
	t.Cleanup(page.Close)

	tb := openTab(t, page.URL, 1280)
	type result struct {
		Type    string `json:"type"`
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Painted int    `json:"painted"`
		Points  []int  `json:"points"`
		XScale  string `json:"xScale"`
	}
	results, err := chromedp.Run(tb.ctx, chromedp.Poll[[]result](`window.results`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Fatalf("waiting for the charts: %v", err)
	}
	for _, r := range results {
		if !r.OK {
			t.Errorf("Chart.js %s chart: %s", r.Type, r.Error)
			continue
		}
		if r.Painted == 0 {
			t.Errorf("Chart.js %s chart painted no pixels", r.Type)
		}
		if len(r.Points) != 2 || r.Points[0] != 3 || r.Points[1] != 2 {
			t.Errorf("Chart.js %s chart points per dataset = %v, want [3 2] (history, snipe line)", r.Type, r.Points)
		}
		if r.XScale != "time" {
			t.Errorf("Chart.js %s chart x scale = %q, want time", r.Type, r.XScale)
		}
	}
	if len(results) != 2 {
		t.Errorf("got %d chart results, want 2 (line, scatter)", len(results))
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, m := range tb.console {
		if m.IsException() || m.Type == chromedp.ConsoleError {
			t.Errorf("Chart.js page logged %s: %s", m.Type, m.Text)
		}
	}
}

// chartJSPage draws the dataset with Chart.js as a consumer would: the
// datasets passed through untouched, a time x-axis.
const chartJSPage = `<!doctype html>
<html><head><meta charset="utf-8"><script src="/Chart.bundle.min.js"></script></head>
<body>
<canvas id="line" width="640" height="320"></canvas>
<canvas id="scatter" width="640" height="320"></canvas>
<script>
(async () => {
  const datasets = await (await fetch("/dataset.json")).json();
  const out = [];
  for (const type of ["line", "scatter"]) {
    try {
      const canvas = document.getElementById(type);
      const ctx = canvas.getContext("2d");
      const chart = new Chart(ctx, {
        type,
        data: { datasets: JSON.parse(JSON.stringify(datasets)) },
        options: { animation: false, responsive: false, scales: { xAxes: [{ type: "time" }] } },
      });
      chart.update();
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
      out.push({ type, ok: true, painted,
        points: chart.data.datasets.map((_, i) => chart.getDatasetMeta(i).data.length),
        xScale: chart.scales["x-axis-0"] ? chart.scales["x-axis-0"].type : Object.values(chart.scales)[0].type });
    } catch (e) {
      out.push({ type, ok: false, error: String((e && e.stack) || e) });
    }
  }
  window.results = out;
})();
</script></body></html>`

// TestChartRenderer draws edge-case datasets with the page's own renderer:
// every case must draw without throwing, with readable axes.
func TestChartRenderer(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	tb := s.open(1280)
	tb.wait("renderer loaded", `typeof window.BidChart === "object"`)
	type result struct {
		Name   string   `json:"name"`
		SVG    bool     `json:"svg"`
		Points int      `json:"points"`
		Line   bool     `json:"line"`
		XTicks []string `json:"xTicks"`
		YTicks []string `json:"yTicks"`
		Empty  string   `json:"empty"`
	}
	got, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]result](`(() => {
		const t0 = Date.UTC(2026, 2, 14, 12, 0, 0);
		const hist = pts => ({ borderColor: "#36a2eb", backgroundColor: "#36a2eb", data: pts });
		const line = (y, a, b) => ({ borderColor: "#ff6384", borderDash: [5, 5], data: [{ x: a, y }, { x: b, y }], label: "snipe" });
		const cases = {
			empty: [hist([]), line(0, t0, t0)],
			watchedNoBids: [hist([]), { data: [] }],
			onlySnipe: [hist([]), line(25, t0, t0 + 3600e3)],
			onePoint: [hist([{ x: t0, y: 10 }]), line(25, t0, t0)],
			sameInstant: [hist([{ x: t0, y: 10 }, { x: t0, y: 11 }]), line(25, t0, t0)],
			sevenDays: [hist([{ x: t0, y: 1 }, { x: t0 + 3 * 864e5, y: 150 }, { x: t0 + 7 * 864e5, y: 999.99 }]), line(1200, t0, t0 + 7 * 864e5)],
			seconds: [hist([{ x: t0, y: 100 }, { x: t0 + 4000, y: 101 }, { x: t0 + 9000, y: 102.5 }]), line(110, t0, t0 + 9000)],
			notAnArray: {},
		};
		return Object.entries(cases).map(([name, ds]) => {
			const box = document.createElement("div");
			box.style.width = "420px";
			document.body.appendChild(box);
			BidChart.render(box, ds, name === "sevenDays" ? "EUR" : "USD", name);
			const svg = box.querySelector("svg");
			const r = { name, svg: !!svg, points: box.querySelectorAll(".hist-point").length, line: !!box.querySelector(".snipe-line"),
				xTicks: [], yTicks: [], empty: (box.querySelector(".chart-empty") || {}).textContent || "" };
			if (svg) {
				const ticks = [...svg.querySelectorAll("text.tick")];
				r.xTicks = ticks.filter(e => e.getAttribute("text-anchor") === "middle").map(e => e.textContent);
				r.yTicks = ticks.filter(e => e.getAttribute("text-anchor") === "end").map(e => e.textContent);
			}
			box.remove();
			return r;
		});
	})()`))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	want := map[string]struct {
		svg    bool
		points int
		line   bool
	}{
		"empty":         {false, 0, false},
		"watchedNoBids": {false, 0, false},
		"onlySnipe":     {true, 0, true},
		"onePoint":      {true, 1, true},
		"sameInstant":   {true, 2, true},
		"sevenDays":     {true, 3, true},
		"seconds":       {true, 3, true},
		"notAnArray":    {false, 0, false},
	}
	for _, r := range got {
		w := want[r.Name]
		if r.SVG != w.svg || r.Points != w.points || r.Line != w.line {
			t.Errorf("%s: svg=%v points=%d line=%v, want svg=%v points=%d line=%v", r.Name, r.SVG, r.Points, r.Line, w.svg, w.points, w.line)
		}
		if !r.SVG {
			if !strings.Contains(r.Empty, "No bids yet") {
				t.Errorf("%s: empty state = %q, want it to say no bids yet", r.Name, r.Empty)
			}
			continue
		}
		t.Logf("%s: x ticks %q, y ticks %q", r.Name, r.XTicks, r.YTicks)
		if len(r.XTicks) < 2 || len(r.YTicks) < 2 {
			t.Errorf("%s: x ticks %q, y ticks %q, want at least 2 of each", r.Name, r.XTicks, r.YTicks)
		}
		for _, y := range r.YTicks {
			if r.Name == "sevenDays" && !strings.Contains(y, "€") {
				t.Errorf("%s: y tick %q, want euros", r.Name, y)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("rendered %d cases, want %d", len(got), len(want))
	}
	tb.noExceptions()
}
