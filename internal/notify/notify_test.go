package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// start is the tests' fake "now" (whole milliseconds, as stores keep).
var start = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

type bundle struct {
	ctx  context.Context
	st   store.Store
	clk  *clock.Fake
	mk   *markettest.Market
	svc  *Service
	acct store.Account
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewFake(start)
	mk := markettest.New(clk)
	k, err := secret.New(make([]byte, secret.Size))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Config{Store: st, Market: mk, Key: k, Clock: clk, AllowPrivate: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MarketRate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := st.CreateAccount(ctx, "alice", store.TierPaid, key.Hash("k"), start)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{ctx: ctx, st: st, clk: clk, mk: mk, svc: svc, acct: acct}
}

// deliver runs one outbox pass and waits for its deliveries.
func (b *bundle) deliver() {
	b.svc.deliverDue(b.ctx)
	b.svc.wg.Wait()
}

func (b *bundle) emit(t *testing.T, typ store.EventType) store.Event {
	t.Helper()
	ev, _, err := b.st.EmitEvent(b.ctx, store.NewEvent{AccountID: b.acct.ID, Type: typ, Data: []byte(`{"item_no":"7"}`), Now: b.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (b *bundle) notifier(t *testing.T, id int64) store.Notifier {
	t.Helper()
	n, err := b.st.NotifierByID(b.ctx, b.acct.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// receiver is a webhook endpoint that answers status and records requests.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []*http.Request
	bodies [][]byte
	srv    *httptest.Server
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, body)
		st := r.status
		r.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestWebhookSigned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, http.StatusNoContent)
	add, err := b.svc.AddNotifier(b.ctx, b.acct.ID, rc.srv.URL+"/hook/secret-token", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(add.Secret, "whsec_") || add.Notifier.Kind != store.KindWebhook || strings.Contains(add.Notifier.MaskedURL, "secret-token") {
		t.Fatalf("AddNotifier = %+v", add)
	}
	if strings.Contains(string(add.Notifier.SealedURL), "secret-token") || strings.Contains(string(add.Notifier.SealedSecret), add.Secret) {
		t.Fatal("URL or secret stored in clear")
	}
	ev := b.emit(t, store.EventSnipeWon)
	b.deliver()
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.count())
	}
	req, body := rc.got[0], rc.bodies[0]
	if got, want := req.Header.Get(SignatureHeader), Sign(add.Secret, b.clk.Now(), body); got != want {
		t.Errorf("signature = %q, want %q", got, want)
	}
	var env Envelope
	if err := json.Unmarshal(body, &env); err != nil || env.ID != ev.ID || env.Type != store.EventSnipeWon || string(env.Data) != `{"item_no":"7"}` {
		t.Errorf("body = %s (%v)", body, err)
	}
	if req.Header.Get("X-Sniped-Event-Id") != string(mustJSON(ev.ID)) {
		t.Errorf("X-Sniped-Event-Id = %q", req.Header.Get("X-Sniped-Event-Id"))
	}
	if n := b.notifier(t, add.Notifier.ID); n.LastStatus != store.DeliveryDelivered {
		t.Errorf("notifier after delivery = %+v", n)
	}
	b.deliver()
	if rc.count() != 1 {
		t.Errorf("a second pass sent again: %d requests", rc.count())
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestSignKnownAnswer(t *testing.T) {
	t.Parallel()
	// printf '1700000000.{}' | openssl dgst -sha256 -hmac key
	got := Sign("key", time.Unix(1700000000, 0), []byte("{}"))
	if want := "t=1700000000,v1=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

func TestRetryThenDisable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, http.StatusInternalServerError)
	add, err := b.svc.AddNotifier(b.ctx, b.acct.ID, rc.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := b.emit(t, store.EventSnipeLost)
	b.deliver()
	// Backoff: 30 s, then 60 s.
	for i, wait := range []time.Duration{30 * time.Second, time.Minute} {
		b.clk.Advance(wait - time.Second)
		b.deliver()
		if got := rc.count(); got != i+1 {
			t.Fatalf("requests %s before retry %d = %d, want %d", time.Second, i+1, got, i+1)
		}
		b.clk.Advance(time.Second)
		b.deliver()
		if got := rc.count(); got != i+2 {
			t.Fatalf("requests after retry %d = %d, want %d", i+1, got, i+2)
		}
	}
	for i, body := range rc.bodies {
		var env Envelope
		json.Unmarshal(body, &env)
		if env.ID != ev.ID {
			t.Errorf("attempt %d event id = %d, want %d every time", i+1, env.ID, ev.ID)
		}
	}
	if n := b.notifier(t, add.Notifier.ID); n.LastStatus != "retrying" || n.Failures != 3 || n.LastError != "the target answered HTTP 500" || n.Disabled {
		t.Errorf("notifier while retrying = %+v", n)
	}
	// Late in the day the backoff is an hour, but the last retry falls at
	// 24 hours after the event, where it fails and disables the target.
	b.clk.Set(start.Add(DefaultRetryFor - time.Minute))
	b.deliver()
	if due, _ := b.st.DueDeliveries(b.ctx, start.Add(DefaultRetryFor), 0, 0); len(due) != 1 {
		t.Fatalf("deliveries due 24 h after the event = %d, want the last retry", len(due))
	}
	b.clk.Set(start.Add(DefaultRetryFor))
	b.deliver()
	n := b.notifier(t, add.Notifier.ID)
	if !n.Disabled || n.LastStatus != store.DeliveryFailed || !strings.Contains(n.DisabledReason, "HTTP 500") {
		t.Errorf("notifier after 24 h = %+v; want disabled with the reason", n)
	}
	b.emit(t, store.EventSnipeLost)
	if due, _ := b.st.DueDeliveries(b.ctx, b.clk.Now().Add(48*time.Hour), 0, 0); len(due) != 0 {
		t.Errorf("due deliveries to a disabled target = %d, want 0", len(due))
	}
	// A successful test turns it back on.
	rc.mu.Lock()
	rc.status = http.StatusOK
	rc.mu.Unlock()
	res, err := b.svc.TestNotifier(b.ctx, b.acct.ID, add.Notifier.ID)
	if err != nil || !res.Delivered {
		t.Fatalf("TestNotifier = %+v, %v", res, err)
	}
	if n := b.notifier(t, add.Notifier.ID); n.Disabled || n.Failures != 0 {
		t.Errorf("notifier after a good test = %+v; want enabled", n)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	s := &Service{cfg: Config{FirstRetry: 30 * time.Second, MaxRetry: time.Hour}}
	for _, tc := range []struct {
		attempts int
		want     time.Duration
	}{{1, 30 * time.Second}, {2, time.Minute}, {3, 2 * time.Minute}, {7, 32 * time.Minute}, {8, time.Hour}, {40, time.Hour}} {
		if got := s.backoff(tc.attempts); got != tc.want {
			t.Errorf("backoff(%d) = %s, want %s", tc.attempts, got, tc.want)
		}
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		kind         store.NotifierKind
		masked       string
		err          string
	}{
		{"https://hooks.example.com/services/T000/B000/XXXX", false, store.KindWebhook, "https://hooks.example.com/services/***", ""},
		{"http://user:pw@example.com/hook?token=abc", false, store.KindWebhook, "http://***@example.com/hook?***", ""},
		{"ntfy://ntfy.sh/my-topic", false, store.KindShoutrrr, "ntfy://ntfy.sh/***", ""},
		{"pushover://shoutrrr:apptoken@userkey/", false, store.KindShoutrrr, "pushover://***@***", ""},
		{"telegram://123:bottoken@telegram?chats=@channel", false, store.KindShoutrrr, "telegram://***@***?***", ""},
		{"generic://127.0.0.1:9000/hook?disabletls=yes", true, store.KindShoutrrr, "generic://127.0.0.1:9000/***?***", ""},
		{"http://127.0.0.1:9000/hook", true, store.KindWebhook, "http://127.0.0.1:9000/hook", ""},
		{"http://127.0.0.1:9000/hook", false, "", "", "not allowed"},
		{"http://localhost/hook", false, "", "", "not allowed"},
		{"http://10.1.2.3/hook", false, "", "", "not allowed"},
		{"http://[::1]/hook", false, "", "", "not allowed"},
		{"http://169.254.169.254/latest", false, "", "", "not allowed"},
		{"generic://192.168.1.5/x", false, "", "", "not allowed"},
		{"http://100.100.100.200/latest/meta-data", false, "", "", "not allowed"},
		{"http://100.101.102.103:8080/hook", false, "", "", "not allowed"},
		{"http://0.1.2.3/hook", false, "", "", "not allowed"},
		{"http://[64:ff9b::a9fe:a9fe]/latest", false, "", "", "not allowed"},
		{"http://[2002:c0a8:0105::1]/hook", false, "", "", "not allowed"},
		{"http://[::ffff:10.0.0.1]/hook", false, "", "", "not allowed"},
		{"http://[64:ff9b::808:808]/hook", false, store.KindWebhook, "http://[64:ff9b::808:808]/hook", ""},
		{"http://100.128.0.1/hook", false, store.KindWebhook, "http://100.128.0.1/hook", ""},
		{"nosuchservice://x/y", false, "", "", "supported notification service"},
		{"example.com/hook", false, "", "", "absolute URL"},
		{"https://", false, "", "", "absolute URL"},
		{"https://example.com/\x01", false, "", "", "control characters"},
		{"https://example.com/" + strings.Repeat("a", MaxURLLen), false, "", "", "at most 2000"},
	} {
		got, err := ParseTarget(tc.url, tc.allowPrivate)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q) = %+v, %v; want an error containing %q", tc.url, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Kind != tc.kind || got.Masked != tc.masked {
			t.Errorf("ParseTarget(%q) = %+v, %v; want kind %s masked %q", tc.url, got, err, tc.kind, tc.masked)
		}
	}
}

// TestDialGuard: with private targets refused, a webhook that reaches a
// private address at connection time (DNS or a changed record) fails.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	c := webhookClient(false, 5*time.Second)
	_, err := c.Get(rc.srv.URL)
	if !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("GET %s through the guarded client = %v, want ErrPrivateTarget", rc.srv.URL, err)
	}
	if rc.count() != 0 {
		t.Errorf("the receiver got %d requests, want 0", rc.count())
	}
}

func TestShoutrrrGeneric(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, http.StatusOK)
	u := strings.Replace(rc.srv.URL, "http://", "generic://", 1) + "/notify?disabletls=yes"
	add, err := b.svc.AddNotifier(b.ctx, b.acct.ID, u, []store.EventType{store.EventSnipeWon})
	if err != nil || add.Secret != "" || add.Notifier.Kind != store.KindShoutrrr {
		t.Fatalf("AddNotifier(%s) = %+v, %v", u, add, err)
	}
	b.emit(t, store.EventSnipeLost) // not subscribed
	b.emit(t, store.EventSnipeWon)
	b.deliver()
	if rc.count() != 1 || !strings.Contains(string(rc.bodies[0]), "Won") || rc.got[0].URL.Path != "/notify" {
		t.Fatalf("receiver got %d requests: %q", rc.count(), rc.bodies)
	}
}

func TestSearchRunsReportOnlyNewItems(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mk.Add(markettest.ItemSpec{Title: "Leica M6", EndsIn: time.Hour})
	sr, _, err := b.st.AddSearch(b.ctx, b.acct.ID, "leica", b.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	run := func() SearchRun {
		t.Helper()
		r, err := b.svc.RunSearch(b.ctx, b.acct.ID, sr.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(); len(r.Items) != 1 || len(r.New) != 1 || r.Search.NewCount != 0 {
		t.Fatalf("baseline run = %+v; want the one item, remembered silently", r)
	}
	evs, _ := b.st.Events(b.ctx, b.acct.ID, 0, 0)
	if len(evs) != 0 {
		t.Fatalf("events after the baseline = %d, want 0", len(evs))
	}
	b.clk.Advance(time.Minute)
	newNo := b.mk.Add(markettest.ItemSpec{Title: "Leica M3", EndsIn: 2 * time.Hour, StartPrice: 5000})
	b.mk.Add(markettest.ItemSpec{Title: "Nikon F", EndsIn: time.Hour})
	r := run()
	if !slices.Equal(r.New, []int64{newNo}) || r.Search.NewCount != 1 || len(r.Items) != 2 {
		t.Fatalf("second run = new %v, count %d, %d items; want [%d], 1, 2", r.New, r.Search.NewCount, len(r.Items), newNo)
	}
	evs, _ = b.st.Events(b.ctx, b.acct.ID, 0, 0)
	if len(evs) != 1 || evs[0].Type != store.EventSearchMatch {
		t.Fatalf("events = %+v, want one search.match", evs)
	}
	var d store.SearchMatchData
	json.Unmarshal(evs[0].Data, &d)
	if d.SearchID != sr.ID || d.Query != "leica" || len(d.Items) != 1 || d.Items[0].Title != "Leica M3" || d.Items[0].CurrentPrice != 50 {
		t.Errorf("search.match data = %+v", d)
	}
	if r := run(); len(r.New) != 0 {
		t.Errorf("third run new = %v, want none", r.New)
	}
	if evs, _ = b.st.Events(b.ctx, b.acct.ID, 0, 0); len(evs) != 1 {
		t.Errorf("events after the third run = %d, want still 1", len(evs))
	}
	_, err = b.svc.RunSearch(b.ctx, b.acct.ID+1, sr.ID)
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunSearch(another account) = %v, want ErrNotFound", err)
	}
}

func TestSearchSchedule(t *testing.T) {
	t.Parallel()
	every := 15 * time.Minute
	seen := map[time.Duration]bool{}
	for id := int64(1); id <= 50; id++ {
		p := phase(id, every)
		if p < 0 || p >= every {
			t.Fatalf("phase(%d) = %s, want within [0, %s)", id, p, every)
		}
		seen[p/time.Minute] = true
	}
	if len(seen) < 14 {
		t.Errorf("50 searches use %d of the 15 minutes, want them spread over nearly all", len(seen))
	}
}

func TestWarnPass(t *testing.T) {
	t.Parallel()
	b := setup(t)
	soon := b.mk.Add(markettest.ItemSpec{Title: "Soon", EndsIn: 5 * time.Minute, StartPrice: 1000})
	later := b.mk.Add(markettest.ItemSpec{Title: "Later", EndsIn: time.Hour, StartPrice: 1000})
	for _, no := range []int64{soon, later} {
		it, _ := b.mk.Item(b.ctx, no)
		bid := money.Amount(2000)
		if _, _, err := b.st.UpsertSnipe(b.ctx, b.acct.ID, no, store.SnipeChange{Bid: &bid,
			Item: store.ItemSnapshot{Title: it.Title, Currency: it.Currency, CurrentPrice: it.CurrentPrice, Start: it.Start, End: it.End}}, b.clk.Now()); err != nil {
			t.Fatal(err)
		}
		// Two rivals push the price past the snipe's 20.00.
		for _, r := range []struct {
			user string
			max  money.Amount
		}{{"rival", 3000}, {"other", 2500}} {
			if err := b.mk.Rival(r.user, no, r.max); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.svc.warnPass(b.ctx)
	evs, _ := b.st.Events(b.ctx, b.acct.ID, 0, 0)
	if len(evs) != 1 || evs[0].Type != store.EventSnipeWarning {
		t.Fatalf("events = %+v; want one snipe.warning (only the item ending within 10 minutes)", evs)
	}
	var d store.SnipeEventData
	json.Unmarshal(evs[0].Data, &d)
	if d.Title != "Soon" || d.CurrentPrice <= d.Bid-0.001 {
		t.Errorf("warning data = %+v", d)
	}
	calls := b.mk.Calls(markettest.MethodItem)
	b.svc.warnPass(b.ctx)
	if got := b.mk.Calls(markettest.MethodItem); got != calls {
		t.Errorf("a second pass made %d more item calls, want 0 (checked once)", got-calls)
	}
}

// TestSlowTargetDoesNotHoldOthers: a target that hangs takes at most all
// workers but one, and its backlog never fills a pass's read of the
// outbox, so another target's events still go out.
func TestSlowTargetDoesNotHoldOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(hang.Close)
	fast := newReceiver(t, http.StatusOK)
	if _, err := b.svc.AddNotifier(b.ctx, b.acct.ID, hang.URL, []store.EventType{store.EventSnipeLost}); err != nil {
		t.Fatal(err)
	}
	for range 4 * DefaultWorkers { // more than one pass reads
		b.emit(t, store.EventSnipeLost)
	}
	if _, err := b.svc.AddNotifier(b.ctx, b.acct.ID, fast.srv.URL, []store.EventType{store.EventSnipeWon}); err != nil {
		t.Fatal(err)
	}
	b.emit(t, store.EventSnipeWon)
	b.svc.deliverDue(b.ctx) // returns once it has started what it may
	b.svc.mu.Lock()
	held := b.svc.inflight
	n := len(held)
	b.svc.mu.Unlock()
	close(release)
	b.svc.wg.Wait()
	if fast.count() != 1 {
		t.Errorf("the fast target got %d requests while another hung, want 1 (in flight per target: %d targets)", fast.count(), n)
	}
}

// TestFailingSearchesDoNotStarveOthers: a search whose run failed waits a
// minute in the store, so more failing searches than one pass takes never
// keep the others from running.
func TestFailingSearchesDoNotStarveOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.svc.budget.interval = 0 // the fake clock stands still
	const searches = searchBatch + 5
	for i := range searches {
		if _, _, err := b.st.AddSearch(b.ctx, b.acct.ID, fmt.Sprintf("query %d", i), b.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	b.mk.SetInjector(func(method, _ string, _ int64) error {
		if method == markettest.MethodSearch {
			return errors.New("marketplace down")
		}
		return nil
	})
	b.svc.searchPass(b.ctx)
	b.svc.searchPass(b.ctx)
	if got := b.mk.Calls(markettest.MethodSearch); got != searches {
		t.Fatalf("search calls after two passes with every run failing = %d, want %d (each search once)", got, searches)
	}
	if due, _ := b.st.SearchesDue(b.ctx, b.clk.Now(), 0); len(due) != 0 {
		t.Errorf("searches due right after failing = %d, want 0 (retried in a minute)", len(due))
	}
	b.mk.SetInjector(nil)
	b.clk.Advance(searchRetry)
	b.svc.searchPass(b.ctx)
	b.svc.searchPass(b.ctx)
	if due, _ := b.st.SearchesDue(b.ctx, b.clk.Now(), 0); len(due) != 0 {
		t.Errorf("searches due after the marketplace came back = %d, want 0 (all ran)", len(due))
	}
}

// TestSearchMatchTextIsShort: a run that finds a hundred new items still
// makes a message chat services accept.
func TestSearchMatchTextIsShort(t *testing.T) {
	t.Parallel()
	d := store.SearchMatchData{SearchID: 3, Query: "leica"}
	for i := range 100 {
		d.Items = append(d.Items, store.SearchMatchItem{ItemNo: fmt.Sprint(310000000000 + i), Title: strings.Repeat("Leica M6 body ", 6),
			CurrentPrice: 1234.5, Currency: "USD", EndTime: "2026-11-21 12:00:00"})
	}
	msg := text(store.Event{Type: store.EventSearchMatch, Data: mustJSON(d)})
	if n := len([]rune(msg)); n > 2000 {
		t.Errorf("message is %d characters, want at most 2000 (Discord's limit)", n)
	}
	for _, want := range []string{"100 new item(s)", "item 310000000009", "and 90 more", "getSearchResults?id=3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "item 310000000010") {
		t.Errorf("message lists the 11th item:\n%s", msg)
	}
}

// TestTestNotifierOutlivesItsCaller: a test whose caller hangs up while
// the target answers is still recorded, not left pending to be retried.
func TestTestNotifierOutlivesItsCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(b.ctx)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cancel() }))
	t.Cleanup(srv.Close)
	add, err := b.svc.AddNotifier(b.ctx, b.acct.ID, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.svc.TestNotifier(ctx, b.acct.ID, add.Notifier.ID)
	if err != nil || !res.Delivered {
		t.Fatalf("TestNotifier with the caller gone mid-send = %+v, %v; want delivered", res, err)
	}
	if due, _ := b.st.DueDeliveries(b.ctx, b.clk.Now().Add(time.Hour), 0, 0); len(due) != 0 {
		t.Errorf("pending deliveries after the test = %d, want 0", len(due))
	}
}
