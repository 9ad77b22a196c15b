package api

import "testing"

// TestRedactQuerySecrets: besides keys (internal/key has those cases and
// the fuzz target), the consent callback's code and state are never logged.
func TestRedactQuerySecrets(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"key=snp_abc&item_no=5", "key=REDACTED&item_no=5"},
		{"code=v%5E1.1%23i&state=abc", "code=REDACTED&state=REDACTED"},
		{"CODE=x&expires_in=299", "CODE=REDACTED&expires_in=299"},
		{"%63ode=x", "%63ode=REDACTED"},
		{"codes=1&statement=2", "codes=1&statement=2"},
	}
	for _, tt := range tests {
		if got := redactQuery(tt.in); got != tt.want {
			t.Errorf("redactQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
