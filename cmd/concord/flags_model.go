package main

import (
	"flag"
	"math"
	"strconv"
	"strings"

	"concord/analysis"
	"concord/annotations"
)

// modelFlags are the settings of the deterministic models that concord
// fit and concord eval share: the EP/Laplace engines' noise, thresholds and
// restarts, the robust classifier's error rates, and the confusion model's
// prior.
type modelFlags struct {
	epsilon, em, thresholds, hierarchy *string
	raterModel                         *string
	selectModel                        *bool
	sigma, concentration               *float64
	restarts, communities, maxIter     *int
	rank                               *int
}

func addModelFlags(fs *flag.FlagSet) *modelFlags {
	return &modelFlags{
		epsilon:       fs.String("epsilon", "", "robust: learn (default: every rater's labelling-error rate learnt by EM) or a rate in [0, 0.5) fixed for every rater (0: the plain probit classifier)"),
		selectModel:   fs.Bool("select", false, "robust: fit the plain and the robust classifier and keep the one with the larger evidence (Kim & Ghahramani eq. 21)"),
		em:            fs.String("em", "", "robust: M-step of the error rates, tilted (default: the label's error responsibility, a stationary point of the EP evidence) or paper (Kim & Ghahramani eq. 20 as printed)"),
		sigma:         fs.Float64("sigma", 0, "ep/laplace: fix every rater's noise sd (robust: latent noise sd) (default: learnt)"),
		thresholds:    fs.String("thresholds", "", "ep/laplace: fix every rater's thresholds, b1,...,b(K-1) (default: learnt)"),
		rank:          fs.Int("rank", 0, "text kernel: rank of its weight-space prior C = X X' (default 0: every dimension up to 256 items, then gp.DefaultRank(N): 349 at 1,000 items, 250 at 4,000, 128 from 15,300, truncated by a randomized range finder with a diagonal correction; -1: the exact dense N x N matrix)"),
		restarts:      fs.Int("restarts", 0, "ep/laplace: starting points of the evidence maximisation (default 3 with one rater, 1 with several)"),
		hierarchy:     fs.String("hierarchy", "", "confusion: communities (default: each rater's confusion rows get the prior of one of several communities of raters, such as reliable raters and spammers, learnt by empirical Bayes, so raters with few labels borrow strength from raters like them), pooled (one community shared by every rater) or none (a fixed prior, stronger on the diagonal)"),
		raterModel:    fs.String("rater-model", "", "confusion: the raters' model, auto (default: one-coin, spammer-aware and the confusion model of --hierarchy fitted and the one with the best evidence kept), one-coin (one accuracy per rater), confusion (a confusion matrix per rater, Dawid-Skene, one shared prior), communities (confusion matrices with the --communities prior) or spammer (MACE: each label competent or the rater's own spam)"),
		communities:   fs.Int("communities", 0, "confusion: the number of communities with --hierarchy communities, 1 to 8 (default: chosen by the evidence lower bound from 1 to 4, at most one per 10 raters)"),
		maxIter:       fs.Int("max-iter", 0, "confusion: the limit of the variational iterations (default 1000; they stop earlier once no class probability changes by more than 1e-6 or the evidence lower bound by less than 1e-8 of itself)"),
		concentration: fs.Float64("concentration", 0, "confusion: the prior's pseudo-count total per confusion row (default 4; the prior's mean is learnt by empirical Bayes unless --hierarchy none)"),
	}
}

// apply sets the flags' fields of spec; a malformed --epsilon or
// --thresholds is an EINVALID error naming the flag.
func (m *modelFlags) apply(spec *analysis.FitSpec) error {
	spec.Sigma, spec.Restarts, spec.Rank = *m.sigma, *m.restarts, *m.rank
	spec.Select, spec.EM = *m.selectModel, *m.em
	spec.Hierarchy, spec.Communities, spec.Concentration, spec.MaxIter = *m.hierarchy, *m.communities, *m.concentration, *m.maxIter
	spec.RaterModel = *m.raterModel
	switch e := strings.ToLower(strings.TrimSpace(*m.epsilon)); e {
	case "", "learn":
	default:
		v, err := strconv.ParseFloat(e, 64)
		if err != nil {
			return annotations.Errorf(annotations.EINVALID, "--epsilon %q: expected learn or a labelling-error rate in [0, 0.5)", *m.epsilon)
		}
		spec.Epsilon = &v
	}
	if *m.thresholds != "" {
		for _, f := range strings.Split(*m.thresholds, ",") {
			b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(b) || math.IsInf(b, 0) {
				return annotations.Errorf(annotations.EINVALID, "--thresholds %q: %q is not a number (expected b1,...,b(K-1), e.g. -1,0,1)", *m.thresholds, f)
			}
			spec.Thresholds = append(spec.Thresholds, b)
		}
	}
	return nil
}
