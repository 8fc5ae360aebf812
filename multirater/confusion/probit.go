package confusion

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/numeric"
)

// probit is the multinomial-probit Gaussian-process prior of the items'
// classes for a kernel other than the identity (Girolami & Rogers 2006,
// "Variational Bayesian multinomial probit regression with Gaussian process
// priors", Neural Computation 18(8)):
//
//	f_.k ~ GP(0, C + b 11'),  k = 1..K       one latent function per class
//	y_nk = f_nk + e_nk, e_nk ~ N(0, 1)       auxiliary variables
//	z_n = argmax_k y_nk                      the item's class
//
// with a per-class constant of variance b (Options.BiasVariance) added to
// the kernel so that the class proportions are learnt. The prior is kept in
// whitened form, C + b 11' ≈ G G' (G = [G_C, sqrt(b) 1], G_C the pivoted
// Cholesky factor of C, gp.NewPivotedFactorRank: exact for small N, of rank
// at most Options.Rank otherwise), f_.k = G w_k, w_k ~ N(0, I_r). Given the
// auxiliary variables of class k (their means ytilde_k, for VB), the
// latent function is GP regression with unit noise,
//
//	w_k | y_.k ~ N(A^-1 G' y_.k, A^-1),  A = I_r + G'G,
//
// so that f_.k has mean Sigma y_.k and covariance Sigma = G A^-1 G' =
// C (I + C)^-1 (Girolami & Rogers's Q(f_k), in whitened form): C is never
// inverted; A, whose eigenvalues are at least 1, is factorised once
// (Cholesky, A = L L').
type probit struct {
	n, r int
	// g is G, n×r row-major; chol the lower Cholesky factor L of A,
	// r×r row-major; logDetA = ln|A|.
	g, chol  []float64
	logDetA  float64
	bias     float64
	residual float64
	// rank is the rank of G_C (r - 1).
	rank int
	rule *numeric.GHRule
}

// DefaultBiasVariance, DefaultRank, DefaultFactorTol and
// DefaultQuadrature are the defaults of the kernel prior's options.
const (
	DefaultBiasVariance = 1
	DefaultRank         = 1000
	// DefaultFactorTol is the residual trace of the pivoted factor, relative
	// to the trace of C, at which it stops.
	DefaultFactorTol  = 1e-6
	DefaultQuadrature = 16
)

// newProbit factorises the n×n kernel matrix cov with the bias b: the
// pivoted Cholesky factor to the residual trace tol·trace(C) or rank
// maxRank, the bias column, and A = I + G'G with its Cholesky factor.
func newProbit(cov mat.Symmetric, b, tol float64, maxRank, quad int) (*probit, error) {
	n := cov.SymmetricDim()
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += cov.At(i, i)
	}
	f, err := gp.NewPivotedFactorRank(cov, tol*tr, min(maxRank, n))
	if err != nil {
		return nil, err
	}
	r := f.R + 1
	p := &probit{n: n, r: r, g: make([]float64, n*r), chol: make([]float64, r*r), bias: b, residual: f.Residual, rank: f.R,
		rule: numeric.NewGHRule(quad)}
	sb := math.Sqrt(b)
	for i := 0; i < n; i++ {
		copy(p.g[i*r:i*r+f.R], f.G[i*f.R:(i+1)*f.R])
		p.g[i*r+f.R] = sb
	}
	// A = I + G'G.
	a := blas64.General{Rows: r, Cols: r, Stride: r, Data: p.chol}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, p.general(), p.general(), 0, a)
	var ch mat.Cholesky
	if !ch.Factorize(gp.IPlusSCS(mat.NewSymDense(r, p.chol), nil)) {
		return nil, multirater.DataErrorf("the kernel prior's matrix I + G'G is not positive definite (kernel matrix with invalid values?)")
	}
	var l mat.TriDense
	ch.LTo(&l)
	clear(p.chol)
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			p.chol[i*r+j] = l.At(i, j)
		}
		p.logDetA += 2 * math.Log(p.chol[i*r+i])
	}
	return p, nil
}

func (p *probit) general() blas64.General {
	return blas64.General{Rows: p.n, Cols: p.r, Stride: p.r, Data: p.g}
}

func (p *probit) tri() blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: p.r, Stride: p.r, Data: p.chol}
}

// mulGT sets dst (length r) to G'v.
func (p *probit) mulGT(dst, v []float64) {
	blas64.Gemv(blas.Trans, 1, p.general(), blas64.Vector{N: p.n, Inc: 1, Data: v}, 0, blas64.Vector{N: p.r, Inc: 1, Data: dst})
}

// mulG sets dst (length n) to G w.
func (p *probit) mulG(dst, w []float64) {
	blas64.Gemv(blas.NoTrans, 1, p.general(), blas64.Vector{N: p.r, Inc: 1, Data: w}, 0, blas64.Vector{N: p.n, Inc: 1, Data: dst})
}

// solveA overwrites x (length r) with A^-1 x (two triangular solves).
func (p *probit) solveA(x []float64) {
	v := blas64.Vector{N: p.r, Inc: 1, Data: x}
	blas64.Trsv(blas.NoTrans, p.tri(), v)
	blas64.Trsv(blas.Trans, p.tri(), v)
}

// meanTo sets w (length r) to A^-1 G'y and m (length n) to G w = Sigma y:
// the posterior mean of a latent function given auxiliary values y with
// unit noise (Girolami & Rogers 2006's update of Q(f_k), M_k = Sigma ytilde_k).
func (p *probit) meanTo(m, w, y []float64) {
	p.mulGT(w, y)
	p.solveA(w)
	p.mulG(m, w)
}

// drawTo sets w to a draw from N(A^-1 G'y, A^-1) and f to G w: the latent
// function given the auxiliary values y (GP regression with unit noise),
// as w = L^-T (L^-1 G'y + e), e ~ N(0, I_r), whose covariance is
// L^-T L^-1 = A^-1.
func (p *probit) drawTo(rng *rand.Rand, f, w, y []float64) {
	p.mulGT(w, y)
	v := blas64.Vector{N: p.r, Inc: 1, Data: w}
	blas64.Trsv(blas.NoTrans, p.tri(), v)
	for i := range w {
		w[i] += rng.NormFloat64()
	}
	blas64.Trsv(blas.Trans, p.tri(), v)
	p.mulG(f, w)
}

// probitItem is the scratch of the per-item multinomial-probit integrals
// (not safe for concurrent use: one per goroutine).
type probitItem struct {
	rule *numeric.GHRule
	k    int
	// c holds the gaps m_k - m_j (j != k), lt the nodes' log terms.
	c, lt []float64
	// lz[k] = ln Z_k; dy[k*K+j] = E[y_j | z = k] - m_j; mills[i*(K-1)+j]
	// the Mills ratio R(u_i + c_j) at node i.
	lz, dy, mills []float64
}

func newProbitItem(rule *numeric.GHRule, k int) *probitItem {
	return &probitItem{rule: rule, k: k, c: make([]float64, k), lt: make([]float64, len(rule.X)), lz: make([]float64, k), dy: make([]float64, k*k),
		mills: make([]float64, len(rule.X)*max(k-1, 1))}
}

// eval sets lz[k] to ln Z_k, the logarithm of
//
//	Z_k = P(argmax_j (m_j + e_j) = k) = E_u[prod_{j != k} Phi(u + m_k - m_j)],  u ~ N(0, 1)
//
// (Girolami & Rogers 2006's Z_n, the normaliser of q(y_n | z_n = k)) and,
// with moments, dy[k*K+j] to E[y_j | z = k] - m_j under the normal
// N(m, I) truncated to argmax = k (Girolami & Rogers's update of Q(y_n)):
//
//	E[y_j | z = k] = m_j - E_u[phi(u + m_k - m_j) prod_{i != j,k} Phi(u + m_k - m_i)] / Z_k,  j != k
//	E[y_k | z = k] = m_k + sum_{j != k} (m_j - E[y_j | z = k])
//
// For K = 2 the integrals are closed: Z_k = Phi(d/sqrt2), d = m_k - m_j,
// and the correction of y_j is R(d/sqrt2)/sqrt2, R = phi/Phi the Mills
// ratio. For K > 2 they are computed by adaptive Gauss-Hermite quadrature
// (centred at the mode of the integrand of Z_k and scaled by its
// curvature, Liu & Pierce 1994, as the classification model's predictive
// distribution): with normalised node weights omega_i ∝ w_i prod_j
// Phi(u_i + c_j), the correction of y_j is sum_i omega_i R(u_i + c_j),
// in logarithms so that a tiny Z_k keeps its relative accuracy.
func (q *probitItem) eval(m []float64, moments bool) {
	k := q.k
	if k == 2 {
		for t := 0; t < 2; t++ {
			x := (m[t] - m[1-t]) / math.Sqrt2
			q.lz[t] = numeric.LogNormCDF(x)
			if moments {
				r := numeric.MillsLower(x) / math.Sqrt2
				q.dy[t*2+1-t] = -r
				q.dy[t*2+t] = r
			}
		}
		return
	}
	for t := 0; t < k; t++ {
		c := q.c[:0]
		cmin := math.Inf(1)
		for j, mj := range m {
			if j != t {
				c = append(c, m[t]-mj)
				cmin = math.Min(cmin, m[t]-mj)
			}
		}
		mu, sig := numeric.ProbitProductMode(c, cmin, 6)
		lmax := math.Inf(-1)
		nc := len(c)
		for i, x := range q.rule.X {
			u := mu + sig*x
			l := math.Log(q.rule.W[i]*sig) + 0.5*(x*x-u*u)
			mr := q.mills[i*nc : (i+1)*nc]
			for j, cj := range c {
				z := u + cj
				switch {
				case z > numeric.PhiOne:
					mr[j] = 0
				case z > -30:
					// One erfc for both log Phi and the Mills ratio.
					ph := 0.5 * math.Erfc(-z/math.Sqrt2)
					l += math.Log(ph)
					mr[j] = math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) / ph
				default:
					l += numeric.LogNormCDF(z)
					mr[j] = numeric.MillsLower(z)
				}
			}
			q.lt[i] = l
			lmax = math.Max(lmax, l)
		}
		var s float64
		for _, l := range q.lt {
			s += math.Exp(l - lmax)
		}
		lz := lmax + math.Log(s)
		q.lz[t] = lz
		if !moments {
			continue
		}
		row := q.dy[t*k : (t+1)*k]
		clear(row)
		for i := range q.rule.X {
			om := math.Exp(q.lt[i] - lz)
			if om == 0 {
				continue
			}
			mr := q.mills[i*nc : (i+1)*nc]
			jj := 0
			for j := range m {
				if j != t {
					row[j] -= om * mr[jj]
					jj++
				}
			}
		}
		var s2 float64
		for j, d := range row {
			if j != t {
				s2 -= d
			}
		}
		row[t] = s2
	}
}

// drawAux sets y (length K) to a draw of N(f, I) truncated to argmax_j y_j
// = k, exactly: first the winner t = y_k from its marginal density
// ∝ exp(h(t)), h(t) = -(t - f_k)^2/2 + sum_{j != k} log Phi(t - f_j), then
// each y_j, j != k, from N(f_j, 1) truncated above at t. h is concave with
// h” <= -1 (each log Phi is concave), so at any point s
//
//	h(t) <= h(s) + h'(s)(t - s) - (t - s)^2/2,
//
// a Gaussian envelope N(s + h'(s), 1): rejection sampling from it is exact,
// and with s near the mode (a few Newton steps) accepts at least
// 1/sqrt(K) of the proposals (h” >= -K).
func drawAux(rng *rand.Rand, y, f []float64, k int) {
	// Newton steps towards the mode of h.
	s := f[k]
	for _, fj := range f {
		s = math.Max(s, fj)
	}
	h := func(t float64) (v, d, d2 float64) {
		v = -0.5 * (t - f[k]) * (t - f[k])
		d = -(t - f[k])
		d2 = -1
		for j, fj := range f {
			if j == k {
				continue
			}
			x := t - fj
			v += numeric.LogNormCDF(x)
			if x > numeric.PhiOne {
				continue
			}
			r := numeric.MillsLower(x)
			d += r
			d2 -= r * (x + r)
		}
		return v, d, d2
	}
	hs, ds, d2 := h(s)
	for it := 0; it < 4; it++ {
		step := -ds / d2
		if math.Abs(step) < 1e-3 {
			break
		}
		s += step
		hs, ds, d2 = h(s)
	}
	var t float64
	for {
		t = s + ds + rng.NormFloat64()
		ht, _, _ := h(t)
		if math.Log(rng.Float64()) < ht-hs-ds*(t-s)+0.5*(t-s)*(t-s) {
			break
		}
	}
	y[k] = t
	for j, fj := range f {
		if j != k {
			y[j] = numeric.TruncNormal(rng, fj, 1, math.Inf(-1), t)
		}
	}
}
