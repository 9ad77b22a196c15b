package ebay_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/contract"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/ebaysim"
	"github.com/sniped/sniped/internal/market/sim"
)

// TestContract runs the marketplace contract suite on the eBay adapter
// talking HTTP to the simulator served in eBay's shape. The item cache is
// off: the suite changes items behind the adapter's back and expects to see
// it at once, which the cache promises only in an auction's last
// FreshWithin and under market.WithFresh. The adapter
// declares the four things eBay's APIs do not tell (docs/ebay.md).
func TestContract(t *testing.T) {
	t.Parallel()
	contract.Run(t, func(t *testing.T) contract.Harness {
		c := clock.NewFake(t0)
		s, err := sim.Open(t.Context(), sim.Config{Seed: 3, Items: 5, Bidders: sim.BiddersOff, Clock: c, ImageBaseURL: "http://sim.test"})
		if err != nil {
			t.Fatalf("sim.Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		srv, err := ebaysim.New(ebaysim.Config{Sim: s, Clock: c})
		if err != nil {
			t.Fatalf("ebaysim.New: %v", err)
		}
		h := httptest.NewServer(srv.Handler())
		t.Cleanup(h.Close)
		l := &links{tokens: map[string]string{}}
		for _, u := range contract.Users {
			tok, _, err := srv.MintRefreshToken(u)
			if err != nil {
				t.Fatal(err)
			}
			l.set(u, tok)
		}
		ad, err := ebay.New(ebay.Config{APIURL: h.URL, AuthURL: h.URL, ClientID: ebaysim.DefaultClientID,
			ClientSecret: ebaysim.DefaultClientSecret, Links: l, HTTPClient: h.Client(), ItemTTL: -1, Clock: c, Timeout: 5 * time.Second, Backoff: time.Millisecond})
		if err != nil {
			t.Fatalf("ebay.New: %v", err)
		}
		return contract.Harness{Market: ad, Control: contract.Sim(s, c),
			Lacks: contract.Lacks{History: true, EndReasons: true, StartPriceAfterBids: true, ClockCall: true}}
	})
}
