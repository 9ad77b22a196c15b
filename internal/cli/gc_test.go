package cli

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: serve raises GOGC to gcPercent unless the GOGC
// environment variable chose a value, which the runtime then applies.
func TestSetGCPercent(t *testing.T) {
	for _, tc := range []struct {
		env, want string
		wantGC    int // the percent in effect afterwards
	}{
		{env: "", want: "400", wantGC: gcPercent},
		{env: "150", want: "150", wantGC: 100}, // left to the runtime, which read it at start
	} {
		t.Run("GOGC="+tc.env, func(t *testing.T) {
			old := debug.SetGCPercent(100)
			t.Cleanup(func() { debug.SetGCPercent(old) })
			t.Setenv("GOGC", tc.env)
			if got := setGCPercent(); got != tc.want {
				t.Errorf("setGCPercent() = %q, want %q", got, tc.want)
			}
			if got := debug.SetGCPercent(100); got != tc.wantGC {
				t.Errorf("GC percent = %d, want %d", got, tc.wantGC)
			}
		})
	}
}
