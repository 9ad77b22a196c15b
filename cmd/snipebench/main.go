// Command snipebench measures the sniper against the real SQLite store and
// an in-process marketplace with configurable latency. It reports firing
// lateness (the moment the bid call starts minus the snipe's target) as
// p50, p99 and max, the process RSS with the stored snipes, and the cold
// start of the real `sniped serve` to /healthz ready. docs/performance.md
// has the commands and results.
//
//	go run ./cmd/snipebench                      # every case, 1,000,000 stored
//	go run ./cmd/snipebench -case steady -stored 100000 -latency 50ms
//	go run ./cmd/snipebench -case steady -database-url "$DSN" -instances 3 -accounts 96
//
// The snipers run on their leases as `sniped serve` does (internal/lease):
// on SQLite one instance holds every partition; with -database-url,
// -instances snipers (each with its own connection pool and lease manager)
// share them, and the report says how the shots spread.
package main

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
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/lease"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/market/metered"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/sniper"
	"github.com/sniped/sniped/internal/store"
	"github.com/sniped/sniped/internal/store/postgres"
	"github.com/sniped/sniped/internal/store/sqlite"
)

// Defaults: the targets of issue 4.
const (
	defaultStored   = 1_000_000
	defaultRate     = 2000
	defaultDuration = 10 * time.Second
	defaultBurst    = 5000
	defaultLatency  = 20 * time.Millisecond
	// defaultLead is the time from the sniper's start to the first due
	// snipe: it covers the first horizon load and the pre-flights.
	defaultLead = 20 * time.Second
	// importChunk is how many snipes one ImportSnipes call (one
	// transaction) carries.
	importChunk = 20_000
)

type config struct {
	cases    map[string]bool
	stored   int
	rate     int
	duration time.Duration
	burst    int
	latency  time.Duration
	lead     time.Duration
	dir      string
	sniped   string
	cpuprof  string
	tracef   string
	memprof  string
	probe    int
	// probeSleep is how a probe waits: "go" (a Go timer) or "precise"
	// (as a shot with sniper.Config.PreciseWake).
	probeSleep string
	armLead    time.Duration
	precise    bool
	// databaseURL, when set, stores the snipes in PostgreSQL (an empty
	// schema: point its search_path at one) instead of DATA/sniped.db.
	databaseURL string
	instances   int
	accounts    int
}

func main() {
	var c config
	var cases string
	flag.StringVar(&cases, "case", "all", "comma-separated cases: steady, burst, rss, coldstart, or all")
	flag.IntVar(&c.stored, "stored", defaultStored, "snipes stored in the database")
	flag.IntVar(&c.rate, "rate", defaultRate, "steady case: snipes due per second")
	flag.DurationVar(&c.duration, "duration", defaultDuration, "steady case: how long the rate lasts")
	flag.IntVar(&c.burst, "burst", defaultBurst, "burst case: snipes due at the same instant")
	flag.DurationVar(&c.latency, "latency", defaultLatency, "marketplace latency of every call")
	flag.DurationVar(&c.lead, "lead", defaultLead, "time from the sniper's start to the first due snipe")
	flag.StringVar(&c.dir, "dir", "", "data folder (default: a new temporary one, removed afterwards)")
	flag.StringVar(&c.sniped, "sniped", "", "coldstart: sniped binary (default: go build ./cmd/sniped)")
	flag.DurationVar(&c.armLead, "arm-lead", 0, "sniper ArmLead (0: sniper.DefaultArmLead)")
	flag.StringVar(&c.cpuprof, "cpuprofile", "", "write a CPU profile of the measured run (after the import) to this file")
	flag.StringVar(&c.memprof, "memprofile", "", "write the allocations of the whole run to this file and those before the measured run to FILE.before (go tool pprof -sample_index=alloc_space -diff_base FILE.before FILE)")
	flag.IntVar(&c.probe, "probe", 0, "steady case: also time this many bare timers per second, each in a goroutine of its own, beside the shots (the runtime's and kernel's part of the lateness)")
	flag.StringVar(&c.probeSleep, "probe-sleep", "go", "how a probe waits: go (a Go timer) or precise (a Go timer, then clock.SleepPrecisely for the last clock.PreciseWindow, as a shot with -precise)")
	flag.BoolVar(&c.precise, "precise", true, "sniper PreciseWake: wait for each shot's last clock.PreciseWindow in clock.SleepPrecisely (as sniped serve does)")
	flag.StringVar(&c.tracef, "trace", "", "write an execution trace of the measured run (after the import) to this file (go tool trace)")
	flag.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL of an empty schema (default: SQLite in -dir)")
	flag.IntVar(&c.instances, "instances", 1, "snipers sharing the work through their leases (PostgreSQL only beyond 1)")
	flag.IntVar(&c.accounts, "accounts", 1, "accounts the snipes are spread over (the work is partitioned by account)")
	flag.Parse()
	if c.probeSleep != "go" && c.probeSleep != "precise" {
		fmt.Fprintln(os.Stderr, "snipebench: -probe-sleep must be go or precise")
		os.Exit(2)
	}
	if c.instances < 1 || c.accounts < 1 || (c.instances > 1 && c.databaseURL == "") {
		fmt.Fprintln(os.Stderr, "snipebench: -instances and -accounts must be at least 1, and several instances need -database-url")
		os.Exit(2)
	}
	c.cases = map[string]bool{}
	for _, k := range strings.Split(cases, ",") {
		if k == "all" {
			k = "steady,burst,rss,coldstart"
		}
		for _, kk := range strings.Split(k, ",") {
			c.cases[strings.TrimSpace(kk)] = true
		}
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "snipebench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if c.dir == "" {
		d, err := os.MkdirTemp("", "snipebench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	engine := "SQLite"
	if c.databaseURL != "" {
		engine = "PostgreSQL"
	}
	sniper.SetProcs() // as sniped serve does
	fmt.Printf("snipebench: %d stored (%s, %d accounts), %d/s for %v, burst %d, latency %v, %d instance(s), GOMAXPROCS %d, %s\n",
		c.stored, engine, c.accounts, c.rate, c.duration, c.burst, c.latency, c.instances, runtime.GOMAXPROCS(0), runtime.Version())
	if c.cases["steady"] || c.cases["burst"] || c.cases["rss"] {
		if err := runSniper(c); err != nil {
			return err
		}
	} else if c.cases["coldstart"] {
		if err := prepare(c, nil, time.Time{}); err != nil {
			return err
		}
	}
	if c.cases["coldstart"] {
		return coldStart(c)
	}
	return nil
}

// plan is what the database holds: which snipes fire during the run.
type plan struct {
	target  map[int64]time.Time // item → FireAt, for snipes due in the run
	steady  map[int64]bool
	burst   map[int64]bool
	burstAt time.Time
	from    time.Time // the first steady snipe's moment
	end     time.Time // after every measured snipe was due
}

// prepare fills DATA/sniped.db with c.stored snipes: the measured ones
// (listed in the market mk when not nil) and the rest far in the future.
func prepare(c config, mk *markettest.Market, t0 time.Time) error {
	_, err := prepareWith(c, mk, t0)
	return err
}

// benchStore is a store that can bulk-import (both engines can).
type benchStore interface {
	store.Store
	ImportSnipes(ctx context.Context, snipes []store.Snipe) error
}

// openStore opens the benchmark's store: PostgreSQL with -database-url,
// else DATA/sniped.db.
func openStore(ctx context.Context, c config) (benchStore, error) {
	if c.databaseURL != "" {
		return postgres.Open(ctx, c.databaseURL)
	}
	return sqlite.Open(ctx, filepath.Join(c.dir, "sniped.db"))
}

func prepareWith(c config, mk *markettest.Market, t0 time.Time) (*plan, error) {
	ctx := context.Background()
	st, err := openStore(ctx, c)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var accts []store.Account
	for i := range c.accounts {
		name := "bench"
		if i > 0 {
			name = fmt.Sprintf("bench%d", i)
		}
		a, err := st.CreateAccount(ctx, name, store.TierPaid, []byte(fmt.Sprintf("not-a-key-hash-%016d", i)), time.Now())
		if err != nil {
			return nil, err
		}
		accts = append(accts, a)
	}
	p := &plan{target: map[int64]time.Time{}, steady: map[int64]bool{}, burst: map[int64]bool{}}
	nSteady, nBurst := 0, 0
	if c.cases["steady"] {
		nSteady = int(float64(c.rate) * c.duration.Seconds())
	}
	if c.cases["burst"] {
		nBurst = c.burst
	}
	nBackground := max(0, c.stored-nSteady-nBurst)
	start := time.Now().Truncate(time.Millisecond)
	var batch []store.Snipe
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := st.ImportSnipes(ctx, batch)
		batch = batch[:0]
		return err
	}
	add := func(no int64, delay int, fire time.Time) error {
		end := fire.Add(time.Duration(delay) * time.Second)
		it := store.ItemSnapshot{Title: fmt.Sprintf("Bench item %d", no), Currency: "USD", CurrentPrice: 100, Start: start, End: end}
		if p.steady[no] || p.burst[no] {
			p.target[no] = fire
			if mk != nil {
				it.Start = mk.AddNumbered(no, markettest.ItemSpec{Title: it.Title, StartPrice: 100, EndAt: end}).Start
			}
		}
		batch = append(batch, store.Snipe{AccountID: accts[int(no%int64(len(accts)))].ID, ItemNo: no, Bid: money.Amount(500), Delay: delay, Enabled: true, Item: it, CreatedAt: start, UpdatedAt: start})
		if len(batch) == importChunk {
			return flush()
		}
		return nil
	}
	began := time.Now()
	// The bulk, due in 2 h to 30 days, in fire-time order (index-friendly).
	spread := 30 * 24 * time.Hour / time.Duration(max(1, nBackground))
	for i := range nBackground {
		fire := start.Add(2*time.Hour + time.Duration(i)*spread).Truncate(time.Millisecond)
		if err := add(int64(2_000_000_000+i), 1+i%15, fire); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	// The measured snipes, timed from now so that import time does not
	// eat into the lead.
	if t0.IsZero() {
		t0 = time.Now().Add(c.lead)
	}
	p.from = t0
	p.burstAt = t0.Add(c.duration + 15*time.Second).Truncate(time.Second)
	p.end = p.burstAt
	if nBurst == 0 {
		p.end = t0.Add(c.duration)
	}
	for i := range nSteady + nBurst {
		no := int64(1_000_000_000 + i)
		fire := p.burstAt
		if i < nSteady {
			fire = t0.Add(time.Duration(i) * time.Second / time.Duration(c.rate)).Truncate(time.Millisecond)
			p.steady[no] = true
		} else {
			p.burst[no] = true
		}
		if err := add(no, 1+i%15, fire); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	fmt.Printf("prepare: imported %d snipes in %v\n", c.stored, time.Since(began).Round(time.Millisecond))
	return p, nil
}

// recorder notes when each item's first bid call started. Its map is
// filled before the run and only read during it, so recording takes no
// lock that a burst's goroutines would queue on.
type recorder struct {
	*markettest.Market
	sent map[int64]*atomic.Int64 // item → unix nanoseconds of the first call
	// calls counts this instance's bid calls on measured items; twice
	// counts calls on items some instance had already bid on.
	calls, twice *atomic.Int64
}

func (r *recorder) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	if at := r.sent[itemNo]; at != nil {
		r.calls.Add(1)
		if !at.CompareAndSwap(0, time.Now().UnixNano()) {
			r.twice.Add(1)
		}
	}
	return r.Market.PlaceBid(ctx, user, itemNo, max)
}

func runSniper(c config) error {
	mk := markettest.New(clock.Real{})
	p, err := prepareWith(c, mk, time.Time{})
	if err != nil {
		return err
	}
	mk.SetLatency(c.latency)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := map[int64]*atomic.Int64{}
	for no := range p.target {
		sent[no] = new(atomic.Int64)
	}
	twice := new(atomic.Int64)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	type inst struct {
		m   *lease.Manager
		s   *sniper.Sniper
		rec *recorder
	}
	var insts []inst
	for i := range c.instances {
		st, err := openStore(ctx, c) // a pool per instance, as separate processes
		if err != nil {
			return err
		}
		defer st.Close()
		m, err := lease.New(lease.Config{Store: st, Instance: fmt.Sprintf("bench-%d", i), Exclusive: c.databaseURL == "", Logger: log})
		if err != nil {
			return err
		}
		rec := &recorder{Market: mk, sent: sent, calls: new(atomic.Int64), twice: twice}
		reg := prometheus.NewRegistry()
		// Metered and leased as in production (cli wires them the same way).
		s := sniper.New(sniper.Config{Store: m.Store(st), Lease: m, Market: metered.New(rec, clock.Real{}, reg), Clock: clock.Real{}, Logger: log, Registerer: reg, ArmLead: c.armLead, PreciseWake: c.precise})
		insts = append(insts, inst{m, s, rec})
	}
	if c.cpuprof != "" {
		f, err := os.Create(c.cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if c.memprof != "" {
		if err := writeAllocs(c.memprof + ".before"); err != nil {
			return err
		}
		defer func() {
			if err := writeAllocs(c.memprof); err != nil {
				fmt.Fprintln(os.Stderr, "snipebench:", err)
			}
		}()
	}
	if c.tracef != "" {
		f, err := os.Create(c.tracef)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return err
		}
		defer trace.Stop()
	}
	done := make(chan error, len(insts))
	for _, in := range insts {
		go in.m.Run(ctx)
		go func() { done <- in.s.Run(ctx) }()
	}
	fmt.Printf("sniper: %d started; last measured snipe due in %v\n", len(insts), time.Until(p.end).Round(time.Millisecond))

	var probes []time.Duration
	probed := make(chan struct{})
	if c.probe > 0 {
		go func() {
			probes = probeTimers(p.from, c.duration, c.probe, c.probeSleep == "precise")
			close(probed)
		}()
	} else {
		close(probed)
	}

	// Wait until every measured snipe was due, plus room to send.
	time.Sleep(time.Until(p.end.Add(3 * time.Second)))
	<-probed
	var steady, burst []time.Duration
	missing := 0
	for no, target := range p.target {
		ns := sent[no].Load()
		if ns == 0 {
			missing++
			continue
		}
		at := time.Unix(0, ns)
		if p.burst[no] {
			burst = append(burst, at.Sub(target))
		} else {
			steady = append(steady, at.Sub(target))
		}
	}
	if c.cases["steady"] {
		report("steady", steady, len(p.steady))
	}
	if c.cases["burst"] {
		report("burst", burst, len(p.burst))
	}
	if len(probes) > 0 {
		report("probe (bare timers)", probes, len(probes))
	}
	if missing > 0 {
		fmt.Printf("WARNING: %d measured snipes were not sent\n", missing)
	}
	if n := twice.Load(); n > 0 {
		fmt.Printf("WARNING: %d bid calls on items already bid on\n", n)
	}
	if len(insts) > 1 {
		for i, in := range insts {
			fmt.Printf("instance %d: %d partitions, %d measured shots\n", i, len(in.m.Held()), in.rec.calls.Load())
		}
	}
	if c.cases["rss"] {
		runtime.GC()
		debug.FreeOSMemory()
		rss, hwm := procRSS(os.Getpid())
		fmt.Printf("rss: bench process (store + sniper + market, %d stored): VmRSS %d MB, VmHWM %d MB (the peak includes building the import batches)\n", c.stored, rss>>10, hwm>>10)
	}
	cancel()
	var runErr error
	for range insts {
		runErr = errors.Join(runErr, <-done)
	}
	return runErr
}

// report prints p50/p99/max of lateness.
func report(name string, d []time.Duration, want int) {
	if len(d) == 0 {
		fmt.Printf("%s: no snipes sent (want %d)\n", name, want)
		return
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	fmt.Printf("%s: sent %d/%d; lateness p50 %v, p99 %v, max %v\n", name, len(d), want,
		q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), d[len(d)-1].Round(10*time.Microsecond))
}

// procRSS returns VmRSS and VmHWM of a process in kB.
func procRSS(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var v int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &v); err == nil {
			rss = v
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &v); err == nil {
			hwm = v
		}
	}
	return rss, hwm
}

// coldStart execs the real `sniped serve` on the prepared data folder and
// times it to /healthz ready, twice: the first start also generates the
// simulator catalogue; the second is a plain restart.
func coldStart(c config) error {
	bin := c.sniped
	if bin == "" {
		bin = filepath.Join(c.dir, "sniped")
		build := exec.Command("go", "build", "-o", bin, "./cmd/sniped")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := build.Run(); err != nil {
			return fmt.Errorf("build sniped (run from the repository root or pass -sniped): %w", err)
		}
	}
	for _, label := range []string{"first start", "restart"} {
		if err := startOnce(bin, c, label); err != nil {
			return err
		}
	}
	return nil
}

func startOnce(bin string, c config, label string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "serve", "--data", c.dir, "--addr", addr, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	url := "http://" + addr + "/healthz"
	cl := &http.Client{Timeout: time.Second}
	deadline := began.Add(2 * time.Minute)
	for {
		resp, err := cl.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return errors.New("sniped did not become ready within 2 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	ready := time.Since(began)
	time.Sleep(5 * time.Second) // let the sniper load its horizon
	rss, hwm := procRSS(cmd.Process.Pid)
	fmt.Printf("coldstart (%s, %d stored): /healthz ready after %v; sniped serve VmRSS %d MB, VmHWM %d MB 5 s later\n",
		label, c.stored, ready.Round(time.Millisecond), rss>>10, hwm>>10)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeAllocs writes the allocation profile so far to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
