package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store/postgres"
	"github.com/sniped/sniped/internal/store/postgres/pgtest"
)

// TestChangeFeed: a change announced through one store (one instance)
// reaches the listeners of every store on the same schema, and none on
// another schema.
func TestChangeFeed(t *testing.T) {
	t.Parallel()
	admin, dsn := pgtest.Admin(t)
	schema := pgtest.FreshSchema(t, admin, dsn)
	other := pgtest.FreshSchema(t, admin, dsn)
	open := func(dsn string) *postgres.Store {
		s, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b, c := open(schema), open(schema), open(other)

	type listener struct {
		mu  sync.Mutex
		ids []int64
		got chan struct{}
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	listen := func(s *postgres.Store) *listener {
		l := &listener{got: make(chan struct{}, 16)}
		wg.Go(func() {
			s.ListenChanged(ctx, func(id int64) {
				l.mu.Lock()
				l.ids = append(l.ids, id)
				l.mu.Unlock()
				l.got <- struct{}{}
			}, func(err error) { t.Errorf("listen: %v", err) })
		})
		return l
	}
	lb, lc := listen(b), listen(c)
	defer func() { cancel(); wg.Wait() }()

	// The listener may not be listening yet: announce until it hears one,
	// then the next ones in order.
	deadline := time.After(30 * time.Second)
	for heard := false; !heard; {
		if err := a.NotifyChanged(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-lb.got:
			heard = true
		case <-time.After(100 * time.Millisecond): // polling until LISTEN is in place, not a timing assertion
		case <-deadline:
			t.Fatal("no notification reached the other store within 30 s")
		}
	}
	for _, id := range []int64{42, 43} {
		if err := a.NotifyChanged(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		<-lb.got
	}
	lb.mu.Lock()
	got := slices.Clone(lb.ids[len(lb.ids)-2:])
	lb.mu.Unlock()
	if want := []int64{42, 43}; !slices.Equal(got, want) {
		t.Errorf("heard %v last, want %v", got, want)
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if len(lc.ids) != 0 {
		t.Errorf("a store on another schema heard %v, want nothing", lc.ids)
	}
}
