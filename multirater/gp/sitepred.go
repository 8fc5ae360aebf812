package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// SitePredictor predicts the latent values of new items from a Gaussian
// posterior given by per-item sites, q(f) ∝ N(f; 0, C) exp(-f'Sf/2 + V'f)
// with S >= 0 and V the site precisions and precision-weighted means summed
// per item (what EP and Laplace leave; multirater.GaussianSites). A new
// item with covariances k with the fitted items and prior variance k* has
// the latent predictive N(mu, s^2) (Chu & Ghahramani eq. 16 for Laplace,
// 17 for EP):
//
//	mu  = k'(C + S^-1)^-1 S^-1 V = k' alpha,   alpha = V - S^1/2 B^-1 S^1/2 C V,
//	s^2 = k* - k'(C + S^-1)^-1 k = k* - |L^-1 S^1/2 k|^2,
//
// with B = I + S^1/2 C S^1/2 = L L' (Rasmussen & Williams alg. 3.6; C may
// be singular). B is factorised once, O(N^3); each new item costs O(N^2).
//
// Sites of EP with likelihoods that are not log-concave may have negative
// precisions (ep.Options.NegativeSites): then S^1/2 does not exist and the
// same predictive is computed from the LU factors of M = I + C S, as
// alpha = (I + S C)^-1 V and s^2 = k* - (S k)' M^-1 k.
type SitePredictor struct {
	n     int
	sq    []float64 // S^1/2
	l     mat.TriDense
	alpha []float64
	sk    *mat.VecDense
	// lu is the factor of M when some site precision is negative (sq and
	// l unused); s holds S.
	lu *mat.LU
	s  []float64
}

// NewSitePredictor factorises B for the sites (prec, shift) and the fitted
// items' covariance cov. Invalid sites (negative or non-finite) and a B
// that is not positive definite are errors.
func NewSitePredictor(prec, shift []float64, cov mat.Symmetric) (*SitePredictor, error) {
	if lr := lowRankOf(cov); lr != nil {
		// A low-rank covariance (no N×N matrix behind it), read with the
		// exact diagonal: the prior the engines fitted (its factor's
		// diagonal correction).
		cov = fitcAt{lr}
	}
	n := cov.SymmetricDim()
	if len(prec) != n || len(shift) != n {
		return nil, fmt.Errorf("%d site precisions and %d shifts for %d items", len(prec), len(shift), n)
	}
	p := &SitePredictor{n: n, sq: make([]float64, n), sk: mat.NewVecDense(n, nil)}
	negative := false
	for i, s := range prec {
		if math.IsNaN(s) || math.IsInf(s, 0) || math.IsNaN(shift[i]) || math.IsInf(shift[i], 0) {
			return nil, fmt.Errorf("item %d has an invalid site precision %v or shift %v", i, s, shift[i])
		}
		negative = negative || s < 0
		p.sq[i] = math.Sqrt(math.Max(s, 0))
	}
	if negative {
		return p.withLU(prec, shift, cov)
	}
	var chol mat.Cholesky
	if !chol.Factorize(IPlusSCS(cov, p.sq)) {
		return nil, fmt.Errorf("the posterior precision is not positive definite with this covariance")
	}
	// alpha = V - S^1/2 B^-1 S^1/2 C V.
	v := mat.NewVecDense(n, append([]float64(nil), shift...))
	var cv mat.VecDense
	cv.MulVec(cov, v)
	for i := 0; i < n; i++ {
		cv.SetVec(i, cv.AtVec(i)*p.sq[i])
	}
	var x mat.VecDense
	if err := chol.SolveVecTo(&x, &cv); err != nil {
		return nil, fmt.Errorf("the posterior precision is singular with this covariance: %v", err)
	}
	p.alpha = make([]float64, n)
	for i := range p.alpha {
		p.alpha[i] = shift[i] - p.sq[i]*x.AtVec(i)
	}
	chol.LTo(&p.l)
	return p, nil
}

// IPlusSCS returns B = I + S C S, S = diag(s) (s nil: I + C), the
// well-conditioned matrix whose Cholesky factor solves with the posterior
// of sites of precisions s^2 under the prior covariance c (Rasmussen &
// Williams eq. 3.26).
func IPlusSCS(c mat.Symmetric, s []float64) *mat.SymDense {
	n := c.SymmetricDim()
	b := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := c.At(i, j)
			if s != nil {
				v = s[i] * v * s[j]
			}
			if i == j {
				v++
			}
			b.SetSym(i, j, v)
		}
	}
	return b
}

// withLU sets up the predictor from the LU factors of M = I + C S.
func (p *SitePredictor) withLU(prec, shift []float64, cov mat.Symmetric) (*SitePredictor, error) {
	n := p.n
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := cov.At(i, j) * prec[j]
			if i == j {
				v++
			}
			m.Set(i, j, v)
		}
	}
	p.lu, p.s = &mat.LU{}, append([]float64(nil), prec...)
	p.lu.Factorize(m)
	if p.lu.Det() == 0 {
		return nil, fmt.Errorf("the posterior precision is singular with this covariance (negative sites)")
	}
	// alpha = (I + S C)^-1 V = M'^-1 V.
	var a mat.VecDense
	if err := p.lu.SolveVecTo(&a, true, mat.NewVecDense(n, append([]float64(nil), shift...))); err != nil {
		return nil, fmt.Errorf("the posterior precision is singular with this covariance: %v", err)
	}
	p.alpha = make([]float64, n)
	for i := range p.alpha {
		p.alpha[i] = a.AtVec(i)
	}
	return p, nil
}

// LatentRows calls f with the latent predictive mean and variance
// (Latent) of each of n new items i, whose covariances with the fitted
// items are row i of cross (kv, reused between the calls) and whose prior
// variance is prior[i]. It panics, naming who (the caller), unless cross
// is n×N and prior of length n.
func (p *SitePredictor) LatentRows(who string, n int, cross mat.Matrix, prior []float64, f func(i int, kv []float64, mu, vr float64)) {
	r, c := cross.Dims()
	if r != n || c != p.n || len(prior) != n {
		panic(who + ": cross must be len(ids)×N and prior of length len(ids)")
	}
	kv := make([]float64, p.n)
	for i := 0; i < n; i++ {
		mat.Row(kv, i, cross)
		mu, vr := p.Latent(kv, prior[i])
		f(i, kv, mu, vr)
	}
}

// Latent returns the latent predictive mean and variance of a new item
// with covariances k (length N) with the fitted items and prior variance
// prior. It reuses scratch: not for concurrent use.
func (p *SitePredictor) Latent(k []float64, prior float64) (mu, vr float64) {
	if len(k) != p.n {
		panic(fmt.Sprintf("gp: SitePredictor.Latent: %d covariances for %d items", len(k), p.n))
	}
	for j, kv := range k {
		mu += kv * p.alpha[j]
	}
	if p.lu != nil {
		// s^2 = k* - (S k)' M^-1 k.
		if err := p.lu.SolveVecTo(p.sk, false, mat.NewVecDense(len(k), k)); err != nil {
			panic("gp: SitePredictor: " + err.Error())
		}
		q := 0.0
		for j, kv := range k {
			q += p.s[j] * kv * p.sk.AtVec(j)
		}
		return mu, math.Max(prior-q, 0)
	}
	for j, kv := range k {
		p.sk.SetVec(j, p.sq[j]*kv)
	}
	p.sk.SolveVec(&p.l, p.sk)
	return mu, math.Max(prior-mat.Dot(p.sk, p.sk), 0)
}

// fitcAt is a low-rank covariance read element by element with the
// diagonal of the covariance it approximates: G G' + diag(C_nn - |g_n|^2),
// the prior of the factor with its diagonal correction (LowRank.factor).
type fitcAt struct{ c *LowRank }

func (f fitcAt) Dims() (int, int)  { return f.c.n, f.c.n }
func (f fitcAt) SymmetricDim() int { return f.c.n }
func (f fitcAt) T() mat.Matrix     { return f }
func (f fitcAt) At(i, j int) float64 {
	if i == j && f.c.diag != nil {
		return math.Max(f.c.diag[i], f.c.At(i, i))
	}
	return f.c.At(i, j)
}
