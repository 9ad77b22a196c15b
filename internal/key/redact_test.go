package key

import (
	"fmt"
	"strings"
	"testing"
)

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"item_no=5&limit=20", "item_no=5&limit=20"},
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
		// A key inside another parameter, partly percent-encoded, in a
		// query that does not decode (issue #12).
		{"arg1=%73np_0123abcd%zz", "arg1=REDACTED"},
		{"arg1=x%20%73%6E%70%5F0123&arg2=%zz", "arg1=REDACTED&arg2=%zz"},
		{"arg1=hello+snp_0123", "arg1=REDACTED"},
		{"arg1=%2573np_0123", "arg1=REDACTED"},
		{"snp_0123=1&a=2", "REDACTED&a=2"},
		{"x%3Dsnp_0123=1", "REDACTED"},
		{"arg1=sn%zzp_0123", "arg1=sn%zzp_0123"},
	}
	for _, tt := range tests {
		if got := RedactQuery(tt.in); got != tt.want {
			t.Errorf("RedactQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcdef", 3, "abc…(+3 bytes)"},
		{"aé", 2, "a…(+2 bytes)"}, // never splits a UTF-8 sequence
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.max); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

// fuzzKey is a fixed key: the fuzzer varies everything around it.
const fuzzKey = "snp_8f14e45fceea167a5a36dedd4bea2543a1b2c3d4e5f60718293a4b5c6d7e8f90"

// encodeKey percent-encodes the bytes of k whose bit in mask is set, in
// upper or lower case hex by the bit in upper, twice where twice is set.
func encodeKey(k string, mask, upper, twice uint64) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		bit := uint64(1) << (i % 64)
		if mask&bit == 0 {
			b.WriteByte(k[i])
			continue
		}
		f := "%%%02x"
		if upper&bit != 0 {
			f = "%%%02X"
		}
		if twice&bit != 0 {
			f = "%%25%02x"
		}
		fmt.Fprintf(&b, f, k[i])
	}
	return b.String()
}

// FuzzRedactQuery asserts that no key survives redaction: the key, encoded
// in any mix of escapes, placed as the value of any parameter (or as a
// name) between arbitrary text, never shows in the output, raw or decoded.
func FuzzRedactQuery(f *testing.F) {
	f.Add("a=1", "x", "", "", uint64(0), uint64(0), uint64(0), false)
	f.Add("arg1=%zz", "arg2", "%", "%zz", uint64(0xF), uint64(0x5), uint64(0), false)
	f.Add("", "key", "", "", uint64(1<<40), uint64(0), uint64(1<<40), false)
	f.Add("%", "%6Bey", "%2", "&b=2", uint64(0xFFFF), uint64(0xFF00), uint64(0x1), true)
	hex := fuzzKey[len(Prefix):]
	f.Fuzz(func(t *testing.T, before, name, pre, post string, mask, upper, twice uint64, asName bool) {
		enc := encodeKey(fuzzKey, mask, upper, twice)
		q := before + "&" + name + "=" + pre + enc + post
		if asName {
			q = before + "&" + pre + enc + post + "=1"
		}
		got := RedactQuery(q)
		for _, d := range decodings(got) {
			if strings.Contains(strings.ToLower(d), hex) {
				t.Fatalf("RedactQuery(%q) = %q: the key survives (decoded: %q)", q, got, d)
			}
		}
	})
}
