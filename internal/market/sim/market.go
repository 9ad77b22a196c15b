package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
	"github.com/sniped/sniped/internal/money"
)

// Search limits.
const (
	// DefaultSearchLimit applies when Search is given limit <= 0.
	DefaultSearchLimit = 100
	// maxWatchItems bounds a watch list.
	maxWatchItems = 200
)

// Item returns an item's current details, ended or not.
func (s *Sim) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	if err := s.enter(ctx, OpItem, "", itemNo); err != nil {
		return market.Item{}, err
	}
	l, err := s.lot(itemNo)
	if err != nil {
		return market.Item{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v, now := s.seen(l, s.nowMs()) // a past state under SetStale
	return v.item(now, s.cfg.ImageBaseURL), nil
}

// Search returns up to limit live items whose title or category contains
// every word of query (case-insensitive), located in country ("" = any),
// soonest-ending first.
func (s *Sim) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	if err := s.enter(ctx, OpSearch, "", 0); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	words := strings.Fields(strings.ToLower(query))
	now := s.nowMs()
	var hits []*lot
	for _, l := range s.snapshot() {
		if country != "" && l.Country != country {
			continue
		}
		if !matches(l.search, words) {
			continue
		}
		l.mu.Lock()
		live := !l.removed && l.status(now) == market.Running
		l.mu.Unlock()
		if live {
			hits = append(hits, l)
		}
	}
	slices.SortFunc(hits, func(a, b *lot) int {
		if a.EndMs != b.EndMs {
			return cmpInt(a.EndMs, b.EndMs)
		}
		return cmpInt(a.ItemNo, b.ItemNo)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]market.Item, len(hits))
	for i, l := range hits {
		l.mu.Lock()
		out[i] = l.item(now, s.cfg.ImageBaseURL)
		l.mu.Unlock()
	}
	return out, nil
}

func matches(text string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WatchList returns user's watch list, soonest-ending first. On a user's
// first call it is seeded with 10–40 live items chosen deterministically
// from the seed and the user name. Ended items stay on the list.
func (s *Sim) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	if err := s.enter(ctx, OpWatchList, user, 0); err != nil {
		return nil, err
	}
	if err := s.seedWatch(ctx, user); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var lots []*lot
	for _, no := range s.watch[user] {
		if l := s.lots[no]; l != nil {
			lots = append(lots, l)
		}
	}
	s.mu.RUnlock()
	now := s.nowMs()
	out := make([]market.Item, 0, len(lots))
	for _, l := range lots {
		l.mu.Lock()
		if !l.removed {
			out = append(out, l.item(now, s.cfg.ImageBaseURL))
		}
		l.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b market.Item) int { return a.End.Compare(b.End) })
	return out, nil
}

// seedWatch fills a new user's watch list once.
func (s *Sim) seedWatch(ctx context.Context, user string) error {
	s.mu.RLock()
	done := s.seeded[user]
	s.mu.RUnlock()
	if done {
		return nil
	}
	now := s.nowMs()
	var live []int64
	for _, l := range s.snapshot() {
		l.mu.Lock()
		if !l.removed && l.status(now) == market.Running && l.Seller != user {
			live = append(live, l.ItemNo)
		}
		l.mu.Unlock()
	}
	r := rng(s.cfg.Seed, "watch:"+user)
	n := 10 + r.IntN(31)
	r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	live = live[:min(n, len(live))]

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seeded[user] {
		return nil
	}
	var add []int64
	for _, no := range live {
		if !slices.Contains(s.watch[user], no) {
			add = append(add, no)
		}
	}
	if err := s.saveWatch(ctx, user, add, len(s.watch[user]), true); err != nil {
		return err
	}
	s.watch[user] = append(s.watch[user], add...)
	s.seeded[user] = true
	return nil
}

// PlaceBid submits user's maximum bid. Every decision on an existing item,
// accepted or rejected, is committed before PlaceBid returns; injected
// unavailability and authorization failures never reach the item and are
// not recorded.
func (s *Sim) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	if err := s.enter(ctx, OpPlaceBid, user, itemNo); err != nil {
		return market.BidReceipt{}, &market.BidError{Err: err}
	}
	rc, err := s.bid(ctx, user, itemNo, max)
	if errProcessed(err) && s.fail.loseAnswer(itemNo) {
		return market.BidReceipt{}, &market.BidError{Err: ErrLostAnswer}
	}
	return rc, err
}

// bid is PlaceBid without failure injection (rivals and /sim/placeBid use it).
func (s *Sim) bid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	l, err := s.lot(itemNo)
	if err != nil {
		return market.BidReceipt{}, &market.BidError{Err: err}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	nowMs := s.nowMs()
	at := time.UnixMilli(nowMs).UTC()
	reject := l.auction.Check(auction.Bid{Bidder: user, Max: max, Time: at, Ineligible: s.fail.isIneligible(user, itemNo)})
	rec := bidRecord{Bidder: user, Max: max, TimeMs: nowMs}
	if reject != nil {
		rec.Reason = reasonOf(reject)
		rec.Price = l.auction.Price()
	} else {
		// Applied now; undone by rebuild if it cannot be stored.
		rec.Accepted = true
		l.auction.Accept(user, max, at)
		rec.Price = l.auction.Price()
		rec.Reason = "outbid"
		if leader, _ := l.auction.Leader(); leader == user {
			rec.Reason = "high-bidder"
		}
	}
	if err := s.saveBid(ctx, itemNo, rec); err != nil {
		if rec.Accepted {
			s.rebuild(l)
		}
		s.log.Error("simulator could not store a bid", "item_no", itemNo, "err", err)
		return market.BidReceipt{}, &market.BidError{Err: errors.Join(market.ErrUnavailable, err)}
	}
	l.bids = append(l.bids, rec)
	if reject != nil {
		return market.BidReceipt{}, l.auction.Refusal(reject)
	}
	return market.BidReceipt{HighBidder: rec.Reason == "high-bidder", CurrentPrice: rec.Price, Time: at}, nil
}

// rebuild replays a lot's stored bids, undoing an accept whose write failed.
func (s *Sim) rebuild(l *lot) {
	ending := l.auction.Ending()
	l.auction = auction.New(l.terms())
	l.auction.Restore(ending)
	for _, b := range l.bids {
		if b.Accepted {
			l.auction.Accept(b.Bidder, b.Max, time.UnixMilli(b.TimeMs).UTC())
		}
	}
}

// BidState reports user's standing on an item.
func (s *Sim) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	if err := s.enter(ctx, OpBidState, user, itemNo); err != nil {
		return market.BidState{}, err
	}
	l, err := s.lot(itemNo)
	if err != nil {
		return market.BidState{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v, now := s.seen(l, s.nowMs()) // a past state under SetStale
	return v.auction.Standing(user, time.UnixMilli(now)), nil
}

// History returns an item's accepted bids in time order, each with the
// visible price after it.
func (s *Sim) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	if err := s.enter(ctx, OpHistory, "", itemNo); err != nil {
		return nil, err
	}
	l, err := s.lot(itemNo)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.auction.History(), nil
}

// Now returns the marketplace's clock, which runs ClockSkew ahead of the
// local one.
func (s *Sim) Now(ctx context.Context) (time.Time, error) {
	if err := s.enter(ctx, OpNow, "", 0); err != nil {
		return time.Time{}, err
	}
	return s.now(), nil
}

// enter is the common prologue of Market methods: a cancelled context and
// injected stalls and failures.
func (s *Sim) enter(ctx context.Context, op, user string, itemNo int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d := s.fail.slowFor(op, itemNo); d > 0 {
		if err := s.stall(ctx, d); err != nil {
			return err
		}
	}
	return s.fail.check(op, user, itemNo)
}

// reasonOf is the short rejection reason recorded with a bid and shown by
// /sim/item and /sim/placeBid.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, market.ErrTooLow):
		return "too-low"
	case errors.Is(err, market.ErrIncrementNotMet):
		return "bid-incr"
	case errors.Is(err, market.ErrEnded):
		return "ended"
	case errors.Is(err, market.ErrEndedByBuyItNow):
		return "bin"
	case errors.Is(err, market.ErrCancelled):
		return "ended-early"
	case errors.Is(err, market.ErrSellerCannotBid):
		return "seller"
	case errors.Is(err, market.ErrCannotLowerMax):
		return "own-max"
	case errors.Is(err, market.ErrIneligible):
		return "ineligible"
	case errors.Is(err, market.ErrBINPriceReached):
		return "bin-price"
	case errors.Is(err, market.ErrNotFound):
		return "not-found"
	case errors.Is(err, market.ErrNotAuthorized):
		return "market-auth"
	case errors.Is(err, market.ErrUnavailable):
		return "market-down"
	}
	return "error"
}
