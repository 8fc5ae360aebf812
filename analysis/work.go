package analysis

import (
	"fmt"
	"strings"
	"time"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/kernel"
)

// DefaultMaxFitWork is the default budget of one fit's projected Gibbs
// work (CheckWork): about one hour of one core.
const DefaultMaxFitWork = time.Hour

// Per-sweep costs of one Gibbs chain: seconds per sweep, per label per
// sweep, and per squared item per sweep for a kernel that relates items (a
// dense matrix-vector product). The per-label rates of the ordinal and
// classification samplers are 1.5-2x their labels-only fits on the shared
// ladder (2-core machine, 2026-11-30, 12,000 sweeps: ordinal Gibbs at
// 4,000 items 57.7 CPU s, 3.0e-7 s per label-sweep at load 5;
// classification Gibbs at 4,000 / 16,000 items 29.6 / 111.3 CPU s,
// 1.5e-7 / 1.45e-7); they were 3e-6 for both, from an older sampler, 10-20x
// over, which refused the ladder's 64,000-item classification fit (about
// 2.5 h projected). The confusion model's from a 1000-item, 5000-label fit
// of 1000 sweeps (1.2 s).
const (
	sweepFixed                  = 5e-6
	sweepPerLabel               = 6e-7
	sweepPerLabelClassification = 2.5e-7
	sweepPerLabelConfusion      = 2e-7
	sweepPerItemPair            = 2e-9
	// sweepPerItemRank is the kernel's part of a sweep under a low-rank
	// prior (G N×r: a few products with G per draw), per item and
	// dimension: the ladder's ordinal Gibbs fit with the text kernel on
	// 4,000 items (r = 250) took 68.6 CPU s for 12,000 sweeps, of which
	// the conditional of m is about 3 ms a sweep.
	sweepPerItemRank = 4e-9
)

// Work is a fit's projected Gibbs work: sweeps in all (chains x (burn-in +
// samples x thin)) and the one-core time they are projected to take.
type Work struct {
	Sweeps    int64
	Projected time.Duration
}

// ProjectedWork projects the Gibbs work of spec (defaults filled in) on
// labels labels of items items; a fit by a deterministic engine (ep,
// laplace, vb, smc) has none: its work is bounded by its iteration caps.
// It is a rough, deliberately simple estimate (linear in the labels, plus
// the items squared for a kernel that relates items), good to a factor of
// a few: enough to stop a fit of hours from taking a worker, not a
// promise of its duration.
func ProjectedWork(spec FitSpec, labels, items int) Work {
	if !strings.EqualFold(spec.Engine, multirater.EngineGibbs) {
		return Work{}
	}
	burnin := max(spec.Burnin, 0)
	sweeps := int64(max(spec.Chains, 1)) * (int64(burnin) + int64(max(spec.Samples, 1))*int64(max(spec.Thin, 1)))
	perLabel := sweepPerLabel
	switch {
	case strings.EqualFold(spec.Model, ModelConfusion):
		perLabel = sweepPerLabelConfusion
	case strings.EqualFold(spec.Model, ModelClassification):
		perLabel = sweepPerLabelClassification
	}
	per := sweepFixed + perLabel*float64(labels)
	// A kernel left out follows the data when the fit runs: counted as the
	// identity (the lower estimate).
	if ks, err := spec.kernelSpec(); strings.TrimSpace(spec.Kernel) != "" && err == nil && !ks.Identity() {
		if r := lowRankWork(spec, ks, labels, items); r > 0 {
			per += sweepPerItemRank * float64(items) * float64(r)
		} else {
			per += sweepPerItemPair * float64(items) * float64(items)
		}
	}
	secs := per * float64(sweeps)
	d := time.Duration(secs * float64(time.Second))
	if secs > float64(1<<62)/float64(time.Second) {
		d = time.Duration(1 << 62)
	}
	return Work{Sweeps: sweeps, Projected: d}
}

// lowRankWork returns the rank of the low-rank prior that buildCovariance
// gives the kernel ks on items items for an ordinal or classification
// Gibbs fit (a text kernel, or fixed covariate terms from
// PivotedFromItems items; spec.Rank, or the most the default rank rule may
// reach on labels labels: defaultRank), or 0 for a dense kernel matrix.
func lowRankWork(spec FitSpec, ks kernel.Spec, labels, items int) int {
	if spec.Rank < 0 || !(strings.EqualFold(spec.Model, ModelOrdinal) || strings.EqualFold(spec.Model, ModelClassification)) {
		return 0
	}
	text, cov := true, true
	for _, t := range ks {
		text = text && t.Kind == kernel.TextTerm
		cov = cov && t.Kind == kernel.CovTerm && !t.Learn && t.Cov.Covariates()
	}
	if !text && !(cov && (items >= PivotedFromItems || spec.Rank > 0)) {
		return 0
	}
	if spec.Rank > 0 {
		return min(spec.Rank, items)
	}
	_, most := defaultRank(spec, labels, items)
	return most
}

// CheckWork refuses a fit whose projected Gibbs work (ProjectedWork on
// labels labels of items items) is over budget (budget <= 0: no limit).
// budgetName says where the budget is set (a flag), for the message,
// which names the budget, the projected time and what to lower.
func CheckWork(spec FitSpec, labels, items int, budget time.Duration, budgetName string) error {
	return checkWork(spec, 1, labels, items, budget, budgetName)
}

// CheckEvalWork is CheckWork for a cross-validation of folds fits, each
// on the labels and items of folds-1 folds.
func CheckEvalWork(spec FitSpec, folds, labels, items int, budget time.Duration, budgetName string) error {
	folds = max(folds, 2)
	return checkWork(spec, folds, labels*(folds-1)/folds, items*(folds-1)/folds, budget, budgetName)
}

func checkWork(spec FitSpec, fits, labels, items int, budget time.Duration, budgetName string) error {
	if budget <= 0 {
		return nil
	}
	w := ProjectedWork(spec, labels, items)
	total := time.Duration(min(float64(w.Projected)*float64(fits), float64(1<<62)))
	if total <= budget {
		return nil
	}
	what := "the fit's Gibbs sampling"
	if fits > 1 {
		what = fmt.Sprintf("the Gibbs sampling of the %d fits", fits)
	}
	return annotations.Errorf(annotations.EINVALID, "%s is projected to take about %s of one core (%d chains x (%d burn-in + %d samples x thin %d) = %d sweeps over %d labels per fit), over the budget of %s (%s): lower chains, samples, burnin or thin (flags --chains, --samples, --burnin, --thin)",
		what, roundWork(total), max(spec.Chains, 1), max(spec.Burnin, 0), max(spec.Samples, 1), max(spec.Thin, 1), w.Sweeps, labels, roundWork(budget), budgetName)
}

// roundWork rounds a duration for a message: "6h12m", "45s".
func roundWork(d time.Duration) string {
	switch {
	case d >= 1000*time.Hour:
		return fmt.Sprintf("%.3g hours", d.Hours())
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	default:
		return d.Round(time.Second).String()
	}
}
