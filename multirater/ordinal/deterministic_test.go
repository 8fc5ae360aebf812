package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"

	"gonum.org/v1/gonum/mat"
)

// scores is each item's posterior mean score.
func scores(res *multirater.FitResult) []float64 {
	out := make([]float64, len(res.Items))
	for i, it := range res.Items {
		out[i] = it.Score.Mean
	}
	return out
}

// TestDeterministicPreviewSirt: on sirt k1 (135 essays, 7 raters) the EP
// and Laplace fits with learnt rater parameters (under the Gibbs model's
// priors) rank the essays as the default Gibbs fit does.
func TestDeterministicPreviewSirt(t *testing.T) {
	d := loadSirtK1(t)
	t0 := time.Now()
	gibbs := fit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 2000, Seed: 3}}})
	tg := time.Since(t0)
	for _, eng := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		t0 = time.Now()
		res, err := FitDeterministic(context.Background(), d, DetOptions{Engine: eng, Priors: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		rho := mcmctest.Spearman(scores(res), scores(gibbs))
		t.Logf("%s: Spearman with Gibbs %.4f; %s vs Gibbs %s; log evidence %.3f; notes %q", eng, rho, time.Since(t0), tg, *res.Diagnostics.Engine.LogEvidence, res.Diagnostics.Notes)
		for l, r := range res.Raters {
			t.Logf("  rater %s: precision %.3f (Gibbs %.3f), thresholds %v", r.ID, r.Precision.Mean, gibbs.Raters[l].Precision.Mean, r.Thresholds)
		}
		if rho < 0.99 {
			t.Errorf("%s: Spearman correlation with the Gibbs consensus %.4f < 0.99", eng, rho)
		}
	}
}

// TestDeterministicLearnsKernel: EP with a learnt RBF kernel recovers the
// length-scale of data drawn from the model (one rater, 5 levels, N = 150 on
// one input, gamma 2 and sigma 0.3), to within a factor of 2, improves the
// evidence over the starting point and records the learnt term.
func TestDeterministicLearnsKernel(t *testing.T) {
	const n = 150
	rng := rand.New(rand.NewPCG(4, 4))
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 6*rng.Float64()-3)
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 2}.GramTo(&c, kernel.Inputs{N: n, X: x})
	f, err := gp.NewFactor(&c)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, f.R)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	lat := make([]float64, n)
	gm := mat.NewDense(n, f.R, f.G)
	mat.NewVecDense(n, lat).MulVec(gm, mat.NewVecDense(f.R, w))
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, RaterIDs: []string{"r"}, Kernel: "rbf"}
	cuts := []float64{-1, -0.3, 0.3, 1}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint(i))
		y := lat[i] + 0.3*rng.NormFloat64()
		k := 0
		for k < 4 && y > cuts[k] {
			k++
		}
		d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 0, Level: k})
	}
	d.Learn = &LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: kernel.Inputs{N: n, X: x}}
	res, err := FitDeterministic(context.Background(), d, DetOptions{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Learnt == nil || len(res.Model.Learnt.Terms) != 1 {
		t.Fatalf("learnt %+v", res.Model.Learnt)
	}
	ks, err := kernel.ParseSpec(res.Model.Learnt.Terms[0])
	if err != nil {
		t.Fatal(err)
	}
	gamma := ks[0].Cov.(kernel.RBF).Gamma
	t.Logf("learnt %s, sigma %.3f, log evidence %.3f; notes %q", res.Model.Learnt.Terms[0], 1/math.Sqrt(res.Raters[0].Precision.Mean), *res.Diagnostics.Engine.LogEvidence, res.Diagnostics.Notes)
	if gamma < 1 || gamma > 4 {
		t.Errorf("learnt gamma %.3f, data made with 2", gamma)
	}
}

// TestGaussianPredictorReproducesFit: predicting the fitted items
// themselves from a deterministic fit's Gaussian sites (Chu eq. 16-17)
// gives back the fit's own posterior marginals and grade distributions,
// for EP and Laplace, with a full-rank and a singular (linear) kernel. (An
// EP fit's default predictor corrects the grade distributions by the EP
// evidence ratio, which the fit's Gaussian ones are not: the Gaussian
// predictive is asked for.)
func TestGaussianPredictorReproducesFit(t *testing.T) {
	d, x := benchChu(80)
	in := kernel.Inputs{N: 80, X: x}
	var rbf, lin mat.SymDense
	kernel.RBF{Gamma: 0.3}.GramTo(&rbf, in)
	lin.SymOuterK(1, x) // rank 3
	for _, tc := range []struct {
		name   string
		cov    *mat.SymDense
		engine string
	}{
		{"ep/rbf", &rbf, multirater.EngineEP},
		{"laplace/rbf", &rbf, multirater.EngineLaplace},
		{"ep/linear", &lin, multirater.EngineEP},
		{"laplace/linear", &lin, multirater.EngineLaplace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dd := *d
			dd.Cov = tc.cov
			res, err := FitDeterministic(context.Background(), &dd, DetOptions{Engine: tc.engine, Sigma: 0.3, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Gaussian == nil {
				t.Fatal("no gaussian sites in the result")
			}
			p, err := NewPredictorOptions(res, tc.cov, PredictOptions{Gaussian: true})
			if err != nil {
				t.Fatal(err)
			}
			prior := make([]float64, 80)
			for i := range prior {
				prior[i] = tc.cov.At(i, i)
			}
			got := p.Predict(dd.ItemIDs, tc.cov, prior)
			// The fit's pivoted factor leaves out a residual of trace at
			// most 1e-2 sigma^2 / 4 (2e-4 here), the predictor uses C
			// itself: they differ by about 1e-4 in the probabilities.
			for i, it := range got {
				want := res.Items[i]
				if math.Abs(it.Score.Mean-want.Score.Mean) > 1e-2*want.Score.SD || math.Abs(it.Score.SD/want.Score.SD-1) > 1e-2 {
					t.Errorf("item %d: predicted %.6f ± %.6f, fit %.6f ± %.6f", i, it.Score.Mean, it.Score.SD, want.Score.Mean, want.Score.SD)
				}
				for l, pr := range it.GradeProbs {
					if math.Abs(pr-want.GradeProbs[l]) > 1e-3 {
						t.Errorf("item %d level %s: predicted P %.6f, fit %.6f", i, l, pr, want.GradeProbs[l])
					}
				}
			}
		})
	}
}
