package lik

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

var ordCases = []struct {
	o OrdinalProbit
	y float64
	f float64
}{
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 0, 0.3},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 1, -0.2},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 2, 1.1},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 3, 0.4},
	{OrdinalProbit{B: []float64{0}, Sigma: 1}, 1, -2.5},          // K = 2: probit
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.3}, 3, -6}, // far in the tail
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.3}, 1, 9},  // both bounds in the upper tail
}

// TestOrdinalProbitDerivatives checks LogLik's and Tilted's derivatives
// against central finite differences of the functions themselves.
func TestOrdinalProbitDerivatives(t *testing.T) {
	const h = 1e-4
	for i, tc := range ordCases {
		lp, d1, d2, d3 := tc.o.LogLik(tc.y, tc.f)
		lpp, d1p, d2p, _ := tc.o.LogLik(tc.y, tc.f+h)
		lpm, d1m, d2m, _ := tc.o.LogLik(tc.y, tc.f-h)
		check := func(what string, got, want, tol float64) {
			if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) || math.IsNaN(got) {
				t.Errorf("case %d: %s = %.10g, finite difference %.10g", i, what, got, want)
			}
		}
		check("d1", d1, (lpp-lpm)/(2*h), 1e-6)
		check("d2", d2, (d1p-d1m)/(2*h), 1e-6)
		check("d3", d3, (d2p-d2m)/(2*h), 1e-5)
		if math.IsInf(lp, 0) || math.IsNaN(lp) {
			t.Errorf("case %d: log p = %v", i, lp)
		}
		for _, s2 := range []float64{0, 0.3, 4} {
			z, e1, e2 := tc.o.Tilted(tc.y, tc.f, s2)
			zp, e1p, _ := tc.o.Tilted(tc.y, tc.f+h, s2)
			zm, e1m, _ := tc.o.Tilted(tc.y, tc.f-h, s2)
			check("tilted d1", e1, (zp-zm)/(2*h), 1e-6)
			check("tilted d2", e2, (e1p-e1m)/(2*h), 1e-6)
			if s2 == 0 {
				check("tilted at s2 = 0", z, lp, 1e-12)
			}
		}
	}
}

// TestOrdinalProbitTiltedQuadrature checks Tilted's closed form against
// adaptive-free Gauss-Legendre quadrature of P(y | f) N(f | mu, s2) over
// mu +- 12 sd.
func TestOrdinalProbitTiltedQuadrature(t *testing.T) {
	for i, tc := range ordCases[:5] {
		for _, s2 := range []float64{0.2, 1.5} {
			sd := math.Sqrt(s2)
			nrm := distuv.Normal{Mu: tc.f, Sigma: sd}
			f := func(x float64) float64 {
				lp, _, _, _ := tc.o.LogLik(tc.y, x)
				return math.Exp(lp) * nrm.Prob(x)
			}
			want := quad.Fixed(f, tc.f-12*sd, tc.f+12*sd, 2000, nil, 0)
			got, _, _ := tc.o.Tilted(tc.y, tc.f, s2)
			if math.Abs(math.Exp(got)-want) > 1e-9 {
				t.Errorf("case %d, s2 %v: Z = %.12g, quadrature %.12g", i, s2, math.Exp(got), want)
			}
		}
	}
}

// TestOrdinalProbitParams checks the parametrisation round trip and
// TiltedGradTo against finite differences in the parameters.
func TestOrdinalProbitParams(t *testing.T) {
	const h = 1e-5
	for i, tc := range ordCases {
		o := OrdinalProbit{B: append([]float64(nil), tc.o.B...), Sigma: tc.o.Sigma}
		p := o.ParamsTo(make([]float64, o.NumParams()))
		o.SetParams(p)
		for k := range o.B {
			if math.Abs(o.B[k]-tc.o.B[k]) > 1e-12 {
				t.Fatalf("case %d: round trip thresholds %v, want %v", i, o.B, tc.o.B)
			}
		}
		for _, s2 := range []float64{0, 0.8} {
			g := o.TiltedGradTo(make([]float64, o.NumParams()), tc.y, tc.f, s2)
			for j := range p {
				q := append([]float64(nil), p...)
				q[j] += h
				o.SetParams(q)
				zp, _, _ := o.Tilted(tc.y, tc.f, s2)
				q[j] -= 2 * h
				o.SetParams(q)
				zm, _, _ := o.Tilted(tc.y, tc.f, s2)
				o.SetParams(p)
				fd := (zp - zm) / (2 * h)
				if math.Abs(g[j]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("case %d, s2 %v: d logZ / d p[%d] = %.10g, finite difference %.10g", i, s2, j, g[j], fd)
				}
			}
		}
	}
}

// TestOrdinalProbitBinaryIsProbit: with K = 2 (one threshold b) the
// likelihood is probit GP classification (Rasmussen & Williams eq. 3.82 and
// 3.58 with the latent shifted by b and scaled by sigma): for y = 1,
// Z = Phi(z), z = (mu - b)/sqrt(sigma^2 + s2), d log Z / d mu = N(z)/(Phi(z) v)
// and d2 = -(z N(z)/(Phi(z) v^2) + d1^2), v = sqrt(sigma^2 + s2); y = 0 is
// the same with the sign of z flipped.
func TestOrdinalProbitBinaryIsProbit(t *testing.T) {
	o := OrdinalProbit{B: []float64{0.3}, Sigma: 0.8}
	nrm := distuv.UnitNormal
	for _, mu := range []float64{-3, -0.5, 0, 0.7, 4} {
		for _, s2 := range []float64{0, 0.5, 2} {
			for _, y := range []float64{0, 1} {
				sign := 2*y - 1
				v := math.Sqrt(o.Sigma*o.Sigma + s2)
				z := sign * (mu - o.B[0]) / v
				wantZ := math.Log(nrm.CDF(z))
				wd1 := sign * nrm.Prob(z) / (nrm.CDF(z) * v)
				wd2 := -(z*nrm.Prob(z)/(nrm.CDF(z)*v*v) + wd1*wd1)
				lz, d1, d2 := o.Tilted(y, mu, s2)
				if math.Abs(lz-wantZ) > 1e-12 || math.Abs(d1-wd1) > 1e-10 || math.Abs(d2-wd2) > 1e-10 {
					t.Errorf("y %v mu %v s2 %v: (%.12g, %.12g, %.12g), probit (%.12g, %.12g, %.12g)", y, mu, s2, lz, d1, d2, wantZ, wd1, wd2)
				}
			}
		}
	}
}

// TestLogLikGrad: LogLikGradTo against central finite differences of
// LogLik in Chu's parametrisation, for every level (both bounds, and the
// open ends) and latent values in the body and the tails.
func TestLogLikGrad(t *testing.T) {
	o := OrdinalProbit{B: []float64{-1, 0.2, 0.9, 2}, Sigma: 0.6}
	np := o.NumParams()
	p0 := o.ParamsTo(make([]float64, np))
	for y := 0; y <= len(o.B); y++ {
		for _, f := range []float64{-4, -0.7, 0.1, 0.5, 1.4, 5} {
			dlp, dd1, dd2 := make([]float64, np), make([]float64, np), make([]float64, np)
			o.LogLikGradTo(dlp, dd1, dd2, float64(y), f)
			for i := 0; i < np; i++ {
				const h = 1e-5
				eval := func(d float64) (float64, float64, float64) {
					q := OrdinalProbit{B: make([]float64, len(o.B))}
					p := append([]float64(nil), p0...)
					p[i] += d
					q.SetParams(p)
					lp, d1, d2, _ := q.LogLik(float64(y), f)
					return lp, d1, d2
				}
				a0, a1, a2 := eval(h)
				b0, b1, b2 := eval(-h)
				for _, c := range []struct {
					name      string
					got, want float64
				}{
					{"lp", dlp[i], (a0 - b0) / (2 * h)},
					{"d1", dd1[i], (a1 - b1) / (2 * h)},
					{"d2", dd2[i], (a2 - b2) / (2 * h)},
				} {
					if !(math.Abs(c.got-c.want) <= 1e-6*(1+math.Abs(c.want))) {
						t.Errorf("y %d f %v param %d: d %s = %.9g, finite differences %.9g", y, f, i, c.name, c.got, c.want)
					}
				}
			}
		}
	}
}
