package param

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParsePositiveInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"310000000001", 310000000001, true},
		{"007", 7, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"", 0, false},
		{"١", 0, false}, // Arabic-Indic digit
	}
	for _, tt := range tests {
		got, err := ParsePositiveInt(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePositiveInt(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseBool(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"0": false, "1": true} {
		if got, err := ParseBool(in); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "true", "false", "01", "yes", " 1"} {
		if _, err := ParseBool(in); err == nil {
			t.Errorf("ParseBool(%q) succeeded, want an error", in)
		}
	}
}

func TestRepeatedParameter(t *testing.T) {
	t.Parallel()
	p, err := Parse("a=1&a=2&b=3")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Raw("a"); err == nil {
		t.Errorf("Raw(a) on a repeated parameter succeeded")
	}
	if v, ok, err := p.Raw("b"); v != "3" || !ok || err != nil {
		t.Errorf("Raw(b) = %q, %v, %v", v, ok, err)
	}
	if _, err := Parse("a=%zz"); err == nil {
		t.Errorf("Parse with a bad escape succeeded")
	}
}

func TestEmptyReadsAsAbsent(t *testing.T) {
	t.Parallel()
	p, err := Parse("empty=&x=1")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := p.Raw("empty"); v != "" || !ok || err != nil {
		t.Errorf("Raw(empty) = %q, %v, %v; want passed and empty", v, ok, err)
	}
	if _, ok, err := p.Optional("empty"); ok || err != nil {
		t.Errorf("Optional(empty) = %v, %v; want not passed", ok, err)
	}
	if _, err := p.Required("empty"); err == nil {
		t.Errorf("Required(empty) succeeded, want missing_parameter")
	}
	if v, ok, err := p.Bool("x"); !v || !ok || err != nil {
		t.Errorf("Bool(x) = %v, %v, %v; want true", v, ok, err)
	}
	if _, err := p.PositiveInt("nope"); err == nil {
		t.Errorf("PositiveInt(nope) succeeded for an absent parameter")
	}
}

func FuzzParsePositiveInt(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "9223372036854775807", "9223372036854775808", "+1", " 1", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParsePositiveInt(s)
		if err != nil {
			return
		}
		if n <= 0 {
			t.Fatalf("ParsePositiveInt(%q) = %d, want positive", s, n)
		}
		if strings.TrimLeft(s, "0") != strconv.FormatInt(n, 10) {
			t.Fatalf("ParsePositiveInt(%q) = %d does not round-trip", s, n)
		}
	})
}

func TestParseErrorsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, wantIn string
	}{
		{"too many parameters", strings.Repeat("a=1&", MaxParams) + "a=1", "at most 10000 parameters"},
		{"bad escape", "a=%zz", "not valid URL encoding"},
		{"semicolon", "a=1;b=2", "';'"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.raw)
		if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
			t.Errorf("%s: Parse error = %v, want one that says %q", tt.name, err, tt.wantIn)
		}
	}
	if _, err := Parse(strings.Repeat("a=1&", MaxParams-1) + "a=1"); err != nil {
		t.Errorf("Parse of exactly %d parameters: %v, want no error", MaxParams, err)
	}
}
