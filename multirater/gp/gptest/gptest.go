// Package gptest holds test problems for the engines that take a gp.Factor
// (ep, laplace): a low-rank prior with a diagonal correction beside the
// same covariance formed densely, and the Gaussian likelihood with its
// exact evidence, against which both engines must be exact.
package gptest

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

// Gauss is the Gaussian likelihood y = f + N(0, S2): with it EP and
// Laplace's method are exact, so that an engine can be checked against
// the closed-form posterior (Evidence).
type Gauss struct{ S2 float64 }

// LogLik returns log N(y | f, S2) and its derivatives in f.
func (g Gauss) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	r := y - f
	return -0.5*r*r/g.S2 - 0.5*math.Log(2*math.Pi*g.S2), r / g.S2, -1 / g.S2, 0
}

// Tilted returns log N(y | mu, S2 + s2) and its derivatives in mu.
func (g Gauss) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	v := g.S2 + s2
	r := y - mu
	return -0.5*r*r/v - 0.5*math.Log(2*math.Pi*v), r / v, -1 / v
}

// Evidence returns the exact log evidence log N(y | 0, K + s2 I) of
// Gaussian observations y with prior covariance K (m×m, symmetrised as
// (K + K')/2), the Cholesky factor of K + s2 I and alpha = (K + s2 I)^-1 y
// (Rasmussen & Williams eq. 2.30 and algorithm 2.1).
func Evidence(k mat.Matrix, s2 float64, y []float64) (logZ float64, ch *mat.Cholesky, alpha *mat.VecDense, err error) {
	m := len(y)
	ks := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (k.At(i, j) + k.At(j, i))
			if i == j {
				v += s2
			}
			ks.SetSym(i, j, v)
		}
	}
	ch = new(mat.Cholesky)
	if !ch.Factorize(ks) {
		return 0, nil, nil, errors.New("gptest: K + s2 I is not positive definite")
	}
	yv := mat.NewVecDense(m, y)
	alpha = new(mat.VecDense)
	if err := ch.SolveVecTo(alpha, yv); err != nil {
		return 0, nil, nil, err
	}
	logZ = -0.5*mat.Dot(yv, alpha) - 0.5*ch.LogDet() - 0.5*float64(m)*math.Log(2*math.Pi)
	return logZ, ch, alpha, nil
}

// RunBoth runs an engine (run: one problem's sites with the engine's
// options) on the factor with the correction or truncation and on the
// dense factor of the same problem, failing the test when either fails.
func RunBoth[R any](tb testing.TB, run func(*gp.Factor) (R, error), low, dense *gp.Factor) (rl, rd R) {
	tb.Helper()
	var err error
	if rl, err = run(low); err != nil {
		tb.Fatal(err)
	}
	if rd, err = run(dense); err != nil {
		tb.Fatal(err)
	}
	return rl, rd
}

// SameMarginals fails the test (what names the case) unless the
// marginals N(meanL, varL) of the low-rank factor's fit and N(meanD, varD)
// of the dense factor's agree within tol item by item.
func SameMarginals(tb testing.TB, what string, tol float64, meanL, varL, meanD, varD []float64) {
	tb.Helper()
	for i := range meanD {
		if math.Abs(meanL[i]-meanD[i]) > tol || math.Abs(varL[i]-varD[i]) > tol {
			tb.Fatalf("%s item %d: low rank N(%v, %v), dense N(%v, %v)", what, i, meanL[i], varL[i], meanD[i], varD[i])
		}
	}
}

// CorrectedProblem draws a covariance C = G G' + D with G n×r (entries
// N(0, 1/r)) and D diagonal (0.2 to 0.7, 0 on every seventh item), and 1 to
// 3 ordinal-probit sites per item with labels in {0, 1, 2}. It returns the
// factor with the correction (G with Extra = D), the eigen-factor of C
// formed densely (the path without a correction) and the sites; the draws
// come from rng in that order.
func CorrectedProblem(n, r int, rng *rand.Rand) (low, dense *gp.Factor, sites []lik.Site, err error) {
	g := make([]float64, n*r)
	for i := range g {
		g[i] = rng.NormFloat64() / math.Sqrt(float64(r))
	}
	extra := make([]float64, n)
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		extra[i] = 0.2 + 0.5*rng.Float64()
		if i%7 == 0 {
			extra[i] = 0
		}
		for j := i; j < n; j++ {
			s := 0.0
			for k := 0; k < r; k++ {
				s += g[i*r+k] * g[j*r+k]
			}
			if i == j {
				s += extra[i]
			}
			c.SetSym(i, j, s)
		}
	}
	o := &lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 0.4}
	for i := 0; i < n; i++ {
		for k := 0; k < 1+i%3; k++ {
			sites = append(sites, lik.Site{Item: i, Y: float64(rng.IntN(3)), Lik: o})
		}
	}
	low = &gp.Factor{N: n, R: r, G: g, Extra: extra}
	dense, err = gp.NewFactor(c)
	return low, dense, sites, err
}

// UnitRow is a bag of words (counts by column) as a row of gp.SparseRows:
// its columns in increasing order, the counts scaled to unit Euclidean
// norm (the shape of the text featuriser's vectors).
func UnitRow(counts map[int32]float64) ([]int32, []float64) {
	idx := make([]int32, 0, len(counts))
	norm := 0.0
	for j, v := range counts {
		idx = append(idx, j)
		norm += v * v
	}
	slices.Sort(idx)
	val := make([]float64, len(idx))
	for k, j := range idx {
		val[k] = counts[j] / math.Sqrt(norm)
	}
	return idx, val
}
