// Package gptest holds test problems for the engines that take a gp.Factor
// (ep, laplace): a low-rank prior with a diagonal correction beside the
// same covariance formed densely.
package gptest

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

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
