// Package chaoscheck checks the invariants of the randomized fault tests
// (sniper's TestChaos in process, e2e's TestChaosProcesses with real
// binaries) against the marketplace's ground truth, so that both hold the
// service to the same rules. Each test gathers a Snipe per snipe from its
// own sources and hands the list to Check.
package chaoscheck

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// Snipe is what a chaos test knows of one snipe once the run is over.
type Snipe struct {
	// Who is the account's name, Item the item's number, Group the Bid
	// Group's name ("" outside groups).
	Who, Item, Group string
	// Due is the moment the shot should arrive at the marketplace.
	Due time.Time
	// Bids are the arrival times of our bids at the marketplace, in its
	// order; the first one is the shot whose timing is checked.
	Bids []time.Time
	// MarketWon: the marketplace says we won; StoredWon: the stored outcome
	// is Won.
	MarketWon, StoredWon bool
	// Settled: the stored outcome is final. The tests gather a minute after
	// the snipe's end.
	Settled bool
	// Describe, when not empty, is added to every message about the snipe:
	// what the store and the marketplace said, in the test's own terms.
	Describe string
}

// Params are a run's faults and the on-time tolerance.
type Params struct {
	// Faults are the moments faults began and ended.
	Faults []time.Time
	// Quiet is how long after the last fault a shot must be on time.
	Quiet time.Duration
	// A shot is on time when it arrives at most Early before its moment and
	// at most Late after it.
	Early, Late time.Duration
}

// Stats sum up a run for the test's log line and its own sanity checks.
type Stats struct {
	// Sent counts the snipes with a bid of ours; Checked those of them held
	// to the on-time rule (outside groups, due in a quiet period).
	Sent, Checked int
	// OffTime counts the shots outside groups sent off time, however close
	// to a fault: fewer is better, none is not required.
	OffTime int
	// The lateness of the first bids, groups included.
	Min, P50, P99, Max time.Duration
}

// Check reports with t.Errorf every snipe that breaks an invariant:
//
//  1. at most one bid of ours per snipe;
//  2. a Bid Group wins at most one item;
//  3. the stored outcome is Won exactly when the marketplace says we won;
//  4. every snipe is settled;
//  5. a snipe outside groups due more than p.Quiet after the last fault
//     is sent on time (a group's shot may rightly wait for a sibling's
//     result).
func Check(t testing.TB, p Params, snipes []Snipe) Stats {
	t.Helper()
	var st Stats
	var lateness []time.Duration
	wins := map[string]int{}
	for _, s := range snipes {
		name := fmt.Sprintf("%s's snipe on %s", s.Who, s.Item)
		if s.Describe != "" {
			name += " (" + s.Describe + ")"
		}
		if len(s.Bids) > 1 {
			t.Errorf("1. %s: %d bids of ours, want at most 1", name, len(s.Bids))
		}
		if s.MarketWon && s.Group != "" {
			wins[s.Who+"/"+s.Group]++
		}
		if s.StoredWon != s.MarketWon {
			t.Errorf("3. %s: stored Won %v, marketplace winner is us %v", name, s.StoredWon, s.MarketWon)
		}
		if !s.Settled {
			t.Errorf("4. %s: not settled a minute after its end", name)
		}
		if len(s.Bids) == 0 {
			continue
		}
		st.Sent++
		late := s.Bids[0].Sub(s.Due)
		lateness = append(lateness, late)
		if s.Group != "" {
			continue
		}
		off := late < -p.Early || late > p.Late
		if off {
			st.OffTime++
		}
		if since := SinceLast(s.Due, p.Faults); since > p.Quiet {
			st.Checked++
			if off {
				t.Errorf("5. %s, due %s UTC, %v after the last fault: sent %v late, want within [%v, %v]",
					name, s.Due.UTC().Format("15:04:05.000"), since, late, -p.Early, p.Late)
			}
		}
	}
	for _, g := range slices.Sorted(maps.Keys(wins)) {
		if n := wins[g]; n > 1 {
			t.Errorf("2. group %s won %d items, want at most 1", g, n)
		}
	}
	slices.Sort(lateness)
	if n := len(lateness); n > 0 {
		pct := func(f float64) time.Duration { return lateness[int(f*float64(n-1))] }
		st.Min, st.P50, st.P99, st.Max = pct(0), pct(.5), pct(.99), pct(1)
	}
	return st
}

// SinceLast is how long after the latest fault moment at or before t it
// is; the largest Duration when no fault came before t.
func SinceLast(t time.Time, faults []time.Time) time.Duration {
	d := time.Duration(1<<63 - 1)
	for _, f := range faults {
		if !f.After(t) {
			d = min(d, t.Sub(f))
		}
	}
	return d
}
