package analysis

import (
	"fmt"
	"strings"
	"testing"

	"concord/multirater/gp"
)

// TestDefaultRankRule checks the default rank rule's range (defaultRank) on
// the shared ladder's sizes (4 labels per item): where the fit's expected
// cost at the base rank is over its budget the rank stays gp.DefaultRank
// (every ladder family near the 240 CPU s line at 16,000 items, the
// evidence-maximising text fits at 1,000 and 4,000 items), and where it is
// under, the rule may raise it as far as the budget pays for, no further.
func TestDefaultRankRule(t *testing.T) {
	fixed := func(s FitSpec) FitSpec {
		s.Sigma, s.Thresholds = 0.75, []float64{-1.2, -0.4, 0.4, 1.2}
		return s
	}
	cases := []struct {
		name   string
		spec   FitSpec
		items  int
		raised bool
	}{
		{"ordinal ep text 16000", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}, 16000, false},
		{"ordinal laplace text 16000", FitSpec{Model: "ordinal", Engine: "laplace", Kernel: "text"}, 16000, false},
		{"bounded ep text 16000", FitSpec{Model: "bounded", Engine: "ep", Kernel: "text"}, 16000, false},
		{"classification gibbs text 16000", FitSpec{Model: "classification", Engine: "gibbs", Kernel: "text"}, 16000, false},
		{"ordinal ep rbf 16000", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "rbf:gamma=0.125"}, 16000, false},
		{"ordinal ep text 4000", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}, 4000, false},
		{"ordinal laplace text 4000", FitSpec{Model: "ordinal", Engine: "laplace", Kernel: "text"}, 4000, false},
		{"ordinal ep text 1000", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}, 1000, false},
		{"ordinal laplace text 1000", FitSpec{Model: "ordinal", Engine: "laplace", Kernel: "text"}, 1000, false},
		{"bounded ep text 1000", FitSpec{Model: "bounded", Engine: "ep", Kernel: "text"}, 1000, false},
		{"classification gibbs text 1000", FitSpec{Model: "classification", Engine: "gibbs", Kernel: "text"}, 1000, false},
		{"ordinal gibbs text 1000", FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "text"}, 1000, false},
		{"ordinal ep rbf 1000", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "rbf:gamma=0.125"}, 1000, false},
		{"confusion vb text 1000", FitSpec{Model: "confusion", Engine: "vb", Kernel: "text"}, 1000, true},
		{"confusion vb text 16000", FitSpec{Model: "confusion", Engine: "vb", Kernel: "text"}, 16000, true},
		{"one ep run text 1000", fixed(FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}), 1000, true},
		{"one ep run text 4000", fixed(FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}), 4000, true},
		{"one ep run rbf 4000", fixed(FitSpec{Model: "ordinal", Engine: "ep", Kernel: "rbf:gamma=0.125"}), 4000, true},
		{"one ep run text 16000", fixed(FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}), 16000, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec.WithDefaults()
			labels := 4 * tc.items
			base, most := defaultRank(spec, labels, tc.items)
			t.Logf("%d items: base rank %d, the most the rule may reach %d (expected cost at the base rank %.1f CPU s, budget %.0f)",
				tc.items, base, most, rankCost(spec, labels, tc.items, base).Seconds(), rankBudget(tc.items).Seconds())
			if base != gp.DefaultRank(tc.items) {
				t.Fatalf("base %d, want gp.DefaultRank = %d", base, gp.DefaultRank(tc.items))
			}
			if raised := most > base; raised != tc.raised {
				t.Fatalf("range [%d, %d]: raised %t, want %t (expected cost at the base rank %v, budget %v)",
					base, most, raised, tc.raised, rankCost(spec, labels, tc.items, base), rankBudget(tc.items))
			}
			if !tc.raised {
				return
			}
			budget := rankBudget(tc.items)
			if c := rankCost(spec, labels, tc.items, most); c > budget {
				t.Errorf("expected cost at rank %d = %v, over the budget %v", most, c, budget)
			}
			if most < tc.items {
				if c := rankCost(spec, labels, tc.items, most+1); c <= budget {
					t.Errorf("expected cost at rank %d = %v, within the budget %v: the range stops short", most+1, c, budget)
				}
			}
			// ExpectedCost states the likely case, the middle of the
			// range, and the most as what it may cost.
			c := ExpectedCost(spec, labels, tc.items)
			if c.Max <= c.CPU || !strings.Contains(c.String(), "up to ") || !strings.Contains(c.Model, fmt.Sprintf("default rank rule's range %d to %d", base, most)) {
				t.Errorf("cost %q does not state the range %d to %d (CPU %v, Max %v)", c, base, most, c.CPU, c.Max)
			}
		})
	}
}

// TestOneRun checks which fits ExpectedCost costs as one EP run or one
// Newton's method (every rater parameter fixed, no kernel term learnt), and
// that such a fit is costed far below the evidence maximisation of the same
// model (issue 35: the dense 4,000-item text fit with both fixed was
// quoted 1.4e4 CPU s and took 419).
func TestOneRun(t *testing.T) {
	th := []float64{-1.2, -0.4, 0.4, 1.2}
	for _, tc := range []struct {
		name string
		spec FitSpec
		want bool
	}{
		{"ep, both fixed", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text", Sigma: 0.75, Thresholds: th}, true},
		{"laplace, both fixed", FitSpec{Model: "ordinal", Engine: "laplace", Kernel: "rbf:gamma=0.125", Sigma: 0.75, Thresholds: th}, true},
		{"identity, both fixed", FitSpec{Model: "ordinal", Engine: "ep", Sigma: 0.75, Thresholds: th}, true},
		{"sigma alone", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text", Sigma: 0.75}, false},
		{"thresholds alone", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text", Thresholds: th}, false},
		{"kernel learnt", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "rbf", Sigma: 0.75, Thresholds: th}, false},
		{"gibbs", FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "text", Sigma: 0.75, Thresholds: th}, false},
		{"bounded", FitSpec{Model: "bounded", Engine: "ep", Kernel: "text", Sigma: 0.75, Thresholds: th}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec.WithDefaults()
			if got := OneRun(spec); got != tc.want {
				t.Fatalf("OneRun = %t, want %t", got, tc.want)
			}
			c := ExpectedCost(spec, 16000, 4000)
			if got := strings.Contains(c.Model, oneRunKey); got != tc.want {
				t.Errorf("cost model %q: one run %t, want %t", c.Model, got, tc.want)
			}
			if !tc.want || spec.Kernel == "identity" {
				return // labels only: the per-label rates are of one order
			}
			learnt := spec
			learnt.Sigma, learnt.Thresholds = 0, nil
			for _, rank := range []int{-1, 250} {
				spec.Rank, learnt.Rank = rank, rank
				one, all := ExpectedCost(spec, 16000, 4000).CPU, ExpectedCost(learnt, 16000, 4000).CPU
				if !(one < all/5) {
					t.Errorf("rank %d: one run costed %v, the evidence maximisation %v: want under a fifth of it", rank, one, all)
				}
			}
		})
	}
}
