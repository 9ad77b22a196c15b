package api

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
)

// Request log bounds. An unauthenticated client must not be able to grow
// the log faster than a few short lines a second.
const (
	// maxLoggedPath and maxLoggedQuery truncate the URL in a log line.
	maxLoggedPath  = 256
	maxLoggedQuery = 512
	// sampledLinesPerSecond is how many lines a second one client address
	// gets for requests that are sampled (see logRequests); the rest are
	// counted and the count is logged afterwards.
	sampledLinesPerSecond = 5
	// maxSampledAddrs caps the per-address table; while it is full, new
	// addresses share one entry, so many addresses cannot escape the bound.
	maxSampledAddrs = 10_000
)

// logRequests logs one line per request with the URL redacted (no key or
// other secret parameter ever reaches a log line) and truncated. Lines of requests that were refused
// (status 400 and above) or that did not present a valid key are sampled
// per client address: at most sampledLinesPerSecond a second, and the
// number dropped is logged as suppressed=N on the address's next line, or
// in a "request lines suppressed" line within a second or so of the next
// request from anyone. Successful authenticated requests are all logged:
// the per-account rate limit bounds them.
func logRequests(log *slog.Logger, clk clock.Clock, next http.Handler) http.Handler {
	smp := newSampler(log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := clk.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		now := clk.Now()
		addr := clientIP(r)
		var suppressed int
		if !sw.authenticated || sw.status >= http.StatusBadRequest {
			var ok bool
			if ok, suppressed = smp.allow(addr, now); !ok {
				return
			}
		}
		smp.sweep(now)
		attrs := []any{
			"method", r.Method,
			"path", key.Truncate(key.Redact(r.URL.Path), maxLoggedPath),
			"query", key.Truncate(redactQuery(r.URL.RawQuery), maxLoggedQuery),
			"status", sw.status,
			"duration", now.Sub(start),
			"remote", addr,
		}
		if suppressed > 0 {
			attrs = append(attrs, "suppressed", suppressed)
		}
		log.Info("request", attrs...)
	})
}

// secretNames are the parameters besides "key" whose values are never
// logged: the consent callback's authorization code (it buys a refresh
// token) and state (it binds a link to an account), and addNotifier's url
// (service URLs carry tokens and passwords).
var secretNames = []string{"code", "state", "url"}

// redactQuery is key.RedactQuery with the interface's secret parameters.
func redactQuery(raw string) string { return key.RedactQuery(raw, secretNames...) }

// sampler bounds log lines per client address with one-second windows.
type sampler struct {
	log *slog.Logger

	mu        sync.Mutex
	addrs     map[string]*window
	lastSweep time.Time
}

type window struct {
	start   time.Time
	logged  int
	dropped int
}

func newSampler(log *slog.Logger) *sampler {
	return &sampler{log: log, addrs: map[string]*window{}}
}

// allow reports whether a line for addr may be logged now and, when it may,
// how many of addr's lines were dropped since its last logged line.
func (s *sampler) allow(addr string, now time.Time) (ok bool, suppressed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.addrs[addr]
	if w == nil && len(s.addrs) >= maxSampledAddrs {
		addr = ""
		w = s.addrs[addr]
	}
	if w == nil {
		w = &window{start: now}
		s.addrs[addr] = w
	}
	if now.Sub(w.start) >= time.Second {
		w.start, w.logged = now, 0
	}
	if w.logged >= sampledLinesPerSecond {
		w.dropped++
		return false, 0
	}
	w.logged++
	suppressed, w.dropped = w.dropped, 0
	return true, suppressed
}

// sweep, at most once a second, logs the count of lines dropped for
// addresses whose window has ended and forgets idle addresses.
func (s *sampler) sweep(now time.Time) {
	type report struct {
		addr string
		n    int
	}
	var reports []report
	s.mu.Lock()
	if now.Sub(s.lastSweep) >= time.Second {
		s.lastSweep = now
		for addr, w := range s.addrs {
			if now.Sub(w.start) < time.Second {
				continue
			}
			if w.dropped > 0 {
				reports = append(reports, report{addr, w.dropped})
			}
			delete(s.addrs, addr)
		}
	}
	s.mu.Unlock()
	for _, r := range reports {
		remote := r.addr
		if remote == "" {
			remote = "(addresses beyond the table)"
		}
		s.log.Info("request lines suppressed", "remote", remote, "suppressed", r.n)
	}
}

// statusWriter records the status code, and whether the request presented
// a valid key, for the log line.
type statusWriter struct {
	http.ResponseWriter
	status        int
	wroteHeader   bool
	authenticated bool
}

// markAuthenticated notes on w, when it is the request log's writer, that
// the request presented a valid key, so that its line is not sampled.
func markAuthenticated(w http.ResponseWriter) {
	if sw, ok := w.(*statusWriter); ok {
		sw.authenticated = true
	}
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
