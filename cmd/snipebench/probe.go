package main

import (
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
)

// probeTimers times rate bare timers per second from from for d, each
// waited on by a goroutine of its own started 100 ms ahead, as a shot
// waits for its moment, 0.25 ms off the shots' millisecond moments. Their
// lateness is the Go runtime's and the kernel's share of the shots':
// what no change to the shot path can remove (docs/performance.md).
// With precise, a probe waits as a shot with sniper.Config.PreciseWake
// does: on a Go timer until clock.PreciseWindow before its moment, then in
// clock.SleepPrecisely.
func probeTimers(from time.Time, d time.Duration, rate int, precise bool) []time.Duration {
	n := int(d.Seconds() * float64(rate))
	late := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		due := from.Add(time.Duration(i)*time.Second/time.Duration(rate) + 250*time.Microsecond)
		time.Sleep(time.Until(due.Add(-100 * time.Millisecond)))
		wg.Go(func() {
			wait := time.Until(due)
			if precise {
				wait -= clock.PreciseWindow
			}
			t := time.NewTimer(wait)
			<-t.C
			if precise && !clock.SleepPrecisely(due) {
				t.Reset(time.Until(due))
				<-t.C
			}
			late[i] = time.Since(due)
		})
	}
	wg.Wait()
	return late
}
