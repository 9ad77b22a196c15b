package clock

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// shortSlice is the time slice asked for while sleeping, the least the
// kernel grants (EEVDF's custom slice, Linux 6.12 and later; older kernels
// ignore it). A thread with a shorter slice gets an earlier deadline, so on
// waking it preempts the threads of the usual 1–3 ms slices.
const shortSlice = 100 * time.Microsecond

func sleepPrecisely(t time.Time) bool {
	// The slice is the thread's: keep the goroutine on it until it is
	// restored, so that no other goroutine runs with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err == nil {
		short := *old
		short.Runtime = uint64(shortSlice)
		if unix.SchedSetAttr(0, &short, 0) != nil {
			old = nil // refused (a seccomp filter): sleep with the usual slice
		}
		defer func() {
			if old != nil {
				_ = unix.SchedSetAttr(0, old, 0)
			}
		}()
	}
	// CLOCK_MONOTONIC is the clock under Go's monotonic readings.
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
		return false
	}
	abs := unix.NsecToTimespec(now.Nano() + int64(time.Until(t)))
	for {
		switch unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &abs, nil) {
		case nil:
			return true
		case unix.EINTR:
		default:
			return false
		}
	}
}
