package infer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/lik"

	"gonum.org/v1/gonum/mat"
)

// warpedProblem is one warped site per item of ys under the identity
// prior, its noise sd learnt from sigma0 (one start).
func warpedProblem(engine string, ys []float64, sigma0 float64) (*Problem, *lik.Warped) {
	w := &lik.Warped{Sigma: sigma0}
	p := &Problem{Engine: engine, N: len(ys), Liks: []lik.LaplaceLearnable{w}, Restarts: 1,
		Start:     func(s int, _ *rand.Rand, dst []float64) { dst[0] = math.Log(sigma0) },
		FactorTol: func() float64 { return 1e-2 }}
	for i, y := range ys {
		p.Sites = append(p.Sites, lik.Site{Item: i, Y: y, Lik: w})
		p.Owner = append(p.Owner, 0)
	}
	return p, w
}

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
		p, w := warpedProblem(tc.engine, ys, 3)
		if tc.fixed {
			p.Fixed = func(l, k int) bool { return true }
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

// TestWarmKernel: refitting with WarmKernel starts the kernel at the
// hyperparameters of the last fit, so an EM loop that refits at each step
// finds the same maximum in a fraction of the evaluations.
func TestWarmKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 120
	x := mat.NewDense(n, 1, nil)
	ys := make([]float64, n)
	for i := range ys {
		v := 4*rng.Float64() - 2
		x.Set(i, 0, v)
		ys[i] = 0.5 * math.Erfc(-(math.Sin(2*v)+0.3*rng.NormFloat64())/math.Sqrt2)
	}
	k, err := NewKernel(n, nil, []kernel.Hyper{kernel.RBF{Gamma: 1}}, kernel.Inputs{N: n, X: x})
	if err != nil {
		t.Fatal(err)
	}
	fit := func(warm bool, sigma float64) (gamma float64, evals int) {
		w := &lik.Warped{Sigma: sigma}
		p := &Problem{Engine: multirater.EngineEP, N: n, Kernel: k, Liks: []lik.LaplaceLearnable{w}, Restarts: 1, WarmKernel: warm,
			Fixed:     func(l, k int) bool { return true },
			Start:     func(s int, _ *rand.Rand, dst []float64) { dst[0] = math.Log(sigma) },
			FactorTol: func() float64 { return 1e-4 },
			Progress:  func(multirater.Progress) { evals++ }}
		for i, y := range ys {
			p.Sites = append(p.Sites, lik.Site{Item: i, Y: y, Lik: w})
			p.Owner = append(p.Owner, 0)
		}
		if _, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		return k.terms_[0].(kernel.RBF).Gamma, evals
	}
	// An EM step: the likelihood moves a little, and the kernel is refitted
	// from where the last step left it, or from Chu's start.
	fit(false, 0.3)
	gw, ew := fit(true, 0.33)
	gc, ec := fit(false, 0.33)
	if math.Abs(math.Log(gw/gc)) > 1e-3 || !(ew < ec) {
		t.Errorf("cold: gamma %v in %d evaluations; warm: gamma %v in %d", gc, ec, gw, ew)
	}
	t.Logf("cold: gamma %v in %d evaluations; warm: gamma %v in %d", gc, ec, gw, ew)
}

// TestStartsBeforeSearch: every start's parameters are drawn (Start in
// start order, after start 0's fixed values) before the first evaluation
// of the evidence, so that a restart's inputs do not depend on another
// restart's run.
func TestStartsBeforeSearch(t *testing.T) {
	var events []string
	w := &lik.Warped{Sigma: 1}
	p := &Problem{Engine: multirater.EngineLaplace, N: 3, Liks: []lik.LaplaceLearnable{w}, Restarts: 3,
		Start: func(s int, rng *rand.Rand, dst []float64) {
			events = append(events, fmt.Sprint("start ", s))
			dst[0] = 0.1 * rng.NormFloat64()
		},
		FactorTol: func() float64 { return 1e-2 },
		Progress: func(multirater.Progress) {
			if n := len(events); n == 0 || events[n-1] != "evaluation" {
				events = append(events, "evaluation")
			}
		}}
	for i, y := range []float64{0.2, 0.5, 0.9} {
		p.Sites = append(p.Sites, lik.Site{Item: i, Y: y, Lik: w})
		p.Owner = append(p.Owner, 0)
	}
	if _, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	want := []string{"start 0", "start 0", "start 1", "start 2", "evaluation"}
	if len(events) != len(want) || fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", events, want)
	}
}

// BenchmarkFit measures a whole evidence maximisation (the warped-noise
// problem of TestFitLearnsWarpedNoise: identity prior, one site per item,
// one learnt parameter, two restarts) with each engine.
func BenchmarkFit(b *testing.B) {
	const n = 400
	rng := rand.New(rand.NewPCG(3, 4))
	ys := make([]float64, n)
	for i := range ys {
		ys[i] = 0.5 * math.Erfc(-rng.NormFloat64()*1.3/math.Sqrt2)
	}
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		b.Run(engine, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w := &lik.Warped{Sigma: 3}
				p := &Problem{Engine: engine, N: n, Liks: []lik.LaplaceLearnable{w}, Restarts: 2,
					Start:     func(s int, rng *rand.Rand, dst []float64) { dst[0] = math.Log(3) + 0.3*float64(s)*rng.NormFloat64() },
					FactorTol: func() float64 { return 1e-2 }}
				for j, y := range ys {
					p.Sites = append(p.Sites, lik.Site{Item: j, Y: y, Lik: w})
					p.Owner = append(p.Owner, 0)
				}
				if _, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRankDraws: the rank draws are bounded so that Ranks holds at most
// MaxRankNumbers ranks (memory linear in the items): unchanged up to
// MaxRankNumbers/500 = 32,000 items, 250 at 64,000, never below 100 (nor
// above the draws asked), and Ranks gives keep exactly that many draws (not with -short).
func TestRankDraws(t *testing.T) {
	for _, tc := range []struct{ n, draws, want int }{
		{1000, 500, 500}, {32000, 500, 500}, {32001, 500, 499}, {64000, 500, 250},
		{1_000_000, 500, 100}, {1_000_000, 50, 50}, {0, 500, 500},
	} {
		if got := RankDraws(tc.n, tc.draws); got != tc.want {
			t.Errorf("RankDraws(%d, %d) = %d, want %d", tc.n, tc.draws, got, tc.want)
		}
	}
	if testing.Short() {
		return
	}
	const n = 64_000
	a := &Approx{Mean: make([]float64, n), Var: make([]float64, n)}
	for i := range a.Mean {
		a.Mean[i], a.Var[i] = float64(i), 1
	}
	a.Draw = func(rng *rand.Rand, m []float64) {
		for i := range m {
			m[i] = a.Mean[i] + rng.NormFloat64()
		}
	}
	calls := 0
	ranks := a.Ranks(rand.New(rand.NewPCG(1, 2)), 500, func([]float64) { calls++ })
	if calls != 250 || ranks[n-1].Q975 > 10 || ranks[0].Q025 < n-10 {
		t.Errorf("%d items: %d draws (want 250), ranks of the largest %+v and smallest %+v", n, calls, ranks[n-1], ranks[0])
	}
}
