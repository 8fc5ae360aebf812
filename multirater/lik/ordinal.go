package lik

import (
	"fmt"
	"math"

	"concord/multirater/numeric"
)

// OrdinalProbit is the ordinal probit likelihood of one rater (Chu &
// Ghahramani eq. 5; Rogers et al. sec. 2.1 with sigma = 1/sqrt(alpha_l)):
// a rating y in {0, ..., K-1} (the level index, as a float64) of an item
// with latent value f has
//
//	P(y | f) = Phi((b_y - f)/sigma) - Phi((b_{y-1} - f)/sigma),
//
// with thresholds b_0 < ... < b_{K-2} = B (b_{-1} = -inf, b_{K-1} = +inf)
// and noise sd Sigma. The tilted normaliser under N(f | mu, s2) is the same
// difference with sigma replaced by sqrt(sigma^2 + s2) (Chu eq. 21).
// Everything is computed from log(Phi(z1) - Phi(z2)) and ratios phi/Z, so
// that the tails (a rating far from the latent value) stay finite.
//
// Its learnable parameters are Chu's (sec. 4): (b_0, ln Delta_1, ...,
// ln Delta_{K-2}, ln sigma) with Delta_k = b_k - b_{k-1}, which keeps the
// thresholds ordered and sigma positive.
type OrdinalProbit struct {
	B     []float64
	Sigma float64
}

// terms returns, for level y, the standardised bounds zlo < zhi, log Z and
// the ratios rlo = phi(zlo)/Z, rhi = phi(zhi)/Z (0 at an infinite bound).
func (o OrdinalProbit) terms(y, f, s float64) (zlo, zhi, logZ, rlo, rhi float64) {
	k := int(y)
	if float64(k) != y || k < 0 || k > len(o.B) {
		panic(fmt.Sprintf("multirater: OrdinalProbit: level %v outside 0..%d", y, len(o.B)))
	}
	zlo, zhi = math.Inf(-1), math.Inf(1)
	if k > 0 {
		zlo = (o.B[k-1] - f) / s
	}
	if k < len(o.B) {
		zhi = (o.B[k] - f) / s
	}
	if math.Abs(zlo) < linearBound || math.Abs(zhi) < linearBound || (zlo < 0 && zhi > 0) {
		// Z = Phi(zhi) - Phi(zlo) is at least Phi(-linearBound) ~ 1e-300:
		// computed directly (the difference of two tail probabilities by
		// erfc, as accurate as LogPhiDiff and half the cost).
		var z float64
		switch {
		case zlo >= 0:
			z = 0.5 * (math.Erfc(zlo/math.Sqrt2) - math.Erfc(zhi/math.Sqrt2))
		case zhi <= 0:
			z = 0.5 * (math.Erfc(-zhi/math.Sqrt2) - math.Erfc(-zlo/math.Sqrt2))
		default:
			z = 0.5 * (math.Erf(zhi/math.Sqrt2) - math.Erf(zlo/math.Sqrt2))
		}
		if z > 0 {
			if !math.IsInf(zlo, 0) {
				rlo = math.Exp(-0.5*zlo*zlo) * invSqrt2Pi / z
			}
			if !math.IsInf(zhi, 0) {
				rhi = math.Exp(-0.5*zhi*zhi) * invSqrt2Pi / z
			}
			return zlo, zhi, math.Log(z), rlo, rhi
		}
	}
	logZ = numeric.LogPhiDiff(zlo, zhi)
	if !math.IsInf(zlo, 0) {
		rlo = math.Exp(numeric.LogNormPDF(zlo) - logZ)
	}
	if !math.IsInf(zhi, 0) {
		rhi = math.Exp(numeric.LogNormPDF(zhi) - logZ)
	}
	return zlo, zhi, logZ, rlo, rhi
}

// linearBound is the |z| below which a bound's tail probability Phi(-|z|)
// is far from underflow (Phi(-37) ~ 6e-300).
const linearBound = 37

const invSqrt2Pi = 0.3989422804014327

// zr returns z r, 0 for an infinite z (r is then 0).
func zr(z, r float64) float64 {
	if math.IsInf(z, 0) {
		return 0
	}
	return z * r
}

// derivs returns the first three derivatives in f of log(Phi(zhi) -
// Phi(zlo)), z = (b - f)/s.
func derivs(zlo, zhi, rlo, rhi, s float64) (d1, d2, d3 float64) {
	d1 = -(rhi - rlo) / s
	a := (zr(zhi, rhi) - zr(zlo, rlo)) / (s * s)
	d2 = -a - d1*d1
	c := (rhi - zr(zhi, zr(zhi, rhi))) - (rlo - zr(zlo, zr(zlo, rlo)))
	d3 = c/(s*s*s) - 3*d1*d2 - d1*d1*d1
	return d1, d2, d3
}

// LogLik returns log P(y | f) and its derivatives in f (Chu eq. 5, A.2).
func (o OrdinalProbit) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	zlo, zhi, logZ, rlo, rhi := o.terms(y, f, o.Sigma)
	d1, d2, d3 = derivs(zlo, zhi, rlo, rhi, o.Sigma)
	return logZ, d1, d2, d3
}

// Tilted returns log ∫ P(y | f) N(f | mu, s2) df and its derivatives in mu
// (Chu eq. 21, B.2).
func (o OrdinalProbit) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	s := math.Sqrt(o.Sigma*o.Sigma + s2)
	zlo, zhi, logZ, rlo, rhi := o.terms(y, mu, s)
	d1, d2, _ = derivs(zlo, zhi, rlo, rhi, s)
	return logZ, d1, d2
}

// NumParams is K - 1 thresholds and sigma.
func (o OrdinalProbit) NumParams() int { return len(o.B) + 1 }

// ParamsTo sets dst to (b_0, ln Delta_1, ..., ln Delta_{K-2}, ln sigma).
func (o OrdinalProbit) ParamsTo(dst []float64) []float64 {
	if len(dst) != o.NumParams() {
		panic("multirater: OrdinalProbit.ParamsTo: wrong length")
	}
	dst[0] = o.B[0]
	for k := 1; k < len(o.B); k++ {
		dst[k] = math.Log(o.B[k] - o.B[k-1])
	}
	dst[len(o.B)] = math.Log(o.Sigma)
	return dst
}

// SetParams sets the thresholds and sigma from Chu's parametrisation.
func (o *OrdinalProbit) SetParams(p []float64) {
	if len(p) != o.NumParams() {
		panic("multirater: OrdinalProbit.SetParams: wrong length")
	}
	o.B[0] = p[0]
	for k := 1; k < len(o.B); k++ {
		o.B[k] = o.B[k-1] + math.Exp(p[k])
	}
	o.Sigma = math.Exp(p[len(o.B)])
}

// TiltedGradTo sets dst to the gradient of Tilted's log Z in Chu's
// parametrisation (Chu app. C): with s = sqrt(sigma^2 + s2),
// d log Z / d b_y = rhi/s, d log Z / d b_{y-1} = -rlo/s and
// d log Z / d ln sigma = -(sigma^2/s^2)(zhi rhi - zlo rlo); a threshold b_k
// depends on b_0 and on every ln Delta_j with j <= k (d b_k / d ln Delta_j =
// Delta_j).
func (o OrdinalProbit) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	if len(dst) != o.NumParams() {
		panic("multirater: OrdinalProbit.TiltedGradTo: wrong length")
	}
	s := math.Sqrt(o.Sigma*o.Sigma + s2)
	zlo, zhi, _, rlo, rhi := o.terms(y, mu, s)
	for i := range dst {
		dst[i] = 0
	}
	k := int(y)
	// d log Z / d b_k for the two thresholds of level k.
	gb := func(j int, g float64) {
		dst[0] += g
		for i := 1; i <= j; i++ {
			dst[i] += g * (o.B[i] - o.B[i-1])
		}
	}
	if k < len(o.B) {
		gb(k, rhi/s)
	}
	if k > 0 {
		gb(k-1, -rlo/s)
	}
	dst[len(o.B)] = -(o.Sigma * o.Sigma / (s * s)) * (zr(zhi, rhi) - zr(zlo, rlo))
	return dst
}
