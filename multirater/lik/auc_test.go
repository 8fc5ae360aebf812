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
