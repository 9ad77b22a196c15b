package sniper

import (
	"context"
	"sync"
	"time"
)

// moments wakes the shots of a crowded moment together, on one timer.
//
// A shot waiting on a timer of its own is woken by the P whose heap holds
// the timer, when that P next schedules. With thousands due at once and 8
// Ps on 2 cores, a P whose thread the kernel has taken off the CPU holds
// hundreds of due shots until its thread runs again: in traced bursts of
// 5,000, a tenth of the timers fired 12–20 ms after the first. One keeper
// per moment closes a channel that all the moment's shots receive from,
// which makes them runnable at once, in run queues that every P steals
// from (docs/performance.md, "Eighth look").
//
// The shots wait in a plain receive, not a select: a select woken by one
// channel locks again every channel it waited on, and the crowd would
// share those locks just as it wakes. The keeper watches for what else
// ends the wait (a new offset, the sniper stopping) and says why it
// closed the channel.
type moments struct {
	mu sync.Mutex
	at map[int64]*moment // by local moment, in Unix nanoseconds
}

// moment is one crowded moment's wake-up.
type moment struct {
	due chan struct{} // closed when the wait ends
	// done and ok are the waiters' results, as sleepUntilOr's; set before
	// due is closed.
	done, ok bool
}

// waitCrowded is waitAlone for a shot that shares its moment with many
// others: one keeper goroutine waits for the moment for all of them. The
// first shot to wait starts it, on its own ctx and wake, which stand for
// everyone's: a waiting shot's ctx ends only with the sniper's, and wake
// is the same for all until the offset changes, which moves the moment.
func (s *Sniper) waitCrowded(ctx context.Context, target time.Time, wake <-chan struct{}) (done, ok bool) {
	if !target.After(s.clk.Now()) {
		return true, ctx.Err() == nil
	}
	k := target.UnixNano()
	s.moments.mu.Lock()
	mo := s.moments.at[k]
	if mo == nil {
		if s.moments.at == nil {
			s.moments.at = map[int64]*moment{}
		}
		mo = &moment{due: make(chan struct{})}
		s.moments.at[k] = mo
		s.goBackground(ctx, func(ctx context.Context) {
			mo.done, mo.ok = s.waitAlone(ctx, target, wake)
			s.moments.mu.Lock()
			delete(s.moments.at, k)
			s.moments.mu.Unlock()
			close(mo.due)
		})
	}
	s.moments.mu.Unlock()
	<-mo.due
	return mo.done, mo.ok
}
