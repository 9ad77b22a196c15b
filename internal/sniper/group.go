package sniper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// Bid Group rules. A group wins at most one item:
//
//   - A group snipe fires only while none of its siblings may still be won
//     by us: no sibling won, no sibling's bid leads a running auction, no
//     sibling is unresolved (firing: its bid may have landed) unless the
//     marketplace proves it cannot win, and no sibling that ends earlier is
//     still waiting to fire (end-time order).
//     Otherwise it is skipped as GroupLead (provisional, still re-armable)
//     or, once a sibling is won, settled as GroupWon.
//   - The check and the send happen under a per-group lock, so two siblings
//     never both pass the check before either bid is out.
//   - Once outbid, a fixed maximum cannot lead again (proxy bidding only
//     raises the price), so a sibling seen not leading can never win later.
//     Together: at most one sibling ever leads at a time, hence at most one
//     is won.
//   - When a sibling gets a final result (or is outbid), followUp re-arms
//     GroupLead siblings whose auctions still run (they pass the check
//     again) or settles the rest as GroupWon when it was won.
//
// Uncertainty counts as leading: when the marketplace cannot say, the
// snipe is skipped, never fired.

// groupLock serializes the check-and-send of one group's snipes. It is a
// one-slot channel rather than a sync.Mutex because its holder waits on
// timers: a channel wait is a durable block that testing/synctest can see
// through.
type groupLock struct {
	slot chan struct{}
	refs int
}

// lockGroup locks a group and returns its unlock function.
func (s *Sniper) lockGroup(id int64) func() {
	s.groupMu.Lock()
	g := s.groups[id]
	if g == nil {
		g = &groupLock{slot: make(chan struct{}, 1)}
		s.groups[id] = g
	}
	g.refs++
	s.groupMu.Unlock()
	g.slot <- struct{}{}
	return func() {
		<-g.slot
		s.groupMu.Lock()
		if g.refs--; g.refs == 0 {
			delete(s.groups, id)
		}
		s.groupMu.Unlock()
	}
}

// groupGate decides whether sn (firing, group locked) may be sent. When not,
// it returns the outcome to settle it with.
func (s *Sniper) groupGate(ctx context.Context, sn store.Snipe, user string) (ok bool, code outcome.Code, detail string) {
	sibs, err := s.st.GroupSnipes(ctx, sn.AccountID, sn.GroupID)
	if err != nil {
		return false, outcome.GroupLead, "Could not read the Bid Group, so the snipe was held back to avoid winning two items."
	}
	for _, o := range sibs {
		if o.ID != sn.ID && o.Outcome == outcome.Won {
			return false, outcome.GroupWon, fmt.Sprintf("Item %d of group %q was won.", o.ItemNo, sn.GroupName)
		}
	}
	now := s.marketNow()
	for _, o := range sibs {
		if o.ID == sn.ID {
			continue
		}
		switch {
		case o.State == store.StatePlaced:
			// Its bid is proven to have landed, so a lookup that does not
			// show it is stale and proves nothing: only our bid seen outbid,
			// or its auction seen ended without us, frees this snipe.
			bs, err := s.mk.BidState(ctx, user, o.ItemNo)
			switch {
			case err != nil:
				return false, outcome.GroupLead, fmt.Sprintf("Could not learn whether you lead item %d of this group; held back to avoid winning two items.", o.ItemNo)
			case bs.Won:
				return false, outcome.GroupWon, fmt.Sprintf("Item %d of group %q was won.", o.ItemNo, sn.GroupName)
			case !bidLanded(bs, o) || (bs.HighBidder && !bs.Ended):
				return false, outcome.GroupLead, fmt.Sprintf("You lead item %d of this group, which ends %s.", o.ItemNo, o.Item.End.UTC().Format(time.DateTime))
			}
		case o.State == store.StateFiring:
			// Unresolved: its bid may have landed. Only the marketplace's
			// proof that it cannot win frees this snipe: the auction ended
			// without us, or our bid is there and outbid (a fixed maximum
			// never leads again). A lookup that does not show the bid
			// proves nothing: it may be late or stale.
			bs, err := s.mk.BidState(ctx, user, o.ItemNo)
			switch {
			case err == nil && bs.Won:
				return false, outcome.GroupWon, fmt.Sprintf("Item %d of group %q was won.", o.ItemNo, sn.GroupName)
			case err == nil && bs.Ended, err == nil && bidLanded(bs, o) && !bs.HighBidder:
			default:
				return false, outcome.GroupLead, fmt.Sprintf("Your bid on item %d of this group may have landed and sniped is still confirming it; held back to avoid winning two items.", o.ItemNo)
			}
		case o.State == store.StateSettled && o.Outcome == outcome.MarketDown:
			// Settled without the marketplace's confirmation when every
			// lookup failed (resolveStep gave up): it may have been won.
			bs, err := s.mk.BidState(ctx, user, o.ItemNo)
			switch {
			case err != nil:
				return false, outcome.GroupLead, fmt.Sprintf("Could not learn whether item %d of this group was won; held back to avoid winning two items.", o.ItemNo)
			case bs.Won:
				return false, outcome.GroupWon, fmt.Sprintf("Item %d of group %q was won.", o.ItemNo, sn.GroupName)
			case bs.HighBidder && !bs.Ended:
				return false, outcome.GroupLead, fmt.Sprintf("You lead item %d of this group, which ends %s.", o.ItemNo, o.Item.End.UTC().Format(time.DateTime))
			}
		case armed(o) && now.Before(o.Item.End) && endsBefore(o, sn):
			return false, outcome.GroupLead, fmt.Sprintf("Item %d of this group ends first and is sniped first.", o.ItemNo)
		}
	}
	return true, 0, ""
}

// endsBefore orders a group's snipes: end time, then item number.
func endsBefore(a, b store.Snipe) bool {
	if !a.Item.End.Equal(b.Item.End) {
		return a.Item.End.Before(b.Item.End)
	}
	return a.ItemNo < b.ItemNo
}

// followUp re-evaluates a group after one of its snipes got a result: a won
// item settles the waiting siblings as GroupWon; otherwise GroupLead
// siblings whose auctions still run are re-armed and pass the gate again.
func (s *Sniper) followUp(ctx context.Context, accountID, groupID int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	sibs, err := s.st.GroupSnipes(ctx, accountID, groupID)
	if err != nil {
		s.log.Error("group follow-up", "group", groupID, "err", err)
		return
	}
	var won *store.Snipe
	for i := range sibs {
		if sibs[i].Outcome == outcome.Won {
			won = &sibs[i]
		}
	}
	// A waiting sibling is re-armed only with time left to prepare its
	// shot (mark it firing, ArmLead) and send it (RetryCutoff); freed later,
	// it stays held rather than being settled Missed as if sniped had been
	// down or busy.
	now := s.marketNow()
	cutoff := now.Add(s.cfg.ArmLead + s.cfg.RetryCutoff)
	for _, o := range sibs {
		waiting := o.State == store.StateSettled && o.Outcome == outcome.GroupLead
		switch {
		case won != nil && o.ID != won.ID && (waiting || armed(o)):
			detail := fmt.Sprintf("Item %d of group %q was won.", won.ItemNo, o.GroupName)
			// Move only from the state just read: a waiting snipe from
			// settled, an armed one from scheduled. A sibling that settled
			// meanwhile with its own outcome (say Outbid) keeps it.
			from := []store.State{store.StateScheduled}
			if waiting {
				from = []store.State{store.StateSettled}
			}
			if err := s.st.Transition(ctx, store.TransitionParams{ID: o.ID, From: from, To: store.StateSettled, Outcome: outcome.GroupWon, Detail: detail}); err == nil {
				s.met.outcomes.WithLabelValues(outcome.Of(outcome.GroupWon).Shorthand).Inc()
				s.sched.forget(o.ID)
			}
		case won == nil && waiting && cutoff.Before(o.Item.End):
			err := s.st.Transition(ctx, store.TransitionParams{ID: o.ID, From: []store.State{store.StateSettled}, To: store.StateScheduled})
			if err == nil {
				s.Changed(o.ID)
			} else if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				s.log.Error("re-arm group snipe", "snipe", o.ID, "err", err)
			}
		case won == nil && waiting && !strings.HasPrefix(o.OutcomeDetail, heldTooLong) && !undecided(sibs, o.ID):
			// Freed too late to send: its detail still names the sibling
			// that held it, which is decided now. (GroupLead writes no
			// event, so the user is not notified twice.)
			when := "after this auction ended"
			if left := o.Item.End.Sub(now); left > 0 {
				when = fmt.Sprintf("%.1f s before this auction's end, too late to send the bid", left.Seconds())
			}
			detail := heldTooLong + "; that was ruled out only " + when + "."
			if err := s.st.Transition(ctx, store.TransitionParams{ID: o.ID, From: []store.State{store.StateSettled}, To: store.StateSettled, Outcome: outcome.GroupLead, Detail: detail}); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				s.log.Error("explain held group snipe", "snipe", o.ID, "err", err)
			}
		}
	}
}

// heldTooLong opens the detail of a group snipe held back until it was too
// late to send.
const heldTooLong = "Held back while another item of this Bid Group might have been won"

// undecided reports whether a group has a snipe, other than id, whose bid
// is out and may still win (firing or placed).
func undecided(sibs []store.Snipe, id int64) bool {
	for _, o := range sibs {
		if o.ID != id && (o.State == store.StateFiring || o.State == store.StatePlaced) {
			return true
		}
	}
	return false
}
