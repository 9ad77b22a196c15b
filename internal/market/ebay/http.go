package ebay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/market"
)

// API names: the metric label and the cooldown key of each of eBay's APIs.
const (
	apiOAuth    = "oauth"
	apiIdentity = "identity"
	apiBrowse   = "browse"
	apiOffer    = "offer"
	apiTrading  = "trading"
)

// Retry policy for calls that are safe to repeat (GETs, token calls,
// GetMyeBayBuying): at most maxAttempts, waiting Config.Backoff (default
// DefaultBackoff), doubling up to backoffMax, or what Retry-After says (up
// to maxRetryAfter).
const (
	maxAttempts   = 3
	backoffMax    = 4 * time.Second
	maxRetryAfter = 60 * time.Second
	// maxBody bounds an answer read into memory.
	maxBody = 8 << 20
	// leadWeight is the weight of a new sample in the smoothed one-way time
	// (TCP's SRTT weight).
	leadWeight = 0.125
)

// request is one call to eBay.
type request struct {
	api    string
	method string
	url    string
	header http.Header
	body   []byte
	// retry marks calls that are safe to send again after a failure that
	// may have reached eBay. place_proxy_bid never is.
	retry bool
	// timing marks calls whose round trip feeds the send lead (short calls
	// to the API host, like the bid itself).
	timing bool
}

// answer is an HTTP answer read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends req, retrying when req.retry allows it, honouring 429s, and
// returns the last answer. A non-nil error means no usable answer: it wraps
// market.ErrUnavailable (or the context's error).
func (a *Adapter) do(ctx context.Context, req request) (answer, error) {
	wait := a.cfg.Backoff
	var lastErr error
	for attempt := 1; ; attempt++ {
		if err := a.awaitCooldown(ctx, req.api); err != nil {
			return answer{}, err
		}
		ans, err := a.once(ctx, req)
		var retry bool
		var after time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return answer{}, ctx.Err()
			}
			lastErr = fmt.Errorf("ebay %s: %v: %w", req.api, err, market.ErrUnavailable)
			retry = req.retry // the call may have reached eBay
		case ans.status == http.StatusTooManyRequests:
			after = retryAfter(ans.header, time.Now())
			if after <= 0 {
				after = wait
			}
			a.setCooldown(req.api, after)
			lastErr = fmt.Errorf("ebay %s: call limit reached (429); retry after %v: %w", req.api, after.Round(time.Millisecond), market.ErrUnavailable)
			// eBay refuses a limited call before acting on it, so even a
			// bid may be sent again; the cooldown above spaces the calls.
			retry = true
		case ans.status >= 500:
			lastErr = fmt.Errorf("ebay %s: HTTP %d: %w", req.api, ans.status, market.ErrUnavailable)
			retry = req.retry
			after = retryAfter(ans.header, time.Now())
		default:
			return ans, nil
		}
		if !retry || attempt >= maxAttempts {
			if err == nil && ans.status >= 500 {
				return ans, nil // the caller reads eBay's error body
			}
			return answer{}, lastErr
		}
		if after <= 0 {
			after = wait + time.Duration(rand.Int64N(int64(wait/4)+1))
		}
		if dl, ok := ctx.Deadline(); ok && time.Now().Add(after).After(dl) {
			return answer{}, lastErr
		}
		if !sleep(ctx, after) {
			return answer{}, ctx.Err()
		}
		wait = min(2*wait, backoffMax)
	}
}

// once sends one attempt, bounded by the per-attempt timeout, and records
// its metrics, round trip and Date header.
func (a *Adapter) once(ctx context.Context, req request) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, req.url, body)
	if err != nil {
		return answer{}, err
	}
	for k, vs := range req.header {
		hr.Header[k] = vs
	}
	sent := a.clk.Now()
	resp, err := a.hc.Do(hr)
	if err != nil {
		a.calls.WithLabelValues(req.api, "error").Inc()
		return answer{}, scrub(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	recv := a.clk.Now()
	a.calls.WithLabelValues(req.api, strconv.Itoa(resp.StatusCode)).Inc()
	if err != nil {
		return answer{}, scrub(err)
	}
	a.observe(sent, recv, resp.Header.Get("Date"), req.timing)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// scrub drops the URL from a transport error: URLs carry no secrets here,
// but a *url.Error's text repeats the whole request line.
func scrub(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// awaitCooldown waits out a 429 on api, or fails at once when ctx would
// end first.
func (a *Adapter) awaitCooldown(ctx context.Context, api string) error {
	a.mu.Lock()
	until := a.cooldown[api]
	a.mu.Unlock()
	d := time.Until(until)
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && until.After(dl) {
		return fmt.Errorf("ebay %s: call limit reached; calls resume in %v: %w", api, d.Round(time.Millisecond), market.ErrUnavailable)
	}
	if !sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

func (a *Adapter) setCooldown(api string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if until := time.Now().Add(d); until.After(a.cooldown[api]) {
		a.cooldown[api] = until
	}
}

// sleep waits d of real time; false when ctx ended first. Retry waits
// pace network calls, so they run on real time like the calls and their
// deadlines, not on the Clock seam (a fake clock would stall them).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
