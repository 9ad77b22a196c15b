package sniper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// farFuture bounds store scans that want every snipe in a state.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// resolveGiveUp is how long after its item's end a firing snipe whose
// lookups all failed is settled anyway, with an outcome that says so:
// nothing stays unresolved a minute after its auction.
const resolveGiveUp = 45 * time.Second

// recover resolves what a previous run left behind. It runs in the
// background beside the scheduler, so shots due meanwhile fire on time:
//
//  1. scheduled snipes whose item ended while the service was down are
//     settled Missed (settleOverdue; those with time left are the
//     loader's: they fire late under the one late-start policy, tooLate);
//  2. firing snipes (listed by Run before the scheduler started, so none
//     is this process's own shot) are resolved in parallel, bounded by the
//     background slots, by asking the marketplace whether the bid exists
//     (resolve, resolveStep); they are never resent blindly;
//  3. placed snipes get their settlement queued;
//  4. abandoned snipes (abandon) still within store.UnconfirmedFor join the
//     list the sweep asks about again.
func (s *Sniper) recover(ctx context.Context, firing []store.Snipe) error {
	if err := s.settleOverdue(ctx, "sniped was not running and started again at "+s.marketNow().UTC().Format(time.DateTime)+" UTC"); err != nil {
		return err
	}
	for _, sn := range firing {
		s.resolve(sn)
	}
	placed, err := s.st.SnipesInState(ctx, store.StatePlaced, farFuture, s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("placed snipes: %w", err)
	}
	for _, sn := range placed {
		s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), nil)
	}
	// Abandoned by an earlier process (or the partition's previous
	// holder): the sweep asks about them again.
	unconfirmed, err := s.st.SnipesInState(ctx, store.StateUnconfirmed, s.marketNow(), s.cfg.LoadLimit)
	if err != nil {
		return fmt.Errorf("unconfirmed snipes: %w", err)
	}
	s.resolvingMu.Lock()
	for _, sn := range unconfirmed {
		s.unconfirmed[sn.ID] = struct{}{}
	}
	s.resolvingMu.Unlock()
	if n := len(firing) + len(placed) + len(unconfirmed); n > 0 {
		s.log.Info("recovered snipes", "firing", len(firing), "placed", len(placed), "unconfirmed", len(unconfirmed))
	}
	return nil
}

// settleOverdue settles Missed the scheduled snipes whose item has ended
// without their bid being sent (due more than maxDelay + RetryCutoff ago),
// saying why.
func (s *Sniper) settleOverdue(ctx context.Context, why string) error {
	now := s.marketNow()
	for {
		sns, err := s.st.SnipesInState(ctx, store.StateScheduled, now.Add(-maxDelay-s.cfg.RetryCutoff), s.cfg.LoadLimit)
		if err != nil {
			return fmt.Errorf("overdue snipes: %w", err)
		}
		moved := 0
		for _, sn := range sns {
			detail := fmt.Sprintf("It was due at %s UTC; %s.", sn.FireAt.UTC().Format(time.DateTime), why)
			if s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: outcome.Missed, Detail: detail}) {
				moved++
			}
		}
		if len(sns) < s.cfg.LoadLimit {
			return nil
		}
		if moved == 0 {
			return errors.New("overdue snipes: no progress")
		}
	}
}

// resolve starts resolving a firing snipe that no shot owns, once: a
// snipe already being resolved is left to that resolution. Each step of a
// resolution is a schedule entry (kindResolve) that takes a background
// slot only while it asks the marketplace, so waiting costs no goroutine.
func (s *Sniper) resolve(sn store.Snipe) {
	s.resolvingMu.Lock()
	if _, ok := s.resolving[sn.ID]; ok {
		s.resolvingMu.Unlock()
		return
	}
	s.resolving[sn.ID] = sn
	s.resolvingMu.Unlock()
	s.sched.resolveAt(sn.ID, s.clk.Now())
}

// resolved ends a resolution.
func (s *Sniper) resolved(id int64) {
	s.resolvingMu.Lock()
	defer s.resolvingMu.Unlock()
	delete(s.resolving, id)
}

// resolveStep is one step of resolving a firing snipe: it asks the
// marketplace (with the shared backoff) and either settles the snipe or
// queues the next step:
//
//   - our bid is there: placed (or, after the end, its result);
//   - the auction ended without it: the provisional refusal send recorded,
//     or Missed;
//   - not there and time remains (a crash's leftover): back to scheduled,
//     to be sent (resending the same maximum is safe, see send);
//   - not there yet, too late to send: ask again until the end is visible.
//
// Lookups that never succeed end resolveGiveUp after the item's end with
// MarketDown, saying the bid could not be confirmed.
func (s *Sniper) resolveStep(ctx context.Context, id int64) {
	s.resolvingMu.Lock()
	sn, ok := s.resolving[id]
	s.resolvingMu.Unlock()
	if !ok {
		return
	}
	now := s.clk.Now()
	giveUp := s.toLocal(sn.Item.End).Add(resolveGiveUp)
	if !now.Before(giveUp) {
		s.abandon(ctx, sn)
		s.resolved(id)
		return
	}
	if ok, at := s.health.admit(now); !ok {
		s.sched.resolveAt(id, minTime(at, giveUp))
		return
	}
	done, notBefore, err := s.resolveOnce(ctx, sn)
	if done || ctx.Err() != nil {
		s.resolved(id)
		return
	}
	next := s.health.retryAt(s.clk.Now()) // unavailable, or no answer yet
	if err != nil && !market.Transient(err) {
		next = s.clk.Now().Add(settleRetry) // refused: no point asking faster
	}
	if next.Before(notBefore) {
		next = notBefore
	}
	s.sched.resolveAt(id, minTime(next, giveUp))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// resolveOnce asks the marketplace once; it reports whether the snipe is
// resolved (or left this resolution's hands), when asking again makes
// sense at the earliest, and the lookup's error.
func (s *Sniper) resolveOnce(ctx context.Context, sn store.Snipe) (bool, time.Time, error) {
	user, err := s.userName(ctx, sn.AccountID)
	if err != nil {
		return false, time.Time{}, err
	}
	firing := []store.State{store.StateFiring}
	bs, err := s.mk.BidState(ctx, user, sn.ItemNo)
	s.health.report(s.clk.Now(), err)
	switch {
	case errors.Is(err, market.ErrNotFound):
		s.record(ctx, sn, store.TransitionParams{From: firing, To: store.StateSettled, Outcome: outcome.NotFound})
		return true, time.Time{}, nil
	case err != nil:
		s.log.Warn("resolve firing snipe", "snipe", sn.ID, "err", err)
		return false, time.Time{}, err
	case bidLanded(bs, sn) && bs.Ended:
		code, detail := result(sn, bs)
		s.record(ctx, sn, store.TransitionParams{From: firing, To: store.StateSettled, Outcome: code, Detail: detail + " The bid was confirmed at the marketplace after its answer was lost or sniped was interrupted.", PlacedAt: s.marketNow(), ItemEnded: true, FinalPrice: bs.CurrentPrice})
		return true, time.Time{}, nil
	case bidLanded(bs, sn):
		s.placed(ctx, sn, market.BidReceipt{HighBidder: bs.HighBidder, CurrentPrice: bs.CurrentPrice, Time: s.marketNow()},
			" The bid was confirmed at the marketplace after its answer was lost or sniped was interrupted.")
		return true, time.Time{}, nil
	case bs.Ended:
		// The marketplace holds no bid from this snipe. A lost answer may
		// have been a refusal, which leaves none either: when the price
		// was already above the maximum at the moment, every attempt was
		// (or would have been) refused as too low.
		// The price decides before an early end: a Buy It Now after the
		// moment is not why a bid refused at the moment lost.
		code, detail := outcome.Missed, "sniped was interrupted while sending this bid; the marketplace holds no bid from this snipe."
		why := "sniped was interrupted while sending it; the marketplace holds no bid from this snipe"
		if sn.Outcome == outcome.MarketDown {
			code, detail = outcome.MarketDown, "The marketplace was unavailable until the end and the bid never reached it."
			why = "its answers were lost or it was unavailable; it holds no bid from this snipe"
		}
		unsure := sn.Outcome == outcome.Pending || sn.Outcome == outcome.MarketDown
		d, low := "", false
		if unsure {
			d, low = s.tooLowAt(ctx, sn, why)
		}
		switch c, early := endedCode(bs.EndReason); {
		case low:
			code, detail = outcome.TooLow, d
		case early:
			code, detail = c, ""
		case !unsure:
			// send left it firing with a provisional refusal: now proven
			// that the bid never arrived.
			code, detail = sn.Outcome, sn.OutcomeDetail
		}
		s.record(ctx, sn, store.TransitionParams{From: firing, To: store.StateSettled, Outcome: code, Detail: detail, ItemEnded: true, FinalPrice: bs.CurrentPrice})
		return true, time.Time{}, nil
	case sn.Outcome == outcome.Pending && !s.tooLate(sn):
		// Left by a crash, the bid is not there and there is still time:
		// send it. (A snipe send left unresolved was already retried
		// until the cutoff; it waits for the end below.)
		if err := s.st.Transition(ctx, store.TransitionParams{ID: sn.ID, From: firing, To: store.StateScheduled, Urgent: true}); err == nil {
			s.Changed(sn.ID)
		}
		return true, time.Time{}, nil
	}
	// Not visible (yet) and too late to send: the auction's end will say.
	return false, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), nil
}

// tooLowAt reports whether the item's price at the snipe's moment was
// already above its maximum, so that a bid sent then could not have been
// accepted whether or not it arrived; detail says so, and why (what
// happened to the bid).
func (s *Sniper) tooLowAt(ctx context.Context, sn store.Snipe, why string) (detail string, low bool) {
	p, ok := s.priceAt(ctx, sn.ItemNo, sn.FireAt)
	if !ok || p <= sn.Bid {
		return "", false
	}
	return fmt.Sprintf("By the snipe's moment the price was already %s %s, above your maximum %s, so the marketplace could not accept the bid (%s).", p, sn.Item.Currency, sn.Bid, why), true
}

// priceAt is an item's visible price at marketplace time at, from its bid
// history (the highest price after a bid up to at: the price only rises);
// ok is false when the history cannot say (no bid by then, a lookup
// error, or a marketplace that publishes no history).
func (s *Sniper) priceAt(ctx context.Context, itemNo int64, at time.Time) (money.Amount, bool) {
	h, err := s.mk.History(ctx, itemNo)
	if err != nil {
		return 0, false
	}
	var p money.Amount
	for _, e := range h {
		if !e.Time.After(at) {
			p = max(p, e.Price)
		}
	}
	return p, p > 0
}

// abandon settles a firing snipe whose lookups failed until resolveGiveUp
// after its end, saying that the marketplace never confirmed either way.
// The sweep asks again later and corrects it (recheck).
func (s *Sniper) abandon(ctx context.Context, sn store.Snipe) {
	detail := fmt.Sprintf("%s: every lookup failed until %s UTC. sniped keeps asking (for a day) and corrects this outcome when the marketplace answers; meanwhile, check the item on the marketplace.", store.UnconfirmedDetail, s.marketNow().UTC().Format(time.DateTime))
	s.log.Error("firing snipe abandoned: marketplace never confirmed", "snipe", sn.ID)
	if s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: outcome.MarketDown, Detail: detail}) {
		s.resolvingMu.Lock()
		s.unconfirmed[sn.ID] = struct{}{}
		s.resolvingMu.Unlock()
	}
}

// unconfirmedIDs lists the abandoned snipes to ask about again: those
// this process abandoned, and those recover found in the store.
func (s *Sniper) unconfirmedIDs() []int64 {
	s.resolvingMu.Lock()
	defer s.resolvingMu.Unlock()
	out := make([]int64, 0, len(s.unconfirmed))
	for id := range s.unconfirmed {
		out = append(out, id)
	}
	return out
}

// confirmed stops asking about an abandoned snipe.
func (s *Sniper) confirmed(id int64) {
	s.resolvingMu.Lock()
	defer s.resolvingMu.Unlock()
	delete(s.unconfirmed, id)
}

// abandoned reports whether a snipe was settled by abandon and may still
// be corrected.
func (s *Sniper) abandoned(sn store.Snipe) bool {
	return sn.State == store.StateSettled && sn.Outcome == outcome.MarketDown &&
		strings.HasPrefix(sn.OutcomeDetail, store.UnconfirmedDetail) && s.marketNow().Before(sn.FireAt.Add(store.UnconfirmedFor))
}

// recheck asks the marketplace again about an abandoned snipe and, once it
// answers for the ended auction, replaces the outcome with the truth. One
// recheck per snipe runs at a time; failures wait for the next sweep.
func (s *Sniper) recheck(ctx context.Context, sn store.Snipe) {
	s.resolvingMu.Lock()
	if _, ok := s.rechecking[sn.ID]; ok {
		s.resolvingMu.Unlock()
		return
	}
	s.rechecking[sn.ID] = struct{}{}
	s.resolvingMu.Unlock()
	defer func() {
		s.resolvingMu.Lock()
		delete(s.rechecking, sn.ID)
		s.resolvingMu.Unlock()
	}()
	user, err := s.userName(ctx, sn.AccountID)
	if err != nil {
		return
	}
	if ok, _ := s.health.admit(s.clk.Now()); !ok {
		return
	}
	bs, err := s.mk.BidState(ctx, user, sn.ItemNo)
	s.health.report(s.clk.Now(), err)
	const corrected = " (Corrected: sniped could not confirm this at the auction's end; the marketplace answered later.)"
	var code outcome.Code
	var detail string
	switch {
	case errors.Is(err, market.ErrNotFound):
		code = outcome.NotFound
	case err != nil || !bs.Ended:
		return
	case bidLanded(bs, sn):
		code, detail = result(sn, bs)
	default:
		code, detail = outcome.MarketDown, "The marketplace was unavailable and the bid never reached it: it holds no bid from this snipe."
	}
	detail += corrected
	if err := s.st.Transition(ctx, store.TransitionParams{ID: sn.ID, From: []store.State{store.StateSettled}, To: store.StateSettled, Outcome: code, Detail: detail}); err != nil {
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("correct abandoned snipe", "snipe", sn.ID, "err", err)
		}
		return
	}
	s.confirmed(sn.ID)
	s.log.Info("abandoned snipe corrected", "snipe", sn.ID, "outcome", outcome.Of(code).Shorthand)
	s.met.outcomes.WithLabelValues(outcome.Of(code).Shorthand).Inc()
	if sn.GroupID != 0 {
		s.followUp(ctx, sn.AccountID, sn.GroupID)
	}
}
