package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestServeAsNewUser walks the README: first start prints an admin key, the
// key works, accounts can be managed while serve runs, and the interface
// answers over real HTTP with the documented statuses.
func TestServeAsNewUser(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data)
	admin := s.Key()
	if admin == "" {
		t.Fatalf("first start printed no admin key:\n%s", s.Log())
	}
	if !strings.Contains(s.Log(), "curl '"+s.URL+"/justTesting?key="+admin+"&arg1=hello'") {
		t.Errorf("first start printed no ready-to-paste curl line:\n%s", s.Log())
	}

	status, body := s.Get("/justTesting", url.Values{"key": {admin}, "arg1": {"hi"}})
	if status != http.StatusOK || body["status"] != "OK" || body["arg1"] != "hi" || body["arg2"] != "" || body["version"] != "1" {
		t.Errorf("justTesting = %d %v, want 200 OK echoing arg1, version 1", status, body)
	}

	// Account administration against the running server's data folder.
	free, errOut, code := runCLI(t, "account", "add", "--data", data, "--name", "freebie", "--tier", "free")
	free = strings.TrimSpace(free)
	if code != 0 || !strings.HasPrefix(free, "snp_") {
		t.Fatalf("account add = %q, %q, exit %d; want a key and exit 0", free, errOut, code)
	}
	if status, body := s.Get("/justTesting", url.Values{"key": {free}, "arg1": {"x"}}); status != http.StatusForbidden || body["error"] != "upgrade_required" {
		t.Errorf("justTesting with a free key = %d %v, want 403 upgrade_required", status, body)
	}
	if _, _, code := runCLI(t, "account", "set-tier", "--data", data, "--name", "freebie", "--tier", "paid"); code != 0 {
		t.Fatalf("account set-tier exit %d, want 0", code)
	}
	if status, _ := s.Get("/justTesting", url.Values{"key": {free}, "arg1": {"x"}}); status != http.StatusOK {
		t.Errorf("justTesting after upgrade = %d, want 200", status)
	}
	rotated, _, code := runCLI(t, "account", "rotate-key", "--data", data, "--name", "freebie")
	rotated = strings.TrimSpace(rotated)
	if code != 0 || rotated == free {
		t.Fatalf("rotate-key = %q exit %d, want a new key", rotated, code)
	}
	if status, body := s.Get("/justTesting", url.Values{"key": {free}, "arg1": {"x"}}); status != http.StatusUnauthorized || body["error"] != "invalid_key" {
		t.Errorf("justTesting with the old key = %d %v, want 401 invalid_key", status, body)
	}
	list, _, code := runCLI(t, "account", "list", "--data", data)
	if code != 0 || !strings.Contains(list, "admin") || !strings.Contains(list, "freebie") {
		t.Errorf("account list = %q exit %d, want admin and freebie", list, code)
	}
	if _, _, code := runCLI(t, "account", "remove", "--data", data, "--name", "freebie"); code != 0 {
		t.Errorf("account remove exit %d, want 0", code)
	}
	// The banner shows the key twice (alone and in the curl line); request
	// logs must never add to that, even for a key pasted into the path.
	s.GetRaw("/"+admin, nil)
	s.GetRaw("/justTesting/"+admin, url.Values{"arg1": {admin}})
	if n := strings.Count(s.Log(), admin); n != 2 {
		t.Errorf("the admin key appears %d times in the log, want 2 (the first-start banner only)", n)
	}

	// Statuses for transport-level mistakes.
	tests := []struct {
		name   string
		method string
		path   string
		want   int
	}{
		{"unknown operation", http.MethodGet, "/noSuchOp?key=" + admin, http.StatusNotFound},
		{"wrong case", http.MethodGet, "/justtesting?key=" + admin + "&arg1=x", http.StatusNotFound},
		{"POST", http.MethodPost, "/justTesting?key=" + admin + "&arg1=x", http.StatusMethodNotAllowed},
		{"HEAD", http.MethodHead, "/justTesting?key=" + admin + "&arg1=x", http.StatusOK},
		{"missing key", http.MethodGet, "/justTesting?arg1=x", http.StatusUnauthorized},
		{"health", http.MethodGet, "/healthz", http.StatusOK},
		{"metrics", http.MethodGet, "/metrics", http.StatusOK},
		{"openapi", http.MethodGet, "/openapi.json", http.StatusOK},
		{"dashboard", http.MethodGet, "/ui/", http.StatusOK},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, s.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if tt.method == http.MethodPost && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow = %q, want %q", tt.name, resp.Header.Get("Allow"), "GET, HEAD")
		}
	}

	// A restart keeps accounts and does not print a new admin key.
	s.Stop()
	s2 := startServer(t, data)
	if s2.Key() != "" {
		t.Errorf("second start printed a new admin key")
	}
	if status, _ := s2.Get("/justTesting", url.Values{"key": {admin}, "arg1": {"x"}}); status != http.StatusOK {
		t.Errorf("admin key after restart = %d, want 200", status)
	}
}

// TestCLIUsage checks that command-line mistakes exit 2 with a message.
func TestCLIUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "unknown command"},
		{[]string{"account"}, "subcommand"},
		{[]string{"account", "add", "--data", t.TempDir(), "--name", "Bad Name"}, "--name"},
		{[]string{"account", "add", "--data", t.TempDir(), "--name", "ok", "--tier", "gold"}, "--tier"},
		{[]string{"serve", "--sim-bidders", "crowd"}, "--sim-bidders"},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("sniped %v = exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestServeWithBasePath mounts every endpoint under --base-path, as behind
// a reverse proxy that forwards a prefix.
func TestServeWithBasePath(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "--base-path", "/sniped/")
	if !strings.HasSuffix(s.URL, "/sniped") {
		t.Fatalf("listen line URL = %q, want it to end in /sniped", s.URL)
	}
	root := strings.TrimSuffix(s.URL, "/sniped")
	k := s.Key()
	tests := []struct {
		url  string
		want int
	}{
		{s.URL + "/justTesting?arg1=x&key=" + k, http.StatusOK},
		{s.URL + "/healthz", http.StatusOK},
		{s.URL + "/openapi.json", http.StatusOK},
		{s.URL + "/metrics", http.StatusOK},
		{s.URL + "/ui/", http.StatusOK},
		{s.URL + "/sim/item?item_no=310000000001", http.StatusOK},
		{root + "/justTesting?arg1=x&key=" + k, http.StatusNotFound},
	}
	for _, tt := range tests {
		resp, err := http.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		ctype := resp.Header.Get("Content-Type")
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s = %d, want %d", strings.ReplaceAll(tt.url, k, "KEY"), resp.StatusCode, tt.want)
		}
		if resp.StatusCode == http.StatusNotFound && !strings.HasPrefix(ctype, "application/json") {
			t.Errorf("GET %s: 404 as %q, want the JSON error envelope", strings.ReplaceAll(tt.url, k, "KEY"), ctype)
		}
	}
	// Image links carry the prefix too, so they work behind the proxy.
	_, res := s.Get("/getSearchResults", url.Values{"key": {k}, "query": {"a"}})
	items, _ := res["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("getSearchResults found nothing: %v", res)
	}
	if img := items[0].(map[string]any)["galleryUrl"].(string); !strings.HasPrefix(img, s.URL+"/sim/img/") {
		t.Errorf("galleryUrl = %q, want it under %s/sim/img/", img, s.URL)
	}
}

// TestSimControlOff: with --sim-control off (the default off loopback) the
// keyless control endpoints are gone, but item images still load.
func TestSimControlOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "--sim-control", "off")
	if status, _ := s.GetRaw("/sim/createItem", url.Values{"title": {"x"}, "start_price": {"1"}, "ends_in": {"60"}}); status != http.StatusNotFound {
		t.Errorf("/sim/createItem with control off = %d, want 404", status)
	}
	if status, _ := s.GetRaw("/sim/img/310000000001.svg", nil); status != http.StatusOK {
		t.Errorf("/sim/img/ with control off = %d, want 200", status)
	}
}
