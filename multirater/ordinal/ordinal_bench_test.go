package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/gp/gptest"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"

	"gonum.org/v1/gonum/mat"
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
	bk, ok := benchKernels[kern]
	if !ok {
		panic("unknown kernel " + kern)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	const k = 5
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, Kernel: kern}
	dim := bk.dim
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
	if bk.gamma > 0 {
		var c mat.SymDense
		kernel.RBF{Gamma: bk.gamma}.GramTo(&c, kernel.Inputs{N: n, X: x})
		d.Cov = &c
	}
	return d
}

// benchKernels are benchData's prior covariances: the number of covariates
// and the RBF kernel's gamma on them (0: the identity).
var benchKernels = map[string]struct {
	dim   int
	gamma float64
}{"identity": {1, 0}, "rbf1d": {1, 1}, "rbf3d": {3, 1}, "dense": {10, 0.05}}

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
	type benchCase struct {
		name    string
		n, l    int
		present float64
		kern    string
	}
	// The paper's toy, then 4 raters who rate every item and 20 raters
	// who rate 30% of the items each.
	cases := []benchCase{{"toy/N=200/L=4/rbf1d", 200, 4, 1, "rbf1d"}}
	for _, nk := range []struct {
		n    int
		kern string
	}{{200, "identity"}, {500, "dense"}, {1000, "identity"}, {1000, "rbf1d"}, {1000, "rbf3d"}, {1000, "dense"}, {2000, "dense"}} {
		cases = append(cases, benchCase{fmt.Sprintf("N=%d/L=4/%s", nk.n, nk.kern), nk.n, 4, 1, nk.kern})
	}
	for _, kern := range []string{"identity", "rbf1d", "rbf3d", "dense"} {
		cases = append(cases, benchCase{"N=1000/L=20/30%/" + kern, 1000, 20, 0.3, kern})
	}
	for _, c := range cases {
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			b.Run(c.name+"/"+smp.String(), func(b *testing.B) {
				if testing.Short() && c.n*c.n*c.l > 1000*1000*4 && c.kern == "dense" {
					b.Skip("large dense case skipped in -short mode")
				}
				md := benchModel(b, c.n, c.l, c.present, c.kern, smp)
				ch := newOrdChain(md, 1, 0, 1)
				mcmctest.BenchSweeps(b, ch, 200)
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

// benchChu makes Chu's setting at size n: one rater, 5 levels, 3 standard
// normal inputs and a non-linear latent 2 sin(1.5 x_1) + x_2^2 - 1 with
// noise sd 0.3 (so that the learnt RBF length-scale is short enough to
// need a kernel of high rank).
func benchChu(n int) (*Data, *mat.Dense) {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	x := mat.NewDense(n, 3, nil)
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, RaterIDs: []string{"r"}}
	cuts := []float64{-1.5, -0.5, 0.5, 1.5}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		y := 2*math.Sin(1.5*x.At(i, 0)) + x.At(i, 1)*x.At(i, 1) - 1 + 0.3*rng.NormFloat64()
		k := 0
		for k < 4 && y > cuts[k] {
			k++
		}
		d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 0, Level: k})
	}
	return d, x
}

// BenchmarkFitDeterministic measures whole EP fits of Chu's setting over a
// ladder of sizes, end to end (kernel matrix, factorisation, EP, the
// result's 500 joint draws):
//
//   - fixed: RBF gamma 1/6 (Chu's 1/(2D)), sigma 0.3 and thresholds fixed:
//     one EP run;
//   - raters: the same kernel, thresholds and sigma learnt by evidence
//     maximisation from 3 starting points;
//   - learnt-rbf: the RBF gamma learnt too (the target: N = 1000 in
//     under 30 s).
func BenchmarkFitDeterministic(b *testing.B) {
	for _, n := range []int{100, 300, 1000, 2000} {
		if testing.Short() && n > 300 {
			continue
		}
		d, x := benchChu(n)
		in := kernel.Inputs{N: n, X: x}
		var c mat.SymDense
		kernel.RBF{Gamma: 1.0 / 6}.GramTo(&c, in)
		fixed := *d
		fixed.Cov = &c
		learnt := *d
		learnt.Learn = &LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: in}
		cases := []struct {
			name string
			data *Data
			opts DetOptions
		}{
			{"fixed", &fixed, DetOptions{Sigma: 0.3, Thresholds: []float64{-1.5, -0.5, 0.5, 1.5}}},
			{"raters/restarts=3", &fixed, DetOptions{Restarts: 3}},
			{"learnt-rbf/restarts=3", &learnt, DetOptions{Restarts: 3}},
		}
		for _, tc := range cases {
			b.Run(fmt.Sprintf("N=%d/%s", n, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := FitDeterministic(context.Background(), tc.data, tc.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFitDeterministicIdentity measures the labels-only EP fit (the
// identity prior, issue 35) at the shared ladder's shape: about 4 ratings
// per item from 20 (N = 4,000) to 50 raters, thresholds and noise learnt by
// evidence maximisation (the default), end to end including the result's
// joint draws. The prior is diagonal throughout (gp.IdentityFactor), so time
// and bytes allocated per item should stay flat across the sizes; the
// bytes are dominated by the result (N x 500 joint draws, rank summaries).
func BenchmarkFitDeterministicIdentity(b *testing.B) {
	for _, tc := range []struct{ n, raters int }{{4000, 20}, {16000, 40}, {64000, 50}} {
		d := benchData(tc.n, tc.raters, 4/float64(tc.raters), "identity", 35)
		b.Run(fmt.Sprintf("N=%d", tc.n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := FitDeterministic(context.Background(), d, DetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

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
		for t, c := range counts {
			if t < 100 {
				latent[i] += c
			}
		}
		idx, val := gptest.UnitRow(counts)
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

// BenchmarkPredictEP measures predicting new items from an EP fit of Chu's
// setting (benchChu: RBF gamma 1/6, sigma 0.3 and thresholds fixed) over a
// ladder of training sizes N:
//
//   - prepare: NewPredictor, which for the evidence ratio also factors the
//     fitted items' covariance (pivoted, the fit's tolerance) and re-runs
//     EP on their ratings (ratio), against the Gaussian predictive alone
//     (gaussian: one Cholesky factorisation);
//   - item: the prediction of one new item (its 5 grade probabilities),
//     by the evidence ratio with the default block (64 items) and by the
//     Gaussian predictive.
//
// Measured on this project's shared 2-core machine (noisy: ranges over
// three runs), per new item, evidence ratio / Gaussian: N = 50 (rank 44)
// 1.3-2.9 ms / 0.02-0.1 ms; N = 500 (rank 174) 8-21 ms / 1.2-4 ms;
// N = 1000 (rank 223) 17-24 ms / 16-28 ms (the Gaussian predictive's
// triangular solve, O(N^2), dominates at this size). Preparing: N = 1000
// 0.17-1.2 s (pivoted factor and one EP run) / 0.12-0.24 s.
func BenchmarkPredictEP(b *testing.B) {
	const nNew = 16
	for _, n := range []int{50, 500, 1000} {
		if testing.Short() && n > 500 {
			continue
		}
		d, x := benchChu(n)
		in := kernel.Inputs{N: n, X: x}
		k := kernel.RBF{Gamma: 1.0 / 6}
		var c mat.SymDense
		k.GramTo(&c, in)
		d.Cov = &c
		res, err := FitDeterministic(context.Background(), d, DetOptions{Sigma: 0.3, Thresholds: []float64{-1.5, -0.5, 0.5, 1.5}})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(n), 10))
		xn := mat.NewDense(nNew, 3, nil)
		for i := 0; i < nNew; i++ {
			for j := 0; j < 3; j++ {
				xn.Set(i, j, rng.NormFloat64())
			}
		}
		nw := kernel.Inputs{N: nNew, X: xn}
		var cross mat.Dense
		k.CrossTo(&cross, nw, in)
		prior := k.DiagTo(nil, nw)
		ids := make([]string, nNew)
		for i := range ids {
			ids[i] = fmt.Sprint("new", i)
		}
		for _, m := range []struct {
			name string
			opts PredictOptions
		}{{"ratio", PredictOptions{}}, {"gaussian", PredictOptions{Gaussian: true}}} {
			b.Run(fmt.Sprintf("N=%d/prepare/%s", n, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := NewPredictorOptions(res, &c, m.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
			p, err := NewPredictorOptions(res, &c, m.opts)
			if err != nil {
				b.Fatal(err)
			}
			if m.name == "ratio" && p.gauss.ratio == nil {
				b.Fatalf("no evidence ratio: %s", p.gauss.why)
			}
			// The first prediction also computes the EP posterior's
			// whitened factor (once per predictor): outside the timing.
			p.Predict(ids[:1], cross.Slice(0, 1, 0, n), prior[:1])
			b.Run(fmt.Sprintf("N=%d/item/%s", n, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					j := i % nNew
					p.Predict(ids[j:j+1], cross.Slice(j, j+1, 0, n), prior[j:j+1])
				}
				if p.gauss.ratio != nil {
					b.ReportMetric(float64(p.gauss.ratio.fac.R), "rank")
				}
			})
		}
	}
}
