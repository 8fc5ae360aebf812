package ordinal

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	"concord/multirater"
)

// TestRestartsReplica: the noise model's replica (infer.Problem.Replica)
// lets the restarts after the first run at once; the fit is bit-identical
// to the one that runs them one after another on the problem's own
// likelihoods (GOMAXPROCS 1), for each noise model and engine.
func TestRestartsReplica(t *testing.T) {
	d := makeToy(11, 80).data
	for _, noise := range []string{PerRater, SharedThresholds} {
		for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
			fit := func(procs int) *multirater.FitResult {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				res, err := FitDeterministic(context.Background(), d, DetOptions{Engine: engine, Noise: noise, Restarts: 3, Seed: 5})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			one, two := fit(1), fit(3)
			notes := strings.Join(one.Diagnostics.Notes, "\n")
			if !strings.Contains(notes, "evidence maximisation: 3 starts") {
				t.Errorf("%s %s: notes %q name no 3 starts", noise, engine, notes)
			}
			if *one.Diagnostics.Engine.LogEvidence != *two.Diagnostics.Engine.LogEvidence || !slices.Equal(scores(one), scores(two)) ||
				!slices.Equal(one.Diagnostics.Notes, two.Diagnostics.Notes) {
				t.Errorf("%s %s: one by one log Z %v, notes %q; at once %v, %q", noise, engine,
					*one.Diagnostics.Engine.LogEvidence, one.Diagnostics.Notes, *two.Diagnostics.Engine.LogEvidence, two.Diagnostics.Notes)
			}
		}
	}
}
