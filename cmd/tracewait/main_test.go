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
	if len(r.waits) < shots {
		t.Errorf("found %d wake-ups, want at least %d", len(r.waits), shots)
	}
	var out strings.Builder
	r.print(&out, 3)
	if !strings.Contains(out.String(), "shots woken:") {
		t.Errorf("report = %q, want the wake-ups' line", out.String())
	}
}
