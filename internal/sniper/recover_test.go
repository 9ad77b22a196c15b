package sniper

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// TestRecovery starts the sniper on a store left behind by a crash 60 s
// earlier and checks that nothing is sent twice and nothing is forgotten.
func TestRecovery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		firing := func(sn store.Snipe) { b.mark(sn.ID, store.StateScheduled, store.StateFiring, outcome.Pending) }
		item := func(endsIn time.Duration) int64 {
			return b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: endsIn})
		}
		// Due 13 s before the restart: missed.
		noMissed := item(50 * time.Second)
		missed := b.add(noMissed, 500, 3, snipeOpts{})
		// Sent just before the crash: found at the marketplace, not resent.
		noSent := item(2 * time.Minute)
		sent := b.add(noSent, 500, 3, snipeOpts{})
		firing(sent)
		if err := b.mk.Rival("alice", noSent, 500); err != nil {
			t.Fatal(err)
		}
		// Marked firing but never sent, moment still ahead: fires on time.
		noUnsent := item(3 * time.Minute)
		unsent := b.add(noUnsent, 500, 3, snipeOpts{})
		firing(unsent)
		// Marked firing, never sent, moment passed but 2 s left: fires now.
		noLate := item(62 * time.Second)
		late := b.add(noLate, 500, 5, snipeOpts{})
		firing(late)
		// Marked firing, never sent, auction over: missed.
		noGone := item(50 * time.Second)
		gone := b.add(noGone, 500, 3, snipeOpts{})
		firing(gone)

		time.Sleep(time.Minute) // the service is down
		restart := time.Now()
		b.start()
		time.Sleep(4 * time.Minute)

		tests := []struct {
			name   string
			sn     store.Snipe
			want   outcome.Code
			bids   int
			sentAt time.Time
		}{
			{"missed while down", missed, outcome.Missed, 0, time.Time{}},
			{"sent before crash", sent, outcome.Won, 1, time.Time{}},
			{"firing, not sent, on time", unsent, outcome.Won, 1, unsent.FireAt},
			{"firing, not sent, late", late, outcome.Won, 1, restart},
			{"firing, not sent, ended", gone, outcome.Missed, 0, time.Time{}},
		}
		for _, tt := range tests {
			got := b.get(tt.sn.ID)
			if got.State != store.StateSettled || got.Outcome != tt.want {
				t.Errorf("%s: snipe = %s/%s, want settled/%s", tt.name, got.State, codeName(got.Outcome), codeName(tt.want))
			}
			bids := b.ours(tt.sn.ItemNo)
			if len(bids) != tt.bids {
				t.Errorf("%s: alice's bids = %d, want %d", tt.name, len(bids), tt.bids)
			}
			if !tt.sentAt.IsZero() && len(bids) == 1 && !bids[0].Time.Equal(tt.sentAt) {
				t.Errorf("%s: sent at %v, want %v", tt.name, bids[0].Time, tt.sentAt)
			}
		}
	})
}

// TestDisabledAcrossRestart: a snipe disabled while sniped was down (so no
// Changed reached the running sniper) is still settled as disabled within
// a minute of its item's end.
func TestDisabledAcrossRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{disabled: true})
		b.restart() // a fresh process: the Changed above is lost
		b.start()
		sleepTill(sn.Item.End.Add(time.Minute))
		if got := b.get(sn.ID); got.State != store.StateSettled || got.Outcome != outcome.Disabled {
			t.Errorf("snipe = %s/%s a minute after the end, want settled/disabled", got.State, codeName(got.Outcome))
		}
	})
}
