package confusion

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"concord/multirater"
)

// benchShapes are the eight crowd datasets' shapes (issue 18): items,
// raters, classes and labels per item.
var benchShapes = []struct {
	name    string
	n, l, k int
	perItem float64
}{
	{"rte", 800, 164, 2, 10},
	{"temporal", 462, 76, 2, 10},
	{"wsd", 177, 34, 3, 10},
	{"face", 584, 27, 4, 9},
	{"duck", 108, 39, 2, 39},
	{"dogs", 807, 109, 4, 10},
	{"product", 8315, 176, 2, 3},
	{"adult", 11040, 825, 4, 8.4},
}

// benchData simulates labels of the shape: raters drawn uniformly (a rater
// may label an item twice: repeated labels), right 75% of the time.
func benchData(n, l, k int, perItem float64, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Data{ItemIDs: ids("i", n), RaterIDs: ids("r", l), Classes: ids("c", k), Repeats: true}
	total := int(perItem * float64(n))
	for j := 0; j < total; j++ {
		i := j % n
		z := i % k
		y := z
		if rng.Float64() > 0.75 {
			y = rng.IntN(k)
		}
		d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: rng.IntN(l), Level: y})
	}
	return d
}

// benchModel is the model of benchData(n, l, k, perItem, 1).
func benchModel(b *testing.B, n, l, k int, perItem float64) *model {
	md, err := newModel(benchData(n, l, k, perItem, 1))
	if err != nil {
		b.Fatal(err)
	}
	return md
}

// BenchmarkVBIteration times one variational iteration (with the
// empirical-Bayes step): it allocates nothing.
func BenchmarkVBIteration(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			md := benchModel(b, s.n, s.l, s.k, s.perItem)
			v := newVB(md, Options{}.WithDefaults(), 3)
			b.Cleanup(v.stop)
			v.countsFromQ()
			v.dirichlets()
			v.updateQ()
			benchVB(b, v)
		})
	}
}

// BenchmarkGibbsSweep times one Gibbs sweep and the recording of its draw:
// it allocates nothing.
func BenchmarkGibbsSweep(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			md := benchModel(b, s.n, s.l, s.k, s.perItem)
			benchSweeps(b, newChain(md, newGibbsPrior(newVB(md, Options{}.WithDefaults(), 3)), 1, 1, 1, 0))
		})
	}
}

// BenchmarkFitVB times a whole default fit (VB: every rater model, the
// evidence's choice) of each shape, and beside it the full-confusion
// candidate alone (rater model confusion), the reference of issue 29's
// cost bound (the candidate set at most 3x the full-confusion fit's CPU).
func BenchmarkFitVB(b *testing.B) {
	for _, s := range benchShapes {
		for _, rm := range []RaterModel{RaterAuto, RaterConfusion} {
			b.Run(s.name+"/"+rm.String(), func(b *testing.B) {
				d := benchData(s.n, s.l, s.k, s.perItem, 1)
				b.ReportAllocs()
				for range b.N {
					if _, err := Fit(context.Background(), d, Options{RaterModel: rm}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFitVBLarge is the crowd-scale shape of issue 29: 20,000 items,
// 100,000 labels, 800 raters (a fifth of them spammers, a long tail of
// raters with few labels), four classes, default options.
func BenchmarkFitVBLarge(b *testing.B) {
	d, _ := crowd{N: 20000, L: 800, K: 4, PerItem: 5, Acc: 0.75, Spam: 0.2, Seed: 3}.make()
	for _, rm := range []RaterModel{RaterAuto, RaterConfusion} {
		b.Run(rm.String(), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := Fit(context.Background(), d, Options{RaterModel: rm}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// kernelBenchSizes is the ladder of item counts of the kernel benchmarks
// (RBF kernel on a covariate, rank up to DefaultRank; 1 or 2 labels per
// item).
var kernelBenchSizes = []int{100, 400, 1600}

// kernelBenchModel is the model of a kernel benchmark: n items, K classes.
func kernelBenchModel(b *testing.B, n, k int) (*model, Options) {
	d, x, _ := covData(n, 40, k, 0.7, true, 2, 1)
	d.Cov = rbfCov(x, 2)
	o := Options{}.WithDefaults()
	return probitModel(b, d, o), o
}

// BenchmarkKernelVBIteration times one variational iteration with the
// kernel prior (q(f), the item update with the probit integrals, q(pi) and
// empirical Bayes): it allocates nothing.
func BenchmarkKernelVBIteration(b *testing.B) {
	for _, k := range []int{2, 3} {
		for _, n := range kernelBenchSizes {
			b.Run(fmt.Sprintf("K%d/N%d", k, n), func(b *testing.B) {
				md, o := kernelBenchModel(b, n, k)
				v := newVB(md, o, 2)
				b.Cleanup(v.stop)
				v.countsFromQ()
				benchVB(b, v)
				b.ReportMetric(float64(md.pr.r), "rank")
			})
		}
	}
}

// BenchmarkKernelGibbsSweep times one Gibbs sweep with the kernel prior
// ((z, y), pi, f) and the recording of its draw: it allocates nothing.
func BenchmarkKernelGibbsSweep(b *testing.B) {
	for _, k := range []int{2, 3} {
		for _, n := range kernelBenchSizes {
			b.Run(fmt.Sprintf("K%d/N%d", k, n), func(b *testing.B) {
				md, o := kernelBenchModel(b, n, k)
				benchSweeps(b, newChain(md, newGibbsPrior(newVB(md, o, 2)), 1, 1, 1, 0))
				b.ReportMetric(float64(md.pr.r), "rank")
			})
		}
	}
}

// candidateLadder is the ladder of crowd sizes of BenchmarkCandidateSet:
// items (5 labels each, one rater per 25 items up to 800 raters, a fifth
// spammers, K classes).
var candidateLadder = []struct{ n, k int }{{1000, 2}, {4000, 2}, {16000, 2}, {1000, 4}, {4000, 4}, {20000, 4}}

// BenchmarkCandidateSet times the default fit (rater model auto: one-coin,
// spammer and the communities search compared by the evidence, the chosen
// one run on to convergence) beside the full-confusion candidate alone
// (rater model confusion) over a ladder of sizes: issue 29 asks the whole
// candidate set to cost at most 3x the CPU of the full-confusion candidate
// alone. Compare the ns/op of a size's two rows.
func BenchmarkCandidateSet(b *testing.B) {
	for _, s := range candidateLadder {
		d, _ := crowd{N: s.n, L: min(800, max(40, s.n/25)), K: s.k, PerItem: 5, Acc: 0.75, Spam: 0.2, Seed: 5}.make()
		for _, rm := range []RaterModel{RaterConfusion, RaterAuto} {
			b.Run(fmt.Sprintf("N%d/K%d/%s", s.n, s.k, rm), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if _, err := Fit(context.Background(), d, Options{RaterModel: rm}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSweeps times b.N Gibbs sweeps of ch, each recorded as draw 0.
func benchSweeps(b *testing.B, ch *chain) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ch.Sweep(false); err != nil {
			b.Fatal(err)
		}
		ch.Record(0)
	}
}

// benchVB times b.N variational iterations of v as run makes them (the
// communities and empirical Bayes, q(pi), q(f) under a kernel prior, q(z)).
func benchVB(b *testing.B, v *vb) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		v.communities()
		v.empiricalBayes()
		v.dirichlets()
		if v.md.pr != nil {
			v.latentMeans()
		}
		v.updateQ()
	}
}
