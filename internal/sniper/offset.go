package sniper

import (
	"context"
	"fmt"
	"time"
)

// offsetSamples is how many Market.Now round trips one measurement takes;
// the one with the shortest round trip is the most precise.
const offsetSamples = 5

// ClockOffset is the measured marketplace clock minus the local clock: a
// marketplace time m happens locally at m − ClockOffset().
func (s *Sniper) ClockOffset() time.Duration { return time.Duration(s.offset.Load()) }

// marketNow is the current time on the marketplace's clock.
func (s *Sniper) marketNow() time.Time { return s.clk.Now().Add(s.ClockOffset()) }

// toLocal converts a marketplace time to the local clock.
func (s *Sniper) toLocal(m time.Time) time.Time { return m.Add(-s.ClockOffset()) }

// measureOffset samples the marketplace clock and keeps the sample with the
// smallest round trip, assuming the answer was stamped halfway through it
// (the NTP estimate).
func (s *Sniper) measureOffset(ctx context.Context) error {
	best := time.Duration(-1)
	var off time.Duration
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
			off = m.Sub(t0.Add(rtt / 2))
		}
	}
	if best < 0 {
		return fmt.Errorf("marketplace clock: %w", lastErr)
	}
	// Sub-millisecond noise is not worth moving timers for.
	off = off.Round(time.Millisecond)
	if old := s.ClockOffset(); old != off {
		s.log.Info("clock offset", "offset", off, "rtt", best)
	}
	s.offset.Store(int64(off))
	s.met.offset.Set(off.Seconds())
	return nil
}

// offsetLoop keeps the offset fresh.
func (s *Sniper) offsetLoop(ctx context.Context) {
	s.repeat(ctx, s.cfg.OffsetEvery, func() time.Duration {
		if err := s.measureOffset(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("clock offset: measurement failed; keeping the last one", "err", err)
		}
		return s.cfg.OffsetEvery
	})
}

// repeat calls fn after first and then again after each wait fn returns,
// until ctx ends. Waits use the Clock seam, so tests control them.
func (s *Sniper) repeat(ctx context.Context, first time.Duration, fn func() (next time.Duration)) {
	t := s.clk.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		t.Reset(fn())
	}
}
