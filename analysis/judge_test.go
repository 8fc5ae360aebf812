package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// TestJudgeReport checks the alternative annotator test against the
// independent numpy/scipy run of testdata/judge_reference.py on the same
// labels (testdata/judges.csv: 60 items, 4 humans right 80% of the time, a
// judge right 90% of the time and one right 40%): every human's p-value,
// the winning rate and the advantage probability.
func TestJudgeReport(t *testing.T) {
	scheme := annotations.MustParseScheme("nominal:a,b,c")
	ld, err := annotations.LoadFiles(filepath.Join("testdata", "judges.csv"), annotations.LoadOptions{Scheme: &scheme})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := JudgeReport(ld.Dataset, JudgeOptions{Judges: []string{"good", "coin"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		judge   string
		pvalues []float64
		omega   float64
		rho     float64
		passed  bool
	}{
		{"good", []float64{0.011648547614259314, 0.0026030231255348693, 0.017230925507817983, 0.04362677423455889}, 0.75, 0.8458333333333334, true},
		{"coin", []float64{0.9977090470492633, 0.9497742254921597, 0.9977090470492633, 0.9984168727301997}, 0, 0.5375, false},
	}
	if len(doc.Judges) != 2 || len(doc.Humans) != 4 || doc.Epsilon != 0.15 || doc.Q != 0.05 {
		t.Fatalf("doc %+v", doc)
	}
	for k, w := range want {
		r := doc.Judges[k]
		if r.Judge != w.judge || len(r.Humans) != 4 || r.Items != 60 {
			t.Fatalf("judge %d: %+v", k, r)
		}
		for i, h := range r.Humans {
			if math.Abs(h.PValue-w.pvalues[i]) > 1e-9 {
				t.Errorf("%s vs %s: p %v, want %v (scipy)", w.judge, h.Rater, h.PValue, w.pvalues[i])
			}
		}
		if r.WinningRate != w.omega || math.Abs(r.AdvantageProb-w.rho) > 1e-12 || r.Passed != w.passed {
			t.Errorf("%s: omega %v rho %v passed %v, want %v %v %v", w.judge, r.WinningRate, r.AdvantageProb, r.Passed, w.omega, w.rho, w.passed)
		}
		if !strings.HasPrefix(r.Verdict, map[bool]string{true: "passes", false: "fails"}[w.passed]) {
			t.Errorf("%s: verdict %q", w.judge, r.Verdict)
		}
		if !(r.Agreement.Q025 <= r.Agreement.Agreement && r.Agreement.Agreement <= r.Agreement.Q975) || r.Agreement.Items != 60 {
			t.Errorf("%s: agreement %+v", w.judge, r.Agreement)
		}
	}
	if !(doc.Judges[0].Agreement.Agreement > doc.Judges[1].Agreement.Agreement) {
		t.Errorf("the good judge agrees less with the humans' consensus than the coin: %+v %+v", doc.Judges[0].Agreement, doc.Judges[1].Agreement)
	}
	// Too few items per human: no test, said so (with one judge, the
	// other model rater counts as a fifth human).
	doc, err = JudgeReport(ld.Dataset, JudgeOptions{Judges: []string{"good"}, MinInstances: 61})
	if err != nil {
		t.Fatal(err)
	}
	if r := doc.Judges[0]; len(r.Humans) != 0 || len(r.Skipped) != 5 || !strings.HasPrefix(r.Verdict, "no test") {
		t.Errorf("min instances: %+v", r)
	}
	// The raters the labels mark as models are the judges by default,
	// with the same tests; a model not judged is not a human either.
	marked := *ld.Dataset
	marked.ModelRaters = []string{"coin", "good"}
	byMark, err := JudgeReport(&marked, JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(byMark.Judges) != 2 || byMark.Judges[0].Judge != "coin" || byMark.Judges[1].Judge != "good" ||
		byMark.Judges[1].WinningRate != 0.75 || byMark.Judges[0].WinningRate != 0 || len(byMark.Humans) != 4 {
		t.Errorf("judges from the model raters: %+v", byMark.Judges)
	}
	doc, err = JudgeReport(&marked, JudgeOptions{Judges: []string{"good"}, MinInstances: 61})
	if err != nil {
		t.Fatal(err)
	}
	if r := doc.Judges[0]; len(r.Skipped) != 4 || len(doc.Humans) != 4 {
		t.Errorf("the other model counted as a human: %+v", r)
	}
	for _, c := range []struct {
		o    JudgeOptions
		want string
	}{
		{JudgeOptions{}, "no model raters: mark them"},
		{JudgeOptions{Judges: []string{"gpt"}}, `model rater "gpt" has no labels`},
		{JudgeOptions{Judges: []string{"good"}, Epsilon: 1.5}, "--epsilon 1.5"},
	} {
		if _, err := JudgeReport(ld.Dataset, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// TestBenjaminiYekutieli: the step-up rejects the k smallest p-values, k
// the largest rank under the line k q / (m H_m).
func TestBenjaminiYekutieli(t *testing.T) {
	// m = 4: H = 25/12, thresholds k * 0.05 / (4 * 25/12) = 0.006k.
	got := benjaminiYekutieli([]float64{0.013, 0.001, 0.5, 0.019}, 0.05)
	if want := []bool{false, true, false, false}; !equalBools(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	got = benjaminiYekutieli([]float64{0.013, 0.001, 0.5, 0.017}, 0.05)
	if want := []bool{true, true, false, true}; !equalBools(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestJudgeNoSpread: a judge that labels like every human on every item
// leaves the paired differences without spread; t is -Inf (JSON null, with
// a note) and the p-value its limit 0, so that the report encodes and the
// judge passes.
func TestJudgeNoSpread(t *testing.T) {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:x,y"), ModelRaters: []string{"j"}}
	for i := 0; i < 40; i++ {
		for _, r := range []string{"a", "b", "c", "j"} {
			ds.Labels = append(ds.Labels, annotations.Label{Item: fmt.Sprint(i), Rater: r, Value: "x"})
		}
	}
	doc, err := JudgeReport(ds, JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Judges[0]
	if len(r.Humans) != 3 || !r.Passed {
		t.Fatalf("%+v", r)
	}
	for _, h := range r.Humans {
		if !math.IsInf(h.T, -1) || h.PValue != 0 || !strings.Contains(h.TNote, "no spread") {
			t.Errorf("%+v", h)
		}
	}
	b, err := json.Marshal(doc.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"t":null`) || !strings.Contains(string(b), `"t_note":"no spread`) || !strings.Contains(string(b), `"p_value":0`) {
		t.Errorf("JSON %.600s", b)
	}
	for _, c := range []struct {
		d     []float64
		mu    float64
		t, p  float64
		isNaN bool
	}{
		{[]float64{0, 0, 0}, 0.15, math.Inf(-1), 0, false},
		{[]float64{0.5, 0.5}, 0.15, math.Inf(1), 1, false},
		{[]float64{0.25, 0.25}, 0.25, 0, 1, true},
		{[]float64{0.1}, 0.15, math.Inf(-1), 0, false},
	} {
		tt, p := tTestLess(c.d, c.mu)
		if p != c.p || (c.isNaN != math.IsNaN(tt)) || (!c.isNaN && tt != c.t) {
			t.Errorf("tTestLess(%v, %v) = %v, %v; want %v, %v", c.d, c.mu, tt, p, c.t, c.p)
		}
	}
}

// TestJudgeFit: the judge report of a fit's labels equals the report of
// the same labels as a dataset (every human's p-value, the verdicts).
func TestJudgeFit(t *testing.T) {
	scheme := annotations.MustParseScheme("nominal:a,b,c")
	ld, err := annotations.LoadFiles(filepath.Join("testdata", "judges.csv"), annotations.LoadOptions{Scheme: &scheme})
	if err != nil {
		t.Fatal(err)
	}
	ds := ld.Dataset
	ds.ModelRaters = []string{"coin", "good"}
	res := &multirater.FitResult{Model: multirater.ModelSettings{Model: ModelConfusion, Scheme: scheme.String()}}
	at := map[string]int{}
	for _, l := range ds.Labels {
		i, ok := at[l.Item]
		if !ok {
			i = len(res.Items)
			at[l.Item] = i
			res.Items = append(res.Items, multirater.ItemResult{ID: l.Item, Labels: map[string]string{}})
		}
		res.Items[i].Labels[l.Rater] = l.Value
	}
	for _, r := range []string{"good", "coin", "h1", "h2", "h3", "h4"} {
		res.Raters = append(res.Raters, multirater.RaterResult{ID: r, Model: r == "good" || r == "coin"})
	}
	want, err := JudgeReport(ds, JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := JudgeFit(res, JudgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Judges) != len(want.Judges) || len(got.Humans) != len(want.Humans) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for k := range want.Judges {
		w, g := want.Judges[k], got.Judges[k]
		p := map[string]float64{}
		for _, h := range w.Humans {
			p[h.Rater] = h.PValue
		}
		for _, h := range g.Humans {
			if math.Abs(h.PValue-p[h.Rater]) > 1e-12 {
				t.Errorf("%s vs %s: p %v, want %v", g.Judge, h.Rater, h.PValue, p[h.Rater])
			}
		}
		if g.Judge != w.Judge || g.Verdict != w.Verdict || g.Agreement != w.Agreement {
			t.Errorf("got %+v\nwant %+v", g, w)
		}
	}
	if _, err := JudgeFit(&multirater.FitResult{Model: res.Model, Items: []multirater.ItemResult{{ID: "x"}}}, JudgeOptions{}); err == nil || !strings.Contains(err.Error(), "keeps no labels") {
		t.Errorf("no labels: %v", err)
	}
}
