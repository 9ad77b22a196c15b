package sniper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// farFuture bounds store scans that want every snipe in a state.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// recover resolves what a previous run left behind, before anything fires:
//
//  1. scheduled snipes whose moment passed more than MissedAfter ago were
//     due while the service was down: settled Missed;
//  2. firing snipes are resolved by asking the marketplace whether the bid
//     exists (placed), else fired late if time remains, never resent
//     blindly;
//  3. placed snipes get their settlement queued.
func (s *Sniper) recover(ctx context.Context) error {
	start := s.marketNow()
	for {
		sns, err := s.st.SnipesInState(ctx, store.StateScheduled, start.Add(-s.cfg.MissedAfter), s.cfg.LoadLimit)
		if err != nil {
			return fmt.Errorf("overdue snipes: %w", err)
		}
		moved := 0
		for _, sn := range sns {
			detail := fmt.Sprintf("It was due at %s UTC; sniped started again at %s UTC.", sn.FireAt.UTC().Format(time.DateTime), start.UTC().Format(time.DateTime))
			if s.record(ctx, sn, []store.State{store.StateScheduled}, store.StateSettled, outcome.Missed, detail, time.Time{}) {
				moved++
			}
		}
		if len(sns) < s.cfg.LoadLimit {
			break
		}
		if moved == 0 {
			return errors.New("overdue snipes: no progress")
		}
	}
	firing, err := s.st.SnipesInState(ctx, store.StateFiring, farFuture, s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("firing snipes: %w", err)
	}
	for _, sn := range firing {
		s.resolveFiring(ctx, sn)
	}
	placed, err := s.st.SnipesInState(ctx, store.StatePlaced, farFuture, s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("placed snipes: %w", err)
	}
	for _, sn := range placed {
		s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), nil)
	}
	if n := len(firing) + len(placed); n > 0 {
		s.log.Info("recovered snipes", "firing", len(firing), "placed", len(placed))
	}
	return nil
}

// resolveFiring settles a snipe found in firing with no goroutine sending
// it: the marketplace says whether the bid arrived.
func (s *Sniper) resolveFiring(ctx context.Context, sn store.Snipe) {
	user, err := s.userName(ctx, sn.AccountID)
	if err != nil {
		return
	}
	bs, err := s.mk.BidState(ctx, user, sn.ItemNo)
	switch {
	case errors.Is(err, market.ErrNotFound):
		s.record(ctx, sn, []store.State{store.StateFiring}, store.StateSettled, outcome.NotFound, "", time.Time{})
	case err != nil:
		// Unknown: leave it firing; the sweep asks again.
		s.log.Warn("resolve firing snipe", "snipe", sn.ID, "err", err)
	case bidLanded(bs, sn):
		code := outcome.Placed
		if !bs.HighBidder {
			code = outcome.Outbid
		}
		if s.record(ctx, sn, []store.State{store.StateFiring}, store.StatePlaced, code, "The bid was confirmed at the marketplace after an interruption.", s.marketNow()) {
			s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), nil)
		}
	case !bs.Ended && s.marketNow().Add(s.cfg.RetryCutoff).Before(sn.Item.End):
		// The bid never left and there is still time: fire it now.
		if err := s.st.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateFiring}, To: store.StateScheduled}); err == nil {
			s.Changed(sn.ID)
		}
	default:
		code, detail := outcome.Missed, "sniped was interrupted while sending this bid and it never reached the marketplace."
		switch c, ok := endedCode(bs.EndReason); {
		case ok:
			code, detail = c, ""
		case sn.Outcome == outcome.MarketDown:
			// send left it firing after unconfirmed failures: now confirmed
			// that the bid never arrived.
			code, detail = outcome.MarketDown, "The marketplace was unavailable until the end and the bid never reached it."
		}
		s.record(ctx, sn, []store.State{store.StateFiring}, store.StateSettled, code, detail, time.Time{})
	}
}
