package clock

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSleepPreciselyRestoresSlice: the thread gets its own time slice back,
// so the short one never outlives the sleep (other goroutines run on the
// thread afterwards).
func TestSleepPreciselyRestoresSlice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Skipf("sched_getattr: %v", err)
	}
	if !SleepPrecisely(time.Now().Add(100 * time.Microsecond)) {
		t.Fatal("SleepPrecisely() = false, want true")
	}
	after, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.Runtime != before.Runtime || after.Nice != before.Nice || after.Policy != before.Policy {
		t.Errorf("thread's scheduling after = %+v, want %+v", *after, *before)
	}
}
