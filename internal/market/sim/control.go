package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
	"github.com/sniped/sniped/internal/money"
)

// Scripting limits for CreateItem.
const (
	// MinEndsIn is the shortest auction CreateItem accepts.
	MinEndsIn = time.Second
	// MaxEndsIn is the longest (the real site's longest auction is 10 days;
	// a month leaves room for demos).
	MaxEndsIn = 30 * 24 * time.Hour
	// MaxTitleLen is the real site's title limit.
	MaxTitleLen = 80
	// DefaultSeller sells items created without a seller.
	DefaultSeller = "sim_seller"
	// DefaultCategory is used for items created without a category.
	DefaultCategory = "Everything Else:Other"
)

// Control errors, beside the market sentinels.
var (
	// ErrConflict: the item is not in a state that allows the operation
	// (already ended, Buy It Now not offered, nothing to sell).
	ErrConflict = errors.New("sim: operation not allowed in the item's state")
)

// NewItem is a listing to create with CreateItem.
type NewItem struct {
	Title      string
	StartPrice money.Amount
	EndsIn     time.Duration
	Reserve    money.Amount // 0: none
	BINPrice   money.Amount // 0: none
	Currency   string       // default: the country's currency
	Country    string       // default US
	Seller     string       // default DefaultSeller
	Category   string       // default DefaultCategory
}

// CreateItem lists a new item ending EndsIn from now on the marketplace
// clock, and returns its number and end time. Inputs are validated by the
// caller (the HTTP surface names the parameter); CreateItem still refuses
// impossible listings.
func (s *Sim) CreateItem(ctx context.Context, n NewItem) (int64, time.Time, error) {
	if n.Country == "" {
		n.Country = "US"
	}
	if n.Currency == "" {
		n.Currency = CurrencyOf(n.Country)
	}
	if n.Seller == "" {
		n.Seller = DefaultSeller
	}
	if n.Category == "" {
		n.Category = DefaultCategory
	}
	switch {
	case n.Title == "" || len(n.Title) > MaxTitleLen:
		return 0, time.Time{}, fmt.Errorf("sim: title must be 1 to %d characters", MaxTitleLen)
	case n.StartPrice <= 0:
		return 0, time.Time{}, errors.New("sim: start price must be positive")
	case n.EndsIn < MinEndsIn || n.EndsIn > MaxEndsIn:
		return 0, time.Time{}, fmt.Errorf("sim: ends in must be between %v and %v", MinEndsIn, MaxEndsIn)
	case CurrencyOf(n.Country) == "":
		return 0, time.Time{}, fmt.Errorf("sim: unsupported country %q", n.Country)
	case !market.KnownCurrency(n.Currency):
		return 0, time.Time{}, fmt.Errorf("sim: unsupported currency %q", n.Currency)
	case n.Reserve != 0 && n.Reserve < n.StartPrice:
		return 0, time.Time{}, errors.New("sim: reserve must be at least the start price")
	case n.BINPrice != 0 && (n.BINPrice <= n.StartPrice || n.BINPrice < n.Reserve):
		return 0, time.Time{}, errors.New("sim: Buy It Now price must be above the start price and at least the reserve")
	}
	now := s.now()
	l := listing{
		Title:         n.Title,
		Category:      n.Category,
		Currency:      n.Currency,
		Country:       n.Country,
		Seller:        n.Seller,
		SellerScore:   100,
		SellerPercent: 100,
		ShippingType:  "Flat",
		ShippingCost:  499,
		StartPrice:    n.StartPrice,
		Scripted:      true,
		Reserve:       n.Reserve,
		BINPrice:      n.BINPrice,
		StartMs:       now.UnixMilli(),
		EndMs:         now.Add(n.EndsIn).UnixMilli(),
	}
	if err := s.list(ctx, []*listing{&l}); err != nil {
		return 0, time.Time{}, err
	}
	return l.ItemNo, time.UnixMilli(l.EndMs).UTC(), nil
}

// list numbers, stores and lists new listings.
func (s *Sim) list(ctx context.Context, ls []*listing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range ls {
		l.ItemNo = s.nextNo + int64(i)
	}
	if err := s.saveListings(ctx, ls, false); err != nil {
		return err
	}
	for _, l := range ls {
		s.addLocked(newLot(*l))
	}
	return nil
}

// EndEarly ends a running auction at once, as its seller: sell=false cancels
// it (all bids void, nobody wins); sell=true sells to the high bidder at the
// current price, which needs at least one bid and the reserve met.
func (s *Sim) EndEarly(ctx context.Context, itemNo int64, sell bool) error {
	l, err := s.lot(itemNo)
	if err != nil {
		return err
	}
	now := s.nowMs()
	at := time.UnixMilli(now).UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.auction.Ending()
	switch err := l.auction.EndEarly(at, sell); {
	case errors.Is(err, auction.ErrNothingToSell):
		return fmt.Errorf("item %d: %v: %w", itemNo, err, ErrConflict)
	case err != nil:
		return fmt.Errorf("item %d has already ended: %w", itemNo, ErrConflict)
	}
	end := l.auction.Ending()
	if err := s.saveEnd(ctx, itemNo, end.Reason, now, ""); err != nil {
		l.auction.Restore(prev)
		return err
	}
	return nil
}

// BuyItNow buys a running item outright for buyer at its Buy It Now price,
// ending the auction.
func (s *Sim) BuyItNow(ctx context.Context, buyer string, itemNo int64) (money.Amount, error) {
	l, err := s.lot(itemNo)
	if err != nil {
		return 0, err
	}
	now := s.nowMs()
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.auction.Ending()
	switch err := l.auction.BuyItNow(buyer, time.UnixMilli(now).UTC()); {
	case errors.Is(err, auction.ErrNotOffered):
		return 0, fmt.Errorf("item %d does not offer Buy It Now (any more): %w", itemNo, ErrConflict)
	case err != nil:
		return 0, err
	}
	if err := s.saveEnd(ctx, itemNo, market.EndedBuyItNow, now, buyer); err != nil {
		l.auction.Restore(prev)
		return 0, err
	}
	return l.BINPrice, nil
}

// RivalBid places a bid for bidder as any other marketplace user would,
// bypassing failure injection (ineligibility still applies): scripted
// rivals, /sim/placeBid and the contract suite's control use it.
func (s *Sim) RivalBid(ctx context.Context, bidder string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	return s.bid(ctx, bidder, itemNo, max)
}

// Watch puts an item on user's marketplace watch list (a no-op when it is
// already there).
func (s *Sim) Watch(ctx context.Context, user string, itemNo int64) error {
	if _, err := s.lot(itemNo); err != nil {
		return err
	}
	// Seed first, so that the user's list still gets its seeded items.
	if err := s.seedWatch(ctx, user); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.watch[user], itemNo) {
		return nil
	}
	if len(s.watch[user]) >= maxWatchItems {
		return fmt.Errorf("watch list of %s is full (%d items): %w", user, maxWatchItems, ErrConflict)
	}
	if err := s.saveWatch(ctx, user, []int64{itemNo}, len(s.watch[user]), false); err != nil {
		return err
	}
	s.watch[user] = append(s.watch[user], itemNo)
	return nil
}

// RemoveItem deletes an item from the marketplace (failure injection: every
// call on it then fails with market.ErrNotFound). removed=false restores it.
func (s *Sim) RemoveItem(ctx context.Context, itemNo int64, removed bool) error {
	s.mu.RLock()
	l := s.lots[itemNo]
	s.mu.RUnlock()
	if l == nil {
		return fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.saveRemoved(ctx, itemNo, removed); err != nil {
		return err
	}
	l.removed = removed
	return nil
}

// BidView is one bid as /sim/item shows it.
type BidView struct {
	Bidder   string       `json:"bidder"`
	Max      money.Amount `json:"-"`
	MaxJSON  float64      `json:"max"`
	TimeMs   int64        `json:"time_ms"`
	Accepted bool         `json:"accepted"`
	Reason   string       `json:"reason"`
}

// State is the full state of an item, for /sim/item and tests.
type State struct {
	Item       market.Item
	Reserve    money.Amount
	BINPrice   money.Amount // as listed, even when no longer offered
	HighBidder string
	Winner     string
	Bids       []BidView // every bid, accepted or not, in arrival order
}

// ItemState returns an item's full state, including every bid. It ignores
// failure injection, so tests can always inspect the truth.
func (s *Sim) ItemState(ctx context.Context, itemNo int64) (State, error) {
	if err := ctx.Err(); err != nil {
		return State{}, err
	}
	l, err := s.lot(itemNo)
	if err != nil {
		return State{}, err
	}
	now := s.nowMs()
	l.mu.Lock()
	defer l.mu.Unlock()
	leader, _ := l.auction.Leader()
	st := State{
		Item:       l.item(now, s.cfg.ImageBaseURL),
		Reserve:    l.Reserve,
		BINPrice:   l.BINPrice,
		HighBidder: leader,
		Winner:     l.winner(now),
		Bids:       make([]BidView, len(l.bids)),
	}
	for i, b := range l.bids {
		st.Bids[i] = BidView{Bidder: b.Bidder, Max: b.Max, MaxJSON: b.Max.Float(), TimeMs: b.TimeMs, Accepted: b.Accepted, Reason: b.Reason}
	}
	return st, nil
}
