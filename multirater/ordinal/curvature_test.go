package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/infer"
	"concord/multirater/lik"
	"concord/multirater/mcmc"
)

// laplaceBed simulates an identity-kernel crowd: n items with f ~ N(0, 1),
// every item rated by perItem of the raters (chosen at random), rater l's
// label the level of f + N(0, 1/alpha_l) among its thresholds.
func laplaceBed(seed uint64, n, perItem int, alpha []float64, cuts [][]float64) *Data {
	rng := rand.New(rand.NewPCG(seed, 29))
	k := len(cuts[0]) + 1
	d := &Data{Kernel: "identity"}
	for c := 0; c < k; c++ {
		d.Levels = append(d.Levels, fmt.Sprint(c+1))
	}
	for l := range alpha {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", l+1))
	}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%03d", i))
		f := rng.NormFloat64()
		for _, l := range rng.Perm(len(alpha))[:perItem] {
			y := f + rng.NormFloat64()/math.Sqrt(alpha[l])
			lev := 0
			for lev < k-1 && y > cuts[l][lev] {
				lev++
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: lev})
		}
	}
	return d
}

// TestRaterLaplaceAgainstGibbs: the EP fit's Laplace intervals of the
// rater precisions and thresholds (raterLaplace) against the Gibbs
// sampler's posterior 95% intervals on the same model and priors (4
// raters of precision .7-5, 200 items with 3 labels each, identity
// kernel). Tolerances: each end of a precision interval within 0.15 of
// Gibbs's on the log scale (the intervals span 1.2-1.4 there; measured at
// most 0.10), each end of a threshold interval within 20% of the Gibbs
// interval's width (measured at most 13%; the Gibbs quantiles from 4 x
// 3000 draws carry a few per cent of Monte Carlo error), and no interval
// collapsed to a point.
func TestRaterLaplaceAgainstGibbs(t *testing.T) {
	if testing.Short() {
		t.Skip("Gibbs reference: 4 chains")
	}
	cuts := [][]float64{{-1, 0, 1}, {-0.8, 0.2, 1.1}, {-1.2, -0.1, 0.9}, {-1, 0.1, 0.8}}
	d := laplaceBed(1, 200, 3, []float64{0.7, 1.5, 3, 5}, cuts)
	gibbs := fit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 3000, Seed: 5}}})
	res, err := FitDeterministic(context.Background(), d, DetOptions{Priors: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("notes %q", res.Diagnostics.Notes)
	for l, r := range res.Raters {
		g := gibbs.Raters[l]
		t.Logf("rater %s precision EP %.3f (%.3f, %.3f) Gibbs %.3f (%.3f, %.3f)", r.ID, r.Precision.Mean, r.Precision.Q025, r.Precision.Q975, g.Precision.Q50, g.Precision.Q025, g.Precision.Q975)
		if r.Precision.Q975 <= r.Precision.Q025 {
			t.Errorf("rater %s: precision interval collapsed", r.ID)
		}
		for _, e := range [][2]float64{{r.Precision.Q025, g.Precision.Q025}, {r.Precision.Q975, g.Precision.Q975}} {
			if d := math.Abs(math.Log(e[0] / e[1])); d > 0.15 {
				t.Errorf("rater %s: precision interval end %.3f, Gibbs %.3f: %.3f apart on the log scale, want at most 0.15", r.ID, e[0], e[1], d)
			}
		}
		for k, th := range r.Thresholds {
			gt := g.Thresholds[k]
			t.Logf("   b%d EP %.3f (%.3f, %.3f) Gibbs %.3f (%.3f, %.3f)", k, th.Mean, th.Q025, th.Q975, gt.Q50, gt.Q025, gt.Q975)
			w := gt.Q975 - gt.Q025
			if th.Q975 <= th.Q025 {
				t.Errorf("rater %s threshold %d: interval collapsed", r.ID, k)
			}
			for _, e := range [][2]float64{{th.Q025, gt.Q025}, {th.Q975, gt.Q975}} {
				if d := math.Abs(e[0] - e[1]); d > 0.2*w {
					t.Errorf("rater %s threshold %d: interval end %.3f, Gibbs %.3f: %.3f apart, more than 20%% of the Gibbs width %.3f", r.ID, k, e[0], e[1], d, w)
				}
			}
		}
	}
}

// TestEmptyWidths: without priors, the widths of interior levels that an
// owner's ratings do not use are fixed (Chu's parameter k for level k);
// the outer empty levels and the used ones are not, nor any with priors;
// and a one-rater fit holds those levels at width e^lnZeroWidth.
func TestEmptyWidths(t *testing.T) {
	const nk = 7
	cases := []struct {
		levels []int
		on     bool
		want   []int
	}{
		{[]int{0, 3, 6}, true, []int{1, 2, 4, 5}},
		{[]int{1, 2, 5}, true, []int{3, 4}},
		{[]int{0, 1, 2, 3, 4, 5, 6}, true, nil},
		{[]int{0, 6}, false, nil},
	}
	for _, c := range cases {
		nm := newNoiseModel(PerRater, 1, nk)
		prob := &infer.Problem{}
		for _, y := range c.levels {
			prob.Sites = append(prob.Sites, lik.Site{Y: float64(y)})
			prob.Owner = append(prob.Owner, 0)
		}
		var got []int
		for k, x := range emptyWidths(prob, nm, nk, c.on)[0] {
			if x {
				got = append(got, k)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("levels %v (on %v): fixed %v, want %v", c.levels, c.on, got, c.want)
		}
	}
	d := laplaceBed(2, 150, 1, []float64{4}, [][]float64{{-1, -0.3, 0.3, 1}})
	for j := range d.Ratings {
		if d.Ratings[j].Level == 2 {
			d.Ratings[j].Level = 1 // level 3 of 5 left empty
		}
	}
	res, err := FitDeterministic(context.Background(), d, DetOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Raters[0].Thresholds
	if w := b[2].Mean - b[1].Mean; math.Abs(w-math.Exp(lnZeroWidth)) > 1e-9 {
		t.Errorf("the empty level's width %v, want e^%d", w, lnZeroWidth)
	}
	if !res.Diagnostics.Converged {
		t.Errorf("not converged: %q", res.Diagnostics.Notes)
	}
}
