package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/httperr"
)

// TestHEADRefusedOnStateChanges: HEAD is GET without a body, so it must not
// run an operation that changes state (issue #12: `curl -I …/addBid?…`
// changed a stored bid). Reads keep HEAD.
func TestHEADRefusedOnStateChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	it := b.item()
	no := itoa(it.ItemNo)
	b.call("addBid", "item_no", no, "bid", "20.00").wantOK(t)
	b.call("addSearch", "query", "camera").wantOK(t)

	changes := []string{
		"/addBid?item_no=" + no + "&bid=30.00",
		"/deleteBid?item_no=" + no,
		"/addSearch?query=lens",
		"/deleteSearch?id=1",
		"/importWatchList?x=1",
		"/addNotifier?kind=webhook",
		"/deleteNotifier?id=1",
		"/testNotifier?id=1",
		"/connectMarketAccount?x=1",
		"/unlinkMarketAccount?x=1",
	}
	for _, pq := range changes {
		r := b.raw(http.MethodHead, pq+"&key="+b.paidKey)
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s = %d, want 405", pq, r.status)
		}
		if got := r.header.Get("Allow"); got != "GET" {
			t.Errorf("HEAD %s: Allow = %q, want GET", pq, got)
		}
		r = b.raw(http.MethodPost, pq+"&key="+b.paidKey)
		r.wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
		if got := r.header.Get("Allow"); got != "GET" {
			t.Errorf("POST %s: Allow = %q, want GET", pq, got)
		}
	}
	// Nothing changed: the bid is still 20.00 and both searches are there.
	st := b.call("getUserItems", "filter", "current")
	st.wantOK(t)
	if !strings.Contains(string(st.raw), `"bid":"20.00"`) {
		t.Errorf("after HEAD requests getUserItems = %s, want the snipe with its bid still 20.00", st.raw)
	}
	if s := b.call("getUserSearches"); len(arr(t, s.body, "searches")) != 1 {
		t.Errorf("after HEAD requests getUserSearches = %s, want the one search", s.raw)
	}

	reads := []string{
		"/justTesting?arg1=x",
		"/checkSnipeStatus?item_no=" + no,
		"/getUserItems?filter=current&limit=5",
		"/getUserSearches?x=1",
		"/fetchItem?item_no=" + no,
	}
	for _, pq := range reads {
		if r := b.raw(http.MethodHead, pq+"&key="+b.paidKey); r.status != http.StatusOK || len(r.raw) != 0 {
			t.Errorf("HEAD %s = %d with %d body bytes, want 200 and none", pq, r.status, len(r.raw))
		}
	}
}

// TestSecurityHeaders: every JSON answer, success or failure, carries the
// cheap safe headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "no-referrer",
	}
	for _, pq := range []string{
		"/justTesting?arg1=x&key=" + b.paidKey,
		"/justTesting?arg1=x&key=snp_wrong",
		"/nope",
		"/getUserItems?limit=0&key=" + b.paidKey,
	} {
		r := b.raw(http.MethodGet, pq)
		for h, v := range want {
			if got := r.header.Get(h); got != v {
				t.Errorf("GET %s: %s = %q, want %q", pq, h, got, v)
			}
		}
	}
	r := b.raw(http.MethodGet, "/openapi.json")
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("openapi.json: X-Content-Type-Options = %q, want nosniff", got)
	}
}

// TestAccountByKeySharesTheFailedKeyBudget: other endpoints that take a key
// (the simulator's /sim/watch) resolve it through AccountByKey, which
// spends the same per-address failed-key budget as the interface.
func TestAccountByKeySharesTheFailedKeyBudget(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{rateLimit: 100, rateBurst: 100})
	req := httptest.NewRequest(http.MethodGet, "/sim/watch", nil)
	req.RemoteAddr = "127.0.0.1:40000" // the address the test server's client uses
	if a, err := b.handler.AccountByKey(req, b.paidKey); err != nil || a.ID != b.paid.ID {
		t.Fatalf("AccountByKey(valid key) = %v, %v; want account %d", a.ID, err, b.paid.ID)
	}
	for i := range 10 {
		_, err := b.handler.AccountByKey(req, "snp_guess"+itoa(int64(i)))
		var he *httperr.Error
		if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: err = %v, want a 401", i, err)
		}
	}
	_, err := b.handler.AccountByKey(req, "snp_guess")
	var he *httperr.Error
	if !errors.As(err, &he) || he.Status != http.StatusTooManyRequests {
		t.Fatalf("11th guess: err = %v, want a 429", err)
	}
	// The interface, from the same address, is blocked too.
	b.call("justTesting", "arg1", "a").wantError(t, http.StatusTooManyRequests, "rate_limited", "")
}
