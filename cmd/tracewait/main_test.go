package main

import (
	"bytes"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
)

// napUntil is the test's stand-in for the sniper's wait for the moment.
//
//go:noinline
func napUntil(t time.Time) { <-time.After(time.Until(t)) }

func TestAnalyzeFindsWakeUps(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracing: %v", err)
	}
	at := time.Now().Add(20 * time.Millisecond)
	var wg sync.WaitGroup
	const shots = 20
	for range shots {
		wg.Go(func() { napUntil(at) })
	}
	wg.Wait()
	trace.Stop()

	r, err := analyze(&buf, "tracewait.napUntil")
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if len(r.waits) < shots || len(r.woken) != len(r.waits) {
		t.Fatalf("found %d wake-ups and %d wake-up times, want at least %d of each", len(r.waits), len(r.woken), shots)
	}
	// The naps end together: their wake-ups cannot be farther apart than
	// the test took.
	if last := r.woken[len(r.woken)-1]; r.woken[0] != 0 || last < 0 || last > 1000 {
		t.Errorf("wake-ups after the first: first %.3f ms, last %.3f ms, want 0 and within the test", r.woken[0], last)
	}
	var out strings.Builder
	r.print(&out, 3)
	for _, line := range []string{"shots woken:", "woken after the first:"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("report = %q, want a line %q", out.String(), line)
		}
	}
}
