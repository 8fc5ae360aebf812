package bounded

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"

	"concord/multirater"
	"concord/multirater/infer"
	"concord/multirater/lik"
	"concord/multirater/numeric"
)

// choose fits every candidate model and keeps the one whose consensus
// best predicts held-out ratings.
//
// With Options.Likelihood Auto the candidates' likelihoods are
// Beta (Jensen et al. sec. 3.3) and Normal (lik.Normal: the Gaussian on
// the rating scale, whose consensus under one shared dispersion is an
// affine map of the raters' mean, so that Pearson r with any criterion
// equals the mean's when every item has as many ratings); with
// Options.Dispersions Auto each rater's dispersion is learnt (PerRater) or
// one is shared by all (Shared); the priors are Data's and Data.Alt.
//
// The candidates' evidences are not comparable across likelihoods (the
// beta density has no value at a bound, so ratings there are moved inside
// by eps and get densities the Gaussian cannot match), so the choice
// compares a leave-one-out (LOO) score of the ratings: the mean over the
// ratings of the log probability of the rating's cell at the data's
// resolution, [y - eps, y + eps] ([0, eps] at Lo, [1 - eps, 1] at Hi, eps
// half the resolution, Squeeze), cells that partition the scale, so that
// every candidate is scored on the same events. The predictive of rating j
// is the consensus's, the one the fit reports as each item's value: a new
// rating by a rater with the median dispersion (consensusLik), given every
// other rating (the EP cavity N(mu_-j, s2_-j) of the site, Opper & Winther
// 2000; Vehtari et al. 2016 sec. 3; under Laplace's method the marginal
// with the site's Gaussian divided out). The score thus judges the
// consensus the user gets, not each rater's own fit: per-rater dispersions
// always predict each rater's own ratings better (ModelCandidate.LOOOwn),
// largely by fitting raters who use little of the scale as precise, and
// win only when their consensus predicts a typical rater better. The
// largest score wins; the fit document lists every candidate's
// (diagnostics.model_candidates) and says why (diagnostics.choice). A
// candidate that fails drops out with a note; the fit fails only when
// every candidate fails.
func choose(ctx context.Context, data *Data, opts Options, name, disp string) (*multirater.FitResult, error) {
	liks := []string{name}
	if name == Auto {
		liks = []string{Beta, Normal}
	}
	disps := []string{disp}
	if disp == Auto {
		disps = []string{PerRater, Shared}
		if opts.Bias {
			disps = []string{PerRater}
		}
	}
	priors := append([]Prior{{Kernel: data.Kernel, Cov: data.Cov, Learn: data.Learn}}, data.Alt...)
	type fitted struct {
		c   *candidate
		loo looScores
	}
	// The candidates, prior by prior (candidate k has prior k / per).
	var cands []multirater.ModelCandidate
	for _, pr := range priors {
		kern := cmp.Or(pr.Kernel, "identity")
		for _, ln := range liks {
			for _, dn := range disps {
				cands = append(cands, multirater.ModelCandidate{Name: ln + "/" + dn + "/" + kern, Likelihood: ln, Dispersions: dn, Kernel: kern})
			}
		}
	}
	per := len(liks) * len(disps)
	fits := make([]*candidate, len(cands)) // the candidates fitted so far
	ch, err := infer.Choose(ctx, cands, opts.Progress, func(ctx context.Context, k int, c *multirater.ModelCandidate, progress func(multirater.Progress)) (fitted, float64, error) {
		d, pr := *data, priors[k/per]
		d.Cov, d.Kernel, d.Learn, d.Alt = pr.Cov, pr.Kernel, pr.Learn, nil
		if k >= per {
			d.Final = nil // the final run is for Data.Cov's prior
		}
		o := opts
		o.Likelihood, o.Dispersions, o.Progress, o.candidate = c.Likelihood, c.Dispersions, progress, true
		fc, err := fitCandidate(ctx, &d, o, c.Likelihood, c.Dispersions == Shared, warmFrom(cands[:k], fits, c))
		if err != nil {
			return fitted{}, 0, err
		}
		fits[k] = fc
		loo := fc.loo
		if math.IsNaN(loo.fresh) || math.IsInf(loo.fresh, 0) {
			return fitted{}, 0, fmt.Errorf("leave-one-out score %v", loo.fresh)
		}
		c.LOO, c.LOOOwn = &loo.fresh, &loo.own
		// The log evidence the document's diagnostics would give
		// (infer.Approx.Diagnose).
		v := fc.a.LogZ
		c.LogEvidence = &v
		return fitted{fc, loo}, loo.fresh, nil
	})
	if err != nil {
		return nil, err
	}
	best, second := ch.Fits[ch.Best], ch.Second
	// Only the chosen candidate's document is made (its per-item
	// quadratures are most of a candidate's summary).
	res, err := best.c.result(ctx)
	if err != nil {
		return nil, err
	}
	why := fmt.Sprintf("%s has the largest leave-one-out log predictive probability of the ratings (mean over %d ratings, cells of %s of the range): %.4f", cands[ch.Best].Name, len(data.Ratings), fmtCell(data), best.loo.fresh)
	if second >= 0 {
		d := best.loo.fresh - ch.Fits[second].loo.fresh
		why += fmt.Sprintf(", ahead of %s (%.4f) by %.4f per rating, %.1f in all", cands[second].Name, ch.Fits[second].loo.fresh, d, d*float64(len(data.Ratings)))
	}
	ch.Report(res, "by the leave-one-out predictive probability of the ratings (the evidences of different likelihoods are not comparable)", why, opts.Progress)
	return res, nil
}

// warmFrom returns the fitted candidate (fits, nil where one failed) among
// those before c (done) that starts c's evidence maximisation
// (candidate.warmStart): the last one of c's likelihood and dispersion
// sharing (under an earlier prior), else the last one of c's likelihood
// under c's prior (the other dispersion sharing); nil when there is none.
// A start near the optimum takes fewer L-BFGS iterations and EP sweeps
// than nu_0 with no sites; the optimum each candidate reaches is its own.
func warmFrom(done []multirater.ModelCandidate, fits []*candidate, c *multirater.ModelCandidate) *candidate {
	var other *candidate
	for i := len(done) - 1; i >= 0; i-- {
		d := done[i]
		if fits[i] == nil || d.Likelihood != c.Likelihood {
			continue
		}
		if d.Dispersions == c.Dispersions {
			return fits[i]
		}
		if other == nil && d.Kernel == c.Kernel {
			other = fits[i]
		}
	}
	return other
}

// fmtCell returns the width of the LOO score's cells, 2 eps, as a
// fraction of the range.
func fmtCell(data *Data) string {
	values := make([]float64, len(data.Ratings))
	for j, r := range data.Ratings {
		values[j] = r.Value
	}
	_, eps, _ := Squeeze(values, data.Lo, data.Hi)
	return fmt.Sprintf("%.4g", 2*eps)
}

// looScore returns the mean leave-one-out log predictive probability of
// the ratings at the data's resolution (see the package documentation): raw are the ratings
// on the unit scale (bounds kept), eps half the resolution; the cavity of
// site j is EP's, or under Laplace's method the marginal with the site's
// Gaussian approximation at the mode (precision W_j = -d2 log p, shift
// W_j f^ + d1 log p) divided out.
//
// A rater whose likelihood is the consensus's (every rater under one
// shared dispersion) has the same cell probability under both: it is
// computed once.
func looScore(name string, liks []lik.Bounded, rs []multirater.Rating, raw []float64, eps float64, sites []lik.Site, a *infer.Approx) (fresh, own float64) {
	cons := consensusLik(name, liks)
	asCons := make([]bool, len(liks))
	for l, o := range liks {
		asCons[l] = sameLik(o, cons)
	}
	for j, r := range rs {
		var m, v float64
		if a.EP != nil {
			m, v = a.EP.CavMean[j], a.EP.CavVar[j]
		} else {
			f, vf := a.Mean[r.Item], a.Var[r.Item]
			_, d1, d2, _ := sites[j].Lik.LogLik(sites[j].Y, f)
			m, v = f, vf
			if pc := 1/vf + d2; pc > 1e-12 {
				m, v = (f/vf+d2*f-d1)/pc, 1/pc
			}
		}
		x := raw[j]
		po := math.Log(math.Max(cellProb(liks[r.Rater], x, eps, m, v), 1e-300))
		pf := po
		if !asCons[r.Rater] {
			pf = math.Log(math.Max(cellProb(cons, x, eps, m, v), 1e-300))
		}
		own += po
		fresh += pf
	}
	return fresh / float64(len(rs)), own / float64(len(rs))
}

// sameLik reports whether likelihoods o and p are both beta or both
// truncated Gaussians (no bias) with the same Nu, so that every
// probability under one is the same under the other (the normal and
// warped ones have closed-form cell probabilities: nothing to save).
func sameLik(o, p lik.Bounded) bool {
	switch o.(type) {
	case *lik.Beta, *lik.TruncGauss:
		return reflect.TypeOf(o) == reflect.TypeOf(p) && nuOf(o) == nuOf(p)
	}
	return false
}

// cellProb returns the probability of the cell of rating x (unit scale)
// under likelihood o and the latent N(m, v): [x - eps, x + eps], [0, eps]
// at 0, [1 - eps, 1] at 1.
func cellProb(o lik.Bounded, x, eps, m, v float64) float64 {
	cdf := func(y float64) float64 {
		if n, ok := o.(*lik.Normal); ok && y > 0 && y < 1 {
			return numeric.NormCDF((y - n.Mean(m)) / math.Sqrt(v+n.Sigma*n.Sigma)) // y* ~ N(Mean(f), Sigma^2), f ~ N(m, v)
		}
		return lik.PredictiveCDF(o, y, m, v)
	}
	switch {
	case x <= 0:
		return cdf(eps)
	case x >= 1:
		return 1 - cdf(1-eps)
	}
	hi := 1.0
	if x+eps < 1 {
		hi = cdf(x + eps)
	}
	lo := 0.0
	if x-eps > 0 {
		lo = cdf(x - eps)
	}
	return hi - lo
}

// looScores are a fit's two leave-one-out scores (looScore): fresh, under
// the consensus's predictive (the choice's), and own, under each rating's
// rater's likelihood.
type looScores struct{ fresh, own float64 }
