package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// randRows returns a rows×r row-major matrix of standard normals with
// every seventh value 0 (the kernels skip zero multipliers).
func randRows(rng *rand.Rand, rows, r int) []float64 {
	a := make([]float64, rows*r)
	for i := range a {
		if i%7 != 3 {
			a[i] = rng.NormFloat64()
		}
	}
	return a
}

// TestSyrkUpperTrans: the rank-k update equals gonum's Dsyrk (the
// reference it replaces) to rounding, 1e-13 relative to the sum of the
// absolute products, for odd and even sizes, alpha ±1 and 0.3, beta 0
// (over NaNs) and 1; its lower triangle is left alone.
func TestSyrkUpperTrans(t *testing.T) {
	for _, tc := range []struct {
		rows, r     int
		alpha, beta float64
	}{
		{1, 1, 1, 0}, {5, 3, 1, 1}, {600, 9, 1, 1}, {513, 10, -1, 0}, {40, 31, -1, 1}, {100, 32, 1, 0}, {257, 97, 0.3, 1}, {64, 130, 1, 0}, {3, 70, 0, 1},
	} {
		t.Run(fmt.Sprintf("%dx%d/a=%v/b=%v", tc.rows, tc.r, tc.alpha, tc.beta), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.rows), uint64(tc.r)))
			a := randRows(rng, tc.rows, tc.r)
			c0 := randRows(rng, tc.r, tc.r)
			if tc.beta == 0 {
				for i := range c0 {
					c0[i] = math.NaN()
				}
			}
			want := append([]float64(nil), c0...)
			got := append([]float64(nil), c0...)
			blas64.Syrk(blas.Trans, tc.alpha, blas64.General{Rows: tc.rows, Cols: tc.r, Stride: tc.r, Data: a}, tc.beta,
				blas64.Symmetric{Uplo: blas.Upper, N: tc.r, Stride: tc.r, Data: want})
			SyrkUpperTrans(tc.alpha, a, tc.rows, tc.r, tc.beta, got, nil)
			for i := 0; i < tc.r; i++ {
				for j := 0; j < tc.r; j++ {
					g, w := got[i*tc.r+j], want[i*tc.r+j]
					if j < i {
						if math.Float64bits(g) != math.Float64bits(c0[i*tc.r+j]) {
							t.Fatalf("lower c[%d,%d] changed to %v", i, j, g)
						}
						continue
					}
					scale := math.Abs(tc.alpha) + 1
					for l := 0; l < tc.rows; l++ {
						scale += math.Abs(tc.alpha * a[l*tc.r+i] * a[l*tc.r+j])
					}
					if math.Abs(g-w) > 1e-13*scale {
						t.Fatalf("c[%d,%d] = %v, gonum's Dsyrk %v", i, j, g, w)
					}
				}
			}
		})
	}
}

// posDefChol returns the lower Cholesky factor (row-major, upper part 0) of
// I + A'A for a random rows×r A.
func posDefChol(rng *rand.Rand, rows, r int) []float64 {
	a := randRows(rng, rows, r)
	h := make([]float64, r*r)
	for i := 0; i < r; i++ {
		h[i*r+i] = 1
	}
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: rows, Cols: r, Stride: r, Data: a}, 1, blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: h})
	for i := 0; i < r; i++ {
		for j := 0; j < i; j++ {
			h[i*r+j] = h[j*r+i]
		}
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: r, Stride: r, Data: h}); !ok {
		panic("not positive definite")
	}
	for i := 0; i < r; i++ {
		clear(h[i*r+i+1 : (i+1)*r])
	}
	return h
}

// TestTrsmRightLowerTrans: the triangular solve equals gonum's Dtrsm
// (right side, L transposed) to 1e-10 relative, and solves: y L' = b to
// 1e-9.
func TestTrsmRightLowerTrans(t *testing.T) {
	for _, tc := range []struct{ rows, r int }{{1, 1}, {3, 5}, {2, 2}, {31, 40}, {32, 33}, {100, 97}, {250, 64}, {7, 9}} {
		t.Run(fmt.Sprintf("%dx%d", tc.rows, tc.r), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.rows), 7))
			l := posDefChol(rng, 2*tc.r, tc.r)
			b := randRows(rng, tc.rows, tc.r)
			want := append([]float64(nil), b...)
			got := append([]float64(nil), b...)
			blas64.Trsm(blas.Right, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: tc.r, Stride: tc.r, Data: l},
				blas64.General{Rows: tc.rows, Cols: tc.r, Stride: tc.r, Data: want})
			TrsmRightLowerTrans(l, tc.r, got, tc.rows)
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-10*(1+math.Abs(want[i])) {
					t.Fatalf("x[%d] = %v, gonum's Dtrsm %v", i, got[i], want[i])
				}
			}
			// y L' = b, every row.
			for i := 0; i < tc.rows; i++ {
				y := got[i*tc.r : (i+1)*tc.r]
				for j := 0; j < tc.r; j++ {
					s := 0.0
					for k := 0; k <= j; k++ {
						s += y[k] * l[j*tc.r+k]
					}
					if bj := b[i*tc.r+j]; math.Abs(s-bj) > 1e-9*(1+math.Abs(bj)) {
						t.Fatalf("row %d: (y L')_%d = %v, want %v", i, j, s, bj)
					}
				}
			}
		})
	}
}

// BenchmarkSyrkTrsm compares the AVX2 kernels with gonum's Dsyrk and
// Dtrsm at the shapes of EP's refresh and marginals (N items, rank r of
// the text prior: 1,000 items at rank 349 is the ladder's text row).
func BenchmarkSyrkTrsm(b *testing.B) {
	for _, sz := range []struct{ n, r int }{{250, 120}, {1000, 349}, {4000, 500}} {
		rng := rand.New(rand.NewPCG(1, uint64(sz.n)))
		a := randRows(rng, sz.n, sz.r)
		c := make([]float64, sz.r*sz.r)
		l := posDefChol(rng, sz.r, sz.r)
		x := make([]float64, len(a))
		work := make([]float64, len(a))
		b.Run(fmt.Sprintf("syrk/gonum/N=%d/r=%d", sz.n, sz.r), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				blas64.Syrk(blas.Trans, 1, blas64.General{Rows: sz.n, Cols: sz.r, Stride: sz.r, Data: a}, 0, blas64.Symmetric{Uplo: blas.Upper, N: sz.r, Stride: sz.r, Data: c})
			}
		})
		b.Run(fmt.Sprintf("syrk/avx2/N=%d/r=%d", sz.n, sz.r), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				SyrkUpperTrans(1, a, sz.n, sz.r, 0, c, work)
			}
		})
		b.Run(fmt.Sprintf("trsm/gonum/N=%d/r=%d", sz.n, sz.r), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				copy(x, a)
				blas64.Trsm(blas.Right, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: sz.r, Stride: sz.r, Data: l},
					blas64.General{Rows: sz.n, Cols: sz.r, Stride: sz.r, Data: x})
			}
		})
		b.Run(fmt.Sprintf("trsm/avx2/N=%d/r=%d", sz.n, sz.r), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				copy(x, a)
				TrsmRightLowerTrans(l, sz.r, x, sz.n)
			}
		})
	}
}

// TestDot2x2: the assembly kernel (where it runs) gives the bits of
// dot2x2Generic, its lane-by-lane description, for lengths around the
// eight-element step, and the dots to rounding.
func TestDot2x2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 349, 1001} {
		v := randRows(rng, 4, n)
		a0, a1, b0, b1 := v[:n], v[n:2*n], v[2*n:3*n], v[3*n:]
		g0, g1, g2, g3 := dot2x2(a0, a1, b0, b1, n)
		w0, w1, w2, w3 := dot2x2Generic(a0, a1, b0, b1, n)
		got, want := []float64{g0, g1, g2, g3}, []float64{w0, w1, w2, w3}
		plain := []float64{floats.Dot(a0, b0), floats.Dot(a0, b1), floats.Dot(a1, b0), floats.Dot(a1, b1)}
		for k := range got {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
				t.Errorf("n=%d: product %d = %v, dot2x2Generic %v", n, k, got[k], want[k])
			}
			if math.Abs(got[k]-plain[k]) > 1e-12*float64(n) {
				t.Errorf("n=%d: product %d = %v, floats.Dot %v", n, k, got[k], plain[k])
			}
		}
	}
}
