package lik

import (
	"math"

	"concord/multirater/numeric"
)

// Normal is the Gaussian likelihood of a bounded rating on the unit scale,
// y ~ N(1/2 + f, Sigma^2): the item's mean rating is f from the middle of
// the scale (no link, so that f = 0 is the middle, as Phi(0) is for the
// beta likelihood). It reads the rating as y = min(max(y*, 0), 1) of a
// Gaussian y* whose mass beyond a bound stands for the ratings at it
// (CDF), and is fitted as the plain Gaussian (EP and Laplace are exact; a
// rating at a bound is the value 0 or 1). It is the bounded family's
// "mean" model: under one shared Sigma, the identity kernel and k ratings
// per item, the posterior mean of f_n is sum_l (y_nl - 1/2) / (k +
// Sigma^2), an affine map of the raters' mean (Rasmussen & Williams eq.
// 2.25 with K = I). Its learnable parameter is ln Sigma.
type Normal struct {
	Sigma float64
}

// Name is "normal".
func (*Normal) Name() string { return "normal" }

// LogLik returns log N(y | 1/2 + f, Sigma^2) and its derivatives in f.
func (n *Normal) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	s2 := n.Sigma * n.Sigma
	r := y - 0.5 - f
	return -0.5*math.Log(2*math.Pi*s2) - 0.5*r*r/s2, r / s2, -1 / s2, 0
}

// Tilted returns the exact normaliser N(y | 1/2 + mu, Sigma^2 + s2) and
// its derivatives in mu.
func (n *Normal) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	v := n.Sigma*n.Sigma + s2
	r := y - 0.5 - mu
	return -0.5*math.Log(2*math.Pi*v) - 0.5*r*r/v, r / v, -1 / v
}

// NumParams is 1: ln Sigma.
func (*Normal) NumParams() int { return 1 }

// ParamsTo sets dst[0] = ln Sigma.
func (n *Normal) ParamsTo(dst []float64) []float64 { dst[0] = math.Log(n.Sigma); return dst }

// SetParams sets Sigma = exp(p[0]).
func (n *Normal) SetParams(p []float64) { n.Sigma = math.Exp(p[0]) }

// LogLikGradTo sets the gradients in ln Sigma of LogLik's lp, d1 and d2.
func (n *Normal) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	r := y - 0.5 - f
	s2 := n.Sigma * n.Sigma
	dlp[0] = -1 + r*r/s2
	dd1[0] = -2 * r / s2
	dd2[0] = 2 / s2
}

// TiltedGradTo sets dst[0] to d log Z / d ln Sigma = 2 Sigma^2 d log Z / d v,
// v = Sigma^2 + s2.
func (n *Normal) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	r := y - 0.5 - mu
	v := n.Sigma*n.Sigma + s2
	dst[0] = 2 * n.Sigma * n.Sigma * (-0.5/v + 0.5*r*r/(v*v))
	return dst
}

// Mean returns 1/2 + f, the mean of y* (the rating's mean before the
// bounds).
func (*Normal) Mean(f float64) float64 { return 0.5 + f }

// CDF returns P(Y <= y | f) of the rating Y = min(max(y*, 0), 1): 0 below
// 0, Phi((y - 1/2 - f)/Sigma) on [0, 1) (the mass of y* below 0 is the
// atom at 0), 1 from 1 on (the atom at 1).
func (n *Normal) CDF(y, f float64) float64 {
	switch {
	case y < 0:
		return 0
	case y >= 1:
		return 1
	}
	return numeric.NormCDF((y - 0.5 - f) / n.Sigma)
}
