package reports

import (
	"bytes"
	"math"
	"strconv"
	"strings"
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
		js := reportJSON(t, rep)
		if err := validate(t, compileSchema(t), js); err != nil {
			t.Errorf("%s: the report does not validate:\n%v", tc.name, err)
		}
	}
}

// checkLabelErrors checks the Label errors sheet (robust fits) against the
// fit: every label once, by decreasing p_error, with the item's consensus,
// the highlights, and the Raters sheet's error rates; the Summary sheet's
// robust lines.
func checkLabelErrors(b *book, c reportCase) {
	rows := b.rows(SheetLabelErrors)
	n := len(c.fit.LabelErrors)
	if len(rows) < n+1 {
		b.t.Fatalf("Label errors: %d rows, want %d and a note", len(rows), n+1)
	}
	h := b.table(SheetLabelErrors, rows[0], "Rank", "Item", "Rater", "Label", "P(error)", "Flagged", "Consensus class", "P(class)", "Item position")
	if _, ok := h["Item text"]; ok != hasItemText(c.rep) {
		b.t.Errorf("Label errors: item text column %v, report has texts %v", ok, hasItemText(c.rep))
	}
	want := map[[2]string]float64{}
	for _, le := range c.fit.LabelErrors {
		want[[2]string{le.Item, le.Rater}] = le.PError
	}
	items := map[string]*Item{}
	for i := range c.rep.Items {
		items[c.rep.Items[i].ID] = &c.rep.Items[i]
	}
	prev := math.Inf(1)
	seen := map[[2]string]bool{}
	for i, row := range rows[1 : n+1] {
		key := [2]string{at(row, h["Item"]), at(row, h["Rater"])}
		p, ok := want[key]
		if !ok || seen[key] {
			b.t.Fatalf("Label errors row %d: %v is not a label, or twice", i+2, key)
		}
		seen[key] = true
		b.number("Label errors rank", at(row, h["Rank"]), float64(i+1))
		b.number("Label errors P(error) of "+key[0]+"/"+key[1], at(row, h["P(error)"]), p)
		if p > prev {
			b.t.Errorf("Label errors row %d: P(error) %v after %v", i+2, p, prev)
		}
		prev = p
		it := items[key[0]]
		if at(row, h["Consensus class"]) != it.Consensus || at(row, h["Label"]) != it.Labels[key[1]] {
			b.t.Errorf("Label errors row %d: consensus %q label %q, item %+v", i+2, at(row, h["Consensus class"]), at(row, h["Label"]), it.Labels)
		}
		b.number("Label errors P(class)", at(row, h["P(class)"]), float64(it.Prob))
		b.number("Label errors position", at(row, h["Item position"]), float64(it.Position))
		if t, ok := h["Item text"]; ok && at(row, t) != it.Text {
			b.t.Errorf("Label errors row %d: text %q, want %q", i+2, at(row, t), it.Text)
		}
	}
	b.cellType(SheetLabelErrors, h["P(error)"], 1, true)
	b.cellType(SheetLabelErrors, h["Item"], 1, false)
	cf, err := b.f.GetConditionalFormats(SheetLabelErrors)
	if err != nil {
		b.t.Fatal(err)
	}
	if len(cf) == 0 {
		b.t.Errorf("Label errors: no highlights")
	}
	// Raters: the error rate and EM steps.
	rrows := b.rows(SheetRaters)
	rh := header(rrows[0])
	for i, r := range c.fit.Raters {
		if r.Epsilon == nil {
			continue
		}
		b.number("Raters error rate of "+r.ID, at(rrows[i+1], rh["Error rate ε"]), r.Epsilon.Value)
		if len(r.Epsilon.History) > 1 {
			b.number("Raters EM steps of "+r.ID, at(rrows[i+1], rh["EM steps"]), float64(len(r.Epsilon.History)-1))
		}
	}
	// Summary: the robust lines.
	kv := map[string]string{}
	for _, r := range b.rows(SheetSummary) {
		if len(r) >= 2 {
			kv[r[0]] = r[1]
		}
	}
	if !strings.HasPrefix(kv["Labelling-error rates ε"], "learnt per rater by EM") || !strings.HasPrefix(kv["Model selection by the evidence (Kim & Ghahramani eq. 21)"], "robust kept (log evidence plain ") {
		b.t.Errorf("Summary: error rates %q, selection %q", kv["Labelling-error rates ε"], kv["Model selection by the evidence (Kim & Ghahramani eq. 21)"])
	}
	if !strings.Contains(kv["Model"], "Kim & Ghahramani") {
		b.t.Errorf("Summary: model %q", kv["Model"])
	}
	b.number("Summary likely errors", kv["Labels more probably wrong than right (p_error > 0.5)"], float64(*c.rep.Summary.LikelyErrors))
}

// TestLabelErrorsCSV reads the label-errors CSV of the robust report back
// and checks it against the report, and that WriteAll writes it only for
// reports with label errors.
func TestLabelErrorsCSV(t *testing.T) {
	c := robustCase(t)
	recs := writtenCSV(t, func(b *bytes.Buffer) error { return WriteLabelErrorsCSV(b, c.rep) })
	if len(recs) != len(c.rep.LabelErrors)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(c.rep.LabelErrors)+1)
	}
	h := header(recs[0])
	for i, le := range c.rep.LabelErrors {
		r := recs[i+1]
		p, err := strconv.ParseFloat(r[h["P(error)"]], 64)
		if err != nil || p != float64(le.PError) || r[h["Item"]] != le.Item || r[h["Rater"]] != le.Rater || r[h["Label"]] != le.Label ||
			r[h["Consensus class"]] != le.Consensus || r[h["Flagged"]] != map[bool]string{true: "yes", false: "no"}[le.Flagged] {
			t.Fatalf("record %d %q, label error %+v", i+1, r, le)
		}
		if got, want := r[h["Item text"]], c.rep.Items[le.Position-1].Text; got != want || got == "" {
			t.Fatalf("record %d: text %q, want %q", i+1, got, want)
		}
	}
	for _, tc := range []reportCase{c, binaryCase(t)} {
		dir := t.TempDir()
		paths, err := WriteAll(dir, tc.rep)
		if err != nil {
			t.Fatal(err)
		}
		want := len(tc.rep.LabelErrors) > 0
		found := false
		for _, p := range paths {
			found = found || strings.HasSuffix(p, "-label-errors.csv")
		}
		if found != want {
			t.Errorf("%s: WriteAll wrote a label-errors table: %v, want %v (%v)", tc.name, found, want, paths)
		}
	}
}
