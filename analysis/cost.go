package analysis

import (
	"fmt"
	"math"
	"strconv"
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
	r, _ := strconv.ParseFloat(fmt.Sprintf("%.2g", s), 64)
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// kernelClass is how a fit holds its items' prior covariance, which
// decides the kernel's part of the cost.
type kernelClass int

const (
	kernelNone    kernelClass = iota // identity or no kernel: labels only
	kernelLowRank                    // C = G G', G N×r: O(N r²) per evaluation
	kernelDense                      // the N×N matrix: O(N³/3) per factorisation
)

// CostRates are one family's calibrated CPU seconds (a costTable row): a
// fixed part, per label, and per unit of kernel work for a low-rank prior
// (N r² per fit, N r per Gibbs sweep) and for a dense one (N³/3 per fit,
// N² per sweep); the auc model's sites are pairs of items, one positive
// and one negative, counted as N²/4 (balanced classes) or the sampled
// pairs, at PerPair. For a deterministic engine they include the family's
// number of evaluations at 1,000 items (candidates x restarts x EP sweeps
// or Newton steps, EM rounds, cross-validation folds), which the defaults
// fix; for Gibbs they are per sweep.
type CostRates struct {
	Fixed, PerLabel, PerPair, PerLowRank, PerDense float64
	// PerLearnt, when positive, replaces PerLowRank for a learnt kernel's
	// inducing-point prior (the robust model's rbf width by the
	// evidence).
	PerLearnt float64
	// LabelGrowth and KernelGrowth are how a deterministic fit's
	// evaluations (L-BFGS iterations of the evidence maximisation, and
	// their EP sweeps or Newton steps) grow with the raters, whose
	// parameters it learns (the ordinal model's per-rater noise and
	// thresholds, the robust model's error rates, the bounded model's
	// dispersions): the labels' (or pairs') part is multiplied by
	// (R/10)^LabelGrowth and the low-rank kernel's by (R/10)^KernelGrowth
	// (the rates are at 10 raters, the shared ladder's 1,000 items; its
	// ordinal text fits took 20, 75 and 140 L-BFGS iterations with 10,
	// 20 and 40 raters). A zero growth is a cost linear in the labels and
	// N r². docs/scripts/cost fits both from the ladder's runs.
	LabelGrowth, KernelGrowth float64
	// CurvatureRun, for the ordinal model by EP or Laplace, is the cost
	// of one engine run of the curvature of the rater parameters'
	// posterior (their intervals: two warm-started runs per learnt
	// parameter, formed for at most 100 of them) as a share of the
	// evidence maximisation's cost.
	CurvatureRun float64
}

// CostRatesOf returns costTable's row for key (CostUnits.Key), and
// whether there is one (ExpectedCost uses the ordinal EP row for a key
// without).
func CostRatesOf(key string) (CostRates, bool) {
	r, ok := costTable[key]
	return r, ok
}

// The calibration table, CPU seconds measured with the shared ladder
// (../shared/tools/ladder/ladder.py, 4 labels per item, 5-50 raters). The
// deterministic rows (ordinal, confusion, bounded and robust by their
// engines, auc/ep) were fitted by docs/scripts/cost -fit to the ladder's
// runs at 1,000, 4,000, 16,000 and 64,000 items on main 95eb31e (branch
// cost35e, 2026-11-30; testdata/cost_ladder.csv, TestExpectedCostLadder);
// the command and the table of estimated against measured CPU s are in
// docs/scripts/cost/README.md. Keys are model/engine. Rates that no ladder
// family measures are borrowed, not measured: confusion/gibbs
// (ProjectedWork's per-label rate), bounded/laplace (from bounded/ep),
// ordinal/laplace's labels-only part (from ordinal/ep), auc/smc (auc/ep's
// rates before the pair-EP speed-ups of issue 35, which SMC does not use),
// every dense rate of ordinal, bounded and confusion (from robust/ep's, or
// a guess for confusion/vb) and the Gibbs dense rates above 500 items.
var costTable = map[string]CostRates{
	// Per sweep (x ProjectedWork's sweeps). classification/gibbs's per
	// label and per N r rates are from the ladder's 1,000- and 4,000-item
	// runs after issue 35's Gibbs savings (docs/scripts/cost/README.md).
	"ordinal/gibbs":        {Fixed: 1.2e-4, PerLabel: 1.45e-7, PerLowRank: 6e-9, PerDense: 2.7e-9},
	"classification/gibbs": {PerLabel: 2.2e-7, PerLowRank: 3.5e-9, PerDense: 1.3e-8},
	"confusion/gibbs":      {Fixed: 5e-6, PerLabel: 2e-7, PerLowRank: 6e-9, PerDense: 2.7e-9},
	// Per fit (the defaults' evaluations at 1,000 items included).
	// ordinal/ep's per-label and low-rank rates are cost35e's fit x 0.9:
	// its runs were at load 12-25, and on a quieter machine (load 4, the
	// merged main's ladder runs of 2026-11-30) the 1,000-item text and
	// rbf fits took 12.9 and 12.8 CPU s, 2.06x and 2.08x under the fitted
	// estimate; x 0.9 leaves them at 1.85x and 1.87x and every run of
	// testdata/cost_ladder.csv within 2x (the 4,000-item rbf run at 0.52x).
	"ordinal/ep":      {Fixed: 0.07, PerLabel: 8.37e-05, PerLowRank: 1.098e-07, PerDense: 6.5e-07, LabelGrowth: 0.51, KernelGrowth: 0.95, CurvatureRun: 0.0074},
	"ordinal/laplace": {Fixed: 0.07, PerLabel: 9.3e-05, PerLowRank: 9.18e-08, PerDense: 2.4e-06, LabelGrowth: 0.51, KernelGrowth: 1.22, CurvatureRun: 0.0031},
	// confusion/vb's per-label rate is from the merged main's labels-only
	// runs (2026-11-30, load 4): 0.06, 0.21, 0.72 and 4.95 CPU s at 1,000
	// to 64,000 items, with the subtypes rater model among auto's
	// candidates (c29sub; 1.88 CPU s at 64,000 items before it).
	"confusion/vb":    {Fixed: 0.0035, PerLabel: 1.45e-05, PerLowRank: 1.13e-08, PerDense: 1e-07},
	"bounded/ep":      {PerLabel: 0.000759, PerLowRank: 8.68e-08, PerDense: 2.4e-06, LabelGrowth: 0.14, KernelGrowth: 0.94},
	"bounded/laplace": {PerLabel: 0.000759, PerLowRank: 8.68e-08, PerDense: 2.4e-06, LabelGrowth: 0.14, KernelGrowth: 0.94},
	"robust/ep":       {PerLabel: 0.000126, PerLowRank: 6.6e-07, PerDense: 2.37e-06, PerLearnt: 5.35e-07, LabelGrowth: 0.82, KernelGrowth: 0.69},
	"auc/ep":          {PerPair: 7.74e-05, PerLowRank: 2.8e-07, PerDense: 1.3e-06, PerLearnt: 2.95e-07},
	"auc/smc":         {PerPair: 2.16e-4, PerLowRank: 6.6e-7, PerDense: 1.09e-5},
	// One EP run (every rater parameter fixed: oneRun), from
	// docs/scripts/approx's fits on the ladder's data (branches meas35 and
	// rank35d, docs/scaling.md): text rank 349 and 600 at 1,000 items (1.6
	// and 3.3 CPU s), 250, 500 and 800 at 4,000 (4.5, 11.6, 28.4), the
	// dense text and rbf fits at 2,000 and 4,000 items (54.5; 419 and 461).
	// Laplace's one Newton's method borrows them.
	"ordinal/ep " + oneRunKey:      {PerLabel: 1.4e-4, PerLowRank: 1e-8, PerDense: 2e-8},
	"ordinal/laplace " + oneRunKey: {PerLabel: 1.4e-4, PerLowRank: 1e-8, PerDense: 2e-8},
	// The final run after the evidence maximisation (finalCost, which
	// adds a text kernel's basis, textBasisCost): one EP run from the
	// search's sites or one Newton's method, measured by branch bnd35g as
	// the process's CPU s across infer.FinalRun less those of its prior
	// (getrusage in a temporary build), load about 4, on the ladder's
	// data (4 labels per item) after the default evidence maximisation:
	// bounded-ep-text 6.5 and 14.6 CPU s at ranks 739 and 1200 (4,000
	// items, 15,970 labels), 10.7 at rank 340 (16,000 items, 64,011
	// labels); ordinal-ep-text (4,000 items with --noise shared) 5.6 and
	// 13.6 at ranks 739 and 1200, 2.8 at rank 340 (16,000 items), and
	// ordinal-gibbs-rbf's FITC run 7.2 at 440 pivots (16,000 items),
	// columns included. Their priors took 7.2 and 19.4 CPU s (4,000
	// items) and 5.7-7.7 (16,000, rank 340): textBasisCost says 15.8,
	// 44.1 and 12.5. ordinal-laplace-text's Newton's method took 2.2 at
	// rank 340 (16,000 items): it and bounded/laplace borrow the EP rows.
	// The dense rates are the ordinal one run's.
	"ordinal/ep " + finalRunKey:      {PerLabel: 5e-5, PerLowRank: 2.2e-9, PerDense: 2e-8},
	"ordinal/laplace " + finalRunKey: {PerLabel: 5e-5, PerLowRank: 2.2e-9, PerDense: 2e-8},
	"bounded/ep " + finalRunKey:      {PerLabel: 1e-4, PerLowRank: 2.3e-9, PerDense: 2e-8},
	"bounded/laplace " + finalRunKey: {PerLabel: 1e-4, PerLowRank: 2.3e-9, PerDense: 2e-8},
}

// ExpectedCost estimates the CPU time of a fit of spec (ForData and
// WithDefaults applied) on labels labels of items items, and says how:
// a Gibbs fit costs ProjectedWork's sweeps x (fixed + per label + the
// kernel's part per sweep: N r for a low-rank prior, N² for a dense one);
// a deterministic fit (ep, laplace, vb, smc) costs fixed + per label x
// labels + the kernel's part, N r² for a low-rank prior of rank r (text
// kernels; fixed covariate kernels and learnt ones by inducing points from
// PivotedFromItems items) and N³/3 for a dense one, with rates calibrated
// per model and engine on the shared ladder (costTable) at 10 raters, its
// defaults' evaluations (restarts, candidates, EM rounds, folds) included,
// and each part multiplied by (R/10)^g for R raters (spec.Raters, or the
// ladder's for items items): the evidence maximisation's L-BFGS
// iterations grow with the rater parameters it learns. The ordinal model
// by EP or Laplace adds the curvature of its rater parameters' posterior
// (their intervals): two engine runs per parameter (R x levels) where
// there are at most 100, each a share CurvatureRun of the evidence
// maximisation. A fit with nothing for the evidence to maximise (OneRun:
// the ordinal model with every rater parameter fixed) is costed as one
// run. With the default rank (defaultRank), CPU is the cost at the base
// rank and Max, when the rule may raise the rank, the cost at the most it
// may reach: the rank it keeps depends on the kernel's spectrum. It is
// meant to be within a factor of two of the real cost on the ladder's data
// (TestExpectedCostLadder); settings far from the defaults (more
// restarts, chains or iterations) move it less than they move the fit,
// except Gibbs's sweeps, which it counts. A final run after the evidence
// maximisation (FitSpec.FinalRank; finalPlan) is added at its one-run
// cost (finalCost): to CPU when it is asked for, to Max when the default
// rule may make it.
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
	u, most := costUnits(spec, labels, items)
	rates, ok := costTable[u.Key]
	if !ok {
		// A pair the ladder does not cover: the ordinal EP rates, a
		// labels-only order of magnitude.
		rates = costTable["ordinal/ep"]
	}
	secs, what := u.Estimate(rates)
	c := Cost{CPU: seconds(secs), Model: what}
	if most > u.Rank {
		c.Max = rankCost(spec, labels, items, most)
		c.Model += fmt.Sprintf("; the default rank rule may raise r up to %d (the fit's budget %s CPU s), %s CPU s there", most, roundCPU(rankBudget(items)), roundCPU(c.Max))
	}
	return c
}

// CostUnits is the work that ExpectedCost counts for a fit, before its
// rates (docs/scripts/cost fits the rates to the ladder's runs from it).
type CostUnits struct {
	// Key is the fit's costTable row: "model/engine", with " (one run)"
	// for a fit that evaluates its approximation once (OneRun).
	Key string
	// Sweeps is a Gibbs fit's sweeps (ProjectedWork), 0 for a
	// deterministic engine.
	Sweeps int64
	// Sites are the labels, or for the auc model (Pairs) its EP or SMC
	// pair sites: N²/4, or the sample beyond the pair bound.
	Sites float64
	Pairs bool
	// Items is N; Raters R, the data's (FitSpec.Raters) or where it is
	// unknown the shared ladder's for N items (LadderRaters); Scale is
	// R/10, the ratio that the growth exponents (CostRates.LabelGrowth,
	// KernelGrowth) raise.
	Items, Raters int
	Scale         float64
	// LadderRaters says that Raters is the ladder's, not the data's.
	LadderRaters bool
	// Params are the rater parameters a deterministic fit learns at most
	// (the ordinal model's per-rater noise and thresholds, R x levels),
	// and CurvatureRuns the engine runs of their posterior's curvature,
	// two per parameter where there are at most curvatureParams (else
	// 0; 0 for the other models).
	Params, CurvatureRuns int
	// Class is the prior's form: CostLabelsOnly, CostLowRank,
	// CostLearnt (a learnt kernel's inducing points) or CostDense; Rank a
	// low-rank prior's rank (the base rank for the default rank rule);
	// Kernel the kernel's units: N r per Gibbs sweep and N r² per
	// deterministic fit for a low-rank prior, N² and N³/3 for a dense
	// one, 0 for none.
	Class  string
	Rank   int
	Kernel float64
}

// The kernel classes of CostUnits.Class.
const (
	CostLabelsOnly = "labels only"
	CostLowRank    = "low-rank"
	CostLearnt     = "learnt, inducing"
	CostDense      = "dense"
)

// CostUnitsOf returns the work that ExpectedCost counts for a fit of spec
// (ForData and WithDefaults applied) on labels labels of items items.
func CostUnitsOf(spec FitSpec, labels, items int) CostUnits {
	u, _ := costUnits(spec, labels, items)
	return u
}

// costUnits is CostUnitsOf, and with the default rank the most the rank
// rule may raise the rank to (0 when it may not).
func costUnits(spec FitSpec, labels, items int) (CostUnits, int) {
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
	u := CostUnits{Key: model + "/" + engine, Sites: float64(labels), Items: items, Raters: spec.Raters, Class: CostLabelsOnly}
	if u.Raters <= 0 {
		u.Raters, u.LadderRaters = LadderRaters(items), true
	}
	u.Scale = float64(u.Raters) / 10
	one := oneRun(spec, model, engine)
	if one {
		u.Key += " " + oneRunKey
	}
	if model == ModelOrdinal && (engine == multirater.EngineEP || engine == multirater.EngineLaplace) && !one {
		levels := spec.Levels
		if levels <= 0 {
			levels = 5 // the shared ladder's ordinal:1..5
		}
		u.Params = u.Raters * levels
		if u.Params <= curvatureParams {
			u.CurvatureRuns = 2 * u.Params
		}
	}
	if model == ModelAUC {
		// The sites are pairs of items; EP's a sample beyond the pair
		// bound (auc.SamplePairs).
		u.Pairs, u.Sites = true, float64(items)*float64(items)/4
		if b := pairBound(spec, items); engine == multirater.EngineEP && b > 0 && float64(b) < u.Sites {
			u.Sites = float64(b)
		}
	}
	gibbs := engine == multirater.EngineGibbs
	if gibbs {
		u.Sweeps = ProjectedWork(spec, labels, items).Sweeps
	}
	class, rank, most, learnt := costKernel(spec, labels, items)
	n, r := float64(items), float64(rank)
	u.Rank = rank
	switch {
	case class == kernelLowRank && gibbs:
		// A sweep's draw of the latents: a few products with G.
		u.Class, u.Kernel = CostLowRank, n*r
	case class == kernelLowRank:
		// An evaluation's factorisation of H = I + G'SG and its sweep.
		u.Class, u.Kernel = CostLowRank, n*r*r
		if learnt {
			u.Class = CostLearnt
		}
	case class == kernelDense && gibbs:
		// A sweep's products with the N×N factor.
		u.Class, u.Kernel = CostDense, n*n
	case class == kernelDense:
		// An evaluation's Cholesky factorisation.
		u.Class, u.Kernel = CostDense, n*n*n/3
	}
	return u, most
}

// seconds converts s seconds to a Duration, saturating.
func seconds(s float64) time.Duration {
	return time.Duration(min(s*float64(time.Second), float64(1<<62)))
}

// oneRunKey marks the costTable rows of a fit that is one EP run or one
// Newton's method: the ordinal model with every rater parameter fixed (its
// noise sd and thresholds) and no kernel term to learn.
const oneRunKey = "(one run)"

// finalRunKey marks the costTable rows of the final run after an
// evidence maximisation (finalCost).
const finalRunKey = "(final run)"

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

// Estimate is ExpectedCost's estimate for the units u at rates, with the
// model it used: fixed + per site x sites x Scale^LabelGrowth + per unit
// x kernel units (x Scale^KernelGrowth for a low-rank prior), times the
// sweeps for Gibbs.
func (u CostUnits) Estimate(rates CostRates) (float64, string) {
	n, name := u.Items, strings.Replace(u.Key, "/", " ", 1)
	var unit, growth float64
	var what string
	switch u.Class {
	case CostLowRank, CostLearnt:
		unit, growth, what = rates.PerLowRank, rates.KernelGrowth, fmt.Sprintf("N r² (N %d, low-rank r %d)", n, u.Rank)
		switch {
		case u.Sweeps > 0:
			what = fmt.Sprintf("N r (N %d, low-rank r %d)", n, u.Rank)
		case u.Class == CostLearnt && rates.PerLearnt > 0:
			unit, what = rates.PerLearnt, fmt.Sprintf("N r² (N %d, inducing r %d)", n, u.Rank)
		}
	case CostDense:
		unit, what = rates.PerDense, fmt.Sprintf("N³/3 (dense N %d)", n)
		if u.Sweeps > 0 {
			what = fmt.Sprintf("N² (dense N %d)", n)
		}
	}
	site, siteGrowth := rates.PerLabel, rates.LabelGrowth
	sites := fmt.Sprintf("%d labels", int(u.Sites))
	if u.Pairs {
		site = rates.PerPair
		sites = fmt.Sprintf("N²/4 pairs (N %d)", n)
		if u.Sites < float64(n)*float64(n)/4 {
			sites = fmt.Sprintf("%d sampled pairs (N %d)", int(u.Sites), n)
		}
	}
	per := site * u.Sites * growthFactor(u.Scale, siteGrowth)
	terms := fmt.Sprintf("%.2g s x %s%s", site, sites, growthTerm(siteGrowth))
	if u.Class != CostLabelsOnly {
		g := 0.0
		if u.Class != CostDense && u.Sweeps == 0 {
			g = growth
		}
		per += unit * u.Kernel * growthFactor(u.Scale, g)
		terms += fmt.Sprintf(" + %.2g s x %s%s", unit, what, growthTerm(g))
	}
	if siteGrowth != 0 || growth != 0 && u.Class != CostLabelsOnly {
		if u.LadderRaters {
			terms += fmt.Sprintf(" (R %d raters, the shared ladder's for N items)", u.Raters)
		} else {
			terms += fmt.Sprintf(" (R %d raters)", u.Raters)
		}
	}
	if c := rates.CurvatureRun * float64(u.CurvatureRuns); c > 0 {
		// The curvature's runs, a share each of the evidence
		// maximisation.
		per *= 1 + c
		terms = fmt.Sprintf("(%s) x (1 + %.2g x %d curvature runs for %d rater parameters)", terms, rates.CurvatureRun, u.CurvatureRuns, u.Params)
	}
	per += rates.Fixed
	if rates.Fixed > 0 {
		terms = fmt.Sprintf("%.2g s + %s", rates.Fixed, terms)
	}
	if u.Sweeps > 0 {
		return per * float64(u.Sweeps), fmt.Sprintf("%s: %d sweeps x (%s)", name, u.Sweeps, terms)
	}
	return per, fmt.Sprintf("%s: %s", name, terms)
}

// curvatureParams is the most learnt rater parameters whose curvature the
// ordinal model forms (multirater/ordinal's maxCurvatureParams).
const curvatureParams = 100

// LadderRaters is the number of raters of the shared ladder's data on n
// items, 5 sqrt(n/250) between 5 and 50 (../shared/tools/ladder/ladder.py:
// 10 at 1,000 items, 20 at 4,000, 40 at 16,000), which ExpectedCost
// assumes where a spec does not say its data's (FitSpec.Raters).
func LadderRaters(n int) int {
	return max(5, min(50, int(math.Round(5*math.Sqrt(float64(n)/250)))))
}

// growthFactor is scale^g: how a deterministic fit's evaluations grow
// from 10 raters to 10 scale (CostRates.LabelGrowth, KernelGrowth).
func growthFactor(scale, g float64) float64 {
	if g == 0 {
		return 1
	}
	return math.Pow(scale, g)
}

// growthTerm says a growth exponent g in ExpectedCost's model: "" for
// none.
func growthTerm(g float64) string {
	if g == 0 {
		return ""
	}
	return fmt.Sprintf(" x (R/10)^%.2g", g)
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
