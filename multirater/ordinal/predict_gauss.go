package ordinal

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
)

// gaussPredictor predicts new items from the Gaussian posterior of a
// deterministic fit (FitResult.Gaussian) through gp.SitePredictor's latent
// predictive N(mu, s^2) (Chu & Ghahramani eq. 16-17); rater l's grade
// distribution is Chu's eq. 18,
//
//	P(t = c) = Phi((b_lc - mu)/sqrt(sigma_l^2 + s^2)) - Phi((b_l,c-1 - mu)/sqrt(sigma_l^2 + s^2)).
type gaussPredictor struct {
	res *multirater.FitResult
	n   int
	sp  *gp.SitePredictor
}

func newGaussianPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	n := len(res.Items)
	for _, r := range res.Raters {
		if len(r.Thresholds) != len(res.Levels)-1 || !(r.Precision.Mean > 0) {
			return nil, multirater.DataErrorf("rater %q has malformed thresholds or precision in the fit result", r.ID)
		}
	}
	sp, err := gp.NewSitePredictor(res.Gaussian.Precision, res.Gaussian.Shift, cov)
	if err != nil {
		return nil, multirater.DataErrorf("the fit's gaussian posterior: %v", err)
	}
	return &Predictor{res: res, n: n, gauss: &gaussPredictor{res: res, n: n, sp: sp}}, nil
}

func (p *gaussPredictor) predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	r, c := cross.Dims()
	if r != len(ids) || c != p.n || len(prior) != len(ids) {
		panic("ordinal: Predict: cross must be len(ids)×N and prior of length len(ids)")
	}
	res := p.res
	levels := res.Levels
	k := len(levels)
	out := make([]multirater.ItemResult, len(ids))
	kv := make([]float64, p.n)
	b := make([]float64, k+1)
	for i, id := range ids {
		mat.Row(kv, i, cross)
		mu, vr := p.sp.Latent(kv, prior[i])
		sd := math.Sqrt(vr)
		it := multirater.ItemResult{ID: id, RaterGradeProbs: make(map[string][]float64, len(res.Raters)), GradeProbs: make(map[string]float64, k)}
		it.Score = multirater.NormalEstimate(mu, sd)
		cons := make([]float64, k)
		for _, rr := range res.Raters {
			sdy := math.Sqrt(vr + 1/rr.Precision.Mean)
			b[0], b[k] = math.Inf(-1), math.Inf(1)
			for c, t := range rr.Thresholds {
				b[c+1] = t.Estimate.Mean
			}
			pr := make([]float64, k)
			for c := range pr {
				pv := normInterval((b[c]-mu)/sdy, (b[c+1]-mu)/sdy)
				cons[c] += pv / float64(len(res.Raters))
				pr[c] = mcmc.Round6(pv)
			}
			it.RaterGradeProbs[rr.ID] = pr
		}
		setConsensus(&it, levels, cons)
		out[i] = it
	}
	return out
}
