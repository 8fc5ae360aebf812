package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/multirater/kernel"
)

// ordinalCovariateDataset is n synthetic items with 3 numeric covariates
// x0..x2 and a smooth latent consensus f = sin(2 x0) + x1/2, each rated by
// 4 of 12 raters on a 5-level scale (the latent value plus the rater's
// Gaussian noise, cut at fixed thresholds).
func ordinalCovariateDataset(n int, seed uint64) *annotations.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:1,2,3,4,5")}
	cuts := []float64{-1.2, -0.4, 0.4, 1.2}
	sd := make([]float64, 12)
	for r := range sd {
		sd[r] = 0.3 + 0.5*rng.Float64()
	}
	for i := range n {
		id := fmt.Sprintf("i%d", i)
		x := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		ds.Items = append(ds.Items, annotations.Item{ID: id, Covariates: map[string]float64{"x0": x[0], "x1": x[1], "x2": x[2]}})
		f := math.Sin(2*x[0]) + x[1]/2
		for _, r := range rng.Perm(len(sd))[:4] {
			y := f + sd[r]*rng.NormFloat64()
			k := 1
			for _, c := range cuts {
				if y > c {
					k++
				}
			}
			ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: fmt.Sprintf("r%d", r), Value: strconv.Itoa(k)})
		}
	}
	return ds
}

// TestOrdinalLearntKernelInducing: from PivotedFromItems items the ordinal
// EP and Laplace fits of a learnt rbf kernel hold the prior in
// inducing-point form (LearntKernelRank(600) = 128 inducing items) and
// match the dense fit (rank -1): the learnt gamma, the log evidence and the
// posterior means of the consensus. Measured on these data (seed 1, 118
// inducing items): ep gamma 0.3895 vs dense 0.4077 (4.6 %), log Z
// -2495.42 vs -2494.51 (0.91), means' correlation 0.99981; laplace 0.3893
// vs 0.4074, -2495.43 vs -2494.52, 0.99981. The tolerances are those with
// about a third to spare.
func TestOrdinalLearntKernelInducing(t *testing.T) {
	if testing.Short() {
		t.Skip("dense learnt-kernel fits of 600 items")
	}
	ds := ordinalCovariateDataset(600, 1)
	for _, engine := range []string{"ep", "laplace"} {
		t.Run(engine, func(t *testing.T) {
			fit := func(rank int) (gamma, logZ float64, means []float64, notes []string) {
				res, err := Fit(context.Background(), ds, FitSpec{Model: ModelOrdinal, Engine: engine, Kernel: "rbf", Rank: rank, Seed: 1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.Model.Learnt == nil || len(res.Model.Learnt.Terms) != 1 {
					t.Fatalf("rank %d: no learnt kernel (%q)", rank, res.Model.Kernel)
				}
				ks, err := kernel.ParseSpec(res.Model.Learnt.Terms[0])
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range res.Items {
					means = append(means, it.Score.Mean)
				}
				return ks[0].Cov.(kernel.RBF).Gamma, *res.Diagnostics.Engine.LogEvidence, means, res.Diagnostics.Notes
			}
			gd, zd, md, _ := fit(-1)
			gi, zi, mi, notes := fit(0)
			r := stat.Correlation(md, mi, nil)
			t.Logf("dense: gamma %.5g, log Z %.4f; inducing: gamma %.5g, log Z %.4f; means' correlation %.6f", gd, zd, gi, zi, r)
			if !slices.ContainsFunc(notes, func(s string) bool { return strings.HasPrefix(s, "inducing-point prior for the learnt kernel") }) {
				t.Errorf("the rank-0 fit of %d items did not hold the learnt kernel in inducing-point form", len(ds.Items))
			}
			if d := math.Abs(math.Log(gi / gd)); d > 0.06 {
				t.Errorf("learnt gamma %.5g, dense %.5g", gi, gd)
			}
			if math.Abs(zi-zd) > 1.2 {
				t.Errorf("log Z %.4f, dense %.4f", zi, zd)
			}
			if !(r > 0.9995) {
				t.Errorf("posterior means' correlation %.6f with the dense fit", r)
			}
		})
	}
}
