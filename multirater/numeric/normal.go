// Package numeric holds the numerical building blocks of the multi-rater
// models: truncated normal sampling, stable normal CDF logarithms,
// Gauss-Hermite rules, rounding to significant digits and a parallel loop
// over independent indices. It imports nothing of concord.
package numeric

import (
	"math"

	"gonum.org/v1/gonum/integrate/quad"
)

// GHRule is a Gauss-Hermite rule for the standard normal weight:
// E[f(u)] ≈ sum_i W_i f(X_i).
type GHRule struct {
	X, W []float64
}

// NewGHRule returns the q-node Gauss-Hermite rule for the standard normal
// weight (gonum's rule for exp(-x^2), rescaled).
func NewGHRule(q int) *GHRule {
	r := &GHRule{X: make([]float64, q), W: make([]float64, q)}
	// gonum's rule is for the weight exp(-x^2).
	quad.Hermite{}.FixedLocations(r.X, r.W, math.Inf(-1), math.Inf(1))
	for i := range r.X {
		r.X[i] *= math.Sqrt2
		r.W[i] /= math.Sqrt(math.Pi)
	}
	return r
}

// NormCDF returns Phi(x), accurate in both tails.
func NormCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// MillsLower returns R(x) = phi(x)/Phi(x).
func MillsLower(x float64) float64 {
	if x > -30 {
		return math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi) / NormCDF(x)
	}
	// Phi(x) = phi(x)/|x| (1 - 1/x^2 + 3/x^4 - ... + 10395/x^12).
	x2 := 1 / (x * x)
	return -x / (1 - x2*(1-3*x2*(1-5*x2*(1-7*x2*(1-9*x2*(1-11*x2))))))
}

// LogNormCDF returns log Phi(x), accurate in both tails. For x > 0 it is
// log(1 - Q), Q = Phi(-x): by its series when Q < 1e-4 (error below
// Q^4/4 < 3e-17 relative), 0 when Q < 5e-17 (x > 8.3), else by log(1 - Q),
// whose rounding error is below 1e-16/Q relative.
func LogNormCDF(x float64) float64 {
	switch {
	case x > PhiOne:
		return 0
	case x > 0:
		q := 0.5 * math.Erfc(x/math.Sqrt2)
		if q < 1e-4 {
			return -q * (1 + q*(0.5+q/3))
		}
		return math.Log(1 - q)
	case x > -37:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	// Phi(x) = phi(x)/|x| (1 - 1/x^2 + 3/x^4 - 15/x^6 + ... + 10395/x^12),
	// whose next term is below 2e-17 for |x| >= 37.
	x2 := 1 / (x * x)
	s := x2 * (1 - 3*x2*(1-5*x2*(1-7*x2*(1-9*x2*(1-11*x2)))))
	return -0.5*x*x - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log1p(-s)
}

// PhiOne is the argument above which Phi rounds to 1.
const PhiOne = 8.3

// Dot returns sum_i a_i b_i, summed in order (unlike gonum's floats.Dot,
// whose assembly may sum in another order: the samplers' draws depend on
// the rounding).
func Dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// LogPhiDiff returns log(Phi(b) - Phi(a)) for a <= b (either may be
// infinite), accurate in both tails: where both bounds lie in one tail the
// difference is taken between the logarithms of the smaller tail
// probabilities (Phi(b) - Phi(a) = Phi(-a) - Phi(-b)), so that no
// probability is subtracted from a number close to 1. It returns -Inf when
// a == b and panics if a > b or either is NaN.
func LogPhiDiff(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || a > b {
		panic("multirater: LogPhiDiff: need a <= b")
	}
	if a == b {
		return math.Inf(-1)
	}
	if a > 0 {
		// Both in the upper tail: Phi(-a) - Phi(-b), with -b < -a < 0.
		a, b = -b, -a
	}
	if b <= 0 {
		// Phi(b) - Phi(a) = Phi(b) (1 - Phi(a)/Phi(b)), a < b <= 0.
		lb := LogNormCDF(b)
		if math.IsInf(a, -1) {
			return lb
		}
		return lb + log1mExp(LogNormCDF(a)-lb)
	}
	// a <= 0 < b: the central mass, at least min(Phi(b) - 1/2, 1/2 -
	// Phi(a)); erf is accurate near 0.
	return math.Log(0.5 * (math.Erf(b/math.Sqrt2) - math.Erf(a/math.Sqrt2)))
}

// log1mExp returns log(1 - e^x) for x <= 0 (Mächler 2012).
func log1mExp(x float64) float64 {
	if x > -math.Ln2 {
		return math.Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// LogNormPDF returns log phi(x), the standard normal log density.
func LogNormPDF(x float64) float64 {
	return -0.5*x*x - 0.5*math.Log(2*math.Pi)
}
