// Command apibench measures the interface's throughput against a bare
// net/http handler in the same run, as issue 12 asks: each operation's
// requests per second as a share of what a handler that only writes a fixed
// JSON body serves on the same machine, with the same load.
//
// It runs the real `sniped serve` binary (built from this tree unless
// -sniped names binaries) with the rate limit off, the simulator's rivals
// off and its request log on stderr (drained), one account with -snipes
// snipes, and the bare handler in a child process of its own. The load is
// closed-loop: -conns connections, each sending its next request when the
// previous answer has been read, for -duration per operation after a
// -warmup. Every answer must be 200.
//
//	go run ./cmd/apibench                         # this tree
//	go run ./cmd/apibench -sniped /tmp/old,/tmp/new  # before and after, side by side
//	go run ./cmd/apibench -profile /tmp/prof      # CPU profile of the server per operation
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

// bareBody is what the bare handler writes: about the size of a
// justTesting answer.
const bareBody = `{"status":"OK","message":"The interface works; your key belongs to account admin.","arg1":"hello","arg2":"","arg3":"","version":"1","timestamp":"2026-01-01 00:00:00"}` + "\n"

type config struct {
	binaries []string
	ops      []string
	conns    int
	duration time.Duration
	warmup   time.Duration
	snipes   int
	limit    int
	profile  string
	rounds   int
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-bare" {
		serveBare(os.Args[2])
		return
	}
	var c config
	var bins, ops string
	flag.StringVar(&bins, "sniped", "", "comma-separated sniped binaries to measure side by side (default: build ./cmd/sniped)")
	flag.StringVar(&ops, "ops", "justTesting,checkSnipeStatus,getUserItems,addBid", "comma-separated operations")
	flag.IntVar(&c.conns, "conns", 32, "concurrent connections")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measured time per operation and round")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; each measures the bare handler and every operation on every binary once")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured load before each measurement")
	flag.IntVar(&c.snipes, "snipes", 200, "snipes on the account")
	flag.IntVar(&c.limit, "limit", 20, "getUserItems limit")
	flag.StringVar(&c.profile, "profile", "", "write a CPU profile of the server per operation into this folder (needs --metrics-addr, i.e. a binary from this tree)")
	flag.Parse()
	c.ops = strings.Split(ops, ",")
	if err := run(c, bins); err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		os.Exit(1)
	}
}

// serveBare is the baseline: a net/http server whose handler writes a
// fixed JSON body, nothing else.
func serveBare(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	body := []byte(bareBody)
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	}))
}

func run(c config, bins string) error {
	tmp, err := os.MkdirTemp("", "apibench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bins == "" {
		bin := filepath.Join(tmp, "sniped")
		fmt.Fprintln(os.Stderr, "apibench: building ./cmd/sniped")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/sniped").CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
		c.binaries = []string{bin}
	} else {
		c.binaries = strings.Split(bins, ",")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bare, err := start(exec.Command(self, "-bare", "127.0.0.1:0"), false)
	if err != nil {
		return fmt.Errorf("bare handler: %w", err)
	}
	defer bare.stop()

	var servers []*proc
	for i, bin := range c.binaries {
		s, err := startSniped(c, bin, filepath.Join(tmp, fmt.Sprintf("data%d", i)))
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		defer s.stop()
		servers = append(servers, s)
	}
	fmt.Fprintf(os.Stderr, "apibench: %d connections, %v per operation after %v warm-up, %d snipes on the account\n", c.conns, c.duration, c.warmup, c.snipes)

	// Rounds interleave everything (the bare handler, then each operation
	// on each binary) so that a change in the machine's load hits all of
	// them alike; the table gives each one's median over the rounds.
	bareRates := []float64{}
	rates := map[string][][]float64{} // op -> binary -> rounds
	for _, op := range c.ops {
		rates[op] = make([][]float64, len(servers))
	}
	for round := range c.rounds {
		r, err := measure(c, "bare", bare.url, func(int) string { return "/" })
		if err != nil {
			return err
		}
		bareRates = append(bareRates, r)
		for _, op := range c.ops {
			for i, s := range servers {
				if c.profile != "" && s.metrics != "" && round == 0 {
					s.startProfile(c, filepath.Join(c.profile, fmt.Sprintf("%s-%d.prof", op, i)))
				}
				r, err := measure(c, op, s.url, s.request(c, op))
				s.waitProfile()
				if err != nil {
					return fmt.Errorf("%s on %s: %w", op, c.binaries[i], err)
				}
				rates[op][i] = append(rates[op][i], r)
			}
		}
	}
	base := median(bareRates)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "operation (median of %d rounds of %v)", c.rounds, c.duration)
	for _, b := range c.binaries {
		fmt.Fprintf(tw, "\t%s req/s\tshare", filepath.Base(b))
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "bare handler\t%.0f\t100%%\n", base)
	for _, op := range c.ops {
		fmt.Fprintf(tw, "%s", op)
		for i := range servers {
			r := median(rates[op][i])
			fmt.Fprintf(tw, "\t%.0f\t%.1f%%", r, 100*r/base)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// measure runs closed-loop load on base+path(i) and returns requests per
// second over c.duration, after c.warmup. Any answer but 200 is an error.
func measure(c config, name, base string, path func(i int) string) (float64, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: c.conns, MaxConnsPerHost: c.conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var (
		counting atomic.Bool
		count    atomic.Int64
		seq      atomic.Int64
		failMu   sync.Mutex
		failure  error
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			buf := make([]byte, 32<<10)
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path(int(seq.Add(1))), nil)
				res, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failMu.Lock()
						failure = err
						failMu.Unlock()
						cancel()
					}
					return
				}
				n, _ := io.ReadFull(res.Body, buf)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failMu.Lock()
					failure = fmt.Errorf("status %d: %s", res.StatusCode, buf[:n])
					failMu.Unlock()
					cancel()
					return
				}
				if counting.Load() {
					count.Add(1)
				}
			}
		})
	}
	time.Sleep(c.warmup)
	counting.Store(true)
	t0 := time.Now()
	time.Sleep(c.duration)
	counting.Store(false)
	elapsed := time.Since(t0)
	cancel()
	wg.Wait()
	if failure != nil {
		return 0, failure
	}
	rate := float64(count.Load()) / elapsed.Seconds()
	fmt.Fprintf(os.Stderr, "apibench: %-18s %8.0f req/s\n", name, rate)
	return rate, nil
}

// proc is a child process that printed "listening on URL".
type proc struct {
	cmd     *exec.Cmd
	url     string
	key     string
	metrics string
	items   []string
	prof    chan error
}

var (
	listenRE  = regexp.MustCompile(`listening on (http://[^\s/]+)`)
	keyRE     = regexp.MustCompile(`^\s+(snp_[0-9a-f]{64})\s*$`)
	metricsRE = regexp.MustCompile(`metrics on (http://[^\s/]+)/metrics`)
)

// start runs cmd and waits for its listen line on stdout or stderr; the
// rest of the output is drained (sniped's request log goes there).
func start(cmd *exec.Cmd, stderr bool) (*proc, error) {
	cmd.Env = append(os.Environ(), "SNIPED_ADDR=", "SNIPED_DATA=")
	var pipe io.ReadCloser
	var err error
	if stderr {
		pipe, err = cmd.StderrPipe()
	} else {
		pipe, err = cmd.StdoutPipe()
	}
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd}
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := keyRE.FindStringSubmatch(line); m != nil {
				p.key = m[1]
			}
			if m := metricsRE.FindStringSubmatch(line); m != nil {
				p.metrics = m[1]
			}
			if m := listenRE.FindStringSubmatch(line); m != nil {
				p.url = m[1]
				once.Do(func() { close(ready) })
			}
		}
		once.Do(func() { close(ready) })
		_, _ = io.Copy(io.Discard, pipe)
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
	}
	if p.url == "" {
		p.stop()
		return nil, errors.New("no listen line")
	}
	return p, nil
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// startSniped runs `sniped serve` on a fresh data folder and gives its
// admin account c.snipes snipes on items of its own, ending in a week.
func startSniped(c config, bin, data string) (*proc, error) {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--rate-limit", "0", "--sim-bidders", "off", "--sim-items", "100"}
	if c.profile != "" {
		args = append(args, "--metrics-addr", "127.0.0.1:0")
	}
	p, err := start(exec.Command(bin, args...), true)
	if err != nil {
		return nil, err
	}
	if p.key == "" {
		p.stop()
		return nil, errors.New("no admin key printed")
	}
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(path string, q url.Values) error {
		res, err := client.Get(p.url + path + "?" + q.Encode())
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			return fmt.Errorf("%s: %d %s", path, res.StatusCode, b)
		}
		if m := regexp.MustCompile(`"item_no":"(\d+)"`).FindSubmatch(b); m != nil && path == "/sim/createItem" {
			p.items = append(p.items, string(m[1]))
		}
		return nil
	}
	for i := range c.snipes {
		if err := get("/sim/createItem", url.Values{"title": {fmt.Sprintf("Bench item %d", i)}, "start_price": {"10"}, "ends_in": {"604800"}}); err != nil {
			p.stop()
			return nil, err
		}
		if err := get("/addBid", url.Values{"key": {p.key}, "item_no": {p.items[i]}, "bid": {"50.00"}, "delay": {"5"}}); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}

// request returns the path of the i-th request of op.
func (p *proc) request(c config, op string) func(i int) string {
	k := url.QueryEscape(p.key)
	return func(i int) string {
		item := p.items[i%len(p.items)]
		switch op {
		case "justTesting":
			return "/justTesting?key=" + k + "&arg1=hello"
		case "checkSnipeStatus":
			return "/checkSnipeStatus?key=" + k + "&item_no=" + item
		case "getUserItems":
			return fmt.Sprintf("/getUserItems?key=%s&filter=current&limit=%d", k, c.limit)
		case "addBid":
			// Alternate the amount so that every call is a real update.
			return fmt.Sprintf("/addBid?key=%s&item_no=%s&bid=%d.00&delay=5", k, item, 50+i%2)
		}
		return "/" + op + "?key=" + k
	}
}

// startProfile fetches a CPU profile of the server covering the
// measurement (after the warm-up).
func (p *proc) startProfile(c config, file string) {
	p.prof = make(chan error, 1)
	go func() {
		time.Sleep(c.warmup)
		secs := int(c.duration.Seconds())
		if secs < 1 {
			secs = 1
		}
		res, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.metrics, secs))
		if err != nil {
			p.prof <- err
			return
		}
		defer res.Body.Close()
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			p.prof <- err
			return
		}
		f, err := os.Create(file)
		if err != nil {
			p.prof <- err
			return
		}
		_, err = io.Copy(f, res.Body)
		f.Close()
		if err == nil {
			fmt.Fprintln(os.Stderr, "apibench: profile", file)
		}
		p.prof <- err
	}()
}

func (p *proc) waitProfile() {
	if p.prof != nil {
		if err := <-p.prof; err != nil {
			fmt.Fprintln(os.Stderr, "apibench: profile:", err)
		}
		p.prof = nil
	}
}
