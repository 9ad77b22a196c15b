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

// preflight refreshes a tracked snipe's item ahead of the shot. It runs on
// its own goroutine and finishes before the arm step, so it never delays
// the shot. When the item can no longer be won with this bid, it settles
// the snipe instead: the compare-and-set against the arm step decides
// which one acts.
func (s *Sniper) preflight(ctx context.Context, sn store.Snipe) {
	id := sn.ID
	it, err := s.mk.Item(ctx, sn.ItemNo)
	if errors.Is(err, market.ErrNotFound) {
		if sn, err := s.st.SnipeByID(ctx, id); err == nil && armable(sn) {
			s.settleScheduled(ctx, sn, outcome.NotFound, "")
		}
		return
	}
	if err != nil {
		return // the shot goes ahead on the last snapshot
	}
	snap := snapshotOf(sn.Item, it)
	if snap != sn.Item {
		if err := s.st.UpdateItem(ctx, id, snap); err != nil {
			s.log.Warn("pre-flight: store item", "snipe", id, "err", err)
		} else if !snap.End.Equal(sn.Item.End) {
			s.Changed(id) // FireAt moved with the end
		}
	}
	if _, _, lost := cannotWin(sn, it); !lost {
		return
	}
	// Decide on the stored snipe, not the loaded copy: an edit may have
	// raised the bid since.
	if sn, err = s.st.SnipeByID(ctx, id); err != nil || !armable(sn) {
		return
	}
	if code, detail, lost := cannotWin(sn, it); lost {
		s.settleScheduled(ctx, sn, code, detail)
	}
}

// armable reports whether a snipe is scheduled to fire, whatever its stored
// item says (pre-flight may just have marked the item ended).
func armable(sn store.Snipe) bool {
	return sn.State == store.StateScheduled && sn.Enabled && sn.Bid > 0
}

// cannotWin reports whether a fresh look at the item shows the snipe can
// no longer win, with the outcome to settle it with. force=1 skips
// sniped's own minimum checks; the marketplace still judges the bid.
func cannotWin(sn store.Snipe, it market.Item) (outcome.Code, string, bool) {
	if it.Ended || it.EndReason != market.Running {
		if c, ok := endedCode(it.EndReason); ok {
			return c, "", true
		}
		return outcome.EndedEarly, fmt.Sprintf("The auction ended at %s, before the snipe was due.", it.End.UTC().Format(time.DateTime)), true
	}
	if sn.Force {
		return 0, "", false
	}
	switch {
	case it.Bids > 0 && sn.Bid < it.CurrentPrice, it.Bids == 0 && sn.Bid < it.StartPrice:
		return outcome.TooLow, fmt.Sprintf("Your maximum %s %s is below the current price %s; the minimum to bid is %s.", sn.Bid, it.Currency, it.CurrentPrice, it.MinimumToBid), true
	case sn.Bid < it.MinimumToBid:
		return outcome.IncrementNotMet, fmt.Sprintf("Your maximum %s %s is below the minimum to bid %s (current price %s plus the increment).", sn.Bid, it.Currency, it.MinimumToBid, it.CurrentPrice), true
	}
	return 0, "", false
}

// snapshotOf is old refreshed with the marketplace's item.
func snapshotOf(old store.ItemSnapshot, it market.Item) store.ItemSnapshot {
	n := old
	n.Title, n.Currency, n.CurrentPrice, n.Bids = it.Title, it.Currency, it.CurrentPrice, it.Bids
	n.Start, n.End, n.Ended = it.Start, it.End, it.Ended
	if n.GalleryURL == "" {
		n.GalleryURL = it.PictureURL
	}
	// Stores keep milliseconds: keep the stored value when only precision
	// differs, so an unchanged item compares equal and is not rewritten.
	if sameMilli(n.Start, old.Start) {
		n.Start = old.Start
	}
	if sameMilli(n.End, old.End) {
		n.End = old.End
	}
	return n
}

func sameMilli(a, b time.Time) bool { return a.UnixMilli() == b.UnixMilli() }

// settleScheduled settles a snipe that was never sent. The compare-and-set
// also checks the bid the decision was taken on: an edit that raised it
// since the re-read wins, and the snipe stays armed.
func (s *Sniper) settleScheduled(ctx context.Context, sn store.Snipe, code outcome.Code, detail string) {
	if s.record(ctx, sn, store.TransitionParams{From: []store.State{store.StateScheduled}, To: store.StateSettled, Outcome: code, Detail: detail, IfBid: sn.Bid}) {
		s.sched.forget(sn.ID)
	}
}
