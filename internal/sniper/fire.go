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

// Retry backoff for transient marketplace failures.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// storeTimeout bounds the store writes that must happen even while the
// sniper shuts down (reverting a firing mark, recording a sent bid).
const storeTimeout = 5 * time.Second

// fire owns one snipe from ArmLead before its shot: it marks it firing
// (the compare-and-set that makes the shot and a user's edit exclusive),
// re-reads it, applies the group rules, waits for the moment and sends.
func (s *Sniper) fire(ctx context.Context, id int64, ver uint32, fireAt time.Time) {
	rearm := false
	defer func() {
		s.sched.done(id, ver)
		if rearm {
			s.Changed(id)
		}
	}()
	onTime := s.clk.Now().Before(s.toLocal(fireAt))
	ctx = highPriority(ctx)
	err := s.st.Transition(ctx, id, []store.State{store.StateScheduled}, store.StateFiring, outcome.Pending, "", time.Time{})
	if err != nil {
		// ErrConflict/ErrNotFound: an edit, delete or pre-flight got there
		// first; whoever moved it has re-armed it if needed.
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			s.log.Error("mark firing", "snipe", id, "err", err)
		}
		return
	}
	sn, err := s.st.SnipeByID(ctx, id)
	if err != nil {
		s.revert(ctx, id)
		rearm = true
		return
	}
	// An edit that landed between the load and the mark changed what to
	// send; a later moment or a disabled snipe goes back to the schedule.
	if !sn.Enabled || sn.Bid <= 0 || (!sn.FireAt.Equal(fireAt) && s.toLocal(sn.FireAt).Sub(s.clk.Now()) > 2*s.cfg.ArmLead) {
		s.revert(ctx, id)
		rearm = true
		return
	}
	user, err := s.userName(ctx, sn.AccountID)
	if err != nil {
		s.log.Error("marketplace user of snipe", "snipe", id, "err", err)
		s.revert(ctx, id)
		// Try again shortly rather than at the next horizon reload, which
		// may come after the auction; not at once, or a down store spins.
		s.spawn(ctx, s.bg, func(ctx context.Context) {
			if sleepUntil(ctx, s.clk, s.clk.Now().Add(retryFirst)) {
				s.Changed(id)
			}
		})
		return
	}
	if !s.marketNow().Before(sn.Item.End) {
		s.settleLate(ctx, sn)
		return
	}
	if sn.GroupID != 0 {
		unlock := s.lockGroup(sn.GroupID)
		defer unlock()
		if ok, code, detail := s.groupGate(ctx, sn, user); !ok {
			s.record(ctx, sn, []store.State{store.StateFiring}, store.StateSettled, code, detail, time.Time{})
			return
		}
	}
	target := s.toLocal(sn.FireAt)
	if !sleepUntil(ctx, s.clk, target) {
		s.revert(ctx, id)
		return
	}
	s.send(ctx, sn, user, target, onTime)
}

// sleepUntil waits on the clock until t; false when ctx ended first.
func sleepUntil(ctx context.Context, clk clock.Clock, t time.Time) bool {
	d := t.Sub(clk.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := clk.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C():
		return true
	}
}

// send places the bid, retrying transient failures while time remains, and
// records the result.
func (s *Sniper) send(ctx context.Context, sn store.Snipe, user string, target time.Time, onTime bool) {
	deadline := s.toLocal(sn.Item.End).Add(-s.cfg.RetryCutoff)
	backoff := retryFirst
	attempts := 0
	var rc market.BidReceipt
	var err error
	// unconfirmed: the last failed call may have reached the marketplace
	// and asking it whether the bid exists failed too.
	unconfirmed := false
	for {
		attempts++
		if attempts == 1 && onTime {
			s.met.lateness.Observe(max(0, s.clk.Now().Sub(target)).Seconds())
		}
		rc, err = s.mk.PlaceBid(ctx, user, sn.ItemNo, sn.Bid)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			// Shutting down: the bid may or may not have left. Leave the
			// snipe firing; recovery asks the marketplace after restart.
			return
		}
		if !market.Transient(err) && !(attempts > 1 && errors.Is(err, market.ErrCannotLowerMax)) {
			break
		}
		// A failed call may still have reached the marketplace: look
		// before sending again, never bid twice.
		bs, e := s.mk.BidState(ctx, user, sn.ItemNo)
		if e == nil && bidLanded(bs, sn) {
			rc, err = market.BidReceipt{HighBidder: bs.HighBidder, CurrentPrice: bs.CurrentPrice, Time: s.marketNow()}, nil
			break
		}
		unconfirmed = e != nil && market.Transient(err)
		if !market.Transient(err) || !s.clk.Now().Add(backoff).Before(deadline) {
			break
		}
		if !sleepUntil(ctx, s.clk, s.clk.Now().Add(backoff)) {
			return
		}
		backoff = min(2*backoff, retryMax)
	}
	if err != nil {
		code := codeFor(err)
		detail := rejectDetail(err, sn, attempts)
		s.log.Warn("bid refused", "snipe", sn.ID, "attempts", attempts, "err", err)
		to := store.StateSettled
		if unconfirmed {
			// The bid may have landed: report the failure but stay firing,
			// so the sweep asks the marketplace after the end instead of
			// settling a possible win as lost.
			to = store.StateFiring
			detail += " sniped could not confirm whether the last attempt reached the marketplace and will check again after the auction ends."
		}
		s.record(ctx, sn, []store.State{store.StateFiring}, to, code, detail, time.Time{})
		return
	}
	code, detail := outcome.Placed, fmt.Sprintf("Maximum %s %s sent; current price %s.", sn.Bid, sn.Item.Currency, rc.CurrentPrice)
	if !rc.HighBidder {
		code, detail = outcome.Outbid, fmt.Sprintf("Maximum %s %s sent, but another bidder's maximum is higher; current price %s.", sn.Bid, sn.Item.Currency, rc.CurrentPrice)
	}
	placedAt := rc.Time
	if placedAt.IsZero() {
		placedAt = s.marketNow()
	}
	if s.record(ctx, sn, []store.State{store.StateFiring}, store.StatePlaced, code, detail, placedAt) {
		sn.State, sn.Outcome, sn.OutcomeDetail, sn.PlacedAt = store.StatePlaced, code, detail, placedAt
		s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), &sn)
	}
}

// bidLanded reports whether the marketplace already holds this snipe's bid:
// a bid of ours at least as high as the snipe's. A lower bid the user
// placed by hand does not count.
func bidLanded(bs market.BidState, sn store.Snipe) bool {
	return bs.HasBid && bs.MaxBid >= sn.Bid
}

// codeFor maps a marketplace refusal to its outcome.
func codeFor(err error) outcome.Code {
	switch {
	case errors.Is(err, market.ErrTooLow):
		return outcome.TooLow
	case errors.Is(err, market.ErrIncrementNotMet):
		return outcome.IncrementNotMet
	case errors.Is(err, market.ErrCannotLowerMax):
		return outcome.OwnMax
	case errors.Is(err, market.ErrIneligible), errors.Is(err, market.ErrSellerCannotBid), errors.Is(err, market.ErrBINPriceReached):
		return outcome.Ineligible
	case errors.Is(err, market.ErrNotAuthorized):
		return outcome.MarketAuth
	case errors.Is(err, market.ErrNotFound):
		return outcome.NotFound
	case errors.Is(err, market.ErrEnded), errors.Is(err, market.ErrCancelled):
		return outcome.EndedEarly
	case errors.Is(err, market.ErrEndedByBuyItNow):
		return outcome.BuyItNow
	default:
		return outcome.MarketDown
	}
}

// rejectDetail is the specific part of a refusal's message.
func rejectDetail(err error, sn store.Snipe, attempts int) string {
	// A marketplace's own explanation (how to link, a missing approval)
	// says more than any generic text.
	if x := market.Explain(err); x != "" {
		return x
	}
	var be *market.BidError
	switch {
	case errors.As(err, &be) && be.Minimum > 0:
		return fmt.Sprintf("Your maximum %s %s; the minimum to bid was %s (current price %s).", sn.Bid, sn.Item.Currency, be.Minimum, be.CurrentPrice)
	case errors.Is(err, market.ErrBINPriceReached):
		return "Your maximum is at or above the Buy It Now price; buy the item outright instead."
	case market.Transient(err):
		// The raw error stays in the log: it may name hosts or internals.
		return fmt.Sprintf("%d attempts failed, the last one shortly before the end.", attempts)
	}
	return ""
}

// settleLate settles a snipe whose item ended before it could be sent,
// saying how it ended.
func (s *Sniper) settleLate(ctx context.Context, sn store.Snipe) {
	code, detail := outcome.Missed, "The auction had ended before the bid could be sent."
	it, err := s.mk.Item(ctx, sn.ItemNo)
	switch {
	case errors.Is(err, market.ErrNotFound):
		code, detail = outcome.NotFound, ""
	case err == nil:
		if c, ok := endedCode(it.EndReason); ok {
			code, detail = c, ""
		}
	}
	s.record(ctx, sn, []store.State{store.StateFiring}, store.StateSettled, code, detail, time.Time{})
}

// endedCode maps an early end to its outcome; ok is false for a normal end
// or a running auction.
func endedCode(r market.EndReason) (outcome.Code, bool) {
	switch r {
	case market.EndedCancelled, market.EndedSold:
		return outcome.EndedEarly, true
	case market.EndedBuyItNow:
		return outcome.BuyItNow, true
	}
	return 0, false
}

// revert puts a firing snipe back to scheduled; the bid has not left.
func (s *Sniper) revert(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := s.st.Transition(ctx, id, []store.State{store.StateFiring}, store.StateScheduled, outcome.Pending, "", time.Time{}); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("revert firing snipe", "snipe", id, "err", err)
	}
}

// record stores an outcome with a compare-and-set and counts it. It keeps
// trying through shutdown for a short while: after a bid left, losing the
// fact is worse than a slow exit. It reports whether the transition won.
func (s *Sniper) record(ctx context.Context, sn store.Snipe, from []store.State, to store.State, code outcome.Code, detail string, placedAt time.Time) bool {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	var err error
	for try := 0; try < 3; try++ {
		err = s.st.Transition(wctx, sn.ID, from, to, code, detail, placedAt)
		if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			break
		}
	}
	if err != nil {
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			s.log.Error("record outcome", "snipe", sn.ID, "outcome", outcome.Of(code).Shorthand, "err", err)
		}
		return false
	}
	s.met.outcomes.WithLabelValues(outcome.Of(code).Shorthand).Inc()
	s.log.Debug("snipe outcome", "snipe", sn.ID, "item", sn.ItemNo, "state", to, "outcome", outcome.Of(code).Shorthand)
	if sn.GroupID != 0 && to != store.StateFiring && (code.Final() || code == outcome.Outbid) {
		// A lost or won group item may free or settle its siblings. One
		// still firing (unconfirmed) may yet lead, so it frees nobody.
		s.followUp(ctx, sn.AccountID, sn.GroupID)
	}
	return true
}
