package sniper

import (
	"context"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/clock"
)

// offsetSamples is how many Market.Now round trips one measurement takes;
// the one with the shortest round trip is the most precise.
const offsetSamples = 5

// Offset measurement cadence.
const (
	// retimeThreshold: an offset change larger than this re-times every
	// armed snipe; smaller ones are absorbed at the shot itself.
	retimeThreshold = 50 * time.Millisecond
	// offsetRetry is how soon a failed measurement is tried again.
	offsetRetry = time.Second
	// offsetNear is how often the offset is measured while a shot is due
	// within offsetNearWindow.
	offsetNear       = 10 * time.Second
	offsetNearWindow = 2 * time.Minute
	// firstOffsetWait bounds how long Run waits for the first measurement
	// before arming anything on an offset of 0 (measuring goes on every
	// offsetRetry until one succeeds).
	firstOffsetWait = 5 * time.Second
)

// anchor ties the marketplace clock to a local clock reading. local comes
// from Clock.Now and carries Go's monotonic reading (with the real clock),
// so marketplace times converted through it are monotonic deadlines: an
// NTP step or a VM resume does not move a shot.
type anchor struct {
	local  time.Time
	market time.Time
}

// ClockOffset is the marketplace clock minus the local wall clock now: a
// marketplace time m happens locally at m − ClockOffset(). The API uses it
// to compare marketplace times (item ends) with its own clock.
func (s *Sniper) ClockOffset() time.Duration {
	now := s.clk.Now()
	return s.marketAt(now).Sub(now.Round(0))
}

// marketNow is the current time on the marketplace's clock.
func (s *Sniper) marketNow() time.Time { return s.marketAt(s.clk.Now()) }

// marketAt converts a local clock reading to the marketplace clock, by the
// elapsed (monotonic) time since the anchor.
func (s *Sniper) marketAt(local time.Time) time.Time {
	a := s.anchor.Load()
	return a.market.Add(local.Sub(a.local))
}

// toLocal converts a marketplace time to a local deadline (monotonic when
// the clock provides it).
func (s *Sniper) toLocal(m time.Time) time.Time {
	a := s.anchor.Load()
	return a.local.Add(m.Sub(a.market))
}

// measureOffset samples the marketplace clock and keeps the sample with the
// smallest round trip, assuming the answer was stamped halfway through it
// (the NTP estimate). A change larger than retimeThreshold re-times every
// armed snipe.
func (s *Sniper) measureOffset(ctx context.Context) error {
	best := time.Duration(-1)
	var at anchor
	var lastErr error
	for range offsetSamples {
		t0 := s.clk.Now()
		m, err := s.mk.Now(ctx)
		t1 := s.clk.Now()
		if err != nil {
			lastErr = err
			continue
		}
		rtt := t1.Sub(t0)
		if best < 0 || rtt < best {
			best = rtt
			at = anchor{local: t0.Add(rtt / 2), market: m}
		}
	}
	if best < 0 {
		return fmt.Errorf("marketplace clock: %w", lastErr)
	}
	// Sub-millisecond noise is not worth moving timers for.
	at.market = at.local.Round(0).Add(at.market.Sub(at.local.Round(0)).Round(time.Millisecond))
	old := s.marketAt(at.local)
	s.anchor.Store(&at)
	s.measured.Store(true)
	change := at.market.Sub(old)
	off := at.market.Sub(at.local.Round(0))
	s.met.offset.Set(off.Seconds())
	if change > retimeThreshold || change < -retimeThreshold {
		s.log.Info("clock offset changed; re-timing armed snipes", "offset", off, "change", change, "rtt", best)
		s.sched.retime()
		s.retimeMu.Lock()
		close(s.retimeCh) // wakes the shots waiting for their moment
		s.retimeCh = make(chan struct{})
		s.retimeMu.Unlock()
	}
	return nil
}

// retimed returns a channel closed at the next offset change larger than
// retimeThreshold.
func (s *Sniper) retimed() <-chan struct{} {
	s.retimeMu.Lock()
	defer s.retimeMu.Unlock()
	return s.retimeCh
}

// firstOffset measures the offset before anything is armed, retrying
// quickly; after firstOffsetWait it gives up waiting (offsetLoop keeps
// trying every offsetRetry).
func (s *Sniper) firstOffset(ctx context.Context) {
	deadline := s.clk.Now().Add(firstOffsetWait)
	for {
		err := s.measureOffset(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if !s.clk.Now().Add(offsetRetry).Before(deadline) {
			s.log.Warn("clock offset: first measurements failed; assuming 0 until one succeeds", "err", err)
			return
		}
		if !sleepUntil(ctx, s.clk, s.clk.Now().Add(offsetRetry)) {
			return
		}
	}
}

// offsetLoop keeps the offset fresh: every OffsetEvery, every offsetNear
// while a shot is due within two minutes, and every offsetRetry after a
// failure (or until the first success).
func (s *Sniper) offsetLoop(ctx context.Context) {
	last := s.clk.Now()
	clock.Repeat(ctx, s.clk, min(s.cfg.OffsetEvery, offsetNear), func() time.Duration {
		// Whether a shot is near is decided now, not when the last
		// measurement ended: snipes armed since then count.
		if s.measured.Load() && s.clk.Now().Sub(last) < s.cfg.OffsetEvery && !s.sched.dueWithin(s.marketNow().Add(offsetNearWindow)) {
			return min(s.cfg.OffsetEvery, offsetNear)
		}
		if err := s.measureOffset(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("clock offset: measurement failed; keeping the last one", "err", err)
			}
			return offsetRetry
		}
		last = s.clk.Now()
		return min(s.cfg.OffsetEvery, offsetNear)
	})
}
