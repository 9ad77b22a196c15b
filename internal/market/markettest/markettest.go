// Package markettest is a lean in-process marketplace for the sniper's tests
// and benchmark. Its bidding rules are package auction's, the same as the
// simulator's (proxy bidding, increments, reserve, Buy It Now, early ends),
// and it adds what tests need on top: configurable latency, failure
// injection, a skewed clock and a record of every bid it received. It
// passes the marketplace contract suite (package contract).
package markettest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
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

// lot is one listing: the fixed details shown in market.Item, the auction
// (rules, price, ending) and every bid received.
type lot struct {
	item    market.Item // the listing's fixed fields; Fill adds the auction's
	auction *auction.Auction
	bids    []Bid
	barred  map[string]bool
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
	Title      string // default "Item N"
	Category   string // default "Test:Things"
	Seller     string // default "seller"
	Currency   string // default USD
	Country    string // default US
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
	if spec.Country == "" {
		spec.Country = "US"
	}
	if spec.Category == "" {
		spec.Category = "Test:Things"
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
	end := now.Add(spec.EndsIn).Truncate(time.Millisecond)
	if !spec.EndAt.IsZero() {
		end = spec.EndAt
	}
	l := &lot{
		item: market.Item{
			ItemNo: no, Title: spec.Title, Category: spec.Category, Country: spec.Country,
			SellerScore: 100, SellerPercent: 99.5, ShippingType: "Flat", Start: now,
		},
		auction: auction.New(auction.Terms{Currency: spec.Currency, Seller: spec.Seller, Start: spec.StartPrice,
			Reserve: spec.Reserve, BuyItNow: spec.BuyItNow, End: end}),
		barred: map[string]bool{},
	}
	m.items[no] = l
	return m.itemLocked(l)
}

// itemLocked renders a lot as the marketplace shows it now.
func (m *Market) itemLocked(l *lot) market.Item {
	it := l.item
	l.auction.Fill(&it, m.nowLocked())
	return it
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

// End ends an auction early as its seller: reason is market.EndedCancelled,
// or market.EndedSold, which needs a high bidder at or above the reserve
// (auction.ErrNothingToSell). An ended auction gives the market sentinel
// saying how it ended.
func (m *Market) End(itemNo int64, reason market.EndReason) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.ErrNotFound
	}
	switch reason {
	case market.EndedCancelled, market.EndedSold:
	default:
		return fmt.Errorf("markettest: End with reason %q: want cancelled or sold-early", reason)
	}
	return l.auction.EndEarly(m.nowLocked(), reason == market.EndedSold)
}

// BuyItNow ends the auction with a Buy It Now purchase by user, which
// needs Buy It Now still offered (auction.ErrNotOffered).
func (m *Market) BuyItNow(itemNo int64, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.ErrNotFound
	}
	return l.auction.BuyItNow(user, m.nowLocked())
}

// SetEnd moves an item's scheduled end time (marketplace clock), as if
// the listing had always ended then: its bids are replayed on the new
// terms.
func (m *Market) SetEnd(itemNo int64, end time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return
	}
	terms, ending := l.auction.Terms(), l.auction.Ending()
	terms.End = end
	l.auction = auction.New(terms)
	l.auction.Restore(ending)
	for _, b := range l.bids {
		if b.Accepted {
			l.auction.Accept(b.Bidder, b.Max, b.Time)
		}
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

// Peek returns an item as Item shows it, without latency, failure
// injection or counting a call: the ground truth for tests.
func (m *Market) Peek(itemNo int64) (market.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return market.Item{}, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	return m.itemLocked(l), nil
}

// Winner returns who bought an ended item ("" when nobody did).
func (m *Market) Winner(itemNo int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.items[itemNo]
	if l == nil {
		return ""
	}
	return l.auction.Winner(m.nowLocked())
}

// AddToWatchList puts itemNo on user's watch list (a no-op when it is
// already there).
func (m *Market) AddToWatchList(user string, itemNo int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.watch[user], itemNo) {
		m.watch[user] = append(m.watch[user], itemNo)
	}
}

func (m *Market) nowLocked() time.Time { return m.clk.Now().Add(m.offset) }

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
		return market.Item{}, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	return m.itemLocked(l), nil
}

// Search implements market.Market: live items whose title or category
// contains every word of query (case-insensitive), in country ("" = any),
// soonest-ending first (ties by item number), at most limit (default 100).
func (m *Market) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	if err := m.enter(ctx, MethodSearch, "", 0); err != nil {
		return nil, err
	}
	defer m.leave(ctx)
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	words := strings.Fields(strings.ToLower(query))
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []market.Item
	for _, l := range m.items {
		it := m.itemLocked(l)
		if it.Ended || (country != "" && country != it.Country) || !matches(strings.ToLower(it.Title+" "+it.Category), words) {
			continue
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b market.Item) int {
		if c := a.End.Compare(b.End); c != 0 {
			return c
		}
		return cmp.Compare(a.ItemNo, b.ItemNo)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DefaultSearchLimit applies when Search is given limit <= 0.
const DefaultSearchLimit = 100

// matches reports whether text contains every word.
func matches(text string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// WatchList implements market.Market: the items added with AddToWatchList
// that still exist, ended or not, soonest-ending first.
func (m *Market) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	if err := m.enter(ctx, MethodWatchList, user, 0); err != nil {
		return nil, err
	}
	defer m.leave(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []market.Item{}
	for _, no := range m.watch[user] {
		if l := m.items[no]; l != nil {
			out = append(out, m.itemLocked(l))
		}
	}
	slices.SortStableFunc(out, func(a, b market.Item) int { return a.End.Compare(b.End) })
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

// placeLocked judges and records a bid. Every bid on an existing item is
// recorded, accepted or not.
func (m *Market) placeLocked(user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	l := m.items[itemNo]
	if l == nil {
		return market.BidReceipt{}, &market.BidError{Err: market.ErrNotFound}
	}
	now := m.nowLocked()
	r, err := l.auction.Place(auction.Bid{Bidder: user, Max: max, Time: now, Ineligible: l.barred[user]})
	b := Bid{Bidder: user, Max: max, Time: now, Accepted: err == nil}
	var be *market.BidError
	if errors.As(err, &be) {
		b.Err = be.Err
	}
	l.bids = append(l.bids, b)
	return r, err
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
		return market.BidState{}, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	return l.auction.Standing(user, m.nowLocked()), nil
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
		return nil, fmt.Errorf("item %d: %w", itemNo, market.ErrNotFound)
	}
	return l.auction.History(), nil
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

var _ market.Market = (*Market)(nil)
