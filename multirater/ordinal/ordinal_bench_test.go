package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
)

// benchData makes a synthetic ordinal data set in the shape of the paper's
// toy (sec. 3.1): latent 1 - 2 x_1 plus rater noise, K = 5, each rater's
// thresholds sorted N(0, 1) draws; each (item, rater) pair is observed with
// probability present. kern selects the prior covariance: "identity",
// "rbf1d" (kernel.RBF gamma = 1 on the one covariate, numerically low rank, like the
// paper's toy), "rbf3d" (kernel.RBF gamma = 1 on 3 covariates, rank in the
// hundreds) or "dense" (kernel.RBF gamma = 0.05 on 10 covariates, full numerical
// rank).
func benchData(n, l int, present float64, kern string, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 7))
	const k = 5
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, Kernel: kern}
	dim := 1
	switch kern {
	case "dense":
		dim = 10
	case "rbf3d":
		dim = 3
	}
	x := mat.NewDense(n, dim, nil)
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		for j := 0; j < dim; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	for r := 0; r < l; r++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", r))
	}
	for r := 0; r < l; r++ {
		alpha := []float64{1, 0.5, 2, 4}[r%4]
		b := make([]float64, k-1)
		for j := range b {
			b[j] = rng.NormFloat64()
		}
		sortFloats(b)
		for i := 0; i < n; i++ {
			if present < 1 && rng.Float64() >= present {
				continue
			}
			y := 1 - 2*x.At(i, 0) + rng.NormFloat64()/math.Sqrt(alpha)
			lev := 0
			for lev < k-1 && y > b[lev] {
				lev++
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: r, Level: lev})
		}
	}
	switch kern {
	case "identity":
	case "rbf1d":
		var c mat.SymDense
		kernel.RBF{Gamma: 1}.GramTo(&c, kernel.Inputs{N: n, X: x})
		d.Cov = &c
	case "rbf3d":
		var c mat.SymDense
		kernel.RBF{Gamma: 1}.GramTo(&c, kernel.Inputs{N: n, X: x})
		d.Cov = &c
	case "dense":
		var c mat.SymDense
		kernel.RBF{Gamma: 0.05}.GramTo(&c, kernel.Inputs{N: n, X: x})
		d.Cov = &c
	default:
		panic("unknown kernel " + kern)
	}
	return d
}

var benchModels sync.Map

// benchModel builds (once per configuration) the model of a benchmark; the
// eigendecomposition is the expensive part.
func benchModel(b *testing.B, n, l int, present float64, kern string, smp mcmc.Sampler) *ordModel {
	key := fmt.Sprint(n, l, present, kern, smp)
	if v, ok := benchModels.Load(key); ok {
		return v.(*ordModel)
	}
	md, err := newOrdModel(benchData(n, l, present, kern, 1), Options{Common: mcmc.Common{Sampler: smp}}.WithDefaults())
	if err != nil {
		b.Fatal(err)
	}
	benchModels.Store(key, md)
	return md
}

// BenchmarkOrdinalSweep measures one sweep of one chain in the steady state
// (after 200 burn-in sweeps) over a ladder of sizes and designs. Sweeps per
// second = 1e9 / ns/op.
func BenchmarkOrdinalSweep(b *testing.B) {
	cases := []struct {
		name    string
		n, l    int
		present float64
		kern    string
	}{
		{"toy/N=200/L=4/rbf1d", 200, 4, 1, "rbf1d"},
		{"N=200/L=4/identity", 200, 4, 1, "identity"},
		{"N=500/L=4/dense", 500, 4, 1, "dense"},
		{"N=1000/L=4/identity", 1000, 4, 1, "identity"},
		{"N=1000/L=4/rbf1d", 1000, 4, 1, "rbf1d"},
		{"N=1000/L=4/rbf3d", 1000, 4, 1, "rbf3d"},
		{"N=1000/L=4/dense", 1000, 4, 1, "dense"},
		{"N=2000/L=4/dense", 2000, 4, 1, "dense"},
		{"N=1000/L=20/30%/identity", 1000, 20, 0.3, "identity"},
		{"N=1000/L=20/30%/rbf1d", 1000, 20, 0.3, "rbf1d"},
		{"N=1000/L=20/30%/rbf3d", 1000, 20, 0.3, "rbf3d"},
		{"N=1000/L=20/30%/dense", 1000, 20, 0.3, "dense"},
	}
	for _, c := range cases {
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			b.Run(c.name+"/"+smp.String(), func(b *testing.B) {
				if testing.Short() && c.n*c.n*c.l > 1000*1000*4 && c.kern == "dense" {
					b.Skip("large dense case skipped in -short mode")
				}
				md := benchModel(b, c.n, c.l, c.present, c.kern, smp)
				ch := newOrdChain(md, 1, 0, 1)
				for i := 0; i < 200; i++ {
					if err := ch.Sweep(true); err != nil {
						b.Fatal(err)
					}
				}
				ch.EndWarmup()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := ch.Sweep(false); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sweeps/s")
				b.ReportMetric(float64(md.f.R), "rank")
				if ch.gs.Stats.Solves > 0 {
					b.ReportMetric(float64(ch.gs.Stats.Iterations)/float64(ch.gs.Stats.Solves), "cg-iters")
				}
			})
		}
	}
}

// BenchmarkSymEigen measures the one-off eigendecomposition of a dense
// kernel matrix (pure Go, or LAPACKE dsyevd with -tags cblas).
func BenchmarkSymEigen(b *testing.B) {
	for _, n := range []int{200, 500, 1000, 2000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			if testing.Short() && n > 500 {
				b.Skip("large eigendecomposition skipped in -short mode")
			}
			d := benchData(n, 1, 1, "dense", 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := gp.SymEigen(d.Cov); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOrdinalESS runs whole fits (2 chains in parallel, 2000 draws each
// after 1000 burn-in sweeps) of the paper's toy (kernel.RBF gamma = 1) and of the
// sirt data (identity kernel) with both samplers and reports the minimum
// bulk ESS per second of wall time over the rater precisions and thresholds
// ("ess-ab/s") and over every parameter including the consensus scores
// ("ess-all/s"). Run with -benchtime 1x.
func BenchmarkOrdinalESS(b *testing.B) {
	sets := []struct {
		name string
		data func(testing.TB) *Data
	}{
		{"toy", func(t testing.TB) *Data {
			if td, ok := storedToy(t); ok {
				return td.data
			}
			return makeToy(1, 200).data
		}},
		{"sirt", loadSirtK1},
	}
	for _, set := range sets {
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			b.Run(set.name+"/"+smp.String(), func(b *testing.B) {
				d := set.data(b)
				var essAB, essAll, secs float64
				for i := 0; i < b.N; i++ {
					res, err := Fit(context.Background(), d, Options{Common: mcmc.Common{Sampler: smp, Settings: mcmc.Settings{Chains: 2, Samples: 2000, Burnin: 1000, Seed: uint64(i + 1)}}})
					if err != nil {
						b.Fatal(err)
					}
					ab, all := math.Inf(1), math.Inf(1)
					for _, p := range res.Diagnostics.Parameters {
						all = math.Min(all, p.ESSBulk)
						if p.Name[0] != 'm' {
							ab = math.Min(ab, p.ESSBulk)
						}
					}
					essAB += ab
					essAll += all
					secs += res.Diagnostics.Seconds
				}
				b.ReportMetric(essAB/secs, "ess-ab/s")
				b.ReportMetric(essAll/secs, "ess-all/s")
				b.ReportMetric(essAll/float64(b.N), "min-ess")
				b.ReportMetric(secs/float64(b.N), "s/fit")
			})
		}
	}
}
