package sniper

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sniped/sniped/internal/market/markettest"
)

// TestMetrics checks that a shot shows up in every metric the lead's
// /metrics endpoint exports for the sniper.
func TestMetrics(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.mk.SetOffset(1500 * time.Millisecond)
		b.start()
		no := b.mk.Add(markettest.ItemSpec{StartPrice: 100, EndsIn: 2 * time.Minute})
		sn := b.add(no, 500, 3, snipeOpts{})
		sleepTill(sn.Item.End.Add(time.Minute))

		fams, err := b.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				key := f.GetName()
				for _, l := range m.GetLabel() {
					key += "/" + l.GetValue()
				}
				switch {
				case m.GetCounter() != nil:
					got[key] = m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					got[key] = m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					got[key] = float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		want := map[string]float64{
			"sniped_firing_lateness_seconds":     1, // one shot observed
			"sniped_snipe_outcomes_total/placed": 1,
			"sniped_snipe_outcomes_total/won":    1,
			"sniped_clock_offset_seconds":        1.5,
			"sniped_scheduled_snipes":            0,
			"sniped_sniper_goroutines":           4, // the loops, all else done
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || g != w {
				t.Errorf("metric %s = %v (present %v), want %v", k, g, ok, w)
			}
		}
	})
}
