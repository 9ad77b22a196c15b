package sniper

import (
	"runtime"
	"testing"
)

func TestSetProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	tests := []struct {
		name string
		env  string // GOMAXPROCS; "" unset
		have int
		want int
	}{
		{"raised to the minimum", "", 2, MinProcs},
		{"more already", "", MinProcs + 4, MinProcs + 4},
		{"the operator's choice stands", "2", 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tc.env)
			runtime.GOMAXPROCS(tc.have)
			if got := SetProcs(); got != tc.want {
				t.Errorf("SetProcs() = %d, want %d", got, tc.want)
			}
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Errorf("GOMAXPROCS after SetProcs = %d, want %d", got, tc.want)
			}
		})
	}
}
