// Package notify tells users what happened without being asked. It
// delivers the store's event outbox to each account's targets (signed
// webhooks, or any service github.com/nicholas-fedor/shoutrrr speaks), at
// least once and with the event's ID for de-duplication; runs saved
// searches on a schedule, emitting search.match for new items; and looks
// at snipes ending soon so that snipe.warning comes while there is still
// time to act. Everything runs on its own goroutines, bounded, so a slow
// target never delays the sniper.
package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

// Defaults of Config.
const (
	DefaultSearchEvery   = 15 * time.Minute
	DefaultRetryFor      = 24 * time.Hour
	DefaultFirstRetry    = 30 * time.Second
	DefaultMaxRetry      = time.Hour
	DefaultWorkers       = 4
	DefaultPoll          = time.Second
	DefaultSendTimeout   = 15 * time.Second
	DefaultWarnBefore    = 10 * time.Minute
	DefaultWarnEvery     = 30 * time.Second
	DefaultMarketRate    = 2.0
	DefaultEventsKeep    = 30 * 24 * time.Hour
	DefaultSearchCountry = "US"
	// MaxNotifiers bounds an account's targets: every event fans out to
	// each of them.
	MaxNotifiers = 20
)

// Config holds the notification service's dependencies and settings.
type Config struct {
	Store  store.Store
	Market market.Market
	// Key seals target URLs and webhook secrets (the server's secret key).
	Key *secret.Key
	// Clock defaults to clock.Real; Logger to slog.Default().
	Clock  clock.Clock
	Logger *slog.Logger
	// AllowPrivate lets targets be on loopback, private or link-local
	// addresses (self-hosted receivers). Off, such targets are refused.
	AllowPrivate bool
	// SearchEvery is how often each saved search runs.
	SearchEvery time.Duration
	// RetryFor is how long a failing delivery is retried before it is
	// marked failed and its target disabled; FirstRetry doubles on each
	// attempt up to MaxRetry.
	RetryFor, FirstRetry, MaxRetry time.Duration
	// Workers bounds concurrent deliveries; Poll is how often the outbox
	// is read; SendTimeout bounds one delivery.
	Workers     int
	Poll        time.Duration
	SendTimeout time.Duration
	// WarnBefore: snipes whose item ends within it get one item refresh
	// (at most every WarnEvery), so that snipe.warning comes in time.
	WarnBefore, WarnEvery time.Duration
	// MarketRate is the marketplace calls per second that saved searches
	// and warning checks together may make (the sniper's own calls are
	// not counted here and never wait for these).
	MarketRate float64
	// EventsKeep is how long delivered events are kept.
	EventsKeep time.Duration
	// SearchCountry is the country saved searches run in.
	SearchCountry string
}

// Service is the notification service. Its methods are safe for
// concurrent use; Run runs its loops.
type Service struct {
	cfg    Config
	st     store.Store
	mk     market.Market
	key    *secret.Key
	clk    clock.Clock
	log    *slog.Logger
	client *http.Client
	budget *budget
	sem    chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[int64]int     // sends in progress per target
	checked  map[[2]int64]bool // (snipe, bid) refreshed for warnings
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Market == nil || cfg.Key == nil {
		return nil, errors.New("notify: Store, Market and Key are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.SearchEvery, DefaultSearchEvery)
	def(&cfg.RetryFor, DefaultRetryFor)
	def(&cfg.FirstRetry, DefaultFirstRetry)
	def(&cfg.MaxRetry, DefaultMaxRetry)
	def(&cfg.Poll, DefaultPoll)
	def(&cfg.SendTimeout, DefaultSendTimeout)
	def(&cfg.WarnBefore, DefaultWarnBefore)
	def(&cfg.WarnEvery, DefaultWarnEvery)
	def(&cfg.EventsKeep, DefaultEventsKeep)
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MarketRate <= 0 {
		cfg.MarketRate = DefaultMarketRate
	}
	if cfg.SearchCountry == "" {
		cfg.SearchCountry = DefaultSearchCountry
	}
	return &Service{
		cfg: cfg, st: cfg.Store, mk: cfg.Market, key: cfg.Key, clk: cfg.Clock, log: cfg.Logger,
		client:   webhookClient(cfg.AllowPrivate, cfg.SendTimeout),
		budget:   newBudget(cfg.Clock, cfg.MarketRate),
		sem:      make(chan struct{}, cfg.Workers),
		inflight: map[int64]int{},
		checked:  map[[2]int64]bool{},
	}, nil
}

// SearchEvery is the configured interval of saved-search runs.
func (s *Service) SearchEvery() time.Duration { return s.cfg.SearchEvery }

// Run delivers the outbox, runs saved searches and checks snipes ending
// soon until ctx ends, then waits for deliveries in flight.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.deliverLoop(ctx) })
	wg.Go(func() { s.searchLoop(ctx) })
	wg.Go(func() { s.warnLoop(ctx) })
	wg.Wait()
	s.wg.Wait()
}

// every runs fn now and then each interval until ctx ends.
func (s *Service) every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	clock.Repeat(ctx, s.clk, 0, func() time.Duration {
		fn(ctx)
		return interval
	})
}

// AddResult is a new target: the signing secret is only ever shown here.
type AddResult struct {
	Notifier store.Notifier
	// Secret signs webhooks ("" for other services).
	Secret string
}

// TargetError is a target URL that cannot be used; Message names the rule.
type TargetError struct{ Message string }

// Error returns the rule the URL breaks.
func (e *TargetError) Error() string { return e.Message }

// AddNotifier validates and saves a target. A webhook gets a fresh
// signing secret, returned once and stored sealed.
func (s *Service) AddNotifier(ctx context.Context, accountID int64, rawURL string, events []store.EventType) (AddResult, error) {
	t, err := ParseTarget(rawURL, s.cfg.AllowPrivate)
	if err != nil {
		return AddResult{}, &TargetError{Message: err.Error()}
	}
	have, err := s.st.Notifiers(ctx, accountID)
	if err != nil {
		return AddResult{}, err
	}
	if len(have) >= MaxNotifiers {
		return AddResult{}, &TargetError{Message: fmt.Sprintf("cannot be added: the account has %d targets, the most allowed; delete one first", len(have))}
	}
	var secret string
	var sealedSecret []byte
	if t.Kind == store.KindWebhook {
		raw := make([]byte, 32)
		rand.Read(raw)
		secret = "whsec_" + hex.EncodeToString(raw)
		sealedSecret = s.seal([]byte(secret), accountID, "secret")
	}
	n, err := s.st.AddNotifier(ctx, store.NewNotifier{
		AccountID: accountID, Kind: t.Kind, MaskedURL: t.Masked, Events: events,
		SealedURL: s.seal([]byte(t.URL), accountID, "url"), SealedSecret: sealedSecret,
		Now: s.clk.Now(),
	})
	if err != nil {
		return AddResult{}, err
	}
	return AddResult{Notifier: n, Secret: secret}, nil
}

// TestResult is the outcome of testNotifier.
type TestResult struct {
	EventID   int64
	Delivered bool
	// Queued is true when the background deliverer took the test event
	// first; it is then delivered (and retried) like any other.
	Queued bool
	Error  string
}

// TestNotifier sends a test event to one of the account's targets now and
// reports the result. A disabled target that accepts it is enabled again.
func (s *Service) TestNotifier(ctx context.Context, accountID, id int64) (TestResult, error) {
	n, err := s.st.NotifierByID(ctx, accountID, id)
	if err != nil {
		return TestResult{}, err
	}
	now := s.clk.Now()
	data := fmt.Appendf(nil, `{"message":"Test notification from sniped.","notifier_id":%d}`, id)
	ev, _, err := s.st.EmitEvent(ctx, store.NewEvent{AccountID: accountID, Type: store.EventTest, Data: data, NotifierID: id, Now: now})
	if err != nil {
		return TestResult{}, err
	}
	d := store.Delivery{Event: ev, Notifier: n, NextAt: time.UnixMilli(0).UTC()}
	claimed, err := s.st.ClaimDelivery(ctx, d, now.Add(2*s.cfg.SendTimeout))
	if err != nil {
		return TestResult{}, err
	}
	if !claimed {
		return TestResult{EventID: ev.ID, Queued: true}, nil
	}
	// The claimed test finishes and is recorded even when the caller goes
	// away (the send has its own timeout): otherwise it would stay pending
	// and be retried for a day, although a test is not retried.
	ctx = context.WithoutCancel(ctx)
	sendErr := s.send(ctx, d)
	res := store.DeliveryResult{EventID: ev.ID, NotifierID: id, Delivered: sendErr == nil, Now: s.clk.Now()}
	if sendErr != nil {
		res.Error = sendErr.Error()
	}
	if err := s.st.FinishDelivery(ctx, res); err != nil {
		return TestResult{}, err
	}
	if sendErr == nil && n.Disabled {
		if err := s.st.EnableNotifier(ctx, accountID, id); err != nil {
			return TestResult{}, err
		}
	}
	return TestResult{EventID: ev.ID, Delivered: sendErr == nil, Error: res.Error}, nil
}

// budget spaces background marketplace calls to at most rate per second
// on the service's clock.
type budget struct {
	clk      clock.Clock
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func newBudget(clk clock.Clock, rate float64) *budget {
	return &budget{clk: clk, interval: time.Duration(float64(time.Second) / rate)}
}

// wait blocks until a call may be made, or ctx ends.
func (b *budget) wait(ctx context.Context) error {
	b.mu.Lock()
	now := b.clk.Now()
	at := b.next
	if at.Before(now) {
		at = now
	}
	b.next = at.Add(b.interval)
	b.mu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		return ctx.Err()
	}
	t := b.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
