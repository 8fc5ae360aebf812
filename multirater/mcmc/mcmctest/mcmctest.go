// Package mcmctest holds helpers for testing the samplers of the model
// families.
package mcmctest

import (
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/multirater/diag"
	"concord/multirater/kernel"
)

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
