package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Soak settings (issue 12): mixed interface traffic at soakAPIRate
// requests a second, soakShotRate of them addBids for snipes that fire, on
// the real binary. SNIPED_SOAK sets the duration (default one minute, the
// CI version); the 30-minute run is
//
//	SNIPED_SOAK=30m go test -run TestSoak -v -timeout 45m ./internal/e2e
const (
	soakAPIRate  = 500 // interface requests a second, shots' addBids included
	soakShotRate = 50  // snipes fired a second
	// soakTick paces the load: each tick sends a shot and the mixed
	// requests of its share of the rate.
	soakTick = time.Second / soakShotRate
	// soakItemLife is how long a shot's item runs; its snipe fires
	// soakDelay seconds before the end.
	soakItemLife = 15 * time.Second
	soakDelay    = "3"
	// soakSettled is how long after its item's end a shot is first checked;
	// one not settled yet (placed or pending: the sniper settles at low
	// priority, which a loaded machine delays) is checked again every
	// soakRecheck until soakSettleMax after the end, and counted late. Only
	// an outcome other than Won, or none by soakSettleMax, is an error.
	soakSettled   = 10 * time.Second
	soakRecheck   = 2 * time.Second
	soakSettleMax = 60 * time.Second
	// soakWorkers and soakBacklog bound the requests in flight; a full
	// backlog means the server fell behind, which counts as an error.
	soakWorkers = 64
	soakBacklog = 2000
	// soakSteady is how many long-running snipes the mixed addBids update.
	soakSteady = 20
	// soakRetention is how long the simulator keeps an ended auction: the
	// soak lists 50 a second, and a shot is settled 2 s and verified 10 s
	// after its end (rechecked up to soakSettleMax), well inside it.
	soakRetention = "2m"
	// soakCacheMiB caps SQLite's writer page cache so that it is full
	// within the warm-up (~0.9 KB a snipe: 4 MiB after ~4,500 shots, 90 s);
	// the default 64 MiB would fill for 23 minutes and hide a leak. The
	// process's pages are bounded by the sum of all connections' caps
	// (store/sqlite's readerCacheKiB): 4 MiB + 4 readers × 256 KiB + the
	// simulator's 256 KiB here.
	soakCacheMiB = "4"
)

// soakShot is one snipe that must fire and win.
type soakShot struct {
	item string
	end  time.Time
	due  time.Time // when to check it next
	// armed is when addBid answered: a shot armed after its moment (a
	// backed-up load generator) would be missed through no fault of the
	// sniper's.
	armed time.Time
}

type soak struct {
	t      *testing.T
	s      *server
	key    string
	client *http.Client

	errs   atomic.Int64
	missed atomic.Int64 // shots the sniper reached too late (outcome missed)
	// missedOK is how many missed shots are tolerated, logged not failed
	// (the CI run on a loaded machine; 0 for the long run).
	missedOK int64
	errMu    sync.Mutex
	errKinds map[string]int // errors by kind
	missedAt []time.Time    // item ends of the missed shots
	sent     atomic.Int64

	latMu sync.Mutex
	lat   []time.Duration

	shotMu   sync.Mutex
	shots    []soakShot // created, not yet verified, in end order
	live     []string   // items of recent shots, for reads
	verified atomic.Int64
	late     atomic.Int64 // shots settled only after a recheck
	steady   []string
}

// TestSoak runs the soak against the real binary: 0 errors (every answer
// 200, the load never backs up, every shot Won) and bounded RSS growth
// after warm-up. Skipped with -short.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: skipped with -short")
	}
	dur := time.Minute
	if v := os.Getenv("SNIPED_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Second {
			t.Fatalf("SNIPED_SOAK=%q: want a duration of at least 10s, e.g. 30m", v)
		}
		dur = d
	}
	// Warm-up: the Go heap, SQLite's page caches (the writer's capped at
	// soakCacheMiB) and the simulator's auctions (dropped soakRetention
	// after their end) fill up first; a long run gives them 3 minutes.
	warmup := max(20*time.Second, dur/6)
	// A one-minute run only catches gross leaks (in one minute the
	// simulator's auctions and SQLite's cache are still filling,
	// docs/performance.md); the long run holds the bound.
	// It also tolerates 2% of its shots missed: a machine that stalls the
	// sniper for seconds (CI runners, the shared 2-core reference machine
	// under other tests) makes it late, and the outcome says so truthfully.
	maxGrowth, missedShare := 0.50, 0.02
	if dur >= 10*time.Minute {
		maxGrowth, missedShare = 0.05, 0
		warmup = max(warmup, 3*time.Minute)
	}

	s := startServer(t, t.TempDir(), "--sim-retention", soakRetention, "--sqlite-cache", soakCacheMiB)
	so := &soak{t: t, s: s, key: s.Key(), client: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: soakWorkers, MaxConnsPerHost: soakWorkers},
	}, missedOK: int64(missedShare * dur.Seconds() * soakShotRate)}
	for i := range soakSteady {
		item := so.createItem(fmt.Sprintf("Steady item %d", i), "86400")
		so.get("/addBid", url.Values{"item_no": {item}, "bid": {"40.00"}, "delay": {"5"}})
		so.steady = append(so.steady, item)
	}

	tasks := make(chan func(), soakBacklog)
	var workers sync.WaitGroup
	for range soakWorkers {
		workers.Go(func() {
			for task := range tasks {
				task()
			}
		})
	}
	pid := s.cmd.Process.Pid
	var rss []rssSample
	sample := func(at time.Duration) {
		r := readRSS(t, pid)
		r.at = at
		so.readMetrics(&r)
		rss = append(rss, r)
	}
	start := time.Now()
	tick := time.NewTicker(soakTick)
	nextRSS := start
	mixedPerTick := (soakAPIRate - soakShotRate) / soakShotRate
	n := 0
	for now := start; now.Sub(start) < dur; now = <-tick.C {
		if !now.Before(nextRSS) {
			sample(now.Sub(start))
			nextRSS = nextRSS.Add(5 * time.Second)
		}
		so.dispatch(tasks, so.shot)
		for range mixedPerTick {
			n++
			so.dispatch(tasks, so.mixed(n))
		}
	}
	tick.Stop()
	close(tasks)
	workers.Wait()
	elapsed := time.Since(start)
	sample(elapsed)

	// The last shots settle, then every shot not yet checked is.
	so.shotMu.Lock()
	pending := so.shots
	so.shots = nil
	so.shotMu.Unlock()
	if len(pending) > 0 {
		time.Sleep(time.Until(pending[len(pending)-1].end.Add(soakSettled))) // waiting for a real auction's end
	}
	var verify sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, sh := range pending {
		sem <- struct{}{}
		verify.Go(func() {
			defer func() { <-sem }()
			for !so.verify(sh) {
				time.Sleep(soakRecheck) // waiting for the sniper to settle a real auction
				sh.due = time.Now()
			}
		})
	}
	verify.Wait()

	so.report(elapsed, warmup, rss, maxGrowth)
}

func (so *soak) dispatch(tasks chan<- func(), task func()) {
	select {
	case tasks <- task:
	default:
		so.fail("backlog full", "load backlog full: the server fell behind %d requests a second", soakAPIRate)
	}
}

// shot lists an item ending in soakItemLife and snipes it.
func (so *soak) shot() {
	item := so.createItem("Soak lens", strconv.Itoa(int(soakItemLife/time.Second)))
	if item == "" {
		return
	}
	end := time.Now().Add(soakItemLife)
	if !so.get("/addBid", url.Values{"item_no": {item}, "bid": {"20.00"}, "delay": {soakDelay}}) {
		return
	}
	so.shotMu.Lock()
	so.shots = append(so.shots, soakShot{item: item, end: end, due: end.Add(soakSettled), armed: time.Now()})
	so.live = append(so.live, item)
	if len(so.live) > 500 {
		so.live = so.live[len(so.live)-500:]
	}
	so.shotMu.Unlock()
}

// mixed returns the n-th request of the mix: status checks (of settled
// shots when one is due, which verifies it), listings, echo, item details,
// snipe updates, searches and chart data.
func (so *soak) mixed(n int) func() {
	so.shotMu.Lock()
	var due *soakShot
	if len(so.shots) > 0 && time.Now().After(so.shots[0].due) && n%9 < 3 {
		sh := so.shots[0]
		so.shots = so.shots[1:]
		due = &sh
	}
	live := ""
	if len(so.live) > 0 {
		live = so.live[n%len(so.live)]
	}
	so.shotMu.Unlock()
	if due != nil {
		return func() {
			if !so.verify(*due) {
				due.due = time.Now().Add(soakRecheck)
				so.shotMu.Lock()
				so.shots = append(so.shots, *due)
				so.shotMu.Unlock()
			}
		}
	}
	steady := so.steady[n%len(so.steady)]
	if live == "" {
		live = steady
	}
	var path string
	var q url.Values
	switch n % 9 {
	case 0, 1, 2:
		path, q = "/checkSnipeStatus", url.Values{"item_no": {live}}
	case 3, 4:
		path, q = "/getUserItems", url.Values{"filter": {"current"}, "limit": {"20"}}
	case 5:
		path, q = "/justTesting", url.Values{"arg1": {"soak"}}
	case 6:
		path, q = "/fetchItem", url.Values{"item_no": {live}}
	case 7:
		path, q = "/addBid", url.Values{"item_no": {steady}, "bid": {fmt.Sprintf("%d.00", 40+n%2)}, "delay": {"5"}}
	default:
		if n%2 == 0 {
			path, q = "/getUserSearches", url.Values{}
		} else {
			path, q = "/getBidHistoryDataset", url.Values{"item_no": {steady}}
		}
	}
	return func() { so.get(path, q) }
}

// verify checks that a shot's snipe won. It reports false when the shot
// is not settled yet and may be checked again (before soakSettleMax);
// anything else is final (an error when it is not Won).
func (so *soak) verify(sh soakShot) bool {
	body, ok := so.call("/checkSnipeStatus", url.Values{"key": {so.key}, "item_no": {sh.item}})
	if !ok {
		return true
	}
	var v struct {
		BidResult struct {
			Shorthand string `json:"shorthand"`
		} `json:"bidResult"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		so.fail("bad checkSnipeStatus", "shot on item %s: checkSnipeStatus answered %.300s", sh.item, body)
		return true
	}
	switch s := v.BidResult.Shorthand; {
	case s == "won":
		so.verified.Add(1)
		if sh.due.After(sh.end.Add(soakSettled)) { // a recheck
			so.late.Add(1)
		}
		return true
	case (s == "placed" || s == "pending") && time.Since(sh.end) < soakSettleMax:
		return false
	case s == "missed" && so.noteMissed(sh) <= so.missedOK:
		// The sniper reached it too late and said so: a stall of the
		// machine (the CI run shares it), not a wrong answer.
		so.t.Logf("shot on item %s missed (tolerated in the short run; addBid answered %v before the moment): %.300s", sh.item, sh.moment().Sub(sh.armed).Round(time.Millisecond), body)
		return true
	default:
		so.fail("shot outcome "+s, "shot on item %s: outcome %q %v after its end, want won (addBid answered %v before the moment): %.300s",
			sh.item, s, time.Since(sh.end).Round(time.Second), sh.moment().Sub(sh.armed).Round(time.Millisecond), body)
		return true
	}
}

// moment is when the shot's snipe is due (as the driver knows its end: a
// little after the simulator's).
func (sh soakShot) moment() time.Time {
	d, _ := strconv.Atoi(soakDelay)
	return sh.end.Add(-time.Duration(d) * time.Second)
}

// noteMissed counts a shot the sniper reached too late and remembers
// when its item ended, so that the report shows when the misses happened;
// it returns the count so far.
func (so *soak) noteMissed(sh soakShot) int64 {
	so.errMu.Lock()
	so.missedAt = append(so.missedAt, sh.end)
	so.errMu.Unlock()
	return so.missed.Add(1)
}

func (so *soak) createItem(title, endsIn string) string {
	body, ok := so.call("/sim/createItem", url.Values{"title": {title}, "start_price": {"10"}, "ends_in": {endsIn}})
	if !ok {
		return ""
	}
	var v struct {
		ItemNo string `json:"item_no"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.ItemNo == "" {
		so.fail("bad createItem", "createItem answered %.200s", body)
		return ""
	}
	return v.ItemNo
}

// get calls an interface operation with the key; ok is a 200.
func (so *soak) get(path string, q url.Values) bool {
	q.Set("key", so.key)
	_, ok := so.call(path, q)
	return ok
}

// call GETs path and records its latency; any answer but 200 is an error.
func (so *soak) call(path string, q url.Values) ([]byte, bool) {
	t0 := time.Now()
	res, err := so.client.Get(so.s.URL + path + "?" + q.Encode())
	if err != nil {
		so.fail("transport error "+path, "GET %s: %v", path, err)
		return nil, false
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(t0)
	so.sent.Add(1)
	so.latMu.Lock()
	so.lat = append(so.lat, d)
	so.latMu.Unlock()
	if err != nil || res.StatusCode != http.StatusOK {
		so.fail(fmt.Sprintf("status %d %s", res.StatusCode, path), "GET %s = %d %v: %.300s", path, res.StatusCode, err, body)
		return nil, false
	}
	return body, true
}

// fail counts an error of a kind and shows the first few of each kind.
func (so *soak) fail(kind, format string, args ...any) {
	so.errs.Add(1)
	so.errMu.Lock()
	defer so.errMu.Unlock()
	if so.errKinds == nil {
		so.errKinds = map[string]int{}
	}
	so.errKinds[kind]++
	if so.errKinds[kind] <= 3 {
		so.t.Errorf(format, args...)
	}
}

// rssSample is the process's resident memory at one moment, in KiB.
type rssSample struct {
	at  time.Duration
	kib int64
	// anon and file split kib (/proc/PID/status: RssAnon, RssFile; file
	// is mostly the binary).
	anon, file int64
	// From the server's /metrics: what the Go runtime holds from the OS
	// and has not released (go_memstats_sys_bytes − heap_released: the
	// heap, stacks and metadata, an upper bound of its resident part) and
	// the Go heap in use. The rest of anon is SQLite's page caches and
	// everything else the pure-Go libc allocates, which has no gauge
	// (modernc's build keeps no memory statistics). (The heap's address is not
	// fixed, seen at 0xc000000000 and 0x1dd5f8000000, so smaps cannot tell
	// it apart by address.)
	goHeld, heapInuse int64
}

// readMetrics adds the server's Go memory gauges to r.
func (so *soak) readMetrics(r *rssSample) {
	res, err := so.client.Get(so.s.URL + "/metrics")
	if err != nil {
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var sys, released int64
	for _, line := range strings.Split(string(body), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		kib := int64(f / 1024)
		switch name {
		case "go_memstats_sys_bytes":
			sys = kib
		case "go_memstats_heap_released_bytes":
			released = kib
		case "go_memstats_heap_inuse_bytes":
			r.heapInuse = kib
		}
	}
	r.goHeld = sys - released
}

// readRSS reads the process's resident set from /proc/PID/status (Linux);
// a zero sample when it cannot be read.
func readRSS(t *testing.T, pid int) rssSample {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Logf("read RSS: %v", err)
		return rssSample{}
	}
	var r rssSample
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		switch name {
		case "VmRSS":
			r.kib = kib
		case "RssAnon":
			r.anon = kib
		case "RssFile":
			r.file = kib
		}
	}
	return r
}

func (so *soak) report(elapsed, warmup time.Duration, rss []rssSample, maxGrowth float64) {
	t := so.t
	so.latMu.Lock()
	lat := slices.Clone(so.lat)
	so.latMu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	// RSS after warm-up: the mean of the first samples against the mean of
	// the last ones, a minute of them (12) when the run is long enough. The
	// Go heap's share of RSS swings by 5 MiB over a GC cycle (measured:
	// 23.8 → 30.0 → 24.4 MiB in three minutes), so three samples 5 s apart
	// could catch two different phases of it.
	var after []int64
	for _, r := range rss {
		if r.at >= warmup && r.kib > 0 {
			after = append(after, r.kib)
		}
	}
	var peak int64
	for _, r := range rss {
		peak = max(peak, r.kib)
	}
	mean := func(xs []int64) float64 {
		var s int64
		for _, x := range xs {
			s += x
		}
		return float64(s) / float64(len(xs))
	}
	growth := 0.0
	var base, last float64
	if len(after) >= 6 {
		n := min(12, len(after)/3)
		base, last = mean(after[:n]), mean(after[len(after)-n:])
		growth = last/base - 1
	}
	t.Logf("soak: %v, %d requests (%.0f/s, simulator calls included), %d shots verified won (%d settled more than %v after their end), %d missed, %d errors",
		elapsed.Round(time.Second), so.sent.Load(), float64(so.sent.Load())/elapsed.Seconds(), so.verified.Load(), so.late.Load(), soakSettled, so.missed.Load(), so.errs.Load())
	t.Logf("soak: latency p50 %v, p99 %v, p99.9 %v, max %v", pct(0.5), pct(0.99), pct(0.999), pct(1))
	t.Logf("soak: RSS after %v warm-up %.1f MiB, at the end %.1f MiB (growth %+.1f%%), peak %.1f MiB",
		warmup, base/1024, last/1024, 100*growth, float64(peak)/1024)
	var trace strings.Builder
	for _, r := range rss {
		if r.at%time.Minute < 5*time.Second {
			fmt.Fprintf(&trace, " %v:%.1f(%.1f/%.1f)", r.at.Round(time.Minute), float64(r.kib)/1024,
				float64(r.anon)/1024, float64(r.file)/1024)
		}
	}
	t.Logf("soak: RSS MiB by minute, total(anonymous/file):%s", trace.String())
	trace.Reset()
	for _, r := range rss {
		if r.at%time.Minute < 5*time.Second {
			fmt.Fprintf(&trace, " %v:%.1f/%.1f", r.at.Round(time.Minute), float64(r.goHeld)/1024, float64(r.heapInuse)/1024)
		}
	}
	// Held is an upper bound of the Go runtime's resident memory (memory
	// it took and never touched counts), so anonymous − held is a lower
	// bound of SQLite's and the libc's share.
	t.Logf("soak: Go runtime MiB by minute, held from the OS/heap in use:%s", trace.String())
	if len(after) < 6 {
		t.Logf("soak: too few RSS samples after warm-up to judge growth")
	} else if growth > maxGrowth {
		t.Errorf("RSS grew %.1f%% after warm-up (%.1f → %.1f MiB), want at most %.0f%%", 100*growth, base/1024, last/1024, 100*maxGrowth)
	}
	so.errMu.Lock()
	if len(so.missedAt) > 0 {
		// When the misses happened, by second of their items' end: one
		// stall of the machine or many.
		slices.SortFunc(so.missedAt, func(a, b time.Time) int { return a.Compare(b) })
		var when strings.Builder
		for i := 0; i < len(so.missedAt); {
			sec := so.missedAt[i].Truncate(time.Second)
			j := i
			for j < len(so.missedAt) && so.missedAt[j].Truncate(time.Second).Equal(sec) {
				j++
			}
			fmt.Fprintf(&when, " %s×%d", sec.UTC().Format(time.TimeOnly), j-i)
			i = j
		}
		t.Logf("soak: missed shots by their item's end (UTC):%s", when.String())
	}
	so.errMu.Unlock()
	if so.errs.Load() > 0 {
		so.errMu.Lock()
		t.Errorf("%d errors during the soak, want 0: %v", so.errs.Load(), so.errKinds)
		so.errMu.Unlock()
	}
}
