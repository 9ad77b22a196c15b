package sniper

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/chaoscheck"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// TestChaos is the randomized fault test of several instances on one
// database: three instances share the work while, at random, one is
// killed (no hand-over) and restarted, one is restarted gracefully, one is
// cut off from the database past its lease and reconnected, and the
// database goes away for all of them for a few seconds. Then, against the
// marketplace's ground truth (chaoscheck.Check):
//
//  1. at most one bid of ours per snipe;
//  2. no group wins more than one item;
//  3. every stored Won is the marketplace's winner, and vice versa;
//  4. nothing is left unsettled 60 s after its end;
//  5. snipes due more than 15 s after any fault fire on time (outside
//     groups, whose rule may hold a shot for a sibling's result).
//
// It runs in a testing/synctest bubble (virtual time, the real SQLite
// store, whose lease clock is the process's). SNIPED_CHAOS_SEED picks the
// seed (printed), SNIPED_CHAOS_MINUTES the length of the run (default 3).
func TestChaos(t *testing.T) {
	t.Parallel()
	seed := uint64(20261123)
	if v := os.Getenv("SNIPED_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SNIPED_CHAOS_SEED=%q: %v", v, err)
		}
		seed = n
	}
	minutes := 3
	if v := os.Getenv("SNIPED_CHAOS_MINUTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SNIPED_CHAOS_MINUTES=%q: want a whole number of minutes ≥ 1", v)
		}
		minutes = n
	}
	t.Logf("chaos seed %d over %d minutes (SNIPED_CHAOS_SEED=%d to repeat)", seed, minutes, seed)
	synctest.Test(t, func(t *testing.T) { chaos(t, seed, time.Duration(minutes)*time.Minute) })
}

type chaosSnipe struct {
	sn    store.Snipe
	user  string
	group string
}

func chaos(t *testing.T, seed uint64, span time.Duration) {
	r := rand.New(rand.NewPCG(seed, 7))
	b := setup(t)
	accts := []store.Account{b.acct}
	for i := range 11 {
		name := fmt.Sprintf("user%02d", i)
		a, err := b.st.CreateAccount(b.ctx, name, store.TierPaid, key.Hash(name), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, a)
	}
	// Snipes: about 100 a minute, due from 40 s on, a quarter in groups,
	// some with rivals.
	start := time.Now()
	var snipes []chaosSnipe
	for range int(span.Minutes() * 100) {
		acct := accts[r.IntN(len(accts))]
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 40*time.Second + time.Duration(r.Int64N(int64(span)))})
		it, err := b.mk.Item(b.ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		bid, delay, group := money.Amount(300+r.IntN(700)), 1+r.IntN(15), ""
		if r.IntN(4) == 0 {
			group = fmt.Sprintf("g%d", r.IntN(3))
		}
		sn, _, err := b.st.UpsertSnipe(b.ctx, acct.ID, no, store.SnipeChange{Bid: &bid, Delay: &delay, GroupName: &group, Item: itemSnap(it)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		snipes = append(snipes, chaosSnipe{sn, acct.Name, group})
		if r.IntN(3) == 0 {
			rival, max, before := fmt.Sprintf("rival%d", r.IntN(3)), money.Amount(100+r.IntN(1200)), time.Duration(r.IntN(30_000))*time.Millisecond
			go func() {
				sleepTill(sn.Item.End.Add(-before))
				_ = b.mk.Rival(rival, no, max)
			}()
		}
	}

	// Three instances, and faults every 10–30 s until the last snipe is due.
	live := map[string]*instance{}
	n := 0
	spawn := func() {
		n++
		id := fmt.Sprintf("i%d", n)
		live[id] = b.instance(id)
	}
	for range 3 {
		spawn()
	}
	var faults []time.Time
	end := start.Add(40*time.Second + span)
	dbDown := false
	for time.Now().Before(end) {
		time.Sleep(10*time.Second + time.Duration(r.IntN(20_000))*time.Millisecond)
		ids := make([]string, 0, len(live))
		for id := range live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		id := ids[r.IntN(len(ids))]
		victim := live[id]
		faults = append(faults, time.Now())
		switch k := r.IntN(4); {
		case k == 0: // kill -9, restart a few seconds later
			victim.stop(false)
			delete(live, id)
			time.Sleep(time.Duration(3+r.IntN(8)) * time.Second)
			spawn()
		case k == 1: // SIGTERM, restart
			victim.stop(true)
			delete(live, id)
			spawn()
		case k == 2: // cut off (paused) past its lease, then back
			victim.db.cut.Store(true)
			time.Sleep(time.Duration(8+r.IntN(8)) * time.Second)
			victim.db.cut.Store(false)
		case !dbDown: // the database goes away for everyone, once
			dbDown = true
			for _, in := range live {
				in.db.cut.Store(true)
			}
			time.Sleep(time.Duration(2+r.IntN(4)) * time.Second)
			for _, in := range live {
				in.db.cut.Store(false)
			}
		}
		faults = append(faults, time.Now()) // the fault's end counts too
	}
	last := start
	for _, s := range snipes {
		last = maxTime(last, s.sn.Item.End)
	}
	sleepTill(last.Add(time.Minute))

	// Each snipe's record, for the checks against the marketplace's truth.
	var recs []chaoscheck.Snipe
	seen := map[string]int{}
	for _, s := range snipes {
		got := b.get(s.sn.ID)
		seen[codeName(got.Outcome)]++
		rec := chaoscheck.Snipe{
			Who: s.user, Item: strconv.FormatInt(s.sn.ItemNo, 10), Group: s.group, Due: s.sn.FireAt,
			MarketWon: b.mk.Winner(s.sn.ItemNo) == s.user,
			StoredWon: got.Outcome == outcome.Won,
			Settled:   got.State == store.StateSettled && got.Outcome != outcome.Pending,
			Describe:  fmt.Sprintf("account %d, stored %s/%s %q", s.sn.AccountID, got.State, codeName(got.Outcome), got.OutcomeDetail),
		}
		for _, bid := range b.bidsBy(s.user, s.sn.ItemNo) {
			rec.Bids = append(rec.Bids, bid.Time)
		}
		recs = append(recs, rec)
	}
	st := chaoscheck.Check(t, chaoscheck.Params{Faults: faults, Quiet: 15 * time.Second, Late: 50 * time.Millisecond}, recs)
	t.Logf("%d snipes, %d faults, %d instances started; %d bids sent, lateness p50 %v p99 %v max %v; %d checked on time; %d outside groups sent off time; outcomes %v",
		len(snipes), len(faults)/2, n, st.Sent, st.P50, st.P99, st.Max, st.Checked, st.OffTime, seen)
	if st.Checked == 0 || seen[codeName(outcome.Won)] == 0 {
		t.Errorf("the run checked nothing on time or won nothing: the generator is broken")
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
