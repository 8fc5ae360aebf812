package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
	"concord/multirater"
)

// meanMedian returns the mean and median of an item's ratings, computed
// here independently of the reports.
func meanMedian(t testing.TB, labels map[string]string) (float64, float64) {
	t.Helper()
	var v []float64
	for _, s := range labels {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("rating %q: %v", s, err)
		}
		v = append(v, x)
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return sum / float64(n), med
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestBuildValues checks the report of the real bounded fit against the
// fit document: values, scores and ranks of the items, the raters' mean
// and median, dispersions and biases, flags with the items' values.
func TestBuildValues(t *testing.T) {
	c := boundedCase(t)
	rep, fit := c.rep, c.fit
	if rep.Kind != KindValues || len(rep.Levels) != 0 || rep.Thresholds != nil || rep.Classes != nil {
		t.Fatalf("kind %q, %d levels, thresholds %v, classes %v", rep.Kind, len(rep.Levels), rep.Thresholds, rep.Classes)
	}
	if rep.Project.SchemeKind != "bounded" || rep.Project.Scheme != "bounded:-100..100" {
		t.Errorf("project %+v", rep.Project)
	}
	byID := map[string]*FitItem{}
	for i := range fit.Items {
		byID[fit.Items[i].ID] = &fit.Items[i]
	}
	prev := math.Inf(-1)
	for i, it := range rep.Items {
		fi := byID[it.ID]
		if it.Position != i+1 {
			t.Errorf("item %s: position %d at %d", it.ID, it.Position, i+1)
		}
		if it.Value == nil || float64(it.Value.Mean) != fi.Value.Mean || float64(it.Value.Q025) != fi.Value.Q025 || float64(it.Value.Q975) != fi.Value.Q975 {
			t.Errorf("item %s: value %+v, want %+v", it.ID, it.Value, fi.Value)
		}
		if it.Score == nil || float64(it.Score.Mean) != fi.Score.Mean || float64(it.Score.SD) != fi.Score.SD {
			t.Errorf("item %s: score %+v, want %+v", it.ID, it.Score, fi.Score)
		}
		if float64(it.Rank.Mean) < prev {
			t.Errorf("item %s: mean rank %v after %v", it.ID, it.Rank.Mean, prev)
		}
		prev = float64(it.Rank.Mean)
		if it.Consensus != "" || len(it.Probs) != 0 || it.Prob.Valid() || it.Entropy.Valid() {
			t.Errorf("item %s: consensus %q, probs %v, prob %v, entropy %v", it.ID, it.Consensus, it.Probs, it.Prob, it.Entropy)
		}
		mean, med := meanMedian(t, fi.Labels)
		if !near(float64(it.Baselines["mean"].Score), mean) || !near(float64(it.Baselines["median"].Score), med) {
			t.Errorf("item %s: baselines %+v, want mean %v median %v", it.ID, it.Baselines, mean, med)
		}
		if it.NLabels != fi.NLabels || len(it.Labels) != len(fi.Labels) {
			t.Errorf("item %s: %d ratings (%d recorded), want %d", it.ID, it.NLabels, len(it.Labels), fi.NLabels)
		}
	}
	flags := map[string]int{}
	for _, f := range fit.Flags {
		flags[f.Rater]++
	}
	for l, r := range rep.Raters {
		fr := &fit.Raters[l]
		if r.ID != fr.ID || r.Dispersion == nil || float64(r.Dispersion.Mean) != fr.Dispersion.Mean ||
			float64(r.Dispersion.Q025) != fr.Dispersion.Q025 || float64(r.Dispersion.Q975) != fr.Dispersion.Q975 {
			t.Errorf("rater %s: dispersion %+v, want %+v", r.ID, r.Dispersion, fr.Dispersion)
		}
		if r.Bias == nil || float64(r.Bias.Mean) != fr.Bias.Mean {
			t.Errorf("rater %s: bias %+v, want %+v", r.ID, r.Bias, fr.Bias)
		}
		if float64(r.MeanLogPred) != fr.MeanLogPred || r.NLabels != fr.NLabels || r.Flags != flags[r.ID] {
			t.Errorf("rater %s: mean log pred %v, %d ratings, %d flags; want %v, %d, %d", r.ID, r.MeanLogPred, r.NLabels, r.Flags, fr.MeanLogPred, fr.NLabels, flags[r.ID])
		}
		if len(r.LevelCounts) != 0 || r.Severity != nil {
			t.Errorf("rater %s: level counts %v, severity %+v", r.ID, r.LevelCounts, r.Severity)
		}
		if _, ok := r.Baselines["mean"]; !ok {
			t.Errorf("rater %s: no MAE against the mean rating", r.ID)
		}
	}
	if len(rep.Flags) != len(fit.Flags) || len(rep.Flags) == 0 {
		t.Fatalf("%d flags, want %d (and some)", len(rep.Flags), len(fit.Flags))
	}
	for i, f := range rep.Flags {
		ff := fit.Flags[i]
		fi := byID[f.Item]
		if f.Label != ff.Label || float64(f.Prob) != ff.Prob || f.Expected != ff.Expected || !f.Flagged {
			t.Errorf("flag %d: %+v, want %+v", i, f, ff)
		}
		if f.ItemValue == nil || float64(f.ItemValue.Mean) != fi.Value.Mean || float64(f.ItemValue.Q975) != fi.Value.Q975 {
			t.Errorf("flag %d: item value %+v, want %+v", i, f.ItemValue, fi.Value)
		}
		if f.Position != rep.Items[f.Position-1].Position || rep.Items[f.Position-1].ID != f.Item {
			t.Errorf("flag %d: position %d", i, f.Position)
		}
	}
	s := rep.Summary
	if s.Items != 20 || s.Raters != 38 || s.Labels != 200 || s.Flags != len(fit.Flags) || s.ConsensusAgreement.Valid() || s.GoldItems != 0 {
		t.Errorf("summary %+v", s)
	}
	if s.Alpha == nil || s.Alpha.Variant != "interval" {
		t.Errorf("summary alpha %+v, want Krippendorff's interval alpha", s.Alpha)
	}
	if s.TopItem != rep.Items[0].ID || s.MostPrecise == "" {
		t.Errorf("summary top item %q, most consistent %q", s.TopItem, s.MostPrecise)
	}
	// The baseline aggregators are the mean and the median, correlated
	// with the model's consensus value.
	for _, a := range rep.Agreement.Aggregators {
		if a.Name != "mean" && a.Name != "median" {
			t.Errorf("aggregator %s on bounded ratings", a.Name)
		}
		if !(float64(a.ScoreCorrelation) > 0.8) {
			t.Errorf("aggregator %s: correlation with the consensus value %v", a.Name, a.ScoreCorrelation)
		}
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "bounded ratings") {
		t.Errorf("notes %q", rep.Notes)
	}

	// The live fit: no bias, an item nobody rated, no agreement.
	lc := liveBoundedCase(t)
	for _, r := range lc.rep.Raters {
		if r.Bias != nil || r.Dispersion == nil {
			t.Errorf("live: rater %s: bias %+v, dispersion %+v", r.ID, r.Bias, r.Dispersion)
		}
	}
	for _, it := range lc.rep.Items {
		if it.ID == "unrated" && (it.NLabels != 0 || it.Value == nil || it.Baselines != nil) {
			t.Errorf("live: the unrated item %+v", it)
		}
	}
}

// boundedDoc returns the bounded fit document as a JSON object, for edits.
func boundedDoc(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	testutil.ReadJSON(t, filepath.Join("testdata", "fit_snow_valence.json"), &m)
	return m
}

// TestValuesErrors checks that inconsistent bounded fits are refused with
// a precise error: levels, non-numeric ratings, thresholds, a scheme that
// is not the fit's.
func TestValuesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"levels", "levels in a fit of bounded ratings", func(m map[string]any) { m["levels"] = []any{"a", "b"} }},
		{"rating", "is not a number", func(m map[string]any) {
			m["items"].([]any)[0].(map[string]any)["labels"].(map[string]any)["amt004"] = "high"
		}},
		{"thresholds", "thresholds in a fit of bounded ratings", func(m map[string]any) {
			m["raters"].([]any)[0].(map[string]any)["thresholds"] = []any{map[string]any{"mean": 0, "between": []any{"a", "b"}}}
		}},
	} {
		m := boundedDoc(t)
		tc.edit(m)
		b, _ := json.Marshal(m)
		_, err := ReadFit(bytes.NewReader(b))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	fit := boundedFit(t)
	for _, tc := range []struct{ scheme, want string }{
		{"ordinal:0..3", "is of bounded ratings"},
		{"bounded:0..100", "does not bound the fit's ratings"},
	} {
		_, err := BuildFit(annotations.Project{Name: "x", Scheme: annotations.MustParseScheme(tc.scheme)}, fit, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scheme %s: err %v, want %q", tc.scheme, err, tc.want)
		}
	}
	// An ordinal fit is not reported on a bounded scheme.
	_, err := BuildFit(annotations.Project{Name: "x", Scheme: annotations.MustParseScheme("bounded:0..3")}, ordinalFit(t), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "is bounded but the fit has levels") {
		t.Errorf("ordinal fit on a bounded scheme: err %v", err)
	}
	// Without a scheme, the fit's range makes one.
	fit.Model.Scheme = ""
	rep, err := BuildFit(annotations.Project{Name: "x"}, fit, nil, nil)
	if err != nil || rep.Project.Scheme != "bounded:-100..100" {
		t.Errorf("scheme from the fit's range: %v, %+v", err, rep)
	}
}

// TestSchemaRejectsValues checks the schema's rules for reports of values.
func TestSchemaRejectsValues(t *testing.T) {
	s := compileSchema(t)
	js := reportJSON(t, boundedCase(t).rep)
	mustNotValidate(t, s, js, []docEdit{
		{"levels", func(m map[string]any) { m["levels"] = []any{map[string]any{"code": "a"}, map[string]any{"code": "b"}} }},
		{"thresholds", func(m map[string]any) { m["thresholds"] = []any{} }},
		{"classes", func(m map[string]any) { m["classes"] = map[string]any{"counts": []any{}, "confusion": []any{}} }},
		{"probs", func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["probs"] = []any{0.5, 0.5} }},
		{"value without mean", func(m map[string]any) {
			delete(m["items"].([]any)[0].(map[string]any)["value"].(map[string]any), "mean")
		}},
		{"dispersion as a number", func(m map[string]any) { m["raters"].([]any)[0].(map[string]any)["dispersion"] = 3 }},
		{"item value as a string", func(m map[string]any) { m["flags"].([]any)[0].(map[string]any)["item_value"] = "12" }},
		{"ordinal without levels", func(m map[string]any) { m["kind"] = "ordinal" }},
	})
}

// TestValuesCSV reads the Items and Raters CSV tables of the bounded
// report back and compares them with the report.
func TestValuesCSV(t *testing.T) {
	rep := boundedCase(t).rep
	read := func(write func(*bytes.Buffer) error) ([]string, [][]string) {
		recs := writtenCSV(t, write)
		return recs[0], recs[1:]
	}
	hdr, rows := read(func(b *bytes.Buffer) error { return WriteItemsCSV(b, rep) })
	want := "Rank,Item,Value,Value 2.5%,Value 97.5%,Value SD,Score,Score SD,Mean rank,Rank 2.5%,Rank 97.5%,Raters' mean,Raters' median,Ratings,Flags"
	if got := strings.Join(hdr, ","); !strings.HasPrefix(got, want+",") {
		t.Fatalf("items header %s, want %s,RATERS", got, want)
	}
	if len(hdr) != 15+len(rep.Raters) || len(rows) != len(rep.Items) {
		t.Fatalf("items: %d columns, %d rows", len(hdr), len(rows))
	}
	h := header(hdr)
	for i, row := range rows {
		it := &rep.Items[i]
		for name, want := range map[string]Number{"Value": it.Value.Mean, "Value 2.5%": it.Value.Q025, "Value 97.5%": it.Value.Q975,
			"Score": it.Score.Mean, "Raters' mean": it.Baselines["mean"].Score, "Raters' median": it.Baselines["median"].Score} {
			if got, _ := strconv.ParseFloat(row[h[name]], 64); got != float64(want) {
				t.Errorf("items %s: %s %q, want %v", it.ID, name, row[h[name]], want)
			}
		}
		if row[h["Item"]] != it.ID || row[h["Ratings"]] != strconv.Itoa(it.NLabels) {
			t.Errorf("items row %d: %q", i+1, row)
		}
		for _, r := range rep.Raters {
			if row[h[r.ID]] != it.Labels[r.ID] {
				t.Errorf("items %s: rater %s %q, want %q", it.ID, r.ID, row[h[r.ID]], it.Labels[r.ID])
			}
		}
	}
	hdr, rows = read(func(b *bytes.Buffer) error { return WriteRatersCSV(b, rep) })
	want = "Rater,Ratings,Dispersion,Dispersion SD,Dispersion 2.5%,Dispersion 50%,Dispersion 97.5%,Bias (probit scale),Mean kappa (quadratic),Mean log predictive density,Flags,MAE vs mean rating,MAE vs median rating"
	if got := strings.Join(hdr, ","); got != want {
		t.Errorf("raters header %s, want %s", got, want)
	}
	h = header(hdr)
	for i, row := range rows {
		r := &rep.Raters[i]
		for name, want := range map[string]Number{"Dispersion": r.Dispersion.Mean, "Dispersion 97.5%": r.Dispersion.Q975,
			"Bias (probit scale)": r.Bias.Mean, "Mean log predictive density": r.MeanLogPred} {
			if got, _ := strconv.ParseFloat(row[h[name]], 64); got != float64(want) {
				t.Errorf("raters %s: %s %q, want %v", r.ID, name, row[h[name]], want)
			}
		}
	}
}

// TestValuePlots checks what the plots of a report of values show, and
// draws the value plot of a larger synthetic report (no item names on the
// axis) and a dispersion plot with a non-positive estimate.
func TestValuePlots(t *testing.T) {
	rep := boundedCase(t).rep
	for name, want := range map[string][]string{
		PlotConsensus:  {"Consensus value per item", "raters", "577"},
		PlotDispersion: {"Rater dispersion ν", "amt288", "log scale"},
	} {
		var buf bytes.Buffer
		if err := WritePlot(&buf, rep, name, SVG); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s.svg does not show %q", name, w)
			}
		}
	}
	if err := WritePlot(new(bytes.Buffer), rep, PlotPrecision, PNG); err == nil {
		t.Error("a report of values draws the precision plot")
	}

	// A SYNTHETIC fit of values with 60 items and a broken dispersion.
	lo, hi := 0.0, 1.0
	fit := &Fit{Schema: multirater.FitSchema, Model: multirater.ModelSettings{Model: "bounded", Output: multirater.OutputValues, Engine: multirater.EngineEP,
		Scheme: "bounded:0..1", Likelihood: "beta", Lo: &lo, Hi: &hi, FlagThreshold: 0.05}}
	for l := 0; l < 3; l++ {
		nu := float64(l) * 5 // 0 for the first: left off the log axis
		fit.Raters = append(fit.Raters, multirater.RaterResult{ID: fmt.Sprintf("r%d", l), NLabels: 60,
			Dispersion: &multirater.Estimate{Mean: nu, Q025: nu / 2, Q50: nu, Q975: nu * 2}})
	}
	for n := 0; n < 60; n++ {
		v := float64(n) / 60
		it := FitItem{ItemResult: multirater.ItemResult{ID: fmt.Sprintf("i%02d", n), NLabels: 3, Labels: map[string]string{},
			Value: &multirater.Estimate{Mean: v, Q025: v / 2, Q50: v, Q975: (1 + v) / 2}, Score: &multirater.Estimate{Mean: v - 0.5}}}
		for l := 0; l < 3; l++ {
			it.Labels[fmt.Sprintf("r%d", l)] = strconv.FormatFloat(math.Min(v+0.1*float64(l), 1), 'g', -1, 64)
		}
		fit.Items = append(fit.Items, it)
	}
	big, err := BuildFit(annotations.Project{Name: "synthetic-values"}, fit, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Plots(big) {
		var buf bytes.Buffer
		if err := WritePlot(&buf, big, p.Name, PNG); err != nil || buf.Len() == 0 {
			t.Errorf("synthetic values: %s: %v", p.Name, err)
		}
	}
	var buf bytes.Buffer
	if err := WritePlot(&buf, big, PlotConsensus, SVG); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "60 items, sorted by consensus value") {
		t.Error("synthetic values: the consensus plot does not count its items")
	}
	if err := WriteXLSX(new(bytes.Buffer), big, XLSXOptions{}); err != nil {
		t.Errorf("synthetic values: workbook: %v", err)
	}
}

func checkValueSummary(b *book, c reportCase) {
	kv := b.summary()
	if kv["Project"] != c.rep.Project.Name || kv["Likelihood"] != c.fit.Model.Likelihood || kv["Engine"] != c.fit.Model.Engine {
		b.t.Errorf("Summary: project %q, likelihood %q, engine %q", kv["Project"], kv["Likelihood"], kv["Engine"])
	}
	b.number("Summary seed", kv["Seed"], float64(c.fit.Model.Seed))
	b.number("Summary items", kv["Items"], float64(len(c.fit.Items)))
	b.number("Summary raters", kv["Raters"], float64(len(c.fit.Raters)))
	b.number("Summary ratings", kv["Ratings"], float64(c.rep.Summary.Labels))
	b.number("Summary flags", kv["Surprising ratings (flags)"], float64(len(c.fit.Flags)))
	if conv := kv["Convergence"]; !strings.HasPrefix(conv, "The approximation has converged") || !strings.Contains(conv, strings.TrimPrefix(c.fit.Diagnostics.Verdict, "converged: ")) || strings.Contains(conv, "converged: converged") {
		b.t.Errorf("Summary: convergence %q", conv)
	}
	for _, k := range []string{"Chains", "Levels", "Max split R-hat", "Precision prior shape v", "Most precise rater"} {
		if _, ok := kv[k]; ok {
			b.t.Errorf("Summary: row %q in a report of values", k)
		}
	}
	if kv["Most consistent rater (highest dispersion ν)"] != c.rep.Summary.MostPrecise {
		b.t.Errorf("Summary: most consistent rater %q, want %q", kv["Most consistent rater (highest dispersion ν)"], c.rep.Summary.MostPrecise)
	}
}

func checkValueItems(b *book, c reportCase) {
	rows := b.tableRows(SheetItems, len(c.fit.Items))
	h := b.table(SheetItems, rows[0], "Rank", "Item", "Value", "Value 2.5%", "Value 97.5%", "Value SD", "Score", "Score SD",
		"Mean rank", "Rank 2.5%", "Rank 97.5%", "Raters' mean", "Raters' median", "Ratings", "Flags")
	b.absent(SheetItems, h, "in a report of values", "Probability", "Consensus grade", "Consensus class", "Entropy (bits)")
	prevRank := math.Inf(-1)
	b.eachItem(c, rows, h, "rating", func(row []string, id string, fi *FitItem) {
		b.number("Items value of "+id, at(row, h["Value"]), fi.Value.Mean)
		b.number("Items value 2.5% of "+id, at(row, h["Value 2.5%"]), fi.Value.Q025)
		b.number("Items value 97.5% of "+id, at(row, h["Value 97.5%"]), fi.Value.Q975)
		b.number("Items score of "+id, at(row, h["Score"]), fi.Score.Mean)
		b.number("Items score SD of "+id, at(row, h["Score SD"]), fi.Score.SD)
		b.number("Items mean rank of "+id, at(row, h["Mean rank"]), fi.Rank.Mean)
		if fi.Rank.Mean < prevRank {
			b.t.Errorf("Items: %s has mean rank %v after %v: not in consensus order", id, fi.Rank.Mean, prevRank)
		}
		prevRank = fi.Rank.Mean
		b.number("Items ratings of "+id, at(row, h["Ratings"]), float64(fi.NLabels))
		mean, med := meanMedian(b.t, fi.Labels)
		for name, want := range map[string]float64{"Raters' mean": mean, "Raters' median": med} {
			got, err := strconv.ParseFloat(at(row, h[name]), 64)
			if math.IsNaN(want) {
				if at(row, h[name]) != "" {
					b.t.Errorf("Items %s: %s %q, want empty", id, name, at(row, h[name]))
				}
			} else if err != nil || !near(got, want) {
				b.t.Errorf("Items %s: %s %q, want %v", id, name, at(row, h[name]), want)
			}
		}
	})
	b.cellType(SheetItems, h["Item"], 1, false)
	b.cellType(SheetItems, h["Value"], 1, true)
	b.cellType(SheetItems, h["Raters' mean"], 1, true)
	b.raterCellsNumeric(c, rows, h)
}

func checkValueRaters(b *book, c reportCase) {
	rows := b.tableRows(SheetRaters, len(c.fit.Raters))
	want := []string{"Rater", "Ratings", "Dispersion", "Dispersion SD", "Dispersion 2.5%", "Dispersion 50%", "Dispersion 97.5%"}
	hasBias := false
	for _, r := range c.fit.Raters {
		hasBias = hasBias || r.Bias != nil
	}
	if hasBias {
		want = append(want, "Bias (probit scale)")
	}
	h := b.table(SheetRaters, rows[0], want...)
	b.absent(SheetRaters, h, "in a report of values", "Precision", "Variance", "Reference", "Agreement with consensus")
	flags := map[string]int{}
	for _, f := range c.fit.Flags {
		flags[f.Rater]++
	}
	b.eachRater(c, rows, h, "Ratings", func(i int, row []string, r multirater.RaterResult) {
		b.number("Raters dispersion of "+r.ID, at(row, h["Dispersion"]), r.Dispersion.Mean)
		b.number("Raters dispersion 2.5% of "+r.ID, at(row, h["Dispersion 2.5%"]), r.Dispersion.Q025)
		b.number("Raters dispersion 97.5% of "+r.ID, at(row, h["Dispersion 97.5%"]), r.Dispersion.Q975)
		if r.Bias != nil {
			b.number("Raters bias of "+r.ID, at(row, h["Bias (probit scale)"]), r.Bias.Mean)
		}
		b.number("Raters mean log predictive density of "+r.ID, at(row, h["Mean log predictive density"]), r.MeanLogPred)
		b.number("Raters flags of "+r.ID, at(row, h["Flags"]), float64(flags[r.ID]))
		b.cellType(SheetRaters, h["Dispersion"], i+1, true)
	})
	checkSkills(b, c, rows)
}

func checkValueFlags(b *book, c reportCase) {
	rows := b.rows(SheetFlags)
	b.table(SheetFlags, rows[0], "Item", "Rater", "Rating", "Tail probability", "Rater's expected rating", "Item value", "Item value 2.5%", "Item value 97.5%", "Item position")
	byID := map[string]*FitItem{}
	for i := range c.fit.Items {
		byID[c.fit.Items[i].ID] = &c.fit.Items[i]
	}
	for i, fl := range c.fit.Flags {
		row := rows[i+1]
		if at(row, 0) != fl.Item || at(row, 1) != fl.Rater || at(row, 2) != fl.Label {
			b.t.Errorf("Flags row %d: %q, want %+v", i+2, row, fl)
		}
		b.number("Flags tail probability", at(row, 3), fl.Prob)
		exp, _ := strconv.ParseFloat(fl.Expected, 64)
		b.number("Flags expected rating", at(row, 4), exp)
		b.number("Flags item value", at(row, 5), byID[fl.Item].Value.Mean)
		b.number("Flags item value 97.5%", at(row, 7), byID[fl.Item].Value.Q975)
	}
	note := at(rows[len(c.fit.Flags)+2], 0)
	if !strings.Contains(note, "two-sided tail probability") {
		b.t.Errorf("Flags: note %q", note)
	}
}
