package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/lik"
)

// TestFitLearnsWarpedNoise: with the identity prior and one warped site per
// item, z_n = Phi^-1(y_n) is N(0, 1 + sigma^2) independently, so the
// evidence is maximised at sigma^2 = mean(z^2) - 1; both engines find it
// from a poor start, and with the parameter fixed no search runs and the
// evidence is the exact one.
func TestFitLearnsWarpedNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, sigma = 400, 0.8
	ys := make([]float64, n)
	sumZ2 := 0.0
	for i := range ys {
		z := rng.NormFloat64() * math.Sqrt(1+sigma*sigma)
		ys[i] = 0.5 * math.Erfc(-z/math.Sqrt2)
		sumZ2 += z * z
	}
	want := math.Sqrt(sumZ2/n - 1)
	for _, tc := range []struct {
		engine string
		fixed  bool
	}{{multirater.EngineEP, false}, {multirater.EngineLaplace, false}, {multirater.EngineEP, true}} {
		w := &lik.Warped{Sigma: 3}
		p := &Problem{Engine: tc.engine, N: n, Liks: []lik.LaplaceLearnable{w}, Restarts: 1,
			Start:     func(s int, _ *rand.Rand, dst []float64) { dst[0] = math.Log(3) },
			FactorTol: func() float64 { return 1e-2 }}
		if tc.fixed {
			p.Fixed = func(l, k int) bool { return true }
		}
		for i, y := range ys {
			p.Sites = append(p.Sites, lik.Site{Item: i, Y: y, Lik: w})
			p.Owner = append(p.Owner, 0)
		}
		a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if tc.fixed {
			exact := 0.0
			for _, y := range ys {
				lz, _, _ := w.Tilted(y, 0, 1)
				exact += lz
			}
			if math.Abs(w.Sigma-3) > 1e-12 || len(a.Notes) != 0 || math.Abs(a.LogZ-exact) > 1e-8 {
				t.Errorf("fixed: sigma %v, notes %v, log Z %v, exact %v", w.Sigma, a.Notes, a.LogZ, exact)
			}
			continue
		}
		if math.Abs(w.Sigma-want) > 1e-3 {
			t.Errorf("%s: learnt sigma %.5f, the evidence's maximum %.5f", tc.engine, w.Sigma, want)
		}
		// Ranks follow the posterior means (each item's mean is its z times
		// a common factor).
		ranks := a.Ranks(rand.New(rand.NewPCG(5, 6)), 200, nil)
		hi, lo := 0, 0
		for i := range ys {
			if ys[i] > ys[hi] {
				hi = i
			}
			if ys[i] < ys[lo] {
				lo = i
			}
		}
		if !(ranks[hi].Mean < ranks[lo].Mean) || ranks[hi].Q025 < 1 || ranks[lo].Q975 > n {
			t.Errorf("%s: ranks of the largest and smallest items %+v, %+v", tc.engine, ranks[hi], ranks[lo])
		}
		var dg multirater.Diagnostics
		a.Diagnose(&dg, tc.engine)
		if !dg.Converged || dg.Engine.Name != tc.engine || *dg.Engine.LogEvidence != a.LogZ {
			t.Errorf("%s: diagnostics %+v", tc.engine, dg)
		}
	}
}
