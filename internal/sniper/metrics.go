package sniper

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// latencyBuckets are fine around 0–100 ms, where firing lateness should
// live, with a tail for the bad days. (Marketplace call metrics are
// package market/metered's.)
var latencyBuckets = []float64{.0005, .001, .002, .003, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5}

// metrics are the sniper's Prometheus collectors.
type metrics struct {
	lateness  prometheus.Histogram
	outcomes  *prometheus.CounterVec
	scheduled prometheus.Gauge
	offset    prometheus.Gauge
}

// newMetrics makes the collectors, registered on reg unless reg is nil.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		lateness: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "sniped_firing_lateness_seconds",
			Help:    "Time from a snipe's target moment to the start of its bid call.",
			Buckets: latencyBuckets,
		}),
		outcomes: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sniped_snipe_outcomes_total",
			Help: "Snipe outcomes recorded, by outcome shorthand.",
		}, []string{"outcome"}),
		scheduled: f.NewGauge(prometheus.GaugeOpts{
			Name: "sniped_scheduled_snipes",
			Help: "Armed snipes due within the in-memory horizon.",
		}),
		offset: f.NewGauge(prometheus.GaugeOpts{
			Name: "sniped_clock_offset_seconds",
			Help: "Measured marketplace clock minus local clock.",
		}),
	}
}
