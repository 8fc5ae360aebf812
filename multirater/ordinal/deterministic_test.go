package ordinal

import (
	"context"
	"testing"
	"time"

	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

func scores(res *multirater.FitResult) []float64 {
	out := make([]float64, len(res.Items))
	for i, it := range res.Items {
		out[i] = it.Score.Mean
	}
	return out
}

// TestDeterministicPreviewSirt: on sirt k1 (135 essays, 7 raters) the EP
// and Laplace fits with learnt rater parameters (under the Gibbs model's
// priors) rank the essays as the default Gibbs fit does.
func TestDeterministicPreviewSirt(t *testing.T) {
	d := loadSirtK1(t)
	t0 := time.Now()
	gibbs := fit(t, d, Options{Settings: mcmc.Settings{Chains: 2, Samples: 2000, Seed: 3}})
	tg := time.Since(t0)
	for _, eng := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		t0 = time.Now()
		res, err := FitDeterministic(context.Background(), d, DetOptions{Engine: eng, Priors: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		rho := mcmctest.Spearman(scores(res), scores(gibbs))
		t.Logf("%s: Spearman with Gibbs %.4f; %s vs Gibbs %s; log evidence %.3f; notes %q", eng, rho, time.Since(t0), tg, *res.Diagnostics.Engine.LogEvidence, res.Diagnostics.Notes)
		for l, r := range res.Raters {
			t.Logf("  rater %s: precision %.3f (Gibbs %.3f), thresholds %v", r.ID, r.Precision.Mean, gibbs.Raters[l].Precision.Mean, r.Thresholds)
		}
		if rho < 0.99 {
			t.Errorf("%s: Spearman correlation with the Gibbs consensus %.4f < 0.99", eng, rho)
		}
	}
}
