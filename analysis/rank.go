package analysis

import (
	"fmt"
	"time"

	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// The default rank of a low-rank prior (FitSpec.Rank 0: a text kernel's
// truncated weight-space basis, a fixed covariate kernel's FITC pivots)
// follows one rule, defaultRank:
//
//   - it starts from gp.DefaultRank(N), the base rule (every dimension up to
//     256 items, then 128 to 512, at most sqrt(2.5e8/N) but at least 128),
//     which is also its floor;
//   - it is raised to the smallest rank whose basis leaves out at most
//     RankTraceShare of the kernel's trace (tr(C) - tr(G G') <= 5 % of
//     tr(C)): on the shared ladder's data every approximation that left out
//     under 8 % met issue 35's lines against the exact fit (consensus
//     Spearman >= 0.99, accuracy within 0.01), and those that left out 12 % or
//     more did not at 4,000 items (docs/scaling.md);
//   - but only while the whole fit's expected cost (the rule's own count at
//     costTable's rates, which ExpectedCost no longer reads since branch
//     cost36: searchCost at that rank, its defaults' evaluations included,
//     and for a text kernel the wider basis the rank is read from:
//     rankCost) stays within
//     rankBudget(N): RankBudgetPerItem per item, at most RankBudgetMax.
//
// A fit whose expected cost at the base rank is already over its budget
// keeps the base rank: at 16,000 items every ladder family with a text or
// fixed rbf kernel (54-255 CPU s expected at rank 128), and at 1,000 items
// the evidence-maximising ones (19-25 CPU s expected against 10). A fit that
// is cheap per rank, one EP run with every rater parameter fixed or the
// confusion model's VB, gets the rank the trace share asks for, up to what
// its budget pays for. An evidence-maximising ordinal EP or Laplace fit
// that keeps the base rank may end with one final run at the share's rank
// instead (finalPrior, analysis/final.go).
const (
	// RankTraceShare is the share of the kernel's trace that the default
	// low-rank prior aims to leave out at most.
	RankTraceShare = 0.05
	// RankBudgetPerItem is the expected CPU time per item within which the
	// default rank may be raised above the base rule: half the issue's
	// 1,000-item line (20 CPU s per 1,000 items), the other half being
	// ExpectedCost's stated accuracy (a factor of two).
	RankBudgetPerItem = 10 * time.Millisecond
	// RankBudgetMax bounds that budget for large data: the rank is raised
	// only for fits expected to take well under a minute. ExpectedCost
	// under-states the text fits at 16,000 items (ordinal Laplace 54 CPU s
	// expected, 182 measured), so a budget of minutes would raise their rank
	// where they are already near the 240 CPU s line.
	RankBudgetMax = 40 * time.Second
)

// rankBudget is the expected cost within which the default rank of a fit
// on items items may be raised: RankBudgetPerItem x items, at most
// RankBudgetMax.
func rankBudget(items int) time.Duration {
	return min(RankBudgetPerItem*time.Duration(items), RankBudgetMax)
}

// defaultRank returns the range of the default rank rule for a fit of spec
// (Rank 0) on labels labels of items items: base = gp.DefaultRank(items),
// and the largest rank up to items whose expected cost (searchCost, the
// fit without a final run at costTable's rates, with that Rank) is within
// rankBudget(items), or base when even base's is not.
// The rank the fit keeps lies between them: the smallest from base leaving
// out at most RankTraceShare of the kernel's trace, or most.
func defaultRank(spec FitSpec, labels, items int) (base, most int) {
	base = gp.DefaultRank(items)
	if base >= items {
		return base, base
	}
	budget := rankBudget(items)
	at := func(r int) time.Duration { return rankCost(spec, labels, items, r) }
	if at(base) > budget {
		return base, base
	}
	return base, largestWithin(base, items, func(r int) bool { return at(r) <= budget })
}

// largestWithin returns the largest r in [lo, hi] for which ok(r) holds,
// ok being true up to some rank and false beyond it (an expected cost that
// grows with the rank, against a budget), and lo when ok holds nowhere
// above lo (ok(lo) is not evaluated).
func largestWithin(lo, hi int, ok func(int) bool) int {
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// rankCost is what the default rank rule counts against its budget for
// rank r: searchCost (costTable's fit without a final run) with that Rank
// and, for a text kernel, the construction of the wider basis that the
// rank is read from (textBasisCost; the rates include one basis of the
// rank kept, and the wider one is built besides it when the rank kept is
// smaller).
func rankCost(spec FitSpec, labels, items, r int) time.Duration {
	s := spec
	s.Rank = r
	c := searchCost(s, labels, items)
	if textOnly(spec) {
		c += textBasisCost(items, r)
	}
	return c
}

// textOnly reports whether spec's kernel is of linear text terms alone
// (the weight-space basis of gp.NewLowRankFeatures).
func textOnly(spec FitSpec) bool {
	ks, err := spec.kernelSpec()
	if err != nil || len(ks) == 0 {
		return false
	}
	for _, t := range ks {
		if t.Kind != kernel.TextTerm {
			return false
		}
	}
	return true
}

// basisPerFlop is the CPU time per floating-point operation of
// gp.NewLowRankFeatures' randomized range finder (gonum's Householder QR
// and symmetric eigendecomposition), measured on the ladder's 2-core
// machine: 0.9, 2.0 and 11.3 CPU s for ranks 349, 534 and 971 at 1,000
// items, 1.3 and 25.6 for 250 and 971 at 4,000 (branch rank35d).
const basisPerFlop = 4.5e-10

// textBasisCost is the expected CPU time of a truncated text basis of
// rank r for items items: with l = r + 10 directions and 2 power
// iterations, three thin QR factorisations of N×l (about 4 N l² each),
// G = Q W (2 N l²) and the eigendecomposition of the l×l projection
// (about 9 l³): 14 N l² + 9 l³ operations (Halko, Martinsson & Tropp
// 2011, sec. 4.5 and 6).
func textBasisCost(items, r int) time.Duration {
	n, l := float64(items), float64(min(r+10, items))
	return seconds(basisPerFlop * (14*n*l*l + 9*l*l*l))
}

// rankNote says how the default rank rule chose rank of [base, most], for
// a fit's notes; left is what the kept basis leaves out of the trace (a
// text basis rebuilt at the rank read from the rank-most one may leave out
// a little more than the share).
func rankNote(rank, base, most int, items int, left, trace float64) string {
	budget := rankBudget(items)
	flag := SettingOf(func(s *FitSpec) any { return &s.Rank }).Flag()
	switch {
	case most == base:
		return fmt.Sprintf("default rank %d (gp.DefaultRank for %d items): the fit's expected cost at that rank is over the %s budget within which the rule raises it (%.2f%% of the kernel's trace left out; --%s sets it)",
			rank, items, roundCPU(budget)+" CPU s", 100*left/trace, flag)
	case rank < most:
		return fmt.Sprintf("default rank %d: the smallest from %d (gp.DefaultRank) that leaves out at most %.0f%% of the kernel's trace (this basis: %.2f%%), within the rank %d that the fit's expected-cost budget of %s CPU s allows (--%s sets it)",
			rank, base, 100*RankTraceShare, 100*left/trace, most, roundCPU(budget), flag)
	}
	return fmt.Sprintf("default rank %d: the most that the fit's expected-cost budget of %s CPU s allows, raised from %d (gp.DefaultRank) towards leaving out at most %.0f%% of the kernel's trace (%.2f%% left out; --%s sets it)",
		rank, roundCPU(budget), base, 100*RankTraceShare, 100*left/trace, flag)
}
