package sniper

import (
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
)

// Shared backoff of retried lookups.
const (
	healthFirst = 250 * time.Millisecond
	healthMax   = 8 * time.Second
)

// health is the one backoff that every retried marketplace lookup
// (settlement, resolving a firing snipe) shares. While the marketplace
// fails, one probe per interval goes through and every other retry waits
// for the next interval; the interval doubles from healthFirst up to
// healthMax and the first success ends the outage for all. So an outage
// costs about one call per interval however many snipes wait, and the
// waiting ones are at most healthMax late once it ends. Shots never wait
// here: they have their own deadline.
type health struct {
	mu      sync.Mutex
	failing bool
	delay   time.Duration
	next    time.Time // local clock: when the next probe may go
}

// admit reports whether a retry may call the marketplace now; if not, it
// returns when to ask again.
func (h *health) admit(now time.Time) (bool, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return true, time.Time{}
	}
	if !now.Before(h.next) {
		// This caller is the probe; the others wait a full interval.
		h.next = now.Add(h.delay)
		return true, time.Time{}
	}
	return false, h.next
}

// report records the result of an admitted lookup.
func (h *health) report(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil || !market.Transient(err) {
		h.failing, h.delay = false, 0
		return
	}
	if h.failing {
		h.delay = min(2*h.delay, healthMax)
	} else {
		h.failing, h.delay = true, healthFirst
	}
	h.next = now.Add(h.delay)
}

// retryAt is when a lookup that just failed should be retried.
func (h *health) retryAt(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing && h.next.After(now) {
		return h.next
	}
	return now.Add(healthFirst)
}
