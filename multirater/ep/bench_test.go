package ep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
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
