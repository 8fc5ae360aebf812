package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/auc"

	"gonum.org/v1/gonum/mat"
)

// pimaDataset is Pima.tr or Pima.te as a binary dataset: items p1..pN
// with the 7 covariates, one label each by rater "mass" (prefix names the
// items).
func pimaDataset(t testing.TB, file, prefix string) *annotations.Dataset {
	t.Helper()
	names, x, y := readPima(t, file)
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("binary:No,Yes,pos=Yes")}
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i+1)
		cov := map[string]float64{}
		for j, c := range names {
			cov[c] = x.At(i, j)
		}
		ds.Items = append(ds.Items, annotations.Item{ID: id, Covariates: cov})
		v := "No"
		if y[i] {
			v = "Yes"
		}
		ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: "mass", Value: v})
	}
	return ds
}

// TestAUCSpecValidation: the auc model's settings are checked with precise
// messages, other models' settings are refused for it and its settings for
// other models.
func TestAUCSpecValidation(t *testing.T) {
	eps := 0.1
	for _, tc := range []struct {
		spec FitSpec
		want string // "" valid
	}{
		{FitSpec{Model: "auc"}, ""},
		{FitSpec{Model: "auc", Engine: "smc", Gamma: "30", Prior: "spike-slab", PriorScale: 2, Standardize: true}, ""},
		{FitSpec{Model: "auc", Scores: "gp", Kernel: "rbf"}, ""},
		{FitSpec{Model: "auc", Scores: "gp", Kernel: "rbf:gamma=0.1+linear"}, ""},
		{FitSpec{Model: "auc", Scores: "cubic"}, `scores "cubic": expected linear`},
		{FitSpec{Model: "auc", Gamma: "0"}, `gamma "0": expected a positive number`},
		{FitSpec{Model: "auc", Gamma: "often"}, `gamma "often": expected a positive number`},
		{FitSpec{Model: "auc", Prior: "horseshoe"}, `prior "horseshoe": expected gaussian or spike-slab`},
		{FitSpec{Model: "auc", PriorScale: -1}, `prior_scale = -1 (--prior-scale): expected a number from 0.0001 to 10000`},
		{FitSpec{Model: "auc", Engine: "gibbs"}, `engine "gibbs": the auc model is fitted by ep or smc`},
		{FitSpec{Model: "auc", Kernel: "rbf:gamma=1"}, `kernel "rbf:gamma=1" is for gp scores`},
		{FitSpec{Model: "auc", Scores: "gp", Kernel: "text"}, `read numeric covariates only (no text terms)`},
		{FitSpec{Model: "auc", Scores: "gp", Kernel: "identity"}, `kernel identity relates no item to another`},
		{FitSpec{Model: "auc", Scores: "gp", Kernel: "ard"}, `has hyperparameters to learn, which the auc model does not learn`},
		{FitSpec{Model: "auc", Scores: "gp", Prior: "spike-slab"}, `prior spike-slab is a prior of linear scores' coefficients`},
		{FitSpec{Model: "auc", Epsilon: &eps}, `epsilon is not a setting of the auc model fitted by ep (leave it out): its settings are scores, gamma`},
		{FitSpec{Model: "auc", Precisions: "fixed"}, `precisions`},
		{FitSpec{Model: "auc", Categorical: []string{"c"}}, `categorical is not a setting of the auc model`},
		{FitSpec{Model: "robust", Gamma: "10"}, `gamma is not a setting of the robust model fitted by ep (leave it out): its settings are flag_threshold, keep_draws, sigma, restarts, epsilon, select and em`},
		{FitSpec{Model: "ordinal", Scores: "linear"}, `scores is not a setting of the ordinal model`},
	} {
		err := tc.spec.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one containing %q", tc.spec, err, tc.want)
		case err != nil && annotations.ErrorCode(err) != annotations.EINVALID:
			t.Errorf("%+v: error code %q", tc.spec, annotations.ErrorCode(err))
		}
	}
	m, _ := LookupModel(ModelAUC)
	if err := m.CheckGiven(FitSpec{Model: "auc"}, func(f string) bool { return f == "chains" }); err == nil || !strings.Contains(err.Error(), `chains is not a setting of the auc model`) {
		t.Errorf("chains given: %v", err)
	}
}

// TestAUCSpecDefaults: the stored spec says exactly what runs.
func TestAUCSpecDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want FitSpec
	}{
		{FitSpec{Model: "auc"}, FitSpec{Model: "auc", Engine: "ep", Scores: "linear", Gamma: "cv", Prior: "gaussian", PriorScale: 1}},
		{FitSpec{Model: "auc", Scores: "gp"}, FitSpec{Model: "auc", Engine: "ep", Scores: "gp", Kernel: "rbf", Gamma: "cv", Prior: "gaussian", PriorScale: 1}},
		{FitSpec{Model: "auc", Engine: "smc", Gamma: "3", PriorScale: 4}, FitSpec{Model: "auc", Engine: "smc", Scores: "linear", Gamma: "3", Prior: "gaussian", PriorScale: 4}},
		{FitSpec{Model: "auc", Scores: "GP", Kernel: "rbf:gamma=0.1", Gamma: " CV", Prior: "Gaussian"}, FitSpec{Model: "auc", Engine: "ep", Scores: "gp", Kernel: "rbf:gamma=0.1", Gamma: "cv", Prior: "gaussian", PriorScale: 1}},
	} {
		got := tc.in.ForData(&annotations.Dataset{}).WithDefaults()
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
			t.Errorf("%+v: defaults\n%+v, want\n%+v", tc.in, got, tc.want)
		}
	}
	b, _ := json.Marshal(FitSpec{Model: "auc", Gamma: "30"})
	var back FitSpec
	if err := json.Unmarshal(b, &back); err != nil || back.Gamma != "30" || !strings.Contains(string(b), `"gamma":30`) {
		t.Errorf("gamma 30 as JSON: %s, back %q (%v)", b, back.Gamma, err)
	}
	if err := json.Unmarshal([]byte(`{"gamma":"cv"}`), &back); err != nil || back.Gamma != "cv" {
		t.Errorf(`gamma "cv" from JSON: %q (%v)`, back.Gamma, err)
	}
}

// TestAUCFitPima fits the auc model to Pima.tr through the model table and
// checks the fit document against the family's own fit of the same data,
// then predicts Pima.te from the document (the refit) and checks the test
// AUC against Ridgway et al.'s 0.8617 +- 0.010 (linear, EP, gamma by CV).
func TestAUCFitPima(t *testing.T) {
	ds := pimaDataset(t, "pima_tr.csv", "p")
	res, err := Fit(context.Background(), ds, FitSpec{Model: "auc", Standardize: true, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Model != "auc" || res.Model.Output != multirater.OutputRanking || res.AUC == nil || res.AUC.Scores != "linear" || !res.AUC.GammaByCV || len(res.AUC.CV) != 7 {
		t.Fatalf("fit: model %+v, auc %+v", res.Model, res.AUC)
	}
	if len(res.Coefficients) != 7 || res.TrainAUC == nil || res.Diagnostics.LogEvidence == nil || len(res.ROC) < 2 || res.AUC.Pairs != 68*132 {
		t.Fatalf("fit: %d coefficients, train AUC %v, log evidence %v, %d ROC points, %d pairs", len(res.Coefficients), res.TrainAUC, res.Diagnostics.LogEvidence, len(res.ROC), res.AUC.Pairs)
	}
	// The family's own fit of the same data gives the same numbers.
	names, x, y := readPima(t, "pima_tr.csv")
	xs := columnsOf(x, names, res.AUC.Covariates)
	ref, err := auc.Fit(context.Background(), auc.Data{X: xs, Positive: y, Names: res.AUC.Covariates}, auc.Options{Standardize: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Gamma != res.AUC.Gamma || math.Abs(ref.LogEvidence-*res.Diagnostics.LogEvidence) > 1e-12 || ref.TrainAUC != *res.TrainAUC {
		t.Errorf("fit: gamma %g, log Z %g, train AUC %g; the family's %g, %g, %g", res.AUC.Gamma, *res.Diagnostics.LogEvidence, *res.TrainAUC, ref.Gamma, ref.LogEvidence, ref.TrainAUC)
	}
	for i, it := range res.Items {
		if it.Score.Mean != ref.Items[i].Mean || it.Score.SD != ref.Items[i].SD || it.Positive == nil || *it.Positive != y[i] {
			t.Fatalf("item %s: score %+v positive %v; the family's %+v, %v", it.ID, it.Score, it.Positive, ref.Items[i], y[i])
		}
	}
	// The document survives JSON and predicts Pima.te.
	back := testutil.JSONRoundTrip(t, res)
	te := pimaDataset(t, "pima_te.csv", "t")
	for i := range te.Items {
		te.Items[i].Gold = te.Labels[i].Value
	}
	pred, err := Predict(back, te.Items)
	if err != nil {
		t.Fatal(err)
	}
	_, xte, yte := readPima(t, "pima_te.csv")
	xte2 := columnsOf(xte, names, res.AUC.Covariates)
	want := ref.Predict(xte2)
	s := make([]float64, len(pred.Items))
	for i, it := range pred.Items {
		s[i] = it.Score.Mean
		if math.Abs(it.Score.Mean-want[i].Mean) > 1e-9 || math.Abs(it.Score.SD-want[i].SD) > 1e-9 {
			t.Fatalf("prediction %s: %+v, the family's %+v", it.ID, it.Score, want[i])
		}
	}
	testAUC := auc.AUC(s, yte)
	if g := pred.Gold; g == nil || g.AUC != testAUC || g.Items != 332 || g.Positives != 109 || len(g.ROC) < 100 {
		t.Errorf("predictions' gold check %+v, want AUC %v over 332 items, 109 positive", g, testAUC)
	}
	t.Logf("Pima.te AUC %.4f (gamma %g by CV; Ridgway et al.: 0.8617 +- 0.010)", testAUC, res.AUC.Gamma)
	if math.Abs(testAUC-0.8617) > 0.02 {
		t.Errorf("Pima.te AUC %.4f, want 0.8617 +- 0.02", testAUC)
	}
}

// TestAUCFitData: what the auc model needs of the data, with precise
// messages; items without a majority are scored by prediction.
func TestAUCFitData(t *testing.T) {
	scheme := annotations.MustParseScheme("binary:No,Yes,pos=Yes")
	item := func(id string, x, z float64) annotations.Item {
		return annotations.Item{ID: id, Covariates: map[string]float64{"x": x, "z": z}}
	}
	lab := func(item, rater, v string) annotations.Label {
		return annotations.Label{Item: item, Rater: rater, Value: v}
	}
	base := []annotations.Item{item("a", 0, 1), item("b", 1, 0), item("c", 2, 1), item("d", 3, 0), item("e", 4, 1), item("f", 5, 2)}
	labels := []annotations.Label{lab("a", "r1", "No"), lab("a", "r2", "No"), lab("b", "r1", "No"), lab("b", "r2", "Yes"), lab("b", "r3", "No"),
		lab("c", "r1", "Yes"), lab("c", "r2", "No"), lab("d", "r1", "Yes"), lab("d", "r2", "Yes"), lab("e", "r1", "Yes"), lab("f", "r1", "No")}
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec FitSpec
		want string
	}{
		{"no covariates", &annotations.Dataset{Scheme: scheme, Labels: labels}, FitSpec{Model: "auc", Gamma: "5"},
			"the auc model scores items by their numeric covariates"},
		{"unknown covariate", &annotations.Dataset{Scheme: scheme, Items: base, Labels: labels}, FitSpec{Model: "auc", Gamma: "5", Covariates: "x,w"},
			`covariate "w" is not a numeric item column (the items have x, z)`},
		{"covariates none", &annotations.Dataset{Scheme: scheme, Items: base, Labels: labels}, FitSpec{Model: "auc", Gamma: "5", Covariates: "none"},
			`covariates "none": the auc model scores items by their numeric covariates; name at least one (the items have x, z)`},
		{"missing value", &annotations.Dataset{Scheme: scheme, Items: append([]annotations.Item{{ID: "g", Covariates: map[string]float64{"x": 1}}}, base...), Labels: labels},
			FitSpec{Model: "auc", Gamma: "5"}, `item "g" has no value for covariate "z"`},
		{"labelled item not in the items file", &annotations.Dataset{Scheme: scheme, Items: base, Labels: append([]annotations.Label{lab("h", "r1", "Yes")}, labels...)},
			FitSpec{Model: "auc", Gamma: "5"}, `item "h" has labels but is not in the items file`},
		{"one class", &annotations.Dataset{Scheme: scheme, Items: base[:2], Labels: labels[:5]}, FitSpec{Model: "auc", Gamma: "5"},
			`needs both: of 2 items with a majority label, 0 are "Yes"`},
		{"nominal scheme", &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:a,b,c"), Labels: []annotations.Label{lab("a", "r1", "a")}},
			FitSpec{Model: "auc"}, "the auc model needs a binary scheme"},
	} {
		_, err := Fit(context.Background(), tc.ds, tc.spec, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || annotations.ErrorCode(err) != annotations.EINVALID {
			t.Errorf("%s: error %v, want EINVALID containing %q", tc.name, err, tc.want)
		}
	}
	// Majority labels: a No, b No (2 of 3), c tie (predicted), d Yes, e
	// Yes, f No; every item has a score.
	res, err := Fit(context.Background(), &annotations.Dataset{Scheme: scheme, Items: base, Labels: labels}, FitSpec{Model: "auc", Gamma: "5", Covariates: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "false", "b": "false", "c": "nil", "d": "true", "e": "true", "f": "false"}
	for _, it := range res.Items {
		got := "nil"
		if it.Positive != nil {
			got = fmt.Sprint(*it.Positive)
		}
		if got != want[it.ID] || it.Score == nil {
			t.Errorf("item %s: positive %s, want %s; score %v", it.ID, got, want[it.ID], it.Score)
		}
	}
	notes := strings.Join(res.Diagnostics.Notes, "; ")
	for _, n := range []string{"majority of its labels", "1 item(s) have as many positive as negative labels", "scored by the fit's predictive distribution"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes %q: no %q", notes, n)
		}
	}
	if res.AUC.Fitted != 5 || len(res.AUC.Covariates) != 1 || res.AUC.Covariates[0] != "x" {
		t.Errorf("auc %+v", res.AUC)
	}
}

// TestEvalAUCPima: the evaluation table of the auc model against the probit
// GP classifier and logistic regression on the same stratified folds.
func TestEvalAUCPima(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 3 models on 5 folds")
	}
	ds := pimaDataset(t, "pima_tr.csv", "p")
	var fracs []float64
	res, err := EvalAUC(context.Background(), ds, AUCEvalSpec{Fit: FitSpec{Model: "auc", Gamma: "30", Standardize: true, Seed: 2}, Folds: 5},
		func(p EvalProgress) { fracs = append(fracs, p.Fraction) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Folds != 5 || res.Items != 200 || res.Positives != 68 || len(res.Models) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, name := range []string{EvalAUCModel, EvalGPProbit, EvalLogisticReg} {
		m := res.Models[i]
		if len(m.FoldROC) != 5 || len(m.FoldROC[0]) < 5 || m.FoldROC[0][len(m.FoldROC[0])-1] != (multirater.ROCPoint{Threshold: m.FoldROC[0][len(m.FoldROC[0])-1].Threshold, FPR: 1, TPR: 1}) {
			t.Errorf("model %s: fold ROC curves %v", m.Name, m.FoldROC)
		}
		if m.Name != name || len(m.FoldAUC) != 5 || !(m.AUC > 0.75 && m.AUC < 0.95) || !(m.SE > 0 && m.SE < 0.05) {
			t.Errorf("model %d: %+v", i, m)
		}
		t.Logf("%-9s test AUC %.4f (se %.4f)", m.Name, m.AUC, m.SE)
	}
	if len(fracs) == 0 || fracs[len(fracs)-1] != 1 {
		t.Errorf("progress %v", fracs)
	}
	// The logistic row is FitLogistic on each fold: check one fold by hand.
	label, _ := aucLabels(ds)
	ids := ds.ItemIDs()
	pos := make([]bool, len(ids))
	for i, id := range ids {
		pos[i] = label[id]
	}
	_, x, err := aucCovariates(ds, ids, FitSpec{})
	if err != nil {
		t.Fatal(err)
	}
	folds := auc.Folds(pos, 5, newFoldRand(2))
	var train, test []int
	for i, f := range folds {
		if f == 0 {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	lr, err := FitLogistic(rowsOf(x, train), pick(pos, train))
	if err != nil {
		t.Fatal(err)
	}
	if got := auc.AUC(lr.LinearPredictorsTo(nil, rowsOf(x, test)), pick(pos, test)); got != res.Models[2].FoldAUC[0] {
		t.Errorf("logistic fold 1: %v by hand, %v in the table", got, res.Models[2].FoldAUC[0])
	}
	// Errors.
	if _, err := EvalAUC(context.Background(), ds, AUCEvalSpec{Fit: FitSpec{Model: "auc"}, Folds: 100}, nil); err == nil || !strings.Contains(err.Error(), "100-fold cross-validation needs at least 100 positive") {
		t.Errorf("100 folds: %v", err)
	}
	if _, err := Eval(context.Background(), ds, EvalSpec{Fit: FitSpec{Model: "auc"}}, nil); err == nil || !strings.Contains(err.Error(), "use EvalAUC") {
		t.Errorf("Eval of the auc model: %v", err)
	}
}

// TestAUCPredictSMC: a fit by SMC with gamma chosen by cross-validation
// predicts new items (predict repeats the final fit at the chosen gamma
// exactly); the prediction of a fitted item's covariates is its score.
func TestAUCPredictSMC(t *testing.T) {
	if testing.Short() {
		t.Skip("36 SMC fits")
	}
	ds := pimaDataset(t, "pima_tr.csv", "p")
	ds.Items, ds.Labels = ds.Items[:40], ds.Labels[:40]
	res, err := Fit(context.Background(), ds, FitSpec{Model: "auc", Engine: "smc", Covariates: "glu,bmi", Standardize: true, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.AUC.GammaByCV || res.Diagnostics.LogEvidenceSE == nil || !(*res.Diagnostics.LogEvidenceSE > 0) || res.Coefficients[0].MeanSE == 0 {
		t.Fatalf("smc fit: auc %+v, log evidence se %v, coefficients %+v", res.AUC, res.Diagnostics.LogEvidenceSE, res.Coefficients)
	}
	back := testutil.JSONRoundTrip(t, res)
	pred, err := Predict(back, ds.Items[:3])
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range pred.Items {
		want := res.Items[i].Score
		if math.Abs(it.Score.Mean-want.Mean) > 1e-9 || math.Abs(it.Score.SD-want.SD) > 1e-9 {
			t.Errorf("item %s predicted as new: %+v, fitted %+v", it.ID, it.Score, want)
		}
	}
}

// TestAUCGPCandidates: gp scores with kernel rbf choose the width among
// DefaultRBFCandidates by the evidence, report every candidate's, and
// predict new items through the chosen kernel.
func TestAUCGPCandidates(t *testing.T) {
	ds := pimaDataset(t, "pima_tr.csv", "p")
	ds.Items, ds.Labels = ds.Items[:80], ds.Labels[:80]
	res, err := Fit(context.Background(), ds, FitSpec{Model: "auc", Scores: "gp", Gamma: "10", Standardize: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ke := res.AUC.KernelEvidence
	if len(ke) != len(DefaultRBFCandidates) || res.Coefficients != nil || res.AUC.Scores != "gp" {
		t.Fatalf("kernel evidence %+v, coefficients %v", ke, res.Coefficients)
	}
	best, chosen := math.Inf(-1), 0
	for _, k := range ke {
		best = math.Max(best, k.LogEvidence)
		if k.Chosen {
			chosen++
			if k.Kernel != res.Model.Kernel {
				t.Errorf("chosen kernel %s, model.kernel %s", k.Kernel, res.Model.Kernel)
			}
		}
	}
	for _, k := range ke {
		if k.Chosen && k.LogEvidence != best {
			t.Errorf("chose %s (log evidence %g), the largest is %g", k.Kernel, k.LogEvidence, best)
		}
	}
	if chosen != 1 {
		t.Errorf("%d kernels marked chosen", chosen)
	}
	pred, err := Predict(res, ds.Items[:5])
	if err != nil {
		t.Fatal(err)
	}
	if pred.Kernel != res.Model.Kernel {
		t.Errorf("predictions' kernel %q, the fit's %q", pred.Kernel, res.Model.Kernel)
	}
	for i, it := range pred.Items {
		// A fitted item's covariates predicted as a new item: the
		// noiseless GP's predictive distribution at a training input is
		// that input's posterior.
		want := res.Items[i].Score
		if math.Abs(it.Score.Mean-want.Mean) > 1e-6*(1+math.Abs(want.Mean)) || math.Abs(it.Score.SD-want.SD) > 1e-4*want.SD {
			t.Errorf("item %s predicted as new: %g (sd %g), fitted %g (sd %g)", it.ID, it.Score.Mean, it.Score.SD, want.Mean, want.SD)
		}
	}
}

// FuzzGammaSpec: any JSON value for gamma is read without panicking, and
// Value either refuses it or gives cross-validation or a positive finite
// gamma, which survives a JSON round trip.
func FuzzGammaSpec(f *testing.F) {
	for _, s := range []string{`30`, `"cv"`, `"CV "`, `0`, `-1`, `"1e400"`, `null`, `true`, `"NaN"`, `1e-300`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var g GammaSpec
		if err := json.Unmarshal(b, &g); err != nil {
			return
		}
		v, cv, err := g.Value()
		if err != nil {
			return
		}
		if !cv && !(v > 0 && !math.IsInf(v, 0)) {
			t.Fatalf("%s: gamma %v accepted", b, v)
		}
		out, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back GammaSpec
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s -> %s: %v", b, out, err)
		}
		if v2, cv2, err := back.Value(); err != nil || cv2 != cv || v2 != v {
			t.Fatalf("%s -> %s -> %v %v %v, want %v %v", b, out, v2, cv2, err, v, cv)
		}
	})
}

// columnsOf returns the columns of x (named names) that cols name, in the
// order of cols.
func columnsOf(x *mat.Dense, names, cols []string) *mat.Dense {
	r, _ := x.Dims()
	out := mat.NewDense(r, len(cols), nil)
	for j, c := range cols {
		for k, n := range names {
			if n == c {
				out.SetCol(j, mat.Col(nil, k, x))
			}
		}
	}
	return out
}

// TestAUCGammaFolds: gamma_folds sets the folds of gamma's
// cross-validation (recorded in the result, and the held-out AUCs are
// those of other folds than the default 5), and is refused outside 2 to
// 20 and for another model, each with a message that names it.
func TestAUCGammaFolds(t *testing.T) {
	for _, tc := range []struct {
		spec FitSpec
		want string
	}{
		{FitSpec{Model: ModelAUC, GammaFolds: 3}, ""},
		{FitSpec{Model: ModelAUC, GammaFolds: 1}, "gamma_folds = 1"},
		{FitSpec{Model: ModelAUC, GammaFolds: 21}, "from 2 to 20"},
		{FitSpec{Model: ModelOrdinal, GammaFolds: 3}, "gamma_folds is not a setting of the ordinal model"},
	} {
		err := tc.spec.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	ds := pimaDataset(t, "pima_tr.csv", "p")
	fit := func(folds int) []float64 {
		t.Helper()
		res, err := Fit(context.Background(), ds, FitSpec{Model: ModelAUC, Standardize: true, Seed: 1, GammaFolds: folds}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := folds
		if want == 0 {
			want = AUCGammaFolds
		}
		if !res.AUC.GammaByCV || res.AUC.Folds != want || len(res.AUC.CV) != len(AUCGammaGrid()) {
			t.Fatalf("gamma_folds %d: by cv %v, %d folds, %d candidates", folds, res.AUC.GammaByCV, res.AUC.Folds, len(res.AUC.CV))
		}
		auc := make([]float64, len(res.AUC.CV))
		for i, c := range res.AUC.CV {
			auc[i] = c.AUC
		}
		return auc
	}
	three, five := fit(3), fit(0)
	same := true
	for i := range three {
		same = same && three[i] == five[i]
	}
	if same {
		t.Errorf("3-fold and 5-fold held-out AUCs are the same: %v", three)
	}
}

// TestAUCSampledLowRank: a fit whose pair sites are a sample (max_pairs
// below n+ n-) and whose gp scores have a low-rank prior (rank) says so in
// the fit document (auc.pair_sites, max_pairs, rank, residual) and its
// notes, naming the settings' flags, and predicting its own fitted items
// refits the same sample and prior (aucRefit checks the scores) and gives
// their fitted scores back; with every pair (max_pairs -1) and the dense
// prior nothing is stated.
func TestAUCSampledLowRank(t *testing.T) {
	ds := pimaDataset(t, "pima_tr.csv", "p")
	for _, tc := range []struct {
		name   string
		spec   FitSpec
		sample bool
		rank   int
	}{
		{"sampled linear", FitSpec{Model: "auc", Gamma: "10", Standardize: true, MaxPairs: 3000}, true, 0},
		{"sampled gp rank 30", FitSpec{Model: "auc", Scores: "gp", Kernel: "rbf:gamma=0.05", Gamma: "10", Standardize: true, MaxPairs: 3000, Rank: 30}, true, 30},
		{"every pair, dense", FitSpec{Model: "auc", Scores: "gp", Kernel: "rbf:gamma=0.05", Gamma: "10", Standardize: true, MaxPairs: -1}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Fit(context.Background(), ds, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := res.AUC
			notes := strings.Join(res.Diagnostics.Notes, "\n")
			if tc.sample != (a.PairSites > 0 && a.PairSites < a.Pairs && a.MaxPairs == 3000) || tc.sample != strings.Contains(notes, "--max-pairs 3000") {
				t.Errorf("pair sites %d of %d (max_pairs %d), notes %q", a.PairSites, a.Pairs, a.MaxPairs, notes)
			}
			if a.Rank != tc.rank || (tc.rank > 0) != strings.Contains(notes, "--rank") || (tc.rank > 0 && !(a.Residual > 0 && a.Residual < 0.2)) {
				t.Errorf("rank %d (residual %g), want %d; notes %q", a.Rank, a.Residual, tc.rank, notes)
			}
			pred, err := Predict(res, ds.Items[:8])
			if err != nil {
				t.Fatal(err)
			}
			for i, it := range pred.Items {
				want := res.Items[i].Score
				if math.Abs(it.Score.Mean-want.Mean) > 1e-6*(1+math.Abs(want.Mean)) || it.Score.SD < want.SD*(1-1e-6) {
					t.Errorf("item %s predicted as new: %g (sd %g), fitted %g (sd %g)", it.ID, it.Score.Mean, it.Score.SD, want.Mean, want.SD)
				}
			}
		})
	}
}
