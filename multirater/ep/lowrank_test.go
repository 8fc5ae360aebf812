package ep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater/gp"
	"concord/multirater/gp/gptest"
	"concord/multirater/lik"
	"concord/multirater/mcmc/mcmctest"
)

// lowRankProblem returns n unit-norm bag-of-words rows over d terms (a
// topic per item, 5 topics of 20 terms, Zipf-like background), the latent
// values f = the topic's score plus noise, and 4 ordinal ratings per item
// from raters with noise sd 0.5.
func lowRankProblem(n, d int, seed uint64) (gp.SparseRows, []lik.Site, []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := gp.SparseRows{Cols: d, Idx: make([][]int32, n), Val: make([][]float64, n)}
	truth := make([]float64, n)
	o := &lik.OrdinalProbit{B: []float64{-1, 0, 1}, Sigma: 0.5}
	var sites []lik.Site
	for i := 0; i < n; i++ {
		topic := rng.IntN(5)
		truth[i] = float64(topic-2)*0.6 + 0.3*rng.NormFloat64()
		cnt := map[int32]float64{}
		for t := 8 + rng.IntN(20); t > 0; t-- {
			if rng.Float64() < 0.3 {
				cnt[int32(topic*20+rng.IntN(20))]++
			} else {
				cnt[int32(100+int(float64(d-100)*math.Pow(rng.Float64(), 3)))]++
			}
		}
		x.Idx[i], x.Val[i] = gptest.UnitRow(cnt)
		for r := 0; r < 4; r++ {
			y := truth[i] + 0.5*rng.NormFloat64()
			lv := 0
			for _, b := range o.B {
				if y > b {
					lv++
				}
			}
			sites = append(sites, lik.Site{Item: i, Y: float64(lv), Lik: o})
		}
	}
	return x, sites, truth
}

// TestLowRankMatchesDense runs EP on the same sites with the dense kernel
// matrix X X' (its eigen-factor, the path of main) and with the
// weight-space factor (gp.LowRank): exact when the features have fewer
// dimensions than the rank (posterior means and variances to 1e-7, log
// Z_EP to 1e-6 relative), and truncated to a third or half of the
// dimensions with the diagonal correction (gp.Factor.Extra): a different
// prior, whose consensus has Spearman >= 0.97 with the dense fit's (0.973
// and 0.983 measured) and is at least as close to the generating values
// (0.962 and 0.958 against the dense fit's 0.935; the tolerance is 0.01).
func TestLowRankMatchesDense(t *testing.T) {
	cases := []struct {
		n, d, m int
		exact   bool
	}{
		{250, 180, 0, true},
		{1000, 400, 400, true},
		{1000, 600, 200, false},
		{1000, 600, 300, false},
	}
	for _, tc := range cases {
		if testing.Short() && tc.n > 250 {
			continue
		}
		x, sites, truth := lowRankProblem(tc.n, tc.d, uint64(tc.n+tc.d))
		dense, err := gp.NewFactor(x.DenseGram())
		if err != nil {
			t.Fatal(err)
		}
		lr, err := gp.NewLowRankFeatures(x, gp.LowRankOptions{MaxRank: tc.m}, rand.New(rand.NewPCG(5, 5)), 5)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Exact != tc.exact {
			t.Fatalf("n=%d: exact %v", tc.n, lr.Exact)
		}
		low, err := gp.NewFactor(lr)
		if err != nil {
			t.Fatal(err)
		}
		rl, rd := gptest.RunBoth(t, func(f *gp.Factor) (*Result, error) { return Run(f, sites, Options{}) }, low, dense)
		if tc.exact {
			gptest.SameMarginals(t, fmt.Sprintf("n=%d", tc.n), 1e-7, rl.Mean, rl.Var, rd.Mean, rd.Var)
			if math.Abs(rd.LogZ-rl.LogZ) > 1e-6*math.Abs(rd.LogZ) {
				t.Errorf("n=%d: log Z_EP dense %v, low rank %v", tc.n, rd.LogZ, rl.LogZ)
			}
			continue
		}
		rho := mcmctest.Spearman(rd.Mean, rl.Mean)
		if rho < 0.97 {
			t.Errorf("n=%d M=%d: Spearman %v between dense and truncated consensus", tc.n, tc.m, rho)
		}
		if ad, al := mcmctest.Spearman(rd.Mean, truth), mcmctest.Spearman(rl.Mean, truth); al < ad-0.01 {
			t.Errorf("n=%d M=%d: Spearman with the truth %v truncated, %v dense", tc.n, tc.m, al, ad)
		}
		t.Logf("n=%d M=%d: Spearman %.4f, log Z_EP dense %.3f truncated %.3f; with truth dense %.4f truncated %.4f", tc.n, tc.m, rho, rd.LogZ, rl.LogZ, mcmctest.Spearman(rd.Mean, truth), mcmctest.Spearman(rl.Mean, truth))
	}
}

// TestDiagonalCorrectionMatchesDense runs EP (sequential and parallel)
// with a factor carrying a diagonal correction (Extra = D) and with the
// eigen-factor of C = G G' + D formed densely: marginals and log Z_EP
// agree to 1e-6.
func TestDiagonalCorrectionMatchesDense(t *testing.T) {
	for _, tc := range []struct {
		n, r     int
		parallel bool
	}{{60, 15, false}, {200, 30, false}, {200, 30, true}} {
		low, dense, sites, err := gptest.CorrectedProblem(tc.n, tc.r, rand.New(rand.NewPCG(uint64(tc.n), 3)))
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Parallel: tc.parallel, Tol: 1e-9}
		rl, rd := gptest.RunBoth(t, func(f *gp.Factor) (*Result, error) { return Run(f, sites, opts) }, low, dense)
		gptest.SameMarginals(t, fmt.Sprintf("n=%d", tc.n), 1e-6, rl.Mean, rl.Var, rd.Mean, rd.Var)
		if math.Abs(rl.LogZ-rd.LogZ) > 1e-6 {
			t.Errorf("n=%d: log Z_EP corrected %v, dense %v", tc.n, rl.LogZ, rd.LogZ)
		}
	}
}
