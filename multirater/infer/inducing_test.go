package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// inducingProblem returns n items with 2 covariates, 3 ordinal ratings per
// item (noise sd 0.6 around sin(x1) + x2/2) and the first m items' indices
// as inducing points.
func inducingProblem(n int, seed uint64) (kernel.Inputs, []lik.Site) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	o := &lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 0.6}
	var sites []lik.Site
	for i := 0; i < n; i++ {
		x.Set(i, 0, 3*rng.Float64())
		x.Set(i, 1, rng.NormFloat64())
		f := math.Sin(x.At(i, 0)) + 0.5*x.At(i, 1)
		for r := 0; r < 3; r++ {
			y := f + 0.6*rng.NormFloat64()
			lv := 0
			for _, b := range o.B {
				if y > b {
					lv++
				}
			}
			sites = append(sites, lik.Site{Item: i, Y: float64(lv), Lik: o})
		}
	}
	return kernel.Inputs{N: n, X: x}, sites
}

// inducingAt returns the FITC prior of k on in with the inducing points
// pivots, and the derivatives of K_nP.
func inducingAt(t *testing.T, k kernel.CrossHyper, in kernel.Inputs, pivots []int) (*gp.Inducing, [][]float64) {
	t.Helper()
	_, d := in.X.Dims()
	xp := mat.NewDense(len(pivots), d, nil)
	for i, p := range pivots {
		xp.SetRow(i, mat.Row(nil, p, in.X))
	}
	pin := kernel.Inputs{N: len(pivots), X: xp}
	var knm mat.Dense
	k.CrossTo(&knm, in, pin)
	ind, err := gp.NewInducing(k.DiagTo(nil, in), knm.RawMatrix().Data, pivots)
	if err != nil {
		t.Fatal(err)
	}
	dk := make([]*mat.Dense, k.NumHyper(d))
	k.CrossGradTo(dk, in, pin)
	out := make([][]float64, len(dk))
	for h, m := range dk {
		out[h] = m.RawMatrix().Data
	}
	return ind, out
}

// runEngine returns the engine's log evidence and gradient terms on fac.
func runEngine(t *testing.T, engine string, fac *gp.Factor, sites []lik.Site) (float64, *gp.GradTerms) {
	t.Helper()
	if engine == "ep" {
		r, err := ep.Run(fac, sites, ep.Options{Tol: 1e-11, MaxSweeps: 500})
		if err != nil {
			t.Fatal(err)
		}
		return r.LogZ, r.GradTerms()
	}
	r, err := laplace.Run(fac, sites, laplace.Options{Tol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	return r.LogZ, r.GradTerms()
}

// TestInducingKernelGrad checks gp.Inducing.KernelGradTo, the gradient of
// the EP and Laplace log evidences under the FITC prior with the inducing
// points fixed, against central finite differences of the log evidence
// (each run to convergence), for RBF and ARD, and, with every item an
// inducing point (FITC exact), against the dense path's gradient
// (gp.GradTerms.Dense with the N×N derivative from GramGradTo).
func TestInducingKernelGrad(t *testing.T) {
	const n = 40
	in, sites := inducingProblem(n, 5)
	some := []int{0, 3, 7, 11, 15, 19, 23, 27, 31, 35}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for _, tc := range []struct {
		name   string
		engine string
		k      kernel.CrossHyper
		pivots []int
	}{
		{"ep/rbf/M=10", "ep", kernel.RBF{Gamma: 0.7}, some},
		{"laplace/rbf/M=10", "laplace", kernel.RBF{Gamma: 0.7}, some},
		{"ep/ard/M=10", "ep", kernel.ARD{Gammas: []float64{0.4, 1.3}}, some},
		{"laplace/ard/M=10", "laplace", kernel.ARD{Gammas: []float64{0.4, 1.3}}, some},
		{"ep/rbf/M=N", "ep", kernel.RBF{Gamma: 0.7}, all},
		{"laplace/ard/M=N", "laplace", kernel.ARD{Gammas: []float64{0.4, 1.3}}, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ind, dk := inducingAt(t, tc.k, in, tc.pivots)
			_, terms := runEngine(t, tc.engine, ind.Factor(), sites)
			got := make([]float64, len(dk))
			ind.KernelGradTo(got, terms, dk, nil)
			theta := tc.k.HyperTo(make([]float64, len(dk)), 2)
			const h = 1e-4
			for i := range theta {
				at := func(d float64) float64 {
					p := append([]float64(nil), theta...)
					p[i] += d
					ind, _ := inducingAt(t, tc.k.WithHyper(p).(kernel.CrossHyper), in, tc.pivots)
					lz, _ := runEngine(t, tc.engine, ind.Factor(), sites)
					return lz
				}
				fd := (at(h) - at(-h)) / (2 * h)
				// Central differences: O(h^2) truncation, the engines'
				// convergence 1e-11 / h.
				if d := math.Abs(got[i] - fd); d > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("hyperparameter %d: analytic %.10g, finite differences %.10g (diff %.3g)", i, got[i], fd, d)
				}
			}
			if len(tc.pivots) < n {
				return
			}
			// Every item inducing: C = K up to the jitter (1e-8), so that
			// the dense path's gradient is the same.
			dC := make([]*mat.SymDense, len(dk))
			tc.k.GramGradTo(dC, in)
			ds := make([]mat.Symmetric, len(dC))
			for i, d := range dC {
				ds[i] = d
			}
			want := terms.Dense(ds)
			for i := range want {
				if d := math.Abs(got[i] - want[i]); d > 1e-6*math.Max(1, math.Abs(want[i])) {
					t.Errorf("hyperparameter %d: inducing %.10g, dense %.10g", i, got[i], want[i])
				}
			}
		})
	}
}

// TestInducingFitMatchesDense learns an RBF width by evidence
// maximisation with the dense prior and with the FITC prior of 60 of 300
// items (LearnKernel.Rank): the learnt widths, log evidences and
// posterior means agree (measured at seed 5 on this problem: gamma 0.1772
// dense, 0.1784 inducing; log Z -633.0685 and -633.0687; means correlated
// 1.00000; the thresholds below leave room for rounding: gamma within 5%,
// log Z within 0.1 nat, correlation above 0.999).
func TestInducingFitMatchesDense(t *testing.T) {
	const n = 300
	in, sites := inducingProblem(n, 5)
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		t.Run(engine, func(t *testing.T) {
			fit := func(rank int) (*Approx, *Kernel) {
				lk := &LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: in, Rank: rank}
				k, err := lk.NewKernel(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if (k.ind != nil) != (rank > 0) {
					t.Fatalf("rank %d: inducing form %v", rank, k.ind != nil)
				}
				o := sites[0].Lik.(*lik.OrdinalProbit)
				p := &Problem{Engine: engine, N: n, Kernel: k, Liks: []lik.LaplaceLearnable{o}, Restarts: 1,
					Fixed:     func(l, k int) bool { return true },
					Start:     func(s int, _ *rand.Rand, dst []float64) { o.ParamsTo(dst) },
					FactorTol: func() float64 { return 1e-3 }}
				p.Sites = sites
				p.Owner = make([]int, len(sites))
				a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
				if err != nil {
					t.Fatal(err)
				}
				return a, k
			}
			ad, kd := fit(0)
			ai, ki := fit(60)
			gd, gi := kd.terms_[0].(kernel.RBF).Gamma, ki.terms_[0].(kernel.RBF).Gamma
			r := stat.Correlation(ad.Mean, ai.Mean, nil)
			t.Logf("dense: gamma %.4g, log Z %.4f; inducing: gamma %.4g, log Z %.4f; means' correlation %.5f", gd, ad.LogZ, gi, ai.LogZ, r)
			if math.Abs(math.Log(gi/gd)) > math.Log(1.05) || math.Abs(ai.LogZ-ad.LogZ) > 0.1 || !(r > 0.999) {
				t.Errorf("inducing fit differs from the dense one")
			}
		})
	}
}
