package api

import (
	"strconv"
	"testing"
	"time"
)

// TestFailedAuthOverflowStillBlocks: once the address table is full, new
// addresses share one bucket, and that bucket blocks them as it charges them.
func TestFailedAuthOverflowStillBlocks(t *testing.T) {
	t.Parallel()
	l := newLimiter(DefaultRateLimit, DefaultRateBurst)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l.lastSweep = now // no sweep during the test
	for i := range maxAddrBuckets {
		l.addrBucket("10.0."+strconv.Itoa(i), true).seen = now
	}
	for i := range failedAuthBurst + 1 {
		l.failed("2001:db8::"+strconv.Itoa(i), now)
	}
	if err := l.blocked("2001:db8::ffff", now); err == nil {
		t.Errorf("blocked(new address) with the shared overflow bucket empty = nil, want 429")
	}
	if err := l.blocked("10.0.1", now); err != nil {
		t.Errorf("blocked(tracked address with tokens) = %v, want nil", err)
	}
}
