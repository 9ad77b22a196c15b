package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// nanosleepUntil sleeps in clock_nanosleep until t (on CLOCK_MONOTONIC,
// the clock under Go's monotonic readings).
func nanosleepUntil(t time.Time) {
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
		return
	}
	abs := unix.NsecToTimespec(now.Nano() + int64(time.Until(t)))
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &abs, nil) == unix.EINTR {
	}
}
