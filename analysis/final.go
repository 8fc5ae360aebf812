package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// The final run of an evidence-maximising fit (FitSpec.FinalRank; the
// ordinal model by EP or Laplace, ordinal.Data.Final). The default rank
// rule (defaultRank) keeps the base rank gp.DefaultRank(N) for a fit whose
// expected cost there is already over its budget: every ladder family that
// learns its rater parameters by maximising the evidence on a text or
// fixed rbf kernel at 4,000 and 16,000 items, where the base rank leaves
// out 23-30 % of the kernel's trace and the consensus misses issue 35's
// line against the exact fit (Spearman 0.9814 text, 0.9464 rbf at 4,000
// items with the rater parameters fixed; docs/scaling.md). The evidence
// maximisation stays at the base rank, bit for bit; then one more run with
// the learnt rater parameters held fixed, on a prior of the rank that the
// rule's second step asks for (at most RankTraceShare of the trace left
// out) within the rule's budget counted for that one run
// (rankBudget(N) against finalCost), gives the consensus, the posterior,
// the evidence and the document. It happens by default only when the
// search's prior leaves out more than FinalRunShare of the trace.
const (
	// FinalRunShare is the share of the kernel's trace above which the
	// search's default low-rank prior gets a final run: every
	// approximation that left out less met issue 35's lines against the
	// exact fit on the ladder's data (1,000 items, text, rank 349: 11.1 %
	// left out, Spearman 0.9966), and at 1,000 items, where the
	// evidence-maximising text and rbf fits take 15-18 of the line's 20
	// CPU s, no final run is added.
	FinalRunShare = 0.12
)

// finalRunModel reports whether a fit of spec learns rater parameters by
// maximising the evidence with a deterministic engine on a fixed kernel,
// so that a final run may follow (ordinal.Data.Final, bounded.Data.Final):
// the ordinal model by EP or Laplace, not OneRun, and the bounded model
// by EP or Laplace.
func finalRunModel(spec FitSpec) bool {
	model, engine := strings.ToLower(spec.Model), strings.ToLower(spec.Engine)
	if model == "" {
		model = ModelOrdinal
	}
	if engine != multirater.EngineEP && engine != multirater.EngineLaplace {
		return false
	}
	return model == ModelBounded || model == ModelOrdinal && !oneRun(spec, model, engine)
}

// finalCost is the expected CPU time of a final run at rank r (r < 0: the
// dense matrix): costTable's "(final run)" row of the model and engine
// (PerLabel x labels + PerLowRank x N r², or PerDense x N³/3: the EP run
// from the search's sites, or Newton's method, and a FITC prior's pivoted
// columns) plus, for a text kernel, its truncated basis of rank r
// (textBasisCost; the default builds it at the most rank the rule allows
// and reads the rank from it, a second, smaller basis only when the
// trace share is met below it).
func finalCost(spec FitSpec, labels, items, r int) time.Duration {
	model := ModelOrdinal
	if strings.EqualFold(spec.Model, ModelBounded) {
		model = ModelBounded
	}
	key := model + "/" + strings.ToLower(spec.Engine) + " " + finalRunKey
	n := float64(items)
	u := CostUnits{Key: key, Sites: float64(labels), Items: items, Raters: spec.Raters, Class: CostLowRank, Rank: r, Kernel: n * float64(r) * float64(r)}
	if r < 0 {
		u.Class, u.Rank, u.Kernel = CostDense, 0, n*n*n/3
	}
	if u.Raters <= 0 {
		u.Raters, u.LadderRaters = LadderRaters(items), true
	}
	u.Scale = float64(u.Raters) / 10
	secs, _ := u.Estimate(costTable[key])
	c := seconds(secs)
	if r > 0 && textOnly(spec) {
		c += textBasisCost(items, r)
	}
	return c
}

// finalMost returns the largest rank, from base up to items, at which the
// default final run's expected cost (finalCost) is within rankBudget(items);
// base when none above it is.
func finalMost(spec FitSpec, labels, items, base int) int {
	budget := rankBudget(items)
	return largestWithin(base, items, func(r int) bool { return finalCost(spec, labels, items, r) <= budget })
}

// finalPlan says the final run a fit of spec on labels labels of items
// items may make, before its prior is built, for the expected cost and
// the CLI's first line: the rank (-1 the dense matrix; for the default,
// the most it may reach) and whether it is the default rule's (which
// makes the run only when the search's prior leaves out more than
// FinalRunShare of the trace); rank 0 when there is none.
func finalPlan(spec FitSpec, labels, items int) (rank int, rule bool) {
	if !finalRunModel(spec) {
		return 0, false
	}
	class, base, most, learnt := costKernel(spec, labels, items)
	if class != kernelLowRank || learnt {
		return 0, false
	}
	switch {
	case spec.FinalRank != 0:
		return min(spec.FinalRank, items), false
	case spec.Rank != 0 || most > base:
		return 0, false
	}
	if m := finalMost(spec, labels, items, base); m > base {
		return m, true
	}
	return 0, false
}

// FinalRunLine says, for the CLI's first line, the final run a fit of
// spec (WithDefaults applied, its kernel for the data) on labels labels of
// items items will or may make after its evidence maximisation; "" when
// none.
func FinalRunLine(spec FitSpec, labels, items int) string {
	r, rule := finalPlan(spec, labels, items)
	_, base, _, _ := costKernel(spec, labels, items)
	switch {
	case r == 0:
		return ""
	case r < 0:
		return fmt.Sprintf("evidence maximised at rank %d, then a final run on the exact dense matrix", base)
	case !rule:
		return fmt.Sprintf("evidence maximised at rank %d, then a final run at rank %d", base, r)
	}
	return fmt.Sprintf("evidence maximised at rank %d, then a final run at up to rank %d if that prior leaves out more than %.0f%% of the kernel's trace", base, r, 100*FinalRunShare)
}

// finalPrior returns the builder of the prior of the final run of a fit
// of spec on labels labels (finalRunModel) whose evidence maximisation's
// prior is lr, the low-rank form of ks (a text basis from x when x is not
// nil, else pivoted columns): spec.FinalRank's, or by default (FinalRank
// and Rank 0), when the rank rule kept its base rank and lr leaves out
// more than FinalRunShare of the trace, the smallest rank from lr's that
// leaves out at most RankTraceShare within finalMost (read as
// textLowRank and covLowRank read the rule's rank, so that the rank and
// the seed rebuild it: priorLowRank). The builder returns the prior and
// a few words on it. Nil when there is no final run.
func (f *itemFeatures) finalPrior(ks kernel.Spec, spec FitSpec, labels int, lr *gp.LowRank, x *gp.SparseRows) func(context.Context) (*gp.Gram, string, error) {
	if !finalRunModel(spec) || lr == nil || lr.Exact || learntCross(ks) {
		return nil
	}
	n, from := f.n, lr.Rank()
	searched := fmt.Sprintf("the evidence maximisation's prior: rank %d, %.2f%% left out", from, 100*lr.Residual()/lr.Trace)
	say := func(lr *gp.LowRank) string {
		what := "a truncated text basis of rank"
		if x == nil {
			what = "an inducing-point (FITC) prior of pivoted columns, rank"
		}
		return fmt.Sprintf("%s %d (%.2f%% of the kernel's trace left out; %s)", what, lr.Rank(), 100*lr.Residual()/lr.Trace, searched)
	}
	var diag []float64
	var col func(int, []float64)
	if x == nil {
		if diag, col = f.covColumns(ks, false); diag == nil {
			return nil
		}
	}
	// build makes the prior of rank r, or by the share rule from lr's
	// rank up to most.
	build := func(ctx context.Context, r, most int) (*gp.LowRank, error) {
		switch {
		case x == nil && r > 0:
			return gp.NewLowRankColumns(diag, col, r, 0)
		case x == nil:
			return gp.NewLowRankColumnsShare(diag, col, from, most, RankTraceShare)
		}
		basis := func(r int) (*gp.LowRank, error) {
			return gp.NewLowRankFeatures(*x, gp.LowRankOptions{MaxRank: r, Stop: ctx.Err}, rand.New(rand.NewPCG(spec.Seed, lowRankStream)), spec.Seed)
		}
		if r > 0 {
			return basis(r)
		}
		wide, err := basis(most)
		if err != nil {
			return nil, err
		}
		if s := wide.ShareRank(from, RankTraceShare); s < wide.Rank() {
			return basis(s)
		}
		return wide, nil
	}
	lowRank := func(r, most int) func(context.Context) (*gp.Gram, string, error) {
		return func(ctx context.Context) (*gp.Gram, string, error) {
			lr, err := build(ctx, r, most)
			if err != nil {
				return nil, "", invalidData(err, "the final run's prior: ")
			}
			return gp.NewGramLowRank(lr), say(lr), nil
		}
	}
	switch {
	case spec.FinalRank < 0:
		return func(context.Context) (*gp.Gram, string, error) {
			return f.denseGram(ks), fmt.Sprintf("the exact dense %d×%d kernel matrix (%s)", n, n, searched), nil
		}
	case spec.FinalRank > 0:
		return lowRank(min(spec.FinalRank, n), 0)
	case spec.Rank != 0 || lr.Residual() <= FinalRunShare*lr.Trace:
		return nil
	}
	base, most := defaultRank(spec, labels, n)
	if most > base || from != min(base, n) {
		return nil // the rule raised the search's rank: no final run
	}
	if most = finalMost(spec, labels, n, base); most <= from {
		return nil
	}
	return lowRank(0, most)
}

// denseGram is the dense kernel matrix of ks (buildCovariance's dense
// form).
func (f *itemFeatures) denseGram(ks kernel.Spec) *gp.Gram {
	c, _ := f.gram(ks)
	if x := f.textFeatures(ks); x != nil {
		return gp.NewGramFeatures(c, x)
	}
	return gp.NewGram(c)
}

// finalData sets *dst, a family's Data.Final, to cov's final prior's
// builder when cov has one and no kernel term is learnt (learn), and
// returns where the prior it built will be, for finalFitted (nil there
// when no final run was made).
func finalData(cov *Covariance, learn bool, dst *func(context.Context) (mat.Symmetric, string, error)) **gp.Gram {
	final := new(*gp.Gram)
	if cov.final != nil && !learn {
		*dst = func(ctx context.Context) (mat.Symmetric, string, error) {
			g, what, err := cov.final(ctx)
			*final = g
			return g, what, err
		}
	}
	return final
}

// finalFitted records in res the final run's prior final after the
// evidence maximisation on cov's: Model.PriorRank its rank (0: dense), so
// that predict rebuilds it, Model.EvidenceRank the search's, and a note.
func finalFitted(res *multirater.FitResult, cov *Covariance, final *gp.Gram) {
	res.Model.EvidenceRank = cov.Cov.LowRank().MaxRank
	res.Model.PriorRank = 0
	what := "the exact dense matrix"
	if lr := final.LowRank(); lr != nil {
		res.Model.PriorRank = lr.MaxRank
		what = fmt.Sprintf("rank %d (%.2f%% of the trace left out)", lr.Rank(), 100*lr.Residual()/lr.Trace)
	}
	flag := SettingOf(func(s *FitSpec) any { return &s.FinalRank }).Flag()
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("evidence maximised at rank %d; final run at %s (--%s sets it)", res.Model.EvidenceRank, what, flag))
}
