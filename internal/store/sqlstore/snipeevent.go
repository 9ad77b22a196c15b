package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// snipeFacts is the part of a snipe row that events describe.
type snipeFacts struct {
	accountID, itemNo, bid, price, end int64
	title, currency                    string
}

// factCols are the snipeFacts columns, in dest's order.
const factCols = `account_id, item_no, bid_cents, item_price_cents, item_end_ms, item_title, item_currency`

func (f *snipeFacts) dest() []any {
	return []any{&f.accountID, &f.itemNo, &f.bid, &f.price, &f.end, &f.title, &f.currency}
}

func (f snipeFacts) data(code outcome.Code, message, detail string) store.SnipeEventData {
	return store.SnipeEventData{
		ItemNo: fmt.Sprint(f.itemNo), Title: f.title, Bid: money.Amount(f.bid).Float(), Currency: f.currency,
		CurrentPrice: money.Amount(f.price).Float(), EndTime: clock.FormatUTC(fromMS(f.end)),
		Outcome: int(code), Status: outcome.Of(code).Status, Message: message, Detail: detail,
	}
}

// transitionEmits reports whether a move to `to` with o writes an event:
// every placement, and every final outcome except those the user chose or
// that another of their snipes caused (disabled, another group item won).
func transitionEmits(to store.State, o outcome.Code) bool {
	switch to {
	case store.StatePlaced:
		return true
	case store.StateSettled:
		return o.Final() && o != outcome.Disabled && o != outcome.GroupWon
	}
	return false
}

// emitTransition writes the event of a snipe's move to placed or settled,
// inside the transition's transaction. An accepted bid or a win proves the
// marketplace link works again; a market-auth failure reports a broken
// link once per account until then.
func emitTransition(ctx context.Context, tx execQueryer, f snipeFacts, to store.State, o outcome.Code, detail string, now time.Time) error {
	typ := store.EventSnipeLost
	switch {
	case to == store.StatePlaced:
		typ = store.EventSnipePlaced
	case o == outcome.Won:
		typ = store.EventSnipeWon
	}
	if err := emitJSON(ctx, tx, f.accountID, typ, "", f.data(o, outcome.Of(o).Message, detail), now); err != nil {
		return err
	}
	switch {
	case typ == store.EventSnipePlaced || typ == store.EventSnipeWon:
		_, err := tx.ExecContext(ctx, `UPDATE notify_accounts SET link_broken = 0 WHERE account_id = $1 AND link_broken = 1`, f.accountID)
		return err
	case o == outcome.MarketAuth:
		return emitLinkBroken(ctx, tx, f, detail, now)
	}
	return nil
}

// emitLinkBroken emits market.link_broken unless the account's link is
// already known to be broken. The conditional UPDATE is the lock: of two
// concurrent settlements only one sees link_broken = 0.
func emitLinkBroken(ctx context.Context, tx execQueryer, f snipeFacts, detail string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO notify_accounts (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING`, f.accountID); err != nil {
		return fmt.Errorf("link state: %w", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE notify_accounts SET link_broken = 1 WHERE account_id = $1 AND link_broken = 0`, f.accountID)
	if err != nil {
		return fmt.Errorf("link state: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	msg := "The marketplace rejected sniped's authorization for your account, so your snipes cannot bid. Reconnect your marketplace account in the dashboard."
	return emitJSON(ctx, tx, f.accountID, store.EventMarketLinkBroken, "", f.data(outcome.MarketAuth, msg, detail), now)
}

// emitWarning emits snipe.warning for snipe id, which UpdateItem found
// armed on an item not reported ended, with the price at its maximum. The
// dedup key holds the maximum, so raising the bid re-arms the warning.
func emitWarning(ctx context.Context, tx execQueryer, id int64, f snipeFacts, now time.Time) error {
	msg := fmt.Sprintf("The current price %s %s has reached your maximum %s %s, so this snipe can no longer win. Raise your maximum before the auction ends at %s UTC.",
		money.Amount(f.price), f.currency, money.Amount(f.bid), f.currency, clock.FormatUTC(fromMS(f.end)))
	dedup := fmt.Sprintf("%s:%d:%d", store.EventSnipeWarning, id, f.bid)
	d := f.data(outcome.Pending, msg, "")
	d.Status = "Price Reached Your Maximum"
	return emitJSON(ctx, tx, f.accountID, store.EventSnipeWarning, dedup, d, now)
}

func emitJSON(ctx context.Context, tx execQueryer, accountID int64, typ store.EventType, dedup string, v any, now time.Time) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s payload: %w", typ, err)
	}
	if _, _, err := emit(ctx, tx, store.NewEvent{AccountID: accountID, Type: typ, Data: data, Dedup: dedup, Now: now}); err != nil {
		return fmt.Errorf("%s: %w", typ, err)
	}
	return nil
}
