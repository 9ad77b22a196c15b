package cli

import (
	"flag"
	"log/slog"
	"net"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/store"
)

// notifyFlags configure notifications and saved-search runs.
type notifyFlags struct {
	private     string
	searchEvery time.Duration
	retryFor    time.Duration
	firstRetry  time.Duration
	warnEvery   time.Duration
	marketRate  float64
}

func (f *notifyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.private, "notify-private", "auto", "allow notification targets on loopback, private or link-local addresses: on, off, or auto (on only when listening on loopback, so a server exposed to others cannot be aimed at its own network)")
	fs.DurationVar(&f.searchEvery, "search-every", notify.DefaultSearchEvery, "how often each saved search runs (spread over the interval)")
	fs.DurationVar(&f.retryFor, "notify-retry-for", notify.DefaultRetryFor, "how long a failing delivery is retried before it fails and its target is disabled")
	fs.DurationVar(&f.firstRetry, "notify-first-retry", notify.DefaultFirstRetry, "first retry delay of a failed delivery; it doubles up to 1h")
	fs.DurationVar(&f.warnEvery, "notify-warn-every", notify.DefaultWarnEvery, "how often snipes ending within 10 minutes are checked for a price above their maximum")
	fs.Float64Var(&f.marketRate, "notify-market-rate", notify.DefaultMarketRate, "marketplace calls per second that saved searches and warning checks may make together")
}

func (f *notifyFlags) validate() error {
	switch f.private {
	case "auto", "on", "off":
	default:
		return usageErr("--notify-private must be auto, on or off, not %q", f.private)
	}
	if f.searchEvery < time.Second || f.retryFor < time.Second || f.firstRetry < 100*time.Millisecond || f.warnEvery < 100*time.Millisecond {
		return usageErr("--search-every and --notify-retry-for must be at least 1s, --notify-first-retry and --notify-warn-every at least 100ms")
	}
	if f.marketRate <= 0 {
		return usageErr("--notify-market-rate must be above 0")
	}
	return nil
}

// newNotify builds the notification service for serve. Its loops run only
// where the sniper runs (one instance per database); every instance serves
// the notifier operations.
// Target URLs and webhook secrets are sealed with the server's secret key
// (--secret-key-file), the one that seals marketplace tokens.
func newNotify(f notifyFlags, keys secretFlags, data string, st store.Store, mk market.Market, addr net.Addr, log *slog.Logger) (*notify.Service, error) {
	k, err := loadSecretKey(keys, data, func(msg string) { log.Warn(msg) })
	if err != nil {
		return nil, err
	}
	allow := simControlOn(f.private, addr) // same rule: auto means loopback only
	if !allow {
		log.Info("notification targets on private addresses are refused (--notify-private)")
	}
	return notify.New(notify.Config{
		Store: st, Market: mk, Key: k, Logger: log, AllowPrivate: allow,
		SearchEvery: f.searchEvery, RetryFor: f.retryFor, FirstRetry: f.firstRetry,
		WarnEvery: f.warnEvery, MarketRate: f.marketRate,
	})
}
