package marketlink_test

import (
	"encoding/base64"
	"testing"
)

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("state %q is not base64url: %v", s, err)
	}
	return b
}

func encode(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// FuzzFinishState: no state but the ones Start made is ever accepted, and
// none makes Finish panic.
func FuzzFinishState(f *testing.F) {
	f.Add("", "")
	f.Add("AAAAAAAAAAEAAAAAaSM", "")
	f.Add(encode(make([]byte, 32+5+32)), "binding")
	f.Fuzz(func(t *testing.T, state, binding string) {
		b := setup(t)
		if _, _, err := b.links.Finish(b.ctx, "c1", state, binding); err == nil {
			t.Errorf("Finish accepted a forged state %q", state)
		}
	})
}
