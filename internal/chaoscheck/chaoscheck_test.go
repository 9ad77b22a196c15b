package chaoscheck

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what Check reports instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// TestCheck: each invariant can fail, and a clean run reports nothing.
func TestCheck(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) []time.Time { return []time.Time{t0.Add(d)} }
	// A settled snipe, lost and sent on time.
	ok := func(item string) Snipe {
		return Snipe{Who: "u1", Item: item, Due: t0, Bids: at(10 * time.Millisecond), Settled: true}
	}
	with := func(s Snipe, f func(*Snipe)) Snipe { f(&s); return s }
	quiet := Params{Faults: []time.Time{t0.Add(-time.Minute)}, Quiet: 15 * time.Second, Early: 0, Late: 50 * time.Millisecond}
	tests := []struct {
		name   string
		p      Params
		snipes []Snipe
		want   []string
	}{
		{"Clean", quiet, []Snipe{
			ok("1"),
			with(ok("2"), func(s *Snipe) { s.Group, s.MarketWon, s.StoredWon = "g", true, true }),
			with(ok("3"), func(s *Snipe) { s.Bids = nil }),
		}, nil},
		{"DoubleBid", quiet, []Snipe{with(ok("1"), func(s *Snipe) { s.Bids = append(at(0), t0.Add(time.Second)) })},
			[]string{"1. u1's snipe on 1: 2 bids of ours, want at most 1"}},
		{"GroupWinsTwice", quiet, []Snipe{
			with(ok("1"), func(s *Snipe) { s.Group, s.MarketWon, s.StoredWon = "g", true, true }),
			with(ok("2"), func(s *Snipe) { s.Group, s.MarketWon, s.StoredWon = "g", true, true }),
			with(ok("3"), func(s *Snipe) { s.Group, s.MarketWon, s.StoredWon = "h", true, true }),
		}, []string{"2. group u1/g won 2 items, want at most 1"}},
		{"StoredWonMarketNot", quiet, []Snipe{with(ok("1"), func(s *Snipe) { s.StoredWon, s.Describe = true, "stored Won" })},
			[]string{"3. u1's snipe on 1 (stored Won): stored Won true, marketplace winner is us false"}},
		{"Unsettled", quiet, []Snipe{with(ok("1"), func(s *Snipe) { s.Settled = false })},
			[]string{"4. u1's snipe on 1: not settled a minute after its end"}},
		{"LateAfterQuiet", quiet, []Snipe{
			with(ok("1"), func(s *Snipe) { s.Bids = at(51 * time.Millisecond) }),
			with(ok("2"), func(s *Snipe) { s.Bids = at(-time.Millisecond) }),
			with(ok("3"), func(s *Snipe) { s.Bids, s.Group = at(time.Second), "g" }), // groups may wait
		}, []string{
			"5. u1's snipe on 1, due 12:00:00.000 UTC, 1m0s after the last fault: sent 51ms late, want within [0s, 50ms]",
			"5. u1's snipe on 2, due 12:00:00.000 UTC, 1m0s after the last fault: sent -1ms late, want within [0s, 50ms]",
		}},
		{"EarlyWithinTolerance", Params{Faults: quiet.Faults, Quiet: 15 * time.Second, Early: 50 * time.Millisecond, Late: 500 * time.Millisecond},
			[]Snipe{with(ok("1"), func(s *Snipe) { s.Bids = at(-50 * time.Millisecond) }), with(ok("2"), func(s *Snipe) { s.Bids = at(500 * time.Millisecond) })}, nil},
		{"LateNearFault", Params{Faults: []time.Time{t0.Add(-15 * time.Second), t0.Add(time.Second)}, Quiet: 15 * time.Second, Late: 50 * time.Millisecond},
			[]Snipe{with(ok("1"), func(s *Snipe) { s.Bids = at(time.Second) })}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			Check(r, tt.p, tt.snipes)
			if !slices.Equal(r.errs, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", r.errs, tt.want)
			}
		})
	}
}

// TestCheckStats: the counts and lateness percentiles the tests log.
func TestCheckStats(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Params{Faults: []time.Time{t0.Add(-5 * time.Second)}, Quiet: 15 * time.Second, Late: 50 * time.Millisecond}
	var snipes []Snipe
	for i, late := range []time.Duration{30, 10, 100, 20} {
		due := t0.Add(time.Duration(i) * 20 * time.Second) // the first is due near the fault
		snipes = append(snipes, Snipe{Who: "u", Item: fmt.Sprint(i), Due: due, Bids: []time.Time{due.Add(late * time.Millisecond)}, Settled: true})
	}
	snipes = append(snipes, Snipe{Who: "u", Item: "unsent", Due: t0, Settled: true})
	r := &recorder{}
	got := Check(r, p, snipes)
	want := Stats{Sent: 4, Checked: 3, OffTime: 1, Min: 10 * time.Millisecond, P50: 20 * time.Millisecond, P99: 30 * time.Millisecond, Max: 100 * time.Millisecond}
	if got != want || len(r.errs) != 1 {
		t.Errorf("Check = %+v, %q, want %+v and the one late shot", got, r.errs, want)
	}
}
