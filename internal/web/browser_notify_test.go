package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

// newNotify is the stack's notification service. Its loops do not run:
// the pages call testNotifier and getSearchResults?id=N, which work
// without them. Targets on loopback are allowed (the test receivers).
func newNotify(t *testing.T, st store.Store, mk market.Market) *notify.Service {
	t.Helper()
	k, err := secret.New(make([]byte, secret.Size))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := notify.New(notify.Config{Store: st, Market: mk, Key: k, AllowPrivate: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// hookServer answers 200 on /ok and 500 elsewhere, counting requests.
type hookServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newHookServer(t *testing.T) *hookServer {
	h := &hookServer{hits: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		h.mu.Unlock()
		if r.URL.Path != "/ok" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// target is the selector of a notification target's row.
func target(id string) string { return fmt.Sprintf(`#notify-targets tr[data-target="%s"]`, id) }

func TestDashboardNotifications(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	hooks := newHookServer(t)
	tb := s.open(1280)
	tb.connect(s.key)

	tb.do("open Notifications",
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="notify"]`)),
		chromedp.WaitVisible(chromedp.ID("notify-url")))
	tb.wait("empty list", `!document.getElementById("notify-empty").hidden`)
	tb.do("a URL that is not one",
		chromedp.SendKeys(chromedp.ID("notify-url"), "example.com/hook"),
		chromedp.Click(chromedp.ID("notify-add")))
	tb.wait("error names the field", `/^Target URL must be an absolute URL/.test(document.getElementById("notify-error").textContent)`)
	tb.do("clear the field", chromedp.Evaluate[chromedp.Void](`document.getElementById("notify-url").value = ""`))

	tb.do("add a webhook without snipe.placed",
		chromedp.SendKeys(chromedp.ID("notify-url"), hooks.URL+"/ok"),
		chromedp.Click(chromedp.CSS(`#notify-events input[value="snipe.placed"]`)),
		chromedp.Click(chromedp.ID("notify-add")))
	tb.wait("secret shown once", `/^whsec_[0-9a-f]{64}$/.test(document.getElementById("notify-secret-value")?.textContent || "")`)
	tb.wait("target listed", `document.querySelectorAll("#notify-targets tr").length === 1`)
	id := tb.eval(`document.querySelector("#notify-targets tr").dataset.target`)
	if got := tb.eval(`document.querySelector("#notify-targets tr").textContent`); strings.Contains(got, "all events") || strings.Contains(got, "Bid placed") || !strings.Contains(got, "Won, Lost (with the reason)") || !strings.Contains(got, "Not used yet") {
		t.Errorf("target row = %q; want its five events by their labels, not Bid placed, never used", got)
	}
	tb.do("clear notices", chromedp.Evaluate[chromedp.Void](`document.getElementById("notices").replaceChildren()`))
	tb.screenshot("dashboard-notifications-added.png")

	tb.do("test it", chromedp.Click(chromedp.CSS(target(id)+" button")))
	tb.wait("delivered", fmt.Sprintf(`document.querySelector(%q)?.textContent.includes("Delivered")`, target(id)))
	if hooks.count("/ok") != 1 {
		t.Errorf("the receiver got %d test requests, want 1", hooks.count("/ok"))
	}

	tb.do("add a failing target",
		chromedp.Click(chromedp.CSS("#notify-secret button:last-child")),
		chromedp.SendKeys(chromedp.ID("notify-url"), hooks.URL+"/down"),
		chromedp.Click(chromedp.ID("notify-add")))
	tb.wait("second target", `document.querySelectorAll("#notify-targets tr").length === 2`)
	down := tb.eval(`document.querySelectorAll("#notify-targets tr")[1].dataset.target`)
	tb.do("test the failing target", chromedp.Click(chromedp.CSS(target(down)+" button")))
	tb.wait("failed with the reason", fmt.Sprintf(`document.querySelector(%q)?.textContent.includes("HTTP 500")`, target(down)))

	// A target that kept failing for a day is disabled; the page says so
	// wherever the user is (the nav flag) and explains on the page.
	downID, _ := strconv.ParseInt(down, 10, 64)
	ctx := context.Background()
	ev, _, err := s.store.EmitEvent(ctx, store.NewEvent{AccountID: s.accountID(), Type: store.EventSnipeWon, Data: []byte(`{}`), NotifierID: downID, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.FinishDelivery(ctx, store.DeliveryResult{EventID: ev.ID, NotifierID: downID, Disable: true,
		Error: "gave up after 24h0m0s of retries (31 attempts); last error: the target answered HTTP 500", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	won, _ := json.Marshal(store.SnipeEventData{ItemNo: "310000000099", Title: "Leica M3 body", Bid: 45, Currency: "USD",
		CurrentPrice: 41, Outcome: 1, Status: "Won", Message: "You won this item. Pay the seller on the marketplace."})
	if _, _, err := s.store.EmitEvent(ctx, store.NewEvent{AccountID: s.accountID(), Type: store.EventSnipeWon, Data: won, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	tb.do("back to snipes and Notifications again",
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="snipes"]`)),
		chromedp.Click(chromedp.CSS(`.view-btn[data-view="notify"]`)))
	tb.wait("nav flag", `!document.getElementById("notify-flag").hidden`)
	tb.wait("disabled explained", `!document.getElementById("notify-disabled").hidden &&
		document.getElementById("notify-disabled").textContent.includes("gave up after 24h")`)
	tb.wait("the win listed under recent events", `[...document.querySelectorAll("#events li")].some(li =>
		li.dataset.type === "snipe.won" && li.textContent.includes("Leica M3 body") && li.textContent.includes("Pay the seller"))`)
	tb.do("clear notices", chromedp.Evaluate[chromedp.Void](`document.getElementById("notices").replaceChildren()`))
	tb.screenshot("dashboard-notifications.png")

	tb.do("delete the failing target",
		chromedp.Click(chromedp.CSS(target(down)+" .danger")),
		chromedp.Click(chromedp.CSS(target(down)+" .danger")))
	tb.wait("deleted", fmt.Sprintf(`!document.querySelector(%q) && document.getElementById("notify-flag").hidden`, target(down)))
	tb.noExceptions()

	phone := s.open(390)
	phone.connect(s.key)
	phone.do("open Notifications on a phone", chromedp.Click(chromedp.CSS(`.view-btn[data-view="notify"]`)))
	phone.wait("target listed", `document.querySelectorAll("#notify-targets tr").length === 1`)
	if overflow := phone.eval(`String(document.documentElement.scrollWidth > window.innerWidth)`); overflow != "false" {
		t.Errorf("the Notifications page is wider than a 390 px phone")
	}
	phone.screenshot("dashboard-notifications-phone.png")
	phone.noExceptions()
}

func TestDashboardNewMatches(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	s.item("Hasselblad 500C/M body", time.Hour)
	id := fmt.Sprint(s.get("addSearch", "query", "hasselblad")["id"])
	s.get("getSearchResults", "id", id) // the first run remembers what is listed
	fresh := s.item("Hasselblad 80mm Planar", 2*time.Hour)
	s.get("getSearchResults", "id", id) // a run that finds it: new_count 1

	tb := s.open(1280)
	tb.connect(s.key)
	tb.do("open Notifications", chromedp.Click(chromedp.CSS(`.view-btn[data-view="notify"]`)))
	tb.wait("saved search listed with its new count", `document.querySelector(".match-group h3")?.textContent.includes("1 new")`)
	// Opening the page does not run the search, which would reset the count.
	if got := s.get("getUserSearches")["searches"].([]any)[0].(map[string]any)["new_count"]; got != float64(1) {
		t.Errorf("new_count after opening the page = %v, want 1 (the page must not run the search by itself)", got)
	}
	tb.do("show matches", chromedp.Click(chromedp.CSS(".match-group button")))
	row := fmt.Sprintf(`.match-list tr[data-item="%d"]`, fresh)
	tb.wait("new item first, marked new", fmt.Sprintf(`document.querySelector(".match-list tbody tr")?.dataset.item === "%d" &&
		document.querySelector(%q).textContent.includes("New")`, fresh, row))
	tb.screenshot("dashboard-new-matches.png")

	tb.do("snipe this", chromedp.Click(chromedp.CSS(row+" .snipe-this")), chromedp.WaitVisible(chromedp.ID("ed-bid")))
	minimum := s.marketItem(fresh).MinimumToBid.String()
	tb.wait("preview", `document.querySelector("#ed-preview .preview-title")?.textContent === "Hasselblad 80mm Planar"`)
	if got, want := tb.eval(`document.getElementById("ed-bid").value + "|" + document.getElementById("ed-bid").placeholder`), "|at least "+minimum; got != want {
		t.Errorf("bid field = %q, want %q (empty, the minimum as a hint)", got, want)
	}
	tb.noExceptions()
}

func TestDashboardAddSnipeDialog(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{})
	no := s.item("Rolleiflex 2.8F", time.Hour, 3000)
	it := s.marketItem(no)
	tb := s.open(1280)
	tb.connect(s.key)

	tb.do("add snipe", chromedp.Click(chromedp.ID("add-btn")), chromedp.WaitVisible(chromedp.ID("ed-item")))
	// The form must not move while the lookup answers, or a click aimed
	// at a control as the preview grows lands beside it (the likely cause
	// of a CI failure, docs/dashboard.md).
	formTop := `String(document.getElementById("ed-item").getBoundingClientRect().top)`
	empty := tb.eval(formTop)
	tb.do("type the item number", chromedp.SendKeys(chromedp.ID("ed-item"), strconv.FormatInt(no, 10)))
	tb.wait("looked up as typed", `document.querySelector("#ed-preview .preview-title")?.textContent === "Rolleiflex 2.8F"`)
	if got := tb.eval(formTop); got != empty {
		t.Errorf("item field top with the item previewed = %s, want %s (as before the lookup)", got, empty)
	}
	preview := tb.eval(`document.getElementById("ed-preview").textContent`)
	for _, want := range []string{"Price", it.CurrentPrice.String(), "Minimum to bid", it.MinimumToBid.String(), "Time left"} {
		if !strings.Contains(preview, want) {
			t.Errorf("preview %q lacks %q", preview, want)
		}
	}
	if tb.eval(`document.querySelector("#ed-preview img")?.getAttribute("src") || ""`) == "" {
		t.Error("preview has no picture")
	}
	if got := tb.eval(`document.getElementById("ed-bid").value + "|" + document.getElementById("ed-bid").placeholder`); got != "|at least "+it.MinimumToBid.String() {
		t.Errorf("bid field = %q, want empty with the minimum as a hint", got)
	}
	tb.screenshot("dashboard-add-snipe-preview.png")

	tb.do("bid below the minimum", chromedp.SendKeys(chromedp.ID("ed-bid"), "1"), chromedp.Click(chromedp.ID("ed-save")))
	tb.wait("error names the controls", `/^Maximum bid .*Advanced.*Force/.test(document.getElementById("ed-error").textContent)`)
	if msg := tb.eval(`document.getElementById("ed-error").textContent`); strings.Contains(msg, "force=1") {
		t.Errorf("error %q speaks the API's language", msg)
	}
	tb.do("unknown item", chromedp.Evaluate[chromedp.Void](`document.getElementById("ed-item").value = ""`),
		chromedp.SendKeys(chromedp.ID("ed-item"), "999999999"))
	tb.wait("unknown item said", `document.getElementById("ed-preview").textContent.includes("no item 999999999")`)
	if got := tb.eval(formTop); got != empty {
		t.Errorf("item field top with an unknown item = %s, want %s (as before the lookup)", got, empty)
	}
	tb.do("cancel", chromedp.Click(chromedp.ID("ed-cancel")))

	// The Completed list shows when an item ended and its final price.
	soon, _, err := s.sim.CreateItem(context.Background(), simItem("Short auction lens", 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s.get("addBid", "item_no", strconv.FormatInt(soon, 10), "bid", "99")
	end := s.marketItem(soon).End
	time.Sleep(time.Until(end) + 500*time.Millisecond) // waiting for a real auction end, not for timing luck
	tb.do("completed tab", chromedp.Click(chromedp.CSS(`.tab[data-tab="completed"]`)))
	completed := fmt.Sprintf(`#items tr[data-item="%d"]`, soon)
	tb.wait("ended item listed with its date", fmt.Sprintf(`!!document.querySelector(%q + " time.ended-at")`, completed))
	if got := tb.eval(`[...document.querySelectorAll(".items thead th")].map(th => th.textContent).join("|")`); !strings.Contains(got, "Final price") || !strings.Contains(got, "Ended") {
		t.Errorf("completed headers = %q, want Final price and Ended", got)
	}
	tb.screenshot("dashboard-completed.png")
	tb.noExceptions()
}

// accountID is the test account's ID.
func (s *stack) accountID() int64 {
	s.t.Helper()
	a, err := s.store.AccountByName(context.Background(), account)
	if err != nil {
		s.t.Fatal(err)
	}
	return a.ID
}

// simItem is a plain simulator listing ending in d.
func simItem(title string, d time.Duration) sim.NewItem {
	return sim.NewItem{Title: title, StartPrice: 2500, EndsIn: d}
}
