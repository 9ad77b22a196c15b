package api_test

import (
	"testing"
	"time"
)

func TestRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{rateLimit: 1, rateBurst: 2})
	b.call("justTesting", "arg1", "a").wantOK(t)
	b.call("justTesting", "arg1", "a").wantOK(t)
	r := b.call("justTesting", "arg1", "a")
	r.wantError(t, 429, "rate_limited", "")
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	// Another account has its own bucket.
	b.callKey(b.otherKey, "justTesting", "arg1", "a").wantOK(t)
	// Tokens come back with time (fake clock: no sleeping).
	b.clock.Advance(time.Second)
	b.call("justTesting", "arg1", "a").wantOK(t)
}

func TestRateLimitFailedAuthPerAddress(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{rateLimit: 100, rateBurst: 100})
	for i := range 10 {
		if r := b.callKey("snp_wrong", "justTesting", "arg1", "a"); r.status != 401 {
			t.Fatalf("attempt %d = %d, want 401", i, r.status)
		}
	}
	r := b.callKey("snp_wrong", "justTesting", "arg1", "a")
	r.wantError(t, 429, "rate_limited", "")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	b.clock.Advance(2 * time.Second)
	b.call("justTesting", "arg1", "a").wantOK(t)
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 50 {
		b.call("justTesting", "arg1", "a").wantOK(t)
	}
}
