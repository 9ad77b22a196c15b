package clock

import (
	"context"
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
