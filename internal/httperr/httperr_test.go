package httperr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHandlerRendersTheEnvelope(t *testing.T) {
	t.Parallel()
	secret := errors.New("dial tcp 10.0.0.5:5432: secret internal detail")
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   map[string]any
		wantRetry  string
	}{
		{"invalid", Invalid("delay", "must be an integer from 1 to 15"), 400,
			map[string]any{"status": "ERROR", "alert": "error", "error": "invalid_parameter", "message": "must be an integer from 1 to 15", "param": "delay"}, ""},
		{"missing", Missing("item_no"), 400,
			map[string]any{"status": "ERROR", "alert": "error", "error": "missing_parameter", "message": `parameter "item_no" is required`, "param": "item_no"}, ""},
		{"not found", NotFound("no snipe on item 5 in your account"), 404,
			map[string]any{"status": "ERROR", "alert": "error", "error": "not_found", "message": "no snipe on item 5 in your account"}, ""},
		{"rate limited", &Error{Status: 429, Code: CodeRateLimited, Message: "slow down", RetryAfter: 1500 * time.Millisecond}, 429,
			map[string]any{"status": "ERROR", "alert": "error", "error": "rate_limited", "message": "slow down"}, "2"},
		{"wrapped", fmt.Errorf("context: %w", Conflict("already sent")), 409,
			map[string]any{"status": "ERROR", "alert": "error", "error": "conflict", "message": "already sent"}, ""},
		{"plain error is opaque", secret, 500,
			map[string]any{"status": "ERROR", "alert": "error", "error": "internal_error", "message": Internal(nil).Message}, ""},
		{"unavailable hides its cause", Unavailable("the marketplace is down", secret), 503,
			map[string]any{"status": "ERROR", "alert": "error", "error": "unavailable", "message": "the marketplace is down"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := Handler(slog.New(slog.NewTextHandler(io.Discard, nil)), func(http.ResponseWriter, *http.Request) error { return tt.err })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.wantRetry {
				t.Errorf("Retry-After = %q, want %q", got, tt.wantRetry)
			}
			var got map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q is not JSON: %v", rec.Body, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantBody) {
				t.Errorf("body = %v, want %v", got, tt.wantBody)
			}
			if strings.Contains(rec.Body.String(), "10.0.0.5") {
				t.Errorf("body leaks the internal cause: %s", rec.Body)
			}
		})
	}
}

func TestHandlerRecoversPanics(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	h := Handler(slog.New(slog.NewTextHandler(&logs, nil)), func(http.ResponseWriter, *http.Request) error {
		panic("boom: internal state")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") || !strings.Contains(rec.Body.String(), `"internal_error"`) {
		t.Errorf("panic response = %d %s, want an opaque 500 envelope", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("the panic was not logged for the operator: %q", logs.String())
	}
}

func TestAllowMethods(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		allow     func(http.ResponseWriter, *http.Request) error
		method    string
		wantErr   bool
		wantAllow string
	}{
		{"read GET", AllowGet, "GET", false, ""},
		{"read HEAD", AllowGet, "HEAD", false, ""},
		{"read POST", AllowGet, "POST", true, "GET, HEAD"},
		{"change GET", AllowGetOnly, "GET", false, ""},
		{"change HEAD", AllowGetOnly, "HEAD", true, "GET"},
		{"change DELETE", AllowGetOnly, "DELETE", true, "GET"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		err := tt.allow(rec, httptest.NewRequest(tt.method, "/x", nil))
		var e *Error
		if (err != nil) != tt.wantErr || (err != nil && (!errors.As(err, &e) || e.Status != http.StatusMethodNotAllowed)) {
			t.Errorf("%s: err = %v, want a 405: %v", tt.name, err, tt.wantErr)
		}
		if got := rec.Header().Get("Allow"); got != tt.wantAllow {
			t.Errorf("%s: Allow = %q, want %q", tt.name, got, tt.wantAllow)
		}
	}
}

func TestJSONHeaders(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	WriteJSON(rec, http.StatusOK, map[string]string{"status": "OK"})
	for h, want := range map[string]string{
		"Content-Type":           "application/json; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "no-referrer",
	} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
}
