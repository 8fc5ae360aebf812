package ep

import (
	"errors"
	"testing"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

// cyclingSites are two items under the identity prior: item 0 with the
// five robust-probit labels of item 1711 of the shared ladder's 64,000
// labels-only items (seed 1) at an evaluation of the robust fit's first
// EM step whose EP did not converge in 500 sweeps (2:3 labels from raters
// of latent noise near 0.2, error rates 0.05), item 1 with two agreeing
// labels.
func cyclingSites() []lik.Site {
	var sites []lik.Site
	for _, l := range []struct{ y, s float64 }{{-1, 0.2302582537748216}, {1, 0.21305932401247563}, {1, 6.119287150162196}, {1, 0.5918219051503729}, {-1, 0.19681923550961422}} {
		sites = append(sites, lik.Site{Item: 0, Y: l.y, Lik: &lik.RobustProbit{Eps: 0.05, S: l.s}})
	}
	for range 2 {
		sites = append(sites, lik.Site{Item: 1, Y: 1, Lik: &lik.RobustProbit{Eps: 0.05, S: 0.3}})
	}
	return sites
}

// TestDecayAfter: the cycling item keeps EP from converging in 500 sweeps
// at damping 0.7; with DecayAfter 250 it settles (Result.Decayed 1) and
// the other item's posterior is the one a run without DecayAfter gives
// (it settled before the decay).
func TestDecayAfter(t *testing.T) {
	sites := cyclingSites()
	base := Options{Damping: 0.7, MaxSweeps: 500, NegativeSites: true}
	if _, err := Run(gp.IdentityFactor(2), sites, base); !errors.Is(err, ErrNotConverged) {
		t.Fatalf("without DecayAfter: err %v, want ErrNotConverged", err)
	}
	for _, tc := range []struct {
		after, wantDecayed int
	}{
		{250, 1},
		{100, 1},
	} {
		o := base
		o.DecayAfter = tc.after
		r, err := Run(gp.IdentityFactor(2), sites, o)
		if err != nil {
			t.Fatalf("DecayAfter %d: %v", tc.after, err)
		}
		if r.Decayed != tc.wantDecayed || r.Sweeps <= tc.after || r.Sweeps > tc.after+150 {
			t.Errorf("DecayAfter %d: %d items decayed in %d sweeps, want %d after %d-%d", tc.after, r.Decayed, r.Sweeps, tc.wantDecayed, tc.after+1, tc.after+150)
		}
		easy, err := Run(gp.IdentityFactor(1), []lik.Site{{Item: 0, Y: 1, Lik: sites[5].Lik}, {Item: 0, Y: 1, Lik: sites[6].Lik}}, base)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mean[1] != easy.Mean[0] || r.Var[1] != easy.Var[0] {
			t.Errorf("DecayAfter %d: the settled item's posterior N(%v, %v), alone N(%v, %v)", tc.after, r.Mean[1], r.Var[1], easy.Mean[0], easy.Var[0])
		}
	}
}
