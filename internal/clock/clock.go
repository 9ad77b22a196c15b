// Package clock is sniped's one seam for time. Production code takes a
// Clock; tests pass a Fake, or run the Real clock inside a testing/synctest
// bubble where time is virtual.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	// Now returns the current local time.
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the subset of *time.Timer that sniped uses.
type Timer interface {
	// C is the channel the timer fires on.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether it was active.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Fake is a manually advanced clock for tests. Its zero value is not usable;
// call NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a Fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d and fires every timer that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	var due []*fakeTimer
	kept := f.timers[:0]
	for _, t := range f.timers {
		if !t.when.After(now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	f.timers = kept
	f.mu.Unlock()
	for _, t := range due {
		select {
		case t.c <- now:
		default:
		}
	}
}

// Set moves the fake time to t (forward only) and fires due timers.
func (f *Fake) Set(t time.Time) {
	if d := t.Sub(f.Now()); d > 0 {
		f.Advance(d)
	}
}

// NewTimer returns a timer driven by Advance.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

type fakeTimer struct {
	f    *Fake
	c    chan time.Time
	when time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.f.mu.Lock()
	t.when = t.f.now.Add(d)
	fire := d <= 0
	if !fire {
		t.f.timers = append(t.f.timers, t)
	}
	now := t.f.now
	t.f.mu.Unlock()
	if fire {
		select {
		case t.c <- now:
		default:
		}
	}
	return active
}

// FormatUTC renders t as the interface's date-time format, YYYY-MM-DD HH:MM:SS in UTC.
// It is t.UTC().Format(Layout) without parsing the layout each time (a
// getUserItems answer formats 60 times); years outside 0–9999, which
// Format writes otherwise, go through Format.
func FormatUTC(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(Layout)
	}
	hour, minute, sec := t.Clock()
	var b [len(Layout)]byte
	put := func(i, v, digits int) {
		for j := i + digits - 1; j >= i; j-- {
			b[j] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = ' '
	put(11, hour, 2)
	b[13] = ':'
	put(14, minute, 2)
	b[16] = ':'
	put(17, sec, 2)
	return string(b[:])
}

// Layout is the interface's date-time layout; times are always UTC.
const Layout = "2006-01-02 15:04:05"

// Repeat calls fn first after first, then after each duration fn returns,
// on clk's timers, until ctx ends. fn runs on the caller's goroutine.
func Repeat(ctx context.Context, clk Clock, first time.Duration, fn func() (next time.Duration)) {
	t := clk.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		t.Reset(fn())
	}
}
