package api_test

import (
	"net/http"
	"strings"
	"testing"
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
