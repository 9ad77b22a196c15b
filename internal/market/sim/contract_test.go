package sim_test

import (
	"testing"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/contract"
	"github.com/sniped/sniped/internal/market/sim"
)

// TestContract runs the marketplace contract suite on the simulator.
func TestContract(t *testing.T) {
	t.Parallel()
	contract.Run(t, func(t *testing.T) contract.Harness {
		c := clock.NewFake(t0)
		s, err := sim.Open(t.Context(), sim.Config{Seed: 3, Items: 5, Bidders: sim.BiddersOff, Clock: c, ImageBaseURL: "http://sim.test"})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return contract.Harness{Market: s, Control: contract.Sim(s, c)}
	})
}
