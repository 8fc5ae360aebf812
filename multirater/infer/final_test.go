package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// TestFinalRunWarm: EP's final run on the exact prior after a search on
// a low-rank one of rank 10 or 20, started from the search's sites, ends
// where the cold start ends (EP's fixed point: means, variances, log
// evidence and notes within the tolerances below) in fewer sweeps, and
// leaves the learnt parameters as the search left them.
func TestFinalRunWarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, perItem = 300, 6
	x := mat.NewDense(n, 1, nil)
	truth := make([]float64, n)
	for i := range truth {
		v := 6*rng.Float64() - 3
		x.Set(i, 0, v)
		truth[i] = math.Sin(2 * v)
	}
	var full mat.SymDense
	kernel.RBF{Gamma: 2}.GramTo(&full, kernel.Inputs{N: n, X: x})
	// The search's prior: the kernel at a small rank, as the ordinal and
	// bounded families' default; the final run's: the kernel itself.
	lowRank := func(r int) *mat.SymDense {
		lr, err := gp.NewPivotedFactorRank(&full, 1e-12, r)
		if err != nil {
			t.Fatal(err)
		}
		c := mat.NewSymDense(n, nil)
		c.SymOuterK(1, mat.NewDense(n, lr.R, lr.G))
		for i := range n {
			c.SetSym(i, i, c.At(i, i)+1e-6)
		}
		return c
	}
	// Ratings on five levels: the truth plus noise, cut at the thresholds
	// b below.
	b := []float64{-1.2, -0.4, 0.4, 1.2}
	ys := make([]float64, n*perItem)
	for i := range truth {
		for k := range perItem {
			z := truth[i] + 0.3*rng.NormFloat64()
			for _, c := range b {
				if z > c {
					ys[i*perItem+k]++
				}
			}
		}
	}
	final := func(context.Context) (mat.Symmetric, string, error) { return &full, "the dense kernel", nil }
	// EP stops when no marginal moved by more than 1e-6 (its default
	// Tol): the two runs' marginals agree to a few times that, relative
	// to 1 + |value|, and the log evidence, stationary in the sites,
	// closer.
	const meanTol, varTol, logZTol = 1e-5, 1e-5, 1e-6
	for _, tc := range []struct {
		engine string
		rank   int
	}{
		{multirater.EngineEP, 10},
		{multirater.EngineEP, 20},
	} {
		search := lowRank(tc.rank)
		w := &lik.OrdinalProbit{B: []float64{-1, -0.3, 0.3, 1}, Sigma: 1}
		start := w.ParamsTo(make([]float64, w.NumParams()))
		p := &Problem{Engine: tc.engine, N: n, Cov: search, Liks: []lik.LaplaceLearnable{w}, Restarts: 1,
			Start:     func(_ int, _ *rand.Rand, dst []float64) { copy(dst, start) },
			FactorTol: func() float64 { return 1e-6 }}
		for j, y := range ys {
			p.Sites = append(p.Sites, lik.Site{Item: j / perItem, Y: y, Lik: w})
			p.Owner = append(p.Owner, 0)
		}
		a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		learnt := w.ParamsTo(make([]float64, w.NumParams()))
		cold, err := FinalRun(context.Background(), final, p, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		warm, err := FinalRun(context.Background(), final, p, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if now := w.ParamsTo(make([]float64, w.NumParams())); !floats.Equal(now, learnt) {
			t.Errorf("%s: the final runs moved the parameters from %v to %v", tc.engine, learnt, now)
		}
		if math.Abs(warm.A.LogZ-cold.A.LogZ) > logZTol || math.Abs(warm.A.LogZ-a.LogZ) < 1e-3 {
			t.Errorf("%s: log Z warm %.10f, cold %.10f (search's %.4f)", tc.engine, warm.A.LogZ, cold.A.LogZ, a.LogZ)
		}
		worst := 0.0
		for i := range n {
			dm := math.Abs(warm.A.Mean[i]-cold.A.Mean[i]) / (1 + math.Abs(cold.A.Mean[i]))
			dv := math.Abs(warm.A.Var[i]-cold.A.Var[i]) / (1 + cold.A.Var[i])
			if dm > meanTol || dv > varTol {
				t.Errorf("%s: item %d: warm N(%v, %v), cold N(%v, %v)", tc.engine, i, warm.A.Mean[i], warm.A.Var[i], cold.A.Mean[i], cold.A.Var[i])
				break
			}
			worst = max(worst, dm, dv)
		}
		if len(warm.A.Notes) != len(cold.A.Notes) {
			t.Errorf("%s: notes warm %q, cold %q", tc.engine, warm.A.Notes, cold.A.Notes)
		}
		for k := range min(len(warm.A.Notes), len(cold.A.Notes)) {
			if warm.A.Notes[k] != cold.A.Notes[k] {
				t.Errorf("%s: note %d warm %q, cold %q", tc.engine, k, warm.A.Notes[k], cold.A.Notes[k])
			}
		}
		if !(warm.A.Iterations < cold.A.Iterations) {
			t.Errorf("%s: warm start %d iterations, cold %d", tc.engine, warm.A.Iterations, cold.A.Iterations)
		}
		t.Logf("%s, search at rank %d: search log Z %.4f; final run cold %d iterations, warm %d, log Z %.8f vs %.8f, largest relative difference %.2g",
			tc.engine, tc.rank, a.LogZ, cold.A.Iterations, warm.A.Iterations, cold.A.LogZ, warm.A.LogZ, worst)
	}
}
