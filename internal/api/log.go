package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
)

// logRequests logs one line per request. The query is logged with every
// secret parameter's value replaced (keys, and the marketplace consent
// callback's code and state), so no log line ever holds a secret.
func logRequests(log *slog.Logger, clk clock.Clock, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := clk.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.Info("request",
			"method", r.Method,
			"path", key.Redact(r.URL.Path),
			"query", redactQuery(r.URL.RawQuery),
			"status", sw.status,
			"duration", clk.Now().Sub(start),
			"remote", clientIP(r))
	})
}

// redactedValue replaces key values in logs.
const redactedValue = key.Redacted

// redactQuery replaces the value of every secret parameter: "key", "code"
// and "state" (compared
// after unescaping and case-insensitively, so %6Bey or KEY do not slip
// through) and of every value that looks like a key (a pasted key in the
// wrong parameter). It works on the raw text, so even a query that does not
// parse is redacted; '&' and ';' both count as separators.
func redactQuery(raw string) string {
	var b strings.Builder
	for raw != "" {
		i := strings.IndexAny(raw, "&;")
		seg, sep := raw, ""
		if i >= 0 {
			seg, sep, raw = raw[:i], raw[i:i+1], raw[i+1:]
		} else {
			raw = ""
		}
		name, value, hasValue := strings.Cut(seg, "=")
		if hasValue && (isSecretName(name) || looksLikeKey(value)) {
			seg = name + "=" + redactedValue
		} else if !hasValue && looksLikeKey(name) {
			seg = redactedValue
		}
		b.WriteString(seg)
		b.WriteString(sep)
	}
	return b.String()
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// secretNames are the parameters whose values are never logged: the
// account key, the consent callback's authorization code (it buys a
// refresh token) and state (it binds a link to an account), and
// addNotifier's url (service URLs carry tokens and passwords).
var secretNames = []string{"key", "code", "state", "url"}

func isSecretName(name string) bool {
	n := strings.TrimSpace(unescape(name))
	for _, s := range secretNames {
		if strings.EqualFold(n, s) {
			return true
		}
	}
	return false
}

func looksLikeKey(value string) bool {
	return strings.Contains(strings.ToLower(unescape(value)), key.Prefix)
}

// statusWriter records the status code for the log line.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
