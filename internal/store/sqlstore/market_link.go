package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sniped/sniped/internal/store"
)

const marketLinkCols = `account_id, market, market_user, sealed_token, token_expires_ms, linked_ms`

// SetMarketLink creates or replaces the account's marketplace link.
func (s *Store) SetMarketLink(ctx context.Context, l store.MarketLink) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Checking the account first makes an unknown one ErrNotFound on
		// both engines, rather than each engine's foreign-key error.
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE id = $1`, l.AccountID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO market_links (`+marketLinkCols+`) VALUES ($1, $2, $3, $4, $5, $6)
			 ON CONFLICT (account_id) DO UPDATE SET market = excluded.market, market_user = excluded.market_user,
			   sealed_token = excluded.sealed_token, token_expires_ms = excluded.token_expires_ms, linked_ms = excluded.linked_ms`,
			l.AccountID, l.Market, l.User, l.SealedToken, ms(l.TokenExpires), ms(l.LinkedAt))
		if err != nil {
			return err
		}
		// A new link is news to market.link_broken: the next failure is
		// reported again (snipeevent.go).
		_, err = tx.ExecContext(ctx, `UPDATE notify_accounts SET link_broken = 0 WHERE account_id = $1`, l.AccountID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set market link of account %d: %w", l.AccountID, err)
	}
	return nil
}

// MarketLink returns the account's marketplace link.
func (s *Store) MarketLink(ctx context.Context, accountID int64) (store.MarketLink, error) {
	var (
		l               store.MarketLink
		expires, linked int64
	)
	err := s.r.QueryRowContext(ctx, `SELECT `+marketLinkCols+` FROM market_links WHERE account_id = $1`, accountID).
		Scan(&l.AccountID, &l.Market, &l.User, &l.SealedToken, &expires, &linked)
	if errors.Is(err, sql.ErrNoRows) {
		return store.MarketLink{}, fmt.Errorf("market link of account %d: %w", accountID, store.ErrNotFound)
	}
	if err != nil {
		return store.MarketLink{}, fmt.Errorf("market link of account %d: %w", accountID, err)
	}
	l.TokenExpires, l.LinkedAt = fromMS(expires), fromMS(linked)
	return l, nil
}

// DeleteMarketLink removes the account's marketplace link.
func (s *Store) DeleteMarketLink(ctx context.Context, accountID int64) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM market_links WHERE account_id = $1`, accountID)
	if err != nil {
		return fmt.Errorf("delete market link of account %d: %w", accountID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("delete market link of account %d: %w", accountID, err)
	}
	if n == 0 {
		return fmt.Errorf("delete market link of account %d: %w", accountID, store.ErrNotFound)
	}
	return nil
}
