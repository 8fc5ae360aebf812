package lik

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// Phi is the standard normal CDF.
func Phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func boundedCases() []Bounded {
	return []Bounded{&Beta{Nu: 3}, &Beta{Nu: 40}, &TruncGauss{Nu: 3}, &TruncGauss{Nu: 25}, &Warped{Sigma: 0.3}, &Warped{Sigma: 1.5},
		&Shift{L: &Beta{Nu: 10}, B: 0.4}, &Shift{L: &TruncGauss{Nu: 8}, B: -0.3}}
}

// name returns a case's name with its parameter.
func caseName(l Bounded) string {
	p := l.ParamsTo(make([]float64, l.NumParams()))
	return fmt.Sprintf("%s/%.3g", l.Name(), p)
}

// TestBoundedDensityIntegratesToOne: ∫_0^1 p(y | f) dy = 1 (Legendre
// quadrature on (0, 1) in the probit scale z = Phi^-1(y), which resolves
// the beta's integrable endpoint singularities), and the CDF is its
// integral.
func TestBoundedDensityIntegratesToOne(t *testing.T) {
	for _, l := range boundedCases() {
		for _, f := range []float64{-2.5, -1, 0, 0.4, 1.7} {
			fb, inner := f, l
			if sh, ok := l.(*Shift); ok {
				fb, inner = f+sh.B, sh.L
			}
			if lo, hi := Phi(-8.2), Phi(8.2); l.CDF(lo, f) > 1e-9 || l.CDF(hi, f) < 1-1e-9 {
				// Mass beyond |z| = 8.2, where Phi(z) rounds to 0 or 1, is
				// beyond this test's grid.
				continue
			}
			if b, ok := inner.(*Beta); ok && b.Nu*math.Min(Phi(fb), Phi(-fb)) < 0.3 {
				// A shape parameter below 0.3 puts mass within 1e-15 of a
				// bound, beyond this test's grid.
				continue
			}
			// y = Phi(z), dy = phi(z) dz.
			dens := func(z float64) float64 {
				y := 0.5 * math.Erfc(-z/math.Sqrt2)
				if y <= 0 || y >= 1 {
					return 0
				}
				lp, _, _, _ := l.LogLik(y, f)
				return math.Exp(lp - 0.5*z*z - 0.5*math.Log(2*math.Pi))
			}
			total := quad.Fixed(dens, -15, 15, 4000, nil, 0)
			if math.Abs(total-1) > 1e-6 {
				t.Errorf("%s f=%v: density integrates to %v", caseName(l), f, total)
			}
			zq := 0.3
			part := quad.Fixed(dens, -15, zq, 4000, nil, 0)
			if c := l.CDF(0.5*math.Erfc(-zq/math.Sqrt2), f); math.Abs(c-part) > 1e-6 {
				t.Errorf("%s f=%v: CDF %v, integral %v", caseName(l), f, c, part)
			}
			// The conditional mean is the density's first moment.
			mean := quad.Fixed(func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) * dens(z) }, -15, 15, 4000, nil, 0)
			if m := l.Mean(f); math.Abs(m-mean) > 1e-6 {
				t.Errorf("%s f=%v: Mean %v, integral %v", caseName(l), f, m, mean)
			}
		}
	}
}

// LogLik's and Tilted's derivatives, the parameter gradients and Tilted
// against quadrature are checked by the conformance kit
// (multirater/lik/liktest) on these cases.

// TestPredictiveMeanClosedForm: the beta and warped models' closed-form
// predictive means equal the quadrature of E[y | f].
func TestPredictiveMeanClosedForm(t *testing.T) {
	for _, l := range boundedCases() {
		for _, c := range []struct{ mu, s2 float64 }{{0, 1}, {1.2, 0.3}, {-0.7, 4}} {
			got := PredictiveMean(l, c.mu, c.s2)
			want := quad.Fixed(func(f float64) float64 {
				r := (f - c.mu) / math.Sqrt(c.s2)
				return l.Mean(f) * math.Exp(-0.5*r*r) / math.Sqrt(2*math.Pi*c.s2)
			}, c.mu-12*math.Sqrt(c.s2), c.mu+12*math.Sqrt(c.s2), 2000, nil, 0)
			if math.Abs(got-want) > 1e-7 {
				t.Errorf("%s mu=%v s2=%v: predictive mean %v, quadrature %v", caseName(l), c.mu, c.s2, got, want)
			}
			// The quantile brackets the probability (the CDF may rise
			// steeply within 1e-9 of a bound).
			for _, p := range []float64{0.025, 0.5, 0.975} {
				q := PredictiveQuantile(l, p, c.mu, c.s2)
				if PredictiveCDF(l, math.Max(0, q-1e-8), c.mu, c.s2) > p+1e-9 || PredictiveCDF(l, math.Min(1, q+1e-8), c.mu, c.s2) < p-1e-9 {
					t.Errorf("%s mu=%v s2=%v: the %v quantile %v does not bracket it", caseName(l), c.mu, c.s2, p, q)
				}
			}
		}
	}
}

// TestPredictiveQuantileBisection checks the regula falsi quantile against
// plain bisection to 1e-10 (the rule it replaced), atoms of the normal
// likelihood at the bounds included.
func TestPredictiveQuantileBisection(t *testing.T) {
	ls := append(boundedCases(), &Normal{Sigma: 0.3})
	for _, l := range ls {
		for _, c := range []struct{ mu, s2 float64 }{{0, 1}, {1.2, 0.3}, {-0.7, 4}, {2.5, 0.01}, {-3, 0.5}} {
			for _, p := range []float64{0.025, 0.5, 0.975} {
				lo, hi := 0.0, 1.0
				for hi-lo > 1e-10 {
					if mid := 0.5 * (lo + hi); PredictiveCDF(l, mid, c.mu, c.s2) < p {
						lo = mid
					} else {
						hi = mid
					}
				}
				want := 0.5 * (lo + hi)
				if got := PredictiveQuantile(l, p, c.mu, c.s2); math.Abs(got-want) > 2e-9 {
					t.Errorf("%s mu=%v s2=%v: the %v quantile %v, bisection %v", caseName(l), c.mu, c.s2, p, got, want)
				}
			}
		}
	}
}

// TestPredictiveSecondMoment checks the beta model's closed form of
// E[y*^2] against ∫_0^1 2 y (1 - F(y)) dy (2000-node Gauss-Legendre).
func TestPredictiveSecondMoment(t *testing.T) {
	for _, nu := range []float64{0.5, 3, 20} {
		l := &Beta{Nu: nu}
		for _, c := range []struct{ mu, s2 float64 }{{0, 1}, {1.2, 0.3}, {-0.7, 4}, {2, 0.01}} {
			got, ok := PredictiveSecondMoment(l, c.mu, c.s2)
			want := quad.Fixed(func(y float64) float64 { return 2 * y * (1 - PredictiveCDF(l, y, c.mu, c.s2)) }, 0, 1, 2000, nil, 0)
			if !ok || math.Abs(got-want) > 1e-8 {
				t.Errorf("nu=%v mu=%v s2=%v: E[y^2] %v (%v), quadrature %v", nu, c.mu, c.s2, got, ok, want)
			}
		}
	}
	if _, ok := PredictiveSecondMoment(&Normal{Sigma: 0.2}, 0, 1); ok {
		t.Error("the normal likelihood has no closed form here")
	}
}
