package sim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/sim"
)

// FuzzControlSurface throws arbitrary query strings at every endpoint: the
// answer is always JSON, never a 5xx, and an error always names a code.
func FuzzControlSurface(f *testing.F) {
	for _, s := range []string{
		"createItem?title=x&start_price=1&ends_in=30",
		"createItem?title=x&start_price=1.5&ends_in=1.25&reserve=2&bin_price=9&country=DE",
		"placeBid?item_no=310000000001&bidder=a&max=99.99",
		"placeBid?item_no=310000000001&bidder=a&max=1e9",
		"endItem?item_no=310000000002&reason=sell",
		"buyItNow?item_no=310000000003&bidder=b",
		"item?item_no=310000000001",
		"watch?key=key-ann&item_no=310000000001",
		"fail?kind=unavailable&count=3&op=now",
		"fail?kind=lost-answer&count=2&item_no=310000000001",
		"fail?kind=slow&ms=250&count=3&op=bidState",
		"fail?kind=stale&ms=5000&item_no=310000000002",
		"fail?kind=stale&off=1",
		"clock?skew=-1.5s",
		"clock",
		"img/310000000001-2.svg",
		"createItem?title=%ff%fe&start_price=00000000001.00&ends_in=+1",
	} {
		f.Add(s)
	}
	s, err := sim.Open(f.Context(), sim.Config{Seed: 1, Items: 5, Bidders: sim.BiddersOff, Clock: clock.NewFake(t0)})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler(resolveTestKey)
	f.Fuzz(func(t *testing.T, target string) {
		req, err := http.NewRequest(http.MethodGet, "/sim/"+target, nil)
		if err != nil {
			t.Skip()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("GET /sim/%s = %d %s", target, rec.Code, rec.Body.String())
		}
		if rec.Header().Get("Content-Type") == "image/svg+xml" {
			return
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET /sim/%s: body %q is not JSON", target, rec.Body.String())
		}
		if rec.Code != http.StatusOK && body["error"] == nil {
			t.Fatalf("GET /sim/%s = %d without an error code: %v", target, rec.Code, body)
		}
	})
}
