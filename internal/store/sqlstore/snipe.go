package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// selectSnipeColumns are the columns scanSnipe reads, from snipes s joined with
// bid_groups g.
const selectSnipeColumns = `SELECT s.id, s.account_id, s.item_no, s.bid_cents, s.delay_s, s.enabled, s.forced,
	COALESCE(s.group_id, 0), COALESCE(g.name, ''), s.state, s.outcome, s.outcome_detail,
	s.fire_at_ms, s.placed_at_ms, s.item_title, s.item_currency, s.item_price_cents, s.item_bids,
	s.item_gallery_url, s.item_start_ms, s.item_end_ms, s.item_ended, s.created_ms, s.updated_ms`

// selectSnipes reads snipes with their group's name; append WHERE/ORDER.
const selectSnipes = selectSnipeColumns + `
FROM snipes s LEFT JOIN bid_groups g ON g.id = s.group_id`

// returningSnipe is selectSnipes's column list for an UPDATE of snipes
// (RETURNING cannot join: the group's name comes from a subquery).
const returningSnipe = `id, account_id, item_no, bid_cents, delay_s, enabled, forced,
	COALESCE(group_id, 0), COALESCE((SELECT g.name FROM bid_groups g WHERE g.id = snipes.group_id), ''), state, outcome, outcome_detail,
	fire_at_ms, placed_at_ms, item_title, item_currency, item_price_cents, item_bids,
	item_gallery_url, item_start_ms, item_end_ms, item_ended, created_ms, updated_ms`

// scanSnipe reads a row of selectSnipes. Integers are scanned into int64:
// database/sql converts an int64 for an int destination through a string.
func scanSnipe(row interface{ Scan(...any) error }) (store.Snipe, error) {
	var (
		sn                           store.Snipe
		bid, price, delay, bids      int64
		enabled, forced, ended       int64
		state                        string
		code                         int64
		fireAt, placedAt, start, end int64
		created, updated             int64
	)
	if err := row.Scan(&sn.ID, &sn.AccountID, &sn.ItemNo, &bid, &delay, &enabled, &forced,
		&sn.GroupID, &sn.GroupName, &state, &code, &sn.OutcomeDetail,
		&fireAt, &placedAt, &sn.Item.Title, &sn.Item.Currency, &price, &bids,
		&sn.Item.GalleryURL, &start, &end, &ended, &created, &updated); err != nil {
		return store.Snipe{}, err
	}
	sn.Delay = int(delay)
	sn.Item.Bids = int(bids)
	sn.Bid = money.Amount(bid)
	sn.Enabled = enabled != 0
	sn.Force = forced != 0
	sn.State = store.State(state)
	sn.Outcome = outcome.Code(code)
	sn.FireAt = fromMS(fireAt)
	sn.PlacedAt = fromMS(placedAt)
	sn.Item.CurrentPrice = money.Amount(price)
	sn.Item.Start = fromMS(start)
	sn.Item.End = fromMS(end)
	sn.Item.Ended = ended != 0
	sn.CreatedAt = fromMS(created)
	sn.UpdatedAt = fromMS(updated)
	return sn, nil
}

// yieldRows is how many rows a long read scans between yields: a horizon
// load of 10,000 rows ran for up to 30 ms without giving up its P, and a
// shot due meanwhile waited for one (sniper.SetProcs is the main cure;
// this one holds where an operator chose few Ps). A group commit does not
// yield: it holds the single writer, and every queued write waits on it.
const yieldRows = 64

func querySnipes(ctx context.Context, q queryer, query string, args ...any) ([]store.Snipe, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Snipe
	for rows.Next() {
		sn, err := scanSnipe(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sn)
		if len(out)%yieldRows == 0 {
			runtime.Gosched()
		}
	}
	return out, rows.Err()
}

// fireAtMS is the moment a snipe is due: the item's end minus the delay.
func fireAtMS(end time.Time, delay int) int64 {
	return ms(end) - int64(delay)*1000
}

// insertSnipe creates a snipe; the caller appends its conflict clause.
const insertSnipe = `INSERT INTO snipes (account_id, item_no, bid_cents, delay_s, enabled, forced, group_id,
	state, outcome, outcome_detail, fire_at_ms, placed_at_ms,
	item_title, item_currency, item_price_cents, item_bids, item_gallery_url, item_start_ms, item_end_ms, item_ended,
	created_ms, updated_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`

func snipeArgs(sn store.Snipe) []any {
	it := sn.Item
	return []any{sn.AccountID, sn.ItemNo, int64(sn.Bid), int64(sn.Delay), b2i(sn.Enabled), b2i(sn.Force), nullID(sn.GroupID),
		string(sn.State), int64(sn.Outcome), sn.OutcomeDetail, fireAtMS(it.End, sn.Delay), ms(sn.PlacedAt),
		it.Title, it.Currency, int64(it.CurrentPrice), int64(it.Bids), it.GalleryURL, ms(it.Start), ms(it.End), b2i(it.Ended),
		ms(sn.CreatedAt), ms(sn.UpdatedAt)}
}

// upsertAttempts bounds the insert-or-update loop. A second round is only
// needed when, on PostgreSQL, the row that blocked the insert is deleted
// before the update reaches it.
const upsertAttempts = 3

// UpsertSnipe applies an addBid atomically; see store.SnipeStore.
func (s *Store) UpsertSnipe(ctx context.Context, accountID, itemNo int64, ch store.SnipeChange, now time.Time) (store.Snipe, bool, error) {
	var (
		out     store.Snipe
		created bool
	)
	err := s.inStmtTx(ctx, func(tx txStmts) error {
		var gid int64
		if ch.GroupName != nil && *ch.GroupName != "" {
			var err error
			if gid, err = groupID(ctx, tx, accountID, *ch.GroupName); err != nil {
				return err
			}
		}
		update := ch.Exists // an edit: try the update first
		for range upsertAttempts {
			var (
				id       int64
				inserted bool
				err      error
			)
			if !update {
				if id, inserted, err = insertNew(ctx, tx, accountID, itemNo, ch, gid, now); err != nil {
					return err
				}
			}
			if !inserted {
				var found bool
				if id, found, err = updateExisting(ctx, tx, accountID, itemNo, ch, gid, now); err != nil {
					return err
				}
				if !found {
					update = false
					continue // deleted since it was seen: try the insert (again)
				}
			}
			created = inserted
			out, err = scanSnipe(tx.QueryRowContext(ctx, selectSnipes+` WHERE s.id = $1`, id))
			return err
		}
		return fmt.Errorf("snipe kept vanishing: %w", store.ErrConflict)
	})
	if err != nil {
		return store.Snipe{}, false, fmt.Errorf("upsert snipe %d: %w", itemNo, err)
	}
	return out, created, nil
}

// insertNew creates the snipe unless (account, item) exists; ON CONFLICT
// makes two concurrent first addBids agree on one row.
func insertNew(ctx context.Context, tx execQueryer, accountID, itemNo int64, ch store.SnipeChange, gid int64, now time.Time) (int64, bool, error) {
	sn := store.Snipe{
		AccountID: accountID,
		ItemNo:    itemNo,
		Delay:     store.DefaultDelay,
		Enabled:   true,
		GroupID:   gid,
		State:     store.StateScheduled,
		Outcome:   outcome.Pending,
		Item:      ch.Item,
		CreatedAt: now,
		UpdatedAt: now,
	}
	if ch.Bid != nil {
		sn.Bid = *ch.Bid
	}
	if ch.Delay != nil {
		sn.Delay = *ch.Delay
	}
	if ch.Enabled != nil {
		sn.Enabled = *ch.Enabled
	}
	if ch.Force != nil {
		sn.Force = *ch.Force
	}
	var id int64
	err := tx.QueryRowContext(ctx, insertSnipe+` ON CONFLICT (account_id, item_no) DO NOTHING RETURNING id`,
		snipeArgs(sn)...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("insert: %w", err)
	}
	return id, true, nil
}

// updateExisting patches an existing snipe as a compare-and-set on its
// state, so an edit and the sniper's Transition to firing can never both
// succeed. found is false when the row no longer exists.
func updateExisting(ctx context.Context, tx execQueryer, accountID, itemNo int64, ch store.SnipeChange, gid int64, now time.Time) (id int64, found bool, err error) {
	it := ch.Item
	args := []any{accountID, itemNo, optAmount(ch.Bid), optInt(ch.Delay), optBool(ch.Enabled), optBool(ch.Force),
		it.Title, it.Currency, int64(it.CurrentPrice), int64(it.Bids), it.GalleryURL, ms(it.Start), ms(it.End), b2i(it.Ended),
		ms(now)}
	var q strings.Builder
	q.WriteString(`UPDATE snipes SET
	bid_cents = COALESCE($3, bid_cents), delay_s = COALESCE($4, delay_s),
	enabled = COALESCE($5, enabled), forced = COALESCE($6, forced),
	item_title = $7, item_currency = $8, item_price_cents = $9, item_bids = $10, item_gallery_url = $11,
	item_start_ms = $12, item_end_ms = $13, item_ended = $14, updated_ms = $15,
	fire_at_ms = $13 - COALESCE($4, delay_s) * 1000`)
	if ch.GroupName != nil {
		args = append(args, nullID(gid))
		q.WriteString(`, group_id = $` + strconv.Itoa(len(args)))
	}
	if !it.Ended && it.End.After(now) {
		// Re-arm a settled snipe on a live item. Every CASE sees the old state.
		q.WriteString(`,
	state = CASE WHEN state = 'settled' THEN 'scheduled' ELSE state END,
	outcome = CASE WHEN state = 'settled' THEN 0 ELSE outcome END,
	outcome_detail = CASE WHEN state = 'settled' THEN '' ELSE outcome_detail END,
	placed_at_ms = CASE WHEN state = 'settled' THEN 0 ELSE placed_at_ms END`)
	}
	q.WriteString(`
WHERE account_id = $1 AND item_no = $2 AND state IN ('scheduled', 'settled') RETURNING id`)
	err = tx.QueryRowContext(ctx, q.String(), args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		var state string
		err := tx.QueryRowContext(ctx,
			`SELECT state FROM snipes WHERE account_id = $1 AND item_no = $2`, accountID, itemNo).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("update: %w", err)
		}
		return 0, false, fmt.Errorf("the bid has already been sent (state %s): %w", state, store.ErrConflict)
	}
	if err != nil {
		return 0, false, fmt.Errorf("update: %w", err)
	}
	return id, true, nil
}

func optAmount(p *money.Amount) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func optInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func optBool(p *bool) any {
	if p == nil {
		return nil
	}
	return b2i(*p)
}

// Snipe returns one of the account's snipes by item number.
func (s *Store) Snipe(ctx context.Context, accountID, itemNo int64) (store.Snipe, error) {
	sn, err := scanSnipe(s.r.QueryRowContext(ctx,
		selectSnipes+` WHERE s.account_id = $1 AND s.item_no = $2`, accountID, itemNo))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Snipe{}, fmt.Errorf("snipe %d: %w", itemNo, store.ErrNotFound)
	}
	if err != nil {
		return store.Snipe{}, fmt.Errorf("snipe %d: %w", itemNo, err)
	}
	return sn, nil
}

// SnipeByID returns a snipe by ID, not scoped by account (sniper only).
func (s *Store) SnipeByID(ctx context.Context, id int64) (store.Snipe, error) {
	sn, err := scanSnipe(s.r.QueryRowContext(ctx, selectSnipes+` WHERE s.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Snipe{}, fmt.Errorf("snipe id %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Snipe{}, fmt.Errorf("snipe id %d: %w", id, err)
	}
	return sn, nil
}

// DeleteSnipe removes a snipe unless its bid is out (firing or placed).
func (s *Store) DeleteSnipe(ctx context.Context, accountID, itemNo int64) error {
	res, err := s.w.ExecContext(ctx,
		`DELETE FROM snipes WHERE account_id = $1 AND item_no = $2 AND state NOT IN ('firing', 'placed')`,
		accountID, itemNo)
	if err != nil {
		return fmt.Errorf("delete snipe %d: %w", itemNo, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("delete snipe %d: %w", itemNo, err)
	}
	if n > 0 {
		return nil
	}
	var state string
	err = s.w.QueryRowContext(ctx,
		`SELECT state FROM snipes WHERE account_id = $1 AND item_no = $2`, accountID, itemNo).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("delete snipe %d: %w", itemNo, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete snipe %d: %w", itemNo, err)
	}
	return fmt.Errorf("delete snipe %d: the bid has already been sent (state %s): %w", itemNo, state, store.ErrConflict)
}

// stateCond selects the snipes in state, with $1 bound to the stored
// state it returns and $2 to the upper bound of their FireAt: scheduled
// means armed, unsent (store.StateUnsent) the scheduled snipes with a bid
// that are not, and unconfirmed (store.StateUnconfirmed) the settled
// snipes whose outcome still awaits the marketplace's answer.
func stateCond(state store.State) (cond string, stored string) {
	switch state {
	case store.StateUnconfirmed:
		// The CAST types $2 as BIGINT for PostgreSQL, which would infer
		// INTEGER from the subtraction alone.
		return `s.state = $1 AND s.outcome = ` + strconv.Itoa(int(outcome.MarketDown)) +
			` AND s.outcome_detail LIKE '` + store.UnconfirmedDetail + `%'` +
			` AND s.fire_at_ms >= CAST($2 AS BIGINT) - ` + strconv.FormatInt(store.UnconfirmedFor.Milliseconds(), 10), string(store.StateSettled)
	case store.StateScheduled:
		return `s.state = $1 AND s.enabled = 1 AND s.bid_cents > 0 AND s.item_ended = 0`, string(state)
	case store.StateUnsent:
		return `s.state = $1 AND s.bid_cents > 0 AND (s.enabled = 0 OR s.item_ended = 1)`, string(store.StateScheduled)
	}
	return `s.state = $1`, string(state)
}

// SnipesInState returns up to limit snipes in state due before `before`,
// by FireAt then ID (stateCond).
func (s *Store) SnipesInState(ctx context.Context, state store.State, before time.Time, limit int) ([]store.Snipe, error) {
	cond, stored := stateCond(state)
	out, err := querySnipes(ctx, s.r, selectSnipes+` WHERE `+cond+` AND s.fire_at_ms < $2 ORDER BY s.fire_at_ms, s.id LIMIT $3`,
		stored, ms(before), limitOrAll(limit))
	if err != nil {
		return nil, fmt.Errorf("snipes in state %s: %w", state, err)
	}
	return out, nil
}

// SnipesInPartitions is SnipesInState for the accounts of some partitions.
func (s *Store) SnipesInPartitions(ctx context.Context, q store.PartitionQuery) ([]store.Snipe, error) {
	if len(q.Only) == 0 {
		return nil, nil
	}
	if q.Partitions <= 0 {
		return nil, fmt.Errorf("snipes in partitions: %d partitions: must be positive", q.Partitions)
	}
	cond, stored := stateCond(q.State)
	args := []any{stored, ms(q.Before), limitOrAll(q.Limit), q.Partitions}
	in := make([]string, len(q.Only))
	for i, p := range q.Only {
		args = append(args, p)
		in[i] = "$" + strconv.Itoa(len(args))
	}
	cond += ` AND s.fire_at_ms < $2 AND s.account_id % $4 IN (` + strings.Join(in, ", ") + `)`
	out, err := querySnipes(ctx, s.r, selectSnipes+` WHERE `+cond+` ORDER BY s.fire_at_ms, s.id LIMIT $3`, args...)
	if err != nil {
		return nil, fmt.Errorf("snipes in state %s of partitions %v: %w", q.State, q.Only, err)
	}
	return out, nil
}

// Transition moves a snipe between states as one compare-and-set UPDATE.
// A move to placed or settled also writes its event (emitTransition) in
// the same transaction. Concurrent Transitions are committed together
// (groupCommit); a durable one then waits for one shared sync.
func (s *Store) Transition(ctx context.Context, p store.TransitionParams) error {
	if err := s.commits.do(ctx, p); err != nil {
		return err
	}
	if p.Durable && s.sync != nil {
		if err := s.sync(ctx); err != nil {
			return fmt.Errorf("transition snipe id %d: sync: %w", p.ID, err)
		}
	}
	return nil
}

// transitions runs a group of Transitions in one transaction. A refused
// compare-and-set (ErrConflict, ErrNotFound) is that write's result and
// the others go on; any other error rolls the group back, and each write
// is then tried alone, so that one failing write fails only itself.
func (s *Store) transitions(ctx context.Context, ps []store.TransitionParams) []error {
	errs := make([]error, len(ps))
	if len(ps) == 1 {
		errs[0] = s.transitionAlone(ctx, ps[0])
		return errs
	}
	err := s.inStmtTx(ctx, func(tx txStmts) error {
		now := s.clk.Now()
		for i, p := range ps {
			errs[i] = transitionEmitting(ctx, tx, p, now)
			if errs[i] != nil && !refused(errs[i]) {
				return errs[i]
			}
		}
		return nil
	})
	if err == nil {
		return errs
	}
	for i, p := range ps {
		errs[i] = s.transitionAlone(ctx, p)
	}
	return errs
}

// refused reports whether a transition's error is a refused
// compare-and-set, which leaves its transaction usable.
func refused(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound)
}

// transitionAlone is one Transition in its own transaction (or as one
// statement when it writes no event).
func (s *Store) transitionAlone(ctx context.Context, p store.TransitionParams) error {
	if !transitionEmits(p.To, p.Outcome) {
		return transition(ctx, s.w, p, nil)
	}
	return s.inStmtTx(ctx, func(tx txStmts) error {
		return transitionEmitting(ctx, tx, p, s.clk.Now())
	})
}

// transitionEmitting is transition plus, for a move to placed or settled,
// its event, on tx.
func transitionEmitting(ctx context.Context, tx txStmts, p store.TransitionParams, now time.Time) error {
	if !transitionEmits(p.To, p.Outcome) {
		return transition(ctx, tx, p, nil)
	}
	var f snipeFacts
	if err := transition(ctx, tx, p, &f); err != nil {
		return err
	}
	return emitTransition(ctx, tx, f, p.To, p.Outcome, p.Detail, now)
}

// transition is Transition's compare-and-set on ex (the pool or a
// transaction). With facts, the UPDATE also reads back what the
// transition's event describes.
func transition(ctx context.Context, ex execQueryer, p store.TransitionParams, facts *snipeFacts) error {
	id := p.ID
	args := []any{id, string(p.To), int64(p.Outcome), p.Detail}
	set := `state = $2, outcome = $3, outcome_detail = $4`
	if !p.PlacedAt.IsZero() {
		args = append(args, ms(p.PlacedAt))
		set += `, placed_at_ms = $` + strconv.Itoa(len(args))
	}
	if p.ItemEnded {
		set += `, item_ended = 1`
		if p.FinalPrice > 0 {
			args = append(args, int64(p.FinalPrice))
			set += `, item_price_cents = $` + strconv.Itoa(len(args))
		}
	}
	where := `id = $1`
	if p.IfBid != 0 {
		args = append(args, int64(p.IfBid))
		where += ` AND bid_cents = $` + strconv.Itoa(len(args))
	}
	if f := p.Fence; f != nil {
		args = append(args, f.Partitions, f.Partition, f.Holder, f.Epoch)
		n := len(args)
		where += fmt.Sprintf(` AND account_id %% $%d = $%d AND EXISTS (SELECT 1 FROM sniper_leases l WHERE l.part = $%d AND l.holder = $%d AND l.epoch = $%d)`,
			n-3, n-2, n-2, n-1, n)
	}
	in := make([]string, len(p.From))
	for i, st := range p.From {
		args = append(args, string(st))
		in[i] = "$" + strconv.Itoa(len(args))
	}
	var n int64
	update := `UPDATE snipes SET ` + set + ` WHERE ` + where + ` AND state IN (` + strings.Join(in, ", ") + `)`
	switch {
	case len(in) == 0:
	case p.Into != nil && facts == nil:
		sn, err := scanSnipe(ex.QueryRowContext(ctx, update+` RETURNING `+returningSnipe, args...))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("transition snipe id %d: %w", id, err)
		}
		if err == nil {
			*p.Into, n = sn, 1
		}
	case facts != nil:
		err := ex.QueryRowContext(ctx, update+` RETURNING `+factCols, args...).Scan(facts.dest()...)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("transition snipe id %d: %w", id, err)
		}
		if err == nil {
			n = 1
		}
	default:
		res, err := ex.ExecContext(ctx, update, args...)
		if err != nil {
			return fmt.Errorf("transition snipe id %d: %w", id, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("transition snipe id %d: %w", id, err)
		}
	}
	if n > 0 {
		return nil
	}
	var state string
	var bid, account int64
	err := ex.QueryRowContext(ctx, `SELECT state, bid_cents, account_id FROM snipes WHERE id = $1`, id).Scan(&state, &bid, &account)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("transition snipe id %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("transition snipe id %d: %w", id, err)
	}
	if f := p.Fence; f != nil {
		if int(account%int64(f.Partitions)) != f.Partition {
			return fmt.Errorf("transition snipe id %d: its account %d is not in partition %d of %d", id, account, f.Partition, f.Partitions)
		}
		var held int
		if err := ex.QueryRowContext(ctx, `SELECT COUNT(*) FROM sniper_leases WHERE part = $1 AND holder = $2 AND epoch = $3`,
			f.Partition, f.Holder, f.Epoch).Scan(&held); err != nil {
			return fmt.Errorf("transition snipe id %d: %w", id, err)
		}
		if held == 0 {
			return fmt.Errorf("transition snipe id %d to %s: partition %d epoch %d of %s: %w", id, p.To, f.Partition, f.Epoch, f.Holder, store.ErrFenced)
		}
	}
	if p.IfBid != 0 && bid != int64(p.IfBid) {
		return fmt.Errorf("transition snipe id %d to %s: its bid changed: %w", id, p.To, store.ErrConflict)
	}
	return fmt.Errorf("transition snipe id %d to %s: it is %s: %w", id, p.To, state, store.ErrConflict)
}

// UpdateItem stores a fresher item snapshot and recomputes FireAt. When
// the new price has reached the maximum of an armed snipe on a running
// item, it emits snipe.warning in the same transaction (once per snipe
// and maximum).
func (s *Store) UpdateItem(ctx context.Context, id int64, it store.ItemSnapshot) error {
	err := s.inStmtTx(ctx, func(tx txStmts) error {
		var f snipeFacts
		var state string
		var enabled, ended int64
		err := tx.QueryRowContext(ctx, `UPDATE snipes SET
	item_title = $2, item_currency = $3, item_price_cents = $4, item_bids = $5, item_gallery_url = $6,
	item_start_ms = $7, item_end_ms = $8, item_ended = $9, fire_at_ms = $8 - delay_s * 1000
WHERE id = $1 RETURNING `+factCols+`, state, enabled, item_ended`,
			id, it.Title, it.Currency, int64(it.CurrentPrice), int64(it.Bids), it.GalleryURL, ms(it.Start), ms(it.End), b2i(it.Ended)).
			Scan(append(f.dest(), &state, &enabled, &ended)...)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if store.State(state) != store.StateScheduled || enabled == 0 || ended != 0 || f.bid <= 0 || f.price < f.bid {
			return nil
		}
		return emitWarning(ctx, tx, id, f, s.clk.Now())
	})
	if err != nil {
		return fmt.Errorf("update item of snipe id %d: %w", id, err)
	}
	return nil
}
