package ebay_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/ebaysim"
	"github.com/sniped/sniped/internal/market/sim"
)

// TestMain fails the package if any test leaves a goroutine running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// links is a Links backed by a map: user → refresh token.
type links struct {
	mu     sync.Mutex
	tokens map[string]string
}

func (l *links) RefreshToken(_ context.Context, user string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.tokens[user]; ok {
		return t, nil
	}
	return "", fmt.Errorf("%s has no eBay link; connect eBay first: %w", user, market.ErrNotAuthorized)
}

func (l *links) set(user, tok string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tokens[user] = tok
}

// hook may answer a request itself (return true) before ebaysim sees it.
type hook func(w http.ResponseWriter, r *http.Request) bool

// bundle is a simulator served by ebaysim over httptest, and an adapter
// talking to it.
type bundle struct {
	ctx    context.Context
	clock  clock.Clock
	sim    *sim.Sim
	server *ebaysim.Server
	http   *httptest.Server
	ad     *ebay.Adapter
	links  *links
	reg    *prometheus.Registry
	logs   *syncBuffer

	mu    sync.Mutex
	hooks []hook
	seen  []string // "METHOD path grant_type" of every request
}

type options struct {
	timeout time.Duration
	clock   clock.Clock
	skew    time.Duration
	itemTTL time.Duration
	secret  string
}

// setup starts the stack. Users "alice" and "bob" are linked.
func setup(t testing.TB, opts ...func(*options)) *bundle {
	t.Helper()
	o := options{clock: clock.NewFake(t0), itemTTL: time.Minute, timeout: 5 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	s, err := sim.Open(ctx, sim.Config{Seed: 3, Items: 30, Bidders: sim.BiddersOff, Clock: o.clock, ClockSkew: o.skew, ImageBaseURL: "http://market.test"})
	if err != nil {
		t.Fatalf("sim.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	srv, err := ebaysim.New(ebaysim.Config{Sim: s, Clock: o.clock, RuNames: map[string]string{"sniped-RuName": "http://sniped.test/market/callback"}})
	if err != nil {
		t.Fatalf("ebaysim.New: %v", err)
	}
	b := &bundle{ctx: ctx, clock: o.clock, sim: s, server: srv, links: &links{tokens: map[string]string{}}, reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	h := srv.Handler()
	b.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		if r.URL.Path == "/identity/v1/oauth2/token" {
			_ = r.ParseForm()
			key += " " + r.PostForm.Get("grant_type")
		}
		b.mu.Lock()
		b.seen = append(b.seen, key)
		hooks := b.hooks
		b.mu.Unlock()
		for _, hk := range hooks {
			if hk(w, r) {
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(b.http.Close)
	secret := o.secret
	if secret == "" {
		secret = ebaysim.DefaultClientSecret
	}
	b.ad, err = ebay.New(ebay.Config{
		APIURL: b.http.URL, AuthURL: b.http.URL, ClientID: ebaysim.DefaultClientID, ClientSecret: secret,
		RuName: "sniped-RuName", Links: b.links, HTTPClient: b.http.Client(), ItemTTL: o.itemTTL,
		Clock: o.clock, Registerer: b.reg, Logger: slog.New(slog.NewTextHandler(b.logs, nil)), Timeout: o.timeout,
	})
	if err != nil {
		t.Fatalf("ebay.New: %v", err)
	}
	for _, u := range []string{"alice", "bob"} {
		tok, _, err := srv.MintRefreshToken(u)
		if err != nil {
			t.Fatalf("MintRefreshToken: %v", err)
		}
		b.links.set(u, tok)
	}
	return b
}

// addHook installs a request hook for the rest of the test.
func (b *bundle) addHook(h hook) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hooks = append(b.hooks, h)
}

// count is how many requests matched prefix ("METHOD path[ grant]").
func (b *bundle) count(prefix string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, s := range b.seen {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// create lists an item on the simulator.
func (b *bundle) create(t testing.TB, n sim.NewItem) int64 {
	t.Helper()
	if n.Title == "" {
		n.Title = "Leica M6 camera"
	}
	if n.StartPrice == 0 {
		n.StartPrice = 10_00
	}
	if n.EndsIn == 0 {
		n.EndsIn = 10 * time.Minute
	}
	no, _, err := b.sim.CreateItem(b.ctx, n)
	if err != nil {
		t.Fatalf("CreateItem: %v", err)
	}
	return no
}

// advance moves a fake clock.
func (b *bundle) advance(t *testing.T, d time.Duration) {
	t.Helper()
	f, ok := b.clock.(*clock.Fake)
	if !ok {
		t.Fatal("advance needs the fake clock")
	}
	f.Advance(d)
}

// syncBuffer is a log sink safe for concurrent writes.
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
