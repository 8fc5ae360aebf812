package classify

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/numeric"
)

// The predictive class distribution of the multinomial probit (Rogers et
// al. eq. 18, appendix C eq. 51-56): for latent values m_1..m_K and
// precision A (sum_l alpha_l for the consensus, alpha_l for rater l), the
// probability that N(m, I/A) has its largest component at k is
//
//	P_k = E_u[ prod_{j != k} Phi(u + sqrt(A) (m_k - m_j)) ],  u ~ N(0, 1),
//
// a one-dimensional integral, computed here by Gauss-Hermite quadrature
// (not by sampling u). For K = 2 the integral is Phi(sqrt(A)(m_k - m_j)/sqrt2)
// exactly and is used in that form.
//
// The rule is adaptive (Liu & Pierce 1994): it is centred at the mode mu of
// the integrand's logarithm, -u^2/2 + sum_j log Phi(u + c_j), and scaled by
// its curvature, u = mu + sigma x, E[f(u)] = E_x[sigma phi(mu + sigma x) /
// phi(x) f(mu + sigma x)]. This keeps the accuracy when the product of the
// Phi factors is narrow (many close classes) and the relative accuracy of
// small probabilities (a class far behind another, whose integrand has its
// mass far out in the tail of phi).

// classQuad evaluates the predictive class distribution of one draw. Not
// safe for concurrent use (it owns scratch space).
type classQuad struct {
	rule *numeric.GHRule
	c    []float64
}

func newClassQuad(rule *numeric.GHRule, k int) *classQuad {
	return &classQuad{rule: rule, c: make([]float64, k)}
}

// negligibleGap is the scaled gap below which a class's probability is
// negligible: P_k <= P(y_k > y_j) = Phi(c/sqrt2) < 1e-12 for
// c = sqrt(a)(m_k - m_j) < negligibleGap, for any class j.
const negligibleGap = -9.94

// probsTo sets dst[k] to P_k for the latent values m at precision a (see
// above). dst and m have length K.
//
// The class with the largest m, whose probability is the largest, is 1
// minus the others (its absolute error is theirs, and its relative error
// smaller still), which saves one of the K integrals. A class trailing
// another by a scaled gap below negligibleGap has P_k < 1e-12 and is set to
// 0 without its integral (most of the classes when K is large), unless it
// is class must (pass -1 for none), which is always computed: the
// probability of an observed label is needed to its relative accuracy.
func (q *classQuad) probsTo(dst, m []float64, a float64, must int) {
	k := len(m)
	sa := math.Sqrt(a)
	if k == 2 {
		z := sa * (m[0] - m[1]) / 2 // Phi(x/sqrt2) = erfc(-x/2)/2 at x = sa (m0 - m1)
		dst[0] = 0.5 * math.Erfc(-z)
		dst[1] = 0.5 * math.Erfc(z)
		return
	}
	top := floats.MaxIdx(m)
	cut := m[top] + negligibleGap/sa
	var others float64
	for t := 0; t < k; t++ {
		if t == top {
			continue
		}
		if m[t] < cut && t != must {
			dst[t] = 0
			continue
		}
		c := q.c[:0]
		cmin := math.Inf(1)
		for j, mj := range m {
			if j == t {
				continue
			}
			v := sa * (m[t] - mj)
			c = append(c, v)
			cmin = math.Min(cmin, v)
		}
		p := ghProduct(q.rule, c, cmin)
		dst[t] = p
		others += p
	}
	dst[top] = math.Max(0, 1-others)
}

// ghProduct returns E_u[prod_j Phi(u + c_j)] by adaptive Gauss-Hermite
// quadrature (see above); cmin is min_j c_j.
func ghProduct(rule *numeric.GHRule, c []float64, cmin float64) float64 {
	mu, sig := numeric.ProbitProductMode(c, cmin, 4)
	var p float64
	for i, x := range rule.X {
		u := mu + sig*x
		f := rule.W[i] * sig * math.Exp(0.5*(x*x-u*u))
		for _, cj := range c {
			z := u + cj
			if z > numeric.PhiOne {
				continue
			}
			f *= numeric.NormCDF(z)
			if f == 0 {
				break
			}
		}
		p += f
	}
	return p
}

// Predictor predicts new items from a classification FitResult
// without refitting (Rogers et al. sec. 2.3.1 and appendix C): for each kept
// posterior draw s of (M, alpha), the latent values of a new item are
//
//	f_new,k | M_.k ~ N(k' C^+ M_.k, k_new - k' C^+ k),  independently over k,
//
// (k the covariances between the new item and the training items, k_new its
// prior variance, C the training items' covariance), and the predictive
// class distribution integrates f_new out of eq. 18 exactly: with
// v = k_new - k' C^+ k the latent values behave as means mu_k plus
// independent noise of variance v + 1/A, so eq. 18 applies at precision
// 1/(v + 1/A). The distributions are averaged over the draws.
type Predictor struct {
	res  *multirater.FitResult
	n, k int
	cond *gp.Conditional
	// proj[s][c] is draw s of M_.c projected (Conditional.ProjectTo).
	proj [][][]float64
	rule *numeric.GHRule
}

// NewPredictor prepares predictions from res, which must be a
// classification fit with kept draws (Draws.MClass), and cov, the
// covariance matrix of its items (the same as in the fit, in
// FitResult.Items order). It decomposes cov once.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "a", Name, cov); err != nil {
		return nil, err
	}
	if res.Draws == nil || res.Draws.N == 0 || len(res.Draws.MClass) != res.Draws.N || len(res.Draws.Alpha) != res.Draws.N {
		return nil, multirater.DataErrorf("the fit result keeps no posterior draws to predict from")
	}
	n, k := len(res.Items), len(res.Levels)
	for s, m := range res.Draws.MClass {
		if m.Items() != n || m.K != k || len(res.Draws.Alpha[s]) != len(res.Raters) {
			return nil, multirater.DataErrorf("malformed draws in the fit result")
		}
	}
	cond, err := gp.NewConditional(cov)
	if err != nil {
		return nil, err
	}
	nq := res.Model.Quadrature
	if nq < 2 || nq > 200 {
		nq = DefaultQuadrature
	}
	p := &Predictor{res: res, n: n, k: k, cond: cond, rule: numeric.NewGHRule(nq)}
	p.proj = make([][][]float64, res.Draws.N)
	col := make([]float64, n)
	for s, m := range res.Draws.MClass {
		pr := make([][]float64, k)
		for c := range pr {
			for row := range col {
				col[row] = m.V[row*k+c]
			}
			pr[c] = cond.ProjectTo(nil, col)
		}
		p.proj[s] = pr
	}
	return p, nil
}

// Predict returns the results of new items: ids names them, cross holds
// their covariances with the fit's items (len(ids)×N, e.g. from a kernel.Kernel's
// CrossTo) and prior their prior variances k(x_new, x_new). Each result has
// NLabels 0, the consensus and per-rater class distributions, the most
// probable class, its entropy and the probability that each class has the
// largest latent value.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	p.cond.CheckNew(len(ids), cross, prior)
	res := p.res
	k := p.k
	nl := len(res.Raters)
	r := p.cond.Rank()
	ns := len(p.proj)
	out := make([]multirater.ItemResult, len(ids))
	qk := make([]float64, r)
	mu := make([]float64, k)
	pr := make([]float64, k)
	cq := newClassQuad(p.rule, k)
	for i, id := range ids {
		v2 := p.cond.CrossTo(qk, cross, i, prior[i])
		cons := make([]float64, k)
		top := make([]float64, k)
		raters := make([][]float64, nl)
		for l := range raters {
			raters[l] = make([]float64, k)
		}
		for s := 0; s < ns; s++ {
			for c := 0; c < k; c++ {
				mu[c] = numeric.Dot(qk, p.proj[s][c])
			}
			var sum float64
			for _, a := range res.Draws.Alpha[s] {
				sum += a
			}
			cq.probsTo(pr, mu, 1/(v2+1/sum), -1)
			for c := range cons {
				cons[c] += pr[c]
			}
			if v2 > 0 {
				cq.probsTo(pr, mu, 1/v2, -1)
			} else {
				for c := range pr {
					pr[c] = 0
				}
				pr[floats.MaxIdx(mu)] = 1
			}
			for c := range top {
				top[c] += pr[c]
			}
			for l, a := range res.Draws.Alpha[s] {
				cq.probsTo(pr, mu, 1/(v2+1/a), -1)
				for c := range pr {
					raters[l][c] += pr[c]
				}
			}
		}
		it := multirater.ItemResult{ID: id}
		inv := 1 / float64(ns)
		for c := range cons {
			cons[c] *= inv
			top[c] *= inv
		}
		setClassSummary(&it, res.Levels, cons, top)
		it.RaterClassProbs = make(map[string][]float64, nl)
		for l, rp := range raters {
			for c := range rp {
				rp[c] = numeric.Round6(rp[c] * inv)
			}
			it.RaterClassProbs[res.Raters[l].ID] = rp
		}
		out[i] = it
	}
	return out
}

// setClassSummary sets the class distribution, class, entropy and argmax
// probabilities of an item.
func setClassSummary(it *multirater.ItemResult, levels []string, cons, top []float64) {
	k := len(levels)
	it.ClassProbs = make(map[string]float64, k)
	it.ArgmaxProbs = make(map[string]float64, k)
	var h float64
	for c, p := range cons {
		it.ClassProbs[levels[c]] = numeric.Round6(p)
		it.ArgmaxProbs[levels[c]] = numeric.Round6(top[c])
		if p > 0 {
			h -= p * math.Log2(p)
		}
	}
	h = numeric.Round6(math.Max(h, 0))
	it.Entropy = &h
	it.Class = levels[floats.MaxIdx(cons)]
}
