package lik

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// TestNormal checks the normal likelihood against finite differences and
// quadrature: LogLik's derivatives in f, Tilted's log Z = log ∫ N(y | 1/2 +
// f, Sigma^2) N(f | mu, s2) df (Legendre on mu ± 12 sd) and its derivatives
// in mu, the gradients in ln Sigma, and the CDF of the clipped rating
// (atoms at 0 and 1).
func TestNormal(t *testing.T) {
	const h = 1e-5
	for _, c := range []struct{ sigma, y, f, mu, s2 float64 }{
		{0.2, 0.3, 0.35, 0.5, 0.04},
		{0.05, 0, 0.1, -0.2, 0.5},
		{1.3, 1, 0.7, 0.9, 1e-3},
	} {
		n := &Normal{Sigma: c.sigma}
		lp, d1, d2, d3 := n.LogLik(c.y, c.f)
		lpp, _, _, _ := n.LogLik(c.y, c.f+h)
		lpm, _, _, _ := n.LogLik(c.y, c.f-h)
		r := c.y - 0.5 - c.f
		if want := -0.5*math.Log(2*math.Pi*c.sigma*c.sigma) - 0.5*r*r/(c.sigma*c.sigma); math.Abs(lp-want) > 1e-12 {
			t.Errorf("%+v: log p %v, want %v", c, lp, want)
		}
		if fd := (lpp - lpm) / (2 * h); math.Abs(d1-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("%+v: d1 %v, finite difference %v", c, d1, fd)
		}
		if fd := (lpp - 2*lp + lpm) / (h * h); math.Abs(d2-fd) > 1e-3*math.Max(1, math.Abs(fd)) || d3 != 0 {
			t.Errorf("%+v: d2 %v, finite difference %v (d3 %v)", c, d2, fd, d3)
		}
		lz, z1, z2 := n.Tilted(c.y, c.mu, c.s2)
		sd := math.Sqrt(c.s2)
		z := quad.Fixed(func(f float64) float64 {
			l, _, _, _ := n.LogLik(c.y, f)
			r := (f - c.mu) / sd
			return math.Exp(l - 0.5*r*r - 0.5*math.Log(2*math.Pi*c.s2))
		}, c.mu-12*sd, c.mu+12*sd, 2000, nil, 0)
		if math.Abs(lz-math.Log(z)) > 1e-8 {
			t.Errorf("%+v: log Z %v, quadrature %v", c, lz, math.Log(z))
		}
		zp, _, _ := n.Tilted(c.y, c.mu+h, c.s2)
		zm, _, _ := n.Tilted(c.y, c.mu-h, c.s2)
		if fd := (zp - zm) / (2 * h); math.Abs(z1-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("%+v: tilted d1 %v, finite difference %v", c, z1, fd)
		}
		if fd := (zp - 2*lz + zm) / (h * h); math.Abs(z2-fd) > 1e-3*math.Max(1, math.Abs(fd)) {
			t.Errorf("%+v: tilted d2 %v, finite difference %v", c, z2, fd)
		}
		// Gradients in ln Sigma.
		p := n.ParamsTo(make([]float64, 1))
		at := func(q float64) (*Normal, float64) { o := &Normal{}; o.SetParams([]float64{q}); return o, q }
		np, _ := at(p[0] + h)
		nm, _ := at(p[0] - h)
		g := n.TiltedGradTo(make([]float64, 1), c.y, c.mu, c.s2)
		tp, _, _ := np.Tilted(c.y, c.mu, c.s2)
		tm, _, _ := nm.Tilted(c.y, c.mu, c.s2)
		if fd := (tp - tm) / (2 * h); math.Abs(g[0]-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("%+v: d log Z / d ln Sigma %v, finite difference %v", c, g[0], fd)
		}
		dlp, dd1, dd2 := make([]float64, 1), make([]float64, 1), make([]float64, 1)
		n.LogLikGradTo(dlp, dd1, dd2, c.y, c.f)
		lP, d1P, d2P, _ := np.LogLik(c.y, c.f)
		lM, d1M, d2M, _ := nm.LogLik(c.y, c.f)
		for k, w := range [][2]float64{{dlp[0], (lP - lM) / (2 * h)}, {dd1[0], (d1P - d1M) / (2 * h)}, {dd2[0], (d2P - d2M) / (2 * h)}} {
			if math.Abs(w[0]-w[1]) > 1e-5*math.Max(1, math.Abs(w[1])) {
				t.Errorf("%+v: LogLikGradTo[%d] %v, finite difference %v", c, k, w[0], w[1])
			}
		}
		// The clipped rating's CDF: the atom at 0 is P(y* <= 0), the one at
		// 1 is P(y* >= 1), y* ~ N(1/2 + f, Sigma^2).
		if got, want := n.CDF(0, c.f), Phi((-0.5-c.f)/c.sigma); math.Abs(got-want) > 1e-12 {
			t.Errorf("%+v: CDF(0) %v, want %v", c, got, want)
		}
		if n.CDF(-1e-9, c.f) != 0 || n.CDF(1, c.f) != 1 || n.Mean(c.f) != 0.5+c.f {
			t.Errorf("%+v: CDF outside [0, 1) or mean wrong", c)
		}
	}
}
