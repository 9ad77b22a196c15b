package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/chaoscheck"
	"github.com/sniped/sniped/internal/store/postgres/pgtest"
)

// TestChaosProcesses is issue 10's proof with real processes: one
// `sniped market serve`, real PostgreSQL, and three `sniped serve
// --database-url … --market ebay` instances, all with the sniper on. It
// creates snipes (a quarter in Bid Groups, some against rivals) through
// random instances, and meanwhile, at random, kill -9s an instance and
// restarts it, stops one with SIGTERM and restarts it, and SIGSTOPs one past
// its lease before SIGCONTing it. Against the market's ground truth
// (chaoscheck.Check):
//
//  1. at most one bid of ours per snipe;
//  2. no group wins more than one item;
//  3. every outcome equals the truth (Won exactly when the market says so);
//  4. nothing is Pending 60 s after its end;
//  5. snipes due more than 15 s after any fault are sent on time (arriving
//     at most 500 ms late or earlyArrival early), including snipes added
//     9 s before their moment through an instance that does not hold them.
//
// SNIPED_CHAOS_SEED picks the seed (printed), SNIPED_CHAOS_PROCESS_SPAN how
// long snipes keep falling due (default 90s; e.g. 30m locally).
// SNIPED_CHAOS_PG_RESTART, when set, is a shell command that restarts
// PostgreSQL (e.g. "pg_ctlcluster 15 main restart"), run once mid-way: it
// is off by default because it interrupts every other user of the server.
func TestChaosProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test with real processes takes minutes; not in -short")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	seed := uint64(20261123)
	if v := os.Getenv("SNIPED_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SNIPED_CHAOS_SEED=%q: %v", v, err)
		}
		seed = n
	}
	span := 90 * time.Second
	if v := os.Getenv("SNIPED_CHAOS_PROCESS_SPAN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			t.Fatalf("SNIPED_CHAOS_PROCESS_SPAN=%q: want a duration of at least 30s", v)
		}
		span = d
	}
	t.Logf("chaos seed %d, snipes due over %v (SNIPED_CHAOS_SEED=%d to repeat)", seed, span, seed)
	r := mrand.New(mrand.NewPCG(seed, 11))
	dir := t.TempDir()

	mk := startMarket(t, filepath.Join(dir, "market"), "--sim-bidders", "off")
	secretFile := filepath.Join(dir, "client-secret")
	keyFile := filepath.Join(dir, "secret.key")
	key := make([]byte, 32)
	rand.Read(key)
	for f, b := range map[string]string{secretFile: simClientSecret + "\n", keyFile: base64.StdEncoding.EncodeToString(key) + "\n"} {
		if err := os.WriteFile(f, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Accounts, each linked to its market user by the operator.
	type account struct{ name, user, key string }
	var accts []account
	for i := range 8 {
		a := account{name: fmt.Sprintf("u%d", i), user: fmt.Sprintf("u%d_ebay", i)}
		out, errOut, code := runCLI(t, "account", "add", "--database-url", dsn, "--name", a.name)
		if code != 0 {
			t.Fatalf("account add %s = %d: %s", a.name, code, errOut)
		}
		a.key = strings.TrimSpace(out)
		status, body := mk.simApp(t, "/sim/token", url.Values{"user": {a.user}})
		var tok struct {
			RefreshToken string `json:"refresh_token"`
			ExpiresAt    string `json:"expires_at"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &tok) != nil {
			t.Fatalf("/sim/token %s = %d %s", a.user, status, body)
		}
		tokenFile := filepath.Join(dir, a.name+".token")
		if err := os.WriteFile(tokenFile, []byte(tok.RefreshToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runCLI(t, "account", "link", "--database-url", dsn, "--secret-key-file", keyFile, "--name", a.name,
			"--refresh-token-file", tokenFile, "--market-user", a.user, "--token-expires", tok.ExpiresAt, "--ebay-api-url", mk.URL); code != 0 {
			t.Fatalf("account link %s = %d: %s", a.name, code, errOut)
		}
		accts = append(accts, a)
	}

	var mu sync.Mutex
	live := map[int]*server{}
	var all []*server // every instance started, for the logs of a failure
	next := 0
	start := func() {
		s := startServer(t, t.TempDir(), "--database-url", dsn, "--market", "ebay", "--ebay-api-url", mk.URL, "--ebay-auth-url", mk.URL,
			"--ebay-client-id", simClientID, "--ebay-client-secret-file", secretFile, "--secret-key-file", keyFile, "--ebay-runame", e2eRuName)
		mu.Lock()
		live[next] = s
		all = append(all, s)
		next++
		mu.Unlock()
	}
	anyLive := func() *server {
		mu.Lock()
		defer mu.Unlock()
		ids := make([]int, 0, len(live))
		for id := range live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return live[ids[mrand.IntN(len(ids))]]
	}
	for range 3 {
		start()
	}
	for _, s := range live {
		waitHealth(t, s, "sniper: firing")
	}

	// Snipes, about 40 a minute, due from 40 s on.
	type snipe struct {
		acct  account
		item  string
		endMs int64
		delay int
		group string
	}
	var snipes []snipe
	for range max(20, int(span.Minutes()*40)) {
		sn := snipe{acct: accts[r.IntN(len(accts))], delay: 2 + r.IntN(9)}
		endsIn := 40*time.Second + time.Duration(r.Int64N(int64(span)))
		sn.item, sn.endMs = mk.createItem(t, "Chaos item", "10", strconv.Itoa(int(endsIn.Seconds())))
		q := url.Values{"key": {sn.acct.key}, "item_no": {sn.item}, "bid": {strconv.Itoa(20 + r.IntN(30))}, "delay": {strconv.Itoa(sn.delay)}}
		if r.IntN(4) == 0 {
			sn.group = fmt.Sprintf("g%d", r.IntN(2))
			q.Set("groupName", sn.group)
		}
		if status, body := anyLive().Get("/addBid", q); status != http.StatusOK {
			t.Fatalf("addBid = %d %v", status, body)
		}
		if r.IntN(3) == 0 {
			rivalMax, before := strconv.Itoa(15+r.IntN(40)), time.Duration(r.IntN(20_000))*time.Millisecond
			go func() {
				time.Sleep(time.Until(time.UnixMilli(sn.endMs).Add(-before)))
				// Not mk.Get: it may fail the test, and this is not the test's goroutine.
				if resp, err := http.Get(mk.URL + "/sim/placeBid?" + url.Values{"item_no": {sn.item}, "bidder": {"rival"}, "max": {rivalMax}}.Encode()); err == nil {
					resp.Body.Close()
				}
			}()
		}
		snipes = append(snipes, sn)
	}

	// Last-minute snipes, through random instances (most of which do not
	// hold the account's partition): due 9 s after creation, they fire on
	// time only if the holder hears of them at once (NOTIFY), not at its
	// next horizon refresh.
	for range 6 {
		sn := snipe{acct: accts[r.IntN(len(accts))], delay: 5}
		sn.item, sn.endMs = mk.createItem(t, "Chaos last-minute item", "10", "14")
		q := url.Values{"key": {sn.acct.key}, "item_no": {sn.item}, "bid": {"25"}, "delay": {"5"}}
		if status, body := anyLive().Get("/addBid", q); status != http.StatusOK {
			t.Fatalf("addBid = %d %v", status, body)
		}
		snipes = append(snipes, sn)
	}

	// Faults until the last snipe is due.
	var faults []time.Time
	last := int64(0)
	for _, sn := range snipes {
		last = max(last, sn.endMs)
	}
	pgRestart := os.Getenv("SNIPED_CHAOS_PG_RESTART")
	// Each kind of fault comes once, in random order, before any repeats.
	kinds := r.Perm(3)
	if pgRestart != "" {
		kinds = append(kinds, 3)
	}
	for n := 0; time.Now().Before(time.UnixMilli(last).Add(-10 * time.Second)); n++ {
		time.Sleep(20*time.Second + time.Duration(r.IntN(15_000))*time.Millisecond) // the chaos schedule, not a timing assertion
		mu.Lock()
		ids := make([]int, 0, len(live))
		for id := range live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		id := ids[r.IntN(len(ids))]
		victim := live[id]
		mu.Unlock()
		faults = append(faults, time.Now())
		t.Logf("fault at %s", time.Now().UTC().Format("15:04:05.000"))
		k := r.IntN(4)
		if n < len(kinds) {
			k = kinds[n]
		}
		switch {
		case k == 0:
			t.Logf("fault: kill -9 instance %d, restart", id)
			victim.Kill()
			mu.Lock()
			delete(live, id)
			mu.Unlock()
			time.Sleep(time.Duration(3+r.IntN(6)) * time.Second)
			start()
		case k == 1:
			t.Logf("fault: SIGTERM instance %d, restart", id)
			victim.Stop()
			mu.Lock()
			delete(live, id)
			mu.Unlock()
			start()
		case k == 2 || pgRestart == "":
			t.Logf("fault: SIGSTOP instance %d past its lease, then SIGCONT", id)
			victim.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(time.Duration(8+r.IntN(6)) * time.Second)
			victim.cmd.Process.Signal(syscall.SIGCONT)
		default:
			t.Logf("fault: restart PostgreSQL (%s)", pgRestart)
			if out, err := exec.Command("sh", "-c", pgRestart).CombinedOutput(); err != nil {
				t.Errorf("restart PostgreSQL: %v: %s", err, out)
			}
			pgRestart = ""
		}
		faults = append(faults, time.Now())
	}
	time.Sleep(time.Until(time.UnixMilli(last).Add(60 * time.Second)))

	// The checks, against the market's records.
	var recs []chaoscheck.Snipe
	for _, sn := range snipes {
		_, info := mk.Get("/sim/item", url.Values{"item_no": {sn.item}})
		_, body := anyLive().Get("/checkSnipeStatus", url.Values{"key": {sn.acct.key}, "item_no": {sn.item}})
		res, _ := body["bidResult"].(map[string]any)
		code, _ := res["success"].(float64)
		rec := chaoscheck.Snipe{
			Who: sn.acct.name, Item: sn.item, Group: sn.group, Due: time.UnixMilli(sn.endMs - int64(sn.delay)*1000),
			MarketWon: info["winner"] == sn.acct.user,
			StoredWon: code == 1,
			Settled:   code != 0 && code != 2 && code != -15,
			Describe:  fmt.Sprintf("outcome %v, market winner %v", res, info["winner"]),
		}
		for _, b := range info["bids"].([]any) {
			if bm := b.(map[string]any); bm["bidder"] == sn.acct.user {
				rec.Bids = append(rec.Bids, time.UnixMilli(int64(bm["time_ms"].(float64))))
			}
		}
		recs = append(recs, rec)
	}
	st := chaoscheck.Check(t, chaoscheck.Params{Faults: faults, Quiet: 15 * time.Second, Early: earlyArrival, Late: 500 * time.Millisecond}, recs)
	if t.Failed() {
		// How the partitions moved, and what went wrong, per instance.
		for i, s := range all {
			for _, line := range strings.Split(s.Log(), "\n") {
				if strings.Contains(line, "component=lease") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
					t.Logf("instance %d: %s", i, line)
				}
			}
		}
	}
	t.Logf("%d snipes, %d faults, %d instances started; %d bids, lateness min %v p50 %v p99 %v max %v; %d checked on time",
		len(snipes), len(faults)/2, next, st.Sent, st.Min, st.P50, st.P99, st.Max, st.Checked)
}

// earlyArrival is how early a bid may reach the market and still count as
// on time. The sniper sends a bid one estimated one-way time (SendLead, half
// the smoothed round trip of recent calls) before its moment, so that it
// arrives at the moment; on a loaded machine the estimate runs a few
// milliseconds long and the bid arrives that much early (seen: up to 20 ms with a
// load average of 7–19). Arriving early is what firing early would look like
// too, so the slack stays small.
const earlyArrival = 50 * time.Millisecond
