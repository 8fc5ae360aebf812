package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
)

// NewPivotedFactor returns a low-rank factor C ≈ G G' by the partial
// Cholesky decomposition with diagonal pivoting (Harbrecht, Peters &
// Schneider 2012; Fine & Scheinberg 2001): at each step the item with the
// largest residual variance becomes a pivot, until the trace of the
// residual C - G G' (a positive semidefinite matrix) is at most tol, or C
// is exhausted. G keeps the items' order (row i is item i; it is not
// triangular) and has the rank r that tol requires: O(N r^2) time and only
// r columns of C are read beyond its diagonal. Kernels whose spectra decay
// fast (RBF with long length-scales, linear kernels, text kernels) need r
// much smaller than N.
//
// The residual trace bounds the error of everything computed from the
// factor: it is stored in Factor.Residual. tol must be non-negative; tol 0
// continues until the residual is rounding noise (N eps times the largest
// diagonal element), which is a full, exact factor for a positive definite
// C.
func NewPivotedFactor(c mat.Symmetric, tol float64) (*Factor, error) {
	return NewPivotedFactorRank(c, tol, c.SymmetricDim())
}

// NewPivotedFactorRank is NewPivotedFactor stopping also at rank maxRank
// (at least 1): the residual trace, in Factor.Residual, then says how much
// of C the factor leaves out.
func NewPivotedFactorRank(c mat.Symmetric, tol float64, maxRank int) (*Factor, error) {
	if !(tol >= 0) {
		panic(fmt.Sprintf("gp: NewPivotedFactor: tol = %v", tol))
	}
	if maxRank < 1 {
		panic(fmt.Sprintf("gp: NewPivotedFactorRank: maxRank = %d", maxRank))
	}
	n := c.SymmetricDim()
	if n == 0 {
		return nil, multirater.DataErrorf("empty kernel matrix")
	}
	if lr := lowRankOf(c); lr != nil {
		// The leading eigen-directions instead of pivots: the best rank-k
		// part of the low-rank covariance for the same residual trace.
		k := 0
		left := lr.Trace
		for k < lr.r && k < maxRank && (k == 0 || left > tol) {
			left -= lr.lam[k]
			k++
		}
		return lr.factor(k), nil
	}
	return pivoted(n, func(i int) float64 { return c.At(i, i) }, func(p int, dst []float64) {
		for i := range dst {
			dst[i] = c.At(i, p)
		}
	}, tol, 0, maxRank)
}

// pivoted is NewPivotedFactorRank for a matrix given by its diagonal and
// its columns (col sets dst to column p).
func pivoted(n int, diagAt func(i int) float64, colTo func(p int, dst []float64), tol float64, minRank, maxRank int) (*Factor, error) {
	d := make([]float64, n)
	dmax := 0.0
	for i := range d {
		v := diagAt(i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, multirater.DataErrorf("kernel matrix element (%d, %d) is %v", i, i, v)
		}
		if v < 0 {
			return nil, multirater.DataErrorf("kernel matrix is not positive semidefinite (diagonal element %d is %v)", i, v)
		}
		d[i] = v
		dmax = math.Max(dmax, v)
	}
	if !(dmax > 0) {
		return nil, multirater.DataErrorf("kernel matrix is zero")
	}
	floor := float64(n) * 0x1p-52 * dmax
	// G grows by doubling its column capacity; row-major with stride cp.
	cp := min(n, 64)
	g := make([]float64, n*cp)
	col := make([]float64, n)
	piv := make([]bool, n)
	var order []int
	r := 0
	for r < n && r < maxRank {
		trace, p := 0.0, -1
		for i, v := range d {
			if piv[i] {
				continue
			}
			trace += v
			if p < 0 || v > d[p] {
				p = i
			}
		}
		// At least one column (C = 0 was refused above): a factor of rank
		// 0 has no whitened coordinates (a tolerance at or above the trace
		// of C, as a very noisy likelihood asks, would otherwise leave none).
		if (r >= max(minRank, 1) && trace <= tol) || d[p] <= floor {
			break
		}
		if r == cp {
			ncp := min(n, 2*cp)
			ng := make([]float64, n*ncp)
			for i := 0; i < n; i++ {
				copy(ng[i*ncp:i*ncp+r], g[i*cp:i*cp+r])
			}
			g, cp = ng, ncp
		}
		// col = C[:, p] - G[:, :r] G[p, :r]'.
		colTo(p, col)
		for i := range col {
			if math.IsNaN(col[i]) || math.IsInf(col[i], 0) {
				return nil, multirater.DataErrorf("kernel matrix element (%d, %d) is %v", i, p, col[i])
			}
		}
		if r > 0 {
			blas64.Gemv(blas.NoTrans, -1, blas64.General{Rows: n, Cols: r, Stride: cp, Data: g},
				blas64.Vector{N: r, Inc: 1, Data: g[p*cp : p*cp+r]}, 1, blas64.Vector{N: n, Inc: 1, Data: col})
		}
		s := math.Sqrt(d[p])
		for i := range col {
			v := 0.0
			if !piv[i] {
				v = col[i] / s
			}
			if i == p {
				v = s
			}
			g[i*cp+r] = v
			d[i] -= v * v
			if d[i] < 0 {
				d[i] = 0
			}
		}
		d[p] = 0
		piv[p] = true
		order = append(order, p)
		r++
	}
	f := &Factor{N: n, R: r, G: make([]float64, n*r), Pivots: order}
	for i := 0; i < n; i++ {
		copy(f.G[i*r:(i+1)*r], g[i*cp:i*cp+r])
	}
	for _, v := range d {
		f.Residual += v
	}
	f.Dropped = n - r
	f.setOneProj()
	return f, nil
}
