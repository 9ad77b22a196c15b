package notify

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// TestDeliveryUnderRandomFailures: a receiver that fails at random gets
// every event at least once, never again after accepting it, always with
// the same id, and a failing attempt is followed by one no sooner than the
// backoff. SNIPED_FAULT_SEED replays a run.
func TestDeliveryUnderRandomFailures(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SNIPED_FAULT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (SNIPED_FAULT_SEED=%d replays it)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	failRate := 0.2 + 0.3*rnd.Float64() // ≤ 0.5: 23 failures in a row is a 1e-7 chance

	b := setup(t)
	var (
		mu       sync.Mutex
		accepted = map[int64]int{}
		attempts = map[int64]int{}
		after    = map[int64]int{} // requests after acceptance
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env Envelope
		json.NewDecoder(r.Body).Decode(&env)
		mu.Lock()
		defer mu.Unlock()
		attempts[env.ID]++
		if accepted[env.ID] > 0 {
			after[env.ID]++
		}
		if rnd.Float64() < failRate {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		accepted[env.ID]++
	}))
	t.Cleanup(srv.Close)
	if _, err := b.svc.AddNotifier(b.ctx, b.acct.ID, srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	const events = 40
	ids := map[int64]bool{}
	for range events {
		ids[b.emit(t, store.EventSnipeWon).ID] = true
	}
	// Passes with the clock moved on by the longest backoff, so every
	// pending delivery is due at each pass; 23 of them stay inside the
	// 24-hour retry window, so nothing is given up. (The workers run
	// concurrently, so a seed replays the failure rate and draws, not the
	// exact order.)
	for hour := 0; hour < 23; hour++ {
		for range 8 { // a target uses at most Workers-1 workers per pass
			b.deliver()
		}
		b.clk.Advance(DefaultMaxRetry)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range ids {
		if accepted[id] != 1 {
			t.Errorf("event %d accepted %d times, want 1 (fail rate %.2f)", id, accepted[id], failRate)
		}
		if after[id] != 0 {
			t.Errorf("event %d sent %d times after it was accepted", id, after[id])
		}
	}
	for id := range attempts {
		if !ids[id] {
			t.Errorf("receiver got unknown event id %d", id)
		}
	}
	if due, _ := b.st.DueDeliveries(b.ctx, b.clk.Now().Add(48*time.Hour), 0, 0); len(due) != 0 {
		t.Errorf("%d deliveries still pending after every event was accepted", len(due))
	}
}

// FuzzParseTarget: any input either fails with a message or yields a
// target whose masked form never shows the user info, path beyond its
// first segment or query, and whose kind matches the scheme.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"https://example.com/a/b?c=d", "http://u:p@h/x", "ntfy://ntfy.sh/t", "generic://10.0.0.1/x", "", "::", "https://[::1]:80/"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool) {
		got, err := ParseTarget(raw, allowPrivate)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseTarget(%q): empty error", raw)
			}
			return
		}
		if got.URL != raw || got.Masked == "" {
			t.Fatalf("ParseTarget(%q) = %+v", raw, got)
		}
		if (got.Kind == store.KindWebhook) != (strings.HasPrefix(got.Masked, "http://") || strings.HasPrefix(got.Masked, "https://")) {
			t.Fatalf("ParseTarget(%q) kind %s for masked %q", raw, got.Kind, got.Masked)
		}
		u, _ := url.Parse(raw)
		if u.User != nil && !strings.Contains(got.Masked, "://***@") {
			t.Fatalf("ParseTarget(%q) masked %q shows the user info", raw, got.Masked)
		}
		if u.RawQuery != "" && !strings.HasSuffix(got.Masked, "?***") {
			t.Fatalf("ParseTarget(%q) masked %q shows the query", raw, got.Masked)
		}
		if strings.Count(strings.TrimSuffix(got.Masked, "?***"), "/") > 4 {
			t.Fatalf("ParseTarget(%q) masked %q shows the path beyond its first segment", raw, got.Masked)
		}
	})
}
