package clock

import (
	"sync/atomic"
	"time"
)

// PreciseWindow is how long before a moment a caller of SleepPrecisely
// should stop waiting on a Go timer: Go wakes its timers from epoll_wait,
// whose timeout counts whole milliseconds, and under load a woken timer's
// thread waits for a core (docs/performance.md, "Fourth look").
const PreciseWindow = 2 * time.Millisecond

// maxPrecise bounds the goroutines sleeping in SleepPrecisely at once. Each
// holds a thread and, until the runtime retakes it, a P.
const maxPrecise = 32

var precise atomic.Int32

// SleepPrecisely sleeps until t in the kernel, on a thread that asks the
// kernel's scheduler for a short time slice meanwhile, so that the thread
// runs as soon as t comes instead of waiting for a busy core's slice to
// end. It reports false, without sleeping, where the platform cannot (not
// Linux) or when maxPrecise goroutines already do; the caller then waits on
// a timer. Only for the real clock: a synctest bubble's time is not the
// kernel's.
func SleepPrecisely(t time.Time) bool {
	if precise.Add(1) > maxPrecise {
		precise.Add(-1)
		return false
	}
	defer precise.Add(-1)
	return sleepPrecisely(t)
}
