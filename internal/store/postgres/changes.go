package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Snipe changes between instances: the instance whose API took an addBid
// or deleteBid may not hold the snipe's partition (package lease); it
// announces the change with NOTIFY, and every instance's listener re-arms
// the snipe at once, so that the holder need not wait for its next horizon
// refresh. Best effort: the refresh still finds whatever a lost
// notification missed.

// changesPrefix starts the channel name; the schema follows, since
// NOTIFY channels are per database and schemas are separate sniped
// installations (tests use one each).
const changesPrefix = "sniped_changed_"

// listenRetry is the pause before a lost listening connection is opened again.
const listenRetry = time.Second

// channel is this store's NOTIFY channel.
func (s *Store) channel(ctx context.Context) (string, error) {
	s.chanOnce.Do(func() {
		var schema sql.NullString
		s.chanErr = s.db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema)
		s.chanName = changesPrefix + schema.String
	})
	return s.chanName, s.chanErr
}

// NotifyChanged tells every listening instance that a snipe changed.
func (s *Store) NotifyChanged(ctx context.Context, snipeID int64) error {
	ch, err := s.channel(ctx)
	if err != nil {
		return fmt.Errorf("notify change of snipe %d: %w", snipeID, err)
	}
	if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, ch, strconv.FormatInt(snipeID, 10)); err != nil {
		return fmt.Errorf("notify change of snipe %d: %w", snipeID, err)
	}
	return nil
}

// ListenChanged calls changed with the ID of every snipe any instance
// announces (this one included) until ctx ends, on a connection of its
// own, opened again after a failure (reported to onErr, which may be nil).
func (s *Store) ListenChanged(ctx context.Context, changed func(snipeID int64), onErr func(error)) {
	for ctx.Err() == nil {
		err := s.listen(ctx, changed)
		if ctx.Err() != nil {
			return
		}
		if onErr != nil {
			onErr(err)
		}
		t := time.NewTimer(listenRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (s *Store) listen(ctx context.Context, changed func(int64)) error {
	ch, err := s.channel(ctx)
	if err != nil {
		return fmt.Errorf("listen for snipe changes: %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("listen for snipe changes: %w", err)
	}
	defer conn.Close()
	// The connection carries a LISTEN: discard it rather than pool it.
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	if _, err := conn.ExecContext(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
		return fmt.Errorf("listen for snipe changes: %w", err)
	}
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return fmt.Errorf("listen for snipe changes: %w", err)
			}
			if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
				changed(id)
			}
		}
	})
}
