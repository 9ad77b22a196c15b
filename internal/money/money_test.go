package money

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Amount
		wantErr error
	}{
		{"0", 0, nil},
		{"0.00", 0, nil},
		{"12", 1200, nil},
		{"12.5", 1250, nil},
		{"12.05", 1205, nil},
		{".5", 50, nil},
		{"007.10", 710, nil},
		{"1000000000", MaxAmount, nil},
		{"1000000000.01", 0, ErrRange},
		{"99999999999", 0, ErrRange},
		{"", 0, ErrSyntax},
		{".", 0, ErrSyntax},
		{"12.", 0, ErrSyntax},
		{"12.345", 0, ErrSyntax},
		{"-1", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"1e3", 0, ErrSyntax},
		{"1,5", 0, ErrSyntax},
		{" 1", 0, ErrSyntax},
		{"NaN", 0, ErrSyntax},
		{"١٢", 0, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Amount
		want string
	}{{0, "0.00"}, {5, "0.05"}, {1250, "12.50"}, {-5, "-0.05"}, {MaxAmount, "1000000000.00"}}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("Amount(%d).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "1.5", "12.34", "", ".", "1e3", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		if a < 0 || a > MaxAmount {
			t.Fatalf("Parse(%q) = %d, out of range", s, a)
		}
		back, err := Parse(a.String())
		if err != nil || back != a {
			t.Fatalf("Parse(String(%d)) = %v, %v; want round trip", a, back, err)
		}
	})
}
