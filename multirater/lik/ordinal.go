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

// LogLikGradTo sets dlp, dd1 and dd2 to the gradients in Chu's
// parametrisation of log P(y | f) and of its first two derivatives in f (d1
// and d2 of LogLik), as Laplace's evidence gradient needs (Rasmussen &
// Williams sec. 5.5.1 with likelihood parameters). With L(zlo, zhi) =
// log(Phi(zhi) - Phi(zlo)), z = (b - f)/sigma, the derivatives in f are
// D = -(d/dzlo + d/dzhi)/sigma, those in the level's thresholds
// (1/sigma) d/dz of their bound and that in ln sigma -(zlo d/dzlo + zhi
// d/dzhi) plus sigma's explicit powers in d1 = -M1/sigma, d2 = M2/sigma^2.
func (o OrdinalProbit) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	np := o.NumParams()
	if len(dlp) != np || len(dd1) != np || len(dd2) != np {
		panic("multirater: OrdinalProbit.LogLikGradTo: wrong length")
	}
	s := o.Sigma
	zl, zh, _, rl, rh := o.terms(y, f, s)
	// Partial derivatives of L up to the third order (h: zhi, l: zlo); an
	// infinite bound has r = 0 and every term with its r vanishes.
	lh, ll := rh, -rl
	lhh := -zr(zh, rh) - rh*rh
	lll := zr(zl, rl) - rl*rl
	lhl := rh * rl
	lhhh := -rh + zr(zh, zr(zh, rh)) + zr(zh, rh*rh) + 2*rh*(zr(zh, rh)+rh*rh)
	zhf, zlf := finite(zh), finite(zl) // 0 at an infinite bound, whose r is 0
	lhhl := -rh * rl * (zhf + 2*rh)
	lhll := rh * rl * (2*rl - zlf)
	llll := rl + (zlf-2*rl)*(-zr(zl, rl)+rl*rl)
	for i := range dlp {
		dlp[i], dd1[i], dd2[i] = 0, 0, 0
	}
	k := int(y)
	add := func(j int, g0, g1, g2 float64) {
		// b_j depends on b_0 and ln Delta_i, i <= j (d b_j / d ln Delta_i = Delta_i).
		for i := 0; i <= j; i++ {
			w := 1.0
			if i > 0 {
				w = o.B[i] - o.B[i-1]
			}
			dlp[i] += w * g0
			dd1[i] += w * g1
			dd2[i] += w * g2
		}
	}
	s2, s3 := s*s, s*s*s
	if k < len(o.B) {
		add(k, lh/s, -(lhl+lhh)/s2, (lhll+2*lhhl+lhhh)/s3)
	}
	if k > 0 {
		add(k-1, ll/s, -(lll+lhl)/s2, (llll+2*lhll+lhhl)/s3)
	}
	m1 := ll + lh
	m2 := lll + 2*lhl + lhh
	dhM2 := lhll + 2*lhhl + lhhh
	dlM2 := llll + 2*lhll + lhhl
	dlp[np-1] = -(zhf*lh + zlf*ll)
	dd1[np-1] = (m1 + zhf*(lhl+lhh) + zlf*(lll+lhl)) / s
	dd2[np-1] = -(2*m2 + zhf*dhM2 + zlf*dlM2) / s2
}

// finite returns z, or 0 when z is infinite.
func finite(z float64) float64 {
	if math.IsInf(z, 0) {
		return 0
	}
	return z
}
