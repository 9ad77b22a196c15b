package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFaultStorm is issue 8's proof: hundreds of snipes and Bid Groups
// against the real binary and its simulator while faults are injected at
// random (lost answers, slow calls, unavailable calls, stale lookups,
// marketplace clock steps, SIGKILL and restart), then every outcome is
// checked against the simulator's ground truth. docs/reliability.md
// describes the invariants and the figures of long runs.
//
// By default it runs a fixed seed for about a minute and a half.
// SNIPED_FAULT_MINUTES=30 keeps creating snipes for 30 minutes with a random
// seed; SNIPED_FAULT_SEED=N replays a seed. The seed is always logged.
func TestFaultStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("fault storm: runs the real binary for a minute and more")
	}
	t.Parallel()
	cfg := stormConfig(t)
	replay := fmt.Sprintf("SNIPED_FAULT_SEED=%d", cfg.seed)
	if v := os.Getenv("SNIPED_FAULT_MINUTES"); v != "" {
		replay += " SNIPED_FAULT_MINUTES=" + v
	}
	t.Logf("fault storm: seed %d, creating snipes for %v (replay: %s)", cfg.seed, cfg.span, replay)
	st := newStorm(t, cfg)
	st.run()
	st.check()
}

// stormCfg is the run's shape.
type stormCfg struct {
	seed int64
	// span is how long new waves of snipes are created; the run lasts
	// span plus the last wave's auctions plus settlement.
	span time.Duration
	// wave is the interval between waves and perWave their size.
	wave    time.Duration
	perWave int
}

// stormConfig reads the environment: the short CI run by default.
func stormConfig(t *testing.T) stormCfg {
	c := stormCfg{seed: 1, span: 25 * time.Second, wave: 10 * time.Second, perWave: 90}
	if v := os.Getenv("SNIPED_FAULT_MINUTES"); v != "" {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || m <= 0 || m > 24*60 {
			t.Fatalf("SNIPED_FAULT_MINUTES=%q: want minutes, above 0 and at most 1440", v)
		}
		c.span = time.Duration(m * float64(time.Minute))
		c.seed = time.Now().UnixNano()
	}
	if v := os.Getenv("SNIPED_FAULT_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("SNIPED_FAULT_SEED=%q: want an integer", v)
		}
		c.seed = n
	}
	return c
}

// Shapes of the storm. Auctions end 20–50 s after their wave, so the short
// run (three waves, 10 s apart) takes about 80 s; fault windows are on the
// marketplace clock.
const (
	endMin, endMax = 20 * time.Second, 50 * time.Second
	// settleWait bounds how long after its end a snipe may stay
	// provisional (invariant 4).
	settleWait = 60 * time.Second
	// jumpShadow: a snipe due this long after a marketplace clock step
	// may fire off time (the sniper re-measures its offset every 10 s while
	// shots are near): it is not held to timing, only to the truth.
	jumpShadow = 12 * time.Second
	// restartGrace: a restart's window lasts this long after the server is
	// ready again (recovery, the first offset measurement).
	restartGrace = 3 * time.Second
	// lateLimit is invariant 5's bound: an unblocked snipe's bid arrives
	// at most this long after its moment (and not before it by more than
	// earlyLimit: the offset estimate's error).
	lateLimit  = 2 * time.Second
	earlyLimit = 100 * time.Millisecond
	// ourUser is the admin account's marketplace user.
	ourUser = "admin"
)

// fsnipe is one snipe of the storm and what the test knows about it.
type fsnipe struct {
	item   string
	group  string
	bid    int64 // cents
	delay  int
	forced bool
	endMs  int64 // scheduled end, marketplace clock
	fireMs int64 // endMs − delay
	// settledBy is the outcome read settleWait after the end while the
	// storm still ran ("" when the run ended first).
	settledBy string
}

// faultEvent is a fault (or a restart) active over [from, to] on the marketplace
// clock; item is "" for a fault on every item.
type faultEvent struct {
	kind     string
	item     string
	from, to int64
	detail   string
	// stall is a slow fault's delay (ms), and stallsBids whether it
	// matches PlaceBid.
	stall      int64
	stallsBids bool
}

// storm is one run: the server (replaced at each restart), the snipes, and
// the log of injected faults.
type storm struct {
	t   *testing.T
	cfg stormCfg
	rng *rand.Rand // used by the main goroutine only
	key string

	// up is held for reading by every request and for writing across a
	// kill and restart, so nothing talks to a dead server.
	up   sync.RWMutex
	srv  *server
	data string

	mu       sync.Mutex
	skew     time.Duration
	events   []faultEvent
	snipes   []*fsnipe
	injected map[string]int
	dropped  int // scheduled rival actions that failed (server down)
	groupN   int

	client *http.Client
}

func newStorm(t *testing.T, cfg stormCfg) *storm {
	data := t.TempDir()
	st := &storm{t: t, cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.seed), 8)), data: data,
		injected: map[string]int{}, client: &http.Client{Timeout: 20 * time.Second}}
	st.srv = startServer(t, data)
	st.key = st.srv.Key()
	return st
}

// marketNow is the marketplace clock as the test knows it.
func (st *storm) marketNow() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return time.Now().Add(st.skew).UnixMilli()
}

// localAt converts a marketplace time to the local clock, at the current
// skew.
func (st *storm) localAt(ms int64) time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	return time.UnixMilli(ms).Add(-st.skew)
}

func (st *storm) logEvent(e faultEvent) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.events = append(st.events, e)
	st.injected[e.kind]++
}

// call does one GET on the current server without failing the test: the
// server may be down or the call slowed by a fault.
func (st *storm) call(path string, params url.Values) (int, map[string]any, error) {
	st.up.RLock()
	base := st.srv.URL
	defer st.up.RUnlock()
	u := base + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	resp, err := st.client.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("GET %s: not JSON: %q", path, b)
	}
	return resp.StatusCode, m, nil
}

// must calls until the answer is 200, retrying transient trouble (5xx, a
// restart) for up to a minute; a 4xx fails the test.
func (st *storm) must(path string, params url.Values) map[string]any {
	st.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, body, err := st.call(path, params)
		if err == nil && code == http.StatusOK {
			return body
		}
		if err == nil && code < 500 {
			st.t.Fatalf("GET %s %v = %d %v", path, params, code, body)
		}
		if time.Now().After(deadline) {
			st.t.Fatalf("GET %s %v: still failing after a minute: %d %v %v", path, params, code, body, err)
		}
		time.Sleep(200 * time.Millisecond) // a restart or an injected fault; retrying a real server
	}
}

// run creates the waves, injects faults and kills until the last auction
// ended, then clears the faults.
func (st *storm) run() {
	t := st.t
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); st.inject(stop, st.cfg.seed) }()

	start := time.Now()
	nextWave := start
	// A restart or a clock step blocks timing checks for a while, so the
	// first come once the first wave's shots are under way.
	nextKill := start.Add(time.Duration(20+st.rng.IntN(10)) * time.Second)
	nextStep := start.Add(time.Duration(45+st.rng.IntN(10)) * time.Second)
	var lastEnd int64
	for {
		now := time.Now()
		if now.Sub(start) < st.cfg.span || nextWave == start {
			if !now.Before(nextWave) {
				if e := st.createWave(); e > lastEnd {
					lastEnd = e
				}
				nextWave = nextWave.Add(st.cfg.wave)
			}
		} else if st.marketNow() > lastEnd+2000 {
			break
		}
		if !now.Before(nextStep) {
			st.step()
			nextStep = time.Now().Add(time.Duration(40+st.rng.IntN(20)) * time.Second)
		}
		st.checkSettled()
		if !now.Before(nextKill) {
			st.killAndRestart()
			nextKill = time.Now().Add(time.Duration(35+st.rng.IntN(15)) * time.Second)
		}
		time.Sleep(100 * time.Millisecond) // the storm's own pace
	}
	close(stop)
	wg.Wait()
	st.must("/sim/fail", url.Values{"kind": {"clear"}})
	t.Logf("storm over after %v: %d snipes, faults %v, %d scheduled rival actions dropped while down", time.Since(start).Round(time.Second), len(st.snipes), st.injected, st.dropped)
}

// checkSettled reads, during long runs, the outcome of every snipe whose
// end is settleWait past, for invariant 4.
func (st *storm) checkSettled() {
	now := st.marketNow()
	for _, sn := range st.snipes {
		if sn.settledBy == "" && sn.endMs+settleWait.Milliseconds() <= now {
			body := st.must("/checkSnipeStatus", url.Values{"key": {st.key}, "item_no": {sn.item}})
			res, _ := body["bidResult"].(map[string]any)
			sn.settledBy, _ = res["shorthand"].(string)
		}
	}
}

// killAndRestart SIGKILLs sniped and starts it again on the same data
// folder (the simulator with it), keeping the marketplace clock's skew.
func (st *storm) killAndRestart() {
	down := time.Duration(200+st.rng.IntN(2500)) * time.Millisecond
	st.up.Lock()
	from := st.marketNow()
	st.srv.Kill()
	time.Sleep(down) // the outage itself
	st.mu.Lock()
	skew := st.skew
	st.mu.Unlock()
	st.srv = startServer(st.t, st.data, "--sim-clock-skew", skew.String())
	to := st.marketNow()
	st.up.Unlock()
	st.logEvent(faultEvent{kind: "kill", from: from, to: to + restartGrace.Milliseconds(), detail: fmt.Sprintf("down %v", time.Duration(to-from)*time.Millisecond)})
}

// createWave lists items and snipes them: singles and Bid Groups, some with
// rivals before and after the shot, some ended early. It returns the
// latest end.
func (st *storm) createWave() int64 {
	r := st.rng
	var last int64
	n := 0
	for n < st.cfg.perWave {
		size := 1
		group := ""
		if r.IntN(4) == 0 {
			size = 2 + r.IntN(3)
			st.groupN++
			group = fmt.Sprintf("g%d", st.groupN)
		}
		endsIn := endMin + time.Duration(r.Int64N(int64(endMax-endMin)))
		for i := range size {
			sn := st.createSnipe(group, endsIn+time.Duration(i)*time.Duration(1500+r.IntN(6000))*time.Millisecond)
			last = max(last, sn.endMs)
			n++
		}
	}
	return last
}

// createSnipe lists one item ending endsIn from now, sets up its rivals and
// snipes it.
func (st *storm) createSnipe(group string, endsIn time.Duration) *fsnipe {
	r := st.rng
	start := int64(100 + r.IntN(1900)) // 1.00–19.99
	p := url.Values{"title": {"Storm item"}, "start_price": {cents(start)}, "ends_in": {fmt.Sprintf("%.3f", endsIn.Seconds())}}
	if r.IntN(5) == 0 {
		p.Set("reserve", cents(start*int64(2+r.IntN(3))))
	}
	bin := r.IntN(12) == 0
	if bin {
		p.Set("bin_price", cents(start*int64(6+r.IntN(4))))
	}
	body := st.must("/sim/createItem", p)
	item := body["item_no"].(string)
	sn := &fsnipe{item: item, group: group, delay: 1 + r.IntN(5), endMs: int64(body["end_ms"].(float64))}
	sn.fireMs = sn.endMs - int64(sn.delay)*1000

	// Rivals before the shot.
	for range r.IntN(3) {
		st.must("/sim/placeBid", url.Values{"item_no": {item}, "bidder": {fmt.Sprintf("rival_%d", r.IntN(5))}, "max": {cents(start * int64(100+r.IntN(300)) / 100)}})
	}
	info := st.must("/sim/item", url.Values{"item_no": {item}})
	minimum := int64(info["minimum_to_bid"].(float64)*100 + 0.5)
	sn.bid = minimum * int64(80+r.IntN(170)) / 100
	if sn.bid < minimum {
		sn.forced = true
	}
	if bp := info["bin_price"].(float64); info["bin_offered"] == true && sn.bid >= int64(bp*100) {
		sn.bid = int64(bp*100) - 1
	}
	q := url.Values{"key": {st.key}, "item_no": {item}, "bid": {cents(sn.bid)}, "delay": {strconv.Itoa(sn.delay)}}
	if sn.forced {
		q.Set("force", "1")
	}
	if group != "" {
		q.Set("groupName", group)
	}
	st.must("/addBid", q)
	st.mu.Lock()
	st.snipes = append(st.snipes, sn)
	st.mu.Unlock()

	// After the shot: a last-second rival, an early end, a Buy It Now.
	switch k := r.IntN(20); {
	case k < 4:
		at := sn.endMs - int64(200+r.IntN(int(sn.delay)*1000-150))
		st.later(at, "/sim/placeBid", url.Values{"item_no": {item}, "bidder": {"late_rival"}, "max": {cents(sn.bid * int64(70+r.IntN(80)) / 100)}})
	case k == 4:
		at := sn.endMs - int64(r.IntN(10_000))
		reason := []string{"cancel", "sell"}[r.IntN(2)]
		st.later(at, "/sim/endItem", url.Values{"item_no": {item}, "reason": {reason}})
	case k == 5 && bin:
		st.later(sn.endMs-int64(r.IntN(15_000)), "/sim/buyItNow", url.Values{"item_no": {item}, "bidder": {"bin_rival"}})
	}
	return sn
}

// later does a control call at marketplace time at; failures (the server
// restarting, an item already ended) are counted, not fatal.
func (st *storm) later(at int64, path string, p url.Values) {
	go func() {
		time.Sleep(time.Until(st.localAt(at))) // acting at a chosen moment, not a timing assertion
		if code, _, err := st.call(path, p); err != nil || code >= 500 {
			st.mu.Lock()
			st.dropped++
			st.mu.Unlock()
		}
	}()
}

// inject puts a random fault in place every 0.3–1.5 s until stop, mostly
// on an item whose shot is due within the next seconds, sometimes on every
// item for a shorter while. Each fault is switched off after its window;
// the window is logged.
func (st *storm) inject(stop <-chan struct{}, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 9))
	ops := []string{"", "placeBid", "bidState", "item", "now"}
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(300+r.IntN(1200)) * time.Millisecond):
		}
		now := st.marketNow()
		item := ""
		if r.IntN(10) < 7 {
			item = st.dueSoon(r, now)
		}
		win := int64(500 + r.IntN(4500))
		p := url.Values{}
		if item != "" {
			p.Set("item_no", item)
		}
		var kind string
		switch k := r.IntN(100); {
		case k < 25:
			kind = "lost-answer"
			p.Set("count", strconv.Itoa(1+r.IntN(3)))
		case k < 50:
			kind = "slow"
			p.Set("ms", strconv.Itoa(50+r.IntN(3000)))
			p.Set("count", strconv.Itoa(1+r.IntN(5)))
			if op := ops[r.IntN(len(ops))]; op != "" {
				p.Set("op", op)
			}
		case k < 75:
			kind = "unavailable"
			if op := ops[r.IntN(len(ops))]; op != "" {
				p.Set("op", op)
			}
			if item == "" {
				p.Set("count", strconv.Itoa(1+r.IntN(10)))
			}
		default:
			kind = "stale"
			p.Set("ms", strconv.Itoa(200+r.IntN(5000)))
		}
		if item == "" {
			if r.IntN(3) > 0 {
				continue // keep faults on every item rarer than targeted ones
			}
			win = int64(300 + r.IntN(1200))
		}
		p.Set("kind", kind)
		if code, _, err := st.call("/sim/fail", p); err != nil || code != http.StatusOK {
			continue // the item ended, or the server is restarting
		}
		e := faultEvent{kind: kind, item: item, from: now, to: now + win, detail: p.Encode()}
		if kind == "slow" {
			e.stall, _ = strconv.ParseInt(p.Get("ms"), 10, 64)
			e.stallsBids = p.Get("op") == "" || p.Get("op") == "placeBid"
		}
		st.logEvent(e)
		off := url.Values{"kind": {kind}, "off": {"1"}}
		if item != "" {
			off.Set("item_no", item)
		}
		go func() {
			time.Sleep(time.Duration(win) * time.Millisecond) // the fault's window
			st.call("/sim/fail", off)                         // may fail across a restart, which clears faults anyway
		}()
	}
}

// dueSoon picks a snipe whose shot is due within the next 4 s (or ends
// within 6 s), so that targeted faults hit the interesting moments.
func (st *storm) dueSoon(r *rand.Rand, now int64) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var cands []string
	for _, sn := range st.snipes {
		if sn.fireMs-now > -1000 && sn.fireMs-now < 4000 || sn.endMs-now > 0 && sn.endMs-now < 6000 {
			cands = append(cands, sn.item)
		}
	}
	if len(cands) == 0 {
		return ""
	}
	return cands[r.IntN(len(cands))]
}

// step moves the marketplace clock by ±0.2–3 s, keeping it within ±8 s.
func (st *storm) step() {
	r := st.rng
	now := st.marketNow()
	st.mu.Lock()
	old := st.skew
	st.mu.Unlock()
	d := time.Duration(200+r.IntN(2800)) * time.Millisecond
	if r.IntN(2) == 0 {
		d = -d
	}
	skew := old + d
	if skew > 8*time.Second || skew < -8*time.Second {
		skew = old - d
	}
	// Hold the server steady so that a restart keeps the new skew.
	st.up.RLock()
	defer st.up.RUnlock()
	u := st.srv.URL + "/sim/clock?skew=" + url.QueryEscape(skew.String())
	resp, err := st.client.Get(u)
	if err != nil {
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	st.mu.Lock()
	st.skew = skew
	st.mu.Unlock()
	lo, hi := now+min(0, d.Milliseconds()), now+max(0, d.Milliseconds())
	st.logEvent(faultEvent{kind: "clock", from: lo - 1000, to: hi + jumpShadow.Milliseconds(), detail: fmt.Sprintf("skew %v → %v", old, skew)})
}

// touching returns the faults active on sn's item within [from, to].
func (st *storm) touching(sn *fsnipe, from, to int64) []faultEvent {
	var out []faultEvent
	for _, e := range st.events {
		if (e.item == "" || e.item == sn.item) && e.from <= to && e.to >= from {
			out = append(out, e)
		}
	}
	return out
}

// sentInTime reports whether a bid that arrived at `at`, after the end, may
// have been sent before it and held up by a stall on PlaceBid: the
// marketplace, not sniped, was late.
func sentInTime(es []faultEvent, at, end int64) bool {
	for _, e := range es {
		if sent := at - e.stall; e.stallsBids && sent < end && sent >= e.from-100 && sent <= e.to+100 {
			return true
		}
	}
	return false
}

// blocked reports whether faults that can keep a shot from going out in
// time touched a snipe.
func blocked(fk map[string]bool) bool {
	return fk["kill"] || fk["clock"] || fk["slow"] || fk["unavailable"]
}

func kinds(es []faultEvent) map[string]bool {
	m := map[string]bool{}
	for _, e := range es {
		m[e.kind] = true
	}
	return m
}

// truth is what the simulator recorded about an item.
type truth struct {
	ours        []map[string]any // our bids in arrival order
	accepted    int
	winner      string
	highBidder  string
	endReason   string
	reserveMet  bool
	endMs       int64 // when it ended (early ends move it)
	minimum     int64
	currentCent int64
}

func (st *storm) truthOf(item string) truth {
	info := st.must("/sim/item", url.Values{"item_no": {item}})
	tr := truth{winner: info["winner"].(string), highBidder: info["high_bidder"].(string), endReason: info["end_reason"].(string),
		reserveMet: info["reserve_met"] == true, endMs: int64(info["end_ms"].(float64)),
		minimum: int64(info["minimum_to_bid"].(float64)*100 + 0.5), currentCent: int64(info["current_price"].(float64)*100 + 0.5)}
	for _, b := range info["bids"].([]any) {
		bm := b.(map[string]any)
		if bm["bidder"] == ourUser {
			tr.ours = append(tr.ours, bm)
			if bm["accepted"] == true {
				tr.accepted++
			}
		}
	}
	return tr
}

// expected is the outcome the truth demands of a snipe with our bid on the
// marketplace: the shorthands allowed.
func expectedWithBid(tr truth) []string {
	if tr.winner == ourUser {
		return []string{"won"}
	}
	if tr.accepted > 0 {
		switch tr.endReason {
		case "cancelled", "sold-early":
			return []string{"ended-early"}
		case "bin":
			return []string{"bin"}
		}
		if tr.highBidder == ourUser && !tr.reserveMet {
			return []string{"reserve"}
		}
		return []string{"outbid"}
	}
	// Refused: the last refusal's reason.
	switch tr.ours[len(tr.ours)-1]["reason"] {
	case "too-low":
		return []string{"too-low"}
	case "bid-incr":
		return []string{"bid-incr"}
	case "own-max":
		return []string{"own-max"}
	case "ended":
		return []string{"missed"}
	case "ended-early":
		return []string{"ended-early"}
	case "bin":
		return []string{"bin"}
	case "ineligible", "bin-price", "seller":
		return []string{"ineligible"}
	}
	return []string{fmt.Sprintf("(unexpected refusal %v)", tr.ours[len(tr.ours)-1]["reason"])}
}

// check waits for every outcome and holds it to the invariants.
func (st *storm) check() {
	t := st.t
	// Invariant 4: nothing provisional settleWait after its end.
	outcomes := map[string]map[string]any{}
	pending := slices.Clone(st.snipes)
	for len(pending) > 0 {
		now := st.marketNow()
		for _, sn := range pending {
			body := st.must("/checkSnipeStatus", url.Values{"key": {st.key}, "item_no": {sn.item}})
			res, _ := body["bidResult"].(map[string]any)
			outcomes[sn.item] = res
		}
		// Provisional: pending, placed, or group-lead while a sibling is
		// still undecided (it may yet become group-won or fire).
		open := func(sn *fsnipe) bool {
			sh, _ := outcomes[sn.item]["shorthand"].(string)
			return sh == "pending" || sh == "placed"
		}
		var still []*fsnipe
		for _, sn := range pending {
			waiting := open(sn)
			if sh, _ := outcomes[sn.item]["shorthand"].(string); sh == "group-lead" {
				for _, o := range st.snipes {
					waiting = waiting || (o.group == sn.group && o != sn && open(o))
				}
			}
			if waiting && now < sn.endMs+settleWait.Milliseconds() {
				still = append(still, sn)
			}
		}
		pending = still
		if len(pending) > 0 {
			time.Sleep(time.Second) // polling a real server for settlement
		}
	}

	var violations []string
	violate := func(sn *fsnipe, format string, args ...any) {
		msg := fmt.Sprintf("item %s (bid %s, delay %d, group %q, fire %d, end %d): ", sn.item, cents(sn.bid), sn.delay, sn.group, sn.fireMs, sn.endMs) + fmt.Sprintf(format, args...)
		fs := st.touching(sn, sn.fireMs-10_000, sn.endMs+2000)
		if len(fs) > 0 {
			var d []string
			for _, e := range fs {
				d = append(d, fmt.Sprintf("%s[%s %+d..%+dms of fire]", e.kind, e.detail, e.from-sn.fireMs, e.to-sn.fireMs))
			}
			msg += "; faults: " + strings.Join(d, ", ")
		}
		violations = append(violations, msg)
	}

	truths := map[string]truth{}
	groups := map[string][]*fsnipe{}
	for _, sn := range st.snipes {
		truths[sn.item] = st.truthOf(sn.item)
		if sn.group != "" {
			groups[sn.group] = append(groups[sn.group], sn)
		}
	}
	tally := map[string]int{}
	var lateness []time.Duration
	unblocked := 0
	excluded := map[string]int{}
	for _, sn := range st.snipes {
		tr := truths[sn.item]
		res := outcomes[sn.item]
		sh, _ := res["shorthand"].(string)
		tally[sh]++
		window := st.touching(sn, sn.fireMs-5000, sn.endMs)
		fk := kinds(window)
		blocked := blocked(fk)

		// Invariant 1: at most one accepted bid, none after the end.
		if tr.accepted > 1 {
			violate(sn, "%d of our bids accepted, want at most 1", tr.accepted)
		}
		for _, b := range tr.ours {
			if at := int64(b["time_ms"].(float64)); at >= sn.endMs && !fk["clock"] && !sentInTime(window, at, sn.endMs) {
				violate(sn, "our bid arrived %d ms after the end (%v), and no clock step or stall explains it", at-sn.endMs, b["reason"])
			}
		}
		// Invariant 2: the outcome is the truth.
		if (sh == "won") != (tr.winner == ourUser) {
			violate(sn, "outcome %q (%v) but the marketplace's winner is %q", sh, res["message"], tr.winner)
		}
		var allowed []string
		if len(tr.ours) > 0 {
			allowed = expectedWithBid(tr)
		} else {
			allowed = st.allowedWithoutBid(sn, tr, fk, groups[sn.group], truths)
		}
		if !slices.Contains(allowed, sh) {
			violate(sn, "outcome %q (%v), want one of %v (our bids %v, winner %q, end %q)", sh, res["message"], allowed, tr.ours, tr.winner, tr.endReason)
		}
		if sh == "pending" || sh == "placed" {
			violate(sn, "still %q %v after its end", sh, settleWait)
		} else if sn.settledBy == "pending" || sn.settledBy == "placed" {
			violate(sn, "was still %q %v after its end (now %q)", sn.settledBy, settleWait, sh)
		}

		// Invariant 5: an unblocked snipe that was meant to fire fired on
		// time. Unblocked: no fault, restart or clock step (whose windows
		// carry their aftermath) around its moment.
		if around := kinds(st.touching(sn, sn.fireMs-3000, sn.fireMs+lateLimit.Milliseconds())); len(around) > 0 {
			if around["kill"] || around["clock"] {
				excluded["restart or clock step"]++
			} else {
				excluded["fault around the moment"]++
			}
			continue
		}
		// A group item may wait, by design, for a sibling ending around
		// its moment to be decided.
		gated := false
		for _, o := range groups[sn.group] {
			gated = gated || (o != sn && truths[o.item].endMs >= sn.fireMs-3000 && truths[o.item].endMs <= sn.endMs)
		}
		if gated {
			excluded["group sibling deciding"]++
			continue
		}
		if len(tr.ours) == 0 {
			if !blocked && (sh == "missed" || sh == "market-down") {
				violate(sn, "no fault touched it, yet no bid was sent (%q: %v)", sh, res["message"])
			}
			continue
		}
		unblocked++
		late := time.Duration(int64(tr.ours[0]["time_ms"].(float64))-sn.fireMs) * time.Millisecond
		lateness = append(lateness, late)
		if late > lateLimit || late < -earlyLimit {
			violate(sn, "fired %v after its moment, want within [-%v, %v]", late, earlyLimit, lateLimit)
		}
	}
	// Invariant 3: no group wins twice.
	for g, sns := range groups {
		won := 0
		for _, sn := range sns {
			if truths[sn.item].winner == ourUser {
				won++
			}
		}
		if won > 1 {
			var d []string
			for _, sn := range sns {
				tr := truths[sn.item]
				var bids []string
				for _, b := range tr.ours {
					bids = append(bids, fmt.Sprintf("%v at %+dms of fire (%v)", b["max"], int64(b["time_ms"].(float64))-sn.fireMs, b["reason"]))
				}
				var fs []string
				for _, e := range st.touching(sn, sn.fireMs-10_000, sn.endMs+2000) {
					fs = append(fs, fmt.Sprintf("%s[%s %+d..%+dms]", e.kind, e.detail, e.from-sn.fireMs, e.to-sn.fireMs))
				}
				d = append(d, fmt.Sprintf("{item %s fire %d end %d winner %q outcome %q (%v) bids %v faults %v}", sn.item, sn.fireMs, tr.endMs, tr.winner, outcomes[sn.item]["shorthand"], outcomes[sn.item]["message"], bids, fs))
			}
			violate(sns[0], "group %s won %d items on the marketplace, want at most 1: %s", g, won, strings.Join(d, "; "))
		}
	}

	sort.Slice(lateness, func(i, j int) bool { return lateness[i] < lateness[j] })
	pct := func(p float64) time.Duration {
		if len(lateness) == 0 {
			return 0
		}
		return lateness[min(len(lateness)-1, int(p*float64(len(lateness))))]
	}
	grouped := 0
	for _, g := range groups {
		grouped += len(g)
	}
	t.Logf("seed %d: %d snipes (%d of them in %d Bid Groups); outcomes %v; faults injected %v", st.cfg.seed, len(st.snipes), grouped, len(groups), tally, st.injected)
	t.Logf("lateness of %d unblocked snipes that fired: p50 %v, p99 %v, max %v (not timed: %v)", unblocked, pct(0.5), pct(0.99), pct(1), excluded)
	t.Logf("violations: %d", len(violations))
	for _, v := range violations {
		t.Errorf("seed %d: %s", st.cfg.seed, v)
	}
}

// allowedWithoutBid lists the outcomes a snipe with no bid of ours on the
// marketplace may honestly have.
func (st *storm) allowedWithoutBid(sn *fsnipe, tr truth, fk map[string]bool, group []*fsnipe, truths map[string]truth) []string {
	var ok []string
	if blocked(fk) {
		ok = append(ok, "missed", "market-down")
	}
	// Ended early before the shot (the end time moved to the early end),
	// or while a fault kept the shot from going out.
	if tr.endMs <= sn.fireMs+1000 || blocked(fk) {
		switch tr.endReason {
		case "cancelled", "sold-early":
			ok = append(ok, "ended-early")
		case "bin":
			ok = append(ok, "bin")
		}
	}
	// Pre-flight: the price had passed the bid (prices only rise). A
	// forced snipe skips pre-flight, but when a fault kept its bid from
	// going out (or its answer from coming back), sniped infers the
	// refusal from the price at its moment.
	if (!sn.forced || len(fk) > 0) && (tr.minimum > sn.bid || tr.currentCent > sn.bid) {
		ok = append(ok, "too-low", "bid-incr")
	}
	for _, o := range group {
		if o == sn {
			continue
		}
		ot := truths[o.item]
		if ot.winner == ourUser {
			ok = append(ok, "group-won")
		}
		// A sibling that held a bid of ours (or may have, under a fault)
		// holds this one back while it runs, or while a fault keeps its
		// end from being known (uncertainty counts as leading).
		maybe := ot.accepted > 0 || len(st.touching(o, o.fireMs-5000, o.endMs+settleWait.Milliseconds())) > 0
		unknown := len(st.touching(o, sn.fireMs-5000, sn.endMs)) > 0
		if maybe && (ot.endMs >= sn.fireMs-1000 || unknown) {
			ok = append(ok, "group-lead")
		}
	}
	return ok
}

// cents renders an amount in cents as the interface's decimal.
func cents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }
