package ep

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"concord/multirater/gp"
)

// chol is the lower Cholesky factor L (row-major r×r) of H = L L', with
// the triangular solves EP needs. It
// does what gonum's mat.Cholesky does without the condition estimate that
// mat.Cholesky makes on every solve and update (which dominated EP's
// sequential sweeps).
type chol struct {
	r int
	l []float64
}

func (c *chol) tri(uplo blas.Uplo) blas64.Triangular {
	return blas64.Triangular{Uplo: uplo, Diag: blas.NonUnit, N: c.r, Stride: c.r, Data: c.l}
}

// factorize sets L from the symmetric r×r matrix h (row-major, full). It
// reports whether h is positive definite.
func (c *chol) factorize(h []float64, r int) bool {
	c.r = r
	if cap(c.l) < r*r {
		c.l = make([]float64, r*r)
	}
	c.l = c.l[:r*r]
	copy(c.l, h)
	// gonum's LAPACK is row-major: Potrf on the lower triangle gives L.
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: r, Stride: r, Data: c.l})
	if !ok {
		return false
	}
	for i := 0; i < r; i++ {
		for k := i + 1; k < r; k++ {
			c.l[i*r+k] = 0
		}
	}
	return true
}

// solveTo sets dst = H^-1 b (dst may be b).
func (c *chol) solveTo(dst, b []float64) {
	if &dst[0] != &b[0] {
		copy(dst, b)
	}
	v := blas64.Vector{N: c.r, Inc: 1, Data: dst}
	blas64.Trsv(blas.NoTrans, c.tri(blas.Lower), v)
	blas64.Trsv(blas.Trans, c.tri(blas.Lower), v)
}

// lowerSolve sets x = L^-1 x.
func (c *chol) lowerSolve(x []float64) {
	blas64.Trsv(blas.NoTrans, c.tri(blas.Lower), blas64.Vector{N: c.r, Inc: 1, Data: x})
}

// upperSolve sets x = L'^-1 x.
func (c *chol) upperSolve(x []float64) {
	blas64.Trsv(blas.Trans, c.tri(blas.Lower), blas64.Vector{N: c.r, Inc: 1, Data: x})
}

// logDet returns log|H| = 2 sum log L_kk.
func (c *chol) logDet() float64 {
	s := 0.0
	for k := 0; k < c.r; k++ {
		s += math.Log(c.l[k*c.r+k])
	}
	return 2 * s
}

// rightSolve sets the m×r row-major b to b L'^-1 (row i becomes L^-1 b_i),
// what blas64.Trsm(blas.Right, blas.Trans, 1, L, b) computes
// (gp.TrsmRightLowerTrans: AVX2 and FMA where the processor has them).
func (c *chol) rightSolve(b []float64, m int) {
	gp.TrsmRightLowerTrans(c.l, c.r, b, m)
}
