package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/web"
)

func TestHandlerServesEmbeddedFiles(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	tests := []struct {
		path, wantType, wantBody string
	}{
		{"/", "text/html", "<title>sniped</title>"},
		{"/index.html", "text/html", "<title>sniped</title>"},
		{"/ui/", "text/html", "<title>sniped</title>"},         // mounted without StripPrefix
		{"/base/ui/app.js", "text/javascript", "getUserItems"}, // under a base path
		{"/app.css", "text/css", "--accent"},                   // StripPrefix'ed
		{"/chart.js", "text/javascript", "BidChart"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", tt.path, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, tt.wantType) {
			t.Errorf("GET %s Content-Type = %q, want %s", tt.path, got, tt.wantType)
		}
		if !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("GET %s body lacks %q", tt.path, tt.wantBody)
		}
		for _, hdr := range []string{"Content-Security-Policy", "ETag", "X-Content-Type-Options"} {
			if rec.Header().Get(hdr) == "" {
				t.Errorf("GET %s: no %s header", tt.path, hdr)
			}
		}
	}
}

func TestHandlerRefusals(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/nope.js", http.StatusNotFound},
		{http.MethodGet, "/../web.go", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodHead, "/app.js", http.StatusOK},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.want)
		}
	}
}

func TestHandlerRevalidatesWithETag(t *testing.T) {
	t.Parallel()
	h := web.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/app.js", nil))
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest(http.MethodGet, "/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("GET /app.js with If-None-Match %s = %d, want 304", etag, rec.Code)
	}
}

// TestPageUsesNoPrivateAPI keeps the page honest: it calls only the
// interface's public operations and never puts the key in a cookie or
// localStorage.
func TestPageUsesNoPrivateAPI(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	web.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/app.js", nil))
	js := rec.Body.String()
	for _, banned := range []string{"document.cookie", "localStorage", "method: 'POST'", "history.pushState", "XMLHttpRequest"} {
		if strings.Contains(js, banned) {
			t.Errorf("app.js contains %q", banned)
		}
	}
	if !strings.Contains(js, "sessionStorage") {
		t.Errorf("app.js does not keep the key in sessionStorage")
	}
}
