package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
	"github.com/sniped/sniped/internal/money"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// migrations are the schema, applied in order; PRAGMA user_version records
// how many ran. Append only.
var migrations = []string{
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE items (
		item_no        INTEGER PRIMARY KEY,
		title          TEXT NOT NULL,
		category       TEXT NOT NULL,
		currency       TEXT NOT NULL,
		country        TEXT NOT NULL,
		seller         TEXT NOT NULL,
		seller_score   INTEGER NOT NULL,
		seller_percent REAL NOT NULL,
		shipping_type  TEXT NOT NULL,
		shipping_cost  INTEGER NOT NULL,
		start_price    INTEGER NOT NULL,
		reserve        INTEGER NOT NULL,
		bin_price      INTEGER NOT NULL,
		start_ms       INTEGER NOT NULL,
		end_ms         INTEGER NOT NULL,
		end_reason     TEXT NOT NULL DEFAULT '',
		ended_ms       INTEGER NOT NULL DEFAULT 0,
		bin_buyer      TEXT NOT NULL DEFAULT '',
		removed        INTEGER NOT NULL DEFAULT 0,
		scripted       INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE bids (
		id       INTEGER PRIMARY KEY,
		item_no  INTEGER NOT NULL REFERENCES items(item_no),
		bidder   TEXT NOT NULL,
		max      INTEGER NOT NULL,
		time_ms  INTEGER NOT NULL,
		accepted INTEGER NOT NULL,
		reason   TEXT NOT NULL,
		price    INTEGER NOT NULL
	);
	CREATE INDEX bids_item ON bids(item_no, id);
	CREATE TABLE watch (
		user    TEXT NOT NULL,
		item_no INTEGER NOT NULL,
		seq     INTEGER NOT NULL,
		PRIMARY KEY (user, item_no)
	);
	CREATE TABLE watch_seeded (
		user TEXT PRIMARY KEY
	);`,
}

// openDB opens the simulator's own SQLite file: WAL with synchronous=NORMAL
// survives a killed process (the WAL is in the OS page cache), which is the
// failure the sniper's crash test produces.
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	// cache_size: reads come from memory, so the cache serves only the
	// writes' index pages; and SQLite as modernc builds it shares one page
	// budget among all the process's connections (store/sqlite's
	// readerCacheKiB), which SQLite's default 2 MB would enlarge.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)&_pragma=cache_size(-256)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sim: open %s: %w", path, err)
	}
	// One connection: every write is serialised anyway, and reads come from
	// memory.
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sim: migrate %s: %w", path, err)
	}
	return db, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	for i := version; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// load reads a previously generated marketplace. It reports false when the
// file is new.
func (s *Sim) load(ctx context.Context) (bool, error) {
	var seed string
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'seed'").Scan(&seed)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sim: load meta: %w", err)
	}
	if seed != strconv.FormatInt(s.cfg.Seed, 10) {
		s.log.Warn("simulator state was generated from another seed; keeping it", "stored_seed", seed, "seed", s.cfg.Seed)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT item_no, title, category, currency, country, seller,
		seller_score, seller_percent, shipping_type, shipping_cost, start_price, reserve, bin_price,
		start_ms, end_ms, end_reason, ended_ms, bin_buyer, removed, scripted FROM items ORDER BY item_no`)
	if err != nil {
		return false, fmt.Errorf("sim: load items: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for rows.Next() {
		var (
			ls                               listing
			reason, buyer                    string
			endedMs                          int64
			removed                          bool
			shipCost, start, reserve, binPri int64
		)
		if err := rows.Scan(&ls.ItemNo, &ls.Title, &ls.Category, &ls.Currency, &ls.Country, &ls.Seller,
			&ls.SellerScore, &ls.SellerPercent, &ls.ShippingType, &shipCost, &start, &reserve, &binPri,
			&ls.StartMs, &ls.EndMs, &reason, &endedMs, &buyer, &removed, &ls.Scripted); err != nil {
			rows.Close()
			return false, fmt.Errorf("sim: load items: %w", err)
		}
		ls.ShippingCost, ls.StartPrice, ls.Reserve, ls.BINPrice = money.Amount(shipCost), money.Amount(start), money.Amount(reserve), money.Amount(binPri)
		l := newLot(ls)
		if reason != "" {
			l.auction.Restore(auction.Ending{Reason: market.EndReason(reason), At: time.UnixMilli(endedMs).UTC(), Buyer: buyer})
		}
		l.removed = removed
		s.addLocked(l)
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("sim: load items: %w", err)
	}

	rows, err = s.db.QueryContext(ctx, "SELECT item_no, bidder, max, time_ms, accepted, reason, price FROM bids ORDER BY id")
	if err != nil {
		return false, fmt.Errorf("sim: load bids: %w", err)
	}
	for rows.Next() {
		var (
			itemNo int64
			b      bidRecord
			mx, pr int64
		)
		if err := rows.Scan(&itemNo, &b.Bidder, &mx, &b.TimeMs, &b.Accepted, &b.Reason, &pr); err != nil {
			rows.Close()
			return false, fmt.Errorf("sim: load bids: %w", err)
		}
		b.Max, b.Price = money.Amount(mx), money.Amount(pr)
		l := s.lots[itemNo]
		if l == nil {
			continue
		}
		l.bids = append(l.bids, b)
		if b.Accepted {
			l.auction.Accept(b.Bidder, b.Max, time.UnixMilli(b.TimeMs).UTC())
		}
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("sim: load bids: %w", err)
	}

	rows, err = s.db.QueryContext(ctx, "SELECT user, item_no FROM watch ORDER BY user, seq")
	if err != nil {
		return false, fmt.Errorf("sim: load watch lists: %w", err)
	}
	for rows.Next() {
		var (
			user   string
			itemNo int64
		)
		if err := rows.Scan(&user, &itemNo); err != nil {
			rows.Close()
			return false, fmt.Errorf("sim: load watch lists: %w", err)
		}
		s.watch[user] = append(s.watch[user], itemNo)
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("sim: load watch lists: %w", err)
	}
	rows, err = s.db.QueryContext(ctx, "SELECT user FROM watch_seeded")
	if err != nil {
		return false, fmt.Errorf("sim: load watch lists: %w", err)
	}
	for rows.Next() {
		var user string
		if err := rows.Scan(&user); err != nil {
			rows.Close()
			return false, fmt.Errorf("sim: load watch lists: %w", err)
		}
		s.seeded[user] = true
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("sim: load watch lists: %w", err)
	}
	return true, nil
}

// execer is *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const insertItemSQL = `INSERT INTO items (item_no, title, category, currency, country, seller,
	seller_score, seller_percent, shipping_type, shipping_cost, start_price, reserve, bin_price,
	start_ms, end_ms, scripted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertListing(ctx context.Context, db execer, l *listing) error {
	_, err := db.ExecContext(ctx, insertItemSQL, l.ItemNo, l.Title, l.Category, l.Currency, l.Country, l.Seller,
		l.SellerScore, l.SellerPercent, l.ShippingType, int64(l.ShippingCost), int64(l.StartPrice),
		int64(l.Reserve), int64(l.BINPrice), l.StartMs, l.EndMs, l.Scripted)
	if err != nil {
		return fmt.Errorf("sim: save item %d: %w", l.ItemNo, err)
	}
	return nil
}

// saveListings persists new listings (and, on first start, the seed) in one
// transaction. A no-op in memory.
func (s *Sim) saveListings(ctx context.Context, ls []*listing, first bool) error {
	if s.db == nil {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sim: save items: %w", err)
	}
	defer tx.Rollback()
	for _, l := range ls {
		if err := insertListing(ctx, tx, l); err != nil {
			return err
		}
	}
	if first {
		if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('seed', ?)", strconv.FormatInt(s.cfg.Seed, 10)); err != nil {
			return fmt.Errorf("sim: save seed: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sim: save items: %w", err)
	}
	return nil
}

// saveBid commits one bid. The caller holds the lot's lock, so bids of an
// item are stored in arrival order.
func (s *Sim) saveBid(ctx context.Context, itemNo int64, b bidRecord) error {
	if s.db == nil {
		return nil
	}
	// Not ctx: a bid the marketplace decided must be stored even if the
	// caller has given up waiting.
	_, err := s.db.ExecContext(context.WithoutCancel(ctx),
		"INSERT INTO bids (item_no, bidder, max, time_ms, accepted, reason, price) VALUES (?, ?, ?, ?, ?, ?, ?)",
		itemNo, b.Bidder, int64(b.Max), b.TimeMs, b.Accepted, b.Reason, int64(b.Price))
	if err != nil {
		return fmt.Errorf("sim: save bid on %d: %w", itemNo, err)
	}
	return nil
}

// saveEnd commits an early end or a Buy It Now.
func (s *Sim) saveEnd(ctx context.Context, itemNo int64, reason market.EndReason, endedMs int64, buyer string) error {
	if s.db == nil {
		return nil
	}
	_, err := s.db.ExecContext(context.WithoutCancel(ctx),
		"UPDATE items SET end_reason = ?, ended_ms = ?, bin_buyer = ? WHERE item_no = ?",
		string(reason), endedMs, buyer, itemNo)
	if err != nil {
		return fmt.Errorf("sim: save end of %d: %w", itemNo, err)
	}
	return nil
}

// saveRemoved commits an item's removal (failure injection).
func (s *Sim) saveRemoved(ctx context.Context, itemNo int64, removed bool) error {
	if s.db == nil {
		return nil
	}
	_, err := s.db.ExecContext(ctx, "UPDATE items SET removed = ? WHERE item_no = ?", removed, itemNo)
	if err != nil {
		return fmt.Errorf("sim: save removal of %d: %w", itemNo, err)
	}
	return nil
}

// saveWatch commits additions to a user's watch list, and marks it seeded
// when seeded is true.
func (s *Sim) saveWatch(ctx context.Context, user string, items []int64, firstSeq int, seeded bool) error {
	if s.db == nil {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sim: save watch list: %w", err)
	}
	defer tx.Rollback()
	for i, no := range items {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO watch (user, item_no, seq) VALUES (?, ?, ?)", user, no, firstSeq+i); err != nil {
			return fmt.Errorf("sim: save watch list: %w", err)
		}
	}
	if seeded {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO watch_seeded (user) VALUES (?)", user); err != nil {
			return fmt.Errorf("sim: save watch list: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sim: save watch list: %w", err)
	}
	return nil
}
