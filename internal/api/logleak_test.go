package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestLogsNeverHoldKeys drives every kind of outcome and checks the whole
// log for the keys.
func TestLogsNeverHoldKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.call("justTesting", "arg1", "a")
	b.callKey(b.freeKey, "justTesting", "arg1", "a")
	b.call("addBid", "item_no", "x")
	b.call("addBid", "item_no", "99")
	b.raw(http.MethodPost, "/justTesting?key="+b.paidKey)
	b.raw(http.MethodGet, "/nope?KEY="+b.paidKey)
	b.raw(http.MethodGet, "/justTesting?key="+b.paidKey+";arg1=x")
	b.call("justTesting", "arg1", b.otherKey)
	logs := b.logs.String()
	if !strings.Contains(logs, "REDACTED") {
		t.Errorf("no redacted request lines logged:\n%s", logs)
	}
	for _, k := range []string{b.paidKey, b.freeKey, b.otherKey} {
		if strings.Contains(logs, k) {
			t.Errorf("log holds a key:\n%s", logs)
		}
		if strings.Contains(logs, k[4:]) {
			t.Errorf("log holds a key's hex:\n%s", logs)
		}
	}
}
