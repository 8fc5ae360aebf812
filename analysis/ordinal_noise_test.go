package analysis

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"concord/annotations"
)

// TestOrdinalNoiseChoice: an ordinal EP or Laplace fit with several raters
// chooses its noise model by default and records every candidate and the
// choice, and so does a fit that names no engine (EP, the default: issue 29
// item 4); --noise forces one (no candidates, one precision for every rater
// under shared); the Gibbs engine refuses the setting; the chosen fit
// predicts.
func TestOrdinalNoiseChoice(t *testing.T) {
	ds := smallOrdinal()
	for _, tc := range []struct {
		engine, noise string
		cands         int
		want          string // the recorded noise model ("": the chosen one)
	}{
		{"", "", 3, ""},
		{"ep", "", 3, ""},
		{"laplace", "", 3, ""},
		{"ep", "shared", 0, "shared"},
		{"ep", "shared-thresholds", 0, "shared-thresholds"},
		{"laplace", "per-rater", 0, ""},
	} {
		name := tc.engine + "/" + tc.noise
		res, err := Fit(context.Background(), ds, FitSpec{Engine: tc.engine, Noise: tc.noise, Kernel: "identity", Seed: 2}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := cmp.Or(tc.engine, "ep"); res.Model.Engine != want {
			t.Errorf("%s: engine %q, want %q", name, res.Model.Engine, want)
		}
		d := res.Diagnostics
		if len(d.ModelCandidates) != tc.cands {
			t.Fatalf("%s: %d candidates, want %d", name, len(d.ModelCandidates), tc.cands)
		}
		if tc.cands > 0 {
			chosen := ""
			for _, c := range d.ModelCandidates {
				if c.Score == nil || c.LogEvidence == nil || c.Parameters == 0 {
					t.Errorf("%s: candidate %+v without its scores", name, c)
				}
				if c.Chosen {
					chosen = c.Noise
				}
			}
			if chosen == "" || chosen != res.Model.Noise || !strings.Contains(d.Choice, "penalised log evidence") {
				t.Errorf("%s: chosen %q, model.noise %q, choice %q", name, chosen, res.Model.Noise, d.Choice)
			}
		} else if res.Model.Noise != tc.want {
			t.Errorf("%s: model.noise %q, want %q", name, res.Model.Noise, tc.want)
		}
		if res.Model.Noise == "shared" {
			for _, r := range res.Raters[1:] {
				if r.Precision.Mean != res.Raters[0].Precision.Mean {
					t.Errorf("%s: precisions %v and %v under one shared noise", name, res.Raters[0].Precision.Mean, r.Precision.Mean)
				}
			}
		}
		p, err := NewPredictor(res)
		if err != nil {
			t.Fatalf("%s: predictor: %v", name, err)
		}
		if _, err := p.Predict([]annotations.Item{{ID: "new"}}); err != nil {
			t.Errorf("%s: predict: %v", name, err)
		}
	}
	for _, bad := range []struct {
		spec FitSpec
		want string
	}{
		{FitSpec{Engine: "gibbs", Noise: "shared", Seed: 2}, "noise is not a setting of the ordinal model fitted by gibbs"},
		{FitSpec{Engine: "ep", Noise: "bogus", Seed: 2}, `noise "bogus": expected auto, per-rater, shared-thresholds or shared`},
	} {
		_, err := Fit(context.Background(), ds, bad.spec, nil)
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(annotations.ErrorMessage(err), bad.want) {
			t.Errorf("%s with noise %q: %v, want %q", bad.spec.Engine, bad.spec.Noise, err, bad.want)
		}
	}
}
