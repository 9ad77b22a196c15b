package sniper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// settleRetry is how soon a settlement that could not finish is retried.
const settleRetry = 5 * time.Second

// settle learns a placed snipe's result after its item ended and stores it.
func (s *Sniper) settle(ctx context.Context, id int64) {
	var sn store.Snipe
	if p := s.sched.settleDone(id); p != nil {
		sn = *p // as placed; the compare-and-set below checks it still is
	} else {
		var err error
		sn, err = s.st.SnipeByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && sn.State != store.StatePlaced) {
			return
		}
		if err != nil {
			s.sched.settleAt(id, s.clk.Now().Add(settleRetry), nil)
			return
		}
	}
	retry := func(err error) {
		at := s.clk.Now().Add(settleRetry) // refused: no point asking faster
		if market.Transient(err) {
			at = s.health.retryAt(s.clk.Now())
		}
		s.sched.settleAt(id, at, &sn)
	}
	user, err := s.userName(ctx, sn.AccountID)
	if err != nil {
		s.sched.settleAt(id, s.clk.Now().Add(settleRetry), &sn)
		return
	}
	// While the marketplace fails, retries share one backoff (backoff.go).
	if ok, at := s.health.admit(s.clk.Now()); !ok {
		s.sched.settleAt(id, at, &sn)
		return
	}
	bs, err := s.mk.BidState(ctx, user, sn.ItemNo)
	s.health.report(s.clk.Now(), err)
	switch {
	case errors.Is(err, market.ErrNotFound):
		s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StatePlaced}, To: store.StateSettled, Outcome: outcome.NotFound})
		return
	case err != nil:
		retry(err)
		return
	case !bs.Ended:
		// Not over yet on the marketplace: our snapshot's end may be
		// stale. Refresh it and come back at the real end.
		at := s.clk.Now().Add(settleRetry)
		if it, err := s.mk.Item(ctx, sn.ItemNo); err == nil && !it.End.Equal(sn.Item.End) {
			sn.Item = snapshotOf(sn.Item, it)
			_ = s.st.UpdateItem(ctx, id, sn.Item)
			at = s.toLocal(it.End).Add(s.cfg.SettleGrace)
		}
		s.sched.settleAt(id, at, &sn)
		return
	}
	code, detail := result(sn, bs)
	s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StatePlaced}, To: store.StateSettled, Outcome: code, Detail: detail, ItemEnded: true, FinalPrice: bs.CurrentPrice})
}

// result maps a user's standing on an ended item to the snipe's outcome.
func result(sn store.Snipe, bs market.BidState) (outcome.Code, string) {
	cur := sn.Item.Currency
	switch {
	case bs.Won:
		return outcome.Won, fmt.Sprintf("Winning price %s %s; your maximum was %s.", bs.CurrentPrice, cur, sn.Bid)
	case bs.EndReason == market.EndedCancelled || bs.EndReason == market.EndedSold || bs.EndReason == market.EndedBuyItNow:
		c, _ := endedCode(bs.EndReason)
		return c, ""
	case bs.HighBidder && !bs.ReserveMet:
		return outcome.ReserveNotMet, fmt.Sprintf("Your maximum %s %s was the highest but below the reserve.", sn.Bid, cur)
	default:
		return outcome.Outbid, fmt.Sprintf("Final price %s %s; your maximum was %s.", bs.CurrentPrice, cur, sn.Bid)
	}
}

// settleUnsent settles a scheduled snipe that will not be sent, once its
// item is over. A disabled one is settled Disabled (or armed again if it
// was re-enabled meanwhile). One whose item is stored as ended (pre-flight
// saw the end, and the process stopped or the store failed before the
// snipe was settled) gets the marketplace's account of the end.
func (s *Sniper) settleUnsent(ctx context.Context, id int64) {
	s.sched.unsentDone(id)
	sn, err := s.st.SnipeByID(ctx, id)
	if err != nil || sn.State != store.StateScheduled || sn.Bid <= 0 {
		return
	}
	if armed(sn) {
		s.consider(sn)
		return
	}
	if !sn.Item.Ended && s.marketNow().Before(sn.Item.End) {
		s.sched.unsentAt(id, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace))
		return
	}
	if !sn.Enabled {
		s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.Disabled, ItemEnded: true})
		return
	}
	s.settleEnded(ctx, sn)
}

// settleEnded settles an enabled snipe, never sent, whose item is stored as
// ended: with how the marketplace says the auction ended, asked again
// since the reason was not stored. Lookups that keep failing end
// resolveGiveUp after the end with MarketDown, saying so.
func (s *Sniper) settleEnded(ctx context.Context, sn store.Snipe) {
	retry := func(at time.Time) {
		if s.marketNow().Before(sn.Item.End.Add(resolveGiveUp)) {
			s.sched.unsentAt(sn.ID, at)
			return
		}
		s.settleScheduled(ctx, sn, outcome.MarketDown, fmt.Sprintf("The auction ended at %s UTC before the bid was sent, and the marketplace could not be reached to say how it ended.", sn.Item.End.UTC().Format(time.DateTime)))
	}
	if ok, at := s.health.admit(s.clk.Now()); !ok {
		retry(at)
		return
	}
	it, err := s.mk.Item(ctx, sn.ItemNo)
	s.health.report(s.clk.Now(), err)
	switch {
	case errors.Is(err, market.ErrNotFound):
		s.settleScheduled(ctx, sn, outcome.NotFound, "")
	case err != nil:
		retry(s.clk.Now().Add(settleRetry))
	case !it.Ended && it.EndReason == market.Running:
		// The stored end was wrong (the marketplace's clock stepped, say):
		// the snipe is armed again on the fresh snapshot.
		if err := s.st.UpdateItem(ctx, sn.ID, snapshotOf(sn.Item, it)); err != nil {
			retry(s.clk.Now().Add(settleRetry))
			return
		}
		s.Changed(sn.ID)
	default:
		if code, ok := endedCode(it.EndReason); ok {
			s.settleScheduled(ctx, sn, code, "")
			return
		}
		s.settleScheduled(ctx, sn, outcome.Missed, fmt.Sprintf("It was due at %s UTC; the auction ended at %s UTC before sniped sent the bid (sniped was not running, or could not store the snipe's state).", sn.FireAt.UTC().Format(time.DateTime), it.End.UTC().Format(time.DateTime)))
	}
}

// sweepLoop periodically catches what the in-memory schedule cannot: placed
// snipes past their end (e.g. placed before a restart) and firing snipes no
// goroutine owns (e.g. a store write failed after the send).
func (s *Sniper) sweepLoop(ctx context.Context) {
	n := 0
	clock.Repeat(ctx, s.clk, s.cfg.Sweep, func() time.Duration {
		if err := s.sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("sweep", "err", err)
		}
		if n%2 == 0 {
			if err := s.sweepUnsent(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("sweep unsent snipes", "err", err)
			}
		}
		n++
		return s.cfg.Sweep
	})
}

// sweepUnsent settles the scheduled snipes that will not be sent (disabled,
// or their item stored as ended) once their items are over: the horizon
// scans return armed snipes only, so such a snipe left by a restart or a
// failed write is found here. It also asks again about the abandoned
// snipes (recheck).
func (s *Sniper) sweepUnsent(ctx context.Context) error {
	sns, err := s.st.SnipesInState(ctx, store.StateUnsent, s.marketNow(), s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("unsent snipes: %w", err)
	}
	for _, sn := range sns {
		s.sched.unsentAt(sn.ID, s.clk.Now())
	}
	for _, id := range s.unconfirmedIDs() {
		sn, err := s.st.SnipeByID(ctx, id)
		if err != nil || !s.abandoned(sn) {
			s.confirmed(id)
			continue
		}
		s.trySpawn(ctx, s.bg, func(ctx context.Context) { s.recheck(lowPriority(ctx), sn) })
	}
	return nil
}

func (s *Sniper) sweep(ctx context.Context) error {
	// Snipes never sent while their auction ran (the loader skips ended
	// items), e.g. because the store was unavailable at their moment.
	if err := s.settleOverdue(ctx, "sniped could not send it in time (the service or its database was unavailable)"); err != nil {
		return err
	}
	now := s.marketNow()
	placed, err := s.st.SnipesInState(ctx, store.StatePlaced, now, s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("placed snipes: %w", err)
	}
	for _, sn := range placed {
		if now.After(sn.Item.End.Add(s.cfg.SettleGrace)) {
			s.sched.settleAt(sn.ID, s.clk.Now(), nil)
		}
	}
	firing, err := s.st.SnipesInState(ctx, store.StateFiring, now.Add(-s.cfg.Sweep), s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("firing snipes: %w", err)
	}
	for _, sn := range firing {
		if !s.sched.inFlight(sn.ID) {
			s.resolve(sn)
		}
	}
	return nil
}
