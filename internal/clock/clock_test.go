package clock

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

var start = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func fired(t Timer) bool {
	select {
	case <-t.C():
		return true
	default:
		return false
	}
}

func TestFakeTimerFiresOnlyWhenDue(t *testing.T) {
	t.Parallel()
	f := NewFake(start)
	tm := f.NewTimer(10 * time.Second)
	f.Advance(9 * time.Second)
	if fired(tm) {
		t.Fatalf("timer fired at +9s, want +10s")
	}
	f.Advance(time.Second)
	if !fired(tm) {
		t.Fatalf("timer did not fire at +10s")
	}
	if got, want := f.Now(), start.Add(10*time.Second); !got.Equal(want) {
		t.Errorf("Now() = %v, want %v", got, want)
	}
}

func TestFakeTimerStopAndReset(t *testing.T) {
	t.Parallel()
	f := NewFake(start)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Errorf("Stop() of an active timer = false, want true")
	}
	f.Advance(2 * time.Second)
	if fired(tm) {
		t.Errorf("stopped timer fired")
	}
	if tm.Reset(time.Second) {
		t.Errorf("Reset() of a stopped timer = true, want false")
	}
	f.Set(start.Add(time.Hour))
	if !fired(tm) {
		t.Errorf("reset timer did not fire")
	}
	if tm.Reset(0); !fired(tm) {
		t.Errorf("Reset(0) did not fire at once")
	}
	f.Set(start) // backwards: ignored
	if got := f.Now(); !got.Equal(start.Add(time.Hour)) {
		t.Errorf("Set to the past moved the clock to %v", got)
	}
}

func TestFormatUTC(t *testing.T) {
	t.Parallel()
	in := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 2*3600))
	if got, want := FormatUTC(in), "2026-01-02 01:04:05"; got != want {
		t.Errorf("FormatUTC(%v) = %q, want %q", in, got, want)
	}
}

// TestFormatUTCIsFormat: FormatUTC is t.UTC().Format(Layout) for edge
// and random times, in any zone.
func TestFormatUTCIsFormat(t *testing.T) {
	t.Parallel()
	zones := []*time.Location{time.UTC, time.FixedZone("E", 14*3600), time.FixedZone("W", -12*3600-1800)}
	times := []time.Time{{}, time.Unix(0, 0), time.UnixMilli(-1), time.Unix(253402300799, 999999999),
		time.Unix(253402300800, 0), time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 9, 8, 7, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.UnixMilli(math.MaxInt64),
		time.UnixMilli(math.MinInt64)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.UnixMilli(r.Int64N(400_000_000_000_000)-200_000_000_000_000))
	}
	for _, in := range times {
		for _, z := range zones {
			in := in.In(z)
			if got, want := FormatUTC(in), in.UTC().Format(Layout); got != want {
				t.Fatalf("FormatUTC(%v) = %q, want %q", in, got, want)
			}
		}
	}
}

// TestRepeat: fn runs after first, then after each wait it returns, and
// Repeat returns when ctx ends.
func TestRepeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		var got []time.Duration
		waits := []time.Duration{time.Second, 3 * time.Second, time.Minute}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Repeat(ctx, Real{}, 2*time.Second, func() time.Duration {
				got = append(got, time.Since(t0))
				return waits[min(len(got)-1, len(waits)-1)]
			})
		}()
		time.Sleep(10 * time.Second)
		cancel()
		<-done
		want := []time.Duration{2 * time.Second, 3 * time.Second, 6 * time.Second}
		if !slices.Equal(got, want) {
			t.Errorf("fn ran at %v, want %v", got, want)
		}
	})
}
