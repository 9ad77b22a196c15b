package ebay

import (
	"context"
	"net/http"
	"time"
)

// Clock checks. eBay retired its official-time call; its clock is UTC and
// NTP-synced, so the adapter trusts the host clock and checks it against the
// whole-second Date header of every answer. An answer stamped D was made at
// some instant in [D, D+1s) eBay time, between the local send and receive
// times, so the offset (eBay minus local) lies in (D−recv, D+1s−send).
// Intersecting those intervals narrows it to well under a second.
const (
	// skewWarn is the offset the adapter warns about.
	skewWarn = time.Second
	// skewWindow is how long samples are intersected before starting afresh
	// (so a stepped host clock is noticed).
	skewWindow = 10 * time.Minute
	// warnEvery spaces the clock warnings.
	warnEvery = 10 * time.Minute
)

// skewEstimate is the running intersection of offset intervals.
type skewEstimate struct {
	lo, hi   time.Duration
	since    time.Time // local time of the first sample of this window
	samples  int
	lastWarn time.Time
}

// observe records one answer's round trip and Date header.
func (a *Adapter) observe(sent, recv time.Time, date string, timing bool) {
	rtt := recv.Sub(sent)
	d, err := http.ParseTime(date)
	a.mu.Lock()
	defer a.mu.Unlock()
	if timing && rtt >= 0 {
		oneWay := rtt / 2
		if a.lead == 0 {
			a.lead = oneWay
		} else {
			a.lead += time.Duration(leadWeight * float64(oneWay-a.lead))
		}
	}
	if err != nil {
		return
	}
	lo, hi := d.Sub(recv), d.Add(time.Second).Sub(sent)
	s := &a.skew
	if s.samples == 0 || recv.Sub(s.since) > skewWindow || lo > s.hi || hi < s.lo {
		*s = skewEstimate{lo: lo, hi: hi, since: recv, samples: 1, lastWarn: s.lastWarn}
	} else {
		s.lo, s.hi = max(s.lo, lo), min(s.hi, hi)
		s.samples++
	}
	if (s.lo >= skewWarn || s.hi <= -skewWarn) && recv.Sub(s.lastWarn) >= warnEvery {
		s.lastWarn = recv
		a.log.Warn("this machine's clock differs from eBay's; sync it with NTP (snipes fire on this clock)",
			"ebay_minus_local_min", s.lo.Round(time.Millisecond), "ebay_minus_local_max", s.hi.Round(time.Millisecond))
	}
}

// ClockCheck returns the bounds found so far on eBay's clock minus the
// local one, from the Date headers of answers; ok is false before the first
// answer.
func (a *Adapter) ClockCheck() (lo, hi time.Duration, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.skew.lo, a.skew.hi, a.skew.samples > 0
}

// SendLead is the measured one-way time to eBay (half the smoothed round
// trip of short calls to the API host). A bid meant to arrive at T should
// leave at T − SendLead(). It is 0 until the first call.
func (a *Adapter) SendLead() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lead
}

// Now returns the host clock: eBay has no time call any more and its clock
// is UTC, so an NTP-synced host is the reference. Answers' Date headers
// check it (see ClockCheck); a difference of a second or more is logged.
func (a *Adapter) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return a.clk.Now(), nil
}
