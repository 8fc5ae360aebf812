package lik

import (
	"math"
	"testing"
)

// TestTiltedHermitePair checks tilted's Gauss-Hermite pair against the
// 48-node Gauss-Legendre panels alone (the rule it falls back to) on a
// grid of beta and truncated-Gaussian sites from easy to extreme (cavity
// far from the rating, dispersions of 0.3 to 200): log Z within 1e-7, the
// tilted mean within 1e-7 sd, the variance within 1e-6 of itself, the
// gradient in the dispersion within 1e-6 (relative); and that both paths
// are taken, so that the test can fail. Sites where the panels overflow
// are left out.
func TestTiltedHermitePair(t *testing.T) {
	var gh, gl int
	for _, nu := range []float64{0.3, 3, 20, 200} {
		for _, y := range []float64{0.005, 0.1, 0.5, 0.97} {
			for _, mu := range []float64{-4, -1, 0, 1.5, 6} {
				for _, s2 := range []float64{1e-3, 0.1, 1, 10} {
					for _, l := range []density{&Beta{Nu: nu}, TruncGauss{Nu: nu}} {
						gradTo := func(dst []float64, y, f float64) { dst[0] = f * f } // E_tilted[f^2]: any smooth function
						var g0, g1 [1]float64
						z0, m0, v0 := tiltedQuad(l, y, mu, s2, g0[:], gradTo, false)
						z1, m1, v1 := tiltedQuad(l, y, mu, s2, g1[:], gradTo, true)
						if z0 == z1 && m0 == m1 && v0 == v1 {
							gl++
							continue
						}
						gh++
						if math.IsInf(z0, 0) || math.IsNaN(m0) {
							// The panels overflow (truncnorm, nu = 200,
							// mu = 6: the rating is e^-5000 away); the
							// Gauss-Hermite rules, when they agree, do not.
							continue
						}
						if math.Abs(z1-z0) > 1e-7 || math.Abs(m1-m0) > 1e-7*math.Sqrt(v0) || math.Abs(v1-v0) > 1e-6*v0 ||
							math.Abs(g1[0]-g0[0]) > 1e-6*math.Max(1, math.Abs(g0[0])) {
							t.Errorf("%T nu=%v y=%v mu=%v s2=%v: log Z, mean, var, grad %v %v %v %v; Gauss-Legendre %v %v %v %v",
								l, nu, y, mu, s2, z1, m1, v1, g1[0], z0, m0, v0, g0[0])
						}
					}
				}
			}
		}
	}
	if gh == 0 || gl == 0 {
		t.Errorf("Gauss-Hermite taken %d times, Gauss-Legendre %d: both paths should be", gh, gl)
	}
}

// TestTiltedCensoredPanels: a censored site keeps the panels (its floored
// probability far from the bound looks Gaussian to any Gauss-Hermite rule).
func TestTiltedCensoredPanels(t *testing.T) {
	l := &Censored{L: &Beta{Nu: 20}, Delta: 0.005}
	for _, mu := range []float64{-2, 0, 3} {
		z0, m0, v0 := tiltedQuad(l, 0, mu, 0.5, nil, nil, false)
		z1, m1, v1 := tilted(l, 0, mu, 0.5, nil, nil)
		if z0 != z1 || m0 != m1 || v0 != v1 {
			t.Errorf("mu=%v: censored tilted %v %v %v, panels %v %v %v", mu, z1, m1, v1, z0, m0, v0)
		}
	}
}

func BenchmarkTiltedBeta(b *testing.B) {
	l := &Beta{Nu: 7}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tilted(l, 0.3, -0.4, 0.2, nil, nil)
	}
}
