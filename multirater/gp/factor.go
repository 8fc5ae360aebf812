// Package gp holds the Gaussian-process prior of the multi-rater models and
// all linear algebra on it: the kernel matrix and its cached
// eigendecomposition (Gram, gonum or LAPACKE backends), the whitened factor
// C = G G' (Factor, G optionally in float32), the posterior
// N(H^{-1} G's, H^{-1}) with H = I + G'DG (Posterior: draws for Gibbs,
// solves by conjugate gradients with per-rater block preconditioners) and
// the eigen-basis used to condition new items on the training items
// (KeptEigen).
package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/numeric"
)

// Factor factorises the Gaussian-process prior m ~ N(0, C) as
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
type Factor struct {
	N, R int
	Diag bool
	// sd[n] = sqrt(c_nn) when diag.
	SD []float64
	// lam are the kept eigenvalues (descending); g is G, n×r row-major.
	Lam []float64
	G   []float64
	// gsq is G∘G (elementwise), built on first use by the conjugate
	// gradient sampler for its Jacobi preconditioner.
	gsq []float64
	// oneProj = G'1, used by the location move.
	OneProj []float64
	// Dropped counts the eigenvalues below the rank tolerance (the
	// dimensions left out of a pivoted factor).
	Dropped int
	// Residual is the trace of C - G G' of a pivoted factor
	// (NewPivotedFactor), 0 otherwise.
	Residual float64
	// Pivots, for a pivoted or Cholesky factor (NewPivotedFactor,
	// NewCholeskyFactor), are the items in pivot order: G's rows Pivots[k]
	// are zero beyond column k, so that those r rows form a lower
	// triangular matrix (WhitenTo solves with it).
	Pivots []int
	// Extra, when not nil, is a per-item prior variance added to G G':
	// C = G G' + diag(Extra), f = G w + e with e_n ~ N(0, Extra_n)
	// independent (the diagonal correction of a truncated low-rank prior,
	// as in FITC: Snelson & Ghahramani 2006, Quiñonero-Candela &
	// Rasmussen 2005 eq. 16). Only engines that say so accept it (ep.Run,
	// laplace.Run); a non-diagonal factor only.
	Extra []float64
	// g32 holds G in single precision (n×r row-major) when the factor is
	// stored that way (see single); g then holds the same rounded values.
	g32 []float32
}

// IsDiagonal reports whether c has no non-zero element off its diagonal
// (NewFactor then gives the exact diagonal factor).
func IsDiagonal(c mat.Symmetric) bool {
	if _, ok := c.(*mat.DiagDense); ok {
		return true
	}
	if lowRankOf(c) != nil {
		return false
	}
	n := c.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if c.At(i, j) != 0 {
				return false
			}
		}
	}
	return true
}

// NewFactor factorises the n×n prior covariance c (exactly, by its
// diagonal when c is diagonal).
func NewFactor(c mat.Symmetric) (*Factor, error) {
	n := c.SymmetricDim()
	if n == 0 {
		return nil, multirater.DataErrorf("empty kernel matrix")
	}
	if d, ok := c.(*mat.DiagDense); ok {
		return newDiagFactor(d.Diag(), d.At)
	}
	if lr := lowRankOf(c); lr != nil {
		// G = Q Λ^{1/2} already (orthogonal columns): the eigen-factor.
		return lr.factor(lr.r), nil
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if v := c.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, multirater.DataErrorf("kernel matrix element (%d, %d) is %v", i, j, v)
			}
		}
	}
	if IsDiagonal(c) {
		return newDiagFactor(n, c.At)
	}
	f := &Factor{N: n}
	vals, vecs, err := SymEigen(c)
	if err != nil {
		return nil, err
	}
	lmax := vals[n-1]
	if !(lmax > 0) {
		return nil, multirater.DataErrorf("kernel matrix is zero or not positive semidefinite")
	}
	if vals[0] < -1e-8*lmax {
		return nil, multirater.DataErrorf("kernel matrix is not positive semidefinite (eigenvalue %.3g, largest %.3g)", vals[0], lmax)
	}
	tol := float64(n) * 0x1p-52 * lmax
	r := 0
	for i := n - 1; i >= 0 && vals[i] > tol; i-- {
		r++
	}
	f.R = r
	f.Dropped = n - r
	f.Lam = make([]float64, r)
	f.G = make([]float64, n*r)
	raw := vecs.RawMatrix()
	for k := 0; k < r; k++ {
		col := n - 1 - k
		f.Lam[k] = vals[col]
		s := math.Sqrt(vals[col])
		for i := 0; i < n; i++ {
			f.G[i*r+k] = raw.Data[i*raw.Stride+col] * s
		}
	}
	f.setOneProj()
	return f, nil
}

// newDiagFactor returns the exact factor G = diag(sqrt(c_ii)) of a diagonal
// n×n covariance whose element (i, i) is at(i, i): O(n) time and memory.
func newDiagFactor(n int, at func(i, j int) float64) (*Factor, error) {
	f := &Factor{N: n, R: n, Diag: true, SD: make([]float64, n), Lam: make([]float64, n)}
	for i := range f.SD {
		v := at(i, i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, multirater.DataErrorf("kernel matrix element (%d, %d) is %v", i, i, v)
		}
		if v < 0 {
			return nil, multirater.DataErrorf("kernel matrix is not positive semidefinite (diagonal element %d is %v)", i, v)
		}
		f.SD[i] = math.Sqrt(v)
		f.Lam[i] = v
	}
	f.OneProj = append([]float64(nil), f.SD...)
	return f, nil
}

// setOneProj sets OneProj = G'1.
func (f *Factor) setOneProj() {
	f.OneProj = make([]float64, f.R)
	ones := make([]float64, f.N)
	for i := range ones {
		ones[i] = 1
	}
	f.MulGT(f.OneProj, ones)
}

func (f *Factor) general() blas64.General {
	return blas64.General{Rows: f.N, Cols: f.R, Stride: f.R, Data: f.G}
}

// Single stores a non-diagonal factor in single precision: G is rounded to
// float32 once, and every later use of G, in the products of Posterior and
// in the moves that read f.g, sees the rounded matrix G~, so that all the
// moves of a chain target one and the same posterior, that of the prior
// covariance C~ = G~ G~'. Rounding changes each element of G by at most 2^-24
// of itself, hence |C~_ij - C_ij| <= 2^-23 sqrt(C_ii C_jj) (Cauchy-Schwarz):
// a perturbation of the kernel matrix far below any uncertainty in the
// kernel, which is itself a modelling choice. The products are computed in
// double precision from the float32 elements (matvec32.go), so they are
// products with G~ to double-precision rounding; storing G in float32 halves
// their memory traffic, which bounds their speed once G outgrows the caches
// (8 MB for N = r = 1000).
//
// One relation is not exactly preserved: the complete-design draw uses
// G'G = Λ (orthonormal eigenvectors), which G~ satisfies to about 2^-24
// relative instead of 2^-52; the conditional precision I + a G~'G~ it stands
// for then differs from the one used, I + a Λ, by that relative amount, so
// the draw's covariance and mean are off by ~1e-7 of themselves.
func (f *Factor) Single() {
	if f.Diag || f.g32 != nil {
		return
	}
	f.g32 = make([]float32, len(f.G))
	for i, v := range f.G {
		f.g32[i] = float32(v)
		f.G[i] = float64(f.g32[i])
	}
	ones := make([]float64, f.N)
	for i := range ones {
		ones[i] = 1
	}
	f.MulGT(f.OneProj, ones)
	if f.gsq != nil {
		for i, v := range f.G {
			f.gsq[i] = v * v
		}
	}
}

// MulG sets dst (length n) to G w.
func (f *Factor) MulG(dst, w []float64) { f.mulGDir(dst, w, false) }

// MulGT sets dst (length r) to G' v.
func (f *Factor) MulGT(dst, v []float64) { f.mulGTDir(dst, v, false) }

// mulDouble sets dst to G x (trans blas.Trans: G' x) when G is diagonal
// or held in double precision, and reports whether it did; the callers
// stream a single-precision G themselves.
func (f *Factor) mulDouble(dst, x []float64, trans blas.Transpose) bool {
	if f.Diag {
		for i, s := range f.SD {
			dst[i] = s * x[i]
		}
		return true
	}
	if f.g32 != nil {
		return false
	}
	nx, ndst := f.R, f.N
	if trans == blas.Trans {
		nx, ndst = ndst, nx
	}
	blas64.Gemv(trans, 1, f.general(), blas64.Vector{N: nx, Inc: 1, Data: x}, 0, blas64.Vector{N: ndst, Inc: 1, Data: dst})
	return true
}

// mulGDir sets dst (length n) to G w, visiting the rows of a single-precision
// G in reverse order when rev is set (the result is the same).
func (f *Factor) mulGDir(dst, w []float64, rev bool) {
	if f.mulDouble(dst, w, blas.NoTrans) {
		return
	}
	r := f.R
	w = w[:r]
	dst = dst[:f.N]
	if rev {
		for i := f.N - 1; i >= 0; i-- {
			dst[i] = dotF32(f.g32[i*r:(i+1)*r], w)
		}
		return
	}
	for i := range dst {
		dst[i] = dotF32(f.g32[i*r:(i+1)*r], w)
	}
}

// mulGTDir sets dst (length r) to G' v. A single-precision G is streamed by
// rows (dst += v_i G_i), in reverse order when rev is set, which changes the
// rounding of the sums but not their value otherwise. Rows with v_i = 0 are
// skipped (adding 0 G_i changes nothing).
func (f *Factor) mulGTDir(dst, v []float64, rev bool) {
	if f.mulDouble(dst, v, blas.Trans) {
		return
	}
	r := f.R
	dst = dst[:r]
	for k := range dst {
		dst[k] = 0
	}
	v = v[:f.N]
	if rev {
		for i := f.N - 1; i >= 0; i-- {
			if v[i] != 0 {
				axpyF32(v[i], f.g32[i*r:(i+1)*r], dst)
			}
		}
		return
	}
	for i, vi := range v {
		if vi != 0 {
			axpyF32(vi, f.g32[i*r:(i+1)*r], dst)
		}
	}
}

// hmulRowsDir sets gp = G v and dst = G'(d∘gp) (lengths n and r) with one
// pass over a single-precision G: for each row, the dot product G_i v and
// then dst += d_i (G_i v) G_i while the row is in the cache. It halves the
// memory traffic of the conjugate-gradient iteration. The rows go in reverse
// order when rev is set.
func (f *Factor) hmulRowsDir(gp, dst, v, d []float64, rev bool) {
	r := f.R
	dst = dst[:r]
	for k := range dst {
		dst[k] = 0
	}
	v = v[:r]
	gp = gp[:f.N]
	d = d[:f.N]
	if rev {
		for i := f.N - 1; i >= 0; i-- {
			row := f.g32[i*r : (i+1)*r]
			g := dotF32(row, v)
			gp[i] = g
			if t := d[i] * g; t != 0 {
				axpyF32(t, row, dst)
			}
		}
		return
	}
	for i := range gp {
		row := f.g32[i*r : (i+1)*r]
		g := dotF32(row, v)
		gp[i] = g
		if t := d[i] * g; t != 0 {
			axpyF32(t, row, dst)
		}
	}
}

// mulGT2Dir sets d1 = G' v1 and d2 = G' v2 (length r) with one pass over a
// single-precision G, in reverse row order when rev is set.
func (f *Factor) mulGT2Dir(d1, d2, v1, v2 []float64, rev bool) {
	if f.g32 == nil {
		f.mulGTDir(d1, v1, rev)
		f.mulGTDir(d2, v2, rev)
		return
	}
	r := f.R
	d1 = d1[:r]
	d2 = d2[:r]
	for k := range d1 {
		d1[k] = 0
		d2[k] = 0
	}
	v1 = v1[:f.N]
	v2 = v2[:f.N]
	if rev {
		for i := f.N - 1; i >= 0; i-- {
			axpy2F32(v1[i], v2[i], f.g32[i*r:(i+1)*r], d1, d2)
		}
		return
	}
	for i, a := range v1 {
		axpy2F32(a, v2[i], f.g32[i*r:(i+1)*r], d1, d2)
	}
}

// covTo returns G G' (the prior covariance as represented), for tests.
func (f *Factor) covTo() *mat.SymDense {
	c := mat.NewSymDense(f.N, nil)
	for i := 0; i < f.N; i++ {
		for j := i; j < f.N; j++ {
			var s float64
			if f.Diag {
				if i == j {
					s = f.SD[i] * f.SD[i]
				}
			} else {
				s = numeric.Dot(f.G[i*f.R:(i+1)*f.R], f.G[j*f.R:(j+1)*f.R])
			}
			c.SetSym(i, j, s)
		}
	}
	return c
}

// CG settings of the incomplete-design sampler.
const (
	// cgTol is the relative residual at which conjugate gradients stop by
	// default. The solution error is then about 1e-8 of the scale of the
	// draw, far below Monte Carlo error.
	cgTol = 1e-8
	// cgTolH is the error, in posterior standard deviations, at which the
	// ordinal sampler stops conjugate gradients (see Posterior.tolH).
	CGTolH = 1e-4
)

// PosteriorStats counts the work of a Posterior.
type PosteriorStats struct {
	Solves, Iterations, MaxIterations int
	// Passes counts the products with the full matrix G or G'.
	Passes int
}

// Posterior draws w | pseudo-observations (see Factor) without
// allocating. One per chain.
type Posterior struct {
	f *Factor
	// scratch, length r or n.
	RHS, res, z, p, hp, tn, gp, tn2 []float64
	prec                            []float64
	precSet                         bool
	blockK                          int
	block                           []float64
	blockInv                        bool
	// tolH, when positive, replaces the stopping rule of conjugate
	// gradients: stop when r'P^{-1}r <= tolH^2 r (r = dim w), P the
	// preconditioner and r the residual. With e the error of the solution,
	// r'P^{-1}r = e'H P^{-1} H e, which is e'He up to the spread of the
	// eigenvalues of P^{-1}H about 1 (a few here): the rule bounds the error
	// in the metric of the posterior, |e|_H ≈ tolH sqrt(r), i.e. about
	// tolH posterior standard deviations per direction (root mean square).
	//
	// What an inexact solve does to the chain: conjugate gradients started
	// from the previous draw x0 return x* + e instead of the exact
	// perturbation draw x*, and the error e shrinks along with x0 - x*: the
	// result is roughly x* + c (x0 - x*) with c ≈ |e|_H / |x0 - x*|_H ≈
	// tolH / sqrt(2) in the stationary regime, where |x0 - x*|_H ≈ sqrt(2 r).
	// Such a step leaves the posterior mean of w where it is and shrinks its
	// variance by a relative 2c ≈ 1.4e-4 (0.007% in standard deviations),
	// while the Monte Carlo error of a standard deviation is about
	// 1/sqrt(2 ESS), 1% for an ESS of 5000: the bias is two orders of
	// magnitude below what a fit can resolve. TestCGStop checks |e|_H
	// against the exact solution.
	TolH float64
	// rev is the row order of the next product with a single-precision G:
	// the products alternate between forward and reverse, so that each
	// starts with the rows the previous one left in the cache.
	rev   bool
	Stats PosteriorStats
}

// SetPrecDiag gives the diagonal of H = I + G' diag(d) G for the next
// conjugate-gradient solve (the Jacobi preconditioner), when the caller can
// compute it more cheaply than the O(N r) product (G∘G)' d.
func (s *Posterior) SetPrecDiag(diag []float64) {
	s.SetPrecBlock(0, nil, diag)
}

func NewPosterior(f *Factor) *Posterior {
	s := &Posterior{f: f}
	if !f.Diag {
		s.RHS = make([]float64, f.R)
		s.res = make([]float64, f.R)
		s.z = make([]float64, f.R)
		s.p = make([]float64, f.R)
		s.hp = make([]float64, f.R)
		s.prec = make([]float64, f.R)
		s.tn = make([]float64, f.N)
		s.gp = make([]float64, f.N)
	}
	return s
}

// MulG sets dst = G w, alternating the row order (see rev).
func (s *Posterior) MulG(dst, w []float64) {
	s.f.mulGDir(dst, w, s.rev)
	s.rev = !s.rev
	s.Stats.Passes++
}

// MulGT sets dst = G' v, alternating the row order.
func (s *Posterior) MulGT(dst, v []float64) {
	s.f.mulGTDir(dst, v, s.rev)
	s.rev = !s.rev
	s.Stats.Passes++
}

// Draw sets w to a draw from N(H^{-1} G's, H^{-1}), H = I + G' diag(d) G,
// and m to G w. equal reports that all d_n are equal, which makes H diagonal
// in the eigenbasis (a complete design: Rogers et al. eq. 27 with
// D = (sum_l alpha_l) I). w holds the previous draw on entry; the conjugate
// gradient solver starts from it.
//
// Cost: O(N) for a diagonal C; O(N r) for equal d (two products with G);
// O(N r) per conjugate-gradient iteration otherwise.
func (s *Posterior) Draw(rng *rand.Rand, w, m, sum, d []float64, equal bool) error {
	if s.f.Diag || equal {
		s.drawDirect(rng, w, m, sum, d)
		return nil
	}
	// Perturbation sampler (Papandreou & Yuille 2010): with
	// b = G's + e1 + G'(sqrt(d) e2), e1, e2 standard normal, the solution of
	// H w = b is an exact draw, because Cov(b) = I + G'DG = H.
	for i := range s.tn {
		s.tn[i] = sum[i] + math.Sqrt(d[i])*rng.NormFloat64()
	}
	s.MulGT(s.RHS, s.tn)
	for k := range s.RHS {
		s.RHS[k] += rng.NormFloat64()
	}
	if err := s.Solve(w, d); err != nil {
		return err
	}
	s.MulG(m, w)
	return nil
}

// DrawTracked is Draw for a caller that keeps m = G w between draws: on
// entry m must hold G w for the w given (up to rounding). The conjugate
// gradient sampler then needs one product with G' to set up (b and the
// starting residual b - H w = G'(sum + sqrt(d) e2 - d∘m) + e1 - w in one
// pass) instead of three, and updates m = G w along the iterations
// (m += step G p, G p being part of each iteration) instead of recomputing
// it: 1 + 2 k products with G for k iterations instead of 4 + 2 k.
func (s *Posterior) DrawTracked(rng *rand.Rand, w, m, sum, d []float64, equal bool) error {
	if s.f.Diag || equal {
		s.drawDirect(rng, w, m, sum, d)
		return nil
	}
	if s.tn2 == nil {
		s.tn2 = make([]float64, s.f.N)
	}
	for i := range s.tn {
		u := sum[i] + math.Sqrt(d[i])*rng.NormFloat64()
		s.tn[i] = u
		s.tn2[i] = u - d[i]*m[i]
	}
	s.f.mulGT2Dir(s.RHS, s.res, s.tn, s.tn2, s.rev)
	s.rev = !s.rev
	s.Stats.Passes++
	for k := range s.RHS {
		e := rng.NormFloat64()
		s.RHS[k] += e
		s.res[k] += e - w[k]
	}
	s.setPreconditioner(d)
	return s.cg(w, d, m)
}

// drawDirect is draw for a diagonal C or equal d.
func (s *Posterior) drawDirect(rng *rand.Rand, w, m, sum, d []float64) {
	f := s.f
	if f.Diag {
		for i, sd := range f.SD {
			h := 1 + sd*sd*d[i]
			w[i] = sd*sum[i]/h + rng.NormFloat64()/math.Sqrt(h)
			m[i] = sd * w[i]
		}
		return
	}
	a := d[0]
	s.MulGT(s.RHS, sum)
	for k, l := range f.Lam {
		h := 1 + a*l
		w[k] = s.RHS[k]/h + rng.NormFloat64()/math.Sqrt(h)
	}
	s.MulG(m, w)
}

// Solve overwrites x (holding the starting point) with the solution of
// (I + G' diag(d) G) x = s.rhs by preconditioned conjugate gradients. The
// preconditioner is the one given by SetPrecBlock or SetPrecDiag for this
// solve, else the Jacobi preconditioner diag(H)_k = 1 + sum_n G_nk^2 d_n.
func (s *Posterior) Solve(x, d []float64) error {
	s.setPreconditioner(d)
	s.hmul(s.res, x, d)
	for k := range s.res {
		s.res[k] = s.RHS[k] - s.res[k]
	}
	return s.cg(x, d, nil)
}

// setPreconditioner makes the Jacobi preconditioner unless SetPrecBlock or
// SetPrecDiag gave one for this solve.
func (s *Posterior) setPreconditioner(d []float64) {
	f := s.f
	if !s.precSet {
		if f.gsq == nil {
			// Built once per factor before the chains start (see
			// PrepareCG).
			panic("multirater: internal error: CG preconditioner not prepared")
		}
		blas64.Gemv(blas.Trans, 1, blas64.General{Rows: f.N, Cols: f.R, Stride: f.R, Data: f.gsq},
			blas64.Vector{N: f.N, Inc: 1, Data: d}, 0, blas64.Vector{N: f.R, Inc: 1, Data: s.prec})
		for k := range s.prec {
			s.prec[k] = 1 / (1 + s.prec[k])
		}
		s.blockK = 0
	}
	s.precSet = false
}

// cg runs preconditioned conjugate gradients on (I + G' diag(d) G) x = s.rhs
// from x, whose residual s.rhs - H x is in s.res. When m is not nil it holds
// G x and is kept equal to it.
func (s *Posterior) cg(x, d, m []float64) error {
	f := s.f
	var bnorm float64
	for _, v := range s.RHS {
		bnorm += v * v
	}
	s.precondition()
	var rz float64
	for k := range s.res {
		s.p[k] = s.z[k]
		rz += s.res[k] * s.z[k]
	}
	stop := cgTol * cgTol * bnorm
	stopH := s.TolH * s.TolH * float64(f.R)
	maxIter := 10*f.R + 100
	it := 0
	for ; it < maxIter; it++ {
		if s.TolH > 0 {
			if rz <= stopH {
				break
			}
		} else {
			var rr float64
			for _, v := range s.res {
				rr += v * v
			}
			if rr <= stop {
				break
			}
		}
		s.hmul(s.hp, s.p, d)
		pap := numeric.Dot(s.p, s.hp)
		alpha := rz / pap
		for k := range x {
			x[k] += alpha * s.p[k]
			s.res[k] -= alpha * s.hp[k]
		}
		if m != nil {
			for i, v := range s.gp {
				m[i] += alpha * v
			}
		}
		s.precondition()
		rzNew := numeric.Dot(s.res, s.z)
		beta := rzNew / rz
		rz = rzNew
		for k := range s.p {
			s.p[k] = s.z[k] + beta*s.p[k]
		}
	}
	s.Stats.Solves++
	s.Stats.Iterations += it
	s.Stats.MaxIterations = max(s.Stats.MaxIterations, it)
	if it == maxIter {
		return fmt.Errorf("multirater: conjugate gradients did not converge in %d iterations", maxIter)
	}
	return nil
}

// precondition sets z = P^{-1} res: the leading blockK coordinates by the
// Cholesky factor of the block, the others by the inverse diagonal.
func (s *Posterior) precondition() {
	k := s.blockK
	for i := k; i < len(s.res); i++ {
		s.z[i] = s.prec[i] * s.res[i]
	}
	if k == 0 {
		return
	}
	if s.blockInv {
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: k, Cols: k, Stride: k, Data: s.block},
			blas64.Vector{N: k, Inc: 1, Data: s.res[:k]}, 0, blas64.Vector{N: k, Inc: 1, Data: s.z[:k]})
		return
	}
	copy(s.z[:k], s.res[:k])
	chol := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: k, Data: s.block}
	blas64.Trsv(blas.NoTrans, chol, blas64.Vector{N: k, Inc: 1, Data: s.z[:k]})
	blas64.Trsv(blas.Trans, chol, blas64.Vector{N: k, Inc: 1, Data: s.z[:k]})
}

// SetPrecBlock gives the preconditioner of the next solve: the exact
// leading k×k block of H = I + G' diag(d) G, as its lower Cholesky factor
// (row-major, k×k), and the diagonal of H for the other coordinates. The
// slices are used, not copied, until the solve.
func (s *Posterior) SetPrecBlock(k int, chol, diag []float64) {
	s.SetPrecBlockInv(k, chol, diag)
	s.blockInv = false
}

// SetPrecBlockInv is SetPrecBlock with the inverse of the block (full k×k,
// row-major) instead of its Cholesky factor.
func (s *Posterior) SetPrecBlockInv(k int, inv, diag []float64) {
	s.blockInv = true
	s.blockK = k
	s.block = inv
	for i := k; i < len(diag); i++ {
		s.prec[i] = 1 / diag[i]
	}
	s.precSet = true
}

// hmul sets dst = (I + G' diag(d) G) v, leaving G v in s.gp.
func (s *Posterior) hmul(dst, v, d []float64) {
	if s.f.g32 != nil {
		s.f.hmulRowsDir(s.gp, dst, v, d, s.rev)
		s.rev = !s.rev
		s.Stats.Passes++
		for k := range dst {
			dst[k] += v[k]
		}
		return
	}
	s.MulG(s.gp, v)
	for i, g := range s.gp {
		s.tn[i] = g * d[i]
	}
	s.MulGT(dst, s.tn)
	for k := range dst {
		dst[k] += v[k]
	}
}

// PrepareCG builds what the conjugate-gradient sampler needs; call before
// chains share the factor.
func (f *Factor) PrepareCG() {
	if f.Diag || f.gsq != nil {
		return
	}
	f.gsq = make([]float64, len(f.G))
	for i, v := range f.G {
		f.gsq[i] = v * v
	}
}

// IdentityFactor is the prior factor of C = I.
func IdentityFactor(n int) *Factor {
	f := &Factor{N: n, R: n, Diag: true, SD: make([]float64, n), Lam: make([]float64, n)}
	for i := range f.SD {
		f.SD[i] = 1
		f.Lam[i] = 1
	}
	f.OneProj = append([]float64(nil), f.SD...)
	return f
}

// MaxPrecBlock bounds the exactly preconditioned block of the conjugate
// gradient sampler.
const MaxPrecBlock = 256

// NewPrior returns the factor of the prior covariance cov of n items: the
// identity's when cov is nil, else NewFactor's with G kept in single
// precision (see Factor.Single), as the samplers use it.
//
// A low-rank covariance (LowRank, NewGramLowRank) gives its factor without
// the diagonal correction (the samplers do not take Factor.Extra): a
// truncated basis then leaves out the variance Factor.Residual.
func NewPrior(n int, cov mat.Symmetric) (*Factor, error) {
	if cov == nil {
		return IdentityFactor(n), nil
	}
	if lr := lowRankOf(cov); lr != nil {
		f := lr.plainFactor(lr.r)
		f.Single()
		return f, nil
	}
	f, err := NewFactor(cov)
	if err != nil {
		return nil, err
	}
	f.Single()
	return f, nil
}

// NewCholeskyFactor returns the factor G = L of the Cholesky decomposition
// C = L L' (r = N, G in double precision), O(N^3/3): cheaper than
// NewFactor's eigendecomposition when C changes often (evidence
// maximisation over kernel hyperparameters). A C that is positive
// semidefinite but numerically singular gets the smallest jitter
// 1e-10, 1e-9, ... 1e-6 times its mean diagonal that makes it positive
// definite; the jitter used is returned.
func NewCholeskyFactor(c mat.Symmetric) (*Factor, float64, error) {
	n := c.SymmetricDim()
	if n == 0 {
		return nil, 0, multirater.DataErrorf("empty kernel matrix")
	}
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += c.At(i, i) / float64(n)
	}
	a := mat.NewSymDense(n, nil)
	var ch mat.Cholesky
	for _, rel := range []float64{0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6} {
		jit := rel * mean
		a.CopySym(c)
		for i := 0; i < n; i++ {
			a.SetSym(i, i, c.At(i, i)+jit)
		}
		if ch.Factorize(a) {
			var l mat.TriDense
			ch.LTo(&l)
			g := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					g[i*n+j] = l.At(i, j)
				}
			}
			piv := make([]int, n)
			for i := range piv {
				piv[i] = i
			}
			return &Factor{N: n, R: n, G: g, Lam: nil, Pivots: piv}, jit, nil
		}
	}
	return nil, 0, multirater.DataErrorf("kernel matrix is not positive definite even with a jitter of 1e-6 of its mean diagonal")
}

// WhitenTo sets dst (length R) to the whitened coordinates g of a new item
// with covariances k (length N) with the factor's items and prior variance
// kss, and returns the variance left over, so that with C = G G' and the
// items' latent values f = G w, w ~ N(0, I), the new item's is
//
//	f_new = g'w + e,  e ~ N(0, resid) independent of w,
//
// and [G 0; g' sqrt(resid)] factors the covariance of the N+1 items (the
// Gaussian conditional of gp.Conditional, resid = kss - |g|^2 clamped at
// 0):
//   - eigen factor (NewFactor, G = Q Λ^{1/2}): g = Λ^{-1} G'k = Λ^{-1/2} Q'k,
//     so that |g|^2 = k'C^+k;
//   - pivoted or Cholesky factor: g solves G_P g = k_P on the pivot rows P
//     (lower triangular), the Nyström extension of the low-rank prior G G'
//     (exact for a Cholesky factor, g = L^{-1}k);
//   - diagonal factor: g = k/sd (an item of zero prior variance must have
//     zero covariances).
//
// A factor kept in single precision panics (a caller's mistake).
func (f *Factor) WhitenTo(dst, k []float64, kss float64) (resid float64) {
	if len(dst) != f.R || len(k) != f.N {
		panic(fmt.Sprintf("gp: WhitenTo: dst of length %d and k of length %d for a factor %d×%d", len(dst), len(k), f.N, f.R))
	}
	resid = kss
	r := f.R
	switch {
	case f.Diag:
		for i, sd := range f.SD {
			dst[i] = 0
			if sd > 0 {
				dst[i] = k[i] / sd
			}
		}
	case f.g32 != nil:
		panic("gp: WhitenTo needs a factor in double precision")
	case f.Pivots != nil:
		for c, p := range f.Pivots[:r] {
			row := f.G[p*r : p*r+c+1]
			s := k[p]
			for j := 0; j < c; j++ {
				s -= row[j] * dst[j]
			}
			dst[c] = s / row[c]
		}
	case len(f.Lam) == r:
		for a := range dst {
			dst[a] = 0
		}
		for i, kv := range k {
			if kv == 0 {
				continue
			}
			for a, gv := range f.G[i*r : (i+1)*r] {
				dst[a] += kv * gv
			}
		}
		for a, l := range f.Lam {
			dst[a] /= l
		}
	default:
		panic("gp: WhitenTo: a factor of unknown kind")
	}
	for _, v := range dst {
		resid -= v * v
	}
	return math.Max(resid, 0)
}
