package marketlink_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
)

const (
	sandbox = "https://api.sandbox.ebay.com"
	token   = "v^1.1#i^1#p^3#r^1#I^3#f^0#t^Ul4xMF8==" // a refresh token's shape
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// consent is a marketplace consent flow that answers codes it was given.
type consent struct {
	mu    sync.Mutex
	codes map[string]marketlink.Token
}

func (c *consent) AuthorizeURL(state string) string {
	return "https://auth.example/oauth2/authorize?" + url.Values{"state": {state}}.Encode()
}

func (c *consent) ExchangeCode(_ context.Context, code string) (marketlink.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.codes[code]
	if !ok {
		return marketlink.Token{}, errors.New("invalid_grant: code unknown or used")
	}
	delete(c.codes, code)
	return t, nil
}

type bundle struct {
	ctx     context.Context
	st      store.Store
	key     *secret.Key
	clock   *clock.Fake
	consent *consent
	links   *marketlink.Links
	alice   store.Account
	bob     store.Account
}

func setup(t *testing.T) *bundle {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sniped.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &bundle{ctx: t.Context(), st: st, key: secret.Generate(), clock: clock.NewFake(t0), consent: &consent{codes: map[string]marketlink.Token{}}}
	b.links = b.newLinks(t, b.key, sandbox)
	for _, name := range []string{"alice", "bob"} {
		a, err := st.CreateAccount(b.ctx, name, store.TierPaid, key.Hash(name), t0)
		if err != nil {
			t.Fatal(err)
		}
		if name == "alice" {
			b.alice = a
		} else {
			b.bob = a
		}
	}
	return b
}

func (b *bundle) newLinks(t *testing.T, k *secret.Key, mkt string) *marketlink.Links {
	t.Helper()
	l, err := marketlink.New(marketlink.Config{
		Store: b.st, Key: k, Market: mkt, MarketName: "eBay", Consent: b.consent, Clock: b.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (b *bundle) link(t *testing.T, acct store.Account, tok marketlink.Token) {
	t.Helper()
	if err := b.links.Link(b.ctx, acct, tok); err != nil {
		t.Fatalf("Link(%s) = %v", acct.Name, err)
	}
}

// wantAuthErr checks that err is a link error (market-auth) whose message
// contains every part of want and never the token.
func wantAuthErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var le *marketlink.Error
	if !errors.Is(err, market.ErrNotAuthorized) || !errors.As(err, &le) {
		t.Fatalf("%s = %v, want a *marketlink.Error wrapping market.ErrNotAuthorized", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s message = %q, want it to contain %q", what, err, w)
		}
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("%s message holds the token", what)
	}
	if x := market.Explain(err); x == "" || strings.Contains(x, "://") || strings.Contains(x, token) {
		t.Errorf("%s explanation = %q, want a message without hosts or tokens", what, x)
	}
}

func TestRefreshToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.links.RefreshToken(b.ctx, "alice")
	wantAuthErr(t, "RefreshToken(unlinked)", err, "No eBay account is linked to sniped account alice",
		"Connect eBay", "sniped account link --name alice")

	b.link(t, b.alice, marketlink.Token{RefreshToken: token, User: "alice_ebay", Expiry: t0.Add(540 * 24 * time.Hour)})
	if got, err := b.links.RefreshToken(b.ctx, "alice"); err != nil || got != token {
		t.Fatalf("RefreshToken(linked) = %q, %v; want the token", got, err)
	}
	row, err := b.st.MarketLink(b.ctx, b.alice.ID)
	if err != nil || bytes.Contains(row.SealedToken, []byte(token)) || row.User != "alice_ebay" || row.Market != sandbox {
		t.Errorf("stored link = %+v, %v; want sealed token, user and market", row, err)
	}
	_, err = b.links.RefreshToken(b.ctx, "bob")
	wantAuthErr(t, "RefreshToken(bob)", err, "sniped account bob")
	_, err = b.links.RefreshToken(b.ctx, "nobody")
	wantAuthErr(t, "RefreshToken(no account)", err, "no sniped account named nobody")
}

func TestRefreshTokenRefusesUnusableLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, b *bundle) *marketlink.Links
		want  []string
	}{
		{"expired", func(t *testing.T, b *bundle) *marketlink.Links {
			b.link(t, b.alice, marketlink.Token{RefreshToken: token, Expiry: t0.Add(time.Hour)})
			b.clock.Advance(time.Hour)
			return b.links
		}, []string{"expired on 2026-11-23 13:00:00 UTC", "Connect eBay"}},
		{"other environment", func(t *testing.T, b *bundle) *marketlink.Links {
			b.link(t, b.alice, marketlink.Token{RefreshToken: token})
			return b.newLinks(t, b.key, "https://api.ebay.com")
		}, []string{"another eBay environment (" + sandbox + ")", "https://api.ebay.com"}},
		{"other key", func(t *testing.T, b *bundle) *marketlink.Links {
			b.link(t, b.alice, marketlink.Token{RefreshToken: token})
			return b.newLinks(t, secret.Generate(), sandbox)
		}, []string{"cannot be decrypted", "SNIPED_SECRET_KEY"}},
		{"ciphertext moved to another account", func(t *testing.T, b *bundle) *marketlink.Links {
			b.link(t, b.bob, marketlink.Token{RefreshToken: token})
			row, _ := b.st.MarketLink(b.ctx, b.bob.ID)
			row.AccountID = b.alice.ID
			if err := b.st.SetMarketLink(b.ctx, row); err != nil {
				t.Fatal(err)
			}
			return b.links
		}, []string{"cannot be decrypted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			l := tt.setup(t, b)
			got, err := l.RefreshToken(b.ctx, "alice")
			if got != "" {
				t.Errorf("RefreshToken = %q, want none", got)
			}
			wantAuthErr(t, "RefreshToken", err, tt.want...)
		})
	}
}

func TestStatusAndUnlink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if st, err := b.links.Status(b.ctx, b.alice); err != nil || st.Linked || st.Usable() {
		t.Errorf("Status(unlinked) = %+v, %v; want unlinked", st, err)
	}
	exp := t0.Add(48 * time.Hour)
	b.link(t, b.alice, marketlink.Token{RefreshToken: token, User: "alice_ebay", Expiry: exp})
	st, err := b.links.Status(b.ctx, b.alice)
	want := marketlink.Status{Linked: true, User: "alice_ebay", TokenExpires: exp, LinkedAt: t0}
	if err != nil || st != want || !st.Usable() {
		t.Errorf("Status(linked) = %+v, %v; want %+v", st, err, want)
	}
	otherKey := b.newLinks(t, secret.Generate(), sandbox)
	if st, err := otherKey.Status(b.ctx, b.alice); err != nil || !st.Unreadable || st.Usable() {
		t.Errorf("Status under another secret key = %+v, %v; want unreadable", st, err)
	}
	otherEnv := b.newLinks(t, b.key, "https://api.ebay.com")
	if st, err := otherEnv.Status(b.ctx, b.alice); err != nil || !st.OtherMarket || st.Usable() {
		t.Errorf("Status for another environment = %+v, %v; want OtherMarket", st, err)
	}
	b.clock.Advance(48 * time.Hour)
	if st, _ := b.links.Status(b.ctx, b.alice); !st.Expired || st.Usable() {
		t.Errorf("Status(after expiry) = %+v, want expired", st)
	}
	if err := b.links.Unlink(b.ctx, b.alice); err != nil {
		t.Fatalf("Unlink = %v", err)
	}
	if err := b.links.Unlink(b.ctx, b.alice); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Unlink(again) = %v, want store.ErrNotFound", err)
	}
	if _, err := b.links.RefreshToken(b.ctx, "alice"); !errors.Is(err, market.ErrNotAuthorized) {
		t.Errorf("RefreshToken after Unlink = %v, want market-auth", err)
	}
}

// flow is a started consent flow as the browser returns with it.
type flow struct{ state, binding string }

// start starts a flow for acct.
func (b *bundle) start(t *testing.T, acct store.Account) flow {
	t.Helper()
	f, err := b.links.Start(acct)
	if err != nil {
		t.Fatalf("Start(%s) = %v", acct.Name, err)
	}
	if want := t0.Add(marketlink.DefaultStateTTL); !f.Expires.Equal(want) && b.clock.Now().Equal(t0) {
		t.Errorf("Start expires = %v, want %v", f.Expires, want)
	}
	p, err := url.Parse(f.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	if f.Binding == "" || strings.Contains(f.AuthorizeURL, f.Binding) {
		t.Errorf("Start binding = %q, want a secret kept out of the consent page's URL", f.Binding)
	}
	return flow{state: p.Query().Get("state"), binding: f.Binding}
}

// stateOf starts a flow for acct and returns its state.
func (b *bundle) stateOf(t *testing.T, acct store.Account) string {
	t.Helper()
	return b.start(t, acct).state
}

func TestConsentFlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := b.start(t, b.alice)
	if strings.Contains(f.state, strings.TrimSpace(b.key.Encode())) {
		t.Fatalf("state holds the server key")
	}
	if other := b.start(t, b.alice); other.state == f.state || other.binding == f.binding {
		t.Errorf("two flows got the same state or binding")
	}
	b.consent.codes["c1"] = marketlink.Token{RefreshToken: token, User: "alice_ebay", Expiry: t0.Add(time.Hour)}
	acct, st, err := b.links.Finish(b.ctx, "c1", f.state, f.binding)
	if err != nil || acct.ID != b.alice.ID || !st.Linked || st.User != "alice_ebay" {
		t.Fatalf("Finish = %+v, %+v, %v; want alice linked to alice_ebay", acct, st, err)
	}
	if got, err := b.links.RefreshToken(b.ctx, "alice"); err != nil || got != token {
		t.Errorf("RefreshToken after Finish = %q, %v", got, err)
	}
	if _, err := b.links.RefreshToken(b.ctx, "bob"); err == nil {
		t.Errorf("bob got linked by alice's flow")
	}
}

func TestConsentFlowRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// flow returns the flow to finish (the code "c1" is valid).
		flow func(t *testing.T, b *bundle) flow
		want error
	}{
		{"empty", func(*testing.T, *bundle) flow { return flow{} }, marketlink.ErrBadState},
		{"garbage", func(*testing.T, *bundle) flow { return flow{state: "not-a-state!"} }, marketlink.ErrBadState},
		{"huge", func(*testing.T, *bundle) flow { return flow{state: strings.Repeat("A", 10000)} }, marketlink.ErrBadState},
		{"altered", func(t *testing.T, b *bundle) flow {
			f := b.start(t, b.alice)
			// Change the account ID's last byte: alice's ID to bob's.
			raw := mustDecode(t, f.state)
			raw[7] = byte(b.bob.ID)
			return flow{encode(raw), f.binding}
		}, marketlink.ErrBadState},
		{"no binding", func(t *testing.T, b *bundle) flow {
			return flow{state: b.stateOf(t, b.alice)}
		}, marketlink.ErrOtherBrowser},
		{"another flow's binding", func(t *testing.T, b *bundle) flow {
			// Someone starts a flow for bob and sends its consent page to
			// alice's browser, which holds a binding of its own.
			return flow{b.stateOf(t, b.bob), b.start(t, b.alice).binding}
		}, marketlink.ErrOtherBrowser},
		{"other key", func(t *testing.T, b *bundle) flow {
			saved := b.links
			b.links = b.newLinks(t, secret.Generate(), sandbox)
			defer func() { b.links = saved }()
			return b.start(t, b.alice)
		}, marketlink.ErrBadState},
		{"other marketplace", func(t *testing.T, b *bundle) flow {
			saved := b.links
			b.links = b.newLinks(t, b.key, "https://api.ebay.com")
			defer func() { b.links = saved }()
			return b.start(t, b.alice)
		}, marketlink.ErrBadState},
		{"expired", func(t *testing.T, b *bundle) flow {
			f := b.start(t, b.alice)
			b.clock.Advance(marketlink.DefaultStateTTL)
			return f
		}, marketlink.ErrStateExpired},
		{"account re-created", func(t *testing.T, b *bundle) flow {
			f := b.start(t, b.alice)
			if err := b.st.DeleteAccount(b.ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.st.CreateAccount(b.ctx, "alice", store.TierPaid, key.Hash("alice2"), t0); err != nil {
				t.Fatal(err)
			}
			return f
		}, marketlink.ErrBadState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.consent.codes["c1"] = marketlink.Token{RefreshToken: token, User: "x"}
			f := tt.flow(t, b)
			_, _, err := b.links.Finish(b.ctx, "c1", f.state, f.binding)
			if !errors.Is(err, tt.want) {
				t.Errorf("Finish = %v, want %v", err, tt.want)
			}
			if len(b.consent.codes) != 1 {
				t.Errorf("the code was exchanged although the state was refused")
			}
			for _, a := range []string{"alice", "bob"} {
				if _, err := b.links.RefreshToken(b.ctx, a); err == nil {
					t.Errorf("%s got linked", a)
				}
			}
		})
	}
}

func TestConsentFlowExchangeFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := b.start(t, b.alice)
	_, _, err := b.links.Finish(b.ctx, "unknown-code", f.state, f.binding)
	if !errors.Is(err, marketlink.ErrExchange) {
		t.Errorf("Finish(bad code) = %v, want ErrExchange", err)
	}
	if st, _ := b.links.Status(b.ctx, b.alice); st.Linked {
		t.Errorf("alice linked after a failed exchange")
	}
}

func TestNoConsentFlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l, err := marketlink.New(marketlink.Config{Store: b.st, Key: b.key, Market: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Start(b.alice); !errors.Is(err, marketlink.ErrNoConsent) {
		t.Errorf("Start without Consent = %v, want ErrNoConsent", err)
	}
	if _, _, err := l.Finish(b.ctx, "c", "s", "b"); !errors.Is(err, marketlink.ErrNoConsent) {
		t.Errorf("Finish without Consent = %v, want ErrNoConsent", err)
	}
	if _, err := marketlink.New(marketlink.Config{Store: b.st, Market: sandbox}); err == nil {
		t.Errorf("New without a key succeeded")
	}
}

// TestHowToLinkNamesFlags: the operator's command in the link messages
// carries the flags that make a link for this server's environment.
func TestHowToLinkNamesFlags(t *testing.T) {
	b := setup(t)
	l, err := marketlink.New(marketlink.Config{Store: b.st, Key: b.key, Market: "https://api.ebay.com",
		MarketName: "eBay", LinkFlags: "--ebay-env production"})
	if err != nil {
		t.Fatal(err)
	}
	want := `"sniped account link --name alice --refresh-token-file FILE --ebay-env production"`
	if got := l.HowToLink("alice"); !strings.Contains(got, want) {
		t.Errorf("HowToLink = %q, want it to contain %s", got, want)
	}
	_, err = l.RefreshToken(b.ctx, "alice")
	if got := market.Explain(err); !strings.Contains(got, want) {
		t.Errorf("RefreshToken of an unlinked account explains %q, want it to contain %s", got, want)
	}
}
