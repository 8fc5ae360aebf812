package robust

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// emData is 40 ionosphere points of testdata/ionosphere40.csv under the
// reference test's kernel.
func emData(t *testing.T) *Data {
	t.Helper()
	return ionosphere40(t)
}

// TestPaperEMStep checks Kim & Ghahramani's eq. 20 at a fixed EP solution
// against a hand computation: EP at eps = 0.05 (latent noise fixed at 0.7)
// gives each item's posterior marginal N(h_i, lambda_i); eq. 19-20 give
// eps' = mean_i (1 - Phi(y_i h_i / sqrt(s^2 + lambda_i))), computed here with
// math.Erfc from the fit document's scores, which the first EM step of the
// paper's rule must equal.
func TestPaperEMStep(t *testing.T) {
	d := emData(t)
	const s, eps0 = 0.7, 0.05
	fixed, err := Fit(context.Background(), d, Options{FixEpsilon: true, Epsilon: eps0, Noise: s, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	hand := 0.0
	for _, lb := range d.Labels {
		sc := fixed.Items[lb.Item].Score
		z := lb.Y * sc.Mean / math.Sqrt(s*s+sc.SD*sc.SD)
		hand += 1 - 0.5*math.Erfc(-z/math.Sqrt2)
	}
	hand /= float64(len(d.Labels))
	learnt, err := Fit(context.Background(), d, Options{StartEpsilon: eps0, Noise: s, PaperEM: true, MaxEM: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := learnt.Raters[0].Epsilon.History
	if len(h) != 2 || h[0] != eps0 {
		t.Fatalf("history %v, want the start and one step", h)
	}
	if math.Abs(h[1]-hand) > 1e-6 {
		t.Errorf("first EM step (eq. 20) %.9f, hand computation %.9f", h[1], hand)
	}
}

// TestEMMaximisesEvidence: the default EM's fixed point is a stationary
// point of the EP evidence in eps (package documentation): on a simulated
// set of Kim & Ghahramani's synthetic experiment (40 points, 2 labels
// flipped), the evidence at the learnt rate is at least that at rates 10%
// above and below it.
func TestEMMaximisesEvidence(t *testing.T) {
	x, y, flipped := kimSet(rand.New(rand.NewPCG(2, 16)), 40, 0, 2)
	d := kimData(x, y, flipped)
	res, err := Fit(context.Background(), d, Options{EMTol: 1e-7, MaxEM: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	eps := res.Raters[0].Epsilon.Value
	s := math.Sqrt(res.Raters[0].Variance.Mean) // the latent noise learnt with it
	at := *res.Diagnostics.LogEvidence
	if !(eps > 0.001 && eps < 0.4) {
		t.Fatalf("learnt eps %v", eps)
	}
	for _, f := range []float64{0.9, 1.1} {
		other, err := Fit(context.Background(), d, Options{FixEpsilon: true, Epsilon: f * eps, Noise: s, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if le := *other.Diagnostics.LogEvidence; le > at+1e-6 {
			t.Errorf("log evidence %.6f at eps %.5f exceeds %.6f at the learnt eps %.5f", le, f*eps, at, eps)
		}
	}
	t.Logf("learnt eps %.5f (noise %.3g), log evidence %.5f, %d EM steps", eps, s, at, len(res.Raters[0].Epsilon.History)-1)
}
