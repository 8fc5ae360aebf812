package analysis

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"concord/internal/testutil"
	"concord/textfeat"
)

var updateSpecGolden = flag.Bool("update-spec-golden", false, "rewrite testdata/spec_golden.json from the current FitSpec encoding")

// goldenSpecs are specs of several families, with settings set and unset,
// burn-in 0 (none) against absent (the default) and the epsilon pointer
// nil, 0 and positive: the stored JSON of each must stay byte for byte what
// it was when the settings were declared per family (issue 31).
func goldenSpecs() []struct {
	name string
	spec FitSpec
} {
	eps0, eps1 := 0.0, 0.1
	return []struct {
		name string
		spec FitSpec
	}{
		{"empty", FitSpec{}},
		{"ordinal defaults", FitSpec{Model: ModelOrdinal}.WithDefaults()},
		{"ordinal no burnin", FitSpec{Model: ModelOrdinal, Burnin: -1, Chains: 2, Samples: 300, Seed: 7}},
		{"ordinal burnin absent", FitSpec{Model: ModelOrdinal, Chains: 2, Seed: 7}},
		{"ordinal burnin set", FitSpec{Model: ModelOrdinal, Burnin: 50, Thin: 2, Seed: 7, V: 2, Lambda: 0.5, SigmaB: 3, Identifiability: "strong", RefRater: "r1", Sampler: "paper"}},
		{"ordinal ep", FitSpec{Model: ModelOrdinal, Engine: "ep", Sigma: 0.5, Thresholds: []float64{-1, 0, 1.5}, Restarts: 2, Kernel: "rbf:gamma=0.5", Covariates: "a,b", Standardize: true}},
		{"ordinal ep defaults", FitSpec{Model: ModelOrdinal, Engine: "ep"}.WithDefaults()},
		{"classification", FitSpec{Model: ModelClassification, Precisions: "fixed", FlagThreshold: 0.01, MaxRhat: 1.05, MinESS: 100, KeepDraws: 50}},
		{"classification defaults", FitSpec{Model: ModelClassification}.WithDefaults()},
		{"bounded", FitSpec{Model: ModelBounded, Engine: "laplace", Likelihood: "beta", Dispersions: "per-rater", Dispersion: 12, Bias: true, Bounds: "censor", Categorical: []string{"genre", "site"}}},
		{"bounded defaults", FitSpec{Model: ModelBounded}.WithDefaults()},
		{"robust epsilon nil", FitSpec{Model: ModelRobust, Select: true, EM: "paper", Sigma: 2}},
		{"robust epsilon 0", FitSpec{Model: ModelRobust, Epsilon: &eps0}},
		{"robust epsilon 0.1", FitSpec{Model: ModelRobust, Epsilon: &eps1, Seed: 3}},
		{"robust defaults", FitSpec{Model: ModelRobust}.WithDefaults()},
		{"confusion", FitSpec{Model: ModelConfusion, RaterModel: "communities", Gold: true, Hierarchy: "communities", Communities: 3, Concentration: 8, MaxIter: 200}},
		{"confusion gibbs", FitSpec{Model: ModelConfusion, Engine: "gibbs", Burnin: -1, Samples: 100}},
		{"confusion defaults", FitSpec{Model: ModelConfusion}.WithDefaults()},
		{"auc cv", FitSpec{Model: ModelAUC, Gamma: "cv", Scores: "gp", Kernel: "rbf", Standardize: true}},
		{"auc gamma", FitSpec{Model: ModelAUC, Gamma: "30", Prior: "spike-slab", PriorScale: 2, Engine: "smc"}},
		{"auc defaults", FitSpec{Model: ModelAUC}.WithDefaults()},
		{"text options", FitSpec{Kernel: "text:title+text:body", Text: textfeat.Options{MinDF: 2, MaxFeatures: 1000, Weighting: textfeat.TFIDF, Stem: true, Bigrams: true, KeepStopWords: true}}},
	}
}

// TestSpecGolden: every golden spec marshals to the bytes recorded in
// testdata/spec_golden.json, and those bytes read back and marshal to
// themselves (stored specs round-trip byte for byte).
func TestSpecGolden(t *testing.T) {
	const path = "testdata/spec_golden.json"
	var got bytes.Buffer
	got.WriteString("{\n")
	for i, g := range goldenSpecs() {
		b, err := json.Marshal(g.spec)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		name, _ := json.Marshal(g.name)
		sep := ","
		if i == len(goldenSpecs())-1 {
			sep = ""
		}
		got.WriteString("  " + string(name) + ": " + string(b) + sep + "\n")
	}
	got.WriteString("}\n")
	want, same := testutil.Golden(t, path, got.Bytes(), *updateSpecGolden)
	if !same {
		t.Errorf("the specs' JSON changed:\n got %s\nwant %s", got.Bytes(), want)
	}
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(want, &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(goldenSpecs()) {
		t.Errorf("%d stored specs, %d golden specs", len(stored), len(goldenSpecs()))
	}
	for name, raw := range stored {
		var s FitSpec
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(b, raw) {
			t.Errorf("%s: round trip\n got %s\nwant %s", name, b, raw)
		}
	}
}
