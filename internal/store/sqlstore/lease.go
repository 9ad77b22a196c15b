package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// instancePruneAge is how long a dead instance's heartbeat row is kept
// (for operators reading the table) before a live instance deletes it.
const instancePruneAge = time.Hour

// Heartbeat upserts the instance's row with its expiry on the database
// clock, and prunes rows dead for instancePruneAge.
func (s *Store) Heartbeat(ctx context.Context, p store.HeartbeatParams) error {
	if p.Instance == "" || p.Partitions <= 0 || p.TTL < 0 {
		return fmt.Errorf("heartbeat: instance %q with %d partitions and TTL %v: need an ID, partitions > 0 and TTL >= 0", p.Instance, p.Partitions, p.TTL)
	}
	if _, err := s.execClocked(ctx,
		`INSERT INTO sniper_instances (id, partitions, addr, started_ms, expires_ms)
		 VALUES ($1, $2, $3, {now}, {now} + $4)
		 ON CONFLICT (id) DO UPDATE SET partitions = excluded.partitions, addr = excluded.addr, expires_ms = excluded.expires_ms`,
		p.Instance, p.Partitions, p.Addr, p.TTL.Milliseconds()); err != nil {
		return fmt.Errorf("heartbeat %s: %w", p.Instance, err)
	}
	if _, err := s.execClocked(ctx,
		`DELETE FROM sniper_instances WHERE expires_ms < {now} - $1`, instancePruneAge.Milliseconds()); err != nil {
		return fmt.Errorf("heartbeat %s: prune: %w", p.Instance, err)
	}
	return nil
}

// Leave deletes the instance's heartbeat row.
func (s *Store) Leave(ctx context.Context, instance string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sniper_instances WHERE id = $1`, instance); err != nil {
		return fmt.Errorf("leave %s: %w", instance, err)
	}
	return nil
}

// LeaseView reads the database clock, the live instances and every lease.
func (s *Store) LeaseView(ctx context.Context) (store.LeaseView, error) {
	var v store.LeaseView
	var now int64
	if err := s.queryRowClocked(ctx, `SELECT {now}`).Scan(&now); err != nil {
		return v, fmt.Errorf("lease view: clock: %w", err)
	}
	v.Now = fromMS(now)
	rows, err := s.w.QueryContext(ctx,
		`SELECT id, partitions, addr, started_ms, expires_ms FROM sniper_instances WHERE expires_ms > $1 ORDER BY id`, now)
	if err != nil {
		return v, fmt.Errorf("lease view: instances: %w", err)
	}
	for rows.Next() {
		var in store.Instance
		var started, expires int64
		if err := rows.Scan(&in.ID, &in.Partitions, &in.Addr, &started, &expires); err != nil {
			rows.Close()
			return v, fmt.Errorf("lease view: instances: %w", err)
		}
		in.Started, in.Expires = fromMS(started), fromMS(expires)
		v.Instances = append(v.Instances, in)
	}
	if err := closeRows(rows); err != nil {
		return v, fmt.Errorf("lease view: instances: %w", err)
	}
	rows, err = s.w.QueryContext(ctx, `SELECT part, holder, epoch, expires_ms FROM sniper_leases ORDER BY part`)
	if err != nil {
		return v, fmt.Errorf("lease view: leases: %w", err)
	}
	v.Leases, err = scanLeases(rows)
	if err != nil {
		return v, fmt.Errorf("lease view: leases: %w", err)
	}
	return v, nil
}

// AcquireLease is a read followed by a compare-and-set on (holder, epoch)
// that re-checks the expiry on the database clock, so that it needs no
// row locks and runs the same on both engines. Losing a race is
// store.ErrConflict.
func (s *Store) AcquireLease(ctx context.Context, p store.AcquireParams) (store.Acquired, error) {
	if p.Partition < 0 || p.Holder == "" || p.TTL < 0 {
		return store.Acquired{}, fmt.Errorf("acquire lease %d for %q: need a partition >= 0, a holder and TTL >= 0", p.Partition, p.Holder)
	}
	ttl := p.TTL.Milliseconds()
	var (
		prevHolder           string
		prevEpoch, prevUntil int64
		now                  int64
	)
	err := s.queryRowClocked(ctx,
		`SELECT holder, epoch, expires_ms, {now} FROM sniper_leases WHERE part = $1`, p.Partition).
		Scan(&prevHolder, &prevEpoch, &prevUntil, &now)
	if errors.Is(err, sql.ErrNoRows) {
		var until int64
		err := s.queryRowClocked(ctx,
			`INSERT INTO sniper_leases (part, holder, epoch, expires_ms) VALUES ($1, $2, 1, {now} + $3)
			 ON CONFLICT (part) DO NOTHING RETURNING expires_ms`, p.Partition, p.Holder, ttl).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			return store.Acquired{}, fmt.Errorf("acquire lease %d: another instance created it first: %w", p.Partition, store.ErrConflict)
		}
		if err != nil {
			return store.Acquired{}, fmt.Errorf("acquire lease %d: %w", p.Partition, err)
		}
		return store.Acquired{
			Lease: store.Lease{Partition: p.Partition, Holder: p.Holder, Epoch: 1, Expires: fromMS(until)},
			Now:   fromMS(until - ttl),
		}, nil
	}
	if err != nil {
		return store.Acquired{}, fmt.Errorf("acquire lease %d: %w", p.Partition, err)
	}
	if prevHolder != p.Holder && prevHolder != "" && prevUntil > now && !p.Force {
		return store.Acquired{}, fmt.Errorf("acquire lease %d: held by %s for %v more: %w",
			p.Partition, prevHolder, time.Duration(prevUntil-now)*time.Millisecond, store.ErrConflict)
	}
	epoch := prevEpoch
	if prevHolder != p.Holder {
		epoch++
	}
	var until int64
	err = s.queryRowClocked(ctx,
		`UPDATE sniper_leases SET holder = $2, epoch = $3, expires_ms = {now} + $4
		 WHERE part = $1 AND holder = $5 AND epoch = $6 AND ($7 = 1 OR holder = $2 OR holder = '' OR expires_ms <= {now})
		 RETURNING expires_ms`,
		p.Partition, p.Holder, epoch, ttl, prevHolder, prevEpoch, b2i(p.Force)).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Acquired{}, fmt.Errorf("acquire lease %d: it changed hands or was renewed meanwhile: %w", p.Partition, store.ErrConflict)
	}
	if err != nil {
		return store.Acquired{}, fmt.Errorf("acquire lease %d: %w", p.Partition, err)
	}
	a := store.Acquired{
		Lease:       store.Lease{Partition: p.Partition, Holder: p.Holder, Epoch: epoch, Expires: fromMS(until)},
		PrevHolder:  prevHolder,
		PrevExpires: fromMS(prevUntil),
		Now:         fromMS(until - ttl),
	}
	return a, nil
}

// RenewLeases extends all of the holder's leases in one statement.
func (s *Store) RenewLeases(ctx context.Context, p store.RenewParams) ([]store.Lease, error) {
	if p.Holder == "" || p.TTL < 0 {
		return nil, fmt.Errorf("renew leases of %q: need a holder and TTL >= 0", p.Holder)
	}
	rows, err := s.queryClocked(ctx,
		`UPDATE sniper_leases SET expires_ms = {now} + $2 WHERE holder = $1
		 RETURNING part, holder, epoch, expires_ms`, p.Holder, p.TTL.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("renew leases of %s: %w", p.Holder, err)
	}
	ls, err := scanLeases(rows)
	if err != nil {
		return nil, fmt.Errorf("renew leases of %s: %w", p.Holder, err)
	}
	slices.SortFunc(ls, func(a, b store.Lease) int { return a.Partition - b.Partition })
	return ls, nil
}

// ReleaseLeases frees the holder's leases on the given partitions.
func (s *Store) ReleaseLeases(ctx context.Context, p store.ReleaseParams) error {
	if len(p.Partitions) == 0 {
		return nil
	}
	args := []any{p.Holder}
	in := make([]string, len(p.Partitions))
	for i, part := range p.Partitions {
		args = append(args, part)
		in[i] = "$" + strconv.Itoa(len(args))
	}
	if _, err := s.execClocked(ctx,
		`UPDATE sniper_leases SET holder = '', expires_ms = {now}
		 WHERE holder = $1 AND part IN (`+strings.Join(in, ", ")+`)`, args...); err != nil {
		return fmt.Errorf("release leases of %s: %w", p.Holder, err)
	}
	return nil
}

func scanLeases(rows *sql.Rows) ([]store.Lease, error) {
	var out []store.Lease
	for rows.Next() {
		var l store.Lease
		var until int64
		if err := rows.Scan(&l.Partition, &l.Holder, &l.Epoch, &until); err != nil {
			rows.Close()
			return nil, err
		}
		l.Expires = fromMS(until)
		out = append(out, l)
	}
	return out, closeRows(rows)
}

// closeRows reports an iteration error, then closes.
func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	return errors.Join(err, rows.Close())
}

// clocked replaces {now} in q with the database clock: the engine's SQL
// expression, or the process's clock bound as one more parameter.
func (s *Store) clocked(q string, args ...any) (string, []any) {
	if s.now != "" {
		return strings.ReplaceAll(q, "{now}", s.now), args
	}
	args = append(args, time.Now().UnixMilli())
	return strings.ReplaceAll(q, "{now}", "$"+strconv.Itoa(len(args))), args
}

func (s *Store) execClocked(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = s.clocked(q, args...)
	return s.w.ExecContext(ctx, q, args...)
}

func (s *Store) queryClocked(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = s.clocked(q, args...)
	return s.w.QueryContext(ctx, q, args...)
}

func (s *Store) queryRowClocked(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = s.clocked(q, args...)
	return s.w.QueryRowContext(ctx, q, args...)
}
