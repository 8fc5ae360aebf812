package auc

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCrossValidateDropsFailedGamma: on labels unrelated to the
// covariates, EP does not converge at the grid's large gammas (issue 36
// item 4: 40 items, random labels). Cross-validation drops those
// candidates with a note and chooses among the others instead of failing;
// only when every candidate fails is the fit an error.
func TestCrossValidateDropsFailedGamma(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 4))
	d := labelled(rng, 40, 2, func([]float64) bool { return rng.IntN(2) == 1 })
	// The large candidate alone fails: it is an error.
	if _, err := Fit(context.Background(), d, Options{GammaGrid: []float64{3000}, Seed: 1}); err == nil {
		t.Fatal("gamma 3000 alone on random labels: want an error (this test needs a candidate that fails)")
	}
	res, err := Fit(context.Background(), d, Options{GammaGrid: []float64{1, 3000}, Seed: 1})
	if err != nil {
		t.Fatalf("one candidate failing must not fail the fit: %v", err)
	}
	if res.Gamma != 1 || len(res.CV) != 1 || res.CV[0].Gamma != 1 {
		t.Errorf("gamma %v, cv %+v: want gamma 1, the one candidate left", res.Gamma, res.CV)
	}
	if len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], "gamma 3000 dropped from the cross-validation: its fit failed in ") {
		t.Errorf("notes %q: want one saying gamma 3000 was dropped", res.Notes)
	}
}
