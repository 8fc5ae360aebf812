package robust

import "testing"

// TestInducingRank checks the default number of inducing items: the
// families' default while N M^2 stays within 4,000 x 128^2, then the largest
// M that keeps it there, never below minInducing nor above the default.
func TestInducingRank(t *testing.T) {
	for _, tc := range []struct {
		n, m, want int
	}{
		{1000, 128, 128},
		{4000, 128, 128},
		{4001, 128, 127},   // sqrt(65,536,000 / 4,001) = 127.98
		{8000, 128, 90},    // sqrt(8,192) = 90.5
		{16000, 128, 64},   // sqrt(4,096)
		{64000, 128, 32},   // sqrt(1,024)
		{1000000, 128, 32}, // the floor
		{16000, 50, 50},    // never above the families' default
		{200, 99, 99},
	} {
		if got := InducingRank(tc.n, tc.m); got != tc.want {
			t.Errorf("InducingRank(%d, %d) = %d, want %d", tc.n, tc.m, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("InducingRank(0, 128) did not panic")
		}
	}()
	InducingRank(0, 128)
}
