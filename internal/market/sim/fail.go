package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
)

// Operations that failure injection can target (Fail* op arguments and the
// op parameter of /sim/fail). OpAny matches every Market method.
const (
	OpAny       = ""
	OpItem      = "item"
	OpSearch    = "search"
	OpWatchList = "watchList"
	OpPlaceBid  = "placeBid"
	OpBidState  = "bidState"
	OpHistory   = "history"
	OpNow       = "now"
)

// ValidOp reports whether op names a Market operation (or is OpAny).
func ValidOp(op string) bool {
	switch op {
	case OpAny, OpItem, OpSearch, OpWatchList, OpPlaceBid, OpBidState, OpHistory, OpNow:
		return true
	}
	return false
}

// failures is the injected-failure configuration. It lives in memory only:
// a restart clears it.
type failures struct {
	mu         sync.Mutex
	next       int    // the next `next` matching calls are unavailable
	nextOp     string // which op `next` counts
	items      map[int64]string
	users      map[string]bool
	ineligible map[userItem]bool

	// lost counts the bids whose answer is lost, per item; key 0 counts
	// bids on any item.
	lost map[int64]int
	// slow holds the stall rules, per item; key 0 matches calls on any
	// item and calls without one.
	slow map[int64]Slow
	// stale holds how old the state shown by Item and BidState is, per
	// item; key 0 applies to every item without its own.
	stale map[int64]time.Duration
}

type userItem struct {
	user   string
	itemNo int64
}

// check returns the injected failure for a call, if any. user is "" and
// itemNo 0 when the call has none.
func (f *failures) check(op, user string, itemNo int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next > 0 && (f.nextOp == OpAny || f.nextOp == op) {
		f.next--
		return fmt.Errorf("injected failure: %w", market.ErrUnavailable)
	}
	if itemNo != 0 {
		if iop, ok := f.items[itemNo]; ok && (iop == OpAny || iop == op) {
			return fmt.Errorf("injected failure on item %d: %w", itemNo, market.ErrUnavailable)
		}
	}
	if user != "" && f.users[user] {
		return fmt.Errorf("injected failure for %s: %w", user, market.ErrNotAuthorized)
	}
	return nil
}

func (f *failures) isIneligible(user string, itemNo int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ineligible[userItem{user, itemNo}]
}

// FailNext makes the next n calls of op (OpAny: of any Market method) fail
// with market.ErrUnavailable. n = 0 stops it.
func (s *Sim) FailNext(op string, n int) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	s.fail.next, s.fail.nextOp = n, op
}

// FailItem makes every call of op (OpAny: of any Market method) on itemNo
// fail with market.ErrUnavailable while on is true.
func (s *Sim) FailItem(itemNo int64, op string, on bool) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	if s.fail.items == nil {
		s.fail.items = make(map[int64]string)
	}
	if on {
		s.fail.items[itemNo] = op
	} else {
		delete(s.fail.items, itemNo)
	}
}

// DenyUser makes every call on behalf of user (WatchList, PlaceBid,
// BidState) fail with market.ErrNotAuthorized while on is true.
func (s *Sim) DenyUser(user string, on bool) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	if s.fail.users == nil {
		s.fail.users = make(map[string]bool)
	}
	if on {
		s.fail.users[user] = true
	} else {
		delete(s.fail.users, user)
	}
}

// SetIneligible makes user's bids on itemNo fail with market.ErrIneligible
// (recorded as rejected bids) while on is true.
func (s *Sim) SetIneligible(user string, itemNo int64, on bool) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	if s.fail.ineligible == nil {
		s.fail.ineligible = make(map[userItem]bool)
	}
	if on {
		s.fail.ineligible[userItem{user, itemNo}] = true
	} else {
		delete(s.fail.ineligible, userItem{user, itemNo})
	}
}

// ClearFailures removes every injected failure (not item removals, and not
// the clock skew).
func (s *Sim) ClearFailures() {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	s.fail.next, s.fail.nextOp = 0, OpAny
	s.fail.items, s.fail.users, s.fail.ineligible = nil, nil, nil
	s.fail.lost, s.fail.slow, s.fail.stale = nil, nil, nil
}

// ErrLostAnswer is what a bid whose answer was lost returns (LoseAnswers).
// It wraps context.DeadlineExceeded, so market.Transient reports it: the
// caller cannot tell it from a timeout, while the bid was in fact recorded.
var ErrLostAnswer = fmt.Errorf("sim: injected lost answer (the bid reached the marketplace): %w", context.DeadlineExceeded)

// LoseAnswers makes the next n PlaceBid calls on itemNo (0: on any item)
// that reach the marketplace lose their answer: the bid is judged and
// recorded as usual, accepted or refused, but the caller gets ErrLostAnswer.
// Calls failed by other injections do not count. n = 0 stops it.
func (s *Sim) LoseAnswers(itemNo int64, n int) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	setRule(&s.fail.lost, itemNo, n, n > 0)
}

// loseAnswer reports whether a processed bid on itemNo loses its answer,
// consuming one count (the item's own first).
func (f *failures) loseAnswer(itemNo int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range []int64{itemNo, 0} {
		if f.lost[k] > 0 {
			f.lost[k]--
			if f.lost[k] == 0 {
				delete(f.lost, k)
			}
			return true
		}
	}
	return false
}

// Slow is a stall rule for SetSlow: the next Count calls of Op (OpAny: of
// any Market method) on ItemNo (0: on any item, and calls without one)
// wait Delay before the marketplace handles them.
type Slow struct {
	Op     string
	ItemNo int64
	Delay  time.Duration
	Count  int
}

// SetSlow installs a stall rule, replacing the one for the same ItemNo.
// A Count or Delay of 0 removes it. A caller whose context ends during the
// stall gets the context's error, and the call is not handled (the request
// never reached the marketplace); lost answers are LoseAnswers.
func (s *Sim) SetSlow(r Slow) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	setRule(&s.fail.slow, r.ItemNo, r, r.Count > 0 && r.Delay > 0)
}

// slowFor returns how long a call must stall, consuming one count of the
// matching rule (the item's own first).
func (f *failures) slowFor(op string, itemNo int64) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := []int64{0}
	if itemNo != 0 {
		keys = []int64{itemNo, 0}
	}
	for _, k := range keys {
		r, ok := f.slow[k]
		if !ok || (r.Op != OpAny && r.Op != op) {
			continue
		}
		if r.Count--; r.Count == 0 {
			delete(f.slow, k)
		} else {
			f.slow[k] = r
		}
		return r.Delay
	}
	return 0
}

// stall waits d on the simulator's clock, or until ctx ends.
func (s *Sim) stall(ctx context.Context, d time.Duration) error {
	t := s.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// SetStale makes Item and BidState on itemNo (0: on every item without a
// setting of its own) show the item as it was age ago on the marketplace
// clock: bids placed since, early ends since and a normal end less than age
// ago are not visible yet, as from a lagging replica or cache. Bids are
// still judged on the current state, and /sim/item (ItemState) always
// shows the truth. age = 0 removes the setting.
func (s *Sim) SetStale(itemNo int64, age time.Duration) {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	setRule(&s.fail.stale, itemNo, age, age > 0)
}

// staleFor is how old the state shown for itemNo is (0: current).
func (f *failures) staleFor(itemNo int64) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.stale[itemNo]; ok {
		return d
	}
	return f.stale[0]
}

// seen returns the lot as Item and BidState show it at market time nowMs,
// and the time to judge it at: l itself, or under SetStale a copy rebuilt
// from the bids and ends older than the configured age. The caller holds
// l.mu.
func (s *Sim) seen(l *lot, nowMs int64) (*lot, int64) {
	age := s.fail.staleFor(l.ItemNo)
	if age <= 0 {
		return l, nowMs
	}
	asOf := nowMs - age.Milliseconds()
	v := newLot(l.listing)
	v.removed = l.removed
	for _, b := range l.bids {
		if b.TimeMs <= asOf {
			v.bids = append(v.bids, b)
		}
	}
	if e := l.auction.Ending(); !e.At.IsZero() && e.At.UnixMilli() <= asOf {
		v.auction.Restore(e)
	}
	s.rebuild(v) // keeps v's ending
	return v, asOf
}

// setRule sets or (on=false) deletes m[k], making the map when needed.
func setRule[V any](m *map[int64]V, k int64, v V, on bool) {
	if !on {
		delete(*m, k)
		return
	}
	if *m == nil {
		*m = make(map[int64]V)
	}
	(*m)[k] = v
}

// SetClockSkew moves the marketplace clock to run d ahead of the local one
// (negative: behind), at once: a jump, as an NTP step on the marketplace's
// side would make. End times do not move, so auctions end sooner or later
// on the local clock. It lives in memory: a restart goes back to
// Config.ClockSkew.
func (s *Sim) SetClockSkew(d time.Duration) { s.skew.Store(int64(d)) }

// ClockSkew is how far the marketplace clock currently runs ahead of the
// local one.
func (s *Sim) ClockSkew() time.Duration { return time.Duration(s.skew.Load()) }

// errProcessed reports whether a PlaceBid error still means the bid was
// judged and recorded (a refusal), so that its answer can be lost.
func errProcessed(err error) bool {
	return err == nil || (!market.Transient(err) && !errors.Is(err, market.ErrNotFound))
}
