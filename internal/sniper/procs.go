package sniper

import (
	"os"
	"runtime"
)

// MinProcs is the fewest Ps (GOMAXPROCS) a process that runs the sniper
// should have, whatever its number of cores.
//
// A shot waits on a timer, and Go runs a due timer only when a P schedules:
// with every P busy (pure-Go SQLite work is CPU-bound, and Go preempts a
// goroutine only after 10 ms), a shot whose moment has come waits for one.
// On 2 cores that made the steady shots' lateness p99 about 19 ms. Spare
// Ps park their threads in the kernel until the next timer, and the
// kernel's scheduler, which switches in well under a millisecond, runs the
// woken thread beside the busy ones (docs/performance.md, "Shot path").
const MinProcs = 8

// SetProcs raises GOMAXPROCS to MinProcs, unless the GOMAXPROCS environment
// variable chooses a value or the process already has at least that many.
// It returns the value in effect.
func SetProcs() int {
	if n := runtime.GOMAXPROCS(0); os.Getenv("GOMAXPROCS") != "" || n >= MinProcs {
		return n
	}
	runtime.GOMAXPROCS(MinProcs)
	return MinProcs
}
