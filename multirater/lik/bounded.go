package lik

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"concord/multirater/numeric"
)

// Bounded is the likelihood of a value y in (0, 1) (a bounded rating
// mapped from [LO, HI]): besides what the engines ask it gives the
// conditional mean and distribution function of y, for the consensus
// value on the user's scale and its predictive interval.
type Bounded interface {
	LaplaceLearnable
	// Mean returns E[y | f].
	Mean(f float64) float64
	// CDF returns P(Y <= y | f).
	CDF(y, f float64) float64
	// Name is the likelihood's name in the fit document (beta, truncnorm,
	// warped).
	Name() string
}

// fMax bounds |f| in the beta and truncated-Gaussian likelihoods: beyond
// it Phi(f) is within 1e-15 of 0 or 1 and the likelihood is flat (no
// observation strictly inside (0, 1) can be explained by a mean that
// close to a bound).
const fMax = 8

func checkUnit(name string, y float64) {
	if !(y > 0 && y < 1) {
		panic(fmt.Sprintf("multirater: %s: value %v outside (0, 1)", name, y))
	}
}

// Beta is Jensen et al.'s beta likelihood (sec. 3.3): y ~ Beta(Nu Phi(f),
// Nu (1 - Phi(f))), mean Phi(f), inverse dispersion Nu > 0. Its learnable
// parameter is ln Nu.
type Beta struct {
	Nu float64

	cacheNu, cacheLg float64 // ln Gamma(cacheNu)
}

// Name is "beta".
func (*Beta) Name() string { return "beta" }

// ab returns the shape parameters at f (clamped to [-fMax, fMax]), Phi(f)
// and phi(f) (0 beyond the clamp: the likelihood is flat there).
func (b *Beta) ab(f float64) (a, bb, p, ph, fc float64) {
	fc = math.Max(-fMax, math.Min(fMax, f))
	p, q := phiPair(fc)
	a, bb = b.Nu*p, b.Nu*q
	if fc == f {
		ph = math.Exp(-0.5*f*f) * invSqrt2Pi
	}
	return a, bb, p, ph, fc
}

// phiPair returns Phi(f) and 1 - Phi(f), each accurate, from one erfc.
func phiPair(f float64) (p, q float64) {
	if f < 0 {
		p = numeric.NormCDF(f)
		return p, 1 - p
	}
	q = numeric.NormCDF(-f)
	return 1 - q, q
}

// lgNu returns ln Gamma(Nu), cached.
func (b *Beta) lgNu() float64 {
	if b.cacheNu != b.Nu || b.Nu == 0 {
		b.cacheLg, _ = math.Lgamma(b.Nu)
		b.cacheNu = b.Nu
	}
	return b.cacheLg
}

func (b *Beta) logp(y, f float64) float64 {
	return betaLogp(b.Nu, b.lgNu(), math.Log(y), math.Log1p(-y), f)
}

// logpAt returns f -> log p(y | f) with log y, log(1 - y) and
// ln Gamma(Nu) computed once (the quadrature's many nodes).
func (b *Beta) logpAt(y float64) func(f float64) float64 {
	ly, l1y, lg, nu := math.Log(y), math.Log1p(-y), b.lgNu(), b.Nu
	return func(f float64) float64 { return betaLogp(nu, lg, ly, l1y, f) }
}

// betaLogp is log Beta(y | nu Phi(f), nu (1 - Phi(f))) from ln Gamma(nu),
// log y and log(1 - y).
func betaLogp(nu, lgNu, ly, l1y, f float64) float64 {
	fc := math.Max(-fMax, math.Min(fMax, f))
	p, q := phiPair(fc)
	a, bb := nu*p, nu*q
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(bb)
	return lgNu - la - lb + (a-1)*ly + (bb-1)*l1y
}

// trigamma is psi_1(x) (numeric.Trigamma for x > 0, zeta(2, x) otherwise);
// tetragamma psi_2(x) = -2 zeta(3, x).
func trigamma(x float64) float64 {
	if x > 0 {
		return numeric.Trigamma(x)
	}
	return mathext.Zeta(2, x)
}
func tetragamma(x float64) float64 { return -2 * mathext.Zeta(3, x) }

// LogLik returns log Beta(y | Nu Phi(f), Nu (1 - Phi(f))) and its
// derivatives in f (Jensen et al. sec. 4.1): with T = logit y - psi(a) +
// psi(b) and S = psi_1(a) + psi_1(b), d1 = Nu phi T and
// d2 = -Nu f phi T - Nu^2 phi^2 S.
func (b *Beta) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	lp, d1, d2, t, s, ok := b.logLikTerms(y, f)
	if !ok {
		return lp, 0, 0, 0
	}
	a, bb, _, ph, fc := b.ab(f)
	nu := b.Nu
	tp := -nu * ph * s                               // dT/df
	sp := nu * ph * (tetragamma(a) - tetragamma(bb)) // dS/df
	d3 = -nu*ph*t*(1-fc*fc) - nu*fc*ph*tp - nu*nu*(-2*fc*ph*ph*s+ph*ph*sp)
	return lp, d1, d2, d3
}

// logLikTerms returns LogLik's lp, d1 and d2 and the terms T and S of
// d1 and d2; ok is false beyond the clamp (d1 = d2 = 0).
func (b *Beta) logLikTerms(y, f float64) (lp, d1, d2, t, s float64, ok bool) {
	checkUnit("Beta", y)
	lp = b.logp(y, f)
	d1, d2, t, s, ok = b.derivTerms(y, f)
	return lp, d1, d2, t, s, ok
}

// derivTerms is logLikTerms without lp.
func (b *Beta) derivTerms(y, f float64) (d1, d2, t, s float64, ok bool) {
	a, bb, _, ph, fc := b.ab(f)
	if ph == 0 {
		return 0, 0, 0, 0, false
	}
	nu := b.Nu
	t = math.Log(y) - math.Log1p(-y) - mathext.Digamma(a) + mathext.Digamma(bb)
	s = trigamma(a) + trigamma(bb)
	d1 = nu * ph * t
	d2 = -nu*fc*ph*t - nu*nu*ph*ph*s
	return d1, d2, t, s, true
}

// derivs2 returns LogLik's d1 and d2 alone (tiltedMode has lp already).
func (b *Beta) derivs2(y, f float64) (d1, d2 float64) {
	d1, d2, _, _, _ = b.derivTerms(y, f)
	return d1, d2
}

// logLik2 is LogLik without d3 (no tetragamma).
func (b *Beta) logLik2(y, f float64) (lp, d1, d2 float64) {
	lp, d1, d2, _, _, _ = b.logLikTerms(y, f)
	return lp, d1, d2
}

// Tilted returns the tilted normaliser by quadrature (Jensen et al. eq. 4-6).
func (b *Beta) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	checkUnit("Beta", y)
	return tiltedDerivs(b, y, mu, s2)
}

// NumParams is 1: ln Nu.
func (*Beta) NumParams() int { return 1 }

// ParamsTo sets dst[0] = ln Nu.
func (b *Beta) ParamsTo(dst []float64) []float64 { dst[0] = math.Log(b.Nu); return dst }

// SetParams sets Nu = exp(p[0]).
func (b *Beta) SetParams(p []float64) { b.Nu = math.Exp(p[0]) }

// LogLikGradTo sets the gradients in ln Nu of LogLik's lp, d1 and d2.
func (b *Beta) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	a, bb, p, ph, fc := b.ab(f)
	nu := b.Nu
	pa, pb := mathext.Digamma(a), mathext.Digamma(bb)
	ly, l1y := math.Log(y), math.Log1p(-y)
	dlp[0] = nu * (mathext.Digamma(nu) - p*pa - (1-p)*pb + p*ly + (1-p)*l1y)
	if ph == 0 {
		dd1[0], dd2[0] = 0, 0
		return
	}
	t := ly - l1y - pa + pb
	ta, tb := trigamma(a), trigamma(bb)
	s := ta + tb
	dt := -a*ta + bb*tb                       // dT/d ln Nu
	ds := a*tetragamma(a) + bb*tetragamma(bb) // dS/d ln Nu
	dd1[0] = nu*ph*t + nu*ph*dt
	dd2[0] = -nu*fc*ph*t - nu*fc*ph*dt - 2*nu*nu*ph*ph*s - nu*nu*ph*ph*ds
}

// dlogp returns d log p / d ln Nu (LogLikGradTo's dlp alone, without the
// polygamma functions of the other two).
func (b *Beta) dlogp(y, f float64) float64 { return b.dlogpAt(y)(f) }

// dlogpAt returns f -> dlogp(y, f) with psi(Nu), log y and log(1 - y)
// computed once (the quadrature's many nodes), bit for bit dlogp's.
func (b *Beta) dlogpAt(y float64) func(f float64) float64 {
	nu, dg, ly, l1y := b.Nu, mathext.Digamma(b.Nu), math.Log(y), math.Log1p(-y)
	return func(f float64) float64 {
		a, bb, p, _, _ := b.ab(f)
		return nu * (dg - p*mathext.Digamma(a) - (1-p)*mathext.Digamma(bb) + p*ly + (1-p)*l1y)
	}
}

// TiltedGradTo sets dst[0] to d log Z / d ln Nu = E_tilted[d log p / d ln Nu].
func (b *Beta) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	b.TiltedLogZGradTo(dst, y, mu, s2)
	return dst
}

// TiltedLogZGradTo sets dst[0] as TiltedGradTo does and returns Tilted's
// log Z, from the same quadrature (lik.TiltedGrader).
func (b *Beta) TiltedLogZGradTo(dst []float64, y, mu, s2 float64) float64 {
	if s2 <= 0 {
		lp, _, _, _ := b.LogLik(y, mu)
		dst[0] = b.dlogp(y, mu)
		return lp
	}
	checkUnit("Beta", y)
	dlogp := b.dlogpAt(y)
	lz, _, _ := tilted(b, y, mu, s2, dst, func(g []float64, _, f float64) { g[0] = dlogp(f) })
	return lz
}

// Mean returns Phi(f).
func (b *Beta) Mean(f float64) float64 { return numeric.NormCDF(f) }

// CDF returns the regularised incomplete beta function I_y(a, b).
func (b *Beta) CDF(y, f float64) float64 {
	a, bb, _, _, _ := b.ab(f)
	return mathext.RegIncBeta(a, bb, y)
}

// TruncGauss is Jensen et al.'s truncated-Gaussian likelihood (eq. 1): y on
// [0, 1] is N(Phi(f), 1/Nu^2) truncated to [0, 1], so that Phi(f) is its
// mode; Nu > 0 is the inverse of the untruncated sd. Its learnable
// parameter is ln Nu. The normaliser Phi(Nu(1 - m)) - Phi(-Nu m) is
// OrdinalProbit's level between thresholds 0 and 1 with sigma = 1/Nu,
// whose derivatives it reuses.
type TruncGauss struct {
	Nu float64
}

// Name is "truncnorm".
func (TruncGauss) Name() string { return "truncnorm" }

// unitB are the normaliser's thresholds 0 and 1 (read only).
var unitB = []float64{0, 1}

func (t TruncGauss) norm() OrdinalProbit { return OrdinalProbit{B: unitB, Sigma: 1 / t.Nu} }

func (t TruncGauss) logp(y, f float64) float64 {
	m := numeric.NormCDF(math.Max(-fMax, math.Min(fMax, f)))
	_, _, lz, _, _ := t.norm().terms(1, m, 1/t.Nu)
	r := t.Nu * (y - m)
	return math.Log(t.Nu) - 0.5*math.Log(2*math.Pi) - 0.5*r*r - lz
}

// LogLik returns log p(y | f) of eq. 1 and its derivatives in f: with
// h(m) = ln Nu - ln sqrt(2 pi) - Nu^2 (y - m)^2/2 - L(m), L the log
// normaliser, and m = Phi(f), by the chain rule.
func (t TruncGauss) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	checkUnit("TruncGauss", y)
	lp = t.logp(y, f)
	if math.Abs(f) > fMax {
		return lp, 0, 0, 0
	}
	m := numeric.NormCDF(f)
	_, l1, l2, l3 := t.norm().LogLik(1, m)
	nu2 := t.Nu * t.Nu
	h1, h2, h3 := nu2*(y-m)-l1, -nu2-l2, -l3
	ph := math.Exp(-0.5*f*f) * invSqrt2Pi
	m1, m2, m3 := ph, -f*ph, (f*f-1)*ph
	d1 = h1 * m1
	d2 = h2*m1*m1 + h1*m2
	d3 = h3*m1*m1*m1 + 3*h2*m1*m2 + h1*m3
	return lp, d1, d2, d3
}

// Tilted returns the tilted normaliser by quadrature (Jensen et al. eq. 4-6).
func (t TruncGauss) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	checkUnit("TruncGauss", y)
	return tiltedDerivs(t, y, mu, s2)
}

// NumParams is 1: ln Nu.
func (TruncGauss) NumParams() int { return 1 }

// ParamsTo sets dst[0] = ln Nu.
func (t TruncGauss) ParamsTo(dst []float64) []float64 { dst[0] = math.Log(t.Nu); return dst }

// SetParams sets Nu = exp(p[0]).
func (t *TruncGauss) SetParams(p []float64) { t.Nu = math.Exp(p[0]) }

// LogLikGradTo sets the gradients in ln Nu of LogLik's lp, d1 and d2 (the
// normaliser's through OrdinalProbit's gradient in ln sigma = -ln Nu).
func (t TruncGauss) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	fc := math.Max(-fMax, math.Min(fMax, f))
	m := numeric.NormCDF(fc)
	var gl, g1, g2 [3]float64
	t.norm().LogLikGradTo(gl[:], g1[:], g2[:], 1, m)
	nu2 := t.Nu * t.Nu
	dlp[0] = 1 - nu2*(y-m)*(y-m) + gl[2]
	if fc != f {
		dd1[0], dd2[0] = 0, 0
		return
	}
	dh1 := 2*nu2*(y-m) + g1[2]
	dh2 := -2*nu2 + g2[2]
	ph := math.Exp(-0.5*f*f) * invSqrt2Pi
	dd1[0] = dh1 * ph
	dd2[0] = dh2*ph*ph - dh1*f*ph
}

// TiltedGradTo sets dst[0] to d log Z / d ln Nu = E_tilted[d log p / d ln Nu].
func (t TruncGauss) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	grad := func(g []float64, y, f float64) {
		var d1, d2 [1]float64
		t.LogLikGradTo(g, d1[:], d2[:], y, f)
	}
	if s2 <= 0 {
		grad(dst, y, mu)
		return dst
	}
	tilted(t, y, mu, s2, dst, grad)
	return dst
}

// Mean returns the truncated normal's mean (Jensen et al. eq. 2).
func (t TruncGauss) Mean(f float64) float64 {
	m := numeric.NormCDF(math.Max(-fMax, math.Min(fMax, f)))
	_, _, _, rlo, rhi := t.norm().terms(1, m, 1/t.Nu)
	return m + (rlo-rhi)/t.Nu
}

// CDF returns (Phi(Nu(y - m)) - Phi(-Nu m)) / (Phi(Nu(1 - m)) - Phi(-Nu m)).
func (t TruncGauss) CDF(y, f float64) float64 {
	if y <= 0 {
		return 0
	}
	if y >= 1 {
		return 1
	}
	m := numeric.NormCDF(math.Max(-fMax, math.Min(fMax, f)))
	_, _, lz, _, _ := t.norm().terms(1, m, 1/t.Nu)
	return math.Exp(numeric.LogPhiDiff(-t.Nu*m, t.Nu*(y-m)) - lz)
}

// Warped is the warped GP with the fixed probit warping (Jensen et al. sec.
// 3.1; Snelson et al.): z = Phi^-1(y) is N(f, Sigma^2), so that
// p(y | f) = N(z | f, Sigma^2) / N(z | 0, 1) (the Jacobian dz/dy, NOTES:
// the paper prints it wrongly). The likelihood is Gaussian in f: EP and
// Laplace are exact and the evidence is the Gaussian one plus the
// Jacobian. Its learnable parameter is ln Sigma.
type Warped struct {
	Sigma float64
}

// Name is "warped".
func (Warped) Name() string { return "warped" }

// z returns Phi^-1(y), accurate in both tails (Erfinv(2y - 1) loses y
// below 1e-16 to rounding).
func (w Warped) z(y float64) float64 {
	checkUnit("Warped", y)
	return distuv.UnitNormal.Quantile(y)
}

func (w Warped) logp(y, f float64) float64 {
	lp, _, _, _ := w.LogLik(y, f)
	return lp
}

// LogLik returns log N(z | f, Sigma^2) - log N(z | 0, 1) and its
// derivatives in f.
func (w Warped) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	z := w.z(y)
	s2 := w.Sigma * w.Sigma
	r := z - f
	lp = -0.5*math.Log(2*math.Pi*s2) - 0.5*r*r/s2 + 0.5*math.Log(2*math.Pi) + 0.5*z*z
	return lp, r / s2, -1 / s2, 0
}

// Tilted returns the exact Gaussian normaliser N(z | mu, Sigma^2 + s2)
// times the Jacobian.
func (w Warped) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	z := w.z(y)
	v := w.Sigma*w.Sigma + s2
	r := z - mu
	logZ = -0.5*math.Log(v) - 0.5*r*r/v + 0.5*z*z
	return logZ, r / v, -1 / v
}

// NumParams is 1: ln Sigma.
func (Warped) NumParams() int { return 1 }

// ParamsTo sets dst[0] = ln Sigma.
func (w Warped) ParamsTo(dst []float64) []float64 { dst[0] = math.Log(w.Sigma); return dst }

// SetParams sets Sigma = exp(p[0]).
func (w *Warped) SetParams(p []float64) { w.Sigma = math.Exp(p[0]) }

// LogLikGradTo sets the gradients in ln Sigma of LogLik's lp, d1 and d2.
func (w Warped) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	r := w.z(y) - f
	s2 := w.Sigma * w.Sigma
	dlp[0] = -1 + r*r/s2
	dd1[0] = -2 * r / s2
	dd2[0] = 2 / s2
}

// TiltedGradTo sets dst[0] to d log Z / d ln Sigma = 2 Sigma^2 d log Z / d v,
// v = Sigma^2 + s2.
func (w Warped) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	r := w.z(y) - mu
	v := w.Sigma*w.Sigma + s2
	dst[0] = 2 * w.Sigma * w.Sigma * (-0.5/v + 0.5*r*r/(v*v))
	return dst
}

// Mean returns E[Phi(z)] = Phi(f / sqrt(1 + Sigma^2)).
func (w Warped) Mean(f float64) float64 {
	return numeric.NormCDF(f / math.Sqrt(1+w.Sigma*w.Sigma))
}

// CDF returns Phi((Phi^-1(y) - f)/Sigma).
func (w Warped) CDF(y, f float64) float64 {
	if y <= 0 {
		return 0
	}
	if y >= 1 {
		return 1
	}
	return numeric.NormCDF((w.z(y) - f) / w.Sigma)
}

// PredictiveMean returns E[y*] under f* ~ N(mu, s2): Phi(mu/sqrt(1 + s2))
// for the beta model (Jensen et al. sec. 4.3), Phi(mu/sqrt(1 + s2 +
// Sigma^2)) for the warped one (NOTES: the printed formula lacks Sigma^2),
// and by quadrature otherwise.
func PredictiveMean(l Bounded, mu, s2 float64) float64 {
	switch w := l.(type) {
	case *Beta:
		return numeric.NormCDF(mu / math.Sqrt(1+s2))
	case *Warped:
		return numeric.NormCDF(mu / math.Sqrt(1+s2+w.Sigma*w.Sigma))
	}
	return predQuad(mu, s2, l.Mean)
}

// PredictiveSecondMoment returns E[y*^2] under f* ~ N(mu, s2) and true
// where E[y^2 | f] has a closed form: the beta model's variance plus
// squared mean, Phi(f) (Nu Phi(f) + 1) / (Nu + 1), averaged by quadrature;
// false otherwise.
func PredictiveSecondMoment(l Bounded, mu, s2 float64) (float64, bool) {
	b, ok := l.(*Beta)
	if !ok {
		return 0, false
	}
	nu := b.Nu
	return predQuad(mu, s2, func(f float64) float64 {
		p := numeric.NormCDF(f)
		return p * (nu*p + 1) / (nu + 1)
	}), true
}

// predRule is the Gauss-Hermite rule of the predictive integrals.
var predRule = numeric.NewGHRule(48)

// predQuad returns E[h(f)] under N(mu, s2), by Gauss-Legendre quadrature
// on mu ± 10 sd in panels split at ±fMax, where the likelihoods' clamp
// makes h kink, and by Gauss-Hermite when no kink is within reach.
func predQuad(mu, s2 float64, h func(f float64) float64) float64 {
	sd := math.Sqrt(s2)
	if sd == 0 {
		return h(mu)
	}
	lo, hi := mu-10*sd, mu+10*sd
	cuts := []float64{lo}
	for _, c := range []float64{-fMax, fMax} {
		if c > lo && c < hi {
			cuts = append(cuts, c)
		}
	}
	cuts = append(cuts, hi)
	v := 0.0
	if len(cuts) == 2 {
		// Smooth: Gauss-Hermite.
		for i, u := range predRule.X {
			v += predRule.W[i] * h(mu+sd*u)
		}
		return v
	}
	for k := 0; k+1 < len(cuts); k++ {
		// Each smooth piece in 8 Gauss-Legendre panels.
		for p := 0; p < 8; p++ {
			w := (cuts[k+1] - cuts[k]) / 8
			a := cuts[k] + float64(p)*w
			for i, x := range legX {
				f := a + w*x
				r := (f - mu) / sd
				v += w * legW[i] * math.Exp(-0.5*r*r) / (sd * math.Sqrt(2*math.Pi)) * h(f)
			}
		}
	}
	return v
}

// PredictiveCDF returns P(y* <= y) under f* ~ N(mu, s2).
func PredictiveCDF(l Bounded, y, mu, s2 float64) float64 {
	if w, ok := l.(*Warped); ok {
		// z* = Phi^-1(y*) is N(mu, s2 + Sigma^2).
		if y <= 0 || y >= 1 {
			return math.Max(0, math.Min(1, y))
		}
		return numeric.NormCDF((w.z(y) - mu) / math.Sqrt(s2+w.Sigma*w.Sigma))
	}
	return predQuad(mu, s2, func(f float64) float64 { return l.CDF(y, f) })
}

// PredictiveQuantile returns the p-quantile of y* under f* ~ N(mu, s2), to
// 1e-9: the Illinois variant of regula falsi on PredictiveCDF (Dowell &
// Jarratt 1971), whose bracket shrinks on both sides, with a bisection
// step whenever two steps have not halved the bracket (an atom or a flat
// stretch of the CDF), so that it never takes longer than bisection.
func PredictiveQuantile(l Bounded, p, mu, s2 float64) float64 {
	lo, hi := 0.0, 1.0
	flo, fhi := -p, 1-p // F - p at the ends (no atoms assumed: only the steps use them)
	side, width := 0, 1.0
	for it := 0; hi-lo > 1e-9; it++ {
		x := lo + (hi-lo)*flo/(flo-fhi)
		if it%2 == 0 {
			if hi-lo > width/2 || !(x > lo && x < hi) {
				x = 0.5 * (lo + hi)
			}
			width = hi - lo
		} else if !(x > lo && x < hi) {
			x = 0.5 * (lo + hi)
		}
		fx := PredictiveCDF(l, x, mu, s2) - p
		if fx < 0 {
			lo, flo = x, fx
			if side < 0 {
				fhi /= 2
			}
			side = -1
		} else {
			hi, fhi = x, fx
			if side > 0 {
				flo /= 2
			}
			side = 1
		}
		if fx == 0 {
			return x
		}
	}
	return 0.5 * (lo + hi)
}
