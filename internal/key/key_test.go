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
