package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"concord/multirater"
	"concord/multirater/auc"
	"concord/multirater/kernel"
)

// Cost is a fit's expected cost, stated before it starts: CPU time (all
// threads together) and how the estimate was derived, for a message.
type Cost struct {
	CPU time.Duration
	// Max, when above CPU, is the cost if the default rank rule
	// (defaultRank) raises the low-rank prior's rank as far as its budget
	// allows: how far it goes depends on the kernel's spectrum, which is
	// known once the basis is built, so the fit's cost lies between CPU and
	// Max.
	Max   time.Duration
	Model string
}

// String says the cost as the CLI's summary line and the server's
// progress message do: "about 12 CPU s (model: ...)", or "about 4 to 40
// CPU s (model: ...)" when the default rank may be raised.
func (c Cost) String() string {
	return fmt.Sprintf("%s (model: %s)", c.Short(), c.Model)
}

// Short says the cost alone, for a progress message: "about 12 CPU s".
func (c Cost) Short() string {
	if c.Max > c.CPU {
		return fmt.Sprintf("about %s to %s CPU s", roundCPU(c.CPU), roundCPU(c.Max))
	}
	return fmt.Sprintf("about %s CPU s", roundCPU(c.CPU))
}

// roundCPU rounds CPU seconds to two significant digits ("0.4", "12",
// "1300").
func roundCPU(d time.Duration) string {
	s := d.Seconds()
	if s < 10 {
		return fmt.Sprintf("%.1f", s)
	}
	return fmt.Sprintf("%.2g", s)
}

// kernelClass is how a fit holds its items' prior covariance, which
// decides the kernel's part of the cost.
type kernelClass int

const (
	kernelNone    kernelClass = iota // identity or no kernel: labels only
	kernelLowRank                    // C = G G', G N×r: O(N r²) per evaluation
	kernelDense                      // the N×N matrix: O(N³/3) per factorisation
)

// costRates are one family's calibrated CPU seconds: a fixed part, per
// label, and per unit of kernel work for a low-rank prior (N r² per fit,
// N r per Gibbs sweep) and for a dense one (N³/3 per fit, N² per sweep);
// the auc model's sites are pairs of items, one positive and one
// negative, counted as N²/4 (balanced classes), at perPair. For a
// deterministic engine they include the family's usual number of
// evaluations (candidates x restarts x EP sweeps or Newton
// steps, EM rounds, cross-validation folds), which the defaults fix; for
// Gibbs they are per sweep.
type costRates struct {
	fixed, perLabel, perPair, perLowRank, perDense float64
	// perLearnt, when positive, replaces perLowRank for a learnt kernel's
	// inducing-point prior, per N r² sqrt(N/1000): the evidence
	// evaluations and their EP sweeps grow with the items and the raters
	// (robust, rbf width learnt, ladder: 94 evaluations of 7.5 sweeps at
	// 4,000 items and 20 raters, 162 of 9 at 16,000 items and 40).
	perLearnt float64
}

// The calibration table, CPU seconds measured with the shared ladder
// (../shared/tools/ladder/ladder.py, 4 labels per item, 250 and 1,000
// items, last at main 9efcea9, auc/ep's after issue 35's pair-EP speed-ups; the command and the table of estimated against measured CPU s
// are in docs/scripts/cost/README.md). Keys are model/engine. Rates that
// no ladder family measures are borrowed, not measured: confusion/gibbs
// (ProjectedWork's per-label rate), bounded/laplace (from bounded/ep),
// auc/smc (auc/ep's rates before the pair-EP speed-ups of issue 35, which
// SMC does not use), every dense rate of ordinal, bounded and
// confusion (from robust/ep's, or a guess for confusion/vb) and the
// Gibbs dense rates above 500 items.
var costTable = map[string]costRates{
	// Per sweep (x ProjectedWork's sweeps). classification/gibbs's per
	// label and per N r rates are from the ladder's 1,000- and 4,000-item
	// runs after issue 35's Gibbs savings (docs/scripts/cost/README.md).
	"ordinal/gibbs":        {fixed: 1.2e-4, perLabel: 1.45e-7, perLowRank: 6e-9, perDense: 2.7e-9},
	"classification/gibbs": {perLabel: 2.2e-7, perLowRank: 3.5e-9, perDense: 1.3e-8},
	"confusion/gibbs":      {fixed: 5e-6, perLabel: 2e-7, perLowRank: 6e-9, perDense: 2.7e-9},
	// Per fit (the defaults' evaluations included).
	"ordinal/ep":      {fixed: 0.07, perLabel: 2.3e-4, perLowRank: 1.7e-7, perDense: 6.5e-7},
	"ordinal/laplace": {fixed: 0.07, perLabel: 2.3e-4, perLowRank: 1.5e-7, perDense: 2.4e-6},
	"confusion/vb":    {fixed: 0.0035, perLabel: 1.66e-5, perLowRank: 9e-9, perDense: 1e-7},
	"bounded/ep":      {perLabel: 1.1e-3, perLowRank: 1.46e-7, perDense: 2.4e-6},
	"bounded/laplace": {perLabel: 1.1e-3, perLowRank: 1.46e-7, perDense: 2.4e-6},
	"robust/ep":       {perLabel: 2.2e-4, perLowRank: 6.6e-7, perDense: 2.37e-6, perLearnt: 4.5e-7},
	"auc/ep":          {perPair: 8.0e-5, perLowRank: 2.8e-7, perDense: 1.3e-6},
	"auc/smc":         {perPair: 2.16e-4, perLowRank: 6.6e-7, perDense: 1.09e-5},
	// One EP run (every rater parameter fixed: oneRun), from
	// docs/scripts/approx's fits on the ladder's data (branches meas35 and
	// rank35d, docs/scaling.md): text rank 349 and 600 at 1,000 items (1.6
	// and 3.3 CPU s), 250, 500 and 800 at 4,000 (4.5, 11.6, 28.4), the
	// dense text and rbf fits at 2,000 and 4,000 items (54.5; 419 and 461).
	// Laplace's one Newton's method borrows them.
	"ordinal/ep " + oneRunKey:      {perLabel: 1.4e-4, perLowRank: 1e-8, perDense: 2e-8},
	"ordinal/laplace " + oneRunKey: {perLabel: 1.4e-4, perLowRank: 1e-8, perDense: 2e-8},
}

// ExpectedCost estimates the CPU time of a fit of spec (ForData and
// WithDefaults applied) on labels labels of items items, and says how:
// a Gibbs fit costs ProjectedWork's sweeps x (fixed + per label + the
// kernel's part per sweep: N r for a low-rank prior, N² for a dense one);
// a deterministic fit (ep, laplace, vb, smc)
// costs fixed + per label x labels + the kernel's part, N r² for a
// low-rank prior of rank r (text kernels; fixed covariate kernels and
// learnt ones by inducing points from PivotedFromItems items) and N³/3 for
// a dense one, with rates calibrated per model and engine on the shared
// ladder (costTable), its defaults' evaluations (restarts, candidates, EM
// rounds, folds) included; a fit with nothing for the evidence to
// maximise (OneRun: the ordinal model with every rater parameter fixed) is
// costed as one run. With the default rank (defaultRank), CPU is the cost
// at the base rank and Max, when the rule may raise the rank, the cost at
// the most it may reach: the rank it keeps depends on the kernel's
// spectrum. It is meant to be within a factor of two of the real cost on
// the ladder's data; settings far from the defaults (more restarts, chains
// or iterations) move it less than they move the fit, except Gibbs's
// sweeps, which it counts. A final run after the evidence maximisation
// (FitSpec.FinalRank; finalPlan) is added at its one-run cost
// (finalCost): to CPU when it is asked for, to Max when the default rule
// may make it.
func ExpectedCost(spec FitSpec, labels, items int) Cost {
	c := searchCost(spec, labels, items)
	r, rule := finalPlan(spec, labels, items)
	if r == 0 {
		return c
	}
	fc := finalCost(spec, labels, items, r)
	what := fmt.Sprintf("rank %d", r)
	if r < 0 {
		what = "the dense matrix"
	}
	if rule {
		c.Max = max(c.Max, c.CPU) + fc
		c.Model += fmt.Sprintf("; a final run at up to %s when the evidence maximisation's prior leaves out more than %.0f%% of the kernel's trace, %s CPU s", what, 100*FinalRunShare, roundCPU(fc))
		return c
	}
	c.CPU += fc
	if c.Max > 0 {
		c.Max += fc
	}
	c.Model += fmt.Sprintf("; a final run at %s, %s CPU s", what, roundCPU(fc))
	return c
}

// searchCost is ExpectedCost without a final run: the evidence
// maximisation's, and the rank rule's budget's terms (rankCost).
func searchCost(spec FitSpec, labels, items int) Cost {
	model, engine := strings.ToLower(spec.Model), strings.ToLower(spec.Engine)
	if model == "" {
		model = ModelOrdinal
	}
	if engine == "" {
		// A spec without its defaults: the model's default engine.
		engine = multirater.EngineGibbs
		if m, err := LookupModel(model); err == nil {
			engine = m.DefaultEngine()
		}
	}
	key := model + "/" + engine
	if oneRun(spec, model, engine) {
		key += " " + oneRunKey
	}
	rates, ok := costTable[key]
	if !ok {
		// A pair the ladder does not cover: the ordinal EP rates, a
		// labels-only order of magnitude.
		rates = costTable["ordinal/ep"]
	}
	class, rank, most, learnt := costKernel(spec, labels, items)
	secs, what := expectedSeconds(spec, key, engine, rates, class, learnt, labels, items, rank)
	c := Cost{CPU: seconds(secs), Model: what}
	if most > rank {
		c.Max = rankCost(spec, labels, items, most)
		c.Model += fmt.Sprintf("; the default rank rule may raise r up to %d (the fit's budget %s CPU s), %s CPU s there", most, roundCPU(rankBudget(items)), roundCPU(c.Max))
	}
	return c
}

// seconds converts s seconds to a Duration, saturating.
func seconds(s float64) time.Duration {
	return time.Duration(min(s*float64(time.Second), float64(1<<62)))
}

// oneRunKey marks the costTable rows of a fit that is one EP run or one
// Newton's method: the ordinal model with every rater parameter fixed (its
// noise sd and thresholds) and no kernel term to learn.
const oneRunKey = "(one run)"

// OneRun reports whether a fit of spec (WithDefaults applied) evaluates its
// approximation once, with nothing for the evidence to maximise: the
// ordinal model by EP or Laplace with every rater parameter fixed (its
// noise sd and thresholds) and no kernel hyperparameter to learn.
func OneRun(spec FitSpec) bool {
	model, engine := strings.ToLower(spec.Model), strings.ToLower(spec.Engine)
	if model == "" {
		model = ModelOrdinal
	}
	return oneRun(spec, model, engine)
}

// oneRun reports whether a fit of spec evaluates its approximation once:
// the ordinal model by EP or Laplace with every rater parameter fixed and
// no kernel hyperparameter to learn (nothing for the evidence to maximise).
func oneRun(spec FitSpec, model, engine string) bool {
	if model != ModelOrdinal || (engine != multirater.EngineEP && engine != multirater.EngineLaplace) ||
		!(spec.Sigma > 0) || len(spec.Thresholds) == 0 {
		return false
	}
	if strings.TrimSpace(spec.Kernel) == "" {
		return true
	}
	ks, err := spec.kernelSpec()
	if err != nil {
		return false
	}
	for _, t := range ks {
		if t.Learn {
			return false
		}
	}
	return true
}

// expectedSeconds is ExpectedCost's estimate at a prior of class class
// and rank rank (low-rank), with the model it used, for the rates of key.
func expectedSeconds(spec FitSpec, key, engine string, rates costRates, class kernelClass, learnt bool, labels, items, rank int) (float64, string) {
	gibbs := engine == multirater.EngineGibbs
	n, r := float64(items), float64(rank)
	var unit float64
	var kernelTerm string
	switch {
	case class == kernelLowRank && gibbs:
		// A sweep's draw of the latents: a few products with G.
		unit = n * r
		unit *= rates.perLowRank
		kernelTerm = fmt.Sprintf(" + %.2g s x N r (N %d, low-rank r %d)", rates.perLowRank, items, rank)
	case class == kernelLowRank && learnt && rates.perLearnt > 0:
		// An evaluation's EP sweeps, and more evaluations with more
		// items and raters.
		unit = n * r * r * math.Sqrt(n/1000)
		unit *= rates.perLearnt
		kernelTerm = fmt.Sprintf(" + %.2g s x N r² sqrt(N/1000) (N %d, inducing r %d)", rates.perLearnt, items, rank)
	case class == kernelLowRank:
		// An evaluation's factorisation of H = I + G'SG and its sweep.
		unit = n * r * r
		unit *= rates.perLowRank
		kernelTerm = fmt.Sprintf(" + %.2g s x N r² (N %d, low-rank r %d)", rates.perLowRank, items, rank)
	case class == kernelDense && gibbs:
		// A sweep's products with the N×N factor.
		unit = n * n
		unit *= rates.perDense
		kernelTerm = fmt.Sprintf(" + %.2g s x N² (dense N %d)", rates.perDense, items)
	case class == kernelDense:
		// An evaluation's Cholesky factorisation.
		unit = n * n * n / 3
		unit *= rates.perDense
		kernelTerm = fmt.Sprintf(" + %.2g s x N³/3 (dense N %d)", rates.perDense, items)
	}
	per := rates.fixed + rates.perLabel*float64(labels) + unit
	terms := fmt.Sprintf("%.2g s x %d labels%s", rates.perLabel, labels, kernelTerm)
	if rates.perPair > 0 {
		pairs := n * n / 4
		terms = fmt.Sprintf("%.2g s x N²/4 pairs (N %d)%s", rates.perPair, items, kernelTerm)
		// EP's sites are a sample beyond the pair bound (auc.SamplePairs).
		if b := pairBound(spec, items); engine == multirater.EngineEP && b > 0 && float64(b) < pairs {
			pairs = float64(b)
			terms = fmt.Sprintf("%.2g s x %d sampled pairs (N %d)%s", rates.perPair, b, items, kernelTerm)
		}
		per = rates.fixed + rates.perPair*pairs + unit
	}
	if rates.fixed > 0 {
		terms = fmt.Sprintf("%.2g s + %s", rates.fixed, terms)
	}
	what := fmt.Sprintf("%s: %s", strings.Replace(key, "/", " ", 1), terms)
	if gibbs {
		w := ProjectedWork(spec, labels, items)
		per *= float64(w.Sweeps)
		what = fmt.Sprintf("%s: %d sweeps x (%s)", strings.Replace(key, "/", " ", 1), w.Sweeps, terms)
	}
	return per, what
}

// pairBound is the bound on the auc model's EP pair sites for items
// fitted items (FitSpec.MaxPairs, auc.DefaultPairs by default), or -1
// for none.
func pairBound(spec FitSpec, items int) int {
	switch {
	case spec.MaxPairs > 0:
		return spec.MaxPairs
	case spec.MaxPairs < 0:
		return -1
	}
	return auc.DefaultPairs(items)
}

// costKernel says how a fit of spec on labels labels of items items holds
// its prior covariance, and the rank of a low-rank one (buildCovariance's
// choices); for the default rank (defaultRank) the base rank and, when the
// rule may raise it, the most it may reach (0 otherwise); and whether a
// kernel term is learnt.
func costKernel(spec FitSpec, labels, items int) (class kernelClass, rank, most int, learnt bool) {
	text := strings.TrimSpace(spec.Kernel)
	if strings.EqualFold(spec.Model, ModelAUC) && !strings.EqualFold(spec.Scores, "gp") {
		return kernelNone, 0, 0, false // linear scores: weight space on the covariates
	}
	var ks kernel.Spec
	if text == "" {
		if !strings.EqualFold(spec.Model, ModelAUC) {
			return kernelNone, 0, 0, false // the identity, the lower estimate
		}
		// gp scores' default: an rbf whose width is learnt.
		ks = kernel.Spec{{Kind: kernel.CovTerm, Learn: true}}
	} else {
		var err error
		if ks, err = spec.kernelSpec(); err != nil || ks.Identity() {
			return kernelNone, 0, 0, false
		}
	}
	isText, fixedCov := true, true
	for _, t := range ks {
		isText = isText && t.Kind == kernel.TextTerm
		fixedCov = fixedCov && t.Kind == kernel.CovTerm && !t.Learn
		learnt = learnt || t.Learn
	}
	switch {
	case spec.Rank < 0:
		return kernelDense, 0, 0, learnt
	case isText:
		if spec.Rank > 0 {
			return kernelLowRank, min(spec.Rank, items), 0, learnt
		}
		base, most := defaultRank(spec, labels, items)
		return kernelLowRank, base, most, learnt
	case spec.Rank > 0 && (fixedCov || learnt):
		return kernelLowRank, min(spec.Rank, items), 0, learnt
	case items >= PivotedFromItems && learnt:
		return kernelLowRank, learntRank(spec, items), 0, learnt
	case items >= PivotedFromItems && fixedCov:
		base, most := defaultRank(spec, labels, items)
		return kernelLowRank, base, most, learnt
	}
	return kernelDense, 0, 0, learnt
}
