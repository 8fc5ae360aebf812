package ordinal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

// gewekeCase is a small model for the joint-distribution test.
type gewekeCase = mcmctest.GewekeCase[Options]

// TestOrdinalGeweke checks that every move of both samplers leaves the
// posterior invariant with Geweke's (2004) joint distribution test: the
// successive-conditional simulator alternates one sweep of the sampler
// given the labels with a fresh draw of the labels (and latent values) given
// the parameters. Its stationary distribution is the joint distribution of
// parameters and data, so the parameters' marginal must be the prior, whose
// moments are known exactly. A move that does not leave its conditional
// invariant (a wrong Jacobian, acceptance ratio or conditional) biases these
// moments. The test compares means of the precisions, thresholds, latent
// scores and their squares with the prior's, in units of their Monte Carlo
// standard errors.
func TestOrdinalGeweke(t *testing.T) {
	rbf, lin, incomplete := mcmctest.GewekeDesigns()
	prior := Options{Common: mcmc.Common{V: 3, Lambda: 2}, SigmaB: 1.2}
	cases := []gewekeCase{
		{Name: "identity/complete", N: 4, L: 3, K: 3, Opts: prior},
		{Name: "identity/incomplete", N: 5, L: 3, K: 4, Pairs: incomplete, Opts: prior},
		// Four ratings per item: the moves given m instead of the collapsed ones.
		{Name: "identity/4 raters", N: 3, L: 4, K: 3, Opts: prior},
		{Name: "rbf/complete", N: 5, L: 2, K: 4, Cov: rbf, Opts: prior},
		{Name: "rbf/incomplete", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: rbf, Opts: prior},
		{Name: "linear-singular/incomplete", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: lin, Opts: prior},
		{Name: "identity/K=2", N: 4, L: 3, K: 2, Opts: prior},
		{Name: "rbf/both", N: 5, L: 2, K: 3, Cov: rbf, Opts: Options{Common: mcmc.Common{V: 3, Lambda: 2, Identifiability: multirater.Both}, SigmaB: 1.2}},
	}
	mcmctest.RunGewekeCases(t, cases, 7, func(o *Options, s mcmc.Sampler) { o.Sampler = s }, func(t *testing.T, tc gewekeCase, iters int, seed uint64) {
		runGeweke(t, tc, iters, seed, nil)
	})
}

// TestOrdinalGewekeExtra is TestOrdinalGeweke for a truncated low-rank
// prior with its diagonal correction, m = G w + e (gp.NewPriorExtra, which
// the fits take from gp.ExtraFromItems items): 5 items with 4 features,
// C = X X' truncated to rank 2, the rest of each item's variance in e. The
// latent scores' second moments must be the full C_nn = |x_n|^2, which a
// sampler that left e out (or mis-scaled it) would miss: over 40,000
// iterations the left-out variance, about a quarter of C_nn here, is many
// Monte Carlo standard errors.
func TestOrdinalGewekeExtra(t *testing.T) {
	_, _, incomplete := mcmctest.GewekeDesigns()
	lr, dense := mcmctest.GewekeTruncated()
	prior := Options{Common: mcmc.Common{V: 3, Lambda: 2}, SigmaB: 1.2}
	cases := []gewekeCase{
		{Name: "fitc/incomplete", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: dense, Opts: prior},
		{Name: "fitc/complete", N: 5, L: 2, K: 3, Cov: dense, Opts: prior},
	}
	mcmctest.RunGewekeCases(t, cases, 11, func(o *Options, s mcmc.Sampler) { o.Sampler = s }, func(t *testing.T, tc gewekeCase, iters int, seed uint64) {
		runGeweke(t, tc, iters, seed, lr)
	})
}

// runGeweke runs one case; a non-nil lr replaces the dense prior by lr's
// factor with its diagonal correction (tc.Cov is then the dense matrix
// that the moments are checked against).
func runGeweke(t *testing.T, tc gewekeCase, iters int, seed uint64, lr *gp.LowRank) {
	rng := rand.New(rand.NewPCG(seed, 12345))
	opts := tc.Opts.WithDefaults()
	pairs, items, raters, levels := tc.Design()
	data := &Data{Cov: tc.Cov, ItemIDs: items, RaterIDs: raters, Levels: levels}
	newModel := func() (*ordModel, error) { return newOrdModel(data, opts) }
	if lr != nil {
		data.Cov = lr
		newModel = func() (*ordModel, error) {
			md, err := newOrdModelPrior(data, opts, true)
			if err == nil && md.f.Extra == nil {
				t.Fatal("no diagonal correction")
			}
			return md, err
		}
	}
	// Every rater must have a rating for the model to build; levels are
	// placeholders until the first regeneration.
	data.Ratings = make([]multirater.Rating, len(pairs))
	for i, p := range pairs {
		data.Ratings[i] = multirater.Rating{Item: p[0], Rater: p[1]}
	}
	md, err := newModel()
	if err != nil {
		t.Fatal(err)
	}
	ch := newOrdChain(md, seed, 0, 1)
	// Draw the parameters from the prior by the chain's own initialisation
	// and regenerate the data from them.
	yv := make([]float64, len(pairs))
	regenerate := func() {
		for i, p := range pairs {
			l := p[1]
			y := ch.m[p[0]] + rng.NormFloat64()/math.Sqrt(ch.alpha[l])
			lev := 0
			for lev < tc.K-1 && y > ch.b[md.bIdx(l, lev+1)] {
				lev++
			}
			data.Ratings[i].Level = lev
			yv[i] = y
		}
	}
	// Functions of the parameters whose prior means are known.
	kk := tc.K
	stats := mcmctest.PrecisionStats(tc.L, func(l int) bool { return l == md.ref }, func(l int) float64 { return ch.alpha[l] }, opts.V, opts.Lambda)
	bMeans := orderedNormalMeans(kk-1, opts.SigmaB, 400000)
	for l := 0; l < tc.L; l++ {
		for j := 1; j < kk; j++ {
			l, j := l, j
			truth := bMeans[j-1]
			if l == md.ref {
				if j == 1 {
					continue
				}
				truth = refThresholdMean(kk-1, j, opts.SigmaB)
			}
			stats = append(stats, mcmctest.Stat{Name: fmt.Sprintf("b[%d,%d]", l, j), F: func() float64 { return ch.b[md.bIdx(l, j)] }, Truth: truth})
		}
	}
	stats = append(stats, mcmctest.LatentStats(tc.N, 1, tc.Cov, func(i int) float64 { return ch.m[i] })...)
	it := 0
	step := func() error {
		// Rebuild the model for the new labels and carry the state over.
		md2, err := newModel()
		if err != nil {
			return err
		}
		ch2 := newOrdChain(md2, seed+uint64(it)+1, 0, 1)
		it++
		copy(ch2.w, ch.w)
		copy(ch2.m, ch.m)
		copy(ch2.gw, ch.gw)
		copy(ch2.e, ch.e)
		copy(ch2.alpha, ch.alpha)
		copy(ch2.b, ch.b)
		// Latent values in the new observation order (sorted by rater,
		// level, item).
		pos := map[[2]int]float64{}
		for i, p := range pairs {
			pos[p] = yv[i]
		}
		for o := range ch2.y {
			l := 0
			for o >= md2.rStart[l+1] {
				l++
			}
			ch2.y[o] = pos[[2]int{int(md2.obsItem[o]), l}]
		}
		ch2.rng = ch.rng
		ch2.src = ch.src
		ch, md = ch2, md2
		return ch.Sweep(false)
	}
	mcmctest.Geweke(t, iters, 4.5, stats, step, regenerate)
}

// orderedNormalMeans returns the means of the order statistics of k
// independent N(0, sigma^2) variables (the ordered threshold prior), by
// simulation with a fixed seed (their Monte Carlo error, below 0.003 sigma,
// is small against the test's tolerance).
func orderedNormalMeans(k int, sigma float64, n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	means := make([]float64, k)
	v := make([]float64, k)
	for i := 0; i < n; i++ {
		for j := range v {
			v[j] = sigma * rng.NormFloat64()
		}
		sortFloats(v)
		for j := range v {
			means[j] += v[j] / float64(n)
		}
	}
	return means
}

// refThresholdMean returns the prior mean of threshold j (2 <= j <= k) of
// the reference rater, whose first threshold is fixed at 0: the
// (j-1)-th order statistic of k-1 independent half-normals |N(0, sigma^2)|.
func refThresholdMean(k, j int, sigma float64) float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 400000
	v := make([]float64, k-1)
	var s float64
	for i := 0; i < n; i++ {
		for t := range v {
			v[t] = math.Abs(sigma * rng.NormFloat64())
		}
		sortFloats(v)
		s += v[j-2]
	}
	return s / n
}
