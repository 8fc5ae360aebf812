package ordinal

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"concord/multirater"
	"concord/multirater/infer"
)

// The noise models of DetOptions.Noise.
const (
	// Auto fits PerRater and Shared (with each prior of Data and
	// Data.Alt) and keeps the one with the largest penalised log evidence.
	Auto = "auto"
	// PerRater: each rater's noise sd and thresholds are learnt.
	PerRater = "per-rater"
	// SharedThresholds: one set of thresholds for every rater, each rater's
	// own noise sd.
	SharedThresholds = "shared-thresholds"
	// Shared: one noise sd and one set of thresholds for every rater.
	Shared = "shared"
)

// ParseNoise returns the canonical name of a noise model (Auto,
// PerRater or Shared; "" is PerRater), or an error naming the
// choices.
func ParseNoise(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case Auto:
		return Auto, nil
	case "", PerRater, "rater", "per_rater", "perrater":
		return PerRater, nil
	case SharedThresholds, "thresholds", "shared_thresholds":
		return SharedThresholds, nil
	case Shared, "one", "common":
		return Shared, nil
	}
	return "", fmt.Errorf("noise %q: expected auto, per-rater, shared-thresholds or shared", s)
}

// choose fits every candidate noise model and prior and keeps the one with
// the largest penalised log evidence.
//
// The candidates are PerRater (each rater's thresholds and noise sd) and
// Shared (one of each for every rater: Rogers et al.'s model with the
// raters alike), each with Data's prior and every prior in Data.Alt. With
// one rater, or with the thresholds and sigma both fixed, the two noise
// models are one and only the priors are compared.
//
// The evidences of the candidates are of one likelihood on one data set,
// so they are comparable, but they are maximised over the rater
// parameters (type-II maximum likelihood), and PerRater nests Shared: its
// maximised evidence is never below Shared's, even where the raters are
// alike and its extra parameters only fit noise. The score therefore
// subtracts from the log evidence 1/2 ln(n_o) for each learnt parameter,
// n_o the ratings that inform it (the ratings of its owner, one rater or
// all of them; for a kernel hyperparameter all of them): Schwarz's
// approximation of integrating each parameter out, whose curvature grows
// with the ratings it rests on. A rater whose labels are noise gains
// the per-rater model far more than its penalty (the rater's own sd
// explains its ratings, and the consensus stops following them); raters
// alike gain it less than the penalty. The fit document lists every
// candidate (diagnostics.model_candidates: log evidence, penalty, score)
// and says why (diagnostics.choice). A candidate that fails drops out with
// a note; the fit fails only when every candidate fails.
func choose(ctx context.Context, data *Data, opts DetOptions) (*multirater.FitResult, error) {
	disps := []string{PerRater, SharedThresholds, Shared}
	switch {
	case len(data.RaterIDs) < 2 || (opts.Sigma > 0 && len(opts.Thresholds) > 0):
		disps = []string{PerRater}
	case opts.Sigma > 0 || len(opts.Thresholds) > 0:
		disps = []string{PerRater, Shared} // SharedThresholds is one of them
	}
	priors := append([]Prior{{Kernel: data.Kernel, Cov: data.Cov, Learn: data.Learn}}, data.Alt...)
	total := len(priors) * len(disps)
	if total == 1 {
		df, err := fitDet(ctx, data, opts, PerRater)
		if err != nil {
			return nil, err
		}
		res, err := df.result()
		if err != nil {
			return nil, err
		}
		return res, df.intervals(ctx, res)
	}
	// The candidates, prior by prior (candidate k has prior k / len(disps)).
	var cands []multirater.ModelCandidate
	for _, pr := range priors {
		kern := cmp.Or(pr.Kernel, "identity")
		for _, dn := range disps {
			cands = append(cands, multirater.ModelCandidate{Name: dn + "/" + kern, Likelihood: "ordinal probit", Noise: dn, Kernel: kern})
		}
	}
	ch, err := infer.Choose(ctx, cands, opts.Progress, func(ctx context.Context, k int, c *multirater.ModelCandidate, progress func(multirater.Progress)) (detFit, float64, error) {
		d, pr := *data, priors[k/len(disps)]
		d.Cov, d.Kernel, d.Learn, d.Alt = pr.Cov, pr.Kernel, pr.Learn, nil
		if k >= len(disps) {
			d.Final = nil // the final run is for Data.Cov's prior
		}
		o := opts
		o.Progress = progress
		df, err := fitDet(ctx, &d, o, c.Noise)
		if err != nil {
			return detFit{}, 0, err
		}
		le, score := df.logZ, df.logZ-df.penalty
		c.LogEvidence, c.Score, c.Penalty, c.Parameters = &le, &score, df.penalty, df.params
		return df, score, nil
	})
	if err != nil {
		return nil, err
	}
	best, second := ch.Best, ch.Second
	sc := func(i int) float64 { return *cands[i].Score }
	fits := ch.Fits
	// The document of the chosen candidate only (detFit.result).
	res, err := fits[best].result()
	if err != nil {
		return nil, err
	}
	res.Model.Noise = cands[best].Noise
	why := fmt.Sprintf("%s has the largest log evidence less 1/2 ln(ratings) per learnt parameter: %.2f (log evidence %.2f, %d parameters, penalty %.2f)",
		cands[best].Name, sc(best), fits[best].logZ, fits[best].params, fits[best].penalty)
	if second >= 0 {
		why += fmt.Sprintf(", ahead of %s (%.2f; log evidence %.2f, %d parameters) by %.2f", cands[second].Name, sc(second), fits[second].logZ, fits[second].params, sc(best)-sc(second))
	}
	by := "by the penalised log evidence"
	if len(disps) > 1 {
		by += " (the per-rater model nests the shared ones, so its maximised evidence is never lower)"
	}
	// The chosen candidate's rater intervals (the Laplace approximation
	// of their type-II posterior), before the choice's note and timing.
	if err := fits[best].intervals(ctx, res); err != nil {
		return nil, err
	}
	ch.Report(res, "(noise/kernel) "+by, why, opts.Progress)
	return res, nil
}
