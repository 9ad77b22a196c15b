package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/lease"
	"github.com/sniped/sniped/internal/sniper"
	"github.com/sniped/sniped/internal/store"
)

// releaseTimeout bounds the lease hand-over at shutdown.
const releaseTimeout = 5 * time.Second

// leaseFlags tune how instances on one database share the sniper's work.
type leaseFlags struct {
	partitions int
	ttl        time.Duration
}

func (l *leaseFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&l.partitions, "partitions", lease.DefaultPartitions, "sniper: partitions of the work (by account) shared among the instances on one PostgreSQL database; every instance must use the same number")
	fs.DurationVar(&l.ttl, "lease-ttl", lease.DefaultTTL, "sniper: how long an instance's lease on its partitions lasts without renewal; a dead instance's snipes move after about this long")
}

// validate checks the flags as the lease manager will.
func (l leaseFlags) validate() error {
	if l.partitions < 1 {
		return usageErr("--partitions must be at least 1")
	}
	if min := 2*lease.DefaultRenew + lease.DefaultWindow; l.ttl < min {
		return usageErr("--lease-ttl must be at least %v (two renewals and the send window)", min)
	}
	return nil
}

// newLease makes this instance's lease manager. On PostgreSQL it shares the
// partitions with the other live instances; on SQLite the data folder's
// single process holds them all (the same code path, exclusively).
func newLease(sf storeFlags, lf leaseFlags, st store.Store, addr string, log *slog.Logger, reg prometheus.Registerer) (*lease.Manager, error) {
	m, err := lease.New(lease.Config{
		Store: st, Logger: log.With("component", "lease"), Registerer: reg, Addr: addr,
		Partitions: lf.partitions, TTL: lf.ttl,
		Exclusive: sf.databaseURL == "",
	})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return m, nil
}

// runLeased runs the lease manager and the sniper until ctx ends, then
// stops the sniper first and hands the partitions over at once (a graceful
// shutdown need not wait for the leases to expire).
func runLeased(ctx context.Context, m *lease.Manager, snp *sniper.Sniper, log *slog.Logger) error {
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(mctx) })
	err := snp.Run(ctx)
	rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if rerr := m.Release(rctx); rerr != nil {
		log.Warn("lease hand-over at shutdown failed; the leases expire instead", "err", rerr)
	}
	stop()
	wg.Wait()
	return err
}

// sniperHealth is /healthz's line about the sniper: whether this instance
// is firing, and its share.
func sniperHealth(m *lease.Manager, on bool) string {
	if !on {
		return "sniper: off\n"
	}
	st := m.Status()
	state := "standby"
	if st.Firing {
		state = "firing"
	}
	return fmt.Sprintf("sniper: %s (%d of %d partitions valid, %d held; instance %s)\n", state, st.Valid, st.Partitions, st.Held, st.Instance)
}

// changeFeed is a store that tells the other instances on its database
// about changed snipes (PostgreSQL's NOTIFY/LISTEN).
type changeFeed interface {
	NotifyChanged(ctx context.Context, snipeID int64) error
	ListenChanged(ctx context.Context, changed func(snipeID int64), onErr func(error))
}

// announceQueue bounds the changes waiting to be announced; beyond it they
// are dropped (the holder's horizon refresh still finds them).
const announceQueue = 1024

// shareChanges makes the API's notifier for several instances: the local
// sniper (when it runs) re-arms a changed snipe at once, and the other
// instances hear of it through the store's change feed, so that the one
// holding the snipe's partition re-arms it at once too. run announces and
// listens until ctx ends; on SQLite (one process) it does nothing.
func shareChanges(ctx context.Context, st store.Store, local *sniper.Sniper, runSniper bool, log *slog.Logger) (n notifier, run func()) {
	feed, ok := st.(changeFeed)
	if !ok {
		if runSniper {
			return local, func() {}
		}
		return nil, func() {}
	}
	f := &fanOut{feed: feed, queue: make(chan int64, announceQueue)}
	if runSniper {
		f.local = local
	}
	log = log.With("component", "changes")
	return f, func() {
		var wg sync.WaitGroup
		if runSniper {
			wg.Go(func() {
				feed.ListenChanged(ctx, local.Changed, func(err error) { log.Warn("listening for other instances' changes; retrying", "err", err) })
			})
		}
		for {
			select {
			case <-ctx.Done():
				wg.Wait()
				return
			case id := <-f.queue:
				actx, cancel := context.WithTimeout(ctx, releaseTimeout)
				if err := feed.NotifyChanged(actx, id); err != nil && ctx.Err() == nil {
					log.Warn("announcing a changed snipe to the other instances", "snipe", id, "err", err)
				}
				cancel()
			}
		}
	}
}

// notifier is api.Notifier, without importing the API here.
type notifier interface{ Changed(snipeID int64) }

// fanOut re-arms locally and queues the announcement.
type fanOut struct {
	local *sniper.Sniper
	feed  changeFeed
	queue chan int64
}

// Changed implements api.Notifier; it never blocks.
func (f *fanOut) Changed(id int64) {
	if f.local != nil {
		f.local.Changed(id)
	}
	select {
	case f.queue <- id:
	default:
	}
}
