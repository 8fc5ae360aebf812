package analysis

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// TestChainsApart: a Gibbs fit whose chains run one by one (FitChains, in
// any order) and are then combined (CombineChains) gives the document Fit
// gives, bit for bit apart from timings, for each model whose chains can
// run apart; ChainJobs says which fits fan out.
func TestChainsApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec FitSpec
	}{
		{"ordinal", smallOrdinal(), FitSpec{Model: ModelOrdinal, Chains: 3, Samples: 50, Burnin: 30, Seed: 7}},
		{"classification", smallNominal(), FitSpec{Model: ModelClassification, Chains: 2, Samples: 50, Burnin: 30, Seed: 7}},
		{"confusion", smallNominal(), FitSpec{Model: ModelConfusion, Engine: multirater.EngineGibbs, Chains: 3, Samples: 50, Burnin: 30, Seed: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			nc := ChainJobs(tc.spec)
			if nc != tc.spec.Chains {
				t.Fatalf("ChainJobs = %d, want %d", nc, tc.spec.Chains)
			}
			whole, err := Fit(ctx, tc.ds, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			outputs := make([][]byte, nc)
			for c := nc - 1; c >= 0; c-- {
				out, _, err := FitChains(ctx, tc.ds, tc.spec, c, c+1, nil)
				if err != nil {
					t.Fatalf("chain %d: %v", c, err)
				}
				outputs[c] = out[0]
			}
			combined, err := CombineChains(ctx, tc.ds, tc.spec, outputs, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := docBytes(t, whole), docBytes(t, combined); a != b {
				t.Errorf("the combined chains differ from the fit in one process")
			}
		})
	}
	for _, tc := range []struct {
		spec FitSpec
		want int
	}{
		{FitSpec{}, 4},
		{FitSpec{Model: ModelOrdinal, Chains: 1}, 0},
		{FitSpec{Model: ModelOrdinal, Engine: multirater.EngineEP}, 0},
		{FitSpec{Model: ModelConfusion}, 0}, // VB
		{FitSpec{Model: ModelRobust}, 0},
		{FitSpec{Model: ModelClassification, Chains: 6}, 6},
	} {
		if got := ChainJobs(tc.spec); got != tc.want {
			t.Errorf("ChainJobs(%+v) = %d, want %d", tc.spec, got, tc.want)
		}
	}
}

// docBytes is a result's JSON without timings (and the note with the
// variational fit's time of a confusion fit by Gibbs).
func docBytes(t *testing.T, res *multirater.FitResult) string {
	t.Helper()
	r := *res
	r.Diagnostics.Seconds, r.Diagnostics.SamplingSeconds, r.Diagnostics.SweepsPerSecond = 0, 0, 0
	var notes []string
	for _, n := range r.Diagnostics.Notes {
		if !strings.Contains(n, "variational fit's empirical Bayes") {
			notes = append(notes, n)
		}
	}
	r.Diagnostics.Notes = notes
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
