package sniper

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// faultStore is the real store with store faults injected on demand and a
// count of the outcomes recorded.
type faultStore struct {
	store.Store
	mu sync.Mutex
	// beforeTransition, when set, runs before each Transition; an error
	// fails the call without reaching the store.
	beforeTransition func(p store.TransitionParams) error
	recorded         map[outcome.Code]int
	// failAccounts is how many of the next Accounts calls fail.
	failAccounts int
}

func (f *faultStore) Accounts(ctx context.Context) ([]store.Account, error) {
	f.mu.Lock()
	fail := f.failAccounts > 0
	if fail {
		f.failAccounts--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected: accounts unavailable")
	}
	return f.Store.Accounts(ctx)
}

func newFaultStore(s store.Store) *faultStore {
	return &faultStore{Store: s, recorded: map[outcome.Code]int{}}
}

func (f *faultStore) Transition(ctx context.Context, p store.TransitionParams) error {
	f.mu.Lock()
	hook := f.beforeTransition
	f.mu.Unlock()
	if hook != nil {
		if err := hook(p); err != nil {
			return err
		}
	}
	err := f.Store.Transition(ctx, p)
	if err == nil {
		f.mu.Lock()
		f.recorded[p.Outcome]++
		f.mu.Unlock()
	}
	return err
}

// onTransition installs (or with nil removes) the Transition hook.
func (f *faultStore) onTransition(h func(p store.TransitionParams) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beforeTransition = h
}

// count returns how many successful Transitions recorded code.
func (f *faultStore) count(code outcome.Code) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recorded[code]
}

// faultMarket wraps the reference marketplace with the faults a real
// network adds: a PlaceBid whose answer is lost (the bid is recorded, the
// caller sees a timeout), optionally landing only some time after the
// caller gave up.
type faultMarket struct {
	*markettest.Market
	mu sync.Mutex
	// lose is how many of the next PlaceBid answers to lose.
	lose int
	// landAfter delays a lost bid's arrival at the marketplace.
	landAfter time.Duration
	// slowBidState delays every BidState call before it reaches the
	// marketplace; inFlight and peak count the calls waiting.
	slowBidState   time.Duration
	inFlight, peak int
}

func (f *faultMarket) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	f.mu.Lock()
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	d := f.slowBidState
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if d > 0 {
		time.Sleep(d)
	}
	return f.Market.BidState(ctx, user, itemNo)
}

// peakBidState is the most BidState calls that were in flight at once.
func (f *faultMarket) peakBidState() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

// loseAnswers makes the next n PlaceBid calls time out for the caller; each
// bid still reaches the marketplace, after delay.
func (f *faultMarket) loseAnswers(n int, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lose, f.landAfter = n, delay
}

func (f *faultMarket) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	f.mu.Lock()
	lost, delay := f.lose > 0, f.landAfter
	if lost {
		f.lose--
	}
	f.mu.Unlock()
	if !lost {
		return f.Market.PlaceBid(ctx, user, itemNo, max)
	}
	if delay == 0 {
		_, _ = f.Market.PlaceBid(ctx, user, itemNo, max)
		return market.BidReceipt{}, context.DeadlineExceeded
	}
	go func() {
		time.Sleep(delay)
		_, _ = f.Market.PlaceBid(context.Background(), user, itemNo, max)
	}()
	return market.BidReceipt{}, context.DeadlineExceeded
}

// failWhile returns an injector failing method (for itemNo, or any item
// when itemNo is 0) with ErrUnavailable while cond holds.
func failWhile(method string, itemNo int64, cond func() bool) markettest.Injector {
	return func(m, _ string, no int64) error {
		if m == method && (itemNo == 0 || no == itemNo) && cond() {
			return market.ErrUnavailable
		}
		return nil
	}
}

// before reports whether the (virtual) local clock is before t.
func before(t time.Time) func() bool { return func() bool { return time.Now().Before(t) } }

// silentAfterFirstSend returns an injector under which, for itemNo and until
// local time until, the first PlaceBid goes through and every later one,
// and every call of the lookups named, fails with ErrUnavailable: with a
// lost answer, a bid that landed and that nothing can confirm.
func silentAfterFirstSend(itemNo int64, until time.Time, lookups ...string) markettest.Injector {
	var mu sync.Mutex
	sends := 0
	return func(m, _ string, no int64) error {
		if no != itemNo || !time.Now().Before(until) {
			return nil
		}
		if m == markettest.MethodPlaceBid {
			mu.Lock()
			defer mu.Unlock()
			if sends++; sends > 1 {
				return market.ErrUnavailable
			}
			return nil
		}
		if slices.Contains(lookups, m) {
			return market.ErrUnavailable
		}
		return nil
	}
}
