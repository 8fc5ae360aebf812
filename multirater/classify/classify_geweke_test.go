package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

// classGewekeCase is a small model for the joint-distribution test of the
// classification sampler.
type classGewekeCase struct {
	name  string
	n, l  int
	k     int
	pairs [][2]int // observed (item, rater); nil means complete
	cov   mat.Symmetric
	opts  Options
}

// TestClassGeweke checks that every move of both classification samplers
// leaves the posterior invariant with Geweke's (2004) joint distribution
// test, as TestOrdinalGeweke does for the ordinal sampler: one sweep given
// the labels alternates with a fresh draw of the labels (and latent vectors)
// from the model given the parameters, so the parameters' marginal must be
// the prior: alpha_l ~ Gamma(v, lambda) and M_nk ~ N(0, C_nn). Means of the
// precisions, latent values and their squares are compared with the prior's
// in units of their Monte Carlo standard errors. (The appendix B
// representation is not a generative model of the labels and is checked
// against an exact posterior in TestClassFixedExact instead.)
func TestClassGeweke(t *testing.T) {
	rbf, lin, incomplete := mcmctest.GewekeDesigns()
	prior := Options{Common: mcmc.Common{V: 3, Lambda: 2}}
	cases := []classGewekeCase{
		{name: "identity/complete/K=3", n: 4, l: 3, k: 3, opts: prior},
		{name: "identity/incomplete/K=4", n: 5, l: 3, k: 4, pairs: incomplete, opts: prior},
		{name: "identity/K=2", n: 4, l: 3, k: 2, opts: prior},
		{name: "identity/incomplete/K=2", n: 5, l: 3, k: 2, pairs: incomplete, opts: prior},
		{name: "rbf/complete/K=3", n: 5, l: 2, k: 3, cov: rbf, opts: prior},
		{name: "rbf/incomplete/K=3", n: 5, l: 3, k: 3, pairs: incomplete, cov: rbf, opts: prior},
		{name: "rbf/complete/K=2", n: 5, l: 2, k: 2, cov: rbf, opts: prior},
		{name: "rbf/incomplete/K=2", n: 5, l: 3, k: 2, pairs: incomplete, cov: rbf, opts: prior},
		{name: "linear-singular/incomplete/K=3", n: 5, l: 3, k: 3, pairs: incomplete, cov: lin, opts: prior},
		{name: "rbf/both/K=3", n: 5, l: 2, k: 3, cov: rbf, opts: Options{Common: mcmc.Common{V: 3, Lambda: 2, Identifiability: multirater.Both}}},
		{name: "identity/strong/K=2", n: 4, l: 3, k: 2, opts: Options{Common: mcmc.Common{V: 3, Lambda: 2, Identifiability: multirater.Strong}}},
		{name: "rbf/fixed-full/K=3", n: 5, l: 3, k: 3, pairs: incomplete, cov: rbf, opts: Options{Precisions: FixedFullPrecisions}},
		{name: "identity/fixed-full/K=2", n: 4, l: 3, k: 2, opts: Options{Precisions: FixedFullPrecisions}},
	}
	iters := 40000
	if testing.Short() {
		iters = 10000
	}
	for _, tc := range cases {
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			tc, smp := tc, smp
			t.Run(tc.name+"/"+smp.String(), func(t *testing.T) {
				t.Parallel()
				tc.opts.Sampler = smp
				runClassGeweke(t, tc, iters, uint64(len(tc.name))*11+uint64(smp))
			})
		}
	}
}

func runClassGeweke(t *testing.T, tc classGewekeCase, iters int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 54321))
	opts := tc.opts
	opts.Settings = mcmc.Settings{Chains: 1, Samples: 1, Burnin: -1}
	opts = opts.WithDefaults()
	pairs := tc.pairs
	if pairs == nil {
		for i := 0; i < tc.n; i++ {
			for l := 0; l < tc.l; l++ {
				pairs = append(pairs, [2]int{i, l})
			}
		}
	}
	data := &Data{Cov: tc.cov}
	for i := 0; i < tc.n; i++ {
		data.ItemIDs = append(data.ItemIDs, fmt.Sprint("i", i))
	}
	for l := 0; l < tc.l; l++ {
		data.RaterIDs = append(data.RaterIDs, fmt.Sprint("r", l))
	}
	for c := 0; c < tc.k; c++ {
		data.Classes = append(data.Classes, fmt.Sprint(c))
	}
	for _, p := range pairs {
		data.Labels = append(data.Labels, multirater.Rating{Item: p[0], Rater: p[1]})
	}
	md, err := newClassModel(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	plan := newClassPlan(md, opts)
	ch := newClassChain(md, plan, seed, 0)
	k := tc.k
	// regenerate draws every label's latent vector from N(M_n., I/alpha_l)
	// and sets the label to its largest component. The vectors keep their
	// order (by rater, then item) whatever the labels, so the model is
	// updated in place.
	regenerate := func() {
		for v := range md.vecItem {
			n := int(md.vecItem[v])
			sd := 1 / math.Sqrt(ch.alpha[md.vecRater[v]])
			yv := ch.y[v*k : (v+1)*k]
			best := 0
			for c := range yv {
				yv[c] = ch.m[n*k+c] + sd*rng.NormFloat64()
				if yv[c] > yv[best] {
					best = c
				}
			}
			md.vecClass[v] = int32(best)
		}
	}
	var stats []mcmctest.Stat
	for l := 0; l < tc.l; l++ {
		l := l
		if md.fixedAlpha[l] {
			continue
		}
		stats = append(stats,
			mcmctest.Stat{Name: fmt.Sprintf("alpha[%d]", l), F: func() float64 { return ch.alpha[l] }, Truth: opts.V / opts.Lambda},
			mcmctest.Stat{Name: fmt.Sprintf("alpha[%d]^2", l), F: func() float64 { return ch.alpha[l] * ch.alpha[l] }, Truth: opts.V * (opts.V + 1) / (opts.Lambda * opts.Lambda)},
		)
	}
	for n := 0; n < tc.n; n++ {
		cnn := 1.0
		if tc.cov != nil {
			cnn = tc.cov.At(n, n)
		}
		for c := 0; c < k; c++ {
			i := n*k + c
			stats = append(stats,
				mcmctest.Stat{Name: fmt.Sprintf("m[%d,%d]", n, c), F: func() float64 { return ch.m[i] }, Truth: 0},
				mcmctest.Stat{Name: fmt.Sprintf("m[%d,%d]^2", n, c), F: func() float64 { return ch.m[i] * ch.m[i] }, Truth: cnn},
			)
		}
	}
	mcmctest.Geweke(t, iters, 4.5, stats, func() error { return ch.Sweep(false) }, regenerate)
}
