package ordinal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
)

// lowRankBenchData makes the shared ladder's shape of data (4 ratings per
// item from 10 raters, K = 5) with a truncated weight-space text prior:
// bags of 20 words from a Zipf vocabulary of 3000 terms, C = X X'
// truncated to gp.DefaultRank(n) by the randomized range finder, so that
// the factor carries the diagonal correction (gp.NewPriorExtra) from
// gp.ExtraFromItems items. The latent score is the sum of the item's
// first 100 word weights (a topic signal) plus rater noise.
func lowRankBenchData(n int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 35))
	const vocab, words, nl, per = 3000, 20, 10, 4
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, Kernel: "text"}
	x := gp.SparseRows{Cols: vocab}
	latent := make([]float64, n)
	zipf := rand.NewZipf(rng, 1.1, 2, vocab-1)
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		counts := map[int32]float64{}
		for j := 0; j < words; j++ {
			counts[int32(zipf.Uint64())]++
		}
		var idx []int32
		var val []float64
		var norm float64
		for t, c := range counts {
			idx = append(idx, t)
			val = append(val, c)
			norm += c * c
			if t < 100 {
				latent[i] += c
			}
		}
		for k := range val {
			val[k] /= math.Sqrt(norm)
		}
		x.Idx = append(x.Idx, idx)
		x.Val = append(x.Val, val)
	}
	for r := 0; r < nl; r++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", r))
	}
	perm := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for i := 0; i < n; i++ {
		for j := 0; j < per; j++ {
			s := j + rng.IntN(nl-j)
			perm[j], perm[s] = perm[s], perm[j]
		}
		for _, r := range perm[:per] {
			y := 0.1*latent[i] - 1 + rng.NormFloat64()/math.Sqrt([]float64{1, 0.5, 2, 4}[r%4])
			lev := 0
			for lev < 4 && y > []float64{-1.5, -0.5, 0.5, 1.5}[lev] {
				lev++
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: r, Level: lev})
		}
	}
	lr, err := gp.NewLowRankFeatures(x, gp.LowRankOptions{}, rand.New(rand.NewPCG(seed, 1)), seed)
	if err != nil {
		panic(err)
	}
	d.Cov = lr
	return d
}

var lowRankBenchModels sync.Map

// BenchmarkLowRankConditional measures the Gaussian conditional of the
// latent consensus (stepM: w | e by the weight-space sampler, then e | w
// item by item, gp.NewPriorExtra) of one chain under a truncated
// low-rank text prior, over the shared ladder's sizes, in the steady state
// (after 50 sweeps); "sweep" is the whole default sweep. The cost of the
// conditional is O(N r) per conjugate-gradient iteration, r =
// gp.DefaultRank(N) (349 at 1,000 items, 250 at 4,000, 128 at 16,000), and
// memory O(N r): no N×N matrix.
func BenchmarkLowRankConditional(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		for _, what := range []string{"conditional", "sweep"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, what), func(b *testing.B) {
				if n > 1000 && testing.Short() {
					b.Skip("large case skipped in -short mode")
				}
				v, ok := lowRankBenchModels.Load(n)
				if !ok {
					opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 1, Samples: 1}}}.WithDefaults()
					md, err := newOrdModel(lowRankBenchData(n, 1), opts)
					if err != nil {
						b.Fatal(err)
					}
					if md.f.Extra == nil {
						b.Fatal("no diagonal correction")
					}
					lowRankBenchModels.Store(n, md)
					v = md
				}
				md := v.(*ordModel)
				ch := newOrdChain(md, 1, 0, 1)
				for i := 0; i < 50; i++ {
					if err := ch.Sweep(i < 40); err != nil {
						b.Fatal(err)
					}
					if i == 39 {
						ch.EndWarmup()
					}
				}
				it0 := ch.cgIters
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if what == "sweep" {
						err = ch.Sweep(false)
					} else {
						ch.stepY()
						err = ch.stepM()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(ch.cgIters-it0)/float64(b.N), "cg-iters/op")
				b.ReportMetric(float64(md.f.R), "rank")
			})
		}
	}
}
