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

// TestBoundedDerivatives: LogLik's derivatives in f, LogLikGradTo's in the
// parameter, Tilted's in mu and TiltedGradTo against central finite
// differences.
func TestBoundedDerivatives(t *testing.T) {
	const h = 1e-5
	for _, l := range boundedCases() {
		for _, y := range []float64{0.02, 0.3, 0.55, 0.93} {
			for _, f := range []float64{-2, -0.3, 0.8, 2.5} {
				_, d1, d2, d3 := l.LogLik(y, f)
				lpP, d1P, d2P, _ := l.LogLik(y, f+h)
				lpM, d1M, d2M, _ := l.LogLik(y, f-h)
				fd := [3]float64{(lpP - lpM) / (2 * h), (d1P - d1M) / (2 * h), (d2P - d2M) / (2 * h)}
				for k, an := range [3]float64{d1, d2, d3} {
					if math.Abs(an-fd[k]) > 1e-5*(1+math.Abs(an)) {
						t.Errorf("%s y=%v f=%v: d%d = %v, finite difference %v", caseName(l), y, f, k+1, an, fd[k])
					}
				}
				// Parameter gradients.
				np := l.NumParams()
				dlp, dd1, dd2 := make([]float64, np), make([]float64, np), make([]float64, np)
				l.LogLikGradTo(dlp, dd1, dd2, y, f)
				p := l.ParamsTo(make([]float64, np))
				for i := range p {
					q := append([]float64(nil), p...)
					q[i] = p[i] + h
					l.SetParams(q)
					lpP, d1P, d2P, _ = l.LogLik(y, f)
					q[i] = p[i] - h
					l.SetParams(q)
					lpM, d1M, d2M, _ = l.LogLik(y, f)
					l.SetParams(p)
					fd = [3]float64{(lpP - lpM) / (2 * h), (d1P - d1M) / (2 * h), (d2P - d2M) / (2 * h)}
					for k, an := range [3]float64{dlp[i], dd1[i], dd2[i]} {
						if math.Abs(an-fd[k]) > 1e-5*(1+math.Abs(an)) {
							t.Errorf("%s y=%v f=%v: parameter %d gradient %d = %v, finite difference %v", caseName(l), y, f, i, k, an, fd[k])
						}
					}
				}
				// Tilted in mu and in the parameter.
				for _, s2 := range []float64{0.05, 1, 4} {
					lz, t1, t2 := l.Tilted(y, f, s2)
					lzP, t1P, _ := l.Tilted(y, f+h, s2)
					lzM, t1M, _ := l.Tilted(y, f-h, s2)
					if fd := (lzP - lzM) / (2 * h); math.Abs(t1-fd) > 1e-5*(1+math.Abs(t1)) {
						t.Errorf("%s y=%v mu=%v s2=%v: tilted d1 = %v, finite difference %v", caseName(l), y, f, s2, t1, fd)
					}
					if fd := (t1P - t1M) / (2 * h); math.Abs(t2-fd) > 1e-4*(1+math.Abs(t2)) {
						t.Errorf("%s y=%v mu=%v s2=%v: tilted d2 = %v, finite difference %v", caseName(l), y, f, s2, t2, fd)
					}
					g := l.TiltedGradTo(make([]float64, np), y, f, s2)
					for i := range p {
						q := append([]float64(nil), p...)
						q[i] = p[i] + h
						l.SetParams(q)
						lzP, _, _ = l.Tilted(y, f, s2)
						q[i] = p[i] - h
						l.SetParams(q)
						lzM, _, _ = l.Tilted(y, f, s2)
						l.SetParams(p)
						if fd := (lzP - lzM) / (2 * h); math.Abs(g[i]-fd) > 1e-5*(1+math.Abs(g[i])) {
							t.Errorf("%s y=%v mu=%v s2=%v: tilted parameter %d gradient %v, finite difference %v", caseName(l), y, f, s2, i, g[i], fd)
						}
					}
					_ = lz
				}
			}
		}
	}
}

// TestBoundedTiltedMatchesIntegral: the quadrature's log Z, mean and
// variance against adaptive-free dense Legendre integration over f.
func TestBoundedTiltedMatchesIntegral(t *testing.T) {
	for _, l := range boundedCases() {
		for _, y := range []float64{0.01, 0.4, 0.97} {
			for _, c := range []struct{ mu, s2 float64 }{{0, 1}, {1.5, 0.01}, {-2, 9}, {0.3, 1e-4}} {
				sd := math.Sqrt(c.s2)
				w := func(f float64) float64 {
					lp, _, _, _ := l.LogLik(y, f)
					r := (f - c.mu) / sd
					return math.Exp(lp - 0.5*r*r - math.Log(sd) - 0.5*math.Log(2*math.Pi))
				}
				lo, hi := math.Min(-12, c.mu-40*sd), math.Max(12, c.mu+40*sd)
				z := quad.Fixed(w, lo, hi, 20000, nil, 0)
				m := quad.Fixed(func(f float64) float64 { return f * w(f) }, lo, hi, 20000, nil, 0) / z
				v := quad.Fixed(func(f float64) float64 { return (f - m) * (f - m) * w(f) }, lo, hi, 20000, nil, 0) / z
				lz, d1, d2 := l.Tilted(y, c.mu, c.s2)
				tm, tv := c.mu+c.s2*d1, c.s2+c.s2*c.s2*d2
				if math.Abs(lz-math.Log(z)) > 1e-7*(1+math.Abs(lz)) || math.Abs(tm-m) > 1e-6*math.Sqrt(v) || math.Abs(tv-v) > 1e-5*v {
					t.Errorf("%s y=%v mu=%v s2=%v: log Z %v mean %v var %v, integral %v %v %v", caseName(l), y, c.mu, c.s2, lz, tm, tv, math.Log(z), m, v)
				}
			}
		}
	}
}

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
