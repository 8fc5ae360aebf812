package ep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"

	"gonum.org/v1/gonum/mat"
)

// benchModel makes Chu's setting at size n: one rating per item on 5
// levels, latent 1 - 2 x_1 + noise on 3 standard normal inputs, an RBF
// kernel with gamma 1/6 (Chu's kappa = 1/d).
func benchModel(b *testing.B, n int) (*gp.Factor, *mat.SymDense, *mat.Dense, []lik.Site) {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	x := mat.NewDense(n, 3, nil)
	o := &lik.OrdinalProbit{B: []float64{-1.5, -0.5, 0.5, 1.5}, Sigma: 0.5}
	sites := make([]lik.Site, n)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		y := 1 - 2*x.At(i, 0) + 0.5*rng.NormFloat64()
		k := 0
		for k < 4 && y > o.B[k] {
			k++
		}
		sites[i] = lik.Site{Item: i, Y: float64(k), Lik: o}
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 1.0 / 6}.GramTo(&c, kernel.Inputs{N: n, X: x})
	f, err := gp.NewFactor(&c)
	if err != nil {
		b.Fatal(err)
	}
	return f, &c, x, sites
}

// BenchmarkRun measures EP to convergence at fixed hyperparameters (cold
// start, sequential and parallel) and the evidence gradient in the RBF
// gamma, over a ladder of sizes. The factor's rank r is reported.
func BenchmarkRun(b *testing.B) {
	for _, n := range []int{100, 300, 1000, 2000} {
		if testing.Short() && n > 300 {
			continue
		}
		f, c, x, sites := benchModel(b, n)
		for _, par := range []bool{false, true} {
			b.Run(fmt.Sprintf("N=%d/parallel=%t", n, par), func(b *testing.B) {
				b.ReportAllocs()
				sweeps := 0
				for i := 0; i < b.N; i++ {
					res, err := Run(f, sites, Options{Parallel: par})
					if err != nil {
						b.Fatal(err)
					}
					sweeps = res.Sweeps
				}
				b.ReportMetric(float64(sweeps), "sweeps")
				b.ReportMetric(float64(f.R), "rank")
			})
		}
		b.Run(fmt.Sprintf("N=%d/gradient", n), func(b *testing.B) {
			res, err := Run(f, sites, Options{})
			if err != nil {
				b.Fatal(err)
			}
			dc := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					d2 := 0.0
					for k := 0; k < 3; k++ {
						d := x.At(i, k) - x.At(j, k)
						d2 += d * d
					}
					dc.SetSym(i, j, -d2*c.At(i, j))
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g, err := res.KernelGrad([]mat.Symmetric{dc})
				if err != nil || math.IsNaN(g[0]) {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLadder is the size ladder of one EP run (sequential, 4 ordinal
// ratings per item, the ladder's shape) for the three kinds of prior: the
// identity (diagonal factor, O(N + M)), a text kernel in weight space
// (gp.LowRank on 5,000-term bag-of-words rows, rank gp.DefaultRank(N),
// truncated with the diagonal correction beyond it) and a fixed RBF
// kernel on 8 covariates (pivoted Cholesky to a trace tolerance of 1e-2
// per item; its dense Gram matrix limits it to 4,000 items). Run with
// -bench Ladder -benchtime 1x; report CPU seconds with /usr/bin/time.
func BenchmarkLadder(b *testing.B) {
	for _, n := range []int{250, 1000, 4000, 16000} {
		x, sites, _ := lowRankProblem(n, 5000, uint64(n))
		b.Run(fmt.Sprintf("identity/N=%d", n), func(b *testing.B) {
			f := gp.IdentityFactor(n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("text/N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				lr, err := gp.NewLowRankFeatures(x, gp.LowRankOptions{}, rand.New(rand.NewPCG(1, uint64(i))), uint64(i))
				if err != nil {
					b.Fatal(err)
				}
				f, err := gp.NewFactor(lr)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		if n > 4000 {
			continue
		}
		b.Run(fmt.Sprintf("rbf/N=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			cov := mat.NewDense(n, 8, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < 8; j++ {
					cov.Set(i, j, rng.NormFloat64())
				}
			}
			var c mat.SymDense
			kernel.RBF{Gamma: 0.125}.GramTo(&c, kernel.Inputs{N: n, X: cov})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f, err := gp.NewPivotedFactor(&c, 1e-2*float64(n))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
