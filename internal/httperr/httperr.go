// Package httperr is sniped's one error envelope. Handlers return an *Error
// (or any error, which becomes an opaque 500); Handler renders it as
//
//	{"status":"ERROR","alert":"error","error":"<code>","message":"<text>","param":"<name>"}
//
// and logs it, so that every failure of every endpoint looks the same and no
// internal detail reaches a client.
package httperr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/key"
)

// Error is a failure with its HTTP status and a stable code for clients.
type Error struct {
	Status  int    // HTTP status
	Code    string // stable machine-readable code, e.g. "invalid_parameter"
	Message string // for the user: names the parameter and the rule
	Param   string // the parameter at fault, when there is one
	// RetryAfter, when set, is sent as the Retry-After header (seconds, rounded up).
	RetryAfter time.Duration
	// Err is the internal cause: logged, never sent.
	Err error
}

// Error describes the failure for logs, including the internal cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Stable error codes.
const (
	CodeInvalidParameter  = "invalid_parameter"
	CodeMissingParameter  = "missing_parameter"
	CodeRepeatedParameter = "repeated_parameter"
	CodeMissingKey        = "missing_key"
	CodeInvalidKey        = "invalid_key"
	CodeUpgradeRequired   = "upgrade_required"
	CodeForbidden         = "forbidden"
	CodeNotFound          = "not_found"
	CodeUnknownOperation  = "unknown_operation"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeConflict          = "conflict"
	CodeRateLimited       = "rate_limited"
	CodeInternal          = "internal_error"
	CodeUnavailable       = "unavailable"
	// CodeMarketAuth: the marketplace refused to act for the account (not
	// linked, link expired or revoked, or the application lacks approval).
	CodeMarketAuth = "market_auth"
)

// Invalid is a 400 for a parameter that breaks a rule; msg names the rule.
func Invalid(param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Param: param, Message: msg}
}

// Missing is a 400 for an absent required parameter.
func Missing(param string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeMissingParameter, Param: param,
		Message: fmt.Sprintf("parameter %q is required", param)}
}

// NotFound is a 404.
func NotFound(msg string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: msg}
}

// Conflict is a 409.
func Conflict(msg string) *Error {
	return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: msg}
}

// Unavailable is a 503 for a dependency (e.g. the marketplace) that is down.
func Unavailable(msg string, cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: msg, Err: cause}
}

// Internal is an opaque 500; cause is logged only.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Message: "internal error; the operator can find details in the service log", Err: cause}
}

// envelope is the JSON body of every failure.
type envelope struct {
	Status  string `json:"status"`
	Alert   string `json:"alert"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// Write renders err as the envelope. A non-*Error becomes an opaque 500.
func Write(w http.ResponseWriter, err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		e = Internal(err)
	}
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	WriteJSON(w, e.Status, envelope{Status: "ERROR", Alert: "error", Error: e.Code, Message: e.Message, Param: e.Param})
	return e
}

// WriteJSON writes v as a JSON response with status and the JSON headers
// (SetJSONHeaders). The body is encoded first, so that it goes out with a
// Content-Length in one write: net/http would chunk a body over 2 KB
// (getUserItems), which costs a write more per answer.
//
// A v that implements JSONAppender writes itself instead of going through
// encoding/json's reflection.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	defer putJSONBuf(buf)
	buf.Reset()
	h := w.Header()
	SetJSONHeaders(h)
	if err := encode(buf, v); err != nil {
		w.WriteHeader(http.StatusInternalServerError) // not encodable: a bug
		return
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client may have gone; nothing useful to do
}

// JSONAppender is a value with a hand-written JSON encoding, for answers
// where reflection costs too much. AppendJSON must append exactly what
// encoding/json's Encoder with SetEscapeHTML(false) writes for the value,
// trailing newline included, or fail where it fails; its implementation
// proves that with a test against encoding/json.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// encode writes v's JSON and a newline into buf.
func encode(buf *bytes.Buffer, v any) error {
	if a, ok := v.(JSONAppender); ok {
		b, err := a.AppendJSON(buf.AvailableBuffer())
		if err != nil {
			return err
		}
		buf.Write(b) // b starts in buf's free space: unless it outgrew it, a copy in place
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonBufs recycles WriteJSON's buffers; one that grew past
// maxPooledJSON (a rare large answer) is dropped instead of kept.
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledJSON = 256 << 10

func putJSONBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledJSON {
		jsonBufs.Put(b)
	}
}

// SetJSONHeaders sets the headers of every JSON answer: its type;
// nosniff, so that a browser never reads it as anything else; no-store,
// because answers are per-account and keys travel in URLs; and
// no-referrer, so that a page that links from an answer never sends the
// URL (and its key) to another site.
func SetJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// HandlerFunc is an HTTP handler that returns its failure.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handler adapts h: a returned error is rendered as the envelope and logged
// (5xx at error level with the cause, others at debug); a panic becomes an
// opaque 500. log must not be nil. It logs only the path, with anything
// that looks like a key redacted.
func Handler(log *slog.Logger, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				e := Write(w, Internal(fmt.Errorf("panic: %v", p)))
				log.Error("handler panic", "path", logPath(r), "status", e.Status, "err", e.Err)
			}
		}()
		if err := h(w, r); err != nil {
			e := Write(w, err)
			if e.Status >= 500 {
				log.Error("request failed", "path", logPath(r), "status", e.Status, "code", e.Code, "err", e.Err)
			} else {
				log.Debug("request refused", "path", logPath(r), "status", e.Status, "code", e.Code, "param", e.Param)
			}
		}
	})
}

// maxLoggedPath truncates paths in log lines (a path may be a megabyte).
const maxLoggedPath = 256

// logPath is r's path for a log line: keys redacted, truncated.
func logPath(r *http.Request) string {
	return key.Truncate(key.Redact(r.URL.Path), maxLoggedPath)
}

// AllowGet refuses every method but GET and HEAD with a 405 and the Allow
// header. It is for reads: HEAD runs the read and drops the body. An
// endpoint that changes state uses AllowGetOnly.
func AllowGet(w http.ResponseWriter, r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	return notAllowed(w, r, "GET, HEAD", "this endpoint uses GET (or HEAD)")
}

// AllowGetOnly refuses every method but GET, HEAD included: HEAD is meant
// to be safe, and a client (curl -I, a link checker, a prefetching proxy)
// must never change state with it.
func AllowGetOnly(w http.ResponseWriter, r *http.Request) error {
	if r.Method == http.MethodGet {
		return nil
	}
	return notAllowed(w, r, "GET", "this endpoint changes state and uses GET only (not HEAD)")
}

func notAllowed(w http.ResponseWriter, r *http.Request, allow, rule string) error {
	w.Header().Set("Allow", allow)
	return &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
		Message: "method " + r.Method + " is not allowed; " + rule}
}
