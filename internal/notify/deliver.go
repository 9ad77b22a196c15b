package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/nicholas-fedor/shoutrrr/pkg/router"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"

	"github.com/sniped/sniped/internal/store"
)

// SignatureHeader carries a webhook's signature: "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>" with the target's secret>".
const SignatureHeader = "X-Sniped-Signature"

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// leaseMargin is how long a claimed delivery outlives its send timeout
// before another deliverer may take it (after a crash).
const leaseMargin = 15 * time.Second

// deliverLoop reads due deliveries every Poll and hands each to a bounded
// worker; it also prunes old events once an hour.
func (s *Service) deliverLoop(ctx context.Context) {
	var pruned time.Time
	s.every(ctx, s.cfg.Poll, func(ctx context.Context) {
		s.deliverDue(ctx)
		if now := s.clk.Now(); now.Sub(pruned) >= time.Hour {
			pruned = now
			if n, err := s.st.PruneEvents(ctx, now.Add(-s.cfg.EventsKeep)); err != nil && ctx.Err() == nil {
				s.log.Warn("prune events", "err", err)
			} else if n > 0 {
				s.log.Debug("pruned events", "count", n)
			}
		}
	})
}

// deliverDue starts every delivery due now, at most Workers at once. It
// returns once all of them have started.
func (s *Service) deliverDue(ctx context.Context) {
	due, err := s.st.DueDeliveries(ctx, s.clk.Now(), 4*s.cfg.Workers, s.perTarget())
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("read outbox", "err", err)
		}
		return
	}
	for _, d := range due {
		// The rest of a busy target's due deliveries wait for a later pass.
		s.mu.Lock()
		busy := s.inflight[d.Notifier.ID] >= s.perTarget()
		s.mu.Unlock()
		if busy {
			continue
		}
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		// The lease outlasts the send timeout: only a crash lets it lapse,
		// and then the delivery is sent again (at least once).
		claimed, err := s.st.ClaimDelivery(ctx, d, s.clk.Now().Add(s.cfg.SendTimeout+leaseMargin))
		if err != nil || !claimed {
			<-s.sem
			if err != nil && ctx.Err() == nil {
				s.log.Warn("claim delivery", "event", d.Event.ID, "notifier", d.Notifier.ID, "err", err)
			}
			continue
		}
		d.Attempts++
		s.mu.Lock()
		s.inflight[d.Notifier.ID]++
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				if s.inflight[d.Notifier.ID]--; s.inflight[d.Notifier.ID] <= 0 {
					delete(s.inflight, d.Notifier.ID)
				}
				s.mu.Unlock()
				<-s.sem
			}()
			s.attempt(ctx, d)
		})
	}
}

// perTarget is how many workers one target may use: all but one, so a
// slow or hanging target never holds up the others. A pass reads no more
// of one target's deliveries than that either, so its backlog never
// crowds the others out of the read.
func (s *Service) perTarget() int { return max(1, s.cfg.Workers-1) }

// attempt sends one delivery and records the result: delivered, retried
// after an exponential backoff, or, once RetryFor has passed since the
// event, failed with its target disabled.
func (s *Service) attempt(ctx context.Context, d store.Delivery) {
	err := s.send(ctx, d)
	if ctx.Err() != nil {
		return // shutting down: the lease lapses and the delivery is retried
	}
	now := s.clk.Now()
	r := store.DeliveryResult{EventID: d.Event.ID, NotifierID: d.Notifier.ID, Delivered: err == nil, Now: now}
	if err != nil {
		r.Error = err.Error()
		if now.Sub(d.Event.CreatedAt) >= s.cfg.RetryFor {
			r.Disable = true
			r.Error = fmt.Sprintf("gave up after %s of retries (%d attempts); last error: %s", s.cfg.RetryFor, d.Attempts, err)
		} else {
			// The last retry falls at RetryFor, not up to an hour after it.
			r.RetryAt = minTime(now.Add(s.backoff(d.Attempts)), d.Event.CreatedAt.Add(s.cfg.RetryFor))
		}
		s.log.Info("delivery failed", "event", d.Event.ID, "type", d.Event.Type, "notifier", d.Notifier.ID,
			"attempt", d.Attempts, "retry_at", r.RetryAt, "err", err)
	}
	if err := s.st.FinishDelivery(context.WithoutCancel(ctx), r); err != nil {
		s.log.Warn("record delivery", "event", d.Event.ID, "notifier", d.Notifier.ID, "err", err)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// backoff is the wait after the given number of failed attempts.
func (s *Service) backoff(attempts int) time.Duration {
	d := s.cfg.FirstRetry
	for i := 1; i < attempts && d < s.cfg.MaxRetry; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxRetry)
}

// send delivers one event to one target.
func (s *Service) send(ctx context.Context, d store.Delivery) error {
	n := d.Notifier
	rawURL, err := s.open(n.SealedURL, n.AccountID, "url")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
	defer cancel()
	if n.Kind == store.KindWebhook {
		secret, err := s.open(n.SealedSecret, n.AccountID, "secret")
		if err != nil {
			return err
		}
		return s.postWebhook(ctx, string(rawURL), string(secret), d.Event)
	}
	return s.sendShoutrrr(ctx, string(rawURL), text(d.Event))
}

func (s *Service) postWebhook(ctx context.Context, target, secret string, ev store.Event) error {
	body, err := envelope(ev)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("the URL cannot be requested")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sniped-webhook/1")
	req.Header.Set("X-Sniped-Event-Id", strconv.FormatInt(ev.ID, 10))
	req.Header.Set("X-Sniped-Event-Type", string(ev.Type))
	req.Header.Set(SignatureHeader, Sign(secret, s.clk.Now(), body))
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may hold a token: never repeat it
		}
		if errors.Is(err, ErrPrivateTarget) {
			return ErrPrivateTarget
		}
		return fmt.Errorf("request failed: %v", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the target answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// quotedURL matches URLs that library errors quote, to keep tokens out of
// stored errors and logs.
var quotedURL = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"]*`)

// sendShoutrrr sends text through shoutrrr. The library has no context
// support, so the send runs on its own goroutine and a timeout abandons it.
func (s *Service) sendShoutrrr(ctx context.Context, target, msg string) error {
	var sr router.ServiceRouter
	svc, err := sr.Locate(target)
	if err != nil {
		return errors.New("the service URL is no longer valid: " + quotedURL.ReplaceAllString(shoutrrrReason(err), "<url>"))
	}
	done := make(chan error, 1)
	go func() { done <- svc.Send(msg, &types.Params{}) }()
	select {
	case err := <-done:
		if err != nil {
			return errors.New(quotedURL.ReplaceAllString(err.Error(), "<url>"))
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no answer within %s", s.cfg.SendTimeout)
	}
}
