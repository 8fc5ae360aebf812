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

// TestRobustProbitParams checks the parametrisation round trip (the
// derivatives, TiltedGradTo and LogLikGradTo included, are checked by the
// conformance kit, multirater/lik/liktest, on these cases).
func TestRobustProbitParams(t *testing.T) {
	for i, tc := range robustCases {
		if tc.r.Eps == 0 {
			continue // logit(0) = -Inf is kept fixed
		}
		var back RobustProbit
		back.SetParams(tc.r.ParamsTo(make([]float64, 2)))
		if math.Abs(back.Eps-tc.r.Eps) > 1e-15 || math.Abs(back.S-tc.r.S) > 1e-14 {
			t.Errorf("case %d: round trip %+v, want %+v", i, back, tc.r)
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
