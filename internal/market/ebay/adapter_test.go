package ebay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/money"
)

func TestItemFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{Title: "Leica M6 body", StartPrice: 10_00, Reserve: 50_00, BINPrice: 90_00, Seller: "camstore", Category: "Cameras:Film"})
	got, err := b.ad.Item(b.ctx, no)
	if err != nil {
		t.Fatalf("Item: %v", err)
	}
	want, _ := b.sim.Item(b.ctx, no)
	checks := []struct {
		name      string
		got, want any
	}{
		{"ItemNo", got.ItemNo, want.ItemNo},
		{"Title", got.Title, want.Title},
		{"Category", got.Category, want.Category},
		{"Currency", got.Currency, want.Currency},
		{"Country", got.Country, want.Country},
		{"SellerID", got.SellerID, want.SellerID},
		{"CurrentPrice", got.CurrentPrice, want.CurrentPrice},
		{"StartPrice", got.StartPrice, want.StartPrice},
		{"MinimumToBid", got.MinimumToBid, want.MinimumToBid},
		{"HasReserve", got.HasReserve, true},
		{"ReserveMet", got.ReserveMet, false},
		{"BuyItNow", got.BuyItNow, want.BuyItNow},
		{"End", got.End.Equal(want.End), true},
		{"Start", got.Start.Equal(want.Start), true},
		{"PictureURL (image.imageUrl)", got.PictureURL, want.PictureURL},
		{"Images", len(got.Images), len(want.Images)},
		{"ShippingCost", got.ShippingCost, want.ShippingCost},
		{"Ended", got.Ended, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := b.ad.Item(b.ctx, 999_999_999_999); !errors.Is(err, market.ErrNotFound) {
		t.Errorf("Item(unknown) = %v, want ErrNotFound", err)
	}
}

func TestItemCacheAndFresh(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	const path = "GET /buy/browse/v1/item/get_item_by_legacy_id"
	for range 3 {
		if _, err := b.ad.Item(b.ctx, no); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.count(path); n != 1 {
		t.Errorf("3 lookups within the TTL made %d calls, want 1", n)
	}
	if _, err := b.ad.Item(market.WithFresh(b.ctx), no); err != nil {
		t.Fatal(err)
	}
	if n := b.count(path); n != 2 {
		t.Errorf("a WithFresh lookup made %d calls in all, want 2", n)
	}
	b.advance(t, 2*time.Minute) // past the TTL
	if _, err := b.ad.Item(b.ctx, no); err != nil {
		t.Fatal(err)
	}
	if n := b.count(path); n != 3 {
		t.Errorf("a lookup after the TTL made %d calls in all, want 3", n)
	}

	// In its last two minutes, and after its end, an item is never served
	// from the cache: pre-flights and settlement must see eBay's latest.
	soon := b.create(t, sim.NewItem{EndsIn: ebay.FreshWithin})
	for range 2 {
		if _, err := b.ad.Item(b.ctx, soon); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.count(path); n != 5 {
		t.Errorf("2 lookups of an item ending within FreshWithin made %d calls in all, want 5", n)
	}
	// An answer cached before the last two minutes is not served in them,
	// nor after the end, however long the TTL.
	long := setup(t, func(o *options) { o.itemTTL = time.Hour })
	later := long.create(t, sim.NewItem{EndsIn: ebay.FreshWithin + 20*time.Second})
	for _, step := range []struct {
		advance time.Duration
		calls   int
		ended   bool
	}{{0, 1, false}, {0, 1, false}, {30 * time.Second, 2, false}, {2 * time.Minute, 3, true}} {
		long.advance(t, step.advance)
		it, err := long.ad.Item(long.ctx, later)
		if err != nil {
			t.Fatal(err)
		}
		if n := long.count(path); n != step.calls || it.Ended != step.ended {
			t.Errorf("after %v more: %d calls in all, ended %v; want %d, %v", step.advance, n, it.Ended, step.calls, step.ended)
		}
	}
}

// TestShotNeedsNoLookup: a bid in an auction's last seconds, after a
// pre-flight looked the item up, sends no Browse call before
// place_proxy_bid (the currency comes from the cache).
func TestShotNeedsNoLookup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{EndsIn: 5 * time.Second})
	if _, err := b.ad.Item(b.ctx, no); err != nil { // the pre-flight
		t.Fatal(err)
	}
	if _, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00); err != nil {
		t.Fatal(err)
	}
	if n := b.count("GET /buy/browse/"); n != 1 {
		t.Errorf("a pre-flight and a bid made %d Browse calls, want 1", n)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.create(t, sim.NewItem{Title: "zebra lens alpha", EndsIn: 5 * time.Minute})
	second := b.create(t, sim.NewItem{Title: "zebra lens beta", EndsIn: 3 * time.Minute})
	gb := b.create(t, sim.NewItem{Title: "zebra lens gamma", Country: "GB"})
	// An auction with a bid: eBay leaves it out unless buyingOptions:{AUCTION}
	// is asked for.
	if _, err := b.sim.PlaceBid(b.ctx, "rival", first, 20_00); err != nil {
		t.Fatal(err)
	}
	var query url.Values
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/buy/browse/v1/item_summary/search" {
			query = r.URL.Query()
		}
		return false
	})
	got, err := b.ad.Search(b.ctx, "zebra lens", "US", 500)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	var nos []int64
	for _, it := range got {
		nos = append(nos, it.ItemNo)
	}
	if len(nos) != 2 || nos[0] != second || nos[1] != first {
		t.Errorf("Search = %v, want [%d %d] (soonest first, GB item %d left out)", nos, second, first, gb)
	}
	for k, want := range map[string]string{"filter": "buyingOptions:{AUCTION},itemLocationCountry:US", "sort": "endingSoonest", "limit": "200", "q": "zebra lens"} {
		if query.Get(k) != want {
			t.Errorf("search %s = %q, want %q", k, query.Get(k), want)
		}
	}
	if len(got) > 0 && got[0].Country != "US" {
		t.Errorf("Country = %q, want US", got[0].Country)
	}
}

func TestBidAndState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{StartPrice: 10_00, EndsIn: time.Minute})
	var path, mkt string
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/place_proxy_bid") {
			path, mkt = r.URL.EscapedPath(), r.Header.Get("X-EBAY-C-MARKETPLACE-ID")
		}
		return false
	})
	st, err := b.ad.BidState(b.ctx, "alice", no)
	if err != nil {
		t.Fatalf("BidState before a bid: %v", err)
	}
	if st.HasBid || st.Ended {
		t.Errorf("BidState before a bid = %+v, want no bid, running", st)
	}
	rc, err := b.ad.PlaceBid(b.ctx, "alice", no, 25_00)
	if err != nil {
		t.Fatalf("PlaceBid: %v", err)
	}
	if !rc.HighBidder || rc.CurrentPrice != 10_00 {
		t.Errorf("receipt = %+v, want high bidder at 10.00", rc)
	}
	wantPath := "/buy/offer/v1_beta/bidding/v1%7C" + itoa(no) + "%7C0/place_proxy_bid"
	if path != wantPath || mkt != "EBAY_US" {
		t.Errorf("bid sent to %s with marketplace %q, want %s and EBAY_US", path, mkt, wantPath)
	}
	st, err = b.ad.BidState(b.ctx, "alice", no)
	if err != nil {
		t.Fatalf("BidState: %v", err)
	}
	if !st.HasBid || st.MaxBid != 25_00 || !st.HighBidder || st.Ended {
		t.Errorf("BidState = %+v, want a 25.00 bid leading", st)
	}
	b.advance(t, 2*time.Minute)
	st, err = b.ad.BidState(b.ctx, "alice", no)
	if err != nil {
		t.Fatalf("BidState after the end: %v", err)
	}
	if !st.Ended || !st.Won || st.EndReason != market.EndedNormally {
		t.Errorf("BidState after the end = %+v, want ended and won", st)
	}
	if st, err := b.ad.BidState(b.ctx, "bob", no); err != nil || st.HasBid || !st.Ended {
		t.Errorf("bob's BidState = %+v, %v; want no bid, ended", st, err)
	}
}

func TestReserveNotMet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{StartPrice: 10_00, Reserve: 100_00, EndsIn: time.Minute})
	if _, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00); err != nil {
		t.Fatal(err)
	}
	b.advance(t, 2*time.Minute)
	st, err := b.ad.BidState(b.ctx, "alice", no)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ended || st.Won || st.ReserveMet || !st.HighBidder {
		t.Errorf("BidState = %+v, want ended, high bidder below the reserve, not won", st)
	}
}

// TestBidErrors maps every refusal the simulator can produce, through
// eBay's error ids, back to the market sentinel.
func TestBidErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, b *bundle, no int64)
		bid   money.Amount
		item  sim.NewItem
		want  error
		text  string
	}{
		{name: "too low", bid: 5_00, want: market.ErrTooLow},
		{name: "increment not met", setup: func(t *testing.T, b *bundle, no int64) {
			b.sim.PlaceBid(b.ctx, "r1", no, 15_00)
			b.sim.PlaceBid(b.ctx, "r2", no, 16_00)
		}, bid: 15_60, want: market.ErrIncrementNotMet},
		{name: "cannot lower own maximum", setup: func(t *testing.T, b *bundle, no int64) { b.sim.PlaceBid(b.ctx, "alice", no, 30_00) }, bid: 20_00, want: market.ErrCannotLowerMax},
		{name: "ended", setup: func(t *testing.T, b *bundle, no int64) { b.advance(t, 20*time.Minute) }, bid: 20_00, want: market.ErrEnded},
		{name: "ended by buy it now", item: sim.NewItem{BINPrice: 80_00}, setup: func(t *testing.T, b *bundle, no int64) { b.sim.BuyItNow(b.ctx, "rival", no) }, bid: 20_00, want: market.ErrEndedByBuyItNow},
		{name: "cancelled", setup: func(t *testing.T, b *bundle, no int64) { b.sim.EndEarly(b.ctx, no, false) }, bid: 20_00, want: market.ErrCancelled},
		{name: "seller", item: sim.NewItem{Seller: "alice"}, bid: 20_00, want: market.ErrSellerCannotBid},
		{name: "ineligible", setup: func(t *testing.T, b *bundle, no int64) { b.sim.SetIneligible("alice", no, true) }, bid: 20_00, want: market.ErrIneligible},
		{name: "at buy it now price", item: sim.NewItem{BINPrice: 80_00}, bid: 90_00, want: market.ErrBINPriceReached},
		{name: "not found", setup: func(t *testing.T, b *bundle, no int64) { b.sim.RemoveItem(b.ctx, no, true) }, bid: 20_00, want: market.ErrNotFound},
		{name: "unavailable", setup: func(t *testing.T, b *bundle, no int64) { b.sim.FailItem(no, sim.OpPlaceBid, true) }, bid: 20_00, want: market.ErrUnavailable},
		{name: "no offer approval", setup: func(t *testing.T, b *bundle, no int64) { b.sim.DenyUser("alice", true) }, bid: 20_00, want: market.ErrNotAuthorized, text: "lacks Offer API approval"},
		{name: "unlinked user", bid: 20_00, want: market.ErrNotAuthorized, text: "connect eBay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			no := b.create(t, c.item)
			if _, err := b.ad.Item(b.ctx, no); err != nil { // warm the cache, as pre-flight does
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, b, no)
			}
			user := "alice"
			if c.name == "unlinked user" {
				user = "carol"
			}
			_, err := b.ad.PlaceBid(b.ctx, user, no, c.bid)
			var be *market.BidError
			if !errors.As(err, &be) {
				t.Fatalf("PlaceBid = %v, want a *market.BidError", err)
			}
			if !errors.Is(err, c.want) {
				t.Errorf("PlaceBid = %v, want %v", err, c.want)
			}
			if c.text != "" && !strings.Contains(err.Error(), c.text) {
				t.Errorf("PlaceBid = %q, want it to say %q", err, c.text)
			}
			if n := b.count("POST /buy/offer"); n > 1 {
				t.Errorf("place_proxy_bid was sent %d times, want at most 1", n)
			}
		})
	}
}

func TestTooLowNamesMinimum(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{StartPrice: 10_00})
	_, err := b.ad.PlaceBid(b.ctx, "alice", no, 5_00)
	var be *market.BidError
	if !errors.As(err, &be) || be.Minimum != 10_00 || be.CurrentPrice != 10_00 {
		t.Errorf("PlaceBid = %#v, want a refusal naming minimum 10.00", err)
	}
}

func TestWatchList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{Title: "watched thing"})
	if err := b.sim.Watch(b.ctx, "alice", no); err != nil {
		t.Fatal(err)
	}
	want, err := b.sim.WatchList(b.ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.ad.WatchList(b.ctx, "alice")
	if err != nil {
		t.Fatalf("WatchList: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("WatchList has %d items, want %d", len(got), len(want))
	}
	found := false
	for _, it := range got {
		found = found || it.ItemNo == no
	}
	if !found {
		t.Errorf("WatchList lacks the watched item %d", no)
	}
	b.sim.DenyUser("bob", true)
	if _, err := b.ad.WatchList(b.ctx, "bob"); !errors.Is(err, market.ErrNotAuthorized) || !strings.Contains(market.Explain(err), "Connect eBay") {
		t.Errorf("WatchList of a refused user = %v (explained %q), want ErrNotAuthorized saying how to connect eBay again", err, market.Explain(err))
	}
}

// TestRefreshOneInFlight: concurrent calls for one user share one refresh;
// the token is refreshed again only near its expiry.
func TestRefreshOneInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	// Refreshes are held until every caller has started, so that callers
	// pile up behind them.
	const callers = 40
	var entered atomic.Int32
	allIn := make(chan struct{})
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/identity/v1/oauth2/token" && r.PostForm.Get("grant_type") == "refresh_token" {
			select {
			case <-allIn:
			case <-time.After(10 * time.Second): // a bound, should a caller never start
			}
		}
		return false
	})
	var wg sync.WaitGroup
	for i := range callers {
		user := []string{"alice", "bob"}[i%2]
		wg.Go(func() {
			if entered.Add(1) == callers {
				close(allIn)
			}
			if _, err := b.ad.BidState(b.ctx, user, no); err != nil {
				t.Errorf("BidState(%s): %v", user, err)
			}
		})
	}
	wg.Wait()
	if n := b.count("POST /identity/v1/oauth2/token refresh_token"); n != 2 {
		t.Errorf("40 concurrent calls for 2 users made %d refreshes, want 2", n)
	}
	if n := b.count("POST /identity/v1/oauth2/token client_credentials"); n != 1 {
		t.Errorf("application token fetched %d times, want 1", n)
	}
	b.advance(t, 1*time.Hour)
	if _, err := b.ad.BidState(b.ctx, "alice", no); err != nil {
		t.Fatal(err)
	}
	if n := b.count("POST /identity/v1/oauth2/token refresh_token"); n != 2 {
		t.Errorf("an hour in, refreshes = %d, want still 2", n)
	}
	b.advance(t, 56*time.Minute) // within 5 minutes of the 2-hour expiry
	if _, err := b.ad.BidState(b.ctx, "alice", no); err != nil {
		t.Fatal(err)
	}
	if n := b.count("POST /identity/v1/oauth2/token refresh_token"); n != 3 {
		t.Errorf("near expiry, refreshes = %d, want 3", n)
	}
}

func TestBrokenLink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	if err := b.server.RevokeRefreshTokens("alice"); err != nil {
		t.Fatal(err)
	}
	_, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00)
	if !errors.Is(err, market.ErrNotAuthorized) || !strings.Contains(err.Error(), "link of alice is broken") || !strings.Contains(err.Error(), "Connect eBay") {
		t.Errorf("PlaceBid with a revoked token = %v, want ErrNotAuthorized saying the link is broken and how to relink", err)
	}
	if n := b.count("POST /buy/offer"); n != 0 {
		t.Errorf("bids sent without a token: %d", n)
	}
}

func TestInvalidClient(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *options) { o.secret = "wrong" })
	no := b.create(t, sim.NewItem{})
	_, err := b.ad.Item(b.ctx, no)
	if !errors.Is(err, market.ErrNotAuthorized) || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("Item with a wrong secret = %v, want ErrNotAuthorized naming invalid_client", err)
	}
	if err := b.ad.CheckKeys(b.ctx); !errors.Is(err, market.ErrNotAuthorized) || market.Explain(err) == "" {
		t.Errorf("CheckKeys with a wrong secret = %v, want ErrNotAuthorized with an explanation", err)
	}
	good := setup(t)
	if err := good.ad.CheckKeys(good.ctx); err != nil {
		t.Errorf("CheckKeys with the right keys = %v", err)
	}
	if n := good.count("POST /identity/v1/oauth2/token client_credentials"); n != 1 {
		t.Errorf("CheckKeys made %d application token calls, want 1", n)
	}
}

// TestRevokedAccessToken: a 401 on a call drops the access token and the
// call is sent once more with a fresh one.
func TestRevokedAccessToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	if _, err := b.ad.BidState(b.ctx, "alice", no); err != nil {
		t.Fatal(err)
	}
	once := sync.Once{}
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		hit := false
		if strings.HasSuffix(r.URL.Path, "/place_proxy_bid") {
			once.Do(func() {
				hit = true
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"errors":[{"errorId":1001,"domain":"OAuth","category":"REQUEST","message":"Invalid access token"}]}`))
			})
		}
		return hit
	})
	if _, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00); err != nil {
		t.Fatalf("PlaceBid after a revoked access token: %v", err)
	}
	if n := b.count("POST /identity/v1/oauth2/token refresh_token"); n != 2 {
		t.Errorf("refreshes = %d, want 2 (the first, and one after the 401)", n)
	}
	st, _ := b.sim.ItemState(b.ctx, no)
	if len(st.Bids) != 1 {
		t.Errorf("the simulator holds %d bids, want 1", len(st.Bids))
	}
}

// Test429 uses the real clock: the adapter waits out the limit.
func Test429(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *options) { o.clock = clock.Real{} })
	no := b.create(t, sim.NewItem{})
	var mu sync.Mutex
	limited := 1
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/buy/browse/") && limited > 0 {
			limited--
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"errors":[{"errorId":2001,"domain":"ACCESS","category":"REQUEST","message":"Too many requests."}]}`))
			return true
		}
		return false
	})
	start := time.Now()
	if _, err := b.ad.Item(b.ctx, no); err != nil {
		t.Fatalf("Item after one 429: %v", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("retried after %v, want a backoff of at least 200ms", d)
	}
	if n := b.count("GET /buy/browse/v1/item/get_item_by_legacy_id"); n != 2 {
		t.Errorf("calls = %d, want 2", n)
	}
	// A Retry-After beyond the caller's deadline fails at once.
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/buy/browse/") {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	})
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	start = time.Now()
	_, err := b.ad.Item(market.WithFresh(ctx), no)
	if !errors.Is(err, market.ErrUnavailable) {
		t.Errorf("Item under a 30 s limit = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("gave up after %v, want at once", d)
	}
}

func TestClockCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		skew time.Duration
		warn bool
	}{{"in sync", 0, false}, {"eBay 5s ahead", 5 * time.Second, true}, {"eBay 3s behind", -3 * time.Second, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(o *options) { o.skew = c.skew })
			no := b.create(t, sim.NewItem{})
			if _, err := b.ad.Item(b.ctx, no); err != nil {
				t.Fatal(err)
			}
			lo, hi, ok := b.ad.ClockCheck()
			if !ok || lo > c.skew || hi < c.skew || hi-lo > time.Second {
				t.Errorf("ClockCheck = [%v, %v] %v, want a 1 s interval around %v", lo, hi, ok, c.skew)
			}
			if got := strings.Contains(b.logs.String(), "clock differs from eBay"); got != c.warn {
				t.Errorf("warned = %v, want %v; log:\n%s", got, c.warn, b.logs)
			}
			if got := gaugeOf(t, b, "sniped_ebay_clock_offset_min_seconds"); got != lo.Seconds() {
				t.Errorf("offset min gauge = %v, want %v", got, lo.Seconds())
			}
			now, err := b.ad.Now(b.ctx)
			if err != nil || !now.Equal(b.clock.Now()) {
				t.Errorf("Now = %v, %v; want the host clock %v", now, err, b.clock.Now())
			}
		})
	}
}

func TestSendLeadAndMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	if b.ad.SendLead() != 0 {
		t.Errorf("SendLead before any call = %v, want 0", b.ad.SendLead())
	}
	if _, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00); err != nil {
		t.Fatal(err)
	}
	// The fake clock stands still, so every round trip measures 0; the
	// real-clock figure is in docs/ebay.md.
	if b.ad.SendLead() < 0 {
		t.Errorf("SendLead = %v", b.ad.SendLead())
	}
	for api, want := range map[string]float64{"oauth": 2, "browse": 1, "offer": 2} {
		if got := callsOf(t, b, api); got != want {
			t.Errorf("calls{api=%s} = %v, want %v", api, got, want)
		}
	}
}

// callsOf sums the call counter of one API over its statuses.
func callsOf(t *testing.T, b *bundle, api string) float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "sniped_ebay_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "api" && l.GetValue() == api {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func TestConsentAndExchange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.ad.AuthorizeURL("xyz-state")
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	if p.Path != "/oauth2/authorize" || q.Get("redirect_uri") != "sniped-RuName" || q.Get("response_type") != "code" || q.Get("state") != "xyz-state" || !strings.Contains(q.Get("scope"), ebay.ScopeOffer) {
		t.Fatalf("AuthorizeURL = %s", u)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Errorf("consent page: %d %s, want 200 HTML", page.StatusCode, page.Header.Get("Content-Type"))
	}
	resp, err := noRedirect.Get(u + "&login=ebay_dave&approve=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc == nil || loc.Host != "sniped.test" || loc.Path != "/market/callback" || loc.Query().Get("state") != "xyz-state" {
		t.Fatalf("consent answer %d to %q, want a redirect to the accept URL with the state", resp.StatusCode, resp.Header.Get("Location"))
	}
	ut, err := b.ad.ExchangeCode(b.ctx, loc.Query().Get("code"))
	if err != nil {
		t.Fatalf("ExchangeCode: %v", err)
	}
	if ut.User != "ebay_dave" || ut.RefreshToken == "" || !ut.RefreshExpiry.After(b.clock.Now().Add(500*24*time.Hour)) {
		t.Errorf("UserToken = {User:%q Expiry:%v}, want ebay_dave with an 18-month token", ut.User, ut.RefreshExpiry)
	}
	if _, err := b.ad.ExchangeCode(b.ctx, loc.Query().Get("code")); !errors.Is(err, market.ErrNotAuthorized) {
		t.Errorf("reusing a code = %v, want ErrNotAuthorized", err)
	}
	// The new link bids as ebay_dave.
	b.links.set("dave", ut.RefreshToken)
	no := b.create(t, sim.NewItem{})
	if _, err := b.ad.PlaceBid(b.ctx, "dave", no, 20_00); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.sim.ItemState(b.ctx, no); st.HighBidder != "ebay_dave" {
		t.Errorf("high bidder = %q, want ebay_dave", st.HighBidder)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestUnavailableReadsRetried: a read that keeps failing is tried three
// times and then reported as transient; retry waits do not depend on the
// (fake) clock.
func TestUnavailableReadsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	b.sim.FailNext(sim.OpItem, 3)
	if _, err := b.ad.Item(b.ctx, no); !errors.Is(err, market.ErrUnavailable) {
		t.Errorf("Item with 3 failures = %v, want ErrUnavailable", err)
	}
	if n := b.count("GET /buy/browse/v1/item/get_item_by_legacy_id"); n != 3 {
		t.Errorf("attempts = %d, want 3", n)
	}
	b.sim.FailNext(sim.OpItem, 1)
	if _, err := b.ad.Item(market.WithFresh(b.ctx), no); err != nil {
		t.Errorf("Item after one failure = %v, want the retry to succeed", err)
	}
}

// TestBidAfter429: eBay refuses a limited call before acting on it, so the
// bid is sent again after the wait, and lands once.
func TestBidAfter429(t *testing.T) {
	t.Parallel()
	b := setup(t)
	no := b.create(t, sim.NewItem{})
	var once sync.Once
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		hit := false
		if strings.HasSuffix(r.URL.Path, "/place_proxy_bid") {
			once.Do(func() {
				hit = true
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
			})
		}
		return hit
	})
	if _, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00); err != nil {
		t.Fatalf("PlaceBid after a 429: %v", err)
	}
	if n := b.count("POST /buy/offer"); n != 2 {
		t.Errorf("place_proxy_bid sent %d times, want 2", n)
	}
	if st, _ := b.sim.ItemState(b.ctx, no); len(st.Bids) != 1 {
		t.Errorf("the simulator holds %d bids, want 1", len(st.Bids))
	}
}

// TestTimeouts: an answer that does not come within the per-attempt
// timeout is a transient failure; a read is tried again, a bid is not.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *options) { o.timeout = 300 * time.Millisecond })
	no := b.create(t, sim.NewItem{})
	if _, err := b.ad.BidState(b.ctx, "alice", no); err != nil { // tokens first, unhindered
		t.Fatal(err)
	}
	var mu sync.Mutex
	stall := map[string]int{"/buy/browse/v1/item/get_item_by_legacy_id": 1, "/place_proxy_bid": 1}
	b.addHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		key := r.URL.Path
		if strings.HasSuffix(key, "/place_proxy_bid") {
			key = "/place_proxy_bid"
		}
		hang := stall[key] > 0
		if hang {
			stall[key]--
		}
		mu.Unlock()
		if hang {
			// Answer only when the client has given up. The server notices
			// a closed connection only once the body is read.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute): // a bound, should the client never give up
			}
		}
		return hang
	})
	if _, err := b.ad.Item(market.WithFresh(b.ctx), no); err != nil {
		t.Errorf("Item after one stalled attempt = %v, want the retry's answer", err)
	}
	if n := b.count("GET /buy/browse/v1/item/get_item_by_legacy_id"); n != 3 {
		t.Errorf("lookups = %d, want 3 (BidState's, then a stalled one and its retry)", n)
	}
	_, err := b.ad.PlaceBid(b.ctx, "alice", no, 20_00)
	if !errors.Is(err, market.ErrUnavailable) {
		t.Errorf("PlaceBid stalled = %v, want ErrUnavailable", err)
	}
	if n := b.count("POST /buy/offer"); n != 1 {
		t.Errorf("place_proxy_bid sent %d times, want 1 (never re-sent blindly)", n)
	}
}

// gaugeOf reads a gauge from the bundle's registry.
func gaugeOf(t *testing.T, b *bundle, name string) float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
