package lik

import (
	"fmt"
	"math"

	"concord/multirater/numeric"
)

// RobustProbit is Kim & Ghahramani's outlier-robust likelihood of a binary
// label y in {-1, +1} (eq. 10 in its latent-noise form, the issue's
// p(y | f) = eps + (1 - 2 eps) Phi(y f / s)): with probability Eps the
// label is flipped whatever f says, otherwise it is the sign of f plus
// Gaussian latent noise of sd S (Kim & Ghahramani's v2 = S^2, which they put
// in the kernel with a step likelihood; the two are the same model).
// Eps = 0 is the plain probit GP classifier.
//
// The tilted normaliser under N(f | mu, s2) is eps + (1 - 2 eps) Phi(z),
// z = y mu / sqrt(S^2 + s2) (Kim & Ghahramani sec. 3, step 2), computed in
// log space so that a label far on the wrong side stays finite. For
// Eps > 0 the likelihood is not log-concave: far on the wrong side of the
// boundary it flattens to Eps, its second derivative in f turns positive,
// and EP may produce negative site precisions (ep.Options.NegativeSites).
//
// Its learnable parameters are (logit(2 Eps), ln S), which keep Eps in
// (0, 1/2) and S positive. Eps = 0 is given as a logit of -1000 (so that
// optimisers see finite numbers), whose gradient is 0: keep it fixed.
type RobustProbit struct {
	Eps float64
	S   float64
}

func (r RobustProbit) check(y float64) {
	if y != 1 && y != -1 {
		panic(fmt.Sprintf("multirater: RobustProbit: label %v is neither -1 nor +1", y))
	}
	if !(r.Eps >= 0 && r.Eps < 0.5) || !(r.S > 0) {
		panic(fmt.Sprintf("multirater: RobustProbit: Eps %v outside [0, 1/2) or S %v not positive", r.Eps, r.S))
	}
}

// at returns log Z = log(eps + (1 - 2 eps) Phi(z)), Phi(z) and the ratio
// q = (1 - 2 eps) phi(z) / Z, the derivative of log Z in z.
func (r RobustProbit) at(z float64) (logZ, phi, q float64) {
	lphi := numeric.LogNormCDF(z)
	lw := math.Log1p(-2*r.Eps) + lphi
	if r.Eps > 0 {
		logZ = logAddExp(math.Log(r.Eps), lw)
	} else {
		logZ = lw
	}
	q = math.Exp(math.Log1p(-2*r.Eps) + numeric.LogNormPDF(z) - logZ)
	return logZ, math.Exp(lphi), q
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogLik returns log p(y | f) and its first three derivatives in f.
func (r RobustProbit) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	r.check(y)
	s := r.S
	z := y * f / s
	lp, _, q := r.at(z)
	d1 = y * q / s
	d2 = -q * (z + q) / (s * s)
	d3 = y * q * ((z+q)*(z+2*q) - 1) / (s * s * s)
	return lp, d1, d2, d3
}

// Tilted returns log Z of p(y | f) N(f | mu, s2) and its first two
// derivatives in mu.
func (r RobustProbit) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	r.check(y)
	k := 1 / math.Sqrt(r.S*r.S+s2)
	z := y * mu * k
	logZ, _, q := r.at(z)
	return logZ, y * k * q, -k * k * q * (z + q)
}

// NumParams is 2: logit(2 Eps) and ln S.
func (RobustProbit) NumParams() int { return 2 }

// ParamsTo sets dst to (logit(2 Eps), ln S).
func (r RobustProbit) ParamsTo(dst []float64) []float64 {
	e2 := 2 * r.Eps
	dst[0] = math.Max(math.Log(e2)-math.Log1p(-e2), -1000)
	dst[1] = math.Log(r.S)
	return dst
}

// SetParams sets Eps and S from (logit(2 Eps), ln S).
func (r *RobustProbit) SetParams(p []float64) {
	r.Eps = 0.5 / (1 + math.Exp(-p[0]))
	if r.Eps >= 0.5 {
		r.Eps = math.Nextafter(0.5, 0)
	}
	r.S = math.Exp(p[1])
}

// dEps is d Eps / d logit(2 Eps).
func (r RobustProbit) dEps() float64 { return r.Eps * (1 - 2*r.Eps) }

// TiltedGradTo sets dst to the gradient of Tilted's log Z in
// (logit(2 Eps), ln S).
func (r RobustProbit) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	r.check(y)
	k2 := 1 / (r.S*r.S + s2)
	z := y * mu * math.Sqrt(k2)
	logZ, phi, q := r.at(z)
	dst[0] = r.dEps() * (1 - 2*phi) / math.Exp(logZ)
	dst[1] = -q * z * r.S * r.S * k2
	return dst
}

// LogLikGradTo sets dlp, dd1, dd2 to the gradients in (logit(2 Eps), ln S)
// of LogLik's lp, d1 and d2.
func (r RobustProbit) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	r.check(y)
	s := r.S
	z := y * f / s
	logZ, phi, q := r.at(z)
	// In Eps (then times dEps): d lp = (1 - 2 Phi)/Z, and
	// dq/dEps = -q (2/(1 - 2 Eps) + (1 - 2 Phi)/Z).
	g := (1 - 2*phi) / math.Exp(logZ)
	dq := -q * (2/(1-2*r.Eps) + g)
	de := r.dEps()
	dlp[0] = de * g
	dd1[0] = de * y * dq / s
	dd2[0] = -de * dq * (z + 2*q) / (s * s)
	// In ln S: dz = -z, dq = q z (z + q).
	dlp[1] = -q * z
	dd1[1] = y * q * (z*(z+q) - 1) / s
	dd2[1] = -q*z*((z+q)*(z+2*q)-1)/(s*s) + 2*q*(z+q)/(s*s)
}

// ErrorProb returns the probability that label y is a flip (the
// labelling-error component of the mixture) given that f ~ N(mu, s2), the
// site's cavity: eps (1 - Phi(z)) / (eps + (1 - 2 eps) Phi(z)), z = y mu /
// sqrt(S^2 + s2) (Kim & Ghahramani eq. 10's mixture read backwards).
func (r RobustProbit) ErrorProb(y, mu, s2 float64) float64 {
	r.check(y)
	if r.Eps == 0 {
		return 0
	}
	z := y * mu / math.Sqrt(r.S*r.S+s2)
	logZ, _, _ := r.at(z)
	return math.Exp(math.Log(r.Eps) + numeric.LogNormCDF(-z) - logZ)
}

// Prob returns P(y = +1) for a new label given f ~ N(mu, s2): eps + (1 -
// 2 eps) Phi(mu / sqrt(S^2 + s2)).
func (r RobustProbit) Prob(mu, s2 float64) float64 {
	return r.Eps + (1-2*r.Eps)*numeric.NormCDF(mu/math.Sqrt(r.S*r.S+s2))
}
