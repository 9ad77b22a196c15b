package clock

import (
	"runtime"
	"testing"
	"time"
)

// TestSleepPrecisely: on Linux it returns at t or after, never before,
// including for moments already past; elsewhere it declines at once.
func TestSleepPrecisely(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   time.Duration
	}{
		{"past", -time.Second},
		{"now", 0},
		{"200µs", 200 * time.Microsecond},
		{"window", PreciseWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := time.Now().Add(tc.in)
			ok := SleepPrecisely(at)
			if want := runtime.GOOS == "linux"; ok != want {
				t.Fatalf("SleepPrecisely() = %v, want %v on %s", ok, want, runtime.GOOS)
			}
			if ok && time.Now().Before(at) {
				t.Errorf("returned %v before its moment", time.Until(at))
			}
		})
	}
}

// TestSleepPreciselyBounded: with maxPrecise goroutines already asleep in
// it, SleepPrecisely declines instead of taking another thread.
func TestSleepPreciselyBounded(t *testing.T) {
	precise.Add(maxPrecise)
	defer precise.Add(-maxPrecise)
	if SleepPrecisely(time.Now().Add(time.Hour)) {
		t.Fatal("SleepPrecisely() = true beyond maxPrecise sleepers, want false")
	}
	if got := precise.Load(); got != maxPrecise {
		t.Errorf("sleepers after declining = %d, want %d", got, maxPrecise)
	}
}
