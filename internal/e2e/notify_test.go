package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/notify"
)

// notifyFlags shorten the notification intervals so the scenarios take
// seconds.
var notifyFlags = []string{"--search-every", "2s", "--notify-first-retry", "300ms", "--notify-warn-every", "300ms"}

// deliveryTimeout bounds waiting for one notification.
const deliveryTimeout = 60 * time.Second

// hit is one request a receiver got.
type hit struct {
	path string
	sig  string
	body []byte
	env  notify.Envelope
}

// receiver is a local notification endpoint. Paths listed in fail answer
// 500 that many times before they accept.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []hit
	fail map[string]int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{fail: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h := hit{path: req.URL.Path, sig: req.Header.Get(notify.SignatureHeader), body: body}
		json.Unmarshal(body, &h.env) // generic (shoutrrr) bodies are plain text
		r.mu.Lock()
		r.hits = append(r.hits, h)
		fail := r.fail[req.URL.Path]
		if fail > 0 {
			r.fail[req.URL.Path] = fail - 1
		}
		r.mu.Unlock()
		if fail != 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) setFail(path string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[path] = n
}

// matching returns the hits on path that satisfy ok.
func (r *receiver) matching(path string, ok func(hit) bool) []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hit
	for _, h := range r.hits {
		if h.path == path && ok(h) {
			out = append(out, h)
		}
	}
	return out
}

// await polls until at least n hits on path satisfy ok.
func (r *receiver) await(t *testing.T, what, path string, n int, ok func(hit) bool) []hit {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for {
		if got := r.matching(path, ok); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d deliveries to %s within %v", what, n, path, deliveryTimeout)
		}
		time.Sleep(100 * time.Millisecond) // polling a real server; no timing assertion rides on it
	}
}

// event matches webhook hits of type typ about item.
func event(typ, item string) func(hit) bool {
	return func(h hit) bool {
		if string(h.env.Type) != typ {
			return false
		}
		var d struct {
			ItemNo string `json:"item_no"`
			Items  []struct {
				ItemNo string `json:"item_no"`
			} `json:"items"`
		}
		json.Unmarshal(h.env.Data, &d)
		if d.ItemNo == item {
			return true
		}
		for _, it := range d.Items {
			if it.ItemNo == item {
				return true
			}
		}
		return false
	}
}

// addNotifier adds a target for the admin account and returns its secret.
func (s *server) addNotifier(t *testing.T, target, events string) string {
	t.Helper()
	p := url.Values{"key": {s.Key()}, "url": {target}}
	if events != "" {
		p.Set("events", events)
	}
	status, body := s.Get("/addNotifier", p)
	if status != http.StatusOK {
		t.Fatalf("addNotifier %s = %d %v", target, status, body)
	}
	secret, _ := body["secret"].(string)
	return secret
}

// verify checks a webhook hit's signature with secret.
func verify(t *testing.T, h hit, secret string) {
	t.Helper()
	ts, _, _ := strings.Cut(strings.TrimPrefix(h.sig, "t="), ",")
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		t.Fatalf("signature %q has no t=<unix seconds>", h.sig)
	}
	if want := notify.Sign(secret, time.Unix(unix, 0), h.body); h.sig != want {
		t.Errorf("signature = %q, want %q", h.sig, want)
	}
}

// TestNotifications plays issue 11's "done means" against the real
// binary: signed snipe.won, snipe.warning before the shot, search.match
// once for a newly listed item, a 500 answered by a retry with the same
// event id, and a shoutrrr (generic webhook) target.
func TestNotifications(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	s := startServer(t, t.TempDir(), notifyFlags...)
	secret := s.addNotifier(t, rc.srv.URL+"/hook", "")
	flaky := s.addNotifier(t, rc.srv.URL+"/flaky", "snipe.won")
	rc.setFail("/flaky", 2)
	s.addNotifier(t, strings.Replace(rc.srv.URL, "http://", "generic://", 1)+"/generic?disabletls=yes", "snipe.won")

	t.Run("won, signed; retried after 500 with the same id; shoutrrr", func(t *testing.T) {
		t.Parallel()
		item, _ := s.createItem(t, "Notify lens", "10", "6")
		s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
		won := rc.await(t, "snipe.won", "/hook", 1, event("snipe.won", item))
		verify(t, won[0], secret)
		var d map[string]any
		json.Unmarshal(won[0].env.Data, &d)
		if d["status"] != "Won" || d["outcome"] != 1.0 || d["title"] != "Notify lens" {
			t.Errorf("snipe.won data = %v", d)
		}
		if placed := rc.matching("/hook", event("snipe.placed", item)); len(placed) != 1 {
			t.Errorf("snipe.placed deliveries = %d, want 1", len(placed))
		}
		tries := rc.await(t, "retried snipe.won", "/flaky", 3, event("snipe.won", item))
		for _, h := range tries {
			verify(t, h, flaky)
			if h.env.ID != tries[0].env.ID {
				t.Errorf("retry carries event id %d, first try %d: want the same", h.env.ID, tries[0].env.ID)
			}
		}
		time.Sleep(time.Second) // a delivered event must not come again; give a retry time to show
		if n := len(rc.matching("/flaky", event("snipe.won", item))); n != 3 {
			t.Errorf("deliveries to the flaky target = %d, want 3 (two 500s, then accepted)", n)
		}
		gen := rc.await(t, "shoutrrr generic", "/generic", 1, func(h hit) bool { return strings.Contains(string(h.body), "Notify lens") })
		if !strings.Contains(string(gen[0].body), "Won") {
			t.Errorf("generic body = %q, want the human message", gen[0].body)
		}
	})
	t.Run("warning when a rival passes the maximum before the shot", func(t *testing.T) {
		t.Parallel()
		item, end := s.createItem(t, "Warned lens", "10", "12")
		s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
		s.rival(t, item, "rival_a", "40")
		s.rival(t, item, "rival_b", "30") // price 30.50: past our 20.00
		w := rc.await(t, "snipe.warning", "/hook", 1, event("snipe.warning", item))
		var d map[string]any
		json.Unmarshal(w[0].env.Data, &d)
		if d["bid"] != 20.0 || d["current_price"].(float64) < 20 {
			t.Errorf("warning data = %v", d)
		}
		if at := w[0].env.CreatedAt; at >= time.UnixMilli(end-2000).UTC().Format("2006-01-02 15:04:05") {
			t.Errorf("warning created at %s, want before the shot (end %s minus 2 s)", at, time.UnixMilli(end).UTC())
		}
		verify(t, w[0], secret)
	})
	t.Run("search.match once for an item listed after saving", func(t *testing.T) {
		t.Parallel()
		_, body := s.Get("/addSearch", url.Values{"key": {s.Key()}, "query": {"Frobnitz"}})
		id := body["id"].(float64)
		runs := func() string {
			_, body := s.Get("/getUserSearches", url.Values{"key": {s.Key()}})
			for _, e := range body["searches"].([]any) {
				if m := e.(map[string]any); m["id"] == id {
					return m["last_run"].(string)
				}
			}
			return ""
		}
		waitRun := func(after string) string {
			t.Helper()
			deadline := time.Now().Add(deliveryTimeout)
			for {
				if r := runs(); r != "" && r != after {
					return r
				}
				if time.Now().After(deadline) {
					t.Fatalf("saved search did not run within %v", deliveryTimeout)
				}
				time.Sleep(100 * time.Millisecond) // polling a real server
			}
		}
		first := waitRun("")
		item, _ := s.createItem(t, "Frobnitz 3000", "10", "600")
		rc.await(t, "search.match", "/hook", 1, event("search.match", item))
		time.Sleep(1100 * time.Millisecond) // last_run has one-second resolution
		second := waitRun(first)
		time.Sleep(1100 * time.Millisecond)
		waitRun(second)
		if n := len(rc.matching("/hook", event("search.match", item))); n != 1 {
			t.Errorf("search.match deliveries naming item %s = %d, want 1", item, n)
		}
	})
}

// TestNotificationSurvivesKill: the outcome is stored with its event; the
// server dies (SIGKILL) before the target accepts it; the restarted server
// delivers the same event.
func TestNotificationSurvivesKill(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	rc.setFail("/hook", 1_000_000)
	data := t.TempDir()
	s := startServer(t, data, notifyFlags...)
	key := s.Key()
	s.addNotifier(t, rc.srv.URL+"/hook", "snipe.won")
	item, _ := s.createItem(t, "Crash lens", "10", "5")
	s.addBid(t, url.Values{"item_no": {item}, "bid": {"20"}, "delay": {"2"}})
	before := rc.await(t, "snipe.won refused", "/hook", 1, event("snipe.won", item))
	s.Kill()
	rc.setFail("/hook", 0)
	n := len(rc.matching("/hook", event("snipe.won", item)))

	s2 := startServer(t, data, notifyFlags...)
	s2.AdminKey = key
	after := rc.await(t, "snipe.won after restart", "/hook", n+1, event("snipe.won", item))
	if got := after[len(after)-1].env.ID; got != before[0].env.ID {
		t.Errorf("event id after restart = %d, want %d", got, before[0].env.ID)
	}
}

// TestFirstHour: the root opens the dashboard, and the first-start banner
// prints account commands that work as printed, including the key
// recovery one.
func TestFirstHour(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / = %d Location %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	var add, rotate string
	for _, line := range strings.Split(s.Log(), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.Contains(line, " account add ") && strings.HasSuffix(line, "--name NAME"):
			add = strings.TrimSuffix(line, "NAME") + "carol"
		case strings.Contains(line, " account rotate-key ") && strings.HasSuffix(line, "--name admin"):
			rotate = line
		}
	}
	if add == "" || rotate == "" {
		t.Fatalf("banner lacks the account add / rotate-key commands:\n%s", s.Log())
	}
	for _, cmdline := range []string{add, rotate} {
		out, err := exec.Command("sh", "-c", cmdline).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "snp_") {
			t.Errorf("%s: %v\n%s", cmdline, err, out)
		}
	}
}
