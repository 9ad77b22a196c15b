package metered_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/contract"
	"github.com/sniped/sniped/internal/market/markettest"
	"github.com/sniped/sniped/internal/market/metered"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestContract: the wrapper changes no behaviour.
func TestContract(t *testing.T) {
	t.Parallel()
	contract.Run(t, func(t *testing.T) contract.Harness {
		c := clock.NewFake(t0)
		m := markettest.New(c)
		return contract.Harness{Market: metered.New(m, c, prometheus.NewRegistry()), Control: contract.Fake(m, c)}
	})
}

// TestMetrics checks what each call records.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := clock.NewFake(t0)
	m := markettest.New(c)
	reg := prometheus.NewRegistry()
	mm := metered.New(m, c, reg)
	no := m.Add(markettest.ItemSpec{StartPrice: 1_00, EndsIn: time.Hour})
	m.SetInjector(func(method, user string, _ int64) error {
		if user == "down" {
			return market.ErrUnavailable
		}
		return nil
	})
	mm.Item(ctx, no)
	mm.Item(ctx, 1)                   // not found: rejected
	mm.PlaceBid(ctx, "ann", no, 50)   // too low: rejected
	mm.PlaceBid(ctx, "ann", no, 2_00) // accepted
	mm.BidState(ctx, "down", no)      // transient
	mm.Now(ctx)

	durations, errs := map[string]uint64{}, map[string]float64{}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "sniped_market_call_duration_seconds":
				durations[labels["method"]] = mt.GetHistogram().GetSampleCount()
			case "sniped_market_call_errors_total":
				errs[labels["method"]+"/"+labels["kind"]] = mt.GetCounter().GetValue()
			}
		}
	}
	wantDurations := map[string]uint64{"Item": 2, "PlaceBid": 2, "BidState": 1, "Now": 1}
	if !maps.Equal(durations, wantDurations) {
		t.Errorf("sniped_market_call_duration_seconds counts = %v, want %v", durations, wantDurations)
	}
	wantErrs := map[string]float64{"Item/rejected": 1, "PlaceBid/rejected": 1, "BidState/transient": 1}
	if !maps.Equal(errs, wantErrs) {
		t.Errorf("sniped_market_call_errors_total = %v, want %v", errs, wantErrs)
	}
}

func TestKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{market.ErrUnavailable, "transient"},
		{&market.BidError{Err: market.ErrUnavailable}, "transient"},
		{context.DeadlineExceeded, "transient"},
		{&market.BidError{Err: market.ErrTooLow}, "rejected"},
		{market.ErrNotFound, "rejected"},
		{market.ErrNotAuthorized, "other"},
		{context.Canceled, "other"},
	}
	for _, tt := range tests {
		if got := metered.Kind(tt.err); got != tt.want {
			t.Errorf("Kind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
