package analysis

import (
	"math"
	"testing"
)

// TestMcNemarExact checks the exact McNemar p-values against
// scipy.stats.binomtest (testdata/mcnemar_scipy.py, scipy 1.10).
func TestMcNemarExact(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		want float64
	}{
		{13, 26, 0.05325191409792752},
		{0, 5, 0.0625},
		{7, 7, 1.0},
		{61, 40, 0.04604406692934279},
		{1, 0, 1.0},
		{120, 95, 0.10145232764870683},
		{0, 0, 1},
	} {
		if got := mcNemarExact(tc.b, tc.c); math.Abs(got-tc.want) > 1e-10*tc.want {
			t.Errorf("mcNemarExact(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
}
