package sniper

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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
// reading it back with the mark, applies the group rules, waits for the
// moment and sends.
func (s *Sniper) fire(ctx context.Context, id int64, ver uint32, fireAt time.Time) {
	rearm := false
	defer func() {
		s.sched.done(id, ver)
		if rearm {
			s.Changed(id)
		}
	}()
	onTime := s.clk.Now().Before(s.toLocal(fireAt))
	// A context of the shot's own, taken now rather than at the moment:
	// the contexts the shot derives (an attempt's timeout, the group
	// commit's) register with their parent under its lock, which 5,000
	// shots due at once would otherwise all queue on at their moment.
	runCtx := ctx
	ctx, cancel := context.WithCancel(highPriority(ctx))
	defer cancel()
	if !s.armable(id, ver, fireAt) {
		return // its partition is being handed over before the shot
	}
	sn, ok := s.markFiring(ctx, id, fireAt)
	if !ok {
		return
	}
	if sn.ID == 0 { // the store did not return the snipe with the mark
		var err error
		if sn, err = s.st.SnipeByID(ctx, id); err != nil {
			s.revert(ctx, id)
			rearm = true
			return
		}
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
		// On the run's context: the shot's own ends with this function.
		s.trySpawn(runCtx, s.bg, func(ctx context.Context) {
			if sleepUntil(ctx, s.clk, s.clk.Now().Add(retryFirst)) {
				s.Changed(id)
			}
		})
		return
	}
	if s.tooLate(sn) {
		s.settleLate(ctx, sn)
		return
	}
	if sn.GroupID != 0 {
		unlock := s.lockGroup(sn.GroupID)
		defer unlock()
		if ok, code, detail := s.groupGate(ctx, sn, user); !ok {
			s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: code, Detail: detail})
			return
		}
	}
	// Wait for the moment; a new clock offset moves it, even now. The bid
	// must arrive at the moment, so it leaves one measured one-way time
	// earlier (0 for an in-process marketplace); lateness is then the
	// arrival's.
	var target time.Time
	for {
		retimed := s.retimed()
		target = s.toLocal(sn.FireAt).Add(-market.SendLead(s.mk))
		done, ok := s.waitReserved(ctx, sn.FireAt, target, retimed)
		if !ok {
			s.revert(ctx, id)
			return
		}
		if done {
			break
		}
	}
	if s.tooLate(sn) {
		// The offset moved while waiting: the end has passed meanwhile.
		s.settleLate(ctx, sn)
		return
	}
	s.send(ctx, sn, user, target, onTime)
}

// markFiring moves the snipe scheduled → firing and returns it as marked
// (ID 0 when the store did not return it). A transient store error is
// retried with backoff while the shot can still be sent; a conflict means
// an edit, delete or pre-flight got there first, and whoever moved it
// re-armed it if needed.
func (s *Sniper) markFiring(ctx context.Context, id int64, fireAt time.Time) (store.Snipe, bool) {
	backoff := retryFirst
	for {
		// Durable: a mark lost to a power cut would let recovery take a
		// sent bid for one never sent. Into: the mark reads the snipe as
		// marked, which saves a re-read. Urgent: a mark made well after
		// ArmLead before the moment (a late load, an edit, recovery) must
		// not wait for the store to gather others' writes; one made on
		// time may.
		var sn store.Snipe
		urgent := s.toLocal(fireAt).Sub(s.clk.Now()) < s.cfg.ArmLead/2
		err := s.st.Transition(ctx, store.TransitionParams{ID: id, From: []store.State{store.StateScheduled}, To: store.StateFiring, Durable: true, Urgent: urgent, Into: &sn})
		switch {
		case err == nil:
			return sn, true
		case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound), ctx.Err() != nil:
			return store.Snipe{}, false
		}
		// fireAt is the moment, not the end; the end is at most maxDelay
		// later. Stop once even that has passed.
		if !s.clk.Now().Add(backoff).Before(s.toLocal(fireAt).Add(maxDelay)) {
			s.log.Error("mark firing: giving up", "snipe", id, "err", err)
			return store.Snipe{}, false
		}
		s.log.Warn("mark firing: retrying", "snipe", id, "err", err)
		if !sleepUntil(ctx, s.clk, s.clk.Now().Add(backoff)) {
			return store.Snipe{}, false
		}
		backoff = min(2*backoff, retryMax)
	}
}

// maxDelay is the longest delay a snipe may have (addBid's delay 1–15 s):
// its item ends at most this long after its moment.
const maxDelay = 15 * time.Second

// tooLate is the one late-start policy, for snipes found scheduled and
// firing alike: a snipe whose moment passed is still sent while at least
// RetryCutoff remains before its item's end, and is Missed otherwise.
func (s *Sniper) tooLate(sn store.Snipe) bool {
	return !s.marketNow().Add(s.cfg.RetryCutoff).Before(sn.Item.End)
}

// maxAlone is the most snipes that may share a millisecond's moment and
// still each wait for it on a timer of their own, precisely with
// Config.PreciseWake. More wait on one timer for the moment (moments): in
// a burst of 5,000, precise sleepers holding threads and Ps made the last
// send several times later (docs/performance.md, "Fourth look"), and
// timers of their own woke them over 20 ms ("Eighth look").
const maxAlone = 8

// waitMoment waits until the local moment target of a snipe firing at
// fireAt (marketplace clock), as sleepUntilOr does: alone, or with the
// crowd that shares its millisecond.
func (s *Sniper) waitMoment(ctx context.Context, fireAt, target time.Time, wake <-chan struct{}) (done, ok bool) {
	if s.sched.crowdedAt(fireAt) {
		return s.waitCrowded(ctx, target, wake)
	}
	return s.waitAlone(ctx, target, wake)
}

// waitAlone waits until the local moment target as sleepUntilOr does.
// With Config.PreciseWake, it waits for the last clock.PreciseWindow in
// clock.SleepPrecisely, which does not notice wake: a new offset moves
// that last stretch by too little to matter.
func (s *Sniper) waitAlone(ctx context.Context, target time.Time, wake <-chan struct{}) (done, ok bool) {
	if !s.cfg.PreciseWake {
		return sleepUntilOr(ctx, s.clk, target, wake)
	}
	done, ok = sleepUntilOr(ctx, s.clk, target.Add(-clock.PreciseWindow), wake)
	if !done || !ok || clock.SleepPrecisely(target) {
		return done, ok
	}
	return sleepUntilOr(ctx, s.clk, target, wake)
}

// stackReserve is the stack a shot's goroutine holds while it waits for
// its moment. The send path needs more stack than the wait: without the
// reserve, 5,000 shots due at once all grew their stacks at the moment,
// together, and the last send of such a burst was 80–125 ms late in 3 of 7
// runs, against at most 52 ms with it (docs/performance.md, "Fifth
// look"). It costs 12 KB per armed shot, a second or two ahead.
const stackReserve = 12 << 10

// stackSink keeps waitReserved's reserve from being optimized away.
var stackSink atomic.Uint32

// waitReserved is waitMoment called from a frame of stackReserve bytes:
// the stack grows when the shot is armed, when nothing is due, and stays
// grown while it waits, as the GC shrinks only stacks less than a quarter
// in use.
//
//go:noinline
func (s *Sniper) waitReserved(ctx context.Context, fireAt, target time.Time, wake <-chan struct{}) (done, ok bool) {
	var reserve [stackReserve]byte
	i := uint(target.Nanosecond()) % stackReserve
	reserve[i] = 1
	done, ok = s.waitMoment(ctx, fireAt, target, wake)
	stackSink.Store(uint32(reserve[i]))
	return done, ok
}

// sleepUntilOr waits on the clock until t (done) or until wake is closed
// (not done); ok is false when ctx ended first.
func sleepUntilOr(ctx context.Context, clk clock.Clock, t time.Time, wake <-chan struct{}) (done, ok bool) {
	d := t.Sub(clk.Now())
	if d <= 0 {
		return true, ctx.Err() == nil
	}
	tm := clk.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-wake:
		return false, true
	case <-tm.C():
		return true, true
	}
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
// records the result. An outcome is final only when the marketplace's
// answer proves it: after an ambiguous attempt (a timeout or an
// unavailable answer may still have reached the marketplace), a refusal
// proves nothing about our bid, so the snipe stays firing, unresolved, and
// resolve keeps asking the marketplace until it says.
func (s *Sniper) send(ctx context.Context, sn store.Snipe, user string, target time.Time, onTime bool) {
	deadline := s.toLocal(sn.Item.End).Add(-s.cfg.RetryCutoff)
	backoff := retryFirst
	attempts := 0
	var rc market.BidReceipt
	var err error
	var sentFrom, sentTo time.Time // local clock, the last attempt
	var firstFrom time.Time        // the first attempt, the one that may have landed
	ambiguous := false
	proof := ""
	for {
		attempts++
		if !s.awaitLease(ctx, sn.AccountID, deadline) {
			// The partition moved (or this instance is paused past its
			// lease): its next holder resolves the snipe, never resending
			// blindly.
			s.log.Warn("shot not sent: this instance's lease on the snipe's partition is not valid", "snipe", sn.ID, "attempts", attempts-1)
			return
		}
		sentFrom = s.clk.Now()
		if attempts == 1 {
			firstFrom = sentFrom
		}
		if attempts == 1 && onTime {
			s.met.lateness.Observe(max(0, sentFrom.Sub(target)).Seconds())
		}
		actx, cancel := s.attemptContext(ctx)
		rc, err = s.mk.PlaceBid(actx, user, sn.ItemNo, sn.Bid)
		cancel()
		sentTo = s.clk.Now()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			// Shutting down: the bid may or may not have left. Leave the
			// snipe firing; recovery asks the marketplace after restart.
			return
		}
		if ambiguous && errors.Is(err, market.ErrCannotLowerMax) {
			// Only the high bidder is told it cannot lower its maximum:
			// an earlier attempt of ours landed and leads.
			rc, err = market.BidReceipt{HighBidder: true, Time: s.marketAt(firstFrom)}, nil
			proof = " The marketplace's answer to an earlier attempt was lost; its refusal of the retry (\"cannot lower your maximum\") confirmed that the bid had landed."
			break
		}
		if !market.Transient(err) && !ambiguous {
			break // a definite refusal of our only bid
		}
		// A failed call may still have reached the marketplace: look
		// before sending again, never bid twice.
		bs, e := s.mk.BidState(ctx, user, sn.ItemNo)
		if e == nil && bidLanded(bs, sn) {
			rc, err = market.BidReceipt{HighBidder: bs.HighBidder, CurrentPrice: bs.CurrentPrice, Time: s.marketAt(firstFrom)}, nil
			proof = " The marketplace's answer was lost; it confirmed the bid when asked."
			break
		}
		if !market.Transient(err) {
			// Refused after an ambiguous attempt, and the lookup does not
			// (yet) show our bid: unresolved.
			break
		}
		ambiguous = true
		// Resending the same maximum is safe: if an earlier attempt
		// landed, the marketplace refuses the retry (cannot lower, or
		// below the price it already beat), never takes it twice.
		if !s.clk.Now().Add(backoff).Before(deadline) {
			break
		}
		if !sleepUntil(ctx, s.clk, s.clk.Now().Add(backoff)) {
			return
		}
		backoff = min(2*backoff, retryMax)
	}
	if err != nil {
		code, detail := s.refusal(ctx, sn, err, attempts, sentFrom, sentTo, target)
		s.log.Warn("bid refused", "snipe", sn.ID, "attempts", attempts, "ambiguous", ambiguous, "err", err)
		if ambiguous {
			s.unresolved(ctx, sn, code, detail)
			return
		}
		s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: code, Detail: detail})
		return
	}
	s.placed(ctx, sn, rc, proof)
}

// placed records an accepted bid and queues its settlement.
func (s *Sniper) placed(ctx context.Context, sn store.Snipe, rc market.BidReceipt, proof string) {
	code, detail := outcome.Placed, fmt.Sprintf("Maximum %s %s sent; current price %s.", sn.Bid, sn.Item.Currency, rc.CurrentPrice)
	if rc.CurrentPrice == 0 {
		detail = fmt.Sprintf("Maximum %s %s sent.", sn.Bid, sn.Item.Currency)
	}
	if !rc.HighBidder {
		code, detail = outcome.Outbid, fmt.Sprintf("Maximum %s %s sent, but another bidder's maximum is higher; current price %s.", sn.Bid, sn.Item.Currency, rc.CurrentPrice)
	}
	detail += proof
	placedAt := rc.Time
	if placedAt.IsZero() {
		placedAt = s.marketNow()
	}
	if s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StatePlaced, Outcome: code, Detail: detail, PlacedAt: placedAt, Durable: true}) {
		sn.State, sn.Outcome, sn.OutcomeDetail, sn.PlacedAt = store.StatePlaced, code, detail, placedAt
		s.sched.settleAt(sn.ID, s.toLocal(sn.Item.End).Add(s.cfg.SettleGrace), &sn)
	}
}

// unresolved stores what is known so far (a provisional outcome) and leaves
// the snipe firing for resolve, which asks the marketplace until it proves
// whether the bid landed.
func (s *Sniper) unresolved(ctx context.Context, sn store.Snipe, code outcome.Code, detail string) {
	detail += " sniped could not confirm whether an attempt reached the marketplace and keeps asking it; this result may still change."
	if s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StateFiring, Outcome: code, Detail: detail}) {
		sn.Outcome, sn.OutcomeDetail = code, detail
	}
	s.resolve(sn)
}

// refusal is the outcome of a refused send. A bid refused because the
// auction had ended normally was sent too late: Missed, saying how late
// and why.
func (s *Sniper) refusal(ctx context.Context, sn store.Snipe, err error, attempts int, sentFrom, sentTo, target time.Time) (outcome.Code, string) {
	if !errors.Is(err, market.ErrEnded) {
		return codeFor(err), rejectDetail(err, sn, attempts)
	}
	end := sn.Item.End
	if it, e := s.mk.Item(ctx, sn.ItemNo); e == nil {
		if c, ok := endedCode(it.EndReason); ok {
			return c, ""
		}
		end = it.End
	}
	sentMid := sentFrom.Add(sentTo.Sub(sentFrom) / 2)
	estimate := s.marketAt(sentMid)
	if e := s.measureOffset(ctx); e != nil {
		return outcome.Missed, fmt.Sprintf("The bid reached the marketplace after the auction ended (%s UTC): sniped's estimate of the marketplace clock was off, and it could not be measured again.", end.UTC().Format(time.DateTime))
	}
	arrived := s.marketAt(sentMid)
	if s.marketAt(sentTo).Before(end) {
		// Refused as ended even though the answer came back before its
		// end time (the latest the marketplace can have judged the bid):
		// the auction ended early. A slow answer proves nothing.
		return outcome.EndedEarly, ""
	}
	if !arrived.After(end) {
		// The middle of a slow call was before the end, yet the bid was
		// judged after it: the call, not the clock, made it late.
		return outcome.Missed, fmt.Sprintf("The bid reached the marketplace after the auction ended (%s UTC): it was sent %.1f s before the end, but the marketplace took %.1f s to answer (a slow marketplace or network).", end.UTC().Format(time.DateTime), end.Sub(s.marketAt(sentFrom)).Seconds(), sentTo.Sub(sentFrom).Seconds())
	}
	why := "it was sent on time by sniped's clock, so the marketplace's clock or end time moved"
	if off := arrived.Sub(estimate); off > retimeThreshold {
		why = fmt.Sprintf("the marketplace clock had moved %.1f s ahead of sniped's last measurement", off.Seconds())
	}
	switch late := sentFrom.Sub(target); {
	case attempts > 1:
		why = fmt.Sprintf("%d earlier attempts failed and the last retry came too late", attempts-1)
	case late > 100*time.Millisecond:
		why = fmt.Sprintf("sniped started the send %.1f s after its moment (busy or paused)", late.Seconds())
	}
	return outcome.Missed, fmt.Sprintf("The bid reached the marketplace %.1f s after the auction ended (%s UTC): %s.", arrived.Sub(end).Seconds(), end.UTC().Format(time.DateTime), why)
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
	case errors.Is(err, market.ErrNotAuthorized):
		// The marketplace gave no explanation of its own (see above).
		return "Reconnect your marketplace account; if that does not help, the operator must check sniped's marketplace credentials."
	}
	return ""
}

// settleLate settles a snipe that was found too close to (or past) its
// item's end to send, saying how it ended or how late sniped was.
func (s *Sniper) settleLate(ctx context.Context, sn store.Snipe) {
	late := s.marketNow().Sub(sn.FireAt)
	code := outcome.Missed
	detail := fmt.Sprintf("It was due at %s UTC; sniped reached it %.1f s late (it was not running, or busy), too close to the auction's end to send the bid.", sn.FireAt.UTC().Format(time.DateTime), late.Seconds())
	it, err := s.mk.Item(ctx, sn.ItemNo)
	switch {
	case errors.Is(err, market.ErrNotFound):
		code, detail = outcome.NotFound, ""
	case err == nil:
		if c, ok := endedCode(it.EndReason); ok {
			code, detail = c, ""
		} else if d, low := s.tooLowAt(ctx, sn, fmt.Sprintf("sniped reached it %.1f s late", late.Seconds())); low {
			// Sent in time or not, it could not have been accepted (and
			// after a crash it may have been sent and refused).
			code, detail = outcome.TooLow, d
		}
	}
	s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateFiring}, To: store.StateSettled, Outcome: code, Detail: detail})
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
	if err := s.st.Transition(ctx, store.TransitionParams{ID: id, From: []store.State{store.StateFiring}, To: store.StateScheduled}); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("revert firing snipe", "snipe", id, "err", err)
	}
}

// record stores an outcome with a compare-and-set (p.ID is sn.ID) and
// counts it. It keeps trying through shutdown for a short while: after a
// bid left, losing the fact is worse than a slow exit. It reports whether
// the transition won.
func (s *Sniper) record(ctx context.Context, sn store.Snipe, p store.TransitionParams) bool {
	p.ID = sn.ID
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	var err error
	backoff := retryFirst
	for try := 0; try < 5; try++ {
		if try > 0 && !sleepUntil(wctx, s.clk, s.clk.Now().Add(backoff)) {
			break
		}
		err = s.st.Transition(wctx, p)
		if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			break
		}
		backoff = min(2*backoff, retryMax)
	}
	code := p.Outcome
	if err != nil {
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			s.log.Error("record outcome", "snipe", sn.ID, "outcome", outcome.Of(code).Shorthand, "err", err)
		}
		return false
	}
	s.met.outcomes.WithLabelValues(outcome.Of(code).Shorthand).Inc()
	s.log.Debug("snipe outcome", "snipe", sn.ID, "item", sn.ItemNo, "state", p.To, "outcome", outcome.Of(code).Shorthand)
	if sn.GroupID != 0 && p.To != store.StateFiring && (code.Final() || code == outcome.Outbid) {
		// A lost or won group item may free or settle its siblings. One
		// still firing (unresolved) may yet lead, so it frees nobody.
		s.followUp(ctx, sn.AccountID, sn.GroupID)
	}
	return true
}
