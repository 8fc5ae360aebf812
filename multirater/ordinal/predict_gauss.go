package ordinal

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/numeric"
)

// gaussPredictor predicts new items from the Gaussian posterior of a
// deterministic fit (FitResult.Gaussian) through gp.SitePredictor's latent
// predictive N(mu, s^2) (Chu & Ghahramani eq. 16-17); rater l's grade
// distribution is Chu's eq. 18,
//
//	P(t = c) = Phi((b_lc - mu)/sqrt(sigma_l^2 + s^2)) - Phi((b_l,c-1 - mu)/sqrt(sigma_l^2 + s^2)),
//
// or, for an EP fit by default, the EP evidence ratio (ratioPredictor),
// which corrects eq. 18 for the skewness of the exact predictive.
type gaussPredictor struct {
	res *multirater.FitResult
	n   int
	sp  *gp.SitePredictor
	// ratio, when set, gives the grade distributions; else why says why an
	// EP fit's are Gaussian.
	ratio *ratioPredictor
	why   string
}

func newGaussianPredictor(res *multirater.FitResult, cov mat.Symmetric, opts PredictOptions) (*Predictor, error) {
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
	gs := &gaussPredictor{res: res, n: n, sp: sp}
	if res.Model.Engine == multirater.EngineEP && len(res.Raters) > 0 {
		if opts.Gaussian {
			gs.why = "the Gaussian predictive was asked for"
		} else {
			gs.ratio, gs.why = newRatioPredictor(res, cov, opts.withDefaults())
		}
	}
	return &Predictor{res: res, n: n, gauss: gs}, nil
}

func (p *gaussPredictor) predict(ids []string, cross mat.Matrix, prior []float64) ([]multirater.ItemResult, []string) {
	res := p.res
	levels := res.Levels
	k := len(levels)
	var notes []string
	ratio := p.ratio
	if ratio != nil && ratio.work(len(ids)) > ratio.budget {
		notes = append(notes, fmt.Sprintf("grade distributions are EP's Gaussian predictive (Chu & Ghahramani eq. 18), not the evidence-ratio correction: its estimated work for %d item(s), %.2g flops, is above the budget of %.2g", len(ids), ratio.work(len(ids)), ratio.budget))
		ratio = nil
	} else if ratio == nil && p.why != "" {
		notes = append(notes, "grade distributions are EP's Gaussian predictive (Chu & Ghahramani eq. 18), not the evidence-ratio correction: "+p.why)
	}
	var g []float64
	var ratios [][]float64
	if ratio != nil {
		g = make([]float64, ratio.fac.R)
		ratios = make([][]float64, len(res.Raters))
		for l := range ratios {
			ratios[l] = make([]float64, k)
		}
	}
	fellBack, maxDev := 0, 0.0
	var firstErr error
	out := make([]multirater.ItemResult, len(ids))
	b := make([]float64, k+1)
	p.sp.LatentRows("ordinal: Predict", len(ids), cross, prior, func(i int, kv []float64, mu, vr float64) {
		id := ids[i]
		sd := math.Sqrt(vr)
		it := multirater.ItemResult{ID: id, RaterGradeProbs: make(map[string][]float64, len(res.Raters)), GradeProbs: make(map[string]float64, k)}
		it.Score = multirater.NormalEstimate(mu, sd)
		corrected := false
		if ratio != nil {
			dev, err := ratio.gradeProbs(ratios, g, kv, prior[i])
			if err != nil {
				fellBack++
				if firstErr == nil {
					firstErr = fmt.Errorf("item %q: %w", id, err)
				}
			} else {
				corrected = true
				maxDev = math.Max(maxDev, dev)
			}
		}
		cons := make([]float64, k)
		for l, rr := range res.Raters {
			pr := make([]float64, k)
			if corrected {
				for c := range pr {
					cons[c] += ratios[l][c] / float64(len(res.Raters))
					pr[c] = numeric.Round6(ratios[l][c])
				}
				it.RaterGradeProbs[rr.ID] = pr
				continue
			}
			sdy := math.Sqrt(vr + 1/rr.Precision.Mean)
			b[0], b[k] = math.Inf(-1), math.Inf(1)
			for c, t := range rr.Thresholds {
				b[c+1] = t.Estimate.Mean
			}
			for c := range pr {
				pv := normInterval((b[c]-mu)/sdy, (b[c+1]-mu)/sdy)
				cons[c] += pv / float64(len(res.Raters))
				pr[c] = numeric.Round6(pv)
			}
			it.RaterGradeProbs[rr.ID] = pr
		}
		setConsensus(&it, levels, cons)
		out[i] = it
	})
	if ratio != nil {
		blk := "every fitted item"
		if m := ratio.blockItems(); m >= 0 && m < ratio.fac.N {
			blk = fmt.Sprintf("the %d fitted items most correlated with it", m)
		}
		notes = append(notes, fmt.Sprintf("grade distributions by the EP evidence ratio P(y = k) = Z_EP(fit + rating k)/Z_EP(fit), normalised over k, with EP re-run on each new item and %s (largest |sum of the ratios - 1| %.3g); scores are EP's Gaussian predictive (Chu & Ghahramani eq. 17)", blk, maxDev))
		if fellBack > 0 {
			notes = append(notes, fmt.Sprintf("%d of %d item(s) have EP's Gaussian predictive grade distributions instead (%v)", fellBack, len(ids), firstErr))
		}
	}
	return out, notes
}
