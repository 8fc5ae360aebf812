package lik_test

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"concord/multirater/lik"
	"concord/multirater/lik/liktest"
)

// TestAUCStepTilted checks the closed-form tilted log normaliser and its
// derivatives against quadrature of exp(-C 1{x < 0}) N(x | mu, s2) and
// central differences.
func TestAUCStepTilted(t *testing.T) {
	for _, tc := range []struct{ c, mu, s2 float64 }{
		{0.1, 0, 1}, {0.1, -3, 0.5}, {2, 1, 2}, {5, -4, 1}, {1e-4, 0.3, 1e-2}, {30, -10, 1},
	} {
		a := lik.AUCStep{C: tc.c}
		lz, _, _ := a.Tilted(0, tc.mu, tc.s2)
		s := math.Sqrt(tc.s2)
		dens := func(x float64) float64 {
			return math.Exp(-0.5*(x-tc.mu)*(x-tc.mu)/tc.s2) / math.Sqrt(2*math.Pi*tc.s2)
		}
		z0 := quad.Fixed(dens, tc.mu-12*s, 0, 2000, nil, 0)
		z1 := quad.Fixed(dens, 0, tc.mu+12*s, 2000, nil, 0)
		want := math.Log(math.Exp(-tc.c)*z0 + z1)
		if math.Abs(lz-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%+v: log Z %.12g, quadrature %.12g", tc, lz, want)
		}
		liktest.CheckTiltedDifferences(t, fmt.Sprintf("%+v", tc), a, 0, tc.mu, tc.s2, 1e-6, 1e-3)
	}
}

// TestNewAUCStepSameBits: the step with log(1 - e^{-C}) kept gives the bits
// of the plain one, also after C is changed.
func TestNewAUCStepSameBits(t *testing.T) {
	for _, c := range []float64{1e-6, 0.01, 1, 30} {
		a, b := lik.NewAUCStep(c), lik.AUCStep{C: c}
		moved := lik.NewAUCStep(2 * c)
		moved.C = c
		for _, mu := range []float64{-3, -0.2, 0, 0.5, 4} {
			for _, s2 := range []float64{0.01, 1, 9} {
				z1, d1, e1 := a.Tilted(0, mu, s2)
				z2, d2, e2 := b.Tilted(0, mu, s2)
				z3, d3, e3 := moved.Tilted(0, mu, s2)
				for _, p := range [][2]float64{{z1, z2}, {d1, d2}, {e1, e2}, {z3, z2}, {d3, d2}, {e3, e2}} {
					if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
						t.Fatalf("C=%v mu=%v s2=%v: %v != %v", c, mu, s2, p[0], p[1])
					}
				}
			}
		}
	}
}

// TestAUCStepTiltedDerivs: the direct form of the derivatives agrees with
// Tilted's (logarithmic) form to 1e-12 relative, with and without the
// constants NewAUCStep keeps, across both tails of z and costs C from the
// AUC fits' gamma/(n+ n-) to beyond the direct form's range.
func TestAUCStepTiltedDerivs(t *testing.T) {
	for _, c := range []float64{1e-7, 1e-3, 0.1, 2, 29, 31, 200} {
		for _, mu := range []float64{-40, -8, -1, -1e-3, 0, 0.5, 3, 9, 40} {
			for _, s2 := range []float64{1e-4, 0.3, 1, 25} {
				for _, a := range []lik.AUCStep{lik.NewAUCStep(c), {C: c}} {
					_, w1, w2 := a.Tilted(0, mu, s2)
					d1, d2 := a.TiltedDerivs(0, mu, s2)
					for _, p := range [][2]float64{{d1, w1}, {d2, w2}} {
						if math.Abs(p[0]-p[1]) > 1e-12*math.Abs(p[1])+1e-300 {
							t.Errorf("C=%v mu=%v s2=%v: TiltedDerivs %v, Tilted %v", c, mu, s2, p[0], p[1])
						}
					}
				}
			}
		}
	}
}
