package main

import (
	"sync"
	"time"
)

// probeTimers times rate bare timers per second from from for d, each
// waited on by a goroutine of its own started 100 ms ahead, as a shot
// waits for its moment, 0.25 ms off the shots' millisecond moments. Their
// lateness is the Go runtime's and the kernel's share of the shots':
// what no change to the shot path can remove (docs/performance.md).
// With nano, a probe waits on a Go timer until 2 ms before its moment
// and sleeps the rest in clock_nanosleep, which Go's timers (woken from
// epoll with a millisecond timeout) cannot match.
func probeTimers(from time.Time, d time.Duration, rate int, nano bool) []time.Duration {
	n := int(d.Seconds() * float64(rate))
	late := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		due := from.Add(time.Duration(i)*time.Second/time.Duration(rate) + 250*time.Microsecond)
		time.Sleep(time.Until(due.Add(-100 * time.Millisecond)))
		wg.Go(func() {
			wait := time.Until(due)
			if nano {
				wait -= 2 * time.Millisecond
			}
			t := time.NewTimer(wait)
			<-t.C
			if nano {
				nanosleepUntil(due)
			}
			late[i] = time.Since(due)
		})
	}
	wg.Wait()
	return late
}
