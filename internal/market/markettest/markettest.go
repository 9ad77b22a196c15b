// Package markettest is a lean in-process marketplace for the sniper's tests
// and benchmark. It follows the real marketplace's bidding rules closely
// enough to produce every outcome (proxy bidding, increments, reserve, Buy It
// Now, early ends) and adds what tests need on top: configurable latency,
// failure injection, a skewed clock and a record of every bid it received.
package markettest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// Method names, as used by Inject and Calls.
const (
	MethodItem      = "Item"
	MethodSearch    = "Search"
	MethodWatchList = "WatchList"
	MethodPlaceBid  = "PlaceBid"
	MethodBidState  = "BidState"
	MethodHistory   = "History"
	MethodNow       = "Now"
)

// Injector decides whether a call fails. It returns nil to let the call
// through. itemNo is 0 for calls without an item.
type Injector func(method, user string, itemNo int64) error

// Bid is one bid the marketplace received, accepted or not.
type Bid struct {
	Bidder   string
	Max      money.Amount
	Time     time.Time // marketplace clock
	Accepted bool
	Err      error
}

// Market is an in-process marketplace. The zero value is not usable; call New.
type Market struct {
	clk clock.Clock

	// Per-call settings are atomics so that thousands of concurrent calls
	// (the benchmark's bursts) do not queue on mu just to start.
	latency atomic.Int64 // time.Duration
	inject  atomic.Pointer[Injector]
	calls   sync.Map // method → *atomic.Int64

	mu       sync.Mutex
	items    map[int64]*lot
	next     int64
	offset   time.Duration
	watch    map[string][]int64
	onPlaced func(user string, itemNo int64, max money.Amount)
}

type lot struct {
	item    market.Item
	reserve money.Amount
	bids    []Bid
	// leader and leaderMax are the current high bidder and maximum.
	leader    string
	leaderMax money.Amount
	maxOf     map[string]money.Amount
	barred    map[string]bool
}

// New returns an empty marketplace on clk.
func New(clk clock.Clock) *Market {
	return &Market{clk: clk, items: map[int64]*lot{}, next: 1000, watch: map[string][]int64{}}
}

// SetLatency makes every call wait d before answering.
func (m *Market) SetLatency(d time.Duration) { m.latency.Store(int64(d)) }

// SetOffset sets the marketplace clock to the local clock plus d.
func (m *Market) SetOffset(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offset = d
}

// SetInjector installs (or with nil removes) failure injection.
func (m *Market) SetInjector(f Injector) {
	if f == nil {
		m.inject.Store(nil)
		return
	}
	m.inject.Store(&f)
}

// OnPlaced registers a hook called (without locks held) after each accepted
// PlaceBid, e.g. to make a rival react.
func (m *Market) OnPlaced(f func(user string, itemNo int64, max money.Amount)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onPlaced = f
}

// Calls returns how many times method was called.
func (m *Market) Calls(method string) int {
	if c, ok := m.calls.Load(method); ok {
		return int(c.(*atomic.Int64).Load())
	}
	return 0
}

// ItemSpec describes a listing for Add.
type ItemSpec struct {
	Title      string
	Seller     string
	Currency   string // default USD
	StartPrice money.Amount
	Reserve    money.Amount
	BuyItNow   money.Amount
	// EndsIn is measured on the marketplace clock from now.
	EndsIn time.Duration
	// EndAt, when set, is the end time instead of EndsIn.
	EndAt time.Time
}

// Add lists an item and returns its number.
func (m *Market) Add(spec ItemSpec) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return m.addLocked(m.next, spec).ItemNo
}

// AddNumbered lists an item under a chosen number (the benchmark stores
// snipes for known numbers first) and returns it.
func (m *Market) AddNumbered(no int64, spec ItemSpec) market.Item {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addLocked(no, spec)
}

func (m *Market) addLocked(no int64, spec ItemSpec) market.Item {
	now := m.nowLocked().Truncate(time.Millisecond)
	if spec.Currency == "" {
		spec.Currency = "USD"
	}
	if spec.Seller == "" {
		spec.Seller = "seller"
	}
	if spec.Title == "" {
		spec.Title = fmt.Sprintf("Item %d", no)
	}
	if spec.StartPrice <= 0 {
		spec.StartPrice = 100
	}
	l := &lot{
		item: market.Item{
			ItemNo: no, Title: spec.Title, Category: "Test:Things", Currency: spec.Currency, Country: "US",
			SellerID: spec.Seller, SellerScore: 100, SellerPercent: 99.5, ShippingType: "Flat",
			StartPrice: spec.StartPrice, CurrentPrice: spec.StartPrice, MinimumToBid: spec.StartPrice,
			HasReserve: spec.Reserve > 0, BuyItNow: spec.BuyItNow,
			Start: now, End: now.Add(spec.EndsIn).Truncate(time.Millisecond),
		},
		reserve: spec.Reserve,
		maxOf:   map[string]money.Amount{},
		barred:  map[string]bool{},
	}
	if !spec.EndAt.IsZero() {
		l.item.End = spec.EndAt
	}
	m.items[no] = l
	return l.item
}

// Bar makes user ineligible to bid on itemNo.
func (m *Market) Bar(itemNo int64, user string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.items[itemNo]; l != nil {
		l.barred[user] = true
	}
}

// Remove deletes an item, so that it is not found any more.
func (m *Market) Remove(itemNo int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, itemNo)
}

// End ends an auction early: reason is market.EndedCancelled or market.EndedSold.
func (m *Market) End(itemNo int64, reason market.EndReason) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.ErrNotFound
	}
	m.settleLocked(l)
	if l.item.Ended {
		return market.ErrEnded
	}
	l.item.Ended, l.item.EndReason, l.item.End = true, reason, m.nowLocked()
	return nil
}

// BuyItNow ends the auction with a Buy It Now purchase by user.
func (m *Market) BuyItNow(itemNo int64, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.ErrNotFound
	}
	m.settleLocked(l)
	if l.item.Ended {
		return market.ErrEnded
	}
	l.item.Ended, l.item.EndReason, l.item.End = true, market.EndedBuyItNow, m.nowLocked()
	l.leader, l.leaderMax = user, l.item.BuyItNow
	l.item.CurrentPrice = l.item.BuyItNow
	return nil
}

// SetEnd moves an item's end time (marketplace clock).
func (m *Market) SetEnd(itemNo int64, end time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.items[itemNo]; l != nil {
		l.item.End = end
	}
}

// Rival places a bid for user immediately, with no latency or injection.
func (m *Market) Rival(user string, itemNo int64, max money.Amount) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.placeLocked(user, itemNo, max)
	return err
}

// Bids returns every bid itemNo received, in arrival order.
func (m *Market) Bids(itemNo int64) []Bid {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.items[itemNo]; l != nil {
		return append([]Bid(nil), l.bids...)
	}
	return nil
}

// Winner returns who bought an ended item ("" when nobody did).
func (m *Market) Winner(itemNo int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return ""
	}
	m.settleLocked(l)
	if !l.item.Ended {
		return ""
	}
	return winnerLocked(l)
}

// AddToWatchList puts itemNo on user's watch list.
func (m *Market) AddToWatchList(user string, itemNo int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watch[user] = append(m.watch[user], itemNo)
}

func winnerLocked(l *lot) string {
	switch l.item.EndReason {
	case market.EndedCancelled:
		return ""
	case market.EndedBuyItNow:
		return l.leader
	}
	if l.leader == "" || (l.reserve > 0 && l.leaderMax < l.reserve) {
		return ""
	}
	return l.leader
}

func (m *Market) nowLocked() time.Time { return m.clk.Now().Add(m.offset) }

// settleLocked marks an item ended once its end time has passed.
func (m *Market) settleLocked(l *lot) {
	if !l.item.Ended && !m.nowLocked().Before(l.item.End) {
		l.item.Ended, l.item.EndReason = true, market.EndedNormally
	}
}

// enter counts a call, waits the request half of the latency and applies
// injection. It returns the error to fail the call with.
func (m *Market) enter(ctx context.Context, method, user string, itemNo int64) error {
	c, ok := m.calls.Load(method)
	if !ok {
		c, _ = m.calls.LoadOrStore(method, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
	lat := time.Duration(m.latency.Load())
	if err := m.wait(ctx, lat/2); err != nil {
		return err
	}
	if inj := m.inject.Load(); inj != nil {
		return (*inj)(method, user, itemNo)
	}
	return nil
}

// leave waits the response half of the latency, so that the marketplace
// stamps its answers mid-way like a real round trip.
func (m *Market) leave(ctx context.Context) {
	lat := time.Duration(m.latency.Load())
	m.wait(ctx, lat-lat/2)
}

func (m *Market) wait(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := m.clk.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
	return ctx.Err()
}

// Item implements market.Market.
func (m *Market) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	if err := m.enter(ctx, MethodItem, "", itemNo); err != nil {
		return market.Item{}, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.Item{}, market.ErrNotFound
	}
	m.settleLocked(l)
	return l.item, nil
}

// Search implements market.Market: a case-insensitive title match.
func (m *Market) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	if err := m.enter(ctx, MethodSearch, "", 0); err != nil {
		return nil, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []market.Item
	for _, l := range m.items {
		m.settleLocked(l)
		if !l.item.Ended && strings.Contains(strings.ToLower(l.item.Title), strings.ToLower(query)) && (country == "" || country == l.item.Country) {
			out = append(out, l.item)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// WatchList implements market.Market.
func (m *Market) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	if err := m.enter(ctx, MethodWatchList, user, 0); err != nil {
		return nil, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []market.Item
	for _, no := range m.watch[user] {
		if l := m.items[no]; l != nil {
			out = append(out, l.item)
		}
	}
	return out, nil
}

// PlaceBid implements market.Market.
func (m *Market) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	if err := m.enter(ctx, MethodPlaceBid, user, itemNo); err != nil {
		return market.BidReceipt{}, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	r, err := m.placeLocked(user, itemNo, max)
	hook := m.onPlaced
	m.mu.Unlock()
	if err == nil && hook != nil {
		hook(user, itemNo, max)
	}
	return r, err
}

func (m *Market) placeLocked(user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	l := m.items[itemNo]
	if l == nil {
		return market.BidReceipt{}, market.ErrNotFound
	}
	m.settleLocked(l)
	now := m.nowLocked()
	reject := func(err error) (market.BidReceipt, error) {
		l.bids = append(l.bids, Bid{Bidder: user, Max: max, Time: now, Err: err})
		return market.BidReceipt{}, &market.BidError{Err: err, Minimum: l.item.MinimumToBid, CurrentPrice: l.item.CurrentPrice}
	}
	it := &l.item
	switch {
	case it.Ended && it.EndReason == market.EndedCancelled:
		return reject(market.ErrCancelled)
	case it.Ended && it.EndReason == market.EndedBuyItNow:
		return reject(market.ErrEndedByBuyItNow)
	case it.Ended:
		return reject(market.ErrEnded)
	case user == it.SellerID:
		return reject(market.ErrSellerCannotBid)
	case l.barred[user]:
		return reject(market.ErrIneligible)
	case it.BuyItNow > 0 && max >= it.BuyItNow:
		return reject(market.ErrBINPriceReached)
	}
	if user == l.leader {
		if max <= l.leaderMax {
			return reject(market.ErrCannotLowerMax)
		}
	} else {
		if it.Bids > 0 && max < it.CurrentPrice || it.Bids == 0 && max < it.StartPrice {
			return reject(market.ErrTooLow)
		}
		if max < it.MinimumToBid {
			return reject(market.ErrIncrementNotMet)
		}
	}
	l.bids = append(l.bids, Bid{Bidder: user, Max: max, Time: now, Accepted: true})
	if max > l.maxOf[user] {
		l.maxOf[user] = max
	}
	it.Bids++
	m.reprice(l)
	return market.BidReceipt{HighBidder: l.leader == user, CurrentPrice: it.CurrentPrice, Time: now}, nil
}

// reprice applies proxy bidding: the highest maximum leads (earlier wins
// ties) at min(highest, second + increment(second)), lifted to the reserve
// when the leader's maximum reaches it.
func (m *Market) reprice(l *lot) {
	type cand struct {
		max money.Amount
		at  int // index of the bid that set max; earlier wins ties
	}
	best := map[string]cand{}
	for i, b := range l.bids {
		if c, ok := best[b.Bidder]; b.Accepted && (!ok || b.Max > c.max) {
			best[b.Bidder] = cand{b.Max, i}
		}
	}
	leader, lead := "", cand{}
	for u, c := range best {
		if leader == "" || c.max > lead.max || c.max == lead.max && c.at < lead.at {
			leader, lead = u, c
		}
	}
	var second money.Amount
	for u, c := range best {
		if u != leader && c.max > second {
			second = c.max
		}
	}
	price := l.item.StartPrice
	if second > 0 {
		price = min(lead.max, second+Increment(second))
	}
	if l.reserve > 0 && lead.max >= l.reserve && price < l.reserve {
		price = l.reserve
	}
	l.leader, l.leaderMax = leader, lead.max
	l.item.CurrentPrice = price
	l.item.MinimumToBid = price + Increment(price)
	l.item.ReserveMet = l.reserve == 0 || lead.max >= l.reserve
}

// BidState implements market.Market.
func (m *Market) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	if err := m.enter(ctx, MethodBidState, user, itemNo); err != nil {
		return market.BidState{}, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.BidState{}, market.ErrNotFound
	}
	m.settleLocked(l)
	mx, has := l.maxOf[user]
	st := market.BidState{
		HasBid: has, MaxBid: mx, HighBidder: l.leader == user && user != "",
		Ended: l.item.Ended, EndReason: l.item.EndReason,
		ReserveMet: l.reserve == 0 || l.leaderMax >= l.reserve, CurrentPrice: l.item.CurrentPrice,
	}
	st.Won = l.item.Ended && winnerLocked(l) == user && user != ""
	return st, nil
}

// History implements market.Market.
func (m *Market) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	if err := m.enter(ctx, MethodHistory, "", itemNo); err != nil {
		return nil, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return nil, market.ErrNotFound
	}
	var out []market.HistoryEntry
	for _, b := range l.bids {
		if b.Accepted {
			out = append(out, market.HistoryEntry{Time: b.Time, Price: l.item.CurrentPrice, Bidder: b.Bidder})
		}
	}
	return out, nil
}

// Now implements market.Market.
func (m *Market) Now(ctx context.Context) (time.Time, error) {
	if err := m.enter(ctx, MethodNow, "", 0); err != nil {
		return time.Time{}, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nowLocked(), nil
}

// Increment is the USD bid increment at price (the marketplace's table).
func Increment(price money.Amount) money.Amount {
	steps := []struct{ below, inc money.Amount }{
		{100, 5}, {500, 25}, {2500, 50}, {10000, 100}, {25000, 250},
		{50000, 500}, {100000, 1000}, {250000, 2500}, {500000, 5000},
	}
	for _, s := range steps {
		if price < s.below {
			return s.inc
		}
	}
	return 10000
}

var _ market.Market = (*Market)(nil)
