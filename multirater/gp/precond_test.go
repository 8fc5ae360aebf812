package gp

import "testing"

// TestAddRowGram: the lower triangle of the sum of two rows' outer
// products, by hand.
func TestAddRowGram(t *testing.T) {
	dst := make([]float64, 4)
	AddRowGram(dst, []float64{1, 2})
	AddRowGram(dst, []float64{3, -1})
	// [1 2]'[1 2] + [3 -1]'[3 -1] = [[10 -1] [-1 5]]; upper entry untouched.
	want := []float64{10, 0, -1, 5}
	sq := make([]float64, 2)
	AddRowSquares(sq, []float64{1, 2})
	AddRowSquares(sq, []float64{3, -1})
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("AddRowGram: %v, want %v", dst, want)
		}
	}
	if sq[0] != 10 || sq[1] != 5 {
		t.Errorf("AddRowSquares: %v, want [10 5]", sq)
	}
}

// TestPrecBlock: the leading directions with lambda dmax >= 1/2, bounded
// by the rank, MaxPrecBlock and the 2^22 numbers of the groups' blocks.
func TestPrecBlock(t *testing.T) {
	f := &Factor{R: 4, Lam: []float64{4, 2, 1, 0.1}}
	for _, tc := range []struct {
		dmax   float64
		groups int
		want   int
	}{
		{1, 1, 3},       // 0.1 < 1/2
		{0.2, 1, 1},     // 2*0.2 < 1/2
		{10, 1, 4},      // all, bounded by the rank
		{1, 1 << 21, 1}, // sqrt(2^22/2^21) = 1.41: one direction
	} {
		if got := f.PrecBlock(tc.dmax, tc.groups); got != tc.want {
			t.Errorf("PrecBlock(%v, %d) = %d, want %d", tc.dmax, tc.groups, got, tc.want)
		}
	}
}
