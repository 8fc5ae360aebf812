// Package mcmctest holds helpers for testing the samplers of the model
// families.
package mcmctest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/multirater"
	"concord/multirater/diag"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
)

// MeanLevels is the raters' mean: each of n items' mean level over its
// ratings (0 for an item without ratings), the baseline a consensus is
// compared with.
func MeanLevels(n int, ratings []multirater.Rating) []float64 {
	sum := make([]float64, n)
	cnt := make([]float64, n)
	for _, r := range ratings {
		sum[r.Item] += float64(r.Level)
		cnt[r.Item]++
	}
	for i := range sum {
		if cnt[i] > 0 {
			sum[i] /= cnt[i]
		}
	}
	return sum
}

// Spearman returns Spearman's rank correlation of x and y.
func Spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for i := 0; i < len(idx); {
			j := i
			for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
				j++
			}
			for k := i; k <= j; k++ {
				r[idx[k]] = float64(i+j)/2 + 1
			}
			i = j + 1
		}
		return r
	}
	return stat.Correlation(rank(x), rank(y), nil)
}

// Stat is a function of a sampler's state whose mean under the prior is
// known exactly (Truth), for Geweke's joint-distribution test.
type Stat struct {
	Name  string
	F     func() float64
	Truth float64
}

// Geweke runs Geweke's (2004) successive-conditional simulator for iters
// iterations: regenerate draws the data (and latent values) given the
// parameters, step advances the sampler by one sweep given the data, and
// each stat is recorded after each sweep. The simulator's stationary
// distribution is the joint distribution of parameters and data, so every
// stat's mean must be its prior mean: the test fails where it is more than
// zmax Monte Carlo standard errors away (the MCSE from the bulk ESS of the
// series cut into 4 chains).
func Geweke(t testing.TB, iters int, zmax float64, stats []Stat, step func() error, regenerate func()) {
	t.Helper()
	series := make([][]float64, len(stats))
	for i := range series {
		series[i] = make([]float64, iters)
	}
	regenerate()
	for it := 0; it < iters; it++ {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		for i, s := range stats {
			series[i][it] = s.F()
		}
		regenerate()
	}
	for i, s := range stats {
		x := series[i]
		chains := [][]float64{x[:iters/4], x[iters/4 : iters/2], x[iters/2 : 3*iters/4], x[3*iters/4:]}
		sum := diag.Summarize(chains)
		mcse := sum.SD / math.Sqrt(sum.ESSBulk)
		z := (sum.Mean - s.Truth) / mcse
		if math.Abs(z) > zmax || math.IsNaN(z) {
			t.Errorf("%s: mean %.4f, prior %.4f, MCSE %.4f (ESS %.0f): z = %.2f", s.Name, sum.Mean, s.Truth, mcse, sum.ESSBulk, z)
		}
	}
}

// GewekeDesigns returns the small designs of the families'
// joint-distribution tests: an RBF kernel (gamma 0.7) and a linear kernel of
// rank 2 on 5 items, and an incomplete design of 9 (item, rater) pairs on 4
// items and 3 raters.
func GewekeDesigns() (rbf, lin *mat.SymDense, incomplete [][2]int) {
	x := mat.NewDense(5, 1, []float64{-1, -0.3, 0.2, 0.9, 1.5})
	rbf = new(mat.SymDense)
	kernel.RBF{Gamma: 0.7}.GramTo(rbf, kernel.Inputs{N: 5, X: x})
	// A singular kernel: rank 2 on 5 items.
	xl := mat.NewDense(5, 2, []float64{1, 0, 0.6, 0.8, 0, 1, -0.6, 0.8, 1, 0.1})
	lin = new(mat.SymDense)
	kernel.Linear{}.GramTo(lin, kernel.Inputs{N: 5, X: xl})
	incomplete = [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 0}, {2, 2}, {3, 0}, {3, 1}, {3, 2}}
	return rbf, lin, incomplete
}

// GewekeTruncated returns the prior of the families' joint-distribution
// tests of a truncated low-rank prior with its diagonal correction
// (gp.NewPriorExtra): the linear kernel C = X X' on 5 items with 4 fixed
// features truncated to rank 2 by the randomized range finder (seed 1),
// and C itself, dense, whose diagonal the latent values' prior second
// moments must match. The truncation leaves out more than a tenth of
// C's trace (it panics otherwise), so that a sampler that drops or
// mis-scales the correction fails the moment test.
func GewekeTruncated() (*gp.LowRank, *mat.SymDense) {
	x := gp.SparseRows{Cols: 4}
	vals := [][]float64{{1, 0.5, 0, 0.3}, {0.2, 1, 0.4, 0}, {0, 0.3, 1, 0.6}, {0.8, 0, 0.2, 1}, {0.5, 0.5, 0.5, 0.2}}
	for _, row := range vals {
		x.Idx = append(x.Idx, []int32{0, 1, 2, 3})
		x.Val = append(x.Val, row)
	}
	lr, err := gp.NewLowRankFeatures(x, gp.LowRankOptions{MaxRank: 2}, rand.New(rand.NewPCG(1, 2)), 1)
	if err != nil {
		panic(err)
	}
	if lr.Exact || lr.Residual() < 0.1*lr.Trace {
		panic(fmt.Sprintf("mcmctest: test prior not truncated enough: residual %g of %g", lr.Residual(), lr.Trace))
	}
	dense := mat.NewSymDense(5, nil)
	for i := range vals {
		for j := range vals {
			var s float64
			for k, v := range vals[i] {
				s += v * vals[j][k]
			}
			dense.SetSym(i, j, s)
		}
	}
	return lr, dense
}

// GewekeCase is a small model of a family's joint-distribution test: N
// items, L raters, K levels, the observed (item, rater) pairs (nil: every
// pair), the prior covariance (nil: identity) and the family's options O.
type GewekeCase[O any] struct {
	Name    string
	N, L, K int
	Pairs   [][2]int
	Cov     mat.Symmetric
	Opts    O
}

// RunGewekeCases runs every case with both samplers (sampler sets it in the
// options) as parallel subtests "name/sampler", 40,000 iterations (10,000
// with -short), case c's seed len(c.Name)*seedMul + the sampler.
func RunGewekeCases[O any](t *testing.T, cases []GewekeCase[O], seedMul uint64, sampler func(*O, mcmc.Sampler),
	run func(t *testing.T, c GewekeCase[O], iters int, seed uint64)) {
	iters := 40000
	if testing.Short() {
		iters = 10000
	}
	for _, c := range cases {
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			t.Run(c.Name+"/"+smp.String(), func(t *testing.T) {
				t.Parallel()
				sampler(&c.Opts, smp)
				run(t, c, iters, uint64(len(c.Name))*seedMul+uint64(smp))
			})
		}
	}
}

// Design returns the case's (item, rater) pairs (every pair when Pairs is
// nil) and the ids of its items, raters and levels ("i0", "r0", "0", ...).
func (c GewekeCase[O]) Design() (pairs [][2]int, items, raters, levels []string) {
	pairs = c.Pairs
	if pairs == nil {
		for i := 0; i < c.N; i++ {
			for l := 0; l < c.L; l++ {
				pairs = append(pairs, [2]int{i, l})
			}
		}
	}
	for i := 0; i < c.N; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	for l := 0; l < c.L; l++ {
		raters = append(raters, fmt.Sprint("r", l))
	}
	for k := 0; k < c.K; k++ {
		levels = append(levels, fmt.Sprint(k))
	}
	return pairs, items, raters, levels
}

// PrecisionStats returns alpha_l and alpha_l^2 of every rater not fixed,
// whose prior is Gamma(v, lambda): means v/lambda and
// v(v+1)/lambda^2.
func PrecisionStats(nl int, fixed func(l int) bool, alpha func(l int) float64, v, lambda float64) []Stat {
	var out []Stat
	for l := 0; l < nl; l++ {
		if fixed(l) {
			continue
		}
		out = append(out,
			Stat{Name: fmt.Sprintf("alpha[%d]", l), F: func() float64 { return alpha(l) }, Truth: v / lambda},
			Stat{Name: fmt.Sprintf("alpha[%d]^2", l), F: func() float64 { a := alpha(l); return a * a }, Truth: v * (v + 1) / (lambda * lambda)},
		)
	}
	return out
}

// LatentStats returns m and m^2 of the k latent values of each of n items,
// m(i) the value i = item*k + c, whose prior is N(0, C_nn) (cov nil: the
// identity); names are "m[item]" for k = 1, else "m[item,c]".
func LatentStats(n, k int, cov mat.Symmetric, m func(i int) float64) []Stat {
	var out []Stat
	for item := 0; item < n; item++ {
		cnn := 1.0
		if cov != nil {
			cnn = cov.At(item, item)
		}
		for c := 0; c < k; c++ {
			i := item*k + c
			name := fmt.Sprintf("m[%d,%d]", item, c)
			if k == 1 {
				name = fmt.Sprintf("m[%d]", item)
			}
			out = append(out,
				Stat{Name: name, F: func() float64 { return m(i) }, Truth: 0},
				Stat{Name: name + "^2", F: func() float64 { v := m(i); return v * v }, Truth: cnn},
			)
		}
	}
	return out
}

// BenchSweeps is the steady-state sweep benchmark of a Gibbs chain: warmup
// burn-in sweeps of ch (untimed), the end of its warm-up, then b.N timed
// sweeps with their allocations, reported as sweeps per second.
func BenchSweeps(b *testing.B, ch interface {
	Sweep(warmup bool) error
	EndWarmup()
}, warmup int) {
	b.Helper()
	for i := range warmup + b.N {
		if i == warmup { // the burn-in is over: time the rest
			ch.EndWarmup()
			b.ReportAllocs()
			b.ResetTimer()
		}
		if err := ch.Sweep(i < warmup); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sweeps/s")
}
