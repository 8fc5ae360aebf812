package numeric

import (
	"math"
	"testing"
)

// TestRound: significant digits by hand (x rounded half away from zero
// at the 6th or 7th significant digit); 0, NaN and infinities unchanged.
func TestRound(t *testing.T) {
	for _, tc := range []struct {
		x, r6, r7 float64
	}{
		{1.23456789, 1.23457, 1.234568},
		{-0.000123456789, -0.000123457, -0.0001234568},
		{987654321, 987654000, 987654300},
		{0, 0, 0},
		{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
	} {
		if got := Round6(tc.x); got != tc.r6 {
			t.Errorf("Round6(%v) = %v, want %v", tc.x, got, tc.r6)
		}
		if got := Round7(tc.x); got != tc.r7 {
			t.Errorf("Round7(%v) = %v, want %v", tc.x, got, tc.r7)
		}
	}
	if !math.IsNaN(Round6(math.NaN())) {
		t.Error("Round6(NaN) is not NaN")
	}
}

// TestParallelFor: every index is visited exactly once, for sizes below,
// at and above the number of workers.
func TestParallelFor(t *testing.T) {
	for _, n := range []int{0, 1, 2, 17, 1000} {
		seen := make([]int32, n)
		ParallelFor(n, func(i int) { seen[i]++ })
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d: index %d visited %d times", n, i, c)
			}
		}
	}
}
