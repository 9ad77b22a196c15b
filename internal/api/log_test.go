package api

import (
	"strings"
	"testing"
)

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"key=snp_abc&item_no=5", "key=REDACTED&item_no=5"},
		{"item_no=5&key=secret", "item_no=5&key=REDACTED"},
		{"KEY=secret", "KEY=REDACTED"},
		{"%6Bey=secret", "%6Bey=REDACTED"},
		{"key=a&key=b", "key=REDACTED&key=REDACTED"},
		{"key=a;x=1", "key=REDACTED;x=1"},
		{"arg1=snp_pasted", "arg1=REDACTED"},
		{"arg1=SNP_pasted", "arg1=REDACTED"},
		{"snp_alone", "REDACTED"},
		{"key=%zz", "key=REDACTED"},
		{"keys=1&monkey=2", "keys=1&monkey=2"},
		{"code=v%5E1.1%23i&state=abc", "code=REDACTED&state=REDACTED"},
		{"CODE=x&expires_in=299", "CODE=REDACTED&expires_in=299"},
		{"codes=1&statement=2", "codes=1&statement=2"},
	}
	for _, tt := range tests {
		if got := redactQuery(tt.in); got != tt.want {
			t.Errorf("redactQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRedactQuery(f *testing.F) {
	for _, s := range []string{"key=x", "a=1&key=x;b=2", "%6bey=x", "key", "=&;"} {
		f.Add(s, "snp_0123456789abcdef")
	}
	f.Fuzz(func(t *testing.T, prefix, secret string) {
		if len(secret) < 8 || strings.ContainsAny(secret, "&;=%+") {
			return
		}
		got := redactQuery(prefix + "&key=" + secret)
		if strings.Contains(got, "key="+secret) {
			t.Errorf("redactQuery(%q) = %q leaks the key", prefix+"&key="+secret, got)
		}
	})
}
