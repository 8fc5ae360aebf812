package multirater

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// priorFactor factorises the Gaussian-process prior m ~ N(0, C) as
//
//	m = G w,  w ~ N(0, I_r),
//
// without ever inverting C, which may be singular:
//
//   - diagonal C (the identity kernel, or any kernel without cross terms):
//     G = diag(sqrt(c_n)), r = N; every operation is O(N);
//   - otherwise: C = Q Λ Q' (symmetric eigendecomposition, computed once per
//     fit: O(N^3), shared by all chains) truncated to its numerical rank r
//     (eigenvalues above N·eps·λ_max; those below are rounding noise and a
//     matrix with clearly negative eigenvalues is rejected), and
//     G = Q_r Λ_r^{1/2} (N×r). A singular C (linear kernel with fewer
//     covariates than items, duplicate items) simply has r < N.
//
// The posterior of w given Gaussian pseudo-observations with item precisions
// d_n and precision-weighted sums s_n (Rogers et al. eq. 19 and 27) is
//
//	w | ... ~ N(H^{-1} G's, H^{-1}),  H = I_r + G' D G,
//
// which is well conditioned (its eigenvalues are at least 1) whatever C is.
// It is the whitened form of eq. 27: m = G w has mean Σ s and covariance
// Σ = (C^{-1} + D)^{-1} when C is invertible.
type priorFactor struct {
	n, r int
	diag bool
	// sd[n] = sqrt(c_nn) when diag.
	sd []float64
	// lam are the kept eigenvalues (descending); g is G, n×r row-major.
	lam []float64
	g   []float64
	// gsq is G∘G (elementwise), built on first use by the conjugate
	// gradient sampler for its Jacobi preconditioner.
	gsq []float64
	// oneProj = G'1, used by the location move.
	oneProj []float64
	// dropped counts the eigenvalues below the rank tolerance.
	dropped int
}

// newPriorFactor factorises the n×n prior covariance c.
func newPriorFactor(c mat.Symmetric) (*priorFactor, error) {
	n := c.SymmetricDim()
	if n == 0 {
		return nil, errors.New("multirater: empty kernel matrix")
	}
	diag := true
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := c.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("multirater: kernel matrix element (%d, %d) is %v", i, j, v)
			}
			if i != j && v != 0 {
				diag = false
			}
		}
	}
	f := &priorFactor{n: n}
	if diag {
		f.diag = true
		f.r = n
		f.sd = make([]float64, n)
		f.lam = make([]float64, n)
		for i := range f.sd {
			v := c.At(i, i)
			if v < 0 {
				return nil, fmt.Errorf("multirater: kernel matrix is not positive semidefinite (diagonal element %d is %v)", i, v)
			}
			f.sd[i] = math.Sqrt(v)
			f.lam[i] = v
		}
		f.oneProj = append([]float64(nil), f.sd...)
		return f, nil
	}
	vals, vecs, err := symEigen(c)
	if err != nil {
		return nil, err
	}
	lmax := vals[n-1]
	if !(lmax > 0) {
		return nil, errors.New("multirater: kernel matrix is zero or not positive semidefinite")
	}
	if vals[0] < -1e-8*lmax {
		return nil, fmt.Errorf("multirater: kernel matrix is not positive semidefinite (eigenvalue %.3g, largest %.3g)", vals[0], lmax)
	}
	tol := float64(n) * 0x1p-52 * lmax
	r := 0
	for i := n - 1; i >= 0 && vals[i] > tol; i-- {
		r++
	}
	f.r = r
	f.dropped = n - r
	f.lam = make([]float64, r)
	f.g = make([]float64, n*r)
	raw := vecs.RawMatrix()
	for k := 0; k < r; k++ {
		col := n - 1 - k
		f.lam[k] = vals[col]
		s := math.Sqrt(vals[col])
		for i := 0; i < n; i++ {
			f.g[i*r+k] = raw.Data[i*raw.Stride+col] * s
		}
	}
	f.oneProj = make([]float64, r)
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	f.mulGT(f.oneProj, ones)
	return f, nil
}

func (f *priorFactor) general() blas64.General {
	return blas64.General{Rows: f.n, Cols: f.r, Stride: f.r, Data: f.g}
}

// mulG sets dst (length n) to G w.
func (f *priorFactor) mulG(dst, w []float64) {
	if f.diag {
		for i, s := range f.sd {
			dst[i] = s * w[i]
		}
		return
	}
	blas64.Gemv(blas.NoTrans, 1, f.general(), blas64.Vector{N: f.r, Inc: 1, Data: w}, 0, blas64.Vector{N: f.n, Inc: 1, Data: dst})
}

// mulGT sets dst (length r) to G' v.
func (f *priorFactor) mulGT(dst, v []float64) {
	if f.diag {
		for i, s := range f.sd {
			dst[i] = s * v[i]
		}
		return
	}
	blas64.Gemv(blas.Trans, 1, f.general(), blas64.Vector{N: f.n, Inc: 1, Data: v}, 0, blas64.Vector{N: f.r, Inc: 1, Data: dst})
}

// covTo returns G G' (the prior covariance as represented), for tests.
func (f *priorFactor) covTo() *mat.SymDense {
	c := mat.NewSymDense(f.n, nil)
	for i := 0; i < f.n; i++ {
		for j := i; j < f.n; j++ {
			var s float64
			if f.diag {
				if i == j {
					s = f.sd[i] * f.sd[i]
				}
			} else {
				s = vecDot(f.g[i*f.r:(i+1)*f.r], f.g[j*f.r:(j+1)*f.r])
			}
			c.SetSym(i, j, s)
		}
	}
	return c
}

// CG settings of the incomplete-design sampler.
const (
	// cgTol is the relative residual at which conjugate gradients stop.
	// The solution error is then about 1e-8 of the scale of the draw, far
	// below Monte Carlo error.
	cgTol = 1e-8
)

// gaussStats counts the work of a gaussSampler.
type gaussStats struct {
	Solves, Iterations, MaxIterations int
}

// gaussSampler draws w | pseudo-observations (see priorFactor) without
// allocating. One per chain.
type gaussSampler struct {
	f *priorFactor
	// scratch, length r or n.
	rhs, x, res, z, p, hp, tn []float64
	prec                      []float64
	precSet                   bool
	blockK                    int
	block                     []float64
	stats                     gaussStats
}

// setPrecDiag gives the diagonal of H = I + G' diag(d) G for the next
// conjugate-gradient solve (the Jacobi preconditioner), when the caller can
// compute it more cheaply than the O(N r) product (G∘G)' d.
func (s *gaussSampler) setPrecDiag(diag []float64) {
	s.setPrecBlock(0, nil, diag)
}

func newGaussSampler(f *priorFactor) *gaussSampler {
	s := &gaussSampler{f: f}
	if !f.diag {
		s.rhs = make([]float64, f.r)
		s.res = make([]float64, f.r)
		s.z = make([]float64, f.r)
		s.p = make([]float64, f.r)
		s.hp = make([]float64, f.r)
		s.prec = make([]float64, f.r)
		s.tn = make([]float64, f.n)
	}
	return s
}

// draw sets w to a draw from N(H^{-1} G's, H^{-1}), H = I + G' diag(d) G,
// and m to G w. equal reports that all d_n are equal, which makes H diagonal
// in the eigenbasis (a complete design: Rogers et al. eq. 27 with
// D = (sum_l alpha_l) I). w holds the previous draw on entry; the conjugate
// gradient solver starts from it.
//
// Cost: O(N) for a diagonal C; O(N r) for equal d (two products with G);
// O(N r) per conjugate-gradient iteration otherwise.
func (s *gaussSampler) draw(rng *rand.Rand, w, m, sum, d []float64, equal bool) error {
	f := s.f
	if f.diag {
		for i, sd := range f.sd {
			h := 1 + sd*sd*d[i]
			w[i] = sd*sum[i]/h + rng.NormFloat64()/math.Sqrt(h)
			m[i] = sd * w[i]
		}
		return nil
	}
	if equal {
		a := d[0]
		f.mulGT(s.rhs, sum)
		for k, l := range f.lam {
			h := 1 + a*l
			w[k] = s.rhs[k]/h + rng.NormFloat64()/math.Sqrt(h)
		}
		f.mulG(m, w)
		return nil
	}
	// Perturbation sampler (Papandreou & Yuille 2010): with
	// b = G's + e1 + G'(sqrt(d) e2), e1, e2 standard normal, the solution of
	// H w = b is an exact draw, because Cov(b) = I + G'DG = H.
	for i := range s.tn {
		s.tn[i] = sum[i] + math.Sqrt(d[i])*rng.NormFloat64()
	}
	f.mulGT(s.rhs, s.tn)
	for k := range s.rhs {
		s.rhs[k] += rng.NormFloat64()
	}
	if err := s.solve(w, d); err != nil {
		return err
	}
	f.mulG(m, w)
	return nil
}

// solve overwrites x (holding the starting point) with the solution of
// (I + G' diag(d) G) x = s.rhs by preconditioned conjugate gradients. The
// preconditioner is the one given by setPrecBlock or setPrecDiag for this
// solve, else the Jacobi preconditioner diag(H)_k = 1 + sum_n G_nk^2 d_n.
func (s *gaussSampler) solve(x, d []float64) error {
	f := s.f
	if !s.precSet {
		if f.gsq == nil {
			// Built once per factor before the chains start (see
			// prepareCG).
			panic("multirater: internal error: CG preconditioner not prepared")
		}
		blas64.Gemv(blas.Trans, 1, blas64.General{Rows: f.n, Cols: f.r, Stride: f.r, Data: f.gsq},
			blas64.Vector{N: f.n, Inc: 1, Data: d}, 0, blas64.Vector{N: f.r, Inc: 1, Data: s.prec})
		for k := range s.prec {
			s.prec[k] = 1 / (1 + s.prec[k])
		}
		s.blockK = 0
	}
	s.precSet = false
	s.hmul(s.res, x, d)
	var bnorm float64
	for k := range s.res {
		bnorm += s.rhs[k] * s.rhs[k]
		s.res[k] = s.rhs[k] - s.res[k]
	}
	s.precondition()
	var rz float64
	for k := range s.res {
		s.p[k] = s.z[k]
		rz += s.res[k] * s.z[k]
	}
	stop := cgTol * cgTol * bnorm
	maxIter := 10*f.r + 100
	it := 0
	for ; it < maxIter; it++ {
		var rr float64
		for _, v := range s.res {
			rr += v * v
		}
		if rr <= stop {
			break
		}
		s.hmul(s.hp, s.p, d)
		pap := vecDot(s.p, s.hp)
		alpha := rz / pap
		for k := range x {
			x[k] += alpha * s.p[k]
			s.res[k] -= alpha * s.hp[k]
		}
		s.precondition()
		rzNew := vecDot(s.res, s.z)
		beta := rzNew / rz
		rz = rzNew
		for k := range s.p {
			s.p[k] = s.z[k] + beta*s.p[k]
		}
	}
	s.stats.Solves++
	s.stats.Iterations += it
	s.stats.MaxIterations = max(s.stats.MaxIterations, it)
	if it == maxIter {
		return fmt.Errorf("multirater: conjugate gradients did not converge in %d iterations", maxIter)
	}
	return nil
}

// precondition sets z = P^{-1} res: the leading blockK coordinates by the
// Cholesky factor of the block, the others by the inverse diagonal.
func (s *gaussSampler) precondition() {
	k := s.blockK
	for i := k; i < len(s.res); i++ {
		s.z[i] = s.prec[i] * s.res[i]
	}
	if k == 0 {
		return
	}
	copy(s.z[:k], s.res[:k])
	chol := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: k, Data: s.block}
	blas64.Trsv(blas.NoTrans, chol, blas64.Vector{N: k, Inc: 1, Data: s.z[:k]})
	blas64.Trsv(blas.Trans, chol, blas64.Vector{N: k, Inc: 1, Data: s.z[:k]})
}

// setPrecBlock gives the preconditioner of the next solve: the exact
// leading k×k block of H = I + G' diag(d) G, as its lower Cholesky factor
// (row-major, k×k), and the diagonal of H for the other coordinates. The
// slices are used, not copied, until the solve.
func (s *gaussSampler) setPrecBlock(k int, chol, diag []float64) {
	s.blockK = k
	s.block = chol
	for i := k; i < len(diag); i++ {
		s.prec[i] = 1 / diag[i]
	}
	s.precSet = true
}

// hmul sets dst = (I + G' diag(d) G) v.
func (s *gaussSampler) hmul(dst, v, d []float64) {
	f := s.f
	f.mulG(s.tn, v)
	for i := range s.tn {
		s.tn[i] *= d[i]
	}
	f.mulGT(dst, s.tn)
	for k := range dst {
		dst[k] += v[k]
	}
}

// prepareCG builds what the conjugate-gradient sampler needs; call before
// chains share the factor.
func (f *priorFactor) prepareCG() {
	if f.diag || f.gsq != nil {
		return
	}
	f.gsq = make([]float64, len(f.g))
	for i, v := range f.g {
		f.gsq[i] = v * v
	}
}
