package api

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sniped/sniped/internal/param"
)

func TestParseIntRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"15", 15, true}, {"0", 0, false}, {"16", 0, false}, {"-1", 0, false},
		{"07", 7, true}, {"7.0", 0, false}, {"", 0, false}, {"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := parseIntRange(tt.in, 1, 15)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseIntRange(%q, 1, 15) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseQueryText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"shoes", "shoes", true},
		{"  shoes ", "shoes", true},
		{strings.Repeat("é", 255), strings.Repeat("é", 255), true},
		{strings.Repeat("é", 256), "", false},
		{strings.Repeat("x", 256), "", false},
		{"", "", false},
		{"   ", "", false},
		{"\xff", "", false},
		{"a\x00b", "", false},
		{"a\nb", "", false},
	}
	for _, tt := range tests {
		got, err := parseQueryText(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseQueryText(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseCountry(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"US": "US", "de": "DE", "gB": "GB"} {
		if got, err := parseCountry(in); err != nil || got != want {
			t.Errorf("parseCountry(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "U", "USA", "1A", "Ü", "ÜS", "U "} {
		if _, err := parseCountry(in); err == nil {
			t.Errorf("parseCountry(%q) succeeded, want an error", in)
		}
	}
}

func TestTimeLeft(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		d     time.Duration
		ended bool
		want  string
	}{
		{2*time.Hour + 5*time.Minute, false, "2h 5m"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, false, "2h 5m"},
		{26*time.Hour + 3*time.Minute, false, "1d 2h 3m"},
		{5*time.Minute + 30*time.Second, false, "5m 30s"},
		{42 * time.Second, false, "42s"},
		{500 * time.Millisecond, false, "0s"},
		{0, false, "ended"},
		{-time.Hour, false, "ended"},
		{time.Hour, true, "ended"},
		{time.Minute, false, "1m 0s"},
		{time.Hour, false, "1h 0m"},
		{24 * time.Hour, false, "1d 0h 0m"},
		{400*24*time.Hour + 23*time.Hour + 59*time.Minute + 59*time.Second, false, "400d 23h 59m"},
	}
	for _, tt := range tests {
		if got := timeLeft(now.Add(tt.d), tt.ended, now); got != tt.want {
			t.Errorf("timeLeft(%v, ended %v) = %q, want %q", tt.d, tt.ended, got, tt.want)
		}
	}
}

func FuzzParseIntRange(f *testing.F) {
	for _, s := range []string{"1", "15", "0", "16", "-1", "7.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseIntRange(s, MinDelay, MaxDelay)
		if err == nil && (n < MinDelay || n > MaxDelay) {
			t.Fatalf("parseIntRange(%q) = %d, outside 1..15", s, n)
		}
	})
}

func FuzzParseQueryText(f *testing.F) {
	for _, s := range []string{"shoes", " x ", "", "\xff", strings.Repeat("é", 256)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := parseQueryText(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(q) || q == "" || utf8.RuneCountInString(q) > MaxQueryRunes || q != strings.TrimSpace(q) || param.HasControl(q) {
			t.Fatalf("parseQueryText(%q) = %q breaks the rules", s, q)
		}
	})
}

func FuzzParseCountry(f *testing.F) {
	for _, s := range []string{"US", "de", "USA", "Ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCountry(s)
		if err == nil && (len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z') {
			t.Fatalf("parseCountry(%q) = %q", s, c)
		}
	})
}

func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"key=x&item_no=1", "a=1&a=2", "%zz", ";", "item_no=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := parseParams(raw)
		if err != nil {
			return
		}
		// No getter may panic, whatever the input.
		_, _ = p.itemNo()
		_, _ = p.id()
		_, _, _ = p.bid()
		_, _ = p.groupName()
		_, _ = p.query()
		_, _ = p.country()
		_, _, _ = p.optBool("force")
		_, _, _ = p.optInt("delay", MinDelay, MaxDelay)
		_, _ = p.enum("filter", true, "", "watched", "current")
	})
}
