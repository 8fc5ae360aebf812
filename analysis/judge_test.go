package analysis

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"concord/annotations"
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
