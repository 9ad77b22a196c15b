package lease

import (
	"slices"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store/postgres"
	"github.com/sniped/sniped/internal/store/postgres/pgtest"
)

// TestPostgres runs instances on PostgreSQL, whose lease clock is the
// server's: three instances share the partitions evenly and disjointly, and
// one's graceful release hands its share to the others at once. Rounds are
// driven by Tick; drains last a nanosecond so that no test waits on real time.
func TestPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var ms []*Manager
	for _, id := range []string{"a", "b", "c"} {
		st, err := postgres.Open(t.Context(), dsn) // one pool each, as separate processes
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { st.Close() })
		m, err := New(Config{Store: st, Instance: id, Partitions: 32, Drain: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	rounds := func(n int, ms []*Manager) {
		for range n {
			for _, m := range ms {
				m.Tick(t.Context())
			}
		}
	}
	check := func(ms []*Manager, sizes ...int) {
		t.Helper()
		var all, got []int
		for _, m := range ms {
			held := m.Held()
			got = append(got, len(held))
			for _, h := range held {
				if _, ok := m.Owns(h.Partition); !ok {
					t.Errorf("%s: partition %d held but not owned", m.Instance(), h.Partition)
				}
				all = append(all, h.Partition)
			}
		}
		slices.Sort(all)
		slices.Sort(got)
		if !slices.Equal(got, sizes) || len(all) != 32 || len(slices.Compact(slices.Clone(all))) != 32 {
			t.Errorf("shares = %v over %d partitions (%v), want %v covering 32 once each", got, len(all), all, sizes)
		}
	}
	rounds(4, ms)
	check(ms, 10, 11, 11)
	if err := ms[0].Release(t.Context()); err != nil {
		t.Fatalf("Release = %v", err)
	}
	rounds(1, ms[1:])
	check(ms[1:], 16, 16)
}
