package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// A TTL of 0 makes a lease that has expired by the time anyone else looks
// (expiry is "expires <= now" on the database clock), so expiry is tested
// without sleeping. long is a TTL no test outlives.
const long = time.Minute

var leaseTests = []test{
	{"AcquireFree", func(t *testing.T, b *bundle) {
		a := b.acquire(t, 3, "A", long)
		if a.Lease.Partition != 3 || a.Lease.Holder != "A" || a.Lease.Epoch != 1 {
			t.Errorf("AcquireLease(3, A) = %+v, want partition 3, holder A, epoch 1", a.Lease)
		}
		if got := a.Lease.Expires.Sub(a.Now); got != long {
			t.Errorf("Expires − Now = %v, want the TTL %v", got, long)
		}
		if a.PrevHolder != "" || !a.PrevExpires.IsZero() {
			t.Errorf("Prev = %q, %v; want none for a partition never held", a.PrevHolder, a.PrevExpires)
		}
		// The database clock is a real clock: within a minute of ours.
		if d := time.Since(a.Now); d > time.Minute || d < -time.Minute {
			t.Errorf("database clock %v is %v away from the local clock", a.Now, d)
		}
	}},
	{"AcquireHeldIsConflict", func(t *testing.T, b *bundle) {
		first := b.acquire(t, 0, "A", long)
		_, err := b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 0, Holder: "B", TTL: long})
		wantErr(t, "AcquireLease(held by A) for B", err, store.ErrConflict)
		// Force takes it anyway, as a change of holder.
		forced, err := b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 0, Holder: "C", TTL: long, Force: true})
		if err != nil || forced.Lease.Epoch != first.Lease.Epoch+1 || forced.PrevHolder != "A" {
			t.Fatalf("AcquireLease(Force) = %+v, %v; want epoch %d taken from A", forced, err, first.Lease.Epoch+1)
		}
		_, err = b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 0, Holder: "A", TTL: long})
		wantErr(t, "AcquireLease by A after C forced it", err, store.ErrConflict)
		// The holder re-acquiring extends its lease and keeps the epoch.
		again := b.acquire(t, 0, "C", long)
		if again.Lease.Epoch != forced.Lease.Epoch || again.PrevHolder != "C" {
			t.Errorf("re-acquire by C = epoch %d, prev %q; want epoch %d, prev C", again.Lease.Epoch, again.PrevHolder, forced.Lease.Epoch)
		}
	}},
	{"AcquireExpiredMovesEpoch", func(t *testing.T, b *bundle) {
		old := b.acquire(t, 5, "A", 0)
		got := b.acquire(t, 5, "B", long)
		if got.Lease.Holder != "B" || got.Lease.Epoch != old.Lease.Epoch+1 {
			t.Errorf("take over = holder %s epoch %d, want B epoch %d", got.Lease.Holder, got.Lease.Epoch, old.Lease.Epoch+1)
		}
		if got.PrevHolder != "A" || !got.PrevExpires.Equal(old.Lease.Expires) {
			t.Errorf("Prev = %q until %v, want A until %v", got.PrevHolder, got.PrevExpires, old.Lease.Expires)
		}
		// A's fence is gone: A cannot take it back while B holds it.
		_, err := b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 5, Holder: "A", TTL: long})
		wantErr(t, "AcquireLease by the old holder", err, store.ErrConflict)
	}},
	{"Renew", func(t *testing.T, b *bundle) {
		a1 := b.acquire(t, 1, "A", long)
		a2 := b.acquire(t, 2, "A", 0) // expired, but no one took it
		b.acquire(t, 3, "B", long)
		b.acquire(t, 4, "A", 0)
		b.acquire(t, 4, "B", long) // taken: A has lost it

		got, err := b.s.RenewLeases(b.ctx, store.RenewParams{Holder: "A", TTL: long})
		if err != nil {
			t.Fatalf("RenewLeases(A) = %v", err)
		}
		want := []int{1, 2}
		if parts := partitions(got); !slices.Equal(parts, want) {
			t.Fatalf("RenewLeases(A) = partitions %v, want %v (4 was taken, 3 is B's)", parts, want)
		}
		if got[0].Epoch != a1.Lease.Epoch || got[1].Epoch != a2.Lease.Epoch {
			t.Errorf("renewed epochs = %d, %d; want unchanged %d, %d", got[0].Epoch, got[1].Epoch, a1.Lease.Epoch, a2.Lease.Epoch)
		}
		if !got[1].Expires.After(a2.Lease.Expires) {
			t.Errorf("renewed expiry %v, want after %v", got[1].Expires, a2.Lease.Expires)
		}
		// Renewed, partition 2 is A's again: B cannot take it.
		_, err = b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 2, Holder: "B", TTL: long})
		wantErr(t, "AcquireLease(renewed lease) for B", err, store.ErrConflict)
	}},
	{"Release", func(t *testing.T, b *bundle) {
		first := b.acquire(t, 7, "A", long)
		b.acquire(t, 8, "A", long)
		// Releasing a partition one does not hold does nothing.
		if err := b.s.ReleaseLeases(b.ctx, store.ReleaseParams{Holder: "B", Partitions: []int{7}}); err != nil {
			t.Fatalf("ReleaseLeases(B, 7) = %v", err)
		}
		if err := b.s.ReleaseLeases(b.ctx, store.ReleaseParams{Holder: "A", Partitions: []int{7}}); err != nil {
			t.Fatalf("ReleaseLeases(A, 7) = %v", err)
		}
		// A released lease is free at once, and no longer renewed with A's.
		renewed, err := b.s.RenewLeases(b.ctx, store.RenewParams{Holder: "A", TTL: long})
		if want := []int{8}; err != nil || !slices.Equal(partitions(renewed), want) {
			t.Errorf("RenewLeases(A) after release = %v, %v; want %v", partitions(renewed), err, want)
		}
		got := b.acquire(t, 7, "B", long)
		if got.Lease.Epoch != first.Lease.Epoch+1 || got.PrevHolder != "" {
			t.Errorf("acquire after release = epoch %d prev %q, want epoch %d prev none", got.Lease.Epoch, got.PrevHolder, first.Lease.Epoch+1)
		}
		if got.PrevExpires.After(got.Now) {
			t.Errorf("released lease expires %v, after the taker's now %v", got.PrevExpires, got.Now)
		}
		// Leaving and coming back is a change of holder too.
		if err := b.s.ReleaseLeases(b.ctx, store.ReleaseParams{Holder: "B", Partitions: []int{7}}); err != nil {
			t.Fatal(err)
		}
		if back := b.acquire(t, 7, "B", long); back.Lease.Epoch != got.Lease.Epoch+1 {
			t.Errorf("B re-acquiring after its release = epoch %d, want %d", back.Lease.Epoch, got.Lease.Epoch+1)
		}
		if err := b.s.ReleaseLeases(b.ctx, store.ReleaseParams{Holder: "A"}); err != nil {
			t.Errorf("ReleaseLeases(no partitions) = %v", err)
		}
	}},
	{"View", func(t *testing.T, b *bundle) {
		beats := []store.HeartbeatParams{
			{Instance: "b", Partitions: 32, Addr: "127.0.0.1:8081", TTL: long},
			{Instance: "a", Partitions: 32, Addr: "127.0.0.1:8080", TTL: long},
			{Instance: "dead", Partitions: 32, TTL: 0},
			{Instance: "gone", Partitions: 32, TTL: long},
		}
		for _, h := range beats {
			if err := b.s.Heartbeat(b.ctx, h); err != nil {
				t.Fatalf("Heartbeat(%s) = %v", h.Instance, err)
			}
		}
		if err := b.s.Leave(b.ctx, "gone"); err != nil {
			t.Fatalf("Leave = %v", err)
		}
		b.acquire(t, 2, "a", long)
		b.acquire(t, 0, "b", 0)
		v, err := b.s.LeaseView(b.ctx)
		if err != nil {
			t.Fatalf("LeaseView = %v", err)
		}
		var live []string
		for _, in := range v.Instances {
			live = append(live, in.ID)
			if !in.Expires.After(v.Now) || in.Partitions != 32 || in.Started.After(v.Now) {
				t.Errorf("instance %+v at %v: want live, 32 partitions, started before now", in, v.Now)
			}
		}
		if want := []string{"a", "b"}; !slices.Equal(live, want) {
			t.Errorf("live instances = %v, want %v (dead expired, gone left)", live, want)
		}
		if v.Instances[0].Addr != "127.0.0.1:8080" {
			t.Errorf("instance a's addr = %q", v.Instances[0].Addr)
		}
		if want := []int{0, 2}; !slices.Equal(partitions(v.Leases), want) {
			t.Errorf("leases = %v, want %v", partitions(v.Leases), want)
		}
		if l := v.Leases[0]; l.Holder != "b" || l.Expires.After(v.Now) {
			t.Errorf("lease 0 = %+v, want b's, expired at %v", l, v.Now)
		}
		// A heartbeat revives an instance and updates its row.
		if err := b.s.Heartbeat(b.ctx, store.HeartbeatParams{Instance: "dead", Partitions: 16, TTL: long}); err != nil {
			t.Fatal(err)
		}
		v, err = b.s.LeaseView(b.ctx)
		if err != nil || len(v.Instances) != 3 || v.Instances[2].Partitions != 16 {
			t.Errorf("after heartbeat, instances = %+v, %v; want 3 with dead at 16 partitions", v.Instances, err)
		}
	}},
	{"Invalid", func(t *testing.T, b *bundle) {
		for _, p := range []store.AcquireParams{{Partition: -1, Holder: "A"}, {Partition: 1}, {Partition: 1, Holder: "A", TTL: -time.Second}} {
			_, err := b.s.AcquireLease(b.ctx, p)
			if err == nil || errors.Is(err, store.ErrConflict) {
				t.Errorf("AcquireLease(%+v) = %v, want a validation error", p, err)
			}
		}
		if err := b.s.Heartbeat(b.ctx, store.HeartbeatParams{Instance: "a"}); err == nil {
			t.Errorf("Heartbeat(no partitions) = nil, want an error")
		}
		if _, err := b.s.RenewLeases(b.ctx, store.RenewParams{}); err == nil {
			t.Errorf("RenewLeases(no holder) = nil, want an error")
		}
	}},
	{"RaceHasOneWinner", func(t *testing.T, b *bundle) {
		// Contenders race for a new partition, then for its expired lease:
		// each time exactly one wins, the others get ErrConflict.
		for round := range 2 {
			const n = 8
			var (
				mu      sync.Mutex
				winners []store.Acquired
				wg      sync.WaitGroup
			)
			for i := range n {
				wg.Go(func() {
					a, err := b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: 9, Holder: fmt.Sprintf("r%d-%d", round, i), TTL: long})
					if err != nil {
						if !errors.Is(err, store.ErrConflict) {
							t.Errorf("AcquireLease = %v, want success or ErrConflict", err)
						}
						return
					}
					mu.Lock()
					winners = append(winners, a)
					mu.Unlock()
				})
			}
			wg.Wait()
			if len(winners) != 1 {
				t.Fatalf("round %d: %d winners, want 1: %+v", round, len(winners), winners)
			}
			if want := int64(round + 1); winners[0].Lease.Epoch != want {
				t.Errorf("round %d: winner's epoch %d, want %d", round, winners[0].Lease.Epoch, want)
			}
			// The winner's lease runs out (its holder shortens it to 0).
			b.acquire(t, 9, winners[0].Lease.Holder, 0)
		}
	}},
}

func (b *bundle) acquire(t *testing.T, part int, holder string, ttl time.Duration) store.Acquired {
	t.Helper()
	a, err := b.s.AcquireLease(b.ctx, store.AcquireParams{Partition: part, Holder: holder, TTL: ttl})
	if err != nil {
		t.Fatalf("AcquireLease(%d, %s) = %v", part, holder, err)
	}
	return a
}

func partitions(ls []store.Lease) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		out[i] = l.Partition
	}
	return out
}

var fenceTests = []test{
	{"FencedTransition", func(t *testing.T, b *bundle) {
		const k = 4
		part := int(b.alice.ID % k)
		sn := b.snipe(t, b.alice.ID, 1, 500, b.now.Add(hour))
		a := b.acquire(t, part, "A", 0) // expires at once: B takes it below
		fenceA := &store.Fence{Holder: "A", Partitions: k, Partition: part, Epoch: a.Lease.Epoch}
		move := func(from, to store.State, f *store.Fence) error {
			return b.s.Transition(b.ctx, store.TransitionParams{ID: sn.ID, From: []store.State{from}, To: to, Fence: f})
		}
		if err := move(store.StateScheduled, store.StateFiring, fenceA); err != nil {
			t.Fatalf("Transition under A's lease = %v", err)
		}
		bl := b.acquire(t, part, "B", long)
		for _, c := range []struct {
			name  string
			fence *store.Fence
		}{
			{"A's old epoch", fenceA},
			{"B's epoch under A's name", &store.Fence{Holder: "A", Partitions: k, Partition: part, Epoch: bl.Lease.Epoch}},
			{"another partition's lease", &store.Fence{Holder: "B", Partitions: k, Partition: (part + 1) % k, Epoch: bl.Lease.Epoch}},
		} {
			err := move(store.StateFiring, store.StatePlaced, c.fence)
			if c.name == "another partition's lease" {
				if err == nil || errors.Is(err, store.ErrConflict) {
					t.Errorf("Transition with %s = %v, want a plain error (the snipe is not in it)", c.name, err)
				}
				continue
			}
			wantErr(t, "Transition with "+c.name, err, store.ErrFenced)
			wantErr(t, "Transition with "+c.name, err, store.ErrConflict)
		}
		if got := b.get(t, b.alice.ID, 1); got.State != store.StateFiring {
			t.Errorf("after refused writes the snipe is %s, want still firing", got.State)
		}
		fenceB := &store.Fence{Holder: "B", Partitions: k, Partition: part, Epoch: bl.Lease.Epoch}
		if err := move(store.StateFiring, store.StatePlaced, fenceB); err != nil {
			t.Errorf("Transition under B's lease = %v", err)
		}
		// The state compare-and-set still applies under a valid fence.
		wantErr(t, "Transition from the wrong state", move(store.StateFiring, store.StateSettled, fenceB), store.ErrConflict)
		if err := move(store.StatePlaced, store.StateSettled, fenceB); err != nil {
			t.Errorf("Transition placed→settled under B's lease = %v", err)
		}
	}},
	{"SnipesInPartitions", func(t *testing.T, b *bundle) {
		const k = 2
		end := b.now.Add(hour)
		a1 := b.snipe(t, b.alice.ID, 1, 500, end)
		a2 := b.snipe(t, b.alice.ID, 2, 500, end.Add(time.Second))
		bo := b.snipe(t, b.bob.ID, 1, 500, end)
		b.snipe(t, b.alice.ID, 3, 0, end) // watched: not armed
		pa, pb := int(b.alice.ID%k), int(b.bob.ID%k)
		if pa == pb {
			t.Fatalf("alice and bob share partition %d of %d; the test needs them apart", pa, k)
		}
		tests := []struct {
			only []int
			want []int64
		}{
			{[]int{pa}, []int64{a1.ID, a2.ID}},
			{[]int{pb}, []int64{bo.ID}},
			{[]int{0, 1}, []int64{a1.ID, bo.ID, a2.ID}},
			{nil, nil},
		}
		for _, tc := range tests {
			got, err := b.s.SnipesInPartitions(b.ctx, store.PartitionQuery{State: store.StateScheduled, Before: end.Add(hour), Partitions: k, Only: tc.only})
			if err != nil || !slices.Equal(ids(got), tc.want) {
				t.Errorf("SnipesInPartitions(%v) = %v, %v; want %v", tc.only, ids(got), err, tc.want)
			}
		}
		got, err := b.s.SnipesInPartitions(b.ctx, store.PartitionQuery{State: store.StateScheduled, Before: end.Add(hour), Limit: 1, Partitions: k, Only: []int{pa}})
		if want := []int64{a1.ID}; err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("SnipesInPartitions(limit 1) = %v, %v; want %v", ids(got), err, want)
		}
	}},
}
