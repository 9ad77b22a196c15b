// Package store defines sniped's persistence: accounts, snipes, Bid Groups
// and saved searches. Implementations live in subpackages (sqlite, later
// postgres) and must all pass the contract suite in store/storetest.
//
// Every account-owned read and write takes the account ID and is scoped by
// it: another account's row behaves exactly like a missing one (ErrNotFound).
package store

import (
	"context"
	"errors"
	"time"

	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/outcome"
)

// Sentinel errors. Implementations wrap them with %w.
var (
	// ErrNotFound: no such row in the caller's account.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change clashes with the row's current state, e.g.
	// editing a snipe whose bid has already been sent, or a duplicate name.
	ErrConflict = errors.New("conflict")
)

// Store is the persistence interface. All methods are safe for concurrent
// use, including from several processes on one database.
type Store interface {
	AccountStore
	SnipeStore
	SearchStore
	LeaseStore
	NotifyStore
	MarketLinkStore
	// Close releases the database.
	Close() error
}

// Tier is an account's plan. The interface needs the paid tier.
type Tier string

// Tiers.
const (
	TierFree Tier = "free"
	TierPaid Tier = "paid"
)

// Account is a sniped account. Its Name is also its marketplace user name.
type Account struct {
	ID        int64
	Name      string
	Tier      Tier
	KeyHash   []byte
	CreatedAt time.Time
}

// AccountStore manages accounts and their key hashes.
type AccountStore interface {
	// CreateAccount adds an account; a taken name is ErrConflict.
	CreateAccount(ctx context.Context, name string, tier Tier, keyHash []byte, now time.Time) (Account, error)
	// AccountByKeyHash finds the account whose key hashes to keyHash; the
	// match that grants access is confirmed in constant time.
	AccountByKeyHash(ctx context.Context, keyHash []byte) (Account, error)
	// AccountByName finds an account by name.
	AccountByName(ctx context.Context, name string) (Account, error)
	// Accounts lists all accounts by name.
	Accounts(ctx context.Context) ([]Account, error)
	// SetKeyHash replaces an account's key hash (key rotation).
	SetKeyHash(ctx context.Context, name string, keyHash []byte) error
	// SetTier changes an account's tier.
	SetTier(ctx context.Context, name string, tier Tier) error
	// DeleteAccount removes an account with its snipes, groups and searches.
	DeleteAccount(ctx context.Context, name string) error
	// CountAccounts returns how many accounts exist (first start creates admin).
	CountAccounts(ctx context.Context) (int, error)
}

// State is where a snipe is in its life. The sniper moves it forward with
// Transition; only StateScheduled snipes may be edited by users.
//
//	scheduled ──fire──▶ firing ──▶ placed ──settle──▶ settled
//	    │                  └──────────────────────────▲ (rejected/failed)
//	    └──────────────── settle (skipped, missed, ...) ┘
type State string

// States.
const (
	// StateScheduled: waiting for its moment (or not armed: watched,
	// disabled). Editable.
	StateScheduled State = "scheduled"
	// StateFiring: durably marked just before the bid is sent. After a
	// crash, a firing snipe is resolved by asking the marketplace whether
	// the bid exists, never by resending blindly.
	StateFiring State = "firing"
	// StatePlaced: the marketplace accepted the bid; the auction runs on.
	StatePlaced State = "placed"
	// StateSettled: the outcome is known and final (or the snipe was
	// skipped). An edit on a still-running item re-arms it.
	StateSettled State = "settled"

	// StateUnsent is not a stored state but a selector for SnipesInState:
	// scheduled snipes with a bid that will not be sent, because they are
	// disabled or their item is stored as ended. The sniper settles them
	// once their items are over.
	StateUnsent State = "unsent"
	// StateUnconfirmed is a selector for SnipesInState too: settled
	// snipes whose outcome says the marketplace never confirmed whether
	// the bid arrived (MarketDown, detail opening with UnconfirmedDetail),
	// due within UnconfirmedFor before `before`. The sniper asks about
	// them again, after a restart too, and corrects them.
	StateUnconfirmed State = "unconfirmed"
)

// UnconfirmedDetail opens the outcome detail of a snipe settled without
// the marketplace's confirmation (StateUnconfirmed).
const UnconfirmedDetail = "sniped could not learn from the marketplace whether the bid arrived"

// UnconfirmedFor is how long after its moment such a snipe is asked about.
const UnconfirmedFor = 24 * time.Hour

// ItemSnapshot is the last known state of a snipe's marketplace item, kept
// with the snipe so that listing, filtering and scheduling need no
// marketplace call.
type ItemSnapshot struct {
	Title        string
	Currency     string
	CurrentPrice money.Amount
	Bids         int
	GalleryURL   string
	Start        time.Time
	End          time.Time
	// Ended is true once the marketplace reported the auction over
	// (including early ends, whose End may be before the scheduled one).
	Ended bool
}

// Snipe is one account's snipe (or watched item, when Bid is 0) on an item.
type Snipe struct {
	ID        int64
	AccountID int64
	ItemNo    int64
	Bid       money.Amount
	Delay     int // seconds before the end, 1–15
	Enabled   bool
	Force     bool
	GroupID   int64  // 0: no group
	GroupName string // "" when GroupID is 0
	State     State
	Outcome   outcome.Code
	// OutcomeDetail adds specifics to the outcome's standard message, e.g.
	// "Winning price 41.00 USD; the high maximum was 45.00.".
	OutcomeDetail string
	// FireAt is Item.End minus Delay: the moment (marketplace clock) the bid is due.
	FireAt time.Time
	// PlacedAt is when the bid was sent; zero if never.
	PlacedAt  time.Time
	Item      ItemSnapshot
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ListEntry is one entry of a listing (ListEntries): what getUserItems
// shows of a snipe, without its bookkeeping (ID, account, state, the
// times of placement, creation and change). Reading fewer columns is what
// makes it cheaper than a Snipe.
type ListEntry struct {
	ItemNo        int64
	Bid           money.Amount
	Delay         int
	Enabled       bool
	Force         bool
	GroupID       int64
	GroupName     string
	Outcome       outcome.Code
	OutcomeDetail string
	FireAt        time.Time
	Item          ItemSnapshot
}

// ListEntry is s's entry in a listing.
func (s Snipe) ListEntry() ListEntry {
	return ListEntry{ItemNo: s.ItemNo, Bid: s.Bid, Delay: s.Delay, Enabled: s.Enabled, Force: s.Force,
		GroupID: s.GroupID, GroupName: s.GroupName, Outcome: s.Outcome, OutcomeDetail: s.OutcomeDetail,
		FireAt: s.FireAt, Item: s.Item}
}

// SnipeChange is an addBid: nil fields keep their stored value (or take the
// default on creation: bid 0, delay DefaultDelay, enabled, not forced, no group).
type SnipeChange struct {
	Bid     *money.Amount
	Delay   *int
	Enabled *bool
	Force   *bool
	// GroupName "" removes the snipe from its group; a new name creates
	// the group in the account.
	GroupName *string
	// Item is always stored: addBid has just fetched it.
	Item ItemSnapshot
	// Exists is a hint: the caller has just read the snipe, so the update
	// is tried before the insert (one statement fewer for an edit). The
	// result is the same either way.
	Exists bool
}

// DefaultDelay is the delay of a snipe created without one.
const DefaultDelay = 7

// Filter is a getUserItems listing group (spec section 3).
type Filter string

// Filters. "Ended" means Item.Ended or Item.End <= now.
const (
	FilterWatched   Filter = "watched"   // bid 0, not ended
	FilterCurrent   Filter = "current"   // bid > 0, not ended
	FilterCompleted Filter = "completed" // ended within ArchiveAge
	FilterArchive   Filter = "archive"   // ended more than ArchiveAge ago
)

// ArchiveAge separates completed from archived snipes.
const ArchiveAge = 60 * 24 * time.Hour

// ListQuery selects and pages getUserItems.
type ListQuery struct {
	Filter Filter
	// OrderBy is "ends" (Item.End) or "bids" (Item.Bids); ties break by item_no.
	OrderBy string
	Desc    bool
	Offset  int
	Limit   int
	// ShowWon includes snipes whose outcome is Won; otherwise they are hidden.
	ShowWon bool
	Now     time.Time
}

// SnipeStore manages snipes and Bid Groups.
type SnipeStore interface {
	// UpsertSnipe applies an addBid atomically: it creates the snipe
	// (created=true) or updates only the fields set in ch. Updating a snipe
	// in StateFiring or StatePlaced is ErrConflict: the bid has left. Updating
	// a StateSettled snipe whose item has not ended puts it back to
	// StateScheduled with outcome Pending (re-armed). FireAt is recomputed.
	UpsertSnipe(ctx context.Context, accountID, itemNo int64, ch SnipeChange, now time.Time) (s Snipe, created bool, err error)
	// Snipe returns one of the account's snipes by item number.
	Snipe(ctx context.Context, accountID, itemNo int64) (Snipe, error)
	// DeleteSnipe removes a snipe. A snipe in StateFiring or StatePlaced is
	// ErrConflict (its bid is out and the outcome still to be learned).
	DeleteSnipe(ctx context.Context, accountID, itemNo int64) error
	// ListEntries returns one page of the account's snipes as entries,
	// each equal to its snipe's ListEntry, and the total count before
	// paging. getUserItems uses it.
	ListEntries(ctx context.Context, accountID int64, q ListQuery) (page []ListEntry, total int, err error)
	// GroupSnipes returns every snipe of a group, by Item.End then item_no.
	GroupSnipes(ctx context.Context, accountID, groupID int64) ([]Snipe, error)

	// SnipeByID returns a snipe by ID for the sniper (not account-scoped:
	// never reachable from a request).
	SnipeByID(ctx context.Context, id int64) (Snipe, error)
	// SnipesInState returns up to limit snipes in state with FireAt before
	// `before`, by FireAt then ID. For StateScheduled only armed snipes are
	// returned: Enabled, Bid > 0 and Item not Ended; StateUnsent selects the
	// other scheduled snipes with a bid.
	SnipesInState(ctx context.Context, state State, before time.Time, limit int) ([]Snipe, error)
	// Transition moves a snipe from one of p.From to p.To with an outcome,
	// atomically (compare-and-set). It is ErrConflict if the snipe is not in
	// one of p.From (or fails p.IfBid), so two movers never both win.
	Transition(ctx context.Context, p TransitionParams) error
	// UpdateItem stores a fresher snapshot of a snipe's item and recomputes FireAt.
	UpdateItem(ctx context.Context, id int64, item ItemSnapshot) error
}

// Syncer is implemented by stores whose ordinary commits may not survive
// power loss (SQLite). Sync returns once every write committed before the
// call is durable. A Durable Transition does the same after its group
// commit, so that the writes of many shots share one fsync.
type Syncer interface {
	Sync(ctx context.Context) error
}

// TransitionParams is one Transition: a compare-and-set of a snipe's state.
type TransitionParams struct {
	ID   int64
	From []State
	To   State
	// Outcome and Detail replace the stored outcome and its detail text.
	Outcome outcome.Code
	Detail  string
	// PlacedAt is stored when not zero: when the bid reached the marketplace.
	PlacedAt time.Time
	// ItemEnded also stores the item as ended, and FinalPrice, when not
	// zero, as its price, with the move: a settlement records the end and
	// the outcome in one write.
	ItemEnded  bool
	FinalPrice money.Amount
	// Durable makes the write survive power loss before Transition
	// returns (an fsync), where the engine does not already guarantee
	// it for every commit. The sniper sets it on the firing mark and on
	// the record of a placed bid.
	Durable bool
	// Urgent marks a write that a shot due within moments waits for (a late
	// firing mark, a re-arm in recovery): an engine that gathers writes
	// into shared transactions runs it without waiting for more.
	Urgent bool
	// IfBid, when not zero, makes the move also conditional on the stored
	// bid still being IfBid: a decision taken on a bid that a user's edit
	// has since changed (pre-flight's "too low") does not apply.
	IfBid money.Amount
	// Fence, when set, makes the move also conditional on the sniper
	// instance still holding the lease of the snipe's partition under the
	// same epoch: a write from an instance whose lease has moved on is
	// ErrFenced (an ErrConflict).
	Fence *Fence
	// Into, when set, receives the snipe as it stands after a successful
	// move, read by the move itself: the sniper's firing mark saves the
	// re-read that follows it. The stores of this module fill it on moves
	// that write no event (storetest checks); a wrapper or fake that does
	// not leaves it untouched (ID 0), and the caller reads the snipe.
	Into *Snipe
}

// Search is a saved search.
type Search struct {
	ID        int64
	AccountID int64
	Query     string
	CreatedAt time.Time
	// LastRun and NextRun are the times of the scheduled runs (zero:
	// never run yet); NewCount is how many new items the last run found.
	LastRun  time.Time
	NextRun  time.Time
	NewCount int
}

// SearchStore manages saved searches.
type SearchStore interface {
	// AddSearch saves query; saving an existing query returns it with
	// created=false.
	AddSearch(ctx context.Context, accountID int64, query string, now time.Time) (s Search, created bool, err error)
	// Searches lists the account's saved searches, oldest first.
	Searches(ctx context.Context, accountID int64) ([]Search, error)
	// DeleteSearch removes one of the account's saved searches.
	DeleteSearch(ctx context.Context, accountID, id int64) error
}

// MarketLink links an account to its marketplace user: whom sniped bids as,
// and that user's refresh token, sealed by the caller (package marketlink).
// The store only ever holds the ciphertext.
type MarketLink struct {
	AccountID int64
	// Market names the marketplace the token belongs to (e.g. the eBay API
	// URL), so that a token is never sent to another marketplace.
	Market string
	// User is the marketplace user name.
	User string
	// SealedToken is the encrypted refresh token.
	SealedToken []byte
	// TokenExpires is when the refresh token expires; zero when unknown.
	TokenExpires time.Time
	LinkedAt     time.Time
}

// MarketLinkStore keeps each account's marketplace link (at most one).
type MarketLinkStore interface {
	// SetMarketLink creates or replaces the account's link. An unknown
	// account is ErrNotFound.
	SetMarketLink(ctx context.Context, l MarketLink) error
	// MarketLink returns the account's link; ErrNotFound when unlinked.
	MarketLink(ctx context.Context, accountID int64) (MarketLink, error)
	// DeleteMarketLink removes the account's link; ErrNotFound when unlinked.
	DeleteMarketLink(ctx context.Context, accountID int64) error
}
