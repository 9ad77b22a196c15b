package sniper

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

// waitResult is what one waitCrowded call returned, and when.
type waitResult struct {
	done, ok bool
	at       time.Time
}

// waitAll starts n waitCrowded calls for target and returns their results'
// channel.
func waitAll(s *Sniper, ctx context.Context, n int, target time.Time, wake <-chan struct{}) <-chan waitResult {
	out := make(chan waitResult, n)
	for range n {
		go func() {
			done, ok := s.waitCrowded(ctx, target, wake)
			out <- waitResult{done, ok, time.Now()}
		}()
	}
	return out
}

// TestWaitCrowdedWakesAllAtTheMoment: the waiters of one moment share one
// keeper, none wakes before the moment, and all wake at it.
func TestWaitCrowdedWakesAllAtTheMoment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{Market: markettest.New(clock.Real{}), Clock: clock.Real{}})
		target := time.Now().Add(time.Second)
		const n = 50
		out := waitAll(s, t.Context(), n, target, nil)
		synctest.Wait()
		s.moments.mu.Lock()
		keepers := len(s.moments.at)
		s.moments.mu.Unlock()
		if keepers != 1 {
			t.Fatalf("moments = %d, want 1 for %d waiters", keepers, n)
		}
		time.Sleep(time.Until(target) - time.Nanosecond)
		synctest.Wait()
		if len(out) != 0 {
			t.Fatalf("%d waiters woke before the moment, want 0", len(out))
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		for range n {
			r := <-out
			if !r.done || !r.ok || !r.at.Equal(target) {
				t.Fatalf("waiter woke done=%v ok=%v at %v, want done and ok at %v", r.done, r.ok, r.at, target)
			}
		}
		if len(s.moments.at) != 0 {
			t.Errorf("moments left after the moment = %d, want 0", len(s.moments.at))
		}
		// A waiter for a moment already past does not wait.
		if done, ok := s.waitCrowded(t.Context(), target, nil); !done || !ok {
			t.Errorf("late waiter: done=%v ok=%v, want both", done, ok)
		}
	})
}

// TestWaitCrowdedEnds: what ends the keeper's wait early ends every
// waiter's, with the result a lone waiter gets, and the keeper returns.
func TestWaitCrowdedEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      func(cancel context.CancelFunc, wake chan struct{})
		done, ok bool
	}{
		{name: "new offset", end: func(_ context.CancelFunc, wake chan struct{}) { close(wake) }, done: false, ok: true},
		{name: "sniper stopping", end: func(cancel context.CancelFunc, _ chan struct{}) { cancel() }, done: false, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Config{Market: markettest.New(clock.Real{}), Clock: clock.Real{}})
				target := time.Now().Add(time.Second)
				wake := make(chan struct{})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				const n = 5
				out := waitAll(s, ctx, n, target, wake)
				synctest.Wait()
				tc.end(cancel, wake)
				synctest.Wait()
				if len(out) != n {
					t.Fatalf("%d of %d waiters returned, want all", len(out), n)
				}
				for range n {
					if r := <-out; r.done != tc.done || r.ok != tc.ok || !r.at.Before(target) {
						t.Errorf("waiter: done=%v ok=%v at %v, want done=%v ok=%v before %v", r.done, r.ok, r.at, tc.done, tc.ok, target)
					}
				}
				s.wg.Wait() // the keeper has returned
				if len(s.moments.at) != 0 {
					t.Errorf("moments left = %d, want 0", len(s.moments.at))
				}
			})
		})
	}
}

// TestCrowdedMomentSentTogether: more than maxAlone snipes due in the same
// millisecond are all sent at it, each once.
func TestCrowdedMomentSentTogether(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.start()
		end := time.Now().Add(3 * time.Minute).Truncate(time.Second)
		const n = 3 * maxAlone
		var snipes []store.Snipe
		var items []int64
		for range n {
			no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndAt: end})
			items = append(items, no)
			snipes = append(snipes, b.add(no, money.Amount(500), 3, snipeOpts{}))
		}
		want := end.Add(-3 * time.Second)
		sleepTill(want.Add(-time.Millisecond))
		b.sn.moments.mu.Lock()
		keepers := len(b.sn.moments.at)
		b.sn.moments.mu.Unlock()
		if keepers != 1 {
			t.Fatalf("moments = %d, want the crowd's one", keepers)
		}
		sleepTill(end.Add(10 * time.Second))
		for i, no := range items {
			if bids := b.ours(no); len(bids) != 1 || !bids[0].Time.Equal(want) {
				t.Errorf("snipe %d: bids %+v, want 1 at %v", snipes[i].ID, bids, want)
			}
		}
	})
}
