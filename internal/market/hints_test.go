package market_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
)

type leader struct{ market.Market }

func (leader) SendLead() time.Duration { return 42 * time.Millisecond }

type wrapper struct{ market.Market }

func (w wrapper) Unwrap() market.Market { return w.Market }

func TestSendLead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		m    market.Market
		want time.Duration
	}{
		{"a leader", leader{}, 42 * time.Millisecond},
		{"through two wrappers", wrapper{wrapper{leader{}}}, 42 * time.Millisecond},
		{"no leader", wrapper{}, 0},
		{"nil", nil, 0},
	}
	for _, c := range cases {
		if got := market.SendLead(c.m); got != c.want {
			t.Errorf("%s: SendLead = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if market.Fresh(ctx) || !market.Fresh(market.WithFresh(ctx)) {
		t.Error("Fresh does not report WithFresh")
	}
}

type explained struct{ error }

func (explained) Explain() string { return "link again" }

func TestExplain(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("call: %w", explained{errors.New("raw")})
	if got := market.Explain(err); got != "link again" {
		t.Errorf("Explain = %q", got)
	}
	if got := market.Explain(errors.New("plain")); got != "" {
		t.Errorf("Explain(plain) = %q, want empty", got)
	}
}
