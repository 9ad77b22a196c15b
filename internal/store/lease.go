package store

import (
	"context"
	"fmt"
	"time"
)

// ErrFenced: a fenced write came from an instance that no longer holds the
// partition's lease under that epoch. It is an ErrConflict: someone else
// owns the row now.
var ErrFenced = fmt.Errorf("%w: the partition's lease has moved on", ErrConflict)

// LeaseStore coordinates sniper instances sharing one database. The work is
// split into partitions (by account); an instance fires a partition's
// snipes only while it holds that partition's lease. Every lease carries a
// fencing epoch that grows whenever the lease changes holder, so a write
// made under an old epoch can be refused. Expiry is computed on the
// database's clock, the one clock every instance shares.
type LeaseStore interface {
	// Heartbeat records that an instance is alive until the database's
	// now + p.TTL, creating its row on first call. Rows of instances dead
	// for a long time are pruned.
	Heartbeat(ctx context.Context, p HeartbeatParams) error
	// Leave removes an instance's heartbeat row (graceful shutdown), so
	// that the others rebalance without waiting for it to expire.
	Leave(ctx context.Context, instance string) error
	// LeaseView returns the database's clock, the live instances and every
	// lease row: what an instance needs to work out its fair share.
	LeaseView(ctx context.Context) (LeaseView, error)
	// AcquireLease takes partition p.Partition for p.Holder until the
	// database's now + p.TTL, if the partition is free, expired or already
	// p.Holder's (or always, with p.Force). A change of holder increments
	// the epoch; a holder re-acquiring keeps it. A lease held by another
	// live holder is ErrConflict, as is losing a race for it.
	AcquireLease(ctx context.Context, p AcquireParams) (Acquired, error)
	// RenewLeases extends every lease p.Holder holds to the database's now
	// + p.TTL, expired or not (no one else took it, so its epoch still
	// fences), and returns them by partition. A lease missing from the
	// answer is lost.
	RenewLeases(ctx context.Context, p RenewParams) ([]Lease, error)
	// SnipesInPartitions is SnipesInState restricted to the snipes of
	// accounts in q.Only (partition = account ID mod q.Partitions).
	SnipesInPartitions(ctx context.Context, q PartitionQuery) ([]Snipe, error)
	// ReleaseLeases gives up p.Holder's leases on p.Partitions at once:
	// they become free (no holder, expired now) with their epoch kept, so
	// the next holder's epoch is higher. Partitions it does not hold are
	// ignored.
	ReleaseLeases(ctx context.Context, p ReleaseParams) error
}

// Lease is one partition's lease row.
type Lease struct {
	Partition int
	// Holder is the instance holding it; "" when free.
	Holder string
	// Epoch is the fencing token: it grows on every change of holder.
	Epoch int64
	// Expires is the end of the lease on the database's clock.
	Expires time.Time
}

// Instance is a live sniper instance's heartbeat row.
type Instance struct {
	ID string
	// Partitions is the partition count the instance works with; instances
	// that disagree must not share the work.
	Partitions int
	// Addr says where the instance listens, for logs and operators.
	Addr    string
	Started time.Time
	Expires time.Time
}

// LeaseView is a snapshot of the coordination tables.
type LeaseView struct {
	// Now is the database's clock when the view was read.
	Now time.Time
	// Instances are the live instances (Expires after Now), by ID.
	Instances []Instance
	// Leases are every lease row, by partition, including free and expired
	// ones.
	Leases []Lease
}

// HeartbeatParams is one Heartbeat.
type HeartbeatParams struct {
	Instance   string
	Partitions int
	Addr       string
	TTL        time.Duration
}

// AcquireParams is one AcquireLease.
type AcquireParams struct {
	Partition int
	Holder    string
	TTL       time.Duration
	// Force takes the lease even from a live holder (still a change of
	// holder: the epoch grows). Only for a database that one process
	// serves, as a SQLite data folder under its lock: a previous holder
	// there is a dead process of the same instance's folder.
	Force bool
}

// Acquired is the outcome of a successful AcquireLease.
type Acquired struct {
	Lease Lease
	// PrevHolder and PrevExpires describe the lease before this call
	// ("" and zero for a partition never held). A new holder waits out
	// PrevExpires (plus the send window) before it resolves the
	// partition's firing snipes.
	PrevHolder  string
	PrevExpires time.Time
	// Now is the database's clock when the lease was taken.
	Now time.Time
}

// RenewParams is one RenewLeases.
type RenewParams struct {
	Holder string
	TTL    time.Duration
}

// ReleaseParams is one ReleaseLeases.
type ReleaseParams struct {
	Holder     string
	Partitions []int
}

// Fence is the lease a sniper state change is made under (see
// TransitionParams.Fence).
type Fence struct {
	Holder string
	// Partitions is K; the snipe's account must map to Partition.
	Partitions int
	Partition  int
	Epoch      int64
}

// PartitionQuery selects snipes for SnipesInPartitions.
type PartitionQuery struct {
	State  State
	Before time.Time
	Limit  int
	// Partitions is K; Only lists the partitions wanted (none: no snipes).
	Partitions int
	Only       []int
}
