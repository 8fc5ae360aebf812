package bounded

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"

	"concord/multirater/lik"
)

// TestLatentNoiseVar checks the latent noise variance of a rater (what
// the factor's tolerance is scaled by) against closed forms at f = 0,
// y = 1/2: the warped likelihood's log p is a Gaussian in f with variance
// sigma^2 (Jensen et al. sec. 3.5); the beta likelihood's (sec. 3.3, mean
// Phi(f)) curvature is -2 nu^2 psi_1(nu/2) phi(0)^2. A bias on the probit
// scale leaves the noise as it is; before, a large bias (whose mean
// Phi(B / ...) rounds to 1: warped --bias on Snow's joy ratings) made the
// likelihood panic at y = 1.
func TestLatentNoiseVar(t *testing.T) {
	phi0 := 1 / math.Sqrt(2*math.Pi)
	beta := func(nu float64) float64 { return 1 / (2 * nu * nu * mathext.Zeta(2, nu/2) * phi0 * phi0) }
	for _, tc := range []struct {
		name string
		l    lik.Bounded
		want float64
	}{
		{"warped sigma 0.5", &lik.Warped{Sigma: 0.5}, 0.25},
		{"warped sigma 2", &lik.Warped{Sigma: 2}, 4},
		{"warped sigma 0.5, bias 40", &lik.Shift{L: &lik.Warped{Sigma: 0.5}, B: 40}, 0.25},
		{"warped sigma 0.5, bias -40", &lik.Shift{L: &lik.Warped{Sigma: 0.5}, B: -40}, 0.25},
		{"beta nu 10", &lik.Beta{Nu: 10}, beta(10)},
		{"beta nu 10, bias 12", &lik.Shift{L: &lik.Beta{Nu: 10}, B: 12}, beta(10)},
	} {
		if got := latentNoiseVar(tc.l); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: latent noise variance %.12g, want %.12g", tc.name, got, tc.want)
		}
	}
}
