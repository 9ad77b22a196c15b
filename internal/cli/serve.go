package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sniped/sniped/internal/api"
	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/market/metered"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/sniper"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/sqlite"
	"github.com/sniped/sniped/internal/web"
)

// shutdownGrace bounds how long serve waits for requests and the sniper to
// finish after SIGINT/SIGTERM.
const shutdownGrace = 10 * time.Second

// serveConfig is everything `sniped serve` is told.
type serveConfig struct {
	store        storeFlags
	lease        leaseFlags
	addr         string
	metricsAddr  string
	basePath     string
	publicURL    string
	fetchAnyItem bool
	runSniper    bool
	rateLimit    float64
	rateBurst    int
	logLevel     string
	sim          simFlags
	market       marketConfig
	keys         secretFlags
	notify       notifyFlags
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("sniped serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.store.register(fs)
	fs.IntVar(&c.store.cacheMiB, "sqlite-cache", sqlite.DefaultCacheMiB, "SQLite store: the writer's page cache cap in MiB (memory it keeps once the store is large; each reader keeps at most 256 KiB more)")
	c.lease.register(fs)
	fs.StringVar(&c.addr, "addr", envOr(envAddr, DefaultAddr), "address to listen on (env "+envAddr+"); port 0 picks a free port")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics (and the Go profiler, /debug/pprof/) on this address instead of the public one, e.g. 127.0.0.1:9090 (default: /metrics on --addr, no profiler)")
	fs.StringVar(&c.basePath, "base-path", "", "path prefix for every endpoint, e.g. /sniped (default none)")
	fs.StringVar(&c.publicURL, "public-url", "", "URL clients use to reach this server, for absolute image links (default http://ADDR)")
	fs.BoolVar(&c.fetchAnyItem, "fetch-any-item", false, "let fetchItem look up any marketplace item, not only the caller's")
	fs.BoolVar(&c.runSniper, "sniper", true, "run the sniper (fires snipes); instances on one PostgreSQL database share the work")
	fs.Float64Var(&c.rateLimit, "rate-limit", api.DefaultRateLimit, "requests per second allowed per key; 0 turns the limit off")
	fs.IntVar(&c.rateBurst, "rate-burst", api.DefaultRateBurst, "requests a key may make in a burst above the rate")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	c.sim.register(fs, "simulator: ", "serve the /sim/ control endpoints (createItem, placeBid, ...): on, off, or auto (on only when listening on loopback; they need no key)")
	c.market.register(fs)
	c.keys.register(fs)
	c.notify.register(fs)
	if err := parse(fs, args); err != nil {
		return c, err
	}
	if err := c.notify.validate(); err != nil {
		return c, err
	}
	if err := c.market.check(); err != nil {
		return c, err
	}
	if p := strings.Trim(c.basePath, "/"); p != "" {
		c.basePath = "/" + p
	} else {
		c.basePath = ""
	}
	if err := c.lease.validate(); err != nil {
		return c, err
	}
	if c.store.cacheMiB < 1 {
		return c, usageErr("--sqlite-cache must be at least 1 (MiB)")
	}
	if c.rateLimit < 0 || c.rateBurst < 1 {
		return c, usageErr("--rate-limit must be >= 0 and --rate-burst >= 1")
	}
	if err := c.sim.check(); err != nil {
		return c, err
	}
	return c, nil
}

// newLogger is the text logger of serve and market serve at --log-level.
func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("--log-level must be debug, info, warn or error")
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// gcPercent is the GC's heap growth (GOGC) serve runs with, unless the
// GOGC environment variable sets one. The live heap is small (the snipes
// stay in SQLite), so at Go's default of 100 the collector ran every few
// milliseconds under API load; at 400 getUserItems served 17–31 % more
// requests a second, and the heap stays far below the 256 MB memory
// target (docs/performance.md, "API", fourth round).
const gcPercent = 400

// setGCPercent applies gcPercent unless GOGC is set, and returns the
// setting in effect.
func setGCPercent() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	debug.SetGCPercent(gcPercent)
	return fmt.Sprint(gcPercent)
}

func runServe(args []string, stderr io.Writer) error {
	c, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(c.logLevel, stderr)
	if err != nil {
		return err
	}
	log.Debug("runtime", "gomaxprocs", sniper.SetProcs(), "gogc", setGCPercent())
	// A missing or bad marketplace key stops serve before it opens the
	// store (cli/market.go).
	keys, err := loadMarketKeys(c, log)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// One serve per data folder: two would share the simulator state and
	// (on SQLite) race each other's sniper.
	if err := os.MkdirAll(c.store.data, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	lock, err := lockData(c.store.data)
	if err != nil {
		return err
	}
	defer lock.release()

	st, err := openStore(ctx, c.store)
	if err != nil {
		return err
	}
	defer st.Close()

	clk := clock.Real{}

	// Listen before building the simulator: its image URLs need the real port.
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	defer ln.Close()
	if err := lock.record("http://" + dialable(ln.Addr().String())); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	base := c.publicURL
	if base == "" {
		base = "http://" + dialable(ln.Addr().String())
	}
	base = strings.TrimSuffix(base, "/") + c.basePath
	if err := ensureAdmin(ctx, st, clk, base, currentCommand()+" account", storeArgs(c.store), stderr); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The marketplace: the built-in simulator or eBay (cli/market.go).
	mkt, err := openMarket(ctx, marketParams{cfg: c, keys: keys, base: base, clock: clk, log: log, store: st, registerer: reg})
	if err != nil {
		return err
	}
	defer mkt.Close()
	log.Info("marketplace", "market", c.market.kind, "is", mkt.describe)
	// One metered marketplace for the API and the sniper, so /metrics
	// counts every marketplace call the process makes.
	metMkt := metered.New(mkt.Market, clk, reg)
	lm, err := newLease(c.store, c.lease, st, dialable(ln.Addr().String()), log, reg)
	if err != nil {
		return err
	}
	snp := sniper.New(sniper.Config{Store: lm.Store(st), Lease: lm, Market: metMkt, Clock: clk, Logger: log.With("component", "sniper"), Registerer: reg, PreciseWake: true})

	ntf, err := newNotify(c.notify, c.keys, c.store.data, st, metMkt, ln.Addr(), log.With("component", "notify"))
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The API re-arms snipes through the sniper, and on PostgreSQL tells
	// the other instances too (cli/lease.go).
	notifier, shareRun := shareChanges(runCtx, st, snp, c.runSniper, log)
	var ready atomic.Bool
	apiHandler := api.New(api.Config{
		BaseContext: runCtx,
		// metMkt is shared with the sniper: one set of call metrics.
		Store: st, Market: metMkt, Clock: clk, ClockOffset: snp.ClockOffset, Logger: log.With("component", "api"), Notifier: notifier,
		MarketLinks:  mkt.links,
		FetchAnyItem: c.fetchAnyItem, RateLimit: c.rateLimit, RateBurst: c.rateBurst, BasePath: c.basePath,
		Notify: ntf,
	})
	mux := http.NewServeMux()
	mux.Handle(c.basePath+"/", apiHandler)
	mux.HandleFunc(c.basePath+"/healthz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n"+sniperHealth(lm, c.runSniper))
	})
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if c.metricsAddr == "" {
		mux.Handle(c.basePath+"/metrics", metrics)
	}
	// Images are part of item details and always served; the control
	// endpoints need no key, so by default only a loopback listener has
	// them, and Guard refuses browsers' cross-site and DNS-rebinding
	// requests to them. /sim/watch resolves keys through the interface, with
	// its failed-key limit. On eBay there is no /sim/ at all.
	if mkt.sim != nil {
		simHandler := http.StripPrefix(c.basePath, sim.Guard(
			sim.GuardConfig{Hosts: publicHosts(c.publicURL), Logger: log.With("component", "sim")},
			mkt.sim.Handler(func(r *http.Request, plain string) (string, error) {
				a, err := apiHandler.AccountByKey(r, plain)
				return a.Name, err
			})))
		mux.Handle(c.basePath+"/sim/img/", simHandler)
		if simControlOn(c.sim.control, ln.Addr()) {
			mux.Handle(c.basePath+"/sim/", simHandler)
		} else {
			log.Info("simulator control endpoints off (--sim-control); /sim/img/ is still served")
		}
	}
	mux.Handle(c.basePath+"/ui/", http.StripPrefix(c.basePath+"/ui", web.Handler()))
	mux.Handle("GET "+c.basePath+"/{$}", http.RedirectHandler(c.basePath+"/ui/", http.StatusFound)) // the root opens the dashboard
	if c.basePath != "" {
		mux.Handle(c.basePath, http.RedirectHandler(c.basePath+"/ui/", http.StatusFound))
		// Outside the prefix too, failures use the envelope (unknown_operation).
		mux.Handle("/", apiHandler)
	}

	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// importWatchList may take a minute or more; leave room for it.
		WriteTimeout: 3 * time.Minute,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	// Background components (and watch list imports) stop when runCtx
	// ends; serve waits for them before the deferred Close calls so
	// nothing uses a closed store.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // deferred after wg.Wait, so it runs first
	wg.Go(func() { <-runCtx.Done(); apiHandler.Wait() })
	failed := make(chan error, 3)
	wg.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			failed <- fmt.Errorf("http server: %w", err)
		}
	})
	if mkt.sim != nil {
		wg.Go(func() { mkt.sim.Run(runCtx) })
	}
	wg.Go(shareRun)
	wg.Go(func() { mkt.checkKeys(runCtx, log) })
	var metricsSrv *http.Server
	if c.metricsAddr != "" {
		mln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			cancel()
			shutdown(srv, log)
			return fmt.Errorf("listen on --metrics-addr %s: %w", c.metricsAddr, err)
		}
		// The private listener also has the Go profiler, for the operator.
		mmux := http.NewServeMux()
		mmux.Handle("/metrics", metrics)
		mmux.HandleFunc("/debug/pprof/", pprof.Index)
		mmux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mmux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mmux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mmux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		metricsSrv = &http.Server{Handler: mmux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: srv.ErrorLog}
		wg.Go(func() {
			if err := metricsSrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				failed <- fmt.Errorf("metrics server: %w", err)
			}
		})
		fmt.Fprintf(stderr, "sniped: metrics on http://%s/metrics\n", dialable(mln.Addr().String()))
	}
	if c.runSniper {
		wg.Go(func() {
			if err := runLeased(runCtx, lm, snp, log); err != nil && !errors.Is(err, context.Canceled) {
				failed <- fmt.Errorf("sniper: %w", err)
			}
		})
		wg.Go(func() { ntf.Run(runCtx) })
	} else {
		log.Info("sniper off (--sniper=false): another instance on this database fires the snipes")
	}
	ready.Store(true)
	fmt.Fprintf(stderr, "sniped: listening on http://%s%s (dashboard %s/ui/)\nsniped: marketplace: %s\n", dialable(ln.Addr().String()), c.basePath, base, mkt.describe)
	log.Info("ready", "addr", ln.Addr().String(), "data", c.store.data, "base_path", c.basePath)

	runErr := awaitStop(ctx, failed, log)
	cancel()
	shutdown(srv, log)
	if metricsSrv != nil {
		shutdown(metricsSrv, log)
	}
	return runErr
}

// awaitStop waits for a signal (ctx) or a component's failure, which it
// returns; either way the caller shuts down.
func awaitStop(ctx context.Context, failed <-chan error, log *slog.Logger) error {
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		return nil
	case err := <-failed:
		log.Error("component stopped; shutting down", "err", err)
		return err
	}
}

func shutdown(srv *http.Server, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
}

// ensureAdmin creates the admin account on the first start against an empty
// store and prints its key once, with a ready-to-paste curl line.
func ensureAdmin(ctx context.Context, st store.Store, clk clock.Clock, base, accountCmd, storeArgs string, stderr io.Writer) error {
	n, err := st.CountAccounts(ctx)
	if err != nil {
		return fmt.Errorf("count accounts: %w", err)
	}
	if n > 0 {
		return nil
	}
	plain, hash := key.New()
	if _, err := st.CreateAccount(ctx, "admin", store.TierPaid, hash, clk.Now()); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // another instance created it first
		}
		return fmt.Errorf("create admin account: %w", err)
	}
	fmt.Fprintf(stderr, `
sniped: created account "admin" (paid tier). Its key is shown only this once:

    %s

Try it:

    curl '%s/justTesting?key=%s&arg1=hello'

Open the dashboard at %s/ui/ and paste the key there.
Make more accounts with:
    %s add %s --name NAME
Lost this key? Replace it (the old one stops working) with:
    %s rotate-key %s --name admin

`, plain, base, plain, base, accountCmd, storeArgs, accountCmd, storeArgs)
	return nil
}

// dialable turns a listen address into one a local client can dial:
// an unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") becomes 127.0.0.1.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// simControlOn decides --sim-control: auto means on only for a loopback
// listener, where only this machine's users can script the marketplace.
func simControlOn(mode string, addr net.Addr) bool {
	switch mode {
	case "on":
		return true
	case "off":
		return false
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// publicHosts is the host of --public-url, which the simulator's control
// endpoints also answer to.
func publicHosts(publicURL string) []string {
	u, err := url.Parse(publicURL)
	if publicURL == "" || err != nil || u.Hostname() == "" {
		return nil
	}
	return []string{u.Hostname()}
}
