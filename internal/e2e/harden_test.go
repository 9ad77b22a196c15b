package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeLocksItsDataFolder: a second serve on the same data folder
// refuses to start and names the holder; account commands still work.
func TestServeLocksItsDataFolder(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data)
	_, errOut, code := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", data, "--sim-items", "10")
	if code == 0 {
		t.Fatalf("second serve on the same data folder exited 0, want a refusal")
	}
	wantPID := fmt.Sprintf("pid %d", s.cmd.Process.Pid)
	if !strings.Contains(errOut, "in use by another sniped serve") || !strings.Contains(errOut, wantPID) || !strings.Contains(errOut, s.URL) {
		t.Errorf("second serve said %q, want it to name the holder (%s, %s)", errOut, wantPID, s.URL)
	}
	if out, errOut, code := runCLI(t, "account", "add", "--data", data, "--name", "bob"); code != 0 || !strings.HasPrefix(out, "snp_") {
		t.Errorf("account add alongside serve = %q %q exit %d, want a key", out, errOut, code)
	}
	// Once the holder stops, the folder is free again.
	s.Stop()
	s2 := startServer(t, data)
	s2.Stop()
}

// TestMetricsAddr: with --metrics-addr, /metrics is served there and not
// on the public listener.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(s.Log())
	if m == nil {
		t.Fatalf("no metrics address printed:\n%s", s.Log())
	}
	res, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "go_goroutines") {
		t.Errorf("GET %s = %d, want 200 with Go metrics", m[1], res.StatusCode)
	}
	if status, _ := s.GetRaw("/metrics", nil); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the public address = %d, want 404", status)
	}
}

// TestSimControlRefusesBrowsers: the wiring in serve guards /sim/ control
// (cross-site and DNS rebinding) and limits failed keys on /sim/watch,
// while /sim/img/ stays public.
func TestSimControlRefusesBrowsers(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "--rate-limit", "10")
	do := func(method, path, host string, hdr map[string]string) int {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, nil)
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	create := "/sim/createItem?title=x&start_price=1&ends_in=600"
	if got := do("GET", create, "", nil); got != 200 {
		t.Fatalf("createItem from curl = %d, want 200", got)
	}
	if got := do("GET", create, "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}); got != 403 {
		t.Errorf("cross-site createItem = %d, want 403", got)
	}
	if got := do("GET", create, "rebind.evil.example", nil); got != 403 {
		t.Errorf("createItem with a foreign Host = %d, want 403", got)
	}
	if got := do("HEAD", create, "", nil); got != 405 {
		t.Errorf("HEAD createItem = %d, want 405", got)
	}
	// sniped market serve's control endpoints are as keyless, and guarded
	// the same way.
	m := startMarket(t, t.TempDir())
	for _, tt := range []struct {
		name, host string
		hdr        map[string]string
	}{
		{"cross-site", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}},
		{"foreign Host", "rebind.evil.example", nil},
	} {
		req, _ := http.NewRequest("GET", m.URL+create, nil)
		if tt.host != "" {
			req.Host = tt.host
		}
		for k, v := range tt.hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Errorf("market serve: %s createItem = %d, want 403", tt.name, res.StatusCode)
		}
	}
	_, body := s.Get("/sim/createItem", url.Values{"title": {"y"}, "start_price": {"1"}, "ends_in": {"600"}})
	no, _ := body["item_no"].(string)
	if got := do("GET", "/sim/img/"+no+".svg", "rebind.evil.example", map[string]string{"Sec-Fetch-Site": "cross-site"}); got != 200 {
		t.Errorf("cross-site image = %d, want 200 (images stay public)", got)
	}
	// Guessing keys on /sim/watch hits the interface's failed-key limit.
	limited := false
	deadline := time.Now().Add(time.Minute)
	for i := 0; i < 40 && !limited && time.Now().Before(deadline); i++ {
		switch got := do("GET", "/sim/watch?item_no="+no+"&key=snp_guess"+fmt.Sprint(i), "", nil); got {
		case 429:
			limited = true
		case 401:
		default:
			t.Fatalf("watch with a wrong key = %d, want 401 or 429", got)
		}
	}
	if !limited {
		t.Errorf("40 wrong keys on /sim/watch were never refused with 429")
	}
}
