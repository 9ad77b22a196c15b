package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogFloodBounded: an unauthenticated client sending many large refused
// requests gets a handful of truncated log lines a second, and the count of
// the lines dropped is logged afterwards.
func TestLogFloodBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	big := strings.Repeat("a", 20_000)
	const sent = 100
	for range sent {
		if r := b.raw(http.MethodGet, "/justTesting?key=snp_wrong&arg1="+big); r.status != http.StatusUnauthorized {
			t.Fatalf("status = %d, want 401", r.status)
		}
	}
	logs := infoLines(b.logs.String())
	lines := strings.Count(logs, "msg=request ")
	if lines == 0 || lines > 10 {
		t.Errorf("%d request lines logged for %d refused requests in one second, want 1 to 10", lines, sent)
	}
	if len(logs) > 20*1024 {
		t.Errorf("log grew by %d bytes for %d refused requests, want at most 20 KiB", len(logs), sent)
	}
	for _, l := range strings.Split(logs, "\n") {
		if len(l) > 2048 {
			t.Errorf("log line of %d bytes, want at most 2048: %.200s…", len(l), l)
		}
	}

	// A second later the dropped lines are counted.
	b.clock.Advance(1100 * time.Millisecond)
	b.raw(http.MethodGet, "/justTesting?key=snp_wrong&arg1=x")
	logs = b.logs.String()
	m := regexp.MustCompile(`suppressed=(\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no count of suppressed lines logged:\n%.2000s", logs)
	}
	if want := sent - lines; m[1] != itoa(int64(want)) {
		t.Errorf("suppressed = %s, want %d", m[1], want)
	}
}

// TestLogAuthenticatedSuccessNotSampled: successful authenticated requests
// are all logged (they are bounded by the per-account rate limit), with the
// URL truncated.
func TestLogAuthenticatedSuccessNotSampled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 30 {
		b.call("justTesting", "arg1", "a", "arg2", strings.Repeat("b", 900)).wantOK(t)
	}
	logs := b.logs.String()
	if got := strings.Count(logs, "msg=request "); got != 30 {
		t.Errorf("%d request lines for 30 successful requests, want 30", got)
	}
	if !strings.Contains(logs, "bytes)") {
		t.Errorf("long query not truncated in the log:\n%.1000s", logs)
	}
}

// infoLines drops the debug lines (httperr's per-refusal lines, off at the
// default level).
func infoLines(logs string) string {
	var keep []string
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, "level=DEBUG") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
