package store

import (
	"context"
	"time"
)

// EventType names what happened. Events are written to an outbox in the
// same transaction as the change that causes them, so an event is never
// lost (the change committed) and never invented (the change rolled back).
type EventType string

// Event types.
const (
	// EventSnipePlaced: the marketplace accepted a snipe's bid.
	EventSnipePlaced EventType = "snipe.placed"
	// EventSnipeWon: the auction ended and the account won it.
	EventSnipeWon EventType = "snipe.won"
	// EventSnipeLost: the snipe settled with any other final outcome.
	EventSnipeLost EventType = "snipe.lost"
	// EventSnipeWarning: the price has reached the snipe's maximum while
	// there is still time to raise it (once per snipe and maximum).
	EventSnipeWarning EventType = "snipe.warning"
	// EventSearchMatch: a saved search found items it had not seen.
	EventSearchMatch EventType = "search.match"
	// EventMarketLinkBroken: the marketplace refused the account's
	// credentials (once until a bid is accepted again).
	EventMarketLinkBroken EventType = "market.link_broken"
	// EventTest: sent by testNotifier to one target only.
	EventTest EventType = "test"
)

// EventTypes are the types a target may subscribe to, in documentation order.
var EventTypes = []EventType{EventSnipePlaced, EventSnipeWon, EventSnipeLost, EventSnipeWarning, EventSearchMatch, EventMarketLinkBroken}

// Event is one outbox entry. Data is its JSON payload (an object).
type Event struct {
	ID        int64
	AccountID int64
	Type      EventType
	Data      []byte
	CreatedAt time.Time
}

// NewEvent is an event to emit outside a snipe transition.
type NewEvent struct {
	AccountID int64
	Type      EventType
	Data      []byte
	// Dedup, when set, makes the event unique per account: emitting a
	// second event with the same key does nothing.
	Dedup string
	// NotifierID, when set, addresses one target only (test events),
	// whatever it subscribes to; otherwise every enabled target of the
	// account subscribed to Type gets a delivery.
	NotifierID int64
	Now        time.Time
}

// NotifierKind says how a target is delivered to.
type NotifierKind string

// Notifier kinds.
const (
	// KindWebhook: a plain http(s) URL that gets a signed JSON POST.
	KindWebhook NotifierKind = "webhook"
	// KindShoutrrr: any other service URL (Slack, ntfy, SMTP, ...).
	KindShoutrrr NotifierKind = "shoutrrr"
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Notifier is a notification target of an account. The URL (it may hold
// credentials) and the webhook signing secret are stored sealed; the store
// keeps them as opaque bytes and only package notify opens them.
type Notifier struct {
	ID           int64
	AccountID    int64
	Kind         NotifierKind
	SealedURL    []byte
	SealedSecret []byte // empty for KindShoutrrr
	// MaskedURL is the URL with credentials replaced by "***", for display.
	MaskedURL string
	// Events it subscribes to; empty means all.
	Events    []EventType
	CreatedAt time.Time
	// Disabled is set when the target kept failing (see DisabledReason);
	// it gets no new deliveries until a successful test re-enables it.
	Disabled       bool
	DisabledAt     time.Time
	DisabledReason string
	// Failures counts consecutive failed attempts.
	Failures int
	// LastAt, LastStatus ("delivered", "retrying", "failed"; "" before the
	// first attempt) and LastError describe the last delivery attempt.
	LastAt     time.Time
	LastStatus string
	LastError  string
}

// NewNotifier is an addNotifier.
type NewNotifier struct {
	AccountID    int64
	Kind         NotifierKind
	SealedURL    []byte
	SealedSecret []byte
	MaskedURL    string
	Events       []EventType
	Now          time.Time
}

// Delivery is one event due to one target.
type Delivery struct {
	Event    Event
	Notifier Notifier
	Attempts int
	// NextAt is when it is due; claiming moves it to the lease's end.
	NextAt time.Time
}

// DeliveryResult records one attempt.
type DeliveryResult struct {
	EventID    int64
	NotifierID int64
	// Delivered is true when the target accepted the event.
	Delivered bool
	// Error says why it was not (shown to the owner; no secrets).
	Error string
	// RetryAt is when to try again; zero means give up (failed).
	RetryAt time.Time
	// Disable turns the target off with Error as the reason, and fails
	// its other pending deliveries.
	Disable bool
	Now     time.Time
}

// SearchRun is one run of a saved search.
type SearchRun struct {
	AccountID int64
	SearchID  int64
	// Items are the live items found, in the marketplace's order; Data
	// builds the search.match payload from the ones never seen before.
	Items []int64
	// Baseline records the items as seen without emitting an event
	// (the first run after a search is saved).
	Baseline bool
	// MatchData returns the search.match payload for the new items; it is
	// called inside the transaction only when there are any.
	MatchData func(newItems []int64) ([]byte, error)
	Now       time.Time
	NextRun   time.Time
}

// Seen is when a saved search first saw an item, and whether that was its
// baseline run (the item was listed before the search was saved).
type Seen struct {
	At       time.Time
	Baseline bool
}

// NotifyStore holds notification targets, the event outbox with its
// deliveries, and the state of saved-search runs.
type NotifyStore interface {
	// AddNotifier saves a target.
	AddNotifier(ctx context.Context, n NewNotifier) (Notifier, error)
	// Notifiers lists the account's targets, oldest first.
	Notifiers(ctx context.Context, accountID int64) ([]Notifier, error)
	// NotifierByID returns one of the account's targets.
	NotifierByID(ctx context.Context, accountID, id int64) (Notifier, error)
	// DeleteNotifier removes a target and its pending deliveries.
	DeleteNotifier(ctx context.Context, accountID, id int64) error
	// EnableNotifier clears a target's disabled state and failure count.
	EnableNotifier(ctx context.Context, accountID, id int64) error

	// EmitEvent writes an event and its deliveries in one transaction.
	// emitted is false when an event with the same Dedup key exists.
	EmitEvent(ctx context.Context, e NewEvent) (ev Event, emitted bool, err error)
	// Events returns the account's events with ID below beforeID (0: the
	// newest), newest first, at most limit.
	Events(ctx context.Context, accountID, beforeID int64, limit int) ([]Event, error)
	// DueDeliveries returns up to limit pending deliveries due at now,
	// oldest first, with their event and target, and at most perNotifier
	// of one target (0: no cap), so that one target's backlog never fills
	// the read.
	DueDeliveries(ctx context.Context, now time.Time, limit, perNotifier int) ([]Delivery, error)
	// ClaimDelivery moves a due delivery's NextAt to until as a
	// compare-and-set on its NextAt, so that two deliverers never send it
	// at once; claimed is false when another got it first.
	ClaimDelivery(ctx context.Context, d Delivery, until time.Time) (claimed bool, err error)
	// FinishDelivery records an attempt's result on the delivery and its
	// target.
	FinishDelivery(ctx context.Context, r DeliveryResult) error
	// PruneEvents deletes events created before `before` that have no
	// pending delivery; it returns how many went.
	PruneEvents(ctx context.Context, before time.Time) (int, error)

	// SearchByID returns one of the account's saved searches.
	SearchByID(ctx context.Context, accountID, id int64) (Search, error)
	// SearchesDue returns up to limit saved searches whose NextRun is at
	// or before now, soonest first.
	SearchesDue(ctx context.Context, now time.Time, limit int) ([]Search, error)
	// RecordSearchRun marks the run's items as seen, stores the run's
	// times and counts, and (unless Baseline) emits search.match with the
	// items never seen before, all in one transaction. It returns those
	// new items.
	RecordSearchRun(ctx context.Context, r SearchRun) (newItems []int64, err error)
	// DeferSearch moves the next run of one of the account's saved
	// searches to until, after a run that failed: stored, so that failing
	// searches leave SearchesDue's batch to the others.
	DeferSearch(ctx context.Context, accountID, id int64, until time.Time) error
	// SearchSeen returns when the search first saw each of items (absent:
	// never).
	SearchSeen(ctx context.Context, searchID int64, items []int64) (map[int64]Seen, error)
}

// SnipeEventData is the payload of the snipe.* events (and the snipe part
// of market.link_broken). Amounts are decimal numbers in Currency, times
// UTC "YYYY-MM-DD HH:MM:SS", like the interface's own answers.
type SnipeEventData struct {
	ItemNo       string  `json:"item_no"`
	Title        string  `json:"title"`
	Bid          float64 `json:"bid"`
	Currency     string  `json:"currency"`
	CurrentPrice float64 `json:"current_price"`
	EndTime      string  `json:"end_time"`
	// Outcome, Status and Message are the outcome code and its text
	// (docs/outcomes.md); Detail adds the snipe's specifics.
	Outcome int    `json:"outcome"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
}

// SearchMatchData is the payload of search.match.
type SearchMatchData struct {
	SearchID int64  `json:"search_id"`
	Query    string `json:"query"`
	// Items are the new live items, soonest-ending first.
	Items []SearchMatchItem `json:"items"`
}

// SearchMatchItem is one new item of a search.match.
type SearchMatchItem struct {
	ItemNo       string  `json:"item_no"`
	Title        string  `json:"title"`
	CurrentPrice float64 `json:"current_price"`
	MinimumToBid float64 `json:"minimum_to_bid"`
	Currency     string  `json:"currency"`
	EndTime      string  `json:"end_time"`
	GalleryURL   string  `json:"gallery_url"`
}
