package reports

import (
	"bytes"
	"math"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// TestBuildRobust checks the robust model's fields of the report of the
// real robust fit: every label with its p_error beside the item's
// consensus, the raters' error rates, the log evidence and the model
// selection.
func TestBuildRobust(t *testing.T) {
	c := robustCase(t)
	rep, fit := c.rep, c.fit
	if rep.Kind != KindClassification || rep.Classes == nil {
		t.Fatalf("kind %s", rep.Kind)
	}
	if len(rep.LabelErrors) != len(fit.LabelErrors) || len(rep.LabelErrors) != rep.Summary.Labels || rep.Summary.Labels != 400 {
		t.Fatalf("%d label errors, fit %d, labels %d", len(rep.LabelErrors), len(fit.LabelErrors), rep.Summary.Labels)
	}
	byID := map[string]*Item{}
	for i := range rep.Items {
		byID[rep.Items[i].ID] = &rep.Items[i]
	}
	flagged := map[[2]string]bool{}
	for _, f := range rep.Flags {
		flagged[[2]string{f.Item, f.Rater}] = true
		// The robust model's flags: Prob = 1 - p_error.
		if f.Prob >= Number(rep.Model.FlagThreshold) {
			t.Errorf("flag %s/%s with probability %v", f.Item, f.Rater, f.Prob)
		}
	}
	nFlagged, likely := 0, 0
	for i, le := range rep.LabelErrors {
		if i > 0 && le.PError > rep.LabelErrors[i-1].PError {
			t.Fatalf("label errors not by decreasing p_error at %d", i)
		}
		it := byID[le.Item]
		if it == nil || it.Labels[le.Rater] != le.Label {
			t.Fatalf("label error %+v: not a label of the report", le)
		}
		if le.Consensus != it.Consensus || le.ConsensusProb != it.Prob || le.Position != it.Position {
			t.Errorf("label error %+v: item %s has consensus %s (%v) at %d", le, it.ID, it.Consensus, it.Prob, it.Position)
		}
		if le.Flagged != flagged[[2]string{le.Item, le.Rater}] {
			t.Errorf("label error %+v: flagged %v", le, flagged[[2]string{le.Item, le.Rater}])
		}
		if le.Flagged {
			nFlagged++
			if !(1-float64(le.PError) < rep.Model.FlagThreshold+1e-6) {
				t.Errorf("flagged label error %+v: 1 - p_error is not below %g", le, rep.Model.FlagThreshold)
			}
		}
		if le.PError > 0.5 {
			likely++
		}
	}
	if nFlagged != len(rep.Flags) || nFlagged == 0 {
		t.Errorf("%d flagged label errors, %d flags", nFlagged, len(rep.Flags))
	}
	if rep.Summary.LikelyErrors == nil || *rep.Summary.LikelyErrors != likely || likely == 0 {
		t.Errorf("likely label errors %v, want %d", rep.Summary.LikelyErrors, likely)
	}
	// Error rates learnt by EM.
	for l, r := range rep.Raters {
		fe := fit.Raters[l].Epsilon
		e := r.Epsilon
		if e == nil || fe == nil {
			t.Fatalf("rater %s: no epsilon", r.ID)
		}
		if float64(e.Value) != fe.Value || !e.Learnt || e.Steps != len(fe.History)-1 || e.Steps < 1 || len(e.History) != len(fe.History) {
			t.Errorf("rater %s: epsilon %+v, fit %+v", r.ID, e, fe)
		}
	}
	s := rep.Summary
	if s.ErrorRates != "learnt" || s.MostErrorProne == "" || s.LeastErrorProne == "" || s.MostErrorProne == s.LeastErrorProne {
		t.Errorf("summary error rates %q, most %q, least %q", s.ErrorRates, s.MostErrorProne, s.LeastErrorProne)
	}
	// The evidence and the selection.
	d := rep.Diagnostics
	if d.LogEvidence == nil || float64(*d.LogEvidence) != *fit.Diagnostics.LogEvidence {
		t.Errorf("log evidence %v, fit %v", d.LogEvidence, fit.Diagnostics.LogEvidence)
	}
	if d.Selected != "robust" || len(d.Evidence) != 2 || !(d.Evidence["robust"] > d.Evidence["plain"]) || float64(d.Evidence["robust"]) != float64(*d.LogEvidence) {
		t.Errorf("selection %q, evidence %v", d.Selected, d.Evidence)
	}
	if s.Selected != d.Selected || s.LogEvidence == nil || *s.LogEvidence != *d.LogEvidence {
		t.Errorf("summary selection %q, log evidence %v", s.Selected, s.LogEvidence)
	}
	// Gold labels and texts from the items file.
	if s.GoldItems != 40 {
		t.Errorf("%d gold items", s.GoldItems)
	}
	for _, it := range rep.Items {
		if it.Text == "" {
			t.Errorf("item %s has no text", it.ID)
		}
	}
}

// TestBuildRobustFixed: error rates fixed (no EM history), and the plain
// classifier kept by the selection (error rates 0).
func TestBuildRobustFixed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		eps      float64
		selected string
		want     string
	}{{"fixed", 0.1, "", "fixed"}, {"plain", 0, "plain", "none"}} {
		fit := robustFit(t)
		fit.Diagnostics.Selected = tc.selected
		if tc.selected == "" {
			fit.Diagnostics.Evidence = nil
		}
		fit.Raters = append([]multirater.RaterResult(nil), fit.Raters...)
		for l := range fit.Raters {
			fit.Raters[l].Epsilon = &multirater.ErrorRate{Value: tc.eps}
			if tc.eps > 0 {
				fit.Raters[l].Epsilon.History = []float64{tc.eps}
			}
		}
		rep, err := BuildFit(annotations.Project{Name: tc.name}, fit, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Summary.ErrorRates != tc.want || rep.Summary.MostErrorProne != "" || rep.Summary.Selected != tc.selected {
			t.Errorf("%s: error rates %q, most error-prone %q, selected %q", tc.name, rep.Summary.ErrorRates, rep.Summary.MostErrorProne, rep.Summary.Selected)
		}
		for _, r := range rep.Raters {
			if e := r.Epsilon; e == nil || e.Learnt || e.Steps != 0 || e.History != nil || math.Abs(float64(e.Value)-tc.eps) > 0 {
				t.Errorf("%s: rater %s epsilon %+v", tc.name, r.ID, e)
			}
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, rep); err != nil {
			t.Fatal(err)
		}
		if err := validate(t, compileSchema(t), buf.Bytes()); err != nil {
			t.Errorf("%s: the report does not validate:\n%v", tc.name, err)
		}
	}
}
