package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/clock"
)

var dateTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)

func TestRouting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantCode   string
		wantAllow  string
	}{
		{"unknown operation", http.MethodGet, "/noSuchOp?key=" + b.paidKey, 404, "unknown_operation", ""},
		{"operation names are case-sensitive", http.MethodGet, "/justtesting?arg1=x&key=" + b.paidKey, 404, "unknown_operation", ""},
		{"nested path", http.MethodGet, "/justTesting/x?arg1=x&key=" + b.paidKey, 404, "unknown_operation", ""},
		{"root", http.MethodGet, "/", 404, "unknown_operation", ""},
		{"POST", http.MethodPost, "/justTesting?arg1=x&key=" + b.paidKey, 405, "method_not_allowed", "GET, HEAD"},
		{"DELETE", http.MethodDelete, "/deleteBid?item_no=1&key=" + b.paidKey, 405, "method_not_allowed", "GET"},
		{"PUT on openapi.json", http.MethodPut, "/openapi.json", 405, "method_not_allowed", "GET, HEAD"},
		{"bad escape", http.MethodGet, "/justTesting?arg1=%zz&key=" + b.paidKey, 400, "invalid_parameter", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.raw(tt.method, tt.path)
			r.wantError(t, tt.wantStatus, tt.wantCode, "")
			if tt.wantStatus == 405 {
				if got := r.header.Get("Allow"); got != tt.wantAllow {
					t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
				}
			}
		})
	}
}

func TestHEADBehavesLikeGET(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.raw(http.MethodHead, "/justTesting?arg1=x&key="+b.paidKey)
	if r.status != 200 || len(r.raw) != 0 {
		t.Errorf("HEAD = %d with %d body bytes, want 200 and none", r.status, len(r.raw))
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("HEAD Content-Type = %q, want application/json", ct)
	}
	r = b.raw(http.MethodHead, "/justTesting?arg1=x&key=wrong")
	if r.status != 401 {
		t.Errorf("HEAD with wrong key = %d, want 401", r.status)
	}
}

func TestBasePath(t *testing.T) {
	t.Parallel()
	b := setupWith(t, options{basePath: "/snipe/"})
	r := b.raw(http.MethodGet, "/snipe/justTesting?arg1=x&key="+b.paidKey)
	r.wantOK(t)
	b.raw(http.MethodGet, "/justTesting?arg1=x&key="+b.paidKey).wantError(t, 404, "unknown_operation", "")
	b.raw(http.MethodGet, "/snipeX/justTesting?arg1=x&key="+b.paidKey).wantError(t, 404, "unknown_operation", "")
	if r := b.raw(http.MethodGet, "/snipe/openapi.json"); r.status != 200 || r.body["openapi"] != "3.1.0" {
		t.Errorf("openapi.json under base path = %d %v", r.status, r.body["openapi"])
	}
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.raw(http.MethodGet, "/openapi.json")
	if r.status != 200 || r.body["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json = %d, openapi %v", r.status, r.body["openapi"])
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ops := []string{"justTesting", "addBid", "deleteBid", "addSearch", "deleteSearch", "fetchItem", "checkSnipeStatus",
		"getSearchResults", "getUserItems", "getUserSearches", "importWatchList", "getBidHistoryDataset", "getBidderDataset"}
	for _, op := range ops {
		t.Run(op, func(t *testing.T) {
			b.callKey("", op).wantError(t, 401, "missing_key", "key")
			b.raw(http.MethodGet, "/"+op+"?key=").wantError(t, 401, "missing_key", "key")
			b.callKey("snp_0000", op).wantError(t, 401, "invalid_key", "key")
			b.callKey(b.freeKey, op).wantError(t, 403, "upgrade_required", "")
			b.raw(http.MethodGet, "/"+op+"?key="+b.paidKey+"&key="+b.paidKey).wantError(t, 400, "repeated_parameter", "key")
		})
	}
}

func TestJustTesting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("justTesting", "arg1", "héllo wörld", "arg3", "3", "unknown", "ignored")
	r.wantOK(t)
	want := map[string]string{"arg1": "héllo wörld", "arg2": "", "arg3": "3", "version": "1", "timestamp": clock.FormatUTC(t0)}
	for k, v := range want {
		if got := str(t, r.body, k); got != v {
			t.Errorf("justTesting %s = %q, want %q", k, got, v)
		}
	}
	if str(t, r.body, "message") == "" {
		t.Errorf("message is empty")
	}
	if !dateTimeRE.MatchString(str(t, r.body, "timestamp")) {
		t.Errorf("timestamp %q is not YYYY-MM-DD HH:MM:SS", r.body["timestamp"])
	}

	b.call("justTesting").wantError(t, 400, "missing_parameter", "arg1")
	b.call("justTesting", "arg1", "").wantError(t, 400, "missing_parameter", "arg1")
	b.call("justTesting", "arg1", "a", "arg1", "b").wantError(t, 400, "repeated_parameter", "arg1")
	b.call("justTesting", "arg1", "a", "arg2", "b", "arg2", "c").wantError(t, 400, "repeated_parameter", "arg2")
	b.call("justTesting", "arg1", strings.Repeat("x", 1001)).wantError(t, 400, "invalid_parameter", "arg1")
	b.raw(http.MethodGet, "/justTesting?arg1=%FF&key="+b.paidKey).wantError(t, 400, "invalid_parameter", "arg1")
}

func TestInternalErrorsStayOpaque(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.Close()
	r := b.call("justTesting", "arg1", "a")
	r.wantError(t, 500, "internal_error", "")
	if msg := str(t, r.body, "message"); strings.Contains(strings.ToLower(msg), "sql") || strings.Contains(msg, "closed") {
		t.Errorf("500 message leaks internals: %q", msg)
	}
	if !strings.Contains(b.logs.String(), "request failed") {
		t.Errorf("the cause was not logged")
	}
}
