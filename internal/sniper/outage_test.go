package sniper

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// TestOutageGoroutines measures the goroutines a marketplace outage costs:
// n snipes placed whose items ended, n left firing by a crash and n due in
// the same second, while every marketplace call but the clock fails for
// five minutes. The sniper's goroutines stay within its slots (shots and
// background work) plus its loops, and everything settles after the
// outage. SNIPED_OUTAGE_SNIPES sets n (default 200); docs/performance.md
// has the figures for 3,000. Not parallel, so that runtime.NumGoroutine
// counts this test only.
func TestOutageGoroutines(t *testing.T) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("SNIPED_OUTAGE_SNIPES")); err == nil && v > 0 {
		n = v
	}
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		var all []store.Snipe
		for i := range 3 * n {
			endsIn := 30 * time.Second // placed and firing: ended during the outage
			if i >= 2*n {
				endsIn = 2 * time.Minute // due in the outage, all in one second
			}
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: endsIn})
			sn := b.add(no, 500, 3, snipeOpts{})
			if i < 2*n {
				b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending)
			}
			if i < n {
				b.mark(sn.ID, store.StateFiring, store.StatePlaced, outcome.Placed)
				if err := b.mk.Rival("alice", no, 500); err != nil {
					t.Fatal(err)
				}
			}
			all = append(all, sn)
		}
		b.restart()
		start := time.Now()
		up := start.Add(5 * time.Minute)
		b.mk.SetInjector(func(method, _ string, _ int64) error {
			if method != markettest.MethodNow && time.Now().Before(up) {
				return market.ErrUnavailable
			}
			return nil
		})
		base := runtime.NumGoroutine()
		b.start()
		peakLive, peakAll := 0, 0
		for time.Now().Before(up.Add(time.Minute)) {
			time.Sleep(100 * time.Millisecond)
			peakLive = max(peakLive, int(b.sn.live.Load()))
			peakAll = max(peakAll, runtime.NumGoroutine()-base)
		}
		slots := cap(b.sn.sem) + cap(b.sn.bg)
		t.Logf("%d snipes (%d placed, %d firing, %d due) through a 5 min outage: peak sniper goroutines %d, peak goroutines above the test's own %d; slots %d; marketplace calls: BidState %d, PlaceBid %d",
			3*n, n, n, n, peakLive, peakAll, slots, b.mk.Calls(markettest.MethodBidState), b.mk.Calls(markettest.MethodPlaceBid))
		if limit := slots + 6; peakLive > limit {
			t.Errorf("peak sniper goroutines = %d, want at most %d (slots plus loops)", peakLive, limit)
		}
		pending := 0
		for _, sn := range all {
			if got := b.get(sn.ID); got.State != store.StateSettled {
				pending++
			}
		}
		if pending > 0 {
			t.Errorf("%d snipes not settled a minute after the outage", pending)
		}
	})
}
