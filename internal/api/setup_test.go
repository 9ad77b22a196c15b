package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/api"
	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// simItems keeps the generated catalogue small: tests list their own items.
const simItems = 30

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// bundle is everything one test needs.
type bundle struct {
	t *testing.T
	// mu guards flowCookies, the consent flow cookies a browser would keep.
	mu          sync.Mutex
	flowCookies []*http.Cookie
	srv         *httptest.Server
	store       store.Store
	market      *gatedSim
	clock       *clock.Fake
	paid        store.Account
	paidKey     string
	other       store.Account
	// otherKey belongs to a second paid account, for cross-account checks.
	otherKey string
	freeKey  string
	notified *notifier
	logs     *syncBuffer
	// notify is the notification service (not running: tests drive it).
	notify *notify.Service
	// links is set when options.consent is (serve --market ebay).
	links *marketlink.Links
	// handler is the interface handler itself, for its exported methods.
	handler *api.Handler
}

type options struct {
	fetchAny  bool
	rateLimit float64
	rateBurst int
	basePath  string
	// notifyOff runs the API without the notification service.
	notifyOff bool
	// localBehind runs the API's clock this far behind the marketplace's,
	// with the offset the sniper would measure passed as ClockOffset.
	localBehind time.Duration
	// consent, when set, turns on account linking (as --market ebay does)
	// with this marketplace consent flow.
	consent marketlink.Consent
	// operatorLinks turns on account linking without a consent page (no
	// RuName): only the operator links accounts.
	operatorLinks bool
}

// shiftedClock is a clock d behind another.
type shiftedClock struct {
	clock.Clock
	d time.Duration
}

func (c shiftedClock) Now() time.Time { return c.Clock.Now().Add(-c.d) }

type notifier struct {
	mu  sync.Mutex
	ids []int64
}

func (n *notifier) Changed(id int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ids = append(n.ids, id)
}

func (n *notifier) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.ids)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func setup(t *testing.T) *bundle { return setupWith(t, options{}) }

func setupWith(t *testing.T, o options) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	fake := clock.NewFake(t0)
	sm, err := sim.Open(ctx, sim.Config{Seed: 1, Items: simItems, Bidders: sim.BiddersOff, Clock: fake, ImageBaseURL: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatalf("sim.Open: %v", err)
	}
	t.Cleanup(func() { sm.Close() })
	b := &bundle{t: t, store: st, market: &gatedSim{Sim: sm}, clock: fake, notified: &notifier{}, logs: &syncBuffer{}}
	b.paid, b.paidKey = b.account("alice", store.TierPaid)
	b.other, b.otherKey = b.account("bob", store.TierPaid)
	_, b.freeKey = b.account("carol", store.TierFree)
	nk, err := secret.New(make([]byte, secret.Size))
	if err != nil {
		t.Fatal(err)
	}
	b.notify, err = notify.New(notify.Config{Store: st, Market: b.market, Key: nk, Clock: fake, AllowPrivate: true,
		Logger: slog.New(slog.NewTextHandler(b.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var apiClock clock.Clock = b.clock
	var offset func() time.Duration
	if o.localBehind != 0 {
		apiClock = shiftedClock{b.clock, o.localBehind}
		offset = func() time.Duration { return o.localBehind }
	}
	if o.consent != nil || o.operatorLinks {
		b.links = newLinks(t, st, fake, o.consent)
	}
	ah := api.New(api.Config{
		Store: st, Market: b.market, Clock: apiClock, ClockOffset: offset, Notifier: b.notified, MarketLinks: b.links, Notify: notifyOrNil(b.notify, o.notifyOff),
		Logger:       slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		FetchAnyItem: o.fetchAny, RateLimit: o.rateLimit, RateBurst: o.rateBurst, BasePath: o.basePath,
	})
	t.Cleanup(ah.Wait) // runs after the server closes (cleanups are LIFO)
	b.handler = ah
	var h http.Handler = ah
	if o.basePath == "" {
		h = validating(t, h)
	}
	b.srv = httptest.NewServer(h)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bundle) account(name string, tier store.Tier) (store.Account, string) {
	b.t.Helper()
	k, h := key.New()
	a, err := b.store.CreateAccount(context.Background(), name, tier, h, t0)
	if err != nil {
		b.t.Fatalf("CreateAccount(%s): %v", name, err)
	}
	return a, k
}

// gatedSim is the simulator with a gate on WatchList, so that tests can
// hold an import in flight, and a refusal of every lookup and search (as
// eBay refuses an application's wrong keys).
type gatedSim struct {
	*sim.Sim
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
	refuse  error
}

// refuseLookups makes Item and Search fail with err (nil: work again).
func (g *gatedSim) refuseLookups(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuse = err
}

func (g *gatedSim) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refuse
}

func (g *gatedSim) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	if err := g.refusal(); err != nil {
		return market.Item{}, err
	}
	return g.Sim.Item(ctx, itemNo)
}

func (g *gatedSim) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	if err := g.refusal(); err != nil {
		return nil, err
	}
	return g.Sim.Search(ctx, query, country, limit)
}

func (g *gatedSim) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	g.mu.Lock()
	gate, entered := g.gate, g.entered
	g.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	return g.Sim.WatchList(ctx, user)
}

// hold makes the next WatchList calls report on entered and wait for gate.
func (g *gatedSim) hold() (gate, entered chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate, g.entered = make(chan struct{}), make(chan struct{}, 8)
	return g.gate, g.entered
}

// itemSpec is an item to list: the simulator's listing plus rival bids.
type itemSpec struct {
	sim.NewItem
	rivalBids int
	ended     bool
}

// itemOpt adjusts a listed item.
type itemOpt func(*itemSpec)

// item lists a live item ending in an hour (by default) and returns its
// details as the marketplace reports them.
func (b *bundle) item(opts ...itemOpt) market.Item {
	b.t.Helper()
	ctx := context.Background()
	spec := itemSpec{NewItem: sim.NewItem{Title: "Zorblax vintage camera", StartPrice: 1000, EndsIn: time.Hour}}
	for _, o := range opts {
		o(&spec)
	}
	no, _, err := b.market.CreateItem(ctx, spec.NewItem)
	if err != nil {
		b.t.Fatalf("CreateItem(%+v): %v", spec.NewItem, err)
	}
	for i := range spec.rivalBids {
		b.rivalBid(no, "rival"+strconv.Itoa(i%2+1))
	}
	if spec.ended {
		if err := b.market.EndEarly(ctx, no, false); err != nil {
			b.t.Fatalf("EndEarly: %v", err)
		}
	}
	it, err := b.market.Item(ctx, no)
	if err != nil {
		b.t.Fatalf("Item(%d): %v", no, err)
	}
	return it
}

// rivalBid places the minimum bid on itemNo for user.
func (b *bundle) rivalBid(itemNo int64, user string) {
	b.t.Helper()
	ctx := context.Background()
	it, err := b.market.Item(ctx, itemNo)
	if err != nil {
		b.t.Fatalf("Item(%d): %v", itemNo, err)
	}
	if _, err := b.market.PlaceBid(ctx, user, itemNo, it.MinimumToBid); err != nil {
		b.t.Fatalf("PlaceBid(%s, %d, %s): %v", user, itemNo, it.MinimumToBid, err)
	}
}

func endsIn(d time.Duration) itemOpt { return func(s *itemSpec) { s.EndsIn = d } }
func ended() itemOpt                 { return func(s *itemSpec) { s.ended = true } }
func titled(t string) itemOpt        { return func(s *itemSpec) { s.Title = t } }
func bids(n int) itemOpt             { return func(s *itemSpec) { s.rivalBids = n } }
func startPrice(a money.Amount) itemOpt {
	return func(s *itemSpec) { s.StartPrice = a }
}
func country(c string) itemOpt { return func(s *itemSpec) { s.Country = c } }

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// call GETs an operation with the paid key and kv pairs.
func (b *bundle) call(op string, kv ...string) resp {
	return b.callKey(b.paidKey, op, kv...)
}

func (b *bundle) callKey(k, op string, kv ...string) resp {
	v := url.Values{}
	if k != "" {
		v.Set("key", k)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return b.raw(http.MethodGet, "/"+op+"?"+v.Encode())
}

func (b *bundle) raw(method, pathQuery string) resp {
	b.t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+pathQuery, nil)
	if err != nil {
		b.t.Fatalf("NewRequest: %v", err)
	}
	res, err := b.srv.Client().Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, pathQuery, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			b.t.Fatalf("%s: body is not JSON: %v\n%s", pathQuery, err, raw)
		}
	}
	return r
}

// wantError checks an error envelope.
func (r resp) wantError(t *testing.T, status int, code, param string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d; body %s", r.status, status, r.raw)
	}
	if r.body["status"] != "ERROR" || r.body["alert"] != "error" {
		t.Errorf("envelope status/alert = %v/%v, want ERROR/error", r.body["status"], r.body["alert"])
	}
	if r.body["error"] != code {
		t.Errorf("error = %v, want %q; body %s", r.body["error"], code, r.raw)
	}
	if got, _ := r.body["param"].(string); got != param {
		t.Errorf("param = %q, want %q", got, param)
	}
	if msg, _ := r.body["message"].(string); msg == "" {
		t.Errorf("message is empty")
	}
}

// wantOK checks a success status.
func (r resp) wantOK(t *testing.T) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", r.status, r.raw)
	}
	if r.body != nil && r.body["status"] != "OK" {
		t.Errorf("body status = %v, want OK", r.body["status"])
	}
}

// str, num and obj read typed fields, failing on the wrong JSON type.
func str(t *testing.T, m map[string]any, k string) string {
	t.Helper()
	v, ok := m[k].(string)
	if !ok {
		t.Errorf("%s = %#v, want a string", k, m[k])
	}
	return v
}

func num(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Errorf("%s = %#v, want a number", k, m[k])
	}
	return v
}

func integer(t *testing.T, m map[string]any, k string) int64 {
	t.Helper()
	v := num(t, m, k)
	if v != float64(int64(v)) {
		t.Errorf("%s = %v, want an integer", k, v)
	}
	return int64(v)
}

func boolean(t *testing.T, m map[string]any, k string) bool {
	t.Helper()
	v, ok := m[k].(bool)
	if !ok {
		t.Errorf("%s = %#v, want a boolean", k, m[k])
	}
	return v
}

func obj(t *testing.T, m map[string]any, k string) map[string]any {
	t.Helper()
	v, ok := m[k].(map[string]any)
	if !ok {
		t.Fatalf("%s = %#v, want an object", k, m[k])
	}
	return v
}

func arr(t *testing.T, m map[string]any, k string) []any {
	t.Helper()
	v, ok := m[k].([]any)
	if !ok {
		t.Fatalf("%s = %#v, want an array", k, m[k])
	}
	return v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// notifyOrNil leaves the service out when the test asks for that.
func notifyOrNil(s *notify.Service, off bool) *notify.Service {
	if off {
		return nil
	}
	return s
}
