package lease

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the lease manager's Prometheus collectors.
type metrics struct {
	held        prometheus.Gauge
	renewals    prometheus.Counter
	renewErrors prometheus.Counter
	losses      prometheus.Counter
	acquired    prometheus.Counter
}

// newMetrics makes the collectors, registered on reg unless reg is nil.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		held: f.NewGauge(prometheus.GaugeOpts{
			Name: "sniped_sniper_partitions_held",
			Help: "Partitions of the sniper's work this instance holds a lease on (including ones being handed over).",
		}),
		renewals: f.NewCounter(prometheus.CounterOpts{
			Name: "sniped_sniper_lease_renewals_total",
			Help: "Successful lease renewal rounds (one statement renews every held lease).",
		}),
		renewErrors: f.NewCounter(prometheus.CounterOpts{
			Name: "sniped_sniper_lease_renewal_errors_total",
			Help: "Lease renewal rounds that failed (database unreachable or slow).",
		}),
		losses: f.NewCounter(prometheus.CounterOpts{
			Name: "sniped_sniper_lease_losses_total",
			Help: "Partitions lost because another instance took the lease after it expired.",
		}),
		acquired: f.NewCounter(prometheus.CounterOpts{
			Name: "sniped_sniper_lease_acquisitions_total",
			Help: "Partition leases acquired.",
		}),
	}
}
