package ordinal

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/numeric"
)

// Predictor predicts new items from an ordinal FitResult without
// refitting. A deterministic fit (EP or Laplace, FitResult.Gaussian set) is
// predicted in closed form (Chu & Ghahramani eq. 16-18, see
// newGaussianPredictor). A Gibbs fit is predicted Rogers et al. appendix C
// style: for each kept posterior draw s
// of (m, alpha, b), the latent consensus of a new item is
//
//	f_new | m_s ~ N(k' C^+ m_s, k_new - k' C^+ k)
//
// (k the covariances between the new item and the training items, k_new its
// prior variance, C the training items' covariance), and rater l's grade
// distribution integrates f_new out of the probit likelihood exactly:
//
//	P(t = c | s) = Phi((b_lc - mu_s)/sqrt(s^2 + 1/alpha_l)) - Phi((b_l,c-1 - mu_s)/sqrt(s^2 + 1/alpha_l)),
//
// averaged over the draws. Items already in the fit (rated or not) are
// summarised in the FitResult itself.
type Predictor struct {
	res *multirater.FitResult
	n   int
	// cond conditions new items on the training items; proj[s] is draw
	// s of m projected (Conditional.ProjectTo).
	cond *gp.Conditional
	proj [][]float64
	// gauss predicts from a deterministic fit's Gaussian posterior.
	gauss *gaussPredictor
}

// NewPredictor prepares predictions from res, which must be an ordinal fit
// with kept draws or a Gaussian posterior, and cov, the covariance matrix of its items
// (the same as in the fit, in FitResult.Items order). It decomposes cov once.
//
// An EP fit's grade distributions are by default those of the EP evidence
// ratio (ratioPredictor), which prepares an EP run on the fit's ratings
// (with up to PredictOptions.MaxItems items); NewPredictorOptions chooses.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	return NewPredictorOptions(res, cov, PredictOptions{})
}

// NewPredictorOptions is NewPredictor with options for deterministic fits.
func NewPredictorOptions(res *multirater.FitResult, cov mat.Symmetric, opts PredictOptions) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "an", Name, cov); err != nil {
		return nil, err
	}
	n := len(res.Items)
	if res.Gaussian != nil {
		return newGaussianPredictor(res, cov, opts)
	}
	if res.Draws == nil || res.Draws.N == 0 || len(res.Draws.Thresholds) != res.Draws.N {
		return nil, multirater.DataErrorf("the fit result keeps no posterior draws to predict from")
	}
	for s, m := range res.Draws.M {
		if len(m) != n || len(res.Draws.Alpha[s]) != len(res.Raters) {
			return nil, multirater.DataErrorf("malformed draws in the fit result")
		}
	}
	cond, err := gp.NewConditional(cov)
	if err != nil {
		return nil, err
	}
	p := &Predictor{res: res, n: n, cond: cond}
	p.proj = make([][]float64, res.Draws.N)
	for s, m := range res.Draws.M {
		p.proj[s] = cond.ProjectTo(nil, m)
	}
	return p, nil
}

// Predict returns the results of new items: ids names them, cross holds
// their covariances with the fit's items (len(ids)×N, e.g. from a kernel.Kernel's
// CrossTo) and prior their prior variances k(x_new, x_new). Each result has
// NLabels 0, the score summary (of the mixture over draws), the consensus
// and per-rater grade distributions and the most probable grade; Rank is
// nil.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	out, _ := p.PredictNotes(ids, cross, prior)
	return out
}

// PredictNotes is Predict that also returns notes on how a deterministic
// fit's items were predicted: for an EP fit, whether the grade
// distributions are the evidence ratio's or the Gaussian predictive's, and
// why.
func (p *Predictor) PredictNotes(ids []string, cross mat.Matrix, prior []float64) ([]multirater.ItemResult, []string) {
	if p.gauss != nil {
		return p.gauss.predict(ids, cross, prior)
	}
	return p.predictDraws(ids, cross, prior), nil
}

func (p *Predictor) predictDraws(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	p.cond.CheckNew(len(ids), cross, prior)
	res := p.res
	levels := res.Levels
	k := len(levels)
	nl := len(res.Raters)
	r := p.cond.Rank()
	ns := len(p.proj)
	out := make([]multirater.ItemResult, len(ids))
	qk := make([]float64, r)
	mus := make([]float64, ns)
	b := make([]float64, k+1)
	for i, id := range ids {
		v2 := p.cond.CrossTo(qk, cross, i, prior[i])
		var sm, sm2 float64
		for s, pr := range p.proj {
			mus[s] = numeric.Dot(qk, pr)
			sm += mus[s]
			sm2 += mus[s] * mus[s]
		}
		mean := sm / float64(ns)
		vr := math.Max(sm2/float64(ns)-mean*mean, 0) + v2
		it := multirater.ItemResult{ID: id, RaterGradeProbs: make(map[string][]float64, nl), GradeProbs: make(map[string]float64, k)}
		sd := math.Sqrt(vr)
		it.Score = &multirater.Estimate{Mean: mean, SD: sd, Q025: mixQuantile(mus, math.Sqrt(v2), 0.025), Q50: mixQuantile(mus, math.Sqrt(v2), 0.5), Q975: mixQuantile(mus, math.Sqrt(v2), 0.975)}
		cons := make([]float64, k)
		for l := 0; l < nl; l++ {
			pr := make([]float64, k)
			for s := 0; s < ns; s++ {
				a := res.Draws.Alpha[s][l]
				sdy := math.Sqrt(v2 + 1/a)
				b[0], b[k] = math.Inf(-1), math.Inf(1)
				copy(b[1:k], res.Draws.Thresholds[s][l])
				for c := 0; c < k; c++ {
					pr[c] += normInterval((b[c]-mus[s])/sdy, (b[c+1]-mus[s])/sdy)
				}
			}
			for c := range pr {
				pr[c] /= float64(ns)
				cons[c] += pr[c] / float64(nl)
				pr[c] = numeric.Round6(pr[c])
			}
			it.RaterGradeProbs[res.Raters[l].ID] = pr
		}
		setConsensus(&it, levels, cons)
		out[i] = it
	}
	return out
}

// setConsensus sets it's consensus grade distribution (rounded as the fit
// results are) and its most probable grade.
func setConsensus(it *multirater.ItemResult, levels []string, cons []float64) {
	best := 0
	for c := range cons {
		it.GradeProbs[levels[c]] = numeric.Round6(cons[c])
		if cons[c] > cons[best] {
			best = c
		}
	}
	it.Grade = levels[best]
}

// mixQuantile returns the p-quantile of the equal-weight mixture of
// N(mu_s, sd^2), by bisection on its distribution function (sd may be 0).
func mixQuantile(mus []float64, sd, p float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range mus {
		lo = math.Min(lo, m)
		hi = math.Max(hi, m)
	}
	lo -= 8*sd + 1e-12
	hi += 8*sd + 1e-12
	cdf := func(x float64) float64 {
		var c float64
		for _, m := range mus {
			if sd == 0 {
				if m <= x {
					c++
				}
				continue
			}
			c += 0.5 * math.Erfc(-(x-m)/(sd*math.Sqrt2))
		}
		return c / float64(len(mus))
	}
	for i := 0; i < 100 && hi-lo > 1e-9*(1+math.Abs(lo)+math.Abs(hi)); i++ {
		mid := 0.5 * (lo + hi)
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}
