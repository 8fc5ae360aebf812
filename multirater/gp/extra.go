package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// ExtraFromItems is the number of items from which the Gibbs samplers take
// a truncated low-rank prior with its diagonal correction (NewPriorExtra);
// below it they keep NewPrior's factor, whose draws stay bit-identical to
// those of earlier versions. It is analysis.PivotedFromItems, the size
// from which a fixed covariate kernel is held in low-rank form.
const ExtraFromItems = 500

// NewSamplerPrior is the prior factor of a Gibbs sampler of n items: with
// extra (the families' choice from ExtraFromItems items), a truncated
// low-rank prior with its diagonal correction (FITC), as EP and Laplace
// take it (NewPriorExtra); else NewPrior's factor.
func NewSamplerPrior(n int, cov mat.Symmetric, extra bool) (*Factor, error) {
	if extra {
		return NewPriorExtra(n, cov)
	}
	return NewPrior(n, cov)
}

// NewPriorExtra is NewPrior for a Gibbs sampler that takes the diagonal
// correction of a truncated low-rank covariance: for a LowRank covariance
// (LowRank, NewGramLowRank) that leaves out any variance, the factor
// carries Factor.Extra, so that the prior is
//
//	f = G w + e,  w ~ N(0, I_r),  e_n ~ N(0, Extra_n) independent,
//
// C ≈ G G' + diag(Extra) with the exact prior variances (the FITC prior of
// Snelson & Ghahramani 2006 with the truncated basis or the pivots as
// inducing points; see LowRank.factor). Every other covariance gives
// NewPrior's factor (Extra nil).
//
// The samplers draw (w, e) from their Gaussian conditional in two exact
// blocks: w | e, pseudo-observations (the weight-space draw of Posterior
// with the precision-weighted sums s - d∘e) and e | w (DrawExtraTo,
// independent per item, O(N)).
func NewPriorExtra(n int, cov mat.Symmetric) (*Factor, error) {
	lr := lowRankOf(cov)
	if lr == nil {
		return NewPrior(n, cov)
	}
	f := lr.factor(lr.r)
	if f.Extra != nil {
		any := false
		for _, v := range f.Extra {
			if v > 0 {
				any = true
				break
			}
		}
		if !any {
			f.Extra = nil
		}
	}
	f.Single()
	return f, nil
}

// ExtraDims returns the number of items with a positive diagonal
// correction (the dimension of e that carries prior mass), 0 without one.
func (f *Factor) ExtraDims() int {
	k := 0
	for _, v := range f.Extra {
		if v > 0 {
			k++
		}
	}
	return k
}

// ExtraQuad returns sum_n e_n^2 / Extra_n over the items with a positive
// correction: twice the negative log prior density of e, up to a constant
// (what a scale move of the state needs).
func (f *Factor) ExtraQuad(e []float64) float64 {
	if len(e) != len(f.Extra) {
		panic(fmt.Sprintf("gp: ExtraQuad: %d values for %d corrections", len(e), len(f.Extra)))
	}
	var s float64
	for n, v := range f.Extra {
		if v > 0 {
			s += e[n] * e[n] / v
		}
	}
	return s
}

// DrawExtraTo draws the diagonal part e of f = G w + e (see NewPriorExtra)
// from its full conditional given w, with gw = G w, and Gaussian
// pseudo-observations of f with item precisions d_n and precision-weighted
// sums s_n (the log likelihood -d_n f_n^2/2 + s_n f_n):
//
//	e_n | w ~ N((s_n - d_n gw_n) / (1/Extra_n + d_n), 1/(1/Extra_n + d_n)),
//
// independently over items (e_n = 0 where Extra_n = 0), and sets
// m = gw + e. O(N).
func (f *Factor) DrawExtraTo(rng *rand.Rand, e, m, gw, sum, d []float64) {
	n := len(f.Extra)
	if len(e) != n || len(m) != n || len(gw) != n || len(sum) != n || len(d) != n {
		panic(fmt.Sprintf("gp: DrawExtraTo: lengths %d, %d, %d, %d, %d for %d items", len(e), len(m), len(gw), len(sum), len(d), n))
	}
	for i, v := range f.Extra {
		if v > 0 {
			p := 1/v + d[i]
			e[i] = (sum[i]-d[i]*gw[i])/p + rng.NormFloat64()/math.Sqrt(p)
		} else {
			e[i] = 0
		}
		m[i] = gw[i] + e[i]
	}
}

// DrawExtraPriorTo draws e from its prior, e_n ~ N(0, Extra_n), and sets
// m = gw + e (a chain's starting state).
func (f *Factor) DrawExtraPriorTo(rng *rand.Rand, e, m, gw []float64) {
	for i, v := range f.Extra {
		e[i] = math.Sqrt(v) * rng.NormFloat64()
		m[i] = gw[i] + e[i]
	}
}
