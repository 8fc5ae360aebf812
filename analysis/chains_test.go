package analysis

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
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
		{"ordinal", smallOrdinal(), FitSpec{Model: ModelOrdinal, Engine: multirater.EngineGibbs, Chains: 3, Samples: 50, Burnin: 30, Seed: 7}},
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
			var sampling annotations.SamplingTime
			for c := nc - 1; c >= 0; c-- {
				out, st, err := FitChains(ctx, tc.ds, tc.spec, c, c+1, nil)
				if err != nil {
					t.Fatalf("chain %d: %v", c, err)
				}
				outputs[c] = out[0]
				sampling.Wall = max(sampling.Wall, st.Wall)
				sampling.CPU += st.CPU
			}
			combined, err := CombineChains(ctx, tc.ds, tc.spec, outputs, sampling, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The ESS per CPU second of chains run apart: over the sum of
			// their CPU times.
			d := combined.Diagnostics
			if sampling.CPU <= 0 || d.ESSPerCPUSecond != d.MinESSBulk/sampling.CPU.Seconds() || d.SamplingSeconds != sampling.Wall.Seconds() {
				t.Errorf("ess_per_cpu_second %g, sampling_seconds %g; want %g / %v and %v", d.ESSPerCPUSecond, d.SamplingSeconds, d.MinESSBulk, sampling.CPU, sampling.Wall)
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
		{FitSpec{}, 0}, // EP, the default: one job
		{FitSpec{Engine: multirater.EngineGibbs}, 4},
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
	r.Diagnostics.Seconds, r.Diagnostics.SamplingSeconds, r.Diagnostics.SweepsPerSecond, r.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
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

// TestEvalFoldsApart: an evaluation whose folds run one by one (EvalFold,
// in reverse order, each result through encoding/gob as between workers)
// and are then combined (CombineEval) gives the result Eval gives, bit for
// bit (its notes and counts too).
func TestEvalFoldsApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec EvalSpec
	}{
		{"ordinal", smallOrdinal(), EvalSpec{Folds: 3, Fit: FitSpec{Model: ModelOrdinal, Engine: multirater.EngineGibbs, Samples: 60, Burnin: 40, Seed: 3}}},
		{"classification", smallNominal(), EvalSpec{Folds: 2, Fit: FitSpec{Model: ModelClassification, Samples: 60, Burnin: 40, Seed: 3}}},
		{"ordinal by ep", smallOrdinal(), EvalSpec{Folds: 3, Fit: FitSpec{Model: ModelOrdinal, Engine: multirater.EngineEP, Seed: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			whole, err := Eval(ctx, tc.ds, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			k, err := EvalFolds(tc.ds, tc.spec)
			if err != nil || k != tc.spec.Folds {
				t.Fatalf("EvalFolds = %d, %v", k, err)
			}
			folds := make([]*EvalFoldResult, k)
			for f := k - 1; f >= 0; f-- {
				var last float64
				fr, err := EvalFold(ctx, tc.ds, tc.spec, f, func(p EvalProgress) {
					if p.Fraction < last || p.Fraction > 1 {
						t.Errorf("fold %d: progress %v after %v", f, p.Fraction, last)
					}
					last = p.Fraction
				})
				if err != nil {
					t.Fatalf("fold %d: %v", f, err)
				}
				if last != 1 {
					t.Errorf("fold %d: last progress %v", f, last)
				}
				var buf bytes.Buffer
				if err := gob.NewEncoder(&buf).Encode(fr); err != nil {
					t.Fatal(err)
				}
				if err := gob.NewDecoder(&buf).Decode(&folds[f]); err != nil {
					t.Fatal(err)
				}
			}
			combined, err := CombineEval(tc.ds, tc.spec, folds)
			if err != nil {
				t.Fatal(err)
			}
			combined.Seconds, whole.Seconds = 0, 0
			a, _ := json.Marshal(whole)
			b, _ := json.Marshal(combined)
			if string(a) != string(b) || fmt.Sprint(whole.Notes, whole.Fits, whole.Items) != fmt.Sprint(combined.Notes, combined.Fits, combined.Items) {
				t.Errorf("the combined folds differ from the evaluation in one process:\n%s\n%s", a, b)
			}
			if _, err := CombineEval(tc.ds, tc.spec, folds[1:]); err == nil {
				t.Errorf("combined %d folds of %d", k-1, k)
			}
		})
	}
}
