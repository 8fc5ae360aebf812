package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

func TestBuildOrdinal(t *testing.T) {
	c := ordinalCase(t)
	rep, fit := c.rep, c.fit
	if rep.Kind != KindOrdinal || rep.Classes != nil || len(rep.Thresholds) != len(fit.Raters) {
		t.Fatalf("kind %s, classes %v, %d thresholds", rep.Kind, rep.Classes, len(rep.Thresholds))
	}
	if rep.Summary.Items != 135 || rep.Summary.Raters != 7 || rep.Summary.Labels != 274 || rep.Summary.RatedItems != 135 {
		t.Errorf("summary %+v", rep.Summary)
	}
	// Consensus order: increasing posterior mean rank, positions 1..N.
	for i := range rep.Items {
		if rep.Items[i].Position != i+1 {
			t.Fatalf("item %d has position %d", i, rep.Items[i].Position)
		}
		if i > 0 && rep.Items[i].Rank.Mean < rep.Items[i-1].Rank.Mean {
			t.Fatalf("items %d and %d out of rank order", i-1, i)
		}
	}
	// Consensus agreement recomputed by hand, per rater and overall.
	hits, n := 0, 0
	for _, r := range rep.Raters {
		rh, rn := 0, 0
		for _, it := range rep.Items {
			if v, ok := it.Labels[r.ID]; ok {
				rn++
				if v == it.Consensus {
					rh++
				}
			}
		}
		if want := float64(rh) / float64(rn); math.Abs(float64(r.ConsensusAgreement)-want) > 1e-15 {
			t.Errorf("%s: consensus agreement %v, want %v", r.ID, r.ConsensusAgreement, want)
		}
		hits += rh
		n += rn
	}
	if want := float64(hits) / float64(n); math.Abs(float64(rep.Summary.ConsensusAgreement)-want) > 1e-15 {
		t.Errorf("summary consensus agreement %v, want %v", rep.Summary.ConsensusAgreement, want)
	}
	// Most and least precise raters.
	best, worst := fit.Raters[0], fit.Raters[0]
	for _, r := range fit.Raters {
		if r.Precision.Mean > best.Precision.Mean {
			best = r
		}
		if r.Precision.Mean < worst.Precision.Mean {
			worst = r
		}
	}
	if rep.Summary.MostPrecise != best.ID || rep.Summary.LeastPrecise != worst.ID {
		t.Errorf("most/least precise %s/%s, want %s/%s", rep.Summary.MostPrecise, rep.Summary.LeastPrecise, best.ID, worst.ID)
	}
	// Diagnostics groups.
	want := map[string]int{"alpha": 7, "b": 21, "m": 135}
	for _, g := range rep.Diagnostics.Groups {
		if want[g.Group] != g.Parameters {
			t.Errorf("group %s has %d parameters, want %d", g.Group, g.Parameters, want[g.Group])
		}
	}
	// Lowest labels: sorted, at most LowestLabels, probabilities from the
	// raters' predictive distributions, flags among them.
	if len(rep.Lowest) != LowestLabels {
		t.Fatalf("%d lowest labels", len(rep.Lowest))
	}
	for i, f := range rep.Lowest {
		if i > 0 && f.Prob < rep.Lowest[i-1].Prob {
			t.Errorf("lowest labels out of order at %d", i)
		}
	}
	for _, f := range rep.Flags {
		found := false
		for _, l := range rep.Lowest {
			found = found || (l.Item == f.Item && l.Rater == f.Rater && l.Flagged)
		}
		if !found && float64(f.Prob) < float64(rep.Lowest[len(rep.Lowest)-1].Prob) {
			t.Errorf("flag %+v missing from the lowest labels", f)
		}
	}
	// Agreement: Krippendorff's alpha at the ordinal level is the summary's.
	if rep.Summary.Alpha == nil || rep.Summary.Alpha.Variant != "ordinal" || rep.Agreement.Kappa.Weights != "quadratic" {
		t.Errorf("alpha %+v, kappa weights %s", rep.Summary.Alpha, rep.Agreement.Kappa.Weights)
	}
	for _, a := range rep.Agreement.Aggregators {
		if !a.AgreementWithModel.Valid() || a.Items == 0 {
			t.Errorf("aggregator %s: agreement with the model %v over %d items", a.Name, a.AgreementWithModel, a.Items)
		}
	}
	if ROC := rep.ROC; ROC != nil {
		t.Errorf("ROC for a 4-level scheme: %v", ROC)
	}
}

func TestBuildBinary(t *testing.T) {
	c := binaryCase(t)
	rep := c.rep
	if rep.Kind != KindClassification || rep.Thresholds != nil || rep.Classes == nil {
		t.Fatalf("kind %s", rep.Kind)
	}
	// Order by P(positive = "1"), decreasing.
	var ids []string
	for _, it := range rep.Items {
		ids = append(ids, it.ID)
	}
	if got, want := strings.Join(ids, ","), "t1,t2,t3,t6,t8,t4,t5,t7"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	// Gold: t1 1/1, t2 1/1, t3 1/0, t4 0/0, t5 0/0, t6 1/1 -> 5 of 6.
	if rep.Summary.GoldItems != 6 || math.Abs(float64(rep.Summary.GoldAccuracy)-5.0/6) > 1e-15 {
		t.Errorf("gold %d, accuracy %v", rep.Summary.GoldItems, rep.Summary.GoldAccuracy)
	}
	// Confusion of bob: consensus 1 on t1 (1), t2 (0), t3 (0), t6 (1);
	// consensus 0 on t4 (1), t5 (0).
	for _, cf := range rep.Classes.Confusion {
		if cf.Rater == "bob" {
			if want := [][]int{{1, 1}, {2, 2}}; !reflect.DeepEqual(cf.Counts, want) {
				t.Errorf("bob's confusion %v, want %v", cf.Counts, want)
			}
			if float64(cf.Agreement) != 3.0/6 {
				t.Errorf("bob's agreement %v", cf.Agreement)
			}
		}
	}
	// ROC of the model against gold: positives t1 .95, t2 .80, t6 .55;
	// negatives t3 .62, t4 .30, t5 .10. Pairs won: t1 3, t2 3, t6 2 -> 8/9.
	var model *ROC
	for i := range rep.ROC {
		if rep.ROC[i].Scorer == "model" {
			model = &rep.ROC[i]
		}
	}
	if model == nil || model.Reference != "gold" || model.N != 6 || model.Positives != 3 || math.Abs(float64(model.AUC)-8.0/9) > 1e-15 {
		t.Errorf("model ROC %+v", model)
	}
	// Entropy of t8 (0.5, 0.5) is 1 bit.
	for _, it := range rep.Items {
		if it.ID == "t8" && math.Abs(float64(it.Entropy)-1) > 1e-15 {
			t.Errorf("entropy of t8: %v", it.Entropy)
		}
	}
}

func TestROC(t *testing.T) {
	// Ties count one half: scores 1, 1, 0 with labels +, -, -: AUC =
	// (0.5 + 1) / 2 = 0.75.
	c := roc([]float64{1, 1, 0}, []bool{true, false, false})
	if float64(c.AUC) != 0.75 {
		t.Errorf("AUC %v, want 0.75", c.AUC)
	}
	if want := []float64{0, 0.5, 1}; !reflect.DeepEqual(c.FPR, want) {
		t.Errorf("FPR %v, want %v", c.FPR, want)
	}
	if roc([]float64{1, 2}, []bool{true, true}) != nil {
		t.Error("ROC with one class")
	}
}

// TestROCMajority checks the majority-vote reference when no item has a
// gold label: ties are left out.
func TestROCMajority(t *testing.T) {
	fit, _ := binaryFixture()
	rep, err := BuildFit(annotations.Project{Name: "x", Scheme: annotations.MustParseScheme("binary:0,1,pos=1")}, fit, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ROC) != 1 || rep.ROC[0].Reference != "majority" {
		t.Fatalf("ROC %+v", rep.ROC)
	}
	// Majority: t1 +, t2 +, t3 tie, t4 -, t5 -, t6 tie, t7 -, t8 none.
	if r := rep.ROC[0]; r.N != 5 || r.Positives != 2 || float64(r.AUC) != 1 {
		t.Errorf("ROC %+v", r)
	}
}

// TestESSPerCPUSecond checks that the report carries the fit's min bulk
// ESS per CPU second of sampling, and leaves it out when the fit does not
// know it.
func TestESSPerCPUSecond(t *testing.T) {
	for _, want := range []float64{0, 91.7} {
		fit, _ := binaryFixture()
		fit.Diagnostics.ESSPerCPUSecond = want
		rep, err := BuildFit(annotations.Project{Name: "x", Scheme: annotations.MustParseScheme("binary:0,1,pos=1")}, fit, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(rep.Diagnostics.ESSPerCPUSecond); got != want {
			t.Errorf("ess_per_cpu_second %v, want %v", got, want)
		}
		b, err := json.Marshal(rep.Diagnostics)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), `"ess_per_cpu_second"`); has != (want > 0) {
			t.Errorf("ess_per_cpu_second in the JSON: %v with %v", has, want)
		}
	}
}

func TestBuildNominal(t *testing.T) {
	rep := nominalCase(t).rep
	var ids []string
	for _, it := range rep.Items {
		ids = append(ids, it.ID+":"+it.Consensus)
	}
	// By class in level order, then probability.
	if got, want := strings.Join(ids, ","), "p1:cat,p4:cat,p2:dog,p3:fox"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	if rep.Items[1].NLabels != 0 || len(rep.Items[1].Labels) != 0 {
		t.Errorf("unlabelled item %+v", rep.Items[1])
	}
	if rep.Agreement == nil || rep.Agreement.Kappa.Weights != "unweighted" {
		t.Errorf("agreement %+v", rep.Agreement)
	}
}

func TestBuildErrors(t *testing.T) {
	fit := ordinalFit(t)
	if _, err := BuildFit(annotations.Project{Name: "x", Scheme: annotations.MustParseScheme("ordinal:1..4")}, fit, nil, nil); err == nil || !strings.Contains(err.Error(), "levels 1,2,3,4 but the fit has 0,1,2,3") {
		t.Errorf("scheme mismatch: %v", err)
	}
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"schema":"concord.fit/v2"}`, `schema "concord.fit/v2"`},
		{`{"levels":["a","b"]}`, `no "schema" field`},
		{`{"schema":"concord.fit/v1","levels":["a"]}`, "1 levels"},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","labels":{"q":"a"}}]}`, `unknown rater "q"`},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","labels":{"r":"c"}}]}`, `label "c" is not a level`},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","class_probs":[0.5]}]}`, "1 probabilities for 2 levels"},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","class_probs":{"z":1}}]}`, `unknown level "z"`},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i"},{"id":"i"}]}`, `item "i" appears twice`},
		{`{"schema":"concord.fit/v1","levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i"}],"flags":[{"item":"j","rater":"r"}]}`, "unknown item or rater"},
		{`not json`, "reading the fit result"},
	} {
		_, err := ReadFit(strings.NewReader(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.doc, err, tc.want)
		}
	}
	// A class given as an index, and class_probs as an array.
	f, err := ReadFit(strings.NewReader(`{"schema":"concord.fit/v1","model":{"model":"classification"},"levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","class":1,"class_probs":[0.25,0.75]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Items[0].Class != "b" || !reflect.DeepEqual(f.Items[0].ClassProbs, []float64{0.25, 0.75}) || !f.Classification() {
		t.Errorf("item %+v", f.Items[0])
	}
}

// TestDatasetLabels checks that labels missing from the fit result come
// from the dataset, and that Fit.Dataset returns the fit's labels.
func TestDatasetLabels(t *testing.T) {
	fit := ordinalFit(t)
	s := annotations.MustParseScheme("ordinal:0..3")
	ds := fit.Dataset(s)
	if len(ds.Labels) != 274 || len(ds.Items) != 135 || strings.Join(ds.RaterIDs(), ",") != raterIDs(fit) {
		t.Fatalf("dataset: %d labels, %d items, raters %v", len(ds.Labels), len(ds.Items), ds.RaterIDs())
	}
	stripped := *fit
	stripped.Items = append([]FitItem(nil), fit.Items...)
	for i := range stripped.Items {
		stripped.Items[i].Labels = nil
	}
	rep, err := BuildFit(annotations.Project{Name: "x", Scheme: s}, &stripped, nil, ds)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range rep.Items {
		n += len(it.Labels)
	}
	if n != 274 {
		t.Errorf("%d labels from the dataset, want 274", n)
	}
	rep, err = BuildFit(annotations.Project{Name: "x", Scheme: s}, &stripped, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Labels != 274 || !math.IsNaN(float64(rep.Raters[0].ConsensusAgreement)) {
		t.Errorf("without labels: %d labels, agreement %v", rep.Summary.Labels, rep.Raters[0].ConsensusAgreement)
	}
}

func raterIDs(f *Fit) string {
	var s []string
	for _, r := range f.Raters {
		s = append(s, r.ID)
	}
	return strings.Join(s, ",")
}

// TestFitFromResultClasses checks that FitFromResult reads the class
// fields of a FitResult as ReadFit reads them from its JSON (it replaced a
// reflection lookup of the fields by JSON name, whose test this was).
func TestFitFromResultClasses(t *testing.T) {
	res := &multirater.FitResult{
		Schema: multirater.FitSchema, Model: multirater.ModelSettings{Model: "classification"}, Levels: []string{"a", "b"},
		Items: []multirater.ItemResult{
			{ID: "x", Class: "b", ClassProbs: map[string]float64{"a": 0.25, "b": 0.75}},
			{ID: "y", Class: "a", ClassProbs: map[string]float64{"a": 1}},
			{ID: "z"},
		},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadFit(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got := FitFromResult(res)
	for i := range res.Items {
		if g, w := got.Items[i], read.Items[i]; g.Class != w.Class || !reflect.DeepEqual(g.ClassProbs, w.ClassProbs) {
			t.Errorf("item %s: class %q %v, ReadFit has %q %v", g.ID, g.Class, g.ClassProbs, w.Class, w.ClassProbs)
		}
	}
	if !reflect.DeepEqual(got.Items[0].ClassProbs, []float64{0.25, 0.75}) || !reflect.DeepEqual(got.Items[1].ClassProbs, []float64{1, 0}) || got.Items[2].ClassProbs != nil {
		t.Errorf("class probs %v %v %v", got.Items[0].ClassProbs, got.Items[1].ClassProbs, got.Items[2].ClassProbs)
	}
	// What the JSON could not carry or name is left out, as before.
	if p := probsOf(map[string]float64{"a": 0.5, "c": 0.5}, res.Levels); p != nil {
		t.Errorf("unknown level read as %v", p)
	}
	if p := probsOf(map[string]float64{"a": math.NaN(), "b": 0.5}, res.Levels); p != nil {
		t.Errorf("NaN read as %v", p)
	}
}

// TestKDE checks that the density estimate integrates to one, with and
// without the reflection at zero.
func TestKDE(t *testing.T) {
	x := []float64{0.1, 0.2, 0.25, 0.4, 0.5, 0.9, 1.3, 0.05}
	for _, positive := range []bool{false, true} {
		lo := -2.0
		if positive {
			lo = 0
		}
		d := kde(x, lo, 4, 4001, positive)
		var s float64
		for i := 1; i < len(d); i++ {
			s += (d[i].X - d[i-1].X) * (d[i].Y + d[i-1].Y) / 2
		}
		if math.Abs(s-1) > 1e-3 {
			t.Errorf("positive=%v: integral %v", positive, s)
		}
	}
}
