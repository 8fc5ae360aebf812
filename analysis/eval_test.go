package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// TestQuadraticKappaSklearn compares QuadraticKappa with scikit-learn's
// cohen_kappa_score(a, b, weights="quadratic", labels=range(k)): the
// reference values in testdata/qwk_reference.json were made by
// testdata/qwk_sklearn.py (Debian python3-sklearn 1.2.1).
func TestQuadraticKappaSklearn(t *testing.T) {
	b, err := os.ReadFile("testdata/qwk_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string
		K        int
		A, B     []int
		Kappa    float64
		Observed float64 `json:"kappa_observed_labels"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 7 {
		t.Fatalf("%d reference cases", len(cases))
	}
	for _, c := range cases {
		got, ok := QuadraticKappa(c.A, c.B, c.K)
		if !ok || math.Abs(got-c.Kappa) > 1e-12 {
			t.Errorf("%s: %v (%t), sklearn %v", c.Name, got, ok, c.Kappa)
		}
		if c.Name == "gaps5" && math.Abs(c.Kappa-c.Observed) < 1e-3 {
			t.Errorf("gaps5 should show the difference between labels=range(k) and the observed levels")
		}
	}
	if _, ok := QuadraticKappa([]int{2, 2, 2}, []int{2, 2, 2}, 4); ok {
		t.Error("kappa of two constant gradings should be undefined")
	}
	if _, ok := QuadraticKappa(nil, nil, 4); ok {
		t.Error("kappa of no items should be undefined")
	}
}

func ExampleQuadraticKappa() {
	rater := []int{0, 1, 2, 2, 1, 0, 2}
	model := []int{0, 2, 2, 1, 1, 0, 0}
	k, _ := QuadraticKappa(rater, model, 3)
	fmt.Printf("%.4f\n", k)
	// Output: 0.4167
}

func TestMajorityLabels(t *testing.T) {
	lab := func(item string, vals ...string) []annotations.Label {
		var out []annotations.Label
		for i, v := range vals {
			out = append(out, annotations.Label{Item: item, Rater: fmt.Sprint("r", i), Value: v})
		}
		return out
	}
	ord := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:0..12")}
	for _, ls := range [][]annotations.Label{
		lab("a", "7", "8"),      // midpoint 7.5 -> 8 (even)
		lab("b", "8", "9"),      // 8.5 -> 8
		lab("c", "3", "3", "9"), // median 3 = majority
		lab("d", "2", "6", "4", "12"),
		lab("e", "5"),
	} {
		ord.Labels = append(ord.Labels, ls...)
	}
	byItem := map[string][]annotations.Label{}
	for _, l := range ord.Labels {
		byItem[l.Item] = append(byItem[l.Item], l)
	}
	want := map[string]string{"a": "8", "b": "8", "c": "3", "d": "5", "e": "5"}
	if got := majorityLabels(ord, byItem); !reflect.DeepEqual(got, want) {
		t.Errorf("ordinal majority %v, want %v", got, want)
	}
	nom := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:x,y,z")}
	nom.Labels = append(append(append(lab("a", "x", "y", "x"), lab("b", "x", "y")...), lab("c", "z", "y", "y", "z", "x")...), lab("d", "z")...)
	byItem = map[string][]annotations.Label{}
	for _, l := range nom.Labels {
		byItem[l.Item] = append(byItem[l.Item], l)
	}
	want = map[string]string{"a": "x", "d": "z"} // b and c are ties
	if got := majorityLabels(nom, byItem); !reflect.DeepEqual(got, want) {
		t.Errorf("nominal majority %v, want %v", got, want)
	}
}

func TestAssignFolds(t *testing.T) {
	ids := make([]string, 23)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	a := assignFolds(ids, 5, 7)
	if !reflect.DeepEqual(a, assignFolds(ids, 5, 7)) {
		t.Error("folds are not reproducible")
	}
	if reflect.DeepEqual(a, assignFolds(ids, 5, 8)) {
		t.Error("folds do not depend on the seed")
	}
	size := make([]int, 5)
	for _, f := range a {
		size[f]++
	}
	sort.Ints(size)
	if size[0] != 4 || size[4] != 5 {
		t.Errorf("fold sizes %v", size)
	}
}

// TestEvalShape runs a small cross-validation on the ASAP sample and checks
// the document's shape: exactly {"folds", "models"}, the models in order,
// the ordinal metrics and nothing else.
func TestEvalShape(t *testing.T) {
	ds := asapSample(t)
	spec := EvalSpec{Fit: FitSpec{Engine: multirater.EngineGibbs, Samples: 60, Burnin: 40, KeepDraws: 40, Seed: 2}, Folds: 3}
	var last EvalProgress
	calls := 0
	res, err := Eval(context.Background(), ds, spec, func(p EvalProgress) { last = p; calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last.Fraction != 1 || last.Fold != 3 {
		t.Errorf("last progress %+v after %d calls", last, calls)
	}
	if res.Fits != 12 || res.Items != len(ds.Items) {
		t.Errorf("%d fits over %d items", res.Fits, res.Items)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 2 || string(doc["folds"]) != "3" {
		t.Fatalf("document %s", b)
	}
	var models []struct {
		Name    string
		Metrics map[string]json.RawMessage
	}
	if err := json.Unmarshal(doc["models"], &models); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range models {
		names = append(names, m.Name)
		var keys []string
		for k := range m.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if want := []string{"mae_vs_mean", "mean_log_pred", "qwk_vs_mean", "qwk_vs_rater"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("%s: metrics %v, want %v", m.Name, keys, want)
		}
		var per map[string]float64
		if err := json.Unmarshal(m.Metrics["qwk_vs_rater"], &per); err != nil || len(per) != 2 {
			t.Errorf("%s: qwk_vs_rater %s", m.Name, m.Metrics["qwk_vs_rater"])
		}
		for r, v := range per {
			if !(v > -1 && v <= 1) {
				t.Errorf("%s: kappa vs %s = %v", m.Name, r, v)
			}
		}
	}
	if want := []string{"multirater", "majority", "rater:rater1", "rater:rater2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("models %v, want %v", names, want)
	}
	// The same seed gives the same document.
	res2, err := Eval(context.Background(), ds, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(res2)
	if string(b) != string(b2) {
		t.Error("evaluation is not reproducible")
	}
}

func TestEvalErrors(t *testing.T) {
	ds := asapSample(t)
	for _, tc := range []struct {
		spec EvalSpec
		msg  string
	}{
		{EvalSpec{Folds: 1}, "folds = 1"},
		{EvalSpec{Folds: 1000}, "folds = 1000"},
		{EvalSpec{RaterBaselines: "some"}, "rater baselines"},
		{EvalSpec{Fit: FitSpec{Kernel: "text+linear"}}, "name the covariate columns"},
		{EvalSpec{Fit: FitSpec{Kernel: "bow"}}, "unknown kernel"},
	} {
		_, err := Eval(context.Background(), ds, tc.spec, nil)
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want EINVALID mentioning %q", tc.spec, err, tc.msg)
		}
	}
	nom := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:x,y"), Labels: []annotations.Label{{Item: "a", Rater: "r", Value: "x"}}}
	if _, err := Eval(context.Background(), nom, EvalSpec{}, nil); err == nil || !strings.Contains(err.Error(), "ordinal scheme") {
		t.Errorf("ordinal model on nominal labels: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Eval(ctx, ds, EvalSpec{Folds: 2}, nil); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// rteSample loads testdata/rte_*.csv: 120 RTE text pairs (text and
// hypothesis joined) with 10 AMT labels each and gold labels.
func rteSample(t testing.TB) *annotations.Dataset {
	return loadSample(t, "rte", "binary:0,1,pos=1", "text", "hypothesis")
}

// TestEvalClassification runs a small cross-validation of the
// classification model and checks the nominal metrics.
func TestEvalClassification(t *testing.T) {
	ds := rteSample(t)
	spec := EvalSpec{Fit: FitSpec{Model: "classification", Samples: 60, Burnin: 40, KeepDraws: 40, Seed: 2}, Folds: 3, RaterBaselines: "2"}
	res, err := Eval(context.Background(), ds, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Models)
	var models []struct {
		Name    string
		Metrics map[string]float64
	}
	if err := json.Unmarshal(b, &models); err != nil {
		t.Fatal(err)
	}
	if len(models) != 4 || models[0].Name != "multirater" || models[1].Name != "majority" || !strings.HasPrefix(models[2].Name, "rater:") {
		t.Fatalf("models %s", b)
	}
	for _, m := range models {
		var keys []string
		for k := range m.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if want := []string{"accuracy_vs_gold", "accuracy_vs_majority", "mean_log_pred"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("%s: metrics %v, want %v", m.Name, keys, want)
		}
		if a := m.Metrics["accuracy_vs_majority"]; !(a > 0 && a <= 1) {
			t.Errorf("%s: accuracy %v", m.Name, a)
		}
		if lp := m.Metrics["mean_log_pred"]; !(lp < 0 && lp > math.Log(minPredProb)) {
			t.Errorf("%s: mean log predictive %v", m.Name, lp)
		}
	}
	// Paired comparisons: one per baseline and reference label, whose
	// discordant counts give the difference of the accuracies.
	if len(res.Paired) != 2*(len(models)-1) {
		t.Fatalf("%d paired comparisons for %d baselines", len(res.Paired), len(models)-1)
	}
	for i, c := range res.Paired {
		base := models[1+i/2]
		if c.Baseline != base.Name || c.Metric != []string{"accuracy_vs_majority", "accuracy_vs_gold"}[i%2] {
			t.Fatalf("paired[%d] = %+v", i, c)
		}
		diff := models[0].Metrics[c.Metric] - base.Metrics[c.Metric]
		if got := float64(c.MultiraterOnly-c.BaselineOnly) / float64(c.Items); math.Abs(got-diff) > 1e-12 {
			t.Errorf("%+v: accuracy difference %v, metrics say %v", c, got, diff)
		}
		if c.PValue != mcNemarExact(c.MultiraterOnly, c.BaselineOnly) || !(c.PValue > 0 && c.PValue <= 1) {
			t.Errorf("%+v: p-value", c)
		}
	}
}

// TestEvalPredictorLearntKernel: a fold's fit that learns its kernel
// (rbf without gamma) predicts the held-out items with the learnt kernel,
// exactly as concord predict does from the fit document, not with the
// fold's unlearnt kernel matrix.
func TestEvalPredictorLearntKernel(t *testing.T) {
	train := pimaDataset(t, "pima_tr.csv", "p")
	test := pimaDataset(t, "pima_te.csv", "t").Items[:40]
	spec := FitSpec{Model: ModelRobust, Kernel: "rbf", Standardize: true, Seed: 1}
	res, err := Fit(context.Background(), train, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Learnt == nil || res.Model.Kernel == "rbf" {
		t.Fatalf("the fit learnt no kernel: %q", res.Model.Kernel)
	}
	ref, err := Predict(res, test)
	if err != nil {
		t.Fatal(err)
	}
	fs := spec.ForData(train).WithDefaults()
	cov, ks, feats, err := buildCovariance(context.Background(), train, train.ItemIDs(), fs)
	if err != nil {
		t.Fatal(err)
	}
	got := predictIn(t, evalPredictor, res, ks, feats, cov, test)
	for i, it := range got.Items {
		w := ref.Items[i]
		for c, p := range w.ClassProbs {
			if math.Abs(it.ClassProbs[c]-p) > 1e-9 {
				t.Fatalf("item %s: P(%s) = %v in the fold, %v from the fit document", it.ID, c, it.ClassProbs[c], p)
			}
		}
		for r, ps := range w.RaterClassProbs {
			for k, p := range ps {
				if math.Abs(it.RaterClassProbs[r][k]-p) > 1e-9 {
					t.Fatalf("item %s rater %s: %v in the fold, %v from the fit document", it.ID, r, it.RaterClassProbs[r], ps)
				}
			}
		}
	}
}

// TestNominalMetricsLevelOrder: the per-rater predictive arrays follow the
// fit's levels, which for the robust model are [negative, positive] whatever
// the scheme's order.
func TestNominalMetricsLevelOrder(t *testing.T) {
	sc, err := annotations.ParseScheme("binary:abnormal,normal,pos=abnormal")
	if err != nil {
		t.Fatal(err)
	}
	ds := &annotations.Dataset{Scheme: sc}
	byItem := map[string][]annotations.Label{
		"a": {{Item: "a", Rater: "r", Value: "abnormal"}},
		"b": {{Item: "b", Rater: "r", Value: "normal"}},
	}
	preds := map[string]multirater.ItemResult{
		"a": {ID: "a", Class: "abnormal", ClassProbs: map[string]float64{"normal": 0.1, "abnormal": 0.9},
			RaterClassProbs: map[string][]float64{"r": {0.2, 0.8}}},
		"b": {ID: "b", Class: "normal", ClassProbs: map[string]float64{"normal": 0.7, "abnormal": 0.3},
			RaterClassProbs: map[string][]float64{"r": {0.6, 0.4}}},
	}
	for _, tc := range []struct {
		levels []string
		want   float64
	}{
		{[]string{"normal", "abnormal"}, (math.Log(0.8) + math.Log(0.6)) / 2}, // the robust fit's order
		{nil, (math.Log(0.2) + math.Log(0.4)) / 2},                            // the scheme's order
	} {
		m := nominalMetrics(ds, []string{"a", "b"}, byItem, nil, map[string]string{"a": "abnormal", "b": "normal"}, preds, tc.levels)
		if m.MeanLogPred == nil || math.Abs(*m.MeanLogPred-tc.want) > 1e-12 {
			t.Errorf("levels %v: mean log predictive %v, want %v", tc.levels, m.MeanLogPred, tc.want)
		}
	}
}
