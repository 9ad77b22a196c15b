package market

import (
	"context"
	"errors"
	"time"
)

// freshKey marks a context whose Item lookups must not be served from a
// cache.
type freshKey struct{}

// WithFresh returns a context under which Market.Item asks the marketplace
// itself instead of a recent cached answer. Pre-flight near the shot uses
// it; everything else may be served from a short-lived cache (the eBay
// adapter's call budget).
func WithFresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

// Fresh reports whether ctx was made by WithFresh.
func Fresh(ctx context.Context) bool {
	v, _ := ctx.Value(freshKey{}).(bool)
	return v
}

// SendLeader is implemented by marketplaces reached over a network: a bid
// meant to arrive at time T should be sent SendLead() earlier (the measured
// one-way time). Wrappers should pass it through.
type SendLeader interface {
	SendLead() time.Duration
}

// Explainer is an error whose explanation is written for the user whose
// call failed: complete, actionable, and safe to show (no tokens, hosts or
// internals). Marketplaces return them for authorization problems, whose
// fix the user or operator must know (link again, approval missing).
type Explainer interface {
	error
	Explain() string
}

// Explain returns the first user-facing explanation in err's chain, or ""
// when there is none.
func Explain(err error) string {
	var e Explainer
	if errors.As(err, &e) {
		return e.Explain()
	}
	return ""
}

// SendLead is m's send lead (SendLeader), looking through wrappers that
// expose the market they wrap with Unwrap() Market; 0 when m is not
// reached over a network.
func SendLead(m Market) time.Duration {
	for m != nil {
		if l, ok := m.(SendLeader); ok {
			return l.SendLead()
		}
		u, ok := m.(interface{ Unwrap() Market })
		if !ok {
			return 0
		}
		m = u.Unwrap()
	}
	return 0
}
