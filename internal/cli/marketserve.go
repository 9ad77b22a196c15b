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
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/ebaysim"
	"github.com/sniped/sniped/internal/market/sim"
)

// Defaults of `sniped market serve`.
const (
	DefaultMarketAddr = "127.0.0.1:9090"
	DefaultMarketData = "./market-data"
)

const marketUsage = `Usage:
  sniped market serve [--addr 127.0.0.1:9090] [--data ./market-data] [flags]

Serves the built-in auction simulator as its own HTTP server in eBay's
shape (OAuth, consent page, Browse, Offer, Trading), so that sniped serve
--market ebay --ebay-api-url URL --ebay-auth-url URL can bid on it, and
several sniped instances can share one marketplace. See docs/ebay.md.
`

// runMarket runs `sniped market SUBCOMMAND`.
func runMarket(args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprint(stderr, marketUsage)
		if len(args) == 0 {
			return usageErr("market needs a subcommand: serve")
		}
		return flag.ErrHelp
	}
	if args[0] != "serve" {
		return usageErr("unknown market subcommand %q (want serve)", args[0])
	}
	return runMarketServe(args[1:], stderr)
}

// ruNames is the repeatable --runame NAME=URL flag.
type ruNames map[string]string

func (r ruNames) String() string {
	var parts []string
	for k, v := range r {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (r ruNames) Set(v string) error {
	name, u, ok := strings.Cut(v, "=")
	if !ok || name == "" || !ebay.HTTPURL(u) {
		return errors.New("want NAME=URL with an absolute http(s) URL, e.g. sniped-RuName=http://127.0.0.1:8080/market/callback")
	}
	r[name] = u
	return nil
}

// marketServeConfig is everything `sniped market serve` is told.
type marketServeConfig struct {
	addr      string
	data      string
	publicURL string
	clientID  string
	runames   ruNames
	sim       simFlags
	logLevel  string
}

func parseMarketServe(args []string, stderr io.Writer) (marketServeConfig, error) {
	c := marketServeConfig{runames: ruNames{}}
	fs := flag.NewFlagSet("sniped market serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", DefaultMarketAddr, "address to listen on; port 0 picks a free port")
	fs.StringVar(&c.data, "data", DefaultMarketData, "data folder: sim.db (the marketplace) and tokens.json (refresh token hashes)")
	fs.StringVar(&c.publicURL, "public-url", "", "URL clients use to reach this server, for image links (default http://ADDR)")
	fs.StringVar(&c.clientID, "client-id", ebaysim.DefaultClientID, "client id of the one application accepted (its secret: env "+envMarketSecret+", or "+ebaysim.DefaultClientSecret+")")
	fs.Var(c.runames, "runame", "an RuName and its accept URL, NAME=URL (repeatable); the consent page accepts only registered RuNames (also /sim/runame)")
	c.sim.register(fs, "", "serve the keyless /sim/ control endpoints: on, off, or auto (only on loopback); /sim/token always needs the client credentials")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return c, err
	}
	if err := c.sim.check(); err != nil {
		return c, err
	}
	if c.clientID == "" {
		return c, usageErr("--client-id must not be empty")
	}
	return c, nil
}

// checkSimFlags checks the simulator's flags, which serve (--market sim)
// and market serve share.
func runMarketServe(args []string, stderr io.Writer) error {
	c, err := parseMarketServe(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(c.logLevel, stderr)
	if err != nil {
		return err
	}
	secret := os.Getenv(envMarketSecret)
	if secret == "" {
		secret = ebaysim.DefaultClientSecret
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(c.data, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	defer ln.Close()
	base := strings.TrimSuffix(c.publicURL, "/")
	if base == "" {
		base = "http://" + dialable(ln.Addr().String())
	}
	clk := clock.Real{}
	s, err := sim.Open(ctx, c.sim.config(c.data, clk, log, base))
	if err != nil {
		return fmt.Errorf("open simulator: %w", err)
	}
	defer s.Close()
	srv, err := ebaysim.New(ebaysim.Config{
		Sim: s, ClientID: c.clientID, ClientSecret: secret, RuNames: c.runames,
		TokenFile: filepath.Join(c.data, "tokens.json"), Clock: clk, Logger: log.With("component", "ebaysim"),
	})
	if err != nil {
		return err
	}
	h := srv.Handler()
	// The control endpoints need no key: refuse browsers' cross-site and
	// DNS-rebinding requests to them, as serve does. /sim/token and
	// /sim/runame check the client credentials instead.
	guarded := sim.Guard(sim.GuardConfig{Hosts: publicHosts(c.publicURL), Logger: log.With("component", "sim")}, h)
	unguarded := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; strings.HasPrefix(p, "/sim/") && p != "/sim/token" && p != "/sim/runame" {
			guarded.ServeHTTP(w, r)
			return
		}
		unguarded.ServeHTTP(w, r)
	})
	if !simControlOn(c.sim.control, ln.Addr()) {
		log.Info("simulator control endpoints off (--sim-control); /sim/token, /sim/runame (both need the client credentials) and /sim/img/ are still served")
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := r.URL.Path
			if strings.HasPrefix(p, "/sim/") && p != "/sim/token" && p != "/sim/runame" && !strings.HasPrefix(p, "/sim/img/") {
				http.NotFound(w, r)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{
		Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	failed := make(chan error, 1)
	wg.Go(func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			failed <- fmt.Errorf("http server: %w", err)
		}
	})
	wg.Go(func() { s.Run(runCtx) })
	fmt.Fprintf(stderr, "sniped market: the simulated marketplace, in eBay's shape, listening on %s (client id %s)\n", base, c.clientID)
	log.Info("ready", "addr", ln.Addr().String(), "data", c.data, "runames", len(c.runames))
	runErr := awaitStop(ctx, failed, log)
	cancel()
	shutdown(hs, log)
	return runErr
}
