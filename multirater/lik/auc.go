package lik

import (
	"fmt"
	"math"

	"concord/multirater/numeric"
)

// AUCStep is the site of one (positive, negative) pair of Ridgway et al.'s
// AUC pseudo-posterior (sec. 2.1 and 3.3, with the sign of sec. 2.1 and 3.3:
// the sign printed in sec. 3.4 and 4 is a typo),
//
//	t(x) = exp(-C 1{x < 0}),  x = s_i - s_j,  C = gamma / (n+ n-),
//
// for i positive and j negative: a misordered pair costs C. Y is not read.
//
// The tilted normaliser under x ~ N(mu, s2) has the closed form
//
//	Z = e^{-C} + (1 - e^{-C}) Phi(z),  z = mu / sqrt(s2),
//
// computed as log Z = logaddexp(-C, log(1 - e^{-C}) + log Phi(z)), with
// derivatives in mu
//
//	d1 = (1 - e^{-C}) phi(z) / (sqrt(s2) Z),   d2 = -d1 (z / sqrt(s2) + d1),
//
// (so the tilted mean is mu + s2 d1 and the tilted variance s2 + s2^2 d2).
// The site is not log-concave: for z well below 0 the normaliser flattens
// to e^{-C}, d2 turns positive and the tilted variance exceeds the
// cavity's, so that an EP site precision can be negative (ep.RunPairs
// keeps such sites while the posterior stays proper).
//
// The step has no useful derivatives: LogLik returns lp = -C 1{f < 0} and
// zero derivatives (Laplace's method cannot use this likelihood).
//
// NewAUCStep keeps log(1 - e^{-C}), e^{-C} and 1 - e^{-C} with the site,
// which Tilted and TiltedDerivs would otherwise compute on every call (an
// AUC fit makes one call per pair and sweep, n+ n- pairs).
type AUCStep struct {
	C float64
	// l1 is log(1 - e^{-l1C}), e0 and e1 are e^{-l1C} and 1 - e^{-l1C},
	// when hasL1 (NewAUCStep): Tilted and TiltedDerivs use them while C is
	// still l1C.
	l1, l1C, e0, e1 float64
	hasL1           bool
}

// NewAUCStep returns the step of cost c with log(1 - e^{-c}), e^{-c} and
// 1 - e^{-c} computed once.
func NewAUCStep(c float64) AUCStep {
	a := AUCStep{C: c}
	a.check()
	a.e1 = -math.Expm1(-c)
	a.l1, a.l1C, a.e0, a.hasL1 = math.Log(a.e1), c, math.Exp(-c), true
	return a
}

// aucDirectMaxC is the largest C for which TiltedDerivs uses the direct
// form: Z >= e^{-C} > 1e-13 cannot underflow there.
const aucDirectMaxC = 30

// TiltedDerivs returns Tilted's d1 and d2 without log Z, in the direct
// form Z = e^{-C} + (1 - e^{-C}) Phi(z) (two positive terms, no
// cancellation), d1 = (1 - e^{-C}) phi(z) / (sqrt(s2) Z),
// d2 = -d1 (z / sqrt(s2) + d1): one erfc and one exp instead of Tilted's
// logarithms (Ridgway et al. sec. 3.3's site update needs only these).
// They agree with Tilted's to a few ulps (TestAUCStepTiltedDerivs); for
// C > 30 it returns Tilted's.
func (a AUCStep) TiltedDerivs(y, mu, s2 float64) (d1, d2 float64) {
	if a.C == 0 || s2 == 0 || a.C > aucDirectMaxC {
		_, d1, d2 = a.Tilted(y, mu, s2)
		return d1, d2
	}
	e0, e1 := a.e0, a.e1
	if !a.hasL1 || a.l1C != a.C {
		a.check()
		e1 = -math.Expm1(-a.C)
		e0 = math.Exp(-a.C)
	}
	s := math.Sqrt(s2)
	z := mu / s
	// phi(z) / Z; Phi(z) = erfc(-z/sqrt 2) / 2.
	zn := e0 + e1*0.5*math.Erfc(-z/math.Sqrt2)
	d1 = e1 * math.Exp(-0.5*z*z) / (math.Sqrt(2*math.Pi) * s * zn)
	d2 = -d1 * (z/s + d1)
	return d1, d2
}

func (a AUCStep) check() {
	if !(a.C >= 0) || math.IsInf(a.C, 0) {
		panic(fmt.Sprintf("multirater: AUCStep: C = %v must be finite and >= 0", a.C))
	}
}

// LogLik returns log t(f) = -C 1{f < 0} and zero derivatives.
func (a AUCStep) LogLik(_, f float64) (lp, d1, d2, d3 float64) {
	a.check()
	if f < 0 {
		return -a.C, 0, 0, 0
	}
	return 0, 0, 0, 0
}

// Tilted returns log Z and its first two derivatives in mu (see the type's
// documentation). s2 = 0 gives the step itself.
func (a AUCStep) Tilted(_, mu, s2 float64) (logZ, d1, d2 float64) {
	a.check()
	if a.C == 0 {
		return 0, 0, 0
	}
	if s2 == 0 {
		lp, _, _, _ := a.LogLik(0, mu)
		return lp, 0, 0
	}
	s := math.Sqrt(s2)
	z := mu / s
	l1 := a.l1 // log(1 - e^{-C})
	if !a.hasL1 || a.l1C != a.C {
		l1 = math.Log(-math.Expm1(-a.C))
	}
	lphi := numeric.LogNormCDF(z)
	u, w := -a.C, l1+lphi
	if u < w {
		u, w = w, u
	}
	logZ = u + math.Log1p(math.Exp(w-u))
	d1 = math.Exp(l1+numeric.LogNormPDF(z)-logZ) / s
	d2 = -d1 * (z/s + d1)
	return logZ, d1, d2
}
