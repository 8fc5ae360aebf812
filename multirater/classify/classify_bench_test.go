package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
)

// classBenchData makes a synthetic classification data set: n items with
// true classes drawn with Zipf-like frequencies over k classes, l raters
// each correct with probability 0.5 to 0.9 (else a uniformly random class),
// each item labelled by perItem raters (all when perItem >= l). kern
// selects the prior covariance: "identity"; "text" (the linear kernel on
// unit-norm bags of 8 to 40 words from a 1500-word vocabulary whose
// word frequencies depend on the class, like the paper's clinical reports:
// full numerical rank for n <= 1500); "rbf" (gamma = 1 on 2 covariates).
func classBenchData(n, k, l, perItem int, kern string, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 99))
	d := &Data{Kernel: kern}
	for c := 0; c < k; c++ {
		d.Classes = append(d.Classes, fmt.Sprint("c", c))
	}
	for r := 0; r < l; r++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", r))
	}
	w := make([]float64, k)
	var tot float64
	for c := range w {
		w[c] = 1 / float64(c+1)
		tot += w[c]
	}
	truth := make([]int, n)
	for i := range truth {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		u := rng.Float64() * tot
		c := 0
		for c < k-1 && u > w[c] {
			u -= w[c]
			c++
		}
		truth[i] = c
	}
	acc := make([]float64, l)
	for r := range acc {
		acc[r] = 0.5 + 0.4*rng.Float64()
	}
	perm := make([]int, l)
	for i := range perm {
		perm[i] = i
	}
	for i, c := range truth {
		m := min(perItem, l)
		for j := 0; j < m; j++ {
			s := j + rng.IntN(l-j)
			perm[j], perm[s] = perm[s], perm[j]
		}
		for _, r := range perm[:m] {
			lab := c
			if rng.Float64() > acc[r] {
				lab = rng.IntN(k)
			}
			d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: r, Level: lab})
		}
	}
	switch kern {
	case "identity":
	case "text":
		const vocab = 1500
		x := mat.NewDense(n, vocab, nil)
		for i, c := range truth {
			words := 8 + rng.IntN(33)
			for j := 0; j < words; j++ {
				var t int
				if rng.Float64() < 0.3 {
					t = (c*37 + rng.IntN(20)) % vocab
				} else {
					t = int(math.Min(vocab-1, math.Floor(math.Exp(rng.Float64()*math.Log(vocab)))))
				}
				x.Set(i, t, x.At(i, t)+1)
			}
		}
		var cm mat.SymDense
		kernel.Linear{}.GramTo(&cm, kernel.Inputs{N: n, X: x})
		d.Cov = &cm
	case "rbf":
		x := mat.NewDense(n, 2, nil)
		for i, c := range truth {
			x.Set(i, 0, float64(c%3)+rng.NormFloat64())
			x.Set(i, 1, float64(c/3)+rng.NormFloat64())
		}
		var cm mat.SymDense
		kernel.RBF{Gamma: 1}.GramTo(&cm, kernel.Inputs{N: n, X: x})
		d.Cov = &cm
	default:
		panic("unknown kernel " + kern)
	}
	return d
}

var classBenchModels sync.Map

func classBenchModel(b *testing.B, n, k, l, perItem int, kern string, opts Options) (*classModel, *classPlan) {
	opts.Settings = mcmc.Settings{Chains: 1, Samples: 10}
	opts = opts.WithDefaults()
	key := fmt.Sprint(n, k, l, perItem, kern, opts.Precisions, opts.Sampler)
	if v, ok := classBenchModels.Load(key); ok {
		p := v.([2]any)
		return p[0].(*classModel), p[1].(*classPlan)
	}
	md, err := newClassModel(classBenchData(n, k, l, perItem, kern, 1), opts)
	if err != nil {
		b.Fatal(err)
	}
	plan := newClassPlan(md, opts)
	classBenchModels.Store(key, [2]any{md, plan})
	return md, plan
}

// BenchmarkClassSweep measures one sweep of one chain of the
// classification sampler in the steady state (after 100 sweeps) over a
// ladder of sizes and designs, including the two shapes: N = 500,
// K = 28, L = 3 complete with a full-rank text kernel (the paper's clinical
// reports) and N = 800, K = 2, L = 164 with 10 labels per item (the RTE
// design). Sweeps per second = 1e9 / ns/op.
func BenchmarkClassSweep(b *testing.B) {
	cases := []struct {
		name          string
		n, k, l, per  int
		kern          string
		prec          Precisions
		smp           mcmc.Sampler
		skipWhenShort bool
	}{
		{"toy/N=90/K=3/L=3/rbf", 90, 3, 3, 3, "rbf", InferredPrecisions, mcmc.DefaultSampler, false},
		{"N=200/K=5/L=3/rbf", 200, 5, 3, 3, "rbf", InferredPrecisions, mcmc.DefaultSampler, false},
		{"N=500/K=28/L=3/identity", 500, 28, 3, 3, "identity", InferredPrecisions, mcmc.DefaultSampler, false},
		{"N=500/K=28/L=3/text", 500, 28, 3, 3, "text", InferredPrecisions, mcmc.DefaultSampler, false},
		{"N=500/K=28/L=3/text/paper", 500, 28, 3, 3, "text", InferredPrecisions, mcmc.PaperSampler, false},
		{"N=1000/K=28/L=3/text", 1000, 28, 3, 3, "text", InferredPrecisions, mcmc.DefaultSampler, true},
		{"N=800/K=2/L=164/10per/identity", 800, 2, 164, 10, "identity", InferredPrecisions, mcmc.DefaultSampler, false},
		{"N=800/K=2/L=164/10per/identity/paper", 800, 2, 164, 10, "identity", InferredPrecisions, mcmc.PaperSampler, false},
		{"N=800/K=2/L=164/10per/text", 800, 2, 164, 10, "text", InferredPrecisions, mcmc.DefaultSampler, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			if tc.skipWhenShort && testing.Short() {
				b.Skip("large case skipped in -short mode")
			}
			benchClassSweep(b, tc.n, tc.k, tc.l, tc.per, tc.kern, Options{Precisions: tc.prec, Common: mcmc.Common{Sampler: tc.smp}})
		})
	}
}

// BenchmarkClassSweepLadder measures one sweep of the default sampler on
// the shared scale ladder's shape (two classes, 4 labels per item, 10
// raters per 1,000 items up to 40) from 1,000 to 16,000 items with the
// identity kernel (the collapsed slice moves, LogPhiTable), and at 1,000
// items with the text kernel (the one conjugate-gradient solve of
// stepMPair; classBenchData's text kernel is a dense Gram matrix, so no
// larger sizes). A default fit is 4 chains of 3,000 sweeps. The cases
// above 1,000 items are skipped in -short mode.
func BenchmarkClassSweepLadder(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		for _, kern := range []string{"identity", "text"} {
			if kern == "text" && n > 1000 {
				continue
			}
			b.Run(fmt.Sprintf("N=%d/%s", n, kern), func(b *testing.B) {
				if n > 1000 && testing.Short() {
					b.Skip("large case skipped in -short mode")
				}
				l := min(40, 10*n/1000)
				benchClassSweep(b, n, 2, l, 4, kern, Options{})
			})
		}
	}
}

// BenchmarkClassFixedRepresentation compares, with every precision fixed
// at 1, the appendix B representation (one latent vector per item and
// labelled class, --precisions fixed) with the general sampler (one per
// label, --precisions fixed-full) on the same data.
func BenchmarkClassFixedRepresentation(b *testing.B) {
	cases := []struct {
		name         string
		n, k, l, per int
		kern         string
	}{
		{"N=800/K=2/L=164/10per/identity", 800, 2, 164, 10, "identity"},
		{"N=500/K=5/L=20/complete/identity", 500, 5, 20, 20, "identity"},
		{"N=500/K=28/L=3/text", 500, 28, 3, 3, "text"},
	}
	for _, tc := range cases {
		for _, p := range []Precisions{FixedPrecisions, FixedFullPrecisions} {
			b.Run(tc.name+"/"+p.String(), func(b *testing.B) {
				benchClassSweep(b, tc.n, tc.k, tc.l, tc.per, tc.kern, Options{Precisions: p, Common: mcmc.Common{Sampler: mcmc.PaperSampler}})
			})
		}
	}
}

func benchClassSweep(b *testing.B, n, k, l, per int, kern string, opts Options) {
	md, plan := classBenchModel(b, n, k, l, per, kern, opts)
	ch := newClassChain(md, plan, 1, 0)
	for i := 0; i < 100; i++ {
		if err := ch.Sweep(true); err != nil {
			b.Fatal(err)
		}
	}
	ch.EndWarmup()
	ch.slices, ch.sliceEvals = 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok0 := mcmc.ProcessCPU()
	for i := 0; i < b.N; i++ {
		if err := ch.Sweep(false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sweeps/s")
	// The process's CPU time per sweep (the garbage collector's
	// included): on a shared machine wall time per sweep follows the
	// load, CPU time much less.
	if cpu1, ok1 := mcmc.ProcessCPU(); ok0 && ok1 {
		b.ReportMetric(float64(cpu1-cpu0)/1e6/float64(b.N), "cpu-ms/sweep")
	}
	if ch.slices > 0 {
		b.ReportMetric(float64(ch.sliceEvals)/float64(ch.slices), "evals/slice")
	}
}
