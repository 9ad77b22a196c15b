package cli

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/store/sqlite"
)

func TestParseServe(t *testing.T) {
	t.Setenv(envAddr, "")
	t.Setenv(envData, "")
	tests := []struct {
		args    []string
		wantErr bool
		check   func(serveConfig) bool
	}{
		{nil, false, func(c serveConfig) bool {
			return c.addr == DefaultAddr && c.store.data == DefaultData && c.basePath == "" && c.runSniper
		}},
		{[]string{"--sniper=false"}, false, func(c serveConfig) bool { return !c.runSniper }},
		{[]string{"--base-path", "sniped/"}, false, func(c serveConfig) bool { return c.basePath == "/sniped" }},
		{[]string{"--base-path", "/"}, false, func(c serveConfig) bool { return c.basePath == "" }},
		{[]string{"--rate-limit", "0"}, false, func(c serveConfig) bool { return c.rateLimit == 0 }},
		{[]string{"--sim-clock-skew", "-1.5s"}, false, func(c serveConfig) bool { return c.sim.skew.Seconds() == -1.5 }},
		{[]string{"--sim-retention", "90m", "--sqlite-cache", "8"}, false, func(c serveConfig) bool {
			return c.sim.retention == 90*time.Minute && c.store.cacheMiB == 8
		}},
		{nil, false, func(c serveConfig) bool {
			return c.sim.retention == sim.DefaultRetention && c.store.cacheMiB == sqlite.DefaultCacheMiB
		}},
		{[]string{"--sim-retention", "30s"}, true, nil},
		{[]string{"--sqlite-cache", "0"}, true, nil},
		{[]string{"--rate-limit", "-1"}, true, nil},
		{[]string{"--rate-burst", "0"}, true, nil},
		{[]string{"--sim-bidders", "many"}, true, nil},
		{[]string{"--sim-items", "0"}, true, nil},
		{[]string{"--sim-control", "maybe"}, true, nil},
		{[]string{"stray"}, true, nil},
		{[]string{"--no-such-flag"}, true, nil},
	}
	for _, tt := range tests {
		c, err := parseServe(tt.args, io.Discard)
		if tt.wantErr {
			if !errors.Is(err, errUsage) {
				t.Errorf("parseServe(%q) error = %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil || !tt.check(c) {
			t.Errorf("parseServe(%q) = %+v, %v; not what the flags say", tt.args, c, err)
		}
	}
}

func TestParseServeEnvironment(t *testing.T) {
	t.Setenv(envAddr, "127.0.0.1:9999")
	t.Setenv(envData, "/tmp/elsewhere")
	c, err := parseServe(nil, io.Discard)
	if err != nil || c.addr != "127.0.0.1:9999" || c.store.data != "/tmp/elsewhere" {
		t.Errorf("parseServe with SNIPED_ADDR/SNIPED_DATA = %q %q, %v; want the environment's values", c.addr, c.store.data, err)
	}
	c, _ = parseServe([]string{"--addr", ":1"}, io.Discard)
	if c.addr != ":1" {
		t.Errorf("--addr did not override SNIPED_ADDR: %q", c.addr)
	}
}

func TestSimControlOn(t *testing.T) {
	t.Parallel()
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	loop6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	tests := []struct {
		mode string
		addr net.Addr
		want bool
	}{
		{"auto", loop, true}, {"auto", loop6, true}, {"auto", any, false},
		{"on", any, true}, {"off", loop, false},
	}
	for _, tt := range tests {
		if got := simControlOn(tt.mode, tt.addr); got != tt.want {
			t.Errorf("simControlOn(%q, %v) = %v, want %v", tt.mode, tt.addr, got, tt.want)
		}
	}
}

func TestDialable(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "127.0.0.1:8080",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"example.org:80": "example.org:80",
	}
	for in, want := range tests {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
