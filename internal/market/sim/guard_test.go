package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sniped/sniped/internal/market/sim"
)

// TestGuard drives the guarded control surface over a real listener (the
// guard reads the connection's local address) with the headers a browser
// sends on cross-site and DNS-rebinding requests.
func TestGuard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(sim.Guard(sim.GuardConfig{Hosts: []string{"snipe.example.org"}}, b.sim.Handler(nil)))
	t.Cleanup(srv.Close)
	itemNo := b.create(t, sim.NewItem{})
	no := itoa(itemNo)
	create := "/sim/createItem?title=x&start_price=1&ends_in=600"

	tests := []struct {
		name    string
		method  string
		path    string
		host    string
		headers map[string]string
		want    int
		code    string
	}{
		{"curl on loopback", "GET", create, "", nil, 200, ""},
		{"localhost name", "GET", create, "localhost:8080", nil, 200, ""},
		{"sub.localhost", "GET", create, "app.localhost", nil, 200, ""},
		{"IPv6 loopback", "GET", create, "[::1]:8080", nil, 200, ""},
		{"configured public host", "GET", create, "SNIPE.example.org:443", nil, 200, ""},
		{"same-origin fetch", "GET", create, "", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "SELF"}, 200, ""},
		{"typed in the address bar", "GET", create, "", map[string]string{"Sec-Fetch-Site": "none"}, 200, ""},
		{"cross-site fetch", "GET", create, "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "forbidden"},
		{"same-site other port", "GET", create, "", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "forbidden"},
		{"foreign Origin", "GET", create, "", map[string]string{"Origin": "http://evil.example"}, 403, "forbidden"},
		{"null Origin", "GET", create, "", map[string]string{"Origin": "null"}, 403, "forbidden"},
		{"DNS rebinding Host", "GET", "/sim/endItem?item_no=" + no, "rebind.evil.example:8080", nil, 403, "forbidden"},
		{"foreign IP Host", "GET", create, "10.1.2.3", nil, 403, "forbidden"},
		{"HEAD on a change", "HEAD", create, "", nil, 405, ""},
		{"HEAD on fail", "HEAD", "/sim/fail?kind=clear", "", nil, 405, ""},
		{"HEAD on a read", "HEAD", "/sim/item?item_no=" + no, "", nil, 200, ""},
		{"images stay public", "GET", "/sim/img/" + no + ".svg", "rebind.evil.example", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			for k, v := range tt.headers {
				if v == "SELF" {
					v = srv.URL
				}
				req.Header.Set(k, v)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.want {
				t.Fatalf("%s %s = %d, want %d; body %s", tt.method, tt.path, res.StatusCode, tt.want, raw)
			}
			if tt.want == 405 && res.Header.Get("Allow") != "GET" {
				t.Errorf("Allow = %q, want GET", res.Header.Get("Allow"))
			}
			if tt.code != "" {
				var body map[string]any
				if err := json.Unmarshal(raw, &body); err != nil || body["error"] != tt.code {
					t.Errorf("body = %s, want the envelope with error %q", raw, tt.code)
				}
			}
		})
	}
	// The refused rebinding request did not end the item.
	if it, err := b.sim.Item(b.ctx, itemNo); err != nil || it.Ended {
		t.Errorf("item after refused endItem: ended=%v err=%v, want still running", it.Ended, err)
	}
}
