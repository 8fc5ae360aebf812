package classify

import (
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

// classGewekeCase is a small model for the joint-distribution test.
type classGewekeCase = mcmctest.GewekeCase[Options]

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
		{Name: "identity/complete/K=3", N: 4, L: 3, K: 3, Opts: prior},
		{Name: "identity/incomplete/K=4", N: 5, L: 3, K: 4, Pairs: incomplete, Opts: prior},
		{Name: "identity/K=2", N: 4, L: 3, K: 2, Opts: prior},
		{Name: "identity/incomplete/K=2", N: 5, L: 3, K: 2, Pairs: incomplete, Opts: prior},
		{Name: "rbf/complete/K=3", N: 5, L: 2, K: 3, Cov: rbf, Opts: prior},
		{Name: "rbf/incomplete/K=3", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: rbf, Opts: prior},
		{Name: "rbf/complete/K=2", N: 5, L: 2, K: 2, Cov: rbf, Opts: prior},
		{Name: "rbf/incomplete/K=2", N: 5, L: 3, K: 2, Pairs: incomplete, Cov: rbf, Opts: prior},
		{Name: "linear-singular/incomplete/K=3", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: lin, Opts: prior},
		{Name: "rbf/both/K=3", N: 5, L: 2, K: 3, Cov: rbf, Opts: Options{Common: mcmc.Common{V: 3, Lambda: 2, Identifiability: multirater.Both}}},
		{Name: "identity/strong/K=2", N: 4, L: 3, K: 2, Opts: Options{Common: mcmc.Common{V: 3, Lambda: 2, Identifiability: multirater.Strong}}},
		{Name: "rbf/fixed-full/K=3", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: rbf, Opts: Options{Precisions: FixedFullPrecisions}},
		{Name: "identity/fixed-full/K=2", N: 4, L: 3, K: 2, Opts: Options{Precisions: FixedFullPrecisions}},
	}
	mcmctest.RunGewekeCases(t, cases, 11, func(o *Options, s mcmc.Sampler) { o.Sampler = s }, func(t *testing.T, tc classGewekeCase, iters int, seed uint64) {
		runClassGeweke(t, tc, iters, seed, nil)
	})
}

// TestClassGewekeExtra is TestClassGeweke for a truncated low-rank prior
// with its diagonal correction, M_.k = G W_k + e_k (gp.NewPriorExtra, which
// the fits take from gp.ExtraFromItems items), on mcmctest.GewekeTruncated's
// rank-2 truncation of a linear kernel: the latent values' second moments
// must be the full C_nn.
func TestClassGewekeExtra(t *testing.T) {
	_, _, incomplete := mcmctest.GewekeDesigns()
	lr, dense := mcmctest.GewekeTruncated()
	prior := Options{Common: mcmc.Common{V: 3, Lambda: 2}}
	cases := []classGewekeCase{
		{Name: "fitc/incomplete/K=3", N: 5, L: 3, K: 3, Pairs: incomplete, Cov: dense, Opts: prior},
		{Name: "fitc/incomplete/K=2", N: 5, L: 3, K: 2, Pairs: incomplete, Cov: dense, Opts: prior},
		{Name: "fitc/complete/K=3", N: 5, L: 2, K: 3, Cov: dense, Opts: prior},
	}
	mcmctest.RunGewekeCases(t, cases, 13, func(o *Options, s mcmc.Sampler) { o.Sampler = s }, func(t *testing.T, tc classGewekeCase, iters int, seed uint64) {
		runClassGeweke(t, tc, iters, seed, lr)
	})
}

// runClassGeweke runs one case; a non-nil lr replaces the dense prior by
// lr's factor with its diagonal correction (tc.Cov is then the dense
// matrix that the moments are checked against).
func runClassGeweke(t *testing.T, tc classGewekeCase, iters int, seed uint64, lr *gp.LowRank) {
	rng := rand.New(rand.NewPCG(seed, 54321))
	opts := tc.Opts
	opts.Settings = mcmc.Settings{Chains: 1, Samples: 1, Burnin: -1}
	opts = opts.WithDefaults()
	pairs, items, raters, classes := tc.Design()
	data := &Data{Cov: tc.Cov, ItemIDs: items, RaterIDs: raters, Classes: classes}
	for _, p := range pairs {
		data.Labels = append(data.Labels, multirater.Rating{Item: p[0], Rater: p[1]})
	}
	if lr != nil {
		data.Cov = lr
	}
	md, err := newClassModelPrior(data, opts, lr != nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr != nil && md.f.Extra == nil {
		t.Fatal("no diagonal correction")
	}
	// The fits track G W_- from gp.ExtraFromItems items; checked here on
	// small ones.
	md.trackGW = md.pairM && !md.complete
	plan := newClassPlan(md, opts)
	ch := newClassChain(md, plan, seed, 0)
	k := tc.K
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
	stats := mcmctest.PrecisionStats(tc.L, func(l int) bool { return md.fixedAlpha[l] }, func(l int) float64 { return ch.alpha[l] }, opts.V, opts.Lambda)
	stats = append(stats, mcmctest.LatentStats(tc.N, k, tc.Cov, func(i int) float64 { return ch.m[i] })...)
	sweeps := 0
	mcmctest.Geweke(t, iters, 4.5, stats, func() error {
		if sweeps++; sweeps%1000 == 100 {
			// The fits weight the preconditioner during the burn-in
			// (from gp.ExtraFromItems items); here every 1,000 sweeps.
			ch.weightPreconditioner()
		}
		err := ch.Sweep(false)
		if md.pairM {
			// The sweep leaves (W_+, e_+) integrated out; the statistics
			// and the labels' regeneration read the whole of M.
			ch.pairPlus()
		}
		return err
	}, regenerate)
}

// TestClassWeightedPreconditioner checks the preconditioner that
// weightPreconditioner gives the conjugate gradients under a diagonal
// correction: combined with the precisions it was weighted at, its diagonal
// and leading block must be those of H = I + G' diag(d q) G, q_n = 1/(1 +
// d_n Extra_n), the matrix stepMPair solves (computed here directly).
func TestClassWeightedPreconditioner(t *testing.T) {
	_, _, incomplete := mcmctest.GewekeDesigns()
	lr, _ := mcmctest.GewekeTruncated()
	tc := classGewekeCase{N: 5, L: 3, K: 2, Pairs: incomplete}
	pairs, items, raters, classes := tc.Design()
	data := &Data{Cov: lr, ItemIDs: items, RaterIDs: raters, Classes: classes}
	for i, p := range pairs {
		data.Labels = append(data.Labels, multirater.Rating{Item: p[0], Rater: p[1], Level: i % 2})
	}
	opts := Options{Common: mcmc.Common{V: 3, Lambda: 2, Settings: mcmc.Settings{Chains: 1, Samples: 1}}}.WithDefaults()
	md, err := newClassModelPrior(data, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	f := md.f
	if f.Extra == nil || md.raterGsq == nil || md.precBlock == 0 || !md.pairM {
		t.Fatalf("model without the weighted preconditioner's parts: extra %v, parts %v, block %d, pairM %v", f.Extra != nil, md.raterGsq != nil, md.precBlock, md.pairM)
	}
	ch := newClassChain(md, newClassPlan(md, opts), 7, 0)
	for i := 0; i < 5; i++ {
		if err := ch.Sweep(true); err != nil {
			t.Fatal(err)
		}
	}
	ch.alpha[0] *= 3 // far from the precisions' starting values
	ch.weightPreconditioner()
	r, kb := f.R, md.precBlock
	d := make([]float64, md.n)
	for v, it := range md.vecItem {
		d[it] += ch.alpha[md.vecRater[v]]
	}
	wantDiag := make([]float64, r)
	wantBlock := make([]float64, kb*kb)
	for i := range wantBlock {
		if i%(kb+1) == 0 {
			wantBlock[i] = 1
		}
	}
	for j := range wantDiag {
		wantDiag[j] = 1
	}
	for n := 0; n < md.n; n++ {
		w := d[n] / (1 + d[n]*f.Extra[n])
		g := f.G[n*r : (n+1)*r]
		for j := range wantDiag {
			wantDiag[j] += w * g[j] * g[j]
		}
		for i := 0; i < kb; i++ {
			for j := 0; j <= i; j++ {
				wantBlock[i*kb+j] += w * g[i] * g[j]
			}
		}
	}
	gotDiag := make([]float64, r)
	gp.SumSquares(gotDiag, ch.gsqW, ch.alpha)
	gotBlock := make([]float64, kb*kb)
	gp.SumBlocks(gotBlock, kb, ch.blockW, ch.alpha)
	for j, w := range wantDiag {
		if math.Abs(gotDiag[j]-w) > 1e-12*w {
			t.Errorf("diagonal %d: %.15g, want %.15g", j, gotDiag[j], w)
		}
	}
	for i := 0; i < kb; i++ {
		for j := 0; j <= i; j++ {
			if w := wantBlock[i*kb+j]; math.Abs(gotBlock[i*kb+j]-w) > 1e-12*(1+math.Abs(w)) {
				t.Errorf("block (%d, %d): %.15g, want %.15g", i, j, gotBlock[i*kb+j], w)
			}
		}
	}
	// The unweighted parts (q = 1) differ where the correction is large.
	plain := make([]float64, r)
	gp.SumSquares(plain, md.raterGsq, ch.alpha)
	if math.Abs(plain[0]-wantDiag[0]) < 1e-3*wantDiag[0] {
		t.Errorf("unweighted diagonal %g equals the weighted %g: the test does not see the weights", plain[0], wantDiag[0])
	}
}
