package gp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLowRankColumnsShare checks the pivoting stopped by a share of the
// trace: the rank kept is the smallest from minRank (at most maxRank) that
// leaves out at most the share, and the factor is NewLowRankColumns's at
// that rank, bit for bit (the first pivots do not depend on the stop), with
// MaxRank the rank kept so that that call rebuilds it.
func TestLowRankColumnsShare(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 4))
	const n, d = 300, 4
	x := make([][]float64, n)
	for i := range x {
		for a := 0; a < d; a++ {
			x[i] = append(x[i], rng.NormFloat64())
		}
	}
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = 1
	}
	col := func(p int, dst []float64) {
		for i := range dst {
			s := 0.0
			for a := 0; a < d; a++ {
				s += (x[i][a] - x[p][a]) * (x[i][a] - x[p][a])
			}
			dst[i] = math.Exp(-0.25 * s)
		}
	}
	for _, tc := range []struct {
		name             string
		minRank, maxRank int
		share            float64
		want             string // "share": stopped by the share; "min", "max": at that bound
	}{
		{"share between the bounds", 10, 200, 0.05, "share"},
		{"share met below minRank", 150, 200, 0.05, "min"},
		{"budget before the share", 10, 20, 0.001, "max"},
		{"minRank = maxRank", 40, 40, 0.05, "max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr, err := NewLowRankColumnsShare(diag, col, tc.minRank, tc.maxRank, tc.share)
			if err != nil {
				t.Fatal(err)
			}
			r := lr.Rank()
			if r < tc.minRank || r > tc.maxRank || lr.MaxRank != r {
				t.Fatalf("rank %d (MaxRank %d), want in [%d, %d] with MaxRank the rank", r, lr.MaxRank, tc.minRank, tc.maxRank)
			}
			left := lr.Residual() / lr.Trace
			switch tc.want {
			case "share":
				if r == tc.minRank || r == tc.maxRank || left > tc.share {
					t.Fatalf("rank %d leaves out %.4f, want stopped by the share %v strictly between the bounds", r, left, tc.share)
				}
				// One pivot fewer leaves out more than the share.
				fewer, err := NewLowRankColumns(diag, col, r-1, 0)
				if err != nil {
					t.Fatal(err)
				}
				if fewer.Residual() <= tc.share*fewer.Trace {
					t.Errorf("rank %d already leaves out %.4f <= %v", r-1, fewer.Residual()/fewer.Trace, tc.share)
				}
			case "min":
				if r != tc.minRank {
					t.Errorf("rank %d, want minRank %d (the share is met before it)", r, tc.minRank)
				}
			case "max":
				if r != tc.maxRank {
					t.Errorf("rank %d, want maxRank %d", r, tc.maxRank)
				}
			}
			same, err := NewLowRankColumns(diag, col, r, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i += 13 {
				for j := 0; j < n; j += 17 {
					if lr.At(i, j) != same.At(i, j) {
						t.Fatalf("(%d, %d) = %v, NewLowRankColumns at rank %d gives %v", i, j, lr.At(i, j), r, same.At(i, j))
					}
				}
			}
		})
	}
}

// TestShareRank checks the rank read from a basis' eigenvalues against a
// direct count on hand-made spectra.
func TestShareRank(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lam     []float64
		trace   float64
		minRank int
		share   float64
		want    int
	}{
		// Left out with k directions: 10, 5, 2.5, 1.5, 1.
		{"share met with equality at 2", []float64{5, 2.5, 1, 0.5}, 10, 1, 0.25, 2},
		{"share at 3", []float64{5, 2.5, 1, 0.5}, 10, 1, 0.2, 3},
		{"share at 2, minRank 3", []float64{5, 2.5, 1, 0.5}, 10, 3, 0.5, 3},
		{"never met", []float64{5, 2.5, 1, 0.5}, 10, 1, 0.05, 4},
		{"met at minRank 0", []float64{5, 2.5, 1, 0.5}, 10, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &LowRank{r: len(tc.lam), lam: tc.lam, Trace: tc.trace}
			if got := c.ShareRank(tc.minRank, tc.share); got != tc.want {
				t.Errorf("ShareRank(%d, %v) = %d, want %d", tc.minRank, tc.share, got, tc.want)
			}
		})
	}
}

func TestLowRankColumnsShareCallerBugs(t *testing.T) {
	diag := []float64{1, 1}
	col := func(p int, dst []float64) { dst[0], dst[1] = 1, 0.5; dst[p] = 1 }
	for _, tc := range []struct {
		minRank, maxRank int
		share            float64
	}{{0, 1, 0.1}, {2, 1, 0.1}, {1, 2, 1}, {1, 2, -0.1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("minRank %d maxRank %d share %v: no panic", tc.minRank, tc.maxRank, tc.share)
				}
			}()
			NewLowRankColumnsShare(diag, col, tc.minRank, tc.maxRank, tc.share)
		}()
	}
}
