package confusion

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/numeric"
)

// Predictor predicts new items from a confusion fit. With the identity
// kernel a new item shares nothing with the fitted ones: its class
// distribution is the posterior mean of the class proportions,
// E[rho_k] (FitResult.ClassProportions).
//
// With a kernel (Model.Confusion.Probit) a new item's latent values are
// the Gaussian-process regression on the fitted items' auxiliary means
// ytilde (Targets) with unit noise, with k the new item's covariances with
// the fitted items and k_new its prior variance, both with the bias b
// added (Girolami & Rogers 2006, the predictive distribution):
//
//	f_new,k ~ N(k' (I + C)^-1 ytilde_k, k_new - k' (I + C)^-1 k)
//
// ((I + C)^-1 by the Woodbury identity on the factor, I - G A^-1 G': C is
// never inverted), and the class distribution is that of the argmax of
// y_new = f_new + N(0, I): P_k = E_u[prod_{j != k} Phi(u + (mu_k - mu_j) /
// sqrt(1 + v))] (probitItem.eval). For a VB fit this is the exact
// predictive distribution under q(f). For a Gibbs fit the regression is
// done on each kept draw of the auxiliary variables (TargetDraws: given y,
// f_new is N(k' (I + C)^-1 y_.k, v) exactly) and the class distributions
// averaged over the draws; a result without kept draws uses their
// posterior mean (Targets), which gives the predictive mean of f_new
// exactly but leaves the spread of the draws of y out of its variance.
type Predictor struct {
	levels []string
	probs  []float64
	// The kernel prior: its factor, a[s][k*N+n] = ((I + C)^-1 y_.k)_n for
	// each set s of targets (the mean, or the kept draws).
	pr *probit
	a  [][]float64
}

// NewPredictor prepares the predictions of a confusion fit result; cov is
// the covariance of its items (the kernel matrix of the fit): with the
// identity kernel it is not read beyond its size, with another kernel it
// is factorised as in the fit.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "a", Name, cov); err != nil {
		return nil, err
	}
	if cp := res.Model.Confusion; cp != nil && cp.Probit != nil {
		return newKernelPredictor(res, cov)
	}
	if len(res.ClassProportions) != len(res.Levels) || len(res.Levels) < 2 {
		return nil, multirater.DataErrorf("the confusion fit result has no class proportions")
	}
	p := &Predictor{levels: res.Levels, probs: make([]float64, len(res.Levels))}
	sum := 0.0
	for c, e := range res.ClassProportions {
		if !(e.Mean >= 0) {
			return nil, multirater.DataErrorf("the confusion fit result has invalid class proportions")
		}
		p.probs[c] = e.Mean
		sum += e.Mean
	}
	if !(sum > 0) {
		return nil, multirater.DataErrorf("the confusion fit result has invalid class proportions")
	}
	for c := range p.probs {
		p.probs[c] /= sum
	}
	return p, nil
}

// Predict returns the results of new items: cross holds their
// covariances with the fitted items (len(ids)×N) and prior their prior
// variances (neither is read with the identity kernel, which relates no
// new item to the fitted ones). Each has NLabels 0, its class
// distribution (the class proportions with the identity kernel), the most
// probable class and its entropy in bits.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	if p.pr != nil {
		return p.predictKernel(ids, cross, prior)
	}
	out := make([]multirater.ItemResult, len(ids))
	best := 0
	var h float64
	for c, x := range p.probs {
		if x > p.probs[best] {
			best = c
		}
		if x > 0 {
			h -= x * math.Log2(x)
		}
	}
	for i, id := range ids {
		it := multirater.ItemResult{ID: id, ClassProbs: make(map[string]float64, len(p.levels)), Class: p.levels[best]}
		for c, x := range p.probs {
			it.ClassProbs[p.levels[c]] = numeric.Round6(x)
		}
		e := numeric.Round6(h)
		it.Entropy = &e
		out[i] = it
	}
	return out
}

// newKernelPredictor prepares the predictions of a fit with a kernel: the
// factor of the fitted items' covariance cov (as in the fit) and
// (I + C)^-1 ytilde_k for each class.
func newKernelPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	pb := res.Model.Confusion.Probit
	n, k := len(res.Items), len(res.Levels)
	if cov == nil {
		return nil, multirater.DataErrorf("the confusion fit has kernel %s: its items' covariance is needed to predict", res.Model.Kernel)
	}
	if k < 2 || len(pb.Targets) != n || !(pb.BiasVariance > 0) || pb.MaxRank < 1 || pb.Quadrature < 2 || pb.Quadrature > 200 {
		return nil, multirater.DataErrorf("the confusion fit result has a malformed kernel prior")
	}
	pr, err := newProbit(cov, pb.BiasVariance, DefaultFactorTol, pb.MaxRank, pb.Quadrature)
	if err != nil {
		return nil, err
	}
	p := &Predictor{levels: res.Levels, pr: pr}
	w := make([]float64, pr.r)
	gw := make([]float64, n)
	sets := pb.TargetDraws
	if len(sets) == 0 {
		sets = [][][]float64{pb.Targets}
	}
	for _, t := range sets {
		if len(t) != n {
			return nil, multirater.DataErrorf("the confusion fit result has malformed targets")
		}
		as := make([]float64, k*n)
		for c := 0; c < k; c++ {
			a := as[c*n : (c+1)*n]
			for i, row := range t {
				if len(row) != k || math.IsNaN(row[c]) || math.IsInf(row[c], 0) {
					return nil, multirater.DataErrorf("the confusion fit result has malformed targets")
				}
				a[i] = row[c]
			}
			// (I + G G')^-1 t = t - G A^-1 G' t (Woodbury).
			pr.meanTo(gw, w, a)
			for i, x := range gw {
				a[i] -= x
			}
		}
		p.a = append(p.a, as)
	}
	return p, nil
}

// predictKernel is Predict with a kernel prior (see Predictor).
func (p *Predictor) predictKernel(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	pr := p.pr
	n, k := pr.n, len(p.levels)
	if r, c := cross.Dims(); r != len(ids) || c != n || len(prior) != len(ids) {
		panic(fmt.Sprintf("confusion: Predict: cross is %d×%d and prior has %d values for %d ids and %d fitted items", r, c, len(prior), len(ids), n))
	}
	kb := make([]float64, n)
	g := make([]float64, pr.r)
	u := make([]float64, pr.r)
	mu := make([]float64, k)
	pq := newProbitItem(pr.rule, k)
	out := make([]multirater.ItemResult, len(ids))
	for i, id := range ids {
		for j := range kb {
			kb[j] = cross.At(i, j) + pr.bias
		}
		pr.mulGT(g, kb)
		copy(u, g)
		pr.solveA(u)
		// k'(I + C)^-1 k = k'k - (G'k)' A^-1 (G'k).
		v := prior[i] + pr.bias - (numeric.Dot(kb, kb) - numeric.Dot(g, u))
		s := math.Sqrt(1 + math.Max(v, 0))
		probs := make([]float64, k)
		for _, as := range p.a {
			for c := range mu {
				mu[c] = numeric.Dot(kb, as[c*n:(c+1)*n]) / s
			}
			pq.eval(mu, false)
			// Each set's distribution normalised (quadrature rounding).
			tot := 0.0
			for _, lz := range pq.lz {
				tot += math.Exp(lz)
			}
			for c, lz := range pq.lz {
				probs[c] += math.Exp(lz) / tot
			}
		}
		sum := 0.0
		for _, x := range probs {
			sum += x
		}
		it := multirater.ItemResult{ID: id, ClassProbs: make(map[string]float64, k)}
		best := 0
		var h float64
		for c := range probs {
			x := probs[c] / sum
			it.ClassProbs[p.levels[c]] = numeric.Round6(x)
			if x > probs[best]/sum {
				best = c
			}
			if x > 0 {
				h -= x * math.Log2(x)
			}
		}
		it.Class = p.levels[best]
		e := numeric.Round6(math.Max(h, 0))
		it.Entropy = &e
		out[i] = it
	}
	return out
}
