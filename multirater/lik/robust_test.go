package lik

import (
	"math"
	"testing"
)

var robustCases = []struct {
	r    RobustProbit
	y, f float64
}{
	{RobustProbit{Eps: 0, S: 1}, 1, 0.3},
	{RobustProbit{Eps: 0, S: 0.5}, -1, 4}, // far on the wrong side, plain probit
	{RobustProbit{Eps: 0.1, S: 1}, 1, -2},
	{RobustProbit{Eps: 0.1, S: 0.5}, -1, 1.5},
	{RobustProbit{Eps: 0.02, S: 2}, 1, -9}, // flat part: log-convex
	{RobustProbit{Eps: 0.3, S: 0.7}, -1, -0.4},
	{RobustProbit{Eps: 1e-9, S: 1}, 1, -30},
}

// TestRobustProbitDerivatives checks LogLik's and Tilted's derivatives in f
// and mu against central finite differences.
func TestRobustProbitDerivatives(t *testing.T) {
	const h = 1e-4
	for i, tc := range robustCases {
		check := func(what string, got, want, tol float64) {
			t.Helper()
			if !(math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))) {
				t.Errorf("case %d: %s = %.10g, finite difference %.10g", i, what, got, want)
			}
		}
		lp, d1, d2, d3 := tc.r.LogLik(tc.y, tc.f)
		lpp, d1p, d2p, _ := tc.r.LogLik(tc.y, tc.f+h)
		lpm, d1m, d2m, _ := tc.r.LogLik(tc.y, tc.f-h)
		check("d1", d1, (lpp-lpm)/(2*h), 1e-6)
		check("d2", d2, (d1p-d1m)/(2*h), 1e-6)
		check("d3", d3, (d2p-d2m)/(2*h), 1e-5)
		for _, s2 := range []float64{0, 0.3, 4} {
			z, e1, e2 := tc.r.Tilted(tc.y, tc.f, s2)
			zp, e1p, _ := tc.r.Tilted(tc.y, tc.f+h, s2)
			zm, e1m, _ := tc.r.Tilted(tc.y, tc.f-h, s2)
			check("tilted d1", e1, (zp-zm)/(2*h), 1e-6)
			check("tilted d2", e2, (e1p-e1m)/(2*h), 1e-6)
			if s2 == 0 {
				check("tilted at s2 = 0", z, lp, 1e-12)
			}
		}
	}
}

// TestRobustProbitParams checks the parametrisation round trip, and
// TiltedGradTo and LogLikGradTo against finite differences in the
// parameters.
func TestRobustProbitParams(t *testing.T) {
	const h = 1e-5
	for i, tc := range robustCases {
		if tc.r.Eps == 0 {
			continue // logit(0) = -Inf is kept fixed
		}
		p0 := tc.r.ParamsTo(make([]float64, 2))
		var back RobustProbit
		back.SetParams(p0)
		if math.Abs(back.Eps-tc.r.Eps) > 1e-15 || math.Abs(back.S-tc.r.S) > 1e-14 {
			t.Errorf("case %d: round trip %+v, want %+v", i, back, tc.r)
		}
		at := func(k int, d float64) RobustProbit {
			p := append([]float64(nil), p0...)
			p[k] += d
			var q RobustProbit
			q.SetParams(p)
			return q
		}
		dlp, dd1, dd2 := make([]float64, 2), make([]float64, 2), make([]float64, 2)
		tc.r.LogLikGradTo(dlp, dd1, dd2, tc.y, tc.f)
		for _, s2 := range []float64{0.3, 2} {
			g := tc.r.TiltedGradTo(make([]float64, 2), tc.y, tc.f, s2)
			for k := 0; k < 2; k++ {
				zp, _, _ := at(k, h).Tilted(tc.y, tc.f, s2)
				zm, _, _ := at(k, -h).Tilted(tc.y, tc.f, s2)
				if want := (zp - zm) / (2 * h); !(math.Abs(g[k]-want) <= 1e-6*(1+math.Abs(want))) {
					t.Errorf("case %d, s2 %v: d log Z / d p%d = %.9g, finite differences %.9g", i, s2, k, g[k], want)
				}
			}
		}
		for k := 0; k < 2; k++ {
			a0, a1, a2, _ := at(k, h).LogLik(tc.y, tc.f)
			b0, b1, b2, _ := at(k, -h).LogLik(tc.y, tc.f)
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"lp", dlp[k], (a0 - b0) / (2 * h)},
				{"d1", dd1[k], (a1 - b1) / (2 * h)},
				{"d2", dd2[k], (a2 - b2) / (2 * h)},
			} {
				if !(math.Abs(c.got-c.want) <= 1e-6*(1+math.Abs(c.want))) {
					t.Errorf("case %d param %d: d %s = %.9g, finite differences %.9g", i, k, c.name, c.got, c.want)
				}
			}
		}
	}
}

// TestRobustProbitScipy checks the tilted normaliser and the label-error
// probability against scipy.integrate.quad (testdata/robust_ref.py).
func TestRobustProbitScipy(t *testing.T) {
	for _, c := range []struct {
		eps, s, y, mu, s2 float64
		z, perr           float64
	}{
		// eps, s, y, mu, s2, Z, P(error): testdata/robust_ref.py
		{0, 1, 1, 0.3, 0.5, 0.59675202974633, 0},
		{0.1, 1, 1, -2, 0.5, 0.1409881739439, 0.672939265776749},
		{0.1, 0.5, -1, 1.5, 2, 0.226924203145166, 0.370760251400035},
		{0.02, 2, 1, -6, 1, 0.0234993718839371, 0.847984214961325},
		{0.3, 0.7, -1, -0.4, 0.1, 0.579492598778937, 0.155964978856055},
	} {
		r := RobustProbit{Eps: c.eps, S: c.s}
		lz, _, _ := r.Tilted(c.y, c.mu, c.s2)
		if math.Abs(math.Exp(lz)-c.z) > 1e-12 {
			t.Errorf("%+v: Z = %.15g, scipy %.15g", c, math.Exp(lz), c.z)
		}
		if got := r.ErrorProb(c.y, c.mu, c.s2); math.Abs(got-c.perr) > 1e-10 {
			t.Errorf("%+v: P(error) = %.15g, scipy %.15g", c, got, c.perr)
		}
	}
}

// TestRobustProbitPlainIsOrdinalProbit: with Eps = 0 the likelihood is the
// binary probit, OrdinalProbit with one threshold at 0 (label -1 is level
// 0, +1 level 1).
func TestRobustProbitPlainIsOrdinalProbit(t *testing.T) {
	r := RobustProbit{S: 0.8}
	o := OrdinalProbit{B: []float64{0}, Sigma: 0.8}
	for _, y := range []float64{-1, 1} {
		for _, f := range []float64{-3, -0.2, 0.5, 7} {
			a, a1, a2, a3 := r.LogLik(y, f)
			b, b1, b2, b3 := o.LogLik((y+1)/2, f)
			for k, d := range []float64{a - b, a1 - b1, a2 - b2, a3 - b3} {
				if math.Abs(d) > 1e-9 {
					t.Errorf("y %v f %v: derivative %d differs by %g", y, f, k, d)
				}
			}
		}
	}
}
