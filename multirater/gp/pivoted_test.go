package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/kernel"
)

// TestPivotedFactor: the pivoted Cholesky factor reproduces C to its
// residual, the residual it reports is trace(C - G G') and at most tol, and
// a singular C (linear kernel on 3 inputs) stops at its rank.
func TestPivotedFactor(t *testing.T) {
	const n = 120
	rng := rand.New(rand.NewPCG(5, 6))
	x := testutil.NormalMatrix(rng, n, 3)
	in := kernel.Inputs{N: n, X: x}
	var rbf, lin mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&rbf, in)
	lin.SymOuterK(1, x)
	for _, tc := range []struct {
		name     string
		c        *mat.SymDense
		tol      float64
		wantRank int // 0: not checked
	}{
		{"rbf/exact", &rbf, 0, 0},
		{"rbf/1e-6", &rbf, 1e-6, 0},
		{"rbf/1e-2", &rbf, 1e-2, 0},
		{"linear/exact", &lin, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewPivotedFactor(tc.c, tc.tol)
			if err != nil {
				t.Fatal(err)
			}
			g := mat.NewDense(n, f.R, f.G)
			var ggt mat.SymDense
			ggt.SymOuterK(1, g)
			tr, maxAbs, scale := 0.0, 0.0, 0.0
			for i := 0; i < n; i++ {
				tr += tc.c.At(i, i) - ggt.At(i, i)
				scale = math.Max(scale, tc.c.At(i, i))
				for j := 0; j < n; j++ {
					maxAbs = math.Max(maxAbs, math.Abs(tc.c.At(i, j)-ggt.At(i, j)))
				}
			}
			t.Logf("rank %d, residual %.3g (reported %.3g), max |C - GG'| %.3g", f.R, tr, f.Residual, maxAbs)
			if math.Abs(tr-f.Residual) > 1e-10*scale*n {
				t.Errorf("reported residual %.6g, trace(C - GG') %.6g", f.Residual, tr)
			}
			if f.Residual > tc.tol+1e-10*scale*n {
				t.Errorf("residual %.3g above tol %g", f.Residual, tc.tol)
			}
			// A PSD residual's elements are bounded by its trace.
			if maxAbs > f.Residual+1e-10*scale {
				t.Errorf("max |C - GG'| = %.3g above the residual trace %.3g", maxAbs, f.Residual)
			}
			if tc.wantRank > 0 && f.R != tc.wantRank {
				t.Errorf("rank %d, want %d", f.R, tc.wantRank)
			}
			if f.R+f.Dropped != n {
				t.Errorf("rank %d + dropped %d != %d", f.R, f.Dropped, n)
			}
		})
	}
}

// TestPivotedFactorHighTolerance: a tolerance at or above the trace of C
// (a very noisy likelihood asks for one) still gives a factor of rank 1,
// where it panicked in BLAS with rank 0.
func TestPivotedFactorHighTolerance(t *testing.T) {
	id := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	f, err := NewPivotedFactor(id, 3.1)
	if err != nil || f.R != 1 || math.Abs(f.Residual-2) > 1e-12 {
		t.Fatalf("identity, tol 3.1: %+v, %v", f, err)
	}
}

// TestPivotedFactorRank: the rank bound stops the factor at maxRank, the
// residual it reports is then trace(C - G G') (positive), and the first
// columns are those of the factor without the bound.
func TestPivotedFactorRank(t *testing.T) {
	const n = 80
	rng := rand.New(rand.NewPCG(7, 8))
	x := testutil.NormalMatrix(rng, n, 2)
	var c mat.SymDense
	kernel.RBF{Gamma: 2}.GramTo(&c, kernel.Inputs{N: n, X: x})
	full, err := NewPivotedFactor(&c, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 5, 20} {
		f, err := NewPivotedFactorRank(&c, 0, m)
		if err != nil {
			t.Fatal(err)
		}
		if f.R != m {
			t.Fatalf("maxRank %d: rank %d", m, f.R)
		}
		res := 0.0
		for i := 0; i < n; i++ {
			res += c.At(i, i)
			for j := 0; j < m; j++ {
				res -= f.G[i*m+j] * f.G[i*m+j]
				if d := f.G[i*m+j] - full.G[i*full.R+j]; math.Abs(d) > 1e-12 {
					t.Fatalf("maxRank %d: G[%d,%d] = %v, unbounded %v", m, i, j, f.G[i*m+j], full.G[i*full.R+j])
				}
			}
		}
		if !(f.Residual > 0) || math.Abs(f.Residual-res) > 1e-9*float64(n) {
			t.Errorf("maxRank %d: residual %v, trace(C - G G') %v", m, f.Residual, res)
		}
	}
}
