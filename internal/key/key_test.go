package key

import (
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^snp_[0-9a-f]{64}$`) // 256 random bits
	seen := map[string]bool{}
	for range 100 {
		plain, hash := New()
		if !shape.MatchString(plain) {
			t.Fatalf("New() key = %q, want %v", plain, shape)
		}
		if seen[plain] {
			t.Fatalf("New() repeated key %q", plain)
		}
		seen[plain] = true
		if !Equal(hash, Hash(plain)) {
			t.Errorf("hash of New() does not match Hash(key)")
		}
		if len(hash) != 32 {
			t.Errorf("hash length = %d, want 32 (SHA-256)", len(hash))
		}
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	a, b := Hash("snp_a"), Hash("snp_b")
	tests := []struct {
		x, y []byte
		want bool
	}{{a, a, true}, {a, b, false}, {a, a[:16], false}, {nil, a, false}}
	for _, tt := range tests {
		if got := Equal(tt.x, tt.y); got != tt.want {
			t.Errorf("Equal(%x, %x) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	k, _ := New()
	tests := []struct{ in, want string }{
		{"/justTesting", "/justTesting"},
		{"/" + k, "/REDACTED"},
		{"/sniped/" + k + "/justTesting", "/sniped/REDACTED/justTesting"},
		{"/x/SNP_ABC?y", "/x/REDACTED?y"},
		{"snp_", "REDACTED"},
		{"/snap_1", "/snap_1"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
