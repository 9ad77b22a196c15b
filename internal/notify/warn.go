package notify

import (
	"context"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// warnBatch bounds the snipes one warning pass looks at.
const warnBatch = 200

// warnLoop refreshes, once per snipe and maximum, the item of every armed
// snipe due within WarnBefore. The store compares the fresh price with the
// maximum and emits snipe.warning (UpdateItem), so the user hears of a
// lost cause while there is still time to raise the bid, and the sniper's
// own pre-flight refreshes stay as they are.
func (s *Service) warnLoop(ctx context.Context) {
	s.every(ctx, s.cfg.WarnEvery, s.warnPass)
}

func (s *Service) warnPass(ctx context.Context) {
	now := s.clk.Now()
	due, err := s.st.SnipesInState(ctx, store.StateScheduled, now.Add(s.cfg.WarnBefore), warnBatch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("snipes ending soon", "err", err)
		}
		return
	}
	live := map[[2]int64]bool{}
	for _, sn := range due {
		k := [2]int64{sn.ID, int64(sn.Bid)}
		live[k] = true
		s.mu.Lock()
		done := s.checked[k]
		s.mu.Unlock()
		if done || !sn.FireAt.After(now) {
			continue // checked already, or due now (pre-flight's turn)
		}
		if err := s.budget.wait(ctx); err != nil {
			return
		}
		it, err := s.mk.Item(ctx, sn.ItemNo)
		if err != nil {
			if ctx.Err() == nil && !market.Transient(err) {
				s.log.Debug("warning check: item", "snipe", sn.ID, "err", err)
			}
			continue // tried again on the next pass
		}
		s.mu.Lock()
		s.checked[k] = true
		s.mu.Unlock()
		// Stored even when unchanged: UpdateItem is where the price is
		// compared with the maximum (a forced bid may be below it already).
		snap := sn.Item
		snap.Title, snap.Currency, snap.CurrentPrice, snap.Bids = it.Title, it.Currency, it.CurrentPrice, it.Bids
		snap.Start, snap.End, snap.Ended = it.Start, it.End, it.Ended
		if err := s.st.UpdateItem(ctx, sn.ID, snap); err != nil && ctx.Err() == nil {
			s.log.Warn("warning check: store item", "snipe", sn.ID, "err", err)
		}
	}
	// Forget snipes that left the window (fired, settled, deleted).
	s.mu.Lock()
	for k := range s.checked {
		if !live[k] {
			delete(s.checked, k)
		}
	}
	s.mu.Unlock()
}
