package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/clock"
)

// fakeRun records the groups a groupCommit runs; each group waits for a
// release while gate is set, and write n fails with fail[n].
type fakeRun struct {
	mu     sync.Mutex
	groups [][]int
	gate   chan struct{}
	fail   map[int]error
}

func (f *fakeRun) run(ctx context.Context, ops []int) []error {
	f.mu.Lock()
	f.groups = append(f.groups, slices.Clone(ops))
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	errs := make([]error, len(ops))
	for i, op := range ops {
		errs[i] = f.fail[op]
	}
	return errs
}

func (f *fakeRun) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, g := range f.groups {
		out = append(out, len(g))
	}
	return out
}

func TestGroupCommit(t *testing.T) {
	errBad := errors.New("bad write")
	tests := []struct {
		name string
		// queued writes 1..queued arrive while write 0's group is held.
		queued    int
		fail      map[int]error
		wantSizes []int
	}{
		{name: "alone", queued: 0, wantSizes: []int{1}},
		{name: "the writes queued meanwhile share one group", queued: 10, wantSizes: []int{1, 10}},
		{name: "a group holds at most maxGroup", queued: maxGroup + 44, wantSizes: []int{1, maxGroup, 44}},
		{name: "each write gets its own result", queued: 5, fail: map[int]error{3: errBad}, wantSizes: []int{1, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeRun{gate: make(chan struct{}), fail: tt.fail}
				g := &groupCommit[int]{run: f.run}
				errs := make([]error, tt.queued+1)
				returned := make([]bool, tt.queued+1)
				var mu sync.Mutex
				write := func(n int) {
					err := g.do(context.Background(), n)
					mu.Lock()
					errs[n], returned[n] = err, true
					mu.Unlock()
				}
				go write(0)
				synctest.Wait() // write 0 runs alone, held
				for n := 1; n <= tt.queued; n++ {
					go write(n)
				}
				synctest.Wait()
				if got := f.sizes(); !slices.Equal(got, []int{1}) {
					t.Fatalf("groups while the first is held = %v, want [1]", got)
				}
				f.gate <- struct{}{} // release write 0's group
				synctest.Wait()
				mu.Lock()
				if !returned[0] {
					t.Errorf("write 0 did not return after its own group (it must hand the lead on, not serve the next group)")
				}
				mu.Unlock()
				close(f.gate) // let the rest run
				synctest.Wait()
				if got := f.sizes(); !slices.Equal(got, tt.wantSizes) {
					t.Errorf("group sizes = %v, want %v", got, tt.wantSizes)
				}
				for n, err := range errs {
					if !returned[n] {
						t.Errorf("write %d never returned", n)
					}
					if want := tt.fail[n]; !errors.Is(err, want) || (want == nil && err != nil) {
						t.Errorf("write %d: err = %v, want %v", n, err, want)
					}
				}
				if !g.busy && len(g.queue) == 0 {
					return
				}
				t.Errorf("after every write: busy %v, queue %d, want idle", g.busy, len(g.queue))
			})
		})
	}
}

// TestGroupCommitCancel: a write whose caller gives up while it waits in
// the queue is dropped; one already in a running group is decided by it.
func TestGroupCommitCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRun{gate: make(chan struct{})}
		g := &groupCommit[int]{run: f.run}
		results := make(chan string, 4)
		write := func(ctx context.Context, n int) {
			err := g.do(ctx, n)
			results <- fmt.Sprintf("%d:%v", n, err)
		}
		ctx1, cancel1 := context.WithCancel(context.Background())
		go write(ctx1, 0) // leads, held
		synctest.Wait()
		ctx2, cancel2 := context.WithCancel(context.Background())
		go write(ctx2, 1) // queued first
		synctest.Wait()
		go write(context.Background(), 2)
		synctest.Wait()
		cancel1() // in a running group: waits for it
		cancel2() // queued: dropped
		synctest.Wait()
		if got := <-results; got != "1:context canceled" {
			t.Errorf("queued write given up: %s, want 1:context canceled", got)
		}
		f.gate <- struct{}{}
		synctest.Wait()
		if got := <-results; got != "0:<nil>" {
			t.Errorf("write in the running group: %s, want 0:<nil> (its group committed)", got)
		}
		close(f.gate)
		synctest.Wait()
		if got := <-results; got != "2:<nil>" {
			t.Errorf("write after a dropped one: %s, want 2:<nil>", got)
		}
		if got, want := f.sizes(), []int{1, 1}; !slices.Equal(got, want) {
			t.Errorf("group sizes = %v, want %v (the dropped write never ran)", got, want)
		}
	})
}

// TestGroupCommitContext: a group runs on a context that carries its first
// caller's values, and that has no cancellation to watch when the store
// detaches its commits (Options.CommitsIgnoreCancel).
func TestGroupCommitContext(t *testing.T) {
	type key struct{}
	for _, detach := range []bool{false, true} {
		t.Run(fmt.Sprintf("detach=%v", detach), func(t *testing.T) {
			var got context.Context
			g := &groupCommit[int]{detach: detach, run: func(ctx context.Context, ops []int) []error {
				got = ctx
				return make([]error, len(ops))
			}}
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
			defer cancel()
			if err := g.do(ctx, 1); err != nil {
				t.Fatalf("do: %v", err)
			}
			if v := got.Value(key{}); v != "v" {
				t.Errorf("group context's value = %v, want the caller's %q", v, "v")
			}
			if cancellable := got.Done() != nil; cancellable == detach {
				t.Errorf("group context cancellable = %v, want %v", cancellable, !detach)
			}
		})
	}
}

// TestGroupCommitLinger: a write that finds the writer idle runs at once;
// a leader handed the lead by a busy writer waits linger, gathering the
// writes that arrive meanwhile into its group.
func TestGroupCommitLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const linger = 2 * time.Millisecond
		f := &fakeRun{gate: make(chan struct{})}
		g := &groupCommit[int]{run: f.run, linger: linger, clk: clock.Real{}}
		write := func(n int) {
			if err := g.do(context.Background(), n); err != nil {
				t.Errorf("write %d: %v", n, err)
			}
		}
		start := time.Now()
		go write(0)
		synctest.Wait()
		if got, want := f.sizes(), []int{1}; !slices.Equal(got, want) || time.Since(start) != 0 {
			t.Fatalf("idle writer: groups %v after %v, want %v at once", got, time.Since(start), want)
		}
		go write(1) // queued behind write 0's group
		synctest.Wait()
		close(f.gate) // write 0's group ends; write 1 leads and lingers
		synctest.Wait()
		time.Sleep(linger / 2)
		go write(2) // arrives while write 1 lingers: joins its group
		time.Sleep(linger)
		synctest.Wait()
		if got, want := f.sizes(), []int{1, 2}; !slices.Equal(got, want) {
			t.Errorf("group sizes = %v, want %v", got, want)
		}
	})
}

// TestGroupCommitUrgent: an urgent write ends a leader's linger when it
// arrives, and a leader does not linger while one is queued.
func TestGroupCommitUrgent(t *testing.T) {
	const linger = 2 * time.Millisecond
	tests := []struct {
		name string
		// urgentQueued queues the urgent write (-1) behind the held group
		// otherwise it arrives while the next leader lingers.
		urgentQueued bool
	}{
		{name: "arrives during the linger", urgentQueued: false},
		{name: "queued before the linger", urgentQueued: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeRun{gate: make(chan struct{})}
				g := &groupCommit[int]{run: f.run, linger: linger, clk: clock.Real{}, urgent: func(n int) bool { return n < 0 }}
				write := func(n int) {
					if err := g.do(context.Background(), n); err != nil {
						t.Errorf("write %d: %v", n, err)
					}
				}
				go write(0)
				synctest.Wait()
				go write(1)
				synctest.Wait()
				if tt.urgentQueued {
					go write(-1)
					synctest.Wait()
				}
				start := time.Now()
				close(f.gate)
				synctest.Wait()
				if !tt.urgentQueued {
					go write(-1)
					synctest.Wait()
				}
				if got, want := f.sizes(), []int{1, 2}; !slices.Equal(got, want) || time.Since(start) != 0 {
					t.Errorf("groups %v after %v, want %v at once", got, time.Since(start), want)
				}
			})
		})
	}
}
