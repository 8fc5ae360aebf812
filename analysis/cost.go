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
	// CPU is the expected figure: where the data decide the fit's work
	// (the default rank rule's rank, the final run's 12 % rule, the
	// ordinal model's noise choice), the likely case.
	CPU time.Duration
	// Max, when above CPU, is the cost if the data decide the costlier
	// way, and Upto says when, in words.
	Max  time.Duration
	Upto string
	// Model says how CPU was derived.
	Model string
}

// String says the cost as the CLI's summary line does: "about 12 CPU s
// (model: ...)", or "about 12 CPU s (up to 40 if ...; model: ...)".
func (c Cost) String() string {
	if c.Max > c.CPU {
		return fmt.Sprintf("%s (up to %s if %s; model: %s)", c.Short(), roundCPU(c.Max), c.Upto, c.Model)
	}
	return fmt.Sprintf("%s (model: %s)", c.Short(), c.Model)
}

// Short says the expected figure alone, for a progress message: "about
// 12 CPU s".
func (c Cost) Short() string {
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

// estimateRates are one model and engine's rates of ExpectedCost (an
// estimateTable row), CPU seconds on the shared ladder's quiet 2-core
// machine.
type estimateRates struct {
	// Fixed is per fit: the process, reading the data, the result's
	// draws and document; PerSweep per Gibbs sweep.
	Fixed, PerSweep float64
	// PerLabel (PerPair for the auc model's pair sites) and the kernel's
	// rates: per unit of N r² for a low-rank prior (PerLearnt for a
	// learnt kernel's inducing points) and N³/3 for a dense one, for a
	// deterministic fit; per sweep and N r or N² for Gibbs.
	PerLabel, PerPair, PerLowRank, PerLearnt, PerDense float64
	// LabelGrowth and KernelGrowth raise R/10 for the labels' and the
	// low-rank kernel's parts of a deterministic fit (its L-BFGS
	// iterations grow with the rater parameters it learns).
	LabelGrowth, KernelGrowth float64
	// TextFixed and CovFixed are per fit with a text kernel (the
	// featuriser, the basis) and a covariate one.
	TextFixed, CovFixed float64
	// CurvatureLabels and CurvatureKernel are the ordinal model's
	// curvature of its rater parameters (EP or Laplace), per engine run,
	// without and with a kernel, x P^CurvatureParamGrowth for P learnt
	// parameters x (N/1000)^CurvatureItemGrowth.
	CurvatureLabels, CurvatureKernel          float64
	CurvatureParamGrowth, CurvatureItemGrowth float64
}

// estimateTable is ExpectedCost's calibration, per model/engine (the
// default rank rule and the final run's rule keep costTable's rates). The
// measured rows are the shared ladder's default fits with main 1e3678a's
// binary on one 2-core machine, 2026-11-30, load 1.4-7.3 (median 2.8):
// 250 to 16,000 items (5 to 40 raters, 4 labels per item;
// testdata/cost_ladder.csv, TestExpectedCostLadder, docs/scaling.md,
// branch cost36), each rate read from the runs as its comment says.
var estimateTable = map[string]estimateRates{
	// Per sweep. classification/gibbs: the identity sampler's 2.64,
	// 10.4, 29.6 and 111 CPU s for 12,000 sweeps at 250 to 16,000 items
	// (per label and sweep 2.2e-7 falling to 1.45e-7: 0.8 s + 1.55e-7);
	// with the text kernel (8,000 sweeps) 8.4, 11.9, 30.4 and 93.1, its
	// kernel's part 6.4, 6.1, 9.8 and 12.9 s: 6 s (the 250-item basis is
	// exact, rank N) + 4.2e-10 per N r and sweep. The other Gibbs rows
	// are costTable's (no ladder family).
	"ordinal/gibbs":        {PerSweep: 1.2e-4, PerLabel: 1.45e-7, PerLowRank: 6e-9, PerDense: 2.7e-9},
	"classification/gibbs": {Fixed: 0.8, PerLabel: 1.55e-7, PerLowRank: 4.2e-10, TextFixed: 6},
	"confusion/gibbs":      {PerSweep: 5e-6, PerLabel: 2e-7, PerLowRank: 6e-9, PerDense: 2.7e-9},
	// ordinal/ep: labels only 0.21, 0.69-0.80, 3.96-4.24, 10.7-11.4 and 45.4 CPU s
	// at 250 to 64,000 items (0.1 s + 1.57e-4 per label; the curvature
	// of 100 per-rater parameters, 200 runs, about 2 s at 4,000 items,
	// none at 16,000 with 200). Text (ordinal-ep-text and the ladder's
	// ordinal-gibbs-text, the same default fit): 3.46, 10.7, 224-245 and
	// 77.3; the time outside its candidates' evidence maximisations
	// (result.json's model_candidates), the curvature, was 0.5, 2.0 and
	// 155 s with 9, 14 and 100 parameters (18, 28 and 200 runs), about
	// 5.6e-3 s x runs x parameters x (N/1000)^0.32; the evidence
	// maximisations 2.5, 7.3, about 60 and 64 CPU s at N r² 15.6M,
	// 122M, 250M and 262M with 5, 10, 20 and 40 raters. Rbf (FITC
	// pivots from 500 items, dense below): 2.84, 9.9, 262 and 67.9.
	"ordinal/ep": {Fixed: 0.1, PerLabel: 1.57e-4, PerLowRank: 4.64e-8, PerDense: 2e-7, KernelGrowth: 1.11, TextFixed: 2.35, CovFixed: 1.0,
		CurvatureLabels: 6e-5, CurvatureKernel: 5.6e-3, CurvatureParamGrowth: 1, CurvatureItemGrowth: 0.32},
	// ordinal/laplace: text 1.89, 11.9, 62.9 and 115 CPU s at 250 to
	// 16,000 items; its curvature 0.5, 2.0 and about 26 s for 18, 28 and
	// 200 runs, about 0.065 s x runs x (N/1000)^0.5 (not growing with the
	// parameters, unlike EP's); the rest, less the final run, 1.2, 9.9,
	// 27.6 and 107 s: 3.5e-4 s per label x R/10 + 6.6e-8 per N r²
	// (solved at 4,000 and 16,000 items, within 5 % at 250 and 1,000).
	// The dense and labels-only rates are borrowed (no ladder family).
	"ordinal/laplace": {Fixed: 0.1, PerLabel: 3.51e-4, PerLowRank: 6.56e-8, PerDense: 2.4e-6, LabelGrowth: 1,
		CurvatureLabels: 6e-4, CurvatureKernel: 0.065, CurvatureItemGrowth: 0.5},
	// confusion/vb: labels only 0.06, 0.11, 0.36, 0.77 and 3.25 CPU s at 250
	// to 64,000 items; text 0.24, 3.88 (rank 536 of the rule's 349 to
	// 692), 9.74 (732 of 250 to 732) and 13.6 (367 of 128 to 367).
	"confusion/vb": {Fixed: 0.05, PerLabel: 1.5e-5, PerLowRank: 1.3e-8, PerDense: 1e-7},
	// bounded/ep: labels only 0.59, 2.47, 11.7, 50.7 and 211 CPU s; text
	// 2.28, 13.9, 69.2 and 161 with its final run (15.9 and 15.8 s at
	// 4,000 and 16,000 items).
	"bounded/ep":      {PerLabel: 6.5e-4, PerLowRank: 8.68e-8, PerDense: 2.4e-6, LabelGrowth: 0.14, KernelGrowth: 0.94, TextFixed: 1},
	"bounded/laplace": {PerLabel: 6.5e-4, PerLowRank: 8.68e-8, PerDense: 2.4e-6, LabelGrowth: 0.14, KernelGrowth: 0.94, TextFixed: 1},
	// robust/ep: labels only 0.20, 0.67, 3.41, 27.4 and 117 CPU s at 250 to
	// 64,000 items; rbf learnt 5.91 (dense), 13.2, 57.5 (128 inducing
	// items) and 110 (64): 4 s for the kernel (its width's search) +
	// 3.3e-7 per N³/3 or 5.2e-7 per N r² x (R/10)^0.58. The text kernel
	// (not a ladder family; main 0216045): 34.9 and 94.2 CPU s on the
	// ladder's data at 1,000 and 4,000 items (rank 349, 250), 27.7, 49.1
	// and 50.3 on RTE's 800 items (rank 324) with its labels given to 10,
	// 40 and 164 raters: 2.2e-7 to 3.2e-7 per N r² x (R/10)^0.58 (the
	// rules' 6.6e-7 stated 2.0-2.8x each).
	"robust/ep": {Fixed: 0.12, PerLabel: 1.26e-4, PerLowRank: 2.6e-7, PerDense: 3.3e-7, PerLearnt: 5.2e-7, LabelGrowth: 0.82, KernelGrowth: 0.58, CovFixed: 4},
	// auc/ep: linear scores 0.90, 5.14, 8.39 and 36.2 CPU s for 15,625,
	// 65,536, 160,000 and 640,000 pairs (250 to 16,000 items); gp scores
	// 4.39 (dense), 10.3, 20.0 and 101 (128 inducing items): 2.8 s for
	// the kernel (chosen among 5 candidates) + 1.7e-7 per N r².
	"auc/ep":  {Fixed: 0.1, PerPair: 6.2e-5, PerLowRank: 1.7e-7, PerDense: 1e-7, PerLearnt: 1.7e-7, CovFixed: 2.8},
	"auc/smc": {PerPair: 2.16e-4, PerLowRank: 6.6e-7, PerDense: 1.09e-5},
	// One run: costTable's rows (branch rank35d's fits, not remeasured).
	"ordinal/ep " + oneRunKey:      {PerLabel: 1.4e-4, PerLowRank: 1e-8, PerDense: 2e-8},
	"ordinal/laplace " + oneRunKey: {PerLabel: 1.4e-4, PerLowRank: 1e-8, PerDense: 2e-8},
	// A final run (finalEstimate), from the final runs of main's ladder
	// fits (their notes' seconds): ordinal EP text rank 739 at 4,000
	// items 11.4-12.0 s, rank 340 at 16,000 8.4; rbf 836 pivots at 4,000
	// 19.8; Laplace text 739 9.2; bounded EP text 739 15.9.
	"ordinal/ep " + finalRunKey:      {PerLowRank: 5.5e-9, PerDense: 2e-8},
	"ordinal/laplace " + finalRunKey: {PerLowRank: 4.2e-9, PerDense: 2e-8},
	"bounded/ep " + finalRunKey:      {PerLowRank: 7.3e-9, PerDense: 2e-8},
	"bounded/laplace " + finalRunKey: {PerLowRank: 7.3e-9, PerDense: 2e-8},
	// A final run on pivoted columns (FITC; fixed covariate kernels),
	// fitted to the merged main's (e7e1d6d-era, bnd35g's final-run rule)
	// whole ordinal-gibbs-rbf fits less their search's estimate, counted
	// at the middle rank as ExpectedCost does: 4,000 items 226.4 CPU s
	// (final run at 836 pivots, 9.4 s wall), 16,000 items 99.9 (1,022
	// pivots, 27.0 s wall; bnd35g's getrusage: 35.9 CPU s): 4.4e-9 and
	// 6.0e-9 s per N r².
	pivotedFinalKey: {PerLowRank: 5e-9, PerDense: 2e-8},
}

// pivotedFinalKey is estimateTable's row of a final run on an
// inducing-point prior of pivoted columns (finalEstimate).
const pivotedFinalKey = "ordinal/ep (final run, pivoted columns)"

// unitRates are the rates of one cost model that parts reads (CostRates'
// and estimateRates' fields of the same names).
type unitRates struct {
	PerLabel, PerPair, PerLowRank, PerLearnt, PerDense float64
	LabelGrowth, KernelGrowth                          float64
}

// parts returns the kernel part's rate per unit, its raters growth and
// its words, and the sites' rate, growth and words, of the units u at
// rates: the common head of Estimate (the rules') and expected
// (ExpectedCost's).
func (u CostUnits) parts(rates unitRates) (unit, growth float64, what string, site, siteGrowth float64, sites string) {
	n := u.Items
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
	site, siteGrowth = rates.PerLabel, rates.LabelGrowth
	sites = fmt.Sprintf("%d labels", int(u.Sites))
	if u.Pairs {
		site = rates.PerPair
		sites = fmt.Sprintf("N²/4 pairs (N %d)", n)
		if u.Sites < float64(n)*float64(n)/4 {
			sites = fmt.Sprintf("%d sampled pairs (N %d)", int(u.Sites), n)
		}
	}
	return unit, growth, what, site, siteGrowth, sites
}

// expected is ExpectedCost's estimate for the units u at rates, with the
// model it used (estimateRates says the terms).
func (u CostUnits) expected(rates estimateRates) (float64, string) {
	n, name := u.Items, strings.Replace(u.Key, "/", " ", 1)
	unit, growth, what, site, siteGrowth, sites := u.parts(unitRates{rates.PerLabel, rates.PerPair, rates.PerLowRank, rates.PerLearnt, rates.PerDense, rates.LabelGrowth, rates.KernelGrowth})
	if u.Sweeps > 0 {
		// A Gibbs fit's sweeps are counted, not grown with the raters.
		growth, siteGrowth = 0, 0
	}
	// The growth with the raters was fitted on the ladder's 5 to 50
	// raters: more are counted as 50, not extrapolated (robust with the
	// text kernel on RTE's 800 items, its labels given to 10, 40 and 164
	// raters: 27.7, 49.1 and 50.3 CPU s; (R/10)^0.58 said 1, 2.2 and 5.1).
	scale := min(u.Scale, float64(ladderMaxRaters)/10)
	per := site * u.Sites * growthFactor(scale, siteGrowth)
	terms := fmt.Sprintf("%.2g s x %s%s", site, sites, growthTerm(siteGrowth))
	if u.Class != CostLabelsOnly && unit > 0 {
		per += unit * u.Kernel * growthFactor(scale, growth)
		terms += fmt.Sprintf(" + %.2g s x %s%s", unit, what, growthTerm(growth))
	}
	if u.Sweeps > 0 {
		if rates.PerSweep > 0 {
			per += rates.PerSweep
			terms = fmt.Sprintf("%.2g s + %s", rates.PerSweep, terms)
		}
		per *= float64(u.Sweeps)
		terms = fmt.Sprintf("%d sweeps x (%s)", u.Sweeps, terms)
	} else if siteGrowth != 0 || growth != 0 && u.Class != CostLabelsOnly {
		switch {
		case u.LadderRaters:
			terms += fmt.Sprintf(" (R %d raters, the shared ladder's for N items)", u.Raters)
		case u.Raters > ladderMaxRaters:
			terms += fmt.Sprintf(" (R %d raters, counted as %d: the most the rates were measured with)", u.Raters, ladderMaxRaters)
		default:
			terms += fmt.Sprintf(" (R %d raters)", u.Raters)
		}
	}
	curv := rates.CurvatureLabels
	if u.Class != CostLabelsOnly {
		curv = rates.CurvatureKernel
	}
	if u.CurvatureRuns > 0 && curv > 0 {
		pg, ng := rates.CurvatureParamGrowth, rates.CurvatureItemGrowth
		per += curv * float64(u.CurvatureRuns) * math.Pow(float64(u.Params), pg) * math.Pow(float64(n)/1000, ng)
		terms += fmt.Sprintf(" + %.2g s x %d curvature runs", curv, u.CurvatureRuns)
		switch pg {
		case 0:
		case 1:
			terms += fmt.Sprintf(" x %d rater parameters", u.Params)
		default:
			terms += fmt.Sprintf(" x (%d rater parameters)^%.2g", u.Params, pg)
		}
		if ng != 0 {
			terms += fmt.Sprintf(" x (N/1000)^%.2g", ng)
		}
	}
	per += rates.Fixed
	if rates.Fixed > 0 {
		terms = fmt.Sprintf("%.2g s + %s", rates.Fixed, terms)
	}
	switch {
	case u.Class == CostLabelsOnly:
	case u.Text && rates.TextFixed > 0:
		per += rates.TextFixed
		terms += fmt.Sprintf(" + %.2g s for the text kernel", rates.TextFixed)
	case !u.Text && rates.CovFixed > 0:
		per += rates.CovFixed
		terms += fmt.Sprintf(" + %.2g s for the covariate kernel", rates.CovFixed)
	}
	return per, fmt.Sprintf("%s: %s", name, terms)
}

// ExpectedCost estimates the CPU time of a fit of spec (ForData and
// WithDefaults applied) on labels labels of items items, and says how,
// with rates per model and engine from the shared ladder's runs on one
// quiet machine (estimateTable). A Gibbs fit costs ProjectedWork's sweeps x
// (per label + per N r for a low-rank prior of rank r, N² for a dense one);
// a deterministic fit (ep, laplace, vb, smc) per label x labels + per N r²
// for a low-rank prior (text kernels; fixed covariate kernels and learnt
// ones by inducing points from PivotedFromItems items) or N³/3 for a dense
// one, each part x (R/10)^g for R raters (the evidence maximisation's
// L-BFGS iterations grow with the rater parameters it learns). The ordinal
// model by EP or Laplace adds the curvature of its rater parameters'
// posterior: two engine runs per parameter of the noise model it likely
// keeps (noiseLikely), where there are at most 100. Every fit adds a fixed
// part, and one with a kernel a fixed part by its kind (text, covariates).
// A fit with nothing for the evidence to maximise (OneRun) is one run.
//
// Where the data decide the fit's work, CPU is the likely case and Max
// the costlier one, with Upto saying when: the default rank rule
// (defaultRank), which raises the rank towards leaving out RankTraceShare
// of the kernel's trace, is counted at the middle of its range and Max at
// its most; the default final run (finalPlan: when the search's prior
// leaves out more than FinalRunShare of the trace) is counted where the
// base rank is at most finalLikelyShare of the items and is Max's extra
// elsewhere (finalEstimate). A final run that FitSpec.FinalRank asks for
// is always counted. The ladder's runs are within [0.67, 1.5] of it
// (TestExpectedCostLadder), issue 35 asks for a factor of two. Settings far
// from the defaults (more restarts, chains or iterations) move it less
// than they move the fit, except Gibbs's sweeps, which it counts. The
// default rank rule and the final run's rule keep their own rates
// (costTable: rankCost, finalCost), so that their ranks do not move with
// this estimate's calibration.
func ExpectedCost(spec FitSpec, labels, items int) Cost {
	u, base, most := estimateUnits(spec, labels, items)
	c := estimateAt(u)
	if most > base {
		at := u
		setRank(&at, most)
		hi := estimateAt(at)
		c.Model += fmt.Sprintf("; r %d is the middle of the default rank rule's range %d to %d: it raises r from %d towards leaving out at most %.0f%% of the kernel's trace, within its budget", u.Rank, base, most, base, 100*RankTraceShare)
		c.Max, c.Upto = hi.CPU, fmt.Sprintf("the kernel's spectrum takes the rank to %d", most)
	}
	r, rule := finalPlan(spec, labels, items)
	if r == 0 {
		return c
	}
	at := r
	if rule && !textOnly(spec) {
		// Pivoted columns of a smooth kernel usually reach the share
		// rule's RankTraceShare before the rule's most: the ladder's rbf
		// stopped at 836 of 2,110 at 4,000 items and at its most, 1,022,
		// at 16,000. Counted at the middle, as the default rank rule's
		// range is.
		at = (base + r) / 2
	}
	fc := finalEstimate(spec, labels, items, at)
	what := fmt.Sprintf("rank %d", r)
	if r < 0 {
		what = "the dense matrix"
	} else if at != r {
		what = fmt.Sprintf("rank %d (counted at %d, the middle from the search's %d)", r, at, base)
	}
	switch {
	case rule && !finalLikely(base, items):
		c.Max, c.Upto = c.CPU+fc, fmt.Sprintf("the search's prior leaves out more than %.0f%% of the kernel's trace, which makes a final run at up to %s (%s CPU s)", 100*FinalRunShare, what, roundCPU(fc))
		return c
	case rule:
		c.Model += fmt.Sprintf("; a final run at up to %s, %s CPU s, counted: the search's base rank %d is at most %.0f%% of the items, so its prior likely leaves out more than %.0f%% of the kernel's trace", what, roundCPU(fc), base, 100*finalLikelyShare, 100*FinalRunShare)
	default:
		c.Model += fmt.Sprintf("; a final run at %s, %s CPU s", what, roundCPU(fc))
	}
	c.CPU += fc
	if c.Max > 0 {
		c.Max += fc
	}
	return c
}

// finalEstimate is ExpectedCost's cost of a final run at rank r (r < 0:
// the dense matrix): one run at estimateTable's "(final run)" rates,
// fitted to the final runs of main's ladder fits (finalCost is the rule's,
// which chooses the rank).
func finalEstimate(spec FitSpec, labels, items, r int) time.Duration {
	model := ModelOrdinal
	if strings.EqualFold(spec.Model, ModelBounded) {
		model = ModelBounded
	}
	key := model + "/" + strings.ToLower(spec.Engine)
	rates, ok := estimateTable[key+" "+finalRunKey]
	if !ok {
		rates = estimateTable["ordinal/ep "+finalRunKey]
	}
	if r > 0 && !textOnly(spec) {
		rates = estimateTable[pivotedFinalKey]
	}
	n := float64(items)
	u := CostUnits{Key: key + " " + finalRunKey, Sites: float64(labels), Items: items, Raters: spec.Raters, Class: CostLowRank, Rank: r, Kernel: n * float64(r) * float64(r), Scale: 1}
	if r < 0 {
		u.Class, u.Rank, u.Kernel = CostDense, 0, n*n*n/3
	}
	secs, _ := u.expected(rates)
	return seconds(secs)
}

// finalRunKey marks the rows of a final run after an evidence
// maximisation: costTable's (finalCost, the rule's) and estimateTable's
// (ExpectedCost's).
const finalRunKey = "(final run)"

// finalLikelyShare is the share of the items at or below which the
// search's base rank (gp.DefaultRank) likely leaves out more than
// FinalRunShare of the kernel's trace, so that ExpectedCost counts the
// default final run: on the shared ladder's data the text and rbf priors
// left out 6-11 % at 1,000 items (rank 349, 0.35 of the items: no final
// run) and 23-30 % at 4,000 and 16,000 (rank 250 and 128, 0.06 and 0.008:
// a final run); 0.15 is about the geometric middle of 0.06 and 0.35.
const finalLikelyShare = 0.15

// finalLikely reports whether ExpectedCost counts the default final run
// of a fit whose search keeps the base rank base on items items.
func finalLikely(base, items int) bool {
	return float64(base) <= finalLikelyShare*float64(items)
}

// estimateAt is ExpectedCost's search (the fit without a final run) at
// the units u.
func estimateAt(u CostUnits) Cost {
	rates, ok := estimateTable[u.Key]
	if !ok {
		// A pair the ladder does not cover: the ordinal EP rates, a
		// labels-only order of magnitude.
		rates = estimateTable["ordinal/ep"]
	}
	secs, what := u.expected(rates)
	return Cost{CPU: seconds(secs), Model: what}
}

// estimateUnits is costUnits for ExpectedCost: the likely case where the
// data decide (the rank in the middle of the default rank rule's range;
// the ordinal model's curvature runs for the noise model it likely
// keeps, noiseLikely), and the rule's base and most ranks (most = base
// when it may not raise the rank).
func estimateUnits(spec FitSpec, labels, items int) (u CostUnits, base, most int) {
	u, most = costUnits(spec, labels, items)
	base = u.Rank
	if most > base {
		setRank(&u, (base+most)/2)
	} else {
		most = base
	}
	if u.Params > 0 {
		u.Params = noiseLikely(spec, labels, u.Raters)
		u.CurvatureRuns = 0
		if u.Params <= curvatureParams {
			u.CurvatureRuns = 2 * u.Params
		}
	}
	return u, base, most
}

// setRank sets the low-rank units u to rank r.
func setRank(u *CostUnits, r int) {
	n := float64(u.Items)
	u.Rank = r
	if u.Sweeps > 0 {
		u.Kernel = n * float64(r)
	} else {
		u.Kernel = n * float64(r) * float64(r)
	}
}

// perRaterLabels is the labels per rater from which ExpectedCost assumes
// that the ordinal model's automatic noise choice keeps per-rater noise
// (R x levels parameters) rather than shared thresholds (R + levels - 1):
// on the shared ladder's data the penalised evidence kept shared
// thresholds with 200 and 400 labels per rater (250 and 1,000 items) and
// per-rater noise with 800 and 1,600 (4,000 and 16,000 items).
const perRaterLabels = 600

// noiseLikely returns the number of rater parameters of the ordinal
// model's noise model that a fit of spec with labels labels from raters
// raters likely keeps: spec.Noise's, or for auto per-rater noise from
// perRaterLabels labels per rater, shared thresholds below.
func noiseLikely(spec FitSpec, labels, raters int) int {
	levels := spec.Levels
	if levels <= 0 {
		levels = 5 // the shared ladder's ordinal:1..5
	}
	switch strings.ToLower(spec.Noise) {
	case "per-rater":
		return raters * levels
	case "shared":
		return levels
	case "shared-thresholds":
		return raters + levels - 1
	}
	if labels >= perRaterLabels*raters {
		return raters * levels
	}
	return raters + levels - 1
}

// searchCost is the rules' expected cost of a fit without a final run at
// costTable's rates (rankCost): ExpectedCost's model before its
// recalibration on one machine's ladder, kept so that the ranks the
// default rank rule and the final run's rule choose do not move.
func searchCost(spec FitSpec, labels, items int) time.Duration {
	u, _ := costUnits(spec, labels, items)
	rates, ok := costTable[u.Key]
	if !ok {
		rates = costTable["ordinal/ep"]
	}
	secs, _ := u.Estimate(rates)
	return seconds(secs)
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
	// Text says that the kernel is of text terms alone (TextFixed).
	Text bool
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
	u.Text = class != kernelNone && textOnly(spec)
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
	name := strings.Replace(u.Key, "/", " ", 1)
	unit, growth, what, site, siteGrowth, sites := u.parts(unitRates{rates.PerLabel, rates.PerPair, rates.PerLowRank, rates.PerLearnt, rates.PerDense, rates.LabelGrowth, rates.KernelGrowth})
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
	return max(5, min(ladderMaxRaters, int(math.Round(5*math.Sqrt(float64(n)/250)))))
}

// ladderMaxRaters is the most raters of the shared ladder's data, the most
// ExpectedCost's growth with the raters was measured with.
const ladderMaxRaters = 50

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
