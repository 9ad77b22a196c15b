package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// ListEntries returns one page of the account's listing and the total
// count before paging, reading only an entry's columns (getUserItems).
func (s *Store) ListEntries(ctx context.Context, accountID int64, q store.ListQuery) ([]store.ListEntry, int, error) {
	now := ms(q.Now)
	cut := ms(q.Now.Add(-store.ArchiveAge))
	args := []any{accountID}
	where := []string{`s.account_id = $1`}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	// "Ended" is the flag or the end time having passed.
	switch q.Filter {
	case store.FilterWatched:
		where = append(where, `s.bid_cents = 0`, `s.item_ended = 0`, `s.item_end_ms > `+arg(now))
	case store.FilterCurrent:
		where = append(where, `s.bid_cents > 0`, `s.item_ended = 0`, `s.item_end_ms > `+arg(now))
	case store.FilterCompleted:
		where = append(where, `(s.item_ended = 1 OR s.item_end_ms <= `+arg(now)+`)`, `s.item_end_ms > `+arg(cut))
	case store.FilterArchive:
		where = append(where, `(s.item_ended = 1 OR s.item_end_ms <= `+arg(now)+`)`, `s.item_end_ms <= `+arg(cut))
	case "":
	default:
		return nil, 0, fmt.Errorf("list entries: unknown filter %q", q.Filter)
	}
	if !q.ShowWon {
		where = append(where, `s.outcome <> `+strconv.Itoa(int(outcome.Won)))
	}
	cond := strings.Join(where, " AND ")

	// The count's arguments are the condition's, before LIMIT and OFFSET.
	countArgs := args
	col := "s.item_end_ms"
	if q.OrderBy == "bids" {
		col = "s.item_bids"
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	// LIMIT and OFFSET are cast: SQLite re-prepares a statement whose bare
	// LIMIT parameter is re-bound, which cost a fifth of getUserItems.
	// A limited page also carries the total as an uncorrelated subquery,
	// which both engines evaluate once per statement: one round trip
	// instead of two, on one snapshot; snipes_account_list covers it.
	total := "0"
	if q.Limit > 0 {
		total = `(SELECT COUNT(*) FROM snipes s WHERE ` + cond + `)`
	}
	query := selectEntryColumns + `, ` + total + ` FROM snipes s LEFT JOIN bid_groups g ON g.id = s.group_id WHERE ` + cond +
		` ORDER BY ` + col + dir + `, s.item_no` + dir +
		` LIMIT CAST(` + arg(limitOrAll(q.Limit)) + ` AS BIGINT) OFFSET CAST(` + arg(int64(max(q.Offset, 0))) + ` AS BIGINT)`
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list entries: %w", err)
	}
	defer rows.Close()
	var (
		page = make([]store.ListEntry, 0, min(max(q.Limit, 0), 100))
		n    int64
		sc   entryScanner
	)
	for rows.Next() {
		v, err := sc.scan(rows, &n)
		if err != nil {
			return nil, 0, fmt.Errorf("list entries: %w", err)
		}
		page = append(page, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list entries: %w", err)
	}
	switch {
	case len(page) > 0 && q.Limit > 0:
		return page, int(n), nil
	case len(page) > 0 || q.Offset <= 0:
		// The whole listing (no limit), or nothing at all.
		return page, max(q.Offset, 0) + len(page), nil
	}
	// An empty page past the end: count on its own.
	var count int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM snipes s WHERE `+cond, countArgs...).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("list entries: count: %w", err)
	}
	return page, count, nil
}

// selectEntryColumns are the columns of a store.ListEntry, in
// entryScanner's order; the listing's total follows them.
const selectEntryColumns = `SELECT s.item_no, s.bid_cents, s.delay_s, s.enabled, s.forced,
	COALESCE(s.group_id, 0), COALESCE(g.name, ''), s.outcome, s.outcome_detail, s.fire_at_ms,
	s.item_title, s.item_currency, s.item_price_cents, s.item_bids, s.item_gallery_url,
	s.item_start_ms, s.item_end_ms, s.item_ended`

// entryCols is how many columns a listing row has: the entry's and the total.
const entryCols = 19

// entryScanner reads listing rows. It scans into *any, which database/sql
// fills with the driver's value as is, where an *int64 destination costs
// a conversion by reflection per column; its destinations are allocated
// once per listing instead of once per row.
type entryScanner struct {
	vals [entryCols]any
	dest []any
}

func (sc *entryScanner) scan(rows *sql.Rows, total *int64) (store.ListEntry, error) {
	if sc.dest == nil {
		sc.dest = make([]any, entryCols)
		for i := range sc.dest {
			sc.dest[i] = &sc.vals[i]
		}
	}
	if err := rows.Scan(sc.dest...); err != nil {
		return store.ListEntry{}, err
	}
	r := valueReader{vals: sc.vals[:]}
	e := store.ListEntry{
		ItemNo:        r.int64(),
		Bid:           money.Amount(r.int64()),
		Delay:         int(r.int64()),
		Enabled:       r.int64() != 0,
		Force:         r.int64() != 0,
		GroupID:       r.int64(),
		GroupName:     r.string(),
		Outcome:       outcome.Code(r.int64()),
		OutcomeDetail: r.string(),
		FireAt:        fromMS(r.int64()),
	}
	e.Item = store.ItemSnapshot{
		Title:        r.string(),
		Currency:     r.string(),
		CurrentPrice: money.Amount(r.int64()),
		Bids:         int(r.int64()),
		GalleryURL:   r.string(),
		Start:        fromMS(r.int64()),
		End:          fromMS(r.int64()),
		Ended:        r.int64() != 0,
	}
	*total = r.int64()
	if r.err != nil {
		return store.ListEntry{}, r.err
	}
	return e, nil
}

// valueReader reads driver values in column order; the first value of an
// unexpected type is kept as err.
type valueReader struct {
	vals []any
	i    int
	err  error
}

func (r *valueReader) next() any {
	v := r.vals[r.i]
	r.i++
	return v
}

func (r *valueReader) fail(v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("column %d: %T, want %s", r.i-1, v, want)
	}
}

// int64 reads an integer column (both drivers give int64).
func (r *valueReader) int64() int64 {
	v := r.next()
	n, ok := v.(int64)
	if !ok {
		r.fail(v, "an integer")
	}
	return n
}

// string reads a text column (string; []byte from a driver that gives
// text that way).
func (r *valueReader) string() string {
	switch v := r.next().(type) {
	case string:
		return v
	case []byte:
		return string(v)
	default:
		r.fail(v, "text")
		return ""
	}
}
