package api

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sniped/sniped/internal/httperr"
)

// Rate limit defaults: serve's --rate-limit and --rate-burst start here.
const (
	// DefaultRateLimit is requests per second per account.
	DefaultRateLimit = 10
	// DefaultRateBurst is the token bucket size per account.
	DefaultRateBurst = 20
	// failedAuthPerSecond and failedAuthBurst bound key guessing per client
	// address; they apply whenever rate limiting is on.
	failedAuthPerSecond = 1
	failedAuthBurst     = 10
	// idleEviction: a bucket untouched this long is full again, so dropping
	// it changes nothing; sweeps run at most every sweepEvery.
	idleEviction = 10 * time.Minute
	sweepEvery   = time.Minute
	// maxAddrBuckets caps failed-auth buckets. Idle ones are swept; while
	// the table is full, every address not in it shares one bucket.
	maxAddrBuckets = 100_000
)

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// limiter holds token buckets per account and per client address.
type limiter struct {
	perSec float64
	burst  int

	mu        sync.Mutex
	accounts  map[int64]*bucket
	addrs     map[string]*bucket
	lastSweep time.Time
}

func newLimiter(perSec float64, burst int) *limiter {
	return &limiter{perSec: perSec, burst: burst, accounts: map[int64]*bucket{}, addrs: map[string]*bucket{}}
}

func (l *limiter) on() bool { return l.perSec > 0 }

// allow takes one token from the account's bucket.
func (l *limiter) allow(acct int64, now time.Time) error {
	if !l.on() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.accounts[acct]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.perSec), l.burst)}
		l.accounts[acct] = b
	}
	b.seen = now
	return take(b.lim, now, fmt.Sprintf("too many requests: the limit is %g per second (burst %d) per account", l.perSec, l.burst))
}

// blocked reports a 429 when addr has used up its failed-auth budget,
// without taking a token.
func (l *limiter) blocked(addr string, now time.Time) error {
	if !l.on() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.addrBucket(addr, false)
	if b == nil || b.lim.TokensAt(now) >= 1 {
		return nil
	}
	return tooMany(b.lim, now, "too many requests with a missing or wrong key from your address; wait before retrying")
}

// failed takes a token from addr's failed-auth bucket.
func (l *limiter) failed(addr string, now time.Time) {
	if !l.on() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.addrBucket(addr, true)
	b.seen = now
	b.lim.AllowN(now, 1)
}

// addrBucket returns addr's failed-auth bucket. An address not yet tracked
// while the table is full shares one overflow bucket, for blocking as for
// charging, so many addresses cannot escape the limit. create makes a
// missing bucket. l.mu must be held.
func (l *limiter) addrBucket(addr string, create bool) *bucket {
	b := l.addrs[addr]
	if b == nil && len(l.addrs) >= maxAddrBuckets {
		addr = ""
		b = l.addrs[addr]
	}
	if b == nil && create {
		b = &bucket{lim: rate.NewLimiter(failedAuthPerSecond, failedAuthBurst)}
		l.addrs[addr] = b
	}
	return b
}

// sweep drops idle buckets. l.mu must be held.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < sweepEvery {
		return
	}
	l.lastSweep = now
	for k, b := range l.accounts {
		if now.Sub(b.seen) > idleEviction {
			delete(l.accounts, k)
		}
	}
	for k, b := range l.addrs {
		if now.Sub(b.seen) > idleEviction {
			delete(l.addrs, k)
		}
	}
}

func take(lim *rate.Limiter, now time.Time, msg string) error {
	if lim.AllowN(now, 1) {
		return nil
	}
	return tooMany(lim, now, msg)
}

// tooMany is a 429 whose Retry-After is when the next token arrives.
func tooMany(lim *rate.Limiter, now time.Time, msg string) error {
	r := lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	if wait < time.Second {
		wait = time.Second
	}
	return &httperr.Error{Status: http.StatusTooManyRequests, Code: httperr.CodeRateLimited, Message: msg, RetryAfter: wait}
}
