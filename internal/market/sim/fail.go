package sim

import (
	"fmt"
	"sync"

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

// ClearFailures removes every injected failure (not item removals).
func (s *Sim) ClearFailures() {
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	s.fail.next, s.fail.nextOp = 0, OpAny
	s.fail.items, s.fail.users, s.fail.ineligible = nil, nil, nil
}
