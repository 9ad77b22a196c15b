package markettest_test

import (
	"testing"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market/contract"
	"github.com/sniped/sniped/internal/market/markettest"
)

// TestContract runs the marketplace contract suite on the test fake.
func TestContract(t *testing.T) {
	t.Parallel()
	contract.Run(t, func(t *testing.T) contract.Harness {
		c := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		m := markettest.New(c)
		return contract.Harness{Market: m, Control: contract.Fake(m, c)}
	})
}
